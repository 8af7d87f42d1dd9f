/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Contexts: the application's private part of a device, and the current
 * context of a thread.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_CONTEXT_H
#define VNPU_CONTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct vnpu_context - a context handle
 * @handle: opaque; 0 is never a valid context
 *
 * A context is the application's private part of one device: its own
 * open file of the device, the memory allocated in it and (later) its
 * streams. Handles carry a generation: a destroyed context's handle is
 * rejected with VNPU_ERROR_INVALID_HANDLE, never reused.
 */
struct vnpu_context {
	uint64_t handle;
};

/**
 * vnpu_ctx_create() - create a context on a device
 * @device: logical device index, or VNPU_DEVICE_ANY for the device nearest
 *	to the calling thread's CPU (vnpu_device_choose_nearest())
 * @flags: reserved, must be 0
 * @ctx: out
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a bad @device, @flags
 * or NULL @ctx; VNPU_ERROR_PERMISSION_DENIED if the device cannot be
 * opened; VNPU_ERROR_OUT_OF_HOST_MEMORY; init state errors.
 */
int vnpu_ctx_create(uint32_t device, uint32_t flags, struct vnpu_context *ctx);

/**
 * vnpu_ctx_destroy() - destroy a context and everything in it
 * @ctx: the context
 * @flags: reserved, must be 0
 *
 * Frees every allocation of the context. Memory that queued device work
 * still uses returns to the device only when that work is done: the
 * driver holds it until then, so destroying without synchronizing is safe.
 * A call using @ctx concurrently in another thread completes first.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_HANDLE for a stale or unknown
 * handle; init state errors.
 */
int vnpu_ctx_destroy(struct vnpu_context ctx, uint32_t flags);

/**
 * vnpu_ctx_set_current() - make @ctx the calling thread's current context
 * @ctx: a context, or { 0 } to clear
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_ctx_set_current(struct vnpu_context ctx);

/**
 * vnpu_ctx_get_current() - the calling thread's current context
 * @ctx: out; { 0 } if none was set or it was destroyed since
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_VALUE for NULL @ctx.
 */
int vnpu_ctx_get_current(struct vnpu_context *ctx);

/**
 * vnpu_ctx_get_device() - the logical device of a context
 * @ctx: the context
 * @device: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_HANDLE or VNPU_ERROR_INVALID_VALUE.
 */
int vnpu_ctx_get_device(struct vnpu_context ctx, uint32_t *device);

/**
 * vnpu_ctx_synchronize_all() - wait for the work of every stream of a context
 * @ctx: the context
 * @timeout_ns: longest wait per stream in ns; VNPU_TIMEOUT_INFINITE
 *
 * Return: VNPU_SUCCESS, the first stream error, VNPU_ERROR_TIMEOUT,
 * VNPU_ERROR_NOT_PERMITTED inside a callback, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_ctx_synchronize_all(struct vnpu_context ctx, int64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_CONTEXT_H */
