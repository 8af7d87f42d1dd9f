// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Pools: the bookkeeping of pool_core.c on real device memory. A segment
 * is one device allocation of the pool's context; a fence is a point of a
 * stream's timeline, polled with a syncobj query and never guessed.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xf86drm.h>

#include "core/runtime.h"
#include "core/trace.h"
#include "mm.h"
#include "pool_core.h"

/*
 * Pool objects are type-stable: vnpu_pool_malloc() and vnpu_pool_free()
 * find a pool and take pool->lock without the handle table's lock
 * (vnpu_obj_lookup_locked()), so they may lock a pool that another thread
 * is destroying at that moment. Its memory must stay a valid lock: a
 * released pool is not freed but goes to spare_pools, where the next
 * pool_create_in() takes it back, its lock untouched. The memory so kept
 * is bounded by the peak number of pools alive at once.
 */
struct vnpu_pool_obj {
	struct vnpu_obj obj;
	struct vnpu_ctx *ctx;		/* referenced */
	int is_default;
	struct vnpu_lock lock;		/* protects core; never reinitialized */
	struct pc_pool core;
	struct vnpu_pool_obj *next;	/* in ctx->pools under ctx->lock, or spare_pools */
};

/* Protects spare_pools: released pools, kept for the next pool created. */
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vnpu_pool_obj *spare_pools;

/* A zeroed pool object (zero is an unlocked lock), or NULL. */
static struct vnpu_pool_obj *pool_obj_new(void)
{
	struct vnpu_pool_obj *pool;
	size_t lock_end = offsetof(struct vnpu_pool_obj, lock) + sizeof(pool->lock);

	pthread_mutex_lock(&spare_lock);
	pool = spare_pools;
	if (pool)
		spare_pools = pool->next;
	pthread_mutex_unlock(&spare_lock);
	if (!pool)
		return calloc(1, sizeof(*pool));
	/* All but the lock: a stale lookup may be holding it right now. */
	memset(pool, 0, offsetof(struct vnpu_pool_obj, lock));
	memset((char *)pool + lock_end, 0, sizeof(*pool) - lock_end);
	return pool;
}

/* Keeps @pool, torn down and unreachable by handle, for pool_obj_new(). */
static void pool_obj_retire(struct vnpu_pool_obj *pool)
{
	pthread_mutex_lock(&spare_lock);
	pool->next = spare_pools;
	spare_pools = pool;
	pthread_mutex_unlock(&spare_lock);
}

/* --- provider: segments are device allocations, fences stream points ------- */

/*
 * A segment's addresses name its pool in ctx->pool_map, where
 * vnpu_free_async() looks them up: set once the segment exists, cleared
 * before it goes, by the pool's bookkeeping (under its lock, or in its
 * release), so never by two threads for one segment.
 */
static int prov_seg_alloc(void *arg, uint64_t size, uint64_t *base)
{
	struct vnpu_pool_obj *pool = arg;
	int status = vnpu_ctx_alloc_device(pool->ctx, size, pool->obj.created_by, base);

	if (status != VNPU_SUCCESS)
		return status;
	status = vnpu_addr_map_set(&pool->ctx->pool_map, *base, size, pool->obj.handle);
	if (status != VNPU_SUCCESS)
		vnpu_ctx_free_device(pool->ctx, *base);
	return status;
}

static void prov_seg_free(void *arg, uint64_t base, uint64_t size)
{
	struct vnpu_pool_obj *pool = arg;

	vnpu_addr_map_set(&pool->ctx->pool_map, base, size, 0);
	/* Queued work still using it is safe: the driver keeps the buffer. */
	vnpu_ctx_free_device(pool->ctx, base);
}

static int prov_fence_done(void *arg, void *stream, uint64_t point)
{
	struct vnpu_stream_obj *s = stream;
	uint64_t done = 0;

	(void)arg;
	if (drmSyncobjQuery(s->ctx->fd, &s->timeline, &done, 1))
		return 0;
	return done >= point;
}

static void prov_fence_wait(void *arg, void *stream, uint64_t point)
{
	struct vnpu_stream_obj *s = stream;

	(void)arg;
	vnpu_wait_point(s->ctx->fd, s->timeline, point, VNPU_TIMEOUT_INFINITE);
}

