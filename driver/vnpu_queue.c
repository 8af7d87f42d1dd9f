// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/**
 * DOC: vnpu queues and submission
 *
 * A queue is a drm_sched_entity on the schedulers of one engine class, at
 * the drm_sched priority of its uAPI priority (realtime maps to the kernel
 * run queue). Queues belong to the file that created it; the count per
 * process is charged to its &vnpu_process under &vnpu_device.mem_lock.
 *
 * A submit copies the commands in, checks every field, and resolves each
 * device-address range to the one buffer of the file that contains it: the
 * job takes a GEM reference on the buffer until the job is released and
 * uses the buffer's kernel mapping (vnpu_bo_vaddr(): made by the first job,
 * kept until the buffer is freed). Only then is the job armed and pushed,
 * so a failed submit changes nothing.
 *
 * Each queue has a &vnpu_queue_state, shared with its jobs so that it
 * outlives the queue: counters, the last error, the timeout and the guilty
 * flag (also the entity's, so drm_sched cancels the queue's jobs once it is
 * set). A guilty queue refuses submits with -ECANCELED, a device that needs
 * a reset refuses them with -EIO, and HANG is refused with -EPERM unless
 * debugfs allow_hang is set. KERNEL arguments are read from device memory
 * and checked here (vnpu_kernel_check()); their arrays are resolved like
 * any other range.
 */

#include <linux/capability.h>
#include <linux/dma-fence-chain.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>

#include "vnpu_compat.h"
#include "vnpu_engine.h"
#include "vnpu_fault.h"
#include "vnpu_gem.h"
#include "vnpu_mem.h"
#include "vnpu_ops.h"
#include "vnpu_queue.h"
#include "vnpu_topo.h"

/**
 * struct vnpu_queue - a queue of one file
 * @refs: the file's id table and each submit using the queue
 * @vdev: the device
 * @proc: the process charged for the queue (a reference is held)
 * @push_lock: keeps arming and pushing jobs on @entity in one order, and
 *	their sequence numbers (&vnpu_queue_state.submitted) with it
 * @entity: the scheduler entity; its guilty flag is @qs->guilty
 * @qs: counters and error state, shared with the queue's jobs
 */
struct vnpu_queue {
	struct kref refs;
	struct vnpu_device *vdev;
	struct vnpu_process *proc;
	struct mutex push_lock; /* Protects the arm + push order on @entity */
	struct drm_sched_entity entity;
	struct vnpu_queue_state *qs;
};

static const enum drm_sched_priority vnpu_sched_priority[] = {
	[DRM_VNPU_PRIORITY_LOW] = DRM_SCHED_PRIORITY_LOW,
	[DRM_VNPU_PRIORITY_NORMAL] = DRM_SCHED_PRIORITY_NORMAL,
	[DRM_VNPU_PRIORITY_HIGH] = DRM_SCHED_PRIORITY_HIGH,
	[DRM_VNPU_PRIORITY_REALTIME] = DRM_SCHED_PRIORITY_KERNEL,
};

/*
 * Tears down @entity so that no scheduler can reach it afterwards.
 *
 * drm_sched_entity_destroy() alone is not safe on the 6.12 scheduler: after
 * drm_sched_run_job_work() picked the entity and popped a job, it puts the
 * entity back into its run queue's FIFO tree whenever another job is queued
 * (drm_sched_entity_pop_job()), without looking whether
 * drm_sched_entity_kill() took it out meanwhile. A queue destroyed while its
 * engine pops one of its jobs, with more queued (a process SIGKILLed in the
 * destroy ioctl or in exit), was then freed while still linked in the tree,
 * and the scheduler's next pick walked freed memory. So the entity is killed
 * with its scheduler's submission paused: no run_job work runs meanwhile,
 * and afterwards none can find the entity. Queued jobs still get their
 * bounded time first, as drm_sched_entity_flush() gives them, with the
 * scheduler running.
 */
