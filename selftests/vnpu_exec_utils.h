/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Buffer, queue, submit and syncobj helpers of the execution selftests
 * (vnpu_submit.c, vnpu_kernel.c, vnpu_ops.c, vnpu_exec.c). Each returns 0
 * or -errno, as the _vnpu_x() forms of vnpu_utils.h.
 */
#ifndef VNPU_EXEC_UTILS_H
#define VNPU_EXEC_UTILS_H

#include <linux/sync_file.h>
#include <poll.h>
#include <sys/mman.h>
#include <time.h>

#include "vnpu_utils.h"

struct buf {
	uint32_t handle;
	uint64_t addr;
	uint64_t size;
	void *map;
};

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Creates a buffer and, if it is host or mappable, maps it. */
static inline int buf_create(int fd, uint64_t size, uint32_t flags, struct buf *b)
{
	struct drm_vnpu_bo_create c = { .size = size, .flags = flags };
	struct drm_vnpu_bo_info i = {};

	if (ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &c))
		return -errno;
	b->handle = c.handle;
	b->addr = c.device_addr;
	b->size = size;
	b->map = NULL;
	if (!(flags & (DRM_VNPU_BO_HOST | DRM_VNPU_BO_MAPPABLE)))
		return 0;
	i.handle = c.handle;
	if (ioctl(fd, DRM_IOCTL_VNPU_BO_INFO, &i))
		return -errno;
	b->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, i.mmap_offset);
	return b->map == MAP_FAILED ? -errno : 0;
}

static inline void buf_destroy(int fd, struct buf *b)
{
	struct drm_gem_close c = { .handle = b->handle };

	if (b->map && b->map != MAP_FAILED)
		munmap(b->map, b->size);
	ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* QUEUE_CREATE of @q; *@id is the new queue. */
static inline int _queue_create_args(int fd, struct drm_vnpu_queue_create *q, uint32_t *id)
{
	if (ioctl(fd, DRM_IOCTL_VNPU_QUEUE_CREATE, q))
		return -errno;
	*id = q->queue_id;
	return 0;
}

/* A queue with queue-create @flags (the raw form: any flags pass through). */
static inline int _queue_create(int fd, uint32_t class, uint32_t prio, uint32_t flags,
				uint32_t *id)
{
	struct drm_vnpu_queue_create q = {
		.engine_class = class, .priority = prio, .flags = flags,
	};

	return _queue_create_args(fd, &q, id);
}

static inline int queue_create_timeout(int fd, uint32_t class, uint32_t prio,
				       uint32_t timeout_ms, uint32_t *id)
{
	struct drm_vnpu_queue_create q = {
		.engine_class = class, .priority = prio, .timeout_ms = timeout_ms,
	};

	return _queue_create_args(fd, &q, id);
}

static inline int queue_create(int fd, uint32_t class, uint32_t prio, uint32_t *id)
{
	return queue_create_timeout(fd, class, prio, 0, id);
}

static inline int queue_destroy(int fd, uint32_t id)
{
	struct drm_vnpu_queue_destroy d = { .queue_id = id };

	return ioctl(fd, DRM_IOCTL_VNPU_QUEUE_DESTROY, &d) ? -errno : 0;
}

static inline int queue_info(int fd, uint32_t id, struct drm_vnpu_queue_info *info)
{
	*info = (struct drm_vnpu_queue_info){ .queue_id = id };
	return ioctl(fd, DRM_IOCTL_VNPU_QUEUE_INFO, info) ? -errno : 0;
}

static inline int _submit(int fd, struct drm_vnpu_submit *s)
{
	return ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, s) ? -errno : 0;
}

/*
 * Submits @n commands to @queue, signalling syncobj @sig (0: none) at
 * timeline point @point (0: a binary syncobj).
 */
