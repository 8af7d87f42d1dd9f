/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_DRV_H__
#define __VNPU_DRV_H__

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <drm/drm_device.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>

#include <drm/vnpu_accel.h>

#include "vnpu_fault.h"

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
#define VNPU_MIN_HOST_MB	16
#define VNPU_MAX_HOST_MB	(256 * 1024)
#define VNPU_MAX_QUEUES		4096
#define VNPU_MAX_BOS		(1024 * 1024)
#define VNPU_MAX_SYNCOBJS	(1024 * 1024)
#define VNPU_MAX_TIMEOUT_MS	DRM_VNPU_MAX_TIMEOUT_MS
#define VNPU_ENGINE_CLASSES	2

struct vnpu_engine;

/**
 * struct vnpu_region - one device-address range buffers are placed in
 * @mm: the allocator of the range (offsets from @base)
 * @base: first device address of the range
 * @size: bytes in the range
 * @used: bytes allocated from @mm
 *
 * Protected by &vnpu_device.mem_lock.
 */
struct vnpu_region {
	struct drm_mm mm;
	u64 base;
	u64 size;
	u64 used;
};

/**
 * struct vnpu_device - one virtual NPU
 * @drm: the DRM accel device; the structure is freed with it
 * @index: position of the device in the module (0..num_devices-1)
 * @vram_size: emulated device memory in bytes
 * @num_compute_engines: compute engines of the device
 * @num_copy_engines: copy engines of the device
 * @health: an &enum drm_vnpu_health; atomic because sysfs and ioctls read it
 *	without a lock while recovery changes it
 * @mem_lock: protects @vram, @host, @vram_peak, @bo_count, @default_quota,
 *	@procs and every &vnpu_process in it, and the fault-injection knobs
 *	@fail_alloc_nth and @fail_alloc_above. One lock for all of them because
 *	an allocation checks and charges them together.
 * @vram: the emulated VRAM
 * @host: the host-pinned (and imported) address range
 * @vram_peak: highest @vram.used since load
 * @bo_count: live buffers created on this device (not imports)
 * @default_quota: hard and soft VRAM limit a new process starts with
 * @procs: &vnpu_process entries, indexed by their struct pid pointer
 * @fail_alloc_nth: debugfs: the Nth next buffer creation fails (0 = off)
 * @fail_alloc_above: debugfs: creations larger than this fail (0 = off)
 * @max_queues: queues one process may have on the device
 * @max_bos: buffers one process may have created on the device and hold
 * @max_syncobjs: syncobj handles one process may hold on the device,
 *	across its open files
 * @syncobj_lock: serialises the syncobj limit check with the creation it
 *	admits, so concurrent creations cannot pass the limit together; taken
 *	outside &drm_device.filelist_mutex
 * @fail_nth: debugfs: the Nth next fallible step fails (vnpu_fault.c)
 * @fail_hits: debugfs: failures injected by @fail_nth, per site
 * @engines: the compute engines, then the copy engines
 * @num_engines: entries in @engines that are initialised
 * @scheds: the schedulers of each engine class (DRM_VNPU_ENGINE_*), the
 *	list a queue's entity is spread over
 * @job_timeout_ms: default job timeout of new queues (module parameter)
 * @allow_hang: debugfs: submits may contain DRM_VNPU_CMD_HANG
 * @reset_gen: incremented by each reset; jobs submitted before a reset
 *	fail with -EIO instead of running
 * @health_lock: protects @hang_times, @reset_count and the transitions of
 *	@health; taken inside &vnpu_engine.lock, takes no other lock
 * @hang_times: jiffies of the last timeouts, newest first
 * @reset_count: resets done through sysfs
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

	struct mutex mem_lock; /* Protects the memory state listed above */
	struct vnpu_region vram;
	struct vnpu_region host;
	u64 vram_peak;
	u64 bo_count;
	u64 default_quota;
	struct xarray procs;
	u32 fail_alloc_nth;
	u64 fail_alloc_above;

	u32 max_queues;
	u32 max_bos;
	u32 max_syncobjs;
	struct mutex syncobj_lock; /* Protects the syncobj limit check + create */
	atomic_t fail_nth;
	atomic_t fail_hits[VNPU_FAULT_SITES];
	struct vnpu_engine *engines;
	u32 num_engines;
	struct drm_gpu_scheduler *scheds[VNPU_ENGINE_CLASSES][VNPU_MAX_ENGINES];
	u32 job_timeout_ms;
	bool allow_hang;
	atomic64_t reset_gen;

	spinlock_t health_lock; /* Protects @hang_times, @reset_count, @health changes */
	unsigned long hang_times[DRM_VNPU_HEALTH_RESET_HANGS];
	u64 reset_count;
};

/**
 * struct vnpu_process - memory accounting of one process on one device
 * @pid: the thread group (a reference is held)
 * @refs: open files of the process, buffers charged to it, and one more
 *	while @pinned; the entry is freed when it drops to zero
 * @pinned: limits were set explicitly; kept until the process is gone
 * @soft_limit: enforced VRAM limit in bytes, <= @hard_limit
 * @hard_limit: ceiling for @soft_limit; only CAP_SYS_ADMIN raises it
 * @used: VRAM bytes of the buffers charged to the process
 * @peak: highest @used
 * @bo_count: VRAM buffers charged to the process
 * @buffers: buffers of both kinds charged to the process (max_bos limit)
 * @host_used: host-pinned bytes of the buffers charged to the process
 * @queue_count: queues the process has on the device, across its files
 *
 * Protected by &vnpu_device.mem_lock.
 */
struct vnpu_process {
	struct pid *pid;
	unsigned int refs;
	bool pinned;
	u64 soft_limit;
	u64 hard_limit;
	u64 used;
	u64 peak;
	u64 bo_count;
	u64 buffers;
	u64 host_used;
	u32 queue_count;
};

/**
 * struct vnpu_file - per open file state
 * @proc: accounting entry of the process that opened the file, held so
 *	its limits live as long as it has the device open
 * @queues: the file's &vnpu_queue, by id; the xarray's own lock protects it
 * @client: engine busy time of the file's jobs, for fdinfo
 */
struct vnpu_file {
	struct vnpu_process *proc;
	struct xarray queues;
	struct vnpu_client *client;
};

static inline struct vnpu_device *to_vnpu_device(struct drm_device *drm)
{
	return container_of(drm, struct vnpu_device, drm);
}

/* num_devices of the module, fixed at load. */
unsigned int vnpu_num_devices_loaded(void);
int vnpu_device_numa_node(struct vnpu_device *vdev);
u64 vnpu_region_largest_free(struct vnpu_device *vdev, struct vnpu_region *region);
const char *vnpu_health_name(enum drm_vnpu_health health);
void vnpu_health_hang(struct vnpu_device *vdev);
u64 vnpu_syncobj_count(struct vnpu_device *vdev, struct vnpu_process *proc);

extern const struct attribute_group *vnpu_sysfs_groups[];

#endif /* __VNPU_DRV_H__ */
