/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __UAPI_VNPU_ACCEL_H__
#define __UAPI_VNPU_ACCEL_H__

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: vnpu uAPI overview
 *
 * vnpu is a virtual NPU. Each device is a DRM accel device
 * (``/dev/accel/accelN``) whose DRM driver name is "vnpu". Userspace finds
 * its devices by opening every accel node and comparing the name returned by
 * DRM_IOCTL_VERSION.
 *
 * Every vnpu ioctl argument is a struct of naturally aligned __u32/__u64
 * members. Padding and reserved members must be zero. Structs grow only at
 * their end:
 *
 * - a struct shorter than the first version of its ioctl fails with -EINVAL;
 * - a struct longer than the kernel knows is accepted only when every byte
 *   past the kernel's size is zero, otherwise the ioctl fails with -E2BIG;
 * - an ioctl number inside the driver range that the kernel does not know
 *   fails with -ENOTTY.
 *
 * The version of this interface is DRM_VNPU_UAPI_MAJOR.DRM_VNPU_UAPI_MINOR
 * and is readable with %DRM_VNPU_PARAM_UAPI_VERSION. A minor bump adds
 * ioctls, params or struct members; a major bump would break userspace and
 * is not planned.
 */

#define DRM_VNPU_UAPI_MAJOR 1
#define DRM_VNPU_UAPI_MINOR 0

#define DRM_VNPU_GET_PARAM 0x00

#define DRM_IOCTL_VNPU_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_GET_PARAM, struct drm_vnpu_get_param)

/**
 * enum drm_vnpu_param - device facts readable with DRM_IOCTL_VNPU_GET_PARAM
 * @DRM_VNPU_PARAM_UAPI_VERSION: (major << 16) | minor of this header.
 * @DRM_VNPU_PARAM_DEVICE_INDEX: index of the device within the vnpu module
 *	(0..num_devices-1); stable for the life of the module, independent of
 *	the accel minor number.
 * @DRM_VNPU_PARAM_VRAM_SIZE: emulated device memory in bytes.
 * @DRM_VNPU_PARAM_NUM_COMPUTE_ENGINES: number of compute engines.
 * @DRM_VNPU_PARAM_NUM_COPY_ENGINES: number of copy engines.
 * @DRM_VNPU_PARAM_NUMA_NODE: host NUMA node the device is attached to, or
 *	%DRM_VNPU_NUMA_NODE_NONE.
 * @DRM_VNPU_PARAM_HEALTH: current &enum drm_vnpu_health.
 * @DRM_VNPU_PARAM_CAPABILITIES: bitmask of DRM_VNPU_CAP_* (none defined in
 *	version 1.0, so 0).
 * @DRM_VNPU_PARAM_COUNT: number of params; not a param.
 */
enum drm_vnpu_param {
	DRM_VNPU_PARAM_UAPI_VERSION = 0,
	DRM_VNPU_PARAM_DEVICE_INDEX = 1,
	DRM_VNPU_PARAM_VRAM_SIZE = 2,
	DRM_VNPU_PARAM_NUM_COMPUTE_ENGINES = 3,
	DRM_VNPU_PARAM_NUM_COPY_ENGINES = 4,
	DRM_VNPU_PARAM_NUMA_NODE = 5,
	DRM_VNPU_PARAM_HEALTH = 6,
	DRM_VNPU_PARAM_CAPABILITIES = 7,
	DRM_VNPU_PARAM_COUNT,
};

/* Value of %DRM_VNPU_PARAM_NUMA_NODE for a device bound to no NUMA node. */
#define DRM_VNPU_NUMA_NODE_NONE (~0ULL)

/**
 * enum drm_vnpu_health - device health
 * @DRM_VNPU_HEALTH_OK: the device runs work normally.
 * @DRM_VNPU_HEALTH_DEGRADED: the device runs work but recovered from
 *	repeated hangs recently.
 * @DRM_VNPU_HEALTH_NEEDS_RESET: the device refuses work until reset.
 */
enum drm_vnpu_health {
	DRM_VNPU_HEALTH_OK = 0,
	DRM_VNPU_HEALTH_DEGRADED = 1,
	DRM_VNPU_HEALTH_NEEDS_RESET = 2,
};

/**
 * struct drm_vnpu_get_param - read one device fact
 *
 * Errors: -EINVAL for an unknown @param or non-zero @flags; -ENODEV once the
 * device has been unplugged.
 */
struct drm_vnpu_get_param {
	/** @param: in, one of &enum drm_vnpu_param. */
	__u32 param;
	/** @flags: in, reserved, must be zero. */
	__u32 flags;
	/** @value: out, the value of @param. */
	__u64 value;
};

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_VNPU_ACCEL_H__ */
