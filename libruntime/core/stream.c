// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Streams. A stream is a driver queue plus a timeline syncobj: the Nth job
 * submitted to the stream signals point N. Submissions to one stream are
 * serialized by the stream's lock, so work from several threads runs in
 * the order their calls took the lock, and synchronizing means waiting for
 * the last point.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include <xf86drm.h>

#include "runtime.h"
#include "trace.h"

/*
 * Stream objects are type-stable: vnpu_stream_get() takes its reference
 * without the handle table's lock (vnpu_obj_lookup_stable()), so it may
 * read the reference count of a stream another thread is releasing at
 * that moment. A released stream is not freed but goes to spare_streams,
 * its count at zero, where the next stream created takes it back. The
 * memory so kept is bounded by the peak number of streams alive at once.
 */
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;	/* protects spare_streams */
static struct vnpu_stream_obj *spare_streams;	/* linked by their ctx field */

/* A zeroed stream object, its reference count untouched (zero), or NULL. */
static struct vnpu_stream_obj *stream_obj_new(void)
{
	const size_t keep = offsetof(struct vnpu_obj, type);
	struct vnpu_stream_obj *s;

	pthread_mutex_lock(&spare_lock);
	s = spare_streams;
	if (s)
		spare_streams = (struct vnpu_stream_obj *)s->ctx;
	pthread_mutex_unlock(&spare_lock);
	if (!s)
		return calloc(1, sizeof(*s));
	/* All but @refs: a stale lookup may be reading it right now. */
	memset((char *)s + keep, 0, sizeof(*s) - keep);
	return s;
}

/* Keeps @s, torn down, its count at zero, for stream_obj_new(). */
static void stream_obj_retire(struct vnpu_stream_obj *s)
{
	pthread_mutex_lock(&spare_lock);
	s->ctx = (struct vnpu_ctx *)spare_streams;
	spare_streams = s;
	pthread_mutex_unlock(&spare_lock);
}

static void stream_release(struct vnpu_obj *obj)
{
	struct vnpu_stream_obj *s = (struct vnpu_stream_obj *)obj;
	struct drm_vnpu_queue_destroy destroy = { .queue_id = s->queue_id };

	vnpu_log(VNPU_LOG_INFO, "stream 0x%llx destroyed", (unsigned long long)obj->handle);
	if (s->trace)
		vnpu_trace_stream_fini(s);
	/* Jobs already queued still run; the driver keeps what they use. */
	drmIoctl(s->ctx->fd, DRM_IOCTL_VNPU_QUEUE_DESTROY, &destroy);
	vnpu_stream_reap(s, UINT64_MAX);
	if (s->kernel_args)
		vnpu_alloc_release(s->ctx, s->kernel_args);
	drmSyncobjDestroy(s->ctx->fd, s->timeline);
	pthread_mutex_destroy(&s->lock);
	vnpu_ctx_put(s->ctx);
	free(s->batch);
	/* Not freed: see spare_streams. */
	stream_obj_retire(s);
}

int vnpu_stream_get(struct vnpu_stream handle, struct vnpu_stream_obj **s)
{
	struct vnpu_obj *obj;
	int status = vnpu_obj_lookup_stable(handle.handle, VNPU_OBJ_STREAM, &obj);

	if (status == VNPU_SUCCESS)
		*s = (struct vnpu_stream_obj *)obj;
	return status;
}

static int create_queue(struct vnpu_ctx *ctx, int priority, uint32_t flags, uint32_t *queue_id)
{
	static const uint32_t driver_priority[] = {
		DRM_VNPU_PRIORITY_LOW, DRM_VNPU_PRIORITY_NORMAL, DRM_VNPU_PRIORITY_HIGH,
	};
	struct drm_vnpu_queue_create create = {
		.engine_class = flags & VNPU_STREAM_COPY ? DRM_VNPU_ENGINE_COPY
							 : DRM_VNPU_ENGINE_COMPUTE,
		.priority = driver_priority[priority - VNPU_PRIORITY_LOW],
	};

	if (drmIoctl(ctx->fd, DRM_IOCTL_VNPU_QUEUE_CREATE, &create))
		return errno == EMFILE ? VNPU_ERROR_TOO_MANY_STREAMS : vnpu_status_from_errno(errno);
	*queue_id = create.queue_id;
	return VNPU_SUCCESS;
}

