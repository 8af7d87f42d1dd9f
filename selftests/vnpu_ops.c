// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: the N-d tensor operators of the KERNEL command (struct
 * drm_vnpu_tensor_args): every operator against a CPU reference computed
 * here, over broadcasting, permuted and padded layouts, sizes that cross
 * the 1024-point sections, size-1 dimensions; the argument size rules;
 * every bad argument; and that long operators (a matrix product split
 * across the engines too) stop at a timeout.
 *
 * Tolerances (|got - want| <= abs + rel * |want|):
 *   COPY, ADD SUB MUL DIV MAX MIN RELU, REDUCE_MAX, IM2COL, MAXPOOL: exact
 *   REDUCE_SUM, REDUCE_MEAN, AVGPOOL: 1e-6 relative + 1e-6 absolute against
 *     the same fp32 sums in the same order
 *   EXP: 2e-6 relative against exp() in double (subnormals: 1e-44 absolute)
 *   SIGMOID, TANH: 2e-7 absolute + 2e-6 relative against double
 *   SOFTMAX: 1e-7 absolute + 1e-5 relative against double
 *   DOT (and convolution through IM2COL): 1e-5 + 2e-6 * k absolute against
 *     double, k the number of products
 *   BATCHNORM: 1e-6 absolute + 1e-6 relative against double
 *   fp16 (uAPI 1.5): conversions bit exact against the compiler's _Float16;
 *     ADD, MAX, MAXPOOL, IM2COL exact against the fp32 result rounded once;
 *     SIGMOID and a DOT to fp16 within half an fp16 ulp (1/2048 relative)
 *     of double, DOT to fp32 as the fp32 DOT
 *   integer operands (uAPI 1.5): exact (rounding to nearest even, saturation)
 *   EQUAL, LESS, LESS_EQUAL, WHERE (uAPI 1.6): exact, int32 beyond 2^24,
 *     NaN, infinities and signed zeros included
 *   GATHER, TOPK (uAPI 1.7): bit exact, indices exact; ties by index,
 *     NaN above every number; an index out of range fails the job
 */
#include <math.h>

#include "kselftest_harness.h"
#include "vnpu_cmd_fixture.h"

#define MAXD DRM_VNPU_TENSOR_MAX_DIMS

static uint64_t points_of(uint32_t ndim, const uint32_t *shape)
{
	uint64_t p = 1;

	for (uint32_t d = 0; d < ndim; d++)
		p *= shape[d];
	return p;
}

/* Row-major strides of @shape. */
static void dense(uint32_t ndim, const uint32_t *shape, uint32_t *stride)
{
	uint32_t s = 1;

	for (int d = ndim - 1; d >= 0; d--) {
		stride[d] = s;
		s *= shape[d];
	}
	for (uint32_t d = ndim; d < MAXD; d++)
		stride[d] = 0;
}

/*
 * Strides of a dense tensor of @in_ndim dims @in_shape broadcast to the
 * @ndim dims of the output, numpy style (aligned right, 1 and missing dims
 * repeat).
 */
static void bcast(uint32_t ndim, uint32_t in_ndim, const uint32_t *in_shape, uint32_t *stride)
{
	uint32_t in_stride[MAXD];

	dense(in_ndim, in_shape, in_stride);
	memset(stride, 0, MAXD * sizeof(*stride));
	for (uint32_t i = 0; i < in_ndim; i++) {
		uint32_t d = ndim - in_ndim + i;

		stride[d] = in_shape[i] == 1 ? 0 : in_stride[i];
	}
}

static void unravel(uint64_t p, uint32_t ndim, const uint32_t *shape, uint32_t *idx)
{
	for (int d = ndim - 1; d >= 0; d--) {
		idx[d] = p % shape[d];
		p /= shape[d];
	}
}

static uint64_t offset(uint32_t ndim, const uint32_t *idx, const uint32_t *stride)
{
	uint64_t o = 0;

	for (uint32_t d = 0; d < ndim; d++)
		o += (uint64_t)idx[d] * stride[d];
	return o;
}

CMD_FIXTURE(ops)

/* Carves @elems fp32 (64-byte aligned) out of the buffer, random values. */
static float *carve(struct _test_data_ops *self, uint64_t elems, unsigned int seed,
		    uint64_t *off)
{
	float *p;

	*off = self->next;
	self->next = (self->next + elems * 4 + 63) & ~63ULL;
	if (self->next > BUF_SIZE)
		return NULL;
	p = PTR(*off);
	for (uint64_t i = 0; i < elems; i++)
		p[i] = frand(&seed);
	return p;
}

/* Runs one tensor operator; returns the fence status (1 = ok) or the error. */
static int run(struct _test_data_ops *self, const struct drm_vnpu_tensor_args *args)
{
	return cmd_fixture_run(self->fd, self->queue, self->sync, &self->b,
			       cmd_tensor(self->b.addr), args, sizeof(*args), 60000);
}

static float ref_binary(uint32_t op, float a, float b)
{
	switch (op) {
	case DRM_VNPU_OP_T_ADD: return a + b;
	case DRM_VNPU_OP_T_SUB: return a - b;
	case DRM_VNPU_OP_T_MUL: return a * b;
	case DRM_VNPU_OP_T_DIV: return a / b;
	case DRM_VNPU_OP_T_MAX: return a > b ? a : b;
	default: return a < b ? a : b;
	}
}

/* A binary case: output shape, A and B numpy shapes, C layout. */
struct bin_case {
	const char *what;
	uint32_t ndim, shape[MAXD];
	uint32_t a_ndim, a_shape[MAXD];
	uint32_t b_ndim, b_shape[MAXD];
	uint32_t c_pad;		/* extra elements per row of C */
};

static const struct bin_case bin_cases[] = {
	{ "same shape across sections", 2, { 3, 2500 }, 2, { 3, 2500 }, 2, { 3, 2500 }, 0 },
	{ "row vector", 3, { 2, 3, 1031 }, 3, { 2, 3, 1031 }, 1, { 1031 }, 0 },
	{ "column against row", 2, { 37, 41 }, 2, { 37, 1 }, 2, { 1, 41 }, 0 },
	{ "both broadcast 4-d", 4, { 2, 3, 4, 5 }, 4, { 2, 1, 4, 1 }, 4, { 1, 3, 1, 5 }, 0 },
	{ "scalar B", 3, { 5, 7, 9 }, 3, { 5, 7, 9 }, 0, { 0 }, 0 },
	{ "scalar A", 2, { 13, 17 }, 0, { 0 }, 2, { 13, 17 }, 0 },
	{ "size-1 dims", 6, { 1, 2, 1, 3, 1, 4 }, 6, { 1, 2, 1, 3, 1, 4 }, 2, { 3, 1 }, 0 },
	{ "six dims, padded C rows", 6, { 2, 3, 2, 3, 2, 7 }, 5, { 3, 2, 1, 2, 7 },
	  6, { 2, 1, 2, 3, 1, 1 }, 5 },
	{ "one element", 1, { 1 }, 1, { 1 }, 1, { 1 }, 0 },
};

TEST_F(ops, binary_broadcast_against_reference)
{
	const uint32_t ops[] = { DRM_VNPU_OP_T_ADD, DRM_VNPU_OP_T_SUB, DRM_VNPU_OP_T_MUL,
				 DRM_VNPU_OP_T_DIV, DRM_VNPU_OP_T_MAX, DRM_VNPU_OP_T_MIN };

	for (size_t k = 0; k < sizeof(bin_cases) / sizeof(bin_cases[0]); k++) {
		const struct bin_case *bc = &bin_cases[k];
		uint32_t cshape[MAXD], sc[MAXD];
		struct drm_vnpu_tensor_args t = { .ndim = bc->ndim };
		uint64_t oa, ob, oc, save = self->next;
		float *a, *b, *c;

		memcpy(t.shape, bc->shape, sizeof(t.shape));
		bcast(bc->ndim, bc->a_ndim, bc->a_shape, t.stride_a);
		bcast(bc->ndim, bc->b_ndim, bc->b_shape, t.stride_b);
		memcpy(cshape, bc->shape, sizeof(cshape));
		cshape[bc->ndim - 1] += bc->c_pad;
		dense(bc->ndim, cshape, sc);
		memcpy(t.stride_c, sc, sizeof(sc));
		a = carve(self, points_of(bc->a_ndim, bc->a_shape), 1 + k, &oa);
		b = carve(self, points_of(bc->b_ndim, bc->b_shape), 2 + k, &ob);
		c = carve(self, points_of(bc->ndim, cshape), 3 + k, &oc);
		ASSERT_TRUE(a && b && c);
		t.a = ADDR(oa);
		t.b = ADDR(ob);
		t.c = ADDR(oc);
		for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
			uint64_t n = points_of(bc->ndim, bc->shape);
			uint32_t idx[MAXD];
			int bad = 0;

			t.op = ops[o];
			if (bc->c_pad)
				c[bc->shape[bc->ndim - 1]] = 12345.0f;
			ASSERT_EQ(1, run(self, &t)) TH_LOG("%s op %#x", bc->what, ops[o]);
			for (uint64_t p = 0; p < n; p++) {
				float want, got;

				unravel(p, bc->ndim, bc->shape, idx);
				want = ref_binary(ops[o], a[offset(bc->ndim, idx, t.stride_a)],
						  b[offset(bc->ndim, idx, t.stride_b)]);
				got = c[offset(bc->ndim, idx, sc)];
				if (memcmp(&want, &got, 4) && bad++ < 3)
					TH_LOG("%s op %#x point %llu: %g want %g", bc->what, ops[o],
					       (unsigned long long)p, got, want);
			}
			EXPECT_EQ(0, bad);
			if (bc->c_pad)
				EXPECT_EQ(12345.0f, c[bc->shape[bc->ndim - 1]]);
		}
		self->next = save;
	}
}

/* Elementwise in place: C is A (same strides), B broadcast. */
TEST_F(ops, binary_in_place)
{
	uint32_t shape[2] = { 9, 1100 }, bshape[1] = { 1100 };
	uint64_t oa, ob;
	float *a = carve(self, 9 * 1100, 5, &oa), *b = carve(self, 1100, 6, &ob);
	float *orig = malloc(9 * 1100 * 4);
	struct drm_vnpu_tensor_args t = {
		.op = DRM_VNPU_OP_T_MUL, .ndim = 2, .shape = { 9, 1100 },
		.a = ADDR(oa), .b = ADDR(ob), .c = ADDR(oa),
	};

	ASSERT_NE(NULL, orig);
	dense(2, shape, t.stride_a);
	dense(2, shape, t.stride_c);
	bcast(2, 1, bshape, t.stride_b);
	memcpy(orig, a, 9 * 1100 * 4);
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < 9 * 1100; i++)
		ASSERT_EQ(orig[i] * b[i % 1100], a[i]);
	free(orig);
}

static double ref_unary(uint32_t op, double x)
{
	switch (op) {
	case DRM_VNPU_OP_T_RELU: return x > 0 ? x : 0;
	case DRM_VNPU_OP_T_SIGMOID: return 1.0 / (1.0 + exp(-x));
	case DRM_VNPU_OP_T_TANH: return tanh(x);
	case DRM_VNPU_OP_T_LOG: return log(x);
	case DRM_VNPU_OP_T_FLOOR: return floor(x);
	case DRM_VNPU_OP_T_CEIL: return ceil(x);
	case DRM_VNPU_OP_T_ROUND: return nearbyint(x);
	case DRM_VNPU_OP_T_SIN: return sin(x);
	case DRM_VNPU_OP_T_COS: return cos(x);
	case DRM_VNPU_OP_T_TAN: return tan(x);
	case DRM_VNPU_OP_T_ASIN: return asin(x);
	case DRM_VNPU_OP_T_ACOS: return acos(x);
	case DRM_VNPU_OP_T_ATAN: return atan(x);
	case DRM_VNPU_OP_T_SINH: return sinh(x);
	case DRM_VNPU_OP_T_COSH: return cosh(x);
	case DRM_VNPU_OP_T_ASINH: return asinh(x);
	case DRM_VNPU_OP_T_ACOSH: return acosh(x);
	case DRM_VNPU_OP_T_ATANH: return atanh(x);
	default: return exp(x);
	}
}

/*
 * The functions of uAPI 1.5 against libm, rounded to fp32, on every
 * domain edge and on values of every magnitude: within one fp32 ulp
 * (FLOOR, CEIL and ROUND exactly, the sign of zero included).
 */
TEST_F(ops, math_functions_against_libm)
{
	const float edges[] = { 0.0f, -0.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 1.0f, -1.0f,
				 0.999999f, -0.999999f, 1.000001f, 1e-30f, -1e-30f, 1e-40f,
				 0.17f, 0.34f, 0.35f, 0.786f, 3.14159265f, 20.5f, -20.5f, 88.5f,
				 89.5f, -89.5f, 8388607.5f, 8388608.0f, -8388609.0f, 1e6f, 1e30f,
				 -1e30f, INFINITY, -INFINITY, NAN };
	const uint32_t n = 3 * 1024;
	uint64_t oa, oc;
	float *a = carve(self, n, 21, &oa), *c = carve(self, n, 22, &oc);

	/* Random values of magnitudes 1e-3 to 1e4 after the edges. */
	for (uint32_t i = 0; i < n; i++)
		a[i] *= powf(10.0f, (float)(i % 8) - 3.0f);
	memcpy(a, edges, sizeof(edges));
	for (uint32_t op = DRM_VNPU_OP_T_LOG; op <= DRM_VNPU_OP_T_ATANH; op++) {
		struct drm_vnpu_tensor_args t = {
			.op = op, .ndim = 1, .shape = { n }, .stride_a = { 1 }, .stride_c = { 1 },
			.a = ADDR(oa), .c = ADDR(oc),
		};
		int exact = op >= DRM_VNPU_OP_T_FLOOR && op <= DRM_VNPU_OP_T_ROUND, bad = 0;

		ASSERT_EQ(1, run(self, &t)) TH_LOG("op %#x", op);
		for (uint32_t i = 0; i < n; i++) {
			float want = (float)ref_unary(op, a[i]);
			float ulp = fabsf(nextafterf(fabsf(want), INFINITY) - fabsf(want));
			int ok;

			/* The trigonometric functions beyond 2^20 are not asserted. */
			if (op >= DRM_VNPU_OP_T_SIN && op <= DRM_VNPU_OP_T_TAN &&
			    fabsf(a[i]) > 1048576.0f && !isinf(a[i]))
				continue;
			if (isnan(want) || isinf(want))
				ok = close_enough(c[i], want, 0, 0);
			else if (exact)
				ok = c[i] == want && signbit(c[i]) == signbit(want);
			else
				ok = fabsf(c[i] - want) <= ulp;
			if (!ok && bad++ < 5)
				TH_LOG("op %#x x=%.9g: %.9g want %.9g", op, a[i], c[i], want);
		}
		EXPECT_EQ(0, bad) TH_LOG("op %#x", op);
	}
}

