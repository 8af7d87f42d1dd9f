// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: host unit tests of the caching pool's bookkeeping
 * (libruntime/mm/pool_core.c) with a fake segment provider: size classes and
 * rounding, splitting and merging inside segments (never across), reuse,
 * stream fences, release threshold, trim, OOM retry, oversize blocks,
 * configuration strings, the JSON snapshot, bad frees, and a randomized
 * run checked against the invariants.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "pool_core.h"

#define MIB (1ULL << 20)
#define MAX_SEGS 4096

/* Segments are handed out back to back, so a merge across two would show. */
struct fake {
	uint64_t capacity;
	uint64_t used;
	uint64_t next_base;
	uint64_t base[MAX_SEGS];
	uint64_t size[MAX_SEGS];
	int live;
	int allocs, frees;
	int stream_refs;
	int waits;
};

struct fake_stream {
	uint64_t done;
};

static int fake_alloc(void *arg, uint64_t size, uint64_t *base)
{
	struct fake *f = arg;

	if (f->used + size > f->capacity || f->live == MAX_SEGS)
		return VNPU_ERROR_OUT_OF_DEVICE_MEMORY;
	f->base[f->live] = f->next_base;
	f->size[f->live] = size;
	f->live++;
	*base = f->next_base;
	f->next_base += size;
	f->used += size;
	f->allocs++;
	return VNPU_SUCCESS;
}

static void fake_free(void *arg, uint64_t base, uint64_t size)
{
	struct fake *f = arg;

	for (int i = 0; i < f->live; i++) {
		if (f->base[i] == base) {
			if (f->size[i] != size)
				abort();
			f->base[i] = f->base[f->live - 1];
			f->size[i] = f->size[f->live - 1];
			f->live--;
			f->used -= size;
			f->frees++;
			return;
		}
	}
	abort();	/* freeing a segment never handed out */
}

static int fake_done(void *arg, void *stream, uint64_t point)
{
	(void)arg;
	return ((struct fake_stream *)stream)->done >= point;
}

static void fake_wait(void *arg, void *stream, uint64_t point)
{
	struct fake *f = arg;

	((struct fake_stream *)stream)->done = point;
	f->waits++;
}

static void fake_get(void *arg, void *stream)
{
	(void)stream;
	((struct fake *)arg)->stream_refs++;
}

static void fake_put(void *arg, void *stream)
{
	(void)stream;
	((struct fake *)arg)->stream_refs--;
}

static void setup_pool(struct pc_pool *p, struct fake *f, uint64_t capacity,
		       const struct pc_config *cfg)
{
	struct pc_provider prov = {
		.seg_alloc = fake_alloc, .seg_free = fake_free, .fence_done = fake_done,
		.fence_wait = fake_wait, .stream_get = fake_get, .stream_put = fake_put,
		.arg = f,
	};
	struct pc_config def;

	memset(f, 0, sizeof(*f));
	f->capacity = capacity;
	f->next_base = 1ULL << 32;
	pc_config_default(&def);
	if (pc_init(p, cfg ? cfg : &def, &prov) != VNPU_SUCCESS)
		abort();
}

/*
 * Every segment is tiled by its blocks in address order, no two free
 * neighbours without conflicting fences stay apart (unless one is held
 * whole in a quick list), the quick lists hold exactly the quick-free
 * blocks, the counters add up.
 * Returns a description of the first violation, or NULL.
 */
