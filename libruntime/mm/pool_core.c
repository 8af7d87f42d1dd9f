// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Caching pool bookkeeping (see pool_core.h). Free blocks sit in bins of
 * four per power of two; allocation takes the best fitting usable block of
 * the first bin that has one, splitting off the rest. Freed blocks merge
 * with free neighbours of the same segment when their fences agree (none,
 * or the same stream's); pc_poll_fences() merges the rest once done.
 * Small frees first go to a quick list (pool_core.h), fence and all,
 * which the slow paths flush into the bins.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_core.h"

#define MIB (1ULL << 20)

void pc_config_default(struct pc_config *cfg)
{
	cfg->release_threshold = UINT64_MAX;
	cfg->max_split_size = UINT64_MAX;
	cfg->segment_size = 20 * MIB;
	cfg->small_segment_size = 2 * MIB;
}

int pc_config_check(const struct pc_config *cfg)
{
	if (cfg->max_split_size < PC_SMALL_LIMIT)
		return VNPU_ERROR_INVALID_VALUE;
	if (cfg->small_segment_size < PC_SMALL_LIMIT || cfg->small_segment_size % PC_ROUND ||
	    cfg->small_segment_size > (1ULL << 40))
		return VNPU_ERROR_INVALID_VALUE;
	if (cfg->segment_size < PC_SMALL_LIMIT || cfg->segment_size % PC_ROUND ||
	    cfg->segment_size > (1ULL << 40))
		return VNPU_ERROR_INVALID_VALUE;
	return VNPU_SUCCESS;
}

static int parse_number(const char *v, size_t len, uint64_t unit, uint64_t *out)
{
	uint64_t n = 0;

	if (len == 3 && !strncmp(v, "max", 3)) {
		*out = UINT64_MAX;
		return 0;
	}
	if (!len)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9' || n > (UINT64_MAX - 9) / 10)
			return -1;
		n = n * 10 + (uint64_t)(v[i] - '0');
	}
	if (n > UINT64_MAX / unit)
		return -1;
	*out = n * unit;
	return 0;
}

int pc_config_parse(const char *text, struct pc_config *cfg)
{
	static const struct {
		const char *key;
		uint64_t unit;
		size_t offset;
	} keys[] = {
		{ "max_split_mb", MIB, offsetof(struct pc_config, max_split_size) },
		{ "release_threshold_mb", MIB, offsetof(struct pc_config, release_threshold) },
		{ "segment_mb", MIB, offsetof(struct pc_config, segment_size) },
		{ "small_segment_kb", 1024, offsetof(struct pc_config, small_segment_size) },
	};
	struct pc_config c = *cfg;
	const char *p = text;

	while (p && *p) {
		const char *end = strchr(p, ','), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int known = 0;

		eq = memchr(p, '=', len);
		if (!eq)
			return VNPU_ERROR_INVALID_CONFIG;
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			uint64_t v;

			if (strlen(keys[i].key) != (size_t)(eq - p) ||
			    strncmp(keys[i].key, p, (size_t)(eq - p)))
				continue;
			if (parse_number(eq + 1, len - (size_t)(eq - p) - 1, keys[i].unit, &v))
				return VNPU_ERROR_INVALID_CONFIG;
			*(uint64_t *)((char *)&c + keys[i].offset) = v;
			known = 1;
		}
		if (!known)
			return VNPU_ERROR_INVALID_CONFIG;
		p = end ? end + 1 : NULL;
	}
	if (pc_config_check(&c) != VNPU_SUCCESS)
		return VNPU_ERROR_INVALID_CONFIG;
	*cfg = c;
	return VNPU_SUCCESS;
}

static inline uint64_t round_size(uint64_t size)
{
	if (!size || size > (1ULL << 48))
		return 0;
	return (size + PC_ROUND - 1) & ~(PC_ROUND - 1);
}

uint64_t pc_round_size(uint64_t size)
{
	return round_size(size);
}

