// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: the planner's PQ-trees (libruntime/mm/pqtree.c) against
 * brute force: after every reduction and replacement the orders the tree
 * allows are exactly the orders allowed before in which the set is
 * consecutive (the block then in any order); a set no allowed order makes
 * consecutive is refused; the hash is blind to P-node order and Q-node
 * reversal; pqt_reduce() and pqt_accepts() agree with enumeration; large
 * and deep trees.
 */
#include "pqtree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#define MAXL 8      /* max leaves in brute-force trees */
#define MAXSYM 31   /* symbols 0..30, 31 = block marker */
#define MARK 31u

static uint64_t rs = 0x243f6a8885a308d3ULL;
static uint64_t rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 0x2545f4914f6cdd1dULL;
}
static uint32_t rndn(uint32_t n) { return (uint32_t)(rnd() % n); }

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #c); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)

/* ---------------- symbol table for one trial ---------------- */
static uint32_t symid[MAXSYM];
static int nsym;
static unsigned sym(uint32_t id)
{
	int i;
	for (i = 0; i < nsym; i++)
		if (symid[i] == id)
			return (unsigned)i;
	CHECK(0, "unknown id %u", id);
	return 0;
}
static uint32_t fresh_id(void)
{
	for (;;) {
		uint32_t id = (uint32_t)rnd();
		int i, dup = 0;
		for (i = 0; i < nsym; i++)
			dup |= symid[i] == id;
		if (!dup) {
			CHECK(nsym < MAXSYM, "too many symbols");
			symid[nsym++] = id;
			return id;
		}
	}
}

/* ---------------- sets of sequences ---------------- */
struct seqs {
	uint64_t *v;
	size_t n, cap;
	int len;
};
static void push(struct seqs *s, uint64_t x)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->v = realloc(s->v, s->cap * sizeof *s->v);
		CHECK(s->v != NULL, "oom");
	}
	s->v[s->n++] = x;
}
static int cmpu64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}
static void uniq(struct seqs *s)
{
	size_t i, w = 0;
	if (s->n == 0)
		return;
	qsort(s->v, s->n, sizeof *s->v, cmpu64);
	for (i = 0; i < s->n; i++)
		if (w == 0 || s->v[w - 1] != s->v[i])
			s->v[w++] = s->v[i];
	s->n = w;
}
static unsigned at(uint64_t code, int len, int p)
{
	return (unsigned)(code >> (5 * (len - 1 - p))) & 31u;
}

static int next_perm(int *a, int n)
{
	int i = n - 2, j, x;
	while (i >= 0 && a[i] >= a[i + 1])
		i--;
	if (i < 0)
		return 0;
	j = n - 1;
	while (a[j] <= a[i])
		j--;
	x = a[i]; a[i] = a[j]; a[j] = x;
	for (i++, j = n - 1; i < j; i++, j--) {
		x = a[i]; a[i] = a[j]; a[j] = x;
	}
	return 1;
}

/* All frontiers of the subtree at x (sorted, unique). */
static struct seqs enumerate(const struct pqt *t, int32_t x)
{
	struct seqs r = { 0 };
	const struct pqt_node *nd = &t->nodes[x];
	struct seqs ch[64];
	int nc = 0, i, ord[64], o;
	int32_t c;

	if (nd->type == PQT_LEAF) {
		push(&r, sym(nd->id));
		r.len = 1;
		return r;
	}
	for (c = nd->first; c >= 0; c = t->nodes[c].next) {
		CHECK(nc < 64, "too many kids");
		ch[nc++] = enumerate(t, c);
	}
	for (i = 0; i < nc; i++)
		ord[i] = i;
	for (o = 0;; o++) {
		struct seqs cur = { 0 }, nx;
		size_t a, b;
		int len = 0;
		if (nd->type == PQT_Q && o == 1)
			for (i = 0; i < nc; i++)
				ord[i] = nc - 1 - i;
		push(&cur, 0);
		for (i = 0; i < nc; i++) {
			struct seqs *L = &ch[ord[i]];
			memset(&nx, 0, sizeof nx);
			for (a = 0; a < cur.n; a++)
				for (b = 0; b < L->n; b++)
					push(&nx, (cur.v[a] << (5 * L->len)) | L->v[b]);
			len += L->len;
			free(cur.v);
			cur = nx;
		}
		for (a = 0; a < cur.n; a++)
			push(&r, cur.v[a]);
		free(cur.v);
		r.len = len;
		if (nd->type == PQT_Q ? o == 1 : !next_perm(ord, nc))
			break;
	}
	for (i = 0; i < nc; i++)
		free(ch[i].v);
	uniq(&r);
	return r;
}
static struct seqs enum_tree(const struct pqt *t)
{
	struct seqs r = { 0 };
	if (t->root < 0)
		return r;
	return enumerate(t, t->root);
}

