// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Hole sweep over a PQ-tree: an exact search for a perfect packing (the
 * target equals the live total in every section, so nothing is wasted).
 *
 * In a plan without waste the buffers live in a section are stacked
 * without gaps, so a plan is an order of the live buffers in every
 * section. At a section boundary the buffers that end leave holes, the
 * maximal runs of them in the order, and the buffers that start fill
 * each hole exactly; the buffers that cross the boundary keep their
 * place. The sweep goes through the boundaries in time and decides only
 * which enders form a hole together and which starters fill it (a
 * grouping: equal sums). The orders themselves are never chosen: a
 * PQ-tree (Booth and Lueker, 1976) holds every order of the live
 * buffers that the groupings so far allow; a grouping makes each group
 * of enders consecutive (the reduction fails when no allowed order
 * does) and puts a node over the group's starters, in any order, in its
 * place. The search is depth first over the groupings of each boundary,
 * finest first, with a memo of the trees (up to equal buffers) from
 * which the rest of the sweep failed; it is complete for perfect packings
 * up to the caps on groupings per boundary.
 *
 * Offsets come at the end: one order allowed by the last tree gives the
 * buffers live to the end their places; going back through the
 * boundaries, each group's enders take the place of its starters, in an
 * order its block allowed when it was reduced. The plan is checked
 * before it is returned.
 */
#include <stdlib.h>
#include <string.h>

#include "planner_search.h"
#include "pqtree.h"
#include "vnpu.h"

/*
 * Two passes with different caps on the choices at a boundary (groupings
 * kept, enders joined to the first of a group, starter subsets per sum):
 * the search is complete only up to them, and which finds a ladder or a
 * tiling first varies (ladders of 1,501 buffers, seeds 27 and 37: one
 * each in under 25 ms, the other not in 3 s). The first pass gets a
 * quarter of the time.
 */
static const struct pqs_caps {
	uint32_t groupings, join, subsets;
} pqs_passes[] = { { 64, 6, 32 }, { 256, 16, 64 } };
#define PQS_GROUPINGS_MAX 256
/*
 * Steps of the grouping generation per boundary (enders joined, starters
 * tried): where tiny sizes match in countless ways (guillotine packings)
 * the joins alone would not end; the groupings found by then are kept.
 */
#define PQS_GEN_STEPS (1u << 18)
/*
 * Most tree nodes over all levels (a tree per boundary is kept for the
 * offsets): about 80 MiB. Ladders and guillotine packings of 6,000
 * buffers take under 2^20; a larger instance is left to the others.
 */
#define PQS_NODES_MAX (1u << 21)
/* Loop steps, and generation steps, between two reads of the clock. */
#define PQS_CLOCK_NODES 8
#define PQS_CLOCK_STEPS 1024

struct pqs_level {
	struct pqt tree;	/* the live buffers before this boundary */
	uint16_t *groups;	/* count groupings: a group per ender, then per starter */
	uint32_t count;		/* groupings generated; UINT32_MAX: not yet */
	uint32_t next;		/* the next to try */
	uint16_t ngroups;	/* groups of the grouping taken */
};

struct pqs {
	const struct sks_problem *pb;
	uint32_t nb;			/* boundaries: sections 1 .. nsec - 1 */
	uint32_t *efirst, *sfirst;	/* per section: its enders and starters in eid/sid */
	uint32_t *eid, *sid;
	struct pqs_level *lv;
	uint32_t maxnodes;
	/* grouping generation scratch */
	uint32_t *E, *S;		/* this boundary's enders (by size) and starters */
	uint32_t ne, ns;
	uint16_t *ge, *gs;		/* group of each ender / starter, 0: none yet */
	struct pqs_level *cur;
	/* failure memo: open addressing */
	uint64_t *memo;
	size_t memo_cap, memo_used;
	uint64_t deadline, stall, gain, took, *nodes;
	int timeout;
	const struct pqs_caps *caps;
	uint32_t steps;			/* of this boundary's generation */
};

