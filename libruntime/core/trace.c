// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * VNPU_TRACE=FILE writes a Chrome Trace Event JSON file (opens in Perfetto
 * and chrome://tracing):
 *
 * - one track per stream (a pseudo-thread of the process) with a slice per
 *   job from the device's own timestamps: while tracing, every job is
 *   wrapped in two TIMESTAMP commands that write the device clock into a
 *   per-stream host-pinned buffer; slices are emitted once the job is done
 *   (seen at the next submit or synchronize, or when the stream goes);
 * - every public API call that does work (VNPU_TRACE_API() in trace.h) as
 *   a slice on the calling host thread's track, with the submitting ioctl
 *   nested in it as a "submit" slice and a flow arrow from each submit to
 *   the job's execution;
 * - a "memory" counter per device with the VRAM and host-pinned bytes the
 *   process holds (the kernel's QUOTA_GET), sampled at each submit and
 *   each buffer created or released.
 *
 * The device clock is the host's CLOCK_MONOTONIC, so host and device
 * times share one axis. Events are written one per line with one write();
 * a crash leaves a file that lacks only the closing "]}" (vnpu-trace
 * repairs it).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "trace.h"

/* Jobs of one stream that can be in flight and traced at once. */
#define TRACE_SLOTS 1024

struct trace_job {
	uint64_t point;
	const char *op;
	int64_t submit_ns;
	uint64_t flow;
	int tid;
	uint32_t slot;
};

struct vnpu_trace_stream {
	struct vnpu_alloc *buf;		/* TRACE_SLOTS x {start, end} device clocks */
	struct drm_vnpu_cmd cmds[DRM_VNPU_MAX_CMDS];
	struct trace_job jobs[TRACE_SLOTS];	/* ring of traced jobs in flight */
	uint32_t head, count, next_slot;
	int tid;
	int pending;			/* wrap() succeeded for the submit in progress */
	uint64_t dropped;
};

int vnpu_tracing;
static int trace_fd = -1;
static int trace_first = 1;
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t next_flow = 1;
static _Atomic int next_track = 1;
static int trace_pid;

int64_t vnpu_trace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes one event as one line, separated from the previous by a comma. */
static void emit(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	pthread_mutex_lock(&trace_lock);
	if (trace_fd >= 0) {
		n = trace_first ? 0 : snprintf(line, sizeof(line), ",");
		n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
		if (n > (int)sizeof(line) - 2)
			n = (int)sizeof(line) - 2;
		line[n++] = '\n';
		if (write(trace_fd, line, n) == n)
			trace_first = 0;
	}
	pthread_mutex_unlock(&trace_lock);
	va_end(ap);
}

static double us(int64_t ns)
{
	return ns / 1000.0;
}

static int gettid_cached(void)
{
	static __thread int tid;

	if (!tid)
		tid = (int)gettid();
	return tid;
}

static void trace_close(void)
{
	pthread_mutex_lock(&trace_lock);
	if (trace_fd >= 0) {
		if (write(trace_fd, "]}\n", 3) != 3)
			vnpu_log(VNPU_LOG_WARN, "trace: closing the file failed");
		close(trace_fd);
		trace_fd = -1;
	}
	pthread_mutex_unlock(&trace_lock);
}

void vnpu_trace_init(void)
{
	const char *path = getenv("VNPU_TRACE");
	static const char head[] = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";

	if (!path || !*path || vnpu_tracing)
		return;
	trace_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (trace_fd < 0) {
		vnpu_log(VNPU_LOG_ERROR, "VNPU_TRACE=%s: %s", path, strerror(errno));
		return;
	}
	if (write(trace_fd, head, sizeof(head) - 1) != sizeof(head) - 1) {
		close(trace_fd);
		trace_fd = -1;
		return;
	}
	trace_first = 1;
	trace_pid = getpid();
	vnpu_tracing = 1;
	atexit(trace_close);
	emit("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,"
	     "\"args\":{\"name\":\"vnpu %d\"}}", trace_pid, trace_pid);
	vnpu_log(VNPU_LOG_INFO, "tracing to %s", path);
}

void vnpu_trace_finalize(void)
{
	if (!vnpu_tracing)
		return;
	vnpu_tracing = 0;
	trace_close();
}

void vnpu_trace_api(const char *name, int64_t t0)
{
	int64_t t1 = vnpu_trace_now();

	emit("{\"ph\":\"X\",\"cat\":\"api\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
	     "\"ts\":%.3f,\"dur\":%.3f}", name, trace_pid, gettid_cached(), us(t0), us(t1 - t0));
}

void vnpu_trace_memory(struct vnpu_ctx *ctx)
{
	struct drm_vnpu_quota q = { 0 };

	if (!ioctl(ctx->fd, DRM_IOCTL_VNPU_QUOTA_GET, &q))
		emit("{\"ph\":\"C\",\"name\":\"memory\",\"id\":\"%u\",\"pid\":%d,\"ts\":%.3f,"
		     "\"args\":{\"vram_bytes\":%llu,\"host_bytes\":%llu}}", ctx->device, trace_pid,
		     us(vnpu_trace_now()), (unsigned long long)q.used,
		     (unsigned long long)q.host_used);
}

void vnpu_trace_stream_init(struct vnpu_stream_obj *s)
{
	struct vnpu_trace_stream *t = calloc(1, sizeof(*t));

	if (!t)
		return;
	if (vnpu_alloc_create(s->ctx, TRACE_SLOTS * 2 * sizeof(uint64_t), DRM_VNPU_BO_HOST,
			      NULL, &t->buf) != VNPU_SUCCESS) {
		free(t);
		return;
	}
	t->tid = 1000000 + atomic_fetch_add(&next_track, 1);
	s->trace = t;
	emit("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
	     "\"args\":{\"name\":\"stream 0x%llx (%s, priority %d)\"}}", trace_pid, t->tid,
	     (unsigned long long)s->obj.handle, s->flags & VNPU_STREAM_COPY ? "copy" : "compute",
	     s->priority);
	emit("{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%d,"
	     "\"args\":{\"sort_index\":%d}}", trace_pid, t->tid, t->tid);
}

void vnpu_trace_stream_fini(struct vnpu_stream_obj *s)
{
	struct vnpu_trace_stream *t = s->trace;

	if (!t)
		return;
	vnpu_trace_collect(s, 0);
	if (t->count || t->dropped)
		vnpu_log(VNPU_LOG_INFO, "trace: stream 0x%llx: %u jobs unfinished, %llu untraced",
			 (unsigned long long)s->obj.handle, t->count,
			 (unsigned long long)t->dropped);
	/* Jobs still queued keep the buffer alive in the driver. */
	vnpu_alloc_release(s->ctx, t->buf);
	free(t);
	s->trace = NULL;
}

const struct drm_vnpu_cmd *vnpu_trace_wrap(struct vnpu_stream_obj *s,
					   const struct drm_vnpu_cmd *cmds, uint32_t *count)
{
	struct vnpu_trace_stream *t = s->trace;
	volatile uint64_t *clock;
	uint32_t slot;

	t->pending = 0;
	if (t->count == TRACE_SLOTS)
		vnpu_trace_collect(s, 0);
	if (*count + 2 > DRM_VNPU_MAX_CMDS || t->count == TRACE_SLOTS) {
		t->dropped++;
		return NULL;
	}
	slot = t->next_slot;
	clock = (volatile uint64_t *)t->buf->host + 2 * slot;
	clock[0] = clock[1] = 0;
	t->cmds[0] = (struct drm_vnpu_cmd){ .opcode = DRM_VNPU_CMD_TIMESTAMP,
					    .dst = t->buf->devptr + 16 * slot };
	memcpy(&t->cmds[1], cmds, *count * sizeof(*cmds));
	t->cmds[*count + 1] = (struct drm_vnpu_cmd){ .opcode = DRM_VNPU_CMD_TIMESTAMP,
						     .dst = t->buf->devptr + 16 * slot + 8 };
	*count += 2;
	t->pending = 1;
	return t->cmds;
}

void vnpu_trace_submitted(struct vnpu_stream_obj *s, const char *op, int wrapped,
			  uint64_t point, int64_t t0)
{
	struct vnpu_trace_stream *t = s->trace;
	int tid = gettid_cached();
	uint64_t flow = 0;

	if (point && wrapped) {
		struct trace_job *j = &t->jobs[(t->head + t->count) % TRACE_SLOTS];

		flow = atomic_fetch_add(&next_flow, 1);
		*j = (struct trace_job){ .point = point, .op = op, .submit_ns = t0, .flow = flow,
					 .tid = tid, .slot = t->next_slot };
		t->next_slot = (t->next_slot + 1) % TRACE_SLOTS;
		t->count++;
	}
	emit("{\"ph\":\"X\",\"cat\":\"submit\",\"name\":\"submit\",\"pid\":%d,\"tid\":%d,"
	     "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"op\":\"%s\",\"point\":%llu}}", trace_pid, tid,
	     us(t0), us(vnpu_trace_now() - t0), op, (unsigned long long)point);
	if (flow)
		emit("{\"ph\":\"s\",\"cat\":\"flow\",\"name\":\"submit\",\"id\":%llu,\"pid\":%d,"
		     "\"tid\":%d,\"ts\":%.3f}", (unsigned long long)flow, trace_pid, tid, us(t0));
	vnpu_trace_memory(s->ctx);
	vnpu_trace_collect(s, 0);
}

void vnpu_trace_collect(struct vnpu_stream_obj *s, uint64_t done)
{
	struct vnpu_trace_stream *t = s->trace;

	while (t && t->count) {
		struct trace_job *j = &t->jobs[t->head];
		volatile uint64_t *clock = (volatile uint64_t *)t->buf->host + 2 * j->slot;
		uint64_t start = clock[0], end = clock[1];

		if (!end) {
			/* A failed job never wrote its end: drop it once it is done. */
			if (j->point > done)
				break;
		} else {
			if (start > end || !start)
				start = end;
			emit("{\"ph\":\"X\",\"cat\":\"device\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
			     "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"point\":%llu,\"submit_us\":%.3f,"
			     "\"queue_wait_us\":%.3f}}", j->op, trace_pid, t->tid, us((int64_t)start),
			     us((int64_t)(end - start)), (unsigned long long)j->point,
			     us(j->submit_ns), us((int64_t)start - j->submit_ns));
			emit("{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"flow\",\"name\":\"submit\",\"id\":%llu,"
			     "\"pid\":%d,\"tid\":%d,\"ts\":%.3f}", (unsigned long long)j->flow,
			     trace_pid, t->tid, us((int64_t)start));
		}
		t->head = (t->head + 1) % TRACE_SLOTS;
		t->count--;
	}
}
