// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Skyline search: an exact depth-first search for a plan within a target
 * arena, over bottom-left canonical plans.
 *
 * The skyline is the height reached in every time section; placed
 * buffers always rest on it, so each section's placed buffers form a
 * stack. Fail first: where a valley of the skyline (a run of sections
 * whose neighbours are higher, or the ends of the block) has a corner
 * section without slack (height plus the sizes still to place there equal
 * to the target), the corner cell must be covered by a buffer inside the
 * valley resting on its floor; the search branches on the corner with the
 * fewest such buffers (none fails the node, one is forced). Otherwise it
 * takes the lowest run (the leftmost of equal ones: sections [a, b) at
 * height h, higher neighbours L and R) and decides what covers its
 * bottom-left cell (a, h):
 *
 *  1. an unplaced buffer that starts at a and ends by b, placed at h;
 *  2. or nothing: then the lowest buffer at h in the run starts at some
 *     t in (a, b) and the sections [a, t) stay empty up to min(L, its
 *     top): such a buffer is placed and [a, t) raised (wasted);
 *  3. or nothing at h in the whole run: the run rises to min(L, R).
 *
 * Any plan can be pushed down until every buffer rests on another or on
 * 0; such a plan is reached by these choices (a corner's cell is covered
 * by exactly one buffer, the three lowest-run cases are disjoint), so the
 * search is complete; of equal buffers only one is tried. Pruning is
 * section inference: in every section the height plus the sizes still to
 * place there must stay within the target, so a choice that wastes space
 * fails as soon as the section's slack is gone (on a perfect packing only
 * zero-waste moves are ever open); after a placement, the runs beside it
 * must still be coverable (a run with a higher left neighbour and no
 * slack needs an unplaced buffer starting at its first section and
 * ending before the skyline rises above it, the mirror on the right) and
 * a valley up to SK_FILL_MAX sections wide must be fillable up to its
 * lower rim by the buffers inside it within each section's slack. When no
 * unplaced buffer crosses a time boundary, the two sides are independent
 * problems (MiniMalloc's dynamic decomposition, Moffitt, ASPLOS 2024):
 * they are solved one after the other, and the failure of one fails the
 * placement that split them without trying other plans of the other.
 *
 * Candidates are tried best first: continuing the top (then the bottom)
 * edge of the placed buffers beside them, as cut lines run through a
 * packing; then a top level with the run's neighbour; then spanning the
 * whole run; then larger area. Runs restart with a random perturbation of
 * that order, under Luby-growing limits on failed nodes (16 x 1, 1, 2,
 * 1, 1, 2, 4, ...), so a heavy tail on one order does not use up the
 * budget.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planner_search.h"

enum { R_NOMEM = -3, R_TIMEOUT = -2, R_LIMIT = -1, R_NONE = 0, R_FOUND = 1 };

/* Trail entry: a section's previous height, or a placement to undo. */
struct sk_trail {
	uint32_t unplace;	/* 1: buffer idx placed, 0: h[idx] was old */
	uint32_t idx;
	uint64_t old;
};

struct sk_cand {
	uint64_t key1, key2;
	uint32_t id;
};

struct sks {
	const struct sks_problem *pb;
	uint64_t target;
	uint64_t *h, *rem;		/* skyline and unplaced total per section */
	uint32_t w;			/* leaves of the min tree */
	uint64_t *th;			/* min tree: height, leftmost section */
	uint32_t *ti;
	uint32_t *cuts;			/* unplaced buffers crossing s | s + 1 */
	uint32_t *fen;			/* unplaced buffers by first section */
	uint32_t *st_start, *st;	/* buffers by first section */
	uint32_t *en_start, *en;	/* buffers by end section */
	uint64_t *inner;		/* scratch: changes of a valley's fill per section */
	uint32_t *col_start, *col_n, *col;	/* placed buffers of each section, bottom up */
	uint8_t *placed;
	uint64_t *off;
	struct sk_trail *tr;
	size_t tr_n, tr_cap;
	struct sk_cand *cand;
	size_t cand_n, cand_cap;
	uint32_t *cut;			/* new cut points of the placements */
	size_t cut_n, cut_cap;
	uint64_t nodes, fails_left, deadline, rng;
	int noise;
};

static uint64_t sk_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The thread's CPU time can be a system call to read (1.3 us on the
 * development VM, 50 times the monotonic clock) and the searches check their
 * deadlines often: within PLAN_CLOCK_REUSE_NS of wall time after a
 * reading, that reading plus the wall time since is returned, a bound the
 * CPU time cannot pass. Never less than a value returned before.
 */
#define PLAN_CLOCK_REUSE_NS 100000ull

static uint64_t plan_cpu_ns(void)
{
	static _Thread_local uint64_t cpu, wall, last;
	uint64_t now_wall = sk_clock_ns(CLOCK_MONOTONIC), now;

	if (wall && now_wall - wall < PLAN_CLOCK_REUSE_NS) {
		now = cpu + (now_wall - wall);
	} else {
		now = sk_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		cpu = now;
		wall = now_wall;
	}
	if (now < last)
		now = last;
	last = now;
	return now;
}

