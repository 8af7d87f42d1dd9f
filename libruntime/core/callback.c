// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Host callbacks. Each context has one callback thread, started on first
 * use. Every pending callback registers an eventfd on its stream's
 * timeline point (DRM_IOCTL_SYNCOBJ_EVENTFD), so the thread sleeps in
 * poll() until the device reaches a point: no polling, no thread blocked
 * per stream, and the device never waits for the host.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <xf86drm.h>

#include "runtime.h"
#include "trace.h"

/*
 * DRM_IOCTL_SYNCOBJ_EVENTFD exists since Linux 6.6; libdrm 2.4.114's drm.h
 * predates it, so the layout and number are spelled out here.
 */
struct vnpu_syncobj_eventfd {
	uint32_t handle;
	uint32_t flags;
	uint64_t point;
	int32_t fd;
	uint32_t pad;
};

#define VNPU_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct vnpu_syncobj_eventfd)

struct vnpu_callback {
	struct vnpu_stream_obj *stream;	/* referenced */
	uint64_t point;
	int event_fd;
	void (*fn)(void *user_data, int status);
	void *user_data;
	struct vnpu_callback *next;
};

struct vnpu_callbacks {
	pthread_t thread;
	int wake_fd;		/* eventfd: new callbacks or stop */
	/* Protects head, tail and stop. */
	pthread_mutex_t lock;
	struct vnpu_callback *head, *tail;	/* in order of addition */
	int stop;
	int orphan;	/* the context is gone; the thread frees this on exit */
};

static _Thread_local int in_callback;

int vnpu_in_callback(void)
{
	return in_callback;
}

static void run_callback(struct vnpu_callback *cb)
{
	struct vnpu_stream_obj *s = cb->stream;
	int status = vnpu_point_status(s->ctx->fd, s->timeline, cb->point);

	pthread_mutex_lock(&s->lock);
	if (s->error.status)
		status = s->error.status;
	pthread_mutex_unlock(&s->lock);

	in_callback = 1;
	cb->fn(cb->user_data, status);
	in_callback = 0;
	close(cb->event_fd);
	vnpu_obj_put(&s->obj);
	free(cb);
}

/* Whether @cb's point was reached; consumes the eventfd's count. */
static int callback_ready(struct vnpu_callback *cb)
{
	uint64_t count;

	return read(cb->event_fd, &count, sizeof(count)) == sizeof(count);
}

static void *callback_thread(void *arg)
{
	struct vnpu_callbacks *cbs = arg;

	for (;;) {
		struct pollfd fds[65];
		struct vnpu_callback *cb, **link;
		nfds_t n = 1;
		uint64_t count;

		pthread_mutex_lock(&cbs->lock);
		if (cbs->stop && !cbs->head) {
			int orphan = cbs->orphan;

			pthread_mutex_unlock(&cbs->lock);
			if (orphan) {
				close(cbs->wake_fd);
				pthread_mutex_destroy(&cbs->lock);
				free(cbs);
			}
			return NULL;
		}
		fds[0] = (struct pollfd){ .fd = cbs->wake_fd, .events = POLLIN };
		/* The oldest callbacks are due first; 64 at a time is plenty. */
		for (cb = cbs->head; cb && n < 65; cb = cb->next)
			fds[n++] = (struct pollfd){ .fd = cb->event_fd, .events = POLLIN };
		pthread_mutex_unlock(&cbs->lock);

		if (poll(fds, n, -1) < 0 && errno != EINTR)
			return NULL;
		if (fds[0].revents & POLLIN)
			(void)!read(cbs->wake_fd, &count, sizeof(count));

		/* Run every reached callback in order of addition. */
		pthread_mutex_lock(&cbs->lock);
		link = &cbs->head;
		while ((cb = *link)) {
			if (!callback_ready(cb)) {
				link = &cb->next;
				continue;
			}
			*link = cb->next;
			if (cbs->tail == cb)
				cbs->tail = link == &cbs->head ? NULL
					  : (struct vnpu_callback *)((char *)link -
						offsetof(struct vnpu_callback, next));
			pthread_mutex_unlock(&cbs->lock);
			run_callback(cb);
			pthread_mutex_lock(&cbs->lock);
			link = &cbs->head;
		}
		pthread_mutex_unlock(&cbs->lock);
	}
}