/* numpy's argmax and argmin: the first (or last) extremum, NaN above all. */
static uint32_t ref_arg(uint32_t op, int last, const float *x, size_t stride, uint32_t len)
{
	uint32_t best = 0;

	for (uint32_t i = 1; i < len; i++) {
		float v = x[i * stride], m = x[best * stride];
		int better;

		if (isnan(m))
			better = last && isnan(v);
		else if (isnan(v))
			better = 1;
		else if (v == m)
			better = last;
		else
			better = op == DRM_VNPU_OP_T_ARGMAX ? v > m : v < m;
		if (better)
			best = i;
	}
	return best;
}

/*
 * ARGMAX and ARGMIN over each axis of a 3-d tensor with ties and NaNs,
 * first and last, as int32 and as fp32; REDUCE_PROD over every subset of
 * axes.
 */
TEST_F(ops, argmax_argmin_and_prod)
{
	const uint32_t shape[3] = { 4, 9, 301 };
	uint32_t sa[MAXD];
	uint64_t oa, oc, n = 4 * 9 * 301;
	float *a = carve(self, n, 23, &oa), *c = carve(self, n, 24, &oc);
	uint32_t *ci = (uint32_t *)c;

	/* Few distinct values, so that ties are common; some NaNs. */
	for (uint64_t i = 0; i < n; i++)
		a[i] = i % 97 == 5 ? NAN : floorf(a[i] * 4.0f);
	dense(3, shape, sa);
	for (uint32_t axis = 0; axis < 3; axis++)
		for (uint32_t v = 0; v < 8; v++) {
			uint32_t op = v & 1 ? DRM_VNPU_OP_T_ARGMIN : DRM_VNPU_OP_T_ARGMAX;
			int last = (v >> 1) & 1, as_fp32 = v >> 2, bad = 0;
			uint32_t kshape[3], sc[MAXD];
			struct drm_vnpu_tensor_args t = {
				.op = op, .ndim = 3,
				.axes = 1u << axis, .shape = { 4, 9, 301 }, .a = ADDR(oa),
				.c = ADDR(oc),
			};

			t.flags = (last ? DRM_VNPU_TENSOR_SELECT_LAST : 0) |
				  (as_fp32 ? DRM_VNPU_TENSOR_INDEX_FP32 : 0);
			for (int d = 0; d < 3; d++)
				kshape[d] = d == (int)axis ? 1 : shape[d];
			dense(3, kshape, sc);
			sc[axis] = 0;
			memcpy(t.stride_a, sa, sizeof(sa));
			memcpy(t.stride_c, sc, sizeof(sc));
			ASSERT_EQ(1, run(self, &t)) TH_LOG("axis %u op %#x", axis, op);
			for (uint32_t i = 0; i < kshape[0]; i++)
				for (uint32_t j = 0; j < kshape[1]; j++)
					for (uint32_t k = 0; k < kshape[2]; k++) {
						uint32_t idx[3] = { i, j, k };
						uint32_t want = ref_arg(op, last, a + offset(3, idx, sa),
									sa[axis], shape[axis]);
						uint32_t got = as_fp32 ? (uint32_t)c[offset(3, idx, sc)] :
								 ci[offset(3, idx, sc)];

						if (got != want && bad++ < 3)
							TH_LOG("axis %u op %#x last %d at %u,%u,%u: %u want %u",
							       axis, op, last, i, j, k, got, want);
					}
			EXPECT_EQ(0, bad);
		}

	/* REDUCE_PROD: values near 1 so that the products stay finite. */
	for (uint64_t i = 0; i < n; i++)
		a[i] = 1.0f + (float)((i * 7919) % 13) / 64.0f - 0.09f;
	for (uint32_t axes = 1; axes < 8; axes++) {
		uint32_t kshape[3], sc[MAXD];
		struct drm_vnpu_tensor_args t = {
			.op = DRM_VNPU_OP_T_REDUCE_PROD, .ndim = 3, .axes = axes,
			.shape = { 4, 9, 301 }, .a = ADDR(oa), .c = ADDR(oc),
		};
		int bad = 0;

		for (int d = 0; d < 3; d++)
			kshape[d] = axes & (1u << d) ? 1 : shape[d];
		dense(3, kshape, sc);
		for (int d = 0; d < 3; d++)
			if (axes & (1u << d))
				sc[d] = 0;
		memcpy(t.stride_a, sa, sizeof(sa));
		memcpy(t.stride_c, sc, sizeof(sc));
		ASSERT_EQ(1, run(self, &t)) TH_LOG("axes %u", axes);
		for (uint32_t i = 0; i < kshape[0]; i++)
			for (uint32_t j = 0; j < kshape[1]; j++)
				for (uint32_t k = 0; k < kshape[2]; k++) {
					uint32_t o[3] = { i, j, k }, idx[3];
					double want = 1.0;

					for (idx[0] = i; idx[0] < (axes & 1 ? shape[0] : i + 1); idx[0]++)
						for (idx[1] = j; idx[1] < (axes & 2 ? shape[1] : j + 1);
						     idx[1]++)
							for (idx[2] = k;
							     idx[2] < (axes & 4 ? shape[2] : k + 1); idx[2]++)
								want *= a[offset(3, idx, sa)];
					/* fp32 products of up to 10836 factors: 1e-6 * count. */
					if (!close_enough(c[offset(3, o, sc)], want, 0,
							  1e-7 * (double)(n / points_of(3, kshape)) + 1e-6) &&
					    bad++ < 3)
						TH_LOG("axes %u at %u,%u,%u: %g want %g", axes, i, j, k,
						       c[offset(3, o, sc)], want);
				}
		EXPECT_EQ(0, bad);
	}
}

TEST_F(ops, unary_against_reference)
{
	const uint32_t ops[] = { DRM_VNPU_OP_T_RELU, DRM_VNPU_OP_T_SIGMOID, DRM_VNPU_OP_T_TANH,
				 DRM_VNPU_OP_T_EXP };
	const float edges[] = { 0.0f, -0.0f, 1e-8f, -1e-8f, 1e-30f, 0.1699f, 0.1701f, -0.17f,
				 20.5f, -20.5f, 88.0f, 89.0f, -87.0f, -95.0f, -104.0f, -120.0f,
				 1e30f, -1e30f, INFINITY, -INFINITY, NAN };
	/* A transposed 3 x 1500 view of a 1500 x 3 array, written to dense C. */
	uint32_t shape[2] = { 3, 1500 }, sc[MAXD];
	uint64_t oa, oc;
	float *a = carve(self, 3 * 1500, 7, &oa), *c = carve(self, 3 * 1500, 8, &oc);
	const size_t nedges = sizeof(edges) / sizeof(edges[0]);

	for (uint32_t i = 0; i < 3 * 1500; i++)
		a[i] *= i % 3 ? 10.0f : 100.0f;
	for (size_t e = 0; e < nedges; e++)
		a[e * 3] = edges[e];
	dense(2, shape, sc);
	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		struct drm_vnpu_tensor_args t = {
			.op = ops[o], .ndim = 2, .shape = { 3, 1500 }, .stride_a = { 1, 3 },
			.a = ADDR(oa), .c = ADDR(oc),
		};
		int bad = 0;

		memcpy(t.stride_c, sc, sizeof(sc));
		ASSERT_EQ(1, run(self, &t)) TH_LOG("op %#x", ops[o]);
		for (uint32_t i = 0; i < 3; i++)
			for (uint32_t j = 0; j < 1500; j++) {
				double x = a[j * 3 + i], want = ref_unary(ops[o], x);
				double got = c[i * 1500 + j], abs_tol = 0, rel_tol = 0;

				if (ops[o] == DRM_VNPU_OP_T_EXP) {
					want = (float)want;
					rel_tol = 2e-6;
					abs_tol = 1e-44;
				} else if (ops[o] != DRM_VNPU_OP_T_RELU) {
					abs_tol = 2e-7;
					rel_tol = 2e-6;
				}
				if (isnan(x) && ops[o] == DRM_VNPU_OP_T_RELU)
					want = 0;	/* NaN > 0 is false */
				if (!close_enough(got, want, abs_tol, rel_tol) && bad++ < 5)
					TH_LOG("op %#x x=%g: %.9g want %.9g", ops[o], x, got, want);
			}
		EXPECT_EQ(0, bad);
		/* Small arguments of tanh keep their relative precision. */
		for (uint32_t j = 2; j < 5 && ops[o] == DRM_VNPU_OP_T_TANH; j++) {
			EXPECT_TRUE(close_enough(c[j], tanh(edges[j]), 0, 1e-6))
				TH_LOG("tanh(%g) = %g", edges[j], c[j]);
		}
	}
}

/* COPY: any permutation, bit exact (NaN payloads kept), and an expand. */
TEST_F(ops, copy_transposes_and_expands)
{
	const uint32_t shape[4] = { 2, 3, 4, 5 };
	const uint32_t perms[][4] = { { 0, 1, 2, 3 }, { 3, 2, 1, 0 }, { 0, 2, 3, 1 },
				      { 1, 0, 3, 2 }, { 2, 0, 1, 3 } };
	uint32_t sa[MAXD], n = 120;
	uint64_t oa, oc;
	float *a = carve(self, n, 9, &oa), *c = carve(self, 6 * n, 10, &oc);
	uint32_t *ua = (uint32_t *)a, *uc = (uint32_t *)c;

	ua[7] = 0x7fc01234;	/* a NaN with a payload */
	ua[8] = 0xffffffff;
	dense(4, shape, sa);
	for (size_t p = 0; p < sizeof(perms) / sizeof(perms[0]); p++) {
		/* C = transpose(A, perm): C[i] = A[i permuted]. */
		struct drm_vnpu_tensor_args t = {
			.op = DRM_VNPU_OP_T_COPY, .ndim = 4, .a = ADDR(oa), .c = ADDR(oc),
		};
		uint32_t idx[MAXD], aidx[MAXD];

		for (int d = 0; d < 4; d++) {
			t.shape[d] = shape[perms[p][d]];
			t.stride_a[d] = sa[perms[p][d]];
		}
		dense(4, t.shape, t.stride_c);
		ASSERT_EQ(1, run(self, &t));
		for (uint32_t i = 0; i < n; i++) {
			unravel(i, 4, t.shape, idx);
			for (int d = 0; d < 4; d++)
				aidx[perms[p][d]] = idx[d];
			ASSERT_EQ(ua[offset(4, aidx, sa)], uc[i]) TH_LOG("perm %zu point %u", p, i);
		}
	}
	/* Expand 2 x 1 x 60 to 2 x 6 x 60 (the middle dimension repeats). */
	struct drm_vnpu_tensor_args t = {
		.op = DRM_VNPU_OP_T_COPY, .ndim = 3, .shape = { 2, 6, 60 },
		.stride_a = { 60, 0, 1 }, .stride_c = { 360, 60, 1 },
		.a = ADDR(oa), .c = ADDR(oc),
	};

	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < 720; i++)
		ASSERT_EQ(ua[(i / 360) * 60 + i % 60], uc[i]);
}

/* Reductions over every subset of axes of a 3-d tensor, keepdims layout. */
TEST_F(ops, reductions_over_any_axes)
{
	const uint32_t shape[3] = { 5, 7, 301 };
	const uint32_t ops[] = { DRM_VNPU_OP_T_REDUCE_SUM, DRM_VNPU_OP_T_REDUCE_MEAN,
				 DRM_VNPU_OP_T_REDUCE_MAX };
	uint32_t sa[MAXD];
	uint64_t oa, oc, n = 5 * 7 * 301;
	float *a = carve(self, n, 11, &oa), *c = carve(self, n, 12, &oc);

	dense(3, shape, sa);
	for (uint32_t axes = 1; axes < 8; axes++) {
		uint32_t kshape[3], sc[MAXD], idx[MAXD], ridx[MAXD], oshape[3], rshape[3];
		uint32_t on = 0, rn = 0;

		for (int d = 0; d < 3; d++) {
			kshape[d] = axes & (1u << d) ? 1 : shape[d];
			if (axes & (1u << d))
				rshape[rn++] = shape[d];
			else
				oshape[on++] = shape[d];
		}
		dense(3, kshape, sc);
		for (int d = 0; d < 3; d++)
			if (axes & (1u << d))
				sc[d] = 0;
		for (size_t o = 0; o < 3; o++) {
			struct drm_vnpu_tensor_args t = {
				.op = ops[o], .ndim = 3, .axes = axes, .shape = { 5, 7, 301 },
				.a = ADDR(oa), .c = ADDR(oc),
			};
			uint64_t outs = points_of(on, oshape), red = points_of(rn, rshape);
			int bad = 0;

			memcpy(t.stride_a, sa, sizeof(sa));
			memcpy(t.stride_c, sc, sizeof(sc));
			ASSERT_EQ(1, run(self, &t)) TH_LOG("axes %u op %#x", axes, ops[o]);
			for (uint64_t p = 0; p < outs; p++) {
				float acc = ops[o] == DRM_VNPU_OP_T_REDUCE_MAX ? -INFINITY : 0.0f;
				uint64_t base;

				unravel(p, on, oshape, ridx);
				for (int d = 0, k = 0; d < 3; d++)
					idx[d] = axes & (1u << d) ? 0 : ridx[k++];
				base = offset(3, idx, sc);
				for (uint64_t q = 0; q < red; q++) {
					uint32_t qi[3];
					float v;

					unravel(q, rn, rshape, qi);
					for (int d = 0, k = 0; d < 3; d++)
						if (axes & (1u << d))
							idx[d] = qi[k++];
					v = a[offset(3, idx, sa)];
					if (ops[o] == DRM_VNPU_OP_T_REDUCE_MAX)
						acc = v > acc ? v : acc;
					else
						acc += v;
				}
				if (ops[o] == DRM_VNPU_OP_T_REDUCE_MEAN)
					acc /= (float)red;
				if (!close_enough(c[base], acc, ops[o] == DRM_VNPU_OP_T_REDUCE_MAX ? 0 :
						  1e-6, ops[o] == DRM_VNPU_OP_T_REDUCE_MAX ? 0 : 1e-6) &&
				    bad++ < 3)
					TH_LOG("axes %u op %#x out %llu: %g want %g", axes, ops[o],
					       (unsigned long long)p, c[base], acc);
			}
			EXPECT_EQ(0, bad);
		}
	}
}

