// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Address map: see addr_map.h.
 */
#include <stdlib.h>

#include "addr_map.h"
#include "vnpu.h"

#define LEVEL_BITS 12
/* 4 levels of 12 bits: every 48-bit granule number (vnpu_addr_map_get() unrolls them). */
#define LEVELS 4
#define FANOUT (1u << LEVEL_BITS)

/* Interior nodes use @child, leaves @value. */
struct vnpu_addr_map_node {
	union {
		_Atomic(struct vnpu_addr_map_node *) child[FANOUT];
		_Atomic uint64_t value[FANOUT];
	};
};

static unsigned int slot(uint64_t granule, int level)
{
	return (unsigned int)(granule >> (LEVEL_BITS * (LEVELS - 1 - level))) & (FANOUT - 1);
}

/* The child at @link, added if @create and missing; NULL if missing or out of memory. */
static struct vnpu_addr_map_node *child(_Atomic(struct vnpu_addr_map_node *) *link, int create)
{
	struct vnpu_addr_map_node *node = atomic_load_explicit(link, memory_order_acquire);
	struct vnpu_addr_map_node *expected = NULL;

	if (node || !create)
		return node;
	node = calloc(1, sizeof(*node));
	if (!node)
		return NULL;
	/* Zeroed memory is a node of NULL children or of 0 values. */
	if (atomic_compare_exchange_strong_explicit(link, &expected, node,
						    memory_order_acq_rel, memory_order_acquire))
		return node;
	free(node);	/* another setter added it first */
	return expected;
}

/* The leaf holding @granule's value, added if @create; NULL if missing. */
static struct vnpu_addr_map_node *leaf(struct vnpu_addr_map *map, uint64_t granule, int create)
{
	struct vnpu_addr_map_node *node = child(&map->root, create);

	for (int level = 0; node && level < LEVELS - 1; level++)
		node = child(&node->child[slot(granule, level)], create);
	return node;
}

static void set_range(struct vnpu_addr_map *map, uint64_t first, uint64_t last, uint64_t value)
{
	for (uint64_t g = first; g <= last; g++) {
		struct vnpu_addr_map_node *node = leaf(map, g, 0);

		if (node)
			atomic_store_explicit(&node->value[slot(g, LEVELS - 1)], value,
					      memory_order_release);
	}
}

int vnpu_addr_map_set(struct vnpu_addr_map *map, uint64_t base, uint64_t size, uint64_t value)
{
	uint64_t first = base >> VNPU_ADDR_MAP_GRANULE_SHIFT;
	uint64_t last = (base + size - 1) >> VNPU_ADDR_MAP_GRANULE_SHIFT;

	if (!size || base + size - 1 < base)
		return VNPU_ERROR_INVALID_VALUE;
	/* Every leaf first, so that nothing is set when one is missing. */
	if (value) {
		for (uint64_t g = first; g <= last; g = (g | (FANOUT - 1)) + 1)
			if (!leaf(map, g, 1))
				return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	}
	set_range(map, first, last, value);
	return VNPU_SUCCESS;
}

uint64_t vnpu_addr_map_get(struct vnpu_addr_map *map, uint64_t addr)
{
	uint64_t granule = addr >> VNPU_ADDR_MAP_GRANULE_SHIFT;
	struct vnpu_addr_map_node *node = atomic_load_explicit(&map->root, memory_order_acquire);

	/* leaf() without its adding, unrolled: the fast path of vnpu_free_async(). */
	if (node)
		node = atomic_load_explicit(&node->child[slot(granule, 0)], memory_order_acquire);
	if (node)
		node = atomic_load_explicit(&node->child[slot(granule, 1)], memory_order_acquire);
	if (node)
		node = atomic_load_explicit(&node->child[slot(granule, 2)], memory_order_acquire);
	return node ? atomic_load_explicit(&node->value[slot(granule, 3)], memory_order_acquire)
		    : 0;
}

static void free_node(struct vnpu_addr_map_node *node, int level)
{
	if (!node)
		return;
	if (level < LEVELS - 1)
		for (unsigned int i = 0; i < FANOUT; i++)
			free_node(atomic_load_explicit(&node->child[i], memory_order_relaxed),
				  level + 1);
	free(node);
}

void vnpu_addr_map_fini(struct vnpu_addr_map *map)
{
	free_node(atomic_load_explicit(&map->root, memory_order_relaxed), 0);
	atomic_store_explicit(&map->root, NULL, memory_order_relaxed);
}