static uint64_t pqs_key(uint32_t id, void *arg)
{
	const struct sks_problem *pb = arg;

	return vnpu_plan_mix64(pb->size[id] * 0x9e3779b97f4a7c15ull + pb->t1[id]);
}

/* 1 if (depth, h) is in the memo; else adds it when @add. */
static int pqs_memo(struct pqs *q, uint32_t depth, uint64_t h, int add)
{
	uint64_t k = vnpu_plan_mix64(h ^ ((uint64_t)depth << 40 | depth)) | 1;
	size_t i;

	if (!q->memo_cap)
		return 0;
	for (i = k & (q->memo_cap - 1); q->memo[i]; i = (i + 1) & (q->memo_cap - 1))
		if (q->memo[i] == k)
			return 1;
	if (add && q->memo_used < q->memo_cap / 2) {
		q->memo[i] = k;
		q->memo_used++;
	}
	return 0;
}

/* Out of time, or no deeper boundary for as long as the deepest took. */
static int pqs_out_of_time(struct pqs *q, uint64_t work_ns)
{
	uint64_t now = vnpu_plan_tick(work_ns);

	if (now >= q->deadline ||
	    (q->stall && now - q->gain > (q->took > q->stall ? q->took : q->stall)))
		q->timeout = 1;
	return q->timeout;
}

static int pqs_record(struct pqs *q)
{
	struct pqs_level *L = q->cur;
	uint16_t *g;

	if (L->count >= q->caps->groupings)
		return 1;
	g = L->groups + (size_t)L->count * (q->ne + q->ns);
	memcpy(g, q->ge, q->ne * sizeof(*g));
	memcpy(g + q->ne, q->gs, q->ns * sizeof(*g));
	L->count++;
	return L->count >= q->caps->groupings;
}

static int pqs_gen(struct pqs *q, uint16_t group);

/*
 * Starters from index @k on into group @group until @rem bytes are
 * filled; equal starters (size and end) are taken in order only.
 */
static int pqs_fill(struct pqs *q, uint16_t group, uint32_t k, uint64_t rem, uint32_t *subsets)
{
	const struct sks_problem *pb = q->pb;
	uint64_t left = 0;

	if (!rem) {
		++*subsets;
		return pqs_gen(q, group + 1);
	}
	for (uint32_t j = k; j < q->ns; j++)
		if (!q->gs[j])
			left += pb->size[q->S[j]];
	if (left < rem)
		return 0;
	for (uint32_t j = k; j < q->ns && *subsets < q->caps->subsets; j++) {
		uint32_t x = q->S[j];
		int r;

		if (q->gs[j] || pb->size[x] > rem)
			continue;
		/* An equal starter before it and left out: this subset was had. */
		if (j > k && !q->gs[j - 1] && pb->size[q->S[j - 1]] == pb->size[x] &&
		    pb->t1[q->S[j - 1]] == pb->t1[x])
			continue;
		if (++q->steps > PQS_GEN_STEPS ||
		    (!(q->steps % PQS_CLOCK_STEPS) && pqs_out_of_time(q, PQS_STEPS_TICK_NS)))
			return 1;
		q->gs[j] = group;
		r = pqs_fill(q, group, j + 1, rem - pb->size[x], subsets);
		q->gs[j] = 0;
		if (r)
			return r;
	}
	return 0;
}

/* Enders joined to the group of the first free ender: @need more from index @k. */
static int pqs_join(struct pqs *q, uint16_t group, uint32_t k, uint32_t need, uint64_t sum)
{
	if (!need) {
		uint32_t subsets = 0;

		return pqs_fill(q, group, 0, sum, &subsets);
	}
	for (uint32_t j = k; j < q->ne; j++) {
		int r;

		if (q->ge[j])
			continue;
		if (++q->steps > PQS_GEN_STEPS ||
		    (!(q->steps % PQS_CLOCK_STEPS) && pqs_out_of_time(q, PQS_STEPS_TICK_NS)))
			return 1;
		q->ge[j] = group;
		r = pqs_join(q, group, j + 1, need - 1, sum + q->pb->size[q->E[j]]);
		q->ge[j] = 0;
		if (r)
			return r;
	}
	return 0;
}