/*
 * The work clock of a deterministic plan (VNPU_PLAN_DETERMINISTIC), per
 * thread: a plan runs on one thread. vnpu_plan_tick() advances it, and
 * vnpu_plan_now() by PLAN_WORK_READ_NS.
 */
static _Thread_local struct {
	int on;
	uint64_t now;
} plan_work;

void vnpu_plan_clock_begin(int deterministic)
{
	plan_work.on = deterministic;
	plan_work.now = 0;
}

void vnpu_plan_clock_end(void)
{
	plan_work.on = 0;
}

/*
 * Every reading of the work clock advances it a little: a loop that reads
 * the clock until a deadline ends even where no search in it ticks.
 */
#define PLAN_WORK_READ_NS 1000u

uint64_t vnpu_plan_now(void)
{
	return plan_work.on ? plan_work.now += PLAN_WORK_READ_NS : plan_cpu_ns();
}

uint64_t vnpu_plan_tick(uint64_t work_ns)
{
	if (plan_work.on)
		return plan_work.now += work_ns;
	return plan_cpu_ns();
}

uint64_t vnpu_plan_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t vnpu_plan_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

void vnpu_plan_bits_add(uint64_t *bits, size_t words, uint64_t k)
{
	size_t q = (size_t)(k / 64);
	unsigned int r = (unsigned int)(k % 64);

	/* From the top down: each word reads only words below it, not yet moved. */
	for (size_t i = words; i-- > q;) {
		uint64_t v = bits[i - q] << r;

		if (r && i > q)
			v |= bits[i - q - 1] >> (64 - r);
		bits[i] |= v;
	}
}

/* The subsets of one half of the values with one sum. */
struct balance_half {
	int64_t sum;
	uint32_t count;		/* 0: an empty slot */
	uint32_t in, out;	/* the union of the subsets, and of their complements */
};

/* The slot of @sum in @tab, of @slots (a power of two) slots. */
static struct balance_half *balance_slot(struct balance_half *tab, uint32_t slots, int64_t sum)
{
	uint32_t i = (uint32_t)(((uint64_t)sum * 0x9e3779b97f4a7c15ull) >> 32) & (slots - 1);

	while (tab[i].count && tab[i].sum != sum)
		i = (i + 1) & (slots - 1);
	return &tab[i];
}

/* Gray code: from subset @i of @v (its *@mask and *@sum) to subset @i + 1. */
static void balance_step(const int64_t *v, uint32_t i, uint32_t *mask, int64_t *sum)
{
	int bit = __builtin_ctz(i + 1);

	*mask ^= 1u << bit;
	*sum += *mask >> bit & 1 ? v[bit] : -v[bit];
}

/*
 * Meet in the middle: the sums of the second half's subsets go in a
 * table, and each subset of the first half looks its match up there
 * (2^7 and 2^7 steps rather than 2^14 for 14 values).
 */
uint32_t vnpu_plan_balance(const int64_t *v, uint32_t n, int64_t want, uint32_t *in_some,
			   uint32_t *out_some)
{
	struct balance_half tab[2u << (VNPU_PLAN_BALANCE_MAX - VNPU_PLAN_BALANCE_MAX / 2)];
	uint32_t nl = n / 2, nh = n - nl, slots = 2u << nh, count = 0, mask = 0;
	uint32_t lo_all = (1u << nl) - 1, hi_all = ((1u << nh) - 1) << nl;
	int64_t sum = 0;

	*in_some = 0;
	*out_some = 0;
	memset(tab, 0, slots * sizeof(*tab));
	for (uint32_t i = 0;; i++) {
		struct balance_half *h = balance_slot(tab, slots, sum);

		h->sum = sum;
		h->count++;
		h->in |= mask << nl;
		h->out |= hi_all & ~(mask << nl);
		if (i + 1 == 1u << nh)
			break;
		balance_step(v + nl, i, &mask, &sum);
	}
	mask = 0;
	sum = 0;
	for (uint32_t i = 0;; i++) {
		const struct balance_half *h = balance_slot(tab, slots, want - sum);

		if (h->count) {
			count += h->count;
			*in_some |= mask | h->in;
			*out_some |= (lo_all & ~mask) | h->out;
		}
		if (i + 1 == 1u << nl)
			break;
		balance_step(v, i, &mask, &sum);
	}
	return count;
}

int vnpu_plan_perfect(const struct sks_problem *pb, uint64_t target, uint64_t *unit)
{
	*unit = target;
	for (uint32_t s = 0; s < pb->nsec; s++)
		if (pb->sec_total[s] != target)
			return 0;
	for (size_t i = 0; i < pb->n; i++)
		*unit = vnpu_plan_gcd(*unit, pb->size[i]);
	for (size_t i = 0; i < pb->n; i++)
		if (*unit % pb->align[i])
			return 0;
	return 1;
}

