/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * A map from device address to a number (a handle), by 64 KiB granule,
 * read without a lock: vnpu_free_async() finds the pool of an address in
 * four loads instead of asking every pool. Each device buffer of 64 KiB or
 * more starts on a 64 KiB boundary (uapi/drm/vnpu_accel.h), so two such
 * buffers never share a granule and the map can name the owner of each.
 *
 * It is a radix tree of four levels of 12 bits over the 48-bit granule
 * number. Nodes are added with a compare-and-exchange and freed only by
 * vnpu_addr_map_fini(), so a reader never sees a node go; values are
 * stored and loaded atomically. Setters of disjoint ranges need no lock
 * between them; the owner of a range serializes what it sets there.
 */
#ifndef VNPU_ADDR_MAP_H
#define VNPU_ADDR_MAP_H

#include <stdatomic.h>
#include <stdint.h>

#define VNPU_ADDR_MAP_GRANULE_SHIFT 16

struct vnpu_addr_map_node;

struct vnpu_addr_map {
	_Atomic(struct vnpu_addr_map_node *) root;
};

/*
 * Maps every granule [@base, @base + @size) touches to @value (0 clears).
 * Returns VNPU_SUCCESS, or VNPU_ERROR_OUT_OF_HOST_MEMORY with nothing
 * changed; clearing a range that was set never fails.
 */
int vnpu_addr_map_set(struct vnpu_addr_map *map, uint64_t base, uint64_t size, uint64_t value);
/* The value of @addr's granule, 0 if none. */
uint64_t vnpu_addr_map_get(struct vnpu_addr_map *map, uint64_t addr);
/* Frees every node; no reader or setter may remain. */
void vnpu_addr_map_fini(struct vnpu_addr_map *map);

#endif
