// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The cut search: a complete depth-first search for perfect packings that
 * split by guillotine cuts. The target equals the live total in every
 * section, so a plan at the target wastes nothing. Such a plan is
 * guillotine when it is one buffer, or splits by a cut in time (no buffer
 * crosses a section boundary) or by a cut in memory (the buffers below an
 * offset and those above it), each side again guillotine. Packings cut at
 * random, the kind the band decomposition loses on when cuts meet in time
 * (planner_bands.c), are all of this kind.
 *
 * pcs_solve() puts the buffers live over the whole span at the bottom and
 * cuts in time where no buffer crosses, as the band decomposition does.
 * What is left is a stack of strips, each live over the whole span with a
 * cut in time of its own. pcs_band() searches for the strip of one buffer
 * c0 (of the buffers live first, the largest; on runs that break ties at
 * random, any of them), a 0/1 choice per buffer:
 *
 * - a cut c of the strip is chosen first (boundaries in time order, from
 *   c0's end, where both the sizes that end and those that start add up
 *   to c0's at least): the buffers that cross c are out;
 * - at every boundary the strip's starters and enders balance (event
 *   rows): with few unknown buffers, every subset that balances is listed,
 *   and a buffer in all of them is in, in none out; with more, by bounds;
 * - in every section the strip's live total is its width, the same for
 *   all sections (section rows): the width's range is the intersection of
 *   [in, in + unknown] over the sections, narrowed to the widths that are
 *   a subset sum of the buffers of every section (pcs_widths()), and a
 *   buffer too large for a section's slack either way is decided;
 * - branching takes the unknown buffer of largest area (size times the
 *   sections it spans) that can mend the balance of a boundary still out
 *   of it (pcs_branch()): in, then out.
 *
 * A choice that balances everywhere is taken for a set of strips; it and
 * the rest are solved in turn, each in its own width, and a failure of
 * either takes the search on to the next choice (a balanced set need not
 * tile: sums can coincide, and near misses of a strip, small buffers of
 * other strips standing in for some of its own, are common). Heavy tails
 * are cut by restarts (Luby, in units of PCS_RESTART_NODES nodes) that
 * break ties at random and take c0 at random among the buffers live
 * first: a strip that thwarts the largest one's search thwarts it on
 * every restart, while other strips of the slab may be found in a few
 * hundred nodes.
 *
 * The search covers guillotine plans only; a perfect packing that is not
 * guillotine anywhere (five buffers in a pinwheel) gives SKS_INFEASIBLE.
 *
 * pcs_commit_run() walks the same cuts but commits: each slab takes the
 * first balanced set found for its strip (within PCS_COMMIT_NODES nodes
 * per buffer, with restarts) and both sides are planned the same way,
 * whether or not they tile. A near miss then costs what its sides' plans
 * lose instead of a search that backtracks over it, and most first sets
 * are strips (or near misses whose loss stays small): the plan is valid
 * at any rate, at the target when every set tiled. A slab whose strip is
 * not found (none exists: a near miss above it; or not in time) is
 * planned by the planner itself (vnpu_plan_leaf()) on a share of the time
 * left in proportion to its buffers. While a slab's plan is above its
 * width, other strips are tried (PCS_COMMIT_TRIES, ties at random) within
 * the slab's share of the stage's time, and the lowest plan is kept. All
 * that runs forwards in time, then backwards (struct pcs_back), then both
 * again with every choice at random (PCS_COMMIT_PASSES): which seeds a
 * committed plan tiles depends more on its random choices than on any
 * rule measured for them.
 *
 * Near misses are local in time: a committed set often has its strip's
 * cuts in time and differs from it in a few of the windows between them.
 * Up to PCS_COMMIT_AGAIN_MAX buffers the in side's time pieces are planned
 * smallest first and the first one planned above the width stops it: the
 * slab's buffers live within that piece's window are searched again, the
 * others kept on their side (pcs_repair()), and the slabs tiled before are
 * laid out again from a table (struct pcs_table) instead of searched.
 */
#include <stdlib.h>
#include <string.h>

#include "planner_search.h"
#include "vnpu.h"

/* Most unknown buffers at a boundary whose balancing subsets are listed. */
#define PCS_ENUM_MAX 10
_Static_assert(PCS_ENUM_MAX <= VNPU_PLAN_BALANCE_MAX, "rows enumerated by vnpu_plan_balance()");
/* Nodes of the first restart; later ones take Luby multiples of it. */
#define PCS_RESTART_NODES 1000u
/* The committed decomposition: nodes per buffer to find a slab's strip. */
#define PCS_COMMIT_NODES 20u
/* and strips tried per slab while its plan is above its width. */
#define PCS_COMMIT_TRIES 3u
/*
 * Whole committed plans, alternately forwards and backwards in time, each
 * on an equal share of the time left; from the third on, every run breaks
 * ties and takes c0 at random (struct pcs salt). Up to
 * PCS_COMMIT_AGAIN_MAX buffers four; above, where the passes run out of
 * time before nodes, two (four cost guillotine 6,000 0.007 of its mean).
 */
#define PCS_COMMIT_PASSES 4
#define PCS_COMMIT_AGAIN_MAX 2048
/*
 * The widths a slab's strip can have (pcs_widths()): from up to
 * PCS_WIDTH_SECTIONS sections of at most PCS_WIDTH_SECTION_MAX buffers,
 * for slabs up to PCS_WIDTH_BITS_MAX units (the sizes' gcd) wide, within
 * about PCS_WIDTH_WORK word operations: a few ms at most, however fine the
 * sizes (the 1,201-buffer slab of guillotine 1,500 seed 13 takes 254,380).
 */
#define PCS_WIDTH_SECTIONS 64u
#define PCS_WIDTH_SECTION_MAX 32u
#define PCS_WIDTH_BITS_MAX (1u << 18)
#define PCS_WIDTH_WORK (1ull << 22)
/*
 * Sets a slab's strip search commits to, the first included, when their
 * in side fails in a window (pcs_repair()); the last is planned whole.
 * Two: one repair. Three, side by side (1,500 buffers, seeds 401 to 500):
 * guillotine-aspect 31 and 36 at the optimum against 30 and 36,
 * guillotine 37 and 44 against 37 and 43, within the noise.
 */
#define PCS_REPAIR_TRIES 2u
/* A result inside the committed cuts only (apart from SKS_*): a window to search again. */
#define PCS_RETRY 100
/*
 * Slabs tiled (struct pcs_tiled), kept across tries, repairs and passes so
 * that a slab met again, the pieces a repair keeps above all, is laid out
 * at once and the same way: slabs of PCS_TILED_MIN buffers or more, in a
 * table of PCS_TILED_SLOTS slots (half of them used at most) holding up to
 * PCS_TILED_STORE buffers per buffer of the instance.
 */
#define PCS_TILED_MIN 16u
#define PCS_TILED_SLOTS 8192u
#define PCS_TILED_STORE 16u

/* A slab tiled: its buffers, sorted, each with its offset above the slab's base. */
struct pcs_tiled {
	uint64_t key, width;
	uint32_t m;
	uint32_t *ids;
	uint64_t *rel;
};

/* Open addressing on pcs_set_key(); a slot without ids is empty. */
struct pcs_table {
	struct pcs_tiled *slot;
	uint32_t used;
	uint64_t stored;	/* buffers held */
	uint64_t most;		/* and at most */
	uint32_t *sorted;	/* scratch: a slab's buffers sorted */
};

struct pcs {
	const struct sks_problem *pb;
	uint64_t *off;
	uint64_t deadline, *nodes;
	uint64_t count, limit;	/* nodes of this run; the restart's limit */
	uint64_t work;		/* decisions made, to read the clock by */
	int late;		/* past the deadline: every search unwinds */
	uint64_t rng;		/* tie-breaking state, 0 for none */
	int commit;		/* pcs_commit_run(): the first balanced set is taken */
	uint64_t begin;		/* CPU time at which pcs_commit_run() started */
	uint64_t height;	/* the top of the last committed split above its base */
	uint32_t salt;		/* the pass's pair (PCS_COMMIT_PASSES), 0 for the first */
	struct vnpu_plan_buffer *sub;	/* scratch of vnpu_plan_leaf() */
	struct pcs_table *tiled;	/* slabs tiled, or NULL */
	int fail_fast;		/* the next pcs_commit() stops at its first failing piece */
	uint32_t fail_t0, fail_t1;	/* and returns PCS_RETRY with that piece's span */
	uint8_t *probe;		/* pcs_probe(): the first balanced set, per buffer of the slab */
};

