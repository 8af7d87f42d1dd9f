// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/**
 * DOC: vnpu devices
 *
 * The module creates num_devices platform devices named "vnpu" and binds
 * them to its platform driver. Each bound device registers one DRM accel
 * device, so userspace sees /dev/accel/accelN and
 * /sys/class/accel/accelN/device/vnpu/. Unbinding a device through
 * /sys/bus/platform/drivers/vnpu/unbind unplugs it: open files stay valid
 * but their ioctls fail with -ENODEV.
 */

#include <linux/dma-mapping.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/nodemask.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>

#include "vnpu_compat.h"
#include "vnpu_debugfs.h"
#include "vnpu_drv.h"
#include "vnpu_engine.h"
#include "vnpu_fault.h"
#include "vnpu_gem.h"
#include "vnpu_mem.h"
#include "vnpu_ops.h"
#include "vnpu_queue.h"
#include "vnpu_topo.h"

static unsigned int vnpu_num_devices = 1;
module_param_named(num_devices, vnpu_num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Number of virtual NPUs (1-16, default 1)");

static unsigned int vnpu_vram_size_mb = 256;
module_param_named(vram_size_mb, vnpu_vram_size_mb, uint, 0444);
MODULE_PARM_DESC(vram_size_mb,
		 "Emulated device memory per NPU in MiB (16-262144, default 256)");

static unsigned int vnpu_host_size_mb = 1024;
module_param_named(host_size_mb, vnpu_host_size_mb, uint, 0444);
MODULE_PARM_DESC(host_size_mb,
		 "Host-pinned address range per NPU in MiB (16-262144, default 1024)");

static unsigned int vnpu_compute_engines = 2;
module_param_named(compute_engines, vnpu_compute_engines, uint, 0444);
MODULE_PARM_DESC(compute_engines, "Compute engines per NPU (1-8, default 2)");

static unsigned int vnpu_copy_engines = 1;
module_param_named(copy_engines, vnpu_copy_engines, uint, 0444);
MODULE_PARM_DESC(copy_engines, "Copy engines per NPU (1-8, default 1)");

static unsigned int vnpu_job_timeout_ms = 10000;
module_param_named(job_timeout_ms, vnpu_job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "Default time a job may execute before it is aborted, in ms (1-3600000, default 10000)");

static unsigned int vnpu_max_queues_per_process = 64;
module_param_named(max_queues_per_process, vnpu_max_queues_per_process, uint, 0444);
MODULE_PARM_DESC(max_queues_per_process,
		 "Queues one process may have per NPU (1-4096, default 64)");

static unsigned int vnpu_max_bos_per_process = 16384;
module_param_named(max_bos_per_process, vnpu_max_bos_per_process, uint, 0444);
MODULE_PARM_DESC(max_bos_per_process,
		 "Buffers one process may create and hold per NPU (1-1048576, default 16384)");

static unsigned int vnpu_max_syncobjs_per_process = 4096;
module_param_named(max_syncobjs_per_process, vnpu_max_syncobjs_per_process, uint, 0444);
MODULE_PARM_DESC(max_syncobjs_per_process,
		 "Syncobjs one process may hold per NPU (1-1048576, default 4096)");

static int vnpu_numa_node[VNPU_MAX_DEVICES] = {
	[0 ... VNPU_MAX_DEVICES - 1] = NUMA_NO_NODE
};

static unsigned int vnpu_numa_node_count;
module_param_array_named(numa_node, vnpu_numa_node, int, &vnpu_numa_node_count, 0444);
MODULE_PARM_DESC(numa_node,
		 "Host NUMA node of each NPU, comma separated (-1 = none, default -1)");

static struct platform_device *vnpu_pdevs[VNPU_MAX_DEVICES];

unsigned int vnpu_num_devices_loaded(void)
{
	return vnpu_num_devices;
}

int vnpu_device_numa_node(struct vnpu_device *vdev)
{
	return dev_to_node(vdev->drm.dev);
}

const char *vnpu_health_name(enum drm_vnpu_health health)
{
	switch (health) {
	case DRM_VNPU_HEALTH_OK:
		return "ok";
	case DRM_VNPU_HEALTH_DEGRADED:
		return "degraded";
	case DRM_VNPU_HEALTH_NEEDS_RESET:
		return "needs-reset";
	}
	return "unknown";
}

/*
 * Counts a job timeout against the device health: the device is degraded
 * after DRM_VNPU_HEALTH_DEGRADED_HANGS timeouts within
 * DRM_VNPU_HEALTH_WINDOW_MS and needs a reset after
 * DRM_VNPU_HEALTH_RESET_HANGS. Only a reset makes it healthy again.
 */
void vnpu_health_hang(struct vnpu_device *vdev)
{
	unsigned long window = msecs_to_jiffies(DRM_VNPU_HEALTH_WINDOW_MS);
	unsigned int i, recent = 0;
	int health;

	spin_lock(&vdev->health_lock);
	memmove(&vdev->hang_times[1], &vdev->hang_times[0],
		sizeof(vdev->hang_times) - sizeof(vdev->hang_times[0]));
	/* 0 marks an empty slot. */
	vdev->hang_times[0] = jiffies ?: 1;
	for (i = 0; i < ARRAY_SIZE(vdev->hang_times); i++)
		if (vdev->hang_times[i] && time_before(jiffies, vdev->hang_times[i] + window))
			recent++;
	health = atomic_read(&vdev->health);
	if (recent >= DRM_VNPU_HEALTH_RESET_HANGS)
		health = DRM_VNPU_HEALTH_NEEDS_RESET;
	else if (recent >= DRM_VNPU_HEALTH_DEGRADED_HANGS && health == DRM_VNPU_HEALTH_OK)
		health = DRM_VNPU_HEALTH_DEGRADED;
	atomic_set(&vdev->health, health);
	spin_unlock(&vdev->health_lock);
}

static int vnpu_get_param_value(struct vnpu_device *vdev, u32 param, u64 *value)
{
	int node;

	switch (param) {
	case DRM_VNPU_PARAM_UAPI_VERSION:
		*value = (DRM_VNPU_UAPI_MAJOR << 16) | DRM_VNPU_UAPI_MINOR;
		return 0;
	case DRM_VNPU_PARAM_DEVICE_INDEX:
		*value = vdev->index;
		return 0;
	case DRM_VNPU_PARAM_VRAM_SIZE:
		*value = vdev->vram_size;
		return 0;
	case DRM_VNPU_PARAM_NUM_COMPUTE_ENGINES:
		*value = vdev->num_compute_engines;
		return 0;
	case DRM_VNPU_PARAM_NUM_COPY_ENGINES:
		*value = vdev->num_copy_engines;
		return 0;
	case DRM_VNPU_PARAM_NUMA_NODE:
		node = vnpu_device_numa_node(vdev);
		*value = node == NUMA_NO_NODE ? DRM_VNPU_NUMA_NODE_NONE : node;
		return 0;
	case DRM_VNPU_PARAM_HEALTH:
		*value = atomic_read(&vdev->health);
		return 0;
	case DRM_VNPU_PARAM_CAPABILITIES:
		*value = 0;
		return 0;
	case DRM_VNPU_PARAM_VRAM_USED:
		mutex_lock(&vdev->mem_lock);
		*value = vdev->vram.used;
		mutex_unlock(&vdev->mem_lock);
		return 0;
	case DRM_VNPU_PARAM_VRAM_LARGEST_FREE:
		*value = vnpu_region_largest_free(vdev, &vdev->vram);
		return 0;
	case DRM_VNPU_PARAM_HOST_SIZE:
		*value = vdev->host.size;
		return 0;
	case DRM_VNPU_PARAM_MAX_QUEUES_PER_PROCESS:
		*value = vdev->max_queues;
		return 0;
	case DRM_VNPU_PARAM_NUM_DEVICES:
		*value = vnpu_num_devices;
		return 0;
	case DRM_VNPU_PARAM_TOPOLOGY_NODE:
		*value = vnpu_topo_node(vdev->index);
		return 0;
	case DRM_VNPU_PARAM_TOPOLOGY_BOARD:
		*value = vnpu_topo_board(vdev->index);
		return 0;
	}
	return -EINVAL;
}

static int vnpu_get_param_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct drm_vnpu_get_param *args = data;
	int idx, ret;

	if (args->flags)
		return -EINVAL;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ret = vnpu_get_param_value(to_vnpu_device(drm), args->param, &args->value);
	drm_dev_exit(idx);
	return ret;
}

