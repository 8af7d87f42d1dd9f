// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/**
 * DOC: vnpu engines
 *
 * Each device has compute_engines + copy_engines engines. An engine is a
 * drm_gpu_scheduler with one run queue per drm_sched priority, plus an
 * ordered workqueue that plays the hardware: run_job hands the job to the
 * workqueue and returns the job's hardware fence, which the workqueue
 * signals once the job's commands are done. Every queue of an engine class
 * has an entity spread over that class's schedulers, so entities of
 * different priorities share a scheduler and priorities take effect.
 *
 * A job that executes longer than its queue's timeout (job_timeout_ms
 * unless the queue sets its own) is aborted by its timeout_work: its
 * hardware fence is signalled with -ETIMEDOUT, its queue turns guilty, the
 * device health counts a hang, and the engine moves on. The drm_sched
 * timeout is not used (it is per scheduler, not per queue). A reset
 * (sysfs) signals every running job with -EIO and bumps the device's
 * reset generation, so jobs submitted before it fail with -EIO when they
 * reach run_job instead of running. On unplug every
 * engine is marked dead and every hardware fence not yet signalled is
 * signalled with -ENODEV; jobs reaching a dead engine fail with -ENODEV
 * without running. The schedulers are finished when the DRM device is
 * released, when no file, queue or job is left: every job holds a
 * reference on the DRM device, dropped from a module workqueue after
 * free_job, so drm_sched_fini() never finds a pending job.
 */

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "vnpu_compat.h"
#include "vnpu_engine.h"
#include "vnpu_ops.h"

/* Jobs an engine holds at once: one executing, one ready behind it. */
#define VNPU_ENGINE_CREDITS 2
/* COPY and FILL work in chunks of this size, rescheduling in between. */
#define VNPU_EXEC_CHUNK SZ_1M

/* Releases jobs outside the schedulers' workqueues; see the DOC above. */
static struct workqueue_struct *vnpu_release_wq;

static const char *vnpu_fence_driver_name(struct dma_fence *fence)
{
	return "vnpu";
}

static const char *vnpu_fence_timeline_name(struct dma_fence *fence)
{
	return "vnpu-engine";
}

/*
 * A hardware fence can outlive its job, its device and every open file:
 * the scheduler fence holds it as its parent for as long as anyone (a
 * syncobj or sync_file of any driver) holds the scheduler fence, and its
 * ops live in this module. Each initialised hardware fence therefore holds
 * a module reference, so the module cannot be unloaded under it; rmmod
 * fails with -EBUSY until the last such fence is released.
 */
static void vnpu_fence_release(struct dma_fence *fence)
{
	dma_fence_free(fence);
	module_put(THIS_MODULE);
}

static const struct dma_fence_ops vnpu_fence_ops = {
	.get_driver_name = vnpu_fence_driver_name,
	.get_timeline_name = vnpu_fence_timeline_name,
	.release = vnpu_fence_release,
};

/* Signals @job's hardware fence with @error, once; under the engine lock. */
static void vnpu_job_signal_locked(struct vnpu_job *job, int error)
{
	lockdep_assert_held(&job->engine->lock);

	if (list_empty(&job->link))
		return;
	list_del_init(&job->link);
	if (error) {
		WRITE_ONCE(job->aborted, true);
		dma_fence_set_error(job->hw_fence, error);
	}
	dma_fence_signal_locked(job->hw_fence);
}

static void vnpu_job_signal(struct vnpu_job *job, int error)
{
	struct vnpu_engine *engine = job->engine;

	spin_lock(&engine->lock);
	vnpu_job_signal_locked(job, error);
	spin_unlock(&engine->lock);
	if (error)
		wake_up_all(&engine->abort_wq);
}

/*
 * A copy over a link to another device lasts at least the link's latency
 * plus its bytes at the link's bandwidth: the engine sleeps for what the
 * copy left (as DELAY does, a reset or timeout cuts it short).
 */