/* A section's skip before it grew, and the trail's length then. */
struct pcs_skip {
	uint32_t section, old, trail;
};

/*
 * One strip search over a slab's buffers. A boundary is a section start
 * strictly inside the slab's span; band sections are numbered from 0 (the
 * slab's first) to nev (its last), section k + 1 starting at boundary k.
 */
struct pcs_band {
	struct pcs *c;
	const uint32_t *ids;
	uint32_t m, nev;
	int32_t *ev_start, *ev_end;	/* boundary of each buffer's start/end, -1 at an edge */
	/*
	 * The buffers of each boundary, its starters before its enders
	 * (from ev_split): pcs_branch() reads one kind only, since a
	 * boundary out of balance can be mended by one kind only.
	 */
	uint32_t *ev_first, *ev_item, *ev_split;
	int64_t *imb, *pos, *neg;	/* per boundary: net of the ins; unknown +/- nets */
	uint64_t *starting, *ending;	/* per boundary: sizes of all that start, end there */
	uint64_t *ev_largest;		/* per boundary: the largest size that starts or ends */
	uint32_t *nunk;			/* per boundary: unknown buffers */
	uint32_t nimb;			/* boundaries whose imb is not 0 */
	/*
	 * Per section, as differences from the section before (a decision
	 * costs two entries, not one per section it spans; pcs_sections()
	 * sums them up as it walks): live sizes in, unknown, and decisions
	 * made or taken back (a count that only grows, so a section whose
	 * sum equals the one it was last checked at has not moved).
	 */
	int64_t *d_in, *d_unk, *d_moves;
	int64_t *checked;		/* per section: its moves when last checked */
	uint32_t *sec_first, *sec_item;	/* the buffers live in each section, largest first */
	/*
	 * Per section, how many of its first buffers are known decided:
	 * pcs_sections() skips them. A skip rests on the decisions on the
	 * trail when it was taken: each change is kept (struct pcs_skip) and
	 * undone when the trail goes below that point.
	 */
	uint32_t *sec_skip;
	struct pcs_skip *skips;
	uint32_t nskips;
	uint64_t *size;			/* per buffer: its size (the rows read it at every check) */
	uint64_t *area;			/* and its area, pcs_branch()'s key (pcs_area()) */
	uint64_t low, high;		/* the width's range at the last check of the sections */
	uint64_t *widths, unit;		/* the widths the strip can have, in units (or NULL) */
	size_t words;			/* of that bitset */
	uint32_t *times;		/* the time of each boundary */
	uint32_t largest, nfirst;	/* of the buffers live first: the largest; how many */
	int8_t *val;			/* per buffer: -1 unknown, 0 out, 1 in */
	uint32_t *trail, ntrail;	/* decided buffers, in order */
	uint32_t *queue, nq;		/* boundaries to check */
	uint8_t *queued;
	int early;			/* committed: an in side that fails returns PCS_RETRY */
};

static int pcs_solve(struct pcs *c, uint32_t *ids, uint32_t m, uint64_t width,
		     uint64_t base);
static int pcs_commit(struct pcs *c, uint32_t *ids, uint32_t m, uint64_t width,
		      uint64_t base, uint64_t *height);

static uint32_t pcs_rand(struct pcs *c, uint32_t below)
{
	c->rng = vnpu_plan_mix64(c->rng);
	return (uint32_t)(c->rng % below);
}

/* Counts a node; SKS_TIMEOUT past the restart's limit or the deadline. */
static int pcs_tick(struct pcs *c)
{
	(*c->nodes)++;
	if (++c->count > c->limit || c->late)
		return SKS_TIMEOUT;
	if (!(c->count & 255) && vnpu_plan_tick(PCS_NODES_TICK_NS) > c->deadline)
		return SKS_TIMEOUT;
	return SKS_INFEASIBLE;
}

/* Buffer @i's net at boundary @e: + its size if it starts, - if it ends. */
static int64_t pcs_net(const struct pcs_band *b, uint32_t i, int32_t e)
{
	int64_t size = (int64_t)b->size[i];

	return b->ev_start[i] == e ? size : b->ev_end[i] == e ? -size : 0;
}

static void pcs_queue(struct pcs_band *b, int32_t e)
{
	if (e >= 0 && !b->queued[e]) {
		b->queued[e] = 1;
		b->queue[b->nq++] = (uint32_t)e;
	}
}

/* Enters buffer @i's decision @v in the rows, or takes it back (@undo). */
static void pcs_account(struct pcs_band *b, uint32_t i, int v, int undo)
{
	int64_t size = (int64_t)b->size[i], in = v ? size : 0;
	uint32_t first = (uint32_t)(b->ev_start[i] + 1);
	uint32_t after = (b->ev_end[i] < 0 ? b->nev : (uint32_t)b->ev_end[i]) + 1;
	int32_t ends[2] = { b->ev_start[i], b->ev_end[i] };

	for (int k = 0; k < 2; k++) {
		int32_t e = ends[k];
		int64_t x;

		if (e < 0)
			continue;
		x = undo ? -pcs_net(b, i, e) : pcs_net(b, i, e);
		if (undo)
			b->nunk[e]++;
		else
			b->nunk[e]--;
		/* The unknown sums lose the net (get it back on undo). */
		if (pcs_net(b, i, e) > 0)
			b->pos[e] -= x;
		else
			b->neg[e] -= x;
		if (v) {
			b->nimb -= b->imb[e] != 0;
			b->imb[e] += x;
			b->nimb += b->imb[e] != 0;
		}
		if (!undo)
			pcs_queue(b, e);
	}
	if (undo) {
		size = -size;
		in = -in;
	}
	b->d_unk[first] -= size;
	b->d_unk[after] += size;
	b->d_in[first] += in;
	b->d_in[after] -= in;
	b->d_moves[first]++;
	b->d_moves[after]--;
}

static void pcs_set(struct pcs_band *b, uint32_t i, int v)
{
	/* Propagation can run long between nodes: the clock every 4,096. */
	if (!(++b->c->work & 4095) && vnpu_plan_tick(PCS_SETS_TICK_NS) > b->c->deadline)
		b->c->late = 1;
	b->val[i] = (int8_t)v;
	b->trail[b->ntrail++] = i;
	pcs_account(b, i, v, 0);
}

static void pcs_undo(struct pcs_band *b, uint32_t mark)
{
	while (b->ntrail > mark) {
		uint32_t i = b->trail[--b->ntrail];

		pcs_account(b, i, b->val[i], 1);
		b->val[i] = -1;
	}
	while (b->nskips && b->skips[b->nskips - 1].trail > mark) {
		const struct pcs_skip *k = &b->skips[--b->nskips];

		b->sec_skip[k->section] = k->old;
	}
}

/* The first of section @s's buffers not known decided, its skip moved past those that are. */
static uint32_t pcs_skip(struct pcs_band *b, uint32_t s)
{
	uint32_t first = b->sec_first[s] + b->sec_skip[s], j = first;

	while (j < b->sec_first[s + 1] && b->val[b->sec_item[j]] >= 0)
		j++;
	if (j != first) {
		b->skips[b->nskips++] = (struct pcs_skip){ s, b->sec_skip[s], b->ntrail };
		b->sec_skip[s] = j - b->sec_first[s];
	}
	return j;
}

/*
 * The event row of boundary @e: its unknown buffers must make up what
 * the ins lack. Returns 0 when they cannot, else 1 (with what it decides).
 */