/* The device's row of the link matrix; see &struct drm_vnpu_topology. */
static int vnpu_topology_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct drm_vnpu_topology *args = data;
	struct drm_vnpu_link __user *links = u64_to_user_ptr(args->links);
	struct drm_vnpu_link link;
	unsigned int i, count;

	if (args->flags || args->pad || (!args->links && args->count))
		return -EINVAL;
	count = min(args->count, vnpu_num_devices);
	for (i = 0; i < count; i++) {
		vnpu_topo_link(vdev->index, i, &link);
		if (copy_to_user(&links[i], &link, sizeof(link)))
			return -EFAULT;
	}
	args->count = vnpu_num_devices;
	return 0;
}

/*
 * Runs @func inside drm_dev_enter()/drm_dev_exit(): once the device is
 * unplugged, its ioctls fail with -ENODEV.
 */
static int vnpu_ioctl_enter(struct drm_device *drm, void *data, struct drm_file *file,
			    drm_ioctl_t *func)
{
	int idx, ret;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ret = func(drm, data, file);
	drm_dev_exit(idx);
	return ret;
}

static int vnpu_bo_info_ioctl_enter(struct drm_device *drm, void *data,
				    struct drm_file *file)
{
	return vnpu_ioctl_enter(drm, data, file, vnpu_bo_info_ioctl);
}