static int size_bin(uint64_t size)
{
	int msb = 63 - __builtin_clzll(size);

	if (msb < 9)
		return 0;
	return (msb - 9) * 4 + (int)((size >> (msb - 2)) & 3);
}

static int kind_of(const struct pc_pool *p, uint64_t rounded)
{
	if (rounded <= PC_SMALL_LIMIT)
		return PC_SMALL;
	return rounded > p->cfg.max_split_size ? PC_OVERSIZE : PC_LARGE;
}

/* --- fences ------------------------------------------------------------- */

static void fence_set(struct pc_pool *p, struct pc_block *b, void *stream, uint64_t point)
{
	b->fence_stream = stream;
	b->fence_point = point;
	if (stream && p->prov.stream_get)
		p->prov.stream_get(p->prov.arg, stream);
}

static void fence_clear(struct pc_pool *p, struct pc_block *b)
{
	if (b->fence_stream && p->prov.stream_put)
		p->prov.stream_put(p->prov.arg, b->fence_stream);
	b->fence_stream = NULL;
	b->fence_point = 0;
}

/* Whether work on @stream (NULL: anywhere) may use free block @b now. */
static int usable(struct pc_pool *p, struct pc_block *b, void *stream)
{
	if (!b->fence_stream)
		return 1;
	if (stream && b->fence_stream == stream)
		return 1;	/* stream order: the earlier work runs first */
	if (p->prov.fence_done(p->prov.arg, b->fence_stream, b->fence_point)) {
		fence_clear(p, b);
		return 1;
	}
	return 0;
}

/* --- bins and hash -------------------------------------------------------- */

static void bin_insert(struct pc_pool *p, struct pc_block *b)
{
	struct pc_block **head = &p->bins[b->seg->kind][size_bin(b->size)];

	b->bin = size_bin(b->size);
	b->lprev = NULL;
	b->lnext = *head;
	if (*head)
		(*head)->lprev = b;
	*head = b;
}

static void bin_remove(struct pc_pool *p, struct pc_block *b)
{
	if (b->lprev)
		b->lprev->lnext = b->lnext;
	else
		p->bins[b->seg->kind][b->bin] = b->lnext;
	if (b->lnext)
		b->lnext->lprev = b->lprev;
	b->lprev = b->lnext = NULL;
	b->bin = -1;
}

static size_t hash_index(const struct pc_pool *p, uint64_t addr)
{
	return (size_t)(((addr / PC_ROUND) * 0x9E3779B97F4A7C15ULL) >> 20) & (p->hash_size - 1);
}

static int hash_grow(struct pc_pool *p)
{
	size_t n = p->hash_size ? p->hash_size * 2 : 256;
	struct pc_block **h = calloc(n, sizeof(*h));
	struct pc_block **old = p->hash;
	size_t old_n = p->hash_size;

	if (!h)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	p->hash = h;
	p->hash_size = n;
	for (size_t i = 0; i < old_n; i++) {
		struct pc_block *b = old[i];

		while (b) {
			struct pc_block *next = b->hnext;
			size_t k = hash_index(p, b->addr);

			b->hnext = h[k];
			h[k] = b;
			b = next;
		}
	}
	free(old);
	return VNPU_SUCCESS;
}

static void hash_insert(struct pc_pool *p, struct pc_block *b)
{
	size_t k = hash_index(p, b->addr);

	b->hnext = p->hash[k];
	p->hash[k] = b;
	p->hash_count++;
}

struct pc_block *pc_find(struct pc_pool *p, uint64_t addr)
{
	struct pc_block *b;

	if (!p->hash_size)
		return NULL;
	for (b = p->hash[hash_index(p, addr)]; b; b = b->hnext)
		if (b->addr == addr)
			return b;
	return NULL;
}

static struct pc_block *hash_take(struct pc_pool *p, uint64_t addr)
{
	struct pc_block **link;