static const char *check_invariants(struct pc_pool *p, struct fake *f)
{
	uint64_t reserved = 0, allocated = 0, active = 0;
	uint64_t segs = 0, quick_bytes = 0, quick_blocks = 0, listed = 0, listed_bytes = 0;

	for (struct pc_segment *seg = p->segments; seg; seg = seg->next) {
		uint64_t at = seg->base;

		segs++;
		reserved += seg->size;
		for (struct pc_block *b = seg->first; b; b = b->next) {
			if (b->addr != at || b->seg != seg)
				return "blocks do not tile the segment";
			if (b->size % PC_ROUND || !b->size)
				return "block size not a multiple of 512";
			if (b->next && b->next->prev != b)
				return "broken neighbour links";
			if (!b->free) {
				allocated += b->size;
				active++;
				if (pc_find(p, b->addr) != b)
					return "allocated block missing from the hash";
			} else if (b->bin == PC_BIN_QUICK) {
				if (seg->kind != PC_SMALL)
					return "large block in a quick list";
				quick_bytes += b->size;
				quick_blocks++;
			} else if (b->next && b->next->free && b->next->bin != PC_BIN_QUICK &&
				   b->fence_stream == b->next->fence_stream) {
				return "two mergeable free neighbours";
			}
			at += b->size;
		}
		if (at != seg->base + seg->size)
			return "blocks do not reach the segment end";
	}
	for (int bin = 0; bin < PC_NUM_BINS; bin++) {
		uint64_t n = 0;

		for (struct pc_block *b = p->quick[bin]; b; b = b->lnext) {
			if (!b->free || b->bin != PC_BIN_QUICK || pc_find(p, b->addr))
				return "quick list holds a block that is not quick-free";
			listed_bytes += b->size;
			n++;
		}
		if (n != p->quick_count[bin] || n > PC_QUICK_DEPTH)
			return "quick list count wrong";
		listed += n;
	}
	if (listed != quick_blocks || listed_bytes != quick_bytes ||
	    quick_bytes != p->quick_bytes || quick_bytes > PC_QUICK_BYTES)
		return "quick lists disagree with the blocks";
	if (reserved != p->c.reserved || allocated != p->c.allocated ||
	    active != p->c.active_blocks || segs != p->c.num_segments)
		return "counters disagree with the blocks";
	if (f && (uint64_t)f->live != segs)
		return "provider and pool disagree on segments";
	return NULL;
}

TEST(rounding_and_size_classes)
{
	struct pc_pool p;
	struct fake f;
	uint64_t a, b, c;

	EXPECT_EQ(512, pc_round_size(1));
	EXPECT_EQ(512, pc_round_size(512));
	EXPECT_EQ(1024, pc_round_size(513));
	EXPECT_EQ(0, pc_round_size(0));
	EXPECT_EQ(0, pc_round_size(UINT64_MAX));

	setup_pool(&p, &f, 1ULL << 40, NULL);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 100, NULL, &a));
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 1000, NULL, &b));
	/* Both small: one 2 MiB segment, packed back to back. */
	EXPECT_EQ(1, f.allocs);
	EXPECT_EQ(2 * MIB, f.size[0]);
	EXPECT_EQ(a + 512, b);
	EXPECT_EQ(512 + 1024, p.c.allocated);
	EXPECT_EQ(1100, p.c.requested);
	/* Large: a 20 MiB segment of its own kind. */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 3 * MIB, NULL, &c));
	EXPECT_EQ(2, f.allocs);
	EXPECT_EQ(20 * MIB, p.c.reserved - 2 * MIB);
	/* Huge: its size rounded to 2 MiB. */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 33 * MIB, NULL, &c));
	EXPECT_EQ(34 * MIB, f.size[2]);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, pc_alloc(&p, 0, NULL, &a));
	pc_destroy(&p);
	EXPECT_EQ(0, f.live);
}

TEST(split_merge_and_reuse)
{
	struct pc_pool p;
	struct fake f;
	struct pc_usage u;
	uint64_t a, b, c, d;

	setup_pool(&p, &f, 1ULL << 40, NULL);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 4096, NULL, &a));
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 4096, NULL, &b));
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 4096, NULL, &c));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, b, NULL, 0));
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	/* The hole is reused for the same size: best fit. */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 4000, NULL, &d));
	EXPECT_EQ(b, d);
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, d, NULL, 0));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a, NULL, 0));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, c, NULL, 0));
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	/* The last frees sit whole in the quick list; stats merge them. */
	EXPECT_NE(0, p.quick_bytes);
	pc_usage(&p, &u);
	EXPECT_EQ(0, p.quick_bytes);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	/* Everything merged back into one block the size of the segment. */
	EXPECT_EQ(NULL, p.segments->first->next);
	EXPECT_EQ(2 * MIB, p.segments->first->size);
	EXPECT_EQ(0, p.c.allocated);
	EXPECT_EQ(4, p.c.num_allocs);
	EXPECT_EQ(4, p.c.num_frees);
	EXPECT_EQ(1, f.allocs);
	EXPECT_EQ(3, p.c.cache_hits);
	pc_destroy(&p);
}