static void vnpu_exec_copy(struct vnpu_job *job, const struct vnpu_exec_cmd *cmd)
{
	u64 start = ktime_get_ns(), done, n, end, now;

	for (done = 0; done < cmd->size && !READ_ONCE(job->aborted); done += n) {
		n = min_t(u64, cmd->size - done, VNPU_EXEC_CHUNK);
		vnpu_copy_bytes(cmd->dst + done, cmd->src + done, n);
		cond_resched();
	}
	if (!cmd->link_mbps)
		return;
	/* MB/s is bytes per microsecond: bytes * 1000 / MB/s is ns. */
	end = start + cmd->link_ns + div_u64(cmd->size * 1000, cmd->link_mbps);
	now = ktime_get_ns();
	if (now < end)
		wait_event_hrtimeout(job->engine->abort_wq, READ_ONCE(job->aborted),
				     ns_to_ktime(end - now));
}

static void vnpu_exec_fill(struct vnpu_job *job, const struct vnpu_exec_cmd *cmd)
{
	u64 done, n;

	for (done = 0; done < cmd->size && !READ_ONCE(job->aborted); done += n) {
		n = min_t(u64, cmd->size - done, VNPU_EXEC_CHUNK);
		memset32(cmd->dst + done, cmd->pattern, n / sizeof(u32));
		cond_resched();
	}
}

/* Executes one command; returns the error that fails the job, or 0. */
static int vnpu_exec_cmd(struct vnpu_job *job, const struct vnpu_exec_cmd *cmd)
{
	switch (cmd->opcode) {
	case DRM_VNPU_CMD_COPY:
		vnpu_exec_copy(job, cmd);
		break;
	case DRM_VNPU_CMD_FILL:
		vnpu_exec_fill(job, cmd);
		break;
	case DRM_VNPU_CMD_TIMESTAMP:
		WRITE_ONCE(*(u64 *)cmd->dst, ktime_get_ns());
		break;
	case DRM_VNPU_CMD_DELAY:
		wait_event_hrtimeout(job->engine->abort_wq, READ_ONCE(job->aborted),
				     ns_to_ktime(cmd->size));
		break;
	case DRM_VNPU_CMD_KERNEL:
		return vnpu_kernel_run(cmd->kop, job->engine, &job->aborted);
	case DRM_VNPU_CMD_HANG:
		/* Idle, not uninterruptible: a long hang is not a hung task. */
		wait_event_idle(job->engine->abort_wq, READ_ONCE(job->aborted));
		break;
	case DRM_VNPU_CMD_FAULT:
		return -(int)cmd->pattern;
	}
	return 0;
}

/* Adds @ns of execution to the engine's and the client's busy time. */
static void vnpu_job_account_busy(struct vnpu_job *job, u64 ns)
{
	atomic64_add(ns, &job->engine->busy_ns);
	atomic64_add(ns, &job->qs->client->busy_ns[job->qs->engine_class]);
}

static void vnpu_job_exec_work(struct work_struct *work)
{
	struct vnpu_job *job = container_of(work, struct vnpu_job, exec_work);
	struct vnpu_engine *engine = job->engine;
	u64 start = ktime_get_ns();
	int error = 0;
	u32 i;

	spin_lock(&engine->lock);
	engine->exec_start = start;
	engine->exec_job = job;
	spin_unlock(&engine->lock);

	if (atomic_read(&job->qs->guilty))
		error = -ECANCELED;
	else
		queue_delayed_work(system_wq, &job->timeout_work,
				   msecs_to_jiffies(READ_ONCE(job->qs->timeout_ms)));
	for (i = 0; !error && i < job->cmd_count && !READ_ONCE(job->aborted); i++) {
		WRITE_ONCE(job->cur_cmd, i);
		error = vnpu_exec_cmd(job, &job->cmds[i]);
		if (error)
			job->error_cmd = i;
	}
	cancel_delayed_work_sync(&job->timeout_work);

	/* Accounted under the lock: readers never count the job twice. */
	spin_lock(&engine->lock);
	engine->exec_start = 0;
	engine->exec_job = NULL;
	vnpu_job_account_busy(job, ktime_get_ns() - start);
	spin_unlock(&engine->lock);
	vnpu_job_signal(job, error);
	vnpu_job_put(job);
}

