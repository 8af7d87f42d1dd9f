// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/**
 * DOC: vnpu sysfs
 *
 * Each device has a "vnpu" attribute group on its platform device, reached
 * as /sys/class/accel/accelN/device/vnpu/. One value per file, read-only,
 * the same facts DRM_IOCTL_VNPU_GET_PARAM returns:
 *
 * - index: position of the device in the module (0-based)
 * - uapi_version: "major.minor" of the uAPI the module implements
 * - vram_total_bytes: emulated device memory in bytes
 * - compute_engines, copy_engines: engine counts
 * - numa_node: host NUMA node, -1 for none
 * - health: "ok", "degraded" or "needs-reset"
 */

#include <linux/device.h>
#include <linux/platform_device.h>
#include <linux/sysfs.h>

#include "vnpu_drv.h"

static struct vnpu_device *dev_to_vnpu(struct device *dev)
{
	return platform_get_drvdata(to_platform_device(dev));
}

static ssize_t index_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", dev_to_vnpu(dev)->index);
}
static DEVICE_ATTR_RO(index);

static ssize_t uapi_version_show(struct device *dev, struct device_attribute *attr,
				 char *buf)
{
	return sysfs_emit(buf, "%u.%u\n", DRM_VNPU_UAPI_MAJOR, DRM_VNPU_UAPI_MINOR);
}
static DEVICE_ATTR_RO(uapi_version);

static ssize_t vram_total_bytes_show(struct device *dev, struct device_attribute *attr,
				     char *buf)
{
	return sysfs_emit(buf, "%llu\n", dev_to_vnpu(dev)->vram_size);
}
static DEVICE_ATTR_RO(vram_total_bytes);

static ssize_t compute_engines_show(struct device *dev, struct device_attribute *attr,
				    char *buf)
{
	return sysfs_emit(buf, "%u\n", dev_to_vnpu(dev)->num_compute_engines);
}
static DEVICE_ATTR_RO(compute_engines);

static ssize_t copy_engines_show(struct device *dev, struct device_attribute *attr,
				 char *buf)
{
	return sysfs_emit(buf, "%u\n", dev_to_vnpu(dev)->num_copy_engines);
}
static DEVICE_ATTR_RO(copy_engines);

static ssize_t numa_node_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", vnpu_device_numa_node(dev_to_vnpu(dev)));
}
static DEVICE_ATTR_RO(numa_node);

static ssize_t health_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  vnpu_health_name(atomic_read(&dev_to_vnpu(dev)->health)));
}
static DEVICE_ATTR_RO(health);

static struct attribute *vnpu_attrs[] = {
	&dev_attr_index.attr,
	&dev_attr_uapi_version.attr,
	&dev_attr_vram_total_bytes.attr,
	&dev_attr_compute_engines.attr,
	&dev_attr_copy_engines.attr,
	&dev_attr_numa_node.attr,
	&dev_attr_health.attr,
	NULL
};

static const struct attribute_group vnpu_attr_group = {
	.name = "vnpu",
	.attrs = vnpu_attrs,
};

const struct attribute_group *vnpu_sysfs_groups[] = {
	&vnpu_attr_group,
	NULL
};
