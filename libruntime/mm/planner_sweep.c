// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Time-sweep search: a depth-first search for a plan within a target arena
 * C that places the buffers in order of their first section.
 *
 * The distinct start sections are swept in order. At section s the buffers
 * placed so far that are still live occupy fixed offset ranges; the rest of
 * [0, C) is free. Every buffer starting at s must be placed at s, and as
 * only buffers starting at or before s are placed, a range free at s is
 * free over the whole lifetime of a buffer starting there: the placed
 * buffers it could meet later are all live at s. The free ranges are
 * filled lowest first, each from its bottom (the cursor): at the cursor
 * goes a buffer starting at s, or the rest of the range is left unused;
 * with slack, a fresh range may first take buffers at its top. Space left
 * unused at s is waste; the slack of s is C minus the live total at s (of
 * every buffer, placed or not), and the waste at s may not exceed it. On a
 * perfect packing the slack is 0 everywhere, so each free range must be
 * tiled exactly by the buffers starting at s, and the search is complete
 * for such plans (every zero-waste plan is reached: its buffers by offset
 * at each start section). With slack it covers the plans whose buffers
 * rest on a buffer or on 0 at their start, or hang from one at the top of
 * a free range (a subset of all plans).
 *
 * Symmetries: of identical buffers the first only is tried; two buffers of
 * the same lifetime stacked directly swap, so one order only. Time
 * boundaries no buffer crosses make blocks: the buffers living a whole
 * block go on top of it at its start (any plan of the block moves them
 * there by shifting the buffers above them down), and without them the
 * block may split further. The state at the start of a section (the
 * section and the placed buffers live there, with their offsets) decides
 * everything after it, so a state once failed is not searched again.
 *
 * Pruning: a free range entered at s must be fillable by the buffers
 * starting at s, within the slack left (a bitset subset sum in units of
 * the sizes' greatest common divisor). After a placement, a run of placed
 * buffers ending together at t, contiguous between two buffers live after
 * t (or 0 and C), becomes free at t and only buffers starting at t can
 * fill it (sw_run()); and for each of the next SW_AHEAD sections s' the
 * placed buffer b lives in, the range between b and the highest placed
 * buffer below it still live at s' must be fillable by buffers starting
 * after s and live at s', within the slack of s' (above b too, when b
 * closes its range). Candidates that end where the buffer below them ends
 * are tried first (cut lines run through a packing), then larger ones.
 */
#include <stdlib.h>
#include <string.h>

#include "planner_search.h"

/* Sections looked ahead along a placed buffer. */
#define SW_AHEAD 48
/* Entries of the table of failed section states (a power of two). */
#define SW_FAILED (1u << 18)
/* Nesting depth of blocks whose spanning buffers go on top. */
#define SW_LEVELS 64
/* Largest range, in units of the sizes' gcd, checked by a subset sum. */
#define SW_DP_MAX (1u << 16)

struct sw {
	const struct sks_problem *pb;
	uint64_t target;
	uint64_t *off;
	uint64_t *slack;		/* target minus the live total, per section */
	uint32_t *st_start, *st;	/* buffers by first section, largest first */
	uint32_t *rank;			/* index of each buffer in st */
	uint32_t *ntop;			/* buffers that go on top, per section */
	uint8_t *placed;
	uint32_t *live;			/* placed buffers live at the sweep, by offset */
	size_t nlive;
	uint32_t *gone;			/* buffers removed at section changes */
	size_t gone_n;
	uint32_t *cand;			/* scratch: look-ahead candidates */
	uint32_t *order;		/* candidate lists of the open nodes */
	size_t order_n, order_cap;
	uint64_t *bits;			/* subset sum bitset */
	uint64_t *failed;		/* keys of section states without a plan */
	uint64_t unit;			/* gcd of the sizes */
	uint64_t nodes, deadline;
	uint64_t start, gain;		/* CPU time at the start, at the last new section */
	uint64_t stall;			/* least stall before giving up, 0: never */
	uint32_t deepest;		/* deepest section reached */
};

struct sw_key {
	uint64_t size, align;
	uint32_t t0, t1, id, level;
};

/* 1 when a bit of [@from, @top] is set. */
static int sw_any(const uint64_t *bits, uint64_t from, uint64_t top)
{
	for (uint64_t j = from / 64; j <= top / 64; j++) {
		uint64_t v = bits[j];

		if (j == from / 64)
			v &= ~0ull << (from % 64);
		if (j == top / 64 && top % 64 != 63)
			v &= (2ull << (top % 64)) - 1;
		if (v)
			return 1;
	}
	return 0;
}

/*
 * 1 when a subset of the @k sizes of @ids sums to within [@len - @waste,
 * @len] (or when that is too costly to decide), else 0.
 */
static int sw_fillable(struct sw *w, const uint32_t *ids, size_t k, uint64_t len,
		       uint64_t waste)
{
	const uint64_t *size = w->pb->size;
	uint64_t sum = 0, lo = len > waste ? len - waste : 0, top, from, words;

	if (!lo)
		return 1;
	for (size_t i = 0; i < k; i++) {
		if (size[ids[i]] > len)
			continue;
		if (size[ids[i]] >= lo)
			return 1;
		sum += size[ids[i]];
	}
	if (sum < lo)
		return 0;
	if (sum <= len)
		return 1;
	top = len / w->unit;
	if (top >= SW_DP_MAX)
		return 1;
	from = (lo + w->unit - 1) / w->unit;
	words = top / 64 + 1;
	memset(w->bits, 0, words * sizeof(*w->bits));
	w->bits[0] = 1;
	for (size_t i = 0; i < k; i++) {
		if (size[ids[i]] > len)
			continue;
		vnpu_plan_bits_add(w->bits, words, size[ids[i]] / w->unit);
		if (sw_any(w->bits, from, top))
			return 1;
	}
	return 0;
}

/*
 * Look-ahead after placing the buffer at live[@pos] at section @s: the
 * range below it (and above it when @close) at each of the next sections it
 * lives in must stay fillable. Returns 1 when it does.
 */
static int sw_ahead(struct sw *w, uint32_t s, size_t pos, int close)
{
	const struct sks_problem *pb = w->pb;
	uint32_t b = w->live[pos], end = pb->t1[b];
	uint64_t bot = w->off[b], top = bot + pb->size[b];
	size_t k = 0, kc = 0;

	if (end > s + 1 + SW_AHEAD)
		end = s + 1 + SW_AHEAD;
	/* The buffers starting at s not yet placed: candidates above b only. */
	if (close)
		for (uint32_t i = w->st_start[s]; i < w->st_start[s + 1]; i++)
			if (!w->placed[w->st[i]])
				w->cand[kc++] = w->st[i];
	k = kc;
	for (uint32_t t = s + 1; t < end; t++) {
		uint64_t floor = 0, ceil = w->target;
		size_t n = 0;

		/* Drop the candidates ended at t, add those starting at t. */
		for (size_t i = 0; i < k; i++)
			if (pb->t1[w->cand[i]] > t)
				w->cand[n++] = w->cand[i];
		k = n;
		for (uint32_t i = w->st_start[t]; i < w->st_start[t + 1]; i++)
			w->cand[k++] = w->st[i];
		for (size_t j = pos; j-- > 0;) {
			uint32_t e = w->live[j];

			if (pb->t1[e] > t) {
				floor = w->off[e] + pb->size[e];
				break;
			}
		}
		if (bot > floor && bot - floor > w->slack[t]) {
			/* Below b only buffers starting after s can go. */
			n = 0;
			for (size_t i = 0; i < k; i++)
				if (pb->t0[w->cand[i]] > s)
					w->cand[k + n++] = w->cand[i];
			if (!sw_fillable(w, w->cand + k, n, bot - floor, w->slack[t]))
				return 0;
		}
		if (!close)
			continue;
		for (size_t j = pos + 1; j < w->nlive; j++) {
			uint32_t e = w->live[j];

			if (pb->t1[e] > t) {
				ceil = w->off[e];
				break;
			}
		}
		if (ceil > top && ceil - top > w->slack[t] &&
		    !sw_fillable(w, w->cand, k, ceil - top, w->slack[t]))
			return 0;
	}
	return 1;
}

/*
 * The run of buffers ending at @t through live[@pos] (contiguous in memory,
 * between two buffers live at @t, or 0 and the target) becomes free at @t
 * and only buffers starting at @t can fill it: 1 when they can, or when the
 * run is not known yet (open above @lim, or next to space whose content at
 * @t is not known).
 */
static int sw_run(struct sw *w, size_t pos, uint32_t t, size_t lim)
{
	const struct sks_problem *pb = w->pb;
	uint64_t lo, hi;
	size_t i = pos, j = pos, k = 0;

	if (t >= pb->nsec)
		return 1;
	/* Down to a buffer live at t, or 0. */
	while (i > 0 && pb->t1[w->live[i - 1]] == t &&
	       w->off[w->live[i - 1]] + pb->size[w->live[i - 1]] == w->off[w->live[i]])
		i--;
	lo = w->off[w->live[i]];
	if (i > 0) {
		uint32_t e = w->live[i - 1];

		if (pb->t1[e] < t || w->off[e] + pb->size[e] != lo)
			return 1;
	} else if (lo) {
		return 1;
	}
	/* Up to a buffer live at t, or the target. */
	while (j + 1 < lim && pb->t1[w->live[j + 1]] == t &&
	       w->off[w->live[j]] + pb->size[w->live[j]] == w->off[w->live[j + 1]])
		j++;
	hi = w->off[w->live[j]] + pb->size[w->live[j]];
	if (j + 1 < lim) {
		uint32_t e = w->live[j + 1];

		if (pb->t1[e] < t || w->off[e] != hi)
			return 1;
	} else if (j + 1 < w->nlive || hi != w->target) {
		return 1;
	}
	if (hi - lo <= w->slack[t])
		return 1;
	for (uint32_t x = w->st_start[t]; x < w->st_start[t + 1]; x++)
		w->cand[k++] = w->st[x];
	return sw_fillable(w, w->cand, k, hi - lo, w->slack[t]);
}

/*
 * After live[@pos] was placed: the runs it ends or belongs to must stay
 * fillable at their end (sw_run()). @close when it closes its free range.
 */
static int sw_runs(struct sw *w, size_t pos, int close)
{
	const struct sks_problem *pb = w->pb;
	uint32_t b = w->live[pos], t = pb->t1[b];
	uint32_t below = pos > 0 ? pb->t1[w->live[pos - 1]] : t;
	size_t lim = close ? w->nlive : pos + 1;

	if (below < t && !sw_run(w, pos - 1, below, lim))
		return 0;
	if (!sw_run(w, pos, t, lim))
		return 0;
	if (close && pos + 1 < w->nlive && pb->t1[w->live[pos + 1]] < t &&
	    !sw_run(w, pos + 1, pb->t1[w->live[pos + 1]], lim))
		return 0;
	return 1;
}

static void sw_insert(struct sw *w, size_t pos, uint32_t b, uint64_t at)
{
	memmove(w->live + pos + 1, w->live + pos, (w->nlive - pos) * sizeof(*w->live));
	w->live[pos] = b;
	w->nlive++;
	w->off[b] = at;
	w->placed[b] = 1;
}

static void sw_remove(struct sw *w, size_t pos)
{
	w->placed[w->live[pos]] = 0;
	w->nlive--;
	memmove(w->live + pos, w->live + pos + 1, (w->nlive - pos) * sizeof(*w->live));
}

static int sw_node(struct sw *w, uint32_t s, uint64_t cur, uint64_t waste, uint32_t left,
		   int fresh);

/*
 * Start of section @s: the buffers going on top first, then the search.
 * What follows depends only on @s and the placed buffers live at s, so a
 * state once failed is not searched again (a table of 64-bit keys; a
 * collision can only cost a plan, never give a wrong one).
 */
static int sw_section(struct sw *w, uint32_t s)
{
	const struct sks_problem *pb = w->pb;
	uint32_t first = w->st_start[s], nt = w->ntop[s];
	uint64_t top = w->nlive ? w->off[w->live[0]] : w->target, key = vnpu_plan_mix64(s + 1);
	uint64_t *slot;
	int r;

	for (size_t i = 0; i < w->nlive; i++)
		key += vnpu_plan_mix64(((uint64_t)w->live[i] << 40) ^ w->off[w->live[i]]);
	key |= 1;
	slot = &w->failed[(key >> 20) & (SW_FAILED - 1)];
	if (*slot == key)
		return SKS_INFEASIBLE;

	for (uint32_t i = 0; i < nt; i++) {
		uint32_t b = w->st[first + i];

		if (pb->size[b] > top || (top - pb->size[b]) % pb->align[b]) {
			nt = i;
			r = SKS_INFEASIBLE;
			goto undo;
		}
		top -= pb->size[b];
		sw_insert(w, 0, b, top);
	}
	r = sw_node(w, s, 0, 0, w->st_start[s + 1] - first - nt, 1);
undo:
	for (uint32_t i = 0; i < nt; i++)
		sw_remove(w, 0);
	if (r == SKS_INFEASIBLE)
		*slot = key;
	return r;
}

/* Section @s is filled: on to the next section where buffers start. */
static int sw_next(struct sw *w, uint32_t s)
{
	const struct sks_problem *pb = w->pb;
	size_t mark = w->gone_n, n = 0, g, i, j;
	int r;

	do
		s++;
	while (s < pb->nsec && w->st_start[s] == w->st_start[s + 1]);
	if (s >= pb->nsec)
		return SKS_FOUND;
	for (i = 0; i < w->nlive; i++) {
		uint32_t e = w->live[i];

		if (pb->t1[e] <= s)
			w->gone[w->gone_n++] = e;
		else
			w->live[n++] = e;
	}
	w->nlive = n;
	r = sw_section(w, s);
	/* Merge the removed buffers back by offset. */
	g = w->gone_n - mark;
	i = n;
	j = g;
	w->nlive = n + g;
	for (size_t o = n + g; o-- > 0;) {
		if (j && (!i || w->off[w->gone[mark + j - 1]] > w->off[w->live[i - 1]]))
			w->live[o] = w->gone[mark + --j];
		else
			w->live[o] = w->live[--i];
	}
	w->gone_n = mark;
	return r;
}

static uint64_t sw_align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * At section @s, @left buffers starting at s still to place, the cursor at
 * @cur (all of [0, @cur) at s is decided), @waste left unused at s so far;
 * @fresh when the cursor is at the bottom of a free range.
 */
/*
 * Out of time, or stalled: no new section reached for as long as it took
 * to reach the deepest one, and at least w->stall (the search tiles a
 * perfect packing steadily or thrashes on an early choice).
 */
static int sw_stop(const struct sw *w, uint64_t work_ns)
{
	uint64_t now = vnpu_plan_tick(work_ns), took = w->gain - w->start;

	if (now >= w->deadline)
		return 1;
	return w->stall && now - w->gain > (took > w->stall ? took : w->stall);
}

static int sw_node(struct sw *w, uint32_t s, uint64_t cur, uint64_t waste, uint32_t left,
		   int fresh)
{
	const struct sks_problem *pb = w->pb;
	uint32_t first = w->st_start[s], last = w->st_start[s + 1];
	uint32_t below_end = UINT32_MAX, below_rank = 0;
	size_t pos, lo = 0, hi = w->nlive, mark = w->order_n, k = 0;
	uint64_t q;
	int r = SKS_INFEASIBLE;

	if (s > w->deepest) {
		w->deepest = s;
		w->gain = vnpu_plan_now();
	}
	if (!(++w->nodes & 255) && sw_stop(w, SW_NODES_TICK_NS))
		return SKS_TIMEOUT;
	if (!left)
		return sw_next(w, s);
again:
	/* The free range at or above the cursor: [cur, q). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->off[w->live[mid]] < cur)
			lo = mid + 1;
		else
			hi = mid;
	}
	pos = lo;
	while (pos < w->nlive && w->off[w->live[pos]] == cur) {
		cur += pb->size[w->live[pos]];
		pos++;
		fresh = 1;
	}
	if (cur >= w->target)
		return SKS_INFEASIBLE;
	q = pos < w->nlive ? w->off[w->live[pos]] : w->target;
	if (pos && w->off[w->live[pos - 1]] + pb->size[w->live[pos - 1]] == cur) {
		uint32_t a = w->live[pos - 1];

		below_end = pb->t1[a];
		/* Same lifetime on top of each other: they swap, one order is enough. */
		if (pb->t0[a] == s)
			below_rank = w->rank[a] + 1;
	}

	/* The candidates: one per class of identical buffers, best first. */
	if (vnpu_plan_grow((void **)&w->order, &w->order_cap, mark + left, sizeof(*w->order)))
		return SKS_NOMEM;
	for (uint32_t i = first; i < last; i++) {
		uint32_t b = w->st[i];

		if (!w->placed[b] && pb->size[b] <= q - cur)
			w->order[mark + k++] = b;
	}
	if (fresh && !sw_fillable(w, w->order + mark, k, q - cur, w->slack[s] - waste))
		return SKS_INFEASIBLE;
	{
		size_t n = 0;

		for (size_t i = 0; i < k; i++) {
			uint32_t b = w->order[mark + i], a = n ? w->order[mark + n - 1] : 0;

			if (n && pb->size[a] == pb->size[b] && pb->t1[a] == pb->t1[b] &&
			    pb->align[a] == pb->align[b])
				continue;
			w->order[mark + n++] = b;
		}
		k = n;
	}
	/* Those ending with the buffer below them first (stable). */
	if (below_end != UINT32_MAX) {
		size_t n = 0;

		for (size_t i = 0; i < k; i++) {
			uint32_t b = w->order[mark + i];

			if (pb->t1[b] == below_end) {
				memmove(w->order + mark + n + 1, w->order + mark + n,
					(i - n) * sizeof(*w->order));
				w->order[mark + n++] = b;
			}
		}
	}
	w->order_n = mark + k;
	for (size_t i = 0; i < k && r == SKS_INFEASIBLE; i++) {
		uint32_t b = w->order[mark + i];
		uint64_t at = sw_align_up(cur, pb->align[b]);

		if (at + pb->size[b] > q || at - cur > w->slack[s] - waste)
			continue;
		if (at == cur && pb->t1[b] == below_end && w->rank[b] < below_rank)
			continue;
		sw_insert(w, pos, b, at);
		if (sw_runs(w, pos, at + pb->size[b] == q) &&
		    sw_ahead(w, s, pos, at + pb->size[b] == q))
			r = sw_node(w, s, at + pb->size[b], waste + (at - cur), left - 1, 0);
		sw_remove(w, pos);
	}
	/*
	 * With slack left, on a fresh range: a buffer at its top, the space
	 * below it still to fill (before any buffer at its bottom).
	 */
	for (size_t i = 0; fresh && i < k && r == SKS_INFEASIBLE && waste < w->slack[s]; i++) {
		uint32_t b = w->order[mark + i];
		uint64_t at = (q - pb->size[b]) & ~(pb->align[b] - 1), above;

		if (q - pb->size[b] < cur || at <= cur)
			continue;
		above = q - at - pb->size[b];
		if (above > w->slack[s] - waste)
			continue;
		sw_insert(w, pos, b, at);
		if (sw_runs(w, pos, !above))
			r = sw_node(w, s, cur, waste + above, left - 1, 1);
		sw_remove(w, pos);
	}
	w->order_n = mark;
	if (r != SKS_INFEASIBLE)
		return r;
	/* Nothing more in this range: it is waste, within the slack. */
	if (q - cur > w->slack[s] - waste)
		return SKS_INFEASIBLE;
	waste += q - cur;
	cur = q;
	fresh = 1;
	lo = pos;
	hi = w->nlive;
	goto again;
}

