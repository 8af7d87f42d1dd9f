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

#include <linux/array_size.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/overflow.h>

#include <drm/vnpu_accel.h>

#include "vnpu_dtype.h"
#include "vnpu_fpu.h"
#include "vnpu_ops.h"
#include "vnpu_simd.h"

/* B of RELU as MAX(A, 0). */
static const float vnpu_zero;

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

/* e^r - 1 for |r| <= ln2 / 2 by its Taylor series, no cancellation. */
static double vnpu_expm1_small(double r)
{
	return r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 +
	       r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 +
	       r * (1.0 / 3628800 + r * (1.0 / 39916800 + r * (1.0 / 479001600))))))))))));
}

/* tanh: e^2x - 1 over e^2x + 1, the small values without cancellation. */
static double vnpu_tanh(double x)
{
	double ax = x < 0 ? -x : x, t, e;

	if (__builtin_isnan(x))
		return x;
	if (ax < 0.17) {
		e = vnpu_expm1_small(2.0 * ax);
		t = e / (e + 2.0);
	} else if (ax > 20.0) {
		t = 1.0;
	} else {
		t = 1.0 - 2.0 / (vnpu_exp(2.0 * ax) + 1.0);
	}
	return x < 0 ? -t : t;
}

/* 1 / (1 + e^-x), from the side where the exponential cannot overflow. */
static double vnpu_sigmoid(double x)
{
	double e;

	if (x >= 0)
		return 1.0 / (1.0 + vnpu_exp(-x));
	e = vnpu_exp(x);
	return e / (1.0 + e);
}

/*
 * Square root by Newton's method from a guess that halves the exponent
 * (within 6%), five steps: below one double ulp for normal numbers.
 */
static double vnpu_sqrt(double x)
{
	union {
		u64 u;
		double d;
	} v = { .d = x };
	double y;
	int i;

	if (x == 0.0 || __builtin_isnan(x) || x == __builtin_inf())
		return x;
	if (x < 0.0)
		return __builtin_nan("");
	v.u = (v.u >> 1) + 0x1ff8000000000000ULL;
	y = v.d;
	for (i = 0; i < 5; i++)
		y = 0.5 * (y + x / y);
	return y;
}

/*
 * 2 atanh(s) = log((1 + s) / (1 - s)) by its series to s^33, for |s| <=
 * 0.25 (error below 1e-20 relative).
 */
static double vnpu_log_series(double s)
{
	double s2 = s * s, p = 1.0 / 33;
	int k;

	for (k = 31; k >= 1; k -= 2)
		p = p * s2 + 1.0 / k;
	return 2.0 * s * p;
}

/*
 * Natural logarithm: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
 * log(m) = 2 atanh((m - 1) / (m + 1)) with |s| <= 0.172. Every fp32
 * argument is a normal double.
 */