static void prov_stream_get(void *arg, void *stream)
{
	(void)arg;
	atomic_fetch_add(&((struct vnpu_stream_obj *)stream)->obj.refs, 1);
}

static void prov_stream_put(void *arg, void *stream)
{
	(void)arg;
	vnpu_obj_put(&((struct vnpu_stream_obj *)stream)->obj);
}

static uint64_t prov_stream_id(void *arg, void *stream)
{
	(void)arg;
	return ((struct vnpu_stream_obj *)stream)->obj.handle;
}

uint64_t vnpu_stream_point(struct vnpu_stream_obj *s)
{
	/* Stored atomically under s->lock (stream.c); no lock to read it. */
	return __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
}

/* --- pool objects -------------------------------------------------------------- */

static void pool_release(struct vnpu_obj *obj)
{
	struct vnpu_pool_obj *pool = (struct vnpu_pool_obj *)obj;

	/* A call that found the pool without a reference may still hold it. */
	vnpu_lock(&pool->lock);
	vnpu_unlock(&pool->lock);
	pc_destroy(&pool->core);
	vnpu_ctx_put(pool->ctx);
	/* Not freed: see struct vnpu_pool_obj. */
	pool_obj_retire(pool);
}

void vnpu_pool_obj_put(struct vnpu_pool_obj *pool)
{
	vnpu_obj_put(&pool->obj);
}

static int pool_create_in(struct vnpu_ctx *ctx, void *caller, struct vnpu_pool_obj **out)
{
	const struct pc_provider prov = {
		.seg_alloc = prov_seg_alloc,
		.seg_free = prov_seg_free,
		.fence_done = prov_fence_done,
		.fence_wait = prov_fence_wait,
		.stream_get = prov_stream_get,
		.stream_put = prov_stream_put,
		.stream_id = prov_stream_id,
	};
	const char *conf = getenv("VNPU_POOL_CONF");
	struct vnpu_pool_obj *pool;
	struct pc_provider p = prov;
	struct pc_config cfg;
	int status;

	pc_config_default(&cfg);
	if (conf && pc_config_parse(conf, &cfg) != VNPU_SUCCESS) {
		vnpu_log(VNPU_LOG_ERROR, "VNPU_POOL_CONF \"%s\" is malformed", conf);
		return VNPU_ERROR_INVALID_CONFIG;
	}
	pool = pool_obj_new();
	if (!pool)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	p.arg = pool;
	status = pc_init(&pool->core, &cfg, &p);
	if (status != VNPU_SUCCESS) {
		pool_obj_retire(pool);
		return status;
	}
	atomic_fetch_add(&ctx->obj.refs, 1);
	pool->ctx = ctx;
	pool->obj.release = pool_release;
	pool->obj.created_by = caller;
	status = vnpu_handle_alloc(&pool->obj, VNPU_OBJ_POOL);
	if (status != VNPU_SUCCESS) {
		pool_release(&pool->obj);
		return status;
	}
	*out = pool;
	return VNPU_SUCCESS;
}

