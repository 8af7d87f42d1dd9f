/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Topology: where devices sit, the links between them, peer access.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_TOPOLOGY_H
#define VNPU_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Topology, peer access and collectives ------------------------------ */

/** enum vnpu_link_class - how two devices are connected, nearest first */
enum vnpu_link_class {
	VNPU_LINK_SELF = 0,
	VNPU_LINK_BOARD = 1,
	VNPU_LINK_NODE = 2,
	VNPU_LINK_SYSTEM = 3,
};

/**
 * struct vnpu_link - the link between two devices, as the driver describes it
 * @link_class: VNPU_LINK_SELF for a device and itself, else the nearest
 *	group the two devices share (board, node, or only the system)
 * @bandwidth_mbps: MB/s (10^6 bytes per second); 0 for self
 * @latency_ns: latency of one transfer in ns; 0 for self
 */
struct vnpu_link {
	enum vnpu_link_class link_class;
	uint32_t bandwidth_mbps;
	uint32_t latency_ns;
};

/**
 * struct vnpu_device_location - where a device sits in the machine
 * @numa_node: host NUMA node, -1 for none
 * @topology_node: id of the node (group of boards) of the device
 * @board: id of the board of the device, unique in the system
 */
struct vnpu_device_location {
	int32_t numa_node;
	uint32_t topology_node;
	uint32_t board;
};

/**
 * vnpu_device_get_location() - the node, board and NUMA node of a device
 * @device: logical device index
 * @location: out
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a bad @device or NULL
 * @location; VNPU_ERROR_DRIVER_VERSION when the driver has no topology
 * (uAPI before 1.4); VNPU_ERROR_DEVICE_LOST; init state errors.
 */
int vnpu_device_get_location(uint32_t device, struct vnpu_device_location *location);

/**
 * vnpu_device_get_topology() - the link matrix of the visible devices
 * @count: the number of visible devices (vnpu_device_count())
 * @links: out, @count * @count entries; links[i * @count + j] is the link
 *	from logical device i to logical device j
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL @links or a
 * @count other than the number of visible devices;
 * VNPU_ERROR_DRIVER_VERSION when the driver has no topology (uAPI before
 * 1.4); VNPU_ERROR_DEVICE_LOST; VNPU_ERROR_OUT_OF_HOST_MEMORY; init state
 * errors.
 */
int vnpu_device_get_topology(uint32_t count, struct vnpu_link *links);

/**
 * vnpu_device_can_access_peer() - whether a device can reach another's memory
 * @device: logical index of the device that would access
 * @peer: logical index of the device whose memory would be accessed
 * @can_access: out, 1 if vnpu_ctx_enable_peer_access() can succeed for
 *	contexts of the two devices, else 0 (a device and itself: 0)
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a bad index or NULL
 * @can_access; init state errors.
 */
int vnpu_device_can_access_peer(uint32_t device, uint32_t peer, int *can_access);

/**
 * vnpu_ctx_enable_peer_access() - let a context's device reach a peer context's memory
 * @ctx: the context whose device accesses (the destination of
 *	vnpu_memcpy_peer())
 * @peer: a context on another device whose memory is accessed
 * @flags: reserved, must be 0
 *
 * One direction only, per pair of contexts, as in CUDA. Copies between
 * contexts of two different devices need it (see vnpu_memcpy_peer()); they
 * go over the link between the devices, at its bandwidth and latency.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_PEER_ACCESS_ALREADY_ENABLED;
 * VNPU_ERROR_INVALID_VALUE for bad @flags or two contexts of the same
 * device (which need no peer access); VNPU_ERROR_INVALID_HANDLE;
 * VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_ctx_enable_peer_access(struct vnpu_context ctx, struct vnpu_context peer,
				uint32_t flags);

/**
 * vnpu_ctx_disable_peer_access() - undo vnpu_ctx_enable_peer_access()
 * @ctx: the accessing context
 * @peer: the accessed context
 *
 * Copies already queued are not affected.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_PEER_ACCESS_NOT_ENABLED;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_ctx_disable_peer_access(struct vnpu_context ctx, struct vnpu_context peer);

/* vnpu_ctx_create(): any device, the one nearest to the calling thread's CPU. */
#define VNPU_DEVICE_ANY 0xffffffffu

/**
 * vnpu_device_choose_nearest() - the device nearest to the calling thread's CPU
 * @device: out, a logical device index
 *
 * Nearest by NUMA distance between the CPU the thread runs on
 * (sched_getcpu()) and each device's NUMA node (devices without one count
 * as farthest); ties go to the lowest index. vnpu_ctx_create() with
 * VNPU_DEVICE_ANY uses it.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL @device; init
 * state errors.
 */
int vnpu_device_choose_nearest(uint32_t *device);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_TOPOLOGY_H */
