// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Device-resident data cache. Entries are blocks of the context's default
 * pool holding copies of host data, keyed by the caller. Eviction uses
 * Greedy-Dual-Size-Frequency: an entry's priority is the cache's clock plus
 * its access count divided by its size, the clock rises to the priority of
 * each evicted entry (so entries that stopped being used age out), and the
 * lowest priority goes first. VNPU_DATA_CACHE_LRU evicts the least recently
 * used instead, for comparison. Evicted entries go back to the pool in
 * stream order, behind the work of every stream that read them.
 */
#include <stdlib.h>
#include <string.h>

#include <xf86drm.h>

#include "core/runtime.h"
#include "core/trace.h"
#include "mm.h"

#define DC_MAX_USERS 16

struct dc_entry {
	uint64_t key;
	uint64_t size;
	uint64_t devptr;
	uint64_t freq;
	double prio;
	uint64_t last_use;
	struct vnpu_stream_obj *load_stream;	/* referenced */
	uint64_t load_point;
	/* Streams that read it (shared caches), referenced; overflow: too many. */
	struct vnpu_stream_obj *users[DC_MAX_USERS];
	unsigned int num_users;
	int overflow;
	struct dc_entry *hnext;
};

struct vnpu_data_cache_obj {
	struct vnpu_obj obj;
	struct vnpu_stream_obj *stream;		/* owner, referenced */
	struct vnpu_pool_obj *pool;		/* the context's default pool, referenced */
	uint32_t flags;
	uint64_t budget;
	pthread_mutex_t lock;			/* protects everything below */
	struct dc_entry **hash;
	size_t hash_size;
	uint64_t tick;
	double clock;
	struct vnpu_data_cache_stats st;
	struct vnpu_data_cache_obj *next;	/* in ctx->caches, under ctx->lock */
};

static size_t key_index(const struct vnpu_data_cache_obj *c, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 24) & (c->hash_size - 1);
}

static struct dc_entry *lookup(struct vnpu_data_cache_obj *c, uint64_t key)
{
	for (struct dc_entry *e = c->hash[key_index(c, key)]; e; e = e->hnext)
		if (e->key == key)
			return e;
	return NULL;
}

static void unlink_entry(struct vnpu_data_cache_obj *c, struct dc_entry *e)
{
	for (struct dc_entry **link = &c->hash[key_index(c, e->key)]; *link;
	     link = &(*link)->hnext) {
		if (*link == e) {
			*link = e->hnext;
			break;
		}
	}
	c->st.entries--;
	c->st.resident_bytes -= e->size;
}

static void grow_hash(struct vnpu_data_cache_obj *c)
{
	size_t n = c->hash_size * 2;
	struct dc_entry **h = calloc(n, sizeof(*h)), **old = c->hash;
	size_t old_n = c->hash_size;

	if (!h)
		return;		/* longer chains, still correct */
	c->hash = h;
	c->hash_size = n;
	for (size_t i = 0; i < old_n; i++) {
		for (struct dc_entry *e = old[i], *next; e; e = next) {
			size_t k = key_index(c, e->key);

			next = e->hnext;
			e->hnext = h[k];
			h[k] = e;
		}
	}
	free(old);
}

static void add_user(struct dc_entry *e, struct vnpu_stream_obj *s)
{
	for (unsigned int i = 0; i < e->num_users; i++)
		if (e->users[i] == s)
			return;
	if (e->num_users == DC_MAX_USERS) {
		e->overflow = 1;
		return;
	}
	atomic_fetch_add(&s->obj.refs, 1);
	e->users[e->num_users++] = s;
}

static int point_done(struct vnpu_stream_obj *s, uint64_t point)
{
	uint64_t done = 0;

	if (!point)
		return 1;
	if (drmSyncobjQuery(s->ctx->fd, &s->timeline, &done, 1))
		return 0;
	return done >= point;
}

/*
 * Gives @e's block back to the pool in stream order. Work of @s reading it
 * is ordered before any later use on @s; the pool fences other streams on
 * @s's current point. Work of other streams that read it (shared caches) is
 * waited for here first: at most one such stream is left to the fence.
 */
