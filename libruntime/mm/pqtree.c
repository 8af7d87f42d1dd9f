// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * PQ-trees (Booth and Lueker, 1976) for the planner's hole sweep
 * (planner_pq.c): the reduction that makes a set of leaves consecutive
 * (templates P2 to P6, Q2 and Q3 on the pertinent subtree), and the
 * replacement of the consecutive block by a P node over new leaves.
 */
#include <stdlib.h>
#include <string.h>

#include "planner_search.h"
#include "pqtree.h"

#define N(x) (t->nodes[(x)])

enum { EMPTY = 0, FULL = 1, PARTIAL = 2, ROOT = 3 };
enum { E_FAIL = -1, E_NOMEM = -2 };

/* ---------------------------------------------------------------- pool */

int pqt_init(struct pqt *t, uint32_t max_nodes)
{
	if (max_nodes < 4)
		max_nodes = 4;
	t->nodes = malloc((size_t)max_nodes * sizeof *t->nodes);
	t->cap = t->nodes ? max_nodes : 0;
	t->used = 0;
	t->free_head = -1;
	t->root = -1;
	t->nleaves = 0;
	return t->nodes ? 0 : -1;
}

void pqt_free(struct pqt *t)
{
	free(t->nodes);
	t->nodes = NULL;
	t->cap = t->used = 0;
	t->free_head = t->root = -1;
	t->nleaves = 0;
}

static int grow(struct pqt *t, uint32_t need)
{
	uint32_t nc;
	struct pqt_node *nn;

	if (need <= t->cap)
		return 0;
	if (need > (uint32_t)INT32_MAX)
		return -1;
	nc = t->cap < 4 ? 4 : t->cap;
	while (nc < need)
		nc = nc > (uint32_t)INT32_MAX / 2 ? (uint32_t)INT32_MAX : nc * 2;
	nn = realloc(t->nodes, (size_t)nc * sizeof *nn);
	if (!nn)
		return -1;
	t->nodes = nn;
	t->cap = nc;
	return 0;
}

int pqt_copy(struct pqt *dst, const struct pqt *src)
{
	if (dst == src)
		return 0;
	if (grow(dst, src->used))
		return -1;
	if (src->used)
		memcpy(dst->nodes, src->nodes, (size_t)src->used * sizeof *src->nodes);
	dst->used = src->used;
	dst->free_head = src->free_head;
	dst->root = src->root;
	dst->nleaves = src->nleaves;
	return 0;
}

static int32_t alloc_node(struct pqt *t, uint8_t type)
{
	int32_t x;

	if (t->free_head >= 0) {
		x = t->free_head;
		t->free_head = N(x).next;
	} else {
		if (t->used == t->cap && grow(t, t->used + 1))
			return -1;
		x = (int32_t)t->used++;
	}
	N(x).id = 0;
	N(x).parent = N(x).first = N(x).last = N(x).prev = N(x).next = -1;
	N(x).nch = N(x).pc = N(x).lc = 0;
	N(x).type = type;
	return x;
}

static void free_node(struct pqt *t, int32_t x)
{
	N(x).type = PQT_FREE;
	N(x).next = t->free_head;
	t->free_head = x;
}

/* Leftmost leaf of the subtree at x. */
static int32_t descend(const struct pqt *t, int32_t x)
{
	while (N(x).first >= 0)
		x = N(x).first;
	return x;
}

/* Post-order successor of x within the subtree rooted at r (x != r). */
static int32_t post_next(const struct pqt *t, int32_t x)
{
	if (N(x).next >= 0)
		return descend(t, N(x).next);
	return N(x).parent;
}

static void free_subtree(struct pqt *t, int32_t r)
{
	int32_t x = descend(t, r), nx;

	for (;;) {
		if (x == r) {
			free_node(t, x);
			return;
		}
		nx = post_next(t, x);
		free_node(t, x);
		x = nx;
	}
}