TEST(blocks_never_span_segments)
{
	struct pc_pool p;
	struct fake f;
	struct pc_usage u;
	uint64_t a[8];

	setup_pool(&p, &f, 1ULL << 40, NULL);
	/* 1 MiB blocks: two per 2 MiB segment, segments back to back. */
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, MIB, NULL, &a[i]));
	EXPECT_EQ(4, f.allocs);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a[i], NULL, 0));
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	pc_usage(&p, &u);	/* merges the quick lists */
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	for (struct pc_segment *s = p.segments; s; s = s->next)
		EXPECT_EQ(s->size, s->first->size);
	/* 1.5 MiB does not fit a small segment; never two merged. */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, MIB + MIB / 2, NULL, &a[0]));
	EXPECT_EQ(5, f.allocs);
	pc_destroy(&p);
}

TEST(double_and_bad_frees_change_nothing)
{
	struct pc_pool p;
	struct fake f;
	struct pc_counters before;
	uint64_t a, b;

	setup_pool(&p, &f, 1ULL << 40, NULL);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 8192, NULL, &a));
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 8192, NULL, &b));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a, NULL, 0));
	before = p.c;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, pc_free(&p, a, NULL, 0));	/* double */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, pc_free(&p, b + 512, NULL, 0));	/* inside */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, pc_free(&p, 12345, NULL, 0));	/* unknown */
	EXPECT_EQ(before.allocated, p.c.allocated);
	EXPECT_EQ(before.num_frees, p.c.num_frees);
	EXPECT_EQ(3, p.c.bad_frees);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, b, NULL, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, pc_free(&p, b, NULL, 0));
	pc_destroy(&p);
}

TEST(stream_ordered_reuse)
{
	struct fake_stream sa = { 0 }, sb = { 0 };
	struct pc_pool p;
	struct fake f;
	uint64_t a, x, y;

	setup_pool(&p, &f, 1ULL << 40, NULL);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 2 * MIB, &sa, &a));
	EXPECT_EQ(1, f.stream_refs);	/* its allocating stream */
	/* Freed on A while A's work up to point 7 may still use it. */
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a, &sa, 7));
	EXPECT_EQ(1, f.stream_refs);	/* now the fence's */
	/* B (or no stream) must not get it: a new segment instead. */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 2 * MIB, &sb, &x));
	EXPECT_NE(a, x);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 2 * MIB, NULL, &y));
	EXPECT_NE(a, y);
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, x, NULL, 0));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, y, NULL, 0));
	/* A itself reuses it at once: stream order. */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 2 * MIB, &sa, &x));
	EXPECT_EQ(a, x);
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, x, &sa, 9));
	/* Once A reached point 9, B may have it. */
	sa.done = 8;
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 2 * MIB, &sb, &y));
	EXPECT_NE(a, y);
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, y, NULL, 0));
	sa.done = 9;
	/* Every segment free and usable by B: B takes them all, A's included. */
	x = 0;
	for (int i = 0; i < 30; i++) {
		ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 2 * MIB, &sb, &y));
		if (y == a)
			x = y;
	}
	EXPECT_EQ(a, x);
	EXPECT_EQ(3, f.allocs);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	pc_destroy(&p);
	EXPECT_EQ(0, f.stream_refs);
}

/*
 * pc_alloc_ref() keeps the caller's reference on the stream for the block,
 * or drops it when the block already has one (a fence of that stream) and
 * when the allocation fails: the count of references is that of the
 * blocks naming the stream, whatever happened.
 */
