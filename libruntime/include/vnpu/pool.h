/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Caching pools (stream-ordered allocation) and device-resident data caches.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_POOL_H
#define VNPU_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "context.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Caching pool allocator and device-resident data cache.
 *
 * A pool sits between the application and the driver: it takes device
 * memory from the driver in large segments (each one vnpu_malloc()
 * allocation) and hands out blocks, sub-ranges of one segment, so copies
 * and fills work on block addresses unchanged. Freed blocks are cached and
 * reused; see Documentation/memory-management.rst.
 */

/**
 * struct vnpu_pool - a pool handle
 * @handle: opaque; 0 is never a valid pool
 */
struct vnpu_pool {
	uint64_t handle;
};

/**
 * enum vnpu_pool_attr - knobs of a pool, for vnpu_pool_set_attr()
 * @VNPU_POOL_ATTR_RELEASE_THRESHOLD: cached (reserved but unallocated)
 *	bytes a pool keeps; above it, a free releases whole free segments to
 *	the driver. UINT64_MAX (the default) keeps everything until trimmed.
 * @VNPU_POOL_ATTR_MAX_SPLIT_SIZE: requests above it get a segment of their
 *	own that is never split, and smaller requests never take such a block;
 *	at least 1 MiB, default UINT64_MAX (no limit)
 * @VNPU_POOL_ATTR_SEGMENT_SIZE: size of the segments for requests of more
 *	than 1 MiB and up to 10 MiB; larger requests get a segment of their
 *	size rounded up to 2 MiB. At least 1 MiB, default 20 MiB
 * @VNPU_POOL_ATTR_SMALL_SEGMENT_SIZE: size of the segments for requests up
 *	to 1 MiB; at least 1 MiB, default 2 MiB
 */
enum vnpu_pool_attr {
	VNPU_POOL_ATTR_RELEASE_THRESHOLD = 0,
	VNPU_POOL_ATTR_MAX_SPLIT_SIZE = 1,
	VNPU_POOL_ATTR_SEGMENT_SIZE = 2,
	VNPU_POOL_ATTR_SMALL_SEGMENT_SIZE = 3,
};

/**
 * struct vnpu_pool_stats - what a pool holds and did
 * @allocated: bytes of the blocks handed out (rounded to 512 bytes)
 * @requested: bytes the callers asked for in those blocks
 * @reserved: bytes of the segments the pool holds from the driver
 * @active: @allocated plus free bytes that queued work may still use
 *	(freed in stream order, not yet reusable by other streams)
 * @peak_allocated: highest @allocated
 * @peak_reserved: highest @reserved
 * @active_blocks: blocks handed out
 * @num_allocs: successful allocations
 * @num_frees: successful frees
 * @cache_hits: allocations served from cached memory (no new segment)
 * @num_segment_allocs: segments taken from the driver
 * @num_segment_frees: segments given back to the driver
 * @num_segments: segments held now
 * @oom_retries: times the driver was out of memory and the pool retried
 *	after waiting for pending frees and releasing its cached segments
 * @oom_failures: allocations that failed after that retry
 * @bad_frees: frees refused: unknown address or freed twice
 * @free_blocks: free blocks, pending ones included
 * @pending_blocks: free blocks fenced by queued work
 * @largest_free_block: largest free block in bytes
 * @fragmentation: 1 - @largest_free_block / free bytes, in millionths
 *	(0 when the free memory is one block or there is none)
 */
struct vnpu_pool_stats {
	uint64_t allocated;
	uint64_t requested;
	uint64_t reserved;
	uint64_t active;
	uint64_t peak_allocated;
	uint64_t peak_reserved;
	uint64_t active_blocks;
	uint64_t num_allocs;
	uint64_t num_frees;
	uint64_t cache_hits;
	uint64_t num_segment_allocs;
	uint64_t num_segment_frees;
	uint64_t num_segments;
	uint64_t oom_retries;
	uint64_t oom_failures;
	uint64_t bad_frees;
	uint64_t free_blocks;
	uint64_t pending_blocks;
	uint64_t largest_free_block;
	uint64_t fragmentation;
};