/* SOFTMAX over one axis (any) and over trailing axes, in place too. */
TEST_F(ops, softmax_over_any_axes)
{
	const uint32_t shape[3] = { 4, 1200, 3 };
	const uint32_t masks[] = { 1, 2, 4, 6, 7 };
	uint32_t sa[MAXD];
	uint64_t oa, oc, n = 4 * 1200 * 3;
	float *a = carve(self, n, 13, &oa), *c = carve(self, n, 14, &oc);

	for (uint64_t i = 0; i < n; i++)
		a[i] *= 30.0f;	/* needs the maximum subtracted */
	dense(3, shape, sa);
	for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		uint32_t axes = masks[m], idx[MAXD], oshape[3], rshape[3], on = 0, rn = 0;
		struct drm_vnpu_tensor_args t = {
			.op = DRM_VNPU_OP_T_SOFTMAX, .ndim = 3, .axes = axes,
			.shape = { 4, 1200, 3 }, .a = ADDR(oa), .c = ADDR(oc),
		};
		int bad = 0;

		memcpy(t.stride_a, sa, sizeof(sa));
		memcpy(t.stride_c, sa, sizeof(sa));
		for (int d = 0; d < 3; d++) {
			if (axes & (1u << d))
				rshape[rn++] = shape[d];
			else
				oshape[on++] = shape[d];
		}
		ASSERT_EQ(1, run(self, &t)) TH_LOG("axes %u", axes);
		for (uint64_t p = 0; p < points_of(on, oshape); p++) {
			uint32_t oi[3], qi[3];
			double mx = -INFINITY, sum = 0, total = 0;
			uint64_t red = points_of(rn, rshape);

			unravel(p, on, oshape, oi);
			for (int pass = 0; pass < 3; pass++)
				for (uint64_t q = 0; q < red; q++) {
					uint64_t off;
					double x;

					unravel(q, rn, rshape, qi);
					for (int d = 0, k = 0, l = 0; d < 3; d++)
						idx[d] = axes & (1u << d) ? qi[k++] : oi[l++];
					off = offset(3, idx, sa);
					x = a[off];
					if (pass == 0) {
						mx = fmax(mx, x);
					} else if (pass == 1) {
						sum += exp(x - mx);
					} else {
						double want = exp(x - mx) / sum;

						total += c[off];
						if (!close_enough(c[off], want, 1e-7, 1e-5) && bad++ < 3)
							TH_LOG("axes %u: %g want %g", axes, c[off], want);
					}
				}
			EXPECT_TRUE(fabs(total - 1.0) < 1e-3);
		}
		EXPECT_EQ(0, bad);
	}

	/* In place over the middle axis: C is A. */
	struct drm_vnpu_tensor_args t = {
		.op = DRM_VNPU_OP_T_SOFTMAX, .ndim = 3, .axes = 2, .shape = { 4, 1200, 3 },
		.a = ADDR(oa), .c = ADDR(oa),
	};

	memcpy(t.stride_a, sa, sizeof(sa));
	memcpy(t.stride_c, sa, sizeof(sa));
	memcpy(PTR(oc), a, n * 4);
	ASSERT_EQ(1, run(self, &t));
	t.a = ADDR(oc);
	t.c = ADDR(oc);
	ASSERT_EQ(1, run(self, &t));
	EXPECT_EQ(0, memcmp(a, c, n * 4));
}

/* Batched matrix products, batch broadcast, long inner dimension. */
static void check_dot(struct __test_metadata *_metadata, struct _test_data_ops *self,
		      uint32_t batch, int a_bcast, uint32_t m, uint32_t n, uint32_t k, int trans_b,
		      int trans_c)
{
	uint64_t oa, ob, oc, save = self->next;
	float *a = carve(self, (uint64_t)(a_bcast ? 1 : batch) * m * k, 20, &oa);
	float *b = carve(self, (uint64_t)batch * k * n, 21, &ob);
	float *c = carve(self, (uint64_t)batch * m * n, 22, &oc);
	/* Dimensions (batch, m, n, k), k contracted. */
	struct drm_vnpu_tensor_args t = {
		.op = DRM_VNPU_OP_T_DOT, .ndim = 4, .axes = 8, .shape = { batch, m, n, k },
		.stride_a = { a_bcast ? 0 : m * k, k, 0, 1 },
		.stride_b = { k * n, 0, trans_b ? k : 1, trans_b ? 1 : n },
		.stride_c = { m * n, trans_c ? 1 : n, trans_c ? m : 1, 0 },
		.a = ADDR(oa), .b = ADDR(ob), .c = ADDR(oc),
	};
	int bad = 0;

	ASSERT_TRUE(a && b && c);
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t z = 0; z < batch; z++)
		for (uint32_t i = 0; i < m; i++)
			for (uint32_t j = 0; j < n; j++) {
				uint64_t o = trans_c ? ((uint64_t)z * n + j) * m + i :
					     ((uint64_t)z * m + i) * n + j;
				double s = 0;

				for (uint32_t p = 0; p < k; p++)
					s += (double)a[(a_bcast ? 0 : z * m * k) + i * k + p] *
					     b[z * k * n + (trans_b ? j * k + p : p * n + j)];
				if (!close_enough(c[o], s, 1e-5 + 2e-6 * k, 0) && bad++ < 3)
					TH_LOG("dot [%u][%u][%u]: %g want %g", z, i, j, c[o], s);
			}
	EXPECT_EQ(0, bad);
	self->next = save;
}

TEST_F(ops, dot_batched_matmul)
{
	check_dot(_metadata, self, 3, 0, 7, 11, 13, 0, 0);
	check_dot(_metadata, self, 4, 1, 5, 9, 33, 1, 0);
	check_dot(_metadata, self, 1, 0, 1, 1, 5000, 0, 0);	/* crosses sections */
	check_dot(_metadata, self, 2, 0, 17, 1, 1, 0, 0);	/* k = 1, n = 1 */
	/* Across the blocks of the blocked kernels, C transposed too. */
	check_dot(_metadata, self, 2, 1, 103, 530, 261, 1, 0);
	check_dot(_metadata, self, 3, 0, 37, 45, 300, 0, 1);
	check_dot(_metadata, self, 1, 0, 300, 3, 20, 1, 0);	/* few columns */
}