/* Groupings of the enders left, finest first; 1 when the cap is reached. */
static int pqs_gen(struct pqs *q, uint16_t group)
{
	uint32_t first = q->ne, left = 0;

	for (uint32_t j = 0; j < q->ne; j++)
		if (!q->ge[j]) {
			if (first == q->ne)
				first = j;
			left++;
		}
	if (first == q->ne) {
		for (uint32_t j = 0; j < q->ns; j++)
			if (!q->gs[j])
				return 0;
		return pqs_record(q);
	}
	for (uint32_t more = 0; more < left && more <= q->caps->join; more++) {
		int r;

		q->ge[first] = group;
		r = pqs_join(q, group, first + 1, more, q->pb->size[q->E[first]]);
		q->ge[first] = 0;
		if (r)
			return r;
	}
	return 0;
}

/* Applies grouping @gi of level @d to a copy of its tree into level d + 1. */
static int pqs_apply(struct pqs *q, uint32_t d, uint32_t gi)
{
	struct pqs_level *L = &q->lv[d], *N = &q->lv[d + 1];
	uint32_t b = d + 1, ne = q->efirst[b + 1] - q->efirst[b];
	uint32_t ns = q->sfirst[b + 1] - q->sfirst[b];
	const uint16_t *g = L->groups + (size_t)gi * (ne + ns);
	const uint32_t *E = q->eid + q->efirst[b], *S = q->sid + q->sfirst[b];
	uint32_t *set = q->E, *news = q->S;
	uint16_t ng = 0;

	for (uint32_t j = 0; j < ne; j++)
		if (g[j] > ng)
			ng = g[j];
	if (pqt_copy(&N->tree, &L->tree))
		return -1;
	for (uint16_t grp = 1; grp <= ng; grp++) {
		uint32_t k = 0, m = 0;
		int r;

		for (uint32_t j = 0; j < ne; j++)
			if (g[j] == grp)
				set[k++] = E[j];
		for (uint32_t j = 0; j < ns; j++)
			if (g[ne + j] == grp)
				news[m++] = S[j];
		r = pqt_reduce_replace(&N->tree, set, k, news, m, NULL);
		if (r == -2)
			return -1;
		if (r)
			return 0;
	}
	L->ngroups = ng;
	return 1;
}


/*
 * Offsets: an order of the last section's buffers allowed by the last
 * tree, then back through the boundaries, each group of starters replaced
 * by its enders in an order the tree before the boundary allows, with
 * all its groups reduced (a run of a Q node's children keeps the
 * orientation the node has in the later order, so either the block's
 * order or its reverse). -1 when none fits (not expected), -2 out of memory.
 */