/*
 * Blocks: between two section boundaries no buffer crosses, the buffers
 * living the whole block can go on top of it (any plan of the block moves
 * them there by shifting the buffers above them down). Without them,
 * the block may split into smaller blocks, and so on (up to SW_LEVELS
 * deep). Sets keys[i].level: 0, or the depth of the block i spans; at a
 * block's start the sweep stacks them at the top of the free space, outer
 * blocks first.
 */
static int sw_levels(struct sw *w, struct sw_key *keys)
{
	const struct sks_problem *pb = w->pb;
	uint32_t ns = pb->nsec, *cross = calloc(ns + 2, sizeof(*cross));
	int more = 1;

	if (!cross)
		return -1;
	for (size_t i = 0; i < pb->n; i++)
		keys[i].level = 0;
	for (uint32_t lv = 1; more && lv <= SW_LEVELS; lv++) {
		more = 0;
		memset(cross, 0, (ns + 2) * sizeof(*cross));
		for (size_t i = 0; i < pb->n; i++) {
			if (keys[i].level)
				continue;
			cross[pb->t0[i] + 1]++;
			cross[pb->t1[i]]--;
		}
		for (uint32_t j = 1; j <= ns; j++)
			cross[j] += cross[j - 1];
		/* cross[j]: buffers crossing the boundary before section j */
		for (size_t i = 0; i < pb->n; i++) {
			if (keys[i].level || cross[pb->t0[i]] || cross[pb->t1[i]])
				continue;
			keys[i].level = lv;
			more = 1;
		}
	}
	free(cross);
	return 0;
}

