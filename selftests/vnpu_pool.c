// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: libvnpurt caching pool and data cache against the real
 * driver: copies on block addresses, reuse, stream-ordered reuse across two
 * streams proven with DELAY work and event state (never timings), a fenced
 * block reused at once by its own stream, vnpu_free_async() on blocks of
 * any pool and on addresses no pool holds, OOM retry on a small device,
 * bad input, the JSON snapshot, data cache hits, eviction behind queued
 * readers, teardown with everything live, a pool destroyed while other
 * threads allocate from it, pools destroyed and recreated under
 * allocating threads, and streams destroyed and recreated under threads
 * allocating on them.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "vnpu.h"
#include "vnpu_utils.h"

#define MS 1000000ULL
#define MIB (1ULL << 20)

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

static uint64_t vram_used_settled(uint64_t want)
{
	uint64_t used = vram_used();

	for (int i = 0; i < 100 && used != want; i++) {
		usleep(20000);
		used = vram_used();
	}
	return used;
}

/* Reads @words 32-bit words at @d and checks they all equal @want. */
static int all_words(struct vnpu_context ctx, uint64_t d, size_t words, uint32_t want)
{
	uint32_t *buf = malloc(words * 4);
	int ok = 1;

	if (!buf || vnpu_memcpy_dtoh(ctx, buf, d, words * 4) != VNPU_SUCCESS)
		ok = 0;
	for (size_t i = 0; ok && i < words; i++)
		ok = buf[i] == want;
	free(buf);
	return ok;
}

FIXTURE(pool) {
	struct vnpu_context ctx;
	struct vnpu_stream a, b;
	struct vnpu_pool pool;
	uint64_t baseline;
};

FIXTURE_SETUP(pool)
{
	if (!vnpu_count_devices())
		SKIP(return, "no vnpu device");
	self->baseline = vram_used();
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &self->ctx));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(self->ctx, VNPU_PRIORITY_NORMAL, 0, &self->a));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(self->ctx, VNPU_PRIORITY_NORMAL, 0, &self->b));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_default_pool(self->ctx, &self->pool));
}

FIXTURE_TEARDOWN(pool)
{
	if (!vnpu_count_devices())
		return;
	/* Pools, caches and their blocks go with the context. */
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(self->ctx, 0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_finalize());
	EXPECT_EQ(self->baseline, vram_used_settled(self->baseline));
}

