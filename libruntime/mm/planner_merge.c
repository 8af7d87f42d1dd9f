// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Forced merges of perfect packings: the target equals the live total in
 * every section, so a plan at the target wastes nothing, and at each
 * section boundary the buffers that end free exactly the memory the
 * buffers that start take. Some buffers can then be joined into one
 * rectangle (a merged buffer) before any search, and the instance left is
 * smaller and has fewer ways to go wrong:
 *
 * - in series: a buffer e that ends at t and a buffer s that starts at t,
 *   of the same size h, when they are the only ones of that size there
 *   and every balanced part of t that holds e holds s (no subsets E of
 *   the other enders and S of the other starters with h + sum(E) =
 *   sum(S): a bitset of differences, mg_balances()). Then s takes e's place
 *   in memory: one rectangle of size h from e's start to s's end;
 * - in parallel: buffers of the same lifetime [a, b) stacked, when none
 *   of them can be a piece of a longer run in series: its size is no sum
 *   of buffers that end at a, nor of buffers that start at b
 *   (mg_parallel()). Such buffers are siblings of a cut in memory.
 *
 * Series merges go first, to their fixed point, then one round of
 * parallel merges, and again until neither finds any. Each merge keeps
 * its members' offsets relative to the rectangle; a plan of the merged
 * instance (by the band decomposition, pbd_run()) gives every buffer's
 * offset. The rules are necessary conditions, not proofs: a merge can
 * join buffers no plan at the target keeps together, and the merged
 * instance then plans above the target (the caller plans the original
 * too). The parallel rule is the one seen doing so: pmg_series_run()
 * gives the series merges alone to the sweeps, pmg_commit_run() to the
 * committed cuts (planner_cuts.c). On guillotine packings
 * whose cuts often meet in time (planner_gen.c, "guillotine", 1,500
 * buffers) 570 to 1,110 buffers are left, and the band decomposition
 * tiles more of them (Documentation/planner.rst).
 */
#include <stdlib.h>
#include <string.h>

#include "planner_search.h"

/* Largest bitset of one boundary's sums, in units of the sizes' gcd. */
#define MG_BITS_MAX (1u << 20)
/* Most buffers meeting at a boundary whose series merges are looked for. */
#define MG_BOUNDARY_MAX 1024
/*
 * pmg_series_run() plans the series merges only when they leave at most
 * 1/MG_SERIES_SHRINK of the buffers: then the sweeps tile or give up on
 * them fast, else they do about what the sweeps on the instance itself
 * do later (ladders of 1,501 and 6,001 buffers: 22 to 24% left, tiled in
 * 4 to 32 ms; guillotine packings of 700 and 1,500: 74 to 91%, the
 * sweeps running out of their share). pmg_run() gives it
 * 1/MG_SERIES_SHARE of the time it has left. An eighth was too little for
 * ladders whose sweeps take longer (1,503 buffers, seed 3,670: 392 left,
 * tiled in 98 ms on the work clock, out of time on its 56): with half,
 * ladders of 1,500 (seeds 201 to 300, 3,641 to 3,690) 147 at the optimum
 * of 150 instead of 146, of 3,000 (5,101 to 5,130) 27 of 30 instead of
 * 26, of 6,000 (5,101 to 5,120) 16 of 20 instead of 15, and every other
 * plan the same (the rule above keeps guillotine packings from it); with
 * all of it the same counts, seed 210 of 1,500 higher (1.1137 against
 * 1.0946).
 */
#define MG_SERIES_SHRINK 2
#define MG_SERIES_SHARE 2
/* A node not merged into another. */
#define MG_ROOT UINT32_MAX

struct mg {
	const struct sks_problem *pb;
	uint64_t unit;			/* gcd of the sizes and the target */
	size_t count;			/* nodes: the buffers, then the merges */
	uint32_t *t0, *t1;		/* lifetime of each node, in sections */
	uint64_t *size, *align;
	uint32_t *parent;		/* node it was merged into, or MG_ROOT */
	uint64_t *rel;			/* its offset in its parent */
	uint32_t *end_at, *start_at;	/* live nodes by end, by start section */
	uint32_t *end_first, *start_first;	/* where each section's list begins */
	uint32_t *list, *other;		/* scratch: one boundary's nodes */
	uint32_t *seen, stamp;		/* scratch: nodes met at one boundary */
	uint64_t *bits;			/* scratch: a bitset of sums */
	size_t words;			/* its capacity */
	uint64_t deadline;
};

