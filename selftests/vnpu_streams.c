// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: libvnpurt streams, events, host callbacks, copies and fills
 * against the real driver: ordering, waits across streams and contexts,
 * timing, sticky errors, bad input, concurrent submitters, and the outage
 * pattern (contexts destroyed with work in flight) at scale.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "vnpu.h"
#include "vnpu_utils.h"

#define MS 1000000ULL

static uint64_t vram_used(void)
{
	uint64_t used = 0;
	int fd = vnpu_open_nth(0);

	if (fd >= 0) {
		_vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_USED, 0, &used);
		close(fd);
	}
	return used;
}

/*
 * The driver releases a job's buffers when the scheduler frees the job,
 * just after its fence signals: poll briefly for the expected value.
 */
static uint64_t vram_used_settled(uint64_t want)
{
	uint64_t used = vram_used();

	for (int i = 0; i < 100 && used != want; i++) {
		usleep(20000);
		used = vram_used();
	}
	return used;
}

static unsigned long module_param(const char *name)
{
	char buf[64];

	return vnpu_module_param(name, buf, sizeof(buf)) ? 0 : strtoul(buf, NULL, 0);
}

FIXTURE(st) {
	struct vnpu_context ctx;
	struct vnpu_stream s;
	uint64_t baseline;
};

FIXTURE_SETUP(st)
{
	if (!vnpu_count_devices())
		SKIP(return, "no vnpu device");
	self->baseline = vram_used();
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &self->ctx));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(self->ctx, VNPU_PRIORITY_NORMAL, 0, &self->s));
}

FIXTURE_TEARDOWN(st)
{
	if (!vnpu_count_devices())
		return;
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(self->ctx, 0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_finalize());
	EXPECT_EQ(self->baseline, vram_used_settled(self->baseline));
}

static void fill_pattern(uint32_t *p, size_t words, uint32_t seed)
{
	for (size_t i = 0; i < words; i++)
		p[i] = seed * 2654435761u + (uint32_t)i;
}

TEST_F(st, pageable_round_trip)
{
	size_t words = 300000;
	uint32_t *in = malloc(words * 4), *out = calloc(words, 4);
	uint64_t d = 0;

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	fill_pattern(in, words, 1);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, words * 4, 0, &d));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_htod(self->ctx, d, in, words * 4));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, out, d, words * 4));
	EXPECT_EQ(0, memcmp(in, out, words * 4));
	/* A sub-range, unaligned at both ends. */
	memset(out, 0, words * 4);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, (char *)out + 3, d + 5, 1001));
	EXPECT_EQ(0, memcmp((char *)in + 5, (char *)out + 3, 1001));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_free(self->ctx, d));
	free(in);
	free(out);
}

TEST_F(st, pinned_async_round_trip)
{
	size_t size = 1 << 20;
	uint32_t *in = NULL, *out = NULL;
	uint64_t d = 0;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_host(self->ctx, size, 0, (void **)&in));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_host(self->ctx, size, 0, (void **)&out));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, size, 0, &d));
	fill_pattern(in, size / 4, 2);
	memset(out, 0, size);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_htod_async(self->s, d, in, size));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh_async(self->s, out, d, size));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	EXPECT_EQ(0, memcmp(in, out, size));
}

TEST_F(st, dtod_and_memset)
{
	uint64_t a = 0, b = 0;
	uint32_t out[1024];

	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, sizeof(out), 0, &a));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, sizeof(out), 0, &b));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(self->ctx, a, 0xdeadbeef, 1024));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(self->ctx, b, 0, 1024));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtod(self->ctx, b + 64, a, 128));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, out, b, sizeof(out)));
	for (int i = 0; i < 1024; i++) {
		uint32_t want = i >= 16 && i < 48 ? 0xdeadbeef : 0;

		ASSERT_EQ(want, out[i]) {
			TH_LOG("word %d", i);
		}
	}
}

TEST_F(st, stream_runs_in_order)
{
	uint32_t *out = NULL;
	uint64_t d = 0;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, 4096, 0, &d));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_host(self->ctx, 4096, 0, (void **)&out));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->s, d, 1, 1024));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->s, 50 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->s, d, 2, 1024));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh_async(self->s, out, d, 4096));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	for (int i = 0; i < 1024; i++)
		ASSERT_EQ(2, out[i]);
}

TEST_F(st, query_and_timeouts)
{
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_query(self->s));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->s, 400 * MS));
	EXPECT_EQ(VNPU_NOT_READY, vnpu_stream_query(self->s));
	/* NOT_READY is an answer, not an error. */
	EXPECT_EQ(VNPU_SUCCESS, vnpu_get_last_error());
	EXPECT_EQ(VNPU_ERROR_TIMEOUT, vnpu_stream_synchronize(self->s, 1 * MS));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_query(self->s));
}