/*
 * Stops a job that executed for longer than its queue's timeout. The job is
 * alive: the exec work holds a reference and cancels this work before it
 * drops it.
 */
static void vnpu_job_timeout_work(struct work_struct *work)
{
	struct vnpu_job *job = container_of(to_delayed_work(work), struct vnpu_job,
					    timeout_work);
	struct vnpu_engine *engine = job->engine;
	bool hit;

	spin_lock(&engine->lock);
	hit = !list_empty(&job->link);
	if (hit) {
		/* Before the fence signals, so its waiters see the new state. */
		atomic_set(&job->qs->guilty, 1);
		vnpu_health_hang(job->vdev);
		job->error_cmd = READ_ONCE(job->cur_cmd);
		vnpu_job_signal_locked(job, -ETIMEDOUT);
	}
	spin_unlock(&engine->lock);
	if (!hit)
		return;
	wake_up_all(&engine->abort_wq);
	drm_dbg_driver(&job->vdev->drm, "%s: job %llu timed out\n", engine->name,
		       job->seqno);
}

static struct dma_fence *vnpu_job_run(struct drm_sched_job *sched_job)
{
	struct vnpu_engine *engine = container_of(sched_job->sched, struct vnpu_engine, sched);
	struct vnpu_job *job = to_vnpu_job(sched_job);
	struct dma_fence *fence = job->hw_fence;

	/* Cancelled by drm_sched (guilty queue): do not run it. */
	if (sched_job->s_fence->finished.error)
		return NULL;

	spin_lock(&engine->lock);
	job->engine = engine;
	dma_fence_init(fence, &vnpu_fence_ops, &engine->lock, engine->fence_context,
		       ++engine->seqno);
	/* Dropped by vnpu_fence_release(); see there. */
	__module_get(THIS_MODULE);
	list_add_tail(&job->link, &engine->running);
	if (engine->dead) {
		vnpu_job_signal_locked(job, -ENODEV);
	} else if (job->reset_gen != atomic64_read(&job->vdev->reset_gen)) {
		vnpu_job_signal_locked(job, -EIO);
	} else {
		kref_get(&job->refs);
		queue_work(engine->exec_wq, &job->exec_work);
	}
	spin_unlock(&engine->lock);

	/* The scheduler takes this reference; the job keeps its own. */
	return dma_fence_get(fence);
}

/*
 * Not expected to run: the schedulers have no timeout, timeout_work stops
 * jobs. Kept as a safe answer should drm_sched call it anyway.
 *
 * drm_sched took the job off its pending list before calling us. If the
 * job finished meanwhile it must be freed by drm_sched (free_guilty);
 * otherwise it goes back on the list and is aborted, so the normal
 * completion path frees it and the engine moves on to the next job.
 */
static enum drm_gpu_sched_stat vnpu_job_timedout(struct drm_sched_job *sched_job)
{
	struct drm_gpu_scheduler *sched = sched_job->sched;
	struct vnpu_job *job = to_vnpu_job(sched_job);
	struct vnpu_engine *engine = job->engine;

	spin_lock(&engine->lock);
	if (list_empty(&job->link)) {
		sched->free_guilty = true;
		spin_unlock(&engine->lock);
		return DRM_GPU_SCHED_STAT_NOMINAL;
	}
	spin_lock(&sched->job_list_lock);
	list_add(&sched_job->list, &sched->pending_list);
	spin_unlock(&sched->job_list_lock);
	vnpu_job_signal_locked(job, -ETIMEDOUT);
	spin_unlock(&engine->lock);
	wake_up_all(&engine->abort_wq);