/* Creates a stream of @ctx; the caller holds a reference on @ctx. */
int vnpu_stream_create_in(struct vnpu_ctx *ctx, int priority, uint32_t flags, void *caller,
			  struct vnpu_stream_obj **out)
{
	struct vnpu_stream_obj *s;
	int status;

	if (priority < VNPU_PRIORITY_LOW || priority > VNPU_PRIORITY_HIGH ||
	    (flags & ~VNPU_STREAM_FLAGS))
		return VNPU_ERROR_INVALID_VALUE;
	s = stream_obj_new();
	if (!s)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	status = create_queue(ctx, priority, flags, &s->queue_id);
	if (status == VNPU_SUCCESS && drmSyncobjCreate(ctx->fd, 0, &s->timeline)) {
		struct drm_vnpu_queue_destroy destroy = { .queue_id = s->queue_id };

		drmIoctl(ctx->fd, DRM_IOCTL_VNPU_QUEUE_DESTROY, &destroy);
		status = vnpu_status_from_errno(errno);
	}
	if (status != VNPU_SUCCESS) {
		stream_obj_retire(s);
		return status;
	}
	pthread_mutex_init(&s->lock, NULL);
	atomic_fetch_add(&ctx->obj.refs, 1);
	s->ctx = ctx;
	s->priority = priority;
	s->flags = flags;
	s->obj.release = stream_release;
	s->obj.created_by = caller;
	status = vnpu_handle_alloc(&s->obj, VNPU_OBJ_STREAM);
	if (status != VNPU_SUCCESS) {
		stream_release(&s->obj);
		return status;
	}
	*out = s;
	if (vnpu_tracing)
		vnpu_trace_stream_init(s);
	vnpu_log(VNPU_LOG_INFO, "stream 0x%llx created in context 0x%llx, priority %d",
		 (unsigned long long)s->obj.handle, (unsigned long long)ctx->obj.handle, priority);
	return VNPU_SUCCESS;
}

int vnpu_stream_create(struct vnpu_context handle, int priority, uint32_t flags,
		       struct vnpu_stream *out)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	struct vnpu_ctx *ctx;
	int status;

	if (!out)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_ctx_get(handle, &ctx);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = vnpu_stream_create_in(ctx, priority, flags, __builtin_return_address(0), &s);
	if (status == VNPU_SUCCESS) {
		status = vnpu_ctx_add_stream(ctx, s);
		if (status == VNPU_SUCCESS)
			out->handle = s->obj.handle;
		else
			vnpu_obj_put(vnpu_handle_remove(s->obj.handle, VNPU_OBJ_STREAM, NULL));
	}
	vnpu_ctx_put(ctx);
	return vnpu_set_status(status);
}

static int wait_result(int fd, uint32_t syncobj, uint64_t point, int64_t timeout_ns, int ret);

/* Absolute CLOCK_MONOTONIC deadline for a relative timeout; <0 waits forever. */
static int64_t deadline(int64_t timeout_ns)
{
	struct timespec now;

	if (timeout_ns < 0)
		return INT64_MAX;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (timeout_ns > INT64_MAX - (int64_t)now.tv_sec * 1000000000 - now.tv_nsec)
		return INT64_MAX;
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + timeout_ns;
}

/*
 * Waits for point @point of @syncobj on @fd. Returns VNPU_SUCCESS,
 * VNPU_ERROR_NOT_READY (timeout 0), VNPU_ERROR_TIMEOUT, or the job's error.
 */