	if (!p->hash_size)
		return NULL;
	for (link = &p->hash[hash_index(p, addr)]; *link; link = &(*link)->hnext) {
		struct pc_block *b = *link;

		if (b->addr == addr) {
			*link = b->hnext;
			b->hnext = NULL;
			p->hash_count--;
			return b;
		}
	}
	return NULL;
}

/* --- segments --------------------------------------------------------------- */

static void quick_flush(struct pc_pool *p);
static struct pc_block *coalesce(struct pc_pool *p, struct pc_block *b);

static void seg_release(struct pc_pool *p, struct pc_segment *seg)
{
	struct pc_block *b = seg->first;

	bin_remove(p, b);
	fence_clear(p, b);
	free(b);
	p->prov.seg_free(p->prov.arg, seg->base, seg->size);
	if (seg->prev)
		seg->prev->next = seg->next;
	else
		p->segments = seg->next;
	if (seg->next)
		seg->next->prev = seg->prev;
	p->c.reserved -= seg->size;
	p->c.num_segments--;
	p->c.num_segment_frees++;
	free(seg);
}

static int seg_is_free(const struct pc_segment *seg)
{
	return seg->first->free && !seg->first->next && seg->first->bin != PC_BIN_QUICK;
}

/*
 * Releases entirely free segments while more than @keep bytes are reserved
 * (@keep_cached: while more than @keep cached bytes). The driver keeps a
 * released segment's memory for work still using it, so fences do not matter.
 */
static void release_free_segments(struct pc_pool *p, uint64_t keep, int keep_cached)
{
	struct pc_segment *seg = p->segments, *next;

	for (; seg; seg = next) {
		uint64_t amount = keep_cached ? p->c.reserved - p->c.allocated : p->c.reserved;

		next = seg->next;
		if (amount <= keep)
			break;
		if (seg_is_free(seg))
			seg_release(p, seg);
	}
}

void pc_trim(struct pc_pool *p, uint64_t keep)
{
	quick_flush(p);
	pc_poll_fences(p);
	release_free_segments(p, keep, 0);
}

static int seg_create(struct pc_pool *p, uint64_t rounded, int kind, struct pc_block **out)
{
	struct pc_segment *seg = calloc(1, sizeof(*seg));
	struct pc_block *b = calloc(1, sizeof(*b));
	uint64_t size;
	int status;

	if (!seg || !b) {
		free(seg);
		free(b);
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	}
	if (kind == PC_SMALL)
		size = p->cfg.small_segment_size;
	else if (kind == PC_LARGE && rounded <= PC_LARGE_LIMIT && rounded <= p->cfg.segment_size)
		size = p->cfg.segment_size;
	else
		size = (rounded + PC_HUGE_ROUND - 1) & ~(PC_HUGE_ROUND - 1);
	if (size < rounded)
		size = rounded;
	status = p->prov.seg_alloc(p->prov.arg, size, &seg->base);
	if ((status == VNPU_ERROR_OUT_OF_DEVICE_MEMORY || status == VNPU_ERROR_QUOTA_EXCEEDED) &&
	    kind == PC_LARGE && size > ((rounded + PC_HUGE_ROUND - 1) & ~(PC_HUGE_ROUND - 1))) {
		/* No room for a whole large segment: one just big enough. */
		size = (rounded + PC_HUGE_ROUND - 1) & ~(PC_HUGE_ROUND - 1);
		status = p->prov.seg_alloc(p->prov.arg, size, &seg->base);
	}
	if (status != VNPU_SUCCESS) {
		free(seg);
		free(b);
		return status;
	}
	seg->size = size;
	seg->kind = kind;
	seg->id = ++p->next_segment_id;
	seg->first = b;
	seg->next = p->segments;
	if (p->segments)
		p->segments->prev = seg;
	p->segments = seg;
	b->addr = seg->base;
	b->size = size;
	b->seg = seg;
	b->free = 1;
	bin_insert(p, b);
	p->c.reserved += size;
	p->c.num_segments++;
	p->c.num_segment_allocs++;
	if (p->c.reserved > p->c.peak_reserved)
		p->c.peak_reserved = p->c.reserved;
	*out = b;
	return VNPU_SUCCESS;
}

