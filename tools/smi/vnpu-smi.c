// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-smi: show the vnpu devices as the running driver reports them.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vnpu.h"

static const char *health_name(enum vnpu_health health)
{
	switch (health) {
	case VNPU_HEALTH_OK:
		return "ok";
	case VNPU_HEALTH_DEGRADED:
		return "degraded";
	case VNPU_HEALTH_NEEDS_RESET:
		return "needs-reset";
	}
	return "unknown";
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: vnpu-smi [--json]\n"
		"Lists every vnpu device with the facts its driver reports.\n"
		"  -j, --json   one JSON object instead of a table\n"
		"  -h, --help   this text\n");
}

static void print_device(const struct vnpu_device_properties *p, int json, int last)
{
	if (json) {
		printf("    {\"name\": \"%s\", \"index\": %u, \"accel\": \"/dev/accel/accel%u\", "
		       "\"uapi\": \"%u.%u\", \"vram_total_bytes\": %llu, "
		       "\"compute_engines\": %u, \"copy_engines\": %u, \"numa_node\": %d, "
		       "\"health\": \"%s\"}%s\n",
		       p->name, p->physical_index, p->accel_minor, p->uapi_major, p->uapi_minor,
		       (unsigned long long)p->vram_total, p->compute_engines, p->copy_engines,
		       p->numa_node, health_name(p->health), last ? "" : ",");
		return;
	}
	char node[32];

	snprintf(node, sizeof(node), "/dev/accel/accel%u", p->accel_minor);
	printf("%-7s %-17s %5u.%-3u %10llu %7u %4u %5d  %s\n", p->name, node, p->uapi_major,
	       p->uapi_minor, (unsigned long long)(p->vram_total >> 20), p->compute_engines,
	       p->copy_engines, p->numa_node, health_name(p->health));
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t count;
	int json = 0, c, status;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}

	status = vnpu_init(0);
	if (status == VNPU_SUCCESS)
		status = vnpu_device_count(&count);
	if (status != VNPU_SUCCESS) {
		fprintf(stderr, "vnpu-smi: %s: %s\n", vnpu_status_name(status),
			vnpu_status_string(status));
		return 1;
	}

	if (json)
		printf("{\n  \"devices\": [\n");
	else
		printf("%-7s %-17s %9s %10s %7s %4s %5s  %s\n", "DEVICE", "NODE", "UAPI",
		       "VRAM(MiB)", "COMPUTE", "COPY", "NUMA", "HEALTH");
	for (uint32_t i = 0; i < count; i++) {
		struct vnpu_device_properties p;

		status = vnpu_device_get_properties(i, &p);
		if (status != VNPU_SUCCESS) {
			fprintf(stderr, "vnpu-smi: device %u: %s\n", i, vnpu_status_string(status));
			vnpu_finalize();
			return 1;
		}
		print_device(&p, json, i + 1 == count);
	}
	if (json)
		printf("  ]\n}\n");
	vnpu_finalize();
	return 0;
}