static int pcs_event(struct pcs_band *b, uint32_t e)
{
	int64_t need = -b->imb[e], v[PCS_ENUM_MAX];
	uint32_t u[PCS_ENUM_MAX], k = 0, any, none;

	if (need < b->neg[e] || need > b->pos[e])
		return 0;
	if (!b->nunk[e])
		return need == 0;
	if (b->nunk[e] > PCS_ENUM_MAX) {
		/*
		 * Bounds: a buffer larger than the slack either way is decided
		 * (none is when the largest of all is not). A decision moves
		 * need and the sums, read again; one the buffers before it now
		 * allow comes when the boundary, queued again by it, is next
		 * checked.
		 */
		if (b->ev_largest[e] <= (uint64_t)(b->pos[e] - need) &&
		    b->ev_largest[e] <= (uint64_t)(need - b->neg[e]))
			return 1;
		for (uint32_t j = b->ev_first[e]; j < b->ev_first[e + 1]; j++) {
			uint32_t i = b->ev_item[j];
			int64_t x;

			if (b->val[i] >= 0)
				continue;
			need = -b->imb[e];
			if (need < b->neg[e] || need > b->pos[e])
				return 0;
			x = pcs_net(b, i, (int32_t)e);
			if ((x > 0 && need > b->pos[e] - x) || (x < 0 && need < b->neg[e] - x))
				pcs_set(b, i, 1);
			else if ((x > 0 && need < b->neg[e] + x) || (x < 0 && need > b->pos[e] + x))
				pcs_set(b, i, 0);
		}
		need = -b->imb[e];
		return need >= b->neg[e] && need <= b->pos[e];
	}
	for (uint32_t j = b->ev_first[e]; j < b->ev_first[e + 1]; j++)
		if (b->val[b->ev_item[j]] < 0) {
			u[k] = b->ev_item[j];
			v[k] = pcs_net(b, u[k], (int32_t)e);
			k++;
		}
	if (!vnpu_plan_balance(v, k, need, &any, &none))
		return 0;
	/* In every subset that balances: in; in none: out. */
	for (uint32_t x = 0; x < k; x++)
		if (!(none >> x & 1))
			pcs_set(b, u[x], 1);
		else if (!(any >> x & 1))
			pcs_set(b, u[x], 0);
	return 1;
}

/*
 * Narrows [@low, @high] to the widths the strip can have (pcs_widths()):
 * 0 when none is left.
 */
static int pcs_width_snap(const struct pcs_band *b, uint64_t *low, uint64_t *high)
{
	uint64_t last = b->words * 64 - 1;
	uint64_t lo = (*low + b->unit - 1) / b->unit, hi = *high / b->unit;

	if (hi > last)
		hi = last;
	while (lo <= hi && !(b->widths[lo / 64] >> (lo % 64) & 1))
		lo = b->widths[lo / 64] >> (lo % 64) ? lo + 1 : (lo / 64 + 1) * 64;
	while (lo <= hi && !(b->widths[hi / 64] >> (hi % 64) & 1)) {
		if (!hi)
			return 0;
		hi = b->widths[hi / 64] << (63 - hi % 64) || hi < 64 ? hi - 1 : hi / 64 * 64 - 1;
	}
	if (lo > hi)
		return 0;
	*low = lo * b->unit;
	*high = hi * b->unit;
	return 1;
}

/*
 * The section rows: the strip's width lies in [in, in + unknown] of every
 * section. Returns -1 when the ranges do not meet, 1 when it decided a
 * buffer, 0 at its fixed point.
 */
static int pcs_sections(struct pcs_band *b)
{
	uint64_t low = 0, high = UINT64_MAX, in = 0, unk = 0;
	int64_t moves = 0;
	int decided = 0, all;

	for (uint32_t s = 0; s <= b->nev; s++) {
		in += (uint64_t)b->d_in[s];
		unk += (uint64_t)b->d_unk[s];
		if (in > low)
			low = in;
		if (in + unk < high)
			high = in + unk;
	}
	if (low > high || !high || (b->widths && !pcs_width_snap(b, &low, &high)))
		return -1;
	/* A section is checked again when it or the width's range moved. */
	all = low != b->low || high != b->high;
	b->low = low;
	b->high = high;
	in = 0;
	unk = 0;
	for (uint32_t s = 0; s <= b->nev; s++) {
		in += (uint64_t)b->d_in[s];
		unk += (uint64_t)b->d_unk[s];
		moves += b->d_moves[s];
		/* Decisions in earlier sections may have closed this one's range. */
		if (in + unk < low || in > high)
			goto closed;
		if (!all && b->checked[s] == moves)
			continue;
		b->checked[s] = moves;
		/* No unknown buffer is larger than their total. */
		if (unk <= in + unk - low && unk <= high - in)
			continue;
		for (uint32_t j = pcs_skip(b, s); j < b->sec_first[s + 1]; j++) {
			uint32_t i = b->sec_item[j];
			/* The ranges narrow as buffers are decided. */
			uint64_t below = in + unk - low, above = high - in;
			int v;

			/* Largest first: none of the rest is large enough to be decided. */
			if (b->size[i] <= below && b->size[i] <= above)
				break;
			if (b->val[i] >= 0)
				continue;
			v = b->size[i] > below;
			pcs_set(b, i, v);
			/* @i is live here: its first section's entries are summed, its last's ahead. */
			unk -= b->size[i];
			in += v ? b->size[i] : 0;
			moves++;
			decided = 1;
			if (in + unk < low || in > high)
				goto closed;
		}
	}
	return decided;
closed:
	/* The sections after this one were not checked: all of them next time. */
	b->high = 0;
	return -1;
}

/* Both kinds of row to their fixed point; 0 on a contradiction. */
static int pcs_propagate(struct pcs_band *b)
{
	for (;;) {
		int r;

		while (b->nq) {
			uint32_t e = b->queue[--b->nq];

			b->queued[e] = 0;
			if (b->c->late || !pcs_event(b, e)) {
				while (b->nq)
					b->queued[b->queue[--b->nq]] = 0;
				return 0;
			}
		}
		r = pcs_sections(b);
		if (r <= 0)
			return r == 0;
	}
}

/* The ins balance everywhere: solve them, then the rest above them. */
static int pcs_split(struct pcs_band *b, uint64_t width, uint64_t base, uint32_t t0)
{
	const struct sks_problem *pb = b->c->pb;
	uint32_t *ids = malloc(b->m * sizeof(*ids)), nin = 0, k;
	uint64_t w = 0;
	int r;

	if (!ids)
		return SKS_NOMEM;
	for (uint32_t i = 0; i < b->m; i++)
		if (b->val[i] == 1) {
			ids[nin++] = b->ids[i];
			if (pb->t0[b->ids[i]] == t0)
				w += pb->size[b->ids[i]];
		}
	k = nin;
	for (uint32_t i = 0; i < b->m; i++)
		if (b->val[i] != 1)
			ids[k++] = b->ids[i];
	r = SKS_INFEASIBLE;
	if (nin < b->m && w < width && b->c->probe) {
		/* pcs_probe(): the set is the result, neither side planned. */
		for (uint32_t i = 0; i < b->m; i++)
			b->c->probe[i] = b->val[i] == 1;
		r = SKS_FOUND;
	} else if (nin < b->m && w < width && b->c->commit) {
		/* Committed: each side gets a plan, perfect or not (pcs_commit()). */
		uint64_t below = 0, above = 0;

		b->c->fail_fast = b->early;
		r = pcs_commit(b->c, ids, nin, w, base, &below);
		if (r == PCS_RETRY) {
			/* The out side is not planned: pcs_repair() goes on. */
			free(ids);
			return PCS_RETRY;
		}
		if (r == SKS_FOUND)
			r = pcs_commit(b->c, ids + nin, b->m - nin, width - w, base + below,
				       &above);
		b->c->height = below + above;
	} else if (nin < b->m && w < width) {
		r = pcs_solve(b->c, ids, nin, w, base);
		if (r == SKS_FOUND)
			r = pcs_solve(b->c, ids + nin, b->m - nin, width - w, base + w);
	}
	free(ids);
	return r;
}

/*
 * A buffer's area in the slab: its size times the sections it spans,
 * saturated (pcs_branch() doubles it).
 */
static uint64_t pcs_area(uint64_t size, uint32_t first, uint32_t last)
{
	uint64_t span = (uint64_t)last - first + 1;

	return size > UINT64_MAX / 2 / span ? UINT64_MAX / 2 : size * span;
}

