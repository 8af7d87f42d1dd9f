/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Communicators and collectives across devices.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_COLLECTIVE_H
#define VNPU_COLLECTIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct vnpu_comm - a communicator handle
 * @handle: opaque; 0 is never a valid communicator
 *
 * A communicator is a set of streams, one per rank, each on a different
 * device. Collectives on it enqueue work on those streams (they return
 * before the work is done, like any asynchronous call): synchronize the
 * streams, or record events on them, to wait. Data moves around a ring
 * ordered by topology: the devices of a board, then of a node, next to
 * each other, so the ring crosses each slow link as few times as possible.
 */
struct vnpu_comm {
	uint64_t handle;
};

/** enum vnpu_dtype - element type of a collective */
enum vnpu_dtype {
	VNPU_DTYPE_F32 = 1,
};

/** enum vnpu_reduce_op - reduction of a collective */
enum vnpu_reduce_op {
	VNPU_REDUCE_SUM = 1,
};

/**
 * vnpu_comm_create() - create a communicator over streams of different devices
 * @count: number of ranks, 1 to 64
 * @streams: one stream per rank; rank r is @streams[r]
 * @comm: out
 *
 * The communicator keeps the streams alive until it is destroyed.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL arguments, a
 * bad @count or two streams on the same device; VNPU_ERROR_INVALID_HANDLE
 * for a bad stream; VNPU_ERROR_DRIVER_VERSION without topology (uAPI
 * before 1.4); VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_comm_create(uint32_t count, const struct vnpu_stream *streams, struct vnpu_comm *comm);

/**
 * vnpu_comm_destroy() - destroy a communicator
 * @comm: the communicator
 *
 * Work already enqueued goes on; its scratch memory is released when done.
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_comm_destroy(struct vnpu_comm comm);

/**
 * vnpu_comm_get_ring() - the order in which data travels between the ranks
 * @comm: the communicator
 * @count: the communicator's number of ranks
 * @ranks: out, @count ranks; each rank receives from the one before it and
 *	the first from the last
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL @ranks or a
 * wrong @count; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_comm_get_ring(struct vnpu_comm comm, uint32_t count, uint32_t *ranks);

/**
 * vnpu_all_reduce() - sum every rank's buffer into every rank's output
 * @comm: the communicator
 * @send: per rank, device address of @count elements in its stream's context
 * @recv: per rank, device address of @count elements; may equal @send
 * @count: elements per rank, > 0
 * @dtype: VNPU_DTYPE_F32
 * @op: VNPU_REDUCE_SUM
 *
 * Ring algorithm: a reduce-scatter then an all-gather, each of
 * (ranks - 1) steps moving 1/ranks of the data over every ring link; the
 * sums are computed by each device's ADD operator. Sums are added in ring
 * order, so results can differ from another order in the last bits.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL arrays, @count
 * 0, an unknown @dtype or @op, or a buffer outside its context's
 * allocations; a stream's sticky error; VNPU_ERROR_INVALID_HANDLE;
 * VNPU_ERROR_OUT_OF_DEVICE_MEMORY for the scratch space (1/ranks of the
 * data per rank).
 */
int vnpu_all_reduce(struct vnpu_comm comm, const uint64_t *send, const uint64_t *recv,
		    size_t count, enum vnpu_dtype dtype, enum vnpu_reduce_op op);

/**
 * vnpu_broadcast() - copy the root's buffer to every rank
 * @comm: the communicator
 * @root: the rank whose @send is copied
 * @send: device address of @count elements of the root's context
 * @recv: per rank, device address of @count elements (the root's may equal
 *	@send)
 * @count: elements, > 0
 * @dtype: VNPU_DTYPE_F32
 *
 * The data goes around the ring from the root, one hop per rank.
 *
 * Return: as vnpu_all_reduce(); VNPU_ERROR_INVALID_VALUE for a bad @root.
 */
int vnpu_broadcast(struct vnpu_comm comm, uint32_t root, uint64_t send, const uint64_t *recv,
		   size_t count, enum vnpu_dtype dtype);

/**
 * vnpu_all_gather() - every rank gets every rank's buffer, in rank order
 * @comm: the communicator
 * @send: per rank, device address of @count elements
 * @recv: per rank, device address of ranks * @count elements; rank r's
 *	data lands at element r * @count
 * @count: elements per rank, > 0
 * @dtype: VNPU_DTYPE_F32
 *
 * Return: as vnpu_all_reduce().
 */
int vnpu_all_gather(struct vnpu_comm comm, const uint64_t *send, const uint64_t *recv,
		    size_t count, enum vnpu_dtype dtype);

/**
 * vnpu_reduce_scatter() - sum every rank's buffer; rank r keeps block r
 * @comm: the communicator
 * @send: per rank, device address of ranks * @count elements
 * @recv: per rank, device address of @count elements: elements
 *	r * @count .. (r + 1) * @count - 1 of the sum, for rank r
 * @count: elements per rank, > 0
 * @dtype: VNPU_DTYPE_F32
 * @op: VNPU_REDUCE_SUM
 *
 * Needs scratch device memory of ranks * @count elements per rank.
 *
 * Return: as vnpu_all_reduce().
 */
int vnpu_reduce_scatter(struct vnpu_comm comm, const uint64_t *send, const uint64_t *recv,
			size_t count, enum vnpu_dtype dtype, enum vnpu_reduce_op op);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_COLLECTIVE_H */
