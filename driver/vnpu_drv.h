/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_DRV_H__
#define __VNPU_DRV_H__

#include <linux/atomic.h>
#include <linux/types.h>
#include <drm/drm_device.h>

#include <drm/vnpu_accel.h>

#define DRIVER_NAME	"vnpu"
#define DRIVER_DESC	"Virtual NPU"

/*
 * Limits of the module parameters. They bound what one module load can ask
 * of the host, and are documented in Documentation/building-and-testing.rst.
 */
#define VNPU_MAX_DEVICES	16
#define VNPU_MIN_VRAM_MB	16
#define VNPU_MAX_VRAM_MB	(256 * 1024)
#define VNPU_MAX_ENGINES	8

/**
 * struct vnpu_device - one virtual NPU
 * @drm: the DRM accel device; the structure is freed with it
 * @index: position of the device in the module (0..num_devices-1)
 * @vram_size: emulated device memory in bytes
 * @num_compute_engines: compute engines of the device
 * @num_copy_engines: copy engines of the device
 * @health: an &enum drm_vnpu_health; atomic because sysfs and ioctls read it
 *	without a lock while recovery changes it
 *
 * The fixed facts (@index to @num_copy_engines) are set before the device
 * is registered and never change, so they need no lock.
 */
struct vnpu_device {
	struct drm_device drm;
	unsigned int index;
	u64 vram_size;
	u32 num_compute_engines;
	u32 num_copy_engines;
	atomic_t health;
};

static inline struct vnpu_device *to_vnpu_device(struct drm_device *drm)
{
	return container_of(drm, struct vnpu_device, drm);
}

int vnpu_device_numa_node(struct vnpu_device *vdev);
const char *vnpu_health_name(enum drm_vnpu_health health);

extern const struct attribute_group *vnpu_sysfs_groups[];

#endif /* __VNPU_DRV_H__ */