/* Convolution geometry used by the window tests. */
struct conv_case {
	uint32_t n, c, h, w, m, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

static uint32_t out_dim(uint32_t in, uint32_t k, uint32_t s, uint32_t d, uint32_t p0,
			uint32_t p1, int ceil_mode)
{
	uint32_t eff = (k - 1) * d + 1, span = in + p0 + p1 - eff;

	return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

static struct drm_vnpu_tensor_window window_of(const struct conv_case *cc, int ceil_mode)
{
	return (struct drm_vnpu_tensor_window){
		.kernel_h = cc->kh, .kernel_w = cc->kw, .stride_h = cc->sh, .stride_w = cc->sw,
		.dilation_h = cc->dh, .dilation_w = cc->dw, .pad_top = cc->pt,
		.pad_left = cc->pl, .pad_bottom = cc->pb, .pad_right = cc->pr,
		.out_h = out_dim(cc->h, cc->kh, cc->sh, cc->dh, cc->pt, cc->pb, ceil_mode),
		.out_w = out_dim(cc->w, cc->kw, cc->sw, cc->dw, cc->pl, cc->pr, ceil_mode),
	};
}

static const struct conv_case conv_cases[] = {
	{ 2, 3, 9, 8, 4, 3, 2, 2, 1, 1, 2, 1, 0, 2, 1 },
	{ 1, 2, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },
	{ 1, 1, 7, 1, 2, 2, 1, 3, 1, 1, 1, 0, 0, 0, 0 },	/* 1-d as H x 1 */
	{ 3, 5, 4, 6, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 },	/* 1 x 1 kernel */
	{ 1, 16, 12, 13, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },	/* 3 x 3, "same" */
};

/* IM2COL exactly, then the convolution as IM2COL + DOT against direct. */
TEST_F(ops, im2col_and_convolution)
{
	for (size_t k = 0; k < sizeof(conv_cases) / sizeof(conv_cases[0]); k++) {
		const struct conv_case *cc = &conv_cases[k];
		struct drm_vnpu_tensor_window w = window_of(cc, 0);
		uint32_t ishape[4] = { cc->n, cc->c, cc->h, cc->w }, si[MAXD];
		uint32_t cshape[6] = { cc->n, cc->c, cc->kh, cc->kw, w.out_h, w.out_w }, scols[MAXD];
		uint32_t ckk = cc->c * cc->kh * cc->kw, ohw = w.out_h * w.out_w;
		uint64_t ox, ocol, ow, oy, save = self->next;
		float *x = carve(self, points_of(4, ishape), 30 + k, &ox);
		float *cols = carve(self, points_of(6, cshape), 31 + k, &ocol);
		float *wt = carve(self, (uint64_t)cc->m * ckk, 32 + k, &ow);
		float *y = carve(self, (uint64_t)cc->n * cc->m * ohw, 33 + k, &oy);
		struct drm_vnpu_tensor_args t = {
			.op = DRM_VNPU_OP_T_IM2COL, .ndim = 4,
			.shape = { cc->n, cc->c, cc->h, cc->w }, .a = ADDR(ox), .c = ADDR(ocol),
			.window = w,
		};
		uint32_t idx[MAXD];
		int bad = 0;

		ASSERT_TRUE(x && cols && wt && y);
		dense(4, ishape, si);
		dense(6, cshape, scols);
		memcpy(t.stride_a, si, sizeof(si));
		memcpy(t.stride_c, scols, sizeof(scols));
		ASSERT_EQ(1, run(self, &t)) TH_LOG("case %zu", k);
		for (uint64_t p = 0; p < points_of(6, cshape); p++) {
			int64_t h, v;
			float want = 0;

			unravel(p, 6, cshape, idx);
			h = (int64_t)idx[4] * cc->sh - cc->pt + (int64_t)idx[2] * cc->dh;
			v = (int64_t)idx[5] * cc->sw - cc->pl + (int64_t)idx[3] * cc->dw;
			if (h >= 0 && h < cc->h && v >= 0 && v < cc->w)
				want = x[((idx[0] * cc->c + idx[1]) * cc->h + h) * cc->w + v];
			if (cols[p] != want && bad++ < 3)
				TH_LOG("case %zu im2col %llu: %g want %g", k,
				       (unsigned long long)p, cols[p], want);
		}
		EXPECT_EQ(0, bad);

		/* y[n] = W (m x ckk) . cols[n] (ckk x ohw): dims (n, m, ohw, ckk). */
		t = (struct drm_vnpu_tensor_args){
			.op = DRM_VNPU_OP_T_DOT, .ndim = 4, .axes = 8,
			.shape = { cc->n, cc->m, ohw, ckk },
			.stride_a = { 0, ckk, 0, 1 }, .stride_b = { ckk * ohw, 0, 1, ohw },
			.stride_c = { cc->m * ohw, ohw, 1, 0 },
			.a = ADDR(ow), .b = ADDR(ocol), .c = ADDR(oy),
		};
		ASSERT_EQ(1, run(self, &t));
		for (uint32_t n = 0; n < cc->n; n++)
			for (uint32_t m = 0; m < cc->m; m++)
				for (uint32_t o = 0; o < ohw; o++) {
					uint32_t oh = o / w.out_w, ow2 = o % w.out_w;
					double s = 0;
					float got = y[(n * cc->m + m) * ohw + o];

					for (uint32_t c = 0; c < cc->c; c++)
						for (uint32_t i = 0; i < cc->kh; i++)
							for (uint32_t j = 0; j < cc->kw; j++) {
								int64_t h = (int64_t)oh * cc->sh - cc->pt + i * cc->dh;
								int64_t v = (int64_t)ow2 * cc->sw - cc->pl + j * cc->dw;

								if (h < 0 || h >= cc->h || v < 0 || v >= cc->w)
									continue;
								s += (double)wt[((m * cc->c + c) * cc->kh + i) * cc->kw + j] *
								     x[((n * cc->c + c) * cc->h + h) * cc->w + v];
							}
					if (!close_enough(got, s, 1e-5 + 2e-6 * ckk, 0) && bad++ < 3)
						TH_LOG("case %zu conv [%u][%u][%u]: %g want %g", k, n, m, o,
						       got, s);
				}
		EXPECT_EQ(0, bad);
		self->next = save;
	}
}

/* MAXPOOL and AVGPOOL (both padding counts), floor and ceil output sizes. */
TEST_F(ops, pools_against_reference)
{
	static const struct conv_case pools[] = {
		{ 2, 3, 9, 8, 0, 3, 2, 2, 1, 1, 1, 1, 0, 2, 1 },
		{ 1, 2, 6, 7, 0, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0 },
		{ 1, 1, 7, 7, 0, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1 },	/* dilated */
		{ 1, 4, 5, 1, 0, 3, 1, 1, 1, 1, 1, 1, 0, 1, 0 },	/* 1-d */
		{ 1, 1, 6, 6, 0, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0 },	/* ceil overhang */
	};

	for (size_t k = 0; k < sizeof(pools) / sizeof(pools[0]); k++) {
		const struct conv_case *cc = &pools[k];

		for (int mode = 0; mode < 6; mode++) {
			int ceil_mode = mode & 1, kind = mode >> 1;	/* max, avg, avg + pad */
			struct drm_vnpu_tensor_window w = window_of(cc, ceil_mode);
			uint32_t ishape[4] = { cc->n, cc->c, cc->h, cc->w };
			uint32_t oshape[4] = { cc->n, cc->c, w.out_h, w.out_w }, so[MAXD];
			uint64_t ox, oy, save = self->next;
			float *x = carve(self, points_of(4, ishape), 40 + k, &ox);
			float *y = carve(self, points_of(4, oshape), 41 + k, &oy);
			struct drm_vnpu_tensor_args t = {
				.op = kind ? DRM_VNPU_OP_T_AVGPOOL : DRM_VNPU_OP_T_MAXPOOL,
				.flags = kind == 2 ? DRM_VNPU_TENSOR_COUNT_INCLUDE_PAD : 0,
				.ndim = 4, .shape = { cc->n, cc->c, cc->h, cc->w },
				.a = ADDR(ox), .c = ADDR(oy), .window = w,
			};
			uint32_t idx[MAXD];
			int bad = 0;

			ASSERT_TRUE(x && y);
			/* Ceil mode: the last window must start inside input or left pad. */
			if (ceil_mode && ((w.out_h - 1) * cc->sh >= cc->h + cc->pt ||
					  (w.out_w - 1) * cc->sw >= cc->w + cc->pl))
				continue;
			dense(4, ishape, t.stride_a);
			dense(4, oshape, so);
			memcpy(t.stride_c, so, sizeof(so));
			ASSERT_EQ(1, run(self, &t)) TH_LOG("pool %zu mode %d", k, mode);
			for (uint64_t p = 0; p < points_of(4, oshape); p++) {
				float acc = kind ? 0.0f : -INFINITY;
				uint32_t inside = 0, padded = 0;

				unravel(p, 4, oshape, idx);
				for (uint32_t i = 0; i < cc->kh; i++)
					for (uint32_t j = 0; j < cc->kw; j++) {
						int64_t h = (int64_t)idx[2] * cc->sh - cc->pt + i * cc->dh;
						int64_t v = (int64_t)idx[3] * cc->sw - cc->pl + j * cc->dw;
						float e;

						if (h < (int64_t)cc->h + cc->pb && v < (int64_t)cc->w + cc->pr)
							padded++;
						if (h < 0 || h >= cc->h || v < 0 || v >= cc->w)
							continue;
						e = x[((idx[0] * cc->c + idx[1]) * cc->h + h) * cc->w + v];
						acc = kind ? acc + e : (e > acc ? e : acc);
						inside++;
					}
				if (kind)
					acc /= (float)(kind == 2 ? padded : inside);
				if (!close_enough(y[p], acc, kind ? 1e-6 : 0, kind ? 1e-6 : 0) &&
				    bad++ < 3)
					TH_LOG("pool %zu mode %d out %llu: %g want %g", k, mode,
					       (unsigned long long)p, y[p], acc);
			}
			EXPECT_EQ(0, bad);
			self->next = save;
		}
	}
}

/* BATCHNORM over channel axis 1 (N C H W) and over the last axis. */
TEST_F(ops, batchnorm_against_reference)
{
	const uint32_t shape[4] = { 2, 5, 3, 401 };

	for (uint32_t axis = 1; axis < 4; axis += 2) {
		uint32_t ch = shape[axis], s[MAXD], idx[MAXD];
		uint64_t ox, oy, op[4], n = points_of(4, shape), save = self->next;
		float *x = carve(self, n, 50, &ox), *y = carve(self, n, 51, &oy), *prm[4];
		float eps = 1e-5f;
		struct drm_vnpu_tensor_args t = {
			.op = DRM_VNPU_OP_T_BATCHNORM, .ndim = 4, .shape = { 2, 5, 3, 401 },
			.a = ADDR(ox), .c = ADDR(oy),
		};
		int bad = 0;

		for (int i = 0; i < 4; i++) {
			prm[i] = carve(self, ch, 52 + i, &op[i]);
			ASSERT_NE(NULL, prm[i]);
		}
		for (uint32_t i = 0; i < ch; i++)
			prm[3][i] = fabsf(prm[3][i]) + (i == 0 ? 0.0f : 0.1f);	/* var >= 0 */
		t.norm = (struct drm_vnpu_tensor_norm){
			.scale = ADDR(op[0]), .bias = ADDR(op[1]), .mean = ADDR(op[2]),
			.var = ADDR(op[3]), .epsilon = f2u(eps), .axis = axis,
		};
		dense(4, shape, s);
		memcpy(t.stride_a, s, sizeof(s));
		memcpy(t.stride_c, s, sizeof(s));
		ASSERT_EQ(1, run(self, &t)) TH_LOG("axis %u", axis);
		for (uint64_t p = 0; p < n; p++) {
			uint32_t c;
			double want;

			unravel(p, 4, shape, idx);
			c = idx[axis];
			want = (x[p] - (double)prm[2][c]) / sqrt((double)prm[3][c] + eps) *
			       prm[0][c] + prm[1][c];
			if (!close_enough(y[p], want, 1e-6, 1e-6) && bad++ < 3)
				TH_LOG("axis %u point %llu: %g want %g", axis,
				       (unsigned long long)p, y[p], want);
		}
		EXPECT_EQ(0, bad);
		self->next = save;
	}
}

/* A valid ADD of 4 x 8 (B broadcast over rows) to mutate in the bad tests. */
static struct drm_vnpu_tensor_args good_add(struct _test_data_ops *self, uint64_t oa,
					    uint64_t ob, uint64_t oc)
{
	return (struct drm_vnpu_tensor_args){
		.op = DRM_VNPU_OP_T_ADD, .ndim = 2, .shape = { 4, 8 },
		.stride_a = { 8, 1 }, .stride_b = { 0, 1 }, .stride_c = { 8, 1 },
		.a = ADDR(oa), .b = ADDR(ob), .c = ADDR(oc),
	};
}

/* Submits [FILL oc, KERNEL] and returns the submit's result. */
static int submit_bad(struct _test_data_ops *self, const void *args, uint64_t size,
		      uint64_t oc)
{
	struct drm_vnpu_cmd cmds[2] = { cmd_fill(ADDR(oc), 4, 7), cmd_tensor(self->b.addr) };

	cmds[1].size = size;
	memset(self->b.map, 0, ARR);
	memcpy(self->b.map, args, size < ARR ? size : ARR);
	return submit_cmds(self->fd, self->queue, cmds, 2, NULL, 0, self->sync);
}

struct bad_case {
	const char *what;
	struct drm_vnpu_tensor_args args;
	int err;
};

TEST_F(ops, bad_arguments)
{
	uint64_t oa, ob, oc, on, big;
	struct drm_vnpu_tensor_args g, pool, bn, red, t;
	int i, n = 0;
	struct bad_case bad[64];

	/* C first: a huge span of A or B does not reach back to it. */
	carve(self, 1024, 62, &oc);
	carve(self, 1024, 60, &oa);
	carve(self, 1024, 61, &ob);
	carve(self, 64, 63, &on);
	carve(self, 64, 64, &big);
	memset(PTR(oc), 0, 4096);
	g = good_add(self, oa, ob, oc);
	pool = (struct drm_vnpu_tensor_args){
		.op = DRM_VNPU_OP_T_MAXPOOL, .ndim = 4, .shape = { 1, 2, 4, 4 },
		.stride_a = { 32, 16, 4, 1 }, .stride_c = { 8, 4, 2, 1 },
		.a = ADDR(oa), .c = ADDR(oc),
		.window = { .kernel_h = 2, .kernel_w = 2, .stride_h = 2, .stride_w = 2,
			    .dilation_h = 1, .dilation_w = 1, .out_h = 2, .out_w = 2 },
	};
	bn = (struct drm_vnpu_tensor_args){
		.op = DRM_VNPU_OP_T_BATCHNORM, .ndim = 2, .shape = { 4, 8 },
		.stride_a = { 8, 1 }, .stride_c = { 8, 1 }, .a = ADDR(oa), .c = ADDR(oc),
		.norm = { .scale = ADDR(on), .bias = ADDR(on), .mean = ADDR(on),
			  .var = ADDR(on), .axis = 1 },
	};
	red = (struct drm_vnpu_tensor_args){
		.op = DRM_VNPU_OP_T_REDUCE_SUM, .ndim = 2, .axes = 2, .shape = { 4, 8 },
		.stride_a = { 8, 1 }, .stride_c = { 1, 0 }, .a = ADDR(oa), .c = ADDR(oc),
	};

#define BAD(desc, base, err_, stmt) do {				\
		t = (base);						\
		stmt;							\
		bad[n++] = (struct bad_case){ desc, t, err_ };		\
	} while (0)
	BAD("op past the last", g, -EINVAL, t.op = DRM_VNPU_OP_T_TOPK + 1);
	BAD("op 0xffffffff", g, -EINVAL, t.op = 0xffffffff);
	BAD("flags on add", g, -EINVAL, t.flags = 1);
	BAD("count_include_pad on maxpool", pool, -EINVAL,
	    t.flags = DRM_VNPU_TENSOR_COUNT_INCLUDE_PAD);
	BAD("ndim 0", g, -EINVAL, t.ndim = 0);
	BAD("ndim 7", g, -EINVAL, t.ndim = 7);
	BAD("shape 0", g, -EINVAL, t.shape[1] = 0);
	BAD("shape too large", g, -EINVAL, t.shape[0] = DRM_VNPU_KERNEL_MAX_DIM + 1);
	BAD("shape past ndim", g, -EINVAL, t.shape[2] = 1);
	BAD("stride_a past ndim", g, -EINVAL, t.stride_a[5] = 1);
	BAD("stride_c past ndim", g, -EINVAL, t.stride_c[2] = 1);
	BAD("too many points", red, -EINVAL,
	    (t.ndim = 3, t.axes = 7, t.shape[0] = t.shape[1] = t.shape[2] = 1u << 14,
	     memset(t.stride_a, 0, sizeof(t.stride_a)), memset(t.stride_c, 0, sizeof(t.stride_c))));
	BAD("select_last on reduce_max", red, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_REDUCE_MAX, t.flags = DRM_VNPU_TENSOR_SELECT_LAST));
	BAD("count_include_pad on argmax", red, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_ARGMAX, t.flags = DRM_VNPU_TENSOR_COUNT_INCLUDE_PAD));
	BAD("argmin without axes", red, -EINVAL, (t.op = DRM_VNPU_OP_T_ARGMIN, t.axes = 0));
	BAD("argmax over 2^31 points", red, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_ARGMAX, t.ndim = 3, t.axes = 7, t.shape[0] = 1u << 8,
	     t.shape[1] = t.shape[2] = 1u << 12, memset(t.stride_a, 0, sizeof(t.stride_a)),
	     memset(t.stride_c, 0, sizeof(t.stride_c))));
	BAD("b on log", g, -EINVAL, (t.op = DRM_VNPU_OP_T_LOG, memset(t.stride_b, 0, 24)));
	BAD("axes on atanh", g, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_ATANH, t.b = 0, memset(t.stride_b, 0, 24), t.axes = 1));
	BAD("axes on add", g, -EINVAL, t.axes = 1);
	BAD("reduce without axes", red, -EINVAL, t.axes = 0);
	BAD("axes past ndim", red, -EINVAL, t.axes = 4);
	BAD("b on relu", g, -EINVAL, (t.op = DRM_VNPU_OP_T_RELU, memset(t.stride_b, 0, 24)));
	BAD("stride_b on exp", g, -EINVAL, (t.op = DRM_VNPU_OP_T_EXP, t.b = 0));
	BAD("misaligned a", g, -EINVAL, t.a += 2);
	BAD("misaligned b", g, -EINVAL, t.b += 1);
	BAD("misaligned c", g, -EINVAL, t.c += 2);
	BAD("c stride 0 on a kept dim", g, -EINVAL, t.stride_c[0] = 0);
	BAD("c stride on a reduced axis", red, -EINVAL, t.stride_c[1] = 1);
	BAD("c overlaps a, not in place", g, -EINVAL, t.c = t.a + 4);
	BAD("c in place on b broadcast", g, -EINVAL, t.c = t.b);
	BAD("dot in place", red, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_DOT, t.b = ADDR(ob), t.stride_b[1] = 1, t.c = t.a));
	BAD("reduce output overlaps input", red, -EINVAL, t.c = t.a + 64);
	BAD("window on add", g, -EINVAL, t.window.kernel_h = 1);
	BAD("norm on add", g, -EINVAL, t.norm.epsilon = 1);
	BAD("pool ndim 3", pool, -EINVAL, (t.ndim = 3, t.shape[3] = 0, t.stride_a[3] = 0));
	BAD("pool kernel 0", pool, -EINVAL, t.window.kernel_w = 0);
	BAD("pool stride 0", pool, -EINVAL, t.window.stride_h = 0);
	BAD("pool dilation 0", pool, -EINVAL, t.window.dilation_w = 0);
	BAD("pool out 0", pool, -EINVAL, t.window.out_h = 0);
	BAD("pool pad too large", pool, -EINVAL, t.window.pad_top = DRM_VNPU_KERNEL_MAX_DIM + 1);
	BAD("pool window over 4096", pool, -EINVAL,
	    (t.window.kernel_h = 65, t.window.kernel_w = 64));
	BAD("pool stride_c[4]", pool, -EINVAL, t.stride_c[4] = 1);
	BAD("pool axes", pool, -EINVAL, t.axes = 1);
	BAD("pool b", pool, -EINVAL, t.b = ADDR(ob));
	BAD("batchnorm axis 2", bn, -EINVAL, t.norm.axis = 2);
	BAD("batchnorm misaligned var", bn, -EINVAL, t.norm.var += 2);
	BAD("batchnorm mean outside", bn, -EACCES, t.norm.mean = DRM_VNPU_HOST_BASE + (1ULL << 40));
	BAD("batchnorm c overlaps scale", bn, -EINVAL, t.norm.scale = t.c + 16);
	BAD("a outside", g, -EACCES, t.a = DRM_VNPU_HOST_BASE + (1ULL << 40));
	BAD("c past the end", g, -EACCES, t.c = self->b.addr + BUF_SIZE - 64);
	BAD("stride past the end", g, -EACCES, t.stride_a[0] = 1u << 22);
	BAD("huge stride", g, -EACCES, t.stride_b[0] = 0xffffffffu);
	BAD("b unowned", g, -EACCES, t.b = 0);
	BAD("im2col output past the end", pool, -EACCES,
	    (t.op = DRM_VNPU_OP_T_IM2COL, t.c = ADDR(big), t.stride_c[1] = 1u << 22,
	     t.stride_c[4] = 8, t.stride_c[5] = 1));
#undef BAD

	for (i = 0; i < n; i++)
		EXPECT_EQ(bad[i].err, submit_bad(self, &bad[i].args, sizeof(bad[i].args), oc))
			TH_LOG("%s", bad[i].what);

	/* Argument sizes: versioned by size, tail zero, multiple of 8. */
	uint8_t raw[DRM_VNPU_KERNEL_ARGS_MAX_SIZE + 8] = {};

	memcpy(raw, &g, sizeof(g));
	EXPECT_EQ(-EINVAL, submit_bad(self, raw, DRM_VNPU_TENSOR_ARGS_SIZE_V1 - 8, oc));
	EXPECT_EQ(-EINVAL, submit_bad(self, raw, sizeof(g) + 4, oc));
	EXPECT_EQ(-EINVAL, submit_bad(self, raw, DRM_VNPU_KERNEL_ARGS_MAX_SIZE + 8, oc));
	raw[sizeof(g) + 9] = 1;
	EXPECT_EQ(-E2BIG, submit_bad(self, raw, sizeof(g) + 16, oc));
	raw[sizeof(g) + 9] = 0;
	/* A 2-D operator with the tensor size, a tensor operator with 72. */
	((struct drm_vnpu_tensor_args *)raw)->op = DRM_VNPU_OP_ADD;
	EXPECT_EQ(-EINVAL, submit_bad(self, raw, sizeof(g), oc));
	EXPECT_EQ(-EINVAL, submit_bad(self, &g, sizeof(struct drm_vnpu_kernel_args), oc));
	/* Arguments outside any buffer. */
	struct drm_vnpu_cmd cmd = cmd_tensor(self->b.addr + BUF_SIZE - 128);

	EXPECT_EQ(-EACCES, submit_cmds(self->fd, self->queue, &cmd, 1, NULL, 0, 0));

	/* Nothing ran: the FILL before each bad command never executed. */
	usleep(20000);
	EXPECT_EQ(0, *(uint32_t *)PTR(oc));

	/* A longer struct with a zero tail, and each base, are accepted. */
	memcpy(raw, &g, sizeof(g));
	EXPECT_EQ(0, submit_bad(self, raw, sizeof(g) + 64, oc));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_EQ(1, syncobj_status(self->fd, self->sync));
	EXPECT_EQ(1, run(self, &pool));
	EXPECT_EQ(1, run(self, &bn));
	EXPECT_EQ(1, run(self, &red));
}

/*
 * Operators too long for the queue's timeout stop at a section boundary:
 * the job fails with -ETIMEDOUT instead of running for hours.
 */