static void vnpu_queue_entity_destroy(struct drm_sched_entity *entity)
{
	struct vnpu_engine *engine;

	if (!entity->rq) {
		drm_sched_entity_fini(entity);
		return;
	}
	/* Stable: only drm_sched_job_arm() moves it, and no submit is left. */
	engine = container_of(entity->rq->sched, struct vnpu_engine, sched);

	/*
	 * A live process waits (killably) for its queued jobs; an exiting one
	 * a bounded time. drm_sched_entity_flush() itself would kill the
	 * entity of a SIGKILLed exiting process, unpaused, so it only serves
	 * the live case, where it never kills.
	 */
	if (current->flags & PF_EXITING)
		wait_event_timeout(engine->sched.job_scheduled,
				   !spsc_queue_count(&entity->job_queue),
				   MAX_WAIT_SCHED_ENTITY_Q_EMPTY);
	else
		drm_sched_entity_flush(entity, MAX_WAIT_SCHED_ENTITY_Q_EMPTY);

	mutex_lock(&engine->pause_lock);
	drm_sched_wqueue_stop(&engine->sched);
	drm_sched_entity_fini(entity);
	drm_sched_wqueue_start(&engine->sched);
	mutex_unlock(&engine->pause_lock);
}

static void vnpu_queue_release(struct kref *kref)
{
	struct vnpu_queue *queue = container_of(kref, struct vnpu_queue, refs);
	struct vnpu_device *vdev = queue->vdev;

	vnpu_queue_entity_destroy(&queue->entity);
	/* Freed while still in a run queue, the entity would be walked later. */
	WARN_ON_ONCE(!RB_EMPTY_NODE(&queue->entity.rb_tree_node));

	mutex_lock(&vdev->mem_lock);
	queue->proc->queue_count--;
	vnpu_process_put_locked(vdev, queue->proc);
	mutex_unlock(&vdev->mem_lock);

	vnpu_queue_state_put(queue->qs);
	mutex_destroy(&queue->push_lock);
	kfree(queue);
}

static void vnpu_queue_put(struct vnpu_queue *queue)
{
	kref_put(&queue->refs, vnpu_queue_release);
}

static struct vnpu_queue *vnpu_queue_lookup(struct vnpu_file *vfile, u32 id)
{
	struct vnpu_queue *queue;

	xa_lock(&vfile->queues);
	queue = xa_load(&vfile->queues, id);
	if (queue)
		kref_get(&queue->refs);
	xa_unlock(&vfile->queues);
	return queue;
}

/* Destroys every queue of a closing file. */
void vnpu_queues_release(struct vnpu_device *vdev, struct vnpu_file *vfile)
{
	struct vnpu_queue *queue;
	unsigned long id;

	xa_for_each(&vfile->queues, id, queue) {
		xa_erase(&vfile->queues, id);
		vnpu_queue_put(queue);
	}
	xa_destroy(&vfile->queues);
}

/* Charges a queue to @proc: -EMFILE at the per-process limit. */
static int vnpu_queue_charge(struct vnpu_device *vdev, struct vnpu_process *proc)
{
	int ret = vnpu_fault_inject(vdev, VNPU_FAULT_QUEUE_CHARGE);

	if (ret)
		return ret;
	mutex_lock(&vdev->mem_lock);
	if (proc->queue_count >= vdev->max_queues)
		ret = -EMFILE;
	else if (!vnpu_process_get_locked(vdev, proc->pid))
		ret = -ENOMEM;
	else
		proc->queue_count++;
	mutex_unlock(&vdev->mem_lock);
	return ret;
}

static void vnpu_queue_uncharge(struct vnpu_device *vdev, struct vnpu_process *proc)
{
	mutex_lock(&vdev->mem_lock);
	proc->queue_count--;
	vnpu_process_put_locked(vdev, proc);
	mutex_unlock(&vdev->mem_lock);
}

