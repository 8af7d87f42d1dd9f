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