int vnpu_wait_point(int fd, uint32_t syncobj, uint64_t point, int64_t timeout_ns)
{
	int ret;

	if (!point)
		return VNPU_SUCCESS;
	ret = drmSyncobjTimelineWait(fd, &syncobj, &point, 1, deadline(timeout_ns),
				     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL);
	return wait_result(fd, syncobj, point, timeout_ns, ret);
}

int vnpu_wait_binary(int fd, uint32_t syncobj, int64_t timeout_ns)
{
	int ret = drmSyncobjWait(fd, &syncobj, 1, deadline(timeout_ns),
				 DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL);

	return wait_result(fd, syncobj, 0, timeout_ns, ret);
}

static int wait_result(int fd, uint32_t syncobj, uint64_t point, int64_t timeout_ns, int ret)
{
	if (ret == -ETIME)
		return timeout_ns == 0 ? VNPU_ERROR_NOT_READY : VNPU_ERROR_TIMEOUT;
	if (ret)
		return vnpu_status_from_errno(-ret);
	return vnpu_point_status(fd, syncobj, point);
}

/* Status of the fences behind a sync_file: the first error of any of them. */
static int sync_file_status(int sync_fd)
{
	struct sync_file_info info = { 0 };
	struct sync_fence_info *fences;
	int status = VNPU_SUCCESS;

	if (ioctl(sync_fd, SYNC_IOC_FILE_INFO, &info) || !info.num_fences)
		return VNPU_SUCCESS;
	fences = calloc(info.num_fences, sizeof(*fences));
	if (!fences)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	info.sync_fence_info = (uintptr_t)fences;
	/*
	 * A timeline point is a dma_fence_chain, which does not carry its
	 * job's error itself: the per-fence list (unwrapped) does.
	 */
	if (!ioctl(sync_fd, SYNC_IOC_FILE_INFO, &info)) {
		for (uint32_t i = 0; i < info.num_fences && status == VNPU_SUCCESS; i++) {
			if (fences[i].status >= 0)
				continue;
			status = fences[i].status == -ETIMEDOUT ? VNPU_ERROR_JOB_TIMEOUT
			       : fences[i].status == -ENODEV ? VNPU_ERROR_DEVICE_LOST
			       : VNPU_ERROR_DEVICE_FAULT;
		}
	}
	free(fences);
	return status;
}

/*
 * The error a signalled point carries (point 0: a binary syncobj's fence):
 * the fence is moved to a temporary binary syncobj and exported as a
 * sync_file, whose fence list has the status of each job behind it.
 */
int vnpu_point_status(int fd, uint32_t syncobj, uint64_t point)
{
	uint32_t tmp;
	int sync_fd, status = VNPU_SUCCESS;

	if (drmSyncobjCreate(fd, 0, &tmp))
		return vnpu_status_from_errno(errno);
	if (!drmSyncobjTransfer(fd, tmp, 0, syncobj, point, 0) &&
	    !drmSyncobjExportSyncFile(fd, tmp, &sync_fd)) {
		status = sync_file_status(sync_fd);
		close(sync_fd);
	}
	drmSyncobjDestroy(fd, tmp);
	return status;
}