static int vnpu_queue_create_check(const struct drm_vnpu_queue_create *args)
{
	if (args->flags || args->queue_id || args->pad ||
	    args->timeout_ms > DRM_VNPU_MAX_TIMEOUT_MS)
		return -EINVAL;
	if (args->engine_class >= VNPU_ENGINE_CLASSES ||
	    args->priority >= ARRAY_SIZE(vnpu_sched_priority))
		return -EINVAL;
	if (args->priority == DRM_VNPU_PRIORITY_REALTIME && !capable(CAP_SYS_NICE))
		return -EPERM;
	return 0;
}

static unsigned int vnpu_class_engines(struct vnpu_device *vdev, u32 class)
{
	return class == DRM_VNPU_ENGINE_COMPUTE ? vdev->num_compute_engines :
						  vdev->num_copy_engines;
}

int vnpu_queue_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct drm_vnpu_queue_create *args = data;
	struct vnpu_file *vfile = file->driver_priv;
	struct vnpu_queue *queue;
	u32 id;
	int ret;

	ret = vnpu_queue_create_check(args);
	if (ret)
		return ret;

	ret = vnpu_fault_inject(vdev, VNPU_FAULT_QUEUE_ALLOC);
	if (ret)
		return ret;
	queue = kzalloc(sizeof(*queue), GFP_KERNEL);
	if (!queue)
		return -ENOMEM;
	kref_init(&queue->refs);
	queue->vdev = vdev;
	queue->proc = vfile->proc;
	mutex_init(&queue->push_lock);
	ret = vnpu_fault_inject(vdev, VNPU_FAULT_QUEUE_STATE);
	if (ret)
		goto err_free;
	queue->qs = vnpu_queue_state_alloc(vfile->client, args->engine_class,
					   args->timeout_ms ?: vdev->job_timeout_ms);
	if (!queue->qs) {
		ret = -ENOMEM;
		goto err_free;
	}

	ret = vnpu_queue_charge(vdev, queue->proc);
	if (ret)
		goto err_put_state;
	ret = vnpu_fault_inject(vdev, VNPU_FAULT_QUEUE_ENTITY) ?:
	      drm_sched_entity_init(&queue->entity, vnpu_sched_priority[args->priority],
				    vdev->scheds[args->engine_class],
				    vnpu_class_engines(vdev, args->engine_class),
				    &queue->qs->guilty);
	if (ret)
		goto err_uncharge;
	ret = vnpu_fault_inject(vdev, VNPU_FAULT_QUEUE_ID) ?:
	      xa_alloc(&vfile->queues, &id, queue, xa_limit_32b, GFP_KERNEL);
	if (ret)
		goto err_entity;

	args->queue_id = id;
	return 0;

err_entity:
	/* No job was ever pushed: nothing can race the teardown. */
	drm_sched_entity_destroy(&queue->entity);
err_uncharge:
	vnpu_queue_uncharge(vdev, queue->proc);
err_put_state:
	vnpu_queue_state_put(queue->qs);
err_free:
	mutex_destroy(&queue->push_lock);
	kfree(queue);
	return ret;
}

int vnpu_queue_destroy_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_vnpu_queue_destroy *args = data;
	struct vnpu_file *vfile = file->driver_priv;
	struct vnpu_queue *queue;

	if (args->flags)
		return -EINVAL;
	queue = xa_erase(&vfile->queues, args->queue_id);
	if (!queue)
		return -ENOENT;
	vnpu_queue_put(queue);
	return 0;
}