/*
 * The buffer to branch on: of the unknown buffers that can mend the
 * balance of a boundary still out of it, the one of largest area; on runs
 * at random, any of those at least half its area.
 * UINT32_MAX when none can. Fine buffers stand in for any sum: decided
 * first, they fill a strip in place of its own coarser ones, and the set
 * balances and tiles while its out side, left the coarse ones where the
 * fine ones were, does not (guillotine-aspect 1,500 seed 2,410: 47 pieces
 * of 1 to 31 units for the strip's 34, 7, 1, 30 and 3 x 13). So do
 * buffers live in one section, whatever their size: they balance both
 * ends of their section and nothing else, and by size alone the other
 * strip's ones go in before the strip's own longer buffers (guillotine
 * 1,500 seed 3,444: 31 buffers of one section each stand in for a whole
 * piece of the strip, four buffers of two sections and their small
 * ones). By area the longer buffers go first: on slabs of 500 buffers or
 * more (planner_bench --strips, seeds 3,441, 3,444, 3,445 and 3,449 of
 * guillotine and guillotine-aspect 1,500) 64 first sets of 533 are
 * strips instead of 58, 374 near misses instead of 437; seeds 3,641 to
 * 3,700 of 6,000 buffers plan 28 of 60 above 1.05 of the optimum instead
 * of 36 (guillotine-aspect), 32 instead of 41 (guillotine).
 */
static uint32_t pcs_branch(struct pcs_band *b)
{
	uint64_t most = 0;
	uint32_t pick = UINT32_MAX, seen = 0;

	for (int pass = 0; pass < (b->c->rng ? 2 : 1); pass++)
		for (uint32_t e = 0; e < b->nev; e++) {
			uint32_t from, to;

			if (!b->imb[e])
				continue;
			/* In, a starter moves a balance below 0 towards 0, an ender one above. */
			from = b->imb[e] < 0 ? b->ev_first[e] : b->ev_split[e];
			to = b->imb[e] < 0 ? b->ev_split[e] : b->ev_first[e + 1];
			for (uint32_t j = from; j < to; j++) {
				uint32_t i = b->ev_item[j];
				uint64_t area;

				if (b->val[i] >= 0)
					continue;
				area = b->area[i];
				if (!pass && area > most) {
					most = area;
					pick = i;
				} else if (pass && 2 * area >= most && !pcs_rand(b->c, ++seen)) {
					pick = i;
				}
			}
		}
	return pick;
}

static int pcs_dfs(struct pcs_band *b, uint64_t width, uint64_t base, uint32_t t0)
{
	uint32_t pick;
	int r = pcs_tick(b->c);

	if (r != SKS_INFEASIBLE)
		return r;
	if (!b->nimb)
		return pcs_split(b, width, base, t0);
	pick = pcs_branch(b);
	if (pick == UINT32_MAX)
		return SKS_INFEASIBLE;
	for (int v = 1; v >= 0; v--) {
		uint32_t mark = b->ntrail;

		pcs_set(b, pick, v);
		r = pcs_propagate(b) ? pcs_dfs(b, width, base, t0) : SKS_INFEASIBLE;
		/* A plan found is whole even if the deadline passed meanwhile. */
		if (r == SKS_FOUND || r == SKS_NOMEM)
			return r;
		if (b->c->late)
			return SKS_TIMEOUT;
		if (r != SKS_INFEASIBLE)
			return r;
		pcs_undo(b, mark);
	}
	return SKS_INFEASIBLE;
}

static int pcs_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Buffers of a slab by size, largest first. */
static int pcs_cmp_larger(const void *pa, const void *pb, void *arg)
{
	const struct pcs_band *b = arg;
	uint64_t x = b->size[*(const uint32_t *)pa], y = b->size[*(const uint32_t *)pb];

	return x > y ? -1 : x < y;
}

/* The boundary at @t, one of @times (sorted, @n of them): its index. */
static int32_t pcs_boundary(const uint32_t *times, uint32_t n, uint32_t t)
{
	const uint32_t *at = bsearch(&t, times, n, sizeof(*times), pcs_cmp_u32);

	return (int32_t)(at - times);
}

static void pcs_band_free(struct pcs_band *b)
{
	free(b->widths);
	free(b->times);
	free(b->ev_start);
	free(b->ev_end);
	free(b->ev_first);
	free(b->ev_item);
	free(b->ev_split);
	free(b->imb);
	free(b->pos);
	free(b->neg);
	free(b->starting);
	free(b->ending);
	free(b->ev_largest);
	free(b->nunk);
	free(b->d_in);
	free(b->d_unk);
	free(b->d_moves);
	free(b->checked);
	free(b->sec_first);
	free(b->sec_item);
	free(b->sec_skip);
	free(b->skips);
	free(b->size);
	free(b->area);
	free(b->val);
	free(b->trail);
	free(b->queue);
	free(b->queued);
	free(b);
}

/*
 * The rows of @b for the slab @ids (@m buffers, span [@t0, @t1), none
 * live over all of it); @times holds scratch for 2 * @m sections.
 */
static int pcs_band_init(struct pcs_band *b, const uint32_t *ids, uint32_t m, uint32_t t0,
			 uint32_t t1, uint32_t *times)
{
	const struct sks_problem *pb = b->c->pb;
	uint32_t n = 0, nev = 0, live = 0;

	for (uint32_t i = 0; i < m; i++) {
		if (pb->t0[ids[i]] > t0)
			times[n++] = pb->t0[ids[i]];
		if (pb->t1[ids[i]] < t1)
			times[n++] = pb->t1[ids[i]];
	}
	qsort(times, n, sizeof(*times), pcs_cmp_u32);
	for (uint32_t i = 0; i < n; i++)
		if (!nev || times[nev - 1] != times[i])
			times[nev++] = times[i];
	b->ids = ids;
	b->m = m;
	b->nev = nev;
	b->ev_start = malloc(m * sizeof(*b->ev_start));
	b->ev_end = malloc(m * sizeof(*b->ev_end));
	b->ev_first = calloc(nev + 2, sizeof(*b->ev_first));
	b->ev_item = malloc(2 * m * sizeof(*b->ev_item));
	b->ev_split = malloc((nev + 1) * sizeof(*b->ev_split));
	b->imb = calloc(nev + 1, sizeof(*b->imb));
	b->pos = calloc(nev + 1, sizeof(*b->pos));
	b->neg = calloc(nev + 1, sizeof(*b->neg));
	b->starting = calloc(nev + 1, sizeof(*b->starting));
	b->ending = calloc(nev + 1, sizeof(*b->ending));
	b->ev_largest = calloc(nev + 1, sizeof(*b->ev_largest));
	b->nunk = calloc(nev + 1, sizeof(*b->nunk));
	b->d_in = calloc(nev + 2, sizeof(*b->d_in));
	b->d_unk = calloc(nev + 2, sizeof(*b->d_unk));
	b->d_moves = calloc(nev + 2, sizeof(*b->d_moves));
	b->checked = calloc(nev + 1, sizeof(*b->checked));
	b->sec_first = calloc(nev + 2, sizeof(*b->sec_first));
	b->sec_skip = calloc(nev + 1, sizeof(*b->sec_skip));
	b->val = malloc(m);
	b->size = malloc(m * sizeof(*b->size));
	b->area = malloc(m * sizeof(*b->area));
	b->trail = malloc(m * sizeof(*b->trail));
	b->queue = malloc((nev + 1) * sizeof(*b->queue));
	b->queued = calloc(nev + 1, 1);
	if (!b->ev_start || !b->ev_end || !b->ev_first || !b->ev_item ||
	    !b->ev_split || !b->imb || !b->pos || !b->neg || !b->starting || !b->ending ||
	    !b->ev_largest || !b->nunk || !b->d_in || !b->d_unk || !b->d_moves || !b->checked ||
	    !b->sec_first || !b->sec_skip || !b->val || !b->size || !b->area || !b->trail || !b->queue ||
	    !b->queued)
		return SKS_NOMEM;
	memset(b->val, -1, m);
	for (uint32_t i = 0; i < m; i++) {
		uint32_t first, last;

		b->size[i] = pb->size[ids[i]];
		b->ev_start[i] = pb->t0[ids[i]] > t0 ?
				 pcs_boundary(times, nev, pb->t0[ids[i]]) : -1;
		b->ev_end[i] = pb->t1[ids[i]] < t1 ? pcs_boundary(times, nev, pb->t1[ids[i]]) : -1;
		first = (uint32_t)(b->ev_start[i] + 1);
		last = b->ev_end[i] < 0 ? nev : (uint32_t)b->ev_end[i];
		b->area[i] = pcs_area(b->size[i], first, last);
		for (uint32_t s = first; s <= last; s++)
			b->sec_first[s + 1]++;
		b->d_unk[first] += (int64_t)pb->size[ids[i]];
		b->d_unk[last + 1] -= (int64_t)pb->size[ids[i]];
		live += last - first + 1;
		for (int k = 0; k < 2; k++) {
			int32_t e = k ? b->ev_end[i] : b->ev_start[i];

			if (e < 0)
				continue;
			b->ev_first[e + 1]++;
			b->nunk[e]++;
			if (pb->size[ids[i]] > b->ev_largest[e])
				b->ev_largest[e] = pb->size[ids[i]];
			if (k) {
				b->neg[e] -= (int64_t)pb->size[ids[i]];
				b->ending[e] += pb->size[ids[i]];
			} else {
				b->pos[e] += (int64_t)pb->size[ids[i]];
				b->starting[e] += pb->size[ids[i]];
			}
		}
	}
	for (uint32_t s = 0; s <= nev; s++) {
		b->sec_first[s + 1] += b->sec_first[s];
		b->ev_first[s + 1] += b->ev_first[s];
	}
	b->sec_item = malloc((live + 1) * sizeof(*b->sec_item));
	/* A skip grows by one buffer at least: no more changes than buffers in the lists. */
	b->skips = malloc((live + 1) * sizeof(*b->skips));
	if (!b->sec_item || !b->skips)
		return SKS_NOMEM;
	/*
	 * The lists filled from their starts, the queue (unused yet) as
	 * cursors, the buffers taken largest first (the trail as scratch).
	 */
	for (uint32_t i = 0; i < m; i++)
		b->trail[i] = i;
	qsort_r(b->trail, m, sizeof(*b->trail), pcs_cmp_larger, b);
	memcpy(b->queue, b->sec_first, (nev + 1) * sizeof(*b->queue));
	for (uint32_t k = 0; k < m; k++) {
		uint32_t i = b->trail[k], last = b->ev_end[i] < 0 ? nev : (uint32_t)b->ev_end[i];

		for (uint32_t s = (uint32_t)(b->ev_start[i] + 1); s <= last; s++)
			b->sec_item[b->queue[s]++] = i;
	}
	/* Starters first, then enders. */
	memcpy(b->queue, b->ev_first, (nev + 1) * sizeof(*b->queue));
	for (int k = 0; k < 2; k++) {
		for (uint32_t i = 0; i < m; i++) {
			int32_t e = k ? b->ev_end[i] : b->ev_start[i];

			if (e >= 0)
				b->ev_item[b->queue[e]++] = i;
		}
		if (!k)
			memcpy(b->ev_split, b->queue, (nev + 1) * sizeof(*b->ev_split));
	}
	return SKS_FOUND;
}