/* Submits one job to the driver now; under s->lock. */
static int submit_now_locked(struct vnpu_stream_obj *s, const struct drm_vnpu_cmd *cmds,
			     uint32_t count, const char *op, uint64_t *point)
{
	const struct drm_vnpu_cmd *traced = NULL;
	int64_t t0 = 0;
	int status = s->error.status;

	if (s->trace) {
		t0 = vnpu_trace_now();
		traced = vnpu_trace_wrap(s, cmds, &count);
		if (traced)
			cmds = traced;
	}
	struct drm_vnpu_submit submit = {
		.queue_id = s->queue_id,
		.cmds = (uintptr_t)cmds,
		.cmd_count = count,
		.waits = (uintptr_t)s->waits,
		.wait_count = s->num_waits,
		.signal = { .handle = s->timeline, .point = s->seq + 1 },
	};

	/*
	 * A stream whose work failed stops taking work: the error is sticky.
	 * The driver refuses ranges outside the file's buffers (EACCES) and
	 * operator arguments it checks itself (EINVAL): the caller's values.
	 */
	if (status == VNPU_SUCCESS && drmIoctl(s->ctx->fd, DRM_IOCTL_VNPU_SUBMIT, &submit))
		status = errno == EACCES || errno == EINVAL ? VNPU_ERROR_INVALID_VALUE :
							       vnpu_status_from_errno(errno);
	if (status == VNPU_SUCCESS) {
		/* Atomic: vnpu_stream_point() reads it without s->lock. */
		__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
		*point = s->seq;
		s->last_op = op;
	}
	/* The driver took the wait fences (or refused); the temporaries go. */
	for (uint32_t i = 0; i < s->num_waits; i++)
		drmSyncobjDestroy(s->ctx->fd, s->waits[i].handle);
	s->num_waits = 0;
	if (s->trace)
		vnpu_trace_submitted(s, op, traced != NULL, status == VNPU_SUCCESS ? s->seq : 0, t0);
	vnpu_log(VNPU_LOG_DEBUG, "stream 0x%llx: %s, %u commands: %s",
		 (unsigned long long)s->obj.handle, op, count, vnpu_status_name(status));
	return status;
}

/*
 * Submits the commands gathered by a batch as one job; under s->lock.
 * Everything that waits for or names a point of the stream calls this
 * first, so a batch never holds back a point someone waits for.
 */
int vnpu_stream_flush_locked(struct vnpu_stream_obj *s)
{
	uint64_t point;
	int status;

	if (!s->batch_count)
		return VNPU_SUCCESS;
	status = submit_now_locked(s, s->batch, s->batch_count,
				   s->batch_count == 1 ? s->batch_op : "a batch of operations",
				   &point);
	s->batch_count = 0;
	return status;
}

/*
 * Submits @cmds to @s after the waits queued by vnpu_stream_wait_event(),
 * or adds them to the open batch. Under s->lock. @point is the point that
 * signals when the commands are done.
 */
int vnpu_stream_submit_locked(struct vnpu_stream_obj *s, const struct drm_vnpu_cmd *cmds,
			      uint32_t count, const char *op, uint64_t *point)
{
	int status;

	if (!s->batching)
		return submit_now_locked(s, cmds, count, op, point);
	if (s->error.status)
		return s->error.status;
	if (s->batch_count + count > DRM_VNPU_MAX_CMDS) {
		status = vnpu_stream_flush_locked(s);
		if (status != VNPU_SUCCESS)
			return status;
	}
	memcpy(&s->batch[s->batch_count], cmds, count * sizeof(*cmds));
	s->batch_count += count;
	s->batch_op = op;
	*point = s->seq + 1;
	return VNPU_SUCCESS;
}

int vnpu_stream_begin_batch(struct vnpu_stream handle)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = vnpu_stream_get(handle, &s);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	pthread_mutex_lock(&s->lock);
	if (s->batching) {
		status = VNPU_ERROR_INVALID_VALUE;
	} else if (!s->batch) {
		s->batch = calloc(DRM_VNPU_MAX_CMDS, sizeof(*s->batch));
		if (!s->batch)
			status = VNPU_ERROR_OUT_OF_HOST_MEMORY;
	}
	if (status == VNPU_SUCCESS)
		s->batching = 1;
	pthread_mutex_unlock(&s->lock);
	vnpu_obj_put(&s->obj);
	return vnpu_set_status(status);
}

int vnpu_stream_end_batch(struct vnpu_stream handle)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = vnpu_stream_get(handle, &s);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	pthread_mutex_lock(&s->lock);
	if (!s->batching)
		status = VNPU_ERROR_INVALID_VALUE;
	else
		status = vnpu_stream_flush_locked(s);
	s->batching = 0;
	pthread_mutex_unlock(&s->lock);
	vnpu_obj_put(&s->obj);
	return vnpu_set_status(status);
}