static int vnpu_quota_get_ioctl_enter(struct drm_device *drm, void *data,
				      struct drm_file *file)
{
	return vnpu_ioctl_enter(drm, data, file, vnpu_quota_get_ioctl);
}

static int vnpu_quota_set_ioctl_enter(struct drm_device *drm, void *data,
				      struct drm_file *file)
{
	return vnpu_ioctl_enter(drm, data, file, vnpu_quota_set_ioctl);
}

static int vnpu_queue_create_ioctl_enter(struct drm_device *drm, void *data,
					 struct drm_file *file)
{
	return vnpu_ioctl_enter(drm, data, file, vnpu_queue_create_ioctl);
}

static int vnpu_queue_destroy_ioctl_enter(struct drm_device *drm, void *data,
					  struct drm_file *file)
{
	return vnpu_ioctl_enter(drm, data, file, vnpu_queue_destroy_ioctl);
}

static int vnpu_submit_ioctl_enter(struct drm_device *drm, void *data,
				   struct drm_file *file)
{
	return vnpu_ioctl_enter(drm, data, file, vnpu_submit_ioctl);
}

static int vnpu_queue_info_ioctl_enter(struct drm_device *drm, void *data,
				       struct drm_file *file)
{
	return vnpu_ioctl_enter(drm, data, file, vnpu_queue_info_ioctl);
}

static int vnpu_topology_ioctl_enter(struct drm_device *drm, void *data,
				     struct drm_file *file)
{
	return vnpu_ioctl_enter(drm, data, file, vnpu_topology_ioctl);
}

