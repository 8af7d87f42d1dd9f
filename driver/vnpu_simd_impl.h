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

#include <drm/vnpu_accel.h>

#include "vnpu_simd.h"

#define VNPU_NR (2 * VNPU_VEC)

typedef float vnpu_vf __attribute__((vector_size(VNPU_VEC * 4), aligned(4)));
typedef int vnpu_vi __attribute__((vector_size(VNPU_VEC * 4), aligned(4)));

union vnpu_simd_f32 {
	u32 u;
	float f;
};

static inline float vnpu_simd_f(u32 u)
{
	union vnpu_simd_f32 v = { .u = u };

	return v.f;
}

static inline vnpu_vf vnpu_vload(const float *p)
{
	return *(const vnpu_vf *)p;
}

static inline void vnpu_vstore(float *p, vnpu_vf v)
{
	*(vnpu_vf *)p = v;
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
static void vnpu_simd_tile(u32 kc, const float *pa, const float *pb, vnpu_vf acc[][2])
{
	vnpu_vf c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {};
	vnpu_vf c30 = {}, c31 = {}, c40 = {}, c41 = {}, c50 = {}, c51 = {};
	u32 p;

	for (p = 0; p < kc; p++) {
		vnpu_vf b0 = vnpu_vload(pb), b1 = vnpu_vload(pb + VNPU_VEC);
		float a;

		a = pa[0];
		c00 += a * b0;
		c01 += a * b1;
		a = pa[1];
		c10 += a * b0;
		c11 += a * b1;
		a = pa[2];
		c20 += a * b0;
		c21 += a * b1;
		a = pa[3];
		c30 += a * b0;
		c31 += a * b1;
		a = pa[4];
		c40 += a * b0;
		c41 += a * b1;
		a = pa[5];
		c50 += a * b0;
		c51 += a * b1;
		pa += VNPU_GEMM_MR;
		pb += VNPU_NR;
	}
	acc[0][0] = c00, acc[0][1] = c01, acc[1][0] = c10, acc[1][1] = c11;
	acc[2][0] = c20, acc[2][1] = c21, acc[3][0] = c30, acc[3][1] = c31;
	acc[4][0] = c40, acc[4][1] = c41, acc[5][0] = c50, acc[5][1] = c51;
}

/* C = alpha * acc + beta * C for @rows x @cols of a tile; beta 0: C not read. */
static void vnpu_simd_store(const struct vnpu_gemm_strip *s, float *c, u32 rows,
			    vnpu_vf acc[][2])
{
	float alpha = vnpu_simd_f(s->alpha), beta = vnpu_simd_f(s->beta);
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
				r += beta * c[j * s->cs_c];
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
		pa += (size_t)VNPU_GEMM_MR * s->kc;
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

/* One lane of vnpu_simd_op(), for the tails. */
static inline float vnpu_simd_op1(u32 op, float x, float y)
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
		return x > y ? x : y;
	default: /* DRM_VNPU_OP_T_MIN */
		return x < y ? x : y;
	}
}

/* The loop is repeated per operator so that the switch stays outside it. */
#define VNPU_SIMD_BINARY_CASE(o)						\
	case o:									\
		for (; i + VNPU_VEC <= n; i += VNPU_VEC)			\
			vnpu_vstore(z + i, vnpu_simd_op(o, vnpu_vload(x + i),	\
					sb ? vnpu_vload(y + i) : yb));		\
		for (; i < n; i++)						\
			z[i] = vnpu_simd_op1(o, x[i], y[i * sb]);		\
		break

static void vnpu_simd_binary(u32 op, const void *a, const void *b, void *c, u32 n, u32 sb)
{
	const float *x = a, *y = b;
	float *z = c;
	vnpu_vf yb = {};
	u32 i = 0;

	if (!n)
		return;
	yb += y[0];
	switch (op) {
	VNPU_SIMD_BINARY_CASE(DRM_VNPU_OP_T_ADD);
	VNPU_SIMD_BINARY_CASE(DRM_VNPU_OP_T_SUB);
	VNPU_SIMD_BINARY_CASE(DRM_VNPU_OP_T_MUL);
	VNPU_SIMD_BINARY_CASE(DRM_VNPU_OP_T_DIV);
	VNPU_SIMD_BINARY_CASE(DRM_VNPU_OP_T_MAX);
	default:
	VNPU_SIMD_BINARY_CASE(DRM_VNPU_OP_T_MIN);
	}
}

static void vnpu_simd_relu(const void *a, void *c, u32 n)
{
	const float *x = a;
	float *z = c;
	vnpu_vf zero = {};
	u32 i;

	for (i = 0; i + VNPU_VEC <= n; i += VNPU_VEC) {
		vnpu_vf v = vnpu_vload(x + i);

		vnpu_vstore(z + i, vnpu_vselect(v > zero, v, zero));
	}
	for (; i < n; i++)
		z[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

const struct vnpu_simd VNPU_SIMD = {
	.name = VNPU_SIMD_ISA,
	.nr = VNPU_NR,
	.gemm_strip = vnpu_simd_gemm_strip,
	.binary = vnpu_simd_binary,
	.relu = vnpu_simd_relu,
};
