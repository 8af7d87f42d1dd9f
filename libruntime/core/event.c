// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Events. An event owns a binary syncobj in its context's file; recording
 * moves the fence of the stream's current point into it. A timing event
 * also owns an 8-byte host-pinned buffer the device writes its clock into.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>

#include "runtime.h"
#include "trace.h"

struct vnpu_event_obj {
	struct vnpu_obj obj;
	struct vnpu_ctx *ctx;		/* referenced */
	uint32_t flags;
	uint32_t syncobj;
	struct vnpu_alloc *clock;	/* timing events: the device clock at completion */
	/* Protects recorded. */
	pthread_mutex_t lock;
	int recorded;
};

static void event_release(struct vnpu_obj *obj)
{
	struct vnpu_event_obj *e = (struct vnpu_event_obj *)obj;

	/* A pending event's syncobj only drops a fence reference. */
	drmSyncobjDestroy(e->ctx->fd, e->syncobj);
	if (e->clock)
		vnpu_alloc_release(e->ctx, e->clock);
	pthread_mutex_destroy(&e->lock);
	vnpu_ctx_put(e->ctx);
	free(e);
}

static int event_get(struct vnpu_event handle, struct vnpu_event_obj **e)
{
	struct vnpu_obj *obj;
	int status = vnpu_obj_lookup(handle.handle, VNPU_OBJ_EVENT, &obj);

	if (status == VNPU_SUCCESS)
		*e = (struct vnpu_event_obj *)obj;
	return status;
}

int vnpu_event_create(struct vnpu_context handle, uint32_t flags, struct vnpu_event *out)
{
	VNPU_TRACE_API();
	struct vnpu_event_obj *e;
	struct vnpu_ctx *ctx;
	int status;

	if (!out || (flags & ~VNPU_EVENT_FLAGS))
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_ctx_get(handle, &ctx);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	e = calloc(1, sizeof(*e));
	if (!e) {
		vnpu_ctx_put(ctx);
		return vnpu_set_status(VNPU_ERROR_OUT_OF_HOST_MEMORY);
	}
	e->ctx = ctx;		/* the reference taken by vnpu_ctx_get() */
	e->flags = flags;
	pthread_mutex_init(&e->lock, NULL);
	e->obj.release = event_release;
	e->obj.created_by = __builtin_return_address(0);
	if (drmSyncobjCreate(ctx->fd, 0, &e->syncobj)) {
		status = vnpu_status_from_errno(errno);
		pthread_mutex_destroy(&e->lock);
		free(e);
		vnpu_ctx_put(ctx);
		return vnpu_set_status(status);
	}
	if (flags & VNPU_EVENT_TIMING)
		status = vnpu_alloc_create(ctx, sizeof(uint64_t), DRM_VNPU_BO_HOST,
					   e->obj.created_by, &e->clock);
	if (status == VNPU_SUCCESS)
		status = vnpu_handle_alloc(&e->obj, VNPU_OBJ_EVENT);
	if (status != VNPU_SUCCESS) {
		event_release(&e->obj);
		return vnpu_set_status(status);
	}
	out->handle = e->obj.handle;
	return VNPU_SUCCESS;
}

int vnpu_event_record(struct vnpu_event handle, struct vnpu_stream stream)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	struct vnpu_event_obj *e;
	uint64_t point;
	int status = event_get(handle, &e);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = vnpu_stream_get(stream, &s);
	if (status != VNPU_SUCCESS) {
		vnpu_obj_put(&e->obj);
		return vnpu_set_status(status);
	}
	if (s->ctx != e->ctx) {
		status = VNPU_ERROR_WRONG_CONTEXT;
		goto out;
	}

	pthread_mutex_lock(&s->lock);
	if (e->clock) {
		struct drm_vnpu_cmd cmd = { .opcode = DRM_VNPU_CMD_TIMESTAMP,
					    .dst = e->clock->devptr };

		status = vnpu_stream_submit_locked(s, &cmd, 1, "vnpu_event_record", &point);
	}
	/* The event names a point: it must exist in the driver now. */
	if (status == VNPU_SUCCESS)
		status = vnpu_stream_flush_locked(s);
	point = s->seq;
	if (status == VNPU_SUCCESS) {
		/* Nothing submitted yet: the event is complete at once. */
		if (point)
			status = drmSyncobjTransfer(s->ctx->fd, e->syncobj, 0, s->timeline, point, 0)
				 ? vnpu_status_from_errno(errno) : VNPU_SUCCESS;
		else
			status = drmSyncobjSignal(s->ctx->fd, &e->syncobj, 1)
				 ? vnpu_status_from_errno(errno) : VNPU_SUCCESS;
	}
	pthread_mutex_unlock(&s->lock);
	if (status == VNPU_SUCCESS) {
		pthread_mutex_lock(&e->lock);
		e->recorded = 1;
		pthread_mutex_unlock(&e->lock);
	}
out:
	vnpu_obj_put(&s->obj);
	vnpu_obj_put(&e->obj);
	return vnpu_set_status(status);
}

