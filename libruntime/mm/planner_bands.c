// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Band decomposition of perfect packings: the target equals the live
 * total in every section, so a plan at the target wastes nothing. Such an
 * instance often splits into smaller ones that are planned apart and put
 * together without loss:
 *
 * - a buffer live over the whole span of the instance goes at the bottom;
 *   the rest is a perfect packing of the width left;
 * - a section boundary no buffer crosses cuts the instance in time: each
 *   side is planned apart from the same base;
 * - a band: a set of buffers whose live total is the same in every section
 *   of the span. Bands that partition the instance are stacked, each in
 *   its own width, and the plan is perfect if each band's is.
 *
 * Bands are found from the boundaries. At a boundary t the buffers that
 * end free exactly the memory the buffers that start take, so a band's
 * buffers at t balance: its starters' sizes and its enders' sum the same.
 * Buffers are joined (union-find) into classes, and the classes are the
 * bands. At a boundary, the classes whose sums do not balance are joined
 * by the atoms of their sums (the least balanced subsets, by a subset sum
 * over at most BD_PARTS_MAX classes, met in the middle: 2 x 2^(N/2) sums,
 * not 2^N) when the atoms are disjoint: every
 * band is then a union of atoms, so the join is exact. Boundaries are
 * taken again as classes grow until none decides more. Then one boundary
 * is guessed (bd_form()): its split into the most atoms, or, with too
 * many classes to search, the largest class with the fewest others that
 * balance it, and so on (bd_split_wide()); the exact joins go on from
 * there. A wrong guess mostly takes an atom across two bands and joins
 * them (a lost split, not a wrong plan); a band that comes out above its
 * width joins the boundaries of its guesses whole, and the bands are
 * formed again, the lowest stack kept.
 *
 * A piece none of the three splits reaches is planned by the planner
 * itself (vnpu_plan_piece()) on a share of the time left; its plan may lie
 * above its width, and the pieces above it move up: the result is a valid
 * plan at the target or above it by what the pieces lose. On guillotine
 * packings whose cuts seldom meet in time (planner_gen.c,
 * "guillotine-fine") every piece is a buffer, and 6,000 buffers plan in
 * about 0.1 s; where many cuts fall on one boundary the sums coincide,
 * the bands merge, and large pieces are left to the searches.
 */
#include <stdlib.h>
#include <string.h>

#include "planner_search.h"
#include "vnpu.h"

/* Most unbalanced classes at one boundary whose atoms are searched. */
#define BD_PARTS_MAX 16
/* Most classes in one half of a boundary's (bd_balanced_sets()). */
#define BD_HALF_MAX ((BD_PARTS_MAX + 1) / 2)
/* Most balanced subsets of one boundary kept while finding its atoms. */
#define BD_BALANCED_MAX 512

/* A buffer id with a sort key. */
struct bd_kv {
	uint32_t key, id;
};

/* A boundary inside the span of an instance. */
struct bd_event {
	uint32_t t;		/* the boundary's section */
	uint32_t first, count;	/* its buffers: at[first .. first + count - 1] */
	uint8_t split;		/* split into more than one part (a guess) */
	uint8_t whole;		/* join all its buffers: a band failed along it */
	uint8_t done;		/* joined by bd_form() */
	uint8_t stuck;		/* bd_form() found it undecided: 1 atoms overlap, 2 wide */
	uint32_t stuck_c;	/* its unbalanced classes then */
	uint64_t sig;		/* and a hash of its classes then */
	uint64_t roots;		/* and of its buffers' classes: bd_roots() */
};

/* Slots of the table of bd_split_wide()'s splits (a power of two). */
#define BD_WIDE_SLOTS 512

/* A split of the sorted sums of a wide boundary's classes (bd_wide_lookup()). */
struct bd_wide {
	uint64_t key;
	uint32_t c;
	int64_t *v;		/* the sums, or NULL for an empty slot */
	uint32_t *group;	/* per sum, the index of its part's first (in v's block) */
};

struct bd {
	const struct sks_problem *pb;
	uint64_t *off;
	uint64_t deadline, *nodes;
	uint32_t *parent;	/* union-find over buffer ids */
	struct bd_half *half;	/* subset sums of each half of one boundary's classes */
	uint32_t *balanced;	/* balanced subsets of one boundary */
	struct vnpu_plan_buffer *sub;	/* a piece left to bd_leaf() */
	uint64_t rng;		/* 0, or the state that breaks ties of guesses */
	size_t guesses;		/* guesses of the last bd_form() */
	size_t left;		/* buffers not yet planned by bd_leaf() */
	struct bd_wide *wide;	/* BD_WIDE_SLOTS splits of wide boundaries */
	size_t wide_used, wide_sums;	/* slots taken; sums they hold */
};

