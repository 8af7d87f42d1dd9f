/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_SIMD_H__
#define __VNPU_SIMD_H__

#include <linux/types.h>

/* Rows of the GEMM micro-tile, the same for every instruction set. */
#define VNPU_GEMM_MR 6
/* Widest micro-tile: columns of the AVX2 one. */
#define VNPU_GEMM_NR_MAX 16
/* Most copies of each A element in the packed panels (SSE2's vector). */
#define VNPU_A_LANES_MAX 4
/* Bytes per step of the copy kernels: four of the widest vectors. */
#define VNPU_SIMD_COPY_BLOCK 128

/**
 * struct vnpu_gemm_strip - micro-tiles of one FPU section
 * @pa: packed A: @tiles panels of %VNPU_GEMM_MR rows x @kc, one after the
 *	other, each element a_lanes times
 * @pb: packed B: one panel of @kc x nr (the set's nr)
 * @c: C at the first row and column of the first tile
 * @rs_c: element step between rows of C
 * @cs_c: element step between columns of C
 * @kc: depth of the panels
 * @tiles: micro-tiles, going down the rows
 * @rows: valid rows from the first tile on (the last tile may be partial)
 * @cols: valid columns of the tiles, at most nr
 * @alpha: fp32 bits; C = alpha * A B + beta * C
 * @beta: fp32 bits; 0 means C is not read
 *
 * Integer types only: shared by FPU and non-FPU files.
 */
struct vnpu_gemm_strip {
	const void *pa;
	const void *pb;
	void *c;
	size_t rs_c;
	size_t cs_c;
	u32 kc;
	u32 tiles;
	u32 rows;
	u32 cols;
	u32 alpha;
	u32 beta;
};

/**
 * struct vnpu_simd - the vector kernels of one instruction set
 * @name: "sse2" or "avx2"
 * @nr: columns of the GEMM micro-tile (two vectors)
 * @a_lanes: copies of each element of A in its packed panels (1 or a
 *	vector's width, %VNPU_A_LANES_MAX at most)
 * @gemm_strip: the micro-tiles of @s
 * @binary: C[i] = A[i] op B[i * @sb] over @n elements (DRM_VNPU_OP_T_ADD
 *	.. T_MIN semantics; @sb is 0 or 1). RELU is MAX with a scalar 0.
 * @copy: copies the first @n bytes from @src to @dst, ranges that do not
 *	overlap, rounded down to whole blocks of %VNPU_SIMD_COPY_BLOCK bytes;
 *	returns the bytes copied (the caller moves the rest)
 *
 * Call only between kernel_fpu_begin() and kernel_fpu_end().
 */
struct vnpu_simd {
	const char *name;
	u32 nr;
	u32 a_lanes;
	void (*gemm_strip)(const struct vnpu_gemm_strip *s);
	void (*binary)(u32 op, const void *a, const void *b, void *c, u32 n, u32 sb);
	size_t (*copy)(void *dst, const void *src, size_t n);
};

extern const struct vnpu_simd vnpu_simd_sse2;
extern const struct vnpu_simd vnpu_simd_avx2;
/* The kernels chosen at module load (vnpu_gemm_init()). */
extern const struct vnpu_simd *vnpu_simd_active;

#endif /* __VNPU_SIMD_H__ */