/* Leaves of the subtree at r, left to right, into out; returns the count. */
static size_t subtree_frontier(const struct pqt *t, int32_t r, uint32_t *out)
{
	size_t n = 0;
	int32_t x = descend(t, r);

	for (;;) {
		if (N(x).type == PQT_LEAF) {
			if (out)
				out[n] = N(x).id;
			n++;
		}
		if (x == r)
			return n;
		x = post_next(t, x);
	}
}

/* New internal node of the given type over kids[0..n) (linked in this order). */
static int32_t mk(struct pqt *t, uint8_t type, const int32_t *kids, size_t n)
{
	int32_t x = alloc_node(t, type), prev = -1;
	size_t i;

	if (x < 0)
		return -1;
	for (i = 0; i < n; i++) {
		int32_t c = kids[i];
		N(c).parent = x;
		N(c).prev = prev;
		N(c).next = -1;
		if (prev >= 0)
			N(prev).next = c;
		else
			N(x).first = c;
		prev = c;
		N(x).pc += N(c).pc;
		N(x).lc += N(c).lc;
	}
	N(x).last = prev;
	N(x).nch = (uint32_t)n;
	return x;
}

/* mkP of pq.py: a single kid is returned as is. */
static int32_t mkP(struct pqt *t, const int32_t *kids, size_t n)
{
	return n == 1 ? kids[0] : mk(t, PQT_P, kids, n);
}

/* Put node nw where old is (same parent / siblings); old is not freed. */
static void put_in_place(struct pqt *t, int32_t par, int32_t pv, int32_t nx, int32_t nw)
{
	N(nw).parent = par;
	N(nw).prev = pv;
	N(nw).next = nx;
	if (par < 0) {
		t->root = nw;
		return;
	}
	if (pv >= 0)
		N(pv).next = nw;
	else
		N(par).first = nw;
	if (nx >= 0)
		N(nx).prev = nw;
	else
		N(par).last = nw;
}

static void replace_node(struct pqt *t, int32_t old, int32_t nw)
{
	put_in_place(t, N(old).parent, N(old).prev, N(old).next, nw);
}

/* ---------------------------------------------------------------- make_p */

int pqt_make_p(struct pqt *t, const uint32_t *ids, size_t n)
{
	int32_t *kids;
	size_t i;

	if (n > (size_t)INT32_MAX / 2)
		return -1;
	t->used = 0;
	t->free_head = -1;
	t->root = -1;
	t->nleaves = 0;
	if (n == 0)
		return 0;
	if (grow(t, (uint32_t)n + 1))
		return -1;
	kids = malloc(n * sizeof *kids);
	if (!kids)
		return -1;
	for (i = 0; i < n; i++) {
		kids[i] = alloc_node(t, PQT_LEAF);
		N(kids[i]).id = ids[i];
		N(kids[i]).lc = 1;
	}
	t->root = mkP(t, kids, n);
	free(kids);
	if (t->root < 0)
		return -1;
	N(t->root).parent = N(t->root).prev = N(t->root).next = -1;
	t->nleaves = (uint32_t)n;
	return 0;
}

/* ---------------------------------------------------------------- reduce */

struct buf {
	int32_t *v;
	size_t n;
};

static int label_of(const struct pqt *t, int32_t c)
{
	if (N(c).pc == 0)
		return EMPTY;
	if (N(c).pc == N(c).lc)
		return FULL;
	return PARTIAL;
}

/* Appends the kids of partial Q node q (forward or reversed) to b. */
static void push_kids(const struct pqt *t, struct buf *b, int32_t q, int rev)
{
	int32_t c;

	if (!rev)
		for (c = N(q).first; c >= 0; c = N(c).next)
			b->v[b->n++] = c;
	else
		for (c = N(q).last; c >= 0; c = N(c).prev)
			b->v[b->n++] = c;
}

/*
 * process() of pq.py for internal node x whose label is PARTIAL (0 < pc < lc).
 * Returns PARTIAL (non-root; *out is a Q node ordered empty..full) or ROOT
 * (*out is the restructured subtree), or E_FAIL / E_NOMEM.
 */
