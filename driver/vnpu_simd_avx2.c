// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/*
 * The vector kernels for AVX2 and FMA, eight floats a vector: fused multiply-add.
 * Kbuild gives this file its instruction set flags.
 */

#include <linux/types.h>

#define VNPU_VEC 8
#define VNPU_SIMD vnpu_simd_avx2
#define VNPU_A_LANES 1
#define VNPU_SIMD_ISA "avx2"

#include "vnpu_simd_impl.h"