TEST(alloc_ref_keeps_or_drops_the_given_reference)
{
	struct fake_stream sa = { 0 };
	struct pc_pool p;
	struct fake f;
	uint64_t x, y;

	setup_pool(&p, &f, 4 * MIB, NULL);
	f.stream_refs++;	/* the caller's */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc_ref(&p, 4096, &sa, &x));
	EXPECT_EQ(1, f.stream_refs);	/* kept by the block, none taken */
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, x, &sa, 3));
	EXPECT_EQ(1, f.stream_refs);	/* the fence's */
	f.stream_refs++;
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc_ref(&p, 4096, &sa, &y));
	EXPECT_EQ(x, y);		/* the fenced block, at once */
	EXPECT_EQ(1, f.stream_refs);	/* the fence's became the block's; the given one dropped */
	f.stream_refs++;
	EXPECT_EQ(VNPU_ERROR_OUT_OF_DEVICE_MEMORY, pc_alloc_ref(&p, 64 * MIB, &sa, &x));
	EXPECT_EQ(1, f.stream_refs);	/* dropped on failure */
	EXPECT_EQ(VNPU_SUCCESS, pc_alloc_ref(&p, 4096, NULL, &x));
	EXPECT_EQ(1, f.stream_refs);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	pc_destroy(&p);
	EXPECT_EQ(0, f.stream_refs);
}

TEST(quick_lists_reuse_whole_blocks)
{
	struct fake_stream sa = { 0 }, sb = { 0 };
	struct pc_pool p;
	struct fake f;
	uint64_t a[6], x, big, hits;

	setup_pool(&p, &f, 1ULL << 40, NULL);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 4096, NULL, &a[0]));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a[0], NULL, 0));
	EXPECT_EQ(4096, p.quick_bytes);
	/* The same size again: that very block, from the quick list. */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 4000, NULL, &x));
	EXPECT_EQ(a[0], x);
	EXPECT_EQ(1, p.c.quick_hits);
	EXPECT_EQ(0, p.quick_bytes);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	/* A double free of a quick-listed block changes nothing. */
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, x, NULL, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, pc_free(&p, x, NULL, 0));
	EXPECT_EQ(1, p.c.bad_frees);
	EXPECT_EQ(4096, p.quick_bytes);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	/* At most PC_QUICK_DEPTH per size: the others go to the bins. */
	for (int i = 0; i < 6; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 4096, NULL, &a[i]));
	for (int i = 0; i < 6; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a[i], NULL, 0));
	EXPECT_EQ(PC_QUICK_DEPTH * 4096, p.quick_bytes);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	/*
	 * A block freed behind a fence keeps it in the quick list: its own
	 * stream takes it back at once (stream order); another stream, or
	 * none, does not get it before the fence is done.
	 */
	pc_usage(&p, &(struct pc_usage){ 0 });
	hits = p.c.quick_hits;
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 8192, &sa, &x));
	EXPECT_EQ(1, f.stream_refs);
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, x, &sa, 5));
	EXPECT_EQ(8192, p.quick_bytes);
	EXPECT_EQ(1, f.stream_refs);	/* the allocation's reference, now the fence's */
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 8192, &sb, &a[0]));
	EXPECT_NE(x, a[0]);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 8192, NULL, &a[2]));
	EXPECT_NE(x, a[2]);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 8192, &sa, &a[1]));
	EXPECT_EQ(x, a[1]);	/* A itself: at once, from the quick list */
	EXPECT_EQ(hits + 1, p.c.quick_hits);
	EXPECT_EQ(2, f.stream_refs);	/* a[0] on B, a[1] on A (the fence's) */
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	/*
	 * Once its fence is done, the block is anyone's, still whole: a poll
	 * clears the fence, and so does another stream's allocation of the
	 * size that finds the quick list passing over it.
	 */
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a[1], &sa, 6));
	sa.done = 5;
	pc_poll_fences(&p);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 8192, &sb, &a[3]));
	EXPECT_NE(x, a[3]);
	EXPECT_EQ(8192, p.quick_bytes);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	sa.done = 6;
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 8192, &sb, &a[1]));
	EXPECT_EQ(x, a[1]);
	EXPECT_EQ(hits + 2, p.c.quick_hits);
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a[1], &sa, 7));
	sa.done = 7;
	pc_poll_fences(&p);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 8192, NULL, &a[1]));
	EXPECT_EQ(x, a[1]);
	EXPECT_EQ(hits + 3, p.c.quick_hits);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a[i], NULL, 0));
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	pc_destroy(&p);
	EXPECT_EQ(0, f.stream_refs);

	/*
	 * A size no quick list holds, needing the memory they keep apart:
	 * the lists are merged back instead of taking a new segment.
	 */
	setup_pool(&p, &f, 1ULL << 40, NULL);
	/* One small segment: 1 MiB, 1 MiB - 16 KiB, then four 4 KiB blocks. */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, MIB, NULL, &x));
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, MIB - PC_QUICK_DEPTH * 4096, NULL, &big));
	for (int i = 0; i < PC_QUICK_DEPTH; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 4096, NULL, &a[i]));
	EXPECT_EQ(1, f.allocs);
	for (int i = 0; i < PC_QUICK_DEPTH; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a[i], NULL, 0));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, big, NULL, 0));
	EXPECT_EQ(MIB, p.quick_bytes);	/* all whole, none merged */
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, MIB, NULL, &big));
	EXPECT_EQ(x + MIB, big);
	EXPECT_EQ(0, p.quick_bytes);
	EXPECT_EQ(1, f.allocs);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	pc_destroy(&p);
}

