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
 * Topology (fixed at load; see the DOC of vnpu_topo.c):
 *
 * - topology_node, topology_board: ids of the node and board of the device
 * - link_class: one word per device of the module, in index order: "self",
 *   "board" (same board), "node" (same node, other board) or "system"
 *   (other node)
 * - link_bandwidth_mbps, link_latency_ns: one integer per device in the
 *   same order, MB/s and ns of the link to it (0 for self)
 *
 * Memory, sampled when read (poll at most once a second; largest-free walks
 * the free ranges):
 *
 * - vram_used_bytes, vram_peak_bytes: VRAM allocated now and at most
 * - vram_largest_free_bytes: largest contiguous free VRAM range, i.e. the
 *   largest buffer that can be created now
 * - host_used_bytes: host-pinned and imported bytes placed in the host range
 * - bo_count: live buffers created on the device (imports excluded)
 * - syncobj_count: syncobj handles held by the open files of the device
 * - default_quota_bytes: VRAM hard and soft limit of processes that first
 *   use the device from now on; "max" for none. Root may write a byte count
 *   or "max".
 *
 * Recovery:
 *
 * - reset (write-only, root): writing 1 fails every running job and every
 *   job submitted before the write with -EIO, and makes the device healthy
 *   again; queues that turned guilty stay guilty
 * - reset_count: resets done since the device was bound
 *
 * Engines, in the device's "engines" group (a sibling of "vnpu":
 * /sys/class/accel/accelN/device/engines/), one value per file, for each
 * engine NAME the device has (compute0.., copy0..):
 *
 * - NAME_busy_ns: time the engine spent executing jobs, including the one
 *   executing now
 * - NAME_queued_jobs: jobs submitted to the engine that are not finished
 *   (waiting for dependencies, queued, or executing)
 */

#include <linux/capability.h>
#include <linux/device.h>
#include <linux/platform_device.h>
#include <linux/sysfs.h>

#include <drm/drm_drv.h>

#include "vnpu_drv.h"
#include "vnpu_engine.h"
#include "vnpu_topo.h"

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

static ssize_t topology_node_show(struct device *dev, struct device_attribute *attr,
				  char *buf)
{
	return sysfs_emit(buf, "%u\n", vnpu_topo_node(dev_to_vnpu(dev)->index));
}
static DEVICE_ATTR_RO(topology_node);

static ssize_t topology_board_show(struct device *dev, struct device_attribute *attr,
				   char *buf)
{
	return sysfs_emit(buf, "%u\n", vnpu_topo_board(dev_to_vnpu(dev)->index));
}
static DEVICE_ATTR_RO(topology_board);

enum vnpu_link_field { VNPU_LINK_CLASS, VNPU_LINK_MBPS, VNPU_LINK_NS };

/* One field of the device's link to every device, space separated. */
static ssize_t vnpu_show_links(struct device *dev, char *buf, enum vnpu_link_field field)
{
	struct vnpu_device *vdev = dev_to_vnpu(dev);
	unsigned int i, num = vnpu_num_devices_loaded();
	struct drm_vnpu_link link;
	int len = 0;

	for (i = 0; i < num; i++) {
		const char *sep = i + 1 < num ? " " : "\n";

		vnpu_topo_link(vdev->index, i, &link);
		if (field == VNPU_LINK_CLASS)
			len += sysfs_emit_at(buf, len, "%s%s",
					     vnpu_topo_class_name(link.link_class), sep);
		else
			len += sysfs_emit_at(buf, len, "%u%s", field == VNPU_LINK_MBPS ?
					     link.bandwidth_mbps : link.latency_ns, sep);
	}
	return len;
}

static ssize_t link_class_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return vnpu_show_links(dev, buf, VNPU_LINK_CLASS);
}
static DEVICE_ATTR_RO(link_class);

static ssize_t link_bandwidth_mbps_show(struct device *dev, struct device_attribute *attr,
					char *buf)
{
	return vnpu_show_links(dev, buf, VNPU_LINK_MBPS);
}
static DEVICE_ATTR_RO(link_bandwidth_mbps);

static ssize_t link_latency_ns_show(struct device *dev, struct device_attribute *attr,
				    char *buf)
{
	return vnpu_show_links(dev, buf, VNPU_LINK_NS);
}
static DEVICE_ATTR_RO(link_latency_ns);

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