/*
 * The widths the strip of @b's slab can have, in (0, @width): in
 * every section a subset sum of the buffers live there. A search that
 * knows them fails early where the section rows' range of the width holds
 * none (pcs_width_snap()). Where few buffers meet in each section, as in
 * slabs crowded with short buffers, few widths are left: the strip of a
 * 1,201-buffer slab of guillotine 1,500 seed 13 (27 buffers a section on
 * average) has 4 widths of the 11,134 from its largest buffer live first
 * up, and is found in 10,590 nodes backwards in time; without them in
 * neither direction. Sections with more buffers allow nearly every width
 * and cost more: up to PCS_WIDTH_SECTIONS of at most PCS_WIDTH_SECTION_MAX
 * buffers, fewest first. Returns SKS_FOUND (b->widths NULL when the slab
 * is too wide for a bitset) or SKS_NOMEM.
 */
static int pcs_widths(struct pcs_band *b, uint64_t width)
{
	uint64_t unit = 0, *sums, work = 0;
	uint32_t done = 0;

	for (uint32_t i = 0; i < b->m; i++)
		unit = vnpu_plan_gcd(unit, b->size[i]);
	if (width / unit >= PCS_WIDTH_BITS_MAX)
		return SKS_FOUND;
	b->unit = unit;
	b->words = width / unit / 64 + 1;
	b->widths = malloc(2 * b->words * sizeof(*b->widths));
	if (!b->widths)
		return SKS_NOMEM;
	sums = b->widths + b->words;
	memset(b->widths, 0xff, b->words * sizeof(*b->widths));
	for (uint32_t live = 1; live <= PCS_WIDTH_SECTION_MAX && done < PCS_WIDTH_SECTIONS &&
	     work < PCS_WIDTH_WORK; live++)
		for (uint32_t s = 0; s <= b->nev && done < PCS_WIDTH_SECTIONS &&
		     work < PCS_WIDTH_WORK; s++) {
			if (b->sec_first[s + 1] - b->sec_first[s] != live)
				continue;
			work += (uint64_t)(live + 2) * b->words;
			done++;
			memset(sums, 0, b->words * sizeof(*sums));
			sums[0] = 1;
			for (uint32_t j = b->sec_first[s]; j < b->sec_first[s + 1]; j++)
				vnpu_plan_bits_add(sums, b->words, b->size[b->sec_item[j]] / unit);
			for (size_t j = 0; j < b->words; j++)
				b->widths[j] &= sums[j];
		}
	/* The strip is neither empty nor the whole slab. */
	for (uint64_t w = 0; w < b->words * 64; w++)
		if (!w || w * unit >= width)
			b->widths[w / 64] &= ~(1ull << (w % 64));
	return SKS_FOUND;
}

/*
 * The rows of the slab @ids (@m buffers, span [@t0, @t1), no time cut,
 * none live over the whole span), its largest buffer live first and its
 * widths, in *@out (to free with pcs_band_free() whatever the result,
 * when not NULL). They serve every run of the strip search
 * (pcs_band_search()).
 */
static int pcs_band_open(struct pcs *c, const uint32_t *ids, uint32_t m, uint64_t width,
			 uint32_t t0, uint32_t t1, struct pcs_band **out)
{
	const struct sks_problem *pb = c->pb;
	struct pcs_band *b = calloc(1, sizeof(*b));
	int r;

	*out = b;
	if (!b)
		return SKS_NOMEM;
	b->c = c;
	b->times = malloc(2 * m * sizeof(*b->times));
	if (!b->times)
		return SKS_NOMEM;
	r = pcs_band_init(b, ids, m, t0, t1, b->times);
	if (r != SKS_FOUND)
		return r;
	b->largest = UINT32_MAX;
	for (uint32_t i = 0; i < m; i++)
		if (pb->t0[ids[i]] == t0) {
			b->nfirst++;
			if (b->largest == UINT32_MAX || pb->size[ids[i]] > pb->size[ids[b->largest]])
				b->largest = i;
		}
	return pcs_widths(b, width);
}

/* @b from nothing but the decisions of @val, those of the buffers in @freed (if any) left out. */
static void pcs_reset(struct pcs_band *b, const int8_t *val, const uint8_t *freed)
{
	pcs_undo(b, 0);
	while (b->nq)
		b->queued[b->queue[--b->nq]] = 0;
	for (uint32_t i = 0; i < b->m; i++)
		if (val[i] >= 0 && (!freed || !freed[i]))
			pcs_set(b, i, val[i]);
}

/*
 * The committed set of @b failed in the window [c->fail_t0, c->fail_t1)
 * of its in side (pcs_split() returned PCS_RETRY, the out side not
 * planned): the buffers live within that window, on either side, are
 * searched again with choices at random, every other buffer kept on its
 * side (a strip's buffers live within its windows or cross none of its
 * cuts, so that window is all that changes). A set whose in side tiles is
 * planned whole; the PCS_REPAIR_TRIES-th set, or the last one when no
 * other is found, is planned whole as it is. Returns what pcs_split()
 * does.
 */