int vnpu_queue_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct drm_vnpu_queue_info *args = data;
	struct vnpu_file *vfile = file->driver_priv;
	struct vnpu_queue_state *qs;
	struct vnpu_queue *queue;

	if (args->flags & ~DRM_VNPU_QUEUE_INFO_SET_TIMEOUT || args->pad ||
	    args->timeout_ms > DRM_VNPU_MAX_TIMEOUT_MS ||
	    (!(args->flags & DRM_VNPU_QUEUE_INFO_SET_TIMEOUT) && args->timeout_ms))
		return -EINVAL;
	queue = vnpu_queue_lookup(vfile, args->queue_id);
	if (!queue)
		return -ENOENT;
	qs = queue->qs;

	if (args->flags & DRM_VNPU_QUEUE_INFO_SET_TIMEOUT)
		WRITE_ONCE(qs->timeout_ms, args->timeout_ms ?: vdev->job_timeout_ms);
	args->timeout_ms = READ_ONCE(qs->timeout_ms);
	args->state = atomic_read(&qs->guilty) ? DRM_VNPU_QUEUE_STATE_GUILTY : 0;
	spin_lock(&qs->lock);
	args->submitted = qs->submitted;
	args->completed = qs->completed;
	args->failed = qs->failed;
	args->last_error_seqno = qs->last_error_seqno;
	args->last_error_cmd = qs->last_error_cmd;
	args->last_error = qs->last_error;
	spin_unlock(&qs->lock);

	vnpu_queue_put(queue);
	return 0;
}

/* Field checks of one command; see &struct drm_vnpu_cmd. */
static int vnpu_cmd_check(const struct drm_vnpu_cmd *cmd)
{
	u64 end;

	switch (cmd->opcode) {
	case DRM_VNPU_CMD_COPY:
		if (cmd->pattern || !cmd->size ||
		    check_add_overflow(cmd->src, cmd->size, &end))
			return -EINVAL;
		break;
	case DRM_VNPU_CMD_FILL:
		if (cmd->src || !cmd->size || (cmd->dst | cmd->size) % sizeof(u32))
			return -EINVAL;
		break;
	case DRM_VNPU_CMD_TIMESTAMP:
		if (cmd->src || cmd->size || cmd->pattern || cmd->dst % sizeof(u64))
			return -EINVAL;
		return check_add_overflow(cmd->dst, sizeof(u64), &end) ? -EINVAL : 0;
	case DRM_VNPU_CMD_DELAY:
		if (cmd->dst || cmd->src || cmd->pattern || !cmd->size ||
		    cmd->size > DRM_VNPU_MAX_DELAY_NS)
			return -EINVAL;
		return 0;
	case DRM_VNPU_CMD_KERNEL:
		/* The layout, chosen by the operator, is checked at resolve. */
		if (cmd->dst || cmd->pattern || cmd->src % 8 || cmd->size % 8 ||
		    cmd->size < sizeof(struct drm_vnpu_kernel_args) ||
		    cmd->size > DRM_VNPU_KERNEL_ARGS_MAX_SIZE)
			return -EINVAL;
		return check_add_overflow(cmd->src, cmd->size, &end) ? -EINVAL : 0;
	case DRM_VNPU_CMD_HANG:
		return cmd->dst || cmd->src || cmd->pattern || cmd->size ? -EINVAL : 0;
	case DRM_VNPU_CMD_FAULT:
		if (cmd->dst || cmd->src || cmd->size || !cmd->pattern ||
		    cmd->pattern > MAX_ERRNO)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
	return check_add_overflow(cmd->dst, cmd->size, &end) ? -EINVAL : 0;
}

/*
 * The buffer of @file holding [@addr, @addr + @size), with a reference, or
 * NULL. table_lock is a spinlock: only fields fixed at creation are read.
 */
static struct drm_gem_object *vnpu_file_find_bo(struct drm_file *file, u64 addr, u64 size)
{
	struct drm_gem_object *obj, *found = NULL;
	int id;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		struct vnpu_bo *bo = to_vnpu_bo(obj);
		u64 start;

		if (!drm_mm_node_allocated(&bo->node))
			continue;
		start = vnpu_bo_device_addr(bo);
		if (addr >= start && addr - start <= obj->size &&
		    size <= obj->size - (addr - start)) {
			found = obj;
			drm_gem_object_get(found);
			break;
		}
	}
	spin_unlock(&file->table_lock);
	return found;
}