size_t vnpu_plan_span_bottom(const struct sks_problem *pb, uint32_t *ids, size_t m,
			     uint64_t base, uint64_t *off, uint32_t span[2], uint64_t *bottom)
{
	size_t k = 0;

	span[0] = UINT32_MAX;
	span[1] = 0;
	for (size_t i = 0; i < m; i++) {
		if (pb->t0[ids[i]] < span[0])
			span[0] = pb->t0[ids[i]];
		if (pb->t1[ids[i]] > span[1])
			span[1] = pb->t1[ids[i]];
	}
	*bottom = 0;
	for (size_t i = 0; i < m; i++)
		if (pb->t0[ids[i]] == span[0] && pb->t1[ids[i]] == span[1]) {
			uint32_t id = ids[i];

			ids[i] = ids[k];
			ids[k++] = id;
			off[id] = base + *bottom;
			*bottom += pb->size[id];
		}
	return k;
}

size_t vnpu_plan_time_piece(const struct sks_problem *pb, const uint32_t *ids, size_t start,
			    size_t m)
{
	uint32_t reach = pb->t1[ids[start]];
	size_t end;

	for (end = start + 1; end < m && pb->t0[ids[end]] < reach; end++)
		if (pb->t1[ids[end]] > reach)
			reach = pb->t1[ids[end]];
	return end;
}

static uint64_t sk_rand(uint64_t *s)
{
	return vnpu_plan_mix64(*s += 0x9e3779b97f4a7c15ull);
}

int vnpu_plan_grow(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 256;
	void *nv;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	nv = realloc(*v, c * elem);
	if (!nv)
		return -1;
	*v = nv;
	*cap = c;
	return 0;
}

/* --- min tree: leftmost lowest section of a range ------------------------------- */

static void sk_tree_pull(struct sks *k, uint32_t node)
{
	uint32_t l = 2 * node, r = l + 1;
	int left = k->th[l] <= k->th[r];

	k->th[node] = left ? k->th[l] : k->th[r];
	k->ti[node] = left ? k->ti[l] : k->ti[r];
}

/* Pulls the tree nodes above leaves [a, b] (sections) after they changed. */
static void sk_tree_fix(struct sks *k, uint32_t a, uint32_t b)
{
	uint32_t l = (a + k->w) >> 1, r = (b + k->w) >> 1;

	for (; l; l >>= 1, r >>= 1)
		for (uint32_t node = l; node <= r; node++)
			sk_tree_pull(k, node);
}

/* Leftmost section of [lo, hi) of least height. */
static uint32_t sk_lowest(const struct sks *k, uint32_t lo, uint32_t hi)
{
	uint64_t bh = UINT64_MAX;
	uint32_t bi = UINT32_MAX;

	for (uint32_t l = lo + k->w, r = hi + k->w; l < r; l >>= 1, r >>= 1) {
		if (l & 1) {
			if (k->th[l] < bh || (k->th[l] == bh && k->ti[l] < bi)) {
				bh = k->th[l];
				bi = k->ti[l];
			}
			l++;
		}
		if (r & 1) {
			r--;
			if (k->th[r] < bh || (k->th[r] == bh && k->ti[r] < bi)) {
				bh = k->th[r];
				bi = k->ti[r];
			}
		}
	}
	return bi;
}

/* --- unplaced counts by first section (Fenwick tree) ---------------------------- */

static void sk_fen_add(struct sks *k, uint32_t s, int d)
{
	for (uint32_t i = s + 1; i <= k->pb->nsec; i += i & -i)
		k->fen[i] += (uint32_t)d;
}

static uint32_t sk_fen_sum(const struct sks *k, uint32_t s)
{
	uint32_t sum = 0;

	for (uint32_t i = s; i; i -= i & -i)
		sum += k->fen[i];
	return sum;
}

/* --- state changes, undone through the trail ------------------------------------ */

static int sk_push(struct sks *k, uint32_t unplace, uint32_t idx, uint64_t old)
{
	if (vnpu_plan_grow((void **)&k->tr, &k->tr_cap, k->tr_n + 1, sizeof(*k->tr)))
		return -1;
	k->tr[k->tr_n++] = (struct sk_trail){ unplace, idx, old };
	return 0;
}

/* Raises sections [a, b) to @v, through the trail. */
static int sk_raise(struct sks *k, uint32_t a, uint32_t b, uint64_t v)
{
	if (a >= b)
		return 0;
	if (vnpu_plan_grow((void **)&k->tr, &k->tr_cap, k->tr_n + (b - a), sizeof(*k->tr)))
		return -1;
	for (uint32_t s = a; s < b; s++) {
		k->tr[k->tr_n++] = (struct sk_trail){ 0, s, k->h[s] };
		k->h[s] = v;
		k->th[s + k->w] = v;
	}
	sk_tree_fix(k, a, b - 1);
	return 0;
}

/* Places @u at @off; the boundaries no unplaced buffer crosses any more go to cut[]. */
static int sk_place(struct sks *k, uint32_t u, uint64_t off)
{
	const struct sks_problem *pb = k->pb;
	uint64_t top = off + pb->size[u];

	if (sk_push(k, 1, u, 0))
		return -1;
	k->placed[u] = 1;
	k->off[u] = off;
	sk_fen_add(k, pb->t0[u], -1);
	for (uint32_t s = pb->t0[u]; s < pb->t1[u]; s++) {
		k->rem[s] -= pb->size[u];
		k->col[k->col_start[s] + k->col_n[s]++] = u;
	}
	if (sk_raise(k, pb->t0[u], pb->t1[u], top))
		return -1;
	for (uint32_t s = pb->t0[u]; s + 1 < pb->t1[u]; s++)
		if (!--k->cuts[s]) {
			if (vnpu_plan_grow((void **)&k->cut, &k->cut_cap, k->cut_n + 1, sizeof(*k->cut)))
				return -1;
			k->cut[k->cut_n++] = s + 1;
		}
	return 0;
}