/* Is the set (bitmask over symbols) consecutive in f?  If so, *out = canonical code. */
static int canon(uint64_t f, int len, uint32_t mask, int k, uint64_t *out)
{
	int p, first = -1, cnt = 0;
	uint64_t c = 0;
	for (p = 0; p < len; p++) {
		unsigned s = at(f, len, p);
		if (mask >> s & 1) {
			if (first < 0) {
				first = p;
				c = (c << 5) | MARK;
			} else if (p != first + cnt)
				return 0;
			cnt++;
		} else {
			c = (c << 5) | s;
		}
	}
	if (cnt != k)
		return 0;
	*out = c;
	return 1;
}

/* ---------------- structural invariants ---------------- */
static void check_tree(const struct pqt *t, size_t expect_leaves)
{
	uint32_t *seen = calloc(t->used + 1, sizeof *seen);
	int32_t *stack = malloc((t->used + 1) * sizeof *stack);
	size_t sp = 0, reach = 0, leaves = 0, nfree = 0;
	int32_t x;
	CHECK(seen && stack, "oom");
	if (t->root < 0) {
		CHECK(expect_leaves == 0 && pqt_leaves(t) == 0, "empty");
	} else {
		CHECK(t->nodes[t->root].parent == -1, "root parent");
		CHECK(t->nodes[t->root].prev == -1 && t->nodes[t->root].next == -1, "root sibs");
		stack[sp++] = t->root;
	}
	while (sp) {
		const struct pqt_node *nd;
		int32_t c, pv = -1;
		uint32_t cnt = 0;
		x = stack[--sp];
		CHECK(x >= 0 && (uint32_t)x < t->used && !seen[x], "node %d", x);
		seen[x] = 1;
		reach++;
		nd = &t->nodes[x];
		if (nd->type == PQT_LEAF) {
			CHECK(nd->first == -1 && nd->nch == 0, "leaf kids");
			leaves++;
			continue;
		}
		CHECK(nd->type == PQT_P || nd->type == PQT_Q, "type %d", nd->type);
		for (c = nd->first; c >= 0; c = t->nodes[c].next) {
			CHECK(t->nodes[c].parent == x, "parent");
			CHECK(t->nodes[c].prev == pv, "prev");
			pv = c;
			cnt++;
			stack[sp++] = c;
		}
		CHECK(nd->last == pv, "last");
		CHECK(cnt == nd->nch, "nch %u vs %u", cnt, nd->nch);
		CHECK(cnt >= 2, "internal node with %u kids", cnt);
		CHECK(nd->type != PQT_Q || cnt >= 3, "Q node with 2 kids");
	}
	for (x = t->free_head; x >= 0; x = t->nodes[x].next) {
		CHECK(!seen[x] && t->nodes[x].type == PQT_FREE, "free list");
		seen[x] = 1;
		nfree++;
	}
	CHECK(reach + nfree == t->used, "leaked nodes: %zu reachable + %zu free != %u",
	      reach, nfree, t->used);
	CHECK(leaves == expect_leaves && pqt_leaves(t) == leaves, "leaves %zu %zu %zu", leaves,
	      expect_leaves, pqt_leaves(t));
	{
		uint32_t fr[4096 * 2];
		if (leaves <= 8192)
			CHECK(pqt_frontier(t, fr) == leaves, "frontier size");
	}
	free(seen);
	free(stack);
}

