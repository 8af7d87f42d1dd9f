/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Private interface of the planner's searches: the skyline search
 * (planner_search.c), the time sweep and the lazy sweep (planner_sweep.c),
 * the hole sweep (planner_pq.c), the strip search (planner_strips.c),
 * the cut search (planner_cuts.c).
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

/*
 * The sweeps' stall rule where one is set (planner.c, planner_merge.c):
 * the sweep gives up after this much CPU time without a new section (and
 * as long as the deepest took): it tiles a perfect packing steadily or
 * thrashes on an early choice (ladders of 1,500 buffers, seeds 1 to 20,
 * 500 ms: 16 tiled with it, 17 without; guillotine packings of 200 give
 * up after 37 ms on average instead of using the 500).
 */
#define SKS_SWEEP_STALL_NS 50000000ull

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

/**
 * sws_run() - look for a plan whose arena is at most @target by a time sweep
 * @pb: the instance
 * @target: arena to reach
 * @deadline: thread CPU time (ns) at which to give up
 * @stall: give up, too, after this much CPU time (ns) without reaching a
 *	new section, and at least as long as the deepest took; 0 for never
 * @off: out, the offsets when a plan is found
 * @nodes: in/out, nodes visited are added
 *
 * Places the buffers in order of their first section, each at its start
 * into the space free then (planner_sweep.c); complete for plans without
 * waste. Return: SKS_FOUND, SKS_INFEASIBLE (no plan the sweep covers fits
 * @target), SKS_TIMEOUT (deadline or stall) or SKS_NOMEM.
 */
int sws_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
	    uint64_t stall, uint64_t *off, uint64_t *nodes);

/**
 * sws_lazy_run() - look for a perfect packing by the lazy sweep
 * @pb: the instance
 * @target: arena to reach; must equal @pb->sec_total in every section
 * @deadline: thread CPU time (ns) at which to give up
 * @stall: as for sws_run()
 * @off: out, the offsets when a plan is found
 * @nodes: in/out, nodes visited are added
 *
 * Sweeps the sections as sws_run(), but fills each hole left by buffers
 * that end with a group of buffers starting then, in an order fixed only
 * at the end (planner_sweep.c); a hole that must be is merged across
 * groups, which are then ordered; not complete (a hole that can be filled
 * alone is never merged across groups). Return: SKS_FOUND, SKS_INFEASIBLE (none of the plans
 * it covers, or @target leaves slack in some section, or an alignment does
 * not divide every size: nothing visited, @off untouched), SKS_TIMEOUT
 * (deadline or stall) or SKS_NOMEM.
 */
int sws_lazy_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
		 uint64_t stall, uint64_t *off, uint64_t *nodes);

/* The passes of the lazy sweep: without merges across groups, with them. */
enum { SWS_LAZY_PLAIN = 1, SWS_LAZY_CROSS = 2 };

/**
 * sws_lazy_pass() - the lazy sweep, one pass or both
 * @pb: the instance
 * @target: arena to reach; must equal @pb->sec_total in every section
 * @deadline: thread CPU time (ns) at which to give up
 * @stall: as for sws_run()
 * @passes: SWS_LAZY_PLAIN, SWS_LAZY_CROSS, or both (what sws_lazy_run()
 *	runs: the plain pass on half of the time, then the other); none:
 *	SKS_INFEASIBLE, nothing visited
 * @off: out, the offsets when a plan is found
 * @nodes: in/out, nodes visited are added
 *
 * The plain pass never merges a hole across groups: it refutes fast the
 * packings that need such merges (ladders whose lanes re-split across
 * several lanes), which only the other pass can tile.
 * Return: as sws_lazy_run(); SKS_INFEASIBLE from the plain pass alone:
 * no plan it covers (every plan needs a merge across groups, or there is
 * none).
 */
int sws_lazy_pass(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
		  uint64_t stall, int passes, uint64_t *off, uint64_t *nodes);

