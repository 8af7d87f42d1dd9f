// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: host unit tests of the static memory planner: known
 * optima of small published fixtures, generated instances of known
 * optimum (planner_gen.c: perfect packings, ladders, chains) checked by an
 * independent checker, the time sweep (planner_sweep.c) and the hole
 * sweep (planner_pq.c) on their own,
 * randomized instances checked by the verifier, and rejection of bad input.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kselftest_harness.h"
#include "mm/planner_search.h"
#include "planner_gen.h"
#include "vnpu.h"

struct fx {
	uint64_t first, last, size;
};

/* Transcribed from the bench data fx_*.csv: [first, last) and size. */
static const struct fx fx_paper[] = {
	{ 0, 2, 32 }, { 1, 5, 28 }, { 2, 6, 36 }, { 3, 6, 16 },
	{ 4, 6, 8 }, { 5, 8, 64 }, { 6, 9, 10 }, { 7, 9, 40 },
};
static const struct fx fx_chain[] = {
	{ 0, 2, 16 }, { 1, 3, 8 }, { 2, 4, 64 }, { 3, 5, 32 }, { 4, 6, 8 },
};
static const struct fx fx_complex[] = {
	{ 0, 2, 32 }, { 1, 5, 32 }, { 2, 6, 8 }, { 3, 6, 16 }, { 4, 6, 8 },
	{ 5, 8, 64 }, { 6, 9, 8 }, { 7, 9, 8 }, { 8, 10, 16 },
};
static const struct fx fx_person[] = {
	{ 0, 30, 9216 }, { 28, 30, 3 }, { 27, 29, 256 }, { 26, 28, 2304 },
	{ 25, 27, 2304 }, { 24, 26, 2304 }, { 23, 25, 1152 }, { 22, 24, 4608 },
	{ 21, 23, 4608 }, { 20, 22, 4608 }, { 19, 21, 4608 }, { 18, 20, 4608 },
	{ 17, 19, 4608 }, { 16, 18, 4608 }, { 15, 17, 4608 }, { 14, 16, 4608 },
	{ 13, 15, 4608 }, { 12, 14, 4608 }, { 11, 13, 2304 }, { 10, 12, 9216 },
	{ 9, 11, 9216 }, { 8, 10, 9216 }, { 7, 9, 4608 }, { 6, 8, 18432 },
	{ 5, 7, 18432 }, { 4, 6, 18432 }, { 3, 5, 9216 }, { 2, 4, 36864 },
	{ 1, 3, 18432 }, { 0, 2, 18432 },
};
static const struct fx fx_fsrcnn[] = {
	{ 0, 2, 691200 }, { 1, 4, 7372800 }, { 2, 6, 7372800 },
	{ 3, 8, 1843200 }, { 4, 10, 1843200 }, { 5, 12, 1843200 },
	{ 6, 14, 1843200 }, { 7, 16, 1843200 }, { 8, 18, 1843200 },
	{ 9, 20, 7372800 }, { 10, 22, 7372800 }, { 11, 24, 2764800 },
	{ 12, 26, 2764800 }, { 13, 28, 2764800 },
};

static struct vnpu_plan_buffer *from_fx(const struct fx *f, size_t n)
{
	struct vnpu_plan_buffer *b = calloc(n, sizeof(*b));

	for (size_t i = 0; b && i < n; i++)
		b[i] = (struct vnpu_plan_buffer){ .size = f[i].size,
			.first = f[i].first, .last = f[i].last };
	return b;
}

/*
 * Budget of searches that must reach a known optimum. The search stops as
 * soon as it reaches the lower bound, so this only matters on a slow or
 * loaded machine, where a tight wall-clock budget would make the result
 * depend on the load.
 */
#define OPTIMUM_BUDGET_MS 60000

/* Plans @f with @strategy; returns the arena, checks it is verified. */
static uint64_t plan_fx(struct __test_metadata *_metadata, const struct fx *f,
			size_t n, unsigned int strategy, uint64_t *lb)
{
	struct vnpu_plan_buffer *b = from_fx(f, n);
	struct vnpu_plan_options o = { .strategy = strategy,
				       .time_limit_ms = OPTIMUM_BUDGET_MS };
	struct vnpu_plan_stats st;
	uint64_t arena = 0;

	EXPECT_NE(NULL, b);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, n, &o, &st));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, n, 0, &arena));
	EXPECT_EQ(st.arena_size, arena);
	*lb = st.lower_bound;
	free(b);
	return arena;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

TEST(fixtures_reach_known_optimum)
{
	uint64_t lb;

	EXPECT_EQ(124, plan_fx(_metadata, fx_paper, N(fx_paper), VNPU_PLAN_GREEDY_BY_SIZE, &lb));
	EXPECT_EQ(124, lb);
	EXPECT_EQ(96, plan_fx(_metadata, fx_chain, N(fx_chain), VNPU_PLAN_GREEDY_BY_SIZE, &lb));
	EXPECT_EQ(96, lb);
	EXPECT_EQ(96, plan_fx(_metadata, fx_complex, N(fx_complex), VNPU_PLAN_GREEDY_BY_SIZE, &lb));
	EXPECT_EQ(96, lb);
	EXPECT_EQ(64512, plan_fx(_metadata, fx_person, N(fx_person), VNPU_PLAN_BEST, &lb));
	EXPECT_EQ(64512, lb);
	EXPECT_EQ(28569600, plan_fx(_metadata, fx_fsrcnn, N(fx_fsrcnn), VNPU_PLAN_BEST, &lb));
	EXPECT_EQ(28569600, lb);
}

TEST(every_strategy_gives_a_valid_plan)
{
	uint64_t lb;

	for (unsigned int s = 0; s <= VNPU_PLAN_SKYLINE; s++) {
		EXPECT_LE(124, plan_fx(_metadata, fx_paper, N(fx_paper), s, &lb));
		EXPECT_LE(64512, plan_fx(_metadata, fx_person, N(fx_person), s, &lb));
	}
	EXPECT_STREQ("size", vnpu_plan_strategy_name(VNPU_PLAN_GREEDY_BY_SIZE));
	EXPECT_STREQ("breadth", vnpu_plan_strategy_name(VNPU_PLAN_GREEDY_BY_BREADTH));
	EXPECT_STREQ("skyline", vnpu_plan_strategy_name(VNPU_PLAN_SKYLINE));
	EXPECT_EQ(NULL, vnpu_plan_strategy_name(VNPU_PLAN_SKYLINE + 1));
	EXPECT_EQ(NULL, vnpu_plan_strategy_name(99));
}

TEST(bounds)
{
	struct vnpu_plan_buffer *b = from_fx(fx_paper, N(fx_paper));
	uint64_t naive = 0, lb = 0;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_bounds(b, N(fx_paper), &naive, &lb));
	EXPECT_EQ(234, naive);
	EXPECT_EQ(124, lb);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_plan_bounds(NULL, 0, &naive, &lb));
	EXPECT_EQ(0, lb);
	free(b);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

TEST(randomized_instances_verify)
{
	uint64_t seed = 0x1234567;

	for (int iter = 0; iter < 60; iter++) {
		size_t n = 1 + rnd(&seed) % (iter < 40 ? 40 : 3000);
		struct vnpu_plan_buffer *b = calloc(n, sizeof(*b));
		unsigned int strategy = (unsigned int)(iter % 4);
		struct vnpu_plan_options o = { .strategy = strategy, .time_limit_ms = 50,
					       .seed = (uint64_t)iter };
		struct vnpu_plan_stats st;
		uint64_t arena, check, steps = 1 + rnd(&seed) % 200;

		ASSERT_NE(NULL, b);
		for (size_t i = 0; i < n; i++) {
			b[i].first = rnd(&seed) % steps;
			b[i].last = b[i].first + 1 + rnd(&seed) % (steps / 4 + 1);
			b[i].size = 1 + rnd(&seed) % (iter & 1 ? 100 : 1000000);
			b[i].alignment = iter % 4 == 3 ? 1ull << (rnd(&seed) % 8) : 0;
		}
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, n, &o, &st));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, n, 0, &arena));
		EXPECT_EQ(st.arena_size, arena);
		/* The generator's checker shares no code (the sort) with the planner. */
		ASSERT_EQ(0, pgen_check(b, n, &check));
		EXPECT_EQ(arena, check);
		EXPECT_LE(st.lower_bound, arena);
		EXPECT_LE(arena, st.greedy_size);
		EXPECT_LE(st.lower_bound, st.naive_size);
		for (size_t i = 0; i < n; i++)
			if (b[i].alignment)
				EXPECT_EQ(0, b[i].offset % b[i].alignment);
		free(b);
	}
}

/*
 * Random buffers over @steps steps: most short-lived, one in @long_every
 * alive for up to a third of the trace, so that lifetimes overlap a lot.
 */
static void random_trace(uint64_t *seed, struct vnpu_plan_buffer *b, size_t n,
			 uint64_t steps, unsigned int long_every, int aligned)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t len = rnd(seed) % long_every ? 1 + rnd(seed) % 4
						      : 1 + rnd(seed) % (steps / 3 + 1);

		b[i].first = rnd(seed) % steps;
		b[i].last = b[i].first + len;
		b[i].size = 1 + rnd(seed) % (i & 1 ? 64 : 1 << 20);
		b[i].alignment = aligned ? 1ull << (rnd(seed) % 9) : 0;
		b[i].offset = 0;
	}
}

/*
 * Compaction, on plans of random instances with every offset doubled
 * (still valid, as each gap grows with what is below it): the buffers
 * taken in order of offset each fall into the lowest gap below them, so
 * the plan comes back to at most its undoubled arena, whatever the turns
 * after that, and stays valid and aligned.
 */
TEST(compaction_never_raises_a_plan)
{
	uint64_t seed = 0xc0ffee;

	for (int iter = 0; iter < 40; iter++) {
		size_t n = 2 + rnd(&seed) % 600;
		struct vnpu_plan_buffer *b = calloc(n, sizeof(*b));
		struct vnpu_plan_options o = { .strategy = iter % 2 ? VNPU_PLAN_GREEDY_BY_SIZE :
						VNPU_PLAN_SKYLINE };
		struct vnpu_plan_stats st;
		uint64_t arena, doubled, compacted;

		ASSERT_NE(NULL, b);
		random_trace(&seed, b, n, 1 + rnd(&seed) % 300, 8, iter % 4 == 3);
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, n, &o, &st));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, n, 0, &arena));
		for (size_t i = 0; i < n; i++)
			b[i].offset *= 2;
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, n, 0, &doubled));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compact(b, n, &compacted));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, n, 0, &doubled));
		EXPECT_EQ(doubled, compacted);
		EXPECT_LE(compacted, arena);
		EXPECT_LE(st.lower_bound, compacted);
		free(b);
	}
}

/*
 * A plan no buffer can fall in (each rests on one below or on 0), 6 high
 * where 5 is live at most: turned over, the largest goes first and the
 * plan reaches 5.
 */