TEST(fences_of_two_streams_keep_blocks_apart)
{
	struct fake_stream sa = { 0 }, sb = { 0 };
	struct pc_pool p;
	struct fake f;
	struct pc_usage u;
	uint64_t a, b;

	setup_pool(&p, &f, 1ULL << 40, NULL);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, MIB, NULL, &a));
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, MIB, NULL, &b));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a, &sa, 1));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, b, &sb, 1));
	pc_usage(&p, &u);
	EXPECT_EQ(2, u.free_blocks);
	EXPECT_EQ(2, u.pending_blocks);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	sa.done = 1;
	sb.done = 1;
	pc_poll_fences(&p);
	pc_usage(&p, &u);
	EXPECT_EQ(1, u.free_blocks);
	EXPECT_EQ(0, u.pending_blocks);
	EXPECT_EQ(0, f.stream_refs);
	pc_destroy(&p);
}

TEST(release_threshold_and_trim)
{
	struct pc_pool p;
	struct fake f;
	uint64_t a[8];

	setup_pool(&p, &f, 1ULL << 40, NULL);
	/* 1 MiB blocks, two per small segment: four segments. */
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, MIB, NULL, &a[i]));
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a[i], NULL, 0));
	/* Default: everything stays cached. */
	EXPECT_EQ(8 * MIB, p.c.reserved);
	pc_trim(&p, 5 * MIB);
	EXPECT_EQ(4 * MIB, p.c.reserved);
	pc_trim(&p, 0);
	EXPECT_EQ(0, p.c.reserved);
	EXPECT_EQ(0, f.live);

	p.cfg.release_threshold = 2 * MIB;
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, MIB, NULL, &a[i]));
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a[i], NULL, 0));
	EXPECT_EQ(2 * MIB, p.c.reserved);
	EXPECT_EQ(7, p.c.num_segment_frees);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	pc_destroy(&p);
}

TEST(oom_releases_the_cache_and_retries_once)
{
	struct pc_pool p;
	struct fake f;
	uint64_t a[8], big;

	/* Room for 8 small segments. */
	setup_pool(&p, &f, 16 * MIB, NULL);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, MIB, NULL, &a[i]));
	EXPECT_EQ(4, f.live);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a[i], NULL, 0));
	/* A large request: the driver is full of cached small segments. */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 9 * MIB, NULL, &big));
	EXPECT_EQ(1, p.c.oom_retries);
	EXPECT_EQ(0, p.c.oom_failures);
	EXPECT_EQ(10 * MIB, p.c.reserved);
	/* Too big even with nothing cached: counted failure, nothing changed. */
	EXPECT_EQ(VNPU_ERROR_OUT_OF_DEVICE_MEMORY, pc_alloc(&p, 15 * MIB, NULL, &a[0]));
	EXPECT_EQ(2, p.c.oom_retries);
	EXPECT_EQ(1, p.c.oom_failures);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	pc_destroy(&p);
}