/* Index in @job->bos of @obj, mapped; consumes the caller's reference. */
static int vnpu_job_add_bo(struct vnpu_job *job, struct drm_gem_object *obj)
{
	struct vnpu_job_bo *jbo;
	u32 i;
	int ret;

	for (i = 0; i < job->bo_count; i++) {
		if (job->bos[i].obj == obj) {
			drm_gem_object_put(obj);
			return i;
		}
	}
	jbo = &job->bos[job->bo_count];
	ret = vnpu_fault_inject(job->vdev, VNPU_FAULT_JOB_BO_VMAP);
	if (!ret) {
		jbo->vaddr = vnpu_bo_vaddr(obj);
		ret = PTR_ERR_OR_ZERO(jbo->vaddr);
	}
	if (ret) {
		drm_gem_object_put(obj);
		return ret;
	}
	jbo->obj = obj;
	return job->bo_count++;
}

/*
 * Kernel address of [@addr, @addr + @size) in a buffer of @file; the buffer
 * in @bo_out if not NULL.
 */
static void *vnpu_job_resolve_bo(struct vnpu_job *job, struct drm_file *file, u64 addr,
				 u64 size, struct vnpu_bo **bo_out)
{
	struct drm_gem_object *obj = vnpu_file_find_bo(file, addr, size);
	int i;

	if (!obj)
		return ERR_PTR(-EACCES);
	i = vnpu_job_add_bo(job, obj);
	if (i < 0)
		return ERR_PTR(i);
	if (bo_out)
		*bo_out = to_vnpu_bo(obj);
	return job->bos[i].vaddr + (addr - vnpu_bo_device_addr(to_vnpu_bo(obj)));
}

static void *vnpu_job_resolve(struct vnpu_job *job, struct drm_file *file, u64 addr,
			      u64 size)
{
	return vnpu_job_resolve_bo(job, file, addr, size, NULL);
}

/*
 * Paces @exec by the slowest link it crosses: the source or destination may
 * be another device's VRAM.
 */
static void vnpu_exec_set_link(struct vnpu_job *job, struct vnpu_exec_cmd *exec,
			       const struct vnpu_bo *bo)
{
	struct drm_vnpu_link link;

	if (!bo->peer_vram)
		return;
	vnpu_topo_link(job->vdev->index, bo->peer_index, &link);
	if (!link.bandwidth_mbps)
		return;
	if (!exec->link_mbps || link.bandwidth_mbps < exec->link_mbps)
		exec->link_mbps = link.bandwidth_mbps;
	exec->link_ns = max(exec->link_ns, link.latency_ns);
}

/*
 * Copies the arguments of tensor operator @op, @size bytes at @src: the
 * kernel's struct, the bytes past it zero (-E2BIG), checks and prepares them.
 */
static int vnpu_tensor_args_copy(struct drm_vnpu_tensor_args *args, u32 op, const u8 *src,
				 u64 size, struct vnpu_kernel_ranges *r)
{
	int ret;

	if (size < DRM_VNPU_TENSOR_ARGS_SIZE_V1)
		return -EINVAL;
	memset(args, 0, sizeof(*args));
	memcpy(args, src, min_t(u64, size, sizeof(*args)));
	args->op = op;
	if (size > sizeof(*args) && memchr_inv(src + sizeof(*args), 0, size - sizeof(*args)))
		return -E2BIG;
	ret = vnpu_tensor_check(args, r);
	if (!ret)
		vnpu_tensor_prepare(args);
	return ret;
}

/*
 * Reads the arguments of a KERNEL command from device memory, checks them
 * and resolves the arrays they name. The operator, the first member of
 * both layouts, chooses the layout.
 */