static int event_wait(struct vnpu_event_obj *e, int64_t timeout_ns)
{
	int recorded;

	pthread_mutex_lock(&e->lock);
	recorded = e->recorded;
	pthread_mutex_unlock(&e->lock);
	if (!recorded)
		return VNPU_SUCCESS;
	return vnpu_wait_binary(e->ctx->fd, e->syncobj, timeout_ns);
}

int vnpu_event_query(struct vnpu_event handle)
{
	struct vnpu_event_obj *e;
	int status = event_get(handle, &e);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = event_wait(e, 0);
	vnpu_obj_put(&e->obj);
	return status == VNPU_NOT_READY ? status : vnpu_set_status(status);
}

int vnpu_event_synchronize(struct vnpu_event handle, int64_t timeout_ns)
{
	VNPU_TRACE_API();
	struct vnpu_event_obj *e;
	int status;

	if (vnpu_in_callback())
		return vnpu_set_status(VNPU_ERROR_NOT_PERMITTED);
	status = event_get(handle, &e);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = event_wait(e, timeout_ns);
	if (status == VNPU_NOT_READY)
		status = VNPU_ERROR_TIMEOUT;
	vnpu_obj_put(&e->obj);
	return vnpu_set_status(status);
}

static int event_clock(struct vnpu_event_obj *e, uint64_t *clock)
{
	int status;

	if (!e->clock)
		return VNPU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&e->lock);
	status = e->recorded ? VNPU_SUCCESS : VNPU_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&e->lock);
	if (status == VNPU_SUCCESS)
		status = event_wait(e, 0);
	if (status == VNPU_SUCCESS)
		*clock = *(volatile uint64_t *)e->clock->host;
	return status;
}

int vnpu_event_elapsed_ns(struct vnpu_event start, struct vnpu_event end, int64_t *ns)
{
	struct vnpu_event_obj *a, *b;
	uint64_t ta = 0, tb = 0;
	int status;

	if (!ns)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = event_get(start, &a);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = event_get(end, &b);
	if (status != VNPU_SUCCESS) {
		vnpu_obj_put(&a->obj);
		return vnpu_set_status(status);
	}
	if (a->ctx->device != b->ctx->device)
		status = VNPU_ERROR_INVALID_VALUE;
	if (status == VNPU_SUCCESS)
		status = event_clock(a, &ta);
	if (status == VNPU_SUCCESS)
		status = event_clock(b, &tb);
	if (status == VNPU_SUCCESS)
		*ns = (int64_t)(tb - ta);
	vnpu_obj_put(&b->obj);
	vnpu_obj_put(&a->obj);
	return status == VNPU_NOT_READY ? status : vnpu_set_status(status);
}

/*
 * A syncobj in @fd holding the fence of @e: @e's own when the files match,
 * else a copy carried over as a sync_file (another context or device).
 */
static int import_fence(struct vnpu_event_obj *e, int fd, uint32_t *out)
{
	int sync_fd, status = VNPU_SUCCESS;

	if (drmSyncobjCreate(fd, 0, out))
		return vnpu_status_from_errno(errno);
	if (e->ctx->fd == fd) {
		if (drmSyncobjTransfer(fd, *out, 0, e->syncobj, 0, 0))
			status = vnpu_status_from_errno(errno);
	} else if (drmSyncobjExportSyncFile(e->ctx->fd, e->syncobj, &sync_fd)) {
		status = vnpu_status_from_errno(errno);
	} else {
		if (drmSyncobjImportSyncFile(fd, *out, sync_fd))
			status = vnpu_status_from_errno(errno);
		close(sync_fd);
	}
	if (status != VNPU_SUCCESS)
		drmSyncobjDestroy(fd, *out);
	return status;
}

int vnpu_stream_wait_event(struct vnpu_stream stream, struct vnpu_event handle)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	struct vnpu_event_obj *e;
	int recorded, status = event_get(handle, &e);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = vnpu_stream_get(stream, &s);
	if (status != VNPU_SUCCESS) {
		vnpu_obj_put(&e->obj);
		return vnpu_set_status(status);
	}
	pthread_mutex_lock(&e->lock);
	recorded = e->recorded;
	pthread_mutex_unlock(&e->lock);
	if (recorded) {
		pthread_mutex_lock(&s->lock);
		if (s->num_waits == DRM_VNPU_MAX_WAITS) {
			status = VNPU_ERROR_INVALID_VALUE;
		} else {
			struct drm_vnpu_sync *w = &s->waits[s->num_waits];

			status = import_fence(e, s->ctx->fd, &w->handle);
			if (status == VNPU_SUCCESS) {
				w->flags = 0;
				w->point = 0;
				s->num_waits++;
			}
		}
		pthread_mutex_unlock(&s->lock);
	}
	vnpu_obj_put(&s->obj);
	vnpu_obj_put(&e->obj);
	return vnpu_set_status(status);
}

int vnpu_event_destroy(struct vnpu_event handle)
{
	VNPU_TRACE_API();
	int status = vnpu_rt_enter();
	struct vnpu_obj *obj;

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	obj = vnpu_handle_remove(handle.handle, VNPU_OBJ_EVENT, __builtin_return_address(0));
	if (!obj)
		return vnpu_set_status(VNPU_ERROR_INVALID_HANDLE);
	vnpu_obj_put(obj);
	return VNPU_SUCCESS;
}