TEST(compaction_turns_the_plan_over)
{
	struct vnpu_plan_buffer b[3] = {
		{ .size = 1, .first = 3, .last = 4, .offset = 0 },
		{ .size = 2, .first = 1, .last = 4, .offset = 1 },
		{ .size = 3, .first = 2, .last = 3, .offset = 3 },
	};
	uint64_t arena;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compact(b, 3, &arena));
	EXPECT_EQ(5, arena);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, 3, 5, NULL));
}

/* Three buffers with room under one: it falls, and the arena drops to the lower bound. */
TEST(compaction_fills_the_room_a_stacked_plan_left)
{
	struct vnpu_plan_buffer b[3] = {
		{ .size = 1, .first = 0, .last = 2, .offset = 0 },
		{ .size = 1, .first = 2, .last = 4, .offset = 1 },
		{ .size = 1, .first = 0, .last = 4, .offset = 2 },
	}, bad[2] = {
		{ .size = 2, .first = 0, .last = 2, .offset = 0 },
		{ .size = 2, .first = 1, .last = 3, .offset = 1 },
	};
	uint64_t arena = 7;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compact(b, 3, &arena));
	EXPECT_EQ(2, arena);
	EXPECT_EQ(0, b[0].offset);
	EXPECT_EQ(0, b[1].offset);
	EXPECT_EQ(1, b[2].offset);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, 3, 2, NULL));
	arena = 7;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_plan_compact(bad, 2, &arena));
	EXPECT_EQ(7, arena);
	EXPECT_EQ(1, bad[1].offset);
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_plan_compact(NULL, 2, &arena));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_plan_compact(NULL, 0, &arena));
	EXPECT_EQ(0, arena);
}

TEST(skyline_plans_verify)
{
	uint64_t seed = 0xfeedbeef;

	for (int iter = 0; iter < 40; iter++) {
		size_t n = 1 + rnd(&seed) % (iter < 30 ? 300 : 6000);
		struct vnpu_plan_buffer *b = calloc(n, sizeof(*b));
		struct vnpu_plan_options o = { .strategy = VNPU_PLAN_SKYLINE };
		struct vnpu_plan_stats st;
		uint64_t arena;

		ASSERT_NE(NULL, b);
		random_trace(&seed, b, n, 1 + rnd(&seed) % 500, 1 + iter % 5, iter & 1);
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, n, &o, &st));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, n, 0, &arena));
		/*
		 * The returned plan is the skyline's own: a plan failing the
		 * verifier would have been replaced by the naive layout.
		 */
		EXPECT_EQ(st.greedy_size, arena);
		EXPECT_EQ(st.arena_size, arena);
		EXPECT_LE(st.lower_bound, arena);
		free(b);
	}
}

/*
 * The skyline greedy written out plainly, O(n^2): time in sections (the
 * distinct endpoints), the skyline an array of heights; each step takes
 * the lowest section (the leftmost of equal ones) and its run of equal
 * height, and places the best-ranked unplaced buffer living inside the
 * run at its bottom, or raises the run to its lower neighbour. The rank
 * is the planner's default preorder: largest peak (section total over
 * the lifetime) first, then longest lifetime, then largest area, then
 * lowest index. Writes the offsets; returns the arena.
 */
static uint64_t naive_skyline(const struct vnpu_plan_buffer *b, size_t n, uint64_t *off)
{
	uint64_t *times = calloc(2 * n + 1, sizeof(*times)), *tot, *h, *peak, arena = 0;
	size_t *t0 = calloc(n + 1, sizeof(*t0)), *t1 = calloc(n + 1, sizeof(*t1));
	size_t nt = 0, ns, left = n;
	char *placed = calloc(n + 1, 1);

	for (size_t i = 0; i < n; i++) {
		times[nt++] = b[i].first;
		times[nt++] = b[i].last;
	}
	for (size_t i = 1; i < nt; i++)		/* insertion sort: n is small */
		for (size_t j = i; j && times[j - 1] > times[j]; j--) {
			uint64_t t = times[j];

			times[j] = times[j - 1];
			times[j - 1] = t;
		}
	ns = 0;
	for (size_t i = 0; i < nt; i++)
		if (!ns || times[ns - 1] != times[i])
			times[ns++] = times[i];
	for (size_t i = 0; i < n; i++)
		for (size_t s = 0; s < ns; s++) {
			if (times[s] == b[i].first)
				t0[i] = s;
			if (times[s] == b[i].last)
				t1[i] = s;
		}
	ns--;				/* sections between the endpoints */
	tot = calloc(ns + 1, sizeof(*tot));
	h = calloc(ns + 1, sizeof(*h));
	peak = calloc(n + 1, sizeof(*peak));
	for (size_t i = 0; i < n; i++)
		for (size_t s = t0[i]; s < t1[i]; s++)
			tot[s] += b[i].size;
	for (size_t i = 0; i < n; i++)
		for (size_t s = t0[i]; s < t1[i]; s++)
			if (tot[s] > peak[i])
				peak[i] = tot[s];
	while (left) {
		size_t a = 0, e, best = n;
		uint64_t rise = UINT64_MAX;

		for (size_t s = 1; s < ns; s++)
			if (h[s] < h[a])
				a = s;
		for (e = a; e < ns && h[e] == h[a]; e++)
			;
		for (size_t i = 0; i < n; i++) {
			uint64_t wi, wb;

			if (placed[i] || t0[i] < a || t1[i] > e)
				continue;
			wi = b[i].last - b[i].first;
			wb = best < n ? b[best].last - b[best].first : 0;
			if (best == n || peak[i] > peak[best] ||
			    (peak[i] == peak[best] &&
			     (wi > wb || (wi == wb && wi * b[i].size > wb * b[best].size))))
				best = i;
		}
		if (best == n) {
			if (a > 0)
				rise = h[a - 1];
			if (e < ns && h[e] < rise)
				rise = h[e];
			for (size_t s = a; s < e; s++)
				h[s] = rise;
			continue;
		}
		{
			uint64_t al = b[best].alignment ? b[best].alignment : 1;

			off[best] = (h[a] + al - 1) & ~(al - 1);
		}
		for (size_t s = t0[best]; s < t1[best]; s++)
			h[s] = off[best] + b[best].size;
		if (off[best] + b[best].size > arena)
			arena = off[best] + b[best].size;
		placed[best] = 1;
		left--;
	}
	free(times);
	free(t0);
	free(t1);
	free(tot);
	free(h);
	free(peak);
	free(placed);
	return arena;
}

TEST(skyline_matches_a_plain_skyline)
{
	/*
	 * The skyline greedy answers "best-ranked buffer inside the run"
	 * with a merge-sort tree (binary search at the root, merge counts
	 * down, small blocks scanned): it must place every buffer where
	 * the plain O(n^2) version does, on narrow and wide runs alike.
	 */
	uint64_t seed = 0x5ca1ab1e;

	for (int iter = 0; iter < 24; iter++) {
		size_t n = 1 + rnd(&seed) % (iter < 12 ? 100 : 900);
		struct vnpu_plan_buffer *b = calloc(n, sizeof(*b));
		uint64_t *off = calloc(n, sizeof(*off));
		struct vnpu_plan_options o = { .strategy = VNPU_PLAN_SKYLINE };
		struct vnpu_plan_stats st;
		uint64_t arena;

		ASSERT_NE(NULL, b);
		ASSERT_NE(NULL, off);
		random_trace(&seed, b, n, 1 + rnd(&seed) % (iter & 2 ? 40 : 400), 1 + iter % 5,
			     iter & 1);
		arena = naive_skyline(b, n, off);
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, n, &o, &st));
		EXPECT_EQ(arena, st.arena_size);
		for (size_t i = 0; i < n; i++)
			EXPECT_EQ(off[i], b[i].offset);
		free(b);
		free(off);
	}
}

TEST(skyline_packs_a_staircase_exactly)
{
	/*
	 * Buffer i lives [i, 2K - i): nested lifetimes, all alive at step
	 * K - 1, so any plan needs the sum and the skyline stacks them.
	 * Then disjoint equal buffers: all at offset 0.
	 */
	enum { K = 50 };
	struct vnpu_plan_buffer b[2 * K];
	struct vnpu_plan_options o = { .strategy = VNPU_PLAN_SKYLINE };
	struct vnpu_plan_stats st;
	uint64_t arena, sum = 0;

	for (int i = 0; i < K; i++) {
		b[i] = (struct vnpu_plan_buffer){ .size = 100 + i, .first = i, .last = 2 * K - i };
		sum += 100 + i;
		b[K + i] = (struct vnpu_plan_buffer){ .size = 64, .first = 2 * K + i,
						      .last = 2 * K + i + 1 };
	}
	ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, 2 * K, &o, &st));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, 2 * K, 0, &arena));
	EXPECT_EQ(sum, arena);
	EXPECT_EQ(sum, st.lower_bound);
	for (int i = 0; i < K; i++)
		EXPECT_EQ(0, b[K + i].offset);
}

TEST(large_instances_take_the_improvement_stage)
{
	/*
	 * Above the branch and bound's size limit the best strategy runs
	 * the skyline and greedy plans of perturbed orders (on half of the
	 * budget up to 8192 buffers, until it stalls above); whatever it
	 * keeps must verify and be no worse than the greedy stage.
	 */
	uint64_t seed = 0xabcdef;

	for (int iter = 0; iter < 4; iter++) {
		size_t n = iter < 3 ? 2500 + rnd(&seed) % 3000 : 9000 + rnd(&seed) % 3000;
		struct vnpu_plan_buffer *b = calloc(n, sizeof(*b));
		struct vnpu_plan_options o = { .strategy = VNPU_PLAN_BEST, .time_limit_ms = 100,
					       .seed = (uint64_t)iter };
		struct vnpu_plan_stats st;
		uint64_t arena;

		ASSERT_NE(NULL, b);
		random_trace(&seed, b, n, 400, 3, iter == 2);
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, n, &o, &st));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, n, 0, &arena));
		EXPECT_EQ(st.arena_size, arena);
		EXPECT_LE(arena, st.greedy_size);
		EXPECT_LE(st.lower_bound, arena);
		free(b);
	}
}

/* One plan of @src on a copy; its offsets into @off, its stats into @st. */
static int plan_copy(const struct vnpu_plan_buffer *src, size_t n,
		     const struct vnpu_plan_options *o, uint64_t *off, struct vnpu_plan_stats *st)
{
	struct vnpu_plan_buffer *b = malloc(n * sizeof(*b));
	int r;

	if (!b)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	memcpy(b, src, n * sizeof(*b));
	r = vnpu_plan_compute(b, n, o, st);
	for (size_t i = 0; r == VNPU_SUCCESS && i < n; i++)
		off[i] = b[i].offset;
	free(b);
	return r;
}