static void sw_free(struct sw *w)
{
	free(w->slack);
	free(w->st_start);
	free(w->st);
	free(w->rank);
	free(w->ntop);
	free(w->placed);
	free(w->live);
	free(w->gone);
	free(w->cand);
	free(w->order);
	free(w->bits);
	free(w->failed);
}

/*
 * Buffers by first section, then those that go on top (outer blocks first),
 * then largest, longest, alignment, index.
 */
static int sw_cmp(const void *pa, const void *pb)
{
	const struct sw_key *a = pa, *b = pb;

	if (a->t0 != b->t0)
		return a->t0 < b->t0 ? -1 : 1;
	if (a->level != b->level)
		return a->level - 1u < b->level - 1u ? -1 : 1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	if (a->t1 != b->t1)
		return a->t1 > b->t1 ? -1 : 1;
	if (a->align != b->align)
		return a->align < b->align ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int sw_init(struct sw *w, const struct sks_problem *pb, uint64_t target,
		   uint64_t *off)
{
	size_t n = pb->n;
	uint32_t ns = pb->nsec;
	struct sw_key *keys;

	memset(w, 0, sizeof(*w));
	w->pb = pb;
	w->target = target;
	w->off = off;
	w->slack = malloc((ns + 1) * sizeof(*w->slack));
	w->st_start = calloc(ns + 2, sizeof(*w->st_start));
	w->st = malloc((n + 1) * sizeof(*w->st));
	w->rank = malloc((n + 1) * sizeof(*w->rank));
	w->ntop = calloc(ns + 1, sizeof(*w->ntop));
	w->placed = calloc(n + 1, 1);
	w->live = malloc((n + 1) * sizeof(*w->live));
	w->gone = malloc((n + 1) * sizeof(*w->gone));
	w->cand = malloc((2 * n + 1) * sizeof(*w->cand));
	w->bits = malloc((SW_DP_MAX / 64 + 1) * sizeof(*w->bits));
	w->failed = calloc(SW_FAILED, sizeof(*w->failed));
	if (!w->slack || !w->st_start || !w->st || !w->rank || !w->ntop || !w->placed ||
	    !w->live || !w->gone || !w->cand || !w->bits || !w->failed)
		return -1;
	for (uint32_t s = 0; s < ns; s++)
		w->slack[s] = target - pb->sec_total[s];
	w->slack[ns] = target;
	keys = malloc((n + 1) * sizeof(*keys));
	if (!keys || sw_levels(w, keys))
		goto fail;
	for (size_t i = 0; i < n; i++) {
		keys[i] = (struct sw_key){ pb->size[i], pb->align[i], pb->t0[i], pb->t1[i],
					   (uint32_t)i, keys[i].level };
		if (keys[i].level)
			w->ntop[pb->t0[i]]++;
		w->st_start[pb->t0[i] + 1]++;
		w->unit = vnpu_plan_gcd(w->unit, pb->size[i]);
	}
	for (uint32_t s = 0; s <= ns; s++)
		w->st_start[s + 1] += w->st_start[s];
	qsort(keys, n, sizeof(*keys), sw_cmp);
	for (size_t i = 0; i < n; i++) {
		w->st[i] = keys[i].id;
		w->rank[keys[i].id] = (uint32_t)i;
	}
	free(keys);
	return 0;
fail:
	free(keys);
	return -1;
}

int sws_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
	    uint64_t stall, uint64_t *off, uint64_t *nodes)
{
	struct sw w;
	int result = SKS_NOMEM;

	for (uint32_t s = 0; s < pb->nsec; s++)
		if (pb->sec_total[s] > target)
			return SKS_INFEASIBLE;
	if (!pb->n)
		return SKS_FOUND;
	if (sw_init(&w, pb, target, off))
		goto out;
	w.deadline = deadline;
	w.start = vnpu_plan_tick(SW_SETUP_TICK_NS * pb->n);
	w.gain = w.start;
	w.stall = stall;
	/* The first section with buffers starting is section 0. */
	result = sw_section(&w, 0);
out:
	*nodes += w.nodes;
	sw_free(&w);
	return result;
}