/* Randomly permute P children and reverse Q children, in place (structure only). */
static void scramble(struct pqt *t)
{
	uint32_t x;
	int32_t *k = malloc((t->used + 1) * sizeof *k);
	CHECK(k != NULL, "oom");
	for (x = 0; x < t->used; x++) {
		struct pqt_node *nd = &t->nodes[x];
		uint32_t n = 0, i;
		int32_t c, pv = -1;
		if (nd->type != PQT_P && nd->type != PQT_Q)
			continue;
		for (c = nd->first; c >= 0; c = t->nodes[c].next)
			k[n++] = c;
		if (nd->type == PQT_P) {
			for (i = n - 1; i > 0; i--) {
				uint32_t j = rndn(i + 1);
				int32_t s = k[i]; k[i] = k[j]; k[j] = s;
			}
		} else if (rnd() & 1) {
			for (i = 0; i < n / 2; i++) {
				int32_t s = k[i]; k[i] = k[n - 1 - i]; k[n - 1 - i] = s;
			}
		}
		for (i = 0; i < n; i++) {
			t->nodes[k[i]].prev = pv;
			t->nodes[k[i]].next = -1;
			if (pv >= 0)
				t->nodes[pv].next = k[i];
			else
				nd->first = k[i];
			pv = k[i];
		}
		nd->last = pv;
	}
	free(k);
}

static uint64_t key_id(uint32_t id, void *arg)
{
	(void)arg;
	return id;
}

static int same_seqs(const struct seqs *a, const struct seqs *b)
{
	return a->n == b->n && (a->n == 0 || !memcmp(a->v, b->v, a->n * sizeof *a->v));
}

static long nq; /* trees with a Q node seen by hash_checks */
static int count_q(const struct pqt *t)
{
	uint32_t x;
	int n = 0;
	for (x = 0; x < t->used; x++)
		n += t->nodes[x].type == PQT_Q;
	return n;
}

static void hash_checks(const struct pqt *t)
{
	struct pqt v;
	struct seqs a, b;
	int i;
	CHECK(pqt_init(&v, 4) == 0, "init");
	for (i = 0; i < 3; i++) {
		CHECK(pqt_copy(&v, t) == 0, "copy");
		if (i == 0)
			nq += count_q(t) > 0;
		scramble(&v);
		check_tree(&v, pqt_leaves(t));
		CHECK(pqt_hash(&v, key_id, NULL) == pqt_hash(t, key_id, NULL), "hash after scramble");
		CHECK(pqt_hash(&v, NULL, NULL) == pqt_hash(t, NULL, NULL), "hash(NULL key)");
		if (i == 0) {
			a = enum_tree(t);
			b = enum_tree(&v);
			CHECK(same_seqs(&a, &b), "scramble changed frontiers");
			free(a.v);
			free(b.v);
		}
	}
	pqt_free(&v);
}

static size_t fact(size_t n) { return n <= 1 ? 1 : n * fact(n - 1); }

/* ---------------- random brute-force trials ---------------- */
static long n_red, n_fail, n_repl;

/* One random reduce/replace step on t (leaves in the symbol table), checked by brute
 * force against all frontiers; on success t becomes the new tree.  u is scratch. */
