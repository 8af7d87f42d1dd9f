// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Static memory planner: offsets for buffers with known lifetimes so that
 * buffers alive at the same time never overlap.
 *
 * Time is compressed to "sections", the elementary intervals between the
 * distinct lifetime endpoints. The lower bound is the largest total of
 * sizes live in one section.
 *
 * Greedy stage: the skyline greedy (below) and, while the overlapping
 * pairs are few enough to make them cheap, greedy by size and greedy by
 * breadth (Pisarchyk & Lee, "Efficient Memory Management for Deep Neural
 * Net Inference", 2020), placing each buffer into the smallest gap among
 * the already placed buffers whose lifetimes overlap it. The overlapping
 * placed buffers are found with a segment tree over sections (those alive
 * at the buffer's first section) plus the list of buffers sorted by first
 * section (those starting inside its lifetime), so a run costs about the
 * number of overlapping pairs. The skyline greedy costs O(n log^2 n)
 * whatever the overlaps.
 *
 * Search stage, on perfect packings first (no slack at the target in any
 * section): the cut search and the committed cuts (planner_cuts.c), the
 * band decomposition (planner_bands.c), whose pieces, like the committed
 * cuts' leftover slabs, are planned by compute() itself, the lazy sweep
 * and the time sweep (planner_sweep.c); then the
 * skyline search (planner_search.c). With a capacity: a depth-first branch
 * and bound over canonical plans in the spirit of MiniMalloc (Moffitt,
 * ASPLOS 2024): buffers are placed in non-decreasing offset order, each at
 * the lowest offset above the placed buffers it overlaps; candidates are
 * ordered by that offset then by a static preorder; a candidate that would
 * leave a gap another buffer must fill first is skipped (dominance); a
 * section whose floor plus the unplaced sizes it must still hold exceeds
 * the target prunes the node. Several preorders run round robin with
 * growing node limits. For large instances the search runs skyline plans
 * of other and of randomly perturbed preorders, and perturbed size orders
 * through the classic greedy when it is cheap, within the time limit
 * (above PLAN_SKY_MAX buffers, until it stalls: improve_large()).
 *
 * Then, while the classic greedy is cheap, the best plan is compacted by
 * it (compact()): first fit in order of offset, then turned over.
 *
 * Every returned plan passes vnpu_plan_verify(), an independent sweep over
 * time keeping the live buffers sorted by offset.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/runtime.h"
#include "planner_search.h"

#define PLAN_DEFAULT_TIME_MS 2000
/* Largest instance the branch and bound runs on. */
#define PLAN_SEARCH_MAX 2048
/* Largest instance the skyline search runs on (it recurses per placement). */
#define PLAN_SKY_MAX 8192
/* A plan run that ran out of time (never kept: above any real arena). */
#define PLAN_ABORTED (UINT64_MAX - 1)
/* Budget shares of the time sweep: 1/4 on a target without slack, else 1/32 of what is left. */
#define PLAN_SWEEP_SHARE_TIGHT 4
#define PLAN_SWEEP_SHARE_LOOSE 32
/*
 * Budget share of the lazy sweep, first on a target without slack: it
 * tiles what it can within tens of ms (1 to 40 on guillotine packings of
 * 200 to 700 buffers, ladders mostly in under 10 since it merges holes
 * across groups), and what it does not tile costs the searches after it
 * (1/8 with a 100 or 200 ms stall rule: one guillotine packing of 700
 * buffers in 10, seed 7, no longer at the optimum).
 */
#define PLAN_LAZY_SHARE 16
/*
 * Where the band decomposition finds nothing to split and the instance is
 * not itself one of its pieces (lanes of a ladder, say), the sweeps are
 * the searches that tile it: the lazy sweep gets a quarter of the budget
 * (of any budget, not only of the default one) and neither sweep a stall
 * rule. Some ladders take them hundreds of ms of backtracking without a
 * new section (ladders of 1,500 buffers, seeds 1 to 50: 46 tiled, 42
 * with the shares above). A piece keeps those: the skyline search does
 * better on it (guillotine packings of 1,500, seeds 1 to 20: 15% at the
 * optimum instead of 20% when pieces took these too). Only up to
 * PLAN_SEARCH_MAX buffers: above, the improvement stage needs its half
 * for the plans the sweeps do not tile (guillotine packings of 3,000 and
 * 6,000 the decomposition does not split, seeds 25 and 32: 1.1805 and
 * 1.3077 instead of 1.0893 and 1.2785). A half instead of a quarter
 * tiles the same ladders and leaves less to the bisection.
 */
#define PLAN_LAZY_SHARE_WHOLE 4
/*
 * Budget share of the hole sweep, the first sweep: a quarter, with the
 * stall rule where the instance was split or is a piece. It tiles
 * steadily or stalls, and the stall rule stops it then; a sixteenth cut
 * it short while it still gained (a 2,176-buffer piece of a ladder of
 * 6,001, seed 12, takes it 41 ms; 1/16 gave it 28). Ladders of 6,001
 * buffers, seeds 1 to 100: 88 at the optimum instead of 86; guillotine
 * packings of 700 to 6,000 buffers the same within their noise.
 */
#define PLAN_HOLES_SHARE 4
/*
 * Budget shares on a target without slack: first the forced merges
 * (planner_merge.c) with the band decomposition of the merged instance,
 * then the band decomposition (planner_bands.c) of the instance itself,
 * of what is left. Guillotine packings of 1,500 buffers, seeds 1 to 100:
 * 47 and 48 at the optimum with half for the merges, 43 (twice) with a
 * quarter, now that the skyline search tiles the pieces first
 * (PLAN_PIECE_REST_SHARE); before that a quarter did better (seeds 1 to
 * 50: 21 against 19). Ladders of 6,001 buffers and guillotine packings
 * of 400 to 6,000 the same within their noise.
 */
#define PLAN_MERGED_SHARE 2
/*
 * Budget share of the cut search (planner_cuts.c), first of all on a
 * target without slack, of the default budget at most (not on a piece:
 * the band decomposition's pieces need not split by cuts). It tiles in
 * milliseconds what it tiles (guillotine packings of 700 buffers, seeds
 * 21 and 22, in 3 and 4 ms, which nothing else tiled in 8 s) or thrashes;
 * with a quarter, seeds 1 to 100 of 700: 98 at the optimum instead of 95.
 * Above PLAN_SEARCH_MAX buffers its section rows cost too much (a
 * decision costs its lifetime in sections) and it does not run.
 */
#define PLAN_CUTS_SHARE 4
/*
 * Budget share of the lazy sweep's plain pass as a probe, first of all on
 * a target without slack, up to PLAN_SEARCH_MAX buffers, of the default
 * budget at most (not on a piece). Where it refutes the instance (every
 * plan needs a hole merged across groups: ladders whose lanes re-split
 * across several lanes, 57 of seeds 201 to 260 of 1,500 buffers, 55 of
 * them within 150 ms; guillotine packings 2 of 50), the sweeps that
 * merge holes across groups go at once, before the stages for guillotine
 * packings, which find nothing on a ladder and spent 1.25 s of the 2 s
 * first (lazy_probe()): the hole sweep with its stall rule (ladders of
 * 1,501, seeds 12, 14 and 27, in 17 to 253 ms instead of about 100; it
 * gives up on the others in 110 to 190 ms), then the lazy sweep's pass
 * with such merges on half of what is left. Ladders of 1,500, seeds 201
 * to 400: 196 at the optimum instead of 192; guillotine packings of 700
 * and 1,500 and guillotine-aspect of 1,500 (seeds 1 to 50) and ladders
 * (seeds 1 to 100) as before. A 32nd was too short for the probe (seeds
 * 210 and 307 are refuted in 107 and 137 ms), a third of what is left too
 * short for the other pass.
 *
 * Above PLAN_SEARCH_MAX buffers (up to PLAN_SKY_MAX) the probe runs after
 * the band decomposition, which goes first there and tiles the
 * fine-grained packings at once. On the work clock: ladders of 3,000
 * buffers (seeds 1 to 50, 5,101 to 5,130) 79 at the optimum of 80
 * instead of 77, of 6,000 (1 to 100, 5,101 to 5,120) 103 of 120 instead
 * of 100 (seeds 12 and 81 lost, five gained); guillotine packings
 * of 3,000 (seeds 3,641 to 3,660) 8 and 7 (guillotine-aspect) instead of
 * 7 and 7, of 6,000 (3,641 to 3,680) 21 and 21 plans above 1.05 of the
 * optimum either way, but mean ratios 1.0705 and 1.0729 instead of 1.0692
 * and 1.0684: the probe runs its share out there. Tilings, chains,
 * fine-grained and area-cut guillotine packings of 3,000 and 6,000 plan
 * the same.
 */
#define PLAN_LAZY_PROBE_SHARE 12
/*
 * Budget share of the committed cuts (pcs_commit_run()), of what the cut
 * search leaves, on a target without slack at any size (not on a piece);
 * above PLAN_SEARCH_MAX buffers of what the band decomposition leaves
 * (PLAN_BANDS_FIRST_SHARE). Taking the first balanced set of each strip
 * instead of searching on plans guillotine packings of 1,500 buffers
 * mostly at the optimum (67 of seeds 1 to 100 instead of 49 to 51, 75
 * since they run backwards in time as well; a third of the budget did no
 * better, nor did more) and those of 3,000 at a mean of 1.045 instead of
 * 1.079 (after the forced merges; 1.034 when they went first there too,
 * but then the fine-grained packings of 6,000, which the band
 * decomposition splits at once, waited for them: a host test of three
 * took 30 s under the sanitizers instead of 3; see PLAN_BANDS_FIRST_SHARE).
 *
 * Then, of what is left, PLAN_COMMIT_MERGED_SHARE for the committed cuts
 * of the series-merged instance (pmg_commit_run()): other strips, other
 * near misses, and each tiles seeds the other does not. On 1,500 buffers,
 * seeds 1 to 100, 750 ms each: 73 and 71 at the optimum alone, 80 either
 * way. In the planner 238 of seeds 1 to 300 instead of 226 (a quarter
 * for the instance: 236); 3,000: mean 1.042 instead of 1.053.
 */
#define PLAN_COMMIT_SHARE 2
#define PLAN_COMMIT_MERGED_SHARE 2
#define PLAN_BANDS_SHARE 2
/*
 * Above PLAN_SEARCH_MAX buffers, on a target without slack (not on a
 * piece), the band decomposition goes first, on 1/PLAN_BANDS_FIRST_SHARE
 * of the budget, then the committed cuts, then the forced merges, and the
 * band decomposition does not run again. It splits the fine-grained
 * guillotine packings at once (6,000 buffers: 10 to 25 ms alone), which
 * the committed cuts took seconds over when they went first; after the
 * forced merges, as before, the committed cuts had an eighth of the
 * budget on guillotine packings, where they plan best: alone for 1 s on
 * 6,000 buffers, seeds 1 to 20, the lower of their plans of the instance
 * and of its series merges has a mean ratio of 1.067, the forced merges'
 * 1.132 (on the 17 seeds both plan). Seeds 1 to 50 in the planner:
 * 3,000 buffers, mean 1.026 instead of 1.041 (10 at the optimum instead
 * of 8); 6,000, 1.101 instead of 1.119; fine-grained 6,000 and ladders
 * of 6,001 as before.
 */
#define PLAN_BANDS_FIRST_SHARE 8
/*
 * Budget share of the strip search (planner_strips.c), of what the sweeps
 * leave on a target without slack, before the skyline search, up to
 * PLAN_SEARCH_MAX buffers: guillotine packings of 700 buffers, seeds 1 to
 * 50, 45 at the optimum with it, 42 without; of 1,500, 13 and 12. Earlier
 * in the order, on a quarter of the budget, it took from the sweeps what
 * they tile with (1,500: 10); above PLAN_SEARCH_MAX it took from the
 * improvement stage and tiled nothing (guillotine 6,000: mean 1.1675
 * against 1.1632 without it).
 */
#define PLAN_STRIPS_SHARE 2
/*
 * A piece the band decomposition leaves to the planner (a perfect packing
 * it does not split) goes to the skyline search first, which keeps all
 * but 1/PLAN_PIECE_REST_SHARE of the piece's time; the sweeps get the
 * rest, and the skyline search does not run again after them (the
 * bisection gets that time). On the pieces of guillotine packings of
 * 1,500 buffers (115 pieces of 163 to 1,472 buffers from 10 seeds, each
 * stage alone for 1 s), the skyline search tiles all 26 that any stage
 * tiles, in 1 to 362 ms; the hole sweep tiles 5, the lazy sweep 9, the
 * time sweep 5. After the sweeps it was starved: a 468-buffer piece it
 * tiles in 62 ms had a fifth of the piece's 89 ms left. Guillotine
 * packings of 1,500 buffers, seeds 1 to 100: 43 and 45 at the optimum
 * (two runs) instead of 40. A quarter for the skyline search first gave
 * 20 of seeds 1 to 50 instead of 21; all of the time 26, with a mean
 * ratio of 1.035 instead of 1.019 (the pieces it fails lose the sweeps'
 * plans).
 */
#define PLAN_PIECE_REST_SHARE 4
/* Most overlapping pairs for which the best strategy runs the classic greedies. */
#define PLAN_CLASSIC_MAX_PAIRS 20000000ull
/*
 * Passes of compact() after the search, while the overlapping pairs
 * number at most PLAN_CLASSIC_MAX_PAIRS (each pass costs a greedy plan).
 */
#define PLAN_COMPACT_PASSES 4

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The search budget counts the planning thread's CPU time, or with
 * VNPU_PLAN_DETERMINISTIC the work the searches tick (vnpu_plan_now()): a
 * loaded machine does not cut the search short, it only takes longer.
 *
 * The deadline of a stage that starts at @t and gets 1/@share of the time
 * left before @deadline; @t when none is left (a stage before may overrun,
 * and the difference must not wrap).
 */
static uint64_t stage_deadline(uint64_t t, uint64_t deadline, uint64_t share)
{
	return t < deadline ? t + (deadline - t) / share : t;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int buffer_valid(const struct vnpu_plan_buffer *b)
{
	uint64_t a = b->alignment ? b->alignment : 1;

	if (!b->size || b->first >= b->last || (a & (a - 1)))
		return 0;
	/* Keep offset + size representable for any sane arena. */
	if (b->size > UINT64_MAX / 4 || a > UINT64_MAX / 4)
		return 0;
	return 1;
}

/* Validates and sums size + alignment - 1; 0 if anything is invalid. */
static int check_buffers(const struct vnpu_plan_buffer *bufs, size_t n,
			 uint64_t *naive)
{
	uint64_t sum = 0, padded = 0;

	if (n && !bufs)
		return 0;
	if (n > UINT32_MAX / 4)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = bufs[i].alignment ? bufs[i].alignment : 1;

		if (!buffer_valid(&bufs[i]))
			return 0;
		if (sum > UINT64_MAX / 4 - bufs[i].size)
			return 0;
		sum += bufs[i].size;
		if (padded > UINT64_MAX / 4 - bufs[i].size - a)
			return 0;
		padded += bufs[i].size + a;
	}
	if (naive)
		*naive = sum;
	return 1;
}

/* --- sorting ------------------------------------------------------------------ */

/* The digits of sort_kv(), in bits. */
#define SORT_DIGIT_MIN 6u
#define SORT_DIGIT_MAX 11u

/* A record sorted by @key; @val rides along. */
struct kv {
	uint64_t key, val;
};

/*
 * Stable sort of @k records by key: insertion sort when short, else an
 * LSD radix sort over the bits the keys use, @tmp holding @k records of
 * scratch (qsort with a callback dominated the greedy runs and the
 * verifier on large traces). A digit has about log2(@k) bits, 6 to 11:
 * a pass costs the records plus twice the buckets, and the greedy plans
 * of the committed cuts' slabs sort a buffer's 50 to 300 neighbours at a
 * time, where 2,048 buckets cost more than the records (a seventh of the
 * CPU of guillotine packings of 6,000 buffers).
 */
static void sort_kv(struct kv *a, struct kv *tmp, size_t k)
{
	uint64_t maxkey = 0, anykey = 0;
	uint32_t cnt[1u << SORT_DIGIT_MAX];
	unsigned int bits = SORT_DIGIT_MIN;

	if (k < 48) {
		for (size_t i = 1; i < k; i++) {
			struct kv v = a[i];
			size_t j = i;

			while (j && a[j - 1].key > v.key) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = v;
		}
		return;
	}
	while (bits < SORT_DIGIT_MAX && (k >> (bits + 1)))
		bits++;
	for (size_t i = 0; i < k; i++) {
		if (a[i].key > maxkey)
			maxkey = a[i].key;
		anykey |= a[i].key;
	}
	/* Low bits no key sets (offsets are often multiples of 512) sort nothing. */
	for (unsigned int shift = anykey ? (unsigned int)__builtin_ctzll(anykey) : 64;
	     shift < 64 && (maxkey >> shift); shift += bits) {
		size_t buckets = (size_t)1 << bits, mask = buckets - 1;
		uint32_t sum = 0;

		memset(cnt, 0, buckets * sizeof(*cnt));
		for (size_t i = 0; i < k; i++)
			cnt[(a[i].key >> shift) & mask]++;
		for (size_t d = 0; d < buckets; d++) {
			uint32_t c = cnt[d];

			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < k; i++)
			tmp[cnt[(a[i].key >> shift) & mask]++] = a[i];
		memcpy(a, tmp, k * sizeof(*a));
	}
}

#define EV_START (1ull << 32)

/*
 * The 2 @n lifetime events of @bufs into @ev (@tmp: 2 @n records of
 * scratch), sorted by time, ends before starts, then by index: val is
 * the index, plus EV_START for a start.
 */
static void sort_events(const struct vnpu_plan_buffer *bufs, size_t n,
			struct kv *ev, struct kv *tmp)
{
	for (size_t i = 0; i < n; i++) {
		ev[i] = (struct kv){ bufs[i].last, i };
		ev[n + i] = (struct kv){ bufs[i].first, EV_START | i };
	}
	sort_kv(ev, tmp, 2 * n);
}

/* --- verifier ---------------------------------------------------------------- */

/* First position in live[0..cnt) whose offset is >= off. */
static size_t live_lower(const struct vnpu_plan_buffer *bufs,
			 const uint32_t *live, size_t cnt, uint64_t off)
{
	size_t lo = 0, hi = cnt;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bufs[live[mid]].offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int verify(const struct vnpu_plan_buffer *bufs, size_t n,
		  uint64_t capacity, uint64_t *arena_out)
{
	struct kv *ev;
	uint32_t *live;
	size_t cnt = 0;
	uint64_t arena = 0;
	int status = VNPU_SUCCESS;

	if (!check_buffers(bufs, n, NULL))
		return VNPU_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = bufs[i].alignment ? bufs[i].alignment : 1;

		if (bufs[i].offset % a || bufs[i].offset > UINT64_MAX - bufs[i].size)
			return VNPU_ERROR_INVALID_VALUE;
		if (bufs[i].offset + bufs[i].size > arena)
			arena = bufs[i].offset + bufs[i].size;
	}
	if (capacity && arena > capacity)
		return VNPU_ERROR_INVALID_VALUE;
	ev = malloc((4 * n + 1) * sizeof(*ev));
	live = malloc((n + 1) * sizeof(*live));
	if (!ev || !live) {
		free(ev);
		free(live);
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	}
	sort_events(bufs, n, ev, ev + 2 * n);
	for (size_t e = 0; e < 2 * n && status == VNPU_SUCCESS; e++) {
		uint32_t idx = (uint32_t)ev[e].val;
		const struct vnpu_plan_buffer *b = &bufs[idx];
		size_t pos = live_lower(bufs, live, cnt, b->offset);

		if (ev[e].val & EV_START) {
			/* The live set is disjoint: check both neighbours. */
			if (pos > 0) {
				const struct vnpu_plan_buffer *p = &bufs[live[pos - 1]];

				if (p->offset + p->size > b->offset)
					status = VNPU_ERROR_INVALID_VALUE;
			}
			if (pos < cnt && b->offset + b->size > bufs[live[pos]].offset)
				status = VNPU_ERROR_INVALID_VALUE;
			memmove(&live[pos + 1], &live[pos], (cnt - pos) * sizeof(*live));
			live[pos] = idx;
			cnt++;
		} else {
			if (pos >= cnt || live[pos] != idx) {
				status = VNPU_ERROR_INVALID_VALUE;
				break;
			}
			memmove(&live[pos], &live[pos + 1], (cnt - pos - 1) * sizeof(*live));
			cnt--;
		}
	}
	free(ev);
	free(live);
	if (status == VNPU_SUCCESS && arena_out)
		*arena_out = arena;
	return status;
}

int vnpu_plan_verify(const struct vnpu_plan_buffer *bufs, size_t count,
		     uint64_t capacity, uint64_t *arena_size)
{
	return vnpu_set_status(verify(bufs, count, capacity, arena_size));
}

/* Whether @off is a plan within @target, by the planner's own verifier. */
int sks_check(const struct sks_problem *pb, const uint64_t *off, uint64_t target)
{
	struct vnpu_plan_buffer *b = malloc((pb->n ? pb->n : 1) * sizeof(*b));
	int ok;

	if (!b)
		return 0;
	for (size_t i = 0; i < pb->n; i++)
		b[i] = (struct vnpu_plan_buffer){ .size = pb->size[i], .alignment = pb->align[i],
						  .first = pb->t0[i], .last = pb->t1[i],
						  .offset = off[i] };
	ok = vnpu_plan_verify(b, pb->n, target, NULL) == VNPU_SUCCESS;
	free(b);
	return ok;
}

/* --- problem setup ------------------------------------------------------------- */

struct idvec {
	uint32_t *v;
	uint32_t cnt, cap;
};

struct plan {
	size_t n;
	const struct vnpu_plan_buffer *in;
	uint64_t *size, *align;
	uint32_t *t0, *t1;	/* section range [t0, t1) */
	uint32_t nsec;
	uint64_t *sec_total;	/* live total per section */
	uint64_t lower_bound, naive;
	uint64_t *peak;		/* largest section total over the lifetime */
	uint32_t *peak_sec;	/* earliest section holding it */
	uint64_t pairs;		/* overlapping pairs */
	/* overlap queries */
	uint32_t *by_first;	/* buffers sorted by t0 */
	uint32_t *first_start;	/* nsec + 1 entries: start in by_first */
	uint32_t seg_n;		/* leaves of the segment tree */
	struct idvec *seg;
	uint8_t *placed;
	struct kv *tmp, *tmp2;	/* placed neighbours: offset, end */
	uint32_t *ids;		/* scratch list of overlapping ids */
};

static void plan_free(struct plan *p)
{
	if (p->seg)
		for (uint32_t i = 0; i < 2 * p->seg_n; i++)
			free(p->seg[i].v);
	free(p->seg);
	free(p->size);
	free(p->align);
	free(p->t0);
	free(p->t1);
	free(p->sec_total);
	free(p->by_first);
	free(p->first_start);
	free(p->placed);
	free(p->tmp);
	free(p->tmp2);
	free(p->ids);
	free(p->peak);
	free(p->peak_sec);
	memset(p, 0, sizeof(*p));
}

static int plan_init(struct plan *p, const struct vnpu_plan_buffer *bufs, size_t n)
{
	struct kv *ev = NULL;
	int64_t *diff = NULL;
	uint32_t nt = 0;

	memset(p, 0, sizeof(*p));
	p->n = n;
	p->in = bufs;
	p->size = malloc((n + 1) * sizeof(*p->size));
	p->align = malloc((n + 1) * sizeof(*p->align));
	p->t0 = malloc((n + 1) * sizeof(*p->t0));
	p->t1 = malloc((n + 1) * sizeof(*p->t1));
	p->by_first = malloc((n + 1) * sizeof(*p->by_first));
	p->placed = calloc(n + 1, 1);
	p->ids = malloc((n + 1) * sizeof(*p->ids));
	ev = malloc((4 * n + 1) * sizeof(*ev));
	if (!p->size || !p->align || !p->t0 || !p->t1 || !p->by_first ||
	    !p->placed || !p->ids || !ev)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		p->size[i] = bufs[i].size;
		p->align[i] = bufs[i].alignment ? bufs[i].alignment : 1;
	}
	/* Section boundaries: the distinct event times, numbered in order. */
	sort_events(bufs, n, ev, ev + 2 * n);
	for (size_t e = 0; e < 2 * n; e++) {
		uint32_t idx = (uint32_t)ev[e].val;

		if (!e || ev[e].key != ev[e - 1].key)
			nt++;
		if (ev[e].val & EV_START)
			p->t0[idx] = nt - 1;
		else
			p->t1[idx] = nt - 1;
	}
	p->nsec = nt ? nt - 1 : 0;
	free(ev);
	ev = NULL;

	p->sec_total = calloc(p->nsec + 1, sizeof(*p->sec_total));
	diff = calloc(p->nsec + 2, sizeof(*diff));
	p->first_start = calloc(p->nsec + 2, sizeof(*p->first_start));
	if (!p->sec_total || !diff || !p->first_start)
		goto oom;
	/* Totals stay below UINT64_MAX / 4 (check_buffers), no overflow. */
	{
		uint64_t *add = p->sec_total;

		for (size_t i = 0; i < n; i++) {
			diff[p->t0[i]] += 1;
			add[p->t0[i]] += p->size[i];
		}
		/* sec_total via start/end sweeps kept in unsigned arithmetic */
		uint64_t *sub = calloc(p->nsec + 2, sizeof(*sub));

		if (!sub)
			goto oom;
		for (size_t i = 0; i < n; i++)
			sub[p->t1[i]] += p->size[i];
		uint64_t cur = 0;

		for (uint32_t s = 0; s < p->nsec; s++) {
			cur += add[s];
			cur -= sub[s];
			add[s] = cur;
			if (cur > p->lower_bound)
				p->lower_bound = cur;
		}
		free(sub);
	}
	/* Counting sort by first section. */
	for (uint32_t s = 0; s <= p->nsec; s++)
		p->first_start[s + 1] = p->first_start[s] + (uint32_t)diff[s];
	{
		uint32_t *fill = calloc(p->nsec + 2, sizeof(*fill));

		if (!fill)
			goto oom;
		memcpy(fill, p->first_start, (p->nsec + 1) * sizeof(*fill));
		for (size_t i = 0; i < n; i++)
			p->by_first[fill[p->t0[i]]++] = (uint32_t)i;
		free(fill);
	}
	/* Overlapping pairs: buffers starting before i ends, less those ended. */
	{
		uint32_t *ended = calloc(p->nsec + 2, sizeof(*ended));
		uint64_t sum = 0;

		if (!ended)
			goto oom;
		for (size_t i = 0; i < n; i++)
			ended[p->t1[i] + 1]++;
		for (uint32_t s = 0; s <= p->nsec; s++)
			ended[s + 1] += ended[s];
		for (size_t i = 0; i < n; i++)
			sum += p->first_start[p->t1[i]] - ended[p->t0[i] + 1];
		p->pairs = (sum - n) / 2;
		free(ended);
	}
	free(diff);
	diff = NULL;

	p->seg_n = 1;
	while (p->seg_n < p->nsec + 1)
		p->seg_n <<= 1;
	p->seg = calloc(2 * (size_t)p->seg_n, sizeof(*p->seg));
	if (!p->seg)
		goto oom;
	return 0;
oom:
	free(ev);
	free(diff);
	plan_free(p);
	return -1;
}

static int idvec_push(struct idvec *v, uint32_t id)
{
	if (v->cnt == v->cap) {
		uint32_t cap = v->cap ? v->cap * 2 : 4;
		uint32_t *nv = realloc(v->v, cap * sizeof(*nv));

		if (!nv)
			return -1;
		v->v = nv;
		v->cap = cap;
	}
	v->v[v->cnt++] = id;
	return 0;
}

static void plan_reset(struct plan *p)
{
	for (uint32_t i = 0; i < 2 * p->seg_n; i++)
		p->seg[i].cnt = 0;
	memset(p->placed, 0, p->n);
}

static int plan_mark(struct plan *p, uint32_t id)
{
	uint32_t l = p->t0[id] + p->seg_n, r = p->t1[id] + p->seg_n;

	p->placed[id] = 1;
	for (; l < r; l >>= 1, r >>= 1) {
		if ((l & 1) && idvec_push(&p->seg[l++], id))
			return -1;
		if ((r & 1) && idvec_push(&p->seg[--r], id))
			return -1;
	}
	return 0;
}

/* Ids of the placed buffers whose lifetimes overlap @id's; returns count. */
static size_t plan_overlaps(const struct plan *p, uint32_t id, uint32_t *out)
{
	size_t k = 0;

	for (uint32_t node = p->t0[id] + p->seg_n; node; node >>= 1)
		for (uint32_t j = 0; j < p->seg[node].cnt; j++)
			out[k++] = p->seg[node].v[j];
	for (uint32_t j = p->first_start[p->t0[id] + 1];
	     j < p->first_start[p->t1[id]]; j++)
		if (p->placed[p->by_first[j]])
			out[k++] = p->by_first[j];
	return k;
}

enum fit { FIT_BEST, FIT_FIRST };

/*
 * Places the buffers in @order, each into the smallest (FIT_BEST) or lowest
 * (FIT_FIRST) gap among the placed buffers it overlaps. Returns the arena,
 * or UINT64_MAX when out of memory; stops early once above @cutoff, and
 * with PLAN_ABORTED after @deadline (0: none).
 */
static uint64_t greedy_place(struct plan *p, const uint32_t *order,
			     enum fit fit, uint64_t *off, uint64_t cutoff, uint64_t deadline)
{
	uint64_t arena = 0;

	plan_reset(p);
	for (size_t i = 0; i < p->n; i++) {
		/* Ticked without a deadline too: the greedy stage's work counts. */
		if (!(i & 255) && vnpu_plan_tick(PLAN_PLACE_TICK_NS) > deadline && deadline)
			return PLAN_ABORTED;
		uint32_t id = order[i];
		size_t k = plan_overlaps(p, id, p->ids);
		uint64_t size = p->size[id], a = p->align[id];
		uint64_t best = UINT64_MAX, best_gap = UINT64_MAX, prev_end = 0;

		for (size_t j = 0; j < k; j++) {
			p->tmp[j].key = off[p->ids[j]];
			p->tmp[j].val = off[p->ids[j]] + p->size[p->ids[j]];
		}
		sort_kv(p->tmp, p->tmp2, k);
		for (size_t j = 0; j < k; j++) {
			uint64_t start = align_up(prev_end, a);

			if (start < p->tmp[j].key && p->tmp[j].key - start >= size) {
				uint64_t gap = p->tmp[j].key - start;

				if (fit == FIT_FIRST) {
					best = start;
					break;
				}
				if (gap < best_gap) {
					best_gap = gap;
					best = start;
				}
			}
			if (p->tmp[j].val > prev_end)
				prev_end = p->tmp[j].val;
		}
		if (best == UINT64_MAX)
			best = align_up(prev_end, a);
		off[id] = best;
		if (best + size > arena)
			arena = best + size;
		if (arena > cutoff)
			return arena;
		if (plan_mark(p, id))
			return UINT64_MAX;
	}
	return arena;
}

static int plan_alloc_tmp(struct plan *p)
{
	p->tmp = malloc((p->n + 1) * sizeof(*p->tmp));
	p->tmp2 = malloc((p->n + 1) * sizeof(*p->tmp2));
	return p->tmp && p->tmp2 ? 0 : -1;
}

/* --- skyline greedy ------------------------------------------------------------ */

/*
 * The skyline greedy is the branch and bound below without backtracking,
 * organised like skyline strip packing. The skyline is the top of the
 * placed buffers in every section, kept as a list of runs of sections of
 * equal height. Each step takes the lowest run (the leftmost of equal
 * ones): the unplaced buffer of best preorder rank whose lifetime lies
 * inside it goes at its bottom; if none fits, nothing ever will below the
 * lower neighbour's height, so the run rises to it and merges. Offsets
 * thus only grow, as in the canonical plans of the search.
 *
 * The runs are a linked list with a heap of (height, start) entries,
 * checked when popped. "Best rank inside [L, R)" (lifetime starting at or
 * after L and ending at or before R) is a merge-sort tree: the buffers
 * sorted by first section (points), and at every level blocks of them
 * sorted by last section, each block with a min-rank segment tree from
 * which placed buffers are removed. A query binary searches the root
 * block once and follows the merge counts down (fractional cascading);
 * blocks of up to SKY_LEAF points, and queries over as few, scan the
 * points instead. A query or removal costs O(log^2 n) (the segment tree
 * of one block per level); at most about 3n steps, so a run is
 * O(n log^2 n) whatever the overlaps.
 */
struct sky_run {
	uint64_t height;
	uint32_t start, end;	/* sections [start, end) */
	uint32_t prev, next;	/* SKY_NONE at the ends */
	uint32_t alive;
};

struct sky_ent {
	uint64_t height;
	uint32_t start, run;
};

#define SKY_NONE UINT32_MAX
/*
 * Blocks of up to SKY_LEAF points are scanned (level 0, in point order),
 * not searched: the levels below SKY_LEAF_LV are never used.
 */
#define SKY_LEAF_LV 6
#define SKY_LEAF (1u << SKY_LEAF_LV)

struct sky {
	uint32_t levels, width;	/* width: power of two >= n */
	uint32_t *last;		/* [level][i]: last section, blocks sorted */
	uint32_t *lcnt;		/* [level][i]: entries before i from the left child */
	uint32_t *where;	/* [level][q]: i holding point q */
	uint32_t *tree;		/* [level][2 * width]: min rank per block */
	uint32_t *rank_of;	/* point q's rank in the preorder, UINT32_MAX once placed */
	uint32_t *point_of;	/* buffer id -> point q */
	uint32_t *tmp;
	struct sky_run *run;
	size_t run_n, run_cap;
	struct sky_ent *heap;
	size_t heap_n, heap_cap;
};

static void sky_free(struct sky *k)
{
	free(k->last);
	free(k->lcnt);
	free(k->where);
	free(k->tree);
	free(k->rank_of);
	free(k->point_of);
	free(k->tmp);
	free(k->run);
	free(k->heap);
	memset(k, 0, sizeof(*k));
}

static int sky_init(struct sky *k, const struct plan *p)
{
	size_t w, cells;

	memset(k, 0, sizeof(*k));
	k->width = 1;
	while (k->width < p->n)
		k->width <<= 1;
	while ((1u << k->levels) <= k->width)
		k->levels++;
	w = k->width;
	cells = w * k->levels;
	k->last = malloc(cells * sizeof(*k->last));
	k->lcnt = malloc(cells * sizeof(*k->lcnt));
	k->where = malloc(cells * sizeof(*k->where));
	k->tree = malloc(2 * cells * sizeof(*k->tree));
	k->rank_of = malloc(w * sizeof(*k->rank_of));
	k->tmp = malloc(2 * w * sizeof(*k->tmp));
	k->point_of = malloc((p->n + 1) * sizeof(*k->point_of));
	if (!k->last || !k->lcnt || !k->where || !k->tree || !k->rank_of || !k->tmp ||
	    !k->point_of) {
		sky_free(k);
		return -1;
	}
	for (size_t q = 0; q < p->n; q++)
		k->point_of[p->by_first[q]] = (uint32_t)q;
	/*
	 * The merge sort by last section does not depend on the preorder:
	 * build it once. tmp holds, per level, the point at every index;
	 * lcnt records the merge (fractional cascading: a query binary
	 * searches the root block only and follows the counts down).
	 */
	{
		uint32_t *at = k->tmp, *nat = k->tmp + w;

		for (size_t q = 0; q < w; q++) {
			at[q] = (uint32_t)q;
			k->last[q] = q < p->n ? p->t1[p->by_first[q]] : UINT32_MAX;
			k->where[q] = (uint32_t)q;
		}
		for (uint32_t lv = 1; lv < k->levels; lv++) {
			const uint32_t *pl = k->last + (lv - 1) * w;
			uint32_t *cl = k->last + lv * w, *cw = k->where + lv * w;
			uint32_t *lc = k->lcnt + lv * w;
			size_t half = (size_t)1 << (lv - 1);

			for (size_t b = 0; b < w; b += 2 * half) {
				size_t i = b, j = b + half, o = b;

				while (i < b + half || j < b + 2 * half) {
					int left = j >= b + 2 * half ||
						   (i < b + half && pl[i] <= pl[j]);
					size_t from = left ? i++ : j++;

					lc[o] = (uint32_t)(i - b - left);
					cl[o] = pl[from];
					nat[o++] = at[from];
				}
			}
			for (size_t i = 0; i < w; i++)
				cw[nat[i]] = (uint32_t)i;
			memcpy(at, nat, w * sizeof(*at));
		}
	}
	return 0;
}

/* Fills the min-rank trees for @order (rank -> buffer id). */
static void sky_rank(struct sky *k, const struct plan *p, const uint32_t *order)
{
	size_t w = k->width;
	uint32_t *inv = k->tmp;		/* buffer id -> rank */

	for (size_t r = 0; r < p->n; r++)
		inv[order[r]] = (uint32_t)r;
	for (size_t q = 0; q < w; q++)
		k->rank_of[q] = q < p->n ? inv[p->by_first[q]] : UINT32_MAX;
	for (uint32_t lv = SKY_LEAF_LV; lv < k->levels; lv++) {
		size_t bs = (size_t)1 << lv;
		uint32_t *t = k->tree + 2 * lv * w;

		for (size_t q = 0; q < w; q++) {
			size_t i = k->where[lv * w + q], b = i >> lv;

			t[2 * b * bs + bs + (i - b * bs)] = k->rank_of[q];
		}
		for (size_t b = 0; b < w; b += bs) {
			uint32_t *bt = t + 2 * b;

			for (size_t node = bs - 1; node >= 1; node--)
				bt[node] = bt[2 * node] < bt[2 * node + 1] ?
					   bt[2 * node] : bt[2 * node + 1];
		}
	}
}

static void sky_remove(struct sky *k, uint32_t q)
{
	size_t w = k->width;

	k->rank_of[q] = UINT32_MAX;
	for (uint32_t lv = SKY_LEAF_LV; lv < k->levels; lv++) {
		size_t bs = (size_t)1 << lv, i = k->where[lv * w + q], b = i >> lv;
		uint32_t *bt = k->tree + 2 * lv * w + 2 * b * bs;
		size_t node = bs + (i - b * bs);
		uint32_t gone = bt[node];

		bt[node] = UINT32_MAX;
		/* Ranks are distinct: only the nodes whose minimum it was change. */
		for (node >>= 1; node && bt[node] == gone; node >>= 1)
			bt[node] = bt[2 * node] < bt[2 * node + 1] ? bt[2 * node] : bt[2 * node + 1];
	}
}

/* Best rank of the unplaced points [@a, @e) with a last section at most @hi. */
static uint32_t sky_scan(const struct sky *k, size_t a, size_t e, uint32_t hi)
{
	uint32_t best = UINT32_MAX;

	for (; a < e; a++)
		if (k->last[a] <= hi && k->rank_of[a] < best)
			best = k->rank_of[a];
	return best;
}

/* Best rank among the first @cnt (by last section) of block (@lv, @b). */
static uint32_t sky_block_min(const struct sky *k, uint32_t lv, size_t b, size_t cnt)
{
	size_t bs = (size_t)1 << lv;
	const uint32_t *bt = k->tree + 2 * lv * k->width + 2 * b * bs;
	uint32_t best = UINT32_MAX;

	for (size_t l = bs, r = bs + cnt; l < r; l >>= 1, r >>= 1) {
		if ((l & 1) && bt[l++] < best)
			best = bt[l - 1];
		if ((r & 1) && bt[--r] < best)
			best = bt[r];
	}
	return best;
}

/*
 * Best rank of an unplaced buffer living inside sections [lo, hi): the
 * points from the first one starting at or after @lo on, with a last
 * section at most @hi. From the root block down to the point where that
 * range starts, the counts of entries within @hi follow the merge; every
 * right sibling on the way lies inside the range.
 */
static uint32_t sky_query(const struct sky *k, const struct plan *p, uint32_t lo, uint32_t hi)
{
	size_t a, n, bstart = 0, bs = k->width, c = 0, cnt;
	uint32_t lv = k->levels - 1, best = UINT32_MAX, v;
	const uint32_t *last = k->last + (size_t)lv * k->width;

	a = p->first_start[lo];
	n = p->first_start[hi];
	if (n - a <= SKY_LEAF || lv <= SKY_LEAF_LV)
		return sky_scan(k, a, n, hi);
	for (cnt = bs; c < cnt;) {
		size_t mid = c + (cnt - c) / 2;

		if (last[mid] <= hi)
			c = mid + 1;
		else
			cnt = mid;
	}
	while (c) {
		size_t half = bs / 2, cl, cr;

		if (a <= bstart) {
			v = sky_block_min(k, lv, bstart >> lv, c);
			return v < best ? v : best;
		}
		if (lv == SKY_LEAF_LV) {
			v = sky_scan(k, a, bstart + bs, hi);
			return v < best ? v : best;
		}
		cl = c == bs ? half : k->lcnt[(size_t)lv * k->width + bstart + c];
		cr = c - cl;
		lv--;
		if (a <= bstart + half) {
			if (cr) {
				v = sky_block_min(k, lv, (bstart + half) >> lv, cr);
				if (v < best)
					best = v;
			}
			c = cl;
		} else {
			bstart += half;
			c = cr;
		}
		bs = half;
	}
	return best;
}

static int sky_push(struct sky *k, uint32_t run)
{
	struct sky_ent e = { k->run[run].height, k->run[run].start, run };
	size_t i;

	if (vnpu_plan_grow((void **)&k->heap, &k->heap_cap, k->heap_n + 1, sizeof(*k->heap)))
		return -1;
	i = k->heap_n++;
	while (i) {
		size_t up = (i - 1) / 2;
		const struct sky_ent *u = &k->heap[up];

		if (u->height < e.height || (u->height == e.height && u->start <= e.start))
			break;
		k->heap[i] = *u;
		i = up;
	}
	k->heap[i] = e;
	return 0;
}

static void sky_pop(struct sky *k)
{
	struct sky_ent v = k->heap[--k->heap_n];
	size_t i = 0, n = k->heap_n;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && (k->heap[c + 1].height < k->heap[c].height ||
				  (k->heap[c + 1].height == k->heap[c].height &&
				   k->heap[c + 1].start < k->heap[c].start)))
			c++;
		if (v.height < k->heap[c].height ||
		    (v.height == k->heap[c].height && v.start <= k->heap[c].start))
			break;
		k->heap[i] = k->heap[c];
		i = c;
	}
	if (n)
		k->heap[i] = v;
}

