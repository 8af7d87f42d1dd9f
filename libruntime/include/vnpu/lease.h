/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Device leases from the device pool (vnpu-poold).
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_LEASE_H
#define VNPU_LEASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Device pool leases: the client side of vnpu-poold, the per-node device
 * pool (Documentation/pool.rst). A lease gives the calling process some
 * devices, exclusively or shared, with a kernel-enforced memory quota on
 * each; it ends with vnpu_lease_release(), or when the process exits.
 */

/* Lease modes: the devices are the tenant's alone, or shared up to their memory. */
#define VNPU_LEASE_EXCLUSIVE 0u
#define VNPU_LEASE_SHARED 1u

/* Placement of a lease of several devices. */
#define VNPU_PLACEMENT_SAME_NODE 0u	/* all on one topology node, nearest links */
#define VNPU_PLACEMENT_SPREAD 1u	/* on as many nodes as possible */
#define VNPU_PLACEMENT_LEAST_LOADED 2u	/* the devices with the least memory reserved */
#define VNPU_PLACEMENT_PACKED 3u	/* the most loaded devices that still fit */

/* Most devices one lease names. */
#define VNPU_LEASE_MAX_DEVICES 64

/**
 * struct vnpu_lease_request - what a lease asks for
 * @count: number of devices, 1..VNPU_LEASE_MAX_DEVICES
 * @mode: VNPU_LEASE_EXCLUSIVE or VNPU_LEASE_SHARED
 * @placement: a VNPU_PLACEMENT_* value
 * @flags: reserved, must be 0
 * @memory: bytes of device memory per device, the process's hard quota
 *	there; 0 asks for a whole device (exclusive leases only)
 */
struct vnpu_lease_request {
	uint32_t count;
	uint32_t mode;
	uint32_t placement;
	uint32_t flags;
	uint64_t memory;
};

/**
 * struct vnpu_lease - a lease handle
 * @handle: the lease id the pool gave; 0 is never a lease
 */
struct vnpu_lease {
	uint64_t handle;
};

/**
 * struct vnpu_lease_info - a lease as the pool reports it
 * @id: the lease id
 * @uid: the tenant's user id
 * @pid: the tenant's process id
 * @mode: VNPU_LEASE_EXCLUSIVE or VNPU_LEASE_SHARED
 * @placement: the VNPU_PLACEMENT_* it was placed with
 * @memory: bytes per device (the quota)
 * @count: number of devices
 * @devices: their physical indices, @count of them, in placement order
 * @degraded: 1 when a leased device turned unhealthy during the lease
 */
struct vnpu_lease_info {
	uint64_t id;
	uint32_t uid;
	int32_t pid;
	uint32_t mode;
	uint32_t placement;
	uint64_t memory;
	uint32_t count;
	uint32_t devices[VNPU_LEASE_MAX_DEVICES];
	uint32_t degraded;
};

/**
 * vnpu_lease_acquire() - lease devices from the device pool
 * @socket_path: the pool's socket; NULL for VNPU_POOL_SOCKET, or
 *	/run/vnpu/pool.sock without it
 * @req: what to lease
 * @lease: out, the lease
 * @reason: out, may be NULL: on a refusal, the pool's reason in words
 *	("2 devices requested, 1 of 4 available now ..."), NUL-terminated
 * @reason_size: bytes at @reason
 *
 * The pool picks the devices, sets this process's hard and soft memory
 * quota on each to @req->memory and keeps a connection open for the
 * lease: it ends with vnpu_lease_release() or when the process exits. Call
 * it before vnpu_init() with VNPU_POOL_SOCKET set, and the runtime shows
 * the leased devices only.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL arguments, a
 * count of 0 or above VNPU_LEASE_MAX_DEVICES, an unknown mode, placement
 * or flags, memory 0 for a shared lease, or a request the pool calls
 * malformed; VNPU_ERROR_LEASE_REFUSED when the pool cannot or may not
 * grant it (more memory than a device has, more devices than are free, a
 * per-user limit; see @reason); VNPU_ERROR_POOL_UNAVAILABLE when no pool
 * answers at the socket; VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_lease_acquire(const char *socket_path, const struct vnpu_lease_request *req,
		       struct vnpu_lease *lease, char *reason, size_t reason_size);

/**
 * vnpu_lease_release() - end a lease of this process
 * @lease: a lease from vnpu_lease_acquire()
 *
 * The pool clears the quotas the lease set and gives the devices to
 * others. Release only after the runtime stopped using the devices
 * (memory beyond the restored default quota stays allocated, but no more
 * can be allocated).
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_HANDLE for a lease this process
 * does not hold (or released already).
 */
int vnpu_lease_release(struct vnpu_lease lease);

/**
 * vnpu_lease_get_info() - ask the pool about a lease of this process
 * @lease: a lease from vnpu_lease_acquire()
 * @info: out
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL @info;
 * VNPU_ERROR_INVALID_HANDLE for a lease this process does not hold, or
 * one the pool no longer has (root released it);
 * VNPU_ERROR_POOL_UNAVAILABLE when the pool does not answer.
 */
int vnpu_lease_get_info(struct vnpu_lease lease, struct vnpu_lease_info *info);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_LEASE_H */