TEST_F(ops, long_operators_stop_at_the_timeout)
{
	uint64_t oa, oc, ogemm;
	struct drm_vnpu_tensor_args t[3] = {
		{ .op = DRM_VNPU_OP_T_REDUCE_SUM, .ndim = 2, .axes = 3,
		  .shape = { 1u << 24, 1u << 16 } },
		{ .op = DRM_VNPU_OP_T_DOT, .ndim = 2, .axes = 3,
		  .shape = { 1u << 24, 1u << 16 } },
		/* A matrix product (blocked, split across the engines). */
		{ .op = DRM_VNPU_OP_T_DOT, .ndim = 3, .axes = 4,
		  .shape = { 1u << 12, 16, 1u << 24 }, .stride_c = { 16, 1, 0 } },
	};

	carve(self, 16, 70, &oa);
	carve(self, 16, 71, &oc);
	ASSERT_NE(NULL, carve(self, 1u << 16, 72, &ogemm));
	for (int i = 0; i < 3; i++) {
		uint32_t queue = 0;
		uint64_t start;

		t[i].a = ADDR(oa);
		t[i].c = ADDR(i == 2 ? ogemm : oc);
		if (t[i].op == DRM_VNPU_OP_T_DOT)
			t[i].b = ADDR(oa);
		ASSERT_EQ(0, queue_create_timeout(self->fd, DRM_VNPU_ENGINE_COMPUTE,
						  DRM_VNPU_PRIORITY_NORMAL, 200, &queue));
		self->queue = queue;
		start = now_ns();
		EXPECT_EQ(-ETIMEDOUT, run(self, &t[i])) TH_LOG("op %#x", t[i].op);
		TH_LOG("op %#x stopped after %llu ms", t[i].op,
		       (unsigned long long)(now_ns() - start) / 1000000);
		queue_destroy(self->fd, queue);
	}
	/* Timeouts count against the device health: leave it healthy. */
	EXPECT_EQ(0, vnpu_sysfs_write(self->fd, "reset", "1"));
}

/* --- Element types (uAPI 1.5) ---------------------------------------------------- */

/* fp32 to fp16 bits, rounded to nearest even: the compiler's conversion. */
static uint16_t h_of(float f)
{
	_Float16 h = (_Float16)f;
	uint16_t u;

	memcpy(&u, &h, sizeof(u));
	return u;
}

static float f_of(uint16_t u)
{
	_Float16 h;

	memcpy(&h, &u, sizeof(h));
	return (float)h;
}

static uint32_t bits_of(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

/* Carves @elems fp16 values (64-byte aligned), random values rounded to fp16. */
static uint16_t *carve16(struct _test_data_ops *self, uint64_t elems, unsigned int seed,
			 uint64_t *off)
{
	uint16_t *p;

	*off = self->next;
	self->next = (self->next + elems * 2 + 63) & ~63ULL;
	if (self->next > BUF_SIZE)
		return NULL;
	p = PTR(*off);
	for (uint64_t i = 0; i < elems; i++)
		p[i] = h_of(frand(&seed));
	return p;
}

/* Equal bits, or both NaN. */
static int same_float(float got, float want)
{
	return bits_of(got) == bits_of(want) || (isnan(got) && isnan(want));
}

TEST_F(ops, fp16_conversions_are_exact)
{
	uint64_t oh, of, oh2, oi;
	uint16_t *h = carve16(self, 65536, 1, &oh), *h2;
	float *f = carve(self, 65536, 2, &of);
	int32_t *iv;
	int bad = 0;
	struct drm_vnpu_tensor_args t = {
		.op = DRM_VNPU_OP_T_COPY, .ndim = 1, .shape = { 65536 },
		.stride_a = { 1 }, .stride_c = { 1 },
		.dtype_a = DRM_VNPU_DTYPE_F16, .dtype_c = DRM_VNPU_DTYPE_F32,
	};

	h2 = carve16(self, 65536, 3, &oh2);
	iv = (int32_t *)carve(self, 4096, 4, &oi);
	ASSERT_TRUE(h && f && h2 && iv);
	/* Every fp16 bit pattern to fp32. */
	for (uint32_t i = 0; i < 65536; i++)
		h[i] = (uint16_t)i;
	t.a = ADDR(oh);
	t.c = ADDR(of);
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < 65536; i++)
		if (!same_float(f[i], f_of((uint16_t)i)) && bad++ < 3)
			TH_LOG("fp16 %#x: %a want %a", i, f[i], f_of((uint16_t)i));
	EXPECT_EQ(0, bad);

	/*
	 * fp32 to fp16: random bit patterns, and the values around every
	 * rounding boundary of the fp16 exponents (ties, subnormals, overflow).
	 */
	unsigned int seed = 5;

	static const float edges[] = {
		65504.0f, 65519.996f, 65520.0f, 1e9f, 0x1p-24f, 0x1p-25f, 0x1.0002p-25f,
		0x1.8p-24f, 0x1p-14f, 0x1.ff8p-15f, -0.0f, INFINITY, -INFINITY, NAN,
	};

	for (uint32_t i = 0; i < 65536; i++) {
		uint32_t u = (uint32_t)rand_r(&seed) << 16 ^ (uint32_t)rand_r(&seed);

		if (i < 2 * 0x7800) {
			/*
			 * Positive fp16 value k = i / 2, or (odd i) the tie between k
			 * and the next; +-1 fp32 ulp; either sign.
			 */
			float lo = f_of((uint16_t)(i >> 1)), hi = f_of((uint16_t)((i >> 1) + 1));
			float mid = lo + (hi - lo) / 2;

			u = bits_of(i & 1 ? mid : lo) + (int)(rand_r(&seed) % 3) - 1;
			u |= (uint32_t)(rand_r(&seed) & 1) << 31;
		} else if (i - 2 * 0x7800 < sizeof(edges) / sizeof(edges[0])) {
			u = bits_of(edges[i - 2 * 0x7800]);
		}
		memcpy(&f[i], &u, sizeof(u));
	}
	t.dtype_a = DRM_VNPU_DTYPE_F32;
	t.dtype_c = DRM_VNPU_DTYPE_F16;
	t.a = ADDR(of);
	t.c = ADDR(oh2);
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < 65536; i++)
		if (!same_float(f_of(h2[i]), f_of(h_of(f[i]))) && bad++ < 3)
			TH_LOG("fp32 %a: fp16 %#x want %#x", f[i], h2[i], h_of(f[i]));
	EXPECT_EQ(0, bad);

	/* int32 to fp32 rounds to nearest even above 2^24; int8 and uint8 exact. */
	for (uint32_t i = 0; i < 4096; i++)
		iv[i] = i < 64 ? (int32_t)(0x7fffffc0u + i) : (int32_t)(rand_r(&seed) * 2654435761u);
	t.dtype_a = DRM_VNPU_DTYPE_I32;
	t.dtype_c = DRM_VNPU_DTYPE_F32;
	t.shape[0] = 4096;
	t.a = ADDR(oi);
	t.c = ADDR(of);
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < 4096; i++)
		if (!same_float(f[i], (float)iv[i]) && bad++ < 3)
			TH_LOG("int32 %d: %a want %a", iv[i], f[i], (float)iv[i]);
	t.dtype_a = DRM_VNPU_DTYPE_I8;
	t.dtype_c = DRM_VNPU_DTYPE_F16;
	t.c = ADDR(oh2);
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < 4096; i++)
		if (f_of(h2[i]) != (float)((int8_t *)iv)[i] && bad++ < 3)
			TH_LOG("int8 %d: %g", ((int8_t *)iv)[i], f_of(h2[i]));
	t.dtype_a = DRM_VNPU_DTYPE_U8;
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < 4096; i++)
		if (f_of(h2[i]) != (float)((uint8_t *)iv)[i] && bad++ < 3)
			TH_LOG("uint8 %u: %g", ((uint8_t *)iv)[i], f_of(h2[i]));
	/* Same type: bytes moved as they are (int8, strided: every other byte). */
	t.dtype_a = t.dtype_c = DRM_VNPU_DTYPE_I8;
	t.shape[0] = 2048;
	t.stride_a[0] = 2;
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < 2048; i++)
		if (((uint8_t *)h2)[i] != ((uint8_t *)iv)[2 * i] && bad++ < 3)
			TH_LOG("int8 copy %u", i);
	EXPECT_EQ(0, bad);
}

/* fp16 operands of the float operators, against fp32 references rounded once. */
TEST_F(ops, fp16_operators_against_reference)
{
	const uint32_t M = 37, N = 45, K = 300;
	uint64_t oa, ob, oc, of, om;
	uint16_t *a = carve16(self, M * K, 11, &oa), *b = carve16(self, K * N, 12, &ob);
	uint16_t *c = carve16(self, M * N, 13, &oc);
	float *f = carve(self, M * N, 14, &of), *bm = carve(self, K, 15, &om);
	int bad = 0;
	struct drm_vnpu_tensor_args t;

	ASSERT_TRUE(a && b && c && f && bm);
	/* ADD: fp16 A + fp32 B broadcast over rows -> fp16 C, one rounding. */
	t = (struct drm_vnpu_tensor_args){
		.op = DRM_VNPU_OP_T_ADD, .ndim = 2, .shape = { M, K },
		.stride_a = { K, 1 }, .stride_b = { 0, 1 }, .stride_c = { K, 1 },
		.a = ADDR(oa), .b = ADDR(om), .c = ADDR(oc),
		.dtype_a = DRM_VNPU_DTYPE_F16, .dtype_c = DRM_VNPU_DTYPE_F16,
	};
	t.shape[1] = N;
	t.stride_a[0] = K;
	t.stride_c[0] = N;
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < M; i++)
		for (uint32_t j = 0; j < N; j++)
			if (c[i * N + j] != h_of(f_of(a[i * K + j]) + bm[j]) && bad++ < 3)
				TH_LOG("add [%u][%u]: %#x want %#x", i, j, c[i * N + j],
				       h_of(f_of(a[i * K + j]) + bm[j]));
	EXPECT_EQ(0, bad);

	/* SIGMOID fp16 -> fp16 in place. */
	memcpy(c, a, M * N * 2);
	t = (struct drm_vnpu_tensor_args){
		.op = DRM_VNPU_OP_T_SIGMOID, .ndim = 1, .shape = { M * N },
		.stride_a = { 1 }, .stride_c = { 1 }, .a = ADDR(oc), .c = ADDR(oc),
		.dtype_a = DRM_VNPU_DTYPE_F16, .dtype_c = DRM_VNPU_DTYPE_F16,
	};
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < M * N; i++) {
		double want = 1 / (1 + exp(-(double)f_of(a[i])));

		/* One fp16 rounding of a value within 1 fp32 ulp: half an ulp + a bit. */
		if (!close_enough(f_of(c[i]), want, 1e-6, 1.0 / 2048) && bad++ < 3)
			TH_LOG("sigmoid %g: %g want %g", f_of(a[i]), f_of(c[i]), want);
	}
	EXPECT_EQ(0, bad);

	/*
	 * DOT of fp16 A (M x K) and fp16 B (K x N): to fp32 C through the
	 * blocked kernels, and to fp16 C through the reduction path; fp32
	 * accumulation either way.
	 */
	for (int half_c = 0; half_c < 2; half_c++) {
		t = (struct drm_vnpu_tensor_args){
			.op = DRM_VNPU_OP_T_DOT, .ndim = 3, .axes = 4, .shape = { M, N, K },
			.stride_a = { K, 0, 1 }, .stride_b = { 0, 1, N }, .stride_c = { N, 1, 0 },
			.a = ADDR(oa), .b = ADDR(ob), .c = ADDR(half_c ? oc : of),
			.dtype_a = DRM_VNPU_DTYPE_F16, .dtype_b = DRM_VNPU_DTYPE_F16,
			.dtype_c = half_c ? DRM_VNPU_DTYPE_F16 : DRM_VNPU_DTYPE_F32,
		};
		ASSERT_EQ(1, run(self, &t));
		for (uint32_t i = 0; i < M; i++)
			for (uint32_t j = 0; j < N; j++) {
				double s = 0, got;

				for (uint32_t p = 0; p < K; p++)
					s += (double)f_of(a[i * K + p]) * f_of(b[p * N + j]);
				got = half_c ? f_of(c[i * N + j]) : f[i * N + j];
				if (!close_enough(got, s, 1e-5 + 2e-6 * K, half_c ? 1.0 / 2048 : 0) &&
				    bad++ < 3)
					TH_LOG("dot%s [%u][%u]: %g want %g", half_c ? " fp16" : "", i, j,
					       got, s);
			}
		EXPECT_EQ(0, bad);
	}

	/* REDUCE_MAX of fp16 rows to fp16: exact. */
	t = (struct drm_vnpu_tensor_args){
		.op = DRM_VNPU_OP_T_REDUCE_MAX, .ndim = 2, .axes = 2, .shape = { M, K },
		.stride_a = { K, 1 }, .stride_c = { 1, 0 }, .a = ADDR(oa), .c = ADDR(oc),
		.dtype_a = DRM_VNPU_DTYPE_F16, .dtype_c = DRM_VNPU_DTYPE_F16,
	};
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < M; i++) {
		float m = -INFINITY;

		for (uint32_t p = 0; p < K; p++)
			m = fmaxf(m, f_of(a[i * K + p]));
		if (f_of(c[i]) != m && bad++ < 3)
			TH_LOG("max row %u: %g want %g", i, f_of(c[i]), m);
	}
	EXPECT_EQ(0, bad);

	/* SOFTMAX of fp16 rows to fp32: the rows sum to 1. */
	t.op = DRM_VNPU_OP_T_SOFTMAX;
	t.stride_c[0] = K;
	t.stride_c[1] = 1;
	t.c = ADDR(of);
	t.dtype_c = DRM_VNPU_DTYPE_F32;
	t.shape[0] = 2;
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < 2; i++) {
		double sum = 0;

		for (uint32_t p = 0; p < K; p++)
			sum += f[i * K + p];
		EXPECT_TRUE(fabs(sum - 1) < 1e-5) TH_LOG("softmax row %u sums to %g", i, sum);
	}

	/* MAXPOOL 2x2 of fp16 to fp16: exact. */
	t = (struct drm_vnpu_tensor_args){
		.op = DRM_VNPU_OP_T_MAXPOOL, .ndim = 4, .shape = { 1, 3, 10, 10 },
		.stride_a = { 300, 100, 10, 1 }, .stride_c = { 75, 25, 5, 1 },
		.a = ADDR(oa), .c = ADDR(oc),
		.window = { .kernel_h = 2, .kernel_w = 2, .stride_h = 2, .stride_w = 2,
			    .dilation_h = 1, .dilation_w = 1, .out_h = 5, .out_w = 5 },
		.dtype_a = DRM_VNPU_DTYPE_F16, .dtype_c = DRM_VNPU_DTYPE_F16,
	};
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t ch = 0; ch < 3; ch++)
		for (uint32_t y = 0; y < 5; y++)
			for (uint32_t x = 0; x < 5; x++) {
				const uint16_t *in = a + ch * 100 + 2 * y * 10 + 2 * x;
				float m = fmaxf(fmaxf(f_of(in[0]), f_of(in[1])),
						fmaxf(f_of(in[10]), f_of(in[11])));

				if (f_of(c[ch * 25 + y * 5 + x]) != m && bad++ < 3)
					TH_LOG("maxpool [%u][%u][%u]", ch, y, x);
			}
	/* IM2COL of fp16 to fp32: the elements converted, 0 for padding. */
	t.op = DRM_VNPU_OP_T_IM2COL;
	t.window = (struct drm_vnpu_tensor_window){
		.kernel_h = 3, .kernel_w = 3, .stride_h = 1, .stride_w = 1, .dilation_h = 1,
		.dilation_w = 1, .pad_top = 1, .pad_left = 1, .out_h = 10, .out_w = 10 };
	t.shape[1] = 1;
	t.stride_c[0] = 900, t.stride_c[1] = 900, t.stride_c[2] = 300, t.stride_c[3] = 100;
	t.stride_c[4] = 10, t.stride_c[5] = 1;
	t.c = ADDR(of);
	t.dtype_c = DRM_VNPU_DTYPE_F32;
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t ki = 0; ki < 9; ki++)
		for (uint32_t y = 0; y < 10; y++)
			for (uint32_t x = 0; x < 10; x++) {
				int h = (int)y - 1 + (int)(ki / 3), w = (int)x - 1 + (int)(ki % 3);
				float want = h < 0 || h >= 10 || w < 0 || w >= 10 ? 0 :
					     f_of(a[h * 10 + w]);

				if (f[ki * 100 + y * 10 + x] != want && bad++ < 3)
					TH_LOG("im2col [%u][%u][%u]", ki, y, x);
			}
	EXPECT_EQ(0, bad);
}

