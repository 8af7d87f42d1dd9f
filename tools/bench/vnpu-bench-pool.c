// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-bench-pool: the caching pool and the data cache, side by side with
 * their alternatives in one run.
 *
 *  1. allocation+free of a cached block (vnpu_pool_malloc/free without a
 *     stream, and vnpu_malloc_async/free_async on an idle stream and on a
 *     stream that has run work, whose frees are fenced) next to glibc
 *     malloc+free and to a kernel allocation (vnpu_malloc+vnpu_free);
 *  2. a fragmentation workload (interleaved sizes, random lifetimes) with
 *     the pool and without it: peak reserved over peak requested bytes;
 *  3. a skewed access trace (few hot small items, many cold large ones)
 *     through no cache, an LRU data cache and the default (frequency
 *     against size) data cache: hit rate and bytes moved.
 *
 * It reports and never judges. Output is kselftest TAP ending with a
 * "# Totals:" line: pass if it ran, fail if a call failed, skip without a
 * device.
 *
 * Usage: vnpu-bench-pool [-l] [-n ITERATIONS] [-d DEVICE]
 *   -l  the allocation+free table only (for counting instructions with
 *       valgrind --tool=callgrind: nothing else calls the pool)
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vnpu.h"

#define KIB 1024ULL
#define MIB (1024ULL * 1024ULL)

static int failed;

#define CHECK(call) do {						\
	int __s = (call);						\
	if (__s != VNPU_SUCCESS) {					\
		printf("# error: %s: %s\n", #call, vnpu_status_name(__s));	\
		failed = 1;						\
		return;							\
	}								\
} while (0)

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Keeps the compiler from dropping malloc/free pairs. */
static void *volatile sink;

/* Median of five, sorting @r. */
static double median5(double *r)
{
	for (int i = 1; i < 5; i++)
		for (int j = i; j > 0 && r[j] < r[j - 1]; j--) {
			double t = r[j];

			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	return r[2];
}

/*
 * One loop per column, neither inlined nor merged, so that callgrind's inclusive count
 * of each is the instructions of its pairs (plus a few of loop).
 */
static __attribute__((noipa)) double pairs_glibc(uint64_t size, unsigned long iters)
{
	double t0 = now_ns();

	for (unsigned long i = 0; i < iters; i++) {
		sink = malloc(size);
		free(sink);
	}
	return (now_ns() - t0) / (double)iters;
}

static __attribute__((noipa)) double pairs_pool(struct vnpu_pool pool, uint64_t size,
						unsigned long iters)
{
	struct vnpu_stream none = { 0 };
	double t0 = now_ns();
	uint64_t d;

	for (unsigned long i = 0; i < iters; i++) {
		vnpu_pool_malloc(pool, size, none, &d);
		vnpu_pool_free(pool, d, none);
	}
	return (now_ns() - t0) / (double)iters;
}

static inline double pairs_async(struct vnpu_stream s, uint64_t size, unsigned long iters)
{
	double t0 = now_ns();
	uint64_t d;

	for (unsigned long i = 0; i < iters; i++) {
		vnpu_malloc_async(s, size, &d);
		vnpu_free_async(s, d);
	}
	return (now_ns() - t0) / (double)iters;
}

static __attribute__((noipa)) double pairs_async_idle(struct vnpu_stream s, uint64_t size,
						      unsigned long iters)
{
	return pairs_async(s, size, iters);
}

static __attribute__((noipa)) double pairs_async_used(struct vnpu_stream s, uint64_t size,
						      unsigned long iters)
{
	return pairs_async(s, size, iters);
}

/*
 * @s is idle (nothing ever submitted: its frees need no fence); @busy has
 * run work (done by now), so every free on it is fenced at its last point.
 */
static void bench_latency(struct vnpu_context ctx, struct vnpu_stream s,
			  struct vnpu_stream busy, unsigned long iters)
{
	static const uint64_t sizes[] = { 4 * KIB, 64 * KIB, 1 * MIB };
	struct vnpu_stream none = { 0 };
	struct vnpu_pool pool;

	CHECK(vnpu_ctx_default_pool(ctx, &pool));
	printf("# 1. allocation+free of one block, ns per pair (median of 5 runs)\n");
	printf("# | size | glibc malloc+free | pool malloc+free | malloc_async+free_async (idle stream) | malloc_async+free_async (stream that ran work) | vnpu_malloc+vnpu_free (kernel) | pool/glibc | async idle/pool | async used/pool | kernel/pool |\n");
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint64_t size = sizes[k], d;
		double r[5][5], med[5];
		unsigned long kiters = iters / 200 ? iters / 200 : 1;

		/* Warm: the pool holds a segment, glibc its arena. */
		CHECK(vnpu_pool_malloc(pool, size, none, &d));
		CHECK(vnpu_pool_free(pool, d, none));
		free(malloc(size));
		for (int run = 0; run < 5; run++) {
			double t0;

			r[0][run] = pairs_glibc(size, iters);
			r[1][run] = pairs_pool(pool, size, iters);
			r[2][run] = pairs_async_idle(s, size, iters);
			r[3][run] = pairs_async_used(busy, size, iters);
			t0 = now_ns();
			for (unsigned long i = 0; i < kiters; i++) {
				CHECK(vnpu_malloc(ctx, size, 0, &d));
				CHECK(vnpu_free(ctx, d));
			}
			r[4][run] = (now_ns() - t0) / (double)kiters;
		}
		for (int m = 0; m < 5; m++)
			med[m] = median5(r[m]);
		printf("# | %llu KiB | %.1f | %.1f | %.1f | %.1f | %.0f",
		       (unsigned long long)(size / KIB), med[0], med[1], med[2], med[3], med[4]);
		printf(" | %.2fx | %.2fx | %.2fx | %.0fx |\n", med[1] / med[0], med[2] / med[1],
		       med[3] / med[1], med[4] / med[1]);
	}
	CHECK(vnpu_stream_synchronize(s, VNPU_TIMEOUT_INFINITE));
	CHECK(vnpu_stream_synchronize(busy, VNPU_TIMEOUT_INFINITE));
	printf("ok 1 latency\n");
}