static int sky_new_run(struct sky *k, uint64_t height, uint32_t start, uint32_t end,
		       uint32_t *out)
{
	if (vnpu_plan_grow((void **)&k->run, &k->run_cap, k->run_n + 1, sizeof(*k->run)))
		return -1;
	k->run[k->run_n] = (struct sky_run){ height, start, end, SKY_NONE, SKY_NONE, 1 };
	*out = (uint32_t)k->run_n++;
	return 0;
}

/* Sets run @r's height, merges it with equal neighbours and queues it. */
static int sky_set(struct sky *k, uint32_t r, uint64_t height)
{
	struct sky_run *run = k->run;
	uint32_t n = run[r].next, pv = run[r].prev;

	run[r].height = height;
	if (n != SKY_NONE && run[n].height == height) {
		run[r].end = run[n].end;
		run[r].next = run[n].next;
		if (run[n].next != SKY_NONE)
			run[run[n].next].prev = r;
		run[n].alive = 0;
	}
	if (pv != SKY_NONE && run[pv].height == height) {
		run[r].start = run[pv].start;
		run[r].prev = run[pv].prev;
		if (run[pv].prev != SKY_NONE)
			run[run[pv].prev].next = r;
		run[pv].alive = 0;
	}
	return sky_push(k, r);
}