static int bd_cmp(const void *a, const void *b)
{
	const struct bd_kv *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Orders @ids (@m buffers) by first section, @kv holding @m of scratch. */
static void bd_by_first(const struct sks_problem *pb, uint32_t *ids, size_t m, struct bd_kv *kv)
{
	for (size_t i = 0; i < m; i++)
		kv[i] = (struct bd_kv){ pb->t0[ids[i]], ids[i] };
	qsort(kv, m, sizeof(*kv), bd_cmp);
	for (size_t i = 0; i < m; i++)
		ids[i] = kv[i].id;
}

static uint32_t bd_find(struct bd *d, uint32_t x)
{
	while (d->parent[x] != x) {
		d->parent[x] = d->parent[d->parent[x]];
		x = d->parent[x];
	}
	return x;
}

static void bd_join(struct bd *d, uint32_t a, uint32_t b)
{
	a = bd_find(d, a);
	b = bd_find(d, b);
	if (a != b)
		d->parent[a < b ? b : a] = a < b ? a : b;
}

/* 1 with odds 1 in @ties when ties are broken at random (d->rng), else 0. */
static int bd_tie(struct bd *d, uint32_t ties)
{
	if (!d->rng)
		return 0;
	d->rng = vnpu_plan_mix64(d->rng);
	return d->rng % ties == 0;
}

/* Most atoms of one boundary, and search nodes spent on choosing among them. */
#define BD_ATOMS_MAX 64
#define BD_COVER_NODES 4096

/* Exact cover of @left by disjoint atoms, as many as can be: bd_parts(). */
struct bd_cover {
	struct bd *d;
	const uint32_t *atoms;
	uint32_t natoms, nodes, ties;
	uint32_t pick[BD_PARTS_MAX], best[BD_PARTS_MAX];
	uint32_t npick, nbest;
};

static void bd_cover(struct bd_cover *c, uint32_t left)
{
	uint32_t low;

	if (!left) {
		/* Of the covers with the most atoms, one at random when d->rng. */
		if (c->npick == c->nbest && !bd_tie(c->d, ++c->ties))
			return;
		if (c->npick > c->nbest)
			c->ties = 1;
		if (c->npick >= c->nbest) {
			memcpy(c->best, c->pick, c->npick * sizeof(*c->pick));
			c->nbest = c->npick;
		}
		return;
	}
	low = left & -left;
	for (uint32_t i = 0; i < c->natoms && c->nodes; i++)
		if ((c->atoms[i] & low) && !(c->atoms[i] & ~left)) {
			c->nodes--;
			c->pick[c->npick++] = c->atoms[i];
			bd_cover(c, left & ~c->atoms[i]);
			c->npick--;
		}
}

/*
 * The parts of @k items given the subsets that balance (d->balanced,
 * @nbal of them, neither empty nor all): @lab gets a part number for each
 * item. The parts are the atoms (least balanced subsets) when these are
 * disjoint (every balanced subset is then a union of them). When they
 * overlap, the items may be split in more than one way: 0 is returned
 * (not decided) unless @guess, which takes a split into the most atoms.
 * Returns the number of parts; 1 (all in part 0) when there are too many
 * atoms to choose from.
 */
static uint8_t bd_parts(struct bd *d, uint32_t k, uint32_t nbal, uint8_t *lab, int guess)
{
	uint32_t natoms = 0, atoms[BD_ATOMS_MAX], cover = 0;
	struct bd_cover c = { .d = d, .atoms = atoms, .nodes = BD_COVER_NODES };

	memset(lab, 0, k);
	for (uint32_t i = 0; i < nbal; i++) {
		uint32_t m = d->balanced[i], least = 1;

		for (uint32_t j = 0; j < nbal && least; j++)
			least = d->balanced[j] == m || (d->balanced[j] & ~m);
		if (!least)
			continue;
		if (natoms == BD_ATOMS_MAX)
			return guess;
		atoms[natoms++] = m;
	}
	if (natoms < 2)
		return 1;
	for (uint32_t i = 0; i < natoms; i++) {
		if (cover & atoms[i]) {
			if (!guess)
				return 0;
			c.natoms = natoms;
			bd_cover(&c, (1u << k) - 1);
			if (!c.nbest)
				return 1;
			natoms = c.nbest;
			memcpy(atoms, c.best, natoms * sizeof(*atoms));
			break;
		}
		cover |= atoms[i];
	}
	for (uint32_t i = 0; i < natoms; i++)
		for (uint32_t b = 0; b < k; b++)
			if (atoms[i] & (1u << b))
				lab[b] = (uint8_t)i;
	return (uint8_t)natoms;
}

/* A subset sum of one half of a boundary's classes, with its subset. */
struct bd_half {
	int64_t sum;
	uint32_t mask;
};

static int bd_half_cmp(const void *pa, const void *pb)
{
	const struct bd_half *a = pa, *b = pb;

	if (a->sum != b->sum)
		return a->sum < b->sum ? -1 : 1;
	return a->mask < b->mask ? -1 : a->mask > b->mask;
}

/* Every subset sum of @v[0 .. @k - 1] into @out (2^@k of them), by subset. */
static void bd_half_sums(const int64_t *v, uint32_t k, struct bd_half *out)
{
	out[0] = (struct bd_half){ 0, 0 };
	for (uint32_t m = 1; m < (1u << k); m++)
		out[m] = (struct bd_half){ out[m & (m - 1)].sum + v[__builtin_ctz(m)], m };
}

/*
 * The subsets of @k classes (neither empty nor all) whose sums at one
 * boundary, @v, add up to 0, into d->balanced in increasing order: their
 * count, or -1 if more than BD_BALANCED_MAX. Meet in the middle: the
 * subset sums of each half of the classes (2^(k/2) each), the low half
 * sorted by sum, and each sum of the high half looked up negated in it.
 */
static int bd_balanced_sets(struct bd *d, const int64_t *v, uint32_t k)
{
	uint32_t low = k / 2, high = k - low, all = (1u << k) - 1, nbal = 0;
	struct bd_half *lo = d->half, *hi = d->half + (1u << BD_HALF_MAX);

	bd_half_sums(v, low, lo);
	bd_half_sums(v + low, high, hi);
	qsort(lo, 1u << low, sizeof(*lo), bd_half_cmp);
	/* High half outside, low half (masks rising within a sum) inside: in order. */
	for (uint32_t b = 0; b < (1u << high); b++) {
		uint32_t first = 0, last = 1u << low;

		/* The first of lo whose sum is at least -hi[b].sum. */
		while (first < last) {
			uint32_t mid = first + (last - first) / 2;

			if (lo[mid].sum < -hi[b].sum)
				first = mid + 1;
			else
				last = mid;
		}
		for (; first < (1u << low) && lo[first].sum == -hi[b].sum; first++) {
			uint32_t m = lo[first].mask | b << low;

			if (!m || m == all)
				continue;
			if (nbal == BD_BALANCED_MAX)
				return -1;
			d->balanced[nbal++] = m;
		}
	}
	return (int)nbal;
}

static int bd_solve(struct bd *d, uint32_t *ids, size_t m, uint64_t width, uint64_t base,
		    uint64_t *height);

/*
 * A piece none of the splits reaches: planned by the planner itself
 * (vnpu_plan_piece(), which finds nothing to split in it) on a share of
 * the time left in proportion to its buffers. *@height is the top of its
 * plan above @base: @width when perfect.
 */
static int bd_leaf(struct bd *d, const uint32_t *ids, size_t m, uint64_t base, uint64_t *height)
{
	uint64_t now = vnpu_plan_now();
	unsigned int ms = 0;

	/* Nothing split: the caller's searches see the same instance. */
	if (m == d->pb->n)
		return SKS_INFEASIBLE;
	/*
	 * Past the deadline, pieces still get a plan (1 ms of search after
	 * the greedy plans). Pieces planned again after a band failed may
	 * have used up the count.
	 */
	if (now < d->deadline)
		ms = (unsigned int)((d->deadline - now) / 1000000u * (m < d->left ? m : 1) /
				    (m < d->left ? d->left : 1));
	d->left -= m < d->left ? m : d->left - 1;
	return vnpu_plan_leaf(d->pb, ids, m, base, ms, d->sub, d->off, d->nodes, height);
}


/*
 * A hash of the class of each buffer of boundary @e, in any order: when it
 * is the same as when the boundary was found undecided, so are its
 * classes, and they need not be sorted again.
 */
static uint64_t bd_roots(struct bd *d, const struct bd_event *e, const uint32_t *at)
{
	uint64_t h = 0;

	for (uint32_t x = 0; x < e->count; x++)
		h += vnpu_plan_mix64(((uint64_t)bd_find(d, at[e->first + x]) << 32) |
				     at[e->first + x]);
	return h;
}

/* The buffers of boundary @e into @cls, by class (union-find root). */
static void bd_sort_classes(struct bd *d, const struct bd_event *e, const uint32_t *at,
			    struct bd_kv *cls)
{
	for (uint32_t x = 0; x < e->count; x++)
		cls[x] = (struct bd_kv){ bd_find(d, at[e->first + x]), at[e->first + x] };
	qsort(cls, e->count, sizeof(*cls), bd_cmp);
}

/*
 * Of the class whose buffers start at cls[@x] (@cls by class, @k of them)
 * at boundary @e: its starters' sizes less its enders'; the index after
 * it in *@end.
 */
static int64_t bd_class_net(const struct sks_problem *pb, const struct bd_event *e,
			    const struct bd_kv *cls, uint32_t k, uint32_t x, uint32_t *end)
{
	int64_t net = 0;
	uint32_t y;

	for (y = x; y < k && cls[y].key == cls[x].key; y++)
		net += pb->t0[cls[y].id] == e->t ? (int64_t)pb->size[cls[y].id] :
		       -(int64_t)pb->size[cls[y].id];
	*end = y;
	return net;
}

/*
 * The classes at boundary @e (buffers already joined): the unbalanced
 * ones' sums into @v and a buffer of each into @rep (up to BD_PARTS_MAX),
 * the balanced ones counted in *@balanced, a hash of all of them in
 * *@sig. Returns the unbalanced count.
 */
static uint32_t bd_classes(struct bd *d, const struct bd_event *e, const uint32_t *at,
			   struct bd_kv *cls, int64_t *v, uint32_t *rep, uint32_t *balanced,
			   uint64_t *sig)
{
	const struct sks_problem *pb = d->pb;
	uint32_t k = e->count, c = 0;

	*balanced = 0;
	*sig = 0;
	bd_sort_classes(d, e, at, cls);
	for (uint32_t x = 0, y; x < k; x = y) {
		int64_t net = bd_class_net(pb, e, cls, k, x, &y);

		*sig = vnpu_plan_mix64(*sig ^ vnpu_plan_mix64(cls[x].key + ((uint64_t)net << 32)));
		if (!net) {
			(*balanced)++;
			continue;
		}
		if (c < BD_PARTS_MAX) {
			v[c] = net;
			rep[c] = cls[x].key;
		}
		c++;
	}
	return c;
}

/* A class of a wide boundary: its sum and a buffer of it (bd_split_wide()). */
struct bd_side {
	int64_t v;
	uint32_t rep, i;
};

static int bd_side_cmp(const void *pa, const void *pb)
{
	const struct bd_side *a = pa, *b = pb;

	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/*
 * Two classes of @s (@n, sorted by sum, those marked in @gone and @skip
 * left out) summing to @want: their indexes in *@x and *@y, 1 if found.
 */
static int bd_pair(const struct bd_side *s, uint32_t n, const uint8_t *gone, uint32_t skip,
		   int64_t want, uint32_t *x, uint32_t *y)
{
	uint32_t a = 0, b = n;

	while (a + 1 < b) {
		int64_t sum;

		if (gone[a] || a == skip) {
			a++;
			continue;
		}
		if (gone[b - 1] || b - 1 == skip) {
			b--;
			continue;
		}
		sum = s[a].v + s[b - 1].v;
		if (sum == want) {
			*x = a;
			*y = b - 1;
			return 1;
		}
		if (sum < want)
			a++;
		else
			b--;
	}
	return 0;
}

/*
 * The first three of @c sorted sums not @gone in @lo, the last three in
 * @hi (UINT32_MAX where there are fewer).
 */
static void bd_live_ends(uint32_t c, const uint8_t *gone, uint32_t *lo, uint32_t *hi)
{
	uint32_t nlo = 0, nhi = 0;

	for (uint32_t i = 0; i < c && nlo < 3; i++)
		if (!gone[i])
			lo[nlo++] = i;
	for (uint32_t i = c; i-- > 0 && nhi < 3;)
		if (!gone[i])
			hi[nhi++] = i;
	for (; nlo < 3; nlo++)
		lo[nlo] = UINT32_MAX;
	for (; nhi < 3; nhi++)
		hi[nhi] = UINT32_MAX;
}

/*
 * The sum of the first two of @end (from bd_live_ends()) other than
 * @skip: the least (or greatest) sum of two sums but @skip's. INT64_MAX
 * without two, which no pair's sum reaches.
 */
static int64_t bd_end_sum(const struct bd_side *s, const uint32_t *end, uint32_t skip)
{
	int64_t sum = 0;
	int k = 0;

	for (int x = 0; x < 3 && k < 2; x++)
		if (end[x] != UINT32_MAX && end[x] != skip) {
			sum += s[end[x]].v;
			k++;
		}
	return k == 2 ? sum : INT64_MAX;
}

/*
 * The parts of bd_split_wide(): of the @c sums of @s (sorted), the one of
 * largest size first, with one, two or three others that balance it
 * (fewest first), and so on; those no such few balance form the last
 * part. Each sum's part in @group, as the index of the part's first sum;
 * @gone is scratch.
 */
static void bd_wide_parts(const struct bd_side *s, uint32_t c, uint8_t *gone, uint32_t *group)
{
	uint32_t left = UINT32_MAX, lo[3], hi[3];

	memset(gone, 0, c);
	for (;;) {
		uint32_t big = UINT32_MAX, x = 0, y = 0, z = UINT32_MAX;
		int found = 0;

		for (uint32_t i = 0; i < c; i++)
			if (!gone[i] && (big == UINT32_MAX || (s[i].v < 0 ? -s[i].v : s[i].v) >
							     (s[big].v < 0 ? -s[big].v : s[big].v)))
				big = i;
		if (big == UINT32_MAX)
			break;
		gone[big] = 1;
		group[big] = big;
		for (uint32_t i = 0; i < c && !found; i++)
			if (!gone[i] && s[i].v == -s[big].v) {
				x = i;
				found = 1;
			}
		if (found) {
			gone[x] = 1;
			group[x] = big;
			continue;
		}
		found = bd_pair(s, c, gone, UINT32_MAX, -s[big].v, &x, &y);
		if (!found)
			bd_live_ends(c, gone, lo, hi);
		for (uint32_t i = 0; i < c && !found; i++) {
			int64_t want = -s[big].v - s[i].v;

			/* No pair of the others reaches that sum: no search. */
			if (gone[i] || want < bd_end_sum(s, lo, i) || want > bd_end_sum(s, hi, i))
				continue;
			found = bd_pair(s, c, gone, i, want, &x, &y);
			z = i;
		}
		if (!found) {
			/* Left for the last part. */
			if (left == UINT32_MAX)
				left = big;
			group[big] = left;
			continue;
		}
		gone[x] = 1;
		gone[y] = 1;
		group[x] = big;
		group[y] = big;
		if (z != UINT32_MAX) {
			gone[z] = 1;
			group[z] = big;
		}
	}
}

/* The key of @c sorted sums of @s. */
static uint64_t bd_wide_key(const struct bd_side *s, uint32_t c)
{
	uint64_t h = c;

	for (uint32_t i = 0; i < c; i++)
		h = vnpu_plan_mix64(h ^ (uint64_t)s[i].v);
	return h;
}

/*
 * The parts of the @c sorted sums of @s, from d->wide when the same sums
 * were split before in this run (bd_form() meets the same boundaries
 * again on every try: guillotine 6,000 seed 2,901 splits 2,712 times, 228
 * distinct), else by bd_wide_parts() into @group (@gone its scratch),
 * and kept while the table has room and memory allows.
 */
static const uint32_t *bd_wide_lookup(struct bd *d, const struct bd_side *s, uint32_t c,
				      uint8_t *gone, uint32_t *group)
{
	uint64_t key = bd_wide_key(s, c);
	uint32_t slot = (uint32_t)key & (BD_WIDE_SLOTS - 1);
	struct bd_wide *w;

	for (;; slot = (slot + 1) & (BD_WIDE_SLOTS - 1)) {
		w = &d->wide[slot];
		if (!w->v)
			break;
		if (w->key != key || w->c != c)
			continue;
		for (uint32_t i = 0; i < c && w; i++)
			if (w->v[i] != s[i].v)
				w = NULL;
		if (w)
			return w->group;
	}
	bd_wide_parts(s, c, gone, group);
	/* At most half the slots, and sums as many as the instance's buffers. */
	if (2 * (d->wide_used + 1) > BD_WIDE_SLOTS || d->wide_sums + c > d->pb->n)
		return group;
	w->v = malloc(c * (sizeof(*w->v) + sizeof(*w->group)));
	if (!w->v)
		return group;
	w->group = (uint32_t *)(w->v + c);
	w->key = key;
	w->c = c;
	for (uint32_t i = 0; i < c; i++)
		w->v[i] = s[i].v;
	memcpy(w->group, group, c * sizeof(*group));
	d->wide_used++;
	d->wide_sums += c;
	return group;
}

/*
 * Splits the classes of boundary @e whose starters and enders do not
 * balance (more than BD_PARTS_MAX of them) into balanced parts, a guess
 * (bd_wide_parts()). A piece of free space is mostly one large class
 * against a few, where coincidences are rare. Returns -1 without memory.
 */
static int bd_split_wide(struct bd *d, const struct bd_event *e, const uint32_t *at,
			 struct bd_kv *cls)
{
	const struct sks_problem *pb = d->pb;
	uint32_t k = e->count, c = 0;
	struct bd_side *s = malloc(k * sizeof(*s));
	uint8_t *gone = malloc(k);
	uint32_t *group = malloc(k * sizeof(*group));
	const uint32_t *parts;
	int r = -1;

	if (!s || !gone || !group)
		goto out;
	bd_sort_classes(d, e, at, cls);
	for (uint32_t x = 0, y; x < k; x = y) {
		int64_t net = bd_class_net(pb, e, cls, k, x, &y);

		if (net) {
			s[c] = (struct bd_side){ net, cls[x].key, c };
			c++;
		}
	}
	qsort(s, c, sizeof(*s), bd_side_cmp);
	parts = bd_wide_lookup(d, s, c, gone, group);
	for (uint32_t i = 0; i < c; i++)
		bd_join(d, s[parts[i]].rep, s[i].rep);
	r = 0;
out:
	free(s);
	free(gone);
	free(group);
	return r;
}

/*
 * Boundary @e (index @i), undecided: the widest of too many classes and
 * the ambiguous one of fewest so far are kept, as bd_form() guesses them.
 */
static void bd_note_stuck(const struct bd_event *e, size_t i, size_t *widest,
			  uint32_t *widest_c, size_t *ambiguous, uint32_t *ambiguous_c)
{
	if (e->stuck == 2 && e->stuck_c > *widest_c) {
		*widest_c = e->stuck_c;
		*widest = i;
	} else if (e->stuck == 1 && e->stuck_c < *ambiguous_c) {
		*ambiguous_c = e->stuck_c;
		*ambiguous = i;
	}
}

/* Joins the classes of @rep (@c of them) that bd_parts() put in one part (@lab). */
static void bd_join_parts(struct bd *d, const uint32_t *rep, const uint8_t *lab, uint32_t c)
{
	for (uint32_t x = 1; x < c; x++)
		for (uint32_t y = 0; y < x; y++)
			if (lab[x] == lab[y]) {
				bd_join(d, rep[x], rep[y]);
				break;
			}
}

/*
 * Joins (union-find over @ids) the buffers that share a band by the
 * boundaries @ev. A boundary's buffers fall into classes, those already
 * joined; a class whose starters and enders balance is a part on its own,
 * the others are joined by their atoms when these are disjoint (exact:
 * bd_parts()), over and over as the classes grow. When no boundary
 * decides any more, one is guessed: of those whose atoms overlap, the one
 * of fewest classes takes its split into the most atoms; else the one of
 * the most classes is split by bd_split_wide(). A wrong guess mostly
 * takes an atom across two bands and joins them; guessed boundaries are
 * marked split, so that a band that fails joins them whole (as marked
 * whole here) when the bands are formed again. Returns 0, 1 past the
 * deadline, -1 without memory.
 */
static int bd_form(struct bd *d, const uint32_t *ids, size_t m, struct bd_event *ev, size_t nev,
		   const uint32_t *at, struct bd_kv *cls)
{
	int64_t v[BD_PARTS_MAX];
	uint32_t rep[BD_PARTS_MAX], balanced, c;
	uint8_t lab[BD_PARTS_MAX];
	uint64_t sig, roots;

	for (size_t x = 0; x < m; x++)
		d->parent[ids[x]] = ids[x];
	for (size_t e = 0; e < nev; e++) {
		ev[e].done = ev[e].whole;
		ev[e].split = 0;
		ev[e].stuck = 0;
		for (uint32_t x = 1; ev[e].whole && x < ev[e].count; x++)
			bd_join(d, at[ev[e].first], at[ev[e].first + x]);
	}
	for (int changed = 1; changed;) {
		size_t widest = SIZE_MAX, ambiguous = SIZE_MAX;
		uint32_t widest_c = 0, ambiguous_c = UINT32_MAX;
		int nbal;

		if (vnpu_plan_tick(BD_ROUND_TICK_NS) > d->deadline)
			return 1;
		changed = 0;
		for (size_t e = 0; e < nev; e++) {
			uint8_t parts = 0;

			if (ev[e].done)
				continue;
			roots = bd_roots(d, &ev[e], at);
			if (ev[e].stuck && ev[e].roots == roots) {
				bd_note_stuck(&ev[e], e, &widest, &widest_c, &ambiguous, &ambiguous_c);
				continue;
			}
			ev[e].roots = roots;
			c = bd_classes(d, &ev[e], at, cls, v, rep, &balanced, &sig);
			/* Undecided with the same classes as before: still so. */
			if (ev[e].stuck && ev[e].sig == sig) {
				bd_note_stuck(&ev[e], e, &widest, &widest_c, &ambiguous, &ambiguous_c);
				continue;
			}
			ev[e].sig = sig;
			ev[e].stuck_c = c;
			ev[e].stuck = 2;
			if (c > BD_PARTS_MAX) {
				bd_note_stuck(&ev[e], e, &widest, &widest_c, &ambiguous, &ambiguous_c);
				continue;
			}
			if (c) {
				nbal = bd_balanced_sets(d, v, c);
				parts = nbal < 0 ? 0 : bd_parts(d, c, (uint32_t)nbal, lab, 0);
				if (!parts) {
					ev[e].stuck = 1;
					bd_note_stuck(&ev[e], e, &widest, &widest_c, &ambiguous,
						      &ambiguous_c);
					continue;
				}
			}
			bd_join_parts(d, rep, lab, c);
			ev[e].split = 0;
			ev[e].done = 1;
			changed = 1;
		}
		if (changed)
			continue;
		/*
		 * Stuck: the boundary of fewest classes whose atoms overlap takes
		 * its split into the most atoms, a guess (a wrong one mostly
		 * joins two bands: an atom taken across them).
		 */
		if (ambiguous != SIZE_MAX) {
			c = bd_classes(d, &ev[ambiguous], at, cls, v, rep, &balanced, &sig);
			nbal = bd_balanced_sets(d, v, c);
			if (nbal < 0)
				memset(lab, 0, sizeof(lab));
			else
				bd_parts(d, c, (uint32_t)nbal, lab, 1);
			bd_join_parts(d, rep, lab, c);
			ev[ambiguous].split = 1;
			d->guesses++;
			ev[ambiguous].done = 1;
			changed = 1;
			continue;
		}
		/* Or the boundary of the most unbalanced classes: a guess too. */
		if (widest == SIZE_MAX)
			break;
		if (bd_split_wide(d, &ev[widest], at, cls))
			return -1;
		ev[widest].split = 1;
		d->guesses++;
		ev[widest].done = 1;
		changed = 1;
	}
	return 0;
}

/* Tries of bd_form() when its guesses leave one band: bd_bands(). */
#define BD_TRIES 8

/* 1 when @ids (@m buffers) are all joined. */
static int bd_one_band(struct bd *d, const uint32_t *ids, size_t m)
{
	for (size_t x = 1; x < m; x++)
		if (bd_find(d, ids[x]) != bd_find(d, ids[0]))
			return 0;
	return 1;
}

/*
 * Bands of @ids (sorted by first section, none live over the whole span
 * [@t0, @t1), no time cut), each planned by bd_solve() and stacked;
 * *@height is their total height. A band above its width joins the
 * boundaries its classes were split along by a guess, and the bands are
 * formed again; the lowest stack is kept. With one band: bd_leaf().
 */
static int bd_bands(struct bd *d, uint32_t *ids, size_t m, uint64_t width, uint64_t base,
		    uint32_t t0, uint32_t t1, uint64_t *height)
{
	const struct sks_problem *pb = d->pb;
	struct bd_kv *by_end = malloc(m * sizeof(*by_end)), *by_band = NULL;
	struct bd_event *ev = malloc(2 * m * sizeof(*ev));
	uint32_t *at = malloc(2 * m * sizeof(*at));
	struct bd_kv *cls = malloc(2 * m * sizeof(*cls));
	uint64_t *kept = NULL, best = UINT64_MAX;
	int tried = 0;
	uint32_t *kept_id = NULL;
	size_t nev = 0, nat = 0, i = 0, j = 0;
	int r = SKS_NOMEM;

	if (!by_end || !ev || !at || !cls)
		goto out;
	for (size_t x = 0; x < m; x++)
		by_end[x] = (struct bd_kv){ pb->t1[ids[x]], ids[x] };
	qsort(by_end, m, sizeof(*by_end), bd_cmp);
	/* The boundaries inside the span, with their starters then enders. */
	while (i < m && pb->t0[ids[i]] == t0)
		i++;
	while (i < m || (j < m && by_end[j].key < t1)) {
		uint32_t t = j < m ? by_end[j].key : t1, k = 0;
		struct bd_event *e = &ev[nev++];

		if (i < m && pb->t0[ids[i]] < t)
			t = pb->t0[ids[i]];
		e->first = (uint32_t)nat;
		e->t = t;
		for (; i < m && pb->t0[ids[i]] == t; i++, k++)
			at[nat++] = ids[i];
		for (; j < m && by_end[j].key == t; j++, k++)
			at[nat++] = by_end[j].id;
		e->count = k;
		e->whole = 0;
	}
	by_band = malloc(m * sizeof(*by_band));
	kept = malloc(m * sizeof(*kept));
	kept_id = malloc(m * sizeof(*kept_id));
	if (!by_band || !kept || !kept_id)
		goto out;
	for (;;) {
		size_t bands = 0, start = 0;
		uint32_t failed_root = UINT32_MAX;
		uint64_t top = 0;
		int joined = 0;

		d->guesses = 0;
		r = bd_form(d, ids, m, ev, nev, at, cls);
		/*
		 * Guesses that left one band (a wrong one joins two): again, of
		 * the splits into the most atoms one at random, until one splits.
		 */
		for (unsigned int try = 1; !r && best == UINT64_MAX && d->guesses &&
		     try < BD_TRIES && bd_one_band(d, ids, m); try++) {
			d->rng = vnpu_plan_mix64(0x6a09e667f3bcc909ull + try);
			d->guesses = 0;
			r = bd_form(d, ids, m, ev, nev, at, cls);
			d->rng = 0;
			tried = 1;
		}
		if (r < 0) {
			r = SKS_NOMEM;
			goto out;
		}
		/* Past the deadline: no bands, or the lowest stack so far. */
		if (r > 0 && best != UINT64_MAX)
			break;
		if (r > 0)
			for (size_t x = 0; x < m; x++)
				d->parent[ids[x]] = ids[0];
		for (size_t x = 0; x < m; x++)
			by_band[x] = (struct bd_kv){ bd_find(d, ids[x]), ids[x] };
		qsort(by_band, m, sizeof(*by_band), bd_cmp);
		for (size_t x = 0; x < m; x++) {
			ids[x] = by_band[x].id;
			bands += !x || by_band[x].key != by_band[x - 1].key;
		}
		if (bands == 1 && best == UINT64_MAX) {
			/* Back in order of first sections for the planner. */
			bd_by_first(pb, ids, m, by_band);
			r = bd_leaf(d, ids, m, base, height);
			goto out;
		}
		if (bands == 1)
			break;
		/* Each band in its own width: its total at the first section. */
		while (start < m) {
			size_t end = start;
			uint64_t w = 0, h;

			while (end < m && by_band[end].key == by_band[start].key) {
				if (pb->t0[by_band[end].id] == t0)
					w += pb->size[by_band[end].id];
				end++;
			}
			r = bd_solve(d, ids + start, end - start, w, base + top, &h);
			if (r != SKS_FOUND)
				goto out;
			if (h > w && failed_root == UINT32_MAX)
				failed_root = by_band[start].key;
			top += h;
			start = end;
		}
		if (top < best) {
			best = top;
			for (size_t x = 0; x < m; x++) {
				kept_id[x] = ids[x];
				kept[x] = d->off[ids[x]];
			}
		}
		if (top <= width)
			break;
		/* Join the split boundaries the first band above its width takes part in. */
		for (size_t x = 0; x < m; x++)
			d->parent[ids[x]] = by_band[x].key;
		for (size_t e = 0; e < nev; e++) {
			if (!ev[e].split || ev[e].whole)
				continue;
			for (uint32_t x = 0; x < ev[e].count && !ev[e].whole; x++)
				if (d->parent[at[ev[e].first + x]] == failed_root) {
					ev[e].whole = 1;
					joined = 1;
				}
		}
		if (!joined)
			break;
	}
	/*
	 * A split found by a try that lies above the width: the piece as one
	 * band (the planner on all of it) may do better; the lower is kept.
	 * The offsets of the split are written back below otherwise.
	 */
	if (tried && best > width) {
		uint64_t h;

		bd_by_first(pb, ids, m, by_band);
		r = bd_leaf(d, ids, m, base, &h);
		if (r == SKS_NOMEM)
			goto out;
		/* (The whole instance is left to the caller: SKS_INFEASIBLE.) */
		if (r == SKS_FOUND && h < best) {
			*height = h;
			goto out;
		}
	}
	for (size_t x = 0; x < m; x++)
		d->off[kept_id[x]] = kept[x];
	r = SKS_FOUND;
	*height = best;
out:
	free(by_end);
	free(by_band);
	free(ev);
	free(at);
	free(cls);
	free(kept);
	free(kept_id);
	return r;
}

/*
 * Plans @ids (@m buffers, reordered in place) from @base up, where their
 * live total is @width in every section of their span; *@height is the
 * top of the plan above @base, @width when it is perfect. Returns
 * SKS_FOUND, SKS_INFEASIBLE (nothing split at all: bd_leaf()) or
 * SKS_NOMEM.
 */
static int bd_solve(struct bd *d, uint32_t *ids, size_t m, uint64_t width, uint64_t base,
		    uint64_t *height)
{
	const struct sks_problem *pb = d->pb;
	uint32_t span[2];
	uint64_t bottom, top = 0;
	struct bd_kv *kv;
	size_t k, start = 0, cut;

	(*d->nodes)++;
	/* Buffers live over the whole span, at the bottom. */
	k = vnpu_plan_span_bottom(pb, ids, m, base, d->off, span, &bottom);
	ids += k;
	m -= k;
	*height = bottom;
	if (!m)
		return SKS_FOUND;
	width = width > bottom ? width - bottom : 0;
	kv = malloc(m * sizeof(*kv));
	if (!kv)
		return SKS_NOMEM;
	bd_by_first(pb, ids, m, kv);
	free(kv);
	if (vnpu_plan_time_piece(pb, ids, 0, m) == m) {
		int r = bd_bands(d, ids, m, width, base + bottom, span[0], span[1], &top);

		*height = bottom + top;
		return r;
	}
	for (; start < m; start = cut) {
		uint64_t h;
		int r;

		cut = vnpu_plan_time_piece(pb, ids, start, m);
		r = bd_solve(d, ids + start, cut - start, width, base + bottom, &h);
		if (r != SKS_FOUND)
			return r;
		if (h > top)
			top = h;
	}
	*height = bottom + top;
	return SKS_FOUND;
}

int pbd_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline, uint64_t *off,
	    uint64_t *nodes)
{
	struct bd d = { .pb = pb, .off = off, .deadline = deadline, .nodes = nodes,
			.left = pb->n };
	uint32_t *ids = malloc((pb->n + 1) * sizeof(*ids));
	uint64_t unit, height;
	size_t n = pb->n;
	int r = SKS_NOMEM;

	/* Offsets are sums of sizes: aligned if every alignment divides them. */
	if (!vnpu_plan_perfect(pb, target, &unit))
		goto infeasible;
	d.parent = malloc((n + 1) * sizeof(*d.parent));
	d.half = malloc(sizeof(*d.half) << (BD_HALF_MAX + 1));
	d.balanced = malloc(BD_BALANCED_MAX * sizeof(*d.balanced));
	d.sub = malloc((n + 1) * sizeof(*d.sub));
	d.wide = calloc(BD_WIDE_SLOTS, sizeof(*d.wide));
	if (!ids || !d.parent || !d.half || !d.balanced || !d.sub || !d.wide)
		goto out;
	for (size_t i = 0; i < n; i++)
		ids[i] = (uint32_t)i;
	r = n ? bd_solve(&d, ids, n, target, 0, &height) : SKS_FOUND;
	goto out;
infeasible:
	r = SKS_INFEASIBLE;
out:
	free(ids);
	free(d.parent);
	free(d.half);
	free(d.balanced);
	free(d.sub);
	for (size_t i = 0; d.wide && i < BD_WIDE_SLOTS; i++)
		free(d.wide[i].v);
	free(d.wide);
	return r;
}
