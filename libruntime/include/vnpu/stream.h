/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Streams: device work in order, sticky errors, batches, host callbacks.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_STREAM_H
#define VNPU_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stream priorities; work of a higher-priority stream is started first. */
#define VNPU_PRIORITY_LOW (-1)
#define VNPU_PRIORITY_NORMAL 0
#define VNPU_PRIORITY_HIGH 1

/* vnpu_stream_create(): run the stream's work on a copy engine. */
#define VNPU_STREAM_COPY 0x1u
#define VNPU_STREAM_FLAGS VNPU_STREAM_COPY

/* vnpu_stream_destroy(), vnpu_ctx_destroy(): do not wait for queued work. */
#define VNPU_DESTROY_ABORT 0x1u

/* Wait forever, for the timeout_ns arguments. */
#define VNPU_TIMEOUT_INFINITE (-1)

/**
 * struct vnpu_stream - a stream handle
 * @handle: opaque; 0 is never a valid stream
 *
 * A stream runs its work in the order it was submitted. Several threads
 * may submit to one stream: each call is one unit, and units run in the
 * order the calls entered the stream (calls serialize on the stream).
 */
struct vnpu_stream {
	uint64_t handle;
};

/**
 * vnpu_stream_create() - create a stream in a context
 * @ctx: the context
 * @priority: VNPU_PRIORITY_LOW, _NORMAL or _HIGH; anything else is an error
 * @flags: 0 or VNPU_STREAM_COPY
 * @stream: out
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a bad @priority,
 * @flags or NULL @stream; VNPU_ERROR_TOO_MANY_STREAMS when the process
 * reached the driver's queue limit; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_create(struct vnpu_context ctx, int priority, uint32_t flags,
		       struct vnpu_stream *stream);

/**
 * vnpu_ctx_default_stream() - the context's default stream
 * @ctx: the context
 * @stream: out; created on first use at normal priority
 *
 * The default stream is an ordinary stream (no implicit barriers with
 * other streams); synchronous copies run on it. It cannot be destroyed
 * other than with its context.
 *
 * Return: VNPU_SUCCESS or the errors of vnpu_stream_create().
 */
int vnpu_ctx_default_stream(struct vnpu_context ctx, struct vnpu_stream *stream);

/**
 * vnpu_stream_destroy() - destroy a stream
 * @stream: the stream
 * @flags: 0 waits for the stream's work first; VNPU_DESTROY_ABORT does not
 *
 * Either way nothing is freed while the device still uses it.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for bad @flags or the
 * default stream; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_destroy(struct vnpu_stream stream, uint32_t flags);

/**
 * vnpu_stream_synchronize() - wait for all work submitted to a stream
 * @stream: the stream
 * @timeout_ns: longest wait in ns; 0 polls; VNPU_TIMEOUT_INFINITE
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_TIMEOUT (the work goes on); the
 * stream's sticky error (see vnpu_stream_get_error()); VNPU_ERROR_NOT_PERMITTED
 * from inside a host callback; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_synchronize(struct vnpu_stream stream, int64_t timeout_ns);

/**
 * vnpu_stream_query() - whether a stream's work is done
 * @stream: the stream
 *
 * Return: VNPU_SUCCESS when done, VNPU_NOT_READY when not (not recorded as
 * an error), or the stream's error.
 */
int vnpu_stream_query(struct vnpu_stream stream);

/**
 * struct vnpu_stream_error - the sticky error of a stream
 * @status: VNPU_SUCCESS, or the first asynchronous failure
 * @point: sequence number of the failed unit of work (1 = first submitted)
 * @operation: the runtime call that submitted it, e.g. "vnpu_memcpy_htod_async"
 *
 * Once work on a stream fails, every later synchronize of the stream and
 * every later submission to it returns @status; destroy the stream (or
 * its context) to go on.
 */
struct vnpu_stream_error {
	int status;
	uint64_t point;
	const char *operation;
};

/**
 * vnpu_stream_get_error() - read a stream's sticky error
 * @stream: the stream
 * @error: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_get_error(struct vnpu_stream stream, struct vnpu_stream_error *error);

/**
 * vnpu_stream_get_context() - the context a stream belongs to
 * @stream: the stream
 * @ctx: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_get_context(struct vnpu_stream stream, struct vnpu_context *ctx);

/**
 * vnpu_stream_begin_batch() - gather the stream's next operations into one job
 * @stream: the stream
 *
 * Until vnpu_stream_end_batch(), copies, fills and launches on @stream are
 * collected and submitted to the driver together, as one job (or several
 * of DRM_VNPU_MAX_CMDS commands each), which saves a system call and a
 * scheduler round trip per operation. Anything that must see the work in
 * the driver — synchronize, query, recording an event, adding a callback,
 * a copy into pageable memory — submits what was gathered first. Other
 * threads' operations on the stream join the batch too.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when a batch is already
 * open; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_begin_batch(struct vnpu_stream stream);

/**
 * vnpu_stream_end_batch() - submit what the batch gathered and close it
 * @stream: the stream
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when no batch is open; the
 * submission's error; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_end_batch(struct vnpu_stream stream);

/**
 * typedef-free callback type: void fn(void *user_data, int status)
 *
 * vnpu_stream_add_callback() - run a host function when a stream reaches this point
 * @stream: the stream
 * @fn: called with @user_data and the stream's status (VNPU_SUCCESS or its
 *	sticky error) once all earlier work of the stream is done
 * @user_data: passed to @fn
 *
 * Callbacks of a context run on one runtime thread, in the order they were
 * added per stream. They never hold the device: later device work of the
 * stream does not wait for the callback. Runtime calls that would block
 * (synchronize) return VNPU_ERROR_NOT_PERMITTED inside a callback; calls
 * that only submit work are allowed.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a NULL @fn;
 * VNPU_ERROR_INVALID_HANDLE; VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_stream_add_callback(struct vnpu_stream stream, void (*fn)(void *user_data, int status),
			     void *user_data);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_STREAM_H */