	drm_dbg_driver(&job->vdev->drm, "%s: job timed out\n", engine->name);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

/* Counts a released job in its queue's state. */
static void vnpu_job_account_done(struct vnpu_job *job, int error)
{
	struct vnpu_queue_state *qs = job->qs;

	spin_lock(&qs->lock);
	if (!error) {
		qs->completed++;
	} else {
		qs->failed++;
		qs->last_error_seqno = job->seqno;
		qs->last_error_cmd = job->error_cmd;
		qs->last_error = error;
	}
	spin_unlock(&qs->lock);
}

static void vnpu_job_free(struct drm_sched_job *sched_job)
{
	struct vnpu_job *job = to_vnpu_job(sched_job);

	vnpu_job_account_done(job, sched_job->s_fence->finished.error);
	if (job->queued_on)
		atomic_dec(&job->queued_on->queued);
	drm_sched_job_cleanup(sched_job);
	vnpu_job_put(job);
}

/* After arm and push: the job counts as queued on its scheduler's engine. */
void vnpu_job_pushed(struct vnpu_job *job)
{
	job->queued_on = container_of(job->base.sched, struct vnpu_engine, sched);
	atomic_inc(&job->queued_on->queued);
}

static const struct drm_sched_backend_ops vnpu_sched_ops = {
	.run_job = vnpu_job_run,
	.timedout_job = vnpu_job_timedout,
	.free_job = vnpu_job_free,
};

static void vnpu_job_release_work(struct work_struct *work)
{
	struct vnpu_job *job = container_of(work, struct vnpu_job, release_work);
	struct drm_device *drm = &job->vdev->drm;
	u32 i;

	for (i = 0; i < job->bo_count; i++)
		drm_gem_object_put(job->bos[i].obj);
	for (i = 0; i < job->cmd_count; i++)
		vnpu_kernel_op_free(job->cmds[i].kop);
	vnpu_queue_state_put(job->qs);
	if (job->engine)
		dma_fence_put(job->hw_fence);
	else
		kfree(job->hw_fence);
	kvfree(job->bos);
	kvfree(job->cmds);
	kfree(job);
	/* Last: this may release the device and finish its schedulers. */
	drm_dev_put(drm);
}

static void vnpu_job_release(struct kref *kref)
{
	struct vnpu_job *job = container_of(kref, struct vnpu_job, refs);

	queue_work(vnpu_release_wq, &job->release_work);
}

void vnpu_job_put(struct vnpu_job *job)
{
	kref_put(&job->refs, vnpu_job_release);
}

/*
 * A job of queue @qs for @cmd_count commands, with room for
 * VNPU_CMD_MAX_BOS buffers per command. The caller fills the commands
 * (setting @cmd_count as it goes) and buffers, then initialises @base.
 */
struct vnpu_job *vnpu_job_alloc(struct vnpu_device *vdev, struct vnpu_queue_state *qs,
				u32 cmd_count)
{
	struct vnpu_job *job = kzalloc(sizeof(*job), GFP_KERNEL);

	if (!job)
		return NULL;
	job->cmds = kvcalloc(cmd_count, sizeof(*job->cmds), GFP_KERNEL);
	job->bos = kvcalloc(VNPU_CMD_MAX_BOS * cmd_count, sizeof(*job->bos), GFP_KERNEL);
	/* Allocated here: run_job is in the fence signalling path. */
	job->hw_fence = kzalloc(sizeof(*job->hw_fence), GFP_KERNEL);
	if (!job->cmds || !job->bos || !job->hw_fence) {
		kfree(job->hw_fence);
		kvfree(job->bos);
		kvfree(job->cmds);
		kfree(job);
		return NULL;
	}
	kref_init(&job->refs);
	job->vdev = vdev;
	drm_dev_get(&vdev->drm);
	job->qs = qs;
	kref_get(&qs->refs);
	job->reset_gen = atomic64_read(&vdev->reset_gen);
	job->error_cmd = DRM_VNPU_NO_CMD;
	INIT_LIST_HEAD(&job->link);
	INIT_WORK(&job->exec_work, vnpu_job_exec_work);
	INIT_WORK(&job->release_work, vnpu_job_release_work);
	INIT_DELAYED_WORK(&job->timeout_work, vnpu_job_timeout_work);
	return job;
}

struct vnpu_client *vnpu_client_alloc(void)
{
	struct vnpu_client *client = kzalloc(sizeof(*client), GFP_KERNEL);