/* Links @pool into @ctx; returns the pool already there if @is_default lost a race. */
static struct vnpu_pool_obj *link_pool(struct vnpu_ctx *ctx, struct vnpu_pool_obj *pool,
				       int is_default)
{
	struct vnpu_pool_obj *winner = NULL;

	pthread_mutex_lock(&ctx->lock);
	if (is_default && ctx->default_pool) {
		winner = ctx->default_pool;
		atomic_fetch_add(&winner->obj.refs, 1);
	} else {
		pool->is_default = is_default;
		pool->next = ctx->pools;
		ctx->pools = pool;
		if (is_default) {
			ctx->default_pool = pool;
			atomic_store_explicit(&ctx->default_pool_handle, pool->obj.handle,
					      memory_order_release);
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	return winner;
}

int vnpu_ctx_default_pool_obj(struct vnpu_ctx *ctx, struct vnpu_pool_obj **out)
{
	struct vnpu_pool_obj *pool, *winner;
	int status;

	pthread_mutex_lock(&ctx->lock);
	pool = ctx->default_pool;
	if (pool)
		atomic_fetch_add(&pool->obj.refs, 1);
	pthread_mutex_unlock(&ctx->lock);
	if (pool) {
		*out = pool;
		return VNPU_SUCCESS;
	}
	status = pool_create_in(ctx, NULL, &pool);
	if (status != VNPU_SUCCESS)
		return status;
	/* The context's list takes the handle's reference; the caller gets one. */
	atomic_fetch_add(&pool->obj.refs, 1);
	winner = link_pool(ctx, pool, 1);
	if (winner) {
		vnpu_obj_put(vnpu_handle_remove(pool->obj.handle, VNPU_OBJ_POOL, NULL));
		vnpu_obj_put(&pool->obj);
		pool = winner;
	}
	*out = pool;
	return VNPU_SUCCESS;
}

/* Takes @pool off its context's list; returns whether it was there. */
static int unlink_pool(struct vnpu_ctx *ctx, struct vnpu_pool_obj *pool)
{
	int found = 0;

	pthread_mutex_lock(&ctx->lock);
	for (struct vnpu_pool_obj **link = &ctx->pools; *link; link = &(*link)->next) {
		if (*link == pool) {
			*link = pool->next;
			found = 1;
			break;
		}
	}
	if (ctx->default_pool == pool) {
		ctx->default_pool = NULL;
		atomic_store_explicit(&ctx->default_pool_handle, 0, memory_order_release);
	}
	pthread_mutex_unlock(&ctx->lock);
	return found;
}

/* Called once a context's streams are drained: its caches, then its pools go. */
static void ctx_destroy_mm(struct vnpu_ctx *ctx)
{
	struct vnpu_data_cache_obj *caches;
	struct vnpu_pool_obj *pools;

	pthread_mutex_lock(&ctx->lock);
	caches = ctx->caches;
	pools = ctx->pools;
	ctx->caches = NULL;
	ctx->pools = NULL;
	ctx->default_pool = NULL;
	atomic_store_explicit(&ctx->default_pool_handle, 0, memory_order_release);
	pthread_mutex_unlock(&ctx->lock);
	vnpu_data_caches_destroy(caches);
	while (pools) {
		struct vnpu_pool_obj *next = pools->next;

		vnpu_obj_put(vnpu_handle_remove(pools->obj.handle, VNPU_OBJ_POOL, NULL));
		pools = next;
	}
}

void vnpu_mm_register(void)
{
	vnpu_ctx_set_teardown_hook(ctx_destroy_mm);
}

static int pool_get(struct vnpu_pool handle, struct vnpu_pool_obj **pool)
{
	struct vnpu_obj *obj;
	int status = vnpu_obj_lookup(handle.handle, VNPU_OBJ_POOL, &obj);

	if (status == VNPU_SUCCESS)
		*pool = (struct vnpu_pool_obj *)obj;
	return status;
}

int vnpu_pool_create(struct vnpu_context handle, uint32_t flags, struct vnpu_pool *out)
{
	VNPU_TRACE_API();
	struct vnpu_pool_obj *pool;
	struct vnpu_ctx *ctx;
	int status;

	if (!out || flags)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_ctx_get(handle, &ctx);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = pool_create_in(ctx, __builtin_return_address(0), &pool);
	if (status == VNPU_SUCCESS) {
		link_pool(ctx, pool, 0);
		out->handle = pool->obj.handle;
	}
	vnpu_ctx_put(ctx);
	return vnpu_set_status(status);
}

int vnpu_pool_destroy(struct vnpu_pool handle)
{
	VNPU_TRACE_API();
	struct vnpu_pool_obj *pool;
	int status = pool_get(handle, &pool);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (pool->is_default) {
		vnpu_obj_put(&pool->obj);
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	}
	/* A racing destroy, or the context's teardown, may have taken it already. */
	if (unlink_pool(pool->ctx, pool))
		vnpu_obj_put(vnpu_handle_remove(handle.handle, VNPU_OBJ_POOL,
						 __builtin_return_address(0)));
	vnpu_obj_put(&pool->obj);
	return VNPU_SUCCESS;
}

int vnpu_ctx_default_pool(struct vnpu_context handle, struct vnpu_pool *out)
{
	struct vnpu_pool_obj *pool;
	struct vnpu_ctx *ctx;
	int status;

	if (!out)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_ctx_get(handle, &ctx);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = vnpu_ctx_default_pool_obj(ctx, &pool);
	if (status == VNPU_SUCCESS) {
		out->handle = pool->obj.handle;
		vnpu_obj_put(&pool->obj);
	}
	vnpu_ctx_put(ctx);
	return vnpu_set_status(status);
}

static uint64_t *attr_field(struct pc_config *cfg, int attr)
{
	switch (attr) {
	case VNPU_POOL_ATTR_RELEASE_THRESHOLD:
		return &cfg->release_threshold;
	case VNPU_POOL_ATTR_MAX_SPLIT_SIZE:
		return &cfg->max_split_size;
	case VNPU_POOL_ATTR_SEGMENT_SIZE:
		return &cfg->segment_size;
	case VNPU_POOL_ATTR_SMALL_SEGMENT_SIZE:
		return &cfg->small_segment_size;
	default:
		return NULL;
	}
}

int vnpu_pool_set_attr(struct vnpu_pool handle, int attr, uint64_t value)
{
	struct vnpu_pool_obj *pool;
	struct pc_config cfg;
	uint64_t *field;
	int status = pool_get(handle, &pool);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	vnpu_lock(&pool->lock);
	cfg = pool->core.cfg;
	field = attr_field(&cfg, attr);
	if (field)
		*field = value;
	if (!field || pc_config_check(&cfg) != VNPU_SUCCESS) {
		status = VNPU_ERROR_INVALID_VALUE;
	} else {
		pool->core.cfg = cfg;
		if (cfg.release_threshold != UINT64_MAX &&
		    pool->core.c.reserved - pool->core.c.allocated > cfg.release_threshold)
			pc_trim(&pool->core, pool->core.c.allocated + cfg.release_threshold);
	}
	vnpu_unlock(&pool->lock);
	vnpu_obj_put(&pool->obj);
	return vnpu_set_status(status);
}

int vnpu_pool_get_attr(struct vnpu_pool handle, int attr, uint64_t *value)
{
	struct vnpu_pool_obj *pool;
	struct pc_config cfg;
	uint64_t *field;
	int status;

	if (!value)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = pool_get(handle, &pool);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	vnpu_lock(&pool->lock);
	cfg = pool->core.cfg;
	vnpu_unlock(&pool->lock);
	field = attr_field(&cfg, attr);
	if (field)
		*value = *field;
	else
		status = VNPU_ERROR_INVALID_VALUE;
	vnpu_obj_put(&pool->obj);
	return vnpu_set_status(status);
}

/* Allocation under pool->lock, held by the caller. */
static int pool_alloc_locked(struct vnpu_pool_obj *pool, uint64_t size,
			     struct vnpu_stream_obj *s, uint64_t *devptr)
{
	if (s && s->ctx != pool->ctx)
		return VNPU_ERROR_WRONG_CONTEXT;
	return pc_alloc(&pool->core, size, s, devptr);
}

/*
 * pool_alloc_locked() taking over the caller's reference on *@s (its
 * lookup's): the block keeps it or the pool drops it; *@s is then NULL.
 * Under pool->lock, held by the caller.
 */
static int pool_alloc_locked_ref(struct vnpu_pool_obj *pool, uint64_t size,
				 struct vnpu_stream_obj **s, uint64_t *devptr)
{
	struct vnpu_stream_obj *given = *s;

	if (!given)
		return pc_alloc(&pool->core, size, NULL, devptr);
	if (given->ctx != pool->ctx)
		return VNPU_ERROR_WRONG_CONTEXT;
	/* pc_alloc_ref() keeps it or drops it, even when it fails. */
	*s = NULL;
	return pc_alloc_ref(&pool->core, size, given, devptr);
}

/*
 * Free under pool->lock, held by the caller; a bad address is counted in
 * bad_frees if the caller @named the pool.
 */
static int pool_free_locked(struct vnpu_pool_obj *pool, uint64_t devptr,
			    struct vnpu_stream_obj *s, int named)
{
	struct pc_block *b;

	if (s && s->ctx != pool->ctx)
		return VNPU_ERROR_WRONG_CONTEXT;
	b = pc_take(&pool->core, devptr);
	if (!b) {
		pool->core.c.bad_frees += named;
		return VNPU_ERROR_INVALID_VALUE;
	}
	/* No stream given: the one it was allocated on, if any. */
	if (!s)
		s = b->alloc_stream;
	pc_free_block(&pool->core, b, s, s ? vnpu_stream_point(s) : 0);
	return VNPU_SUCCESS;
}

int vnpu_pool_obj_alloc(struct vnpu_pool_obj *pool, uint64_t size, struct vnpu_stream_obj *s,
			uint64_t *devptr)
{
	int status;

	vnpu_lock(&pool->lock);
	status = pool_alloc_locked(pool, size, s, devptr);
	vnpu_unlock(&pool->lock);
	return status;
}

int vnpu_pool_obj_free(struct vnpu_pool_obj *pool, uint64_t devptr, struct vnpu_stream_obj *s)
{
	int status;

	vnpu_lock(&pool->lock);
	status = pool_free_locked(pool, devptr, s, 1);
	vnpu_unlock(&pool->lock);
	return status;
}

/* The pool of @handle with its lock held; put @ref after unlocking. */
static int pool_lock(struct vnpu_pool handle, struct vnpu_pool_obj **pool, int *ref)
{
	struct vnpu_obj *obj;
	int status = vnpu_obj_lookup_locked(handle.handle, VNPU_OBJ_POOL,
					    offsetof(struct vnpu_pool_obj, lock), &obj, ref);

	if (status == VNPU_SUCCESS)
		*pool = (struct vnpu_pool_obj *)obj;
	return status;
}

static void pool_unlock(struct vnpu_pool_obj *pool, int ref)
{
	vnpu_unlock(&pool->lock);
	/* Without a reference, @pool may be gone from here on. */
	if (ref)
		vnpu_obj_put(&pool->obj);
}

/* The stream of @handle, NULL for { 0 }. */
static int optional_stream(struct vnpu_stream handle, struct vnpu_stream_obj **s)
{
	*s = NULL;
	return handle.handle ? vnpu_stream_get(handle, s) : VNPU_SUCCESS;
}

/*
 * The allocation fast path: the stream, if any, is looked up first
 * (without the handle table's lock unless it is changing; that lock is
 * never taken under a pool's), then the pool is found and locked in one
 * step, without the table's lock and without a reference: one lock and
 * one unlock of the pool per call. The stream's reference becomes the
 * block's.
 */
int vnpu_pool_malloc(struct vnpu_pool handle, uint64_t size, struct vnpu_stream stream,
		     uint64_t *devptr)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	struct vnpu_pool_obj *pool;
	int status, ref;

	if (!size || !devptr)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = optional_stream(stream, &s);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = pool_lock(handle, &pool, &ref);
	if (status == VNPU_SUCCESS) {
		status = pool_alloc_locked_ref(pool, size, &s, devptr);
		pool_unlock(pool, ref);
	}
	if (s)
		vnpu_obj_put(&s->obj);
	return vnpu_set_status(status);
}

int vnpu_pool_free(struct vnpu_pool handle, uint64_t devptr, struct vnpu_stream stream)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	struct vnpu_pool_obj *pool;
	int status, ref;

	status = optional_stream(stream, &s);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = pool_lock(handle, &pool, &ref);
	if (status == VNPU_SUCCESS) {
		status = pool_free_locked(pool, devptr, s, 1);
		pool_unlock(pool, ref);
	}
	if (s)
		vnpu_obj_put(&s->obj);
	return vnpu_set_status(status);
}