static int process(struct pqt *t, int32_t x, int is_root, int32_t *out)
{
	size_t nk = N(x).nch, i, ne = 0, nf = 0, np = 0, cap;
	int32_t *kids, *empty, *full, part[3] = { -1, -1, -1 };
	int *lab;
	struct buf b = { NULL, 0 };
	int32_t c, res = -1;
	int rc = E_NOMEM;

	kids = malloc(nk * 3 * sizeof *kids);
	lab = malloc(nk * sizeof *lab);
	if (!kids || !lab)
		goto done;
	empty = kids + nk;
	full = kids + 2 * nk;
	/* collect the kids first: processing a kid may free it */
	i = 0;
	for (c = N(x).first; c >= 0; c = N(c).next)
		kids[i++] = c;
	cap = 2;
	for (i = 0; i < nk; i++) {
		lab[i] = label_of(t, kids[i]);
		if (lab[i] == PARTIAL) {
			int32_t q;
			rc = process(t, kids[i], 0, &q);
			if (rc < 0)
				goto done;
			kids[i] = q;
			cap += N(q).nch;
			if (np < 3)
				part[np] = q;
			np++;
		} else if (lab[i] == FULL) {
			full[nf++] = kids[i];
			cap++;
		} else {
			empty[ne++] = kids[i];
			cap++;
		}
	}
	rc = E_NOMEM;
	if (nf == nk) { /* all full (not reached for a PARTIAL x) */
		*out = x;
		rc = FULL;
		goto done;
	}
	b.v = malloc(cap * sizeof *b.v);
	if (!b.v)
		goto done;

	if (N(x).type == PQT_P) {
		if (!is_root) {
			if (np == 0) { /* P3 */
				int32_t two[2];
				if ((two[0] = mkP(t, empty, ne)) < 0 || (two[1] = mkP(t, full, nf)) < 0)
					goto done;
				if ((res = mk(t, PQT_Q, two, 2)) < 0)
					goto done;
			} else if (np == 1) { /* P5 */
				if (ne && (b.v[b.n++] = mkP(t, empty, ne)) < 0)
					goto done;
				push_kids(t, &b, part[0], 0);
				if (nf && (b.v[b.n++] = mkP(t, full, nf)) < 0)
					goto done;
				if ((res = mk(t, PQT_Q, b.v, b.n)) < 0)
					goto done;
				free_node(t, part[0]);
			} else {
				rc = E_FAIL;
				goto done;
			}
			free_node(t, x);
			*out = res;
			rc = PARTIAL;
			goto done;
		}
		if (np == 0) { /* P2 */
			if (nf >= 2) {
				memcpy(b.v, empty, ne * sizeof *b.v);
				b.n = ne;
				if ((b.v[b.n++] = mk(t, PQT_P, full, nf)) < 0)
					goto done;
				if ((res = mk(t, PQT_P, b.v, b.n)) < 0)
					goto done;
				free_node(t, x);
			} else {
				res = x;
			}
		} else if (np <= 2) { /* P4, P6 */
			int32_t q;
			push_kids(t, &b, part[0], 0);
			if (nf && (b.v[b.n++] = mkP(t, full, nf)) < 0)
				goto done;
			if (np == 2)
				push_kids(t, &b, part[1], 1);
			if ((q = mk(t, PQT_Q, b.v, b.n)) < 0)
				goto done;
			free_node(t, part[0]);
			if (np == 2)
				free_node(t, part[1]);
			if (ne) {
				memcpy(b.v, empty, ne * sizeof *b.v);
				b.v[ne] = q;
				if ((res = mkP(t, b.v, ne + 1)) < 0)
					goto done;
			} else {
				res = q;
			}
			free_node(t, x);
		} else {
			rc = E_FAIL;
			goto done;
		}
		*out = res;
		rc = ROOT;
		goto done;
	}

	/* Q node */
	if (!is_root) { /* Q2 / Q3-less: singly partial, full kids at one end */
		int o;
		for (o = 0; o < 2; o++) {
			size_t j, kk = nk, ok = 1;
#define AT(idx) (o ? (nk - 1 - (idx)) : (idx))
			while (kk > 0 && lab[AT(kk - 1)] == FULL)
				kk--;
			j = kk;
			if (j > 0 && lab[AT(j - 1)] == PARTIAL)
				j--;
			for (i = 0; i < j; i++)
				if (lab[AT(i)] != EMPTY)
					ok = 0;
			if (!ok)
				continue;
			b.n = 0;
			for (i = 0; i < nk; i++) {
				size_t a = AT(i);
				if (lab[a] == PARTIAL)
					push_kids(t, &b, kids[a], 0);
				else
					b.v[b.n++] = kids[a];
			}
#undef AT
			if ((res = mk(t, PQT_Q, b.v, b.n)) < 0)
				goto done;
			for (i = 0; i < np && i < 3; i++)
				free_node(t, part[i]);
			free_node(t, x);
			*out = res;
			rc = PARTIAL;
			goto done;
		}
		rc = E_FAIL;
		goto done;
	}
	{ /* root Q: E* [P] F* [P] E* */
		size_t lo = nk, hi = 0;
		for (i = 0; i < nk; i++)
			if (lab[i] != EMPTY) {
				if (lo == nk)
					lo = i;
				hi = i;
			}
		rc = E_FAIL;
		if (np > 2)
			goto done;
		for (i = lo; i <= hi; i++)
			if (lab[i] == EMPTY || (lab[i] == PARTIAL && i != lo && i != hi))
				goto done;
		rc = E_NOMEM;
		for (i = 0; i < nk; i++) {
			if (lab[i] == PARTIAL)
				push_kids(t, &b, kids[i], i == hi && i != lo);
			else
				b.v[b.n++] = kids[i];
		}
		if ((res = mk(t, PQT_Q, b.v, b.n)) < 0)
			goto done;
		for (i = 0; i < np; i++)
			free_node(t, part[i]);
		free_node(t, x);
		*out = res;
		rc = ROOT;
	}
done:
	free(b.v);
	free(kids);
	free(lab);
	return rc;
}