static const struct drm_ioctl_desc vnpu_drm_ioctls[] = {
	DRM_IOCTL_DEF_DRV(VNPU_GET_PARAM, vnpu_get_param_ioctl, 0),
	DRM_IOCTL_DEF_DRV(VNPU_BO_CREATE, vnpu_bo_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(VNPU_BO_INFO, vnpu_bo_info_ioctl_enter, 0),
	DRM_IOCTL_DEF_DRV(VNPU_QUOTA_GET, vnpu_quota_get_ioctl_enter, 0),
	DRM_IOCTL_DEF_DRV(VNPU_QUOTA_SET, vnpu_quota_set_ioctl_enter, 0),
	DRM_IOCTL_DEF_DRV(VNPU_QUEUE_CREATE, vnpu_queue_create_ioctl_enter, 0),
	DRM_IOCTL_DEF_DRV(VNPU_QUEUE_DESTROY, vnpu_queue_destroy_ioctl_enter, 0),
	DRM_IOCTL_DEF_DRV(VNPU_SUBMIT, vnpu_submit_ioctl_enter, 0),
	DRM_IOCTL_DEF_DRV(VNPU_QUEUE_INFO, vnpu_queue_info_ioctl_enter, 0),
	DRM_IOCTL_DEF_DRV(VNPU_TOPOLOGY, vnpu_topology_ioctl_enter, 0),
};

/*
 * Smallest argument size each vnpu ioctl has ever had: a caller passing
 * less is refused instead of being zero-extended.
 */
static const u16 vnpu_ioctl_min_size[] = {
	[DRM_VNPU_GET_PARAM] = sizeof(struct drm_vnpu_get_param),
	[DRM_VNPU_BO_CREATE] = sizeof(struct drm_vnpu_bo_create),
	[DRM_VNPU_BO_INFO] = sizeof(struct drm_vnpu_bo_info),
	[DRM_VNPU_QUOTA_GET] = sizeof(struct drm_vnpu_quota),
	[DRM_VNPU_QUOTA_SET] = sizeof(struct drm_vnpu_quota),
	/* 1.2 had no timeout_ms and pad. */
	[DRM_VNPU_QUEUE_CREATE] = offsetof(struct drm_vnpu_queue_create, timeout_ms),
	[DRM_VNPU_QUEUE_DESTROY] = sizeof(struct drm_vnpu_queue_destroy),
	[DRM_VNPU_SUBMIT] = sizeof(struct drm_vnpu_submit),
	[DRM_VNPU_QUEUE_INFO] = sizeof(struct drm_vnpu_queue_info),
	[DRM_VNPU_TOPOLOGY] = sizeof(struct drm_vnpu_topology),
};

static_assert(ARRAY_SIZE(vnpu_ioctl_min_size) == ARRAY_SIZE(vnpu_drm_ioctls));

/*
 * Size rules of the vnpu uAPI on top of drm_ioctl(), which silently
 * zero-extends short structs and ignores the tail of long ones:
 * unknown driver ioctls are -ENOTTY, too short is -EINVAL, and a longer
 * struct is accepted only if the unknown tail is zero (else -E2BIG).
 */
static long vnpu_ioctl_check(unsigned int cmd, unsigned long arg)
{
	unsigned int nr = _IOC_NR(cmd);
	unsigned int usize = _IOC_SIZE(cmd);
	unsigned int index, ksize;

	if (nr < DRM_COMMAND_BASE || nr >= DRM_COMMAND_END)
		return 0;

	index = nr - DRM_COMMAND_BASE;
	if (index >= ARRAY_SIZE(vnpu_drm_ioctls))
		return -ENOTTY;

	if (usize < vnpu_ioctl_min_size[index])
		return -EINVAL;

	ksize = _IOC_SIZE(vnpu_drm_ioctls[index].cmd);
	if (usize > ksize && (_IOC_DIR(cmd) & _IOC_WRITE)) {
		int zero = check_zeroed_user((void __user *)arg + ksize, usize - ksize);

		if (zero < 0)
			return zero;
		if (!zero)
			return -E2BIG;
	}
	return 0;
}

/*
 * Syncobj handles held on the device by the files of @proc, or by every
 * open file if @proc is NULL. A walk, not a counter: the DRM core creates
 * and destroys syncobjs (and drops them all when a file closes) without
 * telling the driver.
 */
u64 vnpu_syncobj_count(struct vnpu_device *vdev, struct vnpu_process *proc)
{
	struct drm_file *file;
	struct drm_syncobj *syncobj;
	u64 count = 0;
	int id;

	mutex_lock(&vdev->drm.filelist_mutex);
	list_for_each_entry(file, &vdev->drm.filelist, lhead) {
		struct vnpu_file *vfile = file->driver_priv;

		if (proc && (!vfile || vfile->proc != proc))
			continue;
		spin_lock(&file->syncobj_table_lock);
		idr_for_each_entry(&file->syncobj_idr, syncobj, id)
			count++;
		spin_unlock(&file->syncobj_table_lock);
	}
	mutex_unlock(&vdev->drm.filelist_mutex);
	return count;
}

/*
 * SYNCOBJ_CREATE and SYNCOBJ_FD_TO_HANDLE add a handle: admitted only
 * while the calling process holds fewer than max_syncobjs_per_process on
 * the device (-EMFILE otherwise). Other ioctls pass through.
 */
static long vnpu_syncobj_limited_ioctl(struct file *filp, unsigned int cmd, unsigned long arg,
				       long (*ioctl)(struct file *, unsigned int, unsigned long))
{
	struct drm_file *file = filp->private_data;
	struct vnpu_device *vdev = to_vnpu_device(file->minor->dev);
	struct vnpu_file *vfile = file->driver_priv;
	long ret;

	if (cmd != DRM_IOCTL_SYNCOBJ_CREATE && cmd != DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE)
		return ioctl(filp, cmd, arg);

	mutex_lock(&vdev->syncobj_lock);
	ret = vnpu_fault_inject(vdev, VNPU_FAULT_SYNCOBJ_LIMIT);
	if (!ret && vnpu_syncobj_count(vdev, vfile->proc) >= vdev->max_syncobjs)
		ret = -EMFILE;
	if (!ret)
		ret = ioctl(filp, cmd, arg);
	mutex_unlock(&vdev->syncobj_lock);
	return ret;
}

static long vnpu_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	long ret = vnpu_ioctl_check(cmd, arg);

	return ret ? ret : vnpu_syncobj_limited_ioctl(filp, cmd, arg, drm_ioctl);
}