TEST_F(pool, blocks_work_with_copies_and_are_reused)
{
	struct vnpu_pool_stats st;
	uint32_t in[2048], out[2048];
	uint64_t x = 0, y = 0, z = 0;

	for (int i = 0; i < 2048; i++)
		in[i] = 0x1000u + (uint32_t)i;
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->a, sizeof(in), &x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->a, sizeof(in), &y));
	EXPECT_EQ(0, x % 512);
	EXPECT_EQ(x + sizeof(in), y);	/* sub-ranges of one segment */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_htod_async(self->a, x, in, sizeof(in)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtod_async(self->a, y, x, sizeof(in)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh_async(self->a, out, y, sizeof(out)));
	EXPECT_EQ(0, memcmp(in, out, sizeof(in)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, y));
	/* Same stream, same size: the cached block at once. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->a, sizeof(in), &z));
	EXPECT_EQ(y, z);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &st));
	EXPECT_EQ(1, st.num_segments);
	EXPECT_EQ(1, st.num_segment_allocs);
	EXPECT_EQ(3, st.num_allocs);
	EXPECT_EQ(2, st.cache_hits);
	EXPECT_EQ(1, st.num_frees);
	EXPECT_EQ(2 * sizeof(in), st.allocated);
	EXPECT_EQ(2 * MIB, st.reserved);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, z));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->a, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &st));
	EXPECT_EQ(0, st.allocated);
	EXPECT_EQ(0, st.active);
	EXPECT_EQ(1, st.free_blocks);
	EXPECT_EQ(0, st.fragmentation);
	/* Trim gives the segment back to the driver. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_trim(self->pool, 0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &st));
	EXPECT_EQ(0, st.reserved);
	EXPECT_EQ(1, st.num_segment_frees);
}

/*
 * A block freed on A while A's DELAY work still runs is handed to A's later
 * work at once, but not to B. The event recorded on A after the free is
 * queried after B's allocation: NOT_READY then means A's work was pending
 * when B allocated, so B must have got other memory. Data written by A's
 * queued fill survives B's work.
 */
TEST_F(pool, block_freed_on_a_is_not_reused_by_b_before_a_is_done)
{
	const size_t size = 256 * 1024, words = size / 4;
	struct vnpu_event ev;
	struct vnpu_pool_stats st;
	uint64_t x = 0, y = 0, z = 0, w = 0;
	int pending;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_create(self->ctx, 0, &ev));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->a, size, &x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->a, 1500 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->a, x, 0xaaaaaaaa, words));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_record(ev, self->a));

	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->b, size, &y));
	pending = vnpu_event_query(ev) == VNPU_NOT_READY;
	if (!pending)
		SKIP(return, "A's DELAY finished before B allocated; nothing proven");
	EXPECT_NE(x, y);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &st));
	EXPECT_EQ(1, st.pending_blocks);
	/* B overwrites its block while A's fill is still queued. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->b, y, 0xbbbbbbbb, words));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->b, VNPU_TIMEOUT_INFINITE));
	/* A's own later work may take it at once: stream order protects it. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->a, size, &z));
	EXPECT_EQ(x, z);
	EXPECT_EQ(VNPU_NOT_READY, vnpu_event_query(ev));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->a, VNPU_TIMEOUT_INFINITE));
	EXPECT_TRUE(all_words(self->ctx, x, words, 0xaaaaaaaa));
	EXPECT_TRUE(all_words(self->ctx, y, words, 0xbbbbbbbb));

	/* Once A is done, B gets A's freed memory. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, z));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->a, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->b, y));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->b, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &st));
	EXPECT_EQ(0, st.pending_blocks);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->b, size, &w));
	EXPECT_TRUE(w == x || w == y);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_event_destroy(ev));
}

/*
 * A small block freed on A behind pending work is kept whole for A: A's
 * next allocation of that size gets it at once while the work is still
 * pending (the event recorded after the free is not ready), B gets other
 * memory, and A's later fill lands after its earlier one.
 */
TEST_F(pool, same_stream_reuses_a_fenced_block_at_once)
{
	const size_t size = 64 * 1024, words = size / 4;
	struct vnpu_pool_stats st;
	struct vnpu_event ev;
	uint64_t x = 0, y = 0, z = 0;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_create(self->ctx, 0, &ev));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->a, size, &x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->a, 1500 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->a, x, 0xaaaaaaaa, words));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_record(ev, self->a));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->b, size, &y));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->a, size, &z));
	if (vnpu_event_query(ev) != VNPU_NOT_READY)
		SKIP(return, "A's DELAY finished before the allocations; nothing proven");
	EXPECT_NE(x, y);
	EXPECT_EQ(x, z);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->b, y, 0xbbbbbbbb, words));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->a, z, 0xcccccccc, words));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->a, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->b, VNPU_TIMEOUT_INFINITE));
	EXPECT_TRUE(all_words(self->ctx, z, words, 0xcccccccc));
	EXPECT_TRUE(all_words(self->ctx, y, words, 0xbbbbbbbb));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &st));
	EXPECT_EQ(1, st.num_segment_allocs);
	EXPECT_EQ(3, st.num_allocs);
	EXPECT_EQ(2, st.cache_hits);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, z));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->b, y));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_event_destroy(ev));
}

/*
 * vnpu_free_async() finds the pool of any block of the stream's context,
 * not only the default pool's, and refuses addresses no pool holds now:
 * a plain vnpu_malloc() buffer, a block of a destroyed pool, an address
 * of a segment given back by trim.
 */
TEST_F(pool, free_async_finds_the_pool_of_any_block)
{
	struct vnpu_pool p;
	struct vnpu_pool_stats st, def_before, def_after;
	uint64_t x = 0, y = 0, plain = 0, gone = 0;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_create(self->ctx, 0, &p));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &def_before));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_malloc(p, 4096, self->a, &x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_malloc(p, 3 * MIB, self->a, &y));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->b, x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, y));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(p, &st));
	EXPECT_EQ(2, st.num_frees);
	EXPECT_EQ(0, st.allocated);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &def_after));
	EXPECT_EQ(def_before.num_frees, def_after.num_frees);

	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, 64 * 1024, 0, &plain));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free_async(self->a, plain));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_free(self->ctx, plain));

	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_malloc(p, 4096, self->a, &gone));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_destroy(p));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free_async(self->a, gone));

	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->a, 4096, &x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->a, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_trim(self->pool, 0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &st));
	ASSERT_EQ(0, st.reserved);
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free_async(self->a, x));
}