static void do_step(struct pqt *t, struct pqt *u, long tr, int step)
{
	uint32_t cur[MAXL], S[MAXL], newids[MAXL], bo[MAXL], smask = 0, nmask = 0;
	size_t L = pqt_frontier(t, cur), k, m, a;
	int diff = 0, r, mode;
	struct seqs F, E = { 0 }, F2, C2 = { 0 };
	uint64_t c;

	F = enum_tree(t);
	CHECK(F.len == (int)L, "len");
	/* random set S: uniform subset, an interval of a random frontier (feasible),
	 * or such an interval with one element swapped for an outside one */
	mode = (int)rndn(3);
	if (mode == 0 || L < 3) {
		k = 1 + rndn((uint32_t)L);
		for (a = 0; a < L; a++) {
			size_t j = a + rndn((uint32_t)(L - a));
			uint32_t s = cur[a]; cur[a] = cur[j]; cur[j] = s;
		}
	} else {
		uint64_t f = F.v[rndn((uint32_t)F.n)];
		size_t st, j;
		k = 2 + rndn((uint32_t)L - 2);
		st = rndn((uint32_t)(L - k + 1));
		for (a = 0; a < L; a++)
			cur[a] = symid[at(f, F.len, (int)((a + st) % L))];
		if (mode == 2) {
			a = rndn((uint32_t)k);
			j = k + rndn((uint32_t)(L - k));
			st = cur[a]; cur[a] = cur[j]; cur[j] = (uint32_t)st;
		}
	}
	memcpy(S, cur, k * sizeof *S);
	for (a = 0; a < k; a++)
		smask |= 1u << sym(S[a]);
	/* replacement: same leaves (shuffled), or fresh leaves */
	m = k;
	if (rndn(4) == 0 && nsym + 3 <= MAXSYM) {
		m = 1 + rndn(3);
		if (L - k + m <= MAXL)
			diff = 1;
		else
			m = k;
	}
	if (diff) {
		for (a = 0; a < m; a++) {
			newids[a] = fresh_id();
			nmask |= 1u << sym(newids[a]);
		}
	} else {
		memcpy(newids, S, k * sizeof *S);
		for (a = 0; a < k; a++) {
			size_t j = a + rndn((uint32_t)(k - a));
			uint32_t s = newids[a]; newids[a] = newids[j]; newids[j] = s;
		}
		nmask = smask;
	}

	for (a = 0; a < F.n; a++)
		if (canon(F.v[a], F.len, smask, (int)k, &c))
			push(&E, c);
	uniq(&E);

	CHECK(pqt_copy(u, t) == 0, "copy");
	memset(bo, 0xff, sizeof bo);
	r = pqt_reduce_replace(u, S, k, newids, m, bo);
	n_red++;
	if (E.n == 0) {
		CHECK(r == -1, "expected -1, got %d (trial %ld)", r, tr);
		n_fail++;
		free(F.v);
		free(E.v);
		return;
	}
	CHECK(r == 0, "expected 0, got %d (trial %ld, %zu admissible)", r, tr, E.n);
	/* block_order: permutation of S, consecutive in some old frontier */
	{
		uint32_t bm = 0;
		int found = 0;
		for (a = 0; a < k; a++) {
			CHECK(smask >> sym(bo[a]) & 1, "block_order not in S");
			bm |= 1u << sym(bo[a]);
		}
		CHECK(bm == smask, "block_order not a permutation of S");
		for (a = 0; a < F.n && !found; a++) {
			int p, q;
			for (p = 0; p + (int)k <= F.len && !found; p++) {
				for (q = 0; q < (int)k; q++)
					if (at(F.v[a], F.len, p + q) != sym(bo[q]))
						break;
				found = q == (int)k;
			}
		}
		CHECK(found, "block_order not a block of any old frontier");
	}
	check_tree(u, L - k + m);
	F2 = enum_tree(u);
	for (a = 0; a < F2.n; a++) {
		CHECK(canon(F2.v[a], F2.len, nmask, (int)m, &c),
		      "new leaves not consecutive (trial %ld)", tr);
		push(&C2, c);
	}
	uniq(&C2);
	CHECK(same_seqs(&C2, &E), "frontier sets differ (trial %ld step %d): %zu vs %zu",
	      tr, step, C2.n, E.n);
	CHECK(F2.n == E.n * fact(m), "block not free: %zu vs %zu*%zu", F2.n, E.n, fact(m));
	hash_checks(u);
	if (!diff && !same_seqs(&F, &F2))
		CHECK(pqt_hash(u, NULL, NULL) != pqt_hash(t, NULL, NULL),
		      "different trees, same hash");
	n_repl += diff;
	CHECK(pqt_copy(t, u) == 0, "copy back");
	free(F.v);
	free(E.v);
	free(F2.v);
	free(C2.v);
}

/* A random PQ-tree over leaves[0..n) built directly in the pool (tests the templates on
 * trees that reduce/replace alone rarely produces). */