#ifdef CONFIG_COMPAT
static long vnpu_compat_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	long ret = vnpu_ioctl_check(cmd, arg);

	return ret ? ret : vnpu_syncobj_limited_ioctl(filp, cmd, arg, drm_compat_ioctl);
}
#else
#define vnpu_compat_ioctl NULL
#endif

/*
 * Written out instead of DEFINE_DRM_ACCEL_FOPS(): 6.12's macro has no
 * .show_fdinfo, and vnpu needs its own ioctl entry for the size rules.
 */
static const struct file_operations vnpu_fops = {
	.owner = THIS_MODULE,
	.open = accel_open,
	.release = drm_release,
	.unlocked_ioctl = vnpu_ioctl,
	.compat_ioctl = vnpu_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = drm_gem_mmap,
	.show_fdinfo = drm_show_fdinfo,
#ifdef FOP_UNSIGNED_OFFSET
	.fop_flags = FOP_UNSIGNED_OFFSET,
#endif
};

static int vnpu_open(struct drm_device *drm, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct vnpu_file *vfile;
	int ret;

	ret = vnpu_fault_inject(vdev, VNPU_FAULT_OPEN_FILE);
	if (ret)
		return ret;
	vfile = kzalloc(sizeof(*vfile), GFP_KERNEL);
	if (!vfile)
		return -ENOMEM;

	mutex_lock(&vdev->mem_lock);
	vnpu_process_prune_locked(vdev);
	vfile->proc = vnpu_process_get_locked(vdev, task_tgid(current));
	mutex_unlock(&vdev->mem_lock);
	if (!vfile->proc) {
		kfree(vfile);
		return -ENOMEM;
	}
	ret = vnpu_fault_inject(vdev, VNPU_FAULT_OPEN_CLIENT);
	if (!ret) {
		vfile->client = vnpu_client_alloc();
		ret = vfile->client ? 0 : -ENOMEM;
	}
	if (ret) {
		mutex_lock(&vdev->mem_lock);
		vnpu_process_put_locked(vdev, vfile->proc);
		mutex_unlock(&vdev->mem_lock);
		kfree(vfile);
		return ret;
	}
	xa_init_flags(&vfile->queues, XA_FLAGS_ALLOC1);
	file->driver_priv = vfile;
	return 0;
}

static void vnpu_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct vnpu_file *vfile = file->driver_priv;

	vnpu_queues_release(vdev, vfile);

	mutex_lock(&vdev->mem_lock);
	vnpu_process_put_locked(vdev, vfile->proc);
	mutex_unlock(&vdev->mem_lock);
	vnpu_client_put(vfile->client);
	kfree(vfile);
}

static const char *const vnpu_class_names[VNPU_ENGINE_CLASSES] = {
	[DRM_VNPU_ENGINE_COMPUTE] = "compute",
	[DRM_VNPU_ENGINE_COPY] = "copy",
};

/*
 * fdinfo (Documentation/gpu/drm-usage-stats.rst): busy time of the file's
 * jobs per engine class, summed over the class's engines (so up to
 * capacity x wall time) and including jobs executing now, and the memory
 * the file holds. In the driver's own namespace, the queues, syncobjs and
 * buffer handles the file holds, for leak monitors (vnpu-smi --watch).
 */
static void vnpu_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(file->minor->dev);
	struct vnpu_file *vfile = file->driver_priv;
	u32 class, count, queues = 0, syncobjs = 0;
	unsigned long index;
	void *entry;
	int handle;

	for (class = 0; class < VNPU_ENGINE_CLASSES; class++) {
		count = class == DRM_VNPU_ENGINE_COMPUTE ? vdev->num_compute_engines :
							   vdev->num_copy_engines;
		drm_printf(p, "drm-engine-%s:\t%llu ns\n", vnpu_class_names[class],
			   vnpu_client_busy_ns(vdev, vfile->client, class));
		if (count > 1)
			drm_printf(p, "drm-engine-capacity-%s:\t%u\n", vnpu_class_names[class],
				   count);
	}
	vnpu_gem_show_fdinfo(p, file);

	xa_for_each(&vfile->queues, index, entry)
		queues++;
	/* syncobj_table_lock is a spinlock: count only, touch no object. */
	spin_lock(&file->syncobj_table_lock);
	idr_for_each_entry(&file->syncobj_idr, entry, handle)
		syncobjs++;
	spin_unlock(&file->syncobj_table_lock);
	drm_printf(p, "vnpu-queues:\t%u\n", queues);
	drm_printf(p, "vnpu-syncobjs:\t%u\n", syncobjs);
}