static int pqs_offsets(struct pqs *q, uint64_t *off)
{
	const struct sks_problem *pb = q->pb;
	uint32_t *O = malloc((pb->n + 1) * sizeof(*O)), *N = malloc((pb->n + 1) * sizeof(*N));
	uint32_t *F = malloc((pb->n + 1) * sizeof(*F)), *pos = malloc((pb->n + 1) * sizeof(*pos));
	uint32_t *gof = malloc((pb->n + 1) * sizeof(*gof)), *lo = NULL, *hi = NULL, used = 0;
	uint32_t n, *bstart = NULL;
	struct pqt R;
	int rc = -2;

	if (pqt_init(&R, q->maxnodes))
		goto out_nor;
	bstart = malloc(((size_t)UINT16_MAX + 2) * sizeof(*bstart));
	if (!O || !N || !F || !pos || !gof || !bstart)
		goto out;
	n = (uint32_t)pqt_frontier(&q->lv[q->nb].tree, O);
	for (uint32_t d = q->nb + 1; d-- > 0;) {
		uint64_t y = 0;

		if (d < q->nb) {
			struct pqs_level *L = &q->lv[d];
			uint32_t b = d + 1, ne = q->efirst[b + 1] - q->efirst[b];
			uint32_t ns = q->sfirst[b + 1] - q->sfirst[b], nf, m = 0, ng = L->ngroups;
			const uint16_t *g = L->groups + (size_t)(L->next - 1) * (ne + ns);
			const uint32_t *E = q->eid + q->efirst[b], *S = q->sid + q->sfirst[b];
			uint32_t mask, tries = ng > 12 ? 1 : 1u << ng;
			int found = 0;

			if (pqt_copy(&R, &L->tree))
				goto out;
			for (uint16_t grp = 1; grp <= ng; grp++) {
				uint32_t k = 0;
				int r;

				for (uint32_t j = 0; j < ne; j++)
					if (g[j] == grp)
						F[k++] = E[j];
				r = pqt_reduce(&R, F, k);
				if (r) {
					rc = r == -2 ? -2 : -1;
					goto out;
				}
			}
			if (R.used > used) {
				free(lo);
				free(hi);
				used = R.used;
				lo = malloc(used * sizeof(*lo));
				hi = malloc(used * sizeof(*hi));
				if (!lo || !hi)
					goto out;
			}
			/* Each group's enders in the order of one frontier of R. */
			nf = (uint32_t)pqt_frontier(&R, F);
			for (uint32_t j = 0; j < ne; j++)
				gof[E[j]] = g[j];
			for (uint32_t j = 0; j < ns; j++)
				gof[S[j]] = g[ne + j];
			for (uint16_t grp = 1, k = 0; grp <= ng; grp++) {
				bstart[grp] = k;
				for (uint32_t j = 0; j < nf; j++)
					if (pb->t1[F[j]] == b && gof[F[j]] == grp)
						N[k++] = F[j];	/* N: the blocks, group by group */
				bstart[grp + 1] = k;
			}
			for (mask = 0; mask < tries && !found; mask++) {
				uint32_t *out = F, k = 0;

				/* O with each starter group replaced by its block. */
				for (uint32_t j = 0; j < n; j++) {
					uint32_t x = O[j];

					if (pb->t0[x] != b) {
						out[k++] = x;
						continue;
					}
					if (j && pb->t0[O[j - 1]] == b && gof[O[j - 1]] == gof[x])
						continue;
					for (uint32_t i = bstart[gof[x]]; i < bstart[gof[x] + 1]; i++)
						out[k++] = N[mask >> (gof[x] - 1) & 1 ?
							      bstart[gof[x] + 1] - 1 - (i - bstart[gof[x]]) : i];
				}
				m = k;
				for (uint32_t j = 0; j < m; j++)
					pos[out[j]] = j;
				found = m == R.nleaves && pqt_accepts(&R, pos, lo, hi);
			}
			if (!found) {
				rc = -1;
				goto out;
			}
			memcpy(O, F, m * sizeof(*O));
			n = m;
		}
		for (uint32_t j = 0; j < n; j++) {
			off[O[j]] = y;
			y += pb->size[O[j]];
		}
	}
	rc = 0;
out:
	pqt_free(&R);
out_nor:
	free(O);
	free(N);
	free(F);
	free(pos);
	free(gof);
	free(lo);
	free(hi);
	free(bstart);
	return rc;
}