/* The context's callback thread, started on first use; under ctx->lock. */
static int get_callbacks_locked(struct vnpu_ctx *ctx, struct vnpu_callbacks **out)
{
	struct vnpu_callbacks *cbs = ctx->callbacks;

	if (!cbs) {
		cbs = calloc(1, sizeof(*cbs));
		if (!cbs)
			return VNPU_ERROR_OUT_OF_HOST_MEMORY;
		cbs->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		pthread_mutex_init(&cbs->lock, NULL);
		if (cbs->wake_fd < 0 || pthread_create(&cbs->thread, NULL, callback_thread, cbs)) {
			if (cbs->wake_fd >= 0)
				close(cbs->wake_fd);
			pthread_mutex_destroy(&cbs->lock);
			free(cbs);
			return VNPU_ERROR_OUT_OF_HOST_MEMORY;
		}
		ctx->callbacks = cbs;
	}
	*out = cbs;
	return VNPU_SUCCESS;
}

static int arm_eventfd(struct vnpu_stream_obj *s, uint64_t point, int *event_fd)
{
	struct vnpu_syncobj_eventfd args = { .handle = s->timeline, .point = point };

	*event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (*event_fd < 0)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	/* Point 0 (nothing submitted yet) is reached already. */
	if (!point) {
		uint64_t one = 1;

		return write(*event_fd, &one, sizeof(one)) == sizeof(one) ? VNPU_SUCCESS
									   : VNPU_ERROR_DRIVER;
	}
	args.fd = *event_fd;
	if (drmIoctl(s->ctx->fd, VNPU_IOCTL_SYNCOBJ_EVENTFD, &args)) {
		int status = vnpu_status_from_errno(errno);

		close(*event_fd);
		return status;
	}
	return VNPU_SUCCESS;
}

int vnpu_stream_add_callback(struct vnpu_stream handle, void (*fn)(void *, int), void *user_data)
{
	VNPU_TRACE_API();
	struct vnpu_callbacks *cbs = NULL;
	struct vnpu_stream_obj *s;
	struct vnpu_callback *cb;
	uint64_t one = 1;
	int status;

	if (!fn)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_stream_get(handle, &s);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	cb = calloc(1, sizeof(*cb));
	if (!cb) {
		vnpu_obj_put(&s->obj);
		return vnpu_set_status(VNPU_ERROR_OUT_OF_HOST_MEMORY);
	}
	cb->stream = s;		/* the reference taken by vnpu_stream_get() */
	cb->fn = fn;
	cb->user_data = user_data;

	pthread_mutex_lock(&s->ctx->lock);
	status = get_callbacks_locked(s->ctx, &cbs);
	pthread_mutex_unlock(&s->ctx->lock);
	if (status == VNPU_SUCCESS) {
		/* The stream lock orders this callback after the work submitted so far. */
		pthread_mutex_lock(&s->lock);
		status = vnpu_stream_flush_locked(s);
		cb->point = s->seq;
		if (status == VNPU_SUCCESS)
			status = arm_eventfd(s, cb->point, &cb->event_fd);
		if (status == VNPU_SUCCESS) {
			pthread_mutex_lock(&cbs->lock);
			if (cbs->tail)
				cbs->tail->next = cb;
			else
				cbs->head = cb;
			cbs->tail = cb;
			pthread_mutex_unlock(&cbs->lock);
		}
		pthread_mutex_unlock(&s->lock);
	}
	if (status != VNPU_SUCCESS) {
		vnpu_obj_put(&s->obj);
		free(cb);
		return vnpu_set_status(status);
	}
	(void)!write(cbs->wake_fd, &one, sizeof(one));
	return VNPU_SUCCESS;
}

/* Runs the callbacks still pending, then stops the thread; ctx is being released. */
void vnpu_callbacks_stop(struct vnpu_ctx *ctx)
{
	struct vnpu_callbacks *cbs = ctx->callbacks;
	uint64_t one = 1;

	if (!cbs)
		return;
	ctx->callbacks = NULL;
	if (pthread_equal(pthread_self(), cbs->thread)) {
		/* The last reference went in a callback: the thread ends itself. */
		pthread_mutex_lock(&cbs->lock);
		cbs->stop = 1;
		cbs->orphan = 1;
		pthread_mutex_unlock(&cbs->lock);
		pthread_detach(cbs->thread);
		return;
	}
	pthread_mutex_lock(&cbs->lock);
	cbs->stop = 1;
	pthread_mutex_unlock(&cbs->lock);
	(void)!write(cbs->wake_fd, &one, sizeof(one));
	pthread_join(cbs->thread, NULL);
	close(cbs->wake_fd);
	pthread_mutex_destroy(&cbs->lock);
	free(cbs);
}