/**
 * pcs_run() - look for a guillotine plan of a perfect packing
 * @pb: the instance
 * @target: its live total, the same in every section
 * @deadline: thread CPU time (ns) at which to give up
 * @off: out, the offsets when a plan is found
 * @nodes: in/out, nodes visited are added
 *
 * Depth-first search over cuts in time and in memory, with restarts
 * (planner_cuts.c); complete for plans that split by guillotine cuts
 * down to single buffers. Return: SKS_FOUND (a plan at @target),
 * SKS_INFEASIBLE (@target is not the live total in every section, an
 * alignment does not divide every size, or no guillotine plan exists),
 * SKS_TIMEOUT or SKS_NOMEM.
 */
int pcs_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline, uint64_t *off,
	    uint64_t *nodes);

/**
 * pcs_commit_run() - plan a perfect packing by committed guillotine cuts
 * @pb: the instance
 * @target: its live total, the same in every section
 * @deadline: thread CPU time (ns) after which strips are no longer looked
 *	for; the slabs left then get the greedy plans and 1 ms of search
 * @off: out, the offsets
 * @nodes: in/out, nodes visited are added
 *
 * The cuts of pcs_run(), but each slab takes the first balanced set found
 * for a strip and plans both sides so, recursively (planner_cuts.c): a
 * set that does not tile costs what its sides' plans lose. A slab whose
 * strip is not found in time is planned by vnpu_plan_leaf(); up to three
 * strips are tried per slab while its plan is above its width and time is
 * left. All that forwards in time on half of the time, then, unless the
 * plan is at @target, backwards in time (every lifetime mirrored) on the
 * rest; the lower plan is kept. Return: SKS_FOUND (a plan, at @target or above it),
 * SKS_INFEASIBLE (@target is not the live total in every section or an
 * alignment does not divide every size: nothing visited; or nothing
 * splits, no strip found for the whole instance; @off untouched either
 * way), SKS_TIMEOUT (@deadline passed before it began: nothing visited,
 * @off untouched) or SKS_NOMEM.
 */
int pcs_commit_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
		   uint64_t *off, uint64_t *nodes);

/**
 * pcs_probe() - the first balanced set of one slab's strip search
 * @pb: the instance
 * @ids: the slab's buffers: their live total is @width in every section of
 *	their span, no instant inside it is a cut in time, and none is live
 *	over all of it (what the committed cuts search a strip in)
 * @m: how many
 * @width: their live total
 * @c0: the index in @ids of the buffer whose strip is looked for: live
 *	first, not over the whole span
 * @limit: nodes to search for it
 * @in: out, per buffer of @ids 1 when in the set found, 0 when not
 * @nodes: in/out, nodes visited are added
 *
 * The search pcs_commit_run() runs on a slab, by its rules (no ties broken
 * at random), from @c0 and for one run, but its first balanced set (every
 * boundary balanced, c0 in, not every buffer) is the result: neither side
 * is planned. Whether that set is a strip of a plan at @width is left to
 * the caller (planner_bench --strips). Return: SKS_FOUND (@in set),
 * SKS_INFEASIBLE (no balanced set holds @c0, or @c0 is not live first or
 * is live over the whole span: nothing visited), SKS_TIMEOUT (none within
 * @limit) or SKS_NOMEM.
 */
int pcs_probe(const struct sks_problem *pb, const uint32_t *ids, uint32_t m, uint64_t width,
	      uint32_t c0, uint64_t limit, uint8_t *in, uint64_t *nodes);

/**
 * pbd_run() - plan a perfect packing by splitting it
 * @pb: the instance
 * @target: its live total, the same in every section
 * @deadline: thread CPU time (ns) at which to give up
 * @off: out, the offsets when a plan is found
 * @nodes: in/out, pieces visited and the pieces' search nodes are added
 *
 * Puts buffers live over the whole span at the bottom, cuts in time where
 * no buffer crosses, and stacks bands (sets of buffers whose live total
 * is constant), recursively (planner_bands.c); each piece none of these
 * splits reaches is planned by vnpu_plan_piece() on a share of the time
 * left (past @deadline, the greedy plans and 1 ms of search). The plan
 * is perfect when every such piece's is, and above @target by what theirs
 * lose otherwise. Return: SKS_FOUND (a plan, at @target or not),
 * SKS_INFEASIBLE (@target is not the live total in every section, an
 * alignment does not divide every size, or nothing splits) or SKS_NOMEM.
 */
