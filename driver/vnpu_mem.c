// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/**
 * DOC: vnpu memory accounting
 *
 * Each device keeps two address ranges, VRAM and host-pinned, each placed
 * by a drm_mm (best fit, O(log n) in the number of free ranges), and a
 * table of &vnpu_process entries, one per thread group that opened the
 * device, created a buffer on it or had its limits set.
 *
 * An entry holds a reference on its struct pid and is keyed by it, so a
 * recycled pid number never inherits another process's usage. It lives
 * while the process has the device open or holds buffers charged to it;
 * explicitly set limits pin it until the process has exited, which is
 * noticed (and the pin dropped) the next time a file is opened or a quota
 * is set on the device.
 */

#include <linux/capability.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include <drm/drm_file.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "vnpu_mem.h"

static void vnpu_mem_fini(struct drm_device *drm, void *data)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct vnpu_process *proc;
	unsigned long index;

	/* Every buffer and file is gone; only pins of exited processes may remain. */
	xa_for_each(&vdev->procs, index, proc) {
		drm_WARN_ON(drm, proc->refs != (proc->pinned ? 1 : 0));
		put_pid(proc->pid);
		kfree(proc);
	}
	xa_destroy(&vdev->procs);
	drm_mm_takedown(&vdev->host.mm);
	drm_mm_takedown(&vdev->vram.mm);
}

int vnpu_mem_init(struct vnpu_device *vdev, u64 host_size)
{
	int ret;

	ret = drmm_mutex_init(&vdev->drm, &vdev->mem_lock);
	if (ret)
		return ret;

	vdev->vram.base = DRM_VNPU_VRAM_BASE;
	vdev->vram.size = vdev->vram_size;
	drm_mm_init(&vdev->vram.mm, 0, vdev->vram.size);
	vdev->host.base = DRM_VNPU_HOST_BASE;
	vdev->host.size = host_size;
	drm_mm_init(&vdev->host.mm, 0, vdev->host.size);
	xa_init(&vdev->procs);
	vdev->default_quota = DRM_VNPU_QUOTA_UNLIMITED;

	return drmm_add_action_or_reset(&vdev->drm, vnpu_mem_fini, NULL);
}

u64 vnpu_region_largest_free(struct vnpu_device *vdev, struct vnpu_region *region)
{
	u64 hole_start, hole_end, largest = 0;
	struct drm_mm_node *hole;

	mutex_lock(&vdev->mem_lock);
	drm_mm_for_each_hole(hole, &region->mm, hole_start, hole_end)
		largest = max(largest, hole_end - hole_start);
	mutex_unlock(&vdev->mem_lock);
	return largest;
}

/*
 * Returns the entry of @pid with one more reference, creating it with the
 * device's default limits. NULL only when memory runs out.
 */
struct vnpu_process *vnpu_process_get_locked(struct vnpu_device *vdev, struct pid *pid)
{
	struct vnpu_process *proc;

	lockdep_assert_held(&vdev->mem_lock);

	proc = xa_load(&vdev->procs, (unsigned long)pid);
	if (proc) {
		proc->refs++;
		return proc;
	}

	proc = kzalloc(sizeof(*proc), GFP_KERNEL);
	if (!proc)
		return NULL;
	proc->pid = get_pid(pid);
	proc->refs = 1;
	proc->soft_limit = vdev->default_quota;
	proc->hard_limit = vdev->default_quota;
	if (xa_err(xa_store(&vdev->procs, (unsigned long)pid, proc, GFP_KERNEL))) {
		put_pid(proc->pid);
		kfree(proc);
		return NULL;
	}
	return proc;
}

void vnpu_process_put_locked(struct vnpu_device *vdev, struct vnpu_process *proc)
{
	lockdep_assert_held(&vdev->mem_lock);

	if (--proc->refs)
		return;
	xa_erase(&vdev->procs, (unsigned long)proc->pid);
	put_pid(proc->pid);
	kfree(proc);
}