static const struct drm_driver vnpu_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL |
			   DRIVER_SYNCOBJ | DRIVER_SYNCOBJ_TIMELINE,
	.open = vnpu_open,
	.postclose = vnpu_postclose,
	.gem_create_object = vnpu_gem_create_object,
	.gem_prime_import = vnpu_gem_prime_import,
	.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table,
	.show_fdinfo = vnpu_show_fdinfo,
	.ioctls = vnpu_drm_ioctls,
	.num_ioctls = ARRAY_SIZE(vnpu_drm_ioctls),
	.fops = &vnpu_fops,
	.name = DRIVER_NAME,
	.desc = DRIVER_DESC,
	VNPU_DRM_DRIVER_DATE
	.major = DRM_VNPU_UAPI_MAJOR,
	.minor = DRM_VNPU_UAPI_MINOR,
};

static int vnpu_platform_probe(struct platform_device *pdev)
{
	struct vnpu_device *vdev;
	int ret;

	vdev = devm_drm_dev_alloc(&pdev->dev, &vnpu_drm_driver,
				  struct vnpu_device, drm);
	if (IS_ERR(vdev))
		return PTR_ERR(vdev);

	vdev->index = pdev->id;
	vdev->vram_size = (u64)vnpu_vram_size_mb << 20;
	vdev->num_compute_engines = vnpu_compute_engines;
	vdev->num_copy_engines = vnpu_copy_engines;
	vdev->max_queues = vnpu_max_queues_per_process;
	vdev->max_bos = vnpu_max_bos_per_process;
	vdev->max_syncobjs = vnpu_max_syncobjs_per_process;
	vdev->job_timeout_ms = vnpu_job_timeout_ms;
	atomic_set(&vdev->health, DRM_VNPU_HEALTH_OK);
	spin_lock_init(&vdev->health_lock);
	atomic64_set(&vdev->reset_gen, 0);
	platform_set_drvdata(pdev, vdev);
	ret = drmm_mutex_init(&vdev->drm, &vdev->syncobj_lock);
	if (ret)
		return ret;

	/* Importers map peer buffers for DMA; the emulated bus is 64-bit. */
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	ret = vnpu_mem_init(vdev, (u64)vnpu_host_size_mb << 20);
	if (ret)
		return ret;
	ret = vnpu_engines_init(vdev);
	if (ret)
		return ret;

	ret = drm_dev_register(&vdev->drm, 0);
	if (ret)
		return ret;
	vnpu_debugfs_init(vdev);

	drm_info(&vdev->drm,
		 "vnpu%u: %llu MiB VRAM, %u compute + %u copy engines, numa node %d, board %u of topology node %u\n",
		 vdev->index, vdev->vram_size >> 20, vdev->num_compute_engines,
		 vdev->num_copy_engines, vnpu_device_numa_node(vdev),
		 vnpu_topo_board(vdev->index), vnpu_topo_node(vdev->index));
	return 0;
}

static void vnpu_platform_remove(struct platform_device *pdev)
{
	struct vnpu_device *vdev = platform_get_drvdata(pdev);

	/* No ioctl runs past this point, so no job can be submitted. */
	drm_dev_unplug(&vdev->drm);
	vnpu_engines_unplug(vdev);
}

static struct platform_driver vnpu_platform_driver = {
	.probe = vnpu_platform_probe,
	.remove = vnpu_platform_remove,
	.driver = {
		.name = DRIVER_NAME,
		.dev_groups = vnpu_sysfs_groups,
	},
};

static bool vnpu_param_in_range(const char *name, unsigned int value,
				unsigned int min, unsigned int max)
{
	if (value >= min && value <= max)
		return true;
	pr_err("vnpu: %s=%u is out of range (%u-%u)\n", name, value, min, max);
	return false;
}

