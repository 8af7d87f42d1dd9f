/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * PQ-trees (pqtree.c), private to the planner.
 *
 * Leaves carry uint32_t ids (each at most once per tree).  Internal nodes are
 * P nodes (children in any order) or Q nodes (children in this order or
 * reversed).  A node with one child never exists and a Q node with two
 * children is stored as a P node.
 *
 * The node pool is an array owned by the tree (indices, no pointers into
 * other trees); it grows on demand, max_nodes is the initial capacity.
 * The node layout is public so that tests can inspect trees; treat it as
 * read-only.
 */
#ifndef VNPU_PQTREE_H
#define VNPU_PQTREE_H

#include <stddef.h>
#include <stdint.h>

enum { PQT_FREE = 0, PQT_LEAF = 1, PQT_P = 2, PQT_Q = 3 };

struct pqt_node {
	uint32_t id;      /* leaf id (leaves only) */
	int32_t parent;   /* -1 for the root */
	int32_t first;    /* first child, -1 if none */
	int32_t last;     /* last child, -1 if none */
	int32_t prev;     /* previous sibling, -1 if none */
	int32_t next;     /* next sibling, -1 if none (free-list link for free nodes) */
	uint32_t nch;     /* number of children */
	uint32_t pc;      /* scratch: pertinent leaves below (valid during a reduction) */
	uint32_t lc;      /* scratch: leaves below (valid during a reduction) */
	uint8_t type;     /* PQT_FREE, PQT_LEAF, PQT_P, PQT_Q */
};

struct pqt {
	struct pqt_node *nodes; /* pool, cap entries, [0, used) ever handed out */
	uint32_t cap;
	uint32_t used;
	int32_t free_head;      /* free list through .next, -1 if empty */
	int32_t root;           /* -1 for the empty tree */
	uint32_t nleaves;
};

int pqt_init(struct pqt *t, uint32_t max_nodes);      /* 0 or -1 (no memory); empty tree */
void pqt_free(struct pqt *t);
int pqt_copy(struct pqt *dst, const struct pqt *src);  /* dst initialised; deep copy; 0/-1 */
/* The tree becomes one P node over ids[0..n) (a single leaf if n == 1; empty if 0). */
int pqt_make_p(struct pqt *t, const uint32_t *ids, size_t n);
/*
 * Makes the leaves set[0..k) consecutive (k >= 1, all present in t) and replaces that
 * consecutive block by a P node over new_ids[0..m) (a single leaf if m == 1; m >= 1).
 * Before replacing, writes into block_order[0..k) one admissible order of the block's
 * leaves as they lie in the reduced tree, if block_order is not NULL. Returns 0, or -1
 * if the leaves cannot be made consecutive (also for invalid arguments: k == 0, m == 0,
 * duplicate or missing ids in set; the tree is then unspecified but valid to free), or
 * -2 on memory exhaustion.
 */
int pqt_reduce_replace(struct pqt *t, const uint32_t *set, size_t k,
		       const uint32_t *new_ids, size_t m, uint32_t *block_order);
/* Makes set[0..k) consecutive without replacing it; 0, -1 (impossible) or -2. */
int pqt_reduce(struct pqt *t, const uint32_t *set, size_t k);
/*
 * Whether the order in which leaf id x sits at position pos[x] (a permutation of
 * the leaves) is a frontier of t; lo and hi are scratch of t->used entries.
 */
int pqt_accepts(const struct pqt *t, const uint32_t *pos, uint32_t *lo, uint32_t *hi);
/* Number of leaves, and one admissible frontier (left to right) into out[]. */
size_t pqt_leaves(const struct pqt *t);
size_t pqt_frontier(const struct pqt *t, uint32_t *out);
/*
 * Hash equal for trees that are the same up to P-node child permutation and Q-node
 * reversal, leaf x contributing key(x, arg) (key may be NULL: the id is used).
 */
uint64_t pqt_hash(const struct pqt *t, uint64_t (*key)(uint32_t id, void *arg), void *arg);

#endif