TEST(oom_waits_for_pending_frees)
{
	struct fake_stream sa = { 0 };
	struct pc_pool p;
	struct fake f;
	uint64_t a, b;

	setup_pool(&p, &f, 2 * MIB, NULL);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 2 * MIB, &sa, &a));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a, &sa, 3));
	/* Another user, device full: the pool waits for A's point 3. */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 2 * MIB, NULL, &b));
	EXPECT_EQ(a, b);
	EXPECT_EQ(1, f.waits);
	EXPECT_EQ(3, sa.done);
	EXPECT_EQ(1, p.c.oom_retries);
	EXPECT_EQ(1, p.c.fence_waits);
	pc_destroy(&p);
}

TEST(oversize_blocks_are_not_split)
{
	struct pc_config cfg;
	struct pc_pool p;
	struct fake f;
	uint64_t a, b, c;

	pc_config_default(&cfg);
	cfg.max_split_size = 4 * MIB;
	setup_pool(&p, &f, 1ULL << 40, &cfg);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 30 * MIB, NULL, &a));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a, NULL, 0));
	/* A request below max_split never takes the oversize block. */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 3 * MIB, NULL, &b));
	EXPECT_NE(a, b);
	EXPECT_EQ(2, f.allocs);
	/* An oversize one close in size does, whole. */
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 25 * MIB, NULL, &c));
	EXPECT_EQ(a, c);
	EXPECT_EQ(30 * MIB, pc_find(&p, c)->size);
	EXPECT_EQ(2, f.allocs);
	EXPECT_EQ(NULL, check_invariants(&p, &f));
	pc_destroy(&p);
}

TEST(config_strings)
{
	struct pc_config cfg, def;

	pc_config_default(&def);
	cfg = def;
	EXPECT_EQ(VNPU_SUCCESS, pc_config_parse("", &cfg));
	EXPECT_EQ(VNPU_SUCCESS,
		  pc_config_parse("max_split_mb=64,release_threshold_mb=256", &cfg));
	EXPECT_EQ(64 * MIB, cfg.max_split_size);
	EXPECT_EQ(256 * MIB, cfg.release_threshold);
	EXPECT_EQ(VNPU_SUCCESS, pc_config_parse("segment_mb=8,small_segment_kb=4096,"
						"release_threshold_mb=max", &cfg));
	EXPECT_EQ(8 * MIB, cfg.segment_size);
	EXPECT_EQ(4 * MIB, cfg.small_segment_size);
	EXPECT_EQ(UINT64_MAX, cfg.release_threshold);
	cfg = def;
	EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG, pc_config_parse("bogus=1", &cfg));
	EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG, pc_config_parse("max_split_mb", &cfg));
	EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG, pc_config_parse("max_split_mb=", &cfg));
	EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG, pc_config_parse("max_split_mb=12x", &cfg));
	EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG, pc_config_parse("max_split_mb=-1", &cfg));
	EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG, pc_config_parse("max_split_mb=0", &cfg));
	EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG,
		  pc_config_parse("segment_mb=99999999999999999999", &cfg));
	EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG, pc_config_parse("max_split_mb=64,,", &cfg));
	/* A rejected string leaves the configuration as it was. */
	EXPECT_EQ(0, memcmp(&def, &cfg, sizeof(cfg)));
}