/* Scratch of pmg_run(), @cap entries each: the merged instance and its plan. */
struct mg_scratch {
	uint32_t *ids, *index;		/* live nodes; a node's place in the merged instance */
	uint8_t *ok;			/* mg_parallel()'s verdicts */
	uint32_t *sub_t0, *sub_t1;	/* the merged instance */
	uint64_t *sub_size, *sub_align;
	uint64_t *roff, *abs;		/* its plan; every node's offset */
};

static int mg_live(const struct mg *g, uint32_t x)
{
	return g->parent[x] == MG_ROOT;
}

/*
 * Lists the live nodes by end and by start section (counting sort), as
 * they are when a pass begins.
 */
static void mg_index(struct mg *g)
{
	uint32_t nsec = g->pb->nsec;

	memset(g->end_first, 0, (nsec + 2) * sizeof(*g->end_first));
	memset(g->start_first, 0, (nsec + 2) * sizeof(*g->start_first));
	for (uint32_t x = 0; x < g->count; x++) {
		if (!mg_live(g, x))
			continue;
		g->end_first[g->t1[x] + 1]++;
		g->start_first[g->t0[x] + 1]++;
	}
	for (uint32_t t = 0; t <= nsec; t++) {
		g->end_first[t + 1] += g->end_first[t];
		g->start_first[t + 1] += g->start_first[t];
	}
	for (uint32_t x = 0; x < g->count; x++) {
		if (!mg_live(g, x))
			continue;
		g->end_at[g->end_first[g->t1[x]]++] = x;
		g->start_at[g->start_first[g->t0[x]]++] = x;
	}
	/* Each list's start moved to its end: shift back. */
	for (uint32_t t = nsec + 1; t > 0; t--) {
		g->end_first[t] = g->end_first[t - 1];
		g->start_first[t] = g->start_first[t - 1];
	}
	g->end_first[0] = 0;
	g->start_first[0] = 0;
}

/*
 * Ensures the bitset holds @bits bits, cleared: 0, or -1 when too large or
 * out of memory (the caller then merges nothing there: a merge is never
 * needed for a valid plan).
 */
static int mg_bits(struct mg *g, uint64_t bits)
{
	size_t words = (size_t)(bits / 64 + 1);

	if (bits > MG_BITS_MAX)
		return -1;
	if (words > g->words) {
		uint64_t *b = realloc(g->bits, words * sizeof(*b));

		if (!b)
			return -1;
		g->bits = b;
		g->words = words;
	}
	memset(g->bits, 0, words * sizeof(*g->bits));
	return 0;
}

/* bits |= bits << @k (up), or >> @k, over @words words. */
static void mg_shift_or(uint64_t *bits, size_t words, uint64_t k, int up)
{
	size_t q = (size_t)(k / 64);
	unsigned int r = (unsigned int)(k % 64);

	if (q >= words)
		return;
	if (up) {
		vnpu_plan_bits_add(bits, words, k);
	} else {
		for (size_t i = 0; i + q < words; i++) {
			uint64_t v = bits[i + q] >> r;

			if (r && i + q + 1 < words)
				v |= bits[i + q + 1] << (64 - r);
			bits[i] |= v;
		}
	}
}

/*
 * Whether some subsets E of @ends and S of @starts (@ne, @ns nodes; entry
 * @skip_e of @ends and @skip_s of @starts left out) have, in units,
 * @h + sum(E) = sum(S): 1 yes (or too costly to tell), 0 no.
 */
static int mg_balances(struct mg *g, const uint32_t *ends, size_t ne, size_t skip_e,
		       const uint32_t *starts, size_t ns, size_t skip_s, uint64_t h)
{
	uint64_t lo = 0, hi = 0;
	size_t words;

	for (size_t i = 0; i < ne; i++)
		if (i != skip_e)
			lo += g->size[ends[i]] / g->unit;
	for (size_t i = 0; i < ns; i++)
		if (i != skip_s)
			hi += g->size[starts[i]] / g->unit;
	if (h > hi)
		return 0;
	if (mg_bits(g, lo + hi + 1))
		return 1;
	words = (size_t)((lo + hi + 1) / 64 + 1);
	/* Bit lo + d: some sum(S) - sum(E) is d. */
	g->bits[lo / 64] = 1ull << (lo % 64);
	for (size_t i = 0; i < ns; i++)
		if (i != skip_s)
			mg_shift_or(g->bits, words, g->size[starts[i]] / g->unit, 1);
	for (size_t i = 0; i < ne; i++)
		if (i != skip_e)
			mg_shift_or(g->bits, words, g->size[ends[i]] / g->unit, 0);
	return (g->bits[(lo + h) / 64] >> ((lo + h) % 64)) & 1;
}

