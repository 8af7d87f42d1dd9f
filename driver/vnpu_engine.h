/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_ENGINE_H__
#define __VNPU_ENGINE_H__

#include <linux/atomic.h>
#include <linux/dma-fence.h>
#include <linux/iosys-map.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/gpu_scheduler.h>

#include "vnpu_drv.h"
#include "vnpu_ops.h"

struct drm_gem_object;
struct vnpu_kernel_op;

/**
 * struct vnpu_engine - one emulated engine
 * @vdev: the device
 * @sched: the scheduler feeding the engine; every queue of the engine's
 *	class and of any priority has an entity on it
 * @exec_wq: ordered workqueue that executes the engine's jobs one by one
 * @lock: protects @running, @dead, @exec_start, @exec_job and is the lock
 *	of the hardware fences
 * @running: jobs handed to the engine whose hardware fence is unsignalled
 * @dead: the device is gone: jobs are no longer executed
 * @abort_wq: woken when a running job is aborted, to cut a DELAY short
 * @fence_context: dma-fence context of the hardware fences
 * @seqno: last hardware fence seqno; run_job is serialised per scheduler
 * @busy_ns: total time the engine spent executing finished jobs
 * @exec_start: ktime_get_ns() when the executing job started, 0 when idle
 * @exec_job: the executing job, or NULL; alive while set (the exec work
 *	holds a reference and clears it before dropping it)
 * @queued: jobs pushed to the engine's scheduler and not yet freed
 * @pause_lock: held while @sched's submission is paused to kill a queue's
 *	entity (vnpu_queue.c), so that one pause never ends another's
 * @name: "compute0", "copy1", ...
 */
struct vnpu_engine {
	struct vnpu_device *vdev;
	struct drm_gpu_scheduler sched;
	struct workqueue_struct *exec_wq;
	spinlock_t lock; /* Protects @running, @dead, @exec_*; fence lock */
	struct list_head running;
	bool dead;
	wait_queue_head_t abort_wq;
	u64 fence_context;
	u64 seqno;
	atomic64_t busy_ns;
	u64 exec_start;
	struct vnpu_job *exec_job;
	atomic_t queued;
	struct mutex pause_lock; /* Serialises pausing @sched's submission */
	char name[16];
};

/**
 * struct vnpu_client - execution statistics of one open file
 * @refs: the file and each queue state of the file
 * @busy_ns: time engines of each class spent on the file's jobs
 */
struct vnpu_client {
	struct kref refs;
	atomic64_t busy_ns[VNPU_ENGINE_CLASSES];
};

/**
 * struct vnpu_queue_state - what outlives a queue: counters and errors
 * @refs: the queue and each of its jobs
 * @client: statistics of the file owning the queue (a reference is held)
 * @engine_class: DRM_VNPU_ENGINE_* of the queue
 * @timeout_ms: job timeout, read when a job starts executing
 * @guilty: set once a job of the queue timed out; the entity's guilty flag
 * @lock: protects the counters and the last error below
 * @submitted: jobs pushed, also the sequence number of the last one
 * @completed: jobs released without error
 * @failed: jobs released with an error
 * @last_error_seqno: sequence number of the last failed job
 * @last_error_cmd: its failing command index, or DRM_VNPU_NO_CMD
 * @last_error: its errno
 */
struct vnpu_queue_state {
	struct kref refs;
	struct vnpu_client *client;
	u32 engine_class;
	u32 timeout_ms;
	atomic_t guilty;
	spinlock_t lock; /* Protects the counters and last error */
	u64 submitted;
	u64 completed;
	u64 failed;
	u64 last_error_seqno;
	u32 last_error_cmd;
	int last_error;
};

/**
 * struct vnpu_exec_cmd - a command resolved at submit
 * @opcode: DRM_VNPU_CMD_*
 * @pattern: FILL pattern
 * @dst: kernel address of the destination
 * @src: kernel address of the source
 * @size: bytes, or ns for DELAY
 * @kop: KERNEL: the resolved operator (owned by the job)
 * @link_mbps: COPY through another device's VRAM: bandwidth of the link
 *	in MB/s, the copy lasts at least @link_ns + @size / @link_mbps; 0 for
 *	a local copy
 * @link_ns: latency of that link in ns
 */
struct vnpu_exec_cmd {
	u32 opcode;
	u32 pattern;
	void *dst;
	const void *src;
	u64 size;
	struct vnpu_kernel_op *kop;
	u32 link_mbps;
	u32 link_ns;
};

/**
 * struct vnpu_job_bo - a buffer a job uses, referenced and mapped
 * @obj: the GEM object (a reference is held)
 * @vaddr: its kernel address (vnpu_bo_vaddr())
 */
struct vnpu_job_bo {
	struct drm_gem_object *obj;
	void *vaddr;
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
 * @aborted: set when @hw_fence was signalled early (timeout, reset, unplug)
 * @qs: state of the job's queue (a reference is held)
 * @seqno: number of the job in its queue, from 1
 * @reset_gen: &vnpu_device.reset_gen at submit; a reset fails older jobs
 * @cur_cmd: index of the command executing
 * @error_cmd: index of the command that failed, or DRM_VNPU_NO_CMD
 * @queued_on: engine whose &vnpu_engine.queued counts the job, or NULL
 * @timeout_work: stops the job when it executes longer than its timeout
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
	struct vnpu_queue_state *qs;
	u64 seqno;
	u64 reset_gen;
	u32 cur_cmd;
	u32 error_cmd;
	struct vnpu_engine *queued_on;
	struct delayed_work timeout_work;
	struct vnpu_exec_cmd *cmds;
	u32 cmd_count;
	struct vnpu_job_bo *bos;
	u32 bo_count;
};

static inline struct vnpu_job *to_vnpu_job(struct drm_sched_job *job)
{
	return container_of(job, struct vnpu_job, base);
}

int vnpu_engines_init(struct vnpu_device *vdev);
void vnpu_engines_unplug(struct vnpu_device *vdev);

/* Device ranges one command may resolve: KERNEL's args and its arrays. */
#define VNPU_CMD_MAX_BOS (1 + VNPU_KERNEL_MAX_ARRAYS)

struct vnpu_job *vnpu_job_alloc(struct vnpu_device *vdev, struct vnpu_queue_state *qs,
				u32 cmd_count);
void vnpu_job_put(struct vnpu_job *job);
void vnpu_job_pushed(struct vnpu_job *job);

struct vnpu_client *vnpu_client_alloc(void);
void vnpu_client_put(struct vnpu_client *client);
struct vnpu_queue_state *vnpu_queue_state_alloc(struct vnpu_client *client, u32 engine_class,
						u32 timeout_ms);
void vnpu_queue_state_put(struct vnpu_queue_state *qs);

void vnpu_device_reset(struct vnpu_device *vdev);
u64 vnpu_engine_busy_ns(struct vnpu_engine *engine);
u64 vnpu_client_busy_ns(struct vnpu_device *vdev, struct vnpu_client *client, u32 class);

int vnpu_exec_init(void);
void vnpu_exec_exit(void);

#endif /* __VNPU_ENGINE_H__ */