TEST_F(st, timing_events_measure_device_time)
{
	struct vnpu_event a, b, plain;
	int64_t ns = 0;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_create(self->ctx, VNPU_EVENT_TIMING, &a));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_create(self->ctx, VNPU_EVENT_TIMING, &b));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_create(self->ctx, 0, &plain));
	/* Never recorded: complete, but no time. */
	EXPECT_EQ(VNPU_SUCCESS, vnpu_event_query(a));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_event_elapsed_ns(a, b, &ns));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_record(a, self->s));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->s, 30 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_record(b, self->s));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_record(plain, self->s));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_synchronize(b, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_elapsed_ns(a, b, &ns));
	/* The delay is a lower bound of the device time between the two. */
	EXPECT_GE(ns, (int64_t)(30 * MS));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_event_elapsed_ns(a, plain, &ns));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_event_elapsed_ns(a, b, NULL));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_event_destroy(a));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_event_destroy(a));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_event_query(a));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_event_destroy(b));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_event_destroy(plain));
}

TEST_F(st, stream_waits_for_event_of_another_stream)
{
	struct vnpu_stream other;
	struct vnpu_event e;
	uint64_t x = 0, y = 0;
	uint32_t out[256];

	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(self->ctx, VNPU_PRIORITY_HIGH, VNPU_STREAM_COPY,
						   &other));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_create(self->ctx, 0, &e));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, 1024, 0, &x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, 1024, 0, &y));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(self->ctx, x, 0, 256));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(self->ctx, y, 0, 256));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->s, 200 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->s, x, 7, 256));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_record(e, self->s));
	/* Without the wait the copy would run at once and read zeros. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_wait_event(other, e));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtod_async(other, y, x, 1024));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(other, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, out, y, sizeof(out)));
	for (int i = 0; i < 256; i++)
		ASSERT_EQ(7, out[i]);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_destroy(other, 0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_event_destroy(e));
}

TEST_F(st, stream_waits_for_event_of_another_context)
{
	struct vnpu_context ctx2;
	struct vnpu_stream s2;
	struct vnpu_event e, e2;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(vnpu_count_devices() - 1, 0, &ctx2));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(ctx2, VNPU_PRIORITY_NORMAL, 0, &s2));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_create(self->ctx, 0, &e));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_create(ctx2, 0, &e2));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->s, 300 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_record(e, self->s));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_wait_event(s2, e));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(s2, 1 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_record(e2, s2));
	/* Recording into another context's stream is refused. */
	EXPECT_EQ(VNPU_ERROR_WRONG_CONTEXT, vnpu_event_record(e, s2));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_synchronize(e2, VNPU_TIMEOUT_INFINITE));
	/* e2 came after e on the device, so e must be complete too. */
	EXPECT_EQ(VNPU_SUCCESS, vnpu_event_query(e));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_event_destroy(e));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_event_destroy(e2));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(ctx2, 0));
}

struct cb_log {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int order[8];
	int statuses[8];
	int n;
	int blocking_status;
	struct vnpu_stream s;
};

struct cb_arg {
	struct cb_log *log;
	int id;
};

static void record_cb(void *user, int status)
{
	struct cb_arg *a = user;
	struct cb_log *log = a->log;

	/* A blocking call from a callback must refuse, not deadlock. */
	if (a->id == 1)
		log->blocking_status = vnpu_stream_synchronize(log->s, VNPU_TIMEOUT_INFINITE);
	pthread_mutex_lock(&log->lock);
	log->statuses[log->n] = status;
	log->order[log->n++] = a->id;
	pthread_cond_broadcast(&log->cond);
	pthread_mutex_unlock(&log->lock);
}

static int wait_callbacks(struct cb_log *log, int n)
{
	struct timespec deadline;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 20;
	pthread_mutex_lock(&log->lock);
	while (log->n < n && !ret)
		ret = pthread_cond_timedwait(&log->cond, &log->lock, &deadline);
	pthread_mutex_unlock(&log->lock);
	return log->n;
}

TEST_F(st, callbacks_run_in_stream_order)
{
	struct cb_log log;
	struct cb_arg args[3] = { { &log, 1 }, { &log, 2 }, { &log, 3 } };

	memset(&log, 0, sizeof(log));
	pthread_mutex_init(&log.lock, NULL);
	pthread_cond_init(&log.cond, NULL);

	log.s = self->s;
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->s, 100 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_add_callback(self->s, record_cb, &args[0]));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->s, 50 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_add_callback(self->s, record_cb, &args[1]));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_add_callback(self->s, record_cb, &args[2]));
	/* None can have run: the device is still busy with the first delay. */
	pthread_mutex_lock(&log.lock);
	EXPECT_EQ(0, log.n);
	pthread_mutex_unlock(&log.lock);
	ASSERT_EQ(3, wait_callbacks(&log, 3));
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(i + 1, log.order[i]);
		EXPECT_EQ(VNPU_SUCCESS, log.statuses[i]);
	}
	EXPECT_EQ(VNPU_ERROR_NOT_PERMITTED, log.blocking_status);
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_stream_add_callback(self->s, NULL, NULL));
}

