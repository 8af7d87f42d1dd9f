// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-bench-exec: execution benchmarks, reported and never asserted.
 *
 *  1. submit-to-signal latency of an empty-ish job (a 4-byte FILL) against
 *     an eventfd round trip between two threads, measured in the same run;
 *  2. jobs per second with 1, 2, 4 and 8 compute queues;
 *  3. COPY bandwidth against memcpy(), on one copy engine and on all;
 *  4. latency of a high-priority job while low-priority queues saturate
 *     every compute engine, against the same on an idle device.
 *
 * Prints a table and a kselftest "# Totals:" line (one pass when every
 * measurement ran). VNPU_BENCH_SCALE (default 1) scales the repetitions.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <drm.h>
#include <drm/vnpu_accel.h>

#include "../../selftests/vnpu_utils.h"

static int fd;
static int scale = 1;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static uint64_t pct(uint64_t *v, int n, int p)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(long)n * p / 100 >= n ? n - 1 : (long)n * p / 100];
}

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "failed: %s (%s) line %d\n", #x, \
	strerror(errno), __LINE__); fail = 1; return; } } while (0)

static int fail;

static uint32_t bo(uint64_t size, uint32_t flags, uint64_t *addr, void **map)
{
	struct drm_vnpu_bo_create c = { .size = size, .flags = flags };
	struct drm_vnpu_bo_info i = {};

	if (ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, &c))
		return 0;
	*addr = c.device_addr;
	if (map) {
		i.handle = c.handle;
		if (ioctl(fd, DRM_IOCTL_VNPU_BO_INFO, &i))
			return 0;
		*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, i.mmap_offset);
		if (*map == MAP_FAILED)
			return 0;
	}
	return c.handle;
}

static uint32_t queue(uint32_t class, uint32_t prio)
{
	struct drm_vnpu_queue_create q = { .engine_class = class, .priority = prio };

	return ioctl(fd, DRM_IOCTL_VNPU_QUEUE_CREATE, &q) ? 0 : q.queue_id;
}

static void queue_destroy(uint32_t id)
{
	struct drm_vnpu_queue_destroy d = { .queue_id = id };

	ioctl(fd, DRM_IOCTL_VNPU_QUEUE_DESTROY, &d);
}

static uint32_t syncobj(void)
{
	struct drm_syncobj_create c = {};

	return ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c) ? 0 : c.handle;
}

static int submit(uint32_t q, struct drm_vnpu_cmd *cmds, uint32_t n, uint32_t sig)
{
	struct drm_vnpu_submit s = {
		.queue_id = q, .cmds = (uintptr_t)cmds, .cmd_count = n,
		.signal = { .handle = sig },
	};

	return ioctl(fd, DRM_IOCTL_VNPU_SUBMIT, &s);
}

static int wait_sync(uint32_t *h, uint32_t n)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)h, .count_handles = n,
		.timeout_nsec = now_ns() + 60000000000ULL,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
	};

	return ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

static int efd[2];

static void *echo_thread(void *arg)
{
	int n = *(int *)arg;
	uint64_t v;

	for (int i = 0; i < n; i++) {
		if (read(efd[0], &v, 8) != 8 || write(efd[1], &v, 8) != 8)
			break;
	}
	return NULL;
}

