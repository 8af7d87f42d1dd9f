/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * mm/: memory management above the core. Owns the caching pools (pool.c
 * on the pure bookkeeping of pool_core.c), the static memory planner
 * (planner.c, its searches planner_search.c and planner_sweep.c) and the
 * device-resident data caches (data_cache.c). It may
 * call the core (core/runtime.h, core/trace.h) and nothing above it; the
 * graph engine (graph/) calls it. See Documentation/architecture.rst.
 */
#ifndef VNPU_MM_H
#define VNPU_MM_H

#include <stdint.h>

#include "core/runtime.h"

/*
 * Registers mm/'s hook in the core: a context's pools and data caches go
 * when its streams are drained. Called by ../init.c before vnpu_init().
 */
void vnpu_mm_register(void);

/* pool.c */
/* The point of the last job submitted to @s. */
uint64_t vnpu_stream_point(struct vnpu_stream_obj *s);
struct vnpu_pool_obj;
int vnpu_ctx_default_pool_obj(struct vnpu_ctx *ctx, struct vnpu_pool_obj **pool);
int vnpu_pool_obj_alloc(struct vnpu_pool_obj *pool, uint64_t size, struct vnpu_stream_obj *s,
			uint64_t *devptr);
int vnpu_pool_obj_free(struct vnpu_pool_obj *pool, uint64_t devptr, struct vnpu_stream_obj *s);
void vnpu_pool_obj_put(struct vnpu_pool_obj *pool);

/* data_cache.c */
void vnpu_data_caches_destroy(struct vnpu_data_cache_obj *list);

#endif
