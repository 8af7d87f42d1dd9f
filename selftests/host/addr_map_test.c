// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: the runtime's address map (libruntime/core/addr_map.c) on
 * the host, under ASan and UBSan: every address of a set range finds its
 * value, granules around it and cleared ranges find none, ranges far apart
 * (different top-level slots) and a range spanning two leaves work, and
 * bad ranges are refused. vnpu_free_async() finds a block's pool with it.
 */
#include <stdint.h>

#include "kselftest_harness.h"
#include "addr_map.h"
#include "vnpu.h"

#define KIB 1024ULL
#define MIB (1024ULL * KIB)
#define GRANULE (1ULL << VNPU_ADDR_MAP_GRANULE_SHIFT)

TEST(set_get_clear)
{
	struct vnpu_addr_map map = { 0 };
	const uint64_t base = 0x100000000ULL, size = 2 * MIB;

	EXPECT_EQ(0, vnpu_addr_map_get(&map, base));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_addr_map_set(&map, base, size, 7));
	for (uint64_t a = base; a < base + size; a += 4 * KIB)
		ASSERT_EQ(7, vnpu_addr_map_get(&map, a));
	EXPECT_EQ(7, vnpu_addr_map_get(&map, base + size - 1));
	EXPECT_EQ(0, vnpu_addr_map_get(&map, base - 1));
	EXPECT_EQ(0, vnpu_addr_map_get(&map, base + size));
	/* A neighbour starting on the next granule keeps its own value. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_addr_map_set(&map, base + size, GRANULE, 9));
	EXPECT_EQ(9, vnpu_addr_map_get(&map, base + size + 512));
	EXPECT_EQ(7, vnpu_addr_map_get(&map, base + size - 512));
	/* Cleared, the range finds nothing; the neighbour is untouched. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_addr_map_set(&map, base, size, 0));
	EXPECT_EQ(0, vnpu_addr_map_get(&map, base));
	EXPECT_EQ(0, vnpu_addr_map_get(&map, base + size - 1));
	EXPECT_EQ(9, vnpu_addr_map_get(&map, base + size));
	vnpu_addr_map_fini(&map);
	EXPECT_EQ(0, vnpu_addr_map_get(&map, base + size));
}

TEST(far_apart_and_across_leaves)
{
	struct vnpu_addr_map map = { 0 };
	/* A leaf covers 4096 granules (256 MiB): this range spans two. */
	const uint64_t leaf = 4096 * GRANULE, across = 3 * leaf - 4 * MIB;
	const uint64_t high = 0xfffffffffff00000ULL;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_addr_map_set(&map, across, 8 * MIB, 1));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_addr_map_set(&map, 0, GRANULE, 2));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_addr_map_set(&map, high, 1 * MIB, 3));
	EXPECT_EQ(1, vnpu_addr_map_get(&map, 3 * leaf - 1));
	EXPECT_EQ(1, vnpu_addr_map_get(&map, 3 * leaf));
	EXPECT_EQ(1, vnpu_addr_map_get(&map, across + 8 * MIB - 1));
	EXPECT_EQ(0, vnpu_addr_map_get(&map, across + 8 * MIB));
	EXPECT_EQ(2, vnpu_addr_map_get(&map, 100));
	EXPECT_EQ(3, vnpu_addr_map_get(&map, UINT64_MAX));
	EXPECT_EQ(0, vnpu_addr_map_get(&map, high - 1));
	/* Nothing set in between. */
	EXPECT_EQ(0, vnpu_addr_map_get(&map, 1ULL << 40));
	vnpu_addr_map_fini(&map);
}

TEST(bad_ranges_are_refused)
{
	struct vnpu_addr_map map = { 0 };

	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_addr_map_set(&map, 4096, 0, 1));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_addr_map_set(&map, UINT64_MAX - 4095, 8192, 1));
	EXPECT_EQ(0, vnpu_addr_map_get(&map, 4096));
	vnpu_addr_map_fini(&map);
}

TEST_HARNESS_MAIN