/*
 * Lazy sweep (perfect packings only: the target equals the live total in
 * every section). The placed buffers still live form a tree whose leaves
 * are buffers and whose inner nodes are unordered groups: a group's
 * children lie next to each other in memory, in an order not yet fixed.
 * At section s the live buffers ending at s leave holes: a node all of
 * whose live buffers end at s is full, and every maximal full node is
 * replaced, alone or with full siblings of the same group (which are then
 * made adjacent), by a group of buffers starting at s whose sizes sum to
 * exactly its size. Only which buffers fill a hole is decided, never
 * their order: a group's order is fixed at the end, when offsets are
 * written. A full node that can be neither filled alone nor joined by a
 * sibling is merged with a full node of another group, the way a PQ-tree
 * reduction does (Booth and Lueker): the groups between them and their
 * lowest common ancestor become ordered nodes (children in list order,
 * kept so by later holes) with the two at the facing edges, and the two
 * become one ordered hole; of the nodes stuck that way the one with the
 * fewest such merges goes first, the most local merge first. Holes in an
 * ordered node take one child, or two neighbours by such a merge. The
 * sweep is still not complete (a node that can be filled alone is never
 * merged across groups).
 *
 * Nodes 0 to n - 1 are the buffers' leaves, inner nodes follow. A
 * replaced node is kept as the ghost of the node that replaces it (same
 * size, same place), so that the offsets of buffers that ended can be
 * written at the end. Every change to a node is logged and undone on
 * backtracking.
 */
#define LZ_NONE UINT32_MAX

/* An entry of the undo log: a node field and its value before the change. */
struct lz_undo {
	uint32_t *at;
	uint32_t old;
};

struct lz {
	struct sw *w;
	uint32_t *parent, *first, *next, *prev, *ghost, *nlive, *endcnt;
	uint32_t *ord;			/* 1: an ordered node, its children in list order */
	uint64_t *size;
	uint64_t *gofs;			/* where the ghost starts, from the node's start */
	uint32_t nodes, cap, root;
	struct lz_undo *log;
	size_t log_n, log_cap;
	uint32_t *full;			/* maximal full nodes of the open sections */
	uint32_t *taken;		/* the hole each of them went to (1 + its index) */
	size_t full_n;
	uint32_t *used;			/* the hole each starter went to, by index in st */
	uint32_t *touched;		/* scratch: nodes with buffers ending */
	uint32_t stuck;			/* a full node no plain hole can take */
	int cross;			/* 1: stuck nodes are merged across groups */
	uint32_t *mark, stamp;		/* scratch: ancestors of the stuck node */
	uint32_t *en_start, *en;	/* buffers by end section */
};

static int lz_set(struct lz *z, uint32_t *at, uint32_t v)
{
	if (vnpu_plan_grow((void **)&z->log, &z->log_cap, z->log_n + 1, sizeof(*z->log)))
		return -1;
	z->log[z->log_n++] = (struct lz_undo){ at, *at };
	*at = v;
	return 0;
}

static void lz_undo(struct lz *z, size_t mark, uint32_t nodes)
{
	while (z->log_n > mark) {
		z->log_n--;
		*z->log[z->log_n].at = z->log[z->log_n].old;
	}
	z->nodes = nodes;
}

/* Node @c into group @p (first child). */
static int lz_link(struct lz *z, uint32_t p, uint32_t c)
{
	uint32_t f = z->first[p];

	if (lz_set(z, &z->next[c], f) || lz_set(z, &z->prev[c], LZ_NONE) ||
	    lz_set(z, &z->parent[c], p) || lz_set(z, &z->first[p], c))
		return -1;
	return f != LZ_NONE ? lz_set(z, &z->prev[f], c) : 0;
}

/* Node @c takes the place of @o in its parent's list (@o is left out). */
static int lz_replace(struct lz *z, uint32_t o, uint32_t c)
{
	uint32_t p = z->parent[o], a = z->prev[o], b = z->next[o];

	if (lz_set(z, &z->parent[c], p) || lz_set(z, &z->prev[c], a) ||
	    lz_set(z, &z->next[c], b))
		return -1;
	if (a != LZ_NONE ? lz_set(z, &z->next[a], c) : lz_set(z, &z->first[p], c))
		return -1;
	return b != LZ_NONE ? lz_set(z, &z->prev[b], c) : 0;
}

static int lz_unlink(struct lz *z, uint32_t c)
{
	uint32_t p = z->prev[c], n = z->next[c];

	if (p != LZ_NONE ? lz_set(z, &z->next[p], n) : lz_set(z, &z->first[z->parent[c]], n))
		return -1;
	return n != LZ_NONE ? lz_set(z, &z->prev[n], p) : 0;
}

/* A fresh inner node, or LZ_NONE when the arena is full (cannot happen). */
static uint32_t lz_group(struct lz *z, uint64_t size)
{
	uint32_t g = z->nodes;

	if (g >= z->cap)
		return LZ_NONE;
	z->nodes++;
	z->parent[g] = z->first[g] = z->next[g] = z->prev[g] = z->ghost[g] = LZ_NONE;
	z->nlive[g] = 0;
	z->endcnt[g] = 0;
	z->ord[g] = 0;
	z->gofs[g] = 0;
	z->size[g] = size;
	return g;
}

/*
 * Hash of the live tree below @v, the same for every order of its groups
 * (not of its ordered nodes): what follows a section depends only on the
 * section and this tree.
 */