TEST(deterministic_plans_repeat_exactly)
{
	/*
	 * Random lifetimes (the plans stay above the lower bound: every
	 * search stage runs out its share) on a budget far too short, so
	 * on the CPU clock the stages stop at a different node on each run.
	 * On the work clock every run must visit the same nodes and give the
	 * same offsets, on the caller's thread (under PLAN_THREAD_MIN
	 * buffers) and on the planner's own (above), whatever else runs.
	 */
	static const size_t sizes[] = { 200, 1500 };
	uint64_t seed = 0x5eed;

	for (size_t k = 0; k < N(sizes); k++) {
		size_t count = sizes[k];
		struct vnpu_plan_buffer *b = calloc(count, sizeof(*b));
		struct vnpu_plan_options o = {
			.strategy = VNPU_PLAN_BEST | VNPU_PLAN_DETERMINISTIC,
			.time_limit_ms = 40, .seed = 3 };
		uint64_t *first = calloc(count, sizeof(*first)), *again = calloc(count, sizeof(*again));
		struct vnpu_plan_stats st0, st;

		ASSERT_NE(NULL, b);
		ASSERT_NE(NULL, first);
		ASSERT_NE(NULL, again);
		random_trace(&seed, b, count, count / 8, 2, 1);
		ASSERT_EQ(VNPU_SUCCESS, plan_copy(b, count, &o, first, &st0));
		EXPECT_LT(st0.lower_bound, st0.arena_size);
		EXPECT_LT(0, st0.search_nodes);
		for (int run = 0; run < 3; run++) {
			ASSERT_EQ(VNPU_SUCCESS, plan_copy(b, count, &o, again, &st));
			EXPECT_EQ(st0.search_nodes, st.search_nodes);
			EXPECT_EQ(st0.arena_size, st.arena_size);
			EXPECT_EQ(0, memcmp(first, again, count * sizeof(*first)));
		}
		for (size_t i = 0; i < count; i++)
			b[i].offset = first[i];
		EXPECT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, count, 0, NULL));
		free(first);
		free(again);
		free(b);
	}
}

TEST(unknown_strategy_flags_are_refused)
{
	struct vnpu_plan_buffer b[] = {
		{ .size = 6, .first = 0, .last = 2, .offset = 77 },
		{ .size = 4, .first = 0, .last = 4, .offset = 77 },
	};
	static const unsigned int bad[] = { VNPU_PLAN_BEST | 0x200u, VNPU_PLAN_DETERMINISTIC | 4u,
					     VNPU_PLAN_SKYLINE | 0x80000000u };
	struct vnpu_plan_stats st;

	for (size_t k = 0; k < N(bad); k++) {
		struct vnpu_plan_options o = { .strategy = bad[k] };

		EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_plan_compute(b, N(b), &o, &st));
		EXPECT_EQ(77, b[0].offset);
		EXPECT_EQ(77, b[1].offset);
	}
	/* The flag goes with every strategy. */
	for (unsigned int s = VNPU_PLAN_GREEDY_BY_SIZE; s <= VNPU_PLAN_SKYLINE; s++) {
		struct vnpu_plan_options o = { .strategy = s | VNPU_PLAN_DETERMINISTIC };
		uint64_t arena;

		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, N(b), &o, &st));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, N(b), 0, &arena));
		EXPECT_EQ(10, arena);
	}
}

TEST(search_fits_a_tight_capacity)
{
	/*
	 * A perfect packing greedy by size misses: three equal-lifetime
	 * pairs whose sizes add up to 10 at every step, staggered.
	 */
	struct vnpu_plan_buffer b[] = {
		{ .size = 6, .first = 0, .last = 2 }, { .size = 4, .first = 0, .last = 4 },
		{ .size = 6, .first = 2, .last = 6 }, { .size = 4, .first = 4, .last = 8 },
		{ .size = 6, .first = 6, .last = 8 },
	};
	struct vnpu_plan_options o = { .strategy = VNPU_PLAN_BEST, .capacity = 10,
				       .time_limit_ms = OPTIMUM_BUDGET_MS };
	struct vnpu_plan_stats st;
	uint64_t arena;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, N(b), &o, &st));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, N(b), 10, &arena));
	EXPECT_EQ(10, arena);
}

TEST(search_decomposes_independent_blocks)
{
	/*
	 * 60 copies of the staggered pattern above, one after the other in
	 * time: greedy misses each, the search must solve 60 independent
	 * blocks, which dynamic decomposition does one by one.
	 */
	static const struct fx pat[] = {
		{ 0, 2, 6 }, { 0, 4, 4 }, { 2, 6, 6 }, { 4, 8, 4 }, { 6, 8, 6 },
	};
	enum { BLOCKS = 60 };
	struct vnpu_plan_buffer *b = calloc(BLOCKS * N(pat), sizeof(*b));
	struct vnpu_plan_options o = { .strategy = VNPU_PLAN_BEST, .capacity = 10,
				       .time_limit_ms = OPTIMUM_BUDGET_MS };
	struct vnpu_plan_stats st;
	uint64_t arena;

	ASSERT_NE(NULL, b);
	for (size_t k = 0; k < BLOCKS; k++)
		for (size_t i = 0; i < N(pat); i++)
			b[k * N(pat) + i] = (struct vnpu_plan_buffer){
				.size = pat[i].size, .first = 8 * k + pat[i].first,
				.last = 8 * k + pat[i].last };
	ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, BLOCKS * N(pat), &o, &st));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, BLOCKS * N(pat), 10, &arena));
	EXPECT_EQ(10, arena);
	EXPECT_EQ(1, st.optimal);
	free(b);
}

/* --- generated instances of known optimum (planner_gen.c) ------------------------ */

/*
 * Plans a generated instance; every plan must pass both the independent
 * checker and the verifier, and lie between the optimum and the greedy
 * stage. Returns arena / optimum.
 */
static double plan_generated(struct __test_metadata *_metadata, unsigned int family,
			     size_t n, uint64_t seed, unsigned int ms, uint64_t align)
{
	struct vnpu_plan_options o = { .strategy = VNPU_PLAN_BEST, .time_limit_ms = ms,
				       .seed = seed };
	struct vnpu_plan_stats st;
	struct vnpu_plan_buffer *b;
	uint64_t opt = 0, arena = 0, varena = 0;
	size_t count = 0;

	b = pgen_generate(family, n, seed, &count, &opt);
	EXPECT_NE(NULL, b);
	if (!b)
		return 0;
	for (size_t i = 0; i < count; i++)
		b[i].alignment = align;
	EXPECT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, count, &o, &st));
	EXPECT_EQ(0, pgen_check(b, count, &arena));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, count, 0, &varena));
	EXPECT_EQ(arena, varena);
	EXPECT_EQ(st.arena_size, arena);
	EXPECT_LE(opt, arena);
	EXPECT_LE(st.lower_bound, opt);
	EXPECT_LE(arena, st.greedy_size);
	if (align)
		for (size_t i = 0; i < count; i++)
			EXPECT_EQ(0, b[i].offset % align);
	free(b);
	return (double)arena / (double)opt;
}

TEST(generated_witnesses_are_perfect)
{
	/*
	 * The generators' own plans (in the offsets) are valid and reach
	 * the stated optimum, which for the packings is the lower bound.
	 */
	for (unsigned int f = 0; f < PGEN_FAMILIES; f++) {
		for (uint64_t seed = 1; seed <= 5; seed++) {
			size_t count = 0;
			uint64_t opt = 0, arena = 0, lb = 0;
			struct vnpu_plan_buffer *b = pgen_generate(f, 300, seed, &count, &opt);

			ASSERT_NE(NULL, b);
			EXPECT_LT(100, count);
			ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_bounds(b, count, NULL, &lb));
			EXPECT_LE(lb, opt);
			if (f != PGEN_CHAIN && f != PGEN_RANDOM) {
				EXPECT_EQ(0, pgen_check(b, count, &arena));
				EXPECT_EQ(opt, arena);
				EXPECT_EQ(lb, opt);
			}
			free(b);
		}
	}
	EXPECT_EQ(NULL, pgen_generate(PGEN_FAMILIES, 10, 1, NULL, NULL));
	EXPECT_STREQ("guillotine", pgen_family_name(PGEN_GUILLOTINE));
}

/*
 * Of the pieces of a generated packing of @family (seeds 1 to 5, 1,000
 * buffers each): how many are tiny (under 1/20 of an even share of the
 * rectangle's area), and how many are elongated (one side, relative to
 * the time line or the capacity, over 8 times the other).
 */
static void piece_shapes(unsigned int family, unsigned int *tiny, unsigned int *elongated)
{
	*tiny = 0;
	*elongated = 0;
	for (uint64_t seed = 1; seed <= 5; seed++) {
		size_t count = 0;
		uint64_t opt = 0, horizon = 0;
		struct vnpu_plan_buffer *b = pgen_generate(family, 1000, seed, &count, &opt);

		if (!b)
			return;
		for (size_t i = 0; i < count; i++)
			horizon = b[i].last > horizon ? b[i].last : horizon;
		for (size_t i = 0; i < count; i++) {
			/* Both sides relative to the rectangle's: time * opt, size * horizon. */
			double along = (double)(b[i].last - b[i].first) * (double)opt;
			double across = (double)b[i].size * (double)horizon;

			*tiny += along * (double)b[i].size * 20.0 * (double)count <
				 (double)horizon * (double)opt * (double)opt;
			*elongated += along > 8 * across || across > 8 * along;
		}
		free(b);
	}
}

TEST(generated_cut_rules_shape_the_pieces)
{
	/*
	 * guillotine-area cuts pieces in proportion to their area, so leaves
	 * fewer tiny ones than guillotine's uniform choice; guillotine-aspect
	 * cuts across the longer side, so leaves fewer elongated ones.
	 */
	unsigned int tiny_u, long_u, tiny_area, long_area, tiny_aspect, long_aspect;

	piece_shapes(PGEN_GUILLOTINE, &tiny_u, &long_u);
	piece_shapes(PGEN_GUILLOTINE_AREA, &tiny_area, &long_area);
	piece_shapes(PGEN_GUILLOTINE_ASPECT, &tiny_aspect, &long_aspect);
	TH_LOG("tiny %u / %u / %u, elongated %u / %u / %u (uniform / area / aspect)",
	       tiny_u, tiny_area, tiny_aspect, long_u, long_area, long_aspect);
	EXPECT_LT(tiny_area * 2, tiny_u);
	EXPECT_LT(long_aspect * 2, long_u);
	EXPECT_STREQ("guillotine-area", pgen_family_name(PGEN_GUILLOTINE_AREA));
	EXPECT_STREQ("guillotine-aspect", pgen_family_name(PGEN_GUILLOTINE_ASPECT));
}

TEST(checker_catches_overlap)
{
	struct vnpu_plan_buffer b[] = {
		{ .size = 8, .first = 0, .last = 2, .offset = 0 },
		{ .size = 8, .first = 1, .last = 3, .offset = 7 },
		{ .size = 8, .first = 2, .last = 4, .offset = 0 },
	};
	uint64_t arena;

	EXPECT_EQ(-1, pgen_check(b, 3, &arena));
	b[1].offset = 8;
	EXPECT_EQ(0, pgen_check(b, 3, &arena));
	EXPECT_EQ(16, arena);
	b[1].alignment = 16;
	EXPECT_EQ(-1, pgen_check(b, 3, &arena));
}