/* --- quick lists ------------------------------------------------------------ */

/* Returns every quick-listed block to the bins, merged with its neighbours. */
static void quick_flush(struct pc_pool *p)
{
	if (!p->quick_bytes)
		return;
	for (int bin = 0; bin < PC_NUM_BINS; bin++) {
		while (p->quick[bin]) {
			struct pc_block *b = p->quick[bin];

			p->quick[bin] = b->lnext;
			b->lnext = NULL;
			b->bin = -1;
			bin_insert(p, coalesce(p, b));
		}
		p->quick_count[bin] = 0;
	}
	p->quick_bytes = 0;
}

/*
 * A quick-listed block of exactly @rounded bytes that work on @stream may
 * use now without polling a fence (none, or @stream's own), unlinked, or
 * NULL. At most PC_QUICK_DEPTH blocks are looked at. Inlined: it is most
 * of pc_alloc()'s fast path.
 */
static inline __attribute__((always_inline)) struct pc_block *
quick_take(struct pc_pool *p, uint64_t rounded, void *stream)
{
	int bin = size_bin(rounded);

	for (struct pc_block **link = &p->quick[bin]; *link; link = &(*link)->lnext) {
		struct pc_block *b = *link;

		if (b->size != rounded || (b->fence_stream && b->fence_stream != stream))
			continue;
		*link = b->lnext;
		b->lnext = NULL;
		b->bin = -1;
		p->quick_count[bin]--;
		p->quick_bytes -= b->size;
		return b;
	}
	return NULL;
}

/*
 * Clears the fences that are done of the quick-listed blocks of exactly
 * @rounded bytes (at most PC_QUICK_DEPTH polls); returns whether it
 * cleared one. Blocks freed on a stream whose work is long done would
 * otherwise stay passed over by every other stream until a slow path
 * flushed them.
 */
static int quick_poll(struct pc_pool *p, uint64_t rounded)
{
	int cleared = 0;

	for (struct pc_block *b = p->quick[size_bin(rounded)]; b; b = b->lnext) {
		if (b->size == rounded && b->fence_stream &&
		    p->prov.fence_done(p->prov.arg, b->fence_stream, b->fence_point)) {
			fence_clear(p, b);
			cleared = 1;
		}
	}
	return cleared;
}

/*
 * Keeps freed block @b whole, with its fence, for the next request of its
 * size, if it may.
 */
static int quick_put(struct pc_pool *p, struct pc_block *b)
{
	int bin = size_bin(b->size);

	if (b->seg->kind != PC_SMALL || p->quick_count[bin] >= PC_QUICK_DEPTH ||
	    p->quick_bytes + b->size > PC_QUICK_BYTES)
		return 0;
	b->bin = PC_BIN_QUICK;
	b->lprev = NULL;
	b->lnext = p->quick[bin];
	p->quick[bin] = b;
	p->quick_count[bin]++;
	p->quick_bytes += b->size;
	return 1;
}

/* --- allocation ------------------------------------------------------------- */

static struct pc_block *find_block(struct pc_pool *p, uint64_t rounded, int kind, void *stream)
{
	for (int bin = size_bin(rounded); bin < PC_NUM_BINS; bin++) {
		struct pc_block *best = NULL;

		for (struct pc_block *b = p->bins[kind][bin]; b; b = b->lnext) {
			if (b->size < rounded || (best && b->size > best->size))
				continue;
			/*
			 * Of two equal fits, the one @stream itself fenced: that
			 * leaves unfenced memory to the other streams.
			 */
			if (best && b->size == best->size &&
			    (!stream || b->fence_stream != stream || best->fence_stream == stream))
				continue;
			if (kind == PC_OVERSIZE && b->size - rounded > PC_OVERSIZE_SLACK)
				continue;
			if (!usable(p, b, stream))
				continue;
			best = b;
			if (b->size == rounded && (!stream || b->fence_stream == stream))
				break;
		}
		if (best)
			return best;
	}
	return NULL;
}