static double vnpu_log(double x)
{
	static const double ln2 = 0.69314718055994530942;
	union {
		u64 u;
		double d;
	} v = { .d = x };
	double m;
	int e;

	if (__builtin_isnan(x) || x == __builtin_inf())
		return x;
	if (x < 0.0)
		return __builtin_nan("");
	if (x == 0.0)
		return -__builtin_inf();
	e = (int)((v.u >> 52) & 0x7ff) - 1023;
	v.u = (v.u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
	m = v.d;
	if (m > 1.41421356237309504880) {
		m *= 0.5;
		e++;
	}
	return e * ln2 + vnpu_log_series((m - 1.0) / (m + 1.0));
}

/* log(1 + y) without cancellation for small y. */
static double vnpu_log1p(double y)
{
	if (y > -0.4 && y < 0.4)
		return vnpu_log_series(y / (2.0 + y));
	return vnpu_log(1.0 + y);
}

/* Rounds x (|x| < 2^52) to an integer: toward -inf (0), +inf (1), even (2). */
static double vnpu_round_int(double x, int mode)
{
	double t = (double)(s64)x, f;

	f = t > x ? t - 1.0 : t;
	if (mode == 1)
		t = f < x ? f + 1.0 : f;
	else if (mode == 2)
		t = x - f > 0.5 || (x - f == 0.5 && ((s64)f & 1)) ? f + 1.0 : f;
	else
		t = f;
	/* Keep the sign of a zero result (ceil(-0.5) = -0). */
	return t == 0.0 && x < 0.0 ? -0.0 : t;
}

/* floor(x) of any double: 2^52 and above are integers. */
static double vnpu_floor(double x)
{
	if (!(x > -4503599627370496.0 && x < 4503599627370496.0))
		return x;
	return vnpu_round_int(x, 0);
}

/* FLOOR, CEIL and ROUND of an fp32 value: 2^23 and above are integers. */
static double vnpu_round_f32(double x, int mode)
{
	if (x == 0.0 || !(x > -8388608.0 && x < 8388608.0))
		return x;
	return vnpu_round_int(x, mode);
}

/*
 * x = q pi/2 + r with |r| <= pi/4 (and a little): pi/2 in three parts of
 * 33 bits, so that k times each is exact for |k| < 2^20; larger arguments
 * take more passes and lose precision with their size. Finite x only.
 */
static double vnpu_reduce_pio2(double x, int *q)
{
	static const double two_over_pi = 0.63661977236758134308;
	static const double p1 = 1.57079632673412561417;
	static const double p2 = 0.0000000000607710050630396597660;
	static const double p3 = 0.00000000000000000000202226624871116645580;
	double r = x, k;
	int n = 0, pass;

	for (pass = 0; pass < 8 && (r > 0.786 || r < -0.786); pass++) {
		k = vnpu_floor(r * two_over_pi + 0.5);
		r = ((r - k * p1) - k * p2) - k * p3;
		n += (int)(k - 4.0 * vnpu_floor(k * 0.25));
	}
	*q = n & 3;
	return r;
}

/* sin(r) and cos(r) for |r| <= 0.786 by their Taylor series to r^19, r^20. */
static void vnpu_sincos_small(double r, double *sn, double *cs)
{
	double r2 = r * r, ts = r, tc = 1.0, s = r, c = 1.0;
	int j;

	for (j = 1; j <= 10; j++) {
		ts *= -r2 / ((2 * j) * (2 * j + 1));
		tc *= -r2 / ((2 * j - 1) * (2 * j));
		s += ts;
		c += tc;
	}
	*sn = s;
	*cs = c;
}

/* SIN (0), COS (1) or TAN (2) of x. */
static double vnpu_trig(double x, int which)
{
	double r, s, c, t;
	int q;

	if (__builtin_isnan(x) || x == __builtin_inf() || x == -__builtin_inf())
		return __builtin_nan("");
	r = vnpu_reduce_pio2(x, &q);
	vnpu_sincos_small(r, &s, &c);
	/* sin(x) by quadrant: s, c, -s, -c; cos(x): c, -s, -c, s. */
	if (q & 1) {
		t = s;
		s = c;
		c = -t;
	}
	if (q & 2) {
		s = -s;
		c = -c;
	}
	return which == 0 ? s : which == 1 ? c : s / c;
}

/*
 * atan: 1/x above 1 (pi/2 - atan(1/x)), then atan(t) = pi/4 + atan((t - 1)
 * / (t + 1)) above tan(pi/8), leaving |u| <= 0.415 for the series (to
 * u^51: error below 1e-20).
 */
static double vnpu_atan(double x)
{
	static const double pio2 = 1.57079632679489661923, pio4 = 0.78539816339744830962;
	double t = x < 0 ? -x : x, u, u2, term, sum, base = 0.0;
	bool inv = t > 1.0;
	int k;

	if (__builtin_isnan(x))
		return x;
	if (inv)
		t = 1.0 / t;
	if (t > 0.41421356237309504880) {
		base = pio4;
		t = (t - 1.0) / (t + 1.0);
	}
	u = t;
	u2 = u * u;
	term = u;
	sum = u;
	for (k = 3; k <= 51; k += 2) {
		term *= -u2;
		sum += term / k;
	}
	sum += base;
	if (inv)
		sum = pio2 - sum;
	return x < 0 ? -sum : sum;
}

/* The inverse trigonometric and hyperbolic functions and the hyperbolic ones. */
static double vnpu_t_math(u32 op, double x)
{
	static const double ln2 = 0.69314718055994530942;
	double ax = x < 0 ? -x : x, r, e;

	if (__builtin_isnan(x))
		return x;
	switch (op) {
	case DRM_VNPU_OP_T_ASIN:
		if (ax > 1.0)
			return __builtin_nan("");
		return vnpu_atan(x / vnpu_sqrt((1.0 - x) * (1.0 + x)));
	case DRM_VNPU_OP_T_ACOS:
		if (ax > 1.0)
			return __builtin_nan("");
		return 2.0 * vnpu_atan(vnpu_sqrt((1.0 - x) / (1.0 + x)));
	case DRM_VNPU_OP_T_ATAN:
		return vnpu_atan(x);
	case DRM_VNPU_OP_T_SINH:
	case DRM_VNPU_OP_T_COSH:
		if (ax > 20.0) {
			/* e^-x is below 1e-17 of e^x; e^x / 2 without overflow. */
			r = vnpu_exp(ax - ln2);
		} else if (op == DRM_VNPU_OP_T_SINH && ax < 0.34) {
			e = vnpu_expm1_small(ax);
			r = 0.5 * (e + e / (e + 1.0));
		} else {
			e = vnpu_exp(ax);
			r = op == DRM_VNPU_OP_T_SINH ? 0.5 * (e - 1.0 / e) : 0.5 * (e + 1.0 / e);
		}
		return op == DRM_VNPU_OP_T_SINH && x < 0 ? -r : r;
	case DRM_VNPU_OP_T_ASINH:
		if (ax == __builtin_inf())
			return x;
		r = vnpu_log1p(ax + ax * ax / (1.0 + vnpu_sqrt(1.0 + ax * ax)));
		return x < 0 ? -r : r;
	case DRM_VNPU_OP_T_ACOSH:
		if (x < 1.0)
			return __builtin_nan("");
		if (x == __builtin_inf())
			return x;
		return vnpu_log1p((x - 1.0) + vnpu_sqrt((x - 1.0) * (x + 1.0)));
	default: /* DRM_VNPU_OP_T_ATANH */
		if (ax > 1.0)
			return __builtin_nan("");
		if (ax == 1.0)
			return x * __builtin_inf();
		r = 0.5 * vnpu_log1p(2.0 * ax / (1.0 - ax));
		return x < 0 ? -r : r;
	}
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
	u32 i, t;

	if (op == DRM_VNPU_OP_AXPY) {
		for (i = 0; i < count; i++)
			z[i] = s * x[i] + y[i];
		return;
	}
	/* ADD .. MIN and BIAS_ADD: the vector kernels of their N-d twins. */
	t = op - DRM_VNPU_OP_ADD + DRM_VNPU_OP_T_ADD;
	if (op == DRM_VNPU_OP_BIAS_ADD)
		t = DRM_VNPU_OP_T_ADD;
	vnpu_simd_active->binary(t, a, b, c, count, 1);
}

void vnpu_fpu_unary(u32 op, const void *a, void *c, u32 count)
{
	const float *x = a;
	float *z = c;
	u32 i;

	if (op == DRM_VNPU_OP_RELU) {
		vnpu_simd_active->binary(DRM_VNPU_OP_T_MAX, a, &vnpu_zero, c, count, 0);
		return;
	}
	for (i = 0; i < count; i++) {
		float p = x[i];

		if (op == DRM_VNPU_OP_GELU)
			z[i] = (float)vnpu_gelu(p);
		else /* DRM_VNPU_OP_EXP */
			z[i] = (float)vnpu_exp(p);
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

static inline float vnpu_t_unary(u32 op, float p)
{
	switch (op) {
	case DRM_VNPU_OP_T_RELU:
		return p > 0.0f ? p : 0.0f;
	case DRM_VNPU_OP_T_SIGMOID:
		return (float)vnpu_sigmoid(p);
	case DRM_VNPU_OP_T_TANH:
		return (float)vnpu_tanh(p);
	case DRM_VNPU_OP_T_EXP:
		return (float)vnpu_exp(p);
	case DRM_VNPU_OP_T_LOG:
		return (float)vnpu_log(p);
	case DRM_VNPU_OP_T_FLOOR:
	case DRM_VNPU_OP_T_CEIL:
	case DRM_VNPU_OP_T_ROUND:
		return (float)vnpu_round_f32(p, op - DRM_VNPU_OP_T_FLOOR);
	case DRM_VNPU_OP_T_SIN:
	case DRM_VNPU_OP_T_COS:
	case DRM_VNPU_OP_T_TAN:
		return (float)vnpu_trig(p, op - DRM_VNPU_OP_T_SIN);
	default: /* ASIN .. ATANH */
		return (float)vnpu_t_math(op, p);
	}
}

/*
 * Binary operator @o over @n strided points: gathered into contiguous
 * runs for the vector kernel, then scattered.
 */
static void vnpu_t_binary_strided(u32 o, const float *x, size_t sa, const float *y, size_t sb,
				  float *z, size_t sc, u32 n)
{
	float xt[64], yt[64], zt[64];
	u32 i, j, len;

	for (i = 0; i < n; i += len) {
		len = min_t(u32, n - i, ARRAY_SIZE(xt));
		for (j = 0; j < len; j++) {
			xt[j] = x[(i + j) * sa];
			yt[j] = y[(i + j) * sb];
		}
		vnpu_simd_active->binary(o, xt, yt, zt, len, 1);
		for (j = 0; j < len; j++)
			z[(i + j) * sc] = zt[j];
	}
}

/* Element @i of @p, of element type @dt, as fp32. */
static inline float vnpu_ld(const void *p, u32 dt, size_t i)
{
	return vnpu_bits_to_f32(vnpu_dtype_load(p, dt, i));
}

/*
 * @v rounded to an integer, ties to even, in the FPU's default rounding
 * mode (to nearest even): adding and taking away 2^23 leaves no fraction
 * bits. From 2^23 on every fp32 is an integer; NaN stays NaN.
 */
static inline float vnpu_rint(float v)
{
	const float big = 8388608.0f;

	if (!(v > -big && v < big))
		return v;
	return v >= 0.0f ? (v + big) - big : (v - big) + big;
}

/* @v rounded to nearest even and saturated to [@lo, @hi]; NaN gives 0. */
static inline s32 vnpu_round_sat(float v, s32 lo, s32 hi)
{
	float r = vnpu_rint(v);

	if (r != r)
		return 0;
	if (r <= (float)lo)
		return lo;
	if (r >= (float)hi)
		return hi;
	return (s32)r;
}

/*
 * Stores @v as element @i of @p of type @dt: rounded to nearest even for
 * the float types; for the integer types rounded to the nearest integer,
 * ties to even, and saturated to the type's range (NaN gives 0).
 */
static inline void vnpu_st(void *p, u32 dt, size_t i, float v)
{
	switch (dt) {
	case DRM_VNPU_DTYPE_I8:
		((s8 *)p)[i] = vnpu_round_sat(v, S8_MIN, S8_MAX);
		break;
	case DRM_VNPU_DTYPE_U8:
		((u8 *)p)[i] = vnpu_round_sat(v, 0, U8_MAX);
		break;
	case DRM_VNPU_DTYPE_I32:
		/* (float)S32_MAX is 2^31, which saturates as it should. */
		((s32 *)p)[i] = vnpu_round_sat(v, S32_MIN, S32_MAX);
		break;
	default:
		vnpu_dtype_store(p, dt, i, vnpu_f32_to_bits(v));
		break;
	}
}

/* Whether every tensor of @t is fp32: the pointer fast paths apply. */
static inline bool vnpu_t_f32(const struct drm_vnpu_tensor_args *t)
{
	return !(t->dtype_a | t->dtype_b | t->dtype_c);
}

/* Stride of the last dimension of tensor @t of @it, 0 for a single point. */
static inline size_t vnpu_iter_step(const struct vnpu_iter *it, int t)
{
	return it->ndim ? it->stride[t][it->ndim - 1] : 0;
}

/* BATCHNORM factors of channel @ch: C = A * @mul + @add. */
static void vnpu_t_norm_factors(const struct vnpu_kernel_op *op, u32 ch, double *mul,
				double *add)
{
	const float *scale = op->norm[0], *bias = op->norm[1];
	const float *mean = op->norm[2], *var = op->norm[3];
	double s = scale[ch] / vnpu_sqrt((double)var[ch] + vnpu_bits_to_f32(op->t.norm.epsilon));

	*mul = s;
	*add = bias[ch] - mean[ch] * s;
}

/* BATCHNORM of @n points along the last dimension from the position of @it. */
static void vnpu_t_norm_run(const struct vnpu_kernel_op *op, const struct vnpu_iter *it, u32 n)
{
	u32 axis = op->t.norm.axis, last = it->ndim - 1, i;
	u32 da = op->t.dtype_a, dc = op->t.dtype_c;
	size_t sa = vnpu_iter_step(it, 0), sc = vnpu_iter_step(it, 2);
	size_t oa = it->off[0], oc = it->off[2];
	double mul, add;

	if (axis != last) {
		vnpu_t_norm_factors(op, it->idx[axis], &mul, &add);
		for (i = 0; i < n; i++)
			vnpu_st(op->c, dc, oc + i * sc,
				(float)(vnpu_ld(op->a, da, oa + i * sa) * mul + add));
		return;
	}
	for (i = 0; i < n; i++) {
		vnpu_t_norm_factors(op, it->idx[last] + i, &mul, &add);
		vnpu_st(op->c, dc, oc + i * sc,
			(float)(vnpu_ld(op->a, da, oa + i * sa) * mul + add));
	}
}

/*
 * Elementwise operator @o over @n points from the position of @it with
 * tensors of any float type: converted in runs into fp32, computed as for
 * fp32 tensors, rounded to C's type.
 */
static void vnpu_t_map_typed(const struct vnpu_kernel_op *op, const struct vnpu_iter *it,
			     u32 o, u32 n)
{
	const struct drm_vnpu_tensor_args *t = &op->t;
	size_t sa = vnpu_iter_step(it, 0), sb = vnpu_iter_step(it, 1);
	size_t sc = vnpu_iter_step(it, 2);
	float xt[64], yt[64], zt[64];
	u32 i, j, len;

	for (i = 0; i < n; i += len) {
		len = min_t(u32, n - i, ARRAY_SIZE(xt));
		for (j = 0; j < len; j++)
			xt[j] = vnpu_ld(op->a, t->dtype_a, it->off[0] + (i + j) * sa);
		if (op->b) {
			for (j = 0; j < len; j++)
				yt[j] = vnpu_ld(op->b, t->dtype_b, it->off[1] + (i + j) * sb);
			vnpu_simd_active->binary(o, xt, yt, zt, len, 1);
		} else {
			for (j = 0; j < len; j++)
				zt[j] = vnpu_t_unary(o, xt[j]);
		}
		for (j = 0; j < len; j++)
			vnpu_st(op->c, t->dtype_c, it->off[2] + (i + j) * sc, zt[j]);
	}
}

/* Element @i of @p, of element type @dt, as a double: exactly, int32 too. */
static inline double vnpu_ld_exact(const void *p, u32 dt, size_t i)
{
	if (dt == DRM_VNPU_DTYPE_I32)
		return ((const s32 *)p)[i];
	return vnpu_ld(p, dt, i);
}

/*
 * EQUAL, LESS and LESS_EQUAL of @n points along the last dimension from
 * the position of @it: A and B compared exactly in double (every element
 * type converts exactly), 1 or 0 into C of any type. NaN compares false.
 */
static void vnpu_t_compare(const struct vnpu_kernel_op *op, const struct vnpu_iter *it,
			   u32 o, u32 n)
{
	const struct drm_vnpu_tensor_args *t = &op->t;
	size_t sa = vnpu_iter_step(it, 0), sb = vnpu_iter_step(it, 1);
	size_t sc = vnpu_iter_step(it, 2);
	u32 i;

	for (i = 0; i < n; i++) {
		double x = vnpu_ld_exact(op->a, t->dtype_a, it->off[0] + i * sa);
		double y = vnpu_ld_exact(op->b, t->dtype_b, it->off[1] + i * sb);
		bool r = o == DRM_VNPU_OP_T_EQUAL ? x == y :
			 o == DRM_VNPU_OP_T_LESS ? x < y : x <= y;

		vnpu_st(op->c, t->dtype_c, it->off[2] + i * sc, r ? 1.0f : 0.0f);
	}
}

/* Elementwise operators and BATCHNORM: @count points from @it on. */
void vnpu_fpu_t_map(const struct vnpu_kernel_op *op, struct vnpu_iter *it, u32 count)
{
	const float *a = op->a, *b = op->b;
	float *c = op->c;
	u32 o = op->t.op;

	while (count) {
		u32 n = min_t(u32, count, vnpu_iter_run(it)), i;
		size_t sa = vnpu_iter_step(it, 0), sb = vnpu_iter_step(it, 1);
		size_t sc = vnpu_iter_step(it, 2);
		const float *x = a + it->off[0];
		float *z = c + it->off[2];

		/* x and z are used on the fp32 paths only. */
		if (o == DRM_VNPU_OP_T_BATCHNORM) {
			vnpu_t_norm_run(op, it, n);
		} else if (o >= DRM_VNPU_OP_T_EQUAL && o <= DRM_VNPU_OP_T_LESS_EQUAL) {
			vnpu_t_compare(op, it, o, n);
		} else if (!vnpu_t_f32(&op->t)) {
			vnpu_t_map_typed(op, it, o, n);
		} else if (sa == 1 && sc == 1 && b && sb <= 1) {
			vnpu_simd_active->binary(o, x, b + it->off[1], z, n, sb);
		} else if (sa == 1 && sc == 1 && o == DRM_VNPU_OP_T_RELU) {
			vnpu_simd_active->binary(DRM_VNPU_OP_T_MAX, x, &vnpu_zero, z, n, 0);
		} else if (b) {
			vnpu_t_binary_strided(o, x, sa, b + it->off[1], sb, z, sc, n);
		} else {
			for (i = 0; i < n; i++)
				z[i * sc] = vnpu_t_unary(o, x[i * sa]);
		}
		vnpu_iter_advance(it, n);
		count -= n;
	}
}

/*
 * ARGMAX and ARGMIN: whether @x replaces the extremum @best so far. NaN is
 * above every number for ARGMAX and below for ARGMIN, as numpy's; ties go
 * to the first point, or to the last with SELECT_LAST.
 */
static bool vnpu_t_arg_better(const struct vnpu_kernel_op *op, float x, float best)
{
	bool last = op->t.flags & DRM_VNPU_TENSOR_SELECT_LAST;

	if (__builtin_isnan(best))
		return last && __builtin_isnan(x);
	if (__builtin_isnan(x))
		return true;
	if (x == best)
		return last;
	return op->t.op == DRM_VNPU_OP_T_ARGMAX ? x > best : x < best;
}

/*
 * @n points of the current output element of a reduction or DOT over
 * tensors of any float type, added to (maxed with, multiplied into) @acc in
 * fp32; for ARGMAX and ARGMIN @acc is the extremum and r->arg its index.
 */
static float vnpu_t_reduce_typed(const struct vnpu_kernel_op *op, struct vnpu_reduce *r,
				 u32 n, float acc)
{
	const struct drm_vnpu_tensor_args *t = &op->t;
	const struct vnpu_iter *in = &r->inner;
	size_t oa = r->outer.off[0] + in->off[0], sa = vnpu_iter_step(in, 0);
	size_t ob = r->outer.off[1] + in->off[1], sb = vnpu_iter_step(in, 1);
	u32 i;

	if (t->op == DRM_VNPU_OP_T_DOT) {
		for (i = 0; i < n; i++)
			acc += vnpu_ld(op->a, t->dtype_a, oa + i * sa) *
			       vnpu_ld(op->b, t->dtype_b, ob + i * sb);
	} else if (t->op == DRM_VNPU_OP_T_REDUCE_MAX) {
		for (i = 0; i < n; i++) {
			float v = vnpu_ld(op->a, t->dtype_a, oa + i * sa);

			acc = v > acc ? v : acc;
		}
	} else if (t->op == DRM_VNPU_OP_T_REDUCE_PROD) {
		for (i = 0; i < n; i++)
			acc *= vnpu_ld(op->a, t->dtype_a, oa + i * sa);
	} else if (t->op == DRM_VNPU_OP_T_ARGMAX || t->op == DRM_VNPU_OP_T_ARGMIN) {
		u32 pos = (u32)(r->inner_points - r->inner_left);

		for (i = 0; i < n; i++) {
			float v = vnpu_ld(op->a, t->dtype_a, oa + i * sa);

			if (!(pos + i) || vnpu_t_arg_better(op, v, acc)) {
				acc = v;
				r->arg = pos + i;
			}
		}
	} else {
		for (i = 0; i < n; i++)
			acc += vnpu_ld(op->a, t->dtype_a, oa + i * sa);
	}
	return acc;
}

/* Whether @t is a DOT of integer A and B, which sums exactly (vnpu_t_int_dot()). */
static inline bool vnpu_t_is_int_dot(const struct drm_vnpu_tensor_args *t)
{
	return t->op == DRM_VNPU_OP_T_DOT && !vnpu_dtype_is_float(t->dtype_a) &&
	       !vnpu_dtype_is_float(t->dtype_b);
}

/*
 * @n products of the current output element of a DOT of integer A and B
 * added to r->iacc exactly, in 64 bits (each product of two int32 fits;
 * the sum saturates at the s64 range, where ONNX leaves overflow open).
 */
static void vnpu_t_int_dot(const struct vnpu_kernel_op *op, struct vnpu_reduce *r, u32 n)
{
	const struct drm_vnpu_tensor_args *t = &op->t;
	const struct vnpu_iter *in = &r->inner;
	size_t oa = r->outer.off[0] + in->off[0], sa = vnpu_iter_step(in, 0);
	size_t ob = r->outer.off[1] + in->off[1], sb = vnpu_iter_step(in, 1);
	s64 acc = r->iacc, sum;
	u32 i;

	for (i = 0; i < n; i++) {
		s64 p = vnpu_dtype_load_int(op->a, t->dtype_a, oa + i * sa) *
			vnpu_dtype_load_int(op->b, t->dtype_b, ob + i * sb);

		if (check_add_overflow(acc, p, &sum))
			sum = p > 0 ? S64_MAX : S64_MIN;
		acc = sum;
	}
	r->iacc = acc;
}

/* Stores the exact sum @v of an integer DOT as element @i of @p, of type @dt. */
static void vnpu_t_int_dot_store(void *p, u32 dt, size_t i, s64 v)
{
	switch (dt) {
	case DRM_VNPU_DTYPE_I8:
		((s8 *)p)[i] = clamp_t(s64, v, S8_MIN, S8_MAX);
		break;
	case DRM_VNPU_DTYPE_U8:
		((u8 *)p)[i] = clamp_t(s64, v, 0, U8_MAX);
		break;
	case DRM_VNPU_DTYPE_I32:
		((s32 *)p)[i] = clamp_t(s64, v, S32_MIN, S32_MAX);
		break;
	default:
		/* Rounded once, to nearest even. */
		vnpu_st(p, dt, i, (float)v);
		break;
	}
}

/* Reductions and DOT: at most @budget points, storing finished outputs. */
void vnpu_fpu_t_reduce(const struct vnpu_kernel_op *op, struct vnpu_reduce *r, u32 budget)
{
	const float *a = op->a, *b = op->b;
	float *c = op->c, acc = vnpu_bits_to_f32(r->acc);
	struct vnpu_iter *in = &r->inner;
	bool f32 = vnpu_t_f32(&op->t), int_dot = vnpu_t_is_int_dot(&op->t);
	u32 o = op->t.op;

	while (r->outer_left && budget) {
		if (r->inner_left) {
			u32 n = min_t(u64, min_t(u32, budget, vnpu_iter_run(in)), r->inner_left), i;
			const float *x = a + r->outer.off[0] + in->off[0];
			size_t sa = vnpu_iter_step(in, 0);

			if (int_dot) {
				vnpu_t_int_dot(op, r, n);
			} else if (!f32) {
				acc = vnpu_t_reduce_typed(op, r, n, acc);
			} else if (o == DRM_VNPU_OP_T_DOT) {
				const float *y = b + r->outer.off[1] + in->off[1];
				size_t sb = vnpu_iter_step(in, 1);

				for (i = 0; i < n; i++)
					acc += x[i * sa] * y[i * sb];
			} else if (o == DRM_VNPU_OP_T_REDUCE_MAX) {
				for (i = 0; i < n; i++)
					acc = x[i * sa] > acc ? x[i * sa] : acc;
			} else if (o == DRM_VNPU_OP_T_REDUCE_PROD) {
				for (i = 0; i < n; i++)
					acc *= x[i * sa];
			} else if (o == DRM_VNPU_OP_T_ARGMAX || o == DRM_VNPU_OP_T_ARGMIN) {
				u32 pos = (u32)(r->inner_points - r->inner_left);

				for (i = 0; i < n; i++)
					if (!(pos + i) || vnpu_t_arg_better(op, x[i * sa], acc)) {
						acc = x[i * sa];
						r->arg = pos + i;
					}
			} else {
				for (i = 0; i < n; i++)
					acc += x[i * sa];
			}
			vnpu_iter_advance(in, n);
			r->inner_left -= n;
			budget -= n;
			continue;
		}
		if (o == DRM_VNPU_OP_T_REDUCE_MEAN)
			acc = acc / (float)r->inner_points;
		if ((o == DRM_VNPU_OP_T_ARGMAX || o == DRM_VNPU_OP_T_ARGMIN) &&
		    (op->t.flags & DRM_VNPU_TENSOR_INDEX_FP32))
			c[r->outer.off[2]] = (float)r->arg;
		else if (o == DRM_VNPU_OP_T_ARGMAX || o == DRM_VNPU_OP_T_ARGMIN)
			((u32 *)c)[r->outer.off[2]] = r->arg;
		else if (int_dot)
			vnpu_t_int_dot_store(c, op->t.dtype_c, r->outer.off[2], r->iacc);
		else
			vnpu_st(c, op->t.dtype_c, r->outer.off[2], acc);
		r->iacc = 0;
		vnpu_iter_advance(&r->outer, 1);
		r->outer_left--;
		r->inner_left = r->inner_points;
		acc = vnpu_bits_to_f32(vnpu_t_reduce_start(o));
		budget--;
	}
	r->acc = vnpu_f32_to_bits(acc);
}

/* SOFTMAX pass 1: the maximum of A over @count points of group @a0. */
u32 vnpu_fpu_t_group_max(const struct vnpu_kernel_op *op, struct vnpu_iter *it, u64 a0,
			 u32 count, u32 acc)
{
	float m = vnpu_bits_to_f32(acc);

	while (count) {
		u32 n = min_t(u32, count, vnpu_iter_run(it)), i;
		size_t oa = a0 + it->off[0], sa = vnpu_iter_step(it, 0);

		for (i = 0; i < n; i++) {
			float v = vnpu_ld(op->a, op->t.dtype_a, oa + i * sa);

			m = v > m ? v : m;
		}
		vnpu_iter_advance(it, n);
		count -= n;
	}
	return vnpu_f32_to_bits(m);
}

/* SOFTMAX pass 2: C = exp(A - max), returns the running sum. */
u32 vnpu_fpu_t_group_exp(const struct vnpu_kernel_op *op, struct vnpu_iter *it, u64 a0,
			 u64 c0, u32 count, u32 max, u32 acc)
{
	float m = vnpu_bits_to_f32(max), s = vnpu_bits_to_f32(acc);

	while (count) {
		u32 n = min_t(u32, count, vnpu_iter_run(it)), i;
		size_t oa = a0 + it->off[0], oc = c0 + it->off[2];
		size_t sa = vnpu_iter_step(it, 0), sc = vnpu_iter_step(it, 2);

		for (i = 0; i < n; i++) {
			float e = (float)vnpu_exp((double)vnpu_ld(op->a, op->t.dtype_a,
								  oa + i * sa) - m);

			vnpu_st(op->c, op->t.dtype_c, oc + i * sc, e);
			s += e;
		}
		vnpu_iter_advance(it, n);
		count -= n;
	}
	return vnpu_f32_to_bits(s);
}

/* SOFTMAX pass 3: C /= sum. */
void vnpu_fpu_t_group_div(const struct vnpu_kernel_op *op, struct vnpu_iter *it, u64 c0,
			  u32 count, u32 sum)
{
	float d = vnpu_bits_to_f32(sum);

	while (count) {
		u32 n = min_t(u32, count, vnpu_iter_run(it)), i;
		size_t oc = c0 + it->off[2], sc = vnpu_iter_step(it, 2);
		u32 dc = op->t.dtype_c;

		for (i = 0; i < n; i++)
			vnpu_st(op->c, dc, oc + i * sc, vnpu_ld(op->c, dc, oc + i * sc) / d);
		vnpu_iter_advance(it, n);
		count -= n;
	}
}

/*
 * MAXPOOL, AVGPOOL: up to @count output elements from @it on, stopping
 * once VNPU_FPU_CHUNK window positions were visited; returns the number done.
 */
u32 vnpu_fpu_t_pool(const struct vnpu_kernel_op *op, struct vnpu_iter *it, u32 count)
{
	const struct drm_vnpu_tensor_window *w = &op->t.window;
	bool is_max = op->t.op == DRM_VNPU_OP_T_MAXPOOL;
	bool incl = op->t.flags & DRM_VNPU_TENSOR_COUNT_INCLUDE_PAD;
	s64 in_h = op->t.shape[2], in_w = op->t.shape[3];
	s64 pad_h_end = in_h + w->pad_bottom, pad_w_end = in_w + w->pad_right;
	u32 done = 0, visited = 0, i, j;

	while (done < count && visited < VNPU_FPU_CHUNK) {
		s64 h0 = (s64)it->idx[2] * w->stride_h - w->pad_top;
		s64 w0 = (s64)it->idx[3] * w->stride_w - w->pad_left;
		float acc = is_max ? vnpu_bits_to_f32(VNPU_FP32_NEG_INF) : 0.0f;
		u32 inside = 0, padded = 0;

		for (i = 0; i < w->kernel_h; i++) {
			s64 h = h0 + (s64)i * w->dilation_h;

			for (j = 0; j < w->kernel_w; j++) {
				s64 x = w0 + (s64)j * w->dilation_w;
				float v;

				if (h < pad_h_end && x < pad_w_end)
					padded++;
				if (h < 0 || h >= in_h || x < 0 || x >= in_w)
					continue;
				v = vnpu_ld(op->a, op->t.dtype_a, it->off[0] +
					    (u64)h * op->t.stride_a[2] +
					    (u64)x * op->t.stride_a[3]);
				acc = is_max ? (v > acc ? v : acc) : acc + v;
				inside++;
			}
		}
		if (!is_max)
			acc = acc / (float)(incl ? padded : inside);
		vnpu_st(op->c, op->t.dtype_c, it->off[2], acc);
		visited += w->kernel_h * w->kernel_w;
		vnpu_iter_advance(it, 1);
		done++;
	}
	return done;
}