/* A synchronous free of a block allocated on A fences on A, too. */
TEST_F(pool, free_without_stream_fences_on_the_allocating_stream)
{
	struct vnpu_event ev;
	uint64_t x = 0, y = 0;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_create(self->ctx, 0, &ev));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_malloc(self->pool, 4096, self->a, &x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->a, 1000 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->a, x, 7, 1024));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_record(ev, self->a));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_free(self->pool, x, (struct vnpu_stream){ 0 }));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_malloc(self->pool, 4096, (struct vnpu_stream){ 0 }, &y));
	if (vnpu_event_query(ev) != VNPU_NOT_READY)
		SKIP(return, "A's DELAY finished too early; nothing proven");
	EXPECT_NE(x, y);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_event_destroy(ev));
}

TEST_F(pool, user_pools_attributes_and_snapshot)
{
	struct vnpu_pool p;
	struct vnpu_pool_stats st;
	uint64_t v = 0, x = 0, big = 0;
	size_t need = 0;
	char *json;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_create(self->ctx, 0, &p));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_attr(p, VNPU_POOL_ATTR_SEGMENT_SIZE, &v));
	EXPECT_EQ(20 * MIB, v);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_set_attr(p, VNPU_POOL_ATTR_SEGMENT_SIZE, 4 * MIB));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_set_attr(p, VNPU_POOL_ATTR_MAX_SPLIT_SIZE, 8 * MIB));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_malloc(p, 3 * MIB, self->a, &x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_malloc(p, 9 * MIB, self->a, &big));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(self->ctx, big + 9 * MIB - 4, 5, 1));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(p, &st));
	EXPECT_EQ(4 * MIB + 10 * MIB, st.reserved);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_snapshot_json(p, NULL, 0, &need));
	json = malloc(need);
	ASSERT_NE(NULL, json);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_snapshot_json(p, json, need, NULL));
	EXPECT_EQ(need - 1, strlen(json));
	EXPECT_NE(NULL, strstr(json, "\"kind\":\"oversize\""));
	EXPECT_NE(NULL, strstr(json, "\"requested\":3145728"));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_pool_snapshot_json(p, json, 8, NULL));
	EXPECT_EQ(7, strlen(json));
	free(json);
	/* A lower release threshold releases at once. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_free(p, big, self->a));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->a, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_set_attr(p, VNPU_POOL_ATTR_RELEASE_THRESHOLD, 0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(p, &st));
	EXPECT_EQ(4 * MIB, st.reserved);
	/* Destroying a pool with a live block releases everything. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_destroy(p));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_pool_get_stats(p, &st));
}

TEST_F(pool, bad_input_is_refused_and_changes_nothing)
{
	struct vnpu_context other;
	struct vnpu_stream os;
	struct vnpu_pool p, stale, bogus = { 0x1234 };
	struct vnpu_pool_stats before, after;
	uint64_t x = 0, y = 0, v;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_create(self->ctx, 0, &stale));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_destroy(stale));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_pool_malloc(stale, 64, self->a, &x));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_pool_destroy(stale));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_pool_malloc(bogus, 64, self->a, &x));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_pool_trim(bogus, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_pool_free((struct vnpu_pool){ 0 }, 0,
							    self->a));
	/* A stream handle is not a pool handle. */
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE,
		  vnpu_pool_get_stats((struct vnpu_pool){ self->a.handle }, &before));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_pool_destroy(self->pool));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_pool_create(self->ctx, 1, &p));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_pool_malloc(self->pool, 0, self->a, &x));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_malloc_async(self->a, 64, NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_pool_set_attr(self->pool, 99, 1));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_pool_set_attr(self->pool, VNPU_POOL_ATTR_MAX_SPLIT_SIZE, 4096));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_pool_get_attr(self->pool, -1, &v));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_pool_get_stats(self->pool, NULL));

	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->a, 5000, &x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->a, 5000, &y));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, x));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &before));
	/* Double free, an address inside a block, one never allocated. */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free_async(self->a, x));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free_async(self->a, y + 512));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_pool_free(self->pool, x, self->a));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free_async(self->a, 0xdead0000));
	/* vnpu_free() of a block is refused too: it is not a whole allocation. */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free(self->ctx, y));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &after));
	EXPECT_EQ(before.allocated, after.allocated);
	EXPECT_EQ(before.num_frees, after.num_frees);
	EXPECT_EQ(before.reserved, after.reserved);
	/* Counted when the pool is named; vnpu_free_async() finds no pool to blame. */
	EXPECT_EQ(before.bad_frees + 1, after.bad_frees);
	/* The block is still good. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(self->ctx, y, 9, 1250));
	EXPECT_TRUE(all_words(self->ctx, y, 1250, 9));

	/* Streams and pools of another context do not mix. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &other));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(other, VNPU_PRIORITY_NORMAL, 0, &os));
	EXPECT_EQ(VNPU_ERROR_WRONG_CONTEXT, vnpu_pool_malloc(self->pool, 64, os, &x));
	EXPECT_EQ(VNPU_ERROR_WRONG_CONTEXT, vnpu_pool_free(self->pool, y, os));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free_async(os, y));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(other, 0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, y));
}

struct pool_user {
	struct vnpu_pool pool;
	atomic_int *calls;	/* calls made by all threads */
	int bad;		/* a status other than success or a stale handle */
	int stale;		/* calls refused with VNPU_ERROR_INVALID_HANDLE */
	int last;		/* status of the last allocation */
};