static inline int submit_cmds_at(int fd, uint32_t queue, struct drm_vnpu_cmd *cmds, uint32_t n,
				 struct drm_vnpu_sync *waits, uint32_t nwaits, uint32_t sig,
				 uint64_t point)
{
	struct drm_vnpu_submit s = {
		.queue_id = queue,
		.cmds = (uintptr_t)cmds, .cmd_count = n,
		.waits = (uintptr_t)waits, .wait_count = nwaits,
		.signal = { .handle = sig, .point = point },
	};

	return _submit(fd, &s);
}

/* Submits @n commands to @queue, signalling binary syncobj @sig (0: none). */
static inline int submit_cmds(int fd, uint32_t queue, struct drm_vnpu_cmd *cmds, uint32_t n,
			      struct drm_vnpu_sync *waits, uint32_t nwaits, uint32_t sig)
{
	return submit_cmds_at(fd, queue, cmds, n, waits, nwaits, sig, 0);
}

/* A syncobj created with DRM_SYNCOBJ_CREATE_* @flags, or 0. */
static inline uint32_t syncobj_create_flags(int fd, uint32_t flags)
{
	struct drm_syncobj_create c = { .flags = flags };

	if (ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
		return 0;
	return c.handle;
}

static inline uint32_t syncobj_create(int fd)
{
	return syncobj_create_flags(fd, 0);
}

static inline int syncobj_wait(int fd, uint32_t handle, uint64_t timeout_ms)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&handle, .count_handles = 1,
		.timeout_nsec = now_ns() + timeout_ms * 1000000ULL,
	};

	return ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w) ? -errno : 0;
}

/* Status of a binary syncobj's fence: 1 signalled, 0 pending, <0 its error. */
static inline int syncobj_status(int fd, uint32_t handle)
{
	struct drm_syncobj_handle h = {
		.handle = handle,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
	};
	struct sync_file_info info = {};
	int ret;

	if (ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h))
		return -1000 - errno;
	ret = ioctl(h.fd, SYNC_IOC_FILE_INFO, &info) ? -2000 - errno : info.status;
	close(h.fd);
	return ret;
}

static inline struct drm_vnpu_cmd cmd_fill(uint64_t dst, uint64_t size, uint32_t pattern)
{
	return (struct drm_vnpu_cmd){ .opcode = DRM_VNPU_CMD_FILL, .dst = dst,
				      .size = size, .pattern = pattern };
}

static inline struct drm_vnpu_cmd cmd_copy(uint64_t dst, uint64_t src, uint64_t size)
{
	return (struct drm_vnpu_cmd){ .opcode = DRM_VNPU_CMD_COPY, .dst = dst,
				      .src = src, .size = size };
}

static inline struct drm_vnpu_cmd cmd_ts(uint64_t dst)
{
	return (struct drm_vnpu_cmd){ .opcode = DRM_VNPU_CMD_TIMESTAMP, .dst = dst };
}

static inline struct drm_vnpu_cmd cmd_delay(uint64_t ns)
{
	return (struct drm_vnpu_cmd){ .opcode = DRM_VNPU_CMD_DELAY, .size = ns };
}

static inline struct drm_vnpu_cmd cmd_kernel(uint64_t args)
{
	return (struct drm_vnpu_cmd){ .opcode = DRM_VNPU_CMD_KERNEL, .src = args,
				      .size = sizeof(struct drm_vnpu_kernel_args) };
}

/* KERNEL command running the tensor operator whose arguments are at @args. */
static inline struct drm_vnpu_cmd cmd_tensor(uint64_t args)
{
	return (struct drm_vnpu_cmd){ .opcode = DRM_VNPU_CMD_KERNEL, .src = args,
				      .size = sizeof(struct drm_vnpu_tensor_args) };
}

static inline uint64_t vram_used(int fd)
{
	uint64_t v = ~0ULL;

	_vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_USED, 0, &v);
	return v;
}

/* Polls until the device's VRAM use is @want, for up to @ms. */
static inline uint64_t wait_vram_used(int fd, uint64_t want, unsigned int ms)
{
	uint64_t v = vram_used(fd);

	while (v != want && ms--) {
		usleep(1000);
		v = vram_used(fd);
	}
	return v;
}

/* Writes @val to a file; 0 or -errno. */
static inline int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

#endif