static int vnpu_job_resolve_kernel(struct vnpu_job *job, struct drm_file *file,
				   const struct drm_vnpu_cmd *cmd, struct vnpu_exec_cmd *exec)
{
	struct vnpu_kernel_op *kop;
	struct drm_vnpu_kernel_args args;
	struct vnpu_kernel_ranges r = {};
	void *ptr[VNPU_KERNEL_MAX_ARRAYS] = {};
	const void *src;
	u64 end;
	u32 op;
	int i, ret;

	src = vnpu_job_resolve(job, file, cmd->src, cmd->size);
	if (IS_ERR(src))
		return PTR_ERR(src);
	ret = vnpu_fault_inject(job->vdev, VNPU_FAULT_JOB_KERNEL_OP);
	if (ret)
		return ret;
	kop = kzalloc(sizeof(*kop), GFP_KERNEL);
	if (!kop)
		return -ENOMEM;
	/* Read once: userspace may change the memory at any time. */
	op = READ_ONCE(*(const u32 *)src);
	if (op >= DRM_VNPU_OP_T_COPY) {
		ret = vnpu_tensor_args_copy(&kop->t, op, src, cmd->size, &r);
	} else if (cmd->size != sizeof(args)) {
		ret = -EINVAL;
	} else {
		memcpy(&args, src, sizeof(args));
		args.op = op;
		ret = vnpu_kernel_check(&args, &r);
	}
	for (i = 0; !ret && i < VNPU_KERNEL_MAX_ARRAYS; i++) {
		if (!r.size[i])
			continue;
		if (check_add_overflow(r.addr[i], r.size[i], &end)) {
			ret = -EINVAL;
			break;
		}
		ptr[i] = vnpu_job_resolve(job, file, r.addr[i], r.size[i]);
		if (IS_ERR(ptr[i]))
			ret = PTR_ERR(ptr[i]);
	}
	if (!ret && op >= DRM_VNPU_OP_T_COPY)
		ret = vnpu_tensor_alloc(kop);
	if (ret) {
		vnpu_kernel_op_free(kop);
		return ret;
	}

	kop->op = op;
	kop->a = ptr[0];
	kop->b = ptr[1];
	kop->c = ptr[2];
	kop->d = ptr[VNPU_KERNEL_ARRAY_D];
	if (op < DRM_VNPU_OP_T_COPY) {
		kop->flags = args.flags;
		kop->m = args.m;
		kop->n = args.n;
		kop->k = args.k;
		kop->alpha = args.alpha;
		kop->beta = args.beta;
		kop->lda = args.lda;
		kop->ldb = args.ldb;
		kop->ldc = args.ldc;
	}
	for (i = 0; i < 4; i++)
		kop->norm[i] = ptr[3 + i];
	exec->kop = kop;
	return 0;
}

static int vnpu_job_resolve_cmd(struct vnpu_job *job, struct drm_file *file,
				const struct drm_vnpu_cmd *cmd, struct vnpu_exec_cmd *exec)
{
	struct vnpu_bo *bo;
	void *ptr;

	exec->opcode = cmd->opcode;
	exec->pattern = cmd->pattern;
	exec->size = cmd->size;
	switch (cmd->opcode) {
	case DRM_VNPU_CMD_DELAY:
	case DRM_VNPU_CMD_HANG:
	case DRM_VNPU_CMD_FAULT:
		return 0;
	case DRM_VNPU_CMD_KERNEL:
		return vnpu_job_resolve_kernel(job, file, cmd, exec);
	}

	ptr = vnpu_job_resolve_bo(job, file, cmd->dst,
				  cmd->opcode == DRM_VNPU_CMD_TIMESTAMP ? sizeof(u64) : cmd->size,
				  &bo);
	if (IS_ERR(ptr))
		return PTR_ERR(ptr);
	exec->dst = ptr;
	if (cmd->opcode != DRM_VNPU_CMD_COPY)
		return 0;
	vnpu_exec_set_link(job, exec, bo);

	ptr = vnpu_job_resolve_bo(job, file, cmd->src, cmd->size, &bo);
	if (IS_ERR(ptr))
		return PTR_ERR(ptr);
	exec->src = ptr;
	vnpu_exec_set_link(job, exec, bo);
	return 0;
}