/**
 * vnpu_pool_create() - create a pool of device memory in a context
 * @ctx: the context whose device memory the pool holds
 * @flags: reserved, must be 0
 * @pool: out
 *
 * The pool starts with the defaults, then VNPU_POOL_CONF (see
 * vnpu_ctx_default_pool()). It is destroyed with its context at the latest.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for bad @flags or NULL
 * @pool; VNPU_ERROR_INVALID_CONFIG for a malformed VNPU_POOL_CONF;
 * VNPU_ERROR_INVALID_HANDLE; VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_pool_create(struct vnpu_context ctx, uint32_t flags, struct vnpu_pool *pool);

/**
 * vnpu_pool_destroy() - destroy a pool and give its memory back
 * @pool: a pool from vnpu_pool_create()
 *
 * Blocks still allocated become invalid. Queued work that uses them is
 * safe: the driver keeps the memory until that work is done.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for the default pool;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_pool_destroy(struct vnpu_pool pool);

/**
 * vnpu_ctx_default_pool() - the context's default pool
 * @ctx: the context
 * @pool: out; created on first use
 *
 * vnpu_malloc_async() and vnpu_free_async() use it. Every pool reads the
 * environment variable VNPU_POOL_CONF when it is created: comma-separated
 * key=value pairs among max_split_mb, release_threshold_mb, segment_mb and
 * small_segment_kb ("max" means no limit), e.g.
 * "max_split_mb=64,release_threshold_mb=256".
 *
 * Return: as vnpu_pool_create().
 */
int vnpu_ctx_default_pool(struct vnpu_context ctx, struct vnpu_pool *pool);

/**
 * vnpu_pool_set_attr() - set a knob of a pool
 * @pool: the pool
 * @attr: an enum vnpu_pool_attr
 * @value: the new value, in bytes
 *
 * A lower release threshold releases free segments at once.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for an unknown @attr or a
 * value out of range; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_pool_set_attr(struct vnpu_pool pool, int attr, uint64_t value);

/** vnpu_pool_get_attr() - read a knob of a pool; errors as vnpu_pool_set_attr(). */
int vnpu_pool_get_attr(struct vnpu_pool pool, int attr, uint64_t *value);

/**
 * vnpu_pool_malloc() - allocate device memory from a pool
 * @pool: the pool
 * @size: bytes, > 0; rounded up to a multiple of 512
 * @stream: the stream whose work will use the memory first, or { 0 }
 * @devptr: out, a device address inside one allocation of the pool's
 *	context, 512-byte aligned
 *
 * With a stream, a block freed on that same stream may be handed out at
 * once (stream order protects it); blocks freed on other streams only once
 * the work that used them is done. Without a stream only the latter. If
 * nothing cached fits, the pool takes a new segment from the driver; if the
 * driver is out of memory, the pool waits for the work holding its pending
 * free blocks, then releases its free segments and retries once.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for size 0 or NULL
 * @devptr; VNPU_ERROR_WRONG_CONTEXT for a stream of another context;
 * VNPU_ERROR_OUT_OF_DEVICE_MEMORY or VNPU_ERROR_QUOTA_EXCEEDED after the
 * retry; VNPU_ERROR_INVALID_HANDLE; VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_pool_malloc(struct vnpu_pool pool, uint64_t size, struct vnpu_stream stream,
		     uint64_t *devptr);

/**
 * vnpu_pool_free() - give a block back to its pool
 * @pool: the pool it came from
 * @devptr: the address vnpu_pool_malloc() returned
 * @stream: the stream of the last work that uses the block, or { 0 }: then
 *	the stream it was allocated on, if any; a block allocated without a
 *	stream and freed without one must not be in use by queued work
 *
 * The block is reusable by other streams only once the stream's work
 * submitted so far is done.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when @devptr is not a
 * block of @pool handed out and not yet freed (a double free changes
 * nothing and is counted in bad_frees); VNPU_ERROR_WRONG_CONTEXT;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_pool_free(struct vnpu_pool pool, uint64_t devptr, struct vnpu_stream stream);

/**
 * vnpu_malloc_async() - allocate from the context's default pool in stream order
 * @stream: the stream whose work uses the memory
 * @size: bytes, > 0
 * @devptr: out
 *
 * Return: as vnpu_pool_malloc().
 */
int vnpu_malloc_async(struct vnpu_stream stream, uint64_t size, uint64_t *devptr);

/**
 * vnpu_free_async() - free pool memory in stream order
 * @stream: the stream whose work so far may use the memory
 * @devptr: an address from vnpu_malloc_async() or vnpu_pool_malloc() of a
 *	pool of the stream's context
 *
 * Returns at once; the block is reused by @stream's later work, and by
 * other streams once @stream's work submitted so far is done.
 *
 * Return: as vnpu_pool_free().
 */
int vnpu_free_async(struct vnpu_stream stream, uint64_t devptr);