int pbd_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline, uint64_t *off,
	    uint64_t *nodes);

/**
 * pmg_run() - plan a perfect packing after merging buffers that must sit together
 * @pb: the instance
 * @target: its live total, the same in every section
 * @deadline: thread CPU time (ns) at which to give up
 * @off: out, the offsets when a plan is found
 * @nodes: in/out, as for pbd_run()
 *
 * Joins buffers into rectangles where the balance of a section boundary
 * forces it, in series and in parallel (planner_merge.c), and plans the
 * smaller instance by pbd_run(). When parallel merges were made, that plan
 * is not at @target and the series merges alone leave at most half of
 * the buffers, those go to pmg_series_run() on an eighth of the time
 * left, and its plan is taken when it tiles them. Return: as pbd_run()
 * (SKS_FOUND: a plan, at @target or not), SKS_INFEASIBLE also when
 * nothing merges, and SKS_TIMEOUT when @deadline passes before the merged
 * instance is planned.
 */
int pmg_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline, uint64_t *off,
	    uint64_t *nodes);

/**
 * pmg_series_run() - tile a perfect packing after its series merges alone
 * @pb: the instance
 * @target: its live total, the same in every section
 * @deadline: thread CPU time (ns) at which to give up
 * @off: out, the offsets when a plan is found
 * @nodes: in/out, as for pbd_run()
 *
 * The series merges of pmg_run() to their fixed point, without the
 * parallel ones (the rule seen to stack buffers no plan at the target
 * keeps together), and the merged instance given to the hole sweep, the
 * lazy sweep and the time sweep in turn, each with the stall rule
 * SKS_SWEEP_STALL_NS, when the merges leave at most half of the buffers.
 * Return: SKS_FOUND (a plan at @target only), SKS_INFEASIBLE (as
 * pmg_run(), also when the merges leave more than half of the buffers or
 * no sweep covers a plan), SKS_TIMEOUT (deadline or stall) or SKS_NOMEM.
 */
int pmg_series_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
		   uint64_t *off, uint64_t *nodes);

/**
 * pmg_commit_run() - the committed cuts on a perfect packing after its series merges
 * @pb: the instance
 * @target: its live total, the same in every section
 * @deadline: thread CPU time (ns) at which to give up
 * @off: out, the offsets when a plan is found
 * @nodes: in/out, as for pbd_run()
 *
 * The series merges of pmg_series_run(), and the merged instance given to
 * pcs_commit_run().
 * Return: as pcs_commit_run(), SKS_INFEASIBLE also when nothing merges.
 */
int pmg_commit_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
		   uint64_t *off, uint64_t *nodes);

/**
 * pqs_run() - look for a perfect packing by the hole sweep over a PQ-tree
 * @pb: the instance
 * @target: arena to reach; must equal @pb->sec_total in every section
 * @deadline: thread CPU time (ns) at which to give up
 * @stall: as for sws_run()
 * @off: out, the offsets when a plan is found
 * @nodes: in/out, boundaries entered are added
 *
 * Sweeps the section boundaries and decides only which buffers that end
 * there leave a hole together and which that start fill it; a PQ-tree
 * keeps every order of the live buffers those choices allow
 * (planner_pq.c). Complete up to its caps on the choices per boundary.
 * Return: SKS_FOUND (the plan is checked), SKS_INFEASIBLE (none found,
 * @target leaves slack in some section, or an alignment does not divide
 * every size), SKS_TIMEOUT (deadline or stall) or SKS_NOMEM.
 */
int pqs_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline, uint64_t stall,
	    uint64_t *off, uint64_t *nodes);