/* Links a new run [start, end) at @height before (@after 0) or after run @r. */
static int sky_split(struct sky *k, uint32_t r, int after, uint32_t start, uint32_t end)
{
	uint32_t nr;

	if (sky_new_run(k, k->run[r].height, start, end, &nr))
		return -1;
	if (after) {
		k->run[nr].prev = r;
		k->run[nr].next = k->run[r].next;
		if (k->run[r].next != SKY_NONE)
			k->run[k->run[r].next].prev = nr;
		k->run[r].next = nr;
	} else {
		k->run[nr].next = r;
		k->run[nr].prev = k->run[r].prev;
		if (k->run[r].prev != SKY_NONE)
			k->run[k->run[r].prev].next = nr;
		k->run[r].prev = nr;
	}
	return sky_push(k, nr);
}

/*
 * Places the buffers by the skyline rule, @order giving the preorder.
 * Returns the arena, UINT64_MAX when out of memory; stops early once
 * above @cutoff, and with PLAN_ABORTED after @deadline (0: none).
 */
static uint64_t skyline_place(const struct plan *p, struct sky *k,
			      const uint32_t *order, uint64_t *off, uint64_t cutoff,
			      uint64_t deadline)
{
	uint64_t arena = 0, steps = 0;
	size_t left = p->n;
	uint32_t r;

	sky_rank(k, p, order);
	k->run_n = 0;
	k->heap_n = 0;
	if (sky_new_run(k, 0, 0, p->nsec, &r) || sky_push(k, r))
		return UINT64_MAX;
	while (left) {
		struct sky_ent e;
		struct sky_run *v;
		uint32_t best, id;
		uint64_t top;

		if (!k->heap_n)
			return UINT64_MAX;	/* cannot happen: all fit at the top */
		if (!(++steps & 1023) && vnpu_plan_tick(PLAN_SKY_TICK_NS) > deadline && deadline)
			return PLAN_ABORTED;
		e = k->heap[0];
		sky_pop(k);
		v = &k->run[e.run];
		if (!v->alive || v->height != e.height || v->start != e.start)
			continue;
		r = e.run;
		best = sky_query(k, p, v->start, v->end);
		if (best == UINT32_MAX) {
			/* Nothing fits: rise to the lower neighbour. */
			uint64_t h = UINT64_MAX;

			if (v->prev != SKY_NONE)
				h = k->run[v->prev].height;
			if (v->next != SKY_NONE && k->run[v->next].height < h)
				h = k->run[v->next].height;
			if (h == UINT64_MAX || sky_set(k, r, h))
				return UINT64_MAX;
			continue;
		}
		id = order[best];
		off[id] = align_up(v->height, p->align[id]);
		top = off[id] + p->size[id];
		if (top > arena)
			arena = top;
		if (arena > cutoff)
			return arena;
		sky_remove(k, k->point_of[id]);
		left--;
		if (p->t0[id] > v->start &&
		    sky_split(k, r, 0, v->start, p->t0[id]))
			return UINT64_MAX;
		v = &k->run[r];	/* the array may have moved */
		if (p->t1[id] < v->end && sky_split(k, r, 1, p->t1[id], v->end))
			return UINT64_MAX;
		v = &k->run[r];
		v->start = p->t0[id];
		v->end = p->t1[id];
		if (sky_set(k, r, top))
			return UINT64_MAX;
	}
	return arena;
}