static int32_t build(struct pqt *t, const uint32_t *leaves, int n)
{
	int32_t x = (int32_t)t->used++, kids[8];
	int nk, i, cut[9];
	memset(&t->nodes[x], 0, sizeof t->nodes[x]);
	t->nodes[x].parent = t->nodes[x].prev = t->nodes[x].next = -1;
	t->nodes[x].first = t->nodes[x].last = -1;
	if (n == 1) {
		t->nodes[x].type = PQT_LEAF;
		t->nodes[x].id = leaves[0];
		return x;
	}
	nk = 2 + (int)rndn((uint32_t)(n - 1)); /* 2..n pieces */
	if (nk > 5)
		nk = 2 + (int)rndn(4);
	/* random composition of n into nk positive parts */
	cut[0] = 0;
	cut[nk] = n;
	for (;;) {
		int ok = 1;
		for (i = 1; i < nk; i++)
			cut[i] = 1 + (int)rndn((uint32_t)(n - 1));
		for (i = 1; i < nk; i++) { /* sort */
			int v = cut[i], j2 = i;
			while (j2 > 1 && cut[j2 - 1] > v) {
				cut[j2] = cut[j2 - 1];
				j2--;
			}
			cut[j2] = v;
		}
		for (i = 0; i < nk; i++)
			ok &= cut[i + 1] > cut[i];
		if (ok)
			break;
	}
	t->nodes[x].type = nk >= 3 && rndn(2) ? PQT_Q : PQT_P;
	for (i = 0; i < nk; i++)
		kids[i] = build(t, leaves + cut[i], cut[i + 1] - cut[i]);
	for (i = 0; i < nk; i++) {
		t->nodes[kids[i]].parent = x;
		t->nodes[kids[i]].prev = i ? kids[i - 1] : -1;
		t->nodes[kids[i]].next = i + 1 < nk ? kids[i + 1] : -1;
	}
	t->nodes[x].first = kids[0];
	t->nodes[x].last = kids[nk - 1];
	t->nodes[x].nch = (uint32_t)nk;
	return x;
}

static long run_trials(long trials)
{
	struct pqt t, u;
	long tr;
	CHECK(pqt_init(&t, 4 * MAXL) == 0 && pqt_init(&u, 2) == 0, "init"); /* build() needs 2*MAXL */
	for (tr = 0; tr < trials; tr++) {
		int n = 2 + (int)rndn(6), step, steps = 1 + (int)rndn(6), i;
		uint32_t ids[MAXL];
		nsym = 0;
		for (i = 0; i < n; i++)
			ids[i] = fresh_id();
		CHECK(pqt_make_p(&t, ids, (size_t)n) == 0, "make_p");
		check_tree(&t, (size_t)n);
		for (step = 0; step < steps; step++)
			do_step(&t, &u, tr, step);
	}
	printf("  from P nodes: %ld reductions (%ld infeasible, %ld with new leaves)\n",
	       n_red, n_fail, n_repl);
	/* random PQ-trees */
	n_red = n_fail = n_repl = 0;
	for (tr = 0; tr < trials; tr++) {
		int n = 3 + (int)rndn(6), i;
		uint32_t ids[MAXL];
		nsym = 0;
		for (i = 0; i < n; i++)
			ids[i] = fresh_id();
		CHECK(pqt_make_p(&t, NULL, 0) == 0, "clear");
		CHECK(t.cap >= 2 * MAXL, "cap");
		t.root = build(&t, ids, n);
		t.nleaves = (uint32_t)n;
		check_tree(&t, (size_t)n);
		do_step(&t, &u, tr, 0);
		if (rndn(2))
			do_step(&t, &u, tr, 1);
	}
	printf("  from random PQ-trees: %ld reductions (%ld infeasible, %ld with new leaves)\n",
	       n_red, n_fail, n_repl);
	printf("  %ld result trees with Q nodes\n", nq);
	pqt_free(&t);
	pqt_free(&u);
	return trials;
}

/* ---------------- fixed cases ---------------- */
static uint64_t key_ab(uint32_t id, void *arg)
{
	(void)arg;
	return id == 2 ? 1 : id; /* leaves 1 and 2 interchangeable */
}