/**
 * sts_run() - look for a perfect packing by the strip search
 * @pb: the instance
 * @target: arena to reach; must equal @pb->sec_total in every section
 * @deadline: thread CPU time (ns) at which to give up
 * @off: out, the offsets when a plan is found
 * @nodes: in/out, pieces entered are added
 *
 * Takes the instance apart as a guillotine packing is built: buffers
 * spanning a piece at its bottom, time cuts where no buffer crosses, and
 * else two strips (sets of buffers whose live total is constant) stacked,
 * each solved alone; an AND-OR search with a memo of the sets that failed
 * (planner_strips.c). Complete for guillotine packings up to its step
 * budgets. Return: SKS_FOUND (the plan is checked), SKS_INFEASIBLE (none
 * found, @target leaves slack in some section, or an alignment does not
 * divide every size), SKS_TIMEOUT or SKS_NOMEM.
 */
int sts_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline, uint64_t *off,
	    uint64_t *nodes);

/*
 * Whether @target is the live total in every section of @pb and every
 * alignment divides *@unit, the gcd of @target and the sizes (offsets
 * that are sums of sizes are then aligned): 1 yes, 0 no.
 */
int vnpu_plan_perfect(const struct sks_problem *pb, uint64_t target, uint64_t *unit);

/*
 * The span [@span[0], @span[1]) of @ids (@m buffers); those live over all
 * of it are moved to the front of @ids and stacked in @off from @base up,
 * *@bottom their total. Returns how many there are.
 */
size_t vnpu_plan_span_bottom(const struct sks_problem *pb, uint32_t *ids, size_t m,
			     uint64_t base, uint64_t *off, uint32_t span[2], uint64_t *bottom);

/*
 * The end (exclusive) in @ids (@m buffers in order of first section) of
 * the time piece that starts at @start: it ends where no buffer before
 * it reaches past (a cut in time).
 */
size_t vnpu_plan_time_piece(const struct sks_problem *pb, const uint32_t *ids, size_t start,
			    size_t m);

/* Luby's restart sequence 1 1 2 1 1 2 4 1 1 2 ..., from @i = 1. */
uint64_t vnpu_plan_luby(uint64_t i);

/*
 * Whether @off is a plan of @pb within @target, by the planner's verifier
 * (planner.c): 1 yes, 0 no or out of memory.
 */
int sks_check(const struct sks_problem *pb, const uint64_t *off, uint64_t target);

struct vnpu_plan_buffer;
struct vnpu_plan_options;
struct vnpu_plan_stats;

/*
 * vnpu_plan_compute() on the calling thread and its CPU clock, planning
 * in @bufs itself (planner.c): for a piece of an instance being planned.
 */
int vnpu_plan_piece(struct vnpu_plan_buffer *bufs, size_t n, const struct vnpu_plan_options *opts,
		    struct vnpu_plan_stats *stats);

/*
 * The compaction vnpu_plan_compute() ends with (planner.c), on the plan
 * in @bufs' offsets, which it rewrites: no buffer rises, so neither does
 * *@arena, the new plan's arena. Returns VNPU_SUCCESS (also for no
 * buffers), VNPU_ERROR_INVALID_VALUE when @bufs is not a valid plan (the
 * offsets untouched) or VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_plan_compact(struct vnpu_plan_buffer *bufs, size_t n, uint64_t *arena);

/*
 * A piece no split reaches, @ids (@m buffers of @pb): planned by the
 * planner itself (vnpu_plan_piece()) with @time_ms ms of search (at least
 * 1), through the scratch @sub (@m entries), and placed in @off from @base
 * up (planner.c); *@height is the top of its plan above @base, its live total when
 * perfect. The piece's search nodes are added to @nodes. Returns
 * SKS_FOUND or SKS_NOMEM.
 */
int vnpu_plan_leaf(const struct sks_problem *pb, const uint32_t *ids, size_t m, uint64_t base,
		   unsigned int time_ms, struct vnpu_plan_buffer *sub, uint64_t *off,
		   uint64_t *nodes, uint64_t *height);

/*
 * The planner's clock, in ns, that every deadline and stall rule reads:
 * the calling thread's CPU time (read at most every 100 us of wall time,
 * an upper bound in between; it never goes back), or, between
 * vnpu_plan_clock_begin(1) and vnpu_plan_clock_end() on the thread, a work
 * clock that starts at 0 and that vnpu_plan_tick() advances (and every
 * reading, by a microsecond). On the work clock a plan depends on its
 * input and options alone.
 */
