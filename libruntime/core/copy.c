// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Copies and fills. Device memory is reached through the driver's COPY and
 * FILL commands. Host memory the device can address is a host-pinned
 * allocation of the context; any other host memory goes through a pinned
 * staging buffer, freed once the job that uses it is done.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>

#include "runtime.h"
#include "trace.h"

int vnpu_stream_defer_locked(struct vnpu_stream_obj *s, struct vnpu_alloc *a, uint64_t point)
{
	struct vnpu_deferred *d = calloc(1, sizeof(*d)), **tail = &s->deferred;

	if (!d)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	d->alloc = a;
	d->point = point;
	while (*tail)
		tail = &(*tail)->next;
	*tail = d;
	return VNPU_SUCCESS;
}

/* Releases the staging buffers of jobs up to @point; under s->lock or at release. */
void vnpu_stream_reap(struct vnpu_stream_obj *s, uint64_t point)
{
	while (s->deferred && s->deferred->point <= point) {
		struct vnpu_deferred *d = s->deferred;

		s->deferred = d->next;
		/* Even if the job still ran, the driver holds the buffer for it. */
		vnpu_alloc_release(s->ctx, d->alloc);
		free(d);
	}
}

/* Releases staging buffers the device is done with, without waiting. */
static void reap_done_locked(struct vnpu_stream_obj *s)
{
	uint64_t done = 0;

	if (s->deferred && !drmSyncobjQuery(s->ctx->fd, &s->timeline, &done, 1))
		vnpu_stream_reap(s, done);
}

/* Submits one command to @s, keeping @staging (may be NULL) until it is done. */
static int submit_one(struct vnpu_stream_obj *s, const struct drm_vnpu_cmd *cmd,
		      struct vnpu_alloc *staging, const char *op, uint64_t *point)
{
	uint64_t p = 0;
	int status;

	pthread_mutex_lock(&s->lock);
	reap_done_locked(s);
	status = vnpu_stream_submit_locked(s, cmd, 1, op, &p);
	if (status == VNPU_SUCCESS && staging) {
		status = vnpu_stream_defer_locked(s, staging, p);
		if (status != VNPU_SUCCESS) {
			/* Cannot track it: wait, then free it here. */
			pthread_mutex_unlock(&s->lock);
			vnpu_wait_point(s->ctx->fd, s->timeline, p, -1);
			vnpu_alloc_release(s->ctx, staging);
			pthread_mutex_lock(&s->lock);
			status = VNPU_SUCCESS;
		}
	} else if (staging) {
		vnpu_alloc_release(s->ctx, staging);
	}
	pthread_mutex_unlock(&s->lock);
	if (point)
		*point = p;
	/* VNPU_LAUNCH_BLOCKING=1 pins an asynchronous error to the call that made it. */
	if (status == VNPU_SUCCESS && vnpu_launch_blocking() && !vnpu_in_callback())
		status = vnpu_stream_synchronize_obj(s, -1);
	return status;
}

int vnpu_stream_submit_cmd(struct vnpu_stream_obj *s, const struct drm_vnpu_cmd *cmd,
			   const char *op)
{
	return submit_one(s, cmd, NULL, op, NULL);
}

static int htod(struct vnpu_stream_obj *s, uint64_t dst, const void *src, size_t size,
		const char *op)
{
	struct drm_vnpu_cmd cmd = { .opcode = DRM_VNPU_CMD_COPY, .dst = dst, .size = size };
	struct vnpu_alloc *staging = NULL;
	int status;

	if (!src || !size || !vnpu_ctx_owns_range(s->ctx, dst, size))
		return VNPU_ERROR_INVALID_VALUE;
	cmd.src = vnpu_ctx_host_devptr(s->ctx, src, size);
	if (!cmd.src) {
		/* Pageable memory: consumed now, so the caller may reuse it at once. */
		status = vnpu_alloc_create(s->ctx, size, DRM_VNPU_BO_HOST, NULL, &staging);
		if (status != VNPU_SUCCESS)
			return status;
		memcpy(staging->host, src, size);
		cmd.src = staging->devptr;
	}
	return submit_one(s, &cmd, staging, op, NULL);
}