/*
 * The default pool of @ctx, created on first use, with its lock held; put
 * @ref after unlocking (pool_unlock()). Once it exists, found as
 * vnpu_pool_malloc() finds a pool: by handle, without a lock but the pool's.
 */
static int default_pool_lock(struct vnpu_ctx *ctx, struct vnpu_pool_obj **pool, int *ref)
{
	uint64_t handle = atomic_load_explicit(&ctx->default_pool_handle, memory_order_acquire);
	int status;

	if (handle && pool_lock((struct vnpu_pool){ handle }, pool, ref) == VNPU_SUCCESS)
		return VNPU_SUCCESS;
	/* None yet, or it went meanwhile (context teardown). */
	status = vnpu_ctx_default_pool_obj(ctx, pool);
	if (status != VNPU_SUCCESS)
		return status;
	vnpu_lock(&(*pool)->lock);
	*ref = 1;
	return VNPU_SUCCESS;
}

int vnpu_malloc_async(struct vnpu_stream stream, uint64_t size, uint64_t *devptr)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	struct vnpu_pool_obj *pool;
	int status, ref;

	if (!size || !devptr)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_stream_get(stream, &s);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = default_pool_lock(s->ctx, &pool, &ref);
	if (status == VNPU_SUCCESS) {
		status = pool_alloc_locked_ref(pool, size, &s, devptr);
		pool_unlock(pool, ref);
	}
	if (s)
		vnpu_obj_put(&s->obj);
	return vnpu_set_status(status);
}