static uint64_t lz_hash(const struct lz *z, uint32_t v)
{
	uint64_t h = 0;

	if (v < z->w->pb->n)
		return vnpu_plan_mix64(v + 1);
	if (z->ord[v]) {
		for (uint32_t c = z->first[v]; c != LZ_NONE; c = z->next[c])
			h = vnpu_plan_mix64(h ^ lz_hash(z, c)) + 0x9e3779b97f4a7c15ull;
		return vnpu_plan_mix64(h ^ 0x2545f4914f6cdd1dull);
	}
	for (uint32_t c = z->first[v]; c != LZ_NONE; c = z->next[c])
		h += lz_hash(z, c);
	return vnpu_plan_mix64(h ^ 0x5bd1e9955bd1e995ull);
}

/*
 * Offsets from the tree: every group's children in list order, ghosts in
 * place (a ghost may outgrow its node: a node split by a merge across
 * groups keeps the ghost of the whole, from where the whole started).
 */
static int lz_layout(struct lz *z)
{
	size_t n = 0;
	uint32_t *st = malloc((z->nodes + 1) * sizeof(*st));
	uint64_t *at = malloc((z->nodes + 1) * sizeof(*at));

	if (!st || !at) {
		free(st);
		free(at);
		return -1;
	}
	st[n] = z->root;
	at[n++] = 0;
	while (n) {
		uint32_t v = st[--n];
		uint64_t o = at[n];

		if (z->ghost[v] != LZ_NONE) {
			st[n] = z->ghost[v];
			at[n++] = o + z->gofs[v];
		}
		if (v < z->w->pb->n) {
			z->w->off[v] = o;
			continue;
		}
		for (uint32_t c = z->first[v]; c != LZ_NONE; c = z->next[c]) {
			st[n] = c;
			at[n++] = o;
			o += z->size[c];
		}
	}
	free(st);
	free(at);
	return 0;
}

static int lz_section(struct lz *z, uint32_t s);

/* 1 when the starters of @s not used yet can fill @len bytes exactly. */
static int lz_can(struct lz *z, uint32_t s, uint64_t len)
{
	struct sw *w = z->w;
	size_t k = 0;

	for (uint32_t j = w->st_start[s]; j < w->st_start[s + 1]; j++)
		if (!z->used[j])
			w->cand[k++] = w->st[j];
	return sw_fillable(w, w->cand, k, len, 0);
}

static int lz_assign(struct lz *z, uint32_t s, uint32_t *full, uint32_t *taken, size_t fi,
		     size_t nfull);

/*
 * Hole @h (1 + the index of its first full node; its members are the full
 * nodes taken by it, @size bytes) gets the starters of @s marked with @h.
 */
static int lz_apply(struct lz *z, uint32_t s, uint32_t *full, uint32_t *taken, size_t nfull,
		    uint32_t h, uint64_t size)
{
	struct sw *w = z->w;
	size_t mark = z->log_n, ng = 0, np = 0;
	uint32_t nodes = z->nodes, p = z->parent[full[h - 1]], g = LZ_NONE, f = LZ_NONE;
	uint32_t live = 0;
	int r;

	for (size_t k = h - 1; k < nfull; k++)
		if (taken[k] == h) {
			ng++;
			g = full[k];
			live += z->nlive[g];
		}
	for (uint32_t j = w->st_start[s]; j < w->st_start[s + 1]; j++)
		if (z->used[j] == h) {
			np++;
			f = w->st[j];
		}
	/* The hole: its members under one group (one member: itself). */
	if (ng > 1) {
		g = lz_group(z, size);
		if (g == LZ_NONE)
			goto nomem;
		for (size_t k = h - 1; k < nfull; k++)
			if (taken[k] == h &&
			    (lz_unlink(z, full[k]) || lz_link(z, g, full[k])))
				goto nomem;
	}
	/* Its filling: one starter, or a group of them. */
	if (np > 1) {
		f = lz_group(z, size);
		if (f == LZ_NONE)
			goto nomem;
	}
	for (uint32_t j = w->st_start[s]; j < w->st_start[s + 1]; j++) {
		uint32_t b = w->st[j];

		if (z->used[j] != h)
			continue;
		if (lz_set(z, &z->first[b], LZ_NONE) || lz_set(z, &z->ghost[b], LZ_NONE) ||
		    lz_set(z, &z->nlive[b], 1) || (np > 1 && lz_link(z, f, b)))
			goto nomem;
	}
	if (lz_set(z, &z->ghost[f], g) || lz_set(z, &z->nlive[f], (uint32_t)np))
		goto nomem;
	if (p == LZ_NONE) {
		if (lz_set(z, &z->parent[f], LZ_NONE) || lz_set(z, &z->root, f))
			goto nomem;
	} else {
		if (ng > 1 ? lz_link(z, p, f) : lz_replace(z, g, f))
			goto nomem;
		for (uint32_t a = p; a != LZ_NONE; a = z->parent[a])
			if (lz_set(z, &z->nlive[a], z->nlive[a] + (uint32_t)np - live))
				goto nomem;
	}
	r = lz_assign(z, s, full, taken, h, nfull);
	lz_undo(z, mark, nodes);
	return r;
nomem:
	lz_undo(z, mark, nodes);
	return SKS_NOMEM;
}

/*
 * Hole @h is filled by a subset of the starters of @s from index @i on,
 * @need bytes still to fill.
 */
static int lz_fill(struct lz *z, uint32_t s, uint32_t *full, uint32_t *taken, size_t nfull,
		   uint32_t h, uint64_t size, uint32_t i, uint64_t need)
{
	struct sw *w = z->w;
	const struct sks_problem *pb = w->pb;
	uint32_t last = w->st_start[s + 1];
	uint64_t avail = 0;
	int r;

	if (!(++w->nodes & 255) && sw_stop(w, LZ_NODES_TICK_NS))
		return SKS_TIMEOUT;
	if (!need)
		return lz_apply(z, s, full, taken, nfull, h, size);
	for (uint32_t j = i; j < last; j++)
		if (!z->used[j] && pb->size[w->st[j]] <= need)
			avail += pb->size[w->st[j]];
	if (avail < need)
		return SKS_INFEASIBLE;
	for (uint32_t j = i; j < last; j++) {
		uint32_t b = w->st[j], a = j > i ? w->st[j - 1] : 0;

		if (z->used[j] || pb->size[b] > need)
			continue;
		/* Of identical starters, the first unused one only. */
		if (j > i && !z->used[j - 1] && pb->size[a] == pb->size[b] &&
		    pb->t1[a] == pb->t1[b])
			continue;
		z->used[j] = h;
		r = lz_fill(z, s, full, taken, nfull, h, size, j + 1, need - pb->size[b]);
		z->used[j] = 0;
		if (r != SKS_INFEASIBLE)
			return r;
	}
	return SKS_INFEASIBLE;
}

/*
 * Hole @h (its first member full[@h - 1]), @size bytes so far, may take
 * more full siblings from full[@j] on; then it is filled.
 */
static int lz_hole(struct lz *z, uint32_t s, uint32_t *full, uint32_t *taken, size_t nfull,
		   uint32_t h, size_t j, uint64_t size)
{
	struct sw *w = z->w;
	uint32_t p = z->parent[full[h - 1]];
	uint64_t avail = 0;
	int r;

	if (!(++w->nodes & 255) && sw_stop(w, LZ_NODES_TICK_NS))
		return SKS_TIMEOUT;
	/* Holes only grow: none larger than the starters left can be filled. */
	for (uint32_t i = w->st_start[s]; i < w->st_start[s + 1]; i++)
		if (!z->used[i])
			avail += w->pb->size[w->st[i]];
	if (size > avail)
		return SKS_INFEASIBLE;
	if (lz_can(z, s, size)) {
		r = lz_fill(z, s, full, taken, nfull, h, size, w->st_start[s], size);
		if (r != SKS_INFEASIBLE)
			return r;
	}
	for (; p != LZ_NONE && !z->ord[p] && j < nfull && z->parent[full[j]] == p; j++) {
		if (taken[j])
			continue;
		taken[j] = h;
		r = lz_hole(z, s, full, taken, nfull, h, j + 1, size + z->size[full[j]]);
		taken[j] = 0;
		if (r != SKS_INFEASIBLE)
			return r;
	}
	return SKS_INFEASIBLE;
}

