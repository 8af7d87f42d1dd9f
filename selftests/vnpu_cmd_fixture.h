/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The fixture of the KERNEL command tests (vnpu_kernel.c, vnpu_ops.c): the
 * first device, a compute queue, a syncobj and one host buffer of BUF_SIZE
 * bytes holding the command's arguments at offset 0 and the arrays from
 * ARR on; and the fp32 helpers of their CPU references. Include it after
 * kselftest_harness.h.
 */
#ifndef VNPU_CMD_FIXTURE_H
#define VNPU_CMD_FIXTURE_H

#include <math.h>

#include "vnpu_exec_utils.h"

#define BUF_SIZE (16ULL << 20)
#define ARR 4096ULL

/*
 * FIXTURE(name) with its setup and teardown; self->next is the next free
 * byte offset in self->b.
 */
#define CMD_FIXTURE(name)							\
	FIXTURE(name) {								\
		int fd;								\
		uint32_t queue;							\
		uint32_t sync;							\
		struct buf b;							\
		uint64_t next;							\
	};									\
	FIXTURE_SETUP(name)							\
	{									\
		self->fd = vnpu_open_nth(0);					\
		if (self->fd < 0)						\
			SKIP(return, "no vnpu device");				\
		ASSERT_EQ(0, queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE,	\
					  DRM_VNPU_PRIORITY_NORMAL, &self->queue)); \
		ASSERT_EQ(0, buf_create(self->fd, BUF_SIZE, DRM_VNPU_BO_HOST, &self->b)); \
		self->sync = syncobj_create(self->fd);				\
		ASSERT_NE(0, self->sync);					\
		self->next = ARR;						\
	}									\
	FIXTURE_TEARDOWN(name)							\
	{									\
		if (self->fd < 0)						\
			return;							\
		buf_destroy(self->fd, &self->b);				\
		close(self->fd);						\
	}

#define PTR(off) ((void *)((char *)self->b.map + (off)))
#define ADDR(off) (self->b.addr + (off))

/*
 * Runs @cmd, whose @size bytes of arguments @args are copied to the start
 * of @b first, and waits up to @timeout_ms. Returns the fence status (1 =
 * ok), the submit's -errno - 10000, or -20000 when the wait timed out.
 */
static inline int cmd_fixture_run(int fd, uint32_t queue, uint32_t sync, struct buf *b,
				  struct drm_vnpu_cmd cmd, const void *args, size_t size,
				  uint64_t timeout_ms)
{
	int ret;

	memcpy(b->map, args, size);
	ret = submit_cmds(fd, queue, &cmd, 1, NULL, 0, sync);
	if (ret)
		return ret - 10000;
	if (syncobj_wait(fd, sync, timeout_ms))
		return -20000;
	return syncobj_status(fd, sync);
}

static inline uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* Uniform in [-1, 1]. */
static inline float frand(unsigned int *seed)
{
	return (float)rand_r(seed) / RAND_MAX * 2.0f - 1.0f;
}

/* |got - want| <= abs_tol + rel_tol * |want|; NaN and infinities exactly. */
static inline int close_enough(double got, double want, double abs_tol, double rel_tol)
{
	if (isnan(want))
		return isnan(got);
	if (isinf(want))
		return got == want;
	return fabs(got - want) <= abs_tol + rel_tol * fabs(want);
}

#endif