static int vnpu_check_params(void)
{
	unsigned int i;

	if (!vnpu_param_in_range("num_devices", vnpu_num_devices, 1, VNPU_MAX_DEVICES) ||
	    !vnpu_param_in_range("vram_size_mb", vnpu_vram_size_mb,
				 VNPU_MIN_VRAM_MB, VNPU_MAX_VRAM_MB) ||
	    !vnpu_param_in_range("host_size_mb", vnpu_host_size_mb,
				 VNPU_MIN_HOST_MB, VNPU_MAX_HOST_MB) ||
	    !vnpu_param_in_range("compute_engines", vnpu_compute_engines,
				 1, VNPU_MAX_ENGINES) ||
	    !vnpu_param_in_range("copy_engines", vnpu_copy_engines, 1, VNPU_MAX_ENGINES) ||
	    !vnpu_param_in_range("job_timeout_ms", vnpu_job_timeout_ms, 1,
				 VNPU_MAX_TIMEOUT_MS) ||
	    !vnpu_param_in_range("max_queues_per_process", vnpu_max_queues_per_process, 1,
				 VNPU_MAX_QUEUES) ||
	    !vnpu_param_in_range("max_bos_per_process", vnpu_max_bos_per_process, 1,
				 VNPU_MAX_BOS) ||
	    !vnpu_param_in_range("max_syncobjs_per_process", vnpu_max_syncobjs_per_process, 1,
				 VNPU_MAX_SYNCOBJS))
		return -EINVAL;

	if (vnpu_numa_node_count > vnpu_num_devices) {
		pr_err("vnpu: numa_node lists %u nodes for %u devices\n",
		       vnpu_numa_node_count, vnpu_num_devices);
		return -EINVAL;
	}
	for (i = 0; i < vnpu_numa_node_count; i++) {
		int node = vnpu_numa_node[i];

		if (node == NUMA_NO_NODE)
			continue;
		if (node < 0 || node >= MAX_NUMNODES || !node_online(node)) {
			pr_err("vnpu: numa_node=%d for device %u is not an online node\n",
			       node, i);
			return -EINVAL;
		}
	}
	return vnpu_topo_check_params(vnpu_num_devices);
}

static void vnpu_unregister_devices(void)
{
	int i;

	for (i = VNPU_MAX_DEVICES - 1; i >= 0; i--) {
		platform_device_unregister(vnpu_pdevs[i]);
		vnpu_pdevs[i] = NULL;
	}
}

static int vnpu_register_device(unsigned int index)
{
	struct platform_device *pdev;
	int ret;

	pdev = platform_device_alloc(DRIVER_NAME, index);
	if (!pdev)
		return -ENOMEM;

	/* The node must be known before probe so allocations can follow it. */
	set_dev_node(&pdev->dev, vnpu_numa_node[index]);
	ret = platform_device_add(pdev);
	if (ret) {
		platform_device_put(pdev);
		return ret;
	}
	vnpu_pdevs[index] = pdev;

	/* Probe runs synchronously; no driver data means it failed. */
	if (!platform_get_drvdata(pdev)) {
		pr_err("vnpu: device %u failed to probe\n", index);
		return -ENODEV;
	}
	return 0;
}

static int __init vnpu_init(void)
{
	unsigned int i;
	int ret;

	ret = vnpu_check_params();
	if (ret)
		return ret;

	ret = vnpu_gemm_init();
	if (ret)
		return ret;
	ret = vnpu_exec_init();
	if (ret)
		return ret;
	ret = platform_driver_register(&vnpu_platform_driver);
	if (ret)
		goto err_exec_exit;

	for (i = 0; i < vnpu_num_devices; i++) {
		ret = vnpu_register_device(i);
		if (ret)
			goto err_unregister_devices;
	}
	return 0;

err_unregister_devices:
	vnpu_unregister_devices();
	platform_driver_unregister(&vnpu_platform_driver);
err_exec_exit:
	vnpu_exec_exit();
	return ret;
}

static void __exit vnpu_exit(void)
{
	vnpu_unregister_devices();
	platform_driver_unregister(&vnpu_platform_driver);
	vnpu_exec_exit();
	vnpu_gemm_fini();
}

module_init(vnpu_init);
module_exit(vnpu_exit);

MODULE_AUTHOR("The vnpu authors");
MODULE_DESCRIPTION("Virtual NPU: an emulated DRM accel device");
MODULE_LICENSE("GPL");