/* The holes of section @s from full[@fi] on; then the next section. */
static int lz_assign(struct lz *z, uint32_t s, uint32_t *full, uint32_t *taken, size_t fi,
		     size_t nfull)
{
	int r;

	while (fi < nfull && taken[fi])
		fi++;
	if (fi == nfull)
		return lz_section(z, s);
	/* The check below costs a subset sum per full node: many, time it. */
	if (nfull - fi > 8 ? sw_stop(z->w, LZ_NODE_TICK_NS) :
	    !(++z->w->nodes & 255) && sw_stop(z->w, LZ_NODES_TICK_NS))
		return SKS_TIMEOUT;
	/* A full node no sibling can join must be filled on its own. */
	for (size_t k = fi; k < nfull; k++) {
		uint32_t p = z->parent[full[k]];
		int alone = 1;

		if (taken[k])
			continue;
		for (size_t o = k + 1; alone && o < nfull && z->parent[full[o]] == p; o++)
			alone = p == LZ_NONE || z->ord[p] || taken[o];
		for (size_t o = k; alone && o-- > fi && z->parent[full[o]] == p;)
			alone = p == LZ_NONE || z->ord[p] || taken[o];
		if (alone && !lz_can(z, s, z->size[full[k]])) {
			if (!fi)
				z->stuck = full[k];
			return SKS_INFEASIBLE;
		}
	}
	taken[fi] = (uint32_t)fi + 1;
	r = lz_hole(z, s, full, taken, nfull, (uint32_t)fi + 1, fi + 1, z->size[full[fi]]);
	taken[fi] = 0;
	return r;
}

/* Full node @a goes before @b: by group, then largest first. */
static int lz_before(const struct lz *z, uint32_t a, uint32_t b)
{
	if (z->parent[a] != z->parent[b])
		return z->parent[a] + 1u < z->parent[b] + 1u;
	if (z->size[a] != z->size[b])
		return z->size[a] > z->size[b];
	return a < b;
}

/* Node @c next to @ref in its parent's list: after it when @after. */
static int lz_insert(struct lz *z, uint32_t ref, uint32_t c, int after)
{
	uint32_t p = z->parent[ref], a = after ? ref : z->prev[ref];
	uint32_t b = after ? z->next[ref] : ref;

	if (lz_set(z, &z->parent[c], p) || lz_set(z, &z->prev[c], a) ||
	    lz_set(z, &z->next[c], b))
		return -1;
	if (a != LZ_NONE ? lz_set(z, &z->next[a], c) : lz_set(z, &z->first[p], c))
		return -1;
	return b != LZ_NONE ? lz_set(z, &z->prev[b], c) : 0;
}

/*
 * Full nodes @x and @y below their lowest common ancestor @p, not both its
 * children: may x go to the edge of every node between it and p that
 * faces y, and y likewise? Returns 1 when x goes up (x below y), 0 down,
 * -1 when an ordered node forbids both.
 */
static int lz_orient(const struct lz *z, uint32_t x, uint32_t y, uint32_t p)
{
	uint32_t cx = x, cy = y;
	int hi = 1, lo = 1;

	for (uint32_t a = z->parent[x]; a != p; cx = a, a = z->parent[a])
		if (z->ord[a]) {
			hi &= z->next[cx] == LZ_NONE;
			lo &= z->prev[cx] == LZ_NONE;
		}
	for (uint32_t a = z->parent[y]; a != p; cy = a, a = z->parent[a])
		if (z->ord[a]) {
			hi &= z->prev[cy] == LZ_NONE;
			lo &= z->next[cy] == LZ_NONE;
		}
	if (z->ord[p]) {
		if (z->next[cx] == cy)
			lo = 0;
		else if (z->prev[cx] == cy)
			hi = 0;
		else
			return -1;
	}
	return hi ? 1 : lo ? 0 : -1;
}

/*
 * A new node E for the rest of @a without its child @x, which goes to
 * the top edge of a (after E) when @hi, else to the bottom: E keeps a's
 * order (when a is ordered) and a's ghost, which still starts where a
 * started.
 */
static uint32_t lz_split(struct lz *z, uint32_t a, uint32_t x, int hi)
{
	uint32_t e = lz_group(z, z->size[a] - z->size[x]), last, c;

	if (e == LZ_NONE)
		return LZ_NONE;
	z->ord[e] = z->ord[a];
	z->nlive[e] = z->nlive[a] - z->nlive[x];
	z->ghost[e] = z->ghost[a];
	z->gofs[e] = z->gofs[a] - (hi ? 0 : z->size[x]);
	for (last = z->first[a]; z->next[last] != LZ_NONE; last = z->next[last])
		;
	for (c = last; c != LZ_NONE;) {
		uint32_t pc = z->prev[c];

		if (c != x && lz_link(z, e, c))
			return LZ_NONE;
		c = pc;
	}
	return e;
}

/*
 * Full node @x goes one level up, to the @hi edge of its parent A, which
 * becomes partial (Booth and Lueker's templates): A's rest E and x take
 * A's place in its parent B when B is ordered; else B becomes ordered: its
 * other children (a group of them), E and x, in that order when @hi.
 */
static int lz_lift(struct lz *z, uint32_t x, int hi)
{
	uint32_t a = z->parent[x], b = z->parent[a], e = lz_split(z, a, x, hi);
	uint32_t q, r = LZ_NONE, others = 0, part[3];

	if (e == LZ_NONE)
		return -1;
	if (z->ord[b])
		return lz_replace(z, a, e) || lz_insert(z, e, x, hi) ? -1 : 0;
	q = lz_group(z, z->size[b]);
	if (q == LZ_NONE)
		return -1;
	z->ord[q] = 1;
	z->nlive[q] = z->nlive[b];
	z->ghost[q] = z->ghost[b];
	z->gofs[q] = z->gofs[b];
	for (uint32_t c = z->first[b]; c != LZ_NONE; c = z->next[c])
		if (c != a) {
			others++;
			r = c;
		}
	if (others > 1) {
		uint32_t c = z->first[b];

		r = lz_group(z, z->size[b] - z->size[a]);
		if (r == LZ_NONE)
			return -1;
		z->nlive[r] = z->nlive[b] - z->nlive[a];
		while (c != LZ_NONE) {
			uint32_t nc = z->next[c];

			if (c != a && lz_link(z, r, c))
				return -1;
			c = nc;
		}
	}
	if (lz_replace(z, b, q))
		return -1;
	/* Linked first to last: the list is the reverse of part[]. */
	part[0] = hi ? x : r;
	part[1] = e;
	part[2] = hi ? r : x;
	for (int i = 0; i < 3; i++)
		if (part[i] != LZ_NONE && lz_link(z, q, part[i]))
			return -1;
	return 0;
}

/*
 * The merge of a PQ-tree's partial nodes: full node @x, a grandchild of
 * P, and full node @y, a child or grandchild of P, become G, an ordered
 * node of the two, x below y when @hi: x leaves its parent A for A's edge
 * facing y (the rest of A becomes E, lz_split()), y likewise; E, G (and
 * the rest of y's parent) replace them in P's order when P is ordered,
 * else form a new ordered node among P's children. G is then one full
 * node, a hole of x and y together.
 */
