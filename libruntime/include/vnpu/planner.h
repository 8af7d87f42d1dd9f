/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The static memory planner: offsets in one arena from buffer lifetimes.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_PLANNER_H
#define VNPU_PLANNER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Static memory planner: pure computation, no device needed.
 *
 * Given buffers with a size, an alignment and a lifetime [first, last) over
 * an execution order, the planner gives each buffer an offset in one arena
 * so that buffers alive at the same time never overlap.
 */

/**
 * struct vnpu_plan_buffer - one buffer to plan
 * @size: bytes, at least 1
 * @alignment: the offset must be a multiple of it; a power of two, 0 means 1
 * @first: first step at which the buffer is alive
 * @last: first step at which it is no longer alive; @first < @last
 * @offset: out, the planned offset in the arena
 */
struct vnpu_plan_buffer {
	uint64_t size;
	uint64_t alignment;
	uint64_t first;
	uint64_t last;
	uint64_t offset;
};

/**
 * enum vnpu_plan_strategy - how vnpu_plan_compute() places the buffers
 * @VNPU_PLAN_GREEDY_BY_SIZE: largest buffer first, each into the smallest
 *	gap that fits (Pisarchyk & Lee 2020, the TFLite planner)
 * @VNPU_PLAN_GREEDY_BY_BREADTH: steps with the largest total live first,
 *	their buffers largest first, each into the smallest gap that fits
 * @VNPU_PLAN_BEST: the skyline plan and, while cheap, both greedy plans;
 *	then, if the best is above the lower bound or the capacity, a search
 *	within the time limit (a time sweep, first when the target leaves no
 *	slack; skyline search and branch and bound over canonical plans for
 *	small instances, skyline and greedy plans of perturbed orders for
 *	large); last, while the greedy plans are cheap, the best plan
 *	compacted (each buffer dropped into the lowest gap below it, then the
 *	plan turned over and dropped again), not counted in the time limit
 * @VNPU_PLAN_SKYLINE: buffers placed in non-decreasing offset order, each
 *	time the best-ranked buffer that fits on the lowest part of the
 *	skyline of the placed ones; O(n log^2 n) whatever the overlaps
 */
enum vnpu_plan_strategy {
	VNPU_PLAN_GREEDY_BY_SIZE = 0,
	VNPU_PLAN_GREEDY_BY_BREADTH = 1,
	VNPU_PLAN_BEST = 2,
	VNPU_PLAN_SKYLINE = 3,
};

/*
 * Flag of vnpu_plan_options.strategy: every deadline of the search counts
 * work (nodes, steps and placements, each weighed by its mean CPU time on
 * the development machine) instead of CPU time, so the same buffers and
 * options give the same plan on every run and machine, however loaded or
 * fast. The time limit then holds in that measure: on a machine as fast
 * as the development one, within a few times of it either way.
 */
#define VNPU_PLAN_DETERMINISTIC 0x100u

/**
 * struct vnpu_plan_options - parameters of vnpu_plan_compute()
 * @strategy: an enum vnpu_plan_strategy, optionally OR-ed with
 *	%VNPU_PLAN_DETERMINISTIC
 * @capacity: arena bytes available; 0 for no limit
 * @time_limit_ms: budget of the search stage in CPU time of the calling
 *	thread (a loaded machine does not cut it short); 0 for the default
 *	(2000 ms). Above 8192 buffers the improvement stage may stop sooner,
 *	once it stalls (Documentation/planner.rst). With
 *	%VNPU_PLAN_DETERMINISTIC it counts the searches' work instead, each
 *	unit weighed by its mean CPU time on the development machine
 * @seed: seed of the randomized search; the same seed gives the same plan
 *	as long as no stage of the search is cut short by its share of
 *	@time_limit_ms; where one is (large or hard instances), the plan
 *	depends on how far each stage got, so it may differ from run to run,
 *	unless %VNPU_PLAN_DETERMINISTIC is set
 */
struct vnpu_plan_options {
	unsigned int strategy;
	uint64_t capacity;
	unsigned int time_limit_ms;
	uint64_t seed;
};

/**
 * struct vnpu_plan_stats - what vnpu_plan_compute() achieved
 * @naive_size: sum of all sizes (every buffer its own range)
 * @lower_bound: largest total of sizes alive at one instant
 * @greedy_size: arena of the best greedy plan
 * @arena_size: arena of the returned plan (of the best plan found when
 *	it does not fit)
 * @elapsed_ns: planning time
 * @search_nodes: nodes or iterations the search stage visited
 * @optimal: 1 when @arena_size equals @lower_bound
 */
struct vnpu_plan_stats {
	uint64_t naive_size;
	uint64_t lower_bound;
	uint64_t greedy_size;
	uint64_t arena_size;
	uint64_t elapsed_ns;
	uint64_t search_nodes;
	int optimal;
};

/**
 * vnpu_plan_compute() - plan the offsets of @count buffers
 * @bufs: the buffers; their @offset fields are written on success only
 * @count: number of buffers, may be 0
 * @opts: options, NULL for the defaults (VNPU_PLAN_BEST, no capacity)
 * @stats: out, may be NULL; filled on success and on
 *	VNPU_ERROR_DOES_NOT_FIT
 *
 * The plan is verified with vnpu_plan_verify() before it is returned.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a zero size, an empty
 * lifetime, an alignment that is not a power of two, sizes whose sum
 * overflows, an unknown strategy or an unknown flag in it; VNPU_ERROR_DOES_NOT_FIT when no plan
 * within @opts->capacity was found (@stats->lower_bound says how much is
 * needed at least); VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_plan_compute(struct vnpu_plan_buffer *bufs, size_t count,
		      const struct vnpu_plan_options *opts,
		      struct vnpu_plan_stats *stats);

/**
 * vnpu_plan_verify() - check a plan
 * @bufs: buffers with their offsets
 * @count: number of buffers
 * @capacity: arena bytes available; 0 for no limit
 * @arena_size: out, the arena the plan needs; may be NULL
 *
 * Return: VNPU_SUCCESS when no two buffers alive at the same time overlap,
 * every offset is aligned and the plan fits in @capacity;
 * VNPU_ERROR_INVALID_VALUE otherwise or for invalid buffers;
 * VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_plan_verify(const struct vnpu_plan_buffer *bufs, size_t count,
		     uint64_t capacity, uint64_t *arena_size);

/**
 * vnpu_plan_bounds() - naive sum and lower bound of an instance
 * @bufs: the buffers
 * @count: number of buffers
 * @naive_size: out, sum of the sizes; may be NULL
 * @lower_bound: out, largest total alive at one instant; may be NULL
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for invalid buffers;
 * VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_plan_bounds(const struct vnpu_plan_buffer *bufs, size_t count,
		     uint64_t *naive_size, uint64_t *lower_bound);

/** vnpu_plan_strategy_name() - "size", "breadth", "best" or NULL. */
const char *vnpu_plan_strategy_name(unsigned int strategy);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_PLANNER_H */