static void bench_latency(void)
{
	int n = 2000 * scale;
	uint64_t *lat = calloc(n, 8), *rtt = calloc(n, 8), addr, v = 1;
	uint32_t q = queue(DRM_VNPU_ENGINE_COMPUTE, DRM_VNPU_PRIORITY_NORMAL), s = syncobj();
	struct drm_vnpu_cmd fill;
	pthread_t t;

	CHECK(lat && rtt && q && s && bo(4096, DRM_VNPU_BO_HOST, &addr, NULL));
	fill = (struct drm_vnpu_cmd){ .opcode = DRM_VNPU_CMD_FILL, .dst = addr, .size = 4 };
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		CHECK(!submit(q, &fill, 1, s) && !wait_sync(&s, 1));
		lat[i] = now_ns() - t0;
	}
	efd[0] = eventfd(0, 0);
	efd[1] = eventfd(0, 0);
	CHECK(efd[0] >= 0 && efd[1] >= 0);
	CHECK(!pthread_create(&t, NULL, echo_thread, &n));
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		CHECK(write(efd[0], &v, 8) == 8 && read(efd[1], &v, 8) == 8);
		rtt[i] = now_ns() - t0;
	}
	pthread_join(t, NULL);
	printf("| submit-to-signal, 4-byte FILL (us) | %.1f median | %.1f p99 |\n",
	       median(lat, n) / 1e3, pct(lat, n, 99) / 1e3);
	printf("| eventfd thread round trip (us) | %.1f median | %.1f p99 |\n",
	       median(rtt, n) / 1e3, pct(rtt, n, 99) / 1e3);
	printf("| latency / wake-up ratio | %.3f | medians |\n", (double)median(lat, n) / median(rtt, n));
	queue_destroy(q);
	free(lat);
	free(rtt);
}

static void bench_jobs_per_second(void)
{
	static const int counts[] = { 1, 2, 4, 8 };
	uint64_t addr;

	CHECK(bo(1 << 16, DRM_VNPU_BO_HOST, &addr, NULL));
	for (size_t c = 0; c < 4; c++) {
		int nq = counts[c], jobs = 4000 * scale;
		uint32_t q[8], s[8];
		uint64_t t0;

		for (int i = 0; i < nq; i++) {
			q[i] = queue(DRM_VNPU_ENGINE_COMPUTE, DRM_VNPU_PRIORITY_NORMAL);
			s[i] = syncobj();
			CHECK(q[i] && s[i]);
		}
		t0 = now_ns();
		for (int j = 0; j < jobs; j++) {
			struct drm_vnpu_cmd fill = { .opcode = DRM_VNPU_CMD_FILL,
				.dst = addr + 64 * (j % nq), .size = 4, .pattern = j };

			CHECK(!submit(q[j % nq], &fill, 1, j >= jobs - nq ? s[j % nq] : 0));
		}
		CHECK(!wait_sync(s, nq));
		printf("| jobs/s, %d compute queue%s | %.0f | |\n", nq, nq > 1 ? "s" : "",
		       jobs / ((now_ns() - t0) / 1e9));
		for (int i = 0; i < nq; i++)
			queue_destroy(q[i]);
	}
}

static void bench_copy(void)
{
	uint64_t size = 32ULL << 20, src, dst, ncopy = 0, t0, t;
	int reps = 4 * scale;
	char *a = malloc(size), *b = malloc(size);
	uint32_t q[8], s[8];

	CHECK(a && b && !_vnpu_get_param(fd, DRM_VNPU_PARAM_NUM_COPY_ENGINES, 0, &ncopy));
	CHECK(bo(size, 0, &src, NULL) && bo(size, 0, &dst, NULL));
	memset(a, 1, size);
	memset(b, 2, size);
	t0 = now_ns();
	for (int r = 0; r < reps; r++) {
		memcpy(b, a, size);
		__asm__ volatile("" : : "r"(b) : "memory");
	}
	t = now_ns() - t0;
	printf("| memcpy in the guest (GB/s) | %.2f | 32 MiB |\n", (double)size * reps / t);

	for (uint64_t engines = 1; engines <= ncopy; engines = engines == 1 && ncopy > 1 ? ncopy : engines + ncopy) {
		uint64_t slice = size / engines;

		for (uint64_t i = 0; i < engines; i++) {
			q[i] = queue(DRM_VNPU_ENGINE_COPY, DRM_VNPU_PRIORITY_NORMAL);
			s[i] = syncobj();
			CHECK(q[i] && s[i]);
		}
		t0 = now_ns();
		for (int r = 0; r < reps; r++)
			for (uint64_t i = 0; i < engines; i++) {
				struct drm_vnpu_cmd c = { .opcode = DRM_VNPU_CMD_COPY,
					.dst = dst + i * slice, .src = src + i * slice, .size = slice };

				CHECK(!submit(q[i], &c, 1, r == reps - 1 ? s[i] : 0));
			}
		CHECK(!wait_sync(s, engines));
		t = now_ns() - t0;
		printf("| COPY VRAM to VRAM, %llu copy engine%s (GB/s) | %.2f | 32 MiB |\n",
		       (unsigned long long)engines, engines > 1 ? "s" : "", (double)size * reps / t);
		for (uint64_t i = 0; i < engines; i++)
			queue_destroy(q[i]);
	}
	free(a);
	free(b);
}

