/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Private state shared by the runtime's source files.
 */
#ifndef VNPU_RUNTIME_PRIVATE_H
#define VNPU_RUNTIME_PRIVATE_H

#include <stdint.h>

#include <drm/vnpu_accel.h>

#include "vnpu.h"

/* One opened vnpu accel node. */
struct vnpu_rt_device {
	int fd;
	uint32_t physical_index;
	uint32_t accel_minor;
};

struct vnpu_runtime {
	unsigned int refcount;
	int ever_initialized;
	struct vnpu_rt_device *devices;
	uint32_t num_devices;
};

/* DRM_IOCTL_VNPU_GET_PARAM; returns 0 or -errno. */
int vnpu_get_param(int fd, uint32_t param, uint64_t *value);

#endif
