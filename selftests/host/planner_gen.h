/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Generators of planner instances whose optimum is known by construction
 * (or, for the random family, of which only the lower bound is known), and
 * an independent checker of plans. Shared by the host tests and the
 * planner benchmark so that the planner is measured on data it was not
 * tuned on: every seed gives a new instance.
 */
#ifndef VNPU_PLANNER_GEN_H
#define VNPU_PLANNER_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "vnpu.h"

/**
 * enum pgen_family - shapes of generated instances
 * @PGEN_GUILLOTINE: a capacity x time rectangle cut into buffers by random
 *	guillotine cuts; at every instant the live sizes sum to the capacity
 *	(optimum = lower bound = capacity, zero waste)
 * @PGEN_TILING: a perfect packing that is not guillotine in general:
 *	random rectangles dropped into random runs of the skyline of a
 *	capacity x time rectangle until it is full (optimum = capacity)
 * @PGEN_LADDER: lanes of random heights stacked up to the capacity, each
 *	lane a chain of consecutive buffers of its height, lanes merging and
 *	splitting at random rungs (optimum = capacity)
 * @PGEN_CHAIN: buffer i lives [i, i + 2) with a random size; placing the
 *	even buffers at the bottom and the odd ones at the top reaches the
 *	lower bound, so optimum = lower bound
 * @PGEN_GUILLOTINE_FINE: as @PGEN_GUILLOTINE on a time line 1,000 times
 *	longer, so that cuts seldom fall on the same instant
 * @PGEN_RANDOM: random lifetimes and sizes; only the lower bound is known
 * @PGEN_GUILLOTINE_AREA: as @PGEN_GUILLOTINE, but the piece cut next is
 *	chosen in proportion to its area, not uniformly: pieces of more even
 *	size, fewer tiny ones
 * @PGEN_GUILLOTINE_ASPECT: as @PGEN_GUILLOTINE, but a piece is cut across
 *	its longer side (relative to the time line and to the capacity) in
 *	proportion to that side, not by a coin: long pieces in time, tall
 *	ones in memory
 */
enum pgen_family {
	PGEN_GUILLOTINE,
	PGEN_TILING,
	PGEN_LADDER,
	PGEN_CHAIN,
	PGEN_GUILLOTINE_FINE,
	PGEN_RANDOM,
	PGEN_GUILLOTINE_AREA,
	PGEN_GUILLOTINE_ASPECT,
	PGEN_FAMILIES
};

/** pgen_family_name() - "guillotine", "tiling", ... or NULL. */
const char *pgen_family_name(unsigned int family);

/* 1 when the family's optimum is known: pgen_generate() sets *optimum. */
int pgen_known_optimum(unsigned int family);

/**
 * pgen_generate() - make an instance of about @n buffers
 * @family: an enum pgen_family
 * @n: number of buffers wanted (tilings end up to 15% below it)
 * @seed: any value; the same seed gives the same instance
 * @count: out, number of buffers
 * @optimum: out, the optimum when known, else the lower bound
 *
 * Sizes are multiples of 512 bytes; capacities of the perfect packings are
 * 1 to 8 MiB. Return: calloc()ed buffers (offsets 0), NULL when out of
 * memory or for a bad family.
 */
struct vnpu_plan_buffer *pgen_generate(unsigned int family, size_t n, uint64_t seed,
				       size_t *count, uint64_t *optimum);

/**
 * pgen_check() - verify a plan without the planner's own verifier
 * @bufs: buffers with their offsets
 * @n: number of buffers
 * @arena: out, the largest offset + size
 *
 * Every pair of buffers whose lifetimes overlap must be disjoint in memory
 * and every offset aligned. A sweep over time with the live buffers in an
 * array sorted by offset, written separately from vnpu_plan_verify().
 * Return: 0 when the plan is valid, -1 otherwise.
 */
int pgen_check(const struct vnpu_plan_buffer *bufs, size_t n, uint64_t *arena);

#endif
