// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Planner instance generators with a known optimum, and a plan checker
 * independent of the planner (see planner_gen.h).
 */
#include <stdlib.h>
#include <string.h>

#include "planner_gen.h"

#define UNIT 512ull

static const char *const names[PGEN_FAMILIES] = {
	"guillotine", "tiling", "ladder", "chain", "guillotine-fine", "random",
	"guillotine-area", "guillotine-aspect",
};

const char *pgen_family_name(unsigned int family)
{
	return family < PGEN_FAMILIES ? names[family] : NULL;
}

int pgen_known_optimum(unsigned int family)
{
	return family != PGEN_RANDOM;
}

static uint64_t rng(uint64_t *s)
{
	/* splitmix64: every seed, even 0, gives a good stream */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static uint64_t uni(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + rng(s) % (hi - lo + 1);
}

/* A capacity of 1 to 8 MiB in 512-byte units. */
static uint64_t capacity_units(uint64_t *s)
{
	return uni(s, 2048, 16384);
}

struct rect {
	uint64_t t0, t1, y0, y1;	/* time [t0, t1), units [y0, y1) */
};

static struct vnpu_plan_buffer *to_buffers(const struct rect *r, size_t n)
{
	struct vnpu_plan_buffer *b = calloc(n + 1, sizeof(*b));

	for (size_t i = 0; b && i < n; i++)
		b[i] = (struct vnpu_plan_buffer){ .size = (r[i].y1 - r[i].y0) * UNIT,
						  .first = r[i].t0, .last = r[i].t1,
						  .offset = r[i].y0 * UNIT };
	return b;
}

/* How guillotine() picks the piece to cut and the direction of the cut. */
enum cut_rule {
	CUT_UNIFORM,	/* any piece alike, time or memory by a coin */
	CUT_AREA,	/* a piece in proportion to its area, by a coin */
	CUT_ASPECT,	/* any piece alike, across its relatively longer side */
};

/*
 * Random guillotine cuts of a random piece until there are @n pieces, on
 * a time line of @stretch steps per piece, by @rule.
 */
static struct rect *guillotine(uint64_t *s, size_t n, uint64_t cap, size_t *count,
			       uint64_t stretch, enum cut_rule rule)
{
	struct rect *r = calloc(n + 1, sizeof(*r));
	uint64_t horizon = (n < 8 ? 8 : n) * stretch;
	size_t k = 1, tries = 0;

	if (!r)
		return NULL;
	r[0] = (struct rect){ 0, horizon, 0, cap };
	while (k < n && tries < 64 * n) {
		struct rect *p = &r[rng(s) % k];
		int can_t, can_y, in_time;

		if (rule == CUT_AREA) {
			/* The piece under a random point: the pieces tile the rectangle. */
			uint64_t t = uni(s, 0, horizon - 1), y = uni(s, 0, cap - 1);

			for (p = r; t < p->t0 || t >= p->t1 || y < p->y0 || y >= p->y1; p++)
				;
		}
		can_t = p->t1 - p->t0 >= 2;
		can_y = p->y1 - p->y0 >= 2;
		tries++;
		if (!can_t && !can_y)
			continue;
		if (rule == CUT_ASPECT) {
			/* Length and height, each relative to the whole rectangle's. */
			uint64_t across_t = (p->t1 - p->t0) * cap, across_y = (p->y1 - p->y0) * horizon;

			in_time = can_t && (!can_y || rng(s) % (across_t + across_y) < across_t);
		} else {
			in_time = can_t && (!can_y || rng(s) & 1);
		}
		if (in_time) {
			uint64_t c = uni(s, p->t0 + 1, p->t1 - 1);

			r[k] = (struct rect){ c, p->t1, p->y0, p->y1 };
			p->t1 = c;
		} else {
			uint64_t c = uni(s, p->y0 + 1, p->y1 - 1);

			r[k] = (struct rect){ p->t0, p->t1, c, p->y1 };
			p->y1 = c;
		}
		k++;
	}
	*count = k;
	return r;
}

/*
 * Drops random rectangles into random runs of the skyline (a run: steps
 * of equal height) until the skyline reaches the capacity everywhere.
 * Each rectangle lies inside its run, on top of it: no waste.
 */
static struct rect *tiling_once(uint64_t *s, size_t n, uint64_t cap, size_t *count,
				unsigned int grow)
{
	uint64_t depth = uni(s, 3, 12), horizon = n < 8 ? 8 : n;
	uint64_t avg_w = horizon * depth / (n ? n : 1) * grow / 16, avg_h = cap / depth;
	uint64_t *sky = calloc(horizon, sizeof(*sky));
	size_t k = 0, rcap = 2 * n + 16, open = horizon;
	struct rect *r = calloc(rcap, sizeof(*r));

	if (!sky || !r)
		goto fail;
	if (!avg_w)
		avg_w = 1;
	while (open) {
		uint64_t pick = rng(s) % open, t = 0, a, b, w, h, t0;

		/* The pick-th step below the capacity. */
		for (t = 0; t < horizon; t++)
			if (sky[t] < cap && !pick--)
				break;
		for (a = t; a > 0 && sky[a - 1] == sky[t]; a--)
			;
		for (b = t + 1; b < horizon && sky[b] == sky[t]; b++)
			;
		w = uni(s, 1, 2 * avg_w);
		if (w > b - a)
			w = b - a;
		t0 = uni(s, a, b - w);
		h = uni(s, 1, 2 * avg_h);
		if (h > cap - sky[t])
			h = cap - sky[t];
		if (k == rcap) {
			struct rect *nr = realloc(r, 2 * rcap * sizeof(*r));

			if (!nr)
				goto fail;
			r = nr;
			rcap *= 2;
		}
		r[k++] = (struct rect){ t0, t0 + w, sky[t], sky[t] + h };
		for (uint64_t u = t0; u < t0 + w; u++) {
			sky[u] += h;
			if (sky[u] == cap)
				open--;
		}
	}
	free(sky);
	*count = k;
	return r;
fail:
	free(sky);
	free(r);
	return NULL;
}

/*
 * Rectangles clipped by their runs and the capacity come out smaller than
 * drawn: wider ones are drawn (the same random stream each time) until
 * the count is within 10% of @n.
 */
static struct rect *tiling(uint64_t *s, size_t n, uint64_t cap, size_t *count)
{
	unsigned int grow = 16;
	struct rect *r = NULL;

	for (int round = 0; round < 12; round++) {
		uint64_t copy = *s;

		free(r);
		r = tiling_once(&copy, n, cap, count, grow);
		if (!r || 10 * *count <= 11 * n || *count < 8)
			break;
		grow = grow * 3 / 2;
	}
	return r;
}

/*
 * Lanes stacked up to the capacity; at every step each lane ends its
 * buffer with probability 1/2 and starts a new one of the same height;
 * when two neighbouring lanes both end at a step, they may re-split
 * their joint height (a rung). Zero waste by construction.
 */
static struct rect *ladder(uint64_t *s, size_t n, uint64_t cap, size_t *count)
{
	size_t lanes = (size_t)uni(s, 3, 12), k = 0;
	uint64_t *y = calloc(lanes + 1, sizeof(*y)), *since = calloc(lanes, sizeof(*since));
	uint8_t *ends = calloc(lanes, 1);
	struct rect *r = calloc(n + 2 * lanes + 1, sizeof(*r));
	uint64_t t = 0;

	if (!y || !since || !ends || !r)
		goto fail;
	/* Lane boundaries: distinct random cuts of [0, cap]. */
	y[lanes] = cap;
	for (size_t i = 1; i < lanes; i++)
		y[i] = y[i - 1] + 1 + rng(s) % ((cap - y[i - 1]) / (lanes - i + 1));
	while (k + lanes < n) {
		t++;
		for (size_t i = 0; i < lanes; i++)
			ends[i] = rng(s) & 1;
		for (size_t i = 0; i < lanes; i++)
			if (ends[i]) {
				r[k++] = (struct rect){ since[i], t, y[i], y[i + 1] };
				since[i] = t;
			}
		for (size_t i = 0; i + 1 < lanes; i++)
			if (ends[i] && ends[i + 1] && rng(s) % 4 == 0 &&
			    y[i + 2] - y[i] >= 2)
				y[i + 1] = uni(s, y[i] + 1, y[i + 2] - 1);
	}
	t++;
	for (size_t i = 0; i < lanes; i++)
		r[k++] = (struct rect){ since[i], t, y[i], y[i + 1] };
	free(y);
	free(since);
	free(ends);
	*count = k;
	return r;
fail:
	free(y);
	free(since);
	free(ends);
	free(r);
	return NULL;
}

static struct vnpu_plan_buffer *chain(uint64_t *s, size_t n)
{
	struct vnpu_plan_buffer *b = calloc(n + 1, sizeof(*b));

	for (size_t i = 0; b && i < n; i++)
		b[i] = (struct vnpu_plan_buffer){ .size = uni(s, 1, 2048) * UNIT,
						  .first = i, .last = i + 2 };
	return b;
}

/*
 * Like a training trace: about n/2 steps, three in four buffers live 1 to
 * 4 steps, the others up to a tenth of the trace; sizes log-uniform from
 * 512 bytes to 4 MiB.
 */
static struct vnpu_plan_buffer *random_trace(uint64_t *s, size_t n)
{
	struct vnpu_plan_buffer *b = calloc(n + 1, sizeof(*b));
	uint64_t steps = n / 2 + 1;

	for (size_t i = 0; b && i < n; i++) {
		uint64_t len = rng(s) % 4 ? uni(s, 1, 4) : uni(s, 1, steps / 10 + 1);
		uint64_t bits = uni(s, 0, 12);

		b[i].first = rng(s) % steps;
		b[i].last = b[i].first + len;
		b[i].size = uni(s, 1ull << bits, (2ull << bits) - 1) * UNIT;
	}
	return b;
}

struct vnpu_plan_buffer *pgen_generate(unsigned int family, size_t n, uint64_t seed,
				       size_t *count, uint64_t *optimum)
{
	uint64_t s = seed * 0x2545f4914f6cdd1dull + family, cap;
	struct vnpu_plan_buffer *b = NULL;
	struct rect *r = NULL;

	if (family >= PGEN_FAMILIES || !n)
		return NULL;
	cap = capacity_units(&s);
	*count = n;
	switch (family) {
	case PGEN_GUILLOTINE:
		r = guillotine(&s, n, cap, count, 1, CUT_UNIFORM);
		break;
	case PGEN_GUILLOTINE_FINE:
		r = guillotine(&s, n, cap, count, 1000, CUT_UNIFORM);
		break;
	case PGEN_GUILLOTINE_AREA:
		r = guillotine(&s, n, cap, count, 1, CUT_AREA);
		break;
	case PGEN_GUILLOTINE_ASPECT:
		r = guillotine(&s, n, cap, count, 1, CUT_ASPECT);
		break;
	case PGEN_TILING:
		r = tiling(&s, n, cap, count);
		break;
	case PGEN_LADDER:
		r = ladder(&s, n, cap, count);
		break;
	case PGEN_CHAIN:
		b = chain(&s, n);
		break;
	default:
		b = random_trace(&s, n);
	}
	if (r) {
		b = to_buffers(r, *count);
		free(r);
		*optimum = cap * UNIT;
	} else if (b && vnpu_plan_bounds(b, n, NULL, optimum)) {
		free(b);
		b = NULL;
	}
	return b;
}

/* --- checker ------------------------------------------------------------------ */

static const struct vnpu_plan_buffer *sort_base;

static int by_first(const void *pa, const void *pb)
{
	const struct vnpu_plan_buffer *a = &sort_base[*(const size_t *)pa];
	const struct vnpu_plan_buffer *b = &sort_base[*(const size_t *)pb];

	return a->first < b->first ? -1 : a->first > b->first;
}

int pgen_check(const struct vnpu_plan_buffer *bufs, size_t n, uint64_t *arena)
{
	size_t *idx = malloc((n + 1) * sizeof(*idx)), *live = malloc((n + 1) * sizeof(*live));
	size_t nlive = 0;
	uint64_t top = 0;
	int bad = !idx || !live;

	for (size_t i = 0; !bad && i < n; i++) {
		const struct vnpu_plan_buffer *b = &bufs[i];

		idx[i] = i;
		if (b->alignment && b->offset % b->alignment)
			bad = 1;
		if (b->offset + b->size < b->offset)
			bad = 1;
		else if (b->offset + b->size > top)
			top = b->offset + b->size;
	}
	if (!bad) {
		sort_base = bufs;
		qsort(idx, n, sizeof(*idx), by_first);
	}
	/*
	 * In start order, each buffer against every buffer still alive at
	 * its start: quadratic in the live set, simple on purpose.
	 */
	for (size_t i = 0; !bad && i < n; i++) {
		const struct vnpu_plan_buffer *b = &bufs[idx[i]];
		size_t w = 0;

		for (size_t j = 0; j < nlive; j++) {
			const struct vnpu_plan_buffer *o = &bufs[live[j]];

			if (o->last <= b->first)
				continue;
			live[w++] = live[j];
			if (o->offset < b->offset + b->size && b->offset < o->offset + o->size)
				bad = 1;
		}
		nlive = w;
		live[nlive++] = idx[i];
	}
	free(idx);
	free(live);
	if (arena)
		*arena = top;
	return bad ? -1 : 0;
}
