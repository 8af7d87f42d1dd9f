/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Private interface of the planner's skyline search (planner_search.c).
 */
#ifndef VNPU_PLANNER_SEARCH_H
#define VNPU_PLANNER_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/**
 * struct sks_problem - an instance in time sections
 * @n: number of buffers
 * @size: bytes of each buffer
 * @align: alignment of each buffer (a power of two, 1 for none)
 * @t0: first section of each buffer
 * @t1: end section (exclusive) of each buffer
 * @nsec: number of time sections
 * @sec_total: sum of the sizes live in each section
 */
struct sks_problem {
	size_t n;
	const uint64_t *size, *align;
	const uint32_t *t0, *t1;
	uint32_t nsec;
	const uint64_t *sec_total;
};

/* Results of sks_run(). */
enum { SKS_NOMEM = -3, SKS_TIMEOUT = -2, SKS_FOUND = 1, SKS_INFEASIBLE = 0 };

/**
 * sks_run() - look for a plan whose arena is at most @target
 * @pb: the instance
 * @target: arena to reach
 * @deadline: thread CPU time (ns) at which to give up
 * @seed: seed of the randomized restarts
 * @off: out, the offsets when a plan is found
 * @nodes: in/out, nodes visited are added
 *
 * Return: SKS_FOUND, SKS_INFEASIBLE (no plan within @target exists),
 * SKS_TIMEOUT or SKS_NOMEM.
 */
int sks_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
	    uint64_t seed, uint64_t *off, uint64_t *nodes);

/* Grows the array *@v of *@cap elements of @elem bytes to hold @need, doubling; -1 without memory. */
int vnpu_plan_grow(void **v, size_t *cap, size_t need, size_t elem);

#endif