TEST(generated_perfect_packings_reach_the_optimum)
{
	/*
	 * Small guillotine packings, tilings and chains: the skyline search
	 * finds the zero-waste plan (budget generous for a slow sanitized
	 * build; it stops at the optimum).
	 */
	for (uint64_t seed = 1; seed <= 12; seed++)
		EXPECT_EQ(1.0, plan_generated(_metadata, PGEN_GUILLOTINE, 200, seed,
					      OPTIMUM_BUDGET_MS, 0));
	for (uint64_t seed = 1; seed <= 4; seed++) {
		EXPECT_EQ(1.0, plan_generated(_metadata, PGEN_TILING, 700, seed,
					      OPTIMUM_BUDGET_MS, 0));
		EXPECT_EQ(1.0, plan_generated(_metadata, PGEN_CHAIN, 1500, seed,
					      OPTIMUM_BUDGET_MS, 0));
	}
	/* Aligned to the 512-byte grid the packings are made of: still perfect. */
	for (uint64_t seed = 1; seed <= 4; seed++)
		EXPECT_EQ(1.0, plan_generated(_metadata, PGEN_GUILLOTINE, 150, seed,
					      OPTIMUM_BUDGET_MS, 512));
}

TEST(band_decomposition_plans_large_guillotine_packings)
{
	/*
	 * Cuts that seldom meet in time: the band decomposition splits the
	 * packing down to single buffers (planner_bands.c), at the optimum
	 * whatever the size; the searches alone stayed 13-20% above it at
	 * 6,000 buffers. Aligned to their grid, the same.
	 */
	for (uint64_t seed = 1; seed <= 3; seed++) {
		EXPECT_EQ(1.0, plan_generated(_metadata, PGEN_GUILLOTINE_FINE, 6000, seed,
					      OPTIMUM_BUDGET_MS, 0));
		EXPECT_EQ(1.0, plan_generated(_metadata, PGEN_GUILLOTINE_FINE, 1500, seed,
					      OPTIMUM_BUDGET_MS, 512));
	}
	/* Alignments that no offset sum meets: no split is tried, the plan stays valid. */
	EXPECT_LE(1.0, plan_generated(_metadata, PGEN_GUILLOTINE_FINE, 300, 1, 50, 4096));
}

TEST(generated_instances_plan_validly)
{
	/*
	 * Every family at sizes where the search may run out of its (short)
	 * budget: the plan is still valid and no worse than the greedy.
	 */
	for (unsigned int f = 0; f < PGEN_FAMILIES; f++)
		for (uint64_t seed = 1; seed <= 2; seed++) {
			EXPECT_GE(1.5, plan_generated(_metadata, f, 600, seed, 150,
						      seed == 2 ? 1024 : 0));
			EXPECT_GE(1.5, plan_generated(_metadata, f, 2500, seed, 150, 0));
		}
}

/* --- the time sweep on its own (planner_sweep.c) -------------------------------- */

/* An instance in time sections, built apart from the planner's own. */
struct sections {
	struct sks_problem pb;
	uint64_t *size, *align, *total, *off, lb;
	uint32_t *t0, *t1;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t section_of(const uint64_t *times, size_t nt, uint64_t t)
{
	const uint64_t *p = bsearch(&t, times, nt, sizeof(*times), cmp_u64);

	return (uint32_t)(p - times);
}

static int sections_init(struct sections *x, const struct vnpu_plan_buffer *b, size_t n)
{
	uint64_t *times = malloc(2 * n * sizeof(*times));
	size_t nt = 0;

	memset(x, 0, sizeof(*x));
	x->size = calloc(n, sizeof(*x->size));
	x->align = calloc(n, sizeof(*x->align));
	x->off = calloc(n, sizeof(*x->off));
	x->t0 = calloc(n, sizeof(*x->t0));
	x->t1 = calloc(n, sizeof(*x->t1));
	x->total = calloc(2 * n, sizeof(*x->total));
	if (!times || !x->size || !x->align || !x->off || !x->t0 || !x->t1 || !x->total) {
		free(times);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		times[2 * i] = b[i].first;
		times[2 * i + 1] = b[i].last;
	}
	qsort(times, 2 * n, sizeof(*times), cmp_u64);
	for (size_t i = 0; i < 2 * n; i++)
		if (!nt || times[nt - 1] != times[i])
			times[nt++] = times[i];
	for (size_t i = 0; i < n; i++) {
		x->size[i] = b[i].size;
		x->align[i] = b[i].alignment ? b[i].alignment : 1;
		x->t0[i] = section_of(times, nt, b[i].first);
		x->t1[i] = section_of(times, nt, b[i].last);
		for (uint32_t s = x->t0[i]; s < x->t1[i]; s++)
			x->total[s] += b[i].size;
	}
	for (size_t s = 0; s + 1 < nt; s++)
		if (x->total[s] > x->lb)
			x->lb = x->total[s];
	x->pb = (struct sks_problem){ n, x->size, x->align, x->t0, x->t1, (uint32_t)(nt - 1),
				      x->total };
	free(times);
	return 0;
}

static void sections_free(struct sections *x)
{
	free(x->size);
	free(x->align);
	free(x->off);
	free(x->t0);
	free(x->t1);
	free(x->total);
}

enum { SWEEP_TIME, SWEEP_LAZY, SWEEP_HOLES, SWEEP_STRIPS, SWEEP_MERGED, SWEEP_SERIES,
       SWEEP_CUTS, SWEEP_COMMIT, SWEEP_COMMIT_MERGED };

/*
 * Runs the time sweep, the lazy one, the hole sweep, the strip search,
 * the cut search, the committed cuts (of the instance or of its series
 * merges) or the forced merges (@kind) at the lower bound; 1 when it
 * found a plan at it the checker passes.
 */
static int sweep_at_lower_bound(struct __test_metadata *_metadata,
				struct vnpu_plan_buffer *b, size_t n, int kind)
{
	struct sections x;
	uint64_t nodes = 0, arena = 0;
	int r;

	if (sections_init(&x, b, n)) {
		sections_free(&x);
		return 0;
	}
	if (kind == SWEEP_STRIPS || kind == SWEEP_MERGED || kind == SWEEP_SERIES ||
	    kind == SWEEP_CUTS || kind == SWEEP_COMMIT || kind == SWEEP_COMMIT_MERGED)
		r = (kind == SWEEP_STRIPS ? sts_run : kind == SWEEP_CUTS ? pcs_run :
		     kind == SWEEP_COMMIT ? pcs_commit_run :
		     kind == SWEEP_COMMIT_MERGED ? pmg_commit_run :
		     kind == SWEEP_MERGED ? pmg_run : pmg_series_run)(
			&x.pb, x.lb, vnpu_plan_now() + OPTIMUM_BUDGET_MS * 1000000ull, x.off,
			&nodes);
	else
		r = (kind == SWEEP_HOLES ? pqs_run : kind == SWEEP_LAZY ? sws_lazy_run : sws_run)(
			&x.pb, x.lb, vnpu_plan_now() + OPTIMUM_BUDGET_MS * 1000000ull, 0, x.off,
			&nodes);
	EXPECT_EQ(SKS_FOUND, r);
	if (r == SKS_FOUND) {
		for (size_t i = 0; i < n; i++)
			b[i].offset = x.off[i];
		EXPECT_EQ(0, pgen_check(b, n, &arena));
		EXPECT_EQ(x.lb, arena);
	}
	sections_free(&x);
	return r == SKS_FOUND && arena == x.lb;
}

/* Staggered pairs: a perfect packing that greedy by size misses. */
static const struct vnpu_plan_buffer staggered_pairs[] = {
	{ .size = 6, .first = 0, .last = 2 }, { .size = 4, .first = 0, .last = 4 },
	{ .size = 6, .first = 2, .last = 6 }, { .size = 4, .first = 4, .last = 8 },
	{ .size = 6, .first = 6, .last = 8 },
};

/*
 * A pinwheel: five buffers that tile 3 x 3 with no cut through the whole
 * piece, in time or in space; a perfect packing with no guillotine plan.
 */
static const struct vnpu_plan_buffer pinwheel[] = {
	{ .size = 1, .first = 0, .last = 2 }, { .size = 2, .first = 2, .last = 3 },
	{ .size = 1, .first = 1, .last = 3 }, { .size = 2, .first = 0, .last = 1 },
	{ .size = 1, .first = 1, .last = 2 },
};

/* sweep_at_lower_bound() on @family's instance of @n buffers for @seed. */
static int sweep_generated(struct __test_metadata *_metadata, unsigned int family, size_t n,
			   uint64_t seed, int kind)
{
	size_t count = 0;
	uint64_t opt = 0;
	struct vnpu_plan_buffer *b = pgen_generate(family, n, seed, &count, &opt);
	int r;

	EXPECT_NE(NULL, b);
	if (!b)
		return 0;
	r = sweep_at_lower_bound(_metadata, b, count, kind);
	free(b);
	return r;
}

TEST(sweep_tiles_perfect_packings_exactly)
{
	/*
	 * No slack at any time: every free range the sweep meets must be
	 * tiled exactly by the buffers starting then. The staggered pairs
	 * (greedy by size misses them), ladders and tilings.
	 */
	struct vnpu_plan_buffer pat[N(staggered_pairs)];

	memcpy(pat, staggered_pairs, sizeof(pat));
	EXPECT_EQ(1, sweep_at_lower_bound(_metadata, pat, N(pat), SWEEP_TIME));
	for (uint64_t seed = 1; seed <= 4; seed++) {
		for (unsigned int f = PGEN_TILING; f <= PGEN_LADDER; f++)
			EXPECT_EQ(1, sweep_generated(_metadata, f, 700, seed, SWEEP_TIME));
	}
}

TEST(sweep_honours_its_budget_and_bounds)
{
	/*
	 * A deadline already past stops it within one check interval (256
	 * nodes); so does a stall (1 ms without a new section) on a
	 * guillotine packing it does not tile; a target below the live total
	 * at some time fails at once, nothing visited, offsets untouched.
	 */
	size_t count = 0;
	uint64_t opt = 0, nodes = 0;
	struct vnpu_plan_buffer *b = pgen_generate(PGEN_GUILLOTINE, 700, 1, &count, &opt);
	struct sections x;

	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, sections_init(&x, b, count));
	EXPECT_EQ(SKS_TIMEOUT, sws_run(&x.pb, x.lb, vnpu_plan_now(), 0, x.off, &nodes));
	EXPECT_GE(256, nodes);
	EXPECT_LT(0, nodes);
	/* No deadline, but it stalls on an early choice and gives up. */
	EXPECT_EQ(SKS_TIMEOUT, sws_run(&x.pb, x.lb, UINT64_MAX, 1000000, x.off, &nodes));
	nodes = 0;
	x.off[0] = 77;
	EXPECT_EQ(SKS_INFEASIBLE, sws_run(&x.pb, x.lb - 1, UINT64_MAX, 0, x.off, &nodes));
	EXPECT_EQ(0, nodes);
	EXPECT_EQ(77, x.off[0]);
	sections_free(&x);
	free(b);
}