static int lz_merge(struct lz *z, uint32_t x, uint32_t y, int hi)
{
	uint32_t a = z->parent[x], p = z->parent[a], b = z->parent[y];
	uint32_t ex, ey = LZ_NONE, g, q, part[3];

	ex = lz_split(z, a, x, hi);
	g = lz_group(z, z->size[x] + z->size[y]);
	if (ex == LZ_NONE || g == LZ_NONE)
		return -1;
	z->ord[g] = 1;
	z->nlive[g] = z->nlive[x] + z->nlive[y];
	if (b != p) {
		ey = lz_split(z, b, y, !hi);
		if (ey == LZ_NONE)
			return -1;
	}
	if (z->ord[p]) {
		if (lz_replace(z, a, ex) || lz_replace(z, b != p ? b : y, b != p ? ey : g))
			return -1;
		if (b != p && lz_insert(z, ex, g, hi))
			return -1;
	} else {
		q = lz_group(z, z->size[a] + z->size[b != p ? b : y]);
		if (q == LZ_NONE)
			return -1;
		z->ord[q] = 1;
		z->nlive[q] = z->nlive[a] + z->nlive[b != p ? b : y];
		if (lz_unlink(z, a) || lz_unlink(z, b != p ? b : y))
			return -1;
		/* Linked first to last: the list is the reverse of part[]. */
		part[0] = hi ? ey : ex;
		part[1] = g;
		part[2] = hi ? ex : ey;
		for (int i = 0; i < 3; i++)
			if (part[i] != LZ_NONE && lz_link(z, q, part[i]))
				return -1;
		if (lz_link(z, p, q))
			return -1;
	}
	return lz_link(z, g, hi ? y : x) || lz_link(z, g, hi ? x : y) ? -1 : 0;
}

/* Depth of @v below its ancestor @p. */
static uint32_t lz_depth(const struct lz *z, uint32_t v, uint32_t p)
{
	uint32_t d = 0;

	for (; v != p; v = z->parent[v])
		d++;
	return d;
}

/*
 * Full nodes @x and @y made one hole across groups (x below y when @hi):
 * each lifted to the edge facing the other up to their lowest common
 * ancestor @p (lz_lift()), then merged (lz_merge()).
 */
static int lz_cross(struct lz *z, uint32_t x, uint32_t y, uint32_t p, int hi)
{
	if (z->parent[x] == p && z->parent[y] == p) {
		/* Neighbours in an ordered node: one node of the two. */
		uint32_t g = lz_group(z, z->size[x] + z->size[y]);

		if (g == LZ_NONE)
			return -1;
		z->ord[g] = 1;
		z->nlive[g] = z->nlive[x] + z->nlive[y];
		if (lz_replace(z, x, g) || lz_unlink(z, y))
			return -1;
		return lz_link(z, g, hi ? y : x) || lz_link(z, g, hi ? x : y) ? -1 : 0;
	}
	while (lz_depth(z, x, p) > 2)
		if (lz_lift(z, x, hi))
			return -1;
	while (lz_depth(z, y, p) > 2)
		if (lz_lift(z, y, !hi))
			return -1;
	if (z->parent[x] == p)
		return lz_merge(z, y, x, !hi);
	return lz_merge(z, x, y, hi);
}

/*
 * Merges of the stuck full node @k with another full node o into @cand:
 * (k, o, P, edge) quadruples, P their lowest common ancestor, the most
 * local first (the deepest P). Returns the number of entries written.
 */
static size_t lz_cands(struct lz *z, const uint32_t *full, size_t nfull, uint32_t k,
		       uint32_t *cand)
{
	size_t nc = 0;

	z->stamp++;
	for (uint32_t a = k; a != LZ_NONE; a = z->parent[a])
		z->mark[a] = z->stamp;
	for (size_t i = 0; i < nfull; i++) {
		uint32_t o = full[i], p = o;
		int e;

		if (o == k)
			continue;
		while (p != LZ_NONE && z->mark[p] != z->stamp)
			p = z->parent[p];
		/* Siblings: a plain hole, unless neighbours in an ordered node. */
		if (p == LZ_NONE || (z->parent[o] == p && z->parent[k] == p &&
				     (!z->ord[p] || (z->next[k] != o && z->prev[k] != o))))
			continue;
		e = lz_orient(z, k, o, p);
		if (e < 0)
			continue;
		cand[nc++] = k;
		cand[nc++] = o;
		cand[nc++] = p;
		cand[nc++] = (uint32_t)e;
	}
	for (size_t i = 4; i < nc; i += 4) {
		uint32_t t[4];
		size_t j = i;

		memcpy(t, cand + i, sizeof(t));
		while (j && lz_depth(z, cand[j - 2], LZ_NONE) < lz_depth(z, t[2], LZ_NONE)) {
			memcpy(cand + j, cand + j - 4, sizeof(t));
			j -= 4;
		}
		memcpy(cand + j, t, sizeof(t));
	}
	return nc;
}

static uint64_t lz_key(const struct lz *z, uint32_t s)
{
	return (vnpu_plan_mix64(s + 1 + ((uint64_t)z->cross << 32)) + lz_hash(z, z->root)) | 1;
}

/*
 * The holes of section @s in the tree as it is: its maximal full nodes,
 * by group, filled as plain holes; when one of them can be neither filled
 * alone nor joined by a sibling, it is merged across groups with a full
 * node next to its group, or one at the edge of a neighbouring group
 * (lz_merge()), and the section is tried again.
 */
static int lz_at(struct lz *z, uint32_t s, int again)
{
	struct sw *w = z->w;
	size_t nt = 0, nfull = 0, base = z->full_n, nc = 0;
	uint32_t *full, *taken, *cand, k;
	uint64_t key = 0, *slot = NULL;
	int r;

	if (again) {
		if (sw_stop(w, LZ_NODE_TICK_NS))
			return SKS_TIMEOUT;
		key = lz_key(z, s);
		slot = &w->failed[(key >> 20) & (SW_FAILED - 1)];
		if (*slot == key)
			return SKS_INFEASIBLE;
	}
	/* Buffers ending at s: their ancestors count them. */
	for (uint32_t i = z->en_start[s]; i < z->en_start[s + 1]; i++)
		for (uint32_t a = z->en[i]; a != LZ_NONE; a = z->parent[a])
			if (!z->endcnt[a]++)
				z->touched[nt++] = a;
	full = z->full + base;
	taken = z->taken + base;
	for (size_t i = 0; i < nt; i++) {
		uint32_t a = z->touched[i], p = z->parent[a];

		if (z->endcnt[a] == z->nlive[a] &&
		    (p == LZ_NONE || z->endcnt[p] != z->nlive[p]))
			full[nfull++] = a;
	}
	for (size_t i = 0; i < nt; i++)
		z->endcnt[z->touched[i]] = 0;
	/* By group, so that siblings follow each other; largest first. */
	for (size_t i = 1; i < nfull; i++) {
		uint32_t v = full[i];
		size_t k = i;

		while (k && lz_before(z, v, full[k - 1])) {
			full[k] = full[k - 1];
			k--;
		}
		full[k] = v;
	}
	memset(taken, 0, nfull * sizeof(*taken));
	z->full_n += nfull;
	z->stuck = LZ_NONE;
	r = lz_assign(z, s, full, taken, 0, nfull);
	z->full_n = base;
	k = z->stuck;
	z->stuck = LZ_NONE;
	if (r != SKS_INFEASIBLE || k == LZ_NONE || !z->cross)
		goto out;
	/*
	 * Merges of a stuck node with another full node: of the stuck nodes,
	 * the one with the fewest (none fails the section).
	 */
	cand = malloc(8 * (nfull + 1) * sizeof(*cand));
	if (!cand)
		return SKS_NOMEM;
	nc = lz_cands(z, full, nfull, k, cand);
	for (size_t i = 0; i < nfull && nc; i++) {
		uint32_t o = full[i], p = z->parent[o];
		size_t m;

		if (o == k || (p != LZ_NONE && !z->ord[p] &&
			       ((i && z->parent[full[i - 1]] == p) ||
				(i + 1 < nfull && z->parent[full[i + 1]] == p))) ||
		    lz_can(z, s, z->size[o]))
			continue;
		m = lz_cands(z, full, nfull, o, cand + 4 * (nfull + 1));
		if (m < nc) {
			memcpy(cand, cand + 4 * (nfull + 1), m * sizeof(*cand));
			nc = m;
		}
	}
	for (size_t i = 0; i < nc && r == SKS_INFEASIBLE; i += 4) {
		size_t mark = z->log_n;
		uint32_t nodes = z->nodes;

		if (lz_cross(z, cand[i], cand[i + 1], cand[i + 2], (int)cand[i + 3]))
			r = SKS_NOMEM;
		else
			r = lz_at(z, s, 1);
		lz_undo(z, mark, nodes);
	}
	free(cand);
out:
	if (r == SKS_INFEASIBLE && slot)
		*slot = key;
	return r;
}