/* --- orders ---------------------------------------------------------------------- */

struct key {
	uint64_t k1, k2, k3;
	uint32_t id;
};

static int cmp_key_desc(const void *pa, const void *pb)
{
	const struct key *a = pa, *b = pb;

	if (a->k1 != b->k1)
		return a->k1 > b->k1 ? -1 : 1;
	if (a->k2 != b->k2)
		return a->k2 > b->k2 ? -1 : 1;
	if (a->k3 != b->k3)
		return a->k3 > b->k3 ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* cmp_key_desc(@a, @b) < 0, inlined for sort_keys(). */
static inline int key_before(const struct key *a, const struct key *b)
{
	if (a->k1 != b->k1)
		return a->k1 > b->k1;
	if (a->k2 != b->k2)
		return a->k2 > b->k2;
	if (a->k3 != b->k3)
		return a->k3 > b->k3;
	return a->id < b->id;
}

/*
 * Sorts @keys[0, n) by cmp_key_desc() into @order (ids); @keys holds 2 @n
 * entries, the upper half scratch. A bottom-up merge sort with the
 * comparison inlined: qsort's callback and element copies were a fifth
 * of a 100,000-buffer skyline plan.
 */
static void sort_keys(struct key *keys, size_t n, uint32_t *order)
{
	struct key *a = keys, *b = keys + n, *t;
	size_t run = 16;

	for (size_t lo = 0; lo < n; lo += run) {
		size_t hi = lo + run < n ? lo + run : n;

		for (size_t i = lo + 1; i < hi; i++) {
			struct key v = a[i];
			size_t j = i;

			while (j > lo && key_before(&v, &a[j - 1])) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = v;
		}
	}
	for (; run < n; run *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * run) {
			size_t mid = lo + run < n ? lo + run : n;
			size_t hi = lo + 2 * run < n ? lo + 2 * run : n;
			size_t i = lo, j = mid, o = lo;

			while (i < mid && j < hi)
				b[o++] = key_before(&a[j], &a[i]) ? a[j++] : a[i++];
			while (i < mid)
				b[o++] = a[i++];
			while (j < hi)
				b[o++] = a[j++];
		}
		t = a;
		a = b;
		b = t;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = a[i].id;
}

/* Largest first; ties: longer lifetime first, then earlier first. */
static void order_by_size(const struct plan *p, struct key *keys, uint32_t *order)
{
	for (size_t i = 0; i < p->n; i++)
		keys[i] = (struct key){ p->size[i], p->t1[i] - p->t0[i],
					UINT64_MAX - p->t0[i], (uint32_t)i };
	sort_keys(keys, p->n, order);
}

/*
 * Each buffer's peak: the largest section total over its lifetime and the
 * earliest section holding it (sparse table of argmax).
 */
static int plan_peaks(struct plan *p)
{
	uint32_t levels = 0;
	uint32_t **sp;
	int status = -1;

	p->peak = malloc((p->n + 1) * sizeof(*p->peak));
	p->peak_sec = malloc((p->n + 1) * sizeof(*p->peak_sec));
	while ((1u << levels) <= p->nsec)
		levels++;
	sp = calloc(levels + 1, sizeof(*sp));
	if (!sp || !p->peak || !p->peak_sec)
		goto out;
	for (uint32_t l = 0; l < levels; l++) {
		sp[l] = malloc((p->nsec + 1) * sizeof(**sp));
		if (!sp[l])
			goto out;
		for (uint32_t s = 0; s + (1u << l) <= p->nsec; s++) {
			if (!l) {
				sp[l][s] = s;
				continue;
			}
			uint32_t a = sp[l - 1][s], b = sp[l - 1][s + (1u << (l - 1))];

			sp[l][s] = p->sec_total[b] > p->sec_total[a] ? b : a;
		}
	}
	for (size_t i = 0; i < p->n; i++) {
		uint32_t l0 = p->t0[i], len = p->t1[i] - p->t0[i];
		uint32_t l = 0, a, b, m;

		while ((2u << l) <= len)
			l++;
		a = sp[l][l0];
		b = sp[l][p->t1[i] - (1u << l)];
		m = p->sec_total[b] > p->sec_total[a] ? b : a;
		p->peak[i] = p->sec_total[m];
		p->peak_sec[i] = m;
	}
	status = 0;
out:
	if (sp)
		for (uint32_t l = 0; l < levels; l++)
			free(sp[l]);
	free(sp);
	return status;
}

/*
 * Greedy by breadth processes the sections by decreasing live total and,
 * in each, the unplaced buffers by decreasing size. A buffer is thus
 * placed with the first processed section it lives in: its peak section,
 * ties to the earliest. Sorting buffers by (peak, peak section, size)
 * gives the same order in O(n log n).
 */
static void order_by_breadth(const struct plan *p, struct key *keys, uint32_t *order)
{
	for (size_t i = 0; i < p->n; i++)
		keys[i] = (struct key){ p->peak[i], UINT64_MAX - p->peak_sec[i],
					p->size[i], (uint32_t)i };
	sort_keys(keys, p->n, order);
}

static uint64_t rng_next(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* --- branch and bound over canonical plans ---------------------------------------- */

/*
 * The search follows MiniMalloc (Moffitt, ASPLOS 2024). A node holds the
 * placed buffers, the lowest offset each unplaced buffer can still take
 * (above the placed buffers it overlaps) and, per time section, a floor and
 * the unplaced total. Children place one unplaced buffer at its lowest
 * offset, in non-decreasing (offset, preorder rank) order, so every plan
 * is reached once in its canonical "skyline" form. Pruning:
 *  - dominance: a buffer may not go at or above the lowest top any other
 *    unplaced buffer can reach (it would leave a gap that one must fill);
 *  - section inference: in every section, max(floor, offset) plus the
 *    unplaced total must stay within the target; a section's floor is also
 *    raised to the lowest offset its unplaced buffers can take;
 *  - hatless buffers: once a buffer overlapping no unplaced buffer has
 *    failed, its siblings fail too;
 *  - dynamic decomposition: when a placement leaves a time point no
 *    unplaced buffer crosses, the remaining buffers on either side are
 *    independent problems, solved one after the other; if one fails there
 *    is nothing to gain from other plans of the others.
 * Several static preorders run round robin with doubling node limits.
 */
enum { MM_NOMEM = -3, MM_TIMEOUT = -2, MM_LIMIT = -1, MM_NONE = 0, MM_FOUND = 1 };

struct mm_ent {
	uint32_t rank, id;
};

struct mm_log {
	uint32_t idx;
	uint64_t old;
};

struct mm {
	struct plan *p;
	size_t n;
	uint64_t target;
	uint32_t *ov_start, *ov;	/* overlapping buffers (CSR) */
	uint32_t *sm_start, *sm;	/* buffers of each section (CSR) */
	uint64_t *minoff, *sol, *floor, *total, *bmax;
	uint32_t *cuts;			/* unplaced buffers crossing s | s + 1 */
	uint32_t *sec_mark, *buf_mark, mark_now;
	uint8_t *placed;
	struct key *keys;
	struct mm_ent *chg;
	const char *heur;
	struct mm_log *mlog, *flog;
	size_t mlog_n, mlog_cap, flog_n, flog_cap;
	struct mm_ent *ord;		/* stack of candidate orderings */
	size_t ord_n, ord_cap;
	uint32_t *ids;			/* stack of partitions and cut points */
	size_t ids_n, ids_cap;
	uint64_t nodes, nodes_left, deadline;
};

static int mm_log_push(struct mm_log **log, size_t *n, size_t *cap,
		       uint32_t idx, uint64_t old)
{
	if (vnpu_plan_grow((void **)log, cap, *n + 1, sizeof(**log)))
		return -1;
	(*log)[*n].idx = idx;
	(*log)[(*n)++].old = old;
	return 0;
}

static int mm_ids_push(struct mm *m, uint32_t v)
{
	if (vnpu_plan_grow((void **)&m->ids, &m->ids_cap, m->ids_n + 1, sizeof(*m->ids)))
		return -1;
	m->ids[m->ids_n++] = v;
	return 0;
}

static int mm_less(const struct mm *m, struct mm_ent a, struct mm_ent b)
{
	if (m->minoff[a.id] != m->minoff[b.id])
		return m->minoff[a.id] < m->minoff[b.id];
	return a.rank < b.rank;
}

static int mm_decompose(struct mm *m, size_t part, size_t pn, uint32_t slo,
			uint32_t shi, uint64_t pmax, size_t ord0, size_t on,
			uint64_t off, uint32_t rank, uint32_t id);

/*
 * Searches the partition ids[part .. part + pn) over sections [slo, shi).
 * ord[ord0 .. ord0 + on) is the parent's ordering, sorted by (offset, rank)
 * as they were before the last placement; the entries whose offset that
 * placement raised carry buf_mark == mark_now.
 */
static int mm_search(struct mm *m, size_t part, size_t pn, uint32_t slo,
		     uint32_t shi, uint64_t pmax, size_t ord0, size_t on,
		     uint64_t min_off, uint32_t min_rank)
{
	const struct plan *p = m->p;
	size_t base = m->ord_n, k = 0, nc = 0;
	uint64_t min_height = UINT64_MAX;
	uint32_t mark = m->mark_now;
	int r = MM_NONE;

	if (!m->nodes_left)
		return MM_LIMIT;
	m->nodes_left--;
	if (!(++m->nodes & 255) && vnpu_plan_tick(MM_TICK_NS) > m->deadline)
		return MM_TIMEOUT;
	if (vnpu_plan_grow((void **)&m->ord, &m->ord_cap, base + on, sizeof(*m->ord)))
		return MM_NOMEM;
	/* The unchanged entries stay sorted; sort the raised ones and merge. */
	for (size_t i = 0; i < on; i++) {
		struct mm_ent e = m->ord[ord0 + i];

		if (m->placed[e.id])
			continue;
		if (m->minoff[e.id] + p->size[e.id] < min_height)
			min_height = m->minoff[e.id] + p->size[e.id];
		if (m->buf_mark[e.id] != mark) {
			m->ord[base + k++] = e;
			continue;
		}
		size_t j = nc++;

		while (j && mm_less(m, e, m->chg[j - 1])) {
			m->chg[j] = m->chg[j - 1];
			j--;
		}
		m->chg[j] = e;
	}
	if (nc) {
		size_t i = k, j = nc, w = k + nc;

		while (j) {
			if (i && mm_less(m, m->chg[j - 1], m->ord[base + i - 1]))
				m->ord[base + --w] = m->ord[base + --i];
			else
				m->ord[base + --w] = m->chg[--j];
		}
		k += nc;
	}
	if (!k)
		return MM_FOUND;
	m->ord_n = base + k;
	for (size_t c = 0; c < k && r == MM_NONE; c++) {
		struct mm_ent e = m->ord[base + c];
		uint32_t id = e.id;
		uint64_t off = m->minoff[id], top = off + p->size[id];
		size_t mlog0 = m->mlog_n, flog0 = m->flog_n;
		int hatless = 1, ok = 1;

		if (off < min_off || (off == min_off && e.rank < min_rank))
			continue;
		if (off >= min_height)
			break;
		if (top > m->target)
			continue;
		m->placed[id] = 1;
		m->sol[id] = off;
		m->mark_now++;
		for (uint32_t j = m->ov_start[id]; j < m->ov_start[id + 1]; j++) {
			uint32_t u = m->ov[j];

			if (m->placed[u])
				continue;
			hatless = 0;
			if (m->minoff[u] >= top)
				continue;
			if (mm_log_push(&m->mlog, &m->mlog_n, &m->mlog_cap, u, m->minoff[u]))
				ok = -1;
			m->minoff[u] = align_up(top, p->align[u]);
			m->buf_mark[u] = m->mark_now;
		}
		for (uint32_t s = p->t0[id]; s < p->t1[id]; s++) {
			if (mm_log_push(&m->flog, &m->flog_n, &m->flog_cap, s, m->floor[s]))
				ok = -1;
			m->floor[s] = top;
			m->total[s] -= p->size[id];
			if (top + m->total[s] > m->target)
				ok = 0;
		}
		/*
		 * A section's floor is at least its unplaced buffers' lowest
		 * offset: prune when even that plus the section's total does
		 * not fit. Only the sections of raised buffers can change, and
		 * only where the raised offset itself no longer fits; one
		 * unplaced buffer low enough settles a section. (Keeping such
		 * floors when nothing is pruned would not prune later either:
		 * totals only shrink and later floors are higher.)
		 */
		for (size_t l = mlog0; ok == 1 && l < m->mlog_n; l++) {
			uint32_t u = m->mlog[l].idx;
			uint64_t mu = m->minoff[u];

			if (mu + m->bmax[u] <= m->target)
				continue;
			for (uint32_t s = p->t0[u]; ok == 1 && s < p->t1[u]; s++) {
				uint64_t room;
				int low = 0;

				if (mu + m->total[s] <= m->target || m->sec_mark[s] == m->mark_now)
					continue;
				m->sec_mark[s] = m->mark_now;
				room = m->target - m->total[s];	/* total < mu + total */
				for (uint32_t q = m->sm_start[s]; q < m->sm_start[s + 1] && !low; q++)
					low = !m->placed[m->sm[q]] && m->minoff[m->sm[q]] <= room;
				if (!low)
					ok = 0;
			}
		}
		/*
		 * The offset is a floor for every section of the partition (the
		 * placements go up); that needs a scan only when the partition's
		 * largest total at its creation does not fit above it.
		 */
		if (ok == 1 && off + pmax > m->target)
			for (uint32_t s = slo; ok == 1 && s < shi; s++)
				if (off + m->total[s] > m->target)
					ok = 0;
		if (ok < 0)
			r = MM_NOMEM;
		else if (ok)
			r = mm_decompose(m, part, pn, slo, shi, pmax, base, k, off, e.rank, id);
		for (uint32_t s = p->t0[id]; s < p->t1[id]; s++)
			m->total[s] += p->size[id];
		while (m->flog_n > flog0) {
			m->flog_n--;
			m->floor[m->flog[m->flog_n].idx] = m->flog[m->flog_n].old;
		}
		while (m->mlog_n > mlog0) {
			m->mlog_n--;
			m->minoff[m->mlog[m->mlog_n].idx] = m->mlog[m->mlog_n].old;
		}
		m->placed[id] = 0;
		if (r == MM_NONE && hatless)
			break;
	}
	m->ord_n = base;
	return r;
}

/* Ranks the partition's buffers by the preorder, then solves it. */
static int mm_subsolve(struct mm *m, size_t part, size_t pn, uint32_t slo, uint32_t shi)
{
	const struct plan *p = m->p;
	size_t base = m->ord_n;
	uint64_t pmax = 0;
	int r;

	for (size_t i = 0; i < pn; i++) {
		uint32_t id = m->ids[part + i];
		uint64_t k[3], tot = 0, w = p->in[id].last - p->in[id].first;

		for (uint32_t s = p->t0[id]; s < p->t1[id]; s++)
			if (m->total[s] > tot)
				tot = m->total[s];
		for (int c = 0; c < 3; c++) {
			switch (m->heur[c]) {
			case 'T':
				k[c] = tot;
				break;
			case 'W':
				k[c] = w;
				break;
			case 'A':
				k[c] = w > UINT64_MAX / p->size[id] ? UINT64_MAX : w * p->size[id];
				break;
			default:
				k[c] = p->size[id];
			}
		}
		m->keys[i] = (struct key){ k[0], k[1], k[2], id };
	}
	qsort(m->keys, pn, sizeof(*m->keys), cmp_key_desc);
	for (size_t i = 0; i < pn; i++) {
		uint32_t id = m->keys[i].id;

		m->keys[i] = (struct key){ ~m->minoff[id], ~(uint64_t)i, 0, id };
	}
	qsort(m->keys, pn, sizeof(*m->keys), cmp_key_desc);
	if (vnpu_plan_grow((void **)&m->ord, &m->ord_cap, base + pn, sizeof(*m->ord)))
		return MM_NOMEM;
	for (size_t i = 0; i < pn; i++)
		m->ord[base + i] = (struct mm_ent){ (uint32_t)~m->keys[i].k2, m->keys[i].id };
	m->ord_n = base + pn;
	for (uint32_t s = slo; s < shi; s++)
		if (m->total[s] > pmax)
			pmax = m->total[s];
	m->mark_now++;		/* nothing raised: the ordering is sorted */
	r = mm_search(m, part, pn, slo, shi, pmax, base, pn, 0, 0);
	m->ord_n = base;
	return r;
}

static int mm_decompose(struct mm *m, size_t part, size_t pn, uint32_t slo,
			uint32_t shi, uint64_t pmax, size_t ord0, size_t on,
			uint64_t off, uint32_t rank, uint32_t id)
{
	const struct plan *p = m->p;
	size_t c0 = m->ids_n, nc;
	uint32_t lo = slo;
	int r = MM_FOUND;

	for (uint32_t s = p->t0[id]; s + 1 < p->t1[id]; s++)
		if (!--m->cuts[s] && mm_ids_push(m, s + 1))
			r = MM_NOMEM;
	nc = m->ids_n - c0;
	if (r != MM_FOUND)
		;
	else if (!nc)
		r = mm_search(m, part, pn, slo, shi, pmax, ord0, on, off, rank);
	else
		for (size_t c = 0; c <= nc && r == MM_FOUND; c++) {
			uint32_t hi = c < nc ? m->ids[c0 + c] : shi;
			size_t q0 = m->ids_n;

			for (size_t i = 0; i < pn && r == MM_FOUND; i++) {
				uint32_t u = m->ids[part + i];

				if (!m->placed[u] && p->t0[u] < hi && p->t1[u] > lo &&
				    mm_ids_push(m, u))
					r = MM_NOMEM;
			}
			if (r == MM_FOUND && m->ids_n > q0)
				r = mm_subsolve(m, q0, m->ids_n - q0, lo, hi);
			m->ids_n = q0;
			lo = hi;
		}
	m->ids_n = c0;
	for (uint32_t s = p->t0[id]; s + 1 < p->t1[id]; s++)
		m->cuts[s]++;
	return r;
}

static void mm_free(struct mm *m)
{
	free(m->ov_start);
	free(m->ov);
	free(m->sm_start);
	free(m->sm);
	free(m->minoff);
	free(m->sol);
	free(m->floor);
	free(m->total);
	free(m->cuts);
	free(m->sec_mark);
	free(m->buf_mark);
	free(m->placed);
	free(m->keys);
	free(m->chg);
	free(m->bmax);
	free(m->mlog);
	free(m->flog);
	free(m->ord);
	free(m->ids);
}

static int mm_init(struct mm *m, struct plan *p)
{
	size_t n = p->n, pairs = 0, mem = 0;
	uint32_t ns = p->nsec;

	memset(m, 0, sizeof(*m));
	m->p = p;
	m->n = n;
	m->ov_start = calloc(n + 2, sizeof(*m->ov_start));
	m->sm_start = calloc(ns + 2, sizeof(*m->sm_start));
	m->minoff = calloc(n + 1, sizeof(*m->minoff));
	m->sol = calloc(n + 1, sizeof(*m->sol));
	m->floor = calloc(ns + 1, sizeof(*m->floor));
	m->total = calloc(ns + 1, sizeof(*m->total));
	m->cuts = calloc(ns + 1, sizeof(*m->cuts));
	m->sec_mark = calloc(ns + 1, sizeof(*m->sec_mark));
	m->buf_mark = calloc(n + 1, sizeof(*m->buf_mark));
	m->placed = calloc(n + 1, 1);
	m->keys = malloc((n + 1) * sizeof(*m->keys));
	m->chg = malloc((n + 1) * sizeof(*m->chg));
	m->bmax = calloc(n + 1, sizeof(*m->bmax));
	if (!m->ov_start || !m->sm_start || !m->minoff || !m->sol || !m->floor ||
	    !m->total || !m->cuts || !m->sec_mark || !m->buf_mark || !m->placed ||
	    !m->keys || !m->chg || !m->bmax)
		return -1;
	/* Overlap lists: with every buffer placed, query each one. */
	plan_reset(p);
	for (size_t i = 0; i < n; i++)
		if (plan_mark(p, (uint32_t)i))
			return -1;
	for (size_t i = 0; i < n; i++) {
		size_t k = plan_overlaps(p, (uint32_t)i, p->ids);

		m->ov_start[i + 1] = m->ov_start[i] + (uint32_t)(k - 1);
		pairs += k - 1;
	}
	m->ov = malloc((pairs + 1) * sizeof(*m->ov));
	if (!m->ov)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t k = plan_overlaps(p, (uint32_t)i, p->ids), w = m->ov_start[i];

		for (size_t j = 0; j < k; j++)
			if (p->ids[j] != i)
				m->ov[w++] = p->ids[j];
	}
	/* Section members and cuts. */
	for (size_t i = 0; i < n; i++) {
		for (uint32_t s = p->t0[i]; s < p->t1[i]; s++)
			m->sm_start[s + 1]++;
		for (uint32_t s = p->t0[i]; s + 1 < p->t1[i]; s++)
			m->cuts[s]++;
		for (uint32_t s = p->t0[i]; s < p->t1[i]; s++)
			if (p->sec_total[s] > m->bmax[i])
				m->bmax[i] = p->sec_total[s];
		mem += p->t1[i] - p->t0[i];
	}
	for (uint32_t s = 0; s < ns; s++)
		m->sm_start[s + 1] += m->sm_start[s];
	m->sm = malloc((mem + 1) * sizeof(*m->sm));
	if (!m->sm)
		return -1;
	{
		uint32_t *fill = p->ids;	/* n + 1 entries; nsec <= 2n */
		uint32_t *tmp = malloc((ns + 1) * sizeof(*tmp));

		(void)fill;
		if (!tmp)
			return -1;
		memcpy(tmp, m->sm_start, (ns + 1) * sizeof(*tmp));
		for (size_t i = 0; i < n; i++)
			for (uint32_t s = p->t0[i]; s < p->t1[i]; s++)
				m->sm[tmp[s]++] = (uint32_t)i;
		free(tmp);
	}
	return 0;
}

/* Preorders, as key letters: T section total, W lifetime, A area, Z size. */
static const char *const mm_heuristics[] = { "TWA", "TAW" };

/* Solves the partitions separated by cuts no buffer crosses. */
static int mm_solve_all(struct mm *m)
{
	const struct plan *p = m->p;
	uint32_t lo = 0;
	int r = MM_FOUND;

	for (uint32_t s = 1; s <= p->nsec && r == MM_FOUND; s++) {
		if (s < p->nsec && m->cuts[s - 1])
			continue;
		m->ids_n = 0;
		for (uint32_t j = p->first_start[lo]; j < p->first_start[s]; j++)
			if (mm_ids_push(m, p->by_first[j]))
				return MM_NOMEM;
		if (m->ids_n)
			r = mm_subsolve(m, 0, m->ids_n, lo, s);
		lo = s;
	}
	m->ids_n = 0;
	return r;
}

/* Returns 1 found (into @off), 0 proven infeasible, -1 timeout/no memory. */
static int bb_run(struct plan *p, uint64_t target, uint64_t deadline,
		  uint64_t *off, uint64_t *nodes)
{
	struct mm m;
	int result = -1, r = MM_LIMIT;
	size_t nh = sizeof(mm_heuristics) / sizeof(mm_heuristics[0]);

	if (mm_init(&m, p))
		goto out;
	m.target = target;
	m.deadline = deadline;
	for (uint64_t limit = 2 * p->n + 2; r == MM_LIMIT; limit *= 2) {
		for (size_t h = 0; h < nh && r == MM_LIMIT; h++) {
			for (uint32_t s = 0; s < p->nsec; s++) {
				m.floor[s] = 0;
				m.total[s] = p->sec_total[s];
			}
			m.heur = mm_heuristics[h];
			m.nodes_left = limit;
			r = mm_solve_all(&m);
		}
		if (limit > UINT64_MAX / 4)
			break;
	}
	if (r == MM_FOUND) {
		memcpy(off, m.sol, p->n * sizeof(*off));
		result = 1;
	} else if (r == MM_NONE) {
		result = 0;
	}
out:
	*nodes += m.nodes;
	mm_free(&m);
	return result;
}

/* --- driver ------------------------------------------------------------------------- */

const char *vnpu_plan_strategy_name(unsigned int strategy)
{
	switch (strategy) {
	case VNPU_PLAN_GREEDY_BY_SIZE:
		return "size";
	case VNPU_PLAN_GREEDY_BY_BREADTH:
		return "breadth";
	case VNPU_PLAN_BEST:
		return "best";
	case VNPU_PLAN_SKYLINE:
		return "skyline";
	default:
		return NULL;
	}
}

int vnpu_plan_bounds(const struct vnpu_plan_buffer *bufs, size_t count,
		     uint64_t *naive_size, uint64_t *lower_bound)
{
	struct plan p;
	uint64_t naive;

	if (!check_buffers(bufs, count, &naive))
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	if (plan_init(&p, bufs, count))
		return vnpu_set_status(VNPU_ERROR_OUT_OF_HOST_MEMORY);
	if (naive_size)
		*naive_size = naive;
	if (lower_bound)
		*lower_bound = p.lower_bound;
	plan_free(&p);
	return VNPU_SUCCESS;
}

struct best {
	uint64_t arena;
	uint64_t *off;
};

static void keep(struct best *best, const uint64_t *off, uint64_t arena, size_t n)
{
	if (arena < best->arena) {
		best->arena = arena;
		memcpy(best->off, off, n * sizeof(*off));
	}
}

/* Preorders of the skyline greedy (the search's key letters). */
enum { SKY_TWA, SKY_ZWT, SKY_AWT, SKY_WTZ, SKY_ORDERS };

/*
 * Sorts by preorder @variant; with @rng, the first key gets a random
 * relative noise of up to 2^-@shift.
 */
static void order_skyline(const struct plan *p, struct key *keys, uint32_t *order,
			  int variant, uint64_t *rng, unsigned int shift)
{
	for (size_t i = 0; i < p->n; i++) {
		uint64_t w = p->in[i].last - p->in[i].first, z = p->size[i];
		uint64_t a = w > UINT64_MAX / z ? UINT64_MAX : w * z, t = p->peak[i];
		struct key k;

		switch (variant) {
		case SKY_ZWT:
			k = (struct key){ z, w, t, (uint32_t)i };
			break;
		case SKY_AWT:
			k = (struct key){ a, w, t, (uint32_t)i };
			break;
		case SKY_WTZ:
			k = (struct key){ w, t, z, (uint32_t)i };
			break;
		default:
			k = (struct key){ t, w, a, (uint32_t)i };
		}
		if (rng) {
			uint64_t span = k.k1 >> shift, noise = rng_next(rng);

			if (span && k.k1 <= UINT64_MAX - span)
				k.k1 += noise % (span + 1);
			k.k3 = noise;
		}
		keys[i] = k;
	}
	sort_keys(keys, p->n, order);
}

/*
 * Improvement stage for instances too large for the branch and bound,
 * until the deadline: the other skyline preorders, then randomly
 * perturbed ones, alternating with perturbed size orders through the
 * classic greedy when @classic (it is cheap). Anytime with a stall
 * criterion: the stage stops once it has gone without a better plan, since
 * its last gain (or its start), for twice @greedy_ns of CPU (what the
 * greedy stage took: about two more skyline plans) and for as long as it
 * took to reach that gain; a plan running past that point is cut short.
 * @greedy_ns 0: no stall criterion, the stage runs to @deadline. Returns
 * -1 when out of memory.
 */
static int improve_large(struct plan *p, struct sky *sky, struct key *keys,
			 uint32_t *order, uint64_t *off, struct best *best,
			 uint64_t target, uint64_t deadline, uint64_t greedy_ns,
			 uint64_t seed, int classic, uint64_t *iters)
{
	uint64_t rng = seed ^ 0x5eedull, arena, start = vnpu_plan_now(), gain = start, stop;
	int v = 1;

	for (;;) {
		uint64_t now = vnpu_plan_now(), r;

		stop = gain + (gain - start > 2 * greedy_ns ? gain - start : 2 * greedy_ns);
		if (!greedy_ns || stop > deadline)
			stop = deadline;
		if (best->arena <= target || now >= stop)
			return 0;
		r = v < SKY_ORDERS ? 0 : rng_next(&rng);
		if (v < SKY_ORDERS) {
			order_skyline(p, keys, order, v++, NULL, 0);
			arena = skyline_place(p, sky, order, off, best->arena, stop);
		} else if (classic && (r >> 16) & 1) {
			/* Size order with noise of up to 1/2^shift of the size. */
			unsigned int shift = 1 + (unsigned int)(r % 6);
			enum fit fit = (r >> 8) & 1 ? FIT_FIRST : FIT_BEST;

			for (size_t i = 0; i < p->n; i++) {
				uint64_t s = p->size[i], noise = rng_next(&rng);
				uint64_t span = s >> shift;

				keys[i] = (struct key){ s + (span ? noise % (span + 1) : 0),
							p->t1[i] - p->t0[i], noise, (uint32_t)i };
			}
			sort_keys(keys, p->n, order);
			arena = greedy_place(p, order, fit, off, best->arena, stop);
		} else {
			unsigned int shift = 2 + (unsigned int)(r % 8);

			order_skyline(p, keys, order, (int)((r >> 8) % SKY_ORDERS), &rng, shift);
			arena = skyline_place(p, sky, order, off, best->arena, stop);
		}
		if (arena == UINT64_MAX)
			return -1;
		if (arena < best->arena) {
			keep(best, off, arena, p->n);
			gain = vnpu_plan_now();
		}
		(*iters)++;
	}
}

static uint64_t plan_arena(const struct plan *p, const uint64_t *off)
{
	uint64_t arena = 0;

	for (size_t i = 0; i < p->n; i++)
		if (off[i] + p->size[i] > arena)
			arena = off[i] + p->size[i];
	return arena;
}

/*
 * Compaction of @best: the buffers in order of offset, each into the
 * lowest gap among those placed before it (the first-fit greedy in that
 * order: none rises, so neither does the arena), then the same again
 * with the plan turned over (in order of falling top, so that the new
 * plan is the old one upside down, pushed the other way), for up to
 * PLAN_COMPACT_PASSES passes or until one gains nothing. Plans that
 * stack parts planned on their own (the committed cuts, the band
 * decomposition) keep, above a part planned higher than its width, room
 * that what lies beside it in time can take once the plan is turned
 * over. Returns -1 out of memory, else 0.
 */
static int compact(struct plan *p, struct key *keys, uint32_t *order, uint64_t *off,
		   struct best *best)
{
	memcpy(off, best->off, p->n * sizeof(*off));
	for (int pass = 0; pass < PLAN_COMPACT_PASSES; pass++) {
		uint64_t arena = plan_arena(p, off), before = best->arena;

		for (size_t i = 0; i < p->n; i++) {
			uint64_t o = pass ? arena - off[i] - p->size[i] : off[i];

			keys[i] = (struct key){ UINT64_MAX - o, 0, 0, (uint32_t)i };
		}
		sort_keys(keys, p->n, order);
		arena = greedy_place(p, order, FIT_FIRST, off, UINT64_MAX, 0);
		if (arena == UINT64_MAX)
			return -1;
		keep(best, off, arena, p->n);
		if (pass && best->arena == before)
			break;
	}
	return 0;
}

/*
 * The scratch of compute() and compact(): sort keys (the upper half
 * sort_keys()' own), an order, offsets, the best plan's offsets, and
 * @p's. Returns -1 when any is missing (the caller frees what is not).
 */
static int work_alloc(struct plan *p, struct key **keys, uint32_t **order, uint64_t **off,
		      struct best *best)
{
	size_t n = p->n;

	*keys = malloc(2 * (n + 1) * sizeof(**keys));
	*order = malloc((n + 1) * sizeof(**order));
	*off = malloc((n + 1) * sizeof(**off));
	best->off = malloc((n + 1) * sizeof(*best->off));
	return *keys && *order && *off && best->off && !plan_alloc_tmp(p) ? 0 : -1;
}

/* Which search found the best plan so far (for the bisection). */
enum { LEAD_NONE, LEAD_SKY, LEAD_BB };

/* The searches search_run() runs. */
enum { SEARCH_SKY, SEARCH_SWEEP, SEARCH_LAZY, SEARCH_LAZY_PLAIN, SEARCH_LAZY_CROSS,
       SEARCH_BANDS, SEARCH_HOLES, SEARCH_STRIPS, SEARCH_MERGED, SEARCH_CUTS, SEARCH_COMMIT,
       SEARCH_COMMIT_MERGED };

/*
 * The search @kind, as search_run(), returning its own SKS_* result
 * (SKS_INFEASIBLE apart from SKS_TIMEOUT), @best updated when found.
 */
static int search_result(const struct plan *p, uint64_t target, uint64_t deadline,
			 uint64_t seed, uint64_t stall, int kind, uint64_t *off,
			 struct best *best, uint64_t *nodes)
{
	struct sks_problem pb = { p->n, p->size, p->align, p->t0, p->t1, p->nsec,
				  p->sec_total };
	int r = kind == SEARCH_BANDS ? pbd_run(&pb, target, deadline, off, nodes) :
		kind == SEARCH_CUTS ? pcs_run(&pb, target, deadline, off, nodes) :
		kind == SEARCH_COMMIT ? pcs_commit_run(&pb, target, deadline, off, nodes) :
		kind == SEARCH_COMMIT_MERGED ? pmg_commit_run(&pb, target, deadline, off, nodes) :
		kind == SEARCH_MERGED ? pmg_run(&pb, target, deadline, off, nodes) :
		kind == SEARCH_HOLES ? pqs_run(&pb, target, deadline, stall, off, nodes) :
		kind == SEARCH_STRIPS ? sts_run(&pb, target, deadline, off, nodes) :
		kind == SEARCH_LAZY ?
		sws_lazy_run(&pb, target, deadline, stall, off, nodes) :
		kind == SEARCH_LAZY_PLAIN ?
		sws_lazy_pass(&pb, target, deadline, stall, SWS_LAZY_PLAIN, off, nodes) :
		kind == SEARCH_LAZY_CROSS ?
		sws_lazy_pass(&pb, target, deadline, stall, SWS_LAZY_CROSS, off, nodes) :
		kind == SEARCH_SWEEP ?
		sws_run(&pb, target, deadline, stall, off, nodes) :
		sks_run(&pb, target, deadline, seed, off, nodes);

	if (r == SKS_FOUND)
		keep(best, off, plan_arena(p, off), p->n);
	return r;
}

/*
 * The skyline search (SEARCH_SKY, with @seed), the time sweep
 * (SEARCH_SWEEP), the lazy sweep (SEARCH_LAZY; one of its passes:
 * SEARCH_LAZY_PLAIN, SEARCH_LAZY_CROSS) or the hole sweep (SEARCH_HOLES;
 * the sweeps on a target without slack only, with the stall rule @stall,
 * 0 for none) for a plan within @target: 1 and @best updated when found,
 * 0 if not, -1 without memory. The band decomposition (SEARCH_BANDS)
 * returns 1 when it split the instance, whether or not its plan reaches
 * @target.
 */
static int search_run(const struct plan *p, uint64_t target, uint64_t deadline,
		      uint64_t seed, uint64_t stall, int kind, uint64_t *off, struct best *best,
		      uint64_t *nodes)
{
	int r = search_result(p, target, deadline, seed, stall, kind, off, best, nodes);

	return r == SKS_NOMEM ? -1 : r == SKS_FOUND;
}

/*
 * One run of the skyline search (planner_search.c) for a plan within
 * @target, kept in @best if found. Returns 1 found, 0 not found in time
 * or infeasible, -1 out of memory.
 */
static int sky_search(const struct plan *p, uint64_t target, uint64_t deadline,
		      uint64_t seed, uint64_t *off, struct best *best, uint64_t *nodes)
{
	return search_run(p, target, deadline, seed, 0, SEARCH_SKY, off, best, nodes);
}

/* The time sweep (planner_sweep.c), as sky_search(). */
static int sweep(const struct plan *p, uint64_t target, uint64_t deadline, uint64_t stall,
		 uint64_t *off, struct best *best, uint64_t *nodes)
{
	return search_run(p, target, deadline, 0, stall, SEARCH_SWEEP, off, best, nodes);
}

/*
 * The committed cuts (planner_cuts.c) on their share of the time left,
 * then, unless they reached @target, on the instance their series merges
 * leave (pmg_commit_run()); as sweep().
 */
static int commit_cuts(const struct plan *p, uint64_t target, uint64_t deadline, uint64_t *off,
		       struct best *best, uint64_t *nodes)
{
	int r = search_run(p, target,
			   stage_deadline(vnpu_plan_now(), deadline, PLAN_COMMIT_SHARE), 0, 0,
			   SEARCH_COMMIT, off, best, nodes);

	if (r < 0 || best->arena <= target)
		return r;
	return search_run(p, target,
			  stage_deadline(vnpu_plan_now(), deadline, PLAN_COMMIT_MERGED_SHARE),
			  0, 0, SEARCH_COMMIT_MERGED, off, best, nodes);
}

/*
 * The lazy sweep's plain pass as a probe (PLAN_LAZY_PROBE_SHARE). When it
 * refutes the instance, the sweeps that merge holes across groups go
 * first: the hole sweep with its stall rule on PLAN_HOLES_SHARE (of the
 * default budget at most), then the lazy sweep's pass with such merges on
 * half of what is left (of any budget, as the lazy sweep's share where
 * the instance is whole: PLAN_LAZY_SHARE_WHOLE). Returns 1 when that pass
 * ran (the lazy sweep need not run again), 0 when it did not, -1 out of
 * memory.
 */
static int lazy_probe(const struct plan *p, uint64_t target, uint64_t deadline,
		      uint64_t *off, struct best *best, uint64_t *nodes)
{
	uint64_t t = vnpu_plan_now(), slice = t < deadline ? deadline - t : 0;
	int r;

	if (slice > PLAN_DEFAULT_TIME_MS * 1000000ull)
		slice = PLAN_DEFAULT_TIME_MS * 1000000ull;
	r = search_result(p, target, t + slice / PLAN_LAZY_PROBE_SHARE, 0, 0, SEARCH_LAZY_PLAIN,
			  off, best, nodes);
	if (r != SKS_INFEASIBLE)
		return r == SKS_NOMEM ? -1 : r == SKS_FOUND;
	/* 1: tiled (kept), -1: out of memory. */
	r = search_run(p, target, vnpu_plan_now() + slice / PLAN_HOLES_SHARE, 0,
		       SKS_SWEEP_STALL_NS, SEARCH_HOLES, off, best, nodes);
	if (r)
		return r;
	r = search_run(p, target, stage_deadline(vnpu_plan_now(), deadline, 2), 0, 0,
		       SEARCH_LAZY_CROSS, off, best, nodes);
	return r < 0 ? -1 : 1;
}

/*
 * vnpu_plan_compute() on the calling thread; @piece when @bufs is a piece
 * the band decomposition or the committed cuts left to the planner
 * (vnpu_plan_leaf(), vnpu_plan_piece()).
 */
static int compute(struct vnpu_plan_buffer *bufs, size_t n,
		   const struct vnpu_plan_options *opts,
		   struct vnpu_plan_stats *stats, int piece)
{
	struct plan p;
	struct key *keys = NULL;
	uint32_t *order = NULL;
	uint64_t *off = NULL;
	struct best best = { UINT64_MAX, NULL };
	struct sky sky = { 0 };
	int classic, tight, sky_first, bands_first, split = 0, lead = LEAD_NONE, lazy_done = 0;
	uint64_t naive, target, deadline, nodes = 0, cap = opts->capacity;
	uint64_t begin = vnpu_plan_now();
	uint64_t time_ms = opts->time_limit_ms ? opts->time_limit_ms : PLAN_DEFAULT_TIME_MS;
	int status = VNPU_ERROR_OUT_OF_HOST_MEMORY;

	if (!vnpu_plan_strategy_name(opts->strategy) ||
	    !check_buffers(bufs, n, &naive))
		return VNPU_ERROR_INVALID_VALUE;
	if (plan_init(&p, bufs, n))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	memset(stats, 0, sizeof(*stats));
	stats->naive_size = naive;
	stats->lower_bound = p.lower_bound;
	if (cap && cap < p.lower_bound) {
		status = VNPU_ERROR_DOES_NOT_FIT;
		goto out;
	}
	if (work_alloc(&p, &keys, &order, &off, &best))
		goto out;

	if (plan_peaks(&p))
		goto out;
	if (opts->strategy == VNPU_PLAN_BEST || opts->strategy == VNPU_PLAN_SKYLINE) {
		if (sky_init(&sky, &p))
			goto out;
		order_skyline(&p, keys, order, SKY_TWA, NULL, 0);
		keep(&best, off, skyline_place(&p, &sky, order, off, UINT64_MAX, 0), n);
	}
	/*
	 * The classic greedy plans cost about the overlapping pairs; the best
	 * strategy runs them only while that stays cheap.
	 */
	classic = opts->strategy == VNPU_PLAN_GREEDY_BY_SIZE ||
		  opts->strategy == VNPU_PLAN_GREEDY_BY_BREADTH ||
		  (opts->strategy == VNPU_PLAN_BEST && best.arena > p.lower_bound &&
		   p.pairs <= PLAN_CLASSIC_MAX_PAIRS);
	if (classic && opts->strategy != VNPU_PLAN_GREEDY_BY_BREADTH) {
		order_by_size(&p, keys, order);
		keep(&best, off, greedy_place(&p, order, FIT_BEST, off, UINT64_MAX, 0), n);
	}
	if (classic && opts->strategy != VNPU_PLAN_GREEDY_BY_SIZE &&
	    best.arena > p.lower_bound) {
		order_by_breadth(&p, keys, order);
		keep(&best, off, greedy_place(&p, order, FIT_BEST, off, UINT64_MAX, 0), n);
	}
	if (best.arena == UINT64_MAX)
		goto out;
	if (classic && opts->strategy == VNPU_PLAN_BEST && best.arena > p.lower_bound) {
		order_by_size(&p, keys, order);
		keep(&best, off, greedy_place(&p, order, FIT_FIRST, off, UINT64_MAX, 0), n);
	}
	stats->greedy_size = best.arena;

	target = cap ? cap : p.lower_bound;
	/* The time limit is the search stage's, after the greedy plans. */
	deadline = vnpu_plan_tick(PLAN_SETUP_TICK_NS * n) + time_ms * 1000000ull;
	/*
	 * When the target leaves no slack in any section: first the hole
	 * sweep on a quarter and the lazy sweep on 1/16 of the budget (of
	 * the default budget at most; see PLAN_HOLES_SHARE and
	 * PLAN_LAZY_SHARE_WHOLE), then the time sweep on a quarter (they
	 * tile such instances fast or not at all; the time sweep's pruning
	 * then admits only zero-waste moves). Else the time sweep as a short
	 * try (1/32 of the budget left) after the skyline search.
	 */
	tight = 1;
	for (uint32_t s = 0; s < p.nsec && tight; s++)
		tight = p.sec_total[s] == target;
	/*
	 * First the lazy sweep's probe (PLAN_LAZY_PROBE_SHARE, lazy_probe():
	 * where it refutes the instance, the sweeps that merge holes across
	 * groups go at once, and the lazy sweep does not run again below).
	 */
	if (opts->strategy == VNPU_PLAN_BEST && best.arena > target && tight && !piece &&
	    n <= PLAN_SEARCH_MAX) {
		lazy_done = lazy_probe(&p, target, deadline, off, &best, &nodes);
		if (lazy_done < 0)
			goto out;
	}
	/*
	 * Then the cut search (PLAN_CUTS_SHARE; above PLAN_SEARCH_MAX the
	 * band decomposition instead, PLAN_BANDS_FIRST_SHARE), the committed
	 * cuts (PLAN_COMMIT_SHARE, then on the series merges:
	 * PLAN_COMMIT_MERGED_SHARE); then the forced merges, on half of
	 * the budget, then (unless it went first) the band decomposition on
	 * half of what is left: each returns at once when nothing merges or
	 * splits, and else plans its pieces within its share; what they leave
	 * above the target, the searches below may still beat.
	 */
	if (opts->strategy == VNPU_PLAN_BEST && best.arena > target && tight && !piece &&
	    n <= PLAN_SEARCH_MAX) {
		uint64_t t = vnpu_plan_now();
		uint64_t slice = t < deadline ? deadline - t : 0;

		if (slice > PLAN_DEFAULT_TIME_MS * 1000000ull)
			slice = PLAN_DEFAULT_TIME_MS * 1000000ull;
		if (search_run(&p, target, t + slice / PLAN_CUTS_SHARE, 0, 0, SEARCH_CUTS, off,
			       &best, &nodes) < 0)
			goto out;
	}
	/* Above PLAN_SEARCH_MAX the band decomposition first: see PLAN_BANDS_FIRST_SHARE. */
	bands_first = opts->strategy == VNPU_PLAN_BEST && tight && !piece && n > PLAN_SEARCH_MAX;
	if (bands_first && best.arena > target) {
		split = search_run(&p, target,
				   stage_deadline(vnpu_plan_now(), deadline, PLAN_BANDS_FIRST_SHARE),
				   0, 0, SEARCH_BANDS, off, &best, &nodes);
		if (split < 0)
			goto out;
	}
	/* And the probe after it: see PLAN_LAZY_PROBE_SHARE. */
	if (bands_first && best.arena > target && n <= PLAN_SKY_MAX) {
		lazy_done = lazy_probe(&p, target, deadline, off, &best, &nodes);
		if (lazy_done < 0)
			goto out;
	}
	if (opts->strategy == VNPU_PLAN_BEST && best.arena > target && tight && !piece &&
	    commit_cuts(&p, target, deadline, off, &best, &nodes) < 0)
		goto out;
	if (opts->strategy == VNPU_PLAN_BEST && best.arena > target && tight) {
		uint64_t t = vnpu_plan_now();
		int r = search_run(&p, target, stage_deadline(t, deadline, PLAN_MERGED_SHARE), 0, 0,
				   SEARCH_MERGED, off, &best, &nodes);

		if (r < 0)
			goto out;
		split |= r;
		t = vnpu_plan_now();
		if (best.arena > target && !bands_first) {
			r = search_run(&p, target, stage_deadline(t, deadline, PLAN_BANDS_SHARE), 0, 0,
				       SEARCH_BANDS, off, &best, &nodes);
			if (r < 0)
				goto out;
			split |= r;
		}
	}
	/* See PLAN_PIECE_REST_SHARE. */
	sky_first = opts->strategy == VNPU_PLAN_BEST && piece && tight && n <= PLAN_SEARCH_MAX;
	if (sky_first && best.arena > target) {
		uint64_t t = vnpu_plan_now();

		if (t < deadline &&
		    sky_search(&p, target, deadline - (deadline - t) / PLAN_PIECE_REST_SHARE,
			       opts->seed, off, &best, &nodes) < 0)
			goto out;
	}
	if (opts->strategy == VNPU_PLAN_BEST && best.arena > target && n <= PLAN_SKY_MAX &&
	    tight && vnpu_plan_now() < deadline) {
		/* See PLAN_LAZY_SHARE_WHOLE. */
		int whole = !split && !piece && n <= PLAN_SEARCH_MAX;
		uint64_t t = vnpu_plan_now(), slice = t < deadline ? deadline - t : 0;
		uint64_t stall = whole ? 0 : SKS_SWEEP_STALL_NS;
		uint64_t lazy = whole ? PLAN_LAZY_SHARE_WHOLE : PLAN_LAZY_SHARE;

		if (!whole && slice > PLAN_DEFAULT_TIME_MS * 1000000ull)
			slice = PLAN_DEFAULT_TIME_MS * 1000000ull;
		t = vnpu_plan_now();
		if (best.arena > target &&
		    search_run(&p, target, t + slice / PLAN_HOLES_SHARE, 0, stall, SEARCH_HOLES,
			       off, &best, &nodes) < 0)
			goto out;
		t = vnpu_plan_now();
		if (best.arena > target && !lazy_done &&
		    search_run(&p, target, t + slice / lazy, 0, stall, SEARCH_LAZY, off, &best,
			       &nodes) < 0)
			goto out;
		t = vnpu_plan_now();
		if (t < deadline && best.arena > target &&
		    sweep(&p, target, t + slice / PLAN_SWEEP_SHARE_TIGHT, stall, off, &best,
			  &nodes) < 0)
			goto out;
	}
	if (opts->strategy == VNPU_PLAN_BEST && best.arena > target && tight && !piece &&
	    n <= PLAN_SEARCH_MAX) {
		uint64_t t = vnpu_plan_now();

		if (t < deadline &&
		    search_run(&p, target, stage_deadline(t, deadline, PLAN_STRIPS_SHARE), 0, 0,
			       SEARCH_STRIPS, off, &best, &nodes) < 0)
			goto out;
	}
	/* The skyline search, on half of the budget (unless it went first). */
	if (opts->strategy == VNPU_PLAN_BEST && best.arena > target && n <= PLAN_SEARCH_MAX &&
	    !sky_first && vnpu_plan_now() < deadline) {
		uint64_t t = vnpu_plan_now();
		int r = sky_search(&p, target, stage_deadline(t, deadline, 2), opts->seed, off, &best,
				   &nodes);

		if (r < 0)
			goto out;
		if (r)
			lead = LEAD_SKY;
	}
	if (opts->strategy == VNPU_PLAN_BEST && best.arena > target && n <= PLAN_SKY_MAX &&
	    !tight) {
		uint64_t t = vnpu_plan_now();

		if (t < deadline &&
		    sweep(&p, target, stage_deadline(t, deadline, PLAN_SWEEP_SHARE_LOOSE),
			  SKS_SWEEP_STALL_NS, off, &best, &nodes) < 0)
			goto out;
	}
	/*
	 * Without a capacity, up to PLAN_SEARCH_MAX buffers, the skyline
	 * search's bisection below does better than the branch and bound's
	 * (on generated perfect packings, planner_bench).
	 */
	if (opts->strategy == VNPU_PLAN_BEST && best.arena > target &&
	    (cap || n > PLAN_SEARCH_MAX) && vnpu_plan_now() < deadline) {
		if (n <= PLAN_SEARCH_MAX) {
			/* With a capacity: the branch and bound aims at it. */
			int r = bb_run(&p, target, deadline, off, &nodes);

			if (r == 1) {
				keep(&best, off, plan_arena(&p, off), n);
				lead = LEAD_BB;
			}
		} else {
			/*
			 * Half of the budget, the rest to the skyline search's
			 * bisection. Above PLAN_SKY_MAX nothing follows: the
			 * stage stops when it stalls (on generated packings up
			 * to PLAN_SKY_MAX its slow gains beat an earlier
			 * bisection: planner_bench, guillotine 6,000).
			 */
			uint64_t t = vnpu_plan_now(), dl = deadline;
			uint64_t stall = t > begin ? t - begin : 1;

			if (n <= PLAN_SKY_MAX) {
				dl = stage_deadline(t, deadline, 2);
				stall = 0;
			}
			if (improve_large(&p, &sky, keys, order, off, &best, target, dl,
					  stall, opts->seed, classic, &nodes))
				goto out;
		}
	}
	/*
	 * Anytime: while budget is left and the plan is above the lower
	 * bound (a capacity may leave room), bisect towards it with the
	 * skyline search. Where the target leaves slack, up to
	 * PLAN_SEARCH_MAX buffers, the branch and bound takes part unless
	 * the skyline search found the last plan: each step goes first, on
	 * 3/4 of its time, to the search that found it (the skyline search
	 * when neither did), then to the other. MiniMalloc J: the skyline
	 * search does not fit its capacity in its half of the budget, the
	 * branch and bound then does in 5 ms; on D the skyline search finds
	 * every plan, and 3/4 of a step made it miss one.
	 */
	if (opts->strategy == VNPU_PLAN_BEST && n <= PLAN_SKY_MAX) {
		int both = !tight && n <= PLAN_SEARCH_MAX;
		uint64_t lo = p.lower_bound;

		for (uint64_t t = vnpu_plan_now(); lo < best.arena && t < deadline;
		     t = vnpu_plan_now()) {
			uint64_t mid = lo + (best.arena - lo) / 2, step = (deadline - t) / 2;
			int tries = both && lead != LEAD_SKY ? 2 : 1, r = 0;

			for (int k = 0; k < tries && !r; k++) {
				int bb = tries == 2 && (k ^ (lead == LEAD_BB));
				uint64_t dl = vnpu_plan_now() +
					      (tries == 1 ? step : k ? step / 4 : step * 3 / 4);

				if (!bb) {
					r = sky_search(&p, mid, dl, opts->seed, off, &best, &nodes);
					if (r < 0)
						goto out;
				} else if (bb_run(&p, mid, dl, off, &nodes) == 1) {
					keep(&best, off, plan_arena(&p, off), n);
					r = 1;
				}
				if (r)
					lead = bb ? LEAD_BB : LEAD_SKY;
			}
			if (!r)
				lo = mid + 1;
		}
	}
	if (opts->strategy == VNPU_PLAN_BEST && best.arena > p.lower_bound &&
	    p.pairs <= PLAN_CLASSIC_MAX_PAIRS && compact(&p, keys, order, off, &best))
		goto out;
	stats->search_nodes = nodes;
	stats->arena_size = best.arena;

	/* Verify; a planner bug must never hand out overlapping memory. */
	for (size_t i = 0; i < n; i++)
		bufs[i].offset = best.off[i];
	status = verify(bufs, n, 0, NULL);
	if (status == VNPU_ERROR_INVALID_VALUE) {
		uint64_t o = 0;

		for (size_t i = 0; i < n; i++) {
			o = align_up(o, p.align[i]);
			best.off[i] = o;
			o += p.size[i];
		}
		best.arena = o;
		stats->arena_size = o;
		for (size_t i = 0; i < n; i++)
			bufs[i].offset = best.off[i];
		status = verify(bufs, n, 0, NULL);
	}
	if (status == VNPU_SUCCESS && cap && best.arena > cap)
		status = VNPU_ERROR_DOES_NOT_FIT;
	stats->optimal = best.arena == p.lower_bound;
out:
	free(keys);
	free(order);
	free(off);
	free(best.off);
	sky_free(&sky);
	plan_free(&p);
	return status;
}

int vnpu_plan_piece(struct vnpu_plan_buffer *bufs, size_t n, const struct vnpu_plan_options *opts,
		    struct vnpu_plan_stats *stats)
{
	return compute(bufs, n, opts, stats, 1);
}

int vnpu_plan_leaf(const struct sks_problem *pb, const uint32_t *ids, size_t m, uint64_t base,
		   unsigned int time_ms, struct vnpu_plan_buffer *sub, uint64_t *off,
		   uint64_t *nodes, uint64_t *height)
{
	struct vnpu_plan_options opts = { .strategy = VNPU_PLAN_BEST,
					  .time_limit_ms = time_ms ? time_ms : 1 };
	struct vnpu_plan_stats stats;

	for (size_t i = 0; i < m; i++)
		sub[i] = (struct vnpu_plan_buffer){ .size = pb->size[ids[i]],
						    .alignment = pb->align[ids[i]],
						    .first = pb->t0[ids[i]],
						    .last = pb->t1[ids[i]] };
	if (vnpu_plan_piece(sub, m, &opts, &stats))
		return SKS_NOMEM;
	*nodes += stats.search_nodes;
	for (size_t i = 0; i < m; i++)
		off[ids[i]] = base + sub[i].offset;
	*height = stats.arena_size;
	return SKS_FOUND;
}

int vnpu_plan_compact(struct vnpu_plan_buffer *bufs, size_t n, uint64_t *arena)
{
	struct plan p;
	struct key *keys = NULL;
	uint32_t *order = NULL;
	uint64_t *off = NULL;
	struct best best = { UINT64_MAX, NULL };
	int status;

	if (!n) {
		*arena = 0;
		return VNPU_SUCCESS;
	}
	status = bufs ? verify(bufs, n, 0, NULL) : VNPU_ERROR_INVALID_VALUE;
	if (status != VNPU_SUCCESS)
		return status;
	if (plan_init(&p, bufs, n))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	status = VNPU_ERROR_OUT_OF_HOST_MEMORY;
	if (work_alloc(&p, &keys, &order, &off, &best))
		goto out;
	for (size_t i = 0; i < n; i++)
		best.off[i] = bufs[i].offset;
	best.arena = plan_arena(&p, best.off);
	if (compact(&p, keys, order, off, &best))
		goto out;
	for (size_t i = 0; i < n; i++)
		bufs[i].offset = best.off[i];
	*arena = best.arena;
	status = VNPU_SUCCESS;
out:
	free(keys);
	free(order);
	free(off);
	free(best.off);
	plan_free(&p);
	return status;
}

/*
 * The searches recurse once per placement (a few hundred bytes of stack
 * each; the time sweep also once per section, up to about 0.8 KiB a
 * buffer): from 256 buffers on, plans are made on a thread whose stack
 * holds that, so a caller on a small thread stack (256 KiB) is safe. The
 * CPU-time budget is the planning thread's either way.
 */
#define PLAN_THREAD_MIN 256
#define PLAN_THREAD_STACK (64u << 20)

struct compute_call {
	struct vnpu_plan_buffer *bufs;
	size_t n;
	const struct vnpu_plan_options *opts;	/* the strategy without flags */
	struct vnpu_plan_stats *stats;
	int deterministic;
	int status;
};

/* A whole plan on the thread that runs it, on the clock the options ask for. */
static void *compute_thread(void *arg)
{
	struct compute_call *c = arg;

	vnpu_plan_clock_begin(c->deterministic);
	c->status = compute(c->bufs, c->n, c->opts, c->stats, 0);
	vnpu_plan_clock_end();
	return NULL;
}

static int compute_on_big_stack(struct compute_call *c)
{
	pthread_attr_t attr;
	pthread_t th;
	int started;

	if (c->n < PLAN_THREAD_MIN || pthread_attr_init(&attr)) {
		compute_thread(c);
		return c->status;
	}
	started = !pthread_attr_setstacksize(&attr, PLAN_THREAD_STACK) &&
		  !pthread_create(&th, &attr, compute_thread, c);
	pthread_attr_destroy(&attr);
	if (!started)
		compute_thread(c);
	else
		pthread_join(th, NULL);
	return c->status;
}

int vnpu_plan_compute(struct vnpu_plan_buffer *bufs, size_t count,
		      const struct vnpu_plan_options *opts,
		      struct vnpu_plan_stats *stats)
{
	struct vnpu_plan_options plain = { .strategy = VNPU_PLAN_BEST };
	struct vnpu_plan_stats local;
	struct compute_call call = { .opts = &plain };
	struct vnpu_plan_buffer *work;
	uint64_t start = now_ns();
	int status;

	if (opts) {
		plain = *opts;
		plain.strategy &= ~VNPU_PLAN_DETERMINISTIC;
		call.deterministic = !!(opts->strategy & VNPU_PLAN_DETERMINISTIC);
	}
	if (!stats)
		stats = &local;
	if (count && !bufs)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	/* Plan on a copy so the caller's offsets change only on success. */
	work = malloc((count + 1) * sizeof(*work));
	if (!work)
		return vnpu_set_status(VNPU_ERROR_OUT_OF_HOST_MEMORY);
	if (count)
		memcpy(work, bufs, count * sizeof(*work));
	call.bufs = work;
	call.n = count;
	call.stats = stats;
	status = compute_on_big_stack(&call);
	if (status == VNPU_SUCCESS)
		for (size_t i = 0; i < count; i++)
			bufs[i].offset = work[i].offset;
	free(work);
	stats->elapsed_ns = now_ns() - start;
	return vnpu_set_status(status);
}