/*
 * Hands out free block @b, out of every list, for @size bytes on @stream.
 * A fence @b still has is @stream's own (stream order makes it safe): its
 * reference on the stream becomes the allocation's; else the one
 * pc_alloc_ref() was given, or a new one.
 */
static inline void mark_allocated(struct pc_pool *p, struct pc_block *b, uint64_t size,
				  void *stream)
{
	b->free = 0;
	b->requested = size;
	b->alloc_stream = stream;
	if (b->fence_stream) {
		b->fence_stream = NULL;
		b->fence_point = 0;
	} else if (stream && stream == p->given_stream) {
		p->given_stream = NULL;
	} else if (stream && p->prov.stream_get) {
		p->prov.stream_get(p->prov.arg, stream);
	}
	hash_insert(p, b);
	p->c.allocated += b->size;
	p->c.requested += size;
	p->c.active_blocks++;
	p->c.num_allocs++;
	if (p->c.allocated > p->c.peak_allocated)
		p->c.peak_allocated = p->c.allocated;
}

/* Hands out quick-listed block @b (whole, fenced by @stream or not at all): no split, no wait. */
static inline int quick_hit(struct pc_pool *p, struct pc_block *b, uint64_t size, void *stream,
			    uint64_t *addr)
{
	p->c.quick_hits++;
	p->c.cache_hits++;
	mark_allocated(p, b, size, stream);
	*addr = b->addr;
	return VNPU_SUCCESS;
}

/* Takes free block @b for a request of @rounded bytes, splitting off the rest. */
static int take_block(struct pc_pool *p, struct pc_block *b, uint64_t rounded, uint64_t size,
		      void *stream)
{
	uint64_t rest = b->size - rounded;
	int split = b->seg->kind == PC_SMALL ? rest >= PC_ROUND
		  : b->seg->kind == PC_LARGE ? rest >= PC_LARGE_MIN_SPLIT : 0;

	if (split) {
		struct pc_block *r = calloc(1, sizeof(*r));

		if (!r)
			return VNPU_ERROR_OUT_OF_HOST_MEMORY;
		r->addr = b->addr + rounded;
		r->size = rest;
		r->seg = b->seg;
		r->free = 1;
		r->prev = b;
		r->next = b->next;
		if (b->next)
			b->next->prev = r;
		b->next = r;
		/* The rest stays behind the same fence. */
		fence_set(p, r, b->fence_stream, b->fence_point);
		bin_remove(p, b);
		b->size = rounded;
		bin_insert(p, r);
	} else if (b->bin >= 0) {
		bin_remove(p, b);
	}
	/* Usable by @stream: either no fence, done, or @stream's own (ordered). */
	fence_clear(p, b);
	mark_allocated(p, b, size, stream);
	return VNPU_SUCCESS;
}

static int has_pending(const struct pc_pool *p)
{
	for (const struct pc_segment *seg = p->segments; seg; seg = seg->next)
		for (const struct pc_block *b = seg->first; b; b = b->next)
			if (b->free && b->fence_stream)
				return 1;
	return 0;
}

/* Waits for every fence of a free block (the OOM path), then merges. */
static void wait_all_fences(struct pc_pool *p)
{
	for (struct pc_segment *seg = p->segments; seg; seg = seg->next) {
		for (struct pc_block *b = seg->first; b; b = b->next) {
			if (!b->free || !b->fence_stream)
				continue;
			if (!p->prov.fence_done(p->prov.arg, b->fence_stream, b->fence_point)) {
				p->prov.fence_wait(p->prov.arg, b->fence_stream, b->fence_point);
				p->c.fence_waits++;
			}
		}
	}
	pc_poll_fences(p);
}

static int is_oom(int status)
{
	return status == VNPU_ERROR_OUT_OF_DEVICE_MEMORY || status == VNPU_ERROR_QUOTA_EXCEEDED;
}