TEST_F(st, bad_input_changes_nothing)
{
	struct vnpu_stream bad_stream = { 0 }, dflt, created;
	struct vnpu_event bad_event = { 0 };
	uint64_t d = 0;
	uint32_t host[16];
	void *pinned = NULL;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, 4096, 0, &d));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_host(self->ctx, 4096, 0, &pinned));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_stream_create(self->ctx, -2, 0, &created));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_stream_create(self->ctx, 2, 0, &created));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_stream_create(self->ctx, 0, 0x80, &created));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_stream_create(self->ctx, 0, 0, NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_stream_synchronize(bad_stream, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_memcpy_htod_async(bad_stream, d, host, 4));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_event_record(bad_event, self->s));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_stream_wait_event(self->s, bad_event));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_event_create(self->ctx, 0x80, &bad_event));
	/* Ranges outside the context's allocations, sizes 0, NULL pointers. */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_memcpy_htod(self->ctx, d + 4090, host, 64));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_memcpy_htod(self->ctx, d, host, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_memcpy_htod(self->ctx, d, NULL, 4));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_memcpy_dtoh(self->ctx, host, d - 4096, 4));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_memcpy_dtoh(self->ctx, NULL, d, 4));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_memcpy_dtod(self->ctx, d, d + 8192, 4));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_memcpy_dtod(self->ctx, ~0ULL - 2, d, 4));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_memset_d32(self->ctx, d + 2, 0, 4));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_memset_d32(self->ctx, d, 0, 1025));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_memset_d32(self->ctx, d, 0, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_delay(self->s, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_delay(self->s, 11000 * MS));
	/* The default stream exists once and cannot be destroyed alone. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_default_stream(self->ctx, &dflt));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_default_stream(self->ctx, &created));
	EXPECT_EQ(dflt.handle, created.handle);
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_stream_destroy(dflt, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_stream_destroy(self->s, 0x80));
	/* Nothing was submitted or allocated by any of it. */
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_query(self->s));
	EXPECT_EQ(self->baseline + 4096, vram_used());
}

struct submitter {
	struct vnpu_stream s;
	uint64_t buf;
	int id;
	int failures;
};

static void *submit_thread(void *arg)
{
	struct submitter *t = arg;

	for (int i = 0; i < 50; i++) {
		if (vnpu_memset_d32_async(t->s, t->buf + (uint64_t)t->id * 256, t->id + i, 64))
			t->failures++;
	}
	return NULL;
}

TEST_F(st, threads_share_a_stream)
{
	struct submitter t[4];
	pthread_t tid[4];
	uint32_t out[256];
	uint64_t buf = 0;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, 1024, 0, &buf));
	for (int i = 0; i < 4; i++) {
		t[i] = (struct submitter){ self->s, buf, i, 0 };
		ASSERT_EQ(0, pthread_create(&tid[i], NULL, submit_thread, &t[i]));
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(tid[i], NULL);
		EXPECT_EQ(0, t[i].failures);
	}
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, out, buf, sizeof(out)));
	/* Each thread's last fill wins in its own quarter: per-thread order holds. */
	for (int i = 0; i < 4; i++)
		EXPECT_EQ((uint32_t)(i + 49), out[i * 64]);
}

TEST_F(st, peer_copy_between_contexts_and_devices)
{
	unsigned int last = vnpu_count_devices() - 1;
	struct vnpu_context peer_ctx;
	uint64_t src = 0, dst = 0, back = 0;
	uint32_t out[512];

	/* The last device is another device when there are two: peer access. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(last, 0, &peer_ctx));
	if (last) {
		ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_enable_peer_access(peer_ctx, self->ctx, 0));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_enable_peer_access(self->ctx, peer_ctx, 0));
	}
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, sizeof(out), 0, &src));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(peer_ctx, sizeof(out), 0, &dst));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(self->ctx, src, 0x600d, 512));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(peer_ctx, dst, 0, 512));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_peer(peer_ctx, dst, self->ctx, src, sizeof(out)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(peer_ctx, out, dst, sizeof(out)));
	for (int i = 0; i < 512; i++)
		ASSERT_EQ(0x600d, out[i]);
	/* And back, asynchronously, into a second buffer of this context. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(peer_ctx, dst, 0xbeef, 512));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, sizeof(out), 0, &back));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_peer_async(self->s, back, peer_ctx, dst, sizeof(out)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, out, back, sizeof(out)));
	for (int i = 0; i < 512; i++)
		ASSERT_EQ(0xbeef, out[i]);
	/* Source outside the source context's allocations. */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_memcpy_peer(peer_ctx, dst, self->ctx, src + 4094, 4));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE,
		  vnpu_memcpy_peer(peer_ctx, dst, (struct vnpu_context){ 0 }, src, 4));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(peer_ctx, 0));
}

