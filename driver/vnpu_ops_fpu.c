// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/*
 * The floating-point kernels of the KERNEL operators. This file is built
 * with CC_FLAGS_FPU (Documentation/core-api/floating-point.rst): its
 * functions run only between kernel_fpu_begin() and kernel_fpu_end(),
 * called from vnpu_ops.c, and call no other kernel function. Values cross
 * the file boundary as u32 fp32 bit patterns.
 */

#include <drm/vnpu_accel.h>

#include "vnpu_ops.h"

union vnpu_f32 {
	u32 u;
	float f;
};

static inline float vnpu_bits_to_f32(u32 u)
{
	union vnpu_f32 v = { .u = u };

	return v.f;
}

static inline u32 vnpu_f32_to_bits(float f)
{
	union vnpu_f32 v = { .f = f };

	return v.u;
}

/*
 * exp(x) in double precision: x = n ln2 + r with |r| <= ln2 / 2, e^r by
 * its Taylor series to degree 11 (error below 1e-14), times 2^n built in
 * the exponent bits. Rounded to fp32 by the caller, so the result is
 * within one fp32 ulp of e^x; overflows to +inf above 88.73, underflows to
 * 0 below -103.98; NaN stays NaN.
 */
static double vnpu_exp(double x)
{
	static const double ln2 = 0.69314718055994530942;
	static const double log2e = 1.44269504088896340736;
	union {
		u64 u;
		double d;
	} scale;
	double r, p;
	int n;

	if (__builtin_isnan(x))
		return x;
	if (x > 89.0)
		return __builtin_inf();
	if (x < -105.0)
		return 0.0;
	n = (int)(x * log2e + (x >= 0 ? 0.5 : -0.5));
	r = x - n * ln2;
	p = 1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 +
	    r * (1.0 / 120 + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 +
	    r * (1.0 / 362880 + r * (1.0 / 3628800 + r * (1.0 / 39916800)))))))))));
	scale.u = (u64)(n + 1023) << 52;
	return p * scale.d;
}

/* GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static double vnpu_gelu(double x)
{
	static const double s = 0.79788456080286535588;
	double y = s * (x + 0.044715 * x * x * x);
	double t = 1.0 - 2.0 / (vnpu_exp(2.0 * y) + 1.0);

	return 0.5 * x * (1.0 + t);
}

void vnpu_fpu_binary(u32 op, const void *a, const void *b, void *c, u32 count, u32 alpha)
{
	const float *x = a, *y = b;
	float *z = c, s = vnpu_bits_to_f32(alpha);
	u32 i;

	for (i = 0; i < count; i++) {
		float p = x[i], q = y[i], r;

		switch (op) {
		case DRM_VNPU_OP_ADD:
		case DRM_VNPU_OP_BIAS_ADD:
			r = p + q;
			break;
		case DRM_VNPU_OP_SUB:
			r = p - q;
			break;
		case DRM_VNPU_OP_MUL:
			r = p * q;
			break;
		case DRM_VNPU_OP_DIV:
			r = p / q;
			break;
		case DRM_VNPU_OP_MAX:
			r = p > q ? p : q;
			break;
		case DRM_VNPU_OP_MIN:
			r = p < q ? p : q;
			break;
		default: /* DRM_VNPU_OP_AXPY */
			r = s * p + q;
			break;
		}
		z[i] = r;
	}
}

void vnpu_fpu_unary(u32 op, const void *a, void *c, u32 count)
{
	const float *x = a;
	float *z = c;
	u32 i;

	for (i = 0; i < count; i++) {
		float p = x[i];

		switch (op) {
		case DRM_VNPU_OP_RELU:
			z[i] = p > 0.0f ? p : 0.0f;
			break;
		case DRM_VNPU_OP_GELU:
			z[i] = (float)vnpu_gelu(p);
			break;
		default: /* DRM_VNPU_OP_EXP */
			z[i] = (float)vnpu_exp(p);
			break;
		}
	}
}

u32 vnpu_fpu_reduce(u32 op, const void *a, u32 count, u32 acc)
{
	const float *x = a;
	float r = vnpu_bits_to_f32(acc);
	u32 i;

	if (op == DRM_VNPU_OP_REDUCE_SUM) {
		for (i = 0; i < count; i++)
			r += x[i];
	} else {
		for (i = 0; i < count; i++)
			r = x[i] > r ? x[i] : r;
	}
	return vnpu_f32_to_bits(r);
}

u32 vnpu_fpu_exp_sum(const void *a, void *c, u32 count, u32 max, u32 acc)
{
	const float *x = a;
	float *z = c, m = vnpu_bits_to_f32(max), s = vnpu_bits_to_f32(acc);
	u32 i;

	for (i = 0; i < count; i++) {
		float e = (float)vnpu_exp((double)x[i] - m);

		z[i] = e;
		s += e;
	}
	return vnpu_f32_to_bits(s);
}

void vnpu_fpu_div_by(void *c, u32 count, u32 divisor)
{
	float *z = c, d = vnpu_bits_to_f32(divisor);
	u32 i;

	for (i = 0; i < count; i++)
		z[i] = z[i] / d;
}

static inline float vnpu_gemm_a(const struct vnpu_kernel_op *op, u32 i, u32 p)
{
	const float *a = op->a;

	if (op->flags & DRM_VNPU_KERNEL_TRANS_A)
		return a[(size_t)p * op->lda + i];
	return a[(size_t)i * op->lda + p];
}

static inline float vnpu_gemm_b(const struct vnpu_kernel_op *op, u32 p, u32 j)
{
	const float *b = op->b;

	if (op->flags & DRM_VNPU_KERNEL_TRANS_B)
		return b[(size_t)j * op->ldb + p];
	return b[(size_t)p * op->ldb + j];
}

void vnpu_fpu_gemm_store(const struct vnpu_kernel_op *op, u32 i, u32 j, u32 acc)
{
	float *c = (float *)op->c + (size_t)i * op->ldc + j;
	float r = vnpu_bits_to_f32(op->alpha) * vnpu_bits_to_f32(acc);

	if (vnpu_bits_to_f32(op->beta) != 0.0f)
		r += vnpu_bits_to_f32(op->beta) * *c;
	*c = r;
}

u32 vnpu_fpu_gemm_dot(const struct vnpu_kernel_op *op, u32 i, u32 j, u32 p0, u32 p1,
		      u32 acc)
{
	float s = vnpu_bits_to_f32(acc);
	u32 p;

	for (p = p0; p < p1; p++)
		s += vnpu_gemm_a(op, i, p) * vnpu_gemm_b(op, p, j);
	return vnpu_f32_to_bits(s);
}

/* C[i][j0..j1) with the whole inner dimension. */
void vnpu_fpu_gemm_row(const struct vnpu_kernel_op *op, u32 i, u32 j0, u32 j1)
{
	u32 j;

	for (j = j0; j < j1; j++)
		vnpu_fpu_gemm_store(op, i, j, vnpu_fpu_gemm_dot(op, i, j, 0, op->k,
								VNPU_FP32_ZERO));
}