/* Drops the pins of processes that have exited. */
void vnpu_process_prune_locked(struct vnpu_device *vdev)
{
	struct vnpu_process *proc;
	unsigned long index;

	lockdep_assert_held(&vdev->mem_lock);

	xa_for_each(&vdev->procs, index, proc) {
		if (!proc->pinned || pid_has_task(proc->pid, PIDTYPE_TGID))
			continue;
		proc->pinned = false;
		vnpu_process_put_locked(vdev, proc);
	}
}

/*
 * Resolves the pid of a quota request to a live thread group and checks
 * that the caller may look at it. Returns a referenced pid or an ERR_PTR.
 */
static struct pid *vnpu_quota_target(s32 nr)
{
	struct pid *pid;

	if (!nr)
		return get_pid(task_tgid(current));

	pid = find_get_pid(nr);
	if (!pid)
		return ERR_PTR(-ESRCH);
	if (!pid_has_task(pid, PIDTYPE_TGID)) {
		put_pid(pid);
		return ERR_PTR(-ESRCH);
	}
	if (pid != task_tgid(current) && !capable(CAP_SYS_ADMIN)) {
		put_pid(pid);
		return ERR_PTR(-EPERM);
	}
	return pid;
}

static void vnpu_quota_fill(struct vnpu_device *vdev, const struct vnpu_process *proc,
			    struct drm_vnpu_quota *args)
{
	if (!proc) {
		args->soft_limit = vdev->default_quota;
		args->hard_limit = vdev->default_quota;
		args->used = 0;
		args->peak = 0;
		args->bo_count = 0;
		args->host_used = 0;
		return;
	}
	args->soft_limit = proc->soft_limit;
	args->hard_limit = proc->hard_limit;
	args->used = proc->used;
	args->peak = proc->peak;
	args->bo_count = proc->bo_count;
	args->host_used = proc->host_used;
}

int vnpu_quota_get_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct drm_vnpu_quota *args = data;
	struct pid *pid;

	if (args->flags || args->pad)
		return -EINVAL;

	pid = vnpu_quota_target(args->pid);
	if (IS_ERR(pid))
		return PTR_ERR(pid);

	mutex_lock(&vdev->mem_lock);
	vnpu_quota_fill(vdev, xa_load(&vdev->procs, (unsigned long)pid), args);
	mutex_unlock(&vdev->mem_lock);
	put_pid(pid);
	return 0;
}

/* Checks a change of @proc's limits to @soft/@hard by the current task. */
static int vnpu_quota_check_locked(const struct vnpu_process *proc, struct pid *pid,
				   u64 soft, u64 hard)
{
	if (soft > hard)
		return -EINVAL;
	if ((hard > proc->hard_limit || pid != task_tgid(current)) &&
	    !capable(CAP_SYS_ADMIN))
		return -EPERM;
	return 0;
}

int vnpu_quota_set_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct drm_vnpu_quota *args = data;
	struct vnpu_process *proc;
	struct pid *pid;
	u64 soft, hard;
	int ret;

	if (!args->flags || (args->flags & ~DRM_VNPU_QUOTA_SET_FLAGS) || args->pad)
		return -EINVAL;

	pid = vnpu_quota_target(args->pid);
	if (IS_ERR(pid))
		return PTR_ERR(pid);

	mutex_lock(&vdev->mem_lock);
	vnpu_process_prune_locked(vdev);
	proc = vnpu_process_get_locked(vdev, pid);
	if (!proc) {
		ret = -ENOMEM;
		goto out_unlock;
	}

	soft = args->flags & DRM_VNPU_QUOTA_SET_SOFT ? args->soft_limit : proc->soft_limit;
	hard = args->flags & DRM_VNPU_QUOTA_SET_HARD ? args->hard_limit : proc->hard_limit;
	ret = vnpu_quota_check_locked(proc, pid, soft, hard);
	if (!ret) {
		proc->soft_limit = soft;
		proc->hard_limit = hard;
		vnpu_quota_fill(vdev, proc, args);
		if (!proc->pinned) {
			/* Keep the reference just taken as the pin. */
			proc->pinned = true;
			goto out_unlock;
		}
	}
	vnpu_process_put_locked(vdev, proc);
out_unlock:
	mutex_unlock(&vdev->mem_lock);
	put_pid(pid);
	return ret;
}