/* Copies in, checks, then resolves the commands of @args into @job. */
static int vnpu_job_add_cmds(struct vnpu_job *job, struct drm_file *file,
			     const struct drm_vnpu_submit *args)
{
	struct vnpu_device *vdev = job->vdev;
	struct drm_vnpu_cmd *cmds;
	u32 i;
	int ret;

	ret = vnpu_fault_inject(vdev, VNPU_FAULT_JOB_CMDS_COPY);
	if (ret)
		return ret;
	cmds = vmemdup_array_user(u64_to_user_ptr(args->cmds), args->cmd_count,
				  sizeof(*cmds));
	if (IS_ERR(cmds))
		return PTR_ERR(cmds);

	for (i = 0; i < args->cmd_count; i++) {
		ret = vnpu_cmd_check(&cmds[i]);
		if (ret)
			goto out_free;
	}
	for (i = 0; i < args->cmd_count; i++) {
		if (cmds[i].opcode == DRM_VNPU_CMD_HANG && !READ_ONCE(vdev->allow_hang)) {
			ret = -EPERM;
			goto out_free;
		}
	}
	for (i = 0; i < args->cmd_count; i++) {
		/* Counted as it goes: the release frees what was resolved. */
		job->cmd_count = i + 1;
		ret = vnpu_job_resolve_cmd(job, file, &cmds[i], &job->cmds[i]);
		if (ret)
			goto out_free;
	}
out_free:
	kvfree(cmds);
	return ret;
}

static int vnpu_job_add_waits(struct vnpu_job *job, struct drm_file *file,
			      const struct drm_vnpu_submit *args)
{
	struct drm_vnpu_sync *waits;
	struct dma_fence *fence;
	u32 i;
	int ret = 0;

	if (!args->wait_count)
		return 0;
	ret = vnpu_fault_inject(job->vdev, VNPU_FAULT_JOB_WAITS_COPY);
	if (ret)
		return ret;
	waits = memdup_array_user(u64_to_user_ptr(args->waits), args->wait_count,
				  sizeof(*waits));
	if (IS_ERR(waits))
		return PTR_ERR(waits);

	for (i = 0; i < args->wait_count; i++) {
		if (waits[i].flags) {
			ret = -EINVAL;
			goto out_free;
		}
	}
	for (i = 0; i < args->wait_count; i++) {
		ret = vnpu_fault_inject(job->vdev, VNPU_FAULT_JOB_WAIT_FENCE) ?:
		      drm_syncobj_find_fence(file, waits[i].handle, waits[i].point, 0, &fence);
		if (ret)
			goto out_free;
		ret = vnpu_fault_inject(job->vdev, VNPU_FAULT_JOB_DEPENDENCY);
		if (ret) {
			dma_fence_put(fence);
			goto out_free;
		}
		/* Consumes the fence reference, also on failure. */
		ret = drm_sched_job_add_dependency(&job->base, fence);
		if (ret)
			goto out_free;
	}
out_free:
	kfree(waits);
	return ret;
}

/**
 * struct vnpu_signal - the syncobj a submit signals, prepared up front
 * @syncobj: the syncobj, or NULL for none
 * @chain: chain node for a timeline point
 * @point: the timeline point, 0 to replace the fence
 */
struct vnpu_signal {
	struct drm_syncobj *syncobj;
	struct dma_fence_chain *chain;
	u64 point;
};

static int vnpu_signal_prepare(struct vnpu_device *vdev, struct vnpu_signal *sig,
			       struct drm_file *file, const struct drm_vnpu_sync *sync)
{
	int ret;