TEST_F(ops, dtype_bad_arguments)
{
	uint64_t oa, ob, oc;
	struct drm_vnpu_tensor_args g, h, t;
	struct bad_case bad[32];
	int i, n = 0;

	carve(self, 1024, 70, &oc);
	carve(self, 1024, 71, &oa);
	carve(self, 1024, 72, &ob);
	memset(PTR(oc), 0, 4096);
	g = good_add(self, oa, ob, oc);
	h = g;
	h.dtype_a = h.dtype_b = h.dtype_c = DRM_VNPU_DTYPE_F16;
#define BAD(w, base, e, mutate) \
	do { t = base; mutate; bad[n++] = (struct bad_case){ w, t, e }; } while (0)
	BAD("dtype_a unknown", g, -EINVAL, t.dtype_a = DRM_VNPU_DTYPE_I64 + 1);
	BAD("dtype_b unknown", g, -EINVAL, t.dtype_b = 0xff);
	BAD("dtype_c unknown", g, -EINVAL, t.dtype_c = 0x80);
	BAD("pad", g, -EINVAL, t.pad[4] = 1);
	BAD("int8 C of softmax", g, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_SOFTMAX, t.axes = 2, t.b = 0,
	     memset(t.stride_b, 0, sizeof(t.stride_b)), t.dtype_c = DRM_VNPU_DTYPE_I8));
	BAD("int32 C of a reduction", g, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_REDUCE_SUM, t.axes = 2, t.b = 0, t.stride_c[1] = 0,
	     memset(t.stride_b, 0, sizeof(t.stride_b)), t.dtype_c = DRM_VNPU_DTYPE_I32));
	BAD("uint8 C of dot", g, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_DOT, t.axes = 2, t.stride_c[1] = 0,
	     t.dtype_c = DRM_VNPU_DTYPE_U8));
	BAD("dtype_b without B", g, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_RELU, t.b = 0, memset(t.stride_b, 0, sizeof(t.stride_b)),
	     t.dtype_b = DRM_VNPU_DTYPE_F16));
	BAD("copy fp32 to int8", g, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_COPY, t.b = 0, memset(t.stride_b, 0, sizeof(t.stride_b)),
	     t.dtype_c = DRM_VNPU_DTYPE_I8));
	BAD("copy fp16 to int32", g, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_COPY, t.b = 0, memset(t.stride_b, 0, sizeof(t.stride_b)),
	     t.dtype_a = DRM_VNPU_DTYPE_F16, t.dtype_c = DRM_VNPU_DTYPE_I32));
	BAD("copy int8 to uint8", g, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_COPY, t.b = 0, memset(t.stride_b, 0, sizeof(t.stride_b)),
	     t.dtype_a = DRM_VNPU_DTYPE_I8, t.dtype_c = DRM_VNPU_DTYPE_U8));
	BAD("fp16 A misaligned", h, -EINVAL, t.a += 1);
	BAD("fp16 C misaligned", h, -EINVAL, t.c += 3);
	BAD("fp32 C at an fp16 alignment", h, -EINVAL, (t.dtype_c = DRM_VNPU_DTYPE_F32, t.c += 2));
	BAD("in place across types", h, -EINVAL, (t.c = t.a, t.dtype_c = DRM_VNPU_DTYPE_F32));
	BAD("overlap of an fp16 span", h, -EINVAL, t.c = t.a + 2 * 31);
	BAD("fp32 span past the end", g, -EACCES, t.a = self->b.addr + BUF_SIZE - 4 * 16);
#undef BAD
	for (i = 0; i < n; i++)
		EXPECT_EQ(bad[i].err, submit_bad(self, &bad[i].args, sizeof(bad[i].args), oc))
			TH_LOG("%s", bad[i].what);
	/* Nothing ran: the FILL before each bad command never executed. */
	usleep(20000);
	EXPECT_EQ(0, *(uint32_t *)PTR(oc));

	/* The same span fits with 2-byte elements; in place with one type is fine. */
	t = h;
	t.a = self->b.addr + BUF_SIZE - 2 * 32;
	EXPECT_EQ(1, run(self, &t));
	t = h;
	t.c = t.a;
	EXPECT_EQ(1, run(self, &t));
	/* Each with fp32 C is fine: the types, not the operators, were wrong. */
	t = bad[4].args;
	t.dtype_c = DRM_VNPU_DTYPE_F32;
	EXPECT_EQ(1, run(self, &t));
	t = bad[5].args;
	t.dtype_c = DRM_VNPU_DTYPE_F32;
	EXPECT_EQ(1, run(self, &t));
	/* A 1.4 caller's 224 bytes mean fp32 tensors. */
	EXPECT_EQ(0, submit_bad(self, &g, DRM_VNPU_TENSOR_ARGS_SIZE_V1, oc));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_EQ(1, syncobj_status(self->fd, self->sync));
}

/*
 * Integer tensors in the float operators (the quantisation of ONNX's
 * QuantizeLinear and DequantizeLinear): integer inputs read exactly,
 * integer outputs rounded to nearest even and saturated, NaN to 0.
 */
TEST_F(ops, integer_operands_round_and_saturate)
{
	static const float x[] = {
		2.5f, 3.5f, -2.5f, -3.5f, 0.49999997f, 1.5f, -0.5f, 1e10f, -1e10f, NAN,
		127.5f, 128.5f, -128.5f, 254.5f, 255.5f, -0.7f, 8388609.0f, 2147483520.0f,
	};
	static const int32_t want32[] = {
		2, 4, -2, -4, 0, 2, 0, INT32_MAX, INT32_MIN, 0,
		128, 128, -128, 254, 256, -1, 8388609, 2147483520,
	};
	const uint32_t n = sizeof(x) / sizeof(x[0]);
	uint64_t ox, oone, oi, o8, ou, of, ozp;
	float *fx = carve(self, n, 80, &ox), *one = carve(self, 1, 81, &oone);
	int32_t *i32 = (int32_t *)carve(self, n, 82, &oi);
	int8_t *i8 = (int8_t *)carve(self, n, 83, &o8), *zp;
	uint8_t *u8 = (uint8_t *)carve(self, n, 84, &ou);
	float *f = carve(self, n, 85, &of);
	struct drm_vnpu_tensor_args t = {
		.op = DRM_VNPU_OP_T_DIV, .ndim = 1, .shape = { n },
		.stride_a = { 1 }, .stride_b = { 0 }, .stride_c = { 1 },
		.a = ADDR(ox), .b = ADDR(oone), .c = ADDR(oi), .dtype_c = DRM_VNPU_DTYPE_I32,
	};

	zp = (int8_t *)carve(self, 1, 86, &ozp);
	ASSERT_TRUE(fx && one && i32 && i8 && u8 && f && zp);
	memcpy(fx, x, sizeof(x));
	*one = 1.0f;
	/* fp32 / 1 to int32: ties to even, saturation, NaN to 0. */
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < n; i++) {
		EXPECT_EQ(want32[i], i32[i]) TH_LOG("%a to int32", x[i]);
	}
	/* int32 + int8 zero point to int8 and uint8: saturated. */
	*zp = -3;
	t.op = DRM_VNPU_OP_T_ADD;
	t.a = ADDR(oi);
	t.b = ADDR(ozp);
	t.c = ADDR(o8);
	t.dtype_a = DRM_VNPU_DTYPE_I32;
	t.dtype_b = DRM_VNPU_DTYPE_I8;
	t.dtype_c = DRM_VNPU_DTYPE_I8;
	ASSERT_EQ(1, run(self, &t));
	t.c = ADDR(ou);
	t.dtype_c = DRM_VNPU_DTYPE_U8;
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < n; i++) {
		int64_t v = (int64_t)want32[i] - 3;

		EXPECT_EQ(v < -128 ? -128 : v > 127 ? 127 : v, i8[i]) TH_LOG("%d - 3 to int8", want32[i]);
		EXPECT_EQ(v < 0 ? 0 : v > 255 ? 255 : v, u8[i]) TH_LOG("%d - 3 to uint8", want32[i]);
	}
	/* (int8 - zero point) * scale to fp32: exact, one rounding of the product. */
	t.op = DRM_VNPU_OP_T_SUB;
	t.a = ADDR(o8);
	t.c = ADDR(of);
	t.dtype_a = DRM_VNPU_DTYPE_I8;
	t.dtype_c = DRM_VNPU_DTYPE_F32;
	ASSERT_EQ(1, run(self, &t));
	*one = 0.1f;
	t.op = DRM_VNPU_OP_T_MUL;
	t.a = ADDR(of);
	t.b = ADDR(oone);
	t.dtype_a = DRM_VNPU_DTYPE_F32;
	t.dtype_b = DRM_VNPU_DTYPE_F32;
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < n; i++) {
		EXPECT_EQ((float)(i8[i] + 3) * 0.1f, f[i]) TH_LOG("int8 %d", i8[i]);
	}
}

/* The comparisons in double, as the device makes them (NaN: false). */
static int ref_compare(uint32_t op, double a, double b)
{
	if (op == DRM_VNPU_OP_T_EQUAL)
		return a == b;
	return op == DRM_VNPU_OP_T_LESS ? a < b : a <= b;
}

/*
 * EQUAL, LESS and LESS_EQUAL (uAPI 1.6) against the comparisons in C: fp32
 * against a broadcast fp32 row with NaN, infinities and signed zeros, 1 or
 * 0 into fp32 and uint8 C; int32 beyond 2^24 against int32 and fp32
 * (exact: no conversion to fp32 first); fp16 against fp32.
 */
TEST_F(ops, comparisons_are_exact)
{
	static const float row[8] = { 0.0f, -0.0f, 1.0f, -1.5f, INFINITY, -INFINITY, NAN, 3e38f };
	static const int32_t big[4] = { 16777217, 16777216, -16777217, INT32_MAX };
	const uint32_t rows = 300, n = rows * 8;
	uint64_t oa, ob, oc, ou, oi, oj;
	float *a = carve(self, n, 90, &oa), *b = carve(self, 8, 91, &ob);
	float *c = carve(self, n, 92, &oc);
	uint8_t *u = (uint8_t *)carve(self, n, 93, &ou);
	int32_t *i32 = (int32_t *)carve(self, 8, 94, &oi);
	float *f = carve(self, 8, 95, &oj);
	uint16_t *h = (uint16_t *)f;

	ASSERT_TRUE(a && b && c && u && i32 && f);
	memcpy(b, row, sizeof(row));
	for (uint32_t i = 0; i < n; i++)
		a[i] = i < 64 ? row[i / 8] : floorf(a[i] * 4.0f) / 2.0f;
	for (uint32_t op = DRM_VNPU_OP_T_EQUAL; op <= DRM_VNPU_OP_T_LESS_EQUAL; op++) {
		struct drm_vnpu_tensor_args t = {
			.op = op, .ndim = 2, .shape = { rows, 8 },
			.stride_a = { 8, 1 }, .stride_b = { 0, 1 }, .stride_c = { 8, 1 },
			.a = ADDR(oa), .b = ADDR(ob), .c = ADDR(oc),
		};
		int bad = 0;

		ASSERT_EQ(1, run(self, &t)) TH_LOG("op %#x", op);
		t.c = ADDR(ou);
		t.dtype_c = DRM_VNPU_DTYPE_U8;
		ASSERT_EQ(1, run(self, &t)) TH_LOG("op %#x to uint8", op);
		for (uint32_t i = 0; i < n; i++) {
			int want = ref_compare(op, a[i], b[i % 8]);

			if ((c[i] != (float)want || u[i] != want) && bad++ < 5)
				TH_LOG("op %#x %g vs %g: %g, %u, want %d", op, a[i], b[i % 8],
				       c[i], u[i], want);
		}
		EXPECT_EQ(0, bad) TH_LOG("op %#x", op);
	}

	/* int32 beyond 2^24: 16777217 is not 16777216, as int32 or against fp32. */
	memcpy(i32, big, sizeof(big));
	for (uint32_t op = DRM_VNPU_OP_T_EQUAL; op <= DRM_VNPU_OP_T_LESS_EQUAL; op++) {
		struct drm_vnpu_tensor_args t = {
			.op = op, .ndim = 2, .shape = { 4, 4 },
			.stride_a = { 1, 0 }, .stride_b = { 0, 1 }, .stride_c = { 4, 1 },
			.a = ADDR(oi), .b = ADDR(oi), .c = ADDR(ou), .dtype_a = DRM_VNPU_DTYPE_I32,
			.dtype_b = DRM_VNPU_DTYPE_I32, .dtype_c = DRM_VNPU_DTYPE_U8,
		};

		ASSERT_EQ(1, run(self, &t));
		for (uint32_t i = 0; i < 16; i++) {
			EXPECT_EQ(ref_compare(op, big[i / 4], big[i % 4]), u[i])
				TH_LOG("op %#x %d vs %d", op, big[i / 4], big[i % 4]);
		}
		f[0] = 16777216.0f;
		t.b = ADDR(oj);
		t.dtype_b = DRM_VNPU_DTYPE_F32;
		t.shape[1] = 1;
		t.stride_c[0] = 1;
		t.stride_c[1] = 0;
		ASSERT_EQ(1, run(self, &t));
		for (uint32_t i = 0; i < 4; i++) {
			EXPECT_EQ(ref_compare(op, big[i], 16777216.0), u[i])
				TH_LOG("op %#x %d vs 16777216.0f", op, big[i]);
		}
	}

	/* fp16 1.0 and 65504 against fp32: as the numbers they are. */
	h[0] = 0x3c00;
	h[1] = 0x7bff;
	b[0] = 1.0f;
	b[1] = 65504.0f;
	{
		struct drm_vnpu_tensor_args t = {
			.op = DRM_VNPU_OP_T_EQUAL, .ndim = 1, .shape = { 2 }, .stride_a = { 1 },
			.stride_b = { 1 }, .stride_c = { 1 }, .a = ADDR(oj), .b = ADDR(ob),
			.c = ADDR(ou), .dtype_a = DRM_VNPU_DTYPE_F16, .dtype_c = DRM_VNPU_DTYPE_U8,
		};

		ASSERT_EQ(1, run(self, &t));
		EXPECT_EQ(1, u[0]);
		EXPECT_EQ(1, u[1]);
	}
}