TEST_F(st, device_synchronize_waits_for_every_context)
{
	struct vnpu_context other;
	struct vnpu_stream s2;
	enum vnpu_health health = VNPU_HEALTH_NEEDS_RESET;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &other));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(other, VNPU_PRIORITY_LOW, 0, &s2));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->s, 150 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(s2, 150 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_synchronize(0, VNPU_TIMEOUT_INFINITE));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_query(self->s));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_query(s2));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_device_get_health(0, &health));
	EXPECT_EQ(VNPU_HEALTH_OK, health);
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_get_health(99, &health));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_get_health(0, NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_synchronize(99, 0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(other, 0));
}

TEST_F(st, batches_gather_operations)
{
	uint32_t out[1024];
	uint64_t d = 0;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, sizeof(out), 0, &d));
	ASSERT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_stream_end_batch(self->s));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_begin_batch(self->s));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_stream_begin_batch(self->s));
	/* More than one job's worth of commands: the batch splits itself. */
	for (uint32_t i = 0; i < 1024; i++)
		ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->s, d + i * 4, i, 1));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->s, d, 5000, 1));
	/* Synchronizing inside a batch submits what was gathered. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->s, d + 4, 6000, 1));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_end_batch(self->s));
	/*
	 * Read back on this stream (the default stream would not wait for
	 * it), without a synchronize that would submit what end_batch left.
	 */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh_async(self->s, out, d, sizeof(out)));
	EXPECT_EQ(5000, out[0]);
	EXPECT_EQ(6000, out[1]);
	for (uint32_t i = 2; i < 1024; i++)
		ASSERT_EQ(i, out[i]);
}

static uint64_t upload(struct vnpu_context ctx, const void *host, size_t size)
{
	uint64_t d = 0;

	if (vnpu_malloc(ctx, size, 0, &d) || vnpu_memcpy_htod(ctx, d, host, size))
		return 0;
	return d;
}

static int close_to(float want, float got)
{
	float diff = want > got ? want - got : got - want;
	float mag = want > 0 ? want : -want;

	return diff <= 1e-4f + 1e-4f * mag;
}

TEST_F(st, kernels_match_a_cpu_reference)
{
	enum { M = 7, N = 33, K = 19 };
	static float a[M * K], b[K * N], bt[N * K], x[M * N], y[M * N], c[M * N], row[M];
	static int8_t a8[M * K], b8[K * N];
	static int32_t c32[M * N];
	struct vnpu_kernel k;
	uint64_t da, db, dbt, dx, dy, dc, drow, da8, db8;

	for (int i = 0; i < M * K; i++) {
		a[i] = (float)((i * 37) % 17) / 8.0f - 1.0f;
		a8[i] = (int8_t)((i * 13) % 255 - 127);
	}
	for (int i = 0; i < K * N; i++) {
		b[i] = (float)((i * 11) % 13) / 4.0f - 1.5f;
		b8[i] = (int8_t)((i * 7) % 255 - 127);
	}
	for (int r = 0; r < K; r++)
		for (int col = 0; col < N; col++)
			bt[col * K + r] = b[r * N + col];
	for (int i = 0; i < M * N; i++) {
		x[i] = (float)(i % 23) / 3.0f - 3.0f;
		y[i] = (float)(i % 5) - 2.0f;
	}
	ASSERT_NE(0, da = upload(self->ctx, a, sizeof(a)));
	ASSERT_NE(0, db = upload(self->ctx, b, sizeof(b)));
	ASSERT_NE(0, dbt = upload(self->ctx, bt, sizeof(bt)));
	ASSERT_NE(0, dx = upload(self->ctx, x, sizeof(x)));
	ASSERT_NE(0, dy = upload(self->ctx, y, sizeof(y)));
	ASSERT_NE(0, dc = upload(self->ctx, c, sizeof(c)));
	ASSERT_NE(0, drow = upload(self->ctx, row, sizeof(row)));
	ASSERT_NE(0, da8 = upload(self->ctx, a8, sizeof(a8)));
	ASSERT_NE(0, db8 = upload(self->ctx, b8, sizeof(b8)));

	/* C = 0.5 * A B^T(stored transposed) + 0, against a plain triple loop. */
	k = (struct vnpu_kernel){ .op = VNPU_OP_GEMM, .flags = VNPU_GEMM_TRANS_B, .m = M, .n = N,
				  .k = K, .alpha = 0.5f, .a = da, .b = dbt, .c = dc };
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_kernel(self->s, &k));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, c, dc, sizeof(c)));
	for (int i = 0; i < M; i++) {
		for (int j = 0; j < N; j++) {
			float want = 0;

			for (int l = 0; l < K; l++)
				want += a[i * K + l] * b[l * N + j];
			ASSERT_TRUE(close_to(0.5f * want, c[i * N + j])) {
				TH_LOG("gemm [%d][%d]: %f vs %f", i, j, 0.5f * want, c[i * N + j]);
			}
		}
	}

	/* C = 2 X + Y, then softmax rows in place, then row sums (each ~1). */
	k = (struct vnpu_kernel){ .op = VNPU_OP_AXPY, .m = M, .n = N, .alpha = 2.0f,
				  .a = dx, .b = dy, .c = dc };
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_kernel(self->s, &k));
	/* The copies run on the default stream: wait for this one first. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, c, dc, sizeof(c)));
	for (int i = 0; i < M * N; i++)
		ASSERT_TRUE(close_to(2 * x[i] + y[i], c[i]));
	k = (struct vnpu_kernel){ .op = VNPU_OP_SOFTMAX, .m = M, .n = N, .a = dc, .c = dc };
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_kernel(self->s, &k));
	k = (struct vnpu_kernel){ .op = VNPU_OP_REDUCE_SUM, .m = M, .n = N, .a = dc, .c = drow };
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_kernel(self->s, &k));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, row, drow, sizeof(row)));
	for (int i = 0; i < M; i++)
		ASSERT_TRUE(close_to(1.0f, row[i]));

	/* int8 GEMM with int32 accumulation is exact. */
	k = (struct vnpu_kernel){ .op = VNPU_OP_GEMM_I8, .m = M, .n = N, .k = K, .alpha_i32 = 1,
				  .a = da8, .b = db8, .c = dc };
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_kernel(self->s, &k));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, c32, dc, sizeof(c32)));
	for (int i = 0; i < M; i++) {
		for (int j = 0; j < N; j++) {
			int32_t want = 0;

			for (int l = 0; l < K; l++)
				want += a8[i * K + l] * b8[l * N + j];
			ASSERT_EQ(want, c32[i * N + j]);
		}
	}
}