static int pcs_repair(struct pcs_band *b, uint64_t width, uint64_t base, uint32_t t0)
{
	struct pcs *c = b->c;
	const struct sks_problem *pb = c->pb;
	uint64_t count = c->count, limit = c->limit, rng = c->rng;
	int8_t *val = malloc(b->m);
	uint8_t *freed = malloc(b->m);
	int r = PCS_RETRY;

	for (uint32_t t = 1; r == PCS_RETRY && val && freed; t++) {
		memcpy(val, b->val, b->m);
		for (uint32_t i = 0; i < b->m; i++)
			freed[i] = pb->t0[b->ids[i]] >= c->fail_t0 &&
				   pb->t1[b->ids[i]] <= c->fail_t1;
		b->early = t < PCS_REPAIR_TRIES && !c->late;
		pcs_reset(b, val, freed);
		c->count = 0;
		c->limit = (uint64_t)PCS_COMMIT_NODES * b->m;
		c->rng = vnpu_plan_mix64(rng + t) | 1;
		r = pcs_propagate(b) ? pcs_dfs(b, width, base, t0) : SKS_INFEASIBLE;
		if (r == SKS_INFEASIBLE || r == SKS_TIMEOUT) {
			b->early = 0;
			pcs_reset(b, val, NULL);
			r = pcs_split(b, width, base, t0);
		}
	}
	c->count = count;
	c->limit = limit;
	c->rng = rng;
	b->early = 0;
	free(val);
	free(freed);
	/* Still PCS_RETRY: the scratch was not allocated. */
	return r == PCS_RETRY ? SKS_NOMEM : r;
}

/*
 * The strip of one buffer c0 of those live first (the largest, on a run
 * at random any of them), for each cut in time it may have; the first
 * choice whose two sides tile wins.
 * Every decision is taken back before it returns.
 */
static int pcs_band_search(struct pcs_band *b, uint64_t width, uint64_t base, uint32_t t0)
{
	struct pcs *c = b->c;
	const struct sks_problem *pb = c->pb;
	const uint32_t *ids = b->ids;
	uint32_t c0 = b->largest;
	int r = SKS_INFEASIBLE;

	/*
	 * Runs at random take the strip of any buffer live first: the
	 * largest one's strip may be the one crowded with near misses.
	 */
	if (c->rng) {
		uint32_t k = pcs_rand(c, b->nfirst);

		for (c0 = 0; pb->t0[ids[c0]] != t0 || k--; c0++)
			;
	}

	for (uint32_t e = 0; e < b->nev && r == SKS_INFEASIBLE; e++) {
		uint32_t cut = b->times[e];

		if (cut < pb->t1[ids[c0]])
			continue;
		/*
		 * The strip's buffers live just before its cut all end there
		 * and those just after it start there, each a total of its
		 * width, c0's size at least. Most boundaries fail this, and
		 * ruling them out by the rows (every crosser out, then
		 * propagation) cost up to a millisecond each on 6,000 buffers.
		 */
		if (b->ending[e] < pb->size[ids[c0]] || b->starting[e] < pb->size[ids[c0]])
			continue;
		r = pcs_tick(c);
		if (r != SKS_INFEASIBLE)
			break;
		pcs_undo(b, 0);
		pcs_set(b, c0, 1);
		for (uint32_t i = 0; i < b->m; i++)
			if (pb->t0[ids[i]] < cut && pb->t1[ids[i]] > cut)
				pcs_set(b, i, 0);
		b->early = c->commit && c->tiled && !c->late;
		r = pcs_propagate(b) ? pcs_dfs(b, width, base, t0) : SKS_INFEASIBLE;
		if (r == PCS_RETRY)
			r = pcs_repair(b, width, base, t0);
		b->early = 0;
		if (c->late && r == SKS_INFEASIBLE)
			r = SKS_TIMEOUT;
	}
	pcs_undo(b, 0);
	while (b->nq)
		b->queued[b->queue[--b->nq]] = 0;
	return r;
}

/* The strip search of one slab, as pcs_band_open() and pcs_band_search(). */
static int pcs_band(struct pcs *c, const uint32_t *ids, uint32_t m, uint64_t width,
		    uint64_t base, uint32_t t0, uint32_t t1)
{
	struct pcs_band *b;
	int r = pcs_band_open(c, ids, m, width, t0, t1, &b);

	if (r == SKS_FOUND)
		r = pcs_band_search(b, width, base, t0);
	if (b)
		pcs_band_free(b);
	return r;
}