/*
 * WHERE (uAPI 1.6): A's elements moved bit exactly where the condition is
 * non-zero (NaN is, -0 is not), C untouched elsewhere; any type of
 * condition, broadcast; uint8 and fp32 A and C.
 */
/*
 * A DOT of integer A and B sums exactly (uAPI 1.6): 1024 int32 products
 * per output whose sums pass 2^24 and 2^31, stored exactly into int32 (the
 * last saturated) and rounded once into fp32; a float A keeps fp32.
 */
TEST_F(ops, integer_dot_sums_exactly)
{
	const uint32_t k = 1024;
	uint64_t oa, ob, oc, of;
	int32_t *a = (int32_t *)carve(self, 3 * k, 110, &oa);
	int32_t *b = (int32_t *)carve(self, k, 111, &ob);
	int32_t *c = (int32_t *)carve(self, 3, 112, &oc);
	float *f = carve(self, 3, 113, &of);
	struct drm_vnpu_tensor_args t = {
		.op = DRM_VNPU_OP_T_DOT, .ndim = 2, .shape = { 3, k }, .axes = 1u << 1,
		.stride_a = { k, 1 }, .stride_b = { 0, 1 }, .stride_c = { 1, 0 },
		.a = ADDR(oa), .b = ADDR(ob), .c = ADDR(oc),
		.dtype_a = DRM_VNPU_DTYPE_I32, .dtype_b = DRM_VNPU_DTYPE_I32,
		.dtype_c = DRM_VNPU_DTYPE_I32,
	};
	int64_t want[3] = { 0, 0, 0 };

	ASSERT_TRUE(a && b && c && f);
	for (uint32_t i = 0; i < k; i++) {
		b[i] = 40000 + (int32_t)(i % 97);
		a[i] = 255 - (int32_t)(i % 7);		/* about 2^33 in all: saturates */
		a[k + i] = (int32_t)(i % 5) - 1;	/* about 2^25, odd */
		a[2 * k + i] = -(int32_t)(i % 3);	/* negative, about -2^25 */
		for (int r = 0; r < 3; r++)
			want[r] += (int64_t)a[r * k + i] * b[i];
	}
	ASSERT_GT(want[0], INT32_MAX);
	ASSERT_GT(want[1], 1 << 24);
	ASSERT_EQ(1, run(self, &t));
	EXPECT_EQ(INT32_MAX, c[0]);
	EXPECT_EQ(want[1], c[1]);
	EXPECT_EQ(want[2], c[2]);
	/* Into fp32: the exact sum rounded once. */
	t.c = ADDR(of);
	t.dtype_c = DRM_VNPU_DTYPE_F32;
	ASSERT_EQ(1, run(self, &t));
	for (int r = 0; r < 3; r++) {
		float rounded = (float)want[r];

		EXPECT_EQ(rounded, f[r]) TH_LOG("row %d", r);
	}
}

TEST_F(ops, where_selects_bit_exactly)
{
	static const float cond[8] = { 1.0f, 0.0f, -0.0f, NAN, -2.0f, INFINITY, 0.0f, 1e-40f };
	const uint32_t rows = 200, n = rows * 8;
	uint64_t oa, ob, oc, oq, ou;
	float *a = carve(self, n, 100, &oa), *b = carve(self, 8, 101, &ob);
	float *c = carve(self, n, 102, &oc);
	uint8_t *q = (uint8_t *)carve(self, n, 103, &oq), *u = (uint8_t *)carve(self, n, 104, &ou);
	struct drm_vnpu_tensor_args t = {
		.op = DRM_VNPU_OP_T_WHERE, .ndim = 2, .shape = { rows, 8 },
		.stride_a = { 8, 1 }, .stride_b = { 0, 1 }, .stride_c = { 8, 1 },
		.a = ADDR(oa), .b = ADDR(ob), .c = ADDR(oc),
	};
	int bad = 0;

	ASSERT_TRUE(a && b && c && q && u);
	memcpy(b, cond, sizeof(cond));
	a[0] = NAN;
	for (uint32_t i = 0; i < n; i++) {
		c[i] = -7.0f;
		q[i] = (uint8_t)(i * 37);
		u[i] = 5;
	}
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < n; i++) {
		float want = cond[i % 8] != 0.0f || isnan(cond[i % 8]) ? a[i] : -7.0f;

		if (memcmp(&c[i], &want, 4) && bad++ < 5)
			TH_LOG("fp32 %u: %g want %g", i, c[i], want);
	}
	EXPECT_EQ(0, bad);

	/* uint8 A and C, a uint8 condition (every third element) of one row per point. */
	for (uint32_t i = 0; i < n; i++)
		((uint8_t *)a)[i] = i % 3 == 0;
	t.a = ADDR(oq);
	t.b = ADDR(oa);
	t.c = ADDR(ou);
	t.stride_b[0] = 8;
	t.dtype_a = t.dtype_b = t.dtype_c = DRM_VNPU_DTYPE_U8;
	ASSERT_EQ(1, run(self, &t));
	for (uint32_t i = 0; i < n; i++)
		if (u[i] != (i % 3 == 0 ? q[i] : 5) && bad++ < 5)
			TH_LOG("uint8 %u: %u want %u", i, u[i], i % 3 == 0 ? q[i] : 5);
	EXPECT_EQ(0, bad);
}

/* Bad arguments of the operators of 1.6: refused at submit, nothing runs. */
TEST_F(ops, compare_where_bad_arguments)
{
	uint64_t oa, ob, oc;
	struct drm_vnpu_tensor_args g, t;
	struct bad_case bad[16];
	int i, n = 0;

	carve(self, 1024, 105, &oc);
	carve(self, 1024, 106, &oa);
	carve(self, 1024, 107, &ob);
	memset(PTR(oc), 0, 4096);
	g = good_add(self, oa, ob, oc);
#define BAD(w, base, e, mutate) \
	do { t = base; mutate; bad[n++] = (struct bad_case){ w, t, e }; } while (0)
	BAD("equal without B (address 0)", g, -EACCES,
	    (t.op = DRM_VNPU_OP_T_EQUAL, t.b = 0, memset(t.stride_b, 0, sizeof(t.stride_b))));
	BAD("less with axes", g, -EINVAL, (t.op = DRM_VNPU_OP_T_LESS, t.axes = 1));
	BAD("less_equal with flags", g, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_LESS_EQUAL, t.flags = DRM_VNPU_TENSOR_SELECT_LAST));
	BAD("where fp32 A into uint8 C", g, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_WHERE, t.dtype_c = DRM_VNPU_DTYPE_U8));
	BAD("where int8 A into fp16 C", g, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_WHERE, t.dtype_a = DRM_VNPU_DTYPE_I8,
	     t.dtype_c = DRM_VNPU_DTYPE_F16));
	BAD("where without B (address 0)", g, -EACCES,
	    (t.op = DRM_VNPU_OP_T_WHERE, t.b = 0, memset(t.stride_b, 0, sizeof(t.stride_b))));
	BAD("where C overlapping A", g, -EINVAL, (t.op = DRM_VNPU_OP_T_WHERE, t.c = t.a + 4));
	/* Valid with an fp32 C (integer_dot_sums_exactly runs the integer one). */
	BAD("dot of fp32 A and B into int32 C", g, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_DOT, t.axes = 1u << 1, t.stride_c[0] = 1, t.stride_c[1] = 0,
	     t.dtype_c = DRM_VNPU_DTYPE_I32));
#undef BAD
	for (i = 0; i < n; i++)
		EXPECT_EQ(bad[i].err, submit_bad(self, &bad[i].args, sizeof(bad[i].args), oc))
			TH_LOG("%s", bad[i].what);
	/* Nothing ran: the FILL before each bad command never executed. */
	usleep(20000);
	EXPECT_EQ(0, *(uint32_t *)PTR(oc));
	/* The same where with uint8 C and A runs. */
	t = bad[3].args;
	t.dtype_a = DRM_VNPU_DTYPE_U8;
	EXPECT_EQ(1, run(self, &t));
}

/*
 * GATHER (uAPI 1.7) of one case: A dense of @ashape, the iteration space
 * @shape with the axis @axis, B's strides @sb over it; indices from @idx
 * (B int32 or int64), A of 4 or 8 bytes. Checks C against the reference.
 */
struct gather_case {
	uint32_t ndim, axis;
	uint32_t ashape[MAXD], shape[MAXD], sb[MAXD];
};

static void check_gather(struct __test_metadata *_metadata, struct _test_data_ops *self,
			 const struct gather_case *gc, uint8_t dtype_b, uint8_t dtype_a,
			 unsigned int seed)
{
	uint32_t sa[MAXD], sc[MAXD], idx[MAXD];
	uint64_t oa, ob, oc, na = points_of(gc->ndim, gc->ashape), nc = points_of(gc->ndim, gc->shape);
	uint64_t nb = 1, save = self->next;
	unsigned int esz = dtype_a == DRM_VNPU_DTYPE_I64 ? 8 : 4, bsz = dtype_b == DRM_VNPU_DTYPE_I64 ? 8 : 4;
	int32_t len = (int32_t)gc->ashape[gc->axis];
	char *a, *b, *c;
	int bad = 0;

	for (uint32_t d = 0; d < gc->ndim; d++)
		nb += (uint64_t)(gc->shape[d] - 1) * gc->sb[d];
	a = (char *)carve(self, na * esz / 4, seed, &oa);
	b = (char *)carve(self, nb * bsz / 4, seed + 1, &ob);
	c = (char *)carve(self, nc * esz / 4, seed + 2, &oc);
	ASSERT_TRUE(a && b && c);
	for (uint64_t i = 0; i < na * esz / 4; i++)
		((uint32_t *)a)[i] = (uint32_t)(i * 2654435761u);
	for (uint64_t i = 0; i < nb; i++) {
		/* Every index from -len to len - 1. */
		int64_t v = (int64_t)(rand_r(&seed) % (2 * len)) - len;

		if (bsz == 8)
			((int64_t *)b)[i] = v;
		else
			((int32_t *)b)[i] = (int32_t)v;
	}
	dense(gc->ndim, gc->ashape, sa);
	dense(gc->ndim, gc->shape, sc);
	struct drm_vnpu_tensor_args t = {
		.op = DRM_VNPU_OP_T_GATHER, .ndim = gc->ndim, .axes = 1u << gc->axis,
		.a = ADDR(oa), .b = ADDR(ob), .c = ADDR(oc), .k = (uint32_t)len,
		.dtype_a = dtype_a, .dtype_b = dtype_b, .dtype_c = dtype_a,
	};
	memcpy(t.shape, gc->shape, sizeof(t.shape));
	memcpy(t.stride_a, sa, sizeof(sa));
	memcpy(t.stride_b, gc->sb, sizeof(t.stride_b));
	memcpy(t.stride_c, sc, sizeof(sc));
	ASSERT_EQ(1, run(self, &t));
	for (uint64_t p = 0; p < nc; p++) {
		uint64_t ib, ia;
		int64_t x;

		unravel(p, gc->ndim, gc->shape, idx);
		ib = offset(gc->ndim, idx, gc->sb);
		x = bsz == 8 ? ((int64_t *)b)[ib] : ((int32_t *)b)[ib];
		idx[gc->axis] = (uint32_t)(x < 0 ? x + len : x);
		ia = offset(gc->ndim, idx, sa);
		if (memcmp(c + p * esz, a + ia * esz, esz) && bad++ < 5)
			TH_LOG("point %llu: index %lld", (unsigned long long)p, (long long)x);
	}
	EXPECT_EQ(0, bad);
	self->next = save;
}

/*
 * GATHER: ONNX's Gather (indices flattened into the axis, broadcast over
 * the rest) and GatherElements (indices of C's shape), each axis, negative
 * indices, int32 and int64 indices, int64 and fp32 data, runs across the
 * 1024-point sections.
 */
TEST_F(ops, gather_against_reference)
{
	static const struct gather_case cases[] = {
		/* Gather: data 4 x 6 x 5, 9 indices along each axis. */
		{ 3, 0, { 6, 4, 5 }, { 9, 4, 5 }, { 1, 0, 0 } },
		{ 3, 1, { 4, 6, 5 }, { 4, 9, 5 }, { 0, 1, 0 } },
		{ 3, 2, { 4, 5, 6 }, { 4, 5, 9 }, { 0, 0, 1 } },
		/* One index: the axis of size 1 stays. */
		{ 3, 1, { 4, 6, 5 }, { 4, 1, 5 }, { 0, 1, 0 } },
		/* An embedding: 50 x 16 table, 300 token ids. */
		{ 2, 0, { 50, 16 }, { 300, 16 }, { 1, 0 } },
		/* GatherElements: indices of C's shape, smaller than the data. */
		{ 2, 1, { 3, 7 }, { 3, 5 }, { 5, 1 } },
		{ 3, 0, { 4, 3, 5 }, { 6, 3, 4 }, { 12, 4, 1 } },
	};
	unsigned int seed = 300;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		check_gather(_metadata, self, &cases[i], DRM_VNPU_DTYPE_I64, DRM_VNPU_DTYPE_F32,
			     seed++);
		check_gather(_metadata, self, &cases[i], DRM_VNPU_DTYPE_I32, DRM_VNPU_DTYPE_F32,
			     seed++);
		check_gather(_metadata, self, &cases[i], DRM_VNPU_DTYPE_I64, DRM_VNPU_DTYPE_I64,
			     seed++);
	}
}

