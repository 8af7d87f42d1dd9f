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
 *
 * Memory, sampled when read (poll at most once a second; largest-free walks
 * the free ranges):
 *
 * - vram_used_bytes, vram_peak_bytes: VRAM allocated now and at most
 * - vram_largest_free_bytes: largest contiguous free VRAM range, i.e. the
 *   largest buffer that can be created now
 * - host_used_bytes: host-pinned and imported bytes placed in the host range
 * - bo_count: live buffers created on the device (imports excluded)
 * - default_quota_bytes: VRAM hard and soft limit of processes that first
 *   use the device from now on; "max" for none. Root may write a byte count
 *   or "max".
 */

#include <linux/capability.h>
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

/* Reads a u64 field of the device under mem_lock. */
static ssize_t vnpu_show_locked_u64(struct device *dev, char *buf, size_t offset)
{
	struct vnpu_device *vdev = dev_to_vnpu(dev);
	u64 value;

	mutex_lock(&vdev->mem_lock);
	value = *(u64 *)((char *)vdev + offset);
	mutex_unlock(&vdev->mem_lock);
	return sysfs_emit(buf, "%llu\n", value);
}

static ssize_t vram_used_bytes_show(struct device *dev, struct device_attribute *attr,
				    char *buf)
{
	return vnpu_show_locked_u64(dev, buf, offsetof(struct vnpu_device, vram.used));
}
static DEVICE_ATTR_RO(vram_used_bytes);

static ssize_t vram_peak_bytes_show(struct device *dev, struct device_attribute *attr,
				    char *buf)
{
	return vnpu_show_locked_u64(dev, buf, offsetof(struct vnpu_device, vram_peak));
}
static DEVICE_ATTR_RO(vram_peak_bytes);

static ssize_t host_used_bytes_show(struct device *dev, struct device_attribute *attr,
				    char *buf)
{
	return vnpu_show_locked_u64(dev, buf, offsetof(struct vnpu_device, host.used));
}
static DEVICE_ATTR_RO(host_used_bytes);

static ssize_t bo_count_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return vnpu_show_locked_u64(dev, buf, offsetof(struct vnpu_device, bo_count));
}
static DEVICE_ATTR_RO(bo_count);

static ssize_t vram_largest_free_bytes_show(struct device *dev,
					    struct device_attribute *attr, char *buf)
{
	struct vnpu_device *vdev = dev_to_vnpu(dev);

	return sysfs_emit(buf, "%llu\n", vnpu_region_largest_free(vdev, &vdev->vram));
}
static DEVICE_ATTR_RO(vram_largest_free_bytes);

static ssize_t default_quota_bytes_show(struct device *dev, struct device_attribute *attr,
					char *buf)
{
	struct vnpu_device *vdev = dev_to_vnpu(dev);
	u64 quota;

	mutex_lock(&vdev->mem_lock);
	quota = vdev->default_quota;
	mutex_unlock(&vdev->mem_lock);
	if (quota == DRM_VNPU_QUOTA_UNLIMITED)
		return sysfs_emit(buf, "max\n");
	return sysfs_emit(buf, "%llu\n", quota);
}

static ssize_t default_quota_bytes_store(struct device *dev, struct device_attribute *attr,
					 const char *buf, size_t count)
{
	struct vnpu_device *vdev = dev_to_vnpu(dev);
	u64 quota;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (sysfs_streq(buf, "max")) {
		quota = DRM_VNPU_QUOTA_UNLIMITED;
	} else {
		ret = kstrtou64(buf, 0, &quota);
		if (ret)
			return ret;
	}
	mutex_lock(&vdev->mem_lock);
	vdev->default_quota = quota;
	mutex_unlock(&vdev->mem_lock);
	return count;
}
static DEVICE_ATTR_RW(default_quota_bytes);

static struct attribute *vnpu_attrs[] = {
	&dev_attr_index.attr,
	&dev_attr_uapi_version.attr,
	&dev_attr_vram_total_bytes.attr,
	&dev_attr_compute_engines.attr,
	&dev_attr_copy_engines.attr,
	&dev_attr_numa_node.attr,
	&dev_attr_health.attr,
	&dev_attr_vram_used_bytes.attr,
	&dev_attr_vram_peak_bytes.attr,
	&dev_attr_vram_largest_free_bytes.attr,
	&dev_attr_host_used_bytes.attr,
	&dev_attr_bo_count.attr,
	&dev_attr_default_quota_bytes.attr,
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