/*
 * After section @s is done: the next section where buffers start, its
 * holes (the maximal full nodes, by group) and their filling.
 */
static int lz_section(struct lz *z, uint32_t s)
{
	struct sw *w = z->w;
	const struct sks_problem *pb = w->pb;
	uint64_t key, *slot;
	int r;

	do
		s++;
	while (s < pb->nsec && w->st_start[s] == w->st_start[s + 1]);
	if (s > w->deepest) {
		w->deepest = s;
		w->gain = vnpu_plan_now();
	}
	if (!(++w->nodes & 255) && sw_stop(w, SW_NODES_TICK_NS))
		return SKS_TIMEOUT;
	if (s >= pb->nsec)
		return lz_layout(z) ? SKS_NOMEM : SKS_FOUND;
	key = lz_key(z, s);
	slot = &w->failed[(key >> 20) & (SW_FAILED - 1)];
	if (*slot == key)
		return SKS_INFEASIBLE;
	r = lz_at(z, s, 0);
	if (r == SKS_INFEASIBLE)
		*slot = key;
	return r;
}

static void lz_free(struct lz *z)
{
	free(z->parent);
	free(z->first);
	free(z->next);
	free(z->prev);
	free(z->ghost);
	free(z->nlive);
	free(z->endcnt);
	free(z->size);
	free(z->ord);
	free(z->gofs);
	free(z->mark);
	free(z->log);
	free(z->full);
	free(z->taken);
	free(z->used);
	free(z->touched);
	free(z->en_start);
	free(z->en);
}

static int lz_init(struct lz *z, struct sw *w)
{
	const struct sks_problem *pb = w->pb;
	size_t n = pb->n;
	uint32_t ns = pb->nsec;

	memset(z, 0, sizeof(*z));
	z->w = w;
	z->cap = (uint32_t)(8 * n + 16);
	z->parent = malloc(z->cap * sizeof(*z->parent));
	z->first = malloc(z->cap * sizeof(*z->first));
	z->next = malloc(z->cap * sizeof(*z->next));
	z->prev = malloc(z->cap * sizeof(*z->prev));
	z->ghost = malloc(z->cap * sizeof(*z->ghost));
	z->nlive = malloc(z->cap * sizeof(*z->nlive));
	z->endcnt = calloc(z->cap, sizeof(*z->endcnt));
	z->size = malloc(z->cap * sizeof(*z->size));
	z->ord = calloc(z->cap, sizeof(*z->ord));
	z->gofs = calloc(z->cap, sizeof(*z->gofs));
	z->mark = calloc(z->cap, sizeof(*z->mark));
	z->full = malloc((n + 1) * sizeof(*z->full));
	z->taken = malloc((n + 1) * sizeof(*z->taken));
	z->used = calloc(n + 1, sizeof(*z->used));
	z->touched = malloc(z->cap * sizeof(*z->touched));
	z->en_start = calloc(ns + 2, sizeof(*z->en_start));
	z->en = malloc((n + 1) * sizeof(*z->en));
	if (!z->parent || !z->first || !z->next || !z->prev || !z->ghost || !z->nlive ||
	    !z->endcnt || !z->size || !z->full || !z->taken || !z->used || !z->touched ||
	    !z->en_start || !z->en || !z->ord || !z->gofs ||
	    !z->mark)
		return -1;
	for (size_t i = 0; i < n; i++) {
		z->parent[i] = z->first[i] = z->next[i] = z->prev[i] = z->ghost[i] = LZ_NONE;
		z->nlive[i] = 1;
		z->size[i] = pb->size[i];
		if (pb->t1[i] < ns)
			z->en_start[pb->t1[i] + 1]++;
	}
	for (uint32_t s = 0; s <= ns; s++)
		z->en_start[s + 1] += z->en_start[s];
	for (size_t i = 0; i < n; i++)
		if (pb->t1[i] < ns)
			z->en[z->en_start[pb->t1[i]] + z->endcnt[pb->t1[i]]++] = (uint32_t)i;
	memset(z->endcnt, 0, z->cap * sizeof(*z->endcnt));
	z->nodes = (uint32_t)n;
	return 0;
}

int sws_lazy_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
		 uint64_t stall, uint64_t *off, uint64_t *nodes)
{
	return sws_lazy_pass(pb, target, deadline, stall, SWS_LAZY_PLAIN | SWS_LAZY_CROSS, off,
			     nodes);
}

/*
 * The lazy sweep (above) for a plan of exactly @target, which must equal
 * the live total in every section; alignments must divide every size (so
 * that every offset is aligned). Returns as sws_run(); SKS_INFEASIBLE
 * from the plain pass alone means that every plan needs a merge across
 * groups (or there is none).
 */
int sws_lazy_pass(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
		  uint64_t stall, int passes, uint64_t *off, uint64_t *nodes)
{
	struct sw w;
	struct lz z = { 0 };
	uint64_t total;
	int result = SKS_NOMEM;

	for (uint32_t s = 0; s < pb->nsec; s++)
		if (pb->sec_total[s] != target)
			return SKS_INFEASIBLE;
	if (!pb->n)
		return SKS_FOUND;
	if (sw_init(&w, pb, target, off) || lz_init(&z, &w))
		goto out;
	for (size_t i = 0; i < pb->n; i++)
		if (w.unit % pb->align[i]) {
			result = SKS_INFEASIBLE;
			goto out;
		}
	w.deadline = deadline;
	w.start = vnpu_plan_tick(SW_SETUP_TICK_NS * pb->n);
	w.gain = w.start;
	w.stall = stall;
	/* Section 0: its buffers fill [0, target), in any order. */
	z.root = lz_group(&z, target);
	for (uint32_t j = w.st_start[0]; j < w.st_start[1]; j++)
		if (lz_link(&z, z.root, w.st[j]))
			goto out;
	z.nlive[z.root] = w.st_start[1];
	/*
	 * Without merges across groups first, on half of the budget when both
	 * passes run: they open subtrees that the plain search refutes at
	 * once, and the plain search tiles some packings in a few ms that it
	 * then takes seconds.
	 */
	total = deadline > w.start ? deadline - w.start : 0;
	if ((passes & SWS_LAZY_PLAIN) && (passes & SWS_LAZY_CROSS))
		w.deadline = w.start + total / 2;
	result = passes & SWS_LAZY_PLAIN ? lz_section(&z, 0) : SKS_INFEASIBLE;
	if (result != SKS_FOUND && result != SKS_NOMEM && (passes & SWS_LAZY_CROSS)) {
		z.cross = 1;
		w.deadline = deadline;
		w.start = vnpu_plan_now();
		w.gain = w.start;
		w.deepest = 0;
		result = w.start < deadline ? lz_section(&z, 0) : SKS_TIMEOUT;
	}
out:
	*nodes += w.nodes;
	lz_free(&z);
	sw_free(&w);
	return result;
}
