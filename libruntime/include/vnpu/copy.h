/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Copies and fills in stream order, and their synchronous forms.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_COPY_H
#define VNPU_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "context.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * vnpu_memcpy_htod_async() - copy host memory to device memory, in stream order
 * @stream: the stream
 * @dst: device address inside one vnpu_malloc() allocation of the stream's context
 * @src: host memory: a vnpu_malloc_host() allocation of the context (copied
 *	by the device) or any other host memory (copied into a pinned staging
 *	buffer before the call returns, so @src may be reused at once)
 * @size: bytes, > 0
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL @src, size 0 or
 * a range outside the context's allocations; the stream's sticky error;
 * VNPU_ERROR_OUT_OF_HOST_MEMORY; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_memcpy_htod_async(struct vnpu_stream stream, uint64_t dst, const void *src,
			   size_t size);

/**
 * vnpu_memcpy_dtoh_async() - copy device memory to host memory, in stream order
 * @stream: the stream
 * @dst: host memory: a vnpu_malloc_host() allocation of the context, which
 *	the device writes when the stream gets there (the call does not wait),
 *	or any other host memory, filled through a pinned staging buffer: then
 *	the call waits for the stream to reach the copy, so the data is in
 *	@dst when it returns (use host-pinned memory for copies that overlap)
 * @src: device address inside one allocation of the context
 * @size: bytes, > 0
 *
 * Return: as vnpu_memcpy_htod_async().
 */
int vnpu_memcpy_dtoh_async(struct vnpu_stream stream, void *dst, uint64_t src, size_t size);

/**
 * vnpu_memcpy_dtod_async() - copy between device allocations, in stream order
 * @stream: the stream
 * @dst: device address inside one allocation of the context
 * @src: device address inside one allocation of the context
 * @size: bytes, > 0
 *
 * Return: as vnpu_memcpy_htod_async().
 */
int vnpu_memcpy_dtod_async(struct vnpu_stream stream, uint64_t dst, uint64_t src, size_t size);

/**
 * vnpu_memset_d32_async() - fill device memory with a 32-bit value
 * @stream: the stream
 * @dst: device address, 4-byte aligned, inside one allocation of the context
 * @value: the value written to every 32-bit word
 * @count: number of 32-bit words, > 0
 *
 * Return: as vnpu_memcpy_htod_async().
 */
int vnpu_memset_d32_async(struct vnpu_stream stream, uint64_t dst, uint32_t value,
			  size_t count);

/**
 * vnpu_memcpy_htod() - synchronous vnpu_memcpy_htod_async() on the default stream
 * @ctx: the context
 * @dst: as for vnpu_memcpy_htod_async()
 * @src: as for vnpu_memcpy_htod_async()
 * @size: as for vnpu_memcpy_htod_async()
 *
 * Returns once the copy is done.
 *
 * Return: as vnpu_memcpy_htod_async(), plus the errors of vnpu_stream_synchronize().
 */
int vnpu_memcpy_htod(struct vnpu_context ctx, uint64_t dst, const void *src, size_t size);

/** vnpu_memcpy_dtoh() - synchronous vnpu_memcpy_dtoh_async() on the default stream */
int vnpu_memcpy_dtoh(struct vnpu_context ctx, void *dst, uint64_t src, size_t size);

/** vnpu_memcpy_dtod() - synchronous vnpu_memcpy_dtod_async() on the default stream */
int vnpu_memcpy_dtod(struct vnpu_context ctx, uint64_t dst, uint64_t src, size_t size);

/** vnpu_memset_d32() - synchronous vnpu_memset_d32_async() on the default stream */
int vnpu_memset_d32(struct vnpu_context ctx, uint64_t dst, uint32_t value, size_t count);

/**
 * vnpu_memcpy_peer_async() - copy from memory of another context, in stream order
 * @stream: the stream; @dst lies in its context
 * @dst: device address inside one allocation of the stream's context
 * @src_ctx: the context owning @src, on the same or another device
 * @src: device address inside one device or host-pinned allocation of @src_ctx
 * @size: bytes, > 0
 *
 * The stream's device reads the source through a dma-buf of the source
 * buffer; the runtime sets that up per call. The source must not be freed
 * before the copy is done (the driver keeps it alive if it is). When
 * @src_ctx is on another device, the stream's context must have enabled
 * peer access to it (vnpu_ctx_enable_peer_access()); the copy then goes
 * over the link between the devices, at its bandwidth and latency.
 *
 * Return: as vnpu_memcpy_htod_async(); VNPU_ERROR_PEER_ACCESS_NOT_ENABLED
 * for another device without peer access.
 */
int vnpu_memcpy_peer_async(struct vnpu_stream stream, uint64_t dst, struct vnpu_context src_ctx,
			   uint64_t src, size_t size);

/** vnpu_memcpy_peer() - synchronous vnpu_memcpy_peer_async() on @ctx's default stream */
int vnpu_memcpy_peer(struct vnpu_context ctx, uint64_t dst, struct vnpu_context src_ctx,
		     uint64_t src, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_COPY_H */