/* Allocates and frees until the pool is gone (bounded). */
static void *pool_user_run(void *arg)
{
	struct pool_user *u = arg;
	uint64_t d;

	for (int i = 0; i < 4000; i++) {
		int s = vnpu_pool_malloc(u->pool, 512 + (uint64_t)(i % 64) * 1024,
					 (struct vnpu_stream){ 0 }, &d);

		atomic_fetch_add(u->calls, 1);
		u->last = s;
		if (s == VNPU_SUCCESS)
			s = vnpu_pool_free(u->pool, d, (struct vnpu_stream){ 0 });
		if (s == VNPU_ERROR_INVALID_HANDLE)
			u->stale++;
		else if (s != VNPU_SUCCESS)
			u->bad++;
		if (u->stale > 100)
			break;
	}
	return NULL;
}

TEST_F(pool, pool_destroyed_while_threads_allocate)
{
	enum { THREADS = 4 };
	struct pool_user u[THREADS] = { 0 };
	pthread_t t[THREADS];
	atomic_int calls = 0;
	struct vnpu_pool p;
	uint64_t d;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_create(self->ctx, 0, &p));
	for (int i = 0; i < THREADS; i++) {
		u[i].pool = p;
		u[i].calls = &calls;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, pool_user_run, &u[i]));
	}
	/* Let them contend for the pool's lock, then destroy it under them. */
	for (int i = 0; i < 2000 && atomic_load(&calls) < 400; i++)
		usleep(1000);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_pool_destroy(p));
	for (int i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, pthread_join(t[i], NULL));
		EXPECT_EQ(0, u[i].bad);
	}
	/* Every thread that ran past the destroy was refused, not crashed. */
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_pool_malloc(p, 64, self->a, &d));
	for (int i = 0; i < THREADS; i++)
		if (u[i].stale)
			EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, u[i].last);
}

struct pool_churn {
	_Atomic uint64_t current;	/* handle of the newest pool */
	_Atomic uint64_t previous;	/* the pool destroyed next, then stale */
	atomic_int calls;		/* calls made by all threads */
	atomic_int stop;
};

struct churn_user {
	struct pool_churn *churn;
	int ok, stale, bad;		/* successes, INVALID_HANDLE, anything else */
};

static void churn_count(struct churn_user *u, int status)
{
	if (status == VNPU_SUCCESS)
		u->ok++;
	else if (status == VNPU_ERROR_INVALID_HANDLE)
		u->stale++;
	else
		u->bad++;
}