/* pc_alloc() when no quick-listed block fits: the bins, then a new segment. */
static __attribute__((noinline)) int alloc_slow(struct pc_pool *p, uint64_t size,
						uint64_t rounded, int kind, void *stream,
						uint64_t *addr)
{
	struct pc_block *b;
	int status;

	/* Quick-listed blocks of the size whose fences are done, first. */
	if (kind == PC_SMALL && quick_poll(p, rounded)) {
		b = quick_take(p, rounded, stream);
		if (b)
			return quick_hit(p, b, size, stream, addr);
	}
	b = find_block(p, rounded, kind, stream);

	if (!b && p->quick_bytes) {
		/* The quick lists may hold what merges into a fit. */
		quick_flush(p);
		b = find_block(p, rounded, kind, stream);
	}
	if (b) {
		p->c.cache_hits++;
	} else {
		status = seg_create(p, rounded, kind, &b);
		if (is_oom(status)) {
			/* Out of memory: first what pending work holds, then the cache. */
			p->c.oom_retries++;
			if (has_pending(p)) {
				wait_all_fences(p);
				b = find_block(p, rounded, kind, stream);
			}
			if (!b) {
				quick_flush(p);
				release_free_segments(p, 0, 0);
				status = seg_create(p, rounded, kind, &b);
				if (status != VNPU_SUCCESS)
					p->c.oom_failures++;
			} else {
				status = VNPU_SUCCESS;
			}
		}
		if (status != VNPU_SUCCESS)
			return status;
	}
	status = take_block(p, b, rounded, size, stream);
	if (status == VNPU_SUCCESS)
		*addr = b->addr;
	return status;
}

int pc_alloc(struct pc_pool *p, uint64_t size, void *stream, uint64_t *addr)
{
	uint64_t rounded = round_size(size);
	struct pc_block *b;
	int kind;

	if (!rounded || !addr)
		return VNPU_ERROR_INVALID_VALUE;
	/* Room in the hash first, so that nothing taken has to be put back. */
	if (p->hash_count >= p->hash_size && hash_grow(p) != VNPU_SUCCESS)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	kind = kind_of(p, rounded);
	b = kind == PC_SMALL ? quick_take(p, rounded, stream) : NULL;
	if (!b)
		return alloc_slow(p, size, rounded, kind, stream, addr);
	return quick_hit(p, b, size, stream, addr);
}

int pc_alloc_ref(struct pc_pool *p, uint64_t size, void *stream, uint64_t *addr)
{
	int status;

	p->given_stream = stream;
	status = pc_alloc(p, size, stream, addr);
	if (p->given_stream && p->prov.stream_put)
		p->prov.stream_put(p->prov.arg, p->given_stream);
	p->given_stream = NULL;
	return status;
}

/*
 * Whether free blocks @a and @b may become one: neither is fenced, or both
 * by the same stream. A fenced block does not swallow an unfenced one, which
 * would hide that memory from the other streams until the fence is done.
 */
static int mergeable(const struct pc_block *a, const struct pc_block *b)
{
	return a && b && a->free && b->free && a->fence_stream == b->fence_stream &&
	       a->bin != PC_BIN_QUICK && b->bin != PC_BIN_QUICK;
}

/* Merges free block @b into its free predecessor @a (both out of the bins). */
static void merge_into(struct pc_pool *p, struct pc_block *a, struct pc_block *b)
{
	if (b->fence_stream) {
		if (!a->fence_stream) {
			a->fence_stream = b->fence_stream;
			a->fence_point = b->fence_point;
			b->fence_stream = NULL;
		} else if (b->fence_point > a->fence_point) {
			a->fence_point = b->fence_point;
		}
		fence_clear(p, b);
	}
	a->size += b->size;
	a->next = b->next;
	if (b->next)
		b->next->prev = a;
	free(b);
}