/*
 * Device to host. Pageable memory is filled through a staging buffer once
 * the stream reaches the copy, so the call waits for that even when
 * asynchronous: the data is there when it returns. Host-pinned memory is
 * written by the device and the call does not wait.
 */
static int dtoh(struct vnpu_stream_obj *s, void *dst, uint64_t src, size_t size, const char *op)
{
	struct drm_vnpu_cmd cmd = { .opcode = DRM_VNPU_CMD_COPY, .src = src, .size = size };
	struct vnpu_alloc *staging = NULL;
	uint64_t point = 0;
	int status;

	if (!dst || !size || !vnpu_ctx_owns_range(s->ctx, src, size))
		return VNPU_ERROR_INVALID_VALUE;
	cmd.dst = vnpu_ctx_host_devptr(s->ctx, dst, size);
	if (cmd.dst)
		return submit_one(s, &cmd, NULL, op, NULL);

	if (vnpu_in_callback())
		return VNPU_ERROR_NOT_PERMITTED;
	status = vnpu_alloc_create(s->ctx, size, DRM_VNPU_BO_HOST, NULL, &staging);
	if (status != VNPU_SUCCESS)
		return status;
	cmd.dst = staging->devptr;
	pthread_mutex_lock(&s->lock);
	status = vnpu_stream_submit_locked(s, &cmd, 1, op, &point);
	/* The copy-out waits for the point, so an open batch goes now. */
	if (status == VNPU_SUCCESS)
		status = vnpu_stream_flush_locked(s);
	pthread_mutex_unlock(&s->lock);
	if (status == VNPU_SUCCESS)
		status = vnpu_wait_point(s->ctx->fd, s->timeline, point, -1);
	if (status == VNPU_SUCCESS)
		memcpy(dst, staging->host, size);
	vnpu_alloc_release(s->ctx, staging);
	return status;
}

static int dtod(struct vnpu_stream_obj *s, uint64_t dst, uint64_t src, size_t size,
		const char *op)
{
	struct drm_vnpu_cmd cmd = { .opcode = DRM_VNPU_CMD_COPY, .dst = dst, .src = src,
				    .size = size };

	if (!size || !vnpu_ctx_owns_range(s->ctx, dst, size) ||
	    !vnpu_ctx_owns_range(s->ctx, src, size))
		return VNPU_ERROR_INVALID_VALUE;
	return submit_one(s, &cmd, NULL, op, NULL);
}

static int memset32(struct vnpu_stream_obj *s, uint64_t dst, uint32_t value, size_t count,
		    const char *op)
{
	struct drm_vnpu_cmd cmd = { .opcode = DRM_VNPU_CMD_FILL, .dst = dst, .pattern = value };

	if (!count || count > SIZE_MAX / 4 || (dst & 3) ||
	    !vnpu_ctx_owns_range(s->ctx, dst, (uint64_t)count * 4))
		return VNPU_ERROR_INVALID_VALUE;
	cmd.size = (uint64_t)count * 4;
	return submit_one(s, &cmd, NULL, op, NULL);
}

int vnpu_memcpy_htod_async(struct vnpu_stream handle, uint64_t dst, const void *src, size_t size)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = vnpu_stream_get(handle, &s);

	if (status == VNPU_SUCCESS) {
		status = htod(s, dst, src, size, __func__);
		vnpu_obj_put(&s->obj);
	}
	return vnpu_set_status(status);
}

int vnpu_memcpy_dtoh_async(struct vnpu_stream handle, void *dst, uint64_t src, size_t size)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = vnpu_stream_get(handle, &s);

	if (status == VNPU_SUCCESS) {
		status = dtoh(s, dst, src, size, __func__);
		vnpu_obj_put(&s->obj);
	}
	return vnpu_set_status(status);
}

