// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-bench-runtime: what the runtime costs on top of the driver, each
 * pair measured side by side in one run (times are host wall clock; in a
 * software-emulated VM compare the ratios, not the absolute values):
 *
 *  - launch: a 4-byte fill through the runtime vs the raw SUBMIT ioctl
 *  - batch: 1024 small fills in one batch vs one submit each
 *  - events: record + query of an event
 *  - sync: a fill and stream synchronize vs SUBMIT and a syncobj wait
 *
 * Reports only; never fails on a number.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include <drm/vnpu_accel.h>
#include "vnpu.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* A raw client of the driver: its own file, queue, buffer and timeline. */
struct raw {
	int fd;
	uint32_t queue, timeline, bo;
	uint64_t addr, seq;
};

static int raw_open(struct raw *r)
{
	struct drm_vnpu_queue_create q = { .engine_class = DRM_VNPU_ENGINE_COMPUTE,
					   .priority = DRM_VNPU_PRIORITY_NORMAL };
	struct drm_vnpu_bo_create b = { .size = 4096 };
	struct vnpu_device_properties props;

	if (vnpu_device_get_properties(0, &props))
		return -1;
	char path[64];

	snprintf(path, sizeof(path), "/dev/accel/accel%u", props.accel_minor);
	r->fd = open(path, O_RDWR | O_CLOEXEC);
	if (r->fd < 0 || drmIoctl(r->fd, DRM_IOCTL_VNPU_QUEUE_CREATE, &q) ||
	    drmIoctl(r->fd, DRM_IOCTL_VNPU_BO_CREATE, &b) || drmSyncobjCreate(r->fd, 0, &r->timeline))
		return -1;
	r->queue = q.queue_id;
	r->bo = b.handle;
	r->addr = b.device_addr;
	r->seq = 0;
	return 0;
}

static int raw_fill(struct raw *r)
{
	struct drm_vnpu_cmd cmd = { .opcode = DRM_VNPU_CMD_FILL, .dst = r->addr, .size = 4 };
	struct drm_vnpu_submit s = {
		.queue_id = r->queue, .cmds = (uintptr_t)&cmd, .cmd_count = 1,
		.signal = { .handle = r->timeline, .point = r->seq + 1 },
	};

	if (drmIoctl(r->fd, DRM_IOCTL_VNPU_SUBMIT, &s))
		return -1;
	r->seq++;
	return 0;
}

static int raw_wait(struct raw *r)
{
	return drmSyncobjTimelineWait(r->fd, &r->timeline, &r->seq, 1, INT64_MAX,
				      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL);
}

#define CHECK(x) do { if (x) { fprintf(stderr, "bench: %s failed\n", #x); failed = 1; goto out; } } while (0)

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000, failed = 0;
	struct vnpu_context ctx;
	struct vnpu_stream s;
	struct vnpu_event e;
	struct raw raw;
	uint64_t d;
	double t0, rt_launch, raw_launch, batched, single, ev, rt_sync, raw_sync;

	CHECK(vnpu_init(0));
	CHECK(vnpu_ctx_create(0, 0, &ctx));
	CHECK(vnpu_stream_create(ctx, VNPU_PRIORITY_NORMAL, 0, &s));
	CHECK(vnpu_event_create(ctx, 0, &e));
	CHECK(vnpu_malloc(ctx, 4096, 0, &d));
	CHECK(raw_open(&raw));

	/* Launch cost: n fills queued, then one wait (not timed per call). */
	t0 = now_us();
	for (int i = 0; i < n; i++)
		CHECK(vnpu_memset_d32_async(s, d, i, 1));
	rt_launch = (now_us() - t0) / n;
	CHECK(vnpu_stream_synchronize(s, VNPU_TIMEOUT_INFINITE));
	t0 = now_us();
	for (int i = 0; i < n; i++)
		CHECK(raw_fill(&raw));
	raw_launch = (now_us() - t0) / n;
	CHECK(raw_wait(&raw));

	/* 1024 small operations, batched vs one job each, to completion. */
	t0 = now_us();
	CHECK(vnpu_stream_begin_batch(s));
	for (int i = 0; i < 1024; i++)
		CHECK(vnpu_memset_d32_async(s, d + (i % 1024) * 4, i, 1));
	CHECK(vnpu_stream_end_batch(s));
	CHECK(vnpu_stream_synchronize(s, VNPU_TIMEOUT_INFINITE));
	batched = now_us() - t0;
	t0 = now_us();
	for (int i = 0; i < 1024; i++)
		CHECK(vnpu_memset_d32_async(s, d + (i % 1024) * 4, i, 1));
	CHECK(vnpu_stream_synchronize(s, VNPU_TIMEOUT_INFINITE));
	single = now_us() - t0;

	/* Event record + query on an idle stream. */
	t0 = now_us();
	for (int i = 0; i < n; i++) {
		CHECK(vnpu_event_record(e, s));
		vnpu_event_query(e);
	}
	ev = (now_us() - t0) / n;

	/* Round trip: one tiny job and waiting for it. */
	t0 = now_us();
	for (int i = 0; i < n / 4; i++) {
		CHECK(vnpu_memset_d32_async(s, d, i, 1));
		CHECK(vnpu_stream_synchronize(s, VNPU_TIMEOUT_INFINITE));
	}
	rt_sync = (now_us() - t0) / (n / 4);
	t0 = now_us();
	for (int i = 0; i < n / 4; i++) {
		CHECK(raw_fill(&raw));
		CHECK(raw_wait(&raw));
	}
	raw_sync = (now_us() - t0) / (n / 4);

	printf("%-46s %12s %12s %8s\n", "measure", "runtime", "driver", "ratio");
	printf("%-46s %9.1f us %9.1f us %8.2f\n", "launch of a 4-byte fill (enqueue only)",
	       rt_launch, raw_launch, rt_launch / raw_launch);
	printf("%-46s %9.1f us %9.1f us %8.2f\n", "1024 fills: batched vs one submit each",
	       batched, single, batched / single);
	printf("%-46s %9.1f us\n", "event record + query", ev);
	printf("%-46s %9.1f us %9.1f us %8.2f\n", "fill + stream synchronize vs submit + wait",
	       rt_sync, raw_sync, rt_sync / raw_sync);
out:
	vnpu_finalize();
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n", !failed, failed);
	return failed;
}
