// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Contexts. Each context opens the device anew, so the driver sees it as
 * its own client: its buffers, accounting and (later) queues belong to that
 * file, and closing the file is the driver's safe teardown.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime.h"
#include "trace.h"

/* The calling thread's current context; may go stale, checked on use. */
static _Thread_local struct vnpu_context current_ctx;

static void ctx_release(struct vnpu_obj *obj)
{
	struct vnpu_ctx *ctx = (struct vnpu_ctx *)obj;

	vnpu_log(VNPU_LOG_INFO, "context 0x%llx destroyed", (unsigned long long)obj->handle);
	/* Streams, events and callbacks hold references: all are gone by now. */
	vnpu_callbacks_stop(ctx);
	vnpu_ctx_free_allocs(ctx);
	free(ctx->streams);
	free(ctx->peers);
	/* Its pools are gone: each held a reference. */
	vnpu_addr_map_fini(&ctx->pool_map);
	/* The driver keeps what queued work still uses until that work is done. */
	close(ctx->fd);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

int vnpu_ctx_get(struct vnpu_context handle, struct vnpu_ctx **ctx)
{
	struct vnpu_obj *obj;
	int status = vnpu_obj_lookup(handle.handle, VNPU_OBJ_CONTEXT, &obj);

	if (status == VNPU_SUCCESS)
		*ctx = (struct vnpu_ctx *)obj;
	return status;
}

void vnpu_ctx_put(struct vnpu_ctx *ctx)
{
	vnpu_obj_put(&ctx->obj);
}

static int open_device(uint32_t device, int *fd)
{
	struct vnpu_rt_device dev;
	char path[64];
	int status = vnpu_rt_device(device, &dev);

	if (status != VNPU_SUCCESS)
		return status;
	snprintf(path, sizeof(path), "/dev/accel/accel%u", dev.accel_minor);
	*fd = open(path, O_RDWR | O_CLOEXEC);
	if (*fd < 0)
		return errno == ENOENT || errno == ENXIO ? VNPU_ERROR_DEVICE_LOST
							 : vnpu_status_from_errno(errno);
	return VNPU_SUCCESS;
}

int vnpu_ctx_create(uint32_t device, uint32_t flags, struct vnpu_context *out)
{
	VNPU_TRACE_API();
	void *caller = __builtin_return_address(0);
	struct vnpu_ctx *ctx;
	int status;

	if (!out || flags)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	if (device == VNPU_DEVICE_ANY) {
		status = vnpu_device_choose_nearest(&device);
		if (status != VNPU_SUCCESS)
			return vnpu_set_status(status);
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return vnpu_set_status(VNPU_ERROR_OUT_OF_HOST_MEMORY);
	status = open_device(device, &ctx->fd);
	if (status != VNPU_SUCCESS) {
		free(ctx);
		return vnpu_set_status(status);
	}
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->device = device;
	ctx->obj.release = ctx_release;
	ctx->obj.created_by = caller;
	status = vnpu_handle_alloc(&ctx->obj, VNPU_OBJ_CONTEXT);
	if (status != VNPU_SUCCESS) {
		close(ctx->fd);
		pthread_mutex_destroy(&ctx->lock);
		free(ctx);
		return vnpu_set_status(status);
	}
	out->handle = ctx->obj.handle;
	vnpu_log(VNPU_LOG_INFO, "context 0x%llx created on device %u",
		 (unsigned long long)out->handle, device);
	return VNPU_SUCCESS;
}

int vnpu_ctx_add_stream(struct vnpu_ctx *ctx, struct vnpu_stream_obj *s)
{
	struct vnpu_stream_obj **grown;

	pthread_mutex_lock(&ctx->lock);
	grown = realloc(ctx->streams, (ctx->num_streams + 1) * sizeof(*grown));
	if (grown) {
		ctx->streams = grown;
		ctx->streams[ctx->num_streams++] = s;
	}
	pthread_mutex_unlock(&ctx->lock);
	return grown ? VNPU_SUCCESS : VNPU_ERROR_OUT_OF_HOST_MEMORY;
}

void vnpu_ctx_remove_stream(struct vnpu_ctx *ctx, struct vnpu_stream_obj *s)
{
	pthread_mutex_lock(&ctx->lock);
	for (size_t i = 0; i < ctx->num_streams; i++) {
		if (ctx->streams[i] == s) {
			ctx->streams[i] = ctx->streams[--ctx->num_streams];
			break;
		}
	}
	if (ctx->default_stream == s)
		ctx->default_stream = NULL;
	pthread_mutex_unlock(&ctx->lock);
}

int vnpu_ctx_default_stream_obj(struct vnpu_ctx *ctx, struct vnpu_stream_obj **out)
{
	struct vnpu_stream_obj *s;
	int status = VNPU_SUCCESS;

	pthread_mutex_lock(&ctx->lock);
	s = ctx->default_stream;
	if (s)
		atomic_fetch_add(&s->obj.refs, 1);
	pthread_mutex_unlock(&ctx->lock);
	if (s) {
		*out = s;
		return VNPU_SUCCESS;
	}

	status = vnpu_stream_create_in(ctx, VNPU_PRIORITY_NORMAL, 0, NULL, &s);
	if (status != VNPU_SUCCESS)
		return status;
	s->is_default = 1;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->default_stream) {
		/* Another thread won the race: use its stream. */
		struct vnpu_stream_obj *mine = s;

		s = ctx->default_stream;
		atomic_fetch_add(&s->obj.refs, 1);
		pthread_mutex_unlock(&ctx->lock);
		vnpu_obj_put(vnpu_handle_remove(mine->obj.handle, VNPU_OBJ_STREAM, NULL));
		*out = s;
		return VNPU_SUCCESS;
	}
	ctx->default_stream = s;
	pthread_mutex_unlock(&ctx->lock);
	status = vnpu_ctx_add_stream(ctx, s);
	if (status != VNPU_SUCCESS) {
		vnpu_ctx_remove_stream(ctx, s);
		vnpu_obj_put(vnpu_handle_remove(s->obj.handle, VNPU_OBJ_STREAM, NULL));
		return status;
	}
	atomic_fetch_add(&s->obj.refs, 1);
	*out = s;
	return VNPU_SUCCESS;
}

int vnpu_ctx_default_stream(struct vnpu_context handle, struct vnpu_stream *out)
{
	struct vnpu_stream_obj *s;
	struct vnpu_ctx *ctx;
	int status;

	if (!out)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_ctx_get(handle, &ctx);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = vnpu_ctx_default_stream_obj(ctx, &s);
	if (status == VNPU_SUCCESS) {
		out->handle = s->obj.handle;
		vnpu_obj_put(&s->obj);
	}
	vnpu_ctx_put(ctx);
	return vnpu_set_status(status);
}

/* The hook of the layer that keeps pools in a context (mm/); may be NULL. */
static void (*ctx_teardown)(struct vnpu_ctx *ctx);

void vnpu_ctx_set_teardown_hook(void (*fn)(struct vnpu_ctx *ctx))
{
	ctx_teardown = fn;
}

/*
 * Takes every stream off the context and destroys it, draining it first
 * unless @abort, then (the teardown hook) the data caches and pools,
 * which hold streams. The
 * driver keeps what queued work uses either way.
 */
void vnpu_ctx_destroy_streams(struct vnpu_ctx *ctx, int abort)
{
	for (;;) {
		struct vnpu_stream_obj *s = NULL;

		pthread_mutex_lock(&ctx->lock);
		if (ctx->num_streams) {
			s = ctx->streams[--ctx->num_streams];
			if (ctx->default_stream == s)
				ctx->default_stream = NULL;
		}
		pthread_mutex_unlock(&ctx->lock);
		if (!s)
			break;
		if (!abort)
			vnpu_stream_synchronize_obj(s, -1);
		vnpu_obj_put(vnpu_handle_remove(s->obj.handle, VNPU_OBJ_STREAM, NULL));
	}
	if (ctx_teardown)
		ctx_teardown(ctx);
}

int vnpu_ctx_destroy(struct vnpu_context handle, uint32_t flags)
{
	VNPU_TRACE_API();
	int status = vnpu_rt_enter();
	struct vnpu_obj *obj;

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (flags & ~VNPU_DESTROY_ABORT)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	obj = vnpu_handle_remove(handle.handle, VNPU_OBJ_CONTEXT,
				 __builtin_return_address(0));
	if (!obj)
		return vnpu_set_status(VNPU_ERROR_INVALID_HANDLE);
	if (current_ctx.handle == handle.handle)
		current_ctx.handle = 0;
	vnpu_ctx_destroy_streams((struct vnpu_ctx *)obj, flags & VNPU_DESTROY_ABORT);
	/* Calls still using the context in other threads hold their own reference. */
	vnpu_obj_put(obj);
	return VNPU_SUCCESS;
}

int vnpu_ctx_set_current(struct vnpu_context handle)
{
	struct vnpu_ctx *ctx;
	int status;

	if (!handle.handle) {
		current_ctx.handle = 0;
		return VNPU_SUCCESS;
	}
	status = vnpu_ctx_get(handle, &ctx);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	current_ctx = handle;
	vnpu_ctx_put(ctx);
	return VNPU_SUCCESS;
}

int vnpu_ctx_get_current(struct vnpu_context *out)
{
	struct vnpu_ctx *ctx;

	if (!out)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	/* A context destroyed by another thread is no longer current. */
	if (current_ctx.handle && vnpu_ctx_get(current_ctx, &ctx) == VNPU_SUCCESS) {
		vnpu_ctx_put(ctx);
		*out = current_ctx;
	} else {
		current_ctx.handle = 0;
		out->handle = 0;
	}
	return VNPU_SUCCESS;
}

int vnpu_ctx_get_device(struct vnpu_context handle, uint32_t *device)
{
	struct vnpu_ctx *ctx;
	int status;

	if (!device)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_ctx_get(handle, &ctx);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	*device = ctx->device;
	vnpu_ctx_put(ctx);
	return VNPU_SUCCESS;
}

/* Synchronizes every stream of @ctx; the first error wins. */
int vnpu_ctx_synchronize(struct vnpu_ctx *ctx, int64_t timeout_ns)
{
	struct vnpu_stream_obj **streams;
	size_t n;
	int status = VNPU_SUCCESS;

	pthread_mutex_lock(&ctx->lock);
	n = ctx->num_streams;
	streams = calloc(n ? n : 1, sizeof(*streams));
	for (size_t i = 0; streams && i < n; i++) {
		streams[i] = ctx->streams[i];
		atomic_fetch_add(&streams[i]->obj.refs, 1);
	}
	pthread_mutex_unlock(&ctx->lock);
	if (!streams)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (size_t i = 0; i < n; i++) {
		int ret = vnpu_stream_synchronize_obj(streams[i], timeout_ns);

		if (status == VNPU_SUCCESS)
			status = ret;
		vnpu_obj_put(&streams[i]->obj);
	}
	free(streams);
	return status;
}

int vnpu_ctx_synchronize_all(struct vnpu_context handle, int64_t timeout_ns)
{
	VNPU_TRACE_API();
	struct vnpu_ctx *ctx;
	int status;

	if (vnpu_in_callback())
		return vnpu_set_status(VNPU_ERROR_NOT_PERMITTED);
	status = vnpu_ctx_get(handle, &ctx);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = vnpu_ctx_synchronize(ctx, timeout_ns);
	vnpu_ctx_put(ctx);
	return vnpu_set_status(status);
}

long vnpu_ctx_find_peer_locked(struct vnpu_ctx *ctx, uint64_t peer)
{
	for (size_t i = 0; i < ctx->num_peers; i++)
		if (ctx->peers[i] == peer)
			return (long)i;
	return -1;
}

int vnpu_ctx_peer_enabled(struct vnpu_ctx *ctx, struct vnpu_ctx *peer)
{
	int enabled;

	pthread_mutex_lock(&ctx->lock);
	enabled = vnpu_ctx_find_peer_locked(ctx, peer->obj.handle) >= 0;
	pthread_mutex_unlock(&ctx->lock);
	return enabled;
}