int vnpu_memcpy_dtod_async(struct vnpu_stream handle, uint64_t dst, uint64_t src, size_t size)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = vnpu_stream_get(handle, &s);

	if (status == VNPU_SUCCESS) {
		status = dtod(s, dst, src, size, __func__);
		vnpu_obj_put(&s->obj);
	}
	return vnpu_set_status(status);
}

int vnpu_memset_d32_async(struct vnpu_stream handle, uint64_t dst, uint32_t value, size_t count)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = vnpu_stream_get(handle, &s);

	if (status == VNPU_SUCCESS) {
		status = memset32(s, dst, value, count, __func__);
		vnpu_obj_put(&s->obj);
	}
	return vnpu_set_status(status);
}

/* The default stream of @handle's context, referenced, for synchronous calls. */
static int sync_stream(struct vnpu_context handle, struct vnpu_stream_obj **s)
{
	struct vnpu_ctx *ctx;
	int status;

	if (vnpu_in_callback())
		return VNPU_ERROR_NOT_PERMITTED;
	status = vnpu_ctx_get(handle, &ctx);
	if (status != VNPU_SUCCESS)
		return status;
	status = vnpu_ctx_default_stream_obj(ctx, s);
	vnpu_ctx_put(ctx);
	return status;
}

static int finish(struct vnpu_stream_obj *s, int status)
{
	if (status == VNPU_SUCCESS)
		status = vnpu_stream_synchronize_obj(s, -1);
	vnpu_obj_put(&s->obj);
	return vnpu_set_status(status);
}

int vnpu_memcpy_htod(struct vnpu_context ctx, uint64_t dst, const void *src, size_t size)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = sync_stream(ctx, &s);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	return finish(s, htod(s, dst, src, size, __func__));
}

int vnpu_memcpy_dtoh(struct vnpu_context ctx, void *dst, uint64_t src, size_t size)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = sync_stream(ctx, &s);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	return finish(s, dtoh(s, dst, src, size, __func__));
}

int vnpu_memcpy_dtod(struct vnpu_context ctx, uint64_t dst, uint64_t src, size_t size)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = sync_stream(ctx, &s);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	return finish(s, dtod(s, dst, src, size, __func__));
}

int vnpu_memset_d32(struct vnpu_context ctx, uint64_t dst, uint32_t value, size_t count)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = sync_stream(ctx, &s);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	return finish(s, memset32(s, dst, value, count, __func__));
}

int vnpu_launch_delay(struct vnpu_stream handle, uint64_t ns)
{
	VNPU_TRACE_API();
	struct drm_vnpu_cmd cmd = { .opcode = DRM_VNPU_CMD_DELAY, .size = ns };
	struct vnpu_stream_obj *s;
	int status;

	if (!ns || ns > DRM_VNPU_MAX_DELAY_NS)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_stream_get(handle, &s);
	if (status == VNPU_SUCCESS) {
		status = submit_one(s, &cmd, NULL, __func__, NULL);
		vnpu_obj_put(&s->obj);
	}
	return vnpu_set_status(status);
}

/*
 * Makes the allocation of @src_ctx holding [src, src + size) reachable from
 * @ctx: a PRIME export and import, so the driver validates it as a buffer
 * of @ctx's file. Returns the address to use in @ctx and the imported handle
 * (0 when @src_ctx is @ctx), which the caller closes after submitting: the
 * job keeps the buffer alive.
 */
