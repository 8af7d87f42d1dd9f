// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Locality: where a device sits (NUMA node, topology node, board) and the
 * device nearest to the calling thread's CPU (vnpu_ctx_create() with
 * VNPU_DEVICE_ANY). The host's NUMA distances come from sysfs.
 */
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

int vnpu_device_get_location(uint32_t device, struct vnpu_device_location *loc)
{
	struct vnpu_rt_device dev;
	uint64_t numa = 0, node = 0, board = 0;
	int status, ret;

	if (!loc)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_rt_device(device, &dev);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	ret = vnpu_get_param(dev.fd, DRM_VNPU_PARAM_NUMA_NODE, &numa);
	if (!ret)
		ret = vnpu_get_param(dev.fd, DRM_VNPU_PARAM_TOPOLOGY_NODE, &node);
	if (!ret)
		ret = vnpu_get_param(dev.fd, DRM_VNPU_PARAM_TOPOLOGY_BOARD, &board);
	if (ret)
		return vnpu_set_status(vnpu_status_from_query_errno(ret));
	loc->numa_node = numa == DRM_VNPU_NUMA_NODE_NONE ? -1 : (int32_t)numa;
	loc->topology_node = (uint32_t)node;
	loc->board = (uint32_t)board;
	return VNPU_SUCCESS;
}

/* NUMA node of CPU @cpu, from /sys/devices/system/cpu/cpuN/nodeM; -1 if none. */
static int cpu_node(int cpu)
{
	char path[64];
	struct dirent *e;
	int node = -1;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "node", 4) && e->d_name[4] >= '0' && e->d_name[4] <= '9')
			node = atoi(e->d_name + 4);
	closedir(d);
	return node;
}

/* NUMA distance from node @from to node @to; 10 for itself, 255 unknown. */
static unsigned int numa_distance(int from, int to)
{
	char path[80], buf[1024];
	unsigned int distance = 255;
	FILE *f;

	if (from < 0 || to < 0)
		return 255;
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/distance", from);
	f = fopen(path, "re");
	if (!f)
		return from == to ? 10 : 255;
	if (fgets(buf, sizeof(buf), f)) {
		char *p = buf, *end;

		for (int i = 0; i <= to; i++, p = end) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p)
				break;
			if (i == to)
				distance = (unsigned int)v;
		}
	}
	fclose(f);
	return distance;
}

int vnpu_device_choose_nearest(uint32_t *device)
{
	unsigned int best_distance = ~0u;
	uint32_t count = 0, best = 0;
	int cpu, node, status;

	if (!device)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_device_count(&count);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	cpu = sched_getcpu();
	node = cpu < 0 ? -1 : cpu_node(cpu);
	for (uint32_t i = 0; i < count; i++) {
		struct vnpu_device_location loc;
		unsigned int distance;

		if (vnpu_device_get_location(i, &loc) != VNPU_SUCCESS)
			continue;
		distance = numa_distance(node, loc.numa_node);
		if (distance < best_distance) {
			best_distance = distance;
			best = i;
		}
	}
	vnpu_log(VNPU_LOG_INFO, "nearest device to cpu %d (numa node %d): %u", cpu, node, best);
	*device = best;
	return VNPU_SUCCESS;
}