/*
 * replace_block() of pq.py: x is the reduced pertinent subtree; replace the
 * block of full nodes covering all k pertinent leaves by nn.  *out is the node
 * that now stands where x stood.
 */
static int replace_block(struct pqt *t, int32_t x, uint32_t k, int32_t nn,
			 uint32_t *block_order, int32_t *out)
{
	int32_t c, lo = -1, hi = -1, nx;
	uint32_t sum = 0;
	size_t w = 0;

	if (N(x).type == PQT_P) {
		for (c = N(x).first; c >= 0; c = N(c).next) {
			if (N(c).lc > 0 && N(c).pc == N(c).lc && N(c).lc == k) {
				if (block_order)
					subtree_frontier(t, c, block_order);
				replace_node(t, c, nn);
				free_subtree(t, c);
				*out = x;
				return 0;
			}
			if (N(c).pc == k && N(c).type != PQT_LEAF) {
				int32_t sub, par = x, pv = N(c).prev, nxt = N(c).next;
				int rc = replace_block(t, c, k, nn, block_order, &sub);
				if (rc < 0)
					return rc;
				put_in_place(t, par, pv, nxt, sub);
				*out = x;
				return 0;
			}
		}
		return E_FAIL;
	}
	if (N(x).type != PQT_Q)
		return E_FAIL;
	for (c = N(x).first; c >= 0; c = N(c).next)
		if (N(c).pc == N(c).lc) {
			if (lo < 0)
				lo = c;
			hi = c;
		}
	if (lo < 0)
		return E_FAIL;
	for (c = lo;; c = N(c).next) {
		if (N(c).pc != N(c).lc)
			return E_FAIL;
		sum += N(c).pc;
		if (c == hi)
			break;
	}
	if (sum != k)
		return E_FAIL;
	if (block_order)
		for (c = lo;; c = N(c).next) {
			w += subtree_frontier(t, c, block_order + w);
			if (c == hi)
				break;
		}
	/* unlink lo..hi, put nn there */
	put_in_place(t, x, N(lo).prev, N(hi).next, nn);
	for (c = lo;; c = nx) {
		uint32_t last = c == hi;
		nx = N(c).next;
		N(x).nch--;
		free_subtree(t, c);
		if (last)
			break;
	}
	N(x).nch++;
	if (N(x).nch == 1) {
		*out = N(x).first;
		free_node(t, x);
	} else {
		if (N(x).nch == 2)
			N(x).type = PQT_P;
		*out = x;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int prepare(struct pqt *t, const uint32_t *set, size_t k, size_t m, int32_t *prp)
{
	uint32_t *s;
	int32_t x, pr;
	size_t i;

	if (t->root < 0 || k == 0 || m == 0 || k > t->nleaves || m > (size_t)INT32_MAX / 2)
		return E_FAIL;
	s = malloc(k * sizeof *s);
	if (!s)
		return E_NOMEM;
	memcpy(s, set, k * sizeof *s);
	qsort(s, k, sizeof *s, cmp_u32);
	for (i = 1; i < k; i++)
		if (s[i] == s[i - 1]) {
			free(s);
			return E_FAIL;
		}
	/* pc / lc for every node, post-order */
	x = descend(t, t->root);
	for (;;) {
		if (N(x).type == PQT_LEAF) {
			N(x).lc = 1;
			N(x).pc = bsearch(&N(x).id, s, k, sizeof *s, cmp_u32) != NULL;
		} else {
			int32_t c;
			N(x).lc = N(x).pc = 0;
			for (c = N(x).first; c >= 0; c = N(c).next) {
				N(x).lc += N(c).lc;
				N(x).pc += N(c).pc;
			}
		}
		if (x == t->root)
			break;
		x = post_next(t, x);
	}
	free(s);
	if (N(t->root).pc != k)
		return E_FAIL; /* some id of set is not in the tree */

	/* pertinent root */
	pr = t->root;
	for (;;) {
		int32_t c;
		for (c = N(pr).first; c >= 0; c = N(c).next)
			if (N(c).pc == k)
				break;
		if (c < 0)
			break;
		pr = c;
	}
	*prp = pr;
	return 0;
}

int pqt_reduce_replace(struct pqt *t, const uint32_t *set, size_t k,
		       const uint32_t *new_ids, size_t m, uint32_t *block_order)
{
	int32_t pr, nn, par, pv, nx, res;
	size_t i;
	int rc = prepare(t, set, k, m, &pr);

	if (rc)
		return rc;
	par = N(pr).parent;
	pv = N(pr).prev;
	nx = N(pr).next;

	/* the replacement node */
	if (m == 1) {
		nn = alloc_node(t, PQT_LEAF);
		if (nn < 0)
			return E_NOMEM;
		N(nn).id = new_ids[0];
	} else {
		int32_t *kids = malloc(m * sizeof *kids);
		if (!kids)
			return E_NOMEM;
		for (i = 0; i < m; i++) {
			kids[i] = alloc_node(t, PQT_LEAF);
			if (kids[i] < 0) {
				free(kids);
				return E_NOMEM;
			}
			N(kids[i]).id = new_ids[i];
		}
		nn = mk(t, PQT_P, kids, m);
		free(kids);
		if (nn < 0)
			return E_NOMEM;
	}

	if (N(pr).pc == N(pr).lc) { /* leaf or full node: the block is pr */
		if (block_order)
			subtree_frontier(t, pr, block_order);
		put_in_place(t, par, pv, nx, nn);
		free_subtree(t, pr);
	} else {
		int32_t newpr;
		rc = process(t, pr, 1, &newpr);
		if (rc < 0)
			return rc;
		rc = replace_block(t, newpr, (uint32_t)k, nn, block_order, &res);
		if (rc < 0)
			return rc;
		put_in_place(t, par, pv, nx, res);
	}
	t->nleaves = t->nleaves - (uint32_t)k + (uint32_t)m;
	return 0;
}

/* ---------------------------------------------------------------- queries */

size_t pqt_leaves(const struct pqt *t)
{
	return t->nleaves;
}

size_t pqt_frontier(const struct pqt *t, uint32_t *out)
{
	if (t->root < 0)
		return 0;
	return subtree_frontier(t, t->root, out);
}

static uint64_t mix64(uint64_t z)
{
	return vnpu_plan_mix64(z + 0x9e3779b97f4a7c15ULL);
}

static uint64_t comb(uint64_t h, uint64_t c)
{
	return mix64(h ^ mix64(c + 0x632be59bd9b4e019ULL * (h | 1)));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t pqt_hash(const struct pqt *t, uint64_t (*key)(uint32_t id, void *arg), void *arg)
{
	uint64_t *st, h;
	size_t sp = 0;
	int32_t x;

	if (t->root < 0)
		return mix64(0x5eedULL);
	st = malloc((size_t)t->used * sizeof *st);
	if (!st)
		return 0; /* out of memory: degenerate hash */
	x = descend(t, t->root);
	for (;;) {
		if (N(x).type == PQT_LEAF) {
			st[sp++] = mix64(key ? key(N(x).id, arg) : N(x).id);
		} else {
			size_t n = N(x).nch, i;
			uint64_t *c = st + sp - n;
			if (N(x).type == PQT_P) {
				qsort(c, n, sizeof *c, cmp_u64);
				h = 0x50ULL + n;
				for (i = 0; i < n; i++)
					h = comb(h, c[i]);
			} else {
				uint64_t h2 = 0x51ULL + n;
				h = 0x51ULL + n;
				for (i = 0; i < n; i++) {
					h = comb(h, c[i]);
					h2 = comb(h2, c[n - 1 - i]);
				}
				if (h2 < h)
					h = h2;
				h = mix64(h ^ 0x5151ULL);
			}
			sp -= n;
			st[sp++] = h;
		}
		if (x == t->root)
			break;
		x = post_next(t, x);
	}
	h = st[0];
	free(st);
	return h;
}

int pqt_reduce(struct pqt *t, const uint32_t *set, size_t k)
{
	int32_t pr, par, pv, nx, newpr;
	int rc = prepare(t, set, k, 1, &pr);

	if (rc)
		return rc;
	if (N(pr).pc == N(pr).lc)
		return 0;
	par = N(pr).parent;
	pv = N(pr).prev;
	nx = N(pr).next;
	rc = process(t, pr, 1, &newpr);
	if (rc < 0)
		return rc;
	put_in_place(t, par, pv, nx, newpr);
	return 0;
}

int pqt_accepts(const struct pqt *t, const uint32_t *pos, uint32_t *lo, uint32_t *hi)
{
	int32_t x;

	if (t->root < 0)
		return 1;
	x = descend(t, t->root);
	for (;;) {
		if (N(x).type == PQT_LEAF) {
			lo[x] = hi[x] = pos[N(x).id];
		} else {
			int32_t c;
			uint32_t l = UINT32_MAX, h = 0, cnt = 0;
			int fwd = 1, bwd = 1;

			for (c = N(x).first; c >= 0; c = N(c).next) {
				if (lo[c] < l)
					l = lo[c];
				if (hi[c] > h)
					h = hi[c];
				cnt += hi[c] - lo[c] + 1;
				if (N(c).next >= 0) {
					if (hi[c] + 1 != lo[N(c).next])
						fwd = 0;
					if (hi[N(c).next] + 1 != lo[c])
						bwd = 0;
				}
			}
			if (h - l + 1 != cnt)
				return 0;
			if (N(x).type == PQT_Q && !fwd && !bwd)
				return 0;
			lo[x] = l;
			hi[x] = h;
		}
		if (x == t->root)
			break;
		x = post_next(t, x);
	}
	return 1;
}