TEST(lazy_sweep_tiles_perfect_packings_exactly)
{
	/*
	 * Holes filled without fixing the order of what fills them: at 1
	 * the two 2s end side by side and one 4 fills both (they are made
	 * adjacent), at 2 the 4s end and one 8 fills both; then guillotine
	 * packings of 200 buffers it tiles (seeds 2 and 3, in about a
	 * millisecond).
	 */
	struct vnpu_plan_buffer pat[] = {
		{ .size = 2, .first = 0, .last = 1 }, { .size = 4, .first = 0, .last = 2 },
		{ .size = 2, .first = 0, .last = 1 }, { .size = 4, .first = 1, .last = 2 },
		{ .size = 8, .first = 2, .last = 3 },
	};

	EXPECT_EQ(1, sweep_at_lower_bound(_metadata, pat, N(pat), SWEEP_LAZY));
	for (uint64_t seed = 2; seed <= 3; seed++)
		EXPECT_EQ(1, sweep_generated(_metadata, PGEN_GUILLOTINE, 200, seed, SWEEP_LAZY));
}

TEST(lazy_sweep_merges_holes_across_groups)
{
	/*
	 * At 1 the 4 ends and a 2 and a 2 fill it, as one group beside the
	 * 6; at 2 one of the 2s ends with the 6 and only an 8 starts: the
	 * hole is that 2, moved to the edge of its group next to the 6, and
	 * the 6 (an ordered node of the two). Then ladders of 400 buffers
	 * whose rungs join a lane inside a group to one outside it (seeds 2
	 * and 5, which the sweep tiles in a few milliseconds that way).
	 */
	struct vnpu_plan_buffer pat[] = {
		{ .size = 4, .first = 0, .last = 1 }, { .size = 6, .first = 0, .last = 2 },
		{ .size = 2, .first = 1, .last = 2 }, { .size = 2, .first = 1, .last = 3 },
		{ .size = 8, .first = 2, .last = 3 }, { .size = 10, .first = 3, .last = 4 },
	};

	EXPECT_EQ(1, sweep_at_lower_bound(_metadata, pat, N(pat), SWEEP_LAZY));
	for (uint64_t seed = 2; seed <= 5; seed += 3)
		EXPECT_EQ(1, sweep_generated(_metadata, PGEN_LADDER, 400, seed, SWEEP_LAZY));
}

TEST(lazy_plain_pass_refutes_ladders_that_need_merges_across_groups)
{
	/*
	 * Ladders of 1,500 buffers whose rungs re-split several lanes at
	 * once (seeds 239 and 371): the lazy sweep's plain pass proves that
	 * no plan of its kind exists (in about 50 and 20 ms), its pass with
	 * merges across groups tiles them (in about 250 ms). Before the
	 * planner ran that probe first, the stages for guillotine packings
	 * took 1.25 s of the default budget and the sweeps after them did not
	 * tile either (1.10 of the optimum); now the planner does (in about
	 * 0.5 s; here with 8 s, and on seed 371 only, whose plain pass is the
	 * quicker, so that the sanitizers' slowdown does not decide the test).
	 * No pass asked for: nothing visited, the offsets untouched.
	 */
	static const uint64_t seeds[] = { 239, 371 };

	for (size_t i = 0; i < N(seeds); i++) {
		struct sections x;
		size_t count = 0;
		uint64_t opt = 0, arena = 0, nodes = 0;
		struct vnpu_plan_buffer *b = pgen_generate(PGEN_LADDER, 1500, seeds[i], &count,
							   &opt);

		ASSERT_NE(NULL, b);
		ASSERT_EQ(0, sections_init(&x, b, count));
		ASSERT_EQ(opt, x.lb);
		for (size_t k = 0; k < count; k++)
			x.off[k] = 7;
		EXPECT_EQ(SKS_INFEASIBLE, sws_lazy_pass(&x.pb, x.lb, vnpu_plan_now() +
							OPTIMUM_BUDGET_MS * 1000000ull, 0, 0,
							x.off, &nodes));
		EXPECT_EQ(0, nodes);
		for (size_t k = 0; k < count; k++)
			EXPECT_EQ(7, x.off[k]);
		EXPECT_EQ(SKS_INFEASIBLE,
			  sws_lazy_pass(&x.pb, x.lb, vnpu_plan_now() +
					OPTIMUM_BUDGET_MS * 1000000ull, 0, SWS_LAZY_PLAIN, x.off,
					&nodes));
		EXPECT_LT(0, nodes);
		EXPECT_EQ(SKS_FOUND,
			  sws_lazy_pass(&x.pb, x.lb, vnpu_plan_now() +
					OPTIMUM_BUDGET_MS * 1000000ull, 0, SWS_LAZY_CROSS, x.off,
					&nodes));
		for (size_t k = 0; k < count; k++)
			b[k].offset = x.off[k];
		EXPECT_EQ(0, pgen_check(b, count, &arena));
		EXPECT_EQ(opt, arena);
		sections_free(&x);
		free(b);
	}
	EXPECT_EQ(1.0, plan_generated(_metadata, PGEN_LADDER, 1500, 371, 8000, 0));
}

/* sws_lazy_run() and pqs_run(): perfect packings only. */
typedef int (*perfect_sweep)(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
			     uint64_t stall, uint64_t *off, uint64_t *nodes);

/* @run with a deadline already past on a generated instance: within @most nodes. */
static void perfect_sweep_stops_at_once(struct __test_metadata *_metadata, perfect_sweep run,
					unsigned int family, size_t n, uint64_t seed,
					uint64_t most)
{
	size_t count = 0;
	uint64_t opt = 0, nodes = 0;
	struct vnpu_plan_buffer *b = pgen_generate(family, n, seed, &count, &opt);
	struct sections x;

	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, sections_init(&x, b, count));
	EXPECT_EQ(SKS_TIMEOUT, run(&x.pb, x.lb, vnpu_plan_now(), 0, x.off, &nodes));
	EXPECT_GE(most, nodes);
	EXPECT_LT(0, nodes);
	sections_free(&x);
	free(b);
}

/*
 * @run on a guillotine packing of 700 buffers (seed 1) it does not tile:
 * a stall of 1 ms stops it; a target other than the live total in every
 * section, or an alignment that does not divide every size, is refused
 * at once, nothing visited, offsets untouched.
 */
static void perfect_sweep_stalls_and_refuses(struct __test_metadata *_metadata,
					     perfect_sweep run)
{
	size_t count = 0;
	uint64_t opt = 0, nodes = 0;
	struct vnpu_plan_buffer *b = pgen_generate(PGEN_GUILLOTINE, 700, 1, &count, &opt);
	struct sections x;

	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, sections_init(&x, b, count));
	EXPECT_EQ(SKS_TIMEOUT, run(&x.pb, x.lb, UINT64_MAX, 1000000, x.off, &nodes));
	nodes = 0;
	x.off[0] = 77;
	EXPECT_EQ(SKS_INFEASIBLE, run(&x.pb, x.lb - 1, UINT64_MAX, 0, x.off, &nodes));
	EXPECT_EQ(SKS_INFEASIBLE, run(&x.pb, x.lb + 1, UINT64_MAX, 0, x.off, &nodes));
	x.align[1] = 2 * x.size[1];
	EXPECT_EQ(SKS_INFEASIBLE, run(&x.pb, x.lb, UINT64_MAX, 0, x.off, &nodes));
	EXPECT_EQ(0, nodes);
	EXPECT_EQ(77, x.off[0]);
	sections_free(&x);
	free(b);
}

TEST(lazy_sweep_honours_its_budget_and_bounds)
{
	/*
	 * As the time sweep: a deadline already past stops it within one
	 * check interval (seed 25: 119 holes at its second section, whose
	 * groupings it once enumerated without looking at the clock); a
	 * stall stops it too, and bad targets and alignments are refused.
	 */
	perfect_sweep_stops_at_once(_metadata, sws_lazy_run, PGEN_GUILLOTINE, 700, 25, 256);
	perfect_sweep_stops_at_once(_metadata, sws_lazy_run, PGEN_GUILLOTINE, 700, 1, 256);
	perfect_sweep_stalls_and_refuses(_metadata, sws_lazy_run);
}

TEST(hole_sweep_tiles_perfect_packings_exactly)
{
	/*
	 * The staggered pairs, tilings and ladders of 700 buffers (seeds 3
	 * and 4; seed 2's tiling takes it 1.5 s), and
	 * ladders of 1,501 whose lanes (12) the skyline search and the other
	 * sweeps did not tile within the default budget (seeds 12, 14, 27:
	 * 1.10 to 1.11 of the optimum before the hole sweep): each boundary
	 * decides only which enders leave a hole together, the PQ-tree keeps
	 * the orders open.
	 */
	struct vnpu_plan_buffer pat[N(staggered_pairs)];
	static const uint64_t lanes12[] = { 12, 14, 27 };

	memcpy(pat, staggered_pairs, sizeof(pat));
	EXPECT_EQ(1, sweep_at_lower_bound(_metadata, pat, N(pat), SWEEP_HOLES));
	for (uint64_t seed = 3; seed <= 4; seed++) {
		for (unsigned int f = PGEN_TILING; f <= PGEN_LADDER; f++)
			EXPECT_EQ(1, sweep_generated(_metadata, f, 700, seed, SWEEP_HOLES));
	}
	for (size_t i = 0; i < N(lanes12); i++) {
		size_t count = 0;
		uint64_t opt = 0, arena = 0;
		struct vnpu_plan_buffer *b = pgen_generate(PGEN_LADDER, 1501, lanes12[i], &count, &opt);
		struct vnpu_plan_options o = { .strategy = VNPU_PLAN_BEST,
					       .time_limit_ms = OPTIMUM_BUDGET_MS };
		struct vnpu_plan_stats st;

		ASSERT_NE(NULL, b);
		EXPECT_EQ(1, sweep_at_lower_bound(_metadata, b, count, SWEEP_HOLES));
		/* And the planner, through the hole sweep. */
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, count, &o, &st));
		EXPECT_EQ(0, pgen_check(b, count, &arena));
		EXPECT_EQ(opt, arena);
		free(b);
	}
}

TEST(hole_sweep_honours_its_budget_and_bounds)
{
	/*
	 * A deadline already past stops it within one check interval (8
	 * boundaries; the ladder takes about 250), the second pass not
	 * started; a stall stops it too, and bad targets and alignments are
	 * refused.
	 */
	perfect_sweep_stops_at_once(_metadata, pqs_run, PGEN_LADDER, 1501, 14, 8);
	perfect_sweep_stalls_and_refuses(_metadata, pqs_run);
}

/* A search of the strip search's signature: sts_run(), pmg_run(). */
typedef int (*piece_search)(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
			    uint64_t *off, uint64_t *nodes);

/*
 * @run refuses a target other than the live total in every section, and an
 * alignment that does not divide every size, with nothing visited and the
 * offsets untouched.
 */
static void refuses_bad_bounds(struct __test_metadata *_metadata, struct sections *x,
			       piece_search run)
{
	uint64_t nodes = 0, align = x->align[1];

	x->off[0] = 77;
	EXPECT_EQ(SKS_INFEASIBLE, run(&x->pb, x->lb - 1, UINT64_MAX, x->off, &nodes));
	EXPECT_EQ(SKS_INFEASIBLE, run(&x->pb, x->lb + 1, UINT64_MAX, x->off, &nodes));
	x->align[1] = 2 * x->size[1];
	EXPECT_EQ(SKS_INFEASIBLE, run(&x->pb, x->lb, UINT64_MAX, x->off, &nodes));
	x->align[1] = align;
	EXPECT_EQ(0, nodes);
	EXPECT_EQ(77, x->off[0]);
}