	if (client)
		kref_init(&client->refs);
	return client;
}

static void vnpu_client_release(struct kref *kref)
{
	kfree(container_of(kref, struct vnpu_client, refs));
}

void vnpu_client_put(struct vnpu_client *client)
{
	kref_put(&client->refs, vnpu_client_release);
}

struct vnpu_queue_state *vnpu_queue_state_alloc(struct vnpu_client *client, u32 engine_class,
						u32 timeout_ms)
{
	struct vnpu_queue_state *qs = kzalloc(sizeof(*qs), GFP_KERNEL);

	if (!qs)
		return NULL;
	kref_init(&qs->refs);
	spin_lock_init(&qs->lock);
	qs->client = client;
	kref_get(&client->refs);
	qs->engine_class = engine_class;
	qs->timeout_ms = timeout_ms;
	qs->last_error_cmd = DRM_VNPU_NO_CMD;
	return qs;
}

static void vnpu_queue_state_release(struct kref *kref)
{
	struct vnpu_queue_state *qs = container_of(kref, struct vnpu_queue_state, refs);

	vnpu_client_put(qs->client);
	kfree(qs);
}

void vnpu_queue_state_put(struct vnpu_queue_state *qs)
{
	kref_put(&qs->refs, vnpu_queue_state_release);
}

/* Busy time of @engine, including the job executing now. */
u64 vnpu_engine_busy_ns(struct vnpu_engine *engine)
{
	u64 busy, start;

	spin_lock(&engine->lock);
	busy = atomic64_read(&engine->busy_ns);
	start = engine->exec_start;
	spin_unlock(&engine->lock);
	return start ? busy + (ktime_get_ns() - start) : busy;
}

/*
 * Busy time of @client on the engines of @class, including the jobs of the
 * client executing now.
 */
u64 vnpu_client_busy_ns(struct vnpu_device *vdev, struct vnpu_client *client, u32 class)
{
	u64 busy = atomic64_read(&client->busy_ns[class]), now = ktime_get_ns();
	unsigned int i;

	/*
	 * A job finishing during the walk may be missed once (readers keep the
	 * previous maximum, as drm-usage-stats.rst allows); none is counted
	 * twice.
	 */
	for (i = 0; i < vdev->num_engines; i++) {
		struct vnpu_engine *engine = &vdev->engines[i];
		struct vnpu_job *job;

		spin_lock(&engine->lock);
		job = engine->exec_job;
		if (job && job->qs->client == client && job->qs->engine_class == class)
			busy += now - engine->exec_start;
		spin_unlock(&engine->lock);
	}
	return busy;
}

/*
 * Fails every job on the engines with -EIO and, through the reset
 * generation, every job submitted before now that has not reached an engine
 * yet. Then the device is healthy again. Guilty queues stay guilty.
 */
void vnpu_device_reset(struct vnpu_device *vdev)
{
	struct vnpu_job *job, *tmp;
	unsigned int i;

	atomic64_inc(&vdev->reset_gen);
	for (i = 0; i < vdev->num_engines; i++) {
		struct vnpu_engine *engine = &vdev->engines[i];

		spin_lock(&engine->lock);
		list_for_each_entry_safe(job, tmp, &engine->running, link) {
			job->error_cmd = READ_ONCE(job->cur_cmd);
			vnpu_job_signal_locked(job, -EIO);
		}
		spin_unlock(&engine->lock);
		wake_up_all(&engine->abort_wq);
	}

	spin_lock(&vdev->health_lock);
	memset(vdev->hang_times, 0, sizeof(vdev->hang_times));
	vdev->reset_count++;
	atomic_set(&vdev->health, DRM_VNPU_HEALTH_OK);
	spin_unlock(&vdev->health_lock);
	drm_info(&vdev->drm, "vnpu%u: reset\n", vdev->index);
}

/* Marks every engine dead and fails the jobs they hold with -ENODEV. */
void vnpu_engines_unplug(struct vnpu_device *vdev)
{
	struct vnpu_job *job, *tmp;
	unsigned int i;

	for (i = 0; i < vdev->num_engines; i++) {
		struct vnpu_engine *engine = &vdev->engines[i];

		spin_lock(&engine->lock);
		engine->dead = true;
		list_for_each_entry_safe(job, tmp, &engine->running, link)
			vnpu_job_signal_locked(job, -ENODEV);
		spin_unlock(&engine->lock);
		wake_up_all(&engine->abort_wq);
	}
}

static void vnpu_engine_fini(struct vnpu_engine *engine)
{
	drm_sched_fini(&engine->sched);
	destroy_workqueue(engine->exec_wq);
	mutex_destroy(&engine->pause_lock);
}

static void vnpu_engines_fini(struct drm_device *drm, void *data)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	unsigned int i;

