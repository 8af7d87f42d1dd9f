/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */

/*
 * The vector kernels, written once with GCC's vector extensions and built
 * once per instruction set: vnpu_simd_sse2.c and vnpu_simd_avx2.c define
 * VNPU_VEC (floats per vector) and VNPU_SIMD (the name of the struct
 * vnpu_simd to define), then include this file. The compiler's flags of
 * each file (Kbuild) choose the instructions: mulps + addps for SSE2,
 * vfmadd231ps on ymm registers for AVX2 + FMA. No header of the compiler
 * is needed. Everything here runs between kernel_fpu_begin() and
 * kernel_fpu_end() and calls no kernel function.
 */

#include <linux/compiler.h>

#include <drm/vnpu_accel.h>

#include "vnpu_fpu.h"
#include "vnpu_simd.h"

#define VNPU_NR (2 * VNPU_VEC)

/*
 * VNPU_A_LANES copies of each element of A in the packed panel: 1, and the
 * kernel broadcasts it (one instruction with AVX2), or VNPU_VEC, and the
 * kernel loads it as a vector (SSE2 has no broadcast from memory: this
 * saves a shuffle per row and step).
 */
#if VNPU_A_LANES == 1
#define VNPU_A_T float
#else
#define VNPU_A_T vnpu_vf
#endif

/* Vectors of VNPU_VEC 32-bit lanes, loaded from any 4-byte aligned address. */
typedef float vnpu_vf __attribute__((vector_size(VNPU_VEC * sizeof(u32)))) __aligned(4);
typedef s32 vnpu_vi __attribute__((vector_size(VNPU_VEC * sizeof(s32)))) __aligned(4);

static inline vnpu_vf vnpu_vload(const float *p)
{
	return *(const vnpu_vf *)p;
}

static inline void vnpu_vstore(float *p, vnpu_vf v)
{
	*(vnpu_vf *)p = v;
}

/*
 * One float of an operand, loaded on its own: the volatile access keeps
 * the compiler from folding it into the arithmetic as a memory operand.
 * QEMU 7.2's TCG reads 16 bytes for the memory operand of a scalar
 * VEX instruction (vfmadd231ss, vaddss), so the last element of a buffer
 * that ends at a page boundary faulted there.
 */
static inline float vnpu_sload(const float *p)
{
	return READ_ONCE(*p);
}

/* Lanes of @m set: @x, else @y. */
static inline vnpu_vf vnpu_vselect(vnpu_vi m, vnpu_vf x, vnpu_vf y)
{
	return (vnpu_vf)((m & (vnpu_vi)x) | (~m & (vnpu_vi)y));
}

/*
 * The micro-tile: acc (VNPU_GEMM_MR rows, two vectors each) = the packed
 * A panel times the packed B panel, in fp32 with one rounding per
 * multiply-add where the instruction set has FMA. Twelve accumulators,
 * two B vectors and one broadcast of A fit the 16 vector registers.
 */
/* Element @r of the packed A step @pa, as a scalar or as a vector. */
static __always_inline VNPU_A_T vnpu_simd_a(const float *pa, int r)
{
#if VNPU_A_LANES == 1
	return pa[r];
#else
	return vnpu_vload(pa + r * VNPU_VEC);
#endif
}

/* One row of the tile: two multiply-adds of the (broadcast) @a. */
static __always_inline void vnpu_simd_row(vnpu_vf *c0, vnpu_vf *c1, VNPU_A_T a, vnpu_vf b0,
					  vnpu_vf b1)
{
	*c0 += a * b0;
	*c1 += a * b1;
}

static void vnpu_simd_tile(u32 kc, const float *pa, const float *pb, vnpu_vf acc[][2])
{
	vnpu_vf c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {};
	vnpu_vf c30 = {}, c31 = {}, c40 = {}, c41 = {}, c50 = {}, c51 = {};
	u32 p;

	for (p = 0; p < kc; p++, pa += VNPU_GEMM_MR * VNPU_A_LANES, pb += VNPU_NR) {
		vnpu_vf b0 = vnpu_vload(pb), b1 = vnpu_vload(pb + VNPU_VEC);

		vnpu_simd_row(&c00, &c01, vnpu_simd_a(pa, 0), b0, b1);
		vnpu_simd_row(&c10, &c11, vnpu_simd_a(pa, 1), b0, b1);
		vnpu_simd_row(&c20, &c21, vnpu_simd_a(pa, 2), b0, b1);
		vnpu_simd_row(&c30, &c31, vnpu_simd_a(pa, 3), b0, b1);
		vnpu_simd_row(&c40, &c41, vnpu_simd_a(pa, 4), b0, b1);
		vnpu_simd_row(&c50, &c51, vnpu_simd_a(pa, 5), b0, b1);
	}
	acc[0][0] = c00, acc[0][1] = c01, acc[1][0] = c10, acc[1][1] = c11;
	acc[2][0] = c20, acc[2][1] = c21, acc[3][0] = c30, acc[3][1] = c31;
	acc[4][0] = c40, acc[4][1] = c41, acc[5][0] = c50, acc[5][1] = c51;
}