static void sk_undo(struct sks *k, size_t mark)
{
	const struct sks_problem *pb = k->pb;
	uint32_t lo = UINT32_MAX, hi = 0;

	while (k->tr_n > mark) {
		struct sk_trail e = k->tr[--k->tr_n];

		if (!e.unplace) {
			/* Leaves first; their tree nodes once per run of sections. */
			if (lo != UINT32_MAX && e.idx + 1 != lo) {
				sk_tree_fix(k, lo, hi);
				lo = UINT32_MAX;
			}
			if (lo == UINT32_MAX)
				hi = e.idx;
			lo = e.idx;
			k->h[e.idx] = e.old;
			k->th[e.idx + k->w] = e.old;
			continue;
		}
		k->placed[e.idx] = 0;
		sk_fen_add(k, pb->t0[e.idx], 1);
		for (uint32_t s = pb->t0[e.idx]; s < pb->t1[e.idx]; s++) {
			k->rem[s] += pb->size[e.idx];
			k->col_n[s]--;
		}
		for (uint32_t s = pb->t0[e.idx]; s + 1 < pb->t1[e.idx]; s++)
			k->cuts[s]++;
	}
	if (lo != UINT32_MAX)
		sk_tree_fix(k, lo, hi);
}

/* Raises sections [a, b) to @v; 0 when some section's slack does not allow it. */
static int sk_waste(struct sks *k, uint32_t a, uint32_t b, uint64_t v)
{
	for (uint32_t s = a; s < b; s++)
		if (v > k->target || k->rem[s] > k->target - v)
			return 0;
	return sk_raise(k, a, b, v) ? -1 : 1;
}

/* --- search ---------------------------------------------------------------------- */

static int sk_solve(struct sks *k, uint32_t lo, uint32_t hi);
static int sk_node(struct sks *k, uint32_t lo, uint32_t hi);
static int sk_check_around(struct sks *k, uint32_t lo, uint32_t hi, uint32_t x, uint32_t y);
static int sk_check_run(struct sks *k, uint32_t lo, uint32_t hi, uint32_t s);

/* After a placement: solves the range, split at the new cut points. */
static int sk_after_place(struct sks *k, size_t cut0, uint32_t lo, uint32_t hi)
{
	size_t nc = k->cut_n - cut0;
	uint32_t a = lo;
	int r = R_FOUND;

	if (!nc)
		return sk_solve(k, lo, hi);
	for (size_t c = 0; c <= nc && r == R_FOUND; c++) {
		uint32_t b = c < nc ? k->cut[cut0 + c] : hi;

		r = sk_solve(k, a, b);
		a = b;
	}
	return r;
}