/* A stream that has run one job, done by the time it returns. */
static int used_stream(struct vnpu_context ctx, struct vnpu_stream *out)
{
	uint64_t d;
	int status = vnpu_stream_create(ctx, VNPU_PRIORITY_NORMAL, 0, out);

	if (status == VNPU_SUCCESS)
		status = vnpu_malloc(ctx, 4096, 0, &d);
	if (status != VNPU_SUCCESS)
		return status;
	status = vnpu_memset_d32_async(*out, d, 0, 1024);
	if (status == VNPU_SUCCESS)
		status = vnpu_stream_synchronize(*out, VNPU_TIMEOUT_INFINITE);
	vnpu_free(ctx, d);
	return status;
}

/* xorshift64*, deterministic across runs. */
static uint64_t rng(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ULL;
}

static uint64_t frag_size(uint64_t *state)
{
	static const uint64_t base[] = { 3 * KIB, 40 * KIB, 200 * KIB, 700 * KIB, 3 * MIB,
					 6 * MIB };
	uint64_t r = rng(state);

	return base[r % 6] + (r >> 8) % (base[r % 6] / 2);
}

/*
 * Interleaved sizes with random lifetimes; with @pool, through the pool,
 * else one driver allocation each. Returns peak requested and peak reserved.
 */