/* The depth-first search over the groupings of each boundary. */
static int pqs_search(struct pqs *q)
{
	const struct sks_problem *pb = q->pb;
	uint32_t d = 0, deepest = 0;
	uint64_t begin = vnpu_plan_now(), count = 0;

	q->gain = begin;
	q->lv[0].count = UINT32_MAX;
	for (;;) {
		struct pqs_level *L = &q->lv[d];
		uint32_t b = d + 1;
		int went;

		if (d == q->nb)
			return SKS_FOUND;
		if (!(++count % PQS_CLOCK_NODES) && pqs_out_of_time(q, PQS_NODES_TICK_NS))
			return SKS_TIMEOUT;
		if (L->count == UINT32_MAX) {
			++*q->nodes;
			if (d > deepest) {
				uint64_t now = vnpu_plan_now();

				deepest = d;
				q->took = now - begin;
				q->gain = now;
			}
			L->count = 0;
			L->next = 0;
			if (!pqs_memo(q, d, pqt_hash(&L->tree, pqs_key, (void *)pb), 0)) {
				q->ne = q->efirst[b + 1] - q->efirst[b];
				q->ns = q->sfirst[b + 1] - q->sfirst[b];
				memcpy(q->E, q->eid + q->efirst[b], q->ne * sizeof(*q->E));
				memcpy(q->S, q->sid + q->sfirst[b], q->ns * sizeof(*q->S));
				memset(q->ge, 0, q->ne * sizeof(*q->ge));
				memset(q->gs, 0, q->ns * sizeof(*q->gs));
				q->cur = L;
				q->steps = 0;
				pqs_gen(q, 1);
				if (q->timeout)
					return SKS_TIMEOUT;
			}
		}
		went = 0;
		while (L->next < L->count) {
			int r = pqs_apply(q, d, L->next++);

			if (r < 0)
				return SKS_NOMEM;
			if (r) {
				went = 1;
				break;
			}
		}
		if (went) {
			d++;
			q->lv[d].count = UINT32_MAX;
			continue;
		}
		/* Every grouping failed: remember the tree, go back. */
		pqs_memo(q, d, pqt_hash(&L->tree, pqs_key, (void *)pb), 1);
		if (!d)
			return SKS_INFEASIBLE;
		d--;
	}
}

static void pqs_free(struct pqs *q)
{
	if (q->lv)
		for (uint32_t d = 0; d <= q->nb; d++) {
			pqt_free(&q->lv[d].tree);
			free(q->lv[d].groups);
		}
	free(q->lv);
	free(q->efirst);
	free(q->sfirst);
	free(q->eid);
	free(q->sid);
	free(q->E);
	free(q->S);
	free(q->ge);
	free(q->gs);
	free(q->memo);
}

struct pqs_kv {
	uint64_t size;
	uint32_t id;
};