/* Merges free block @b (out of the bins) with its free neighbours; returns the result. */
static struct pc_block *coalesce(struct pc_pool *p, struct pc_block *b)
{
	if (mergeable(b, b->next)) {
		bin_remove(p, b->next);
		merge_into(p, b, b->next);
	}
	if (mergeable(b->prev, b)) {
		struct pc_block *a = b->prev;

		bin_remove(p, a);
		merge_into(p, a, b);
		b = a;
	}
	return b;
}

struct pc_block *pc_take(struct pc_pool *p, uint64_t addr)
{
	return hash_take(p, addr);
}

int pc_free(struct pc_pool *p, uint64_t addr, void *stream, uint64_t point)
{
	struct pc_block *b = pc_take(p, addr);

	if (!b) {
		p->c.bad_frees++;
		return VNPU_ERROR_INVALID_VALUE;
	}
	pc_free_block(p, b, stream, point);
	return VNPU_SUCCESS;
}

void pc_free_block(struct pc_pool *p, struct pc_block *b, void *stream, uint64_t point)
{
	if (stream && point && stream == b->alloc_stream) {
		/* The allocation's reference on the stream becomes the fence's. */
		b->fence_stream = stream;
		b->fence_point = point;
	} else {
		/* The fence first: @stream may be the allocating stream, referenced only by @b. */
		if (stream && point)
			fence_set(p, b, stream, point);
		if (b->alloc_stream && p->prov.stream_put)
			p->prov.stream_put(p->prov.arg, b->alloc_stream);
	}
	b->alloc_stream = NULL;
	p->c.allocated -= b->size;
	p->c.requested -= b->requested;
	p->c.active_blocks--;
	p->c.num_frees++;
	b->free = 1;
	b->requested = 0;
	if (!quick_put(p, b))
		bin_insert(p, coalesce(p, b));
	if (p->c.reserved - p->c.allocated > p->cfg.release_threshold) {
		quick_flush(p);
		release_free_segments(p, p->cfg.release_threshold, 1);
	}
}

void pc_poll_fences(struct pc_pool *p)
{
	for (struct pc_segment *seg = p->segments; seg; seg = seg->next) {
		struct pc_block *b = seg->first;

		while (b) {
			if (!b->free || !b->fence_stream ||
			    !p->prov.fence_done(p->prov.arg, b->fence_stream, b->fence_point)) {
				b = b->next;
				continue;
			}
			fence_clear(p, b);
			if (b->bin == PC_BIN_QUICK) {
				/* Stays whole in its quick list, now for any stream. */
				b = b->next;
				continue;
			}
			bin_remove(p, b);
			b = coalesce(p, b);
			bin_insert(p, b);
			/* Again: the merged block may carry a neighbour's fence. */
		}
	}
}

void pc_usage(struct pc_pool *p, struct pc_usage *u)
{
	/* Merged, so that the largest free block is the real one. */
	quick_flush(p);
	memset(u, 0, sizeof(*u));
	for (struct pc_segment *seg = p->segments; seg; seg = seg->next) {
		for (struct pc_block *b = seg->first; b; b = b->next) {
			if (!b->free)
				continue;
			u->free_blocks++;
			u->free_bytes += b->size;
			if (b->fence_stream) {
				u->pending_blocks++;
				u->pending_bytes += b->size;
			}
			if (b->size > u->largest_free)
				u->largest_free = b->size;
		}
	}
}

int pc_init(struct pc_pool *p, const struct pc_config *cfg, const struct pc_provider *prov)
{
	memset(p, 0, sizeof(*p));
	if (pc_config_check(cfg) != VNPU_SUCCESS)
		return VNPU_ERROR_INVALID_VALUE;
	p->cfg = *cfg;
	p->prov = *prov;
	return hash_grow(p);
}