/*
 * The pool of @devptr is the one ctx->pool_map names for its segment: one
 * map lookup, then the pool is locked by handle as vnpu_pool_free() locks
 * it. A stale handle (the pool is being destroyed) or no pool at all is an
 * address no pool of the context holds.
 */
int vnpu_free_async(struct vnpu_stream stream, uint64_t devptr)
{
	VNPU_TRACE_API();
	struct vnpu_stream_obj *s;
	struct vnpu_pool_obj *pool;
	uint64_t handle;
	int status = vnpu_stream_get(stream, &s);
	int ref;

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	handle = vnpu_addr_map_get(&s->ctx->pool_map, devptr);
	status = VNPU_ERROR_INVALID_VALUE;
	if (handle && pool_lock((struct vnpu_pool){ handle }, &pool, &ref) == VNPU_SUCCESS) {
		/* Not counted in bad_frees: the caller named no pool. */
		status = pool_free_locked(pool, devptr, s, 0);
		pool_unlock(pool, ref);
	}
	vnpu_obj_put(&s->obj);
	return vnpu_set_status(status);
}

int vnpu_pool_trim(struct vnpu_pool handle, uint64_t keep)
{
	VNPU_TRACE_API();
	struct vnpu_pool_obj *pool;
	int status = pool_get(handle, &pool);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	vnpu_lock(&pool->lock);
	pc_trim(&pool->core, keep);
	vnpu_unlock(&pool->lock);
	vnpu_obj_put(&pool->obj);
	return VNPU_SUCCESS;
}

