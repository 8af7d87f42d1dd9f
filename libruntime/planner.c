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
 * Greedy stage: greedy by size and greedy by breadth (Pisarchyk & Lee,
 * "Efficient Memory Management for Deep Neural Net Inference", 2020), both
 * placing each buffer into the smallest gap among the already placed
 * buffers whose lifetimes overlap it. The overlapping placed buffers are
 * found with a segment tree over sections (those alive at the buffer's
 * first section) plus the list of buffers sorted by first section (those
 * starting inside its lifetime), so a run costs about the number of
 * overlapping pairs, not n^2.
 *
 * Search stage, for small instances: a depth-first branch and bound over
 * canonical plans in the spirit of MiniMalloc (Moffitt, ASPLOS 2024):
 * buffers are placed in non-decreasing offset order, each at the lowest
 * offset above the placed buffers it overlaps; candidates are ordered by
 * that offset then by a static preorder; a candidate that would leave a
 * gap another buffer must fill first is skipped (dominance); a section
 * whose floor plus the unplaced sizes it must still hold exceeds the
 * target prunes the node. Several preorders run round robin with growing
 * node limits. For large instances the search is a randomized greedy:
 * perturbed size orders, first and best fit, within the time limit.
 *
 * Every returned plan passes vnpu_plan_verify(), an independent sweep over
 * time keeping the live buffers sorted by offset.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime.h"

#define PLAN_DEFAULT_TIME_MS 2000
/* Largest instance the branch and bound runs on. */
#define PLAN_SEARCH_MAX 2048

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

/* --- verifier ---------------------------------------------------------------- */

struct ver_event {
	uint64_t time;
	uint32_t idx;
	uint32_t start;	/* 0 = end, 1 = start: ends sort first */
};