/* Median submit-to-signal of a TIMESTAMP on a high-priority queue. */
static uint64_t high_latency(uint32_t hq, uint64_t addr, int n)
{
	uint64_t *lat = calloc(n, 8), m;
	uint32_t s = syncobj();
	struct drm_vnpu_cmd ts = { .opcode = DRM_VNPU_CMD_TIMESTAMP, .dst = addr };

	if (!lat || !s)
		return 0;
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		if (submit(hq, &ts, 1, s) || wait_sync(&s, 1))
			return 0;
		lat[i] = now_ns() - t0;
		usleep(2000);
	}
	m = median(lat, n);
	free(lat);
	return m;
}

static void bench_priority(void)
{
	uint64_t addr, ncomp = 0, idle, busy;
	uint32_t hq = queue(DRM_VNPU_ENGINE_COMPUTE, DRM_VNPU_PRIORITY_HIGH), lq[8], ls[8];
	int n = 50 * scale;

	CHECK(hq && bo(4096, DRM_VNPU_BO_HOST, &addr, NULL));
	CHECK(!_vnpu_get_param(fd, DRM_VNPU_PARAM_NUM_COMPUTE_ENGINES, 0, &ncomp));
	idle = high_latency(hq, addr, n);
	/* Saturate: 2 low queues per engine, 1 ms jobs, enough for the run. */
	for (uint64_t i = 0; i < 2 * ncomp; i++) {
		struct drm_vnpu_cmd d = { .opcode = DRM_VNPU_CMD_DELAY, .size = 1000000 };

		lq[i] = queue(DRM_VNPU_ENGINE_COMPUTE, DRM_VNPU_PRIORITY_LOW);
		ls[i] = syncobj();
		CHECK(lq[i] && ls[i]);
		for (int j = 0; j < 3 * n; j++)
			CHECK(!submit(lq[i], &d, 1, j == 3 * n - 1 ? ls[i] : 0));
	}
	busy = high_latency(hq, addr + 8, n);
	CHECK(idle && busy);
	printf("| high-priority job, idle device (us) | %.1f median | |\n", idle / 1e3);
	printf("| high-priority job, low-priority 1 ms jobs saturating %llu engines (us) | %.1f median | |\n",
	       (unsigned long long)ncomp, busy / 1e3);
	for (uint64_t i = 0; i < 2 * ncomp; i++)
		queue_destroy(lq[i]);
	queue_destroy(hq);
}

int main(void)
{
	const char *s = getenv("VNPU_BENCH_SCALE");

	if (s && atoi(s) > 0)
		scale = atoi(s);
	printf("TAP version 13\n1..1\n");
	fd = vnpu_open_nth(0);
	if (fd < 0) {
		printf("ok 1 # SKIP no vnpu device\n");
		printf("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0\n");
		return 0;
	}
	printf("| measurement | value | note |\n|---|---|---|\n");
	bench_latency();
	bench_jobs_per_second();
	bench_copy();
	bench_priority();
	close(fd);
	printf("%s 1 execution benchmarks\n", fail ? "not ok" : "ok");
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n", !fail, fail);
	return fail;
}