static uint64_t sk_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int cmp_cand(const void *pa, const void *pb)
{
	const struct sk_cand *a = pa, *b = pb;

	if (a->key1 != b->key1)
		return a->key1 > b->key1 ? -1 : 1;
	if (a->key2 != b->key2)
		return a->key2 > b->key2 ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Candidates best first (cmp_cand() is a total order): few, mostly. */
static void sk_sort_cand(struct sk_cand *c, size_t n)
{
	if (n > 32) {
		qsort(c, n, sizeof(*c), cmp_cand);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct sk_cand x = c[i];
		size_t j = i;

		for (; j && cmp_cand(&c[j - 1], &x) > 0; j--)
			c[j] = c[j - 1];
		c[j] = x;
	}
}

/*
 * Pushes candidate @u for a cell at height @h of the run [c, d) between
 * neighbours @left and @right, unless it does not fit under the target,
 * with its preference keys (see the top of the file).
 */
/*
 * How the placed buffer covering cell (@s, @g) lines up with a buffer
 * from @g to @top: 2 for the same top, plus 1 for the same bottom.
 */
static int sk_edge_at(const struct sks *k, uint32_t s, uint64_t g, uint64_t top)
{
	const uint32_t *c = k->col + k->col_start[s];
	uint32_t lo = 0, hi = k->col_n[s];

	/* The column is sorted by offset: the last one starting at or below g. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (k->off[c[mid]] <= g)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || k->off[c[lo - 1]] + k->pb->size[c[lo - 1]] <= g)
		return 0;
	return 2 * (k->off[c[lo - 1]] + k->pb->size[c[lo - 1]] == top) +
	       (k->off[c[lo - 1]] == g);
}

static int sk_add_cand(struct sks *k, uint32_t u, uint64_t h, uint32_t c, uint32_t d,
		       uint64_t left, uint64_t right)
{
	const struct sks_problem *pb = k->pb;
	uint64_t off = sk_align(h, pb->align[u]), top = off + pb->size[u], area, fit, edge;
	int at_c = pb->t0[u] == c, at_d = pb->t1[u] == d;

	if (k->placed[u] || top > k->target)
		return 0;
	/* Continuing the top edge of the buffers beside it (a cut line). */
	edge = (uint64_t)(pb->t0[u] > 0 ? sk_edge_at(k, pb->t0[u] - 1, off, top) : 0) +
	       (uint64_t)(pb->t1[u] < pb->nsec ? sk_edge_at(k, pb->t1[u], off, top) : 0);
	fit = edge << 3 |
	      ((uint64_t)(at_c && top == left) + (uint64_t)(at_d && top == right)) << 1 |
	      (uint64_t)(at_c && at_d);
	area = pb->size[u] * (uint64_t)(pb->t1[u] - pb->t0[u]);
	if (k->noise) {
		uint64_t r = sk_rand(&k->rng);

		area = (area >> 1) + (area >> 1) / 64 * (r % 129);
		if (((r >> 40) & 15) == 0)
			fit = r >> 50 & 7;
	}
	if (vnpu_plan_grow((void **)&k->cand, &k->cand_cap, k->cand_n + 1, sizeof(*k->cand)))
		return -1;
	k->cand[k->cand_n++] = (struct sk_cand){ fit, area, u };
	return 0;
}

/* Pushes the buffers starting at section @t and ending by @d. */
static int sk_candidates(struct sks *k, uint32_t t, uint32_t c, uint32_t d, uint64_t h,
			 uint64_t left, uint64_t right)
{
	for (uint32_t j = k->st_start[t]; j < k->st_start[t + 1]; j++)
		if (k->pb->t1[k->st[j]] <= d && sk_add_cand(k, k->st[j], h, c, d, left, right))
			return -1;
	return 0;
}

/* 1 when an earlier candidate of this node is the same buffer as @c. */
static int sk_tried_twin(const struct sks *k, size_t base, size_t c)
{
	const struct sks_problem *pb = k->pb;
	uint32_t u = k->cand[c].id;

	for (size_t i = base; i < c; i++) {
		uint32_t v = k->cand[i].id;

		if (pb->t0[v] == pb->t0[u] && pb->t1[v] == pb->t1[u] &&
		    pb->size[v] == pb->size[u] && pb->align[v] == pb->align[u])
			return 1;
	}
	return 0;
}

/* Tries placing the candidates [base, cand_n) at @h; raises [a, t0) under each. */
static int sk_branch(struct sks *k, size_t base, uint32_t lo, uint32_t hi, uint32_t a,
		     uint64_t h, uint64_t left, int waste)
{
	const struct sks_problem *pb = k->pb;
	size_t n = k->cand_n;
	int r = R_NONE;

	sk_sort_cand(k->cand + base, n - base);
	for (size_t c = base; c < n && r == R_NONE; c++) {
		uint32_t u = k->cand[c].id;
		uint64_t off = sk_align(h, pb->align[u]), top = off + pb->size[u];
		size_t mark = k->tr_n, cut0 = k->cut_n;
		int ok;

		if (sk_tried_twin(k, base, c))
			continue;
		ok = waste ? sk_waste(k, a, pb->t0[u], left < top ? left : top) : 1;
		if (ok > 0)
			ok = sk_place(k, u, off) ? -1 : 1;
		if (ok > 0)
			ok = sk_check_around(k, lo, hi, pb->t0[u], pb->t1[u]);
		if (ok > 0 && waste && a < pb->t0[u])
			ok = sk_check_run(k, lo, hi, a);
		if (ok < 0)
			r = R_NOMEM;
		else if (ok)
			r = sk_after_place(k, cut0, lo, hi);
		k->cut_n = cut0;
		if (r != R_FOUND)
			sk_undo(k, mark);
	}
	k->cand_n = base;
	return r;
}

static uint64_t sk_slack(const struct sks *k, uint32_t s)
{
	return k->target - k->h[s] - k->rem[s];
}

/* Widest valley whose fill is checked section by section. */
#define SK_FILL_MAX 256

/*
 * Steps of the skyline. Take a run [c, d) at height g. If the section
 * left of it is higher (or c is the end of the problem) and section c has
 * no slack, its cell at g must be covered by a buffer resting at g that
 * cannot reach left: one starting at c and ending before the first
 * section right of c higher than g. The same holds mirrored at d. A run
 * higher than both neighbours' ... is a valley when both neighbours are
 * higher: the space up to the lower rim can only be filled by buffers
 * living inside it, or wasted within each section's slack.
 */
static int sk_left_ok(const struct sks *k, uint32_t c, uint32_t hi, uint64_t g)
{
	const struct sks_problem *pb = k->pb;
	uint32_t lim = c;

	while (lim < hi && k->h[lim] <= g)
		lim++;
	for (uint32_t j = k->st_start[c]; j < k->st_start[c + 1]; j++) {
		uint32_t u = k->st[j];

		if (!k->placed[u] && pb->t1[u] <= lim && pb->size[u] <= k->target - g)
			return 1;
	}
	return 0;
}

static int sk_right_ok(const struct sks *k, uint32_t lo, uint32_t d, uint64_t g)
{
	const struct sks_problem *pb = k->pb;
	uint32_t lim = d;

	while (lim > lo && k->h[lim - 1] <= g)
		lim--;
	for (uint32_t j = k->en_start[d]; j < k->en_start[d + 1]; j++) {
		uint32_t u = k->en[j];

		if (!k->placed[u] && pb->t0[u] >= lim && pb->size[u] <= k->target - g)
			return 1;
	}
	return 0;
}

static int sk_fill_ok(struct sks *k, uint32_t c, uint32_t d, uint64_t g, uint64_t rim)
{
	const struct sks_problem *pb = k->pb;
	uint64_t fill = 0;
	int short_of_rim = 0;

	if (d - c > SK_FILL_MAX)
		return 1;
	/* Where every section's slack covers the space up to the rim, no fill is needed. */
	for (uint32_t s = c; s < d && !short_of_rim; s++)
		short_of_rim = sk_slack(k, s) < rim - g;
	if (!short_of_rim)
		return 1;
	/* inner[]: the changes of the fill at each section, summed as we go. */
	for (uint32_t s = c; s <= d; s++)
		k->inner[s] = 0;
	for (uint32_t t = c; t < d; t++)
		for (uint32_t j = k->st_start[t]; j < k->st_start[t + 1]; j++) {
			uint32_t u = k->st[j];

			if (k->placed[u] || pb->t1[u] > d)
				continue;
			k->inner[t] += pb->size[u];
			k->inner[pb->t1[u]] -= pb->size[u];
		}
	for (uint32_t s = c; s < d; s++) {
		fill += k->inner[s];
		if (fill + sk_slack(k, s) < rim - g)
			return 0;
	}
	return 1;
}

/* Checks the run holding section @s of [lo, hi); 0 when it cannot be filled. */
static int sk_check_run(struct sks *k, uint32_t lo, uint32_t hi, uint32_t s)
{
	uint64_t g = k->h[s], left, right;
	uint32_t c = s, d = s + 1;

	if (g >= k->target)
		return 1;
	while (c > lo && k->h[c - 1] == g)
		c--;
	while (d < hi && k->h[d] == g)
		d++;
	left = c > lo ? k->h[c - 1] : k->target;
	right = d < hi ? k->h[d] : k->target;
	if (left > g && k->rem[c] && !sk_slack(k, c) && !sk_left_ok(k, c, hi, g))
		return 0;
	if (right > g && k->rem[d - 1] && !sk_slack(k, d - 1) && !sk_right_ok(k, lo, d, g))
		return 0;
	if (left > g && right > g)
		return sk_fill_ok(k, c, d, g, left < right ? left : right);
	return 1;
}

/* Checks the runs a change of sections [x, y) touched. */
static int sk_check_around(struct sks *k, uint32_t lo, uint32_t hi, uint32_t x, uint32_t y)
{
	if (x > lo && !sk_check_run(k, lo, hi, x - 1))
		return 0;
	if (!sk_check_run(k, lo, hi, x))
		return 0;
	return y >= hi || sk_check_run(k, lo, hi, y);
}

/* A valley's corner cell that must be covered: the left (c) or right (d - 1) one. */
struct sk_corner {
	uint32_t c, d, right, count;
	uint64_t g, left_h, right_h;
};

/* Candidates for a corner: buffers inside [c, d) starting at c, or ending at d. */
static uint32_t sk_corner_count(const struct sks *k, const struct sk_corner *v)
{
	const struct sks_problem *pb = k->pb;
	uint32_t cnt = 0;

	if (!v->right) {
		for (uint32_t j = k->st_start[v->c]; j < k->st_start[v->c + 1]; j++) {
			uint32_t u = k->st[j];

			cnt += !k->placed[u] && pb->t1[u] <= v->d &&
			       pb->size[u] <= k->target - v->g;
		}
		return cnt;
	}
	for (uint32_t j = k->en_start[v->d]; j < k->en_start[v->d + 1]; j++) {
		uint32_t u = k->en[j];

		cnt += !k->placed[u] && pb->t0[u] >= v->c && pb->size[u] <= k->target - v->g;
	}
	return cnt;
}

/*
 * Fail first: of the corners of valleys of [lo, hi) whose section has no
 * slack (their cell must be covered by a buffer inside the valley resting
 * on its floor), the one with the fewest candidates. Returns 0 when one
 * has none; best->count is UINT32_MAX when there is no such corner.
 */
static int sk_pick_corner(const struct sks *k, uint32_t lo, uint32_t hi, struct sk_corner *best)
{
	best->count = UINT32_MAX;
	for (uint32_t c = lo, d; c < hi; c = d) {
		struct sk_corner v;
		uint64_t g = k->h[c];

		for (d = c + 1; d < hi && k->h[d] == g; d++)
			;
		v = (struct sk_corner){ c, d, 0, 0, g, c > lo ? k->h[c - 1] : k->target,
					d < hi ? k->h[d] : k->target };
		if (g >= k->target || v.left_h < g || v.right_h < g)
			continue;
		for (v.right = 0; v.right < 2; v.right++) {
			uint32_t s = v.right ? d - 1 : c;

			if (!k->rem[s] || sk_slack(k, s))
				continue;
			v.count = sk_corner_count(k, &v);
			if (!v.count)
				return 0;
			if (v.count < best->count)
				*best = v;
			if (v.count == 1)
				return 1;
		}
	}
	return 1;
}

/* Branches on the buffers that can cover corner @v. */
static int sk_branch_corner(struct sks *k, const struct sk_corner *v, uint32_t lo, uint32_t hi)
{
	const struct sks_problem *pb = k->pb;
	size_t base = k->cand_n;

	if (!v->right) {
		if (sk_candidates(k, v->c, v->c, v->d, v->g, v->left_h, v->right_h))
			return R_NOMEM;
	} else {
		for (uint32_t j = k->en_start[v->d]; j < k->en_start[v->d + 1]; j++)
			if (pb->t0[k->en[j]] >= v->c &&
			    sk_add_cand(k, k->en[j], v->g, v->c, v->d, v->left_h, v->right_h))
				return R_NOMEM;
	}
	return sk_branch(k, base, lo, hi, v->c, v->g, v->left_h, 0);
}

static int sk_node(struct sks *k, uint32_t lo, uint32_t hi)
{
	struct sk_corner corner;
	uint32_t a, b;
	uint64_t h, left, right, rise;
	size_t base = k->cand_n, mark;
	int r;

	if (sk_fen_sum(k, hi) == sk_fen_sum(k, lo))
		return R_FOUND;
	if (!k->fails_left)
		return R_LIMIT;
	if (!(++k->nodes & 1023) && vnpu_plan_tick(SK_NODES_TICK_NS) > k->deadline)
		return R_TIMEOUT;
	if (!sk_pick_corner(k, lo, hi, &corner))
		return R_NONE;
	if (corner.count != UINT32_MAX)
		return sk_branch_corner(k, &corner, lo, hi);
	a = sk_lowest(k, lo, hi);
	h = k->h[a];
	for (b = a + 1; b < hi && k->h[b] == h; b++)
		;
	left = a > lo ? k->h[a - 1] : k->target;
	right = b < hi ? k->h[b] : k->target;
	rise = left < right ? left : right;
	if (!sk_check_run(k, lo, hi, a))
		return R_NONE;

	/* 1. A buffer at the corner (a, h). */
	if (sk_candidates(k, a, a, b, h, left, right))
		return R_NOMEM;
	r = sk_branch(k, base, lo, hi, a, h, left, 1);
	if (r != R_NONE)
		return r;
	if (h + k->rem[a] >= k->target && k->rem[a])
		return R_NONE;	/* no slack at the corner: it cannot stay empty */
	/* 2. The corner stays empty; the lowest buffer at h starts later. */
	for (uint32_t t = a + 1; t < b; t++)
		if (sk_candidates(k, t, a, b, h, left, right))
			return R_NOMEM;
	r = sk_branch(k, base, lo, hi, a, h, left, 1);
	if (r != R_NONE)
		return r;
	/* 3. Nothing at h in the run. */
	if (rise <= h)
		return R_NONE;
	mark = k->tr_n;
	r = sk_waste(k, a, b, rise);
	if (r < 0)
		return R_NOMEM;
	if (!r)
		return R_NONE;
	r = sk_solve(k, lo, hi);
	if (r != R_FOUND)
		sk_undo(k, mark);
	return r;
}

/* A node; its failures count against the restart's limit. */
static int sk_solve(struct sks *k, uint32_t lo, uint32_t hi)
{
	int r = sk_node(k, lo, hi);

	if (r == R_NONE && k->fails_left)
		k->fails_left--;
	return r;
}

/* --- setup and restarts ---------------------------------------------------------- */

static void sks_free(struct sks *k)
{
	free(k->h);
	free(k->rem);
	free(k->th);
	free(k->ti);
	free(k->cuts);
	free(k->fen);
	free(k->st_start);
	free(k->st);
	free(k->en_start);
	free(k->en);
	free(k->inner);
	free(k->col_start);
	free(k->col_n);
	free(k->col);
	free(k->placed);
	free(k->tr);
	free(k->cand);
	free(k->cut);
}

/* Counting sort of the buffers by @key (< @nk): start[] (nk + 1 entries), ids[]. */
static int sk_index(const uint32_t *key, size_t n, uint32_t nk, uint32_t *start, uint32_t *ids)
{
	uint32_t *fill = malloc((nk + 1) * sizeof(*fill));

	if (!fill)
		return -1;
	for (size_t i = 0; i < n; i++)
		start[key[i] + 1]++;
	for (uint32_t s = 0; s < nk; s++)
		start[s + 1] += start[s];
	memcpy(fill, start, (nk + 1) * sizeof(*fill));
	for (size_t i = 0; i < n; i++)
		ids[fill[key[i]]++] = (uint32_t)i;
	free(fill);
	return 0;
}

static int sks_init(struct sks *k, const struct sks_problem *pb, uint64_t target,
		    uint64_t *off)
{
	uint32_t ns = pb->nsec;

	memset(k, 0, sizeof(*k));
	k->pb = pb;
	k->target = target;
	k->off = off;
	k->w = 1;
	while (k->w < ns + 1)
		k->w <<= 1;
	k->h = calloc(ns + 1, sizeof(*k->h));
	k->rem = calloc(ns + 1, sizeof(*k->rem));
	k->th = malloc(2 * (size_t)k->w * sizeof(*k->th));
	k->ti = malloc(2 * (size_t)k->w * sizeof(*k->ti));
	k->cuts = calloc(ns + 1, sizeof(*k->cuts));
	k->fen = calloc(ns + 2, sizeof(*k->fen));
	k->st_start = calloc(ns + 2, sizeof(*k->st_start));
	k->st = malloc((pb->n + 1) * sizeof(*k->st));
	k->placed = calloc(pb->n + 1, 1);
	k->en_start = calloc(ns + 2, sizeof(*k->en_start));
	k->en = malloc((pb->n + 1) * sizeof(*k->en));
	k->inner = calloc(ns + 1, sizeof(*k->inner));
	if (!k->h || !k->rem || !k->th || !k->ti || !k->cuts || !k->fen || !k->st_start ||
	    !k->st || !k->placed || !k->en_start || !k->en || !k->inner)
		return -1;
	k->col_start = calloc(ns + 1, sizeof(*k->col_start));
	k->col_n = calloc(ns + 1, sizeof(*k->col_n));
	if (!k->col_start || !k->col_n)
		return -1;
	/* Columns: as many cells as buffers live in the section. */
	for (size_t i = 0; i < pb->n; i++) {
		k->col_n[pb->t0[i]]++;
		if (pb->t1[i] < ns)
			k->col_n[pb->t1[i]]--;
	}
	{
		size_t cells = 0;
		uint32_t live = 0;

		for (uint32_t s = 0; s < ns; s++) {
			live += k->col_n[s];
			k->col_start[s] = (uint32_t)cells;
			cells += live;
		}
		k->col = malloc((cells + 1) * sizeof(*k->col));
		if (!k->col)
			return -1;
	}
	if (sk_index(pb->t0, pb->n, ns + 1, k->st_start, k->st) ||
	    sk_index(pb->t1, pb->n, ns + 1, k->en_start, k->en))
		return -1;
	return 0;
}

/* Empty plan: every buffer unplaced, the skyline at 0. */
static void sks_reset(struct sks *k)
{
	const struct sks_problem *pb = k->pb;

	k->tr_n = k->cand_n = k->cut_n = 0;
	memset(k->placed, 0, pb->n);
	memset(k->fen, 0, (pb->nsec + 2) * sizeof(*k->fen));
	memset(k->cuts, 0, (pb->nsec + 1) * sizeof(*k->cuts));
	for (uint32_t s = 0; s < pb->nsec; s++) {
		k->h[s] = 0;
		k->rem[s] = pb->sec_total[s];
	}
	memset(k->col_n, 0, (pb->nsec + 1) * sizeof(*k->col_n));
	for (size_t i = 0; i < pb->n; i++) {
		sk_fen_add(k, pb->t0[i], 1);
		for (uint32_t s = pb->t0[i]; s + 1 < pb->t1[i]; s++)
			k->cuts[s]++;
	}
	for (uint32_t i = 0; i < k->w; i++) {
		k->th[k->w + i] = i < pb->nsec ? 0 : UINT64_MAX;
		k->ti[k->w + i] = i;
	}
	for (uint32_t node = k->w - 1; node; node--)
		sk_tree_pull(k, node);
}

/* Solves the blocks between the boundaries no buffer crosses. */
static int sks_solve_all(struct sks *k)
{
	uint32_t lo = 0;
	int r = R_FOUND;

	for (uint32_t s = 1; s <= k->pb->nsec && r == R_FOUND; s++) {
		if (s < k->pb->nsec && k->cuts[s - 1])
			continue;
		r = sk_solve(k, lo, s);
		lo = s;
	}
	return r;
}

uint64_t vnpu_plan_luby(uint64_t i)
{
	for (;;) {
		uint64_t p = 1;

		while (p - 1 < i)
			p <<= 1;
		if (p - 1 == i)
			return p >> 1;
		i -= (p >> 1) - 1;
		if (!i)
			return 1;
	}
}

int sks_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
	    uint64_t seed, uint64_t *off, uint64_t *nodes)
{
	struct sks k;
	int r = R_LIMIT, result = SKS_NOMEM;

	if (sks_init(&k, pb, target, off))
		goto out;
	k.deadline = deadline;
	k.rng = seed ^ 0x51cee5ull;
	for (uint64_t run = 1; r == R_LIMIT; run++) {
		sks_reset(&k);
		k.noise = run > 1;
		k.fails_left = vnpu_plan_luby(run) * 16;
		r = sks_solve_all(&k);
	}
	if (r == R_FOUND)
		result = SKS_FOUND;
	else if (r == R_NONE)
		result = SKS_INFEASIBLE;
	else if (r == R_TIMEOUT)
		result = SKS_TIMEOUT;
out:
	*nodes += k.nodes;
	sks_free(&k);
	return result;
}
