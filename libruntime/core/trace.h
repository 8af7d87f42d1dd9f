/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * VNPU_TRACE=FILE: a Chrome Trace Event JSON of the process's device work.
 * Every hook is behind "if (vnpu_tracing)" and costs nothing otherwise.
 */
#ifndef VNPU_TRACE_H
#define VNPU_TRACE_H

#include <stdint.h>

#include "runtime.h"

extern int vnpu_tracing;

void vnpu_trace_init(void);
void vnpu_trace_finalize(void);
int64_t vnpu_trace_now(void);
/* A host API call of the calling thread from @t0 to now. */
void vnpu_trace_api(const char *name, int64_t t0);

/*
 * VNPU_TRACE_API(): the first statement of a public runtime function
 * makes the whole call, up to its return, a slice named after the function
 * on the calling thread's track. Calls made inside it (other API calls,
 * the submit) become slices nested in it.
 */
struct vnpu_trace_scope {
	const char *name;
	int64_t t0;		/* 0: tracing was off when the call began */
};

static inline void vnpu_trace_scope_end(struct vnpu_trace_scope *scope)
{
	if (scope->t0 && vnpu_tracing)
		vnpu_trace_api(scope->name, scope->t0);
}

#define VNPU_TRACE_API()                                                        \
	struct vnpu_trace_scope vnpu_trace_scope_                               \
		__attribute__((cleanup(vnpu_trace_scope_end))) = {              \
		__func__, vnpu_tracing ? vnpu_trace_now() : 0 }

/* A "memory" counter sample: the process's bytes on @ctx's device. */
void vnpu_trace_memory(struct vnpu_ctx *ctx);

/* Stream creation and release. */
void vnpu_trace_stream_init(struct vnpu_stream_obj *s);
void vnpu_trace_stream_fini(struct vnpu_stream_obj *s);
/*
 * Before a submit (under s->lock): returns @cmds wrapped in device
 * timestamps, with *count updated, or NULL to submit the job untraced.
 */
const struct drm_vnpu_cmd *vnpu_trace_wrap(struct vnpu_stream_obj *s,
					   const struct drm_vnpu_cmd *cmds, uint32_t *count);
/* After it: @point is the job's point, 0 if it was refused. */
void vnpu_trace_submitted(struct vnpu_stream_obj *s, const char *op, int wrapped,
			  uint64_t point, int64_t t0);
/* Emits the jobs that completed; points up to @done are finished. */
void vnpu_trace_collect(struct vnpu_stream_obj *s, uint64_t done);

#endif