static ssize_t syncobj_count_show(struct device *dev, struct device_attribute *attr,
				  char *buf)
{
	return sysfs_emit(buf, "%llu\n", vnpu_syncobj_count(dev_to_vnpu(dev), NULL));
}
static DEVICE_ATTR_RO(syncobj_count);

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

static ssize_t reset_store(struct device *dev, struct device_attribute *attr,
			   const char *buf, size_t count)
{
	struct vnpu_device *vdev = dev_to_vnpu(dev);
	bool yes;
	int idx, ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kstrtobool(buf, &yes);
	if (ret)
		return ret;
	if (!yes)
		return -EINVAL;
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	vnpu_device_reset(vdev);
	drm_dev_exit(idx);
	return count;
}
static DEVICE_ATTR_WO(reset);

static ssize_t reset_count_show(struct device *dev, struct device_attribute *attr,
				char *buf)
{
	struct vnpu_device *vdev = dev_to_vnpu(dev);
	u64 count;

	spin_lock(&vdev->health_lock);
	count = vdev->reset_count;
	spin_unlock(&vdev->health_lock);
	return sysfs_emit(buf, "%llu\n", count);
}
static DEVICE_ATTR_RO(reset_count);

static struct attribute *vnpu_attrs[] = {
	&dev_attr_index.attr,
	&dev_attr_uapi_version.attr,
	&dev_attr_vram_total_bytes.attr,
	&dev_attr_compute_engines.attr,
	&dev_attr_copy_engines.attr,
	&dev_attr_numa_node.attr,
	&dev_attr_topology_node.attr,
	&dev_attr_topology_board.attr,
	&dev_attr_link_class.attr,
	&dev_attr_link_bandwidth_mbps.attr,
	&dev_attr_link_latency_ns.attr,
	&dev_attr_health.attr,
	&dev_attr_vram_used_bytes.attr,
	&dev_attr_vram_peak_bytes.attr,
	&dev_attr_vram_largest_free_bytes.attr,
	&dev_attr_host_used_bytes.attr,
	&dev_attr_bo_count.attr,
	&dev_attr_syncobj_count.attr,
	&dev_attr_default_quota_bytes.attr,
	&dev_attr_reset.attr,
	&dev_attr_reset_count.attr,
	NULL
};

static const struct attribute_group vnpu_attr_group = {
	.name = "vnpu",
	.attrs = vnpu_attrs,
};

/* An engine attribute: class << 8 | number, in the ext attribute's var. */
#define VNPU_ENGINE_ID(class, nr) ((class) << 8 | (nr))

static struct vnpu_engine *vnpu_attr_engine(struct device *dev, struct device_attribute *attr)
{
	struct vnpu_device *vdev = dev_to_vnpu(dev);
	uintptr_t id = (uintptr_t)container_of(attr, struct dev_ext_attribute, attr)->var;
	u32 nr = id & 0xff;

	if (id >> 8 == DRM_VNPU_ENGINE_COPY)
		nr += vdev->num_compute_engines;
	return &vdev->engines[nr];
}

static ssize_t engine_busy_ns_show(struct device *dev, struct device_attribute *attr,
				   char *buf)
{
	return sysfs_emit(buf, "%llu\n", vnpu_engine_busy_ns(vnpu_attr_engine(dev, attr)));
}

static ssize_t engine_queued_jobs_show(struct device *dev, struct device_attribute *attr,
				       char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&vnpu_attr_engine(dev, attr)->queued));
}

#define VNPU_ENGINE_ATTR(name, stat, id)					\
static struct dev_ext_attribute dev_attr_##name##_##stat = {			\
	__ATTR(name##_##stat, 0444, engine_##stat##_show, NULL), (void *)(id)	\
}