/* Allocates and frees on the newest and on the previous pool, live or not (bounded). */
static void *churn_user_run(void *arg)
{
	struct churn_user *u = arg;
	uint64_t d;

	for (int i = 0; i < 1000000 && !atomic_load(&u->churn->stop); i++) {
		_Atomic uint64_t *which = i & 1 ? &u->churn->previous : &u->churn->current;
		struct vnpu_pool p = { atomic_load(which) };
		int s = vnpu_pool_malloc(p, 512 + (uint64_t)(i % 32) * 2048,
					 (struct vnpu_stream){ 0 }, &d);

		churn_count(u, s);
		if (s == VNPU_SUCCESS)
			churn_count(u, vnpu_pool_free(p, d, (struct vnpu_stream){ 0 }));
		atomic_fetch_add(&u->churn->calls, 1);
	}
	return NULL;
}

/* Waits until the threads made @n more calls (bounded: 2 s at most). */
static void wait_for_calls(struct pool_churn *churn, int n)
{
	int target = atomic_load(&churn->calls) + n;

	for (int i = 0; i < 2000 && atomic_load(&churn->calls) < target; i++)
		usleep(1000);
}

/*
 * Pools destroyed and created while other threads allocate from them: a
 * destroyed pool's slot goes to an event at once, and its memory to the
 * next pool, so a stale handle meets a slot of another type and a pool
 * object reused under a new handle. Every call succeeds or is refused
 * with VNPU_ERROR_INVALID_HANDLE, and the device memory comes back.
 */
TEST_F(pool, pools_destroyed_and_recreated_under_allocating_threads)
{
	enum { THREADS = 3, ROUNDS = 30 };
	struct churn_user u[THREADS] = { 0 };
	struct vnpu_pool pools[ROUNDS + 1];
	struct pool_churn churn = { 0 };
	uint64_t before = vram_used(), d;
	pthread_t t[THREADS];
	int ok = 0, stale = 0, rounds = 0;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_create(self->ctx, 0, &pools[0]));
	atomic_store(&churn.current, pools[0].handle);
	atomic_store(&churn.previous, pools[0].handle);
	for (int i = 0; i < THREADS; i++) {
		u[i].churn = &churn;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, churn_user_run, &u[i]));
	}
	/* No ASSERT until the threads are joined: they use this frame. */
	for (int r = 1; r <= ROUNDS; r++) {
		struct vnpu_event e;

		rounds = r;
		EXPECT_EQ(VNPU_SUCCESS, vnpu_pool_create(self->ctx, 0, &pools[r]));
		if (_metadata->exit_code)
			break;
		atomic_store(&churn.previous, pools[r - 1].handle);
		atomic_store(&churn.current, pools[r].handle);
		/* Let them work on both a little (bounded, not timed), then destroy under them. */
		wait_for_calls(&churn, 100);
		EXPECT_EQ(VNPU_SUCCESS, vnpu_pool_destroy(pools[r - 1]));
		/* The freed slot now names an event. */
		EXPECT_EQ(VNPU_SUCCESS, vnpu_event_create(self->ctx, 0, &e));
		EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE,
			  vnpu_pool_malloc(pools[r - 1], 64, (struct vnpu_stream){ 0 }, &d));
		EXPECT_EQ(VNPU_SUCCESS, vnpu_event_destroy(e));
		/* And on the stale handle a little. */
		wait_for_calls(&churn, 100);
	}
	atomic_store(&churn.stop, 1);
	for (int i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, pthread_join(t[i], NULL));
		EXPECT_EQ(0, u[i].bad);
		ok += u[i].ok;
		stale += u[i].stale;
	}
	TH_LOG("%d calls succeeded, %d were refused as stale", ok, stale);
	EXPECT_GT(ok, 0);
	ASSERT_EQ(ROUNDS, rounds);
	/* The last pool still works; every earlier handle stays refused. */
	ASSERT_EQ(VNPU_SUCCESS,
		  vnpu_pool_malloc(pools[ROUNDS], 4096, (struct vnpu_stream){ 0 }, &d));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_pool_free(pools[ROUNDS], d, (struct vnpu_stream){ 0 }));
	for (int r = 0; r < ROUNDS; r++) {
		EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE,
			  vnpu_pool_malloc(pools[r], 64, (struct vnpu_stream){ 0 }, &d));
		EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE,
			  vnpu_pool_free(pools[r], d, (struct vnpu_stream){ 0 }));
		EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_pool_destroy(pools[r]));
	}
	EXPECT_EQ(VNPU_SUCCESS, vnpu_pool_destroy(pools[ROUNDS]));
	/* Every segment of every pool went back to the driver. */
	EXPECT_EQ(before, vram_used_settled(before));
}