static int pcs_cmp_first(const void *pa, const void *pb, void *arg)
{
	const uint32_t *t0 = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (t0[a] != t0[b])
		return t0[a] < t0[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * Tiles @ids (@m buffers, reordered) from @base up in exactly @width, their
 * live total in every section of their span. Returns SKS_FOUND,
 * SKS_INFEASIBLE (no guillotine plan), SKS_TIMEOUT or SKS_NOMEM.
 */
static int pcs_solve(struct pcs *c, uint32_t *ids, uint32_t m, uint64_t width,
		     uint64_t base)
{
	const struct sks_problem *pb = c->pb;
	uint32_t span[2], k, start, cut;
	uint64_t bottom;
	int r = pcs_tick(c);

	if (r != SKS_INFEASIBLE)
		return r;
	/* Buffers live over the whole span, at the bottom. */
	k = (uint32_t)vnpu_plan_span_bottom(pb, ids, m, base, c->off, span, &bottom);
	if (bottom > width)
		return SKS_INFEASIBLE;
	ids += k;
	m -= k;
	if (!m)
		return bottom == width ? SKS_FOUND : SKS_INFEASIBLE;
	qsort_r(ids, m, sizeof(*ids), pcs_cmp_first, (void *)pb->t0);
	for (start = 0; start < m; start = cut) {
		cut = (uint32_t)vnpu_plan_time_piece(pb, ids, start, m);
		if (!start && cut == m)
			return pcs_band(c, ids, m, width - bottom, base + bottom, span[0], span[1]);
		r = pcs_solve(c, ids + start, cut - start, width - bottom, base + bottom);
		if (r != SKS_FOUND)
			return r;
	}
	return SKS_FOUND;
}

int pcs_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline, uint64_t *off,
	    uint64_t *nodes)
{
	struct pcs c = { .pb = pb, .off = off, .deadline = deadline, .nodes = nodes };
	uint32_t *ids = NULL;
	uint64_t unit;
	int r = SKS_INFEASIBLE;

	/* Offsets are sums of sizes: aligned if every alignment divides them. */
	if (!pb->n || pb->n > UINT32_MAX || !vnpu_plan_perfect(pb, target, &unit))
		return SKS_INFEASIBLE;
	if (vnpu_plan_now() > deadline)
		return SKS_TIMEOUT;
	ids = malloc(pb->n * sizeof(*ids));
	if (!ids)
		return SKS_NOMEM;
	for (uint64_t run = 1;; run++) {
		for (size_t i = 0; i < pb->n; i++)
			ids[i] = (uint32_t)i;
		c.count = 0;
		c.limit = PCS_RESTART_NODES * vnpu_plan_luby(run);
		/* The first run breaks ties by the rules, later ones at random. */
		c.rng = run > 1 ? vnpu_plan_mix64(run) | 1 : 0;
		r = pcs_solve(&c, ids, (uint32_t)pb->n, target, 0);
		if (r != SKS_TIMEOUT || c.late || vnpu_plan_now() > deadline)
			break;
	}
	free(ids);
	return c.late && r == SKS_INFEASIBLE ? SKS_TIMEOUT : r;
}

/*
 * One strip of the slab @ids found (its first balanced set) and committed
 * to, on try @attempt: SKS_FOUND with c->height the plan's top, or
 * SKS_INFEASIBLE (none exists), SKS_TIMEOUT (none found within
 * PCS_COMMIT_NODES per buffer or the deadline) or SKS_NOMEM.
 */
static int pcs_commit_strip(struct pcs *c, const uint32_t *ids, uint32_t m, uint64_t width,
			    uint64_t base, const uint32_t span[2], uint32_t attempt)
{
	uint64_t spent = 0, most = (uint64_t)PCS_COMMIT_NODES * m;
	struct pcs_band *b;
	int r = pcs_band_open(c, ids, m, width, span[0], span[1], &b);

	if (r != SKS_FOUND) {
		if (b)
			pcs_band_free(b);
		return r;
	}
	r = SKS_TIMEOUT;
	for (uint64_t run = 1; spent < most && !c->late; run++) {
		c->count = 0;
		c->limit = PCS_RESTART_NODES * vnpu_plan_luby(run);
		if (c->limit > most - spent)
			c->limit = most - spent;
		/*
		 * The first run of the first try of the first two passes by the
		 * rules, the others at random.
		 */
		c->rng = run > 1 || attempt || c->salt ?
			 vnpu_plan_mix64(run + ((uint64_t)attempt << 32) +
					 ((uint64_t)c->salt << 48)) | 1 : 0;
		r = pcs_band_search(b, width, base, span[0]);
		spent += c->count;
		if (r != SKS_TIMEOUT)
			break;
	}
	pcs_band_free(b);
	return r;
}

int pcs_probe(const struct sks_problem *pb, const uint32_t *ids, uint32_t m, uint64_t width,
	      uint32_t c0, uint64_t limit, uint8_t *in, uint64_t *nodes)
{
	struct pcs c = { .pb = pb, .deadline = UINT64_MAX, .nodes = nodes, .limit = limit,
			 .probe = in };
	uint32_t span[2] = { UINT32_MAX, 0 };
	struct pcs_band *b;
	int r;

	for (uint32_t i = 0; i < m; i++) {
		span[0] = pb->t0[ids[i]] < span[0] ? pb->t0[ids[i]] : span[0];
		span[1] = pb->t1[ids[i]] > span[1] ? pb->t1[ids[i]] : span[1];
	}
	if (c0 >= m || pb->t0[ids[c0]] != span[0] || pb->t1[ids[c0]] == span[1])
		return SKS_INFEASIBLE;
	r = pcs_band_open(&c, ids, m, width, span[0], span[1], &b);
	if (r == SKS_FOUND) {
		b->largest = c0;
		r = pcs_band_search(b, width, 0, span[0]);
	}
	if (b)
		pcs_band_free(b);
	return r;
}

/* A slab's buffers, their ids summed through a mix: the same for the same set in any order. */
static uint64_t pcs_set_key(const uint32_t *ids, uint32_t m, uint64_t width)
{
	uint64_t key = vnpu_plan_mix64(width) + m;

	for (uint32_t i = 0; i < m; i++)
		key += vnpu_plan_mix64(ids[i] + 1ull);
	return key;
}

/*
 * The slot of the slab @ids (@m buffers, @width, pcs_set_key() @key) in
 * @t, or the empty slot where it would go. *@sorted: whether t->sorted
 * already holds @ids sorted (it is sorted when a slot's key matches).
 */
static struct pcs_tiled *pcs_tiled_slot(struct pcs_table *t, const uint32_t *ids, uint32_t m,
					uint64_t width, uint64_t key, int *sorted)
{
	for (uint32_t h = (uint32_t)key;; h++) {
		struct pcs_tiled *e = &t->slot[h & (PCS_TILED_SLOTS - 1)];

		if (!e->ids)
			return e;
		if (e->key != key || e->width != width || e->m != m)
			continue;
		if (!*sorted) {
			memcpy(t->sorted, ids, m * sizeof(*ids));
			qsort(t->sorted, m, sizeof(*ids), pcs_cmp_u32);
			*sorted = 1;
		}
		if (!memcmp(e->ids, t->sorted, m * sizeof(*ids)))
			return e;
	}
}

/* Lays out the slab @ids from @base as it was tiled before: 1, or 0 when it was not. */
static int pcs_tiled_get(struct pcs *c, const uint32_t *ids, uint32_t m, uint64_t width,
			 uint64_t base)
{
	const struct pcs_tiled *e;
	int sorted = 0;

	if (!c->tiled || m < PCS_TILED_MIN)
		return 0;
	e = pcs_tiled_slot(c->tiled, ids, m, width, pcs_set_key(ids, m, width), &sorted);
	if (!e->ids)
		return 0;
	for (uint32_t i = 0; i < m; i++)
		c->off[e->ids[i]] = base + e->rel[i];
	return 1;
}

/* Keeps the slab @ids, just tiled from @base, while the table has room. */
static void pcs_tiled_put(struct pcs *c, const uint32_t *ids, uint32_t m, uint64_t width,
			  uint64_t base)
{
	struct pcs_table *t = c->tiled;
	struct pcs_tiled *e;
	uint64_t key;
	int sorted = 0;

	if (!t || m < PCS_TILED_MIN || t->used >= PCS_TILED_SLOTS / 2 || t->stored + m > t->most)
		return;
	key = pcs_set_key(ids, m, width);
	e = pcs_tiled_slot(t, ids, m, width, key, &sorted);
	if (e->ids)
		return;
	if (!sorted) {
		memcpy(t->sorted, ids, m * sizeof(*ids));
		qsort(t->sorted, m, sizeof(*ids), pcs_cmp_u32);
	}
	e->rel = malloc(m * sizeof(*e->rel));
	e->ids = e->rel ? malloc(m * sizeof(*e->ids)) : NULL;
	if (!e->ids) {
		/* Out of memory: the slab is not kept, nothing else changes. */
		free(e->rel);
		e->rel = NULL;
		return;
	}
	memcpy(e->ids, t->sorted, m * sizeof(*ids));
	for (uint32_t i = 0; i < m; i++)
		e->rel[i] = c->off[e->ids[i]] - base;
	e->key = key;
	e->width = width;
	e->m = m;
	t->used++;
	t->stored += m;
}

static void pcs_table_free(struct pcs_table *t)
{
	for (uint32_t i = 0; t->slot && i < PCS_TILED_SLOTS; i++) {
		free(t->slot[i].ids);
		free(t->slot[i].rel);
	}
	free(t->slot);
	free(t->sorted);
}

/* A time piece of a slab: its buffers ids[start, end) in order of first section. */
struct pcs_piece {
	uint32_t start, end;
};

static int pcs_cmp_piece(const void *pa, const void *pb)
{
	const struct pcs_piece *a = pa, *b = pb;
	uint32_t x = a->end - a->start, y = b->end - b->start;

	if (x != y)
		return x < y ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/*
 * Plans the time pieces of @ids (@m buffers in order of first section,
 * with a cut in time) each in @width from @base, *@top the highest.
 * With @fail_fast the smallest go first and the first one planned above
 * @width before the deadline stops it: PCS_RETRY, its span in c->fail_t0,
 * c->fail_t1 (the pieces after it not planned).
 */
static int pcs_commit_pieces(struct pcs *c, uint32_t *ids, uint32_t m, uint64_t width,
			     uint64_t base, int fail_fast, uint64_t *top)
{
	const struct sks_problem *pb = c->pb;
	struct pcs_piece *piece = malloc(m * sizeof(*piece));
	uint32_t count = 0;
	int r = SKS_FOUND;

	*top = 0;
	if (!piece)
		return SKS_NOMEM;
	for (uint32_t start = 0, end; start < m; start = end) {
		end = (uint32_t)vnpu_plan_time_piece(pb, ids, start, m);
		piece[count++] = (struct pcs_piece){ start, end };
	}
	if (fail_fast)
		qsort(piece, count, sizeof(*piece), pcs_cmp_piece);
	for (uint32_t p = 0; p < count && r == SKS_FOUND; p++) {
		uint32_t *at = ids + piece[p].start, n = piece[p].end - piece[p].start;
		uint64_t h = 0;

		r = pcs_commit(c, at, n, width, base, &h);
		if (h > *top)
			*top = h;
		/* Past the deadline every piece is planned: the slab is not searched again. */
		if (fail_fast && r == SKS_FOUND && h > width && !c->late) {
			c->fail_t0 = UINT32_MAX;
			c->fail_t1 = 0;
			for (uint32_t i = 0; i < n; i++) {
				c->fail_t0 = pb->t0[at[i]] < c->fail_t0 ? pb->t0[at[i]] : c->fail_t0;
				c->fail_t1 = pb->t1[at[i]] > c->fail_t1 ? pb->t1[at[i]] : c->fail_t1;
			}
			r = PCS_RETRY;
		}
	}
	free(piece);
	return r;
}

/*
 * Plans @ids (@m buffers, reordered) from @base up, their live total @width
 * in every section of their span, as pcs_solve() does, but taking the
 * first balanced set found for a strip instead of searching on when the
 * two sides fail to tile: a wrong set costs what its sides' plans lose,
 * not the search. A slab whose strip is not found is planned by
 * vnpu_plan_leaf() on a share of the time left, unless it is the whole
 * instance. *@height is the plan's top above @base, @width when it is
 * perfect. Returns SKS_FOUND, SKS_INFEASIBLE (no strip found for the
 * whole instance, which has neither cut in time nor a buffer under it
 * all: the offsets untouched) or SKS_NOMEM; with @fail_fast (the in side
 * of a set a strip search commits to) also PCS_RETRY, as
 * pcs_commit_pieces().
 */
static int pcs_commit_plan(struct pcs *c, uint32_t *ids, uint32_t m, uint64_t width,
			   uint64_t base, int fail_fast, uint64_t *height)
{
	const struct sks_problem *pb = c->pb;
	uint64_t bottom, top = UINT64_MAX, *kept, begin;
	uint32_t span[2], k;
	int r = SKS_FOUND;

	k = (uint32_t)vnpu_plan_span_bottom(pb, ids, m, base, c->off, span, &bottom);
	ids += k;
	m -= k;
	*height = bottom;
	if (!m)
		return SKS_FOUND;
	width = width > bottom ? width - bottom : 0;
	base += bottom;
	qsort_r(ids, m, sizeof(*ids), pcs_cmp_first, (void *)pb->t0);
	if (vnpu_plan_time_piece(pb, ids, 0, m) < m) {
		r = pcs_commit_pieces(c, ids, m, width, base, fail_fast, &top);
		*height = bottom + top;
		return r;
	}
	kept = malloc(m * sizeof(*kept));
	if (!kept)
		return SKS_NOMEM;
	begin = vnpu_plan_now();
	/* Another try only while the plan is above the width and time is left. */
	for (uint32_t attempt = 0; attempt < PCS_COMMIT_TRIES && top > width; attempt++) {
		uint64_t h, now = vnpu_plan_now();

		/* Tries after the first within the slab's share of the stage's time. */
		if (attempt && (now > c->deadline ||
				now - begin > (c->deadline - c->begin) / pb->n * m))
			break;
		r = c->late ? SKS_TIMEOUT : pcs_commit_strip(c, ids, m, width, base, span, attempt);
		/*
		 * The whole instance is not planned as a leaf: the caller's
		 * searches see it anyway. Another try, while time is left.
		 */
		if (r != SKS_FOUND && r != SKS_NOMEM && m == pb->n) {
			if (r == SKS_TIMEOUT && !c->late)
				continue;
			break;
		}
		if (r == SKS_FOUND) {
			h = c->height;
		} else if (r != SKS_NOMEM) {
			/* A share of the time left in proportion to the buffers. */
			uint64_t ms = now < c->deadline ? (c->deadline - now) / 1000000u : 0;
			int none = r == SKS_INFEASIBLE;

			/* No deadline (UINT64_MAX): the product must not wrap. */
			ms = (ms < UINT32_MAX ? ms : UINT32_MAX) * m / pb->n;
			r = vnpu_plan_leaf(pb, ids, m, base, (unsigned int)ms, c->sub, c->off, c->nodes,
					   &h);
			/* No strip exists: another try would find none either. */
			if (none)
				attempt = PCS_COMMIT_TRIES;
		}
		if (r == SKS_NOMEM)
			break;
		if (h < top) {
			top = h;
			for (uint32_t i = 0; i < m; i++)
				kept[i] = c->off[ids[i]];
		}
	}
	if (r != SKS_NOMEM && top == UINT64_MAX) {
		/* Nothing split, no strip found: the offsets untouched. */
		r = SKS_INFEASIBLE;
	} else if (r != SKS_NOMEM) {
		for (uint32_t i = 0; i < m; i++)
			c->off[ids[i]] = kept[i];
		r = SKS_FOUND;
	}
	free(kept);
	*height = bottom + top;
	return r;
}

/*
 * pcs_commit_plan(), but a slab tiled before is laid out from c->tiled and
 * one tiled now is kept there; c->fail_fast holds for this call only.
 */
static int pcs_commit(struct pcs *c, uint32_t *ids, uint32_t m, uint64_t width,
		      uint64_t base, uint64_t *height)
{
	int fail_fast = c->fail_fast, r;

	c->fail_fast = 0;
	(*c->nodes)++;
	if (pcs_tiled_get(c, ids, m, width, base)) {
		*height = width;
		return SKS_FOUND;
	}
	r = pcs_commit_plan(c, ids, m, width, base, fail_fast, height);
	if (r == SKS_FOUND && *height == width)
		pcs_tiled_put(c, ids, m, width, base);
	return r;
}

/*
 * @pb run backwards in time. Plans of it are plans of @pb (the same
 * buffers overlap), but the searches for a strip, from the buffers live
 * first and cut by cut from their ends, meet other buffers and other near
 * misses: either direction may tile where the other does not.
 */
struct pcs_back {
	struct sks_problem pb;
	uint32_t *t0, *t1;
	uint64_t *total;
};

static void pcs_back_free(struct pcs_back *back)
{
	free(back->t0);
	free(back->t1);
	free(back->total);
}

static int pcs_back_init(const struct sks_problem *pb, struct pcs_back *back)
{
	back->pb = *pb;
	back->t0 = malloc(pb->n * sizeof(*back->t0));
	back->t1 = malloc(pb->n * sizeof(*back->t1));
	back->total = malloc(pb->nsec * sizeof(*back->total));
	if (!back->t0 || !back->t1 || !back->total) {
		pcs_back_free(back);
		return SKS_NOMEM;
	}
	for (size_t i = 0; i < pb->n; i++) {
		back->t0[i] = pb->nsec - pb->t1[i];
		back->t1[i] = pb->nsec - pb->t0[i];
	}
	for (uint32_t s = 0; s < pb->nsec; s++)
		back->total[s] = pb->sec_total[pb->nsec - 1 - s];
	back->pb.t0 = back->t0;
	back->pb.t1 = back->t1;
	back->pb.sec_total = back->total;
	return SKS_FOUND;
}

int pcs_commit_run(const struct sks_problem *pb, uint64_t target, uint64_t deadline,
		   uint64_t *off, uint64_t *nodes)
{
	struct pcs c = { .nodes = nodes, .commit = 1 };
	struct pcs_table tiled = { .most = (uint64_t)PCS_TILED_STORE * pb->n };
	uint32_t passes = pb->n <= PCS_COMMIT_AGAIN_MAX ? PCS_COMMIT_PASSES : 2;
	struct pcs_back back;
	uint32_t *ids;
	uint64_t unit, height, low = UINT64_MAX, *kept;
	int r = SKS_NOMEM;

	if (!pb->n || pb->n > UINT32_MAX || !vnpu_plan_perfect(pb, target, &unit))
		return SKS_INFEASIBLE;
	if (vnpu_plan_now() > deadline)
		return SKS_TIMEOUT;
	ids = malloc(pb->n * sizeof(*ids));
	c.sub = malloc(pb->n * sizeof(*c.sub));
	c.off = malloc(pb->n * sizeof(*c.off));
	kept = malloc(pb->n * sizeof(*kept));
	/*
	 * Repairs and their table up to PCS_COMMIT_AGAIN_MAX buffers, where
	 * the passes have time for them; without the table's memory the
	 * passes run without either.
	 */
	if (pb->n <= PCS_COMMIT_AGAIN_MAX) {
		tiled.slot = calloc(PCS_TILED_SLOTS, sizeof(*tiled.slot));
		tiled.sorted = malloc(pb->n * sizeof(*tiled.sorted));
	}
	c.tiled = tiled.slot && tiled.sorted ? &tiled : NULL;
	if (!ids || !c.sub || !c.off || !kept || pcs_back_init(pb, &back) != SKS_FOUND)
		goto out;
	/* The deadline may pass before the first pass starts: that is a timeout. */
	r = SKS_TIMEOUT;
	/* Forwards in time, then backwards (struct pcs_back), and again. */
	for (uint32_t pass = 0; pass < passes && low > target; pass++) {
		c.begin = vnpu_plan_now();
		if (c.begin > deadline)
			break;
		c.pb = pass & 1 ? &back.pb : pb;
		c.salt = pass / 2;
		c.deadline = c.begin + (deadline - c.begin) / (passes - pass);
		c.late = 0;
		for (size_t i = 0; i < pb->n; i++)
			ids[i] = (uint32_t)i;
		memcpy(c.off, off, pb->n * sizeof(*off));
		r = pcs_commit(&c, ids, (uint32_t)pb->n, target, 0, &height);
		if (r == SKS_NOMEM)
			break;
		if (r == SKS_FOUND && height < low) {
			low = height;
			memcpy(kept, c.off, pb->n * sizeof(*kept));
		}
	}
	pcs_back_free(&back);
	if (low < UINT64_MAX) {
		memcpy(off, kept, pb->n * sizeof(*off));
		r = SKS_FOUND;
	}
out:
	free(ids);
	free(c.sub);
	free(c.off);
	free(kept);
	pcs_table_free(&tiled);
	return r;
}