/* C = alpha * acc + beta * C for @rows x @cols of a tile; beta 0: C not read. */
static void vnpu_simd_store(const struct vnpu_gemm_strip *s, float *c, u32 rows,
			    vnpu_vf acc[][2])
{
	float alpha = vnpu_bits_to_f32(s->alpha), beta = vnpu_bits_to_f32(s->beta);
	u32 i, j;

	if (rows == VNPU_GEMM_MR && s->cols == VNPU_NR && s->cs_c == 1) {
		for (i = 0; i < VNPU_GEMM_MR; i++, c += s->rs_c) {
			vnpu_vf r0 = alpha * acc[i][0], r1 = alpha * acc[i][1];

			if (beta != 0.0f) {
				r0 += beta * vnpu_vload(c);
				r1 += beta * vnpu_vload(c + VNPU_VEC);
			}
			vnpu_vstore(c, r0);
			vnpu_vstore(c + VNPU_VEC, r1);
		}
		return;
	}
	for (i = 0; i < rows; i++, c += s->rs_c) {
		const float *t = (const float *)acc[i];

		for (j = 0; j < s->cols; j++) {
			float r = alpha * t[j];

			if (beta != 0.0f)
				r += beta * vnpu_sload(c + j * s->cs_c);
			c[j * s->cs_c] = r;
		}
	}
}

static void vnpu_simd_gemm_strip(const struct vnpu_gemm_strip *s)
{
	vnpu_vf acc[VNPU_GEMM_MR][2];
	const float *pa = s->pa;
	float *c = s->c;
	u32 t, rows = s->rows;

	for (t = 0; t < s->tiles; t++) {
		u32 r = rows < VNPU_GEMM_MR ? rows : VNPU_GEMM_MR;

		vnpu_simd_tile(s->kc, pa, s->pb, acc);
		vnpu_simd_store(s, c, r, acc);
		pa += (size_t)VNPU_GEMM_MR * VNPU_A_LANES * s->kc;
		c += VNPU_GEMM_MR * s->rs_c;
		rows -= r;
	}
}

static inline vnpu_vf vnpu_simd_op(u32 op, vnpu_vf x, vnpu_vf y)
{
	switch (op) {
	case DRM_VNPU_OP_T_ADD:
		return x + y;
	case DRM_VNPU_OP_T_SUB:
		return x - y;
	case DRM_VNPU_OP_T_MUL:
		return x * y;
	case DRM_VNPU_OP_T_DIV:
		return x / y;
	case DRM_VNPU_OP_T_MAX:
		return vnpu_vselect(x > y, x, y);
	default: /* DRM_VNPU_OP_T_MIN */
		return vnpu_vselect(x < y, x, y);
	}
}

/*
 * The tail goes through one vector too, zero-padded: the padding lanes are
 * computed and dropped (the FPU masks every exception in the kernel).
 */
static void vnpu_simd_binary(u32 op, const void *a, const void *b, void *c, u32 n, u32 sb)
{
	const float *x = a, *y = b;
	float xt[VNPU_VEC] = {}, yt[VNPU_VEC] = {}, zt[VNPU_VEC], *z = c;
	vnpu_vf yb = {};
	u32 i, j;

	if (!n)
		return;
	yb += vnpu_sload(y);
	for (i = 0; i + VNPU_VEC <= n; i += VNPU_VEC)
		vnpu_vstore(z + i, vnpu_simd_op(op, vnpu_vload(x + i),
						sb ? vnpu_vload(y + i) : yb));
	if (i == n)
		return;
	for (j = 0; i + j < n; j++) {
		xt[j] = x[i + j];
		yt[j] = y[(i + j) * sb];
	}
	vnpu_vstore(zt, vnpu_simd_op(op, vnpu_vload(xt), vnpu_vload(yt)));
	for (j = 0; i + j < n; j++)
		z[i + j] = zt[j];
}

/* Bytes moved as one vector, from and to any address. */
typedef u8 vnpu_vb __attribute__((vector_size(VNPU_VEC * sizeof(u32)))) __aligned(1);

#define VNPU_COPY_VECS (VNPU_SIMD_COPY_BLOCK / sizeof(vnpu_vb))

/*
 * Whole blocks only: the loads of a block all come before its stores,
 * which is right because the ranges do not overlap.
 */
static size_t vnpu_simd_copy(void *dst, const void *src, size_t n)
{
	const vnpu_vb *s = src;
	vnpu_vb *d = dst, v[VNPU_COPY_VECS];
	size_t blocks = n / VNPU_SIMD_COPY_BLOCK, i, j;

	for (i = 0; i < blocks; i++) {
		for (j = 0; j < VNPU_COPY_VECS; j++)
			v[j] = s[j];
		for (j = 0; j < VNPU_COPY_VECS; j++)
			d[j] = v[j];
		s += VNPU_COPY_VECS;
		d += VNPU_COPY_VECS;
	}
	return blocks * VNPU_SIMD_COPY_BLOCK;
}

const struct vnpu_simd VNPU_SIMD = {
	.name = VNPU_SIMD_ISA,
	.nr = VNPU_NR,
	.a_lanes = VNPU_A_LANES,
	.gemm_strip = vnpu_simd_gemm_strip,
	.binary = vnpu_simd_binary,
	.copy = vnpu_simd_copy,
};