struct stream_user {
	struct churn_user u;		/* churn: current and previous are stream handles */
	struct vnpu_pool pool;		/* the default pool, for blocks whose stream went */
};

/* vnpu_malloc_async() and vnpu_free_async() on the newest and the previous stream (bounded). */
static void *stream_user_run(void *arg)
{
	struct stream_user *su = arg;
	struct churn_user *u = &su->u;
	uint64_t d;

	for (int i = 0; i < 1000000 && !atomic_load(&u->churn->stop); i++) {
		_Atomic uint64_t *which = i & 1 ? &u->churn->previous : &u->churn->current;
		struct vnpu_stream st = { atomic_load(which) };
		int s = vnpu_malloc_async(st, 512 + (uint64_t)(i % 32) * 2048, &d);

		churn_count(u, s);
		if (s == VNPU_SUCCESS) {
			s = vnpu_free_async(st, d);
			churn_count(u, s);
			/* Its stream went meanwhile: the block is freed by pool. */
			if (s == VNPU_ERROR_INVALID_HANDLE)
				churn_count(u, vnpu_pool_free(su->pool, d, (struct vnpu_stream){ 0 }));
		}
		atomic_fetch_add(&u->churn->calls, 1);
	}
	return NULL;
}

/*
 * Streams destroyed and created while other threads allocate on them
 * with vnpu_malloc_async()/vnpu_free_async(). The stream lookup takes its
 * reference without the handle table's lock, and stream objects are
 * reused, so a stale handle meets a stream released or reused under
 * another handle. Every call succeeds or is refused with
 * VNPU_ERROR_INVALID_HANDLE, and no block stays allocated.
 */
TEST_F(pool, streams_destroyed_and_recreated_under_async_allocators)
{
	enum { THREADS = 3, ROUNDS = 20 };
	struct stream_user u[THREADS] = { 0 };
	struct vnpu_stream streams[ROUNDS + 1];
	struct pool_churn churn = { 0 };
	struct vnpu_pool_stats st;
	pthread_t t[THREADS];
	int ok = 0, stale = 0, rounds = 0;
	uint64_t d;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(self->ctx, VNPU_PRIORITY_NORMAL, 0,
						   &streams[0]));
	atomic_store(&churn.current, streams[0].handle);
	atomic_store(&churn.previous, streams[0].handle);
	for (int i = 0; i < THREADS; i++) {
		u[i].u.churn = &churn;
		u[i].pool = self->pool;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, stream_user_run, &u[i]));
	}
	/* No ASSERT until the threads are joined: they use this frame. */
	for (int r = 1; r <= ROUNDS; r++) {
		rounds = r;
		EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_create(self->ctx, VNPU_PRIORITY_NORMAL, 0,
							   &streams[r]));
		if (_metadata->exit_code)
			break;
		atomic_store(&churn.previous, streams[r - 1].handle);
		atomic_store(&churn.current, streams[r].handle);
		wait_for_calls(&churn, 100);
		EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_destroy(streams[r - 1], 0));
		/* And on the stale handle a little. */
		wait_for_calls(&churn, 100);
	}
	atomic_store(&churn.stop, 1);
	for (int i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, pthread_join(t[i], NULL));
		EXPECT_EQ(0, u[i].u.bad);
		ok += u[i].u.ok;
		stale += u[i].u.stale;
	}
	TH_LOG("%d calls succeeded, %d were refused as stale", ok, stale);
	EXPECT_GT(ok, 0);
	EXPECT_GT(stale, 0);
	ASSERT_EQ(ROUNDS, rounds);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &st));
	EXPECT_EQ(0, st.allocated);
	for (int r = 0; r < ROUNDS; r++)
		EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_malloc_async(streams[r], 64, &d));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(streams[ROUNDS], 4096, &d));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_free_async(streams[ROUNDS], d));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_stream_destroy(streams[ROUNDS], 0));
}