int vnpu_stream_synchronize_obj(struct vnpu_stream_obj *s, int64_t timeout_ns)
{
	uint64_t point;
	int status;

	if (vnpu_in_callback())
		return VNPU_ERROR_NOT_PERMITTED;
	pthread_mutex_lock(&s->lock);
	status = vnpu_stream_flush_locked(s);
	point = s->seq;
	if (status == VNPU_SUCCESS)
		status = s->error.status;
	pthread_mutex_unlock(&s->lock);
	if (status != VNPU_SUCCESS)
		return status;

	status = vnpu_wait_point(s->ctx->fd, s->timeline, point, timeout_ns);
	pthread_mutex_lock(&s->lock);
	if (status != VNPU_ERROR_NOT_READY && status != VNPU_ERROR_TIMEOUT) {
		vnpu_stream_reap(s, point);
		if (s->trace)
			vnpu_trace_collect(s, point);
		if (status != VNPU_SUCCESS && !s->error.status) {
			s->error.status = status;
			s->error.point = point;
			s->error.operation = point == s->seq ? s->last_op : "an earlier operation";
			vnpu_log(VNPU_LOG_ERROR, "stream 0x%llx: %s failed: %s",
				 (unsigned long long)s->obj.handle, s->error.operation,
				 vnpu_status_name(status));
		}
		status = s->error.status;
	}
	pthread_mutex_unlock(&s->lock);
	return status;
}

int vnpu_stream_synchronize(struct vnpu_stream handle, int64_t timeout_ns)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = vnpu_stream_get(handle, &s);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = vnpu_stream_synchronize_obj(s, timeout_ns);
	vnpu_obj_put(&s->obj);
	return vnpu_set_status(status);
}

int vnpu_stream_query(struct vnpu_stream handle)
{
	struct vnpu_stream_obj *s;
	uint64_t point;
	int status = vnpu_stream_get(handle, &s);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	pthread_mutex_lock(&s->lock);
	status = vnpu_stream_flush_locked(s);
	point = s->seq;
	if (status == VNPU_SUCCESS)
		status = s->error.status;
	pthread_mutex_unlock(&s->lock);
	if (status == VNPU_SUCCESS)
		status = vnpu_wait_point(s->ctx->fd, s->timeline, point, 0);
	vnpu_obj_put(&s->obj);
	/* NOT_READY is an answer, not an error: it does not set the last error. */
	return status == VNPU_ERROR_NOT_READY ? status : vnpu_set_status(status);
}

int vnpu_stream_destroy(struct vnpu_stream handle, uint32_t flags)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status;

	if (flags & ~VNPU_DESTROY_ABORT)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_stream_get(handle, &s);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (s->is_default) {
		vnpu_obj_put(&s->obj);
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	}
	if (!(flags & VNPU_DESTROY_ABORT))
		vnpu_stream_synchronize_obj(s, -1);
	vnpu_ctx_remove_stream(s->ctx, s);
	vnpu_obj_put(vnpu_handle_remove(handle.handle, VNPU_OBJ_STREAM,
					 __builtin_return_address(0)));
	vnpu_obj_put(&s->obj);
	return VNPU_SUCCESS;
}

int vnpu_stream_get_context(struct vnpu_stream handle, struct vnpu_context *ctx)
{
	struct vnpu_stream_obj *s;
	int status;

	if (!ctx)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_stream_get(handle, &s);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	ctx->handle = s->ctx->obj.handle;
	vnpu_obj_put(&s->obj);
	return VNPU_SUCCESS;
}

int vnpu_stream_get_error(struct vnpu_stream handle, struct vnpu_stream_error *error)
{
	struct vnpu_stream_obj *s;
	int status;

	if (!error)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_stream_get(handle, &s);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	pthread_mutex_lock(&s->lock);
	*error = s->error;
	if (!error->operation)
		error->operation = "";
	pthread_mutex_unlock(&s->lock);
	vnpu_obj_put(&s->obj);
	return VNPU_SUCCESS;
}