	for (i = 0; i < vdev->num_engines; i++)
		vnpu_engine_fini(&vdev->engines[i]);
}

static int vnpu_engine_init(struct vnpu_device *vdev, struct vnpu_engine *engine,
			    const char *class, unsigned int nr, long timeout)
{
	int ret;

	engine->vdev = vdev;
	spin_lock_init(&engine->lock);
	INIT_LIST_HEAD(&engine->running);
	init_waitqueue_head(&engine->abort_wq);
	mutex_init(&engine->pause_lock);
	engine->fence_context = dma_fence_context_alloc(1);
	snprintf(engine->name, sizeof(engine->name), "%s%u", class, nr);

	engine->exec_wq = alloc_ordered_workqueue("vnpu%u-%s", 0, vdev->index, engine->name);
	if (!engine->exec_wq) {
		ret = -ENOMEM;
		goto err_mutex;
	}
	ret = vnpu_sched_init(&engine->sched, &vnpu_sched_ops, VNPU_ENGINE_CREDITS, timeout,
			      engine->name, vdev->drm.dev);
	if (ret)
		goto err_destroy_wq;
	return 0;

err_destroy_wq:
	destroy_workqueue(engine->exec_wq);
err_mutex:
	mutex_destroy(&engine->pause_lock);
	return ret;
}

int vnpu_engines_init(struct vnpu_device *vdev)
{
	u32 total = vdev->num_compute_engines + vdev->num_copy_engines;
	/* Timeouts are per queue, by timeout_work; see the DOC above. */
	long timeout = MAX_SCHEDULE_TIMEOUT;
	unsigned int i;
	int ret;

	vdev->engines = drmm_kcalloc(&vdev->drm, total, sizeof(*vdev->engines), GFP_KERNEL);
	if (!vdev->engines)
		return -ENOMEM;

	for (i = 0; i < total; i++) {
		bool compute = i < vdev->num_compute_engines;
		unsigned int nr = compute ? i : i - vdev->num_compute_engines;
		struct vnpu_engine *engine = &vdev->engines[i];

		ret = vnpu_engine_init(vdev, engine, compute ? "compute" : "copy", nr, timeout);
		if (ret)
			goto err_fini;
		vdev->scheds[compute ? DRM_VNPU_ENGINE_COMPUTE : DRM_VNPU_ENGINE_COPY][nr] =
			&engine->sched;
		vdev->num_engines++;
	}
	return drmm_add_action_or_reset(&vdev->drm, vnpu_engines_fini, NULL);

err_fini:
	while (vdev->num_engines)
		vnpu_engine_fini(&vdev->engines[--vdev->num_engines]);
	return ret;
}

int vnpu_exec_init(void)
{
	vnpu_release_wq = alloc_workqueue("vnpu-release", 0, 0);
	return vnpu_release_wq ? 0 : -ENOMEM;
}

/* After every device is gone: waits for the last job releases. */
void vnpu_exec_exit(void)
{
	destroy_workqueue(vnpu_release_wq);
}