/* Largest first, then by id. */
static int pqs_kv_cmp(const void *a, const void *b)
{
	const struct pqs_kv *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Buffers by the section they end in (@ends) or start in, each section's
 * in the order of @by_size (a stable distribution: largest first).
 */
static int pqs_index(struct pqs *q, const struct pqs_kv *by_size, int ends, uint32_t **first,
		     uint32_t **ids)
{
	const struct sks_problem *pb = q->pb;
	uint32_t nsec = pb->nsec, *f = calloc((size_t)nsec + 2, sizeof(*f));
	uint32_t *id = malloc((pb->n ? pb->n : 1) * sizeof(*id));

	*first = f;
	*ids = id;
	if (!f || !id)
		return -1;
	for (size_t i = 0; i < pb->n; i++)
		f[(ends ? pb->t1[i] : pb->t0[i]) + 1]++;
	for (uint32_t s = 0; s <= nsec; s++)
		f[s + 1] += f[s];
	for (size_t i = 0; i < pb->n; i++) {
		uint32_t x = by_size[i].id;

		id[f[ends ? pb->t1[x] : pb->t0[x]]++] = x;
	}
	for (uint32_t s = nsec + 1; s > 0; s--)
		f[s] = f[s - 1];
	f[0] = 0;
	return 0;
}

int pqs_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline, uint64_t stall,
	    uint64_t *off, uint64_t *nodes)
{
	struct pqs q = { .pb = pb, .deadline = deadline, .stall = stall, .nodes = nodes };
	struct pqs_kv *by_size = NULL;
	uint32_t live = 0, most = 0, widest = 0;
	uint64_t align = 1;
	int r = SKS_NOMEM;

	if (!pb->n || !pb->nsec)
		return SKS_INFEASIBLE;
	for (uint32_t s = 0; s < pb->nsec; s++)
		if (pb->sec_total[s] != target)
			return SKS_INFEASIBLE;
	/* Stacked offsets are sums of sizes: every size a multiple of every alignment. */
	for (size_t i = 0; i < pb->n; i++)
		if (pb->align[i] > align)
			align = pb->align[i];
	for (size_t i = 0; i < pb->n; i++)
		if (pb->size[i] % align)
			return SKS_INFEASIBLE;
	q.nb = pb->nsec - 1;
	by_size = malloc(pb->n * sizeof(*by_size));
	if (!by_size)
		goto out;
	for (size_t i = 0; i < pb->n; i++)
		by_size[i] = (struct pqs_kv){ pb->size[i], (uint32_t)i };
	qsort(by_size, pb->n, sizeof(*by_size), pqs_kv_cmp);
	if (pqs_index(&q, by_size, 1, &q.efirst, &q.eid) ||
	    pqs_index(&q, by_size, 0, &q.sfirst, &q.sid))
		goto out;
	/* Most live buffers and most buffers at one boundary: the trees' and scratch sizes. */
	for (uint32_t s = 0; s < pb->nsec; s++) {
		uint32_t e = q.efirst[s + 1] - q.efirst[s], st = q.sfirst[s + 1] - q.sfirst[s];

		live += st;
		live -= e;
		if (live > most)
			most = live;
		if (e > widest)
			widest = e;
		if (st > widest)
			widest = st;
	}
	if (widest >= UINT16_MAX)
		goto infeasible;
	q.maxnodes = 2 * (most + widest) + 8;
	if ((uint64_t)q.maxnodes * (q.nb + 1) > PQS_NODES_MAX)
		goto infeasible;
	q.E = malloc(((size_t)pb->n + 1) * sizeof(*q.E));
	q.S = malloc(((size_t)widest + 1) * sizeof(*q.S));
	q.ge = malloc(((size_t)widest + 1) * sizeof(*q.ge));
	q.gs = malloc(((size_t)widest + 1) * sizeof(*q.gs));
	q.lv = calloc((size_t)q.nb + 1, sizeof(*q.lv));
	q.memo_cap = 1u << 16;
	q.memo = calloc(q.memo_cap, sizeof(*q.memo));
	if (!q.E || !q.S || !q.ge || !q.gs || !q.lv || !q.memo)
		goto out;
	for (uint32_t d = 0; d <= q.nb; d++) {
		uint32_t b = d + 1, ne = b < pb->nsec ? q.efirst[b + 1] - q.efirst[b] : 0;
		uint32_t ns = b < pb->nsec ? q.sfirst[b + 1] - q.sfirst[b] : 0;
		struct pqs_level *L = &q.lv[d];

		if (pqt_init(&L->tree, q.maxnodes))
			goto out;
		if (d == q.nb)
			continue;
		L->groups = malloc((size_t)PQS_GROUPINGS_MAX * (ne + ns) * sizeof(*L->groups) + 1);
		if (!L->groups)
			goto out;
	}
	if (pqt_make_p(&q.lv[0].tree, q.sid + q.sfirst[0], q.sfirst[1] - q.sfirst[0]))
		goto out;
	for (size_t pass = 0; pass < sizeof(pqs_passes) / sizeof(pqs_passes[0]); pass++) {
		uint64_t now = vnpu_plan_tick(PQS_SETUP_TICK_NS * pb->n);

		q.caps = &pqs_passes[pass];
		q.deadline = pass + 1 < sizeof(pqs_passes) / sizeof(pqs_passes[0]) && now < deadline ?
			     now + (deadline - now) / 4 : deadline;
		q.timeout = 0;
		q.took = 0;
		memset(q.memo, 0, q.memo_cap * sizeof(*q.memo));
		q.memo_used = 0;
		r = pqs_search(&q);
		if ((r != SKS_TIMEOUT && r != SKS_INFEASIBLE) || vnpu_plan_now() >= deadline)
			break;
	}
	if (r == SKS_FOUND) {
		int o = pqs_offsets(&q, off);

		if (o == -2)
			r = SKS_NOMEM;
		else if (o || !sks_check(pb, off, target))
			r = SKS_INFEASIBLE;
	}
	goto out;
infeasible:
	r = SKS_INFEASIBLE;
out:
	free(by_size);
	pqs_free(&q);
	return r;
}