/* An index out of range stops the job with -ERANGE; nothing past it is read. */
TEST_F(ops, gather_index_out_of_range_fails_the_job)
{
	static const int64_t bad_idx[] = { 6, -7, INT64_MAX, INT64_MIN };
	uint64_t oa, ob, oc;
	float *a = carve(self, 6, 310, &oa), *c = carve(self, 4, 311, &oc);
	int64_t *b = (int64_t *)carve(self, 8, 312, &ob);
	struct drm_vnpu_tensor_args t = {
		.op = DRM_VNPU_OP_T_GATHER, .ndim = 1, .axes = 1, .shape = { 4 },
		.stride_a = { 1 }, .stride_b = { 1 }, .stride_c = { 1 }, .k = 6,
		.a = ADDR(oa), .b = ADDR(ob), .c = ADDR(oc),
		.dtype_b = DRM_VNPU_DTYPE_I64,
	};

	ASSERT_TRUE(a && b && c);
	for (size_t i = 0; i < ARRAY_SIZE(bad_idx); i++) {
		b[0] = 0, b[1] = 5, b[2] = -6, b[3] = -1;
		b[i % 4] = bad_idx[i];
		EXPECT_EQ(-ERANGE, run(self, &t)) TH_LOG("index %lld", (long long)bad_idx[i]);
	}
	/* The same indices in range run. */
	b[0] = 0, b[1] = 5, b[2] = -6, b[3] = -1;
	ASSERT_EQ(1, run(self, &t));
	EXPECT_EQ(0, memcmp(&c[0], &a[0], 4));
	EXPECT_EQ(0, memcmp(&c[1], &a[5], 4));
	EXPECT_EQ(0, memcmp(&c[2], &a[0], 4));
	EXPECT_EQ(0, memcmp(&c[3], &a[5], 4));
}

/* Whether element i of a row precedes element j in TOPK's order. */
static int topk_before(const float *x, size_t stride, uint32_t i, uint32_t j, int smallest)
{
	float u = x[i * stride], v = x[j * stride];

	if (isnan(u) || isnan(v)) {
		if (isnan(u) && isnan(v))
			return i < j;
		return smallest ? isnan(v) : isnan(u);
	}
	if (u == v)
		return i < j;
	return smallest ? u < v : u > v;
}

/*
 * TOPK along each axis of fp32 rows with ties, signed zeros and NaNs,
 * largest and smallest, several k, C and D strided; int32 A; a row of
 * 3000 elements.
 */
TEST_F(ops, topk_against_reference)
{
	static const uint32_t shapes[][3] = { { 3, 7, 5 }, { 2, 3000, 2 } };
	unsigned int seed = 320;
	int bad = 0;

	for (size_t si = 0; si < ARRAY_SIZE(shapes); si++) {
		const uint32_t *shape = shapes[si];
		uint64_t na = points_of(3, shape), oa, oc, od, save = self->next;
		float *a = carve(self, na, seed++, &oa);

		ASSERT_NE(NULL, a);
		for (uint64_t i = 0; i < na; i++) {
			/* Few distinct values: many ties. */
			a[i] = (float)(rand_r(&seed) % 9) - 4.0f;
			if (i % 13 == 5)
				a[i] = NAN;
			if (i % 17 == 3)
				a[i] = -0.0f;
		}
		for (uint32_t axis = 0; axis < 3; axis++) {
			uint32_t n = shape[axis], ks[3] = { 1, (n + 1) / 2, n };

			for (int ks_smallest = 0; ks_smallest < 6; ks_smallest++) {
				int kk = ks_smallest / 2, smallest = ks_smallest % 2;
				uint32_t k = ks[kk], cshape[3], sa[MAXD], sc[MAXD], idx[3], sel[3000];
				uint64_t nc, save2 = self->next;
				float *c;
				int32_t *dd;
				struct drm_vnpu_tensor_args t = {
					.op = DRM_VNPU_OP_T_TOPK, .ndim = 3, .axes = 1u << axis,
					.flags = smallest ? DRM_VNPU_TENSOR_SMALLEST : 0, .k = k,
					.dtype_d = DRM_VNPU_DTYPE_I32,
				};

				memcpy(cshape, shape, sizeof(cshape));
				cshape[axis] = k;
				nc = points_of(3, cshape);
				c = carve(self, nc, seed++, &oc);
				dd = (int32_t *)carve(self, 2 * nc, seed++, &od);
				ASSERT_TRUE(c && dd);
				dense(3, shape, sa);
				dense(3, cshape, sc);
				memcpy(t.shape, shape, 3 * sizeof(*shape));
				memcpy(t.stride_a, sa, sizeof(t.stride_a));
				memcpy(t.stride_c, sc, sizeof(t.stride_c));
				/* D every other element. */
				for (int d = 0; d < 3; d++)
					t.stride_d[d] = 2 * sc[d];
				t.a = ADDR(oa);
				t.c = ADDR(oc);
				t.d = ADDR(od);
				ASSERT_EQ(1, run(self, &t))
					TH_LOG("shape %zu axis %u k %u smallest %d", si, axis, k, smallest);
				for (uint64_t p = 0; p < nc; p++) {
					uint64_t base;
					uint32_t j;

					unravel(p, 3, cshape, idx);
					j = idx[axis];
					if (j)
						continue;
					idx[axis] = 0;
					base = offset(3, idx, sa);
					/* The reference: selection by the order, k times. */
					for (uint32_t i = 0; i < n; i++)
						sel[i] = i;
					for (uint32_t r = 0; r < k; r++) {
						uint32_t best = r;

						for (uint32_t q = r + 1; q < n; q++)
							if (topk_before(a + base, sa[axis], sel[q], sel[best],
									smallest))
								best = q;
						uint32_t tmp = sel[r];

						sel[r] = sel[best];
						sel[best] = tmp;
						idx[axis] = r;
						if ((dd[2 * offset(3, idx, sc)] != (int32_t)sel[r] ||
						     memcmp(&c[offset(3, idx, sc)],
							    &a[base + (uint64_t)sel[r] * sa[axis]], 4)) &&
						    bad++ < 5)
							TH_LOG("shape %zu axis %u k %u smallest %d row %llu: #%u index %d want %u",
							       si, axis, k, smallest, (unsigned long long)p, r,
							       dd[2 * offset(3, idx, sc)], sel[r]);
					}
				}
				self->next = save2;
				/* Quick: the long rows with k = 1 only. */
				if (si == 1 && n > 100 && ks_smallest == 1)
					break;
			}
		}
		self->next = save;
	}
	EXPECT_EQ(0, bad);
}

/* TOPK of int32 A: exact integers beyond 2^24, C of int32. */
TEST_F(ops, topk_of_integers_is_exact)
{
	uint64_t oa, oc, od;
	int32_t *a = (int32_t *)carve(self, 6, 330, &oa), *c = (int32_t *)carve(self, 3, 331, &oc);
	int32_t *dd = (int32_t *)carve(self, 3, 332, &od);
	struct drm_vnpu_tensor_args t = {
		.op = DRM_VNPU_OP_T_TOPK, .ndim = 1, .axes = 1, .shape = { 6 }, .k = 3,
		.stride_a = { 1 }, .stride_c = { 1 }, .stride_d = { 1 },
		.a = ADDR(oa), .c = ADDR(oc), .d = ADDR(od),
		.dtype_a = DRM_VNPU_DTYPE_I32, .dtype_c = DRM_VNPU_DTYPE_I32,
		.dtype_d = DRM_VNPU_DTYPE_I32,
	};
	static const int32_t v[6] = { 16777217, 16777216, -5, 16777217, INT32_MIN, 7 };

	ASSERT_TRUE(a && c && dd);
	memcpy(a, v, sizeof(v));
	ASSERT_EQ(1, run(self, &t));
	EXPECT_EQ(16777217, c[0]);
	EXPECT_EQ(0, dd[0]);
	EXPECT_EQ(16777217, c[1]);
	EXPECT_EQ(3, dd[1]);
	EXPECT_EQ(16777216, c[2]);
	EXPECT_EQ(1, dd[2]);
	t.flags = DRM_VNPU_TENSOR_SMALLEST;
	ASSERT_EQ(1, run(self, &t));
	EXPECT_EQ(INT32_MIN, c[0]);
	EXPECT_EQ(4, dd[0]);
	EXPECT_EQ(-5, c[1]);
	EXPECT_EQ(7, c[2]);
	EXPECT_EQ(5, dd[2]);
}

/* Bad arguments of GATHER and TOPK: refused at submit, nothing runs. */
TEST_F(ops, gather_topk_bad_arguments)
{
	uint64_t oa, ob, oc, od;
	struct drm_vnpu_tensor_args ga, tk, t;
	struct bad_case bad[48];
	int i, n = 0;

	carve(self, 1024, 340, &oc);
	carve(self, 1024, 341, &oa);
	carve(self, 1024, 342, &ob);
	carve(self, 1024, 343, &od);
	memset(PTR(oc), 0, 4096);
	memset(PTR(ob), 0, 4096);
	/* Gather of 4 rows of 8 of a 10 x 8 table. */
	ga = (struct drm_vnpu_tensor_args){
		.op = DRM_VNPU_OP_T_GATHER, .ndim = 2, .axes = 1, .shape = { 4, 8 }, .k = 10,
		.stride_a = { 8, 1 }, .stride_b = { 1, 0 }, .stride_c = { 8, 1 },
		.a = ADDR(oa), .b = ADDR(ob), .c = ADDR(oc), .dtype_b = DRM_VNPU_DTYPE_I32,
	};
	/* Top 3 of 4 rows of 8. */
	tk = (struct drm_vnpu_tensor_args){
		.op = DRM_VNPU_OP_T_TOPK, .ndim = 2, .axes = 2, .shape = { 4, 8 }, .k = 3,
		.stride_a = { 8, 1 }, .stride_c = { 3, 1 }, .stride_d = { 3, 1 },
		.a = ADDR(oa), .c = ADDR(oc), .d = ADDR(od), .dtype_d = DRM_VNPU_DTYPE_I32,
	};
#define BAD(w, base, e, mutate) \
	do { t = base; mutate; bad[n++] = (struct bad_case){ w, t, e }; } while (0)
	BAD("gather without axes", ga, -EINVAL, t.axes = 0);
	BAD("gather over two axes", ga, -EINVAL, t.axes = 3);
	BAD("gather axis past ndim", ga, -EINVAL, t.axes = 4);
	BAD("gather k 0", ga, -EINVAL, t.k = 0);
	BAD("gather k too large", ga, -EINVAL, t.k = DRM_VNPU_KERNEL_MAX_DIM + 1);
	BAD("gather fp32 indices", ga, -EINVAL, t.dtype_b = DRM_VNPU_DTYPE_F32);
	BAD("gather int8 indices", ga, -EINVAL, t.dtype_b = DRM_VNPU_DTYPE_I8);
	BAD("gather A and C of two types", ga, -EINVAL, t.dtype_c = DRM_VNPU_DTYPE_F16);
	BAD("gather with flags", ga, -EINVAL, t.flags = DRM_VNPU_TENSOR_SMALLEST);
	BAD("gather with D", ga, -EINVAL, t.d = ADDR(od));
	BAD("gather with dtype_d", ga, -EINVAL, t.dtype_d = DRM_VNPU_DTYPE_I32);
	BAD("gather with stride_d", ga, -EINVAL, t.stride_d[0] = 1);
	BAD("gather C overlapping A", ga, -EINVAL, t.c = t.a + 4);
	BAD("gather C overlapping B", ga, -EINVAL, t.c = t.b);
	BAD("gather A span past the buffer (k)", ga, -EACCES,
	    (t.a = self->b.addr + BUF_SIZE - 4 * 40, t.k = 6));
	BAD("gather without B", ga, -EACCES, t.b = 0);
	BAD("gather int64 indices misaligned", ga, -EINVAL,
	    (t.dtype_b = DRM_VNPU_DTYPE_I64, t.b += 4));
	BAD("pad2", ga, -EINVAL, t.pad2[1] = 1);
	BAD("topk k 0", tk, -EINVAL, t.k = 0);
	BAD("topk k above the axis", tk, -EINVAL, (t.k = 9, t.stride_c[0] = 9, t.stride_d[0] = 9));
	BAD("topk without axes", tk, -EINVAL, t.axes = 0);
	BAD("topk over two axes", tk, -EINVAL, t.axes = 3);
	BAD("topk axis too long", tk, -EINVAL,
	    (t.ndim = 1, t.shape[0] = DRM_VNPU_TOPK_MAX_AXIS + 1, t.shape[1] = 0, t.axes = 1,
	     t.stride_a[1] = t.stride_c[1] = t.stride_d[1] = 0,
	     t.stride_a[0] = t.stride_c[0] = t.stride_d[0] = 1));
	BAD("topk unknown flag", tk, -EINVAL, t.flags = DRM_VNPU_TENSOR_SELECT_LAST);
	BAD("topk D int64", tk, -EINVAL, t.dtype_d = DRM_VNPU_DTYPE_I64);
	BAD("topk D fp32", tk, -EINVAL, t.dtype_d = DRM_VNPU_DTYPE_F32);
	BAD("topk C of another type", tk, -EINVAL, t.dtype_c = DRM_VNPU_DTYPE_F16);
	BAD("topk int64 A", tk, -EINVAL,
	    (t.dtype_a = t.dtype_c = DRM_VNPU_DTYPE_I64));
	BAD("topk with B", tk, -EINVAL, (t.b = ADDR(ob), t.stride_b[1] = 1));
	BAD("topk D overlapping C", tk, -EINVAL, t.d = t.c + 8);
	BAD("topk D overlapping A", tk, -EINVAL, t.d = t.a);
	BAD("topk C overlapping A", tk, -EINVAL, t.c = t.a + 4);
	BAD("topk D stride 0 on a kept axis", tk, -EINVAL, t.stride_d[0] = 0);
	BAD("topk D stride past ndim", tk, -EINVAL, t.stride_d[2] = 1);
	BAD("topk D misaligned", tk, -EINVAL, t.d += 2);
	BAD("topk D outside the buffers", tk, -EACCES, t.d = 0x10);
	BAD("k of another operator", ga, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_ADD, t.axes = 0, t.k = 1, t.dtype_b = 0, t.stride_b[1] = 1));
	BAD("int64 C of an add", ga, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_ADD, t.axes = 0, t.k = 0, t.dtype_b = 0, t.stride_b[1] = 1,
	     t.dtype_a = t.dtype_c = DRM_VNPU_DTYPE_I64));
	BAD("copy int32 to int64", ga, -EINVAL,
	    (t.op = DRM_VNPU_OP_T_COPY, t.axes = 0, t.k = 0, t.dtype_b = 0, t.b = 0,
	     memset(t.stride_b, 0, sizeof(t.stride_b)), t.dtype_a = DRM_VNPU_DTYPE_I32,
	     t.dtype_c = DRM_VNPU_DTYPE_I64));
#undef BAD
	for (i = 0; i < n; i++)
		EXPECT_EQ(bad[i].err, submit_bad(self, &bad[i].args, sizeof(bad[i].args), oc))
			TH_LOG("%s", bad[i].what);
	/* Nothing ran: the FILL before each bad command never executed. */
	usleep(20000);
	EXPECT_EQ(0, *(uint32_t *)PTR(oc));
	/* The good ones run; a 1.6 caller's 232 bytes have no k: refused. */
	EXPECT_EQ(1, run(self, &ga));
	EXPECT_EQ(1, run(self, &tk));
	EXPECT_EQ(-EINVAL, submit_bad(self, &tk, DRM_VNPU_TENSOR_ARGS_SIZE_V2, oc));
	t = bad[n - 1].args;
	t.dtype_a = DRM_VNPU_DTYPE_I64;
	EXPECT_EQ(1, run(self, &t));
}

TEST_HARNESS_MAIN