/*
 * refuses_bad_bounds() on @family's instance of @n buffers for @seed, then
 * @run with a deadline already past: SKS_TIMEOUT, nothing visited, the
 * offsets untouched.
 */
static void bounds_and_deadline_checked(struct __test_metadata *_metadata, unsigned int family,
					size_t n, uint64_t seed, piece_search run)
{
	size_t count = 0;
	uint64_t opt = 0, nodes = 0;
	struct vnpu_plan_buffer *b = pgen_generate(family, n, seed, &count, &opt);
	struct sections x;

	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, sections_init(&x, b, count));
	refuses_bad_bounds(_metadata, &x, run);
	x.off[0] = 77;
	EXPECT_EQ(SKS_TIMEOUT, run(&x.pb, x.lb, vnpu_plan_now(), x.off, &nodes));
	EXPECT_EQ(0, nodes);
	EXPECT_EQ(77, x.off[0]);
	sections_free(&x);
	free(b);
}

TEST(strip_search_tiles_guillotine_packings)
{
	/*
	 * The staggered pairs (a strip of the 4s over a strip of the 6s),
	 * guillotine packings of 30 buffers (seeds 1 to 40, all), and of 700
	 * that it tiles in 10 ms to 0.9 s (seeds 3, 4, 5, 13, 26, 36, 44 and
	 * 47; no other stage tiled 13, 26 and 36 within the default budget;
	 * starting from the largest buffers instead of the least crowded
	 * groups it gave 44 up after 9 s and took 15 s for 47): the planner,
	 * in the default budget, then reaches seed 13's optimum through it.
	 */
	struct vnpu_plan_buffer pat[N(staggered_pairs)];
	static const uint64_t seeds700[] = { 3, 4, 5, 13, 26, 36, 44, 47 };

	memcpy(pat, staggered_pairs, sizeof(pat));
	EXPECT_EQ(1, sweep_at_lower_bound(_metadata, pat, N(pat), SWEEP_STRIPS));
	for (uint64_t seed = 1; seed <= 40; seed++)
		EXPECT_EQ(1, sweep_generated(_metadata, PGEN_GUILLOTINE, 30, seed, SWEEP_STRIPS));
	for (size_t i = 0; i < N(seeds700); i++)
		EXPECT_EQ(1, sweep_generated(_metadata, PGEN_GUILLOTINE, 700, seeds700[i],
					     SWEEP_STRIPS));
	{
		size_t count = 0;
		uint64_t opt = 0, arena = 0;
		struct vnpu_plan_buffer *b = pgen_generate(PGEN_GUILLOTINE, 700, 13, &count, &opt);
		struct vnpu_plan_options o = { .strategy = VNPU_PLAN_BEST };
		struct vnpu_plan_stats st;

		ASSERT_NE(NULL, b);
		ASSERT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, count, &o, &st));
		EXPECT_EQ(0, pgen_check(b, count, &arena));
		EXPECT_EQ(opt, arena);
		free(b);
	}
}

TEST(strip_search_refuses_what_is_not_guillotine)
{
	/*
	 * The pinwheel: at each of its two inner boundaries the buffers
	 * meeting there balance only all together, so nothing splits into
	 * strips: refused at once. Then the bounds:
	 * a target other than the live total in every section, or an
	 * alignment that does not divide every size, is refused with
	 * nothing visited and the offsets untouched; a deadline already
	 * past stops the search at its first strip search (26 pieces, the
	 * buffers spanning a piece and the time cuts, come before it).
	 */
	struct vnpu_plan_buffer pin[N(pinwheel)];
	size_t count = 0;
	uint64_t opt = 0, nodes = 0, arena = 0;
	struct vnpu_plan_buffer *b;
	struct sections x;

	memcpy(pin, pinwheel, sizeof(pin));
	ASSERT_EQ(0, sections_init(&x, pin, N(pin)));
	EXPECT_EQ(SKS_INFEASIBLE, sts_run(&x.pb, x.lb, UINT64_MAX, x.off, &nodes));
	EXPECT_EQ(1, nodes);
	sections_free(&x);
	/* The pinwheel is a perfect packing all the same. */
	EXPECT_EQ(1, sweep_at_lower_bound(_metadata, pin, N(pin), SWEEP_HOLES));
	EXPECT_EQ(0, pgen_check(pin, N(pin), &arena));
	EXPECT_EQ(3, arena);

	b = pgen_generate(PGEN_GUILLOTINE, 700, 1, &count, &opt);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, sections_init(&x, b, count));
	refuses_bad_bounds(_metadata, &x, sts_run);
	nodes = 0;
	EXPECT_EQ(SKS_TIMEOUT, sts_run(&x.pb, x.lb, vnpu_plan_now(), x.off, &nodes));
	EXPECT_LT(0, nodes);
	EXPECT_GE(32, nodes);
	sections_free(&x);
	free(b);
}

TEST(cut_search_tiles_guillotine_packings)
{
	/*
	 * The staggered pairs, guillotine packings of 30 buffers (seeds 1 to
	 * 40) and of 700 that no stage tiled within the default budget before
	 * it (seeds 21 and 22; the cut search takes milliseconds): all at the
	 * lower bound. The planner then reaches seed 21's optimum within the
	 * default budget.
	 */
	struct vnpu_plan_buffer pat[N(staggered_pairs)];
	static const uint64_t seeds700[] = { 21, 22 };

	memcpy(pat, staggered_pairs, sizeof(pat));
	EXPECT_EQ(1, sweep_at_lower_bound(_metadata, pat, N(pat), SWEEP_CUTS));
	for (uint64_t seed = 1; seed <= 40; seed++)
		EXPECT_EQ(1, sweep_generated(_metadata, PGEN_GUILLOTINE, 30, seed, SWEEP_CUTS));
	for (size_t i = 0; i < N(seeds700); i++)
		EXPECT_EQ(1, sweep_generated(_metadata, PGEN_GUILLOTINE, 700, seeds700[i],
					     SWEEP_CUTS));
	EXPECT_EQ(1.0, plan_generated(_metadata, PGEN_GUILLOTINE, 700, 21, 0, 0));
}

TEST(cut_search_refuses_what_is_not_guillotine)
{
	/*
	 * The pinwheel is a perfect packing with no guillotine plan: the
	 * search covers all its choices and refuses it (a few nodes, no
	 * restart). Then the bounds: a target other than the live total in
	 * every section, or an alignment that does not divide every size,
	 * is refused with nothing visited and the offsets untouched; so is a
	 * deadline already past (SKS_TIMEOUT).
	 */
	uint64_t nodes = 0;
	struct sections x;

	ASSERT_EQ(0, sections_init(&x, pinwheel, N(pinwheel)));
	EXPECT_EQ(SKS_INFEASIBLE, pcs_run(&x.pb, x.lb, UINT64_MAX, x.off, &nodes));
	EXPECT_LT(0, nodes);
	EXPECT_GE(16, nodes);
	sections_free(&x);
	bounds_and_deadline_checked(_metadata, PGEN_GUILLOTINE, 700, 1, pcs_run);
}

/*
 * pcs_commit_run() on a generated instance within @ms of CPU time: a plan
 * that is valid, at or above the lower bound.
 */
static void commit_valid(struct __test_metadata *_metadata, enum pgen_family family,
			 size_t n, uint64_t seed, uint64_t ms)
{
	struct vnpu_plan_buffer *b;
	uint64_t opt = 0, nodes = 0, arena = 0;
	size_t count = 0;
	struct sections x;

	b = pgen_generate(family, n, seed, &count, &opt);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, sections_init(&x, b, count));
	EXPECT_EQ(SKS_FOUND, pcs_commit_run(&x.pb, x.lb, vnpu_plan_now() + ms * 1000000ull,
					    x.off, &nodes));
	for (size_t i = 0; i < count; i++)
		b[i].offset = x.off[i];
	EXPECT_EQ(0, pgen_check(b, count, &arena));
	EXPECT_LE(x.lb, arena);
	EXPECT_LT(0, nodes);
	sections_free(&x);
	free(b);
}

TEST(committed_cuts_plan_guillotine_packings)
{
	/*
	 * Taking the first balanced set of each strip: the staggered pairs,
	 * guillotine packings of 30 buffers (seeds 1 to 40) and of 1,500
	 * that the cut search, which searches on past sets that do not tile,
	 * leaves after 3 s (seeds 16 and 19, in 0.1 s and 6 ms): all at the
	 * lower bound. Where a set does not tile, the plan lies above the
	 * target and is still valid (seed 18, a quarter of a second: the
	 * slabs left past the deadline are planned all the same). The
	 * planner reaches seed 19's optimum within the default budget.
	 *
	 * Backwards in time as well: forwards, no strip of guillotine 400
	 * seed 30 as a whole is found within the nodes, and the stage
	 * would refuse it; backwards one is, and the plan is valid.
	 */
	struct vnpu_plan_buffer pat[N(staggered_pairs)];

	memcpy(pat, staggered_pairs, sizeof(pat));
	EXPECT_EQ(1, sweep_at_lower_bound(_metadata, pat, N(pat), SWEEP_COMMIT));
	for (uint64_t seed = 1; seed <= 40; seed++)
		EXPECT_EQ(1, sweep_generated(_metadata, PGEN_GUILLOTINE, 30, seed, SWEEP_COMMIT));
	EXPECT_EQ(1, sweep_generated(_metadata, PGEN_GUILLOTINE, 1500, 16, SWEEP_COMMIT));
	EXPECT_EQ(1, sweep_generated(_metadata, PGEN_GUILLOTINE, 1500, 19, SWEEP_COMMIT));

	commit_valid(_metadata, PGEN_GUILLOTINE, 1500, 18, 250);
	commit_valid(_metadata, PGEN_GUILLOTINE, 400, 30, 2000);
	EXPECT_EQ(1.0, plan_generated(_metadata, PGEN_GUILLOTINE, 1500, 19, 0, 0));
}

/*
 * The committed cuts tile @b (@count buffers, a perfect packing) in fewer
 * than @most nodes, with a valid plan at the lower bound.
 */
static void commit_tiles(struct __test_metadata *_metadata, struct vnpu_plan_buffer *b,
			 size_t count, uint64_t most)
{
	uint64_t nodes = 0, arena = 0;
	struct sections x;

	ASSERT_EQ(0, sections_init(&x, b, count));
	EXPECT_EQ(SKS_FOUND, pcs_commit_run(&x.pb, x.lb,
					    vnpu_plan_now() + OPTIMUM_BUDGET_MS * 1000000ull,
					    x.off, &nodes));
	TH_LOG("%llu nodes", (unsigned long long)nodes);
	EXPECT_GT(most, nodes);
	for (size_t i = 0; i < count; i++)
		b[i].offset = x.off[i];
	EXPECT_EQ(0, pgen_check(b, count, &arena));
	EXPECT_EQ(x.lb, arena);
	sections_free(&x);
}