static int frag_run(struct vnpu_context ctx, struct vnpu_stream s, int pool, unsigned long iters,
		    uint64_t *peak_req, uint64_t *peak_res, uint64_t *segments)
{
	enum { LIVE = 48 };
	uint64_t addr[LIVE] = { 0 }, size[LIVE] = { 0 }, live = 0, state = 0x5eed;
	struct vnpu_mem_info before, info;
	struct vnpu_pool_stats st;
	struct vnpu_pool p;
	int status = VNPU_SUCCESS;

	*peak_req = *peak_res = 0;
	if (pool && (status = vnpu_ctx_default_pool(ctx, &p)) != VNPU_SUCCESS)
		return status;
	if (pool)
		vnpu_pool_trim(p, 0);
	vnpu_mem_get_info(ctx, &before);
	for (unsigned long i = 0; i < iters && status == VNPU_SUCCESS; i++) {
		int slot = (int)(rng(&state) % LIVE);

		if (addr[slot]) {
			status = pool ? vnpu_free_async(s, addr[slot]) : vnpu_free(ctx, addr[slot]);
			live -= size[slot];
			addr[slot] = 0;
		}
		size[slot] = frag_size(&state);
		status = pool ? vnpu_malloc_async(s, size[slot], &addr[slot])
			      : vnpu_malloc(ctx, size[slot], 0, &addr[slot]);
		if (status != VNPU_SUCCESS)
			break;
		live += size[slot];
		if (live > *peak_req)
			*peak_req = live;
		if (pool) {
			vnpu_pool_get_stats(p, &st);
			if (st.reserved > *peak_res)
				*peak_res = st.reserved;
		} else {
			vnpu_mem_get_info(ctx, &info);
			if (info.process_used - before.process_used > *peak_res)
				*peak_res = info.process_used - before.process_used;
		}
	}
	if (pool) {
		vnpu_pool_get_stats(p, &st);
		*segments = st.num_segment_allocs;
	} else {
		*segments = iters;
	}
	for (int slot = 0; slot < LIVE; slot++)
		if (addr[slot])
			pool ? vnpu_free_async(s, addr[slot]) : vnpu_free(ctx, addr[slot]);
	vnpu_stream_synchronize(s, VNPU_TIMEOUT_INFINITE);
	if (pool)
		vnpu_pool_trim(p, 0);
	return status;
}

static void bench_fragmentation(struct vnpu_context ctx, struct vnpu_stream s,
				unsigned long iters)
{
	uint64_t req[2], res[2], segs[2];
	double t[2];

	for (int pool = 0; pool < 2; pool++) {
		double t0 = now_ns();

		CHECK(frag_run(ctx, s, pool, iters, &req[pool], &res[pool], &segs[pool]));
		t[pool] = (now_ns() - t0) / 1e6;
	}
	printf("# 2. fragmentation workload: %lu allocations of 3 KiB..9 MiB, 48 live, random order\n",
	       iters);
	printf("# | run | peak requested MiB | peak reserved MiB | reserved/requested | driver allocations | ms |\n");
	for (int pool = 0; pool < 2; pool++)
		printf("# | %s | %.1f | %.1f | %.3f | %llu | %.0f |\n",
		       pool ? "pool" : "no pool (vnpu_malloc)", (double)req[pool] / MIB,
		       (double)res[pool] / MIB, (double)res[pool] / (double)req[pool],
		       (unsigned long long)segs[pool], t[pool]);
	printf("ok 2 fragmentation\n");
}

struct trace_item {
	uint64_t key;
	size_t size;
};