static void fixed_cases(void)
{
	struct pqt a, b;
	uint32_t ids[5] = { 1, 2, 3, 4, 5 }, fr[8];
	uint32_t s12[2] = { 1, 2 }, s34[2] = { 3, 4 }, s23[2] = { 2, 3 }, s13[2] = { 1, 3 };
	uint32_t s14[2] = { 1, 4 }, nl[3] = { 100, 101, 102 }, bo[2];
	int32_t q;

	CHECK(pqt_init(&a, 1) == 0 && pqt_init(&b, 64) == 0, "init");
	/* a = P(5, Q(1, P(2,3), 4)) via P6, b = P(5, Q(2, P(1,3), 4)) */
	CHECK(pqt_make_p(&a, ids, 5) == 0, "mk");
	CHECK(pqt_reduce_replace(&a, s12, 2, s12, 2, NULL) == 0, "r1");
	CHECK(pqt_reduce_replace(&a, s34, 2, s34, 2, NULL) == 0, "r2");
	CHECK(pqt_reduce_replace(&a, s23, 2, s23, 2, bo) == 0, "r3");
	CHECK((bo[0] == 2 && bo[1] == 3) || (bo[0] == 3 && bo[1] == 2), "bo");
	check_tree(&a, 5);
	CHECK(a.nodes[a.root].type == PQT_P && a.nodes[a.root].nch == 2, "shape");
	q = a.nodes[a.nodes[a.root].first].type == PQT_Q ? a.nodes[a.root].first : a.nodes[a.root].last;
	CHECK(a.nodes[q].type == PQT_Q && a.nodes[q].nch == 3, "Q shape");
	CHECK(pqt_make_p(&b, ids, 5) == 0, "mk");
	CHECK(pqt_reduce_replace(&b, s12, 2, s12, 2, NULL) == 0, "r1");
	CHECK(pqt_reduce_replace(&b, s34, 2, s34, 2, NULL) == 0, "r2");
	CHECK(pqt_reduce_replace(&b, s13, 2, s13, 2, NULL) == 0, "r3");
	CHECK(pqt_hash(&a, key_ab, NULL) == pqt_hash(&b, key_ab, NULL), "equal keys");
	CHECK(pqt_hash(&a, key_id, NULL) != pqt_hash(&b, key_id, NULL), "distinct keys");
	/* {1,4} is not consecutive in P(5, Q(1, P(2,3), 4)) */
	CHECK(pqt_copy(&b, &a) == 0, "copy");
	CHECK(pqt_reduce_replace(&b, s14, 2, s14, 2, NULL) == -1, "infeasible");
	/* replace {2,3} by three new leaves: Q(1, P(100,101,102), 4) */
	CHECK(pqt_copy(&b, &a) == 0, "copy");
	CHECK(pqt_reduce_replace(&b, s23, 2, nl, 3, bo) == 0, "replace");
	check_tree(&b, 6);
	CHECK(pqt_frontier(&b, fr) == 6, "fr");
	CHECK(b.nodes[q].type == PQT_Q && b.nodes[q].nch == 3, "Q kept");
	/* a single leaf, and the empty tree */
	CHECK(pqt_make_p(&b, ids, 1) == 0 && pqt_leaves(&b) == 1, "one");
	CHECK(pqt_reduce_replace(&b, ids, 1, nl, 2, bo) == 0 && bo[0] == 1, "leaf repl");
	check_tree(&b, 2);
	CHECK(pqt_make_p(&b, ids, 0) == 0 && pqt_leaves(&b) == 0, "empty");
	CHECK(pqt_frontier(&b, fr) == 0, "empty frontier");
	CHECK(pqt_reduce_replace(&b, ids, 1, nl, 1, NULL) == -1, "empty reduce");
	/* missing / duplicate ids */
	CHECK(pqt_make_p(&b, ids, 3) == 0, "mk");
	CHECK(pqt_reduce_replace(&b, ids + 2, 2, nl, 1, NULL) == -1, "missing id");
	{
		uint32_t d[2] = { 1, 1 };
		CHECK(pqt_reduce_replace(&b, d, 2, nl, 1, NULL) == -1, "dup id");
	}
	pqt_free(&a);
	pqt_free(&b);
}

