// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/*
 * The vector kernels for SSE2, four floats a vector: multiply, then add.
 * Kbuild gives this file its instruction set flags.
 */

#include <linux/types.h>

#define VNPU_VEC 4
#define VNPU_SIMD vnpu_simd_sse2
#define VNPU_A_LANES VNPU_VEC
#define VNPU_SIMD_ISA "sse2"

#include "vnpu_simd_impl.h"