TEST(strip_cuts_where_little_ends_are_skipped)
{
	/*
	 * guillotine-area 6,000 seed 10 is two strips; the largest buffer
	 * live first is 6,159 units of a 7,006-unit strip and lives one
	 * step. Its strip's first cut in time is one of the few boundaries
	 * where at least that much ends and starts; trying every boundary
	 * (every crosser out, then the rows) cost up to a millisecond each
	 * and the committed cuts found no strip of the whole in 1 s. Each
	 * boundary tried is a node: they tile it in 8,158 nodes now (a
	 * quarter of a second), in 11,377 when every boundary is tried.
	 */
	size_t count = 0;
	uint64_t opt = 0;
	struct vnpu_plan_buffer *b = pgen_generate(PGEN_GUILLOTINE_AREA, 6000, 10, &count, &opt);

	ASSERT_NE(NULL, b);
	commit_tiles(_metadata, b, count, 10000);
	free(b);
}

TEST(strip_of_a_buffer_live_first_at_random)
{
	/*
	 * guillotine 1,500 seeds 336 and 404: the strip of the largest
	 * buffer live first is not found within the nodes, on any restart,
	 * and the committed cuts alone ended at 1.0104 and 1.1002 of the
	 * lower bound after 10 s (7,027,815 and 6,103,884 nodes). Restarts
	 * that take c0 at random among the buffers live first find other
	 * strips of the same slabs and tile them in 4,137 and 15,434 nodes.
	 * (Seeds 264 and 294 were such until the search branched on the
	 * largest buffer that mends a balance, pcs_branch().) Since it
	 * branches on the largest area, 336 tiles in 31,287 nodes and 404
	 * in 3,007,822 (the planner still reaches the optimum on it, in
	 * 0.6 s): 404 is left out.
	 */
	static const uint64_t seeds[] = { 336 };

	for (size_t k = 0; k < N(seeds); k++) {
		size_t count = 0;
		uint64_t opt = 0;
		struct vnpu_plan_buffer *b = pgen_generate(PGEN_GUILLOTINE, 1500, seeds[k],
							   &count, &opt);

		ASSERT_NE(NULL, b);
		commit_tiles(_metadata, b, count, 40000);
		free(b);
	}
}

TEST(near_miss_windows_searched_again)
{
	/*
	 * guillotine-aspect 1,500 seed 450 is two buffers live throughout
	 * and strips of 707 and 791 buffers; seed 403 holds a strip of
	 * 1,429 buffers in seven pieces in time. Committed sets there fail
	 * in windows of their in side and are searched again, the out side
	 * planned only once a set is kept: wherever the deadline falls,
	 * the plan holds every buffer, valid. Committed cuts alone, 1 s,
	 * seeds 401 to 430: 22 tiled against 19 before (403, 413 and 415
	 * gained).
	 */
	static const uint64_t seeds[] = { 450, 403 };
	static const uint64_t ms[] = { 20, 150, 600 };

	for (size_t k = 0; k < N(seeds); k++)
		for (size_t j = 0; j < N(ms); j++)
			commit_valid(_metadata, PGEN_GUILLOTINE_ASPECT, 1500, seeds[k], ms[j]);
}

TEST(balancing_subsets_match_every_subset_listed)
{
	/*
	 * vnpu_plan_balance() (meet in the middle) against every subset
	 * listed: the count, the union of the subsets that sum to the
	 * target and that of their complements, for 0 to 14 values with
	 * repeats, signs both ways, zeros and targets that none reach.
	 */
	uint64_t rng = 0x5eed;

	for (uint32_t round = 0; round < 3000; round++) {
		uint32_t n = round % (VNPU_PLAN_BALANCE_MAX + 1), in = 0, out = 0;
		uint32_t want_in = 0, want_out = 0, want_count = 0, count;
		int64_t v[VNPU_PLAN_BALANCE_MAX], want;

		for (uint32_t i = 0; i < n; i++) {
			rng = vnpu_plan_mix64(rng);
			v[i] = (int64_t)(rng % 7) - 3 + (rng >> 8 & 1 ? 512 * (int64_t)(rng % 5) : 0);
		}
		rng = vnpu_plan_mix64(rng);
		want = (int64_t)(rng % 41) - 20;
		for (uint32_t set = 0; set < 1u << n; set++) {
			int64_t sum = 0;

			for (uint32_t i = 0; i < n; i++)
				sum += set >> i & 1 ? v[i] : 0;
			if (sum == want) {
				want_count++;
				want_in |= set;
				want_out |= ((1u << n) - 1) & ~set;
			}
		}
		count = vnpu_plan_balance(v, n, want, &in, &out);
		ASSERT_EQ(want_count, count);
		ASSERT_EQ(want_in, in);
		ASSERT_EQ(want_out, out);
	}
}

TEST(strip_widths_are_subset_sums_of_every_section)
{
	/*
	 * guillotine 1,500 seed 13 ends in a slab of 1,201 buffers over
	 * [1316, 1500), 27 live in a section on average, 975 in one only:
	 * two strips, of 3,026 and 11,637 units. Of the widths at least
	 * c0's, four are a subset sum of every section's buffers, and the
	 * section rows keep the width to them. Run backwards in time (as
	 * the committed cuts' second pass runs it), the slab is tiled in
	 * 10,590 nodes; without the widths no strip was found in either
	 * direction (SKS_INFEASIBLE: the whole instance) and the planner
	 * planned the slab at 1.0552 of its width.
	 */
	size_t count = 0, m = 0;
	uint64_t opt = 0;
	struct vnpu_plan_buffer *b = pgen_generate(PGEN_GUILLOTINE, 1500, 13, &count, &opt);

	ASSERT_NE(NULL, b);
	for (size_t i = 0; i < count; i++)
		if (b[i].first >= 1316) {
			b[m] = b[i];
			b[m].first = 1500 - b[i].last;
			b[m].last = 1500 - b[i].first;
			m++;
		}
	ASSERT_EQ(1201, m);
	commit_tiles(_metadata, b, m, 20000);
	free(b);
}

TEST(committed_cuts_refuse_what_does_not_split)
{
	/*
	 * The pinwheel has no strip and no cut in time: nothing splits, so
	 * the stage refuses it with the offsets untouched and leaves it to
	 * the other searches. The bounds and a deadline already past as for
	 * the cut search.
	 */
	uint64_t nodes = 0;
	struct sections x;

	ASSERT_EQ(0, sections_init(&x, pinwheel, N(pinwheel)));
	x.off[0] = 77;
	EXPECT_EQ(SKS_INFEASIBLE, pcs_commit_run(&x.pb, x.lb, UINT64_MAX, x.off, &nodes));
	EXPECT_LT(0, nodes);
	EXPECT_EQ(77, x.off[0]);
	sections_free(&x);
	bounds_and_deadline_checked(_metadata, PGEN_GUILLOTINE, 700, 1, pcs_commit_run);
}

TEST(committed_cuts_time_out_as_timeouts)
{
	/*
	 * A deadline that passes while the stage sets up (after its first
	 * check of the clock, before its first pass) is a timeout, not a
	 * lack of memory: it was reported as SKS_NOMEM, and the planner
	 * then failed with VNPU_ERROR_OUT_OF_HOST_MEMORY on a 1 ms budget
	 * (planner_bench --cores guillotine 400 3 --time-limit 1, about one
	 * run in five). Deadlines 0 to 300 us ahead, each a few times.
	 */
	size_t count = 0;
	uint64_t opt = 0, nodes = 0;
	struct vnpu_plan_buffer *b = pgen_generate(PGEN_GUILLOTINE, 400, 3, &count, &opt);
	unsigned int nomem = 0, timeouts = 0;
	struct sections x;

	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, sections_init(&x, b, count));
	for (uint64_t us = 0; us <= 300; us += 2) {
		for (int k = 0; k < 4; k++) {
			int r = pcs_commit_run(&x.pb, x.lb, vnpu_plan_now() + us * 1000, x.off,
					       &nodes);

			nomem += r == SKS_NOMEM;
			timeouts += r == SKS_TIMEOUT;
		}
	}
	TH_LOG("%u timeouts of %u runs", timeouts, 151 * 4);
	EXPECT_EQ(0, nomem);
	EXPECT_LT(0, timeouts);
	sections_free(&x);
	free(b);
}

/*
 * At the boundary the 2 that ends could as well make room for the two 1s
 * that start: no merge is forced.
 */
static const struct vnpu_plan_buffer loose[] = {
	{ .size = 2, .first = 0, .last = 1 }, { .size = 1, .first = 0, .last = 1 },
	{ .size = 1, .first = 0, .last = 1 }, { .size = 2, .first = 1, .last = 2 },
	{ .size = 1, .first = 1, .last = 2 }, { .size = 1, .first = 1, .last = 2 },
};

TEST(committed_cuts_plan_the_series_merges)
{
	/*
	 * The series merges leave guillotine 1,500 seed 38 with fewer
	 * buffers, other strips and other near misses: the committed cuts
	 * tile it from there in about 50 ms, where on the instance itself
	 * they ended 1.0002 above the optimum after 3 s. Where nothing
	 * merges, the stage is refused with the offsets untouched (the other
	 * stage has planned that instance already); bad bounds and a
	 * deadline already past as for the others.
	 */
	uint64_t nodes = 0;
	struct sections x;

	EXPECT_EQ(1, sweep_generated(_metadata, PGEN_GUILLOTINE, 1500, 38, SWEEP_COMMIT_MERGED));
	ASSERT_EQ(0, sections_init(&x, loose, N(loose)));
	x.off[0] = 77;
	EXPECT_EQ(SKS_INFEASIBLE, pmg_commit_run(&x.pb, x.lb, UINT64_MAX, x.off, &nodes));
	EXPECT_EQ(77, x.off[0]);
	sections_free(&x);
	bounds_and_deadline_checked(_metadata, PGEN_GUILLOTINE, 1500, 38, pmg_commit_run);
}

TEST(forced_merges_join_what_balance_forces)
{
	/*
	 * A chain e;s of size 4 beside a buffer of the whole span: at the
	 * boundary e and s are the only buffers, so s takes e's place (one
	 * offset), and the merged rectangle, of the span's lifetime and no
	 * possible piece of a longer run, stacks with the other: one buffer
	 * of 8 is left to plan. Then a boundary where the 2 that ends could
	 * as well make room for the two 1s that start: nothing is forced,
	 * nothing merges, and the run is refused with the offsets untouched.
	 */
	struct vnpu_plan_buffer chain[] = {
		{ .size = 4, .first = 0, .last = 2 }, { .size = 4, .first = 0, .last = 1 },
		{ .size = 4, .first = 1, .last = 2 },
	};
	struct vnpu_plan_buffer tiled[N(loose)];
	uint64_t nodes = 0, arena = 0;
	struct sections x;

	ASSERT_EQ(0, sections_init(&x, chain, N(chain)));
	EXPECT_EQ(SKS_FOUND, pmg_run(&x.pb, x.lb, UINT64_MAX, x.off, &nodes));
	EXPECT_EQ(x.off[1], x.off[2]);
	EXPECT_NE(x.off[0], x.off[1]);
	for (size_t i = 0; i < N(chain); i++)
		chain[i].offset = x.off[i];
	EXPECT_EQ(0, pgen_check(chain, N(chain), &arena));
	EXPECT_EQ(8, arena);
	sections_free(&x);

	ASSERT_EQ(0, sections_init(&x, loose, N(loose)));
	x.off[0] = 77;
	EXPECT_EQ(SKS_INFEASIBLE, pmg_run(&x.pb, x.lb, UINT64_MAX, x.off, &nodes));
	EXPECT_EQ(77, x.off[0]);
	sections_free(&x);
	/* The packing tiles all the same (the hole sweep): the rule is only cautious. */
	memcpy(tiled, loose, sizeof(tiled));
	EXPECT_EQ(1, sweep_at_lower_bound(_metadata, tiled, N(tiled), SWEEP_HOLES));
}