static int cmp_ver_event(const void *pa, const void *pb)
{
	const struct ver_event *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->start != b->start)
		return (int)a->start - (int)b->start;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

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
	struct ver_event *ev;
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
	ev = malloc((2 * n + 1) * sizeof(*ev));
	live = malloc((n + 1) * sizeof(*live));
	if (!ev || !live) {
		free(ev);
		free(live);
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	}
	for (size_t i = 0; i < n; i++) {
		ev[2 * i] = (struct ver_event){ bufs[i].first, (uint32_t)i, 1 };
		ev[2 * i + 1] = (struct ver_event){ bufs[i].last, (uint32_t)i, 0 };
	}
	qsort(ev, 2 * n, sizeof(*ev), cmp_ver_event);
	for (size_t e = 0; e < 2 * n && status == VNPU_SUCCESS; e++) {
		const struct vnpu_plan_buffer *b = &bufs[ev[e].idx];
		size_t pos = live_lower(bufs, live, cnt, b->offset);

		if (ev[e].start) {
			/* The live set is disjoint: check both neighbours. */
			if (pos > 0) {
				const struct vnpu_plan_buffer *p = &bufs[live[pos - 1]];

				if (p->offset + p->size > b->offset)
					status = VNPU_ERROR_INVALID_VALUE;
			}
			if (pos < cnt && b->offset + b->size > bufs[live[pos]].offset)
				status = VNPU_ERROR_INVALID_VALUE;
			memmove(&live[pos + 1], &live[pos], (cnt - pos) * sizeof(*live));
			live[pos] = ev[e].idx;
			cnt++;
		} else {
			if (pos >= cnt || live[pos] != ev[e].idx) {
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

/* --- problem setup ------------------------------------------------------------- */

struct idvec {
	uint32_t *v;
	uint32_t cnt, cap;
};

struct span {
	uint64_t off, end;
};

struct plan {
	size_t n;
	const struct vnpu_plan_buffer *in;
	uint64_t *size, *align;
	uint32_t *t0, *t1;	/* section range [t0, t1) */
	uint32_t nsec;
	uint64_t *sec_total;	/* live total per section */
	uint64_t lower_bound, naive;
	/* overlap queries */
	uint32_t *by_first;	/* buffers sorted by t0 */
	uint32_t *first_start;	/* nsec + 1 entries: start in by_first */
	uint32_t seg_n;		/* leaves of the segment tree */
	struct idvec *seg;
	uint8_t *placed;
	struct span *tmp, *tmp2;
	uint32_t *ids;		/* scratch list of overlapping ids */
};

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

static uint32_t find_time(const uint64_t *times, uint32_t nt, uint64_t t)
{
	uint32_t lo = 0, hi = nt;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (times[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

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
	memset(p, 0, sizeof(*p));
}

static int plan_init(struct plan *p, const struct vnpu_plan_buffer *bufs, size_t n)
{
	uint64_t *times = NULL;
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
	times = malloc((2 * n + 1) * sizeof(*times));
	if (!p->size || !p->align || !p->t0 || !p->t1 || !p->by_first ||
	    !p->placed || !p->ids || !times)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		p->size[i] = bufs[i].size;
		p->align[i] = bufs[i].alignment ? bufs[i].alignment : 1;
		times[2 * i] = bufs[i].first;
		times[2 * i + 1] = bufs[i].last;
	}
	qsort(times, 2 * n, sizeof(*times), cmp_u64);
	for (size_t i = 0; i < 2 * n; i++)
		if (!nt || times[nt - 1] != times[i])
			times[nt++] = times[i];
	p->nsec = nt ? nt - 1 : 0;
	for (size_t i = 0; i < n; i++) {
		p->t0[i] = find_time(times, nt, bufs[i].first);
		p->t1[i] = find_time(times, nt, bufs[i].last);
	}
	free(times);
	times = NULL;

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
	free(times);
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

/*
 * Sorts spans by offset: insertion sort when short, else an LSD radix sort
 * with 11-bit digits over the bits the offsets use (qsort with a callback
 * dominated the greedy runs on large traces).
 */
static void sort_spans(struct span *a, struct span *tmp, size_t k)
{
	uint64_t maxoff = 0;
	uint32_t cnt[2048];

	if (k < 48) {
		for (size_t i = 1; i < k; i++) {
			struct span v = a[i];
			size_t j = i;

			while (j && a[j - 1].off > v.off) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = v;
		}
		return;
	}
	for (size_t i = 0; i < k; i++)
		if (a[i].off > maxoff)
			maxoff = a[i].off;
	for (unsigned int shift = 0; shift < 64 && (maxoff >> shift); shift += 11) {
		uint32_t sum = 0;

		memset(cnt, 0, sizeof(cnt));
		for (size_t i = 0; i < k; i++)
			cnt[(a[i].off >> shift) & 2047]++;
		for (size_t d = 0; d < 2048; d++) {
			uint32_t c = cnt[d];

			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < k; i++)
			tmp[cnt[(a[i].off >> shift) & 2047]++] = a[i];
		memcpy(a, tmp, k * sizeof(*a));
	}
}

enum fit { FIT_BEST, FIT_FIRST };

/*
 * Places the buffers in @order, each into the smallest (FIT_BEST) or lowest
 * (FIT_FIRST) gap among the placed buffers it overlaps. Returns the arena,
 * or UINT64_MAX when out of memory; stops early once above @cutoff.
 */
static uint64_t greedy_place(struct plan *p, const uint32_t *order,
			     enum fit fit, uint64_t *off, uint64_t cutoff)
{
	uint64_t arena = 0;

	plan_reset(p);
	for (size_t i = 0; i < p->n; i++) {
		uint32_t id = order[i];
		size_t k = plan_overlaps(p, id, p->ids);
		uint64_t size = p->size[id], a = p->align[id];
		uint64_t best = UINT64_MAX, best_gap = UINT64_MAX, prev_end = 0;

		for (size_t j = 0; j < k; j++) {
			p->tmp[j].off = off[p->ids[j]];
			p->tmp[j].end = off[p->ids[j]] + p->size[p->ids[j]];
		}
		sort_spans(p->tmp, p->tmp2, k);
		for (size_t j = 0; j < k; j++) {
			uint64_t start = align_up(prev_end, a);

			if (start < p->tmp[j].off && p->tmp[j].off - start >= size) {
				uint64_t gap = p->tmp[j].off - start;

				if (fit == FIT_FIRST) {
					best = start;
					break;
				}
				if (gap < best_gap) {
					best_gap = gap;
					best = start;
				}
			}
			if (p->tmp[j].end > prev_end)
				prev_end = p->tmp[j].end;
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

static void sort_keys(struct key *keys, size_t n, uint32_t *order)
{
	qsort(keys, n, sizeof(*keys), cmp_key_desc);
	for (size_t i = 0; i < n; i++)
		order[i] = keys[i].id;
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
 * Greedy by breadth processes the sections by decreasing live total and,
 * in each, the unplaced buffers by decreasing size. A buffer is thus
 * placed with the first processed section it lives in: its section of
 * largest total, ties to the earliest. Sorting buffers by (that total,
 * that section, size) gives the same order in O(n log n).
 */
static int order_by_breadth(const struct plan *p, struct key *keys, uint32_t *order)
{
	uint32_t levels = 0;
	uint32_t **sp;

	while ((1u << levels) <= p->nsec)
		levels++;
	sp = calloc(levels + 1, sizeof(*sp));
	if (!sp)
		return -1;
	/* Sparse table of argmax (earliest on ties). */
	for (uint32_t l = 0; l < levels; l++) {
		sp[l] = malloc((p->nsec + 1) * sizeof(**sp));
		if (!sp[l])
			goto oom;
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
		keys[i] = (struct key){ p->sec_total[m], UINT64_MAX - m, p->size[i],
					(uint32_t)i };
	}
	sort_keys(keys, p->n, order);
	for (uint32_t l = 0; l < levels; l++)
		free(sp[l]);
	free(sp);
	return 0;
oom:
	for (uint32_t l = 0; l < levels; l++)
		free(sp[l]);
	free(sp);
	return -1;
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

struct bb {
	struct plan *p;
	size_t n;
	uint64_t target;
	uint32_t *ov_start, *ov;	/* overlap lists (CSR) */
	uint32_t *rank;			/* preorder rank of each buffer */
	uint64_t *minoff;
	uint64_t *floor;		/* per section */
	uint64_t *total;		/* unplaced size per section */
	uint64_t *secmin;		/* lowest offset left per section */
	uint64_t *off;
	uint8_t *placed;
	uint32_t *cand;			/* candidate lists, one per depth */
	struct { uint32_t id; uint64_t old; } *mlog;
	size_t mlog_n, mlog_cap;
	struct { uint32_t s; uint64_t old; } *flog;
	size_t flog_n, flog_cap;
	uint64_t nodes, node_limit, deadline;
	int timeout;
};

static struct bb *cmp_bb;

static int cmp_cand(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct bb *bb = cmp_bb;

	if (bb->minoff[a] != bb->minoff[b])
		return bb->minoff[a] < bb->minoff[b] ? -1 : 1;
	return bb->rank[a] < bb->rank[b] ? -1 : bb->rank[a] > bb->rank[b];
}

/* Returns 1 found, 0 infeasible below this node, -1 limit or timeout. */
static int bb_search(struct bb *bb, size_t depth, uint64_t last_off,
		     uint32_t last_rank)
{
	uint32_t *cand = bb->cand + depth * (bb->n + 1);
	size_t k = 0;
	uint64_t min_height = UINT64_MAX;

	if (depth == bb->n)
		return 1;
	if (++bb->nodes > bb->node_limit)
		return -1;
	if (!(bb->nodes & 255) && now_ns() > bb->deadline) {
		bb->timeout = 1;
		return -1;
	}
	for (uint32_t i = 0; i < bb->n; i++) {
		if (bb->placed[i])
			continue;
		cand[k++] = i;
		if (bb->minoff[i] + bb->p->size[i] < min_height)
			min_height = bb->minoff[i] + bb->p->size[i];
	}
	cmp_bb = bb;
	qsort(cand, k, sizeof(*cand), cmp_cand);
	for (size_t c = 0; c < k; c++) {
		uint32_t id = cand[c];
		uint64_t o = bb->minoff[id], top = o + bb->p->size[id];
		size_t mlog0 = bb->mlog_n, flog0 = bb->flog_n;
		int ok = 1, r = 0;

		/* Canonical: non-decreasing (offset, rank). */
		if (o < last_off || (o == last_off && bb->rank[id] < last_rank))
			continue;
		/* Dominance: a gap below another buffer's top stays open. */
		if (o >= min_height)
			break;
		if (top > bb->target)
			continue;
		bb->placed[id] = 1;
		bb->off[id] = o;
		for (uint32_t j = bb->ov_start[id]; j < bb->ov_start[id + 1]; j++) {
			uint32_t other = bb->ov[j];
			uint64_t m;

			if (bb->placed[other] || bb->minoff[other] >= top)
				continue;
			m = align_up(top, bb->p->align[other]);
			bb->mlog[bb->mlog_n].id = other;
			bb->mlog[bb->mlog_n++].old = bb->minoff[other];
			bb->minoff[other] = m;
			if (m + bb->p->size[other] > bb->target)
				ok = 0;
		}
		for (uint32_t s = bb->p->t0[id]; s < bb->p->t1[id]; s++) {
			bb->flog[bb->flog_n].s = s;
			bb->flog[bb->flog_n++].old = bb->floor[s];
			bb->floor[s] = top;
			bb->total[s] -= bb->p->size[id];
		}
		/*
		 * Section inference: what remains of a section must fit above
		 * its floor, which is at least the lowest offset any of its
		 * unplaced buffers can still take.
		 */
		if (ok) {
			for (uint32_t s = 0; s < bb->p->nsec; s++)
				bb->secmin[s] = UINT64_MAX;
			for (size_t c2 = 0; c2 < k; c2++) {
				uint32_t u = cand[c2];

				if (bb->placed[u])
					continue;
				for (uint32_t s = bb->p->t0[u]; s < bb->p->t1[u]; s++)
					if (bb->minoff[u] < bb->secmin[s])
						bb->secmin[s] = bb->minoff[u];
			}
		}
		for (uint32_t s = 0; ok && s < bb->p->nsec; s++) {
			uint64_t f = bb->floor[s];

			if (!bb->total[s])
				continue;
			if (f < o)
				f = o;
			if (f < bb->secmin[s])
				f = bb->secmin[s];
			if (f + bb->total[s] > bb->target)
				ok = 0;
		}
		if (ok)
			r = bb_search(bb, depth + 1, o, bb->rank[id]);
		for (uint32_t s = bb->p->t0[id]; s < bb->p->t1[id]; s++)
			bb->total[s] += bb->p->size[id];
		while (bb->flog_n > flog0) {
			bb->flog_n--;
			bb->floor[bb->flog[bb->flog_n].s] = bb->flog[bb->flog_n].old;
		}
		if (r == 1)
			return 1;
		while (bb->mlog_n > mlog0) {
			bb->mlog_n--;
			bb->minoff[bb->mlog[bb->mlog_n].id] = bb->mlog[bb->mlog_n].old;
		}
		bb->placed[id] = 0;
		if (r < 0)
			return r;
	}
	return 0;
}

static void bb_free(struct bb *bb)
{
	free(bb->ov_start);
	free(bb->ov);
	free(bb->rank);
	free(bb->minoff);
	free(bb->floor);
	free(bb->total);
	free(bb->secmin);
	free(bb->off);
	free(bb->placed);
	free(bb->cand);
	free(bb->mlog);
	free(bb->flog);
}

static int bb_init(struct bb *bb, struct plan *p)
{
	size_t n = p->n, pairs = 0;

	memset(bb, 0, sizeof(*bb));
	bb->p = p;
	bb->n = n;
	bb->ov_start = calloc(n + 2, sizeof(*bb->ov_start));
	bb->rank = malloc((n + 1) * sizeof(*bb->rank));
	bb->minoff = malloc((n + 1) * sizeof(*bb->minoff));
	bb->floor = malloc((p->nsec + 1) * sizeof(*bb->floor));
	bb->total = malloc((p->nsec + 1) * sizeof(*bb->total));
	bb->secmin = malloc((p->nsec + 1) * sizeof(*bb->secmin));
	bb->off = malloc((n + 1) * sizeof(*bb->off));
	bb->placed = malloc(n + 1);
	bb->cand = malloc((n + 1) * (n + 1) * sizeof(*bb->cand));
	if (!bb->ov_start || !bb->rank || !bb->minoff || !bb->floor ||
	    !bb->total || !bb->secmin || !bb->off || !bb->placed || !bb->cand)
		return -1;
	/* Overlap lists: with every buffer placed, query each one. */
	plan_reset(p);
	for (size_t i = 0; i < n; i++)
		if (plan_mark(p, (uint32_t)i))
			return -1;
	for (size_t i = 0; i < n; i++) {
		size_t k = plan_overlaps(p, (uint32_t)i, p->ids);

		bb->ov_start[i + 1] = bb->ov_start[i] + (uint32_t)(k - 1);
		pairs += k - 1;
	}
	bb->ov = malloc((pairs + 1) * sizeof(*bb->ov));
	bb->mlog_cap = pairs + 1;
	bb->mlog = malloc(bb->mlog_cap * sizeof(*bb->mlog));
	bb->flog_cap = 1;
	for (size_t i = 0; i < n; i++)
		bb->flog_cap += p->t1[i] - p->t0[i];
	bb->flog = malloc(bb->flog_cap * sizeof(*bb->flog));
	if (!bb->ov || !bb->mlog || !bb->flog)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t k = plan_overlaps(p, (uint32_t)i, p->ids), w = bb->ov_start[i];

		for (size_t j = 0; j < k; j++)
			if (p->ids[j] != i)
				bb->ov[w++] = p->ids[j];
	}
	return 0;
}

/* Preorders, as key letters: T total, A area, Z size, L length, C sections. */
static const char *const bb_heuristics[] = { "TAZ", "ATZ", "ZTA", "TZA", "LTA" };

static uint64_t bb_key(const struct plan *p, const uint64_t *maxtot, size_t i, char c)
{
	const struct vnpu_plan_buffer *b = &p->in[i];

	switch (c) {
	case 'T':
		return maxtot[i];
	case 'A': {
		uint64_t len = b->last - b->first;

		return len > UINT64_MAX / p->size[i] ? UINT64_MAX : len * p->size[i];
	}
	case 'Z':
		return p->size[i];
	case 'L':
		return b->last - b->first;
	default:
		return p->t1[i] - p->t0[i];
	}
}

/* Returns 1 found (into @off), 0 proven infeasible, -1 timeout/no memory. */
static int bb_run(struct plan *p, uint64_t target, uint64_t deadline,
		  uint64_t *off, uint64_t *nodes)
{
	struct bb bb;
	struct key *keys = NULL;
	uint64_t *maxtot = NULL;
	uint32_t *order = NULL;
	int result = -1;
	size_t nh = sizeof(bb_heuristics) / sizeof(bb_heuristics[0]);

	if (bb_init(&bb, p))
		goto out;
	keys = malloc((p->n + 1) * sizeof(*keys));
	maxtot = malloc((p->n + 1) * sizeof(*maxtot));
	order = malloc((p->n + 1) * sizeof(*order));
	if (!keys || !maxtot || !order)
		goto out;
	for (size_t i = 0; i < p->n; i++) {
		maxtot[i] = 0;
		for (uint32_t s = p->t0[i]; s < p->t1[i]; s++)
			if (p->sec_total[s] > maxtot[i])
				maxtot[i] = p->sec_total[s];
	}
	bb.target = target;
	bb.deadline = deadline;
	for (uint64_t limit = 2 * p->n; result < 0 && !bb.timeout; limit *= 2) {
		for (size_t h = 0; h < nh && result < 0 && !bb.timeout; h++) {
			const char *hs = bb_heuristics[h];

			for (size_t i = 0; i < p->n; i++)
				keys[i] = (struct key){ bb_key(p, maxtot, i, hs[0]),
							bb_key(p, maxtot, i, hs[1]),
							bb_key(p, maxtot, i, hs[2]),
							(uint32_t)i };
			sort_keys(keys, p->n, order);
			for (size_t i = 0; i < p->n; i++)
				bb.rank[order[i]] = (uint32_t)i;
			for (size_t i = 0; i < p->n; i++) {
				bb.minoff[i] = 0;
				bb.placed[i] = 0;
			}
			for (uint32_t s = 0; s < p->nsec; s++) {
				bb.floor[s] = 0;
				bb.total[s] = p->sec_total[s];
			}
			bb.mlog_n = bb.flog_n = 0;
			bb.node_limit = bb.nodes + limit;
			result = bb_search(&bb, 0, 0, 0);
		}
		if (limit > UINT64_MAX / 4)
			break;
	}
	if (result == 1)
		memcpy(off, bb.off, p->n * sizeof(*off));
out:
	*nodes += bb.nodes;
	free(keys);
	free(maxtot);
	free(order);
	bb_free(&bb);
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

/* Randomized greedy: perturbed size orders, both fits, until the deadline. */
static int random_greedy(struct plan *p, struct key *keys, uint32_t *order,
			 uint64_t *off, struct best *best, uint64_t target,
			 uint64_t deadline, uint64_t seed, uint64_t *iters)
{
	uint64_t rng = seed ^ 0x5eedull;

	while (best->arena > target && now_ns() < deadline) {
		uint64_t r = rng_next(&rng);
		/* noise of up to 1/2^shift of the size */
		unsigned int shift = 1 + (unsigned int)(r % 6);
		enum fit fit = (r >> 8) & 1 ? FIT_FIRST : FIT_BEST;
		uint64_t arena;

		for (size_t i = 0; i < p->n; i++) {
			uint64_t s = p->size[i], noise = rng_next(&rng);
			uint64_t span = s >> shift;

			keys[i] = (struct key){ s + (span ? noise % (span + 1) : 0),
						p->t1[i] - p->t0[i], noise, (uint32_t)i };
		}
		sort_keys(keys, p->n, order);
		arena = greedy_place(p, order, fit, off, best->arena);
		if (arena == UINT64_MAX)
			return -1;
		keep(best, off, arena, p->n);
		(*iters)++;
	}
	return 0;
}

static int compute(struct vnpu_plan_buffer *bufs, size_t n,
		   const struct vnpu_plan_options *opts,
		   struct vnpu_plan_stats *stats)
{
	struct plan p;
	struct key *keys = NULL;
	uint32_t *order = NULL;
	uint64_t *off = NULL;
	struct best best = { UINT64_MAX, NULL };
	uint64_t naive, target, deadline, nodes = 0, cap = opts->capacity;
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
	keys = malloc((n + 1) * sizeof(*keys));
	order = malloc((n + 1) * sizeof(*order));
	off = malloc((n + 1) * sizeof(*off));
	best.off = malloc((n + 1) * sizeof(*best.off));
	if (!keys || !order || !off || !best.off || plan_alloc_tmp(&p))
		goto out;

	if (opts->strategy != VNPU_PLAN_GREEDY_BY_BREADTH) {
		order_by_size(&p, keys, order);
		keep(&best, off, greedy_place(&p, order, FIT_BEST, off, UINT64_MAX), n);
	}
	if (opts->strategy != VNPU_PLAN_GREEDY_BY_SIZE) {
		if (order_by_breadth(&p, keys, order))
			goto out;
		keep(&best, off, greedy_place(&p, order, FIT_BEST, off, UINT64_MAX), n);
	}
	if (best.arena == UINT64_MAX)
		goto out;
	if (opts->strategy == VNPU_PLAN_BEST && best.arena > p.lower_bound) {
		order_by_size(&p, keys, order);
		keep(&best, off, greedy_place(&p, order, FIT_FIRST, off, UINT64_MAX), n);
	}
	stats->greedy_size = best.arena;

	target = cap ? cap : p.lower_bound;
	/* The time limit is the search stage's, after the greedy plans. */
	deadline = now_ns() + time_ms * 1000000ull;
	if (opts->strategy == VNPU_PLAN_BEST && best.arena > target) {
		if (n <= PLAN_SEARCH_MAX) {
			/*
			 * Without a capacity, aim at the lower bound first, then
			 * at points between it and the best plan so far.
			 */
			uint64_t lo = target, hi = best.arena;
			int first = 1;

			while (lo < hi && now_ns() < deadline) {
				uint64_t mid = first ? lo : lo + (hi - lo) / 2;
				uint64_t left = deadline - now_ns();
				uint64_t dl = cap ? deadline : now_ns() + (first ? left / 2 : left / 3);
				int r = bb_run(&p, mid, dl, off, &nodes);

				first = 0;
				if (r == 1) {
					uint64_t arena = 0;

					for (size_t i = 0; i < n; i++)
						if (off[i] + p.size[i] > arena)
							arena = off[i] + p.size[i];
					keep(&best, off, arena, n);
					hi = best.arena;
				} else {
					if (cap)
						break;
					lo = mid + 1;
				}
			}
		} else if (random_greedy(&p, keys, order, off, &best, target,
					 deadline, opts->seed, &nodes)) {
			goto out;
		}
	}
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
	plan_free(&p);
	return status;
}

int vnpu_plan_compute(struct vnpu_plan_buffer *bufs, size_t count,
		      const struct vnpu_plan_options *opts,
		      struct vnpu_plan_stats *stats)
{
	static const struct vnpu_plan_options defaults = { .strategy = VNPU_PLAN_BEST };
	struct vnpu_plan_stats local;
	struct vnpu_plan_buffer *work;
	uint64_t start = now_ns();
	int status;

	if (!opts)
		opts = &defaults;
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
	status = compute(work, count, opts, stats);
	if (status == VNPU_SUCCESS)
		for (size_t i = 0; i < count; i++)
			bufs[i].offset = work[i].offset;
	free(work);
	stats->elapsed_ns = now_ns() - start;
	return vnpu_set_status(status);
}