VNPU_ENGINE_ATTR(compute0, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 0));
VNPU_ENGINE_ATTR(compute0, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 0));
VNPU_ENGINE_ATTR(compute1, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 1));
VNPU_ENGINE_ATTR(compute1, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 1));
VNPU_ENGINE_ATTR(compute2, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 2));
VNPU_ENGINE_ATTR(compute2, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 2));
VNPU_ENGINE_ATTR(compute3, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 3));
VNPU_ENGINE_ATTR(compute3, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 3));
VNPU_ENGINE_ATTR(compute4, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 4));
VNPU_ENGINE_ATTR(compute4, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 4));
VNPU_ENGINE_ATTR(compute5, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 5));
VNPU_ENGINE_ATTR(compute5, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 5));
VNPU_ENGINE_ATTR(compute6, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 6));
VNPU_ENGINE_ATTR(compute6, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 6));
VNPU_ENGINE_ATTR(compute7, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 7));
VNPU_ENGINE_ATTR(compute7, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COMPUTE, 7));
VNPU_ENGINE_ATTR(copy0, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 0));
VNPU_ENGINE_ATTR(copy0, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 0));
VNPU_ENGINE_ATTR(copy1, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 1));
VNPU_ENGINE_ATTR(copy1, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 1));
VNPU_ENGINE_ATTR(copy2, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 2));
VNPU_ENGINE_ATTR(copy2, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 2));
VNPU_ENGINE_ATTR(copy3, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 3));
VNPU_ENGINE_ATTR(copy3, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 3));
VNPU_ENGINE_ATTR(copy4, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 4));
VNPU_ENGINE_ATTR(copy4, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 4));
VNPU_ENGINE_ATTR(copy5, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 5));
VNPU_ENGINE_ATTR(copy5, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 5));
VNPU_ENGINE_ATTR(copy6, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 6));
VNPU_ENGINE_ATTR(copy6, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 6));
VNPU_ENGINE_ATTR(copy7, busy_ns, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 7));
VNPU_ENGINE_ATTR(copy7, queued_jobs, VNPU_ENGINE_ID(DRM_VNPU_ENGINE_COPY, 7));

static_assert(VNPU_MAX_ENGINES == 8);

static struct attribute *vnpu_engine_attrs[] = {
	&dev_attr_compute0_busy_ns.attr.attr,
	&dev_attr_compute0_queued_jobs.attr.attr,
	&dev_attr_compute1_busy_ns.attr.attr,
	&dev_attr_compute1_queued_jobs.attr.attr,
	&dev_attr_compute2_busy_ns.attr.attr,
	&dev_attr_compute2_queued_jobs.attr.attr,
	&dev_attr_compute3_busy_ns.attr.attr,
	&dev_attr_compute3_queued_jobs.attr.attr,
	&dev_attr_compute4_busy_ns.attr.attr,
	&dev_attr_compute4_queued_jobs.attr.attr,
	&dev_attr_compute5_busy_ns.attr.attr,
	&dev_attr_compute5_queued_jobs.attr.attr,
	&dev_attr_compute6_busy_ns.attr.attr,
	&dev_attr_compute6_queued_jobs.attr.attr,
	&dev_attr_compute7_busy_ns.attr.attr,
	&dev_attr_compute7_queued_jobs.attr.attr,
	&dev_attr_copy0_busy_ns.attr.attr,
	&dev_attr_copy0_queued_jobs.attr.attr,
	&dev_attr_copy1_busy_ns.attr.attr,
	&dev_attr_copy1_queued_jobs.attr.attr,
	&dev_attr_copy2_busy_ns.attr.attr,
	&dev_attr_copy2_queued_jobs.attr.attr,
	&dev_attr_copy3_busy_ns.attr.attr,
	&dev_attr_copy3_queued_jobs.attr.attr,
	&dev_attr_copy4_busy_ns.attr.attr,
	&dev_attr_copy4_queued_jobs.attr.attr,
	&dev_attr_copy5_busy_ns.attr.attr,
	&dev_attr_copy5_queued_jobs.attr.attr,
	&dev_attr_copy6_busy_ns.attr.attr,
	&dev_attr_copy6_queued_jobs.attr.attr,
	&dev_attr_copy7_busy_ns.attr.attr,
	&dev_attr_copy7_queued_jobs.attr.attr,
	NULL
};

/* Shows the attributes of the engines the device has. */
static umode_t vnpu_engine_attr_visible(struct kobject *kobj, struct attribute *attr, int n)
{
	struct vnpu_device *vdev = dev_to_vnpu(kobj_to_dev(kobj));
	struct dev_ext_attribute *ea = container_of(attr, struct dev_ext_attribute, attr.attr);
	uintptr_t id = (uintptr_t)ea->var;
	u32 count = id >> 8 == DRM_VNPU_ENGINE_COPY ? vdev->num_copy_engines :
						     vdev->num_compute_engines;

	return (id & 0xff) < count ? attr->mode : 0;
}

static const struct attribute_group vnpu_engine_group = {
	.name = "engines",
	.attrs = vnpu_engine_attrs,
	.is_visible = vnpu_engine_attr_visible,
};

const struct attribute_group *vnpu_sysfs_groups[] = {
	&vnpu_attr_group,
	&vnpu_engine_group,
	NULL
};