/**
 * vnpu_pool_trim() - give free segments back until at most @keep bytes are reserved
 * @pool: the pool
 * @keep: bytes to keep reserved; 0 releases every free segment
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_pool_trim(struct vnpu_pool pool, uint64_t keep);

/**
 * vnpu_pool_get_stats() - read a pool's statistics
 * @pool: the pool
 * @stats: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_pool_get_stats(struct vnpu_pool pool, struct vnpu_pool_stats *stats);

/**
 * vnpu_pool_snapshot_json() - every segment and block of a pool, as JSON
 * @pool: the pool
 * @buf: where to write, NUL-terminated; may be NULL when @size is 0
 * @size: bytes at @buf
 * @needed: out, bytes the snapshot needs with its NUL; may be NULL
 *
 * The format is described in Documentation/memory-management.rst.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when @buf is too small
 * (it then holds a truncated snapshot) or NULL with @size > 0;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_pool_snapshot_json(struct vnpu_pool pool, char *buf, size_t size, size_t *needed);

/* vnpu_data_cache_create() flags */
#define VNPU_DATA_CACHE_SHARED 0x1u	/* any stream of the context may use it */
#define VNPU_DATA_CACHE_LRU 0x2u	/* evict the least recently used (for comparison) */
#define VNPU_DATA_CACHE_FLAGS (VNPU_DATA_CACHE_SHARED | VNPU_DATA_CACHE_LRU)

/**
 * struct vnpu_data_cache - a data cache handle
 * @handle: opaque; 0 is never a valid data cache
 *
 * A data cache keeps small, frequently used host data (lookup tables,
 * constants, per-request parameters) resident on the device under a byte
 * budget, keyed by the caller. On a miss it loads the data through the
 * stream; when the budget is full it evicts the entries with the lowest
 * score of access frequency against size (aged, so once-hot entries go
 * eventually). Its memory comes from the context's default pool, and an
 * evicted entry is freed in stream order: queued work that reads it is safe.
 */
struct vnpu_data_cache {
	uint64_t handle;
};

/**
 * struct vnpu_data_cache_stats - what a data cache did
 * @hits: gets answered from the device copy
 * @misses: gets that loaded the data
 * @bytes_loaded: bytes copied to the device by misses
 * @bytes_hit: bytes of the data answered by hits (not copied)
 * @evictions: entries evicted to make room
 * @entries: entries resident now
 * @resident_bytes: bytes of the resident entries
 * @budget: the byte budget
 */
struct vnpu_data_cache_stats {
	uint64_t hits;
	uint64_t misses;
	uint64_t bytes_loaded;
	uint64_t bytes_hit;
	uint64_t evictions;
	uint64_t entries;
	uint64_t resident_bytes;
	uint64_t budget;
};

/**
 * vnpu_data_cache_create() - create a data cache
 * @stream: the stream it belongs to; with VNPU_DATA_CACHE_SHARED, any
 *	stream of its context may use it
 * @budget: bytes the resident entries may take, > 0
 * @flags: 0, VNPU_DATA_CACHE_SHARED, VNPU_DATA_CACHE_LRU
 * @cache: out
 *
 * A cache of one stream is never contended by other streams. A shared
 * cache serializes every get on one lock; a hit on a stream other than the
 * one that loaded the entry makes that stream's later work wait for the
 * load (without blocking the host).
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for budget 0, bad @flags
 * or NULL @cache; VNPU_ERROR_INVALID_HANDLE; VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_data_cache_create(struct vnpu_stream stream, uint64_t budget, uint32_t flags,
			   struct vnpu_data_cache *cache);

/**
 * vnpu_data_cache_destroy() - destroy a data cache, freeing its entries in stream order
 * @cache: the cache
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_data_cache_destroy(struct vnpu_data_cache cache);

/**
 * vnpu_data_cache_get() - the device copy of host data, loaded if missing
 * @cache: the cache
 * @stream: the stream whose work will read the data: the cache's stream
 *	(or { 0 } for it), or for a shared cache any stream of its context
 * @key: the caller's name for the data; the same key with another size is
 *	reloaded
 * @host: the data (read only on a miss, before the call returns)
 * @size: bytes, > 0 and at most the budget
 * @devptr: out; valid for work submitted to @stream before the next call
 *	on the cache (which may evict it)
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL @host or
 * @devptr, size 0, a size above the budget or a stream the cache does not
 * serve; the errors of vnpu_malloc_async() and vnpu_memcpy_htod_async();
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_data_cache_get(struct vnpu_data_cache cache, struct vnpu_stream stream, uint64_t key,
			const void *host, size_t size, uint64_t *devptr);

/**
 * vnpu_data_cache_invalidate() - drop an entry (its host data changed)
 * @cache: the cache
 * @key: the entry; an absent key is not an error
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_data_cache_invalidate(struct vnpu_data_cache cache, uint64_t key);

/**
 * vnpu_data_cache_get_stats() - read a data cache's counters
 * @cache: the cache
 * @stats: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_data_cache_get_stats(struct vnpu_data_cache cache, struct vnpu_data_cache_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_POOL_H */
