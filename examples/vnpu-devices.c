// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The smallest libvnpurt program: start the runtime, list the devices,
 * stop. Build it against an installed runtime (libvnpurt-dev):
 *
 *     cc vnpu-devices.c $(pkg-config --cflags --libs vnpurt) -o vnpu-devices
 */
#include <inttypes.h>
#include <stdio.h>

#include <vnpu.h>

static int fail(const char *what, int status)
{
	fprintf(stderr, "vnpu-devices: %s: %s: %s\n", what, vnpu_status_name(status),
		vnpu_status_string(status));
	return 1;
}

int main(void)
{
	uint32_t count;
	int status;

	status = vnpu_init(0);
	if (status != VNPU_SUCCESS)
		return fail("vnpu_init", status);

	status = vnpu_device_count(&count);
	if (status != VNPU_SUCCESS) {
		vnpu_finalize();
		return fail("vnpu_device_count", status);
	}
	printf("%" PRIu32 " vnpu device(s), runtime API %d.%d\n", count, VNPU_VERSION_MAJOR,
	       VNPU_VERSION_MINOR);

	for (uint32_t i = 0; i < count; i++) {
		struct vnpu_device_properties p;

		status = vnpu_device_get_properties(i, &p);
		if (status != VNPU_SUCCESS) {
			vnpu_finalize();
			return fail("vnpu_device_get_properties", status);
		}
		printf("%s: /dev/accel/accel%" PRIu32 ", uAPI %" PRIu32 ".%" PRIu32
		       ", %" PRIu64 " MiB VRAM, %" PRIu32 " compute + %" PRIu32 " copy engines\n",
		       p.name, p.accel_minor, p.uapi_major, p.uapi_minor, p.vram_total >> 20,
		       p.compute_engines, p.copy_engines);
	}

	status = vnpu_finalize();
	if (status != VNPU_SUCCESS)
		return fail("vnpu_finalize", status);
	return 0;
}