static void release_entry(struct vnpu_data_cache_obj *c, struct dc_entry *e,
			  struct vnpu_stream_obj *s)
{
	struct vnpu_stream_obj *fence = s;

	if (e->overflow) {
		vnpu_ctx_synchronize(s->ctx, VNPU_TIMEOUT_INFINITE);
	} else {
		for (unsigned int i = 0; i < e->num_users; i++) {
			struct vnpu_stream_obj *u = e->users[i];
			uint64_t point;

			if (u == s)
				continue;
			point = vnpu_stream_point(u);
			if (point_done(u, point))
				continue;
			if (fence == s && point_done(s, vnpu_stream_point(s))) {
				fence = u;	/* the only unfinished reader so far */
				continue;
			}
			vnpu_wait_point(u->ctx->fd, u->timeline, point, VNPU_TIMEOUT_INFINITE);
		}
	}
	vnpu_pool_obj_free(c->pool, e->devptr, fence);
	for (unsigned int i = 0; i < e->num_users; i++)
		vnpu_obj_put(&e->users[i]->obj);
	vnpu_obj_put(&e->load_stream->obj);
	free(e);
}

/* The entry to evict: lowest priority (or least recently used). */
static struct dc_entry *victim(struct vnpu_data_cache_obj *c)
{
	struct dc_entry *best = NULL;

	for (size_t i = 0; i < c->hash_size; i++) {
		for (struct dc_entry *e = c->hash[i]; e; e = e->hnext) {
			if (!best)
				best = e;
			else if (c->flags & VNPU_DATA_CACHE_LRU ? e->last_use < best->last_use
								  : e->prio < best->prio)
				best = e;
		}
	}
	return best;
}

static int evict_one(struct vnpu_data_cache_obj *c, struct vnpu_stream_obj *s)
{
	struct dc_entry *e = victim(c);

	if (!e)
		return 0;
	unlink_entry(c, e);
	if (e->prio > c->clock)
		c->clock = e->prio;
	c->st.evictions++;
	release_entry(c, e, s);
	return 1;
}

/*
 * Makes @s's next work wait for the load of @e on another stream, without
 * blocking the host: the load's fence goes into @s's pending waits.
 */
