// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Strip search: an AND-OR search for a perfect packing (the target equals
 * the live total in every section) that takes a piece apart the way a
 * guillotine packing is built.
 *
 * A piece is a set of buffers over a span of sections whose live total
 * is the same (its height) in every section. It packs when
 *  - a buffer spans it: the buffer goes at the bottom, the rest above;
 *  - a section boundary inside it is crossed by none of its buffers: the
 *    two sides pack on their own, at the same height (a time cut);
 *  - it splits into two pieces (strips), each constant over the whole
 *    span, that pack on their own: one is stacked on the other.
 * The first two are forced and lose nothing. The third is the search: a
 * strip is found by picking, node by node (section boundaries), subsets
 * of the buffers that end or start there whose sizes balance, and both
 * strips are then solved recursively (AND); the strips tried for a piece
 * are the alternatives (OR). A set of buffers that failed is remembered,
 * so a piece met again through other strips fails at once.
 *
 * Four rules shrink the strip search. Buffers that must share a strip
 * are merged first: at a node where the buffers meeting there (grouped
 * by what is merged already) have no proper subset that balances, all
 * of them are in the same strip, in every split. Every decision is
 * propagated to the nodes it touches: a group in every subset of the
 * open groups there that cancels the imbalance is decided in, in none
 * out, and a node none cancels ends the branch (every subset tried for a
 * few groups, else an exact subset sum over a bitset, in units of the
 * sizes' common divisor). And the node decided next is the one with the
 * fewest such subsets. Of identical buffers (same span, same size) one
 * is taken only if those before it are: the others' choices are the same.
 *
 * The search is complete for guillotine packings up to its step budgets
 * per strip search and its cap on a strip's buffers, both growing in
 * rounds, over several starting groups; a piece given up on within them
 * counts as failed.
 */
#include <stdlib.h>
#include <string.h>

#include "planner_search.h"

/* Starting groups (pivots) per piece, and the first strip budget in steps. */
#define STS_PIVOTS 32
#define STS_BUDGET_FIRST 1000
/*
 * Cap on the buffers of a strip in the first round; it doubles per round
 * (iterative deepening: a strip that took a wrong subset mostly has to
 * grow into the strips around it to balance, so small strips come first).
 */
#define STS_CAP_FIRST 64
/* Budgets grow fourfold per round while some pivot ran out, up to this. */
#define STS_BUDGET_MAX 1000000
/* Open groups at a node up to which propagation tries every subset. */
#define STS_EXACT VNPU_PLAN_BALANCE_MAX
/* Subset sums over wider ranges (in units) are not checked. */
#define STS_SUMS_MAX (1u << 20)

/* The search's state, shared by the pieces' recursion. */
struct sts {
	const struct sks_problem *pb;
	uint64_t deadline, unit, *off, *nodes, steps;
	/* Random key per buffer: a set's key is the sum of its members'. */
	uint64_t *key;
	/* Keys of the sets that failed (open addressing, 0 = empty). */
	uint64_t *failed;
	size_t failed_cap, failed_count;
	/* Union-find scratch of one piece's merge, by local index. */
	uint32_t *uf;
	/* Subset-sum scratch: two bitsets of bits_cap words each. */
	uint64_t *bits;
	size_t bits_cap;
	int stop;	/* SKS_TIMEOUT or SKS_NOMEM once the search must end */
};

/* A group's (or buffer's) net size at one node: + ends there, - starts. */
struct sts_item {
	uint32_t id;
	int64_t net;
};

/* The strip search of one piece over its merged groups. */
struct sts_piece {
	struct sts *s;
	const uint32_t *ids;
	size_t k;
	uint32_t a, b, nn, m;	/* span [a, b), nn = b - a nodes, m groups */
	uint64_t h, base;
	int64_t *imb;		/* imbalance per local node: + ends, - starts */
	uint32_t *node_first, *group_first, *buf_first;	/* CSR starts */
	struct sts_item *node_items;	/* per node: (group, net) */
	struct sts_item *group_items;	/* per group: (node, net) */
	uint32_t *group_bufs;		/* per group: buffer ids */
	uint32_t *twin;			/* per group: an identical one-buffer group before it, or none */
	int8_t *state;			/* per group: 0 open, 1 in, -1 out */
	uint32_t *trail;		/* groups decided, in order, to undo */
	size_t trail_len;
	uint32_t *dirty;		/* nodes to check again, and their flags */
	size_t dirty_len;
	uint8_t *is_dirty;
	uint32_t *ways;			/* per node: subsets that cancel it, at its last check */
	int64_t *scratch;
	uint32_t *xs, *rest;
	uint64_t steps, budget;
	size_t in_bufs, max_bufs;	/* buffers in the strip, and the cap */
};

static int sts_solve(struct sts *s, uint32_t *ids, size_t k, uint32_t a, uint32_t b,
		     uint64_t h, uint64_t base);

static uint64_t sts_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static uint64_t sts_set_key(const struct sts *s, const uint32_t *ids, size_t k)
{
	uint64_t key = 0x9e3779b97f4a7c15ull * k;

	for (size_t i = 0; i < k; i++)
		key += s->key[ids[i]];
	return key | 1;
}

static int sts_failed(const struct sts *s, uint64_t key)
{
	for (size_t i = key & (s->failed_cap - 1);; i = (i + 1) & (s->failed_cap - 1)) {
		if (s->failed[i] == key)
			return 1;
		if (!s->failed[i])
			return 0;
	}
}

static void sts_insert(uint64_t *tab, size_t cap, uint64_t key)
{
	size_t i = key & (cap - 1);

	while (tab[i] && tab[i] != key)
		i = (i + 1) & (cap - 1);
	tab[i] = key;
}

static void sts_fail(struct sts *s, uint64_t key)
{
	if (2 * (s->failed_count + 1) > s->failed_cap) {
		size_t cap = 2 * s->failed_cap;
		uint64_t *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return;	/* a memo without this key is still right */
		for (size_t i = 0; i < s->failed_cap; i++)
			if (s->failed[i])
				sts_insert(tab, cap, s->failed[i]);
		free(s->failed);
		s->failed = tab;
		s->failed_cap = cap;
	}
	if (!sts_failed(s, key)) {
		sts_insert(s->failed, s->failed_cap, key);
		s->failed_count++;
	}
}

/*
 * Whether some subset of @v (nonempty if @nonempty) sums to @want: 1 yes
 * or unchecked (range above STS_SUMS_MAX units, or no memory), 0 no.
 */
static int sts_sums(struct sts *s, const int64_t *v, size_t nv, int64_t want, int nonempty)
{
	int64_t unit = (int64_t)s->unit, pos = 0, neg = 0, at;
	size_t len, words, zero;
	uint64_t *reach, *next;

	for (size_t i = 0; i < nv; i++) {
		if (v[i] > 0)
			pos += v[i] / unit;
		else
			neg -= v[i] / unit;
	}
	if (pos + neg >= STS_SUMS_MAX)
		return 1;
	len = (size_t)(pos + neg) + 1;
	words = (len + 63) / 64;
	zero = (size_t)neg;
	at = (int64_t)zero + want / unit;
	if (at < 0 || (size_t)at >= len)
		return 0;
	if (words > s->bits_cap) {
		uint64_t *bits = malloc(2 * words * sizeof(*bits));

		if (!bits)
			return 1;
		free(s->bits);
		s->bits = bits;
		s->bits_cap = words;
	}
	reach = s->bits;
	next = s->bits + s->bits_cap;
	memset(reach, 0, words * sizeof(*reach));
	if (!nonempty)
		reach[zero / 64] |= 1ull << (zero % 64);
	for (size_t i = 0; i < nv; i++) {
		int64_t d = v[i] / unit;
		size_t shift = (size_t)(d > 0 ? d : -d), ws = shift / 64, bs = shift % 64;
		size_t p = zero + (size_t)d;

		memset(next, 0, words * sizeof(*next));
		if (d > 0) {
			for (size_t j = ws; j < words; j++)
				next[j] = reach[j - ws] << bs |
					  (bs && j > ws ? reach[j - ws - 1] >> (64 - bs) : 0);
		} else {
			for (size_t j = 0; j + ws < words; j++)
				next[j] = reach[j + ws] >> bs |
					  (bs && j + ws + 1 < words ? reach[j + ws + 1] << (64 - bs) : 0);
		}
		next[p / 64] |= 1ull << (p % 64);
		for (size_t j = 0; j < words; j++)
			reach[j] |= next[j];
	}
	return (reach[at / 64] >> (at % 64)) & 1;
}

/* Tries the strip the in-groups form: both sides solved, or 0. */
static int sts_try(struct sts_piece *pc)
{
	struct sts *s = pc->s;
	const struct sks_problem *pb = s->pb;
	size_t kx = 0, kr = 0;
	uint64_t hx = 0;
	uint32_t *x, *r;
	int ok;

	for (uint32_t g = 0; g < pc->m; g++)
		for (uint32_t q = pc->buf_first[g]; q < pc->buf_first[g + 1]; q++) {
			uint32_t id = pc->group_bufs[q];

			if (pc->state[g] == 1) {
				pc->xs[kx++] = id;
				hx += pb->t0[id] == pc->a ? pb->size[id] : 0;
			} else {
				pc->rest[kr++] = id;
			}
		}
	if (!kx || !kr || !hx || hx >= pc->h ||
	    sts_failed(s, sts_set_key(s, pc->xs, kx)) ||
	    sts_failed(s, sts_set_key(s, pc->rest, kr)))
		return 0;
	/* The solves reorder what they get: copies, as pc->xs is reused. */
	x = malloc(pc->k * sizeof(*x));
	if (!x) {
		s->stop = SKS_NOMEM;
		return 0;
	}
	r = x + kx;
	memcpy(x, pc->xs, kx * sizeof(*x));
	memcpy(r, pc->rest, kr * sizeof(*r));
	ok = sts_solve(s, x, kx, pc->a, pc->b, hx, pc->base) &&
	     sts_solve(s, r, kr, pc->a, pc->b, pc->h - hx, pc->base + hx);
	free(x);
	return ok;
}

static void sts_take(struct sts_piece *pc, uint32_t g, int sign)
{
	for (uint32_t q = pc->group_first[g]; q < pc->group_first[g + 1]; q++)
		pc->imb[pc->group_items[q].id] += sign * pc->group_items[q].net;
}

/* Decides group @g (1 in, -1 out), on the trail. */
static void sts_set(struct sts_piece *pc, uint32_t g, int in)
{
	pc->state[g] = (int8_t)in;
	if (in > 0) {
		sts_take(pc, g, 1);
		pc->in_bufs += pc->buf_first[g + 1] - pc->buf_first[g];
	}
	pc->trail[pc->trail_len++] = g;
}

/* Undoes the decisions after the first @mark of the trail. */
static void sts_undo(struct sts_piece *pc, size_t mark)
{
	while (pc->trail_len > mark) {
		uint32_t g = pc->trail[--pc->trail_len];

		if (pc->state[g] > 0) {
			sts_take(pc, g, -1);
			pc->in_bufs -= pc->buf_first[g + 1] - pc->buf_first[g];
		}
		pc->state[g] = 0;
	}
}

/* Group @g's nodes are to be checked again. */
static void sts_touch(struct sts_piece *pc, uint32_t g)
{
	for (uint32_t q = pc->group_first[g]; q < pc->group_first[g + 1]; q++) {
		uint32_t t = pc->group_items[q].id;

		if (!pc->is_dirty[t]) {
			pc->is_dirty[t] = 1;
			pc->dirty[pc->dirty_len++] = t;
		}
	}
}

/*
 * Checks the nodes of the groups decided since @from on the trail, and
 * of those it decides itself, until none is left: a node whose imbalance
 * no subset of its open groups cancels fails; with up to STS_EXACT open
 * groups every subset is tried (meet in the middle), and a group in every
 * subset that cancels the imbalance is decided in, in none out. Returns
 * 0 on a failure (the caller undoes the trail).
 */
static int sts_propagate(struct sts_piece *pc, size_t from)
{
	struct sts *s = pc->s;
	int ok = 1;

	for (size_t q = from; q < pc->trail_len; q++)
		sts_touch(pc, pc->trail[q]);
	while (ok && pc->dirty_len) {
		uint32_t t = pc->dirty[--pc->dirty_len], open = 0, ids[STS_EXACT];
		uint32_t in_some, out_some;
		int64_t d = pc->imb[t], ends = 0, starts = 0;

		pc->is_dirty[t] = 0;
		if (!t || t >= pc->nn)
			continue;
		for (uint32_t q = pc->node_first[t]; q < pc->node_first[t + 1]; q++) {
			int64_t v = pc->node_items[q].net;

			if (pc->state[pc->node_items[q].id])
				continue;
			if (open < STS_EXACT)
				ids[open] = pc->node_items[q].id;
			pc->scratch[open++] = v;
			if (v > 0)
				ends += v;
			else
				starts -= v;
		}
		if ((d > 0 && d > starts) || (d < 0 && -d > ends)) {
			ok = 0;
			continue;
		}
		if (open > STS_EXACT) {
			ok = !d || sts_sums(s, pc->scratch, open, -d, 0);
			pc->ways[t] = UINT32_MAX;
			continue;
		}
		pc->ways[t] = vnpu_plan_balance(pc->scratch, open, -d, &in_some, &out_some);
		if (!pc->ways[t]) {
			ok = 0;
			continue;
		}
		for (uint32_t q = 0; q < open; q++) {
			int in = in_some >> q & 1, out = out_some >> q & 1;

			if (in != out) {
				sts_set(pc, ids[q], in ? 1 : -1);
				sts_touch(pc, ids[q]);
				if (pc->in_bufs > pc->max_bufs)
					ok = 0;
			}
		}
	}
	while (pc->dirty_len)
		pc->is_dirty[pc->dirty[--pc->dirty_len]] = 0;
	return ok;
}

static int sts_node(struct sts_piece *pc, size_t from);

/*
 * The subsets of the open groups @u[j..] that cancel @d at the node being
 * decided (the rest there out), each followed by sts_node(); @more: the
 * set so far was tried already, so only a larger one may follow; @from:
 * where on the trail the decisions not yet propagated begin.
 */
static int sts_pick(struct sts_piece *pc, struct sts_item *u, size_t nu, size_t j, int64_t d,
		    int64_t pos, int64_t neg, int more, size_t from)
{
	size_t mark = pc->trail_len;
	uint32_t g;
	int64_t v;
	int r;

	if (++pc->steps > pc->budget || pc->s->stop)
		return 0;
	if (!d && !more) {
		for (size_t q = j; q < nu; q++)
			sts_set(pc, u[q].id, -1);
		r = sts_node(pc, from);
		sts_undo(pc, mark);
		if (r)
			return r;
		more = 1;
	}
	if (j == nu || (d > 0 && d > neg) || (d < 0 && -d > pos))
		return 0;
	g = u[j].id;
	v = u[j].net;
	pos -= v > 0 ? v : 0;
	neg -= v < 0 ? -v : 0;
	r = 0;
	/* Of identical buffers, one is taken only if those before it are. */
	if ((pc->twin[g] == UINT32_MAX || pc->state[pc->twin[g]] >= 0) &&
	    pc->in_bufs + pc->buf_first[g + 1] - pc->buf_first[g] <= pc->max_bufs) {
		sts_set(pc, g, 1);
		r = sts_pick(pc, u, nu, j + 1, d + v, pos, neg, 0, from);
		sts_undo(pc, mark);
		if (r)
			return r;
	}
	sts_set(pc, g, -1);
	r = sts_pick(pc, u, nu, j + 1, d, pos, neg, more, from);
	sts_undo(pc, mark);
	return r;
}

/* A starting group: the most groups meeting at one of its nodes, its largest buffer. */
struct sts_pivot {
	uint32_t group, crowd;
	uint64_t size;
};

static int sts_pivot_cmp(const void *pa, const void *pb)
{
	const struct sts_pivot *x = pa, *y = pb;

	if (x->crowd != y->crowd)
		return x->crowd < y->crowd ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

/* A one-buffer group's span and size (0 for larger groups), to find twins. */
struct sts_twin {
	uint64_t span, size;
	uint32_t group;
};

static int sts_twin_cmp(const void *pa, const void *pb)
{
	const struct sts_twin *x = pa, *y = pb;

	if (x->span != y->span)
		return x->span < y->span ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

static int sts_item_cmp(const void *pa, const void *pb)
{
	int64_t x = ((const struct sts_item *)pa)->net, y = ((const struct sts_item *)pb)->net;

	x = x < 0 ? -x : x;
	y = y < 0 ? -y : y;
	return x > y ? -1 : x < y;
}

/*
 * Propagates the decisions since @from, then decides the unbalanced node
 * with the fewest subsets that cancel it (then the fewest open groups); a
 * strip is tried when every node balances. 1 when the piece is solved.
 */
static int sts_node(struct sts_piece *pc, size_t from)
{
	struct sts *s = pc->s;
	uint32_t best = 0, fewest = UINT32_MAX;
	uint64_t fewest_rank = UINT64_MAX;
	size_t mark = pc->trail_len;
	struct sts_item *u;
	int64_t pos = 0, neg = 0;
	size_t nu = 0;
	int r;

	/* The clock from the first step on: a search begun late stops at once. */
	if (!(s->steps++ & 255) && vnpu_plan_tick(STS_STEPS_TICK_NS) > s->deadline)
		s->stop = SKS_TIMEOUT;
	if (s->stop || !sts_propagate(pc, from)) {
		sts_undo(pc, mark);
		return 0;
	}
	from = pc->trail_len;
	for (uint32_t t = 1; t < pc->nn; t++) {
		uint32_t open = 0;
		uint64_t rank;

		if (!pc->imb[t])
			continue;
		for (uint32_t q = pc->node_first[t]; q < pc->node_first[t + 1]; q++)
			open += !pc->state[pc->node_items[q].id];
		rank = (uint64_t)pc->ways[t] << 32 | open;
		if (rank < fewest_rank) {
			fewest_rank = rank;
			fewest = open;
			best = t;
		}
	}
	if (fewest == UINT32_MAX) {
		r = sts_try(pc);
		sts_undo(pc, mark);
		return r;
	}
	u = malloc(fewest * sizeof(*u));
	if (!u) {
		s->stop = SKS_NOMEM;
		sts_undo(pc, mark);
		return 0;
	}
	for (uint32_t q = pc->node_first[best]; q < pc->node_first[best + 1]; q++)
		if (!pc->state[pc->node_items[q].id]) {
			u[nu] = pc->node_items[q];
			pos += u[nu].net > 0 ? u[nu].net : 0;
			neg += u[nu].net < 0 ? -u[nu].net : 0;
			nu++;
		}
	/* Large parts first: a strip of few buffers comes early. */
	qsort(u, nu, sizeof(*u), sts_item_cmp);
	r = sts_pick(pc, u, nu, 0, pc->imb[best], pos, neg, 0, from);
	free(u);
	sts_undo(pc, mark);
	return r;
}

static uint32_t sts_find(uint32_t *uf, uint32_t x)
{
	while (uf[x] != x) {
		uf[x] = uf[uf[x]];
		x = uf[x];
	}
	return x;
}

static int sts_item_id_cmp(const void *pa, const void *pb)
{
	uint32_t x = ((const struct sts_item *)pa)->id, y = ((const struct sts_item *)pb)->id;

	return x < y ? -1 : x > y;
}

/*
 * The nets at local node @t of what meets there, by @group of the local
 * buffer index (summed per group, zeros dropped) into @out. Returns how
 * many.
 */
static size_t sts_nets(const struct sts_piece *pc, const uint32_t *at, uint32_t cnt, uint32_t t,
		       const uint32_t *group, struct sts_item *out)
{
	const struct sks_problem *pb = pc->s->pb;
	size_t n = 0, kept = 0;

	for (uint32_t q = 0; q < cnt; q++) {
		uint32_t i = at[q], id = pc->ids[i];

		out[n].id = group[i];
		out[n++].net = pb->t1[id] == t + pc->a ? (int64_t)pb->size[id] :
							  -(int64_t)pb->size[id];
	}
	qsort(out, n, sizeof(*out), sts_item_id_cmp);
	for (size_t q = 0; q < n;) {
		size_t e = q;
		int64_t v = 0;

		while (e < n && out[e].id == out[q].id)
			v += out[e++].net;
		if (v)
			out[kept++] = (struct sts_item){ out[q].id, v };
		q = e;
	}
	return kept;
}

/*
 * Splits a piece without a spanning buffer or a time cut into two strips.
 * Returns 1 when solved, 0 when not (or s->stop set).
 */
static int sts_split(struct sts *s, const uint32_t *ids, size_t k, uint32_t a, uint32_t b,
		     uint64_t h, uint64_t base)
{
	const struct sks_problem *pb = s->pb;
	struct sts_piece pc = { .s = s, .ids = ids, .k = k, .a = a, .b = b, .nn = b - a,
				.h = h, .base = base };
	uint32_t nn = b - a, *first = calloc(nn + 2, sizeof(*first));
	uint32_t *at = malloc(2 * k * sizeof(*at)), *group = malloc(k * sizeof(*group));
	struct sts_item *items = malloc(2 * k * sizeof(*items));
	struct sts_pivot *pivots = NULL;
	struct sts_twin *twins = NULL;
	int64_t *nets = malloc(2 * k * sizeof(*nets));
	uint32_t *fill = NULL, *uf = s->uf;
	size_t total = 0;
	int r = 0, changed = 1;

	pc.scratch = nets;
	if (!first || !at || !group || !items || !nets)
		goto nomem;
	/* Buffers by the inner nodes they end or start at. */
	for (size_t i = 0; i < k; i++) {
		uf[i] = (uint32_t)i;
		first[pb->t0[ids[i]] - a + 1] += pb->t0[ids[i]] > a;
		first[pb->t1[ids[i]] - a + 1] += pb->t1[ids[i]] < b;
	}
	for (uint32_t t = 0; t <= nn; t++)
		first[t + 1] += first[t];
	for (size_t i = 0; i < k; i++) {
		if (pb->t0[ids[i]] > a)
			at[first[pb->t0[ids[i]] - a]++] = (uint32_t)i;
		if (pb->t1[ids[i]] < b)
			at[first[pb->t1[ids[i]] - a]++] = (uint32_t)i;
	}
	for (uint32_t t = nn + 1; t > 0; t--)
		first[t] = first[t - 1];
	first[0] = 0;
	/* Merge what cannot be split at some node, until nothing changes. */
	while (changed) {
		changed = 0;
		for (uint32_t t = 1; t < nn; t++) {
			size_t cnt;

			for (uint32_t q = first[t]; q < first[t + 1]; q++)
				group[at[q]] = sts_find(uf, at[q]);
			cnt = sts_nets(&pc, at + first[t], first[t + 1] - first[t], t, group, items);
			if (cnt < 2)
				continue;
			for (size_t q = 0; q < cnt; q++)
				nets[q] = items[q].net;
			if (sts_sums(s, nets + 1, cnt - 1, 0, 1))
				continue;
			for (size_t q = 1; q < cnt; q++) {
				uint32_t x = sts_find(uf, items[0].id), y = sts_find(uf, items[q].id);

				if (x != y) {
					uf[y] = x;
					changed = 1;
				}
			}
		}
	}
	/* Groups numbered 0..m-1; group[] now maps local buffer to group. */
	for (size_t i = 0; i < k; i++)
		group[i] = UINT32_MAX;
	for (size_t i = 0; i < k; i++) {
		uint32_t root = sts_find(uf, (uint32_t)i);

		if (group[root] == UINT32_MAX)
			group[root] = pc.m++;
	}
	for (size_t i = 0; i < k; i++)
		if (sts_find(uf, (uint32_t)i) != i)
			group[i] = group[sts_find(uf, (uint32_t)i)];
	if (pc.m < 2)
		goto out;	/* nothing splits: no guillotine packing */

	pc.node_first = calloc(nn + 2, sizeof(*pc.node_first));
	pc.node_items = malloc(2 * k * sizeof(*pc.node_items));
	pc.group_first = calloc(pc.m + 1, sizeof(*pc.group_first));
	pc.group_items = malloc(2 * k * sizeof(*pc.group_items));
	pc.buf_first = calloc(pc.m + 1, sizeof(*pc.buf_first));
	pc.group_bufs = malloc(k * sizeof(*pc.group_bufs));
	pc.imb = calloc(nn + 1, sizeof(*pc.imb));
	pc.state = calloc(pc.m, sizeof(*pc.state));
	pc.trail = malloc(pc.m * sizeof(*pc.trail));
	pc.dirty = malloc((nn + 1) * sizeof(*pc.dirty));
	pc.is_dirty = calloc(nn + 1, sizeof(*pc.is_dirty));
	pc.ways = malloc((nn + 1) * sizeof(*pc.ways));
	pc.xs = malloc(k * sizeof(*pc.xs));
	pc.rest = malloc(k * sizeof(*pc.rest));
	fill = calloc(pc.m, sizeof(*fill));
	pivots = malloc(pc.m * sizeof(*pivots));
	pc.twin = malloc(pc.m * sizeof(*pc.twin));
	twins = malloc(pc.m * sizeof(*twins));
	if (!pc.node_first || !pc.node_items || !pc.group_first || !pc.group_items ||
	    !pc.buf_first || !pc.group_bufs || !pc.imb || !pc.state || !pc.xs || !pc.rest ||
	    !pc.trail || !pc.dirty || !pc.is_dirty || !pc.ways || !fill || !pivots || !pc.twin ||
	    !twins)
		goto nomem;
	for (uint32_t t = 0; t <= nn; t++)
		pc.ways[t] = UINT32_MAX;
	for (uint32_t t = 1; t < nn; t++) {
		pc.node_first[t] = (uint32_t)total;
		total += sts_nets(&pc, at + first[t], first[t + 1] - first[t], t, group,
				  pc.node_items + total);
	}
	pc.node_first[nn] = (uint32_t)total;
	pc.node_first[nn + 1] = (uint32_t)total;
	for (size_t q = 0; q < total; q++)
		pc.group_first[pc.node_items[q].id + 1]++;
	for (uint32_t g = 0; g < pc.m; g++)
		pc.group_first[g + 1] += pc.group_first[g];
	for (uint32_t t = 1; t < nn; t++)
		for (uint32_t q = pc.node_first[t]; q < pc.node_first[t + 1]; q++) {
			uint32_t g = pc.node_items[q].id;

			pc.group_items[pc.group_first[g] + fill[g]++] =
				(struct sts_item){ t, pc.node_items[q].net };
		}
	for (size_t i = 0; i < k; i++)
		pc.buf_first[group[i] + 1]++;
	for (uint32_t g = 0; g < pc.m; g++)
		pc.buf_first[g + 1] += pc.buf_first[g];
	memset(fill, 0, pc.m * sizeof(*fill));
	for (size_t i = 0; i < k; i++)
		pc.group_bufs[pc.buf_first[group[i]] + fill[group[i]]++] = ids[i];
	/* Twins: one-buffer groups of the same span and size, in id order. */
	for (uint32_t g = 0; g < pc.m; g++) {
		uint32_t id = pc.group_bufs[pc.buf_first[g]];
		int one = pc.buf_first[g + 1] - pc.buf_first[g] == 1;

		twins[g] = (struct sts_twin){ one ? (uint64_t)pb->t0[id] << 32 | pb->t1[id] : 0,
					     one ? pb->size[id] : 0, g };
	}
	qsort(twins, pc.m, sizeof(*twins), sts_twin_cmp);
	for (uint32_t q = 0; q < pc.m; q++) {
		const struct sts_twin *x = &twins[q], *y = q ? &twins[q - 1] : NULL;

		pc.twin[x->group] = y && x->size && x->span == y->span && x->size == y->size ?
				    y->group : UINT32_MAX;
	}
	/*
	 * Pivots: the groups whose nodes are the least crowded first, then
	 * by their largest buffer. The first choice is made at a pivot's
	 * node; where many groups meet, countless subsets balance it and the
	 * search seldom comes back from a wrong one (guillotine 700, seeds 1
	 * to 50, 0.6 s each: 21 tiled by largest buffer alone, 25 to 27 so).
	 */
	for (uint32_t g = 0; g < pc.m; g++) {
		pivots[g] = (struct sts_pivot){ g, 0, 0 };
		for (uint32_t q = pc.buf_first[g]; q < pc.buf_first[g + 1]; q++)
			if (pb->size[pc.group_bufs[q]] > pivots[g].size)
				pivots[g].size = pb->size[pc.group_bufs[q]];
		for (uint32_t q = pc.group_first[g]; q < pc.group_first[g + 1]; q++) {
			uint32_t t = pc.group_items[q].id;

			if (pc.node_first[t + 1] - pc.node_first[t] > pivots[g].crowd)
				pivots[g].crowd = pc.node_first[t + 1] - pc.node_first[t];
		}
	}
	qsort(pivots, pc.m, sizeof(*pivots), sts_pivot_cmp);
	pc.max_bufs = STS_CAP_FIRST;
	for (uint64_t budget = STS_BUDGET_FIRST; !r && !s->stop; budget *= 4, pc.max_bufs *= 2) {
		int ran_out = 0;

		for (uint32_t q = 0; q < pc.m && q < STS_PIVOTS && !r && !s->stop; q++) {
			uint32_t g = pivots[q].group;

			pc.steps = 0;
			pc.budget = budget;
			sts_set(&pc, g, 1);
			r = sts_node(&pc, 0);
			sts_undo(&pc, 0);
			ran_out |= pc.steps > budget;
		}
		if ((!ran_out && pc.max_bufs >= k) || budget >= STS_BUDGET_MAX)
			break;
	}
	goto out;
nomem:
	s->stop = SKS_NOMEM;
out:
	free(pc.node_first);
	free(pc.node_items);
	free(pc.group_first);
	free(pc.group_items);
	free(pc.buf_first);
	free(pc.group_bufs);
	free(pc.imb);
	free(pc.state);
	free(pc.trail);
	free(pc.dirty);
	free(pc.is_dirty);
	free(pc.ways);
	free(pc.xs);
	free(pc.rest);
	free(fill);
	free(pivots);
	free(pc.twin);
	free(twins);
	free(first);
	free(at);
	free(group);
	free(items);
	free(nets);
	return r;
}

static int sts_start_cmp(const void *pa, const void *pb)
{
	const struct sts_item *x = pa, *y = pb;

	return x->net < y->net ? -1 : x->net > y->net;
}

/*
 * Solves the piece @ids[0..k) over sections [a, b) at height @h with its
 * bottom at @base (reorders @ids). Returns 1 when solved (offsets set), 0
 * when not (or s->stop set).
 */
static int sts_solve(struct sts *s, uint32_t *ids, size_t k, uint32_t a, uint32_t b,
		     uint64_t h, uint64_t base)
{
	const struct sks_problem *pb = s->pb;
	struct sts_item *by_start;
	size_t m = 0;
	uint64_t key;
	int r;

	(*s->nodes)++;
	if (s->stop)
		return 0;
	/* Buffers spanning the piece go at the bottom. */
	for (size_t i = 0; i < k; i++) {
		uint32_t id = ids[i];

		if (pb->t0[id] != a || pb->t1[id] != b) {
			ids[m++] = id;
			continue;
		}
		if (pb->size[id] > h)
			return 0;
		s->off[id] = base;
		base += pb->size[id];
		h -= pb->size[id];
	}
	k = m;
	if (!k || !h)
		return !k && !h;
	/* Time cuts: the pieces between them are solved one by one. */
	by_start = malloc(k * sizeof(*by_start));
	if (!by_start) {
		s->stop = SKS_NOMEM;
		return 0;
	}
	for (size_t i = 0; i < k; i++)
		by_start[i] = (struct sts_item){ ids[i], pb->t0[ids[i]] };
	qsort(by_start, k, sizeof(*by_start), sts_start_cmp);
	for (size_t i = 0; i < k; i++)
		ids[i] = by_start[i].id;
	free(by_start);
	{
		uint32_t reach = pb->t1[ids[0]], from_t = a;
		size_t from = 0;

		for (size_t i = 1; i <= k; i++) {
			if (i < k && pb->t0[ids[i]] < reach) {
				if (pb->t1[ids[i]] > reach)
					reach = pb->t1[ids[i]];
				continue;
			}
			if (!from && i == k)
				break;	/* no cut */
			if (!sts_solve(s, ids + from, i - from, from_t, i < k ? reach : b, h, base))
				return 0;
			if (i < k) {
				from = i;
				from_t = reach;
				reach = pb->t1[ids[i]];
			}
		}
		if (from)
			return 1;
	}
	key = sts_set_key(s, ids, k);
	if (sts_failed(s, key))
		return 0;
	r = sts_split(s, ids, k, a, b, h, base);
	if (!r && !s->stop)
		sts_fail(s, key);
	return r;
}

int sts_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline, uint64_t *off,
	    uint64_t *nodes)
{
	struct sts s = { .pb = pb, .deadline = deadline, .off = off, .nodes = nodes,
			 .failed_cap = 1024 };
	uint32_t *ids = NULL;
	uint64_t unit;
	int r = SKS_NOMEM;

	/* Stacked offsets are sums of sizes: every size a multiple of every alignment. */
	if (!pb->n || !pb->nsec || !vnpu_plan_perfect(pb, target, &unit))
		return SKS_INFEASIBLE;
	s.unit = unit;
	ids = malloc(pb->n * sizeof(*ids));
	s.key = malloc(pb->n * sizeof(*s.key));
	s.uf = malloc(pb->n * sizeof(*s.uf));
	s.failed = calloc(s.failed_cap, sizeof(*s.failed));
	if (!ids || !s.key || !s.uf || !s.failed)
		goto out;
	for (size_t i = 0; i < pb->n; i++) {
		ids[i] = (uint32_t)i;
		s.key[i] = sts_mix(i + 0x51ed2701u);
	}
	if (sts_solve(&s, ids, pb->n, 0, pb->nsec, target, 0))
		r = sks_check(pb, off, target) ? SKS_FOUND : SKS_INFEASIBLE;
	else
		r = s.stop ? s.stop : SKS_INFEASIBLE;
out:
	free(ids);
	free(s.key);
	free(s.uf);
	free(s.failed);
	free(s.bits);
	return r;
}