/* ---------------- large trees ---------------- */
static void large_cases(void)
{
	enum { NL = 3000 };
	static uint32_t ids[NL], s[NL], fr[NL], bo[NL], pos[NL];
	struct pqt t, u;
	uint32_t i, it, okc = 0, failc = 0;

	for (i = 0; i < NL; i++)
		ids[i] = i;
	CHECK(pqt_init(&t, 2 * NL) == 0 && pqt_init(&u, 16) == 0, "init");
	CHECK(pqt_make_p(&t, ids, NL) == 0, "mk");
	/* deep chain: P(n-1, P(n-2, ... P(1, 0))) */
	for (i = NL - 1; i >= 2; i--)
		CHECK(pqt_reduce_replace(&t, ids, i, ids, i, NULL) == 0, "prefix %u", i);
	check_tree(&t, NL);
	CHECK(pqt_copy(&u, &t) == 0, "copy");
	scramble(&u);
	CHECK(pqt_hash(&u, NULL, NULL) == pqt_hash(&t, NULL, NULL), "deep hash");
	/* {n-1, 0}: partial chain of depth n */
	CHECK(pqt_copy(&u, &t) == 0, "copy");
	s[0] = NL - 1;
	s[1] = 0;
	CHECK(pqt_reduce_replace(&u, s, 2, s, 2, bo) == 0, "deep partial chain");
	check_tree(&u, NL);
	CHECK(pqt_frontier(&u, fr) == NL, "fr");
	for (i = 0; i < NL; i++)
		pos[fr[i]] = i;
	CHECK(pos[0] + 1 == pos[NL - 1] || pos[NL - 1] + 1 == pos[0], "adjacent");
	/* every set is feasible on the chain (its orders are the "V" shapes); {0, n/2} */
	CHECK(pqt_copy(&u, &t) == 0, "copy");
	s[0] = 0;
	s[1] = NL / 2;
	CHECK(pqt_reduce_replace(&u, s, 2, s, 2, NULL) == 0, "deep {0, n/2}");
	check_tree(&u, NL);
	/* random intervals of the identity order: always feasible */
	for (it = 0; it < 1500; it++) {
		uint32_t a = rndn(NL), b = rndn(NL), k, j;
		int r;
		if (a > b) { j = a; a = b; b = j; }
		k = b - a + 1;
		for (j = 0; j < k; j++)
			s[j] = a + j;
		for (j = k; j > 1; j--) {
			uint32_t q = rndn(j), x = s[j - 1];
			s[j - 1] = s[q]; s[q] = x;
		}
		if (it % 3 == 0) { /* occasionally a random (likely infeasible) set */
			for (j = 0; j < k && j < 5; j++)
				s[j] = rndn(NL);
			k = j;
			for (j = 1; j < k; j++) /* dedupe cheaply */
				if (s[j] == s[0])
					s[j] = (s[0] + j) % NL;
			if (k == 3 && s[1] == s[2])
				k = 2;
			if (k >= 2 && s[0] == s[1])
				k = 1;
			if (k >= 5) k = 4;
			{
				uint32_t x, y, d = 0;
				for (x = 0; x < k; x++)
					for (y = x + 1; y < k; y++)
						d |= s[x] == s[y];
				if (d)
					k = 1;
			}
			CHECK(pqt_copy(&u, &t) == 0, "copy");
			r = pqt_reduce_replace(&u, s, k, s, k, bo);
			CHECK(r == 0 || r == -1, "r");
			if (r == 0) {
				CHECK(pqt_frontier(&u, fr) == NL, "fr");
				for (j = 0; j < NL; j++)
					pos[fr[j]] = j;
				{
					uint32_t mn = NL, mx = 0;
					for (j = 0; j < k; j++) {
						mn = pos[s[j]] < mn ? pos[s[j]] : mn;
						mx = pos[s[j]] > mx ? pos[s[j]] : mx;
					}
					CHECK(mx - mn + 1 == k, "random set not consecutive");
				}
				okc++;
			} else {
				failc++;
			}
			continue;
		}
		r = pqt_reduce_replace(&t, s, k, s, k, bo);
		CHECK(r == 0, "interval [%u,%u] failed: %d", a, b, r);
		{
			uint32_t mn = NL, mx = 0;
			for (j = 0; j < k; j++) {
				mn = bo[j] < mn ? bo[j] : mn;
				mx = bo[j] > mx ? bo[j] : mx;
			}
			CHECK(mn == a && mx == b, "block_order range");
		}
		CHECK(pqt_frontier(&t, fr) == NL, "fr");
		for (j = 0; j < NL; j++)
			pos[fr[j]] = j;
		{
			uint32_t mn = NL, mx = 0;
			for (j = a; j <= b; j++) {
				mn = pos[j] < mn ? pos[j] : mn;
				mx = pos[j] > mx ? pos[j] : mx;
			}
			CHECK(mx - mn + 1 == k, "interval not consecutive");
		}
		if (it % 50 == 0)
			check_tree(&t, NL);
	}
	check_tree(&t, NL);
	CHECK(pqt_copy(&u, &t) == 0, "copy");
	scramble(&u);
	CHECK(pqt_hash(&u, NULL, NULL) == pqt_hash(&t, NULL, NULL), "large hash");
	printf("  large: %u-leaf trees ok (%u/%u random sets feasible)\n", (unsigned)NL, okc,
	       okc + failc);
	pqt_free(&t);
	pqt_free(&u);
}