/* A new node over [@t0, @t1) of @size: its id, or MG_ROOT when full. */
static uint32_t mg_node(struct mg *g, uint32_t t0, uint32_t t1, uint64_t size, uint64_t align)
{
	uint32_t c = (uint32_t)g->count;

	if (g->count >= 2 * g->pb->n)
		return MG_ROOT;
	g->count++;
	g->t0[c] = t0;
	g->t1[c] = t1;
	g->size[c] = size;
	g->align[c] = align;
	g->parent[c] = MG_ROOT;
	g->rel[c] = 0;
	return c;
}

static int mg_by_size(const void *pa, const void *pb, void *arg)
{
	const struct mg *g = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (g->size[a] != g->size[b])
		return g->size[a] < g->size[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* The live nodes of one section's list into @out, by size: their count. */
static size_t mg_gather(const struct mg *g, const uint32_t *at, const uint32_t *first, uint32_t t,
			uint32_t *out)
{
	size_t k = 0;

	for (uint32_t i = first[t]; i < first[t + 1]; i++)
		if (mg_live(g, at[i]))
			out[k++] = at[i];
	qsort_r(out, k, sizeof(*out), mg_by_size, (void *)g);
	return k;
}

/* Removes entry @i of @v (@k entries). */
static void mg_drop(uint32_t *v, size_t k, size_t i)
{
	memmove(v + i, v + i + 1, (k - i - 1) * sizeof(*v));
}

/* One pass of series merges over every boundary: the merges made. */
static int mg_series(struct mg *g)
{
	int made = 0;

	mg_index(g);
	for (uint32_t t = 1; t < g->pb->nsec; t++) {
		size_t ne = mg_gather(g, g->end_at, g->end_first, t, g->list);
		size_t ns = mg_gather(g, g->start_at, g->start_first, t, g->other);
		size_t i = 0, j = 0;

		/* Where very many meet, some subset balances anything: skip. */
		if (ne + ns > MG_BOUNDARY_MAX)
			continue;
		while (i < ne && j < ns) {
			uint32_t e = g->list[i], s = g->other[j];
			uint64_t h = g->size[e];
			int once;
			uint32_t c;

			if (h != g->size[s]) {
				if (h < g->size[s])
					i++;
				else
					j++;
				continue;
			}
			once = (i + 1 == ne || g->size[g->list[i + 1]] != h) &&
			       (j + 1 == ns || g->size[g->other[j + 1]] != h);
			if (!once) {
				while (i < ne && g->size[g->list[i]] == h)
					i++;
				continue;
			}
			if (vnpu_plan_tick(MG_PAIR_TICK_NS) > g->deadline)
				return made;
			/* Every balanced part of t that holds e holds s. */
			if (mg_balances(g, g->list, ne, i, g->other, ns, j, h / g->unit)) {
				i++;
				j++;
				continue;
			}
			c = mg_node(g, g->t0[e], g->t1[s], h,
				    g->align[e] > g->align[s] ? g->align[e] : g->align[s]);
			if (c == MG_ROOT)
				return made;
			/* e and s leave t. */
			mg_drop(g->list, ne--, i);
			mg_drop(g->other, ns--, j);
			g->parent[e] = c;
			g->parent[s] = c;
			made++;
		}
	}
	return made;
}

/*
 * Subset sums (in units) of the live nodes of one section's list into the
 * bitset, their total in *@total: 0, or -1 too costly.
 */
static int mg_sums(struct mg *g, const uint32_t *at, const uint32_t *first, uint32_t t,
		   uint64_t *total)
{
	size_t words;

	/* A node merged in parallel this pass stands for its members: once. */
	g->stamp++;
	for (uint32_t i = first[t]; i < first[t + 1]; i++) {
		uint32_t x = at[i];

		while (!mg_live(g, x))
			x = g->parent[x];
		if (g->seen[x] == g->stamp) {
			g->list[i - first[t]] = MG_ROOT;
			continue;
		}
		g->seen[x] = g->stamp;
		g->list[i - first[t]] = x;
		*total += g->size[x] / g->unit;
	}
	if (mg_bits(g, *total + 1))
		return -1;
	words = (size_t)((*total + 1) / 64 + 1);
	g->bits[0] = 1;
	for (uint32_t i = 0; i < first[t + 1] - first[t]; i++)
		if (g->list[i] != MG_ROOT)
			mg_shift_or(g->bits, words, g->size[g->list[i]] / g->unit, 1);
	return 0;
}

static int mg_by_life(const void *pa, const void *pb, void *arg)
{
	const struct mg *g = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (g->t0[a] != g->t0[b])
		return g->t0[a] < g->t0[b] ? -1 : 1;
	if (g->t1[a] != g->t1[b])
		return g->t1[a] < g->t1[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * Marks in @ok the members of @grp (@k nodes of one lifetime) whose size
 * is no subset sum of the nodes that end at its start, nor of those that
 * start at its end: 1 when the sums were affordable, else 0.
 */
static int mg_parallel(struct mg *g, const uint32_t *grp, size_t k, uint8_t *ok)
{
	uint32_t a = g->t0[grp[0]], b = g->t1[grp[0]];

	for (size_t i = 0; i < k; i++)
		ok[i] = 1;
	for (int side = 0; side < 2; side++) {
		uint64_t total = 0;

		if (side ? mg_sums(g, g->start_at, g->start_first, b, &total) :
			   mg_sums(g, g->end_at, g->end_first, a, &total))
			return 0;
		for (size_t i = 0; i < k; i++) {
			uint64_t h = g->size[grp[i]] / g->unit;

			if (h <= total && ((g->bits[h / 64] >> (h % 64)) & 1))
				ok[i] = 0;
		}
	}
	return 1;
}

/* One pass of parallel merges: the merges made. */
static int mg_parallels(struct mg *g, uint32_t *ids, uint8_t *ok)
{
	size_t m = 0;
	int made = 0;

	mg_index(g);
	for (uint32_t x = 0; x < g->count; x++)
		if (mg_live(g, x))
			ids[m++] = x;
	qsort_r(ids, m, sizeof(*ids), mg_by_life, g);
	for (size_t i = 0, j; i < m; i = j) {
		uint64_t at = 0, align = 1, sum = 0;
		size_t k = 0;
		uint32_t c;

		for (j = i + 1; j < m && g->t0[ids[j]] == g->t0[ids[i]] &&
				g->t1[ids[j]] == g->t1[ids[i]]; j++)
			;
		if (j - i < 2 || !mg_parallel(g, ids + i, j - i, ok))
			continue;
		for (size_t q = i; q < j; q++) {
			if (!ok[q - i])
				continue;
			k++;
			sum += g->size[ids[q]];
			if (g->align[ids[q]] > align)
				align = g->align[ids[q]];
		}
		if (k < 2)
			continue;
		c = mg_node(g, g->t0[ids[i]], g->t1[ids[i]], sum, align);
		if (c == MG_ROOT)
			return made;
		for (size_t q = i; q < j; q++) {
			if (!ok[q - i])
				continue;
			g->parent[ids[q]] = c;
			g->rel[ids[q]] = at;
			at += g->size[ids[q]];
		}
		made++;
	}
	return made;
}

static void mg_free(struct mg *g)
{
	free(g->t0);
	free(g->t1);
	free(g->size);
	free(g->align);
	free(g->parent);
	free(g->rel);
	free(g->end_at);
	free(g->start_at);
	free(g->end_first);
	free(g->start_first);
	free(g->list);
	free(g->other);
	free(g->seen);
	free(g->bits);
}

/* Back to the buffers of the instance, none merged. */
static void mg_reset(struct mg *g)
{
	const struct sks_problem *pb = g->pb;

	for (size_t i = 0; i < pb->n; i++) {
		g->t0[i] = pb->t0[i];
		g->t1[i] = pb->t1[i];
		g->size[i] = pb->size[i];
		g->align[i] = pb->align[i];
		g->parent[i] = MG_ROOT;
		g->rel[i] = 0;
	}
	g->count = pb->n;
}

/* What plans a merged instance (mg_plan()). */
enum mg_solver { MG_BANDS, MG_SWEEPS, MG_COMMIT };

/*
 * The merged instance (the live nodes; s->index maps a node to its place
 * in it) planned into s->roff: by the band decomposition (MG_BANDS), the
 * committed cuts (MG_COMMIT), or by the hole sweep, the lazy sweep and the
 * time sweep (MG_SWEEPS), each with the stall rule SKS_SWEEP_STALL_NS,
 * until one tiles it. Each buffer's offset then into @off: a merge was
 * made after its members, so the offsets are filled from the last node
 * down. Returns as pmg_run() (MG_SWEEPS: SKS_FOUND only for a plan at
 * @target).
 */
static int mg_plan(struct mg *g, struct mg_scratch *s, uint64_t target, enum mg_solver solver,
		   uint64_t *off, uint64_t *nodes)
{
	struct sks_problem sub = *g->pb;
	size_t m = 0;
	int r;

	for (uint32_t x = 0; x < g->count; x++)
		if (mg_live(g, x)) {
			s->index[x] = (uint32_t)m;
			s->sub_t0[m] = g->t0[x];
			s->sub_t1[m] = g->t1[x];
			s->sub_size[m] = g->size[x];
			s->sub_align[m] = g->align[x];
			m++;
		}
	if (vnpu_plan_now() > g->deadline)
		return SKS_TIMEOUT;
	if (m == g->pb->n)
		return SKS_INFEASIBLE;
	sub.n = m;
	sub.t0 = s->sub_t0;
	sub.t1 = s->sub_t1;
	sub.size = s->sub_size;
	sub.align = s->sub_align;
	if (solver == MG_BANDS) {
		r = pbd_run(&sub, target, g->deadline, s->roff, nodes);
	} else if (solver == MG_COMMIT) {
		r = pcs_commit_run(&sub, target, g->deadline, s->roff, nodes);
	} else {
		r = pqs_run(&sub, target, g->deadline, SKS_SWEEP_STALL_NS, s->roff, nodes);
		if (r != SKS_FOUND && r != SKS_NOMEM)
			r = sws_lazy_run(&sub, target, g->deadline, SKS_SWEEP_STALL_NS, s->roff,
					 nodes);
		if (r != SKS_FOUND && r != SKS_NOMEM)
			r = sws_run(&sub, target, g->deadline, SKS_SWEEP_STALL_NS, s->roff, nodes);
	}
	if (r != SKS_FOUND)
		return r;
	for (uint32_t x = (uint32_t)g->count; x-- > 0;)
		s->abs[x] = mg_live(g, x) ? s->roff[s->index[x]] :
			    s->abs[g->parent[x]] + g->rel[x];
	memcpy(off, s->abs, g->pb->n * sizeof(*off));
	return SKS_FOUND;
}

/* Frees what mg_setup() allocated. */
static void mg_cleanup(struct mg *g, struct mg_scratch *s)
{
	free(s->ids);
	free(s->index);
	free(s->abs);
	free(s->ok);
	free(s->sub_t0);
	free(s->sub_t1);
	free(s->sub_size);
	free(s->sub_align);
	free(s->roff);
	mg_free(g);
}

/*
 * @g and @s for @pb, its buffers none merged. Returns SKS_FOUND when ready,
 * SKS_INFEASIBLE when @target is not the live total in every section or an
 * alignment does not divide every size (nothing allocated), SKS_NOMEM.
 */
static int mg_setup(struct mg *g, struct mg_scratch *s, const struct sks_problem *pb,
		    uint64_t target, uint64_t deadline)
{
	size_t n = pb->n, cap = 2 * n + 1;

	memset(g, 0, sizeof(*g));
	memset(s, 0, sizeof(*s));
	g->pb = pb;
	g->deadline = deadline;
	/* Offsets inside a merge are sums of sizes: aligned if every alignment divides them. */
	if (!vnpu_plan_perfect(pb, target, &g->unit) || !g->unit)
		return SKS_INFEASIBLE;
	g->t0 = malloc(cap * sizeof(*g->t0));
	g->t1 = malloc(cap * sizeof(*g->t1));
	g->size = malloc(cap * sizeof(*g->size));
	g->align = malloc(cap * sizeof(*g->align));
	g->parent = malloc(cap * sizeof(*g->parent));
	g->rel = malloc(cap * sizeof(*g->rel));
	g->end_at = malloc(cap * sizeof(*g->end_at));
	g->start_at = malloc(cap * sizeof(*g->start_at));
	g->end_first = malloc((pb->nsec + 2) * sizeof(*g->end_first));
	g->start_first = malloc((pb->nsec + 2) * sizeof(*g->start_first));
	g->list = malloc(cap * sizeof(*g->list));
	g->other = malloc(cap * sizeof(*g->other));
	g->seen = calloc(cap, sizeof(*g->seen));
	s->ids = malloc(cap * sizeof(*s->ids));
	s->index = malloc(cap * sizeof(*s->index));
	s->abs = malloc(cap * sizeof(*s->abs));
	s->ok = malloc(cap);
	s->sub_t0 = malloc(cap * sizeof(*s->sub_t0));
	s->sub_t1 = malloc(cap * sizeof(*s->sub_t1));
	s->sub_size = malloc(cap * sizeof(*s->sub_size));
	s->sub_align = malloc(cap * sizeof(*s->sub_align));
	s->roff = malloc(cap * sizeof(*s->roff));
	if (!g->t0 || !g->t1 || !g->size || !g->align || !g->parent || !g->rel || !g->end_at ||
	    !g->start_at || !g->end_first || !g->start_first || !g->list || !g->other ||
	    !g->seen || !s->ids || !s->index || !s->abs || !s->ok || !s->sub_t0 || !s->sub_t1 ||
	    !s->sub_size || !s->sub_align || !s->roff) {
		mg_cleanup(g, s);
		return SKS_NOMEM;
	}
	mg_reset(g);
	return SKS_FOUND;
}

/* The live nodes of @g. */
static size_t mg_count_live(const struct mg *g)
{
	size_t live = 0;

	for (uint32_t x = 0; x < g->count; x++)
		live += mg_live(g, x);
	return live;
}

int pmg_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline, uint64_t *off,
	    uint64_t *nodes)
{
	struct mg g;
	struct mg_scratch s;
	size_t series_live = 0;
	uint64_t *again, now;
	int r = mg_setup(&g, &s, pb, target, deadline), parallels = 0;

	if (r != SKS_FOUND)
		return r;
	for (;;) {
		int made;

		while (mg_series(&g) > 0)
			;
		if (!series_live)
			series_live = mg_count_live(&g);
		if (vnpu_plan_tick(MG_ROUND_TICK_NS) > deadline)
			break;
		made = mg_parallels(&g, s.ids, s.ok);
		if (made <= 0)
			break;
		parallels += made;
	}
	r = mg_plan(&g, &s, target, MG_BANDS, off, nodes);
	mg_cleanup(&g, &s);
	/*
	 * The parallel rule is the one that can stack buffers no plan at the
	 * target keeps together (a ladder of 1,500 buffers, seed 37: 246
	 * nodes that split nothing and that no search tiled in 20 s; the 358
	 * of the series merges alone tile in 4 ms). When it merged, the plan
	 * is not at the target and the series merges alone left at most half
	 * of the buffers, those go to the sweeps (pmg_series_run()) on a
	 * share of the time left.
	 */
	if ((r == SKS_FOUND && sks_check(pb, off, target)) || r == SKS_NOMEM || !parallels ||
	    series_live > pb->n / MG_SERIES_SHRINK)
		return r;
	now = vnpu_plan_now();
	if (now > deadline)
		return r;
	again = malloc((pb->n + 1) * sizeof(*again));
	if (!again)
		return SKS_NOMEM;
	switch (pmg_series_run(pb, target, now + (deadline - now) / MG_SERIES_SHARE, again,
			       nodes)) {
	case SKS_NOMEM:
		r = SKS_NOMEM;
		break;
	case SKS_FOUND:
		memcpy(off, again, pb->n * sizeof(*off));
		r = SKS_FOUND;
		break;
	}
	free(again);
	return r;
}

/*
 * The series merges of @pb to their fixed point, the merged instance
 * planned by @solver: pmg_series_run() (MG_SWEEPS, only when they leave
 * at most 1/MG_SERIES_SHRINK of the buffers) and pmg_commit_run()
 * (MG_COMMIT).
 */
static int mg_series_plan(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
			  enum mg_solver solver, uint64_t *off, uint64_t *nodes)
{
	struct mg g;
	struct mg_scratch s;
	int r = mg_setup(&g, &s, pb, target, deadline);

	if (r != SKS_FOUND)
		return r;
	while (mg_series(&g) > 0)
		;
	/* Merges cut short by the deadline are not judged by their count. */
	if (vnpu_plan_now() > deadline)
		r = SKS_TIMEOUT;
	else if (solver == MG_SWEEPS && mg_count_live(&g) > pb->n / MG_SERIES_SHRINK)
		r = SKS_INFEASIBLE;
	else
		r = mg_plan(&g, &s, target, solver, off, nodes);
	mg_cleanup(&g, &s);
	return r;
}

int pmg_series_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
		   uint64_t *off, uint64_t *nodes)
{
	return mg_series_plan(pb, target, deadline, MG_SWEEPS, off, nodes);
}

int pmg_commit_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
		   uint64_t *off, uint64_t *nodes)
{
	return mg_series_plan(pb, target, deadline, MG_COMMIT, off, nodes);
}