TEST(snapshot_json)
{
	struct fake_stream sa = { 0 };
	struct pc_pool p;
	struct fake f;
	char small[16], *buf;
	size_t len;
	uint64_t a, b;

	setup_pool(&p, &f, 1ULL << 40, NULL);
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 1000, NULL, &a));
	ASSERT_EQ(VNPU_SUCCESS, pc_alloc(&p, 3000, NULL, &b));
	ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, a, &sa, 4));
	len = pc_snapshot_json(&p, NULL, 0);
	buf = malloc(len + 1);
	ASSERT_NE(NULL, buf);
	EXPECT_EQ(len, pc_snapshot_json(&p, buf, len + 1));
	EXPECT_EQ(len, strlen(buf));
	EXPECT_NE(NULL, strstr(buf, "\"reserved\":2097152"));
	EXPECT_NE(NULL, strstr(buf, "\"allocated\":3072"));
	EXPECT_NE(NULL, strstr(buf, "\"state\":\"pending\""));
	EXPECT_NE(NULL, strstr(buf, "\"fence_point\":4"));
	EXPECT_NE(NULL, strstr(buf, "\"requested\":3000"));
	EXPECT_NE(NULL, strstr(buf, "\"kind\":\"small\""));
	EXPECT_EQ('{', buf[0]);
	EXPECT_EQ('}', buf[len - 1]);
	/* Truncated output is still a NUL-terminated prefix. */
	EXPECT_EQ(len, pc_snapshot_json(&p, small, sizeof(small)));
	EXPECT_EQ(sizeof(small) - 1, strlen(small));
	EXPECT_EQ(0, strncmp(buf, small, sizeof(small) - 1));
	free(buf);
	pc_destroy(&p);
}

TEST(randomized_against_invariants)
{
	struct fake_stream streams[3] = { { 0 } };
	struct { uint64_t addr, size; } live[512];
	int nlive = 0;
	struct pc_pool p;
	struct fake f;
	unsigned int seed = 12345;

	setup_pool(&p, &f, 256 * MIB, NULL);
	for (int it = 0; it < 20000; it++) {
		unsigned int r = (unsigned int)rand_r(&seed);

		if (nlive < 512 && (r % 3 || !nlive)) {
			static const uint64_t sizes[] = { 1, 700, 4096, 65536, 300000,
							  MIB, 3 * MIB, 12 * MIB };
			uint64_t size = sizes[(r >> 4) % 8] + (r >> 8) % 5000;
			struct fake_stream *s = (r >> 2) % 4 ? &streams[(r >> 6) % 3] : NULL;
			uint64_t addr;
			int st = pc_alloc(&p, size, s, &addr);

			if (st == VNPU_ERROR_OUT_OF_DEVICE_MEMORY)
				continue;
			ASSERT_EQ(VNPU_SUCCESS, st);
			/* No overlap with any live block. */
			for (int i = 0; i < nlive; i++)
				ASSERT_TRUE(addr + size <= live[i].addr ||
					    live[i].addr + live[i].size <= addr);
			live[nlive].addr = addr;
			live[nlive].size = size;
			nlive++;
		} else {
			int i = (int)((r >> 3) % (unsigned int)nlive);
			struct fake_stream *s = (r >> 5) % 2 ? &streams[(r >> 7) % 3] : NULL;

			ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, live[i].addr, s, s ? s->done + 2 : 0));
			live[i] = live[--nlive];
		}
		/* Streams make progress now and then. */
		if (!(r % 7))
			streams[r % 3].done++;
		if (!(it % 997)) {
			pc_poll_fences(&p);
			ASSERT_EQ(NULL, check_invariants(&p, &f));
		}
		if (!(it % 4999))
			pc_trim(&p, 0);
	}
	ASSERT_EQ(NULL, check_invariants(&p, &f));
	while (nlive)
		ASSERT_EQ(VNPU_SUCCESS, pc_free(&p, live[--nlive].addr, NULL, 0));
	for (int i = 0; i < 3; i++)
		streams[i].done = UINT64_MAX;
	pc_trim(&p, 0);
	EXPECT_EQ(0, p.c.reserved);
	EXPECT_EQ(0, f.live);
	EXPECT_EQ(0, f.stream_refs);
	TH_LOG("segments taken %d, cache hits %llu, oom retries %llu", f.allocs,
	       (unsigned long long)p.c.cache_hits, (unsigned long long)p.c.oom_retries);
	pc_destroy(&p);
}

TEST_HARNESS_MAIN
