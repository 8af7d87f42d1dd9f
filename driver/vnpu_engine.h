/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_ENGINE_H__
#define __VNPU_ENGINE_H__

#include <linux/dma-fence.h>
#include <linux/iosys-map.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/gpu_scheduler.h>

#include "vnpu_drv.h"

struct drm_gem_object;

/**
 * struct vnpu_engine - one emulated engine
 * @vdev: the device
 * @sched: the scheduler feeding the engine; every queue of the engine's
 *	class and of any priority has an entity on it
 * @exec_wq: ordered workqueue that executes the engine's jobs one by one
 * @lock: protects @running, @dead and is the lock of the hardware fences
 * @running: jobs handed to the engine whose hardware fence is unsignalled
 * @dead: the device is gone: jobs are no longer executed
 * @abort_wq: woken when a running job is aborted, to cut a DELAY short
 * @fence_context: dma-fence context of the hardware fences
 * @seqno: last hardware fence seqno; run_job is serialised per scheduler
 * @name: "compute0", "copy1", ...
 */
struct vnpu_engine {
	struct vnpu_device *vdev;
	struct drm_gpu_scheduler sched;
	struct workqueue_struct *exec_wq;
	spinlock_t lock; /* Protects @running, @dead; hardware fence lock */
	struct list_head running;
	bool dead;
	wait_queue_head_t abort_wq;
	u64 fence_context;
	u64 seqno;
	char name[16];
};

/**
 * struct vnpu_exec_cmd - a command resolved at submit
 * @opcode: DRM_VNPU_CMD_*
 * @pattern: FILL pattern
 * @dst: kernel address of the destination
 * @src: kernel address of the source
 * @size: bytes, or ns for DELAY
 */
struct vnpu_exec_cmd {
	u32 opcode;
	u32 pattern;
	void *dst;
	const void *src;
	u64 size;
};

/**
 * struct vnpu_job_bo - a buffer a job uses, referenced and vmapped
 * @obj: the GEM object (a reference is held)
 * @map: its kernel mapping
 */
struct vnpu_job_bo {
	struct drm_gem_object *obj;
	struct iosys_map map;
};

/**
 * struct vnpu_job - one submitted job
 * @base: the scheduler job
 * @refs: one for the scheduler (dropped by free_job) and one while the
 *	job is queued on or executing in &vnpu_engine.exec_wq
 * @vdev: the device; a drm_device reference is held
 * @engine: the engine running the job, set by run_job
 * @hw_fence: the hardware fence, signalled when the commands are done
 * @link: entry in &vnpu_engine.running while @hw_fence is unsignalled
 * @exec_work: executes the commands on &vnpu_engine.exec_wq
 * @release_work: drops the references held by the job
 * @aborted: set when @hw_fence was signalled early (timeout, unplug)
 * @cmds: the resolved commands
 * @cmd_count: entries in @cmds
 * @bos: the buffers the commands use
 * @bo_count: entries in @bos
 */
struct vnpu_job {
	struct drm_sched_job base;
	struct kref refs;
	struct vnpu_device *vdev;
	struct vnpu_engine *engine;
	struct dma_fence *hw_fence;
	struct list_head link;
	struct work_struct exec_work;
	struct work_struct release_work;
	bool aborted;
	struct vnpu_exec_cmd *cmds;
	u32 cmd_count;
	struct vnpu_job_bo *bos;
	u32 bo_count;
};

static inline struct vnpu_job *to_vnpu_job(struct drm_sched_job *job)
{
	return container_of(job, struct vnpu_job, base);
}

int vnpu_engines_init(struct vnpu_device *vdev, unsigned int timeout_ms);
void vnpu_engines_unplug(struct vnpu_device *vdev);

struct vnpu_job *vnpu_job_alloc(struct vnpu_device *vdev, u32 cmd_count);
void vnpu_job_put(struct vnpu_job *job);

int vnpu_exec_init(void);
void vnpu_exec_exit(void);

#endif /* __VNPU_ENGINE_H__ */