/* On a 64 MiB device: cached segments are given back when the driver is full. */
TEST_F(pool, out_of_memory_releases_the_cache_and_retries)
{
	struct vnpu_mem_info info;
	struct vnpu_pool_stats st, st0;
	uint64_t blocks[96], big = 0, huge = 0;
	unsigned int n = 0;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_mem_get_info(self->ctx, &info));
	if (info.total > 256 * MIB)
		SKIP(return, "needs a small device (vram_size_mb=64)");
	/* Fill the device with 1 MiB blocks in 2 MiB segments, then free them all. */
	while (n < 96 && vnpu_malloc_async(self->a, MIB, &blocks[n]) == VNPU_SUCCESS)
		n++;
	ASSERT_GT(n, 8);
	for (unsigned int i = 0; i < n; i++)
		ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, blocks[i]));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->a, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &st));
	EXPECT_EQ(0, st.allocated);
	EXPECT_GE(st.reserved, (uint64_t)(n - 1) * MIB);
	/* Failed fill attempts were retried and counted. */
	EXPECT_GE(st.oom_failures, 1);
	st0 = st;
	/* Nothing of the device is free, but the pool caches it all. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->a, 16 * MIB, &big));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &st));
	EXPECT_EQ(st0.oom_retries + 1, st.oom_retries);
	EXPECT_EQ(st0.oom_failures, st.oom_failures);
	EXPECT_LT(st.reserved, st0.reserved);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(self->ctx, big, 3, 16 * MIB / 4));
	EXPECT_TRUE(all_words(self->ctx, big + 16 * MIB - 4096, 1024, 3));
	/* More than the device has left: a counted failure, nothing changed. */
	EXPECT_EQ(VNPU_ERROR_OUT_OF_DEVICE_MEMORY,
		  vnpu_malloc_async(self->a, info.total - 8 * MIB, &huge));
	st0 = st;
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_stats(self->pool, &st));
	EXPECT_EQ(st0.oom_retries + 1, st.oom_retries);
	EXPECT_EQ(st0.oom_failures + 1, st.oom_failures);
	EXPECT_EQ(16 * MIB, st.allocated);
	EXPECT_EQ(VNPU_ERROR_OUT_OF_DEVICE_MEMORY, vnpu_get_last_error());
	ASSERT_EQ(VNPU_SUCCESS, vnpu_free_async(self->a, big));
}

TEST_F(pool, data_cache_hits_evicts_and_counts)
{
	static uint32_t tables[4][4096];
	struct vnpu_data_cache c;
	struct vnpu_data_cache_stats st;
	uint64_t d[4] = { 0 }, again = 0;

	for (int t = 0; t < 4; t++)
		for (int i = 0; i < 4096; i++)
			tables[t][i] = (uint32_t)(t * 0x01010101u);
	/* Room for two 16 KiB tables. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_create(self->a, 40000, 0, &c));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_get(c, self->a, 1, tables[1], 16384, &d[1]));
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_get(c, (struct vnpu_stream){ 0 }, 1,
							    tables[1], 16384, &again));
	EXPECT_EQ(d[1], again);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_get(c, self->a, 2, tables[2], 16384, &d[2]));
	/* A third table: the rarely used one (2) goes, the frequent one stays. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_get(c, self->a, 3, tables[3], 16384, &d[3]));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_get(c, self->a, 1, tables[1], 16384, &again));
	EXPECT_EQ(d[1], again);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->a, VNPU_TIMEOUT_INFINITE));
	EXPECT_TRUE(all_words(self->ctx, d[1], 4096, 0x01010101u));
	EXPECT_TRUE(all_words(self->ctx, d[3], 4096, 0x03030303u));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_get_stats(c, &st));
	EXPECT_EQ(6, st.hits);
	EXPECT_EQ(3, st.misses);
	EXPECT_EQ(1, st.evictions);
	EXPECT_EQ(3 * 16384, st.bytes_loaded);
	EXPECT_EQ(6 * 16384, st.bytes_hit);
	EXPECT_EQ(2, st.entries);
	EXPECT_EQ(2 * 16384, st.resident_bytes);
	/* Invalidate, and bad input. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_invalidate(c, 1));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_invalidate(c, 77));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_data_cache_get(c, self->a, 9, tables[0], 50000, &again));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_data_cache_get(c, self->a, 9, NULL, 4, &again));
	/* Not shared: another stream is refused. */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_data_cache_get(c, self->b, 9, tables[0], 4, &again));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_data_cache_create(self->a, 0, 0, &c));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_data_cache_create(self->a, 1, 0x80, &c));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_get_stats(c, &st));
	EXPECT_EQ(1, st.entries);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_destroy(c));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_data_cache_get_stats(c, &st));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_data_cache_destroy(c));
}