TEST_F(st, kernel_bad_input_is_refused_before_submitting)
{
	float buf[64] = { 0 };
	uint64_t d = upload(self->ctx, buf, sizeof(buf));
	struct vnpu_kernel ok = { .op = VNPU_OP_ADD, .m = 4, .n = 4, .a = d, .b = d + 64,
				  .c = d + 128 };
	struct vnpu_kernel k;

	ASSERT_NE(0, d);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_kernel(self->s, &ok));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_kernel(self->s, NULL));
	k = ok; k.op = 0;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_kernel(self->s, &k));
	k = ok; k.op = 17;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_kernel(self->s, &k));
	k = ok; k.m = 0;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_kernel(self->s, &k));
	k = ok; k.flags = VNPU_GEMM_TRANS_A;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_kernel(self->s, &k));
	k = ok; k.k = 3;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_kernel(self->s, &k));
	k = ok; k.c = d + 4096 - 32;	/* C runs past the (page-sized) allocation */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_kernel(self->s, &k));
	k = ok; k.lda = 2;		/* leading dimension below the row */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_kernel(self->s, &k));
	k = ok; k.op = VNPU_OP_RELU;	/* RELU takes no B */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_kernel(self->s, &k));
	k = ok; k.op = VNPU_OP_GEMM; k.k = 0;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_kernel(self->s, &k));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
}

TEST_F(st, batched_kernels_keep_their_own_arguments)
{
	float ones[256], out[256];
	uint64_t acc, one;

	for (int i = 0; i < 256; i++)
		ones[i] = 1.0f;
	ASSERT_NE(0, one = upload(self->ctx, ones, sizeof(ones)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, sizeof(out), 0, &acc));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(self->ctx, acc, 0, 256));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_begin_batch(self->s));
	/* acc += i * ones, 100 times with a different alpha each. */
	for (int i = 1; i <= 100; i++) {
		struct vnpu_kernel k = { .op = VNPU_OP_AXPY, .m = 16, .n = 16, .alpha = (float)i,
					 .a = one, .b = acc, .c = acc };

		ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_kernel(self->s, &k));
	}
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_end_batch(self->s));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, out, acc, sizeof(out)));
	for (int i = 0; i < 256; i++)
		ASSERT_EQ(5050.0f, out[i]);
}

/*
 * Tensor launches: a broadcast add and a batched matrix product, in a batch
 * with a 2-D launch (the two argument layouts share the slots).
 */