void pc_destroy(struct pc_pool *p)
{
	struct pc_segment *seg = p->segments;

	while (seg) {
		struct pc_segment *next = seg->next;
		struct pc_block *b = seg->first;

		while (b) {
			struct pc_block *bn = b->next;

			fence_clear(p, b);
			if (b->alloc_stream && p->prov.stream_put)
				p->prov.stream_put(p->prov.arg, b->alloc_stream);
			free(b);
			b = bn;
		}
		p->prov.seg_free(p->prov.arg, seg->base, seg->size);
		free(seg);
		seg = next;
	}
	p->segments = NULL;
	free(p->hash);
	p->hash = NULL;
	p->hash_size = 0;
	p->hash_count = 0;
	memset(p->bins, 0, sizeof(p->bins));
	memset(p->quick, 0, sizeof(p->quick));
	memset(p->quick_count, 0, sizeof(p->quick_count));
	p->quick_bytes = 0;
	p->c.reserved = 0;
	p->c.allocated = 0;
	p->c.requested = 0;
	p->c.active_blocks = 0;
	p->c.num_segments = 0;
}

/* --- snapshot ------------------------------------------------------------------ */

struct out {
	char *buf;
	size_t size;
	size_t len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->len < o->size ? o->buf + o->len : NULL,
		      o->len < o->size ? o->size - o->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static const char *const kind_names[PC_KINDS] = { "small", "large", "oversize" };

/* A limit as JSON: null for none. */
static const char *cfg_json(uint64_t v, char *buf, size_t len)
{
	if (v == UINT64_MAX)
		return "null";
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

size_t pc_snapshot_json(struct pc_pool *p, char *buf, size_t size)
{
	struct out o = { .buf = buf, .size = size };
	struct pc_usage u;
	const char *sep = "";
	char n1[24], n2[24];

	pc_usage(p, &u);
	put(&o, "{\"reserved\":%" PRIu64 ",\"allocated\":%" PRIu64 ",\"requested\":%" PRIu64
	    ",\"free\":%" PRIu64 ",\"pending\":%" PRIu64 ",\"largest_free\":%" PRIu64
	    ",\"peak_allocated\":%" PRIu64 ",\"peak_reserved\":%" PRIu64,
	    p->c.reserved, p->c.allocated, p->c.requested, u.free_bytes, u.pending_bytes,
	    u.largest_free, p->c.peak_allocated, p->c.peak_reserved);
	put(&o, ",\"config\":{\"release_threshold\":%s,\"max_split_size\":%s"
	    ",\"segment_size\":%" PRIu64 ",\"small_segment_size\":%" PRIu64 "}",
	    cfg_json(p->cfg.release_threshold, n1, sizeof(n1)),
	    cfg_json(p->cfg.max_split_size, n2, sizeof(n2)),
	    p->cfg.segment_size, p->cfg.small_segment_size);
	put(&o, ",\"segments\":[");
	for (struct pc_segment *seg = p->segments; seg; seg = seg->next) {
		const char *bsep = "";

		put(&o, "%s{\"id\":%" PRIu64 ",\"address\":\"0x%" PRIx64 "\",\"size\":%" PRIu64
		    ",\"kind\":\"%s\",\"blocks\":[", sep, seg->id, seg->base, seg->size,
		    kind_names[seg->kind]);
		for (struct pc_block *b = seg->first; b; b = b->next) {
			void *st = b->free ? b->fence_stream : b->alloc_stream;

			put(&o, "%s{\"address\":\"0x%" PRIx64 "\",\"size\":%" PRIu64
			    ",\"state\":\"%s\"", bsep, b->addr, b->size,
			    !b->free ? "allocated" : b->fence_stream ? "pending" : "free");
			if (!b->free)
				put(&o, ",\"requested\":%" PRIu64, b->requested);
			if (st)
				put(&o, ",\"stream\":\"0x%" PRIx64 "\"",
				    p->prov.stream_id ? p->prov.stream_id(p->prov.arg, st)
						      : (uint64_t)(uintptr_t)st);
			if (b->free && b->fence_stream)
				put(&o, ",\"fence_point\":%" PRIu64, b->fence_point);
			put(&o, "}");
			bsep = ",";
		}
		put(&o, "]}");
		sep = ",";
	}
	put(&o, "]}");
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return o.len;
}