/*
 * An entry evicted while queued work on A still reads it is not handed to
 * B: A copies the entry out after a DELAY, the next get evicts it, and B
 * allocates the same size while A's copy is still pending.
 */
TEST_F(pool, eviction_never_frees_data_queued_work_reads)
{
	const size_t size = 64 * 1024;
	uint32_t *t1 = malloc(size), *t2 = malloc(size);
	struct vnpu_data_cache c;
	struct vnpu_event ev;
	uint64_t e1 = 0, e2 = 0, dst = 0, y = 0;

	ASSERT_NE(NULL, t1);
	ASSERT_NE(NULL, t2);
	for (size_t i = 0; i < size / 4; i++) {
		t1[i] = 0x11111111;
		t2[i] = 0x22222222;
	}
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_create(self->ctx, 0, &ev));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, size, 0, &dst));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_create(self->a, size, 0, &c));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_get(c, self->a, 1, t1, size, &e1));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->a, 1500 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtod_async(self->a, dst, e1, size));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_event_record(ev, self->a));
	/* Only one fits: entry 1 is evicted while the copy reading it is queued. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_get(c, self->a, 2, t2, size, &e2));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_async(self->b, size, &y));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32_async(self->b, y, 0xbad0bad0, size / 4));
	if (vnpu_event_query(ev) != VNPU_NOT_READY)
		SKIP(return, "A's DELAY finished too early; nothing proven");
	EXPECT_NE(e1, y);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_synchronize_all(self->ctx, VNPU_TIMEOUT_INFINITE));
	EXPECT_TRUE(all_words(self->ctx, dst, size / 4, 0x11111111));
	EXPECT_TRUE(all_words(self->ctx, e2, size / 4, 0x22222222));
	free(t1);
	free(t2);
	/* The cache and the event are left for the context's teardown. */
}

TEST_F(pool, shared_data_cache_serves_two_streams)
{
	static uint32_t table[8192];
	struct vnpu_data_cache c;
	struct vnpu_data_cache_stats st;
	uint32_t out[8192];
	uint64_t da = 0, db = 0, dst = 0;

	for (int i = 0; i < 8192; i++)
		table[i] = 0x5a5a0000u + (uint32_t)i;
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, sizeof(table), 0, &dst));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_create(self->a, 1 * MIB, VNPU_DATA_CACHE_SHARED, &c));
	/* Loaded on A behind a DELAY; B's copy of it must wait for the load. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_delay(self->a, 300 * MS));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_get(c, self->a, 42, table, sizeof(table), &da));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_get(c, self->b, 42, table, sizeof(table), &db));
	EXPECT_EQ(da, db);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtod_async(self->b, dst, db, sizeof(table)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->b, VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx, out, dst, sizeof(out)));
	EXPECT_EQ(0, memcmp(table, out, sizeof(out)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_get_stats(c, &st));
	EXPECT_EQ(1, st.hits);
	EXPECT_EQ(1, st.misses);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_data_cache_destroy(c));
}

TEST(bad_pool_conf_is_a_config_error)
{
	struct vnpu_context ctx;
	struct vnpu_pool p;
	uint64_t v = 0;

	if (!vnpu_count_devices())
		SKIP(return, "no vnpu device");
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &ctx));
	setenv("VNPU_POOL_CONF", "max_split_mb=lots", 1);
	EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG, vnpu_ctx_default_pool(ctx, &p));
	EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG, vnpu_pool_create(ctx, 0, &p));
	setenv("VNPU_POOL_CONF", "max_split_mb=64,release_threshold_mb=256", 1);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_default_pool(ctx, &p));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_attr(p, VNPU_POOL_ATTR_MAX_SPLIT_SIZE, &v));
	EXPECT_EQ(64 * MIB, v);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_pool_get_attr(p, VNPU_POOL_ATTR_RELEASE_THRESHOLD, &v));
	EXPECT_EQ(256 * MIB, v);
	unsetenv("VNPU_POOL_CONF");
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(ctx, 0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_finalize());
}

TEST_HARNESS_MAIN