static void wait_for_load(struct dc_entry *e, struct vnpu_stream_obj *s)
{
	struct vnpu_stream_obj *l = e->load_stream;
	uint32_t tmp;
	int queued = 0;

	if (l == s || point_done(l, e->load_point))
		return;
	pthread_mutex_lock(&s->lock);
	if (s->num_waits < DRM_VNPU_MAX_WAITS && !drmSyncobjCreate(s->ctx->fd, 0, &tmp)) {
		if (!drmSyncobjTransfer(s->ctx->fd, tmp, 0, l->timeline, e->load_point, 0)) {
			struct drm_vnpu_sync *w = &s->waits[s->num_waits++];

			w->handle = tmp;
			w->flags = 0;
			w->point = 0;
			queued = 1;
		} else {
			drmSyncobjDestroy(s->ctx->fd, tmp);
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (!queued)
		vnpu_wait_point(l->ctx->fd, l->timeline, e->load_point, VNPU_TIMEOUT_INFINITE);
}

static void cache_release(struct vnpu_obj *obj)
{
	struct vnpu_data_cache_obj *c = (struct vnpu_data_cache_obj *)obj;

	for (size_t i = 0; i < c->hash_size; i++) {
		while (c->hash[i]) {
			struct dc_entry *e = c->hash[i];

			c->hash[i] = e->hnext;
			release_entry(c, e, c->stream);
		}
	}
	free(c->hash);
	vnpu_pool_obj_put(c->pool);
	vnpu_obj_put(&c->stream->obj);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void vnpu_data_caches_destroy(struct vnpu_data_cache_obj *list)
{
	while (list) {
		struct vnpu_data_cache_obj *next = list->next;

		vnpu_obj_put(vnpu_handle_remove(list->obj.handle, VNPU_OBJ_DATA_CACHE, NULL));
		list = next;
	}
}

static int cache_get(struct vnpu_data_cache handle, struct vnpu_data_cache_obj **c)
{
	struct vnpu_obj *obj;
	int status = vnpu_obj_lookup(handle.handle, VNPU_OBJ_DATA_CACHE, &obj);

	if (status == VNPU_SUCCESS)
		*c = (struct vnpu_data_cache_obj *)obj;
	return status;
}

int vnpu_data_cache_create(struct vnpu_stream stream, uint64_t budget, uint32_t flags,
			   struct vnpu_data_cache *out)
{
	VNPU_TRACE_API();
	struct vnpu_data_cache_obj *c;
	struct vnpu_stream_obj *s;
	struct vnpu_ctx *ctx;
	int status;

	if (!out || !budget || (flags & ~VNPU_DATA_CACHE_FLAGS))
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_stream_get(stream, &s);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	c = calloc(1, sizeof(*c));
	if (c)
		c->hash = calloc(64, sizeof(*c->hash));
	if (!c || !c->hash) {
		if (c)
			free(c);
		vnpu_obj_put(&s->obj);
		return vnpu_set_status(VNPU_ERROR_OUT_OF_HOST_MEMORY);
	}
	ctx = s->ctx;
	status = vnpu_ctx_default_pool_obj(ctx, &c->pool);
	if (status != VNPU_SUCCESS) {
		free(c->hash);
		free(c);
		vnpu_obj_put(&s->obj);
		return vnpu_set_status(status);
	}
	c->hash_size = 64;
	c->stream = s;		/* takes the reference */
	c->flags = flags;
	c->budget = budget;
	c->st.budget = budget;
	pthread_mutex_init(&c->lock, NULL);
	c->obj.release = cache_release;
	c->obj.created_by = __builtin_return_address(0);
	status = vnpu_handle_alloc(&c->obj, VNPU_OBJ_DATA_CACHE);
	if (status != VNPU_SUCCESS) {
		cache_release(&c->obj);
		return vnpu_set_status(status);
	}
	pthread_mutex_lock(&ctx->lock);
	c->next = ctx->caches;
	ctx->caches = c;
	pthread_mutex_unlock(&ctx->lock);
	out->handle = c->obj.handle;
	return VNPU_SUCCESS;
}

int vnpu_data_cache_destroy(struct vnpu_data_cache handle)
{
	VNPU_TRACE_API();
	struct vnpu_data_cache_obj *c;
	struct vnpu_ctx *ctx;
	int status = cache_get(handle, &c), found = 0;

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	ctx = c->stream->ctx;
	pthread_mutex_lock(&ctx->lock);
	for (struct vnpu_data_cache_obj **link = &ctx->caches; *link; link = &(*link)->next) {
		if (*link == c) {
			*link = c->next;
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	if (found)
		vnpu_obj_put(vnpu_handle_remove(handle.handle, VNPU_OBJ_DATA_CACHE,
						 __builtin_return_address(0)));
	vnpu_obj_put(&c->obj);
	return VNPU_SUCCESS;
}

/* Loads a new entry for @key on @s; under c->lock. */
static int load(struct vnpu_data_cache_obj *c, struct vnpu_stream_obj *s, uint64_t key,
		const void *host, size_t size, struct dc_entry **out)
{
	struct vnpu_stream sh = { s->obj.handle };
	struct dc_entry *e;
	int status;

	while (c->st.resident_bytes + size > c->budget && evict_one(c, s))
		;
	e = calloc(1, sizeof(*e));
	if (!e)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	status = vnpu_pool_obj_alloc(c->pool, size, s, &e->devptr);
	/* Device memory short: the cache gives back what it holds, then retries. */
	while ((status == VNPU_ERROR_OUT_OF_DEVICE_MEMORY ||
		status == VNPU_ERROR_QUOTA_EXCEEDED) && evict_one(c, s))
		status = vnpu_pool_obj_alloc(c->pool, size, s, &e->devptr);
	if (status == VNPU_SUCCESS) {
		status = vnpu_memcpy_htod_async(sh, e->devptr, host, size);
		if (status != VNPU_SUCCESS)
			vnpu_pool_obj_free(c->pool, e->devptr, s);
	}
	if (status != VNPU_SUCCESS) {
		free(e);
		return status;
	}
	e->key = key;
	e->size = size;
	e->freq = 1;
	e->prio = c->clock + 1.0 / (double)size;
	e->last_use = ++c->tick;
	atomic_fetch_add(&s->obj.refs, 1);
	e->load_stream = s;
	e->load_point = vnpu_stream_point(s);
	add_user(e, s);
	if (c->st.entries >= c->hash_size)
		grow_hash(c);
	e->hnext = c->hash[key_index(c, key)];
	c->hash[key_index(c, key)] = e;
	c->st.entries++;
	c->st.resident_bytes += size;
	c->st.misses++;
	c->st.bytes_loaded += size;
	*out = e;
	return VNPU_SUCCESS;
}

int vnpu_data_cache_get(struct vnpu_data_cache handle, struct vnpu_stream stream, uint64_t key,
			const void *host, size_t size, uint64_t *devptr)
{
	VNPU_TRACE_API();
	struct vnpu_data_cache_obj *c;
	struct vnpu_stream_obj *s = NULL;
	struct dc_entry *e;
	int status;

	if (!host || !devptr || !size)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = cache_get(handle, &c);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (size > c->budget) {
		vnpu_obj_put(&c->obj);
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	}
	if (stream.handle && stream.handle != c->stream->obj.handle) {
		status = vnpu_stream_get(stream, &s);
		if (status == VNPU_SUCCESS && (!(c->flags & VNPU_DATA_CACHE_SHARED) ||
					       s->ctx != c->stream->ctx))
			status = VNPU_ERROR_INVALID_VALUE;
	} else {
		s = c->stream;
		atomic_fetch_add(&s->obj.refs, 1);
	}
	if (status != VNPU_SUCCESS) {
		if (s)
			vnpu_obj_put(&s->obj);
		vnpu_obj_put(&c->obj);
		return vnpu_set_status(status);
	}

	pthread_mutex_lock(&c->lock);
	e = lookup(c, key);
	if (e && e->size != size) {
		/* Same key, other data: reload. */
		unlink_entry(c, e);
		release_entry(c, e, s);
		e = NULL;
	}
	if (e) {
		e->freq++;
		e->prio = c->clock + (double)e->freq / (double)e->size;
		e->last_use = ++c->tick;
		c->st.hits++;
		c->st.bytes_hit += size;
		wait_for_load(e, s);
		add_user(e, s);
	} else {
		status = load(c, s, key, host, size, &e);
	}
	if (status == VNPU_SUCCESS)
		*devptr = e->devptr;
	pthread_mutex_unlock(&c->lock);
	vnpu_obj_put(&s->obj);
	vnpu_obj_put(&c->obj);
	return vnpu_set_status(status);
}

int vnpu_data_cache_invalidate(struct vnpu_data_cache handle, uint64_t key)
{
	VNPU_TRACE_API();
	struct vnpu_data_cache_obj *c;
	struct dc_entry *e;
	int status = cache_get(handle, &c);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	pthread_mutex_lock(&c->lock);
	e = lookup(c, key);
	if (e) {
		unlink_entry(c, e);
		release_entry(c, e, c->stream);
	}
	pthread_mutex_unlock(&c->lock);
	vnpu_obj_put(&c->obj);
	return VNPU_SUCCESS;
}

int vnpu_data_cache_get_stats(struct vnpu_data_cache handle, struct vnpu_data_cache_stats *st)
{
	struct vnpu_data_cache_obj *c;
	int status;

	if (!st)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = cache_get(handle, &c);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
	vnpu_obj_put(&c->obj);
	return VNPU_SUCCESS;
}
