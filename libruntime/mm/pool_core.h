/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Bookkeeping of the caching pool allocator: size classes, blocks split
 * from and merged back inside segments, free bins, stream fences on freed
 * blocks, release threshold, trim, OOM retry, statistics and the JSON
 * snapshot. It knows nothing of the device: segments come from a provider
 * (vnpu_malloc() in the runtime, a fake in the host unit tests) and fences
 * are opaque (stream, point) pairs the provider can poll and wait for.
 * Not thread-safe: the caller serializes (pool.c holds the pool's lock).
 */
#ifndef VNPU_POOL_CORE_H
#define VNPU_POOL_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "vnpu.h"

/* Every block is a multiple of this and aligned to it. */
#define PC_ROUND 512ULL
/* Requests up to this size come from small segments. */
#define PC_SMALL_LIMIT (1ULL << 20)
/* Large requests below this size come from one large segment. */
#define PC_LARGE_LIMIT (10ULL << 20)
/* Bigger requests get a segment of their size rounded up to this. */
#define PC_HUGE_ROUND (2ULL << 20)
/* A large block is split only if the rest is at least this big. */
#define PC_LARGE_MIN_SPLIT (1ULL << 20)
/* An oversize request (above max_split) takes a cached block at most this much larger. */
#define PC_OVERSIZE_SLACK (20ULL << 20)

#define PC_NUM_BINS 256
/*
 * Freed small blocks stay whole in a per-bin LIFO, up to this many per bin
 * and PC_QUICK_BYTES in all, for the next request of the same size: no
 * split, no merge, no bin search. A fenced block keeps its fence there and
 * is taken only by its fence's stream (stream order) until the fence is
 * polled done. Slow paths (a bin miss, trim, release, stats, snapshot)
 * first return them to the bins.
 */
#define PC_QUICK_DEPTH 4
#define PC_QUICK_BYTES (4ULL << 20)
/* pc_block.bin of a block in a quick list. */
#define PC_BIN_QUICK (-2)

/*
 * Kinds of blocks, each with its own segments and bins: small requests,
 * large ones, and oversize ones (above max_split_size: a segment each,
 * never split).
 */
enum { PC_SMALL = 0, PC_LARGE = 1, PC_OVERSIZE = 2, PC_KINDS = 3 };

/* Where segments come from and how fences are checked. */
struct pc_provider {
	/* Gets a segment of @size bytes at *@base; returns a vnpu status. */
	int (*seg_alloc)(void *arg, uint64_t size, uint64_t *base);
	void (*seg_free)(void *arg, uint64_t base, uint64_t size);
	/* 1 when @point of @stream is reached (work done), 0 when not. */
	int (*fence_done)(void *arg, void *stream, uint64_t point);
	/* Blocks until @point of @stream is reached. */
	void (*fence_wait)(void *arg, void *stream, uint64_t point);
	/* References on the stream object a fence names; may be NULL. */
	void (*stream_get)(void *arg, void *stream);
	void (*stream_put)(void *arg, void *stream);
	/* A number naming the stream in the snapshot; may be NULL. */
	uint64_t (*stream_id)(void *arg, void *stream);
	void *arg;
};

struct pc_config {
	uint64_t release_threshold;	/* cached bytes kept; UINT64_MAX = all */
	uint64_t max_split_size;	/* blocks above it are never split */
	uint64_t segment_size;		/* large segments */
	uint64_t small_segment_size;	/* small segments */
};

struct pc_segment;

struct pc_block {
	uint64_t addr;
	uint64_t size;			/* a multiple of PC_ROUND */
	uint64_t requested;		/* bytes asked for, allocated blocks */
	struct pc_segment *seg;
	struct pc_block *prev, *next;	/* neighbours in the segment, by address */
	struct pc_block *lprev, *lnext;	/* bin list (free); lnext: quick list */
	struct pc_block *hnext;		/* hash chain (allocated) */
	void *alloc_stream;		/* stream it was allocated on, or NULL */
	void *fence_stream;		/* free: work of this stream may still use it */
	uint64_t fence_point;
	int free;
	int bin;			/* bin index while free, PC_BIN_QUICK, -1 */
};

struct pc_segment {
	uint64_t base;
	uint64_t size;
	uint64_t id;
	int kind;			/* PC_SMALL, PC_LARGE or PC_OVERSIZE */
	struct pc_block *first;
	struct pc_segment *prev, *next;
};

struct pc_counters {
	uint64_t allocated;
	uint64_t requested;
	uint64_t reserved;
	uint64_t active_blocks;
	uint64_t peak_allocated;
	uint64_t peak_reserved;
	uint64_t num_allocs;
	uint64_t num_frees;
	uint64_t num_segment_allocs;
	uint64_t num_segment_frees;
	uint64_t num_segments;
	uint64_t oom_retries;
	uint64_t oom_failures;
	uint64_t cache_hits;		/* allocations served without a new segment */
	uint64_t quick_hits;		/* of which from a quick list */
	uint64_t fence_waits;		/* blocking waits for a fence (OOM path) */
	uint64_t bad_frees;		/* frees of addresses that are not live blocks */
};

struct pc_pool {
	struct pc_config cfg;
	struct pc_provider prov;
	struct pc_segment *segments;
	uint64_t next_segment_id;
	struct pc_block *bins[PC_KINDS][PC_NUM_BINS];	/* free blocks */
	struct pc_block *quick[PC_NUM_BINS];	/* whole freed small blocks */
	uint8_t quick_count[PC_NUM_BINS];
	uint64_t quick_bytes;
	struct pc_block **hash;			/* allocated blocks by address */
	size_t hash_size;			/* power of two */
	size_t hash_count;
	void *given_stream;			/* pc_alloc_ref(): the caller's reference */
	struct pc_counters c;
};

struct pc_usage {
	uint64_t free_bytes;
	uint64_t pending_bytes;		/* free but fenced by unfinished work */
	uint64_t pending_blocks;
	uint64_t free_blocks;
	uint64_t largest_free;
};

void pc_config_default(struct pc_config *cfg);
/*
 * Parses "key=value,..." (max_split_mb, release_threshold_mb, segment_mb,
 * small_segment_kb; "release_threshold_mb=max" for no limit) into @cfg.
 * Returns VNPU_SUCCESS or VNPU_ERROR_INVALID_CONFIG, leaving @cfg unchanged.
 */
int pc_config_parse(const char *text, struct pc_config *cfg);
int pc_config_check(const struct pc_config *cfg);

int pc_init(struct pc_pool *p, const struct pc_config *cfg, const struct pc_provider *prov);
/* Returns every segment to the provider and frees the bookkeeping. */
void pc_destroy(struct pc_pool *p);

/* Rounded block size of a request; 0 for a request of 0 or too large. */
uint64_t pc_round_size(uint64_t size);

/*
 * Allocates @size bytes for use on @stream (NULL: any stream, so only
 * blocks whose fence is done qualify). Returns VNPU_SUCCESS,
 * VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_OUT_OF_HOST_MEMORY or the provider's
 * error after the OOM retry.
 */
int pc_alloc(struct pc_pool *p, uint64_t size, void *stream, uint64_t *addr);
/*
 * pc_alloc() taking over the caller's reference on @stream (if not NULL):
 * the block keeps it, or it is dropped (the block had its own from a fence
 * of @stream's, or the allocation failed). Saves a get and a put.
 */
int pc_alloc_ref(struct pc_pool *p, uint64_t size, void *stream, uint64_t *addr);
/*
 * Frees the block at @addr. @stream/@point: the last work that may use it
 * (NULL/0: none). Returns VNPU_ERROR_INVALID_VALUE if @addr is not the start
 * of a live block (unknown address, or a double free).
 */
int pc_free(struct pc_pool *p, uint64_t addr, void *stream, uint64_t point);
/*
 * pc_free() in two steps, for a caller that picks the fence from the block
 * (its alloc_stream): pc_take() unlinks the live block at @addr, or returns
 * NULL if there is none (not counted: the caller counts bad_frees);
 * pc_free_block() frees it.
 */
struct pc_block *pc_take(struct pc_pool *p, uint64_t addr);
void pc_free_block(struct pc_pool *p, struct pc_block *b, void *stream, uint64_t point);
/* The live block at @addr, or NULL. */
struct pc_block *pc_find(struct pc_pool *p, uint64_t addr);
/* Releases free segments until at most @keep bytes are reserved. */
void pc_trim(struct pc_pool *p, uint64_t keep);
/* Clears fences that are done, merging blocks they kept apart. */
void pc_poll_fences(struct pc_pool *p);
void pc_usage(struct pc_pool *p, struct pc_usage *u);
/* Writes the JSON snapshot; returns the length it needs (without the NUL). */
size_t pc_snapshot_json(struct pc_pool *p, char *buf, size_t size);

#endif