TEST(forced_merges_fall_back_to_the_series_merges)
{
	/*
	 * A ladder of 1,500 buffers (seed 37) where the parallel rule stacks
	 * buffers no plan at the target keeps together: the 246 nodes left
	 * split nothing and no search tiled them in 20 s (the stage found no
	 * plan at the target, and the planner ended 1.1067 above it). The
	 * series merges alone leave 358 nodes, which the hole sweep tiles in
	 * a few ms, so the stage reaches the optimum through them, and so
	 * does pmg_series_run() on its own. A guillotine packing of 700
	 * buffers (seed 35), where the series merges leave 521, is left to
	 * the sweeps on the instance itself, nothing visited. Bad bounds are
	 * refused with nothing visited, and a deadline already past stops it
	 * before it plans.
	 */
	size_t count = 0;
	uint64_t opt = 0, nodes = 0;
	struct vnpu_plan_buffer *b;
	struct sections x;

	EXPECT_EQ(1, sweep_generated(_metadata, PGEN_LADDER, 1501, 37, SWEEP_MERGED));
	EXPECT_EQ(1, sweep_generated(_metadata, PGEN_LADDER, 1501, 37, SWEEP_SERIES));
	bounds_and_deadline_checked(_metadata, PGEN_LADDER, 1501, 37, pmg_series_run);

	b = pgen_generate(PGEN_GUILLOTINE, 700, 35, &count, &opt);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, sections_init(&x, b, count));
	x.off[0] = 77;
	EXPECT_EQ(SKS_INFEASIBLE, pmg_series_run(&x.pb, x.lb, UINT64_MAX, x.off, &nodes));
	EXPECT_EQ(0, nodes);
	EXPECT_EQ(77, x.off[0]);
	sections_free(&x);
	free(b);
}

TEST(forced_merges_tile_crowded_guillotine_packings)
{
	/*
	 * Guillotine packings of 1,500 buffers whose cuts often meet in time:
	 * the merges leave 739, 791 and 799 buffers of seeds 4, 5 and 9, and
	 * the band decomposition tiles them from there (0.15 to 0.45 s; alone,
	 * in 1 s, it tiled 4 only). Bad bounds are refused with nothing
	 * visited, the offsets untouched, and a deadline already past stops
	 * it before it plans.
	 */
	static const uint64_t seeds[] = { 4, 5, 9 };

	for (size_t i = 0; i < N(seeds); i++)
		EXPECT_EQ(1, sweep_generated(_metadata, PGEN_GUILLOTINE, 1500, seeds[i],
					     SWEEP_MERGED));
	bounds_and_deadline_checked(_metadata, PGEN_GUILLOTINE, 1500, 5, pmg_run);
}

TEST(ladders_reach_the_optimum)
{
	/*
	 * Ladders of 1,500 buffers in the default budget: the skyline search
	 * alone reached the optimum on 12% of them; the time sweep, first
	 * on a target without slack, tiles them (in milliseconds).
	 */
	for (uint64_t seed = 1; seed <= 6; seed += seed == 2 ? 3 : 1)
		EXPECT_EQ(1.0, plan_generated(_metadata, PGEN_LADDER, 1500, seed, 0, 0));
}

TEST(ladder_left_whole_gets_the_sweeps_without_stall)
{
	/*
	 * A ladder is one band: the band decomposition leaves it whole. This
	 * one (400 buffers, seed 9) the lazy sweep tiles after about 250 ms
	 * of backtracking without a new section; under the stall rule it
	 * gave up after 140 ms, and the plan ended 1.6% above the optimum
	 * even with 8 s. The budget is large so that the sanitizers' slowdown
	 * does not decide the test.
	 */
	EXPECT_EQ(1.0, plan_generated(_metadata, PGEN_LADDER, 400, 9, 8000, 0));
}

struct small_stack_call {
	struct vnpu_plan_buffer *b;
	size_t n;
	int status;
};

static void *plan_on_small_stack(void *arg)
{
	struct small_stack_call *c = arg;
	struct vnpu_plan_options o = { .strategy = VNPU_PLAN_BEST, .time_limit_ms = 200 };

	c->status = vnpu_plan_compute(c->b, c->n, &o, NULL);
	return NULL;
}

/*
 * The searches' clock reuses a reading of the thread's CPU time for up to
 * 100 us of wall time: what it returns must never be below the CPU time
 * (a deadline passed unseen) nor go back (differences would wrap).
 */
TEST(cpu_clock_bounds_the_thread_cpu_time)
{
	uint64_t last = 0, first = vnpu_plan_now();
	volatile uint64_t spin = 0;

	for (int i = 0; i < 200000; i++) {
		struct timespec ts;
		uint64_t exact, now;

		for (int j = 0; j < i % 64; j++)
			spin += (uint64_t)j;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		exact = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		now = vnpu_plan_now();
		ASSERT_GE(now, exact);
		ASSERT_GE(now, last);
		last = now;
	}
	/* It moves with the work done. */
	ASSERT_GT(last, first);
}

TEST(large_plan_from_a_small_thread_stack)
{
	/*
	 * The searches recurse once per placement; a caller on a 256 KiB
	 * thread stack must still get a plan (the planner moves large
	 * instances to a thread of its own).
	 */
	struct small_stack_call c = { 0 };
	pthread_attr_t attr;
	pthread_t th;
	uint64_t opt;

	for (int k = 0; k < 2; k++) {
		/* A ladder the time sweep tiles, a recursion to its full depth. */
		c.b = k ? pgen_generate(PGEN_LADDER, 1000, 1, &c.n, &opt) :
			  pgen_generate(PGEN_RANDOM, 6000, 7, &c.n, &opt);
		ASSERT_NE(NULL, c.b);
		ASSERT_EQ(0, pthread_attr_init(&attr));
		ASSERT_EQ(0, pthread_attr_setstacksize(&attr, 256 << 10));
		ASSERT_EQ(0, pthread_create(&th, &attr, plan_on_small_stack, &c));
		pthread_join(th, NULL);
		pthread_attr_destroy(&attr);
		EXPECT_EQ(VNPU_SUCCESS, c.status);
		EXPECT_EQ(0, pgen_check(c.b, c.n, NULL));
		free(c.b);
	}
}

TEST(verifier_catches_overlap_and_misalignment)
{
	struct vnpu_plan_buffer b[] = {
		{ .size = 8, .first = 0, .last = 2, .offset = 0 },
		{ .size = 8, .first = 1, .last = 3, .offset = 4 },
		{ .size = 8, .first = 2, .last = 4, .offset = 0 },
	};
	uint64_t arena;

	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_plan_verify(b, 3, 0, &arena));
	b[1].offset = 8;
	EXPECT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, 3, 0, &arena));
	EXPECT_EQ(16, arena);
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_plan_verify(b, 3, 15, &arena));
	b[1].alignment = 16;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_plan_verify(b, 3, 0, &arena));
	/* [0,2) and [2,4) do not overlap: sharing offset 0 is fine. */
	b[1].alignment = 8;
	EXPECT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, 3, 0, &arena));
}

static void expect_rejected(struct __test_metadata *_metadata,
			    struct vnpu_plan_buffer bad)
{
	struct vnpu_plan_buffer b[2] = {
		{ .size = 16, .first = 0, .last = 4, .offset = 777 }, bad,
	};
	struct vnpu_plan_stats st;

	b[1].offset = 999;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_plan_compute(b, 2, NULL, &st));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_get_last_error());
	/* Nothing written. */
	EXPECT_EQ(777, b[0].offset);
	EXPECT_EQ(999, b[1].offset);
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_plan_bounds(b, 2, NULL, NULL));
}

TEST(bad_input_is_rejected)
{
	expect_rejected(_metadata, (struct vnpu_plan_buffer){ .size = 0, .first = 0, .last = 1 });
	expect_rejected(_metadata, (struct vnpu_plan_buffer){ .size = 1, .first = 3, .last = 3 });
	expect_rejected(_metadata, (struct vnpu_plan_buffer){ .size = 1, .first = 4, .last = 3 });
	expect_rejected(_metadata, (struct vnpu_plan_buffer){ .size = 1, .alignment = 3,
							      .first = 0, .last = 1 });
	/* A "negative" size read into an unsigned field, and overflow. */
	expect_rejected(_metadata, (struct vnpu_plan_buffer){ .size = (uint64_t)-5,
							      .first = 0, .last = 1 });
	expect_rejected(_metadata, (struct vnpu_plan_buffer){ .size = UINT64_MAX / 4 + 1,
							      .first = 0, .last = 1 });
}

TEST(sizes_whose_sum_overflows_are_rejected)
{
	struct vnpu_plan_buffer b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (struct vnpu_plan_buffer){ .size = UINT64_MAX / 16, .first = 0, .last = 1 };
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_plan_compute(b, 8, NULL, NULL));
}

TEST(bad_arguments)
{
	struct vnpu_plan_buffer b = { .size = 1, .first = 0, .last = 1 };
	struct vnpu_plan_options o = { .strategy = 7 };

	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_plan_compute(NULL, 3, NULL, NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_plan_compute(&b, 1, &o, NULL));
	o.strategy = VNPU_PLAN_SKYLINE + 1;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_plan_compute(&b, 1, &o, NULL));
	EXPECT_EQ(0, b.offset);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_plan_compute(NULL, 0, NULL, NULL));
}

TEST(capacity_below_lower_bound_does_not_fit)
{
	struct vnpu_plan_buffer *b = from_fx(fx_paper, N(fx_paper));
	struct vnpu_plan_options o = { .strategy = VNPU_PLAN_BEST, .capacity = 123 };
	struct vnpu_plan_stats st;

	ASSERT_NE(NULL, b);
	for (size_t i = 0; i < N(fx_paper); i++)
		b[i].offset = 42;
	EXPECT_EQ(VNPU_ERROR_DOES_NOT_FIT, vnpu_plan_compute(b, N(fx_paper), &o, &st));
	EXPECT_EQ(124, st.lower_bound);
	for (size_t i = 0; i < N(fx_paper); i++)
		EXPECT_EQ(42, b[i].offset);
	EXPECT_STREQ("VNPU_ERROR_DOES_NOT_FIT", vnpu_status_name(VNPU_ERROR_DOES_NOT_FIT));
	o.capacity = 124;
	EXPECT_EQ(VNPU_SUCCESS, vnpu_plan_compute(b, N(fx_paper), &o, &st));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_plan_verify(b, N(fx_paper), 124, NULL));
	free(b);
}

TEST_HARNESS_MAIN