int vnpu_pool_get_stats(struct vnpu_pool handle, struct vnpu_pool_stats *st)
{
	struct vnpu_pool_obj *pool;
	struct pc_usage u;
	int status;

	if (!st)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = pool_get(handle, &pool);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	vnpu_lock(&pool->lock);
	pc_poll_fences(&pool->core);
	pc_usage(&pool->core, &u);
	memset(st, 0, sizeof(*st));
	st->allocated = pool->core.c.allocated;
	st->requested = pool->core.c.requested;
	st->reserved = pool->core.c.reserved;
	st->active = pool->core.c.allocated + u.pending_bytes;
	st->peak_allocated = pool->core.c.peak_allocated;
	st->peak_reserved = pool->core.c.peak_reserved;
	st->active_blocks = pool->core.c.active_blocks;
	st->num_allocs = pool->core.c.num_allocs;
	st->num_frees = pool->core.c.num_frees;
	st->cache_hits = pool->core.c.cache_hits;
	st->num_segment_allocs = pool->core.c.num_segment_allocs;
	st->num_segment_frees = pool->core.c.num_segment_frees;
	st->num_segments = pool->core.c.num_segments;
	st->oom_retries = pool->core.c.oom_retries;
	st->oom_failures = pool->core.c.oom_failures;
	st->bad_frees = pool->core.c.bad_frees;
	st->free_blocks = u.free_blocks;
	st->pending_blocks = u.pending_blocks;
	st->largest_free_block = u.largest_free;
	st->fragmentation = u.free_bytes ?
		(uint64_t)((u.free_bytes - u.largest_free) * 1000000.0 / (double)u.free_bytes) : 0;
	vnpu_unlock(&pool->lock);
	vnpu_obj_put(&pool->obj);
	return VNPU_SUCCESS;
}

int vnpu_pool_snapshot_json(struct vnpu_pool handle, char *buf, size_t size, size_t *needed)
{
	struct vnpu_pool_obj *pool;
	size_t len;
	int status;

	if (!buf && size)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = pool_get(handle, &pool);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	vnpu_lock(&pool->lock);
	pc_poll_fences(&pool->core);
	len = pc_snapshot_json(&pool->core, buf, size);
	vnpu_unlock(&pool->lock);
	vnpu_obj_put(&pool->obj);
	if (needed)
		*needed = len + 1;
	return vnpu_set_status(size && len >= size ? VNPU_ERROR_INVALID_VALUE : VNPU_SUCCESS);
}