/* Every order of the leaves of @t (n <= 6) passes pqt_accepts() exactly when allowed. */
static void check_reduce_accepts(void)
{
	for (int trial = 0; trial < 400; trial++) {
		uint32_t n = 3 + rndn(4), ids[6], perm[6], pos[32], lo[256], hi[256];
		struct pqt t, u;
		int ok = 1;

		for (uint32_t i = 0; i < n; i++)
			ids[i] = 10 + i;
		CHECK(!pqt_init(&t, 16) && !pqt_init(&u, 16), "init");
		CHECK(!pqt_make_p(&t, ids, n), "make_p");
		for (int step = 0; step < 3 && ok; step++) {
			uint32_t set[6], k = 1 + rndn(n), fact = 1;
			int r;

			for (uint32_t i = 0; i < n; i++)
				perm[i] = ids[i];
			for (uint32_t i = n; i > 1; i--) {
				uint32_t j = rndn(i), x = perm[i - 1];

				perm[i - 1] = perm[j];
				perm[j] = x;
			}
			memcpy(set, perm, k * sizeof(*set));
			CHECK(!pqt_copy(&u, &t), "copy");
			r = pqt_reduce(&u, set, k);
			for (uint32_t i = 2; i <= n; i++)
				fact *= i;
			/* Every permutation of the leaves, by index. */
			for (uint32_t p = 0, any = 0; p < fact; p++) {
				uint32_t order[6], rest[6], q = p, mn = 99, mx = 0, before, after;

				memcpy(rest, ids, n * sizeof(*rest));
				for (uint32_t i = 0, m = n; i < n; i++, m--) {
					uint32_t j = q % m;

					q /= m;
					order[i] = rest[j];
					memmove(rest + j, rest + j + 1, (m - j - 1) * sizeof(*rest));
				}
				for (uint32_t i = 0; i < n; i++)
					pos[order[i] - 10] = i;
				for (uint32_t i = 0; i < k; i++) {
					mn = pos[set[i] - 10] < mn ? pos[set[i] - 10] : mn;
					mx = pos[set[i] - 10] > mx ? pos[set[i] - 10] : mx;
				}
				{
					uint32_t byid[32] = { 0 };

					for (uint32_t i = 0; i < n; i++)
						byid[order[i]] = i;
					before = (uint32_t)pqt_accepts(&t, byid, lo, hi);
					after = r ? 0 : (uint32_t)pqt_accepts(&u, byid, lo, hi);
				}
				CHECK(after == (before && mx - mn + 1 == k),
				      "reduce/accepts: trial %d step %d order %u", trial, step, p);
				any |= after;
				if (p + 1 == fact)
					CHECK(!r == !!any, "reduce refused %d but an order fits %u", r, any);
			}
			if (!r)
				CHECK(!pqt_copy(&t, &u), "copy back");
			else
				ok = 0;
		}
		pqt_free(&t);
		pqt_free(&u);
	}
}

TEST(fixed_trees)
{
	fixed_cases();
}

TEST(large_and_deep_trees)
{
	large_cases();
}

TEST(reduce_replace_against_brute_force)
{
	EXPECT_EQ(600, run_trials(600));
}

TEST(reduce_and_accepts_against_brute_force)
{
	check_reduce_accepts();
}

TEST_HARNESS_MAIN