static void bench_data_cache(struct vnpu_context ctx, struct vnpu_stream s, unsigned long len)
{
	enum { HOT = 16, COLD = 400 };
	static const char *const names[] = { "no cache", "LRU cache", "frequency/size cache" };
	struct trace_item items[HOT + COLD];
	uint64_t budget = 2 * MIB, state = 42, *trace;
	char *data;

	trace = malloc(len * sizeof(*trace));
	data = calloc(1, 512 * KIB);
	if (!trace || !data) {
		failed = 1;
		free(trace);
		free(data);
		return;
	}
	/* Hot: 16 items of 1..8 KiB. Cold: 400 items of 128..512 KiB. */
	for (int i = 0; i < HOT; i++)
		items[i] = (struct trace_item){ i, (size_t)(1 + i % 8) * KIB };
	for (int i = 0; i < COLD; i++)
		items[HOT + i] = (struct trace_item){ HOT + i,
			(size_t)(128 + rng(&state) % 385) * KIB };
	/* 90% of accesses go to the hot items (skewed among them), 10% to cold ones. */
	for (unsigned long i = 0; i < len; i++) {
		uint64_t r = rng(&state);

		if (r % 10) {
			uint64_t a = (r >> 8) % HOT, b = (r >> 24) % HOT;

			trace[i] = a < b ? a : b;	/* skewed to the first items */
		} else {
			trace[i] = HOT + (r >> 8) % COLD;
		}
	}
	printf("# 3. data cache: %lu accesses, %d hot items (1-8 KiB, 90%%), %d cold (128-512 KiB, 10%%), budget %llu KiB\n",
	       len, HOT, COLD, (unsigned long long)(budget / KIB));
	printf("# | policy | hit rate | bytes moved MiB | bytes moved / no cache | evictions | ms |\n");
	{
		uint64_t none_bytes = 0;

		for (int policy = 0; policy < 3; policy++) {
			struct vnpu_data_cache_stats st = { 0 };
			struct vnpu_data_cache c;
			double t0 = now_ns();
			uint64_t d, scratch = 0, moved;

			if (policy == 0)
				CHECK(vnpu_malloc(ctx, 512 * KIB, 0, &scratch));
			else
				CHECK(vnpu_data_cache_create(s, budget,
							     policy == 1 ? VNPU_DATA_CACHE_LRU : 0, &c));
			for (unsigned long i = 0; i < len; i++) {
				const struct trace_item *it = &items[trace[i]];

				if (policy == 0) {
					/* Without a cache every use crosses to the device. */
					CHECK(vnpu_memcpy_htod_async(s, scratch, data, it->size));
					st.bytes_loaded += it->size;
					st.misses++;
				} else {
					CHECK(vnpu_data_cache_get(c, s, it->key, data, it->size, &d));
				}
			}
			CHECK(vnpu_stream_synchronize(s, VNPU_TIMEOUT_INFINITE));
			if (policy) {
				CHECK(vnpu_data_cache_get_stats(c, &st));
				CHECK(vnpu_data_cache_destroy(c));
			} else {
				CHECK(vnpu_free(ctx, scratch));
				none_bytes = st.bytes_loaded;
			}
			moved = st.bytes_loaded;
			printf("# | %s | %.3f | %.1f | %.3f | %llu | %.0f |\n", names[policy],
			       (double)st.hits / (double)(st.hits + st.misses), (double)moved / MIB,
			       (double)moved / (double)none_bytes, (unsigned long long)st.evictions,
			       (now_ns() - t0) / 1e6);
		}
	}
	free(trace);
	free(data);
	printf("ok 3 data cache\n");
}

int main(int argc, char **argv)
{
	unsigned long iters = 100000;
	struct vnpu_context ctx;
	struct vnpu_stream s, busy;
	uint32_t device = 0, count = 0;
	int opt, latency_only = 0;

	while ((opt = getopt(argc, argv, "ln:d:")) != -1) {
		if (opt == 'l')
			latency_only = 1;
		else if (opt == 'n')
			iters = strtoul(optarg, NULL, 0);
		else if (opt == 'd')
			device = (uint32_t)strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..3\n");
	if (vnpu_init(0) != VNPU_SUCCESS || vnpu_device_count(&count) != VNPU_SUCCESS ||
	    device >= count) {
		printf("ok 1 # SKIP no vnpu device\nok 2 # SKIP\nok 3 # SKIP\n");
		printf("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:3 error:0\n");
		return 0;
	}
	if (vnpu_ctx_create(device, 0, &ctx) != VNPU_SUCCESS ||
	    vnpu_stream_create(ctx, VNPU_PRIORITY_NORMAL, 0, &s) != VNPU_SUCCESS ||
	    used_stream(ctx, &busy) != VNPU_SUCCESS) {
		printf("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
		return 1;
	}
	bench_latency(ctx, s, busy, iters);
	if (latency_only) {
		printf("ok 2 # SKIP -l\nok 3 # SKIP -l\n");
	} else {
		bench_fragmentation(ctx, s, iters / 50);
		bench_data_cache(ctx, s, iters / 20);
	}
	vnpu_ctx_destroy(ctx, 0);
	vnpu_finalize();
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       failed ? 0 : 3 - 2 * latency_only, failed ? 1 : 0, failed ? 0 : 2 * latency_only);
	return failed;
}