TEST_F(st, tensor_launches_match_a_cpu_reference)
{
	enum { B = 3, M = 4, N = 5, K = 6 };
	static float x[B * M * K], w[K * N], bias[N], y[B * M * N], z[B * M * N];
	uint64_t dx, dw, dbias, dy, dz;
	struct vnpu_tensor t;
	struct vnpu_kernel k;

	for (int i = 0; i < B * M * K; i++)
		x[i] = (float)((i * 7) % 11) / 4.0f - 1.0f;
	for (int i = 0; i < K * N; i++)
		w[i] = (float)((i * 5) % 9) / 3.0f - 1.5f;
	for (int i = 0; i < N; i++)
		bias[i] = (float)i - 2.0f;
	ASSERT_NE(0, dx = upload(self->ctx, x, sizeof(x)));
	ASSERT_NE(0, dw = upload(self->ctx, w, sizeof(w)));
	ASSERT_NE(0, dbias = upload(self->ctx, bias, sizeof(bias)));
	ASSERT_NE(0, dy = upload(self->ctx, y, sizeof(y)));
	ASSERT_NE(0, dz = upload(self->ctx, z, sizeof(z)));

	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_begin_batch(self->s));
	/* y[b] = x[b] (M x K) . w (K x N): dimensions (B, M, N, K), K contracted. */
	t = (struct vnpu_tensor){ .op = VNPU_OP_T_DOT, .ndim = 4, .axes = 8,
				  .shape = { B, M, N, K }, .a = dx, .b = dw, .c = dy,
				  .stride_a = { M * K, K, 0, 1 }, .stride_b = { 0, 0, 1, N },
				  .stride_c = { M * N, N, 1, 0 } };
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_tensor(self->s, &t));
	/* z = y + bias, the bias broadcast over B and M. */
	t = (struct vnpu_tensor){ .op = VNPU_OP_T_ADD, .ndim = 3, .shape = { B, M, N },
				  .a = dy, .b = dbias, .c = dz, .stride_a = { M * N, N, 1 },
				  .stride_b = { 0, 0, 1 }, .stride_c = { M * N, N, 1 } };
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_tensor(self->s, &t));
	/* Then relu in place with the 2-D operator. */
	k = (struct vnpu_kernel){ .op = VNPU_OP_RELU, .m = B * M, .n = N, .a = dz, .c = dz };
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_kernel(self->s, &k));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_end_batch(self->s));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, z, dz, sizeof(z)));
	for (int b = 0; b < B; b++)
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				float want = 0;

				for (int l = 0; l < K; l++)
					want += x[(b * M + i) * K + l] * w[l * N + j];
				want += bias[j];
				want = want > 0 ? want : 0;
				ASSERT_TRUE(close_to(want, z[(b * M + i) * N + j]));
			}
}

TEST_F(st, tensor_bad_input_is_refused)
{
	float buf[64] = { 0 };
	uint64_t d = upload(self->ctx, buf, sizeof(buf));
	struct vnpu_tensor ok = { .op = VNPU_OP_T_ADD, .ndim = 2, .shape = { 4, 4 },
				  .a = d, .b = d + 64, .c = d + 128, .stride_a = { 4, 1 },
				  .stride_b = { 0, 1 }, .stride_c = { 4, 1 } };
	struct vnpu_tensor t;

	ASSERT_NE(0, d);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_tensor(self->s, &ok));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor(self->s, NULL));
	t = ok; t.op = VNPU_OP_ADD;	/* a 2-D operator */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor(self->s, &t));
	t = ok; t.op = VNPU_OP_T_TOPK + 1;	/* past the last operator */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor(self->s, &t));
	t = ok; t.ndim = 7;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor(self->s, &t));
	t = ok; t.shape[1] = 0;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor(self->s, &t));
	t = ok; t.c = d + 4096 - 32;	/* C runs past the allocation */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor(self->s, &t));
	t = ok; t.stride_a[0] = 1024;	/* A's span leaves the allocation */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor(self->s, &t));
	/* Refused by the driver at submit, reported the same way. */
	t = ok; t.stride_c[1] = 0;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor(self->s, &t));
	t = ok; t.axes = 1;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor(self->s, &t));
	t = ok; t.window.kernel_h = 1;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor(self->s, &t));
	/* Not sticky: the stream still works. */
	EXPECT_EQ(VNPU_SUCCESS, vnpu_launch_tensor(self->s, &ok));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
}