	sig->point = sync->point;
	if (!sync->handle)
		return 0;
	ret = vnpu_fault_inject(vdev, VNPU_FAULT_JOB_SIGNAL_SYNCOBJ);
	if (ret)
		return ret;
	sig->syncobj = drm_syncobj_find(file, sync->handle);
	if (!sig->syncobj)
		return -ENOENT;
	if (!sig->point)
		return 0;
	ret = vnpu_fault_inject(vdev, VNPU_FAULT_JOB_SIGNAL_CHAIN);
	if (!ret) {
		sig->chain = dma_fence_chain_alloc();
		ret = sig->chain ? 0 : -ENOMEM;
	}
	if (ret) {
		drm_syncobj_put(sig->syncobj);
		sig->syncobj = NULL;
	}
	return ret;
}

static void vnpu_signal_commit(struct vnpu_signal *sig, struct dma_fence *fence)
{
	if (!sig->syncobj)
		return;
	if (sig->chain)
		drm_syncobj_add_point(sig->syncobj, sig->chain, fence, sig->point);
	else
		drm_syncobj_replace_fence(sig->syncobj, fence);
	drm_syncobj_put(sig->syncobj);
}

static int vnpu_submit_check(const struct drm_vnpu_submit *args)
{
	if (args->flags || args->pad || args->signal.flags)
		return -EINVAL;
	if (!args->cmd_count || args->cmd_count > DRM_VNPU_MAX_CMDS ||
	    args->wait_count > DRM_VNPU_MAX_WAITS)
		return -EINVAL;
	if (!args->signal.handle && args->signal.point)
		return -EINVAL;
	return 0;
}

static void vnpu_job_push(struct vnpu_queue *queue, struct vnpu_job *job,
			  struct vnpu_signal *sig)
{
	struct dma_fence *done;

	mutex_lock(&queue->push_lock);
	spin_lock(&queue->qs->lock);
	job->seqno = ++queue->qs->submitted;
	spin_unlock(&queue->qs->lock);
	drm_sched_job_arm(&job->base);
	done = dma_fence_get(&job->base.s_fence->finished);
	/* Before the push: once pushed, the job may be freed at any time. */
	vnpu_job_pushed(job);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&queue->push_lock);

	vnpu_signal_commit(sig, done);
	dma_fence_put(done);
}

int vnpu_submit_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct vnpu_file *vfile = file->driver_priv;
	struct drm_vnpu_submit *args = data;
	struct vnpu_signal sig = {};
	struct vnpu_queue *queue;
	struct vnpu_job *job;
	int ret;

	ret = vnpu_submit_check(args);
	if (ret)
		return ret;
	queue = vnpu_queue_lookup(vfile, args->queue_id);
	if (!queue)
		return -ENOENT;
	if (atomic_read(&queue->qs->guilty)) {
		ret = -ECANCELED;
		goto out_put_queue;
	}
	if (atomic_read(&vdev->health) == DRM_VNPU_HEALTH_NEEDS_RESET) {
		ret = -EIO;
		goto out_put_queue;
	}
	ret = vnpu_fault_inject(vdev, VNPU_FAULT_JOB_ALLOC);
	if (ret)
		goto out_put_queue;
	job = vnpu_job_alloc(vdev, queue->qs, args->cmd_count);
	if (!job) {
		ret = -ENOMEM;
		goto out_put_queue;
	}

	ret = vnpu_job_add_cmds(job, file, args);
	if (ret)
		goto err_put_job;
	ret = vnpu_fault_inject(vdev, VNPU_FAULT_JOB_SCHED_INIT) ?:
	      vnpu_sched_job_init(&job->base, &queue->entity, vfile, file->client_id);
	if (ret)
		goto err_put_job;
	ret = vnpu_job_add_waits(job, file, args);
	if (ret)
		goto err_cleanup_job;
	ret = vnpu_signal_prepare(vdev, &sig, file, &args->signal);
	if (ret)
		goto err_cleanup_job;

	vnpu_job_push(queue, job, &sig);
	goto out_put_queue;

err_cleanup_job:
	drm_sched_job_cleanup(&job->base);
err_put_job:
	vnpu_job_put(job);
out_put_queue:
	vnpu_queue_put(queue);
	return ret;
}