void vnpu_plan_clock_begin(int deterministic);
void vnpu_plan_clock_end(void);
uint64_t vnpu_plan_now(void);
/*
 * The clock at a search's periodic check, after about @work_ns of CPU
 * time of work since its last one (each site's figure, measured on the
 * development VM): the work clock advances by it; the CPU clock is read.
 */
uint64_t vnpu_plan_tick(uint64_t work_ns);

/*
 * The figures of vnpu_plan_tick(): the mean CPU time between two checks of
 * one site, measured on the development VM over guillotine,
 * guillotine-aspect, random, area, ladder and chain instances of 300 to
 * 12,000 buffers (selftests/host/planner_gen.c); per buffer of the
 * instance or piece for the set-ups, which grow with them. A site's cost
 * varies with the instance up to 4 times either way from its figure, the
 * time sweep's up to 12: the work clock keeps a budget's order of
 * magnitude, not its CPU time.
 */
#define PLAN_SETUP_TICK_NS 1000u	/* a plan's greedy stage, per buffer */
#define PLAN_PLACE_TICK_NS 200000u	/* greedy placement: 256 buffers */
#define PLAN_SKY_TICK_NS 200000u	/* skyline placement: 1,024 steps */
#define MM_TICK_NS 100000u		/* the improvement's search: 256 nodes */
#define BD_ROUND_TICK_NS 50000u	/* band decomposition: a round */
#define PCS_NODES_TICK_NS 450000u	/* cut search: 256 nodes */
#define PCS_SETS_TICK_NS 500000u	/* cut search: 4,096 buffers decided */
#define MG_PAIR_TICK_NS 3000u		/* forced merges: a pair of sizes */
#define MG_ROUND_TICK_NS 5000u		/* forced merges: a round */
#define PQS_SETUP_TICK_NS 400u		/* hole sweep: a pass's set-up, per buffer */
#define PQS_STEPS_TICK_NS 10000u	/* hole sweep: 1,024 generation steps */
#define PQS_NODES_TICK_NS 30000u	/* hole sweep: 8 nodes */
#define SK_NODES_TICK_NS 800000u	/* skyline search: 1,024 nodes */
#define STS_STEPS_TICK_NS 2000000u	/* strip stage: 256 steps */
#define SW_SETUP_TICK_NS 800u		/* time and lazy sweeps: set-up, per buffer */
#define SW_NODES_TICK_NS 40000u	/* time sweep: 256 nodes */
#define LZ_NODES_TICK_NS 15000u	/* lazy sweep: 256 nodes */
#define LZ_NODE_TICK_NS 3000u		/* lazy sweep: a node with a subset sum */

/* Greatest common divisor of @a and @b (@a when @b is 0). */
uint64_t vnpu_plan_gcd(uint64_t a, uint64_t b);

/*
 * A subset sum step: @bits |= @bits << @k over @words words, the bits
 * shifted past the top dropped.
 */
void vnpu_plan_bits_add(uint64_t *bits, size_t words, uint64_t k);

/* Most values vnpu_plan_balance() takes. */
#define VNPU_PLAN_BALANCE_MAX 14

/*
 * Of the subsets of the @n (up to VNPU_PLAN_BALANCE_MAX) values @v that
 * sum to @want: how many (the empty one included), in *@in_some the union
 * of them and in *@out_some the union of their complements (bit i for
 * @v[i]). The rows of the strip searches: a value in every subset that
 * balances a boundary is in, one in none is out.
 */
uint32_t vnpu_plan_balance(const int64_t *v, uint32_t n, int64_t want, uint32_t *in_some,
			   uint32_t *out_some);

/* The splitmix64 finalizer: a 64-bit hash of @z. */
uint64_t vnpu_plan_mix64(uint64_t z);

/* Grows the array *@v of *@cap elements of @elem bytes to hold @need, doubling; -1 without memory. */
int vnpu_plan_grow(void **v, size_t *cap, size_t need, size_t elem);

#endif