/* vnpu_launch_tensor_typed(): fp16 and int8 tensors, and bad types. */
TEST_F(st, typed_tensor_launch)
{
	float buf[64] = { 0 };
	uint64_t d = upload(self->ctx, buf, sizeof(buf));
	/* C (int8) = A (fp16, 1.5 and -2.5) + B (fp32, 0.5): rounded to even. */
	uint16_t a[2] = { 0x3e00, 0xc100 };
	float b = 0.5f;
	int8_t c[2] = { 0 };
	struct vnpu_tensor ok = { .op = VNPU_OP_T_ADD, .ndim = 1, .shape = { 2 },
				  .a = d, .b = d + 64, .c = d + 128, .stride_a = { 1 },
				  .stride_b = { 0 }, .stride_c = { 1 } };
	struct vnpu_tensor_types ty = { VNPU_ELEM_F16, VNPU_ELEM_F32, VNPU_ELEM_I8 }, bad;
	struct vnpu_tensor t;

	ASSERT_NE(0, d);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_htod(self->ctx, d, a, sizeof(a)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_htod(self->ctx, d + 64, &b, sizeof(b)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_tensor_typed(self->s, &ok, &ty));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, c, d + 128, sizeof(c)));
	EXPECT_EQ(2, c[0]);
	EXPECT_EQ(-2, c[1]);
	/* NULL types: fp32, as vnpu_launch_tensor(). */
	EXPECT_EQ(VNPU_SUCCESS, vnpu_launch_tensor_typed(self->s, &ok, NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor_typed(self->s, NULL, &ty));
	bad = ty; bad.c = 5;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor_typed(self->s, &ok, &bad));
	t = ok; t.a = d + 1;	/* fp16 A misaligned */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor_typed(self->s, &t, &ty));
	/* Refused by the driver at submit: an integer C of a reduction. */
	t = ok; t.op = VNPU_OP_T_REDUCE_SUM; t.b = 0; t.stride_b[0] = 0; t.axes = 1;
	t.stride_c[0] = 0;
	bad = ty; bad.b = VNPU_ELEM_F32;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor_typed(self->s, &t, &bad));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
}

/*
 * vnpu_launch_tensor_ext(): the top 2 of a row and their indices, a
 * gather at int64 indices; bad members; an index out of range fails the
 * stream's work with VNPU_ERROR_DEVICE_FAULT.
 */
TEST_F(st, tensor_ext_launch)
{
	float buf[64] = { 0 }, x[5] = { 3.0f, -1.0f, 7.0f, 7.0f, 0.5f }, c[2];
	int64_t idx[3] = { 4, -5, 2 };
	int32_t dd[2];
	uint64_t d = upload(self->ctx, buf, sizeof(buf));
	struct vnpu_tensor top = { .op = VNPU_OP_T_TOPK, .ndim = 1, .axes = 1, .shape = { 5 },
				   .a = d, .c = d + 64, .stride_a = { 1 }, .stride_c = { 1 } };
	struct vnpu_tensor gat = { .op = VNPU_OP_T_GATHER, .ndim = 1, .axes = 1, .shape = { 3 },
				   .a = d, .b = d + 128, .c = d + 192, .stride_a = { 1 },
				   .stride_b = { 1 }, .stride_c = { 1 } };
	struct vnpu_tensor_types gty = { VNPU_ELEM_F32, VNPU_ELEM_I64, VNPU_ELEM_F32 };
	struct vnpu_tensor_ext ext = { .k = 2, .d = d + 96, .stride_d = { 1 } };
	struct vnpu_tensor_ext gext = { .k = 5 }, bad;
	struct vnpu_stream s2;
	float g[3];

	ASSERT_NE(0, d);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_htod(self->ctx, d, x, sizeof(x)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_htod(self->ctx, d + 128, idx, sizeof(idx)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_tensor_ext(self->s, &top, NULL, &ext));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_tensor_ext(self->s, &gat, &gty, &gext));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, c, d + 64, sizeof(c)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, dd, d + 96, sizeof(dd)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, g, d + 192, sizeof(g)));
	EXPECT_EQ(7.0f, c[0]);
	EXPECT_EQ(7.0f, c[1]);
	EXPECT_EQ(2, dd[0]);
	EXPECT_EQ(3, dd[1]);
	EXPECT_EQ(0.5f, g[0]);
	EXPECT_EQ(3.0f, g[1]);
	EXPECT_EQ(7.0f, g[2]);

	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor_ext(self->s, &top, NULL, NULL));
	bad = ext; bad.k = 0;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor_ext(self->s, &top, NULL, &bad));
	bad = ext; bad.d = d + 4096;	/* D outside the allocation */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor_ext(self->s, &top, NULL, &bad));
	bad = ext; bad.k = 6;		/* more than the axis: the driver refuses */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor_ext(self->s, &top, NULL, &bad));
	bad = gext; bad.k = 100;	/* A's axis leaves the allocation */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_launch_tensor_ext(self->s, &gat, &gty, &bad));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s, VNPU_TIMEOUT_INFINITE));

	/* Index 5 of 5 elements, on a stream of its own: the work fails. */
	idx[1] = 5;
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_htod(self->ctx, d + 128, idx, sizeof(idx)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(self->ctx, VNPU_PRIORITY_NORMAL, 0, &s2));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_launch_tensor_ext(s2, &gat, &gty, &gext));
	EXPECT_EQ(VNPU_ERROR_DEVICE_FAULT, vnpu_stream_synchronize(s2, VNPU_TIMEOUT_INFINITE));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_destroy(s2, 0));
}