int vnpu_import_range(struct vnpu_ctx *ctx, struct vnpu_ctx *src_ctx, uint64_t src,
		      uint64_t size, uint64_t *addr, uint32_t *handle)
{
	struct drm_vnpu_bo_info info = { 0 };
	uint64_t base = 0;
	uint32_t src_handle = 0;
	int fd, status = VNPU_SUCCESS;

	*handle = 0;
	if (src_ctx == ctx) {
		*addr = src;
		return vnpu_ctx_owns_range(ctx, src, size) ? VNPU_SUCCESS : VNPU_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&src_ctx->lock);
	for (size_t i = 0; i < src_ctx->num_allocs; i++) {
		struct vnpu_alloc *a = src_ctx->allocs[i];

		if (src >= a->devptr && size <= a->size && src - a->devptr <= a->size - size) {
			src_handle = a->gem_handle;
			base = a->devptr;
			break;
		}
	}
	/* Exported under the lock so the buffer cannot be freed meanwhile. */
	if (!src_handle)
		status = VNPU_ERROR_INVALID_VALUE;
	else if (drmPrimeHandleToFD(src_ctx->fd, src_handle, DRM_CLOEXEC | DRM_RDWR, &fd))
		status = vnpu_status_from_errno(errno);
	pthread_mutex_unlock(&src_ctx->lock);
	if (status != VNPU_SUCCESS)
		return status;

	if (drmPrimeFDToHandle(ctx->fd, fd, handle))
		status = vnpu_status_from_errno(errno);
	close(fd);
	if (status != VNPU_SUCCESS)
		return status;
	info.handle = *handle;
	if (drmIoctl(ctx->fd, DRM_IOCTL_VNPU_BO_INFO, &info)) {
		status = vnpu_status_from_errno(errno);
		drmCloseBufferHandle(ctx->fd, *handle);
		*handle = 0;
		return status;
	}
	*addr = info.device_addr + (src - base);
	return VNPU_SUCCESS;
}

int vnpu_stream_copy_peer(struct vnpu_stream_obj *s, uint64_t dst, struct vnpu_ctx *src_ctx,
			  uint64_t src, size_t size, const char *op)
{
	struct drm_vnpu_cmd cmd = { .opcode = DRM_VNPU_CMD_COPY, .dst = dst, .size = size };
	uint32_t imported = 0;
	uint64_t addr = 0;
	int status;

	if (!size || !vnpu_ctx_owns_range(s->ctx, dst, size))
		return VNPU_ERROR_INVALID_VALUE;
	status = vnpu_import_range(s->ctx, src_ctx, src, size, &addr, &imported);
	cmd.src = addr;
	if (status == VNPU_SUCCESS)
		status = submit_one(s, &cmd, NULL, op, NULL);
	if (imported)
		drmCloseBufferHandle(s->ctx->fd, imported);
	return status;
}

/* A peer copy; contexts of two devices need peer access from @s's context. */
static int peer(struct vnpu_stream_obj *s, uint64_t dst, struct vnpu_context src_handle,
		uint64_t src, size_t size, const char *op)
{
	struct vnpu_ctx *src_ctx;
	int status = vnpu_ctx_get(src_handle, &src_ctx);

	if (status != VNPU_SUCCESS)
		return status;
	if (src_ctx->device != s->ctx->device && !vnpu_ctx_peer_enabled(s->ctx, src_ctx))
		status = VNPU_ERROR_PEER_ACCESS_NOT_ENABLED;
	else
		status = vnpu_stream_copy_peer(s, dst, src_ctx, src, size, op);
	vnpu_ctx_put(src_ctx);
	return status;
}

int vnpu_memcpy_peer_async(struct vnpu_stream stream, uint64_t dst, struct vnpu_context src_ctx,
			   uint64_t src, size_t size)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = vnpu_stream_get(stream, &s);

	if (status == VNPU_SUCCESS) {
		status = peer(s, dst, src_ctx, src, size, __func__);
		vnpu_obj_put(&s->obj);
	}
	return vnpu_set_status(status);
}

int vnpu_memcpy_peer(struct vnpu_context ctx, uint64_t dst, struct vnpu_context src_ctx,
		     uint64_t src, size_t size)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	int status = sync_stream(ctx, &s);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	return finish(s, peer(s, dst, src_ctx, src, size, __func__));
}