TEST(device_reset_fails_queued_work_and_recovers)
{
	struct vnpu_stream_error err;
	enum vnpu_health health;
	struct vnpu_context ctx;
	struct vnpu_stream s, fresh;

	if (!vnpu_count_devices())
		SKIP(return, "no vnpu device");
	if (geteuid())
		SKIP(return, "reset needs root");
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &ctx));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(ctx, VNPU_PRIORITY_NORMAL, 0, &s));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(s, 2000 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(s, 2000 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_reset(0));
	EXPECT_EQ(VNPU_ERROR_DEVICE_FAULT, vnpu_stream_synchronize(s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_get_error(s, &err));
	EXPECT_EQ(VNPU_ERROR_DEVICE_FAULT, err.status);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_health(0, &health));
	EXPECT_EQ(VNPU_HEALTH_OK, health);
	/* New work runs normally after the reset. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(ctx, VNPU_PRIORITY_NORMAL, 0, &fresh));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(fresh, 1 * MS));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(fresh, VNPU_TIMEOUT_INFINITE));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_reset(99));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(ctx, 0));
	vnpu_finalize();
}

TEST(launch_blocking_makes_launches_synchronous)
{
	struct vnpu_context ctx;
	struct vnpu_stream s;

	if (!vnpu_count_devices())
		SKIP(return, "no vnpu device");
	setenv("VNPU_LAUNCH_BLOCKING", "1", 1);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &ctx));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(ctx, VNPU_PRIORITY_NORMAL, 0, &s));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(s, 200 * MS));
	/* Without the variable this would be NOT_READY for the next 200 ms. */
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_query(s));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(ctx, 0));
	vnpu_finalize();
	unsetenv("VNPU_LAUNCH_BLOCKING");
}

TEST(job_timeout_is_sticky_on_the_stream)
{
	struct vnpu_stream_error err;
	struct vnpu_context ctx;
	struct vnpu_stream s;

	if (!vnpu_count_devices())
		SKIP(return, "no vnpu device");
	if (module_param("job_timeout_ms") > 1000)
		SKIP(return, "needs job_timeout_ms <= 1000");
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &ctx));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(ctx, VNPU_PRIORITY_NORMAL, 0, &s));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(s, 3000 * MS));
	EXPECT_EQ(VNPU_ERROR_JOB_TIMEOUT, vnpu_stream_synchronize(s, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_get_error(s, &err));
	EXPECT_EQ(VNPU_ERROR_JOB_TIMEOUT, err.status);
	EXPECT_EQ(1, err.point);
	EXPECT_STREQ("vnpu_launch_delay", err.operation);
	/* Sticky: later work is refused, later synchronizes report it again. */
	EXPECT_EQ(VNPU_ERROR_JOB_TIMEOUT, vnpu_launch_delay(s, 1 * MS));
	EXPECT_EQ(VNPU_ERROR_JOB_TIMEOUT, vnpu_stream_synchronize(s, 0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_destroy(s, 0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(ctx, 0));
	vnpu_finalize();
}

/*
 * The founding outage: per-request contexts destroyed while their work is
 * still queued. Repeated VNPU_STRESS_ITERS times (default 200); device
 * memory must be exactly at its baseline afterwards.
 */
FIXTURE(outage) {
	int unused;
};

FIXTURE_SETUP(outage)
{
}

FIXTURE_TEARDOWN(outage)
{
}

TEST_F_TIMEOUT(outage, pattern_is_safe, 3000)
{
	const char *env = getenv("VNPU_STRESS_ITERS");
	int iters = env ? atoi(env) : 200;
	uint64_t baseline;
	uint32_t host[64] = { 1, 2, 3 };

	if (!vnpu_count_devices())
		SKIP(return, "no vnpu device");
	baseline = vram_used();
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	for (int i = 0; i < iters; i++) {
		struct vnpu_context ctx;
		struct vnpu_stream s;
		uint64_t a = 0, b = 0;

		ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &ctx));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(ctx, VNPU_PRIORITY_NORMAL, 0, &s));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(ctx, 65536, 0, &a));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(ctx, 65536, 0, &b));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_htod_async(s, a, host, sizeof(host)));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(s, 1 * MS));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtod_async(s, b, a, 65536));
		/* Free memory the queued copy still reads, then drop everything. */
		ASSERT_EQ(VNPU_SUCCESS, vnpu_free(ctx, a));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(ctx, i % 2 ? VNPU_DESTROY_ABORT : 0));
	}
	ASSERT_EQ(VNPU_SUCCESS, vnpu_finalize());
	/* Aborted contexts' work may still be finishing; it releases on its own. */
	EXPECT_EQ(baseline, vram_used_settled(baseline));
}

TEST_HARNESS_MAIN
