// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * ONNX elementwise operators lowered onto the device's arithmetic (T_ADD,
 * T_SUB, T_MUL, T_DIV, T_MAX, T_MIN, T_RELU, T_EXP, the reductions and
 * BATCHNORM), each exact or within one rounding of the definition:
 *
 *   Clip            max then min against the bounds (scalar tensors)
 *   Neg Abs         0 - x; max(x, 0 - x)
 *   Reciprocal      1 / x
 *   Sqrt            1 / rsqrt(x), rsqrt by BATCHNORM (computed in double)
 *   Pow             a constant multiple of 0.5 up to 64: T_MUL powering,
 *                   Sqrt for the half; any other: T_EXP(y T_LOG|x|), signed
 *   LeakyRelu PRelu relu(x) + alpha * min(x, 0)
 *   Elu Selu Celu   relu(x) + alpha * (exp(min(x, 0) / a) - 1), scaled
 *   HardSigmoid     max(0, min(1, alpha x + beta)); HardSwish x * that
 *   Softsign        x / (1 + |x|)
 *   Sum Mean Max Min  a chain of binary operators (and a scale)
 *   Max Min Clip    of int8, uint8, int32: exact, a copy, then per operand
 *                   T_LESS into a bool scratch and T_WHERE (uAPI 1.6)
 *   ReduceMin       0 - max(0 - x); ReduceSumSquare, ReduceL1, ReduceL2,
 *                   ReduceLogSum, ReduceLogSumExp
 *   Softplus        max(x, 0) + log(exp(-|x|) + 1)
 *   ThresholdedRelu Shrink Sign  by exact steps (x > a) from the
 *                   difference scaled by 2^254 and clamped to [0, 1]
 *   LRN             x / exp(beta log(bias + alpha avgpool(x^2) over channels))
 *   ArgMax ArgMin   T_ARGMAX, T_ARGMIN, the int32 indices widened to int64
 *   TopK            T_TOPK (uAPI 1.7) into the values and int32 indices,
 *                   widened to int64 as ArgMax's
 *   CumSum          one T_DOT with a constant triangular matrix
 *   Erf             x p(x^2) / q(x^2) on x clamped to [-4, 4]: the rational
 *                   approximation of Eigen and XLA, within 4e-7 relative
 *   LayerNormalization, InstanceNormalization: mean and variance per row
 *                   by the reductions, then BATCHNORM with them per row
 *
 * Constants (0, 1, alpha...) are scalar weights broadcast with stride 0.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_ops.h"

/* C = A op B, A and B broadcast to C's shape (B unused when @tb < 0). */
static int ew(struct gbuild *b, const struct gnode *n, enum vnpu_op op, int ta, int tb, int tc)
{
	const struct gtensor *c = &b->tensors[tc];
	struct tlaunch l;

	gop_tl_init(&l, op, c->rank, c->dims);
	gop_bcast(&b->tensors[ta], c->rank, c->dims, l.sa);
	if (tb >= 0)
		gop_bcast(&b->tensors[tb], c->rank, c->dims, l.sb);
	gop_dense(c->dims, c->rank, l.sc);
	l.ta = ta;
	l.tb = tb;
	l.tc = tc;
	return gop_tl_emit(b, n, &l);
}

/* C = A op scalar constant @v (or @v op A with @first). */
static int ew_const(struct gbuild *b, const struct gnode *n, enum vnpu_op op, int ta, float v,
		    int first, int tc)
{
	int k, status = gop_scalar(b, n, v, &k);

	if (status != VNPU_SUCCESS)
		return status;
	return first ? ew(b, n, op, k, ta, tc) : ew(b, n, op, ta, k, tc);
}

/* A scratch tensor of the output's shape. */
static int temp(struct gbuild *b, const struct gnode *n, int *id)
{
	const struct gtensor *y = &b->tensors[n->out[0]];
	uint32_t rank = y->rank;
	int64_t dims[MAX_RANK];
	int status;

	memcpy(dims, y->dims, sizeof(dims));
	status = gop_scratch(b, n, y->count, id);
	if (status == VNPU_SUCCESS)
		gb_set_shape(&b->tensors[*id], VNPU_DTYPE_FLOAT, rank, dims);
	return status;
}

/* The usual checks of a one-input float operator; sets the output's shape. */
static int unary_prologue(struct gbuild *b, struct gnode *n, const char *const *allowed)
{
	struct gtensor *x;
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	return gop_set_out(b, n, 0, x->rank, x->dims);
}

/* int8, uint8 and int32: the integer types Max, Min and Clip take. */
static int is_int_type(int dtype)
{
	return dtype == VNPU_DTYPE_INT8 || dtype == VNPU_DTYPE_UINT8 || dtype == VNPU_DTYPE_INT32;
}

/*
 * Integer maximum (@max) or minimum of C and B into C, exactly (fp32
 * would round int32 beyond 2^24): a comparison into a bool scratch, C < B
 * (B < C for the minimum), and a select of B where it holds. B and C are
 * of one type.
 */
static int ew_int_extreme(struct gbuild *b, const struct gnode *n, int max, int tb, int tc)
{
	const struct gtensor *c = &b->tensors[tc];
	int m, status = gop_scratch(b, n, c->count, &m);

	if (status != VNPU_SUCCESS)
		return status;
	c = &b->tensors[tc];
	gb_set_shape(&b->tensors[m], VNPU_DTYPE_BOOL, c->rank, c->dims);
	status = max ? ew(b, n, VNPU_OP_T_LESS, tc, tb, m) : ew(b, n, VNPU_OP_T_LESS, tb, tc, m);
	return status ? status : ew(b, n, VNPU_OP_T_WHERE, tb, m, tc);
}

/* Inputs @from.. of @n (those present) of x's integer type, else a refusal. */
static int need_same_int(struct gbuild *b, const struct gnode *n, size_t from)
{
	const struct gtensor *x = gop_in(b, n, 0);

	for (size_t j = from; j < n->num_in; j++) {
		const struct gtensor *t = gop_in(b, n, j);

		if (t && t->dtype != x->dtype)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "input '%s' of element type %d, input '%s' of %d", t->name,
					 t->dtype, x->name, x->dtype);
	}
	return x->count ? VNPU_SUCCESS :
	       node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "input '%s' is empty", x->name);
}

/* Clip of an integer tensor (operator set 11 on): C = x, raised to min, lowered to max. */
static int clip_int(struct gbuild *b, struct gnode *n)
{
	struct gtensor *x = gop_in(b, n, 0);
	int status;

	if ((status = gop_check_attrs(n, NULL)) || (status = gop_need_inputs(n, 1, 3)) ||
	    (status = gop_single_output(n)) || (status = need_same_int(b, n, 1)))
		return status;
	for (size_t j = 1; j < 3; j++)
		if (gop_in(b, n, j) && gop_in(b, n, j)->count != 1)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input %zu must be a scalar", j);
	status = gop_set_out(b, n, 0, x->rank, x->dims);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	gb_set_shape(&b->tensors[n->out[0]], x->dtype, x->rank, x->dims);
	status = ew(b, n, VNPU_OP_T_COPY, n->in[0], -1, n->out[0]);
	if (status == VNPU_SUCCESS && gop_in(b, n, 1))
		status = ew_int_extreme(b, n, 1, n->in[1], n->out[0]);
	if (status == VNPU_SUCCESS && gop_in(b, n, 2))
		status = ew_int_extreme(b, n, 0, n->in[2], n->out[0]);
	return status;
}

static int op_clip(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed_old[] = { "min", "max", NULL };
	int lo = -1, hi = -1, status, cur;

	if (b->opset >= 11 && n->num_in >= 1 && gop_in(b, n, 0) &&
	    is_int_type(gop_in(b, n, 0)->dtype))
		return clip_int(b, n);
	if (b->opset < 11) {
		status = unary_prologue(b, n, allowed_old);
		if (status == VNPU_SUCCESS && gop_attr(n, "min"))
			status = gop_scalar(b, n, gop_attr_float(n, "min", 0), &lo);
		if (status == VNPU_SUCCESS && gop_attr(n, "max"))
			status = gop_scalar(b, n, gop_attr_float(n, "max", 0), &hi);
	} else {
		status = gop_check_float_op(b, n, NULL, 1, 3);
		if (status)
			return status;
		for (size_t j = 1; j < 3; j++)
			if (gop_in(b, n, j) && gop_in(b, n, j)->count != 1)
				return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input %zu must be a scalar", j);
		lo = gop_in(b, n, 1) ? n->in[1] : -1;
		hi = gop_in(b, n, 2) ? n->in[2] : -1;
		status = gop_set_out(b, n, 0, gop_in(b, n, 0)->rank, gop_in(b, n, 0)->dims);
	}
	if (status != VNPU_SUCCESS)
		return status;
	/* The bound first: a NaN in x compares false and is kept. */
	cur = n->in[0];
	if (lo >= 0) {
		status = ew(b, n, VNPU_OP_T_MAX, lo, cur, n->out[0]);
		cur = n->out[0];
	}
	if (status == VNPU_SUCCESS && hi >= 0) {
		status = ew(b, n, VNPU_OP_T_MIN, hi, cur, n->out[0]);
		cur = n->out[0];
	}
	if (status == VNPU_SUCCESS && cur != n->out[0])
		status = ew(b, n, VNPU_OP_T_COPY, cur, -1, n->out[0]);
	return status;
}

static int op_neg_abs_recip(struct gbuild *b, struct gnode *n)
{
	const char *op = n->np->op_type;
	int status = unary_prologue(b, n, NULL);

	if (status != VNPU_SUCCESS)
		return status;
	if (!strcmp(op, "Reciprocal"))
		return ew_const(b, n, VNPU_OP_T_DIV, n->in[0], 1.0f, 1, n->out[0]);
	status = ew_const(b, n, VNPU_OP_T_SUB, n->in[0], 0.0f, 1, n->out[0]);
	if (status == VNPU_SUCCESS && !strcmp(op, "Abs"))
		status = ew(b, n, VNPU_OP_T_MAX, n->in[0], n->out[0], n->out[0]);
	return status;
}

/*
 * BATCHNORM over @R rows (the channels) of @D: C = (A - mean) / sqrt(var +
 * eps) * scale + bias, @arrays the per-row scale, bias, mean and var; A
 * dense or, with @a_scalar, one element broadcast.
 */
static int batchnorm_rows(struct gbuild *b, const struct gnode *n, uint64_t R, uint64_t D,
			  int ta, int a_scalar, int tc, const int *arrays, float eps)
{
	int64_t shape[2] = { (int64_t)R, (int64_t)D };
	struct tlaunch l;

	gop_tl_init(&l, VNPU_OP_T_BATCHNORM, 2, shape);
	l.sa[0] = a_scalar ? 0 : D, l.sa[1] = a_scalar ? 0 : 1;
	l.sc[0] = D, l.sc[1] = 1;
	l.ta = ta;
	l.tc = tc;
	memcpy(l.norm, arrays, sizeof(l.norm));
	l.epsilon = eps;
	l.norm_axis = 0;
	return gop_tl_emit(b, n, &l);
}

/* C = rsqrt(A) by BATCHNORM over A's flat view: (1 - 0) / sqrt(A + 0) * 1 + 0. */
/* @count ones and @count zeros (scratch), and the scalar 1 they come from. */
static int unit_arrays(struct gbuild *b, const struct gnode *n, uint64_t count, int *one,
		       int *ones, int *zeros)
{
	uint64_t zero[1] = { 0 }, unit[1] = { 1 };
	int64_t shape[1] = { (int64_t)count };
	int status;

	if ((status = gop_scalar(b, n, 1.0f, one)) || (status = gop_scratch(b, n, count, zeros)) ||
	    (status = gop_scratch(b, n, count, ones)) ||
	    (status = gop_copy(b, n, 1, shape, *one, 0, zero, *ones, 0, unit)))
		return status;
	return ew(b, n, VNPU_OP_T_SUB, *ones, *ones, *zeros);
}

static int rsqrt(struct gbuild *b, const struct gnode *n, int ta, int tc)
{
	uint64_t count = b->tensors[ta].count;
	int one, zeros, ones, status = unit_arrays(b, n, count, &one, &ones, &zeros);
	int arrays[4] = { ones, zeros, zeros, ta };

	return status ? status : batchnorm_rows(b, n, count, 1, one, 1, tc, arrays, 0.0f);
}

static int sqrt_of(struct gbuild *b, const struct gnode *n, int ta, int tc)
{
	int r, status = gop_scratch(b, n, b->tensors[ta].count, &r);

	if (status == VNPU_SUCCESS)
		status = rsqrt(b, n, ta, r);
	if (status == VNPU_SUCCESS)
		gb_set_shape(&b->tensors[r], VNPU_DTYPE_FLOAT, b->tensors[tc].rank, b->tensors[tc].dims);
	return status == VNPU_SUCCESS ? ew_const(b, n, VNPU_OP_T_DIV, r, 1.0f, 1, tc) : status;
}

static int op_sqrt(struct gbuild *b, struct gnode *n)
{
	int status = unary_prologue(b, n, NULL);

	return status == VNPU_SUCCESS ? sqrt_of(b, n, n->in[0], n->out[0]) : status;
}

/* Pow by a constant scalar exponent: 0.5 (Sqrt), 1, 2, 3, 4 (products). */
/* Largest |exponent| of a constant Pow computed by repeated multiplication. */
#define POW_MAX_MULTIPLIED 64

/*
 * x^p for a constant p, a multiple of 0.5 of magnitude at most
 * POW_MAX_MULTIPLIED: Sqrt for the half, binary powering by T_MUL for the
 * integer part (at most 2 log2 |p| roundings), T_DIV of 1 by the result
 * for a negative p. Into the fp32 tensor @r of the output's shape.
 */
static int pow_multiplied(struct gbuild *b, const struct gnode *n, double p, int r)
{
	uint64_t k = (uint64_t)(p < 0 ? -p : p);
	int half = (p < 0 ? -p : p) - (double)k == 0.5, have = 0, cur = n->in[0], sq = -1;
	int status = VNPU_SUCCESS;

	if (half) {
		status = sqrt_of(b, n, n->in[0], r);
		have = 1;
	}
	while (k && status == VNPU_SUCCESS) {
		if (k & 1) {
			status = have ? ew(b, n, VNPU_OP_T_MUL, r, cur, r) :
					ew(b, n, VNPU_OP_T_COPY, cur, -1, r);
			have = 1;
		}
		k >>= 1;
		if (k && status == VNPU_SUCCESS) {
			if (sq < 0)
				status = temp(b, n, &sq);
			if (status == VNPU_SUCCESS)
				status = ew(b, n, VNPU_OP_T_MUL, cur, cur, sq);
			cur = sq;
		}
	}
	if (status == VNPU_SUCCESS && !have) {	/* x^0 = 1, NaN and infinities included */
		int one;

		status = gop_scalar(b, n, 1.0f, &one);
		if (status == VNPU_SUCCESS)
			status = ew(b, n, VNPU_OP_T_COPY, one, -1, r);
	}
	if (status == VNPU_SUCCESS && p < 0)
		status = ew_const(b, n, VNPU_OP_T_DIV, r, 1.0f, 1, r);
	return status;
}

/*
 * x^y for any y, as C's pow(): exp(y log |x|), negated where x < 0 and y
 * is an odd integer, NaN where x < 0 and y is not an integer, 1 where
 * y == 0 or x == 1. Into the fp32 tensor @r of the output's shape; @y may
 * be a broadcast tensor of any type the float operators read.
 */
static int pow_exp_log(struct gbuild *b, const struct gnode *n, int y, int r)
{
	int x = n->in[0], t, neg, isint, status;

	if ((status = temp(b, n, &t)) || (status = temp(b, n, &neg)) ||
	    (status = temp(b, n, &isint)))
		return status;
	/* r = exp(y log |x|): |x| as max(x, -x) keeps a NaN. */
	if ((status = ew_const(b, n, VNPU_OP_T_SUB, x, 0.0f, 1, t)) ||
	    (status = ew(b, n, VNPU_OP_T_MAX, x, t, t)) ||
	    (status = ew(b, n, VNPU_OP_T_LOG, t, -1, t)) ||
	    (status = ew(b, n, VNPU_OP_T_MUL, t, y, t)) ||
	    (status = ew(b, n, VNPU_OP_T_EXP, t, -1, r)))
		return status;
	/* isint = floor(y) == y; t = 1 for an even integer y (floor(y / 2) == y / 2). */
	if ((status = ew(b, n, VNPU_OP_T_FLOOR, y, -1, t)) ||
	    (status = ew(b, n, VNPU_OP_T_EQUAL, t, y, isint)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MUL, y, 0.5f, 0, t)) ||
	    (status = ew(b, n, VNPU_OP_T_FLOOR, t, -1, neg)) ||
	    (status = ew(b, n, VNPU_OP_T_EQUAL, neg, t, t)))
		return status;
	/* t = 1 - 2 (x < 0) (isint - even): -1 where the sign of x is kept. */
	if ((status = ew(b, n, VNPU_OP_T_SUB, isint, t, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_LESS, x, 0.0f, 0, neg)) ||
	    (status = ew(b, n, VNPU_OP_T_MUL, t, neg, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MUL, t, -2.0f, 0, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_ADD, t, 1.0f, 0, t)) ||
	    (status = ew(b, n, VNPU_OP_T_MUL, r, t, r)))
		return status;
	/* NaN where x < 0 and y is not an integer: neg (1 - isint) != 0. */
	if ((status = ew_const(b, n, VNPU_OP_T_SUB, isint, 1.0f, 1, t)) ||
	    (status = ew(b, n, VNPU_OP_T_MUL, t, neg, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_WHERE, t, __builtin_nanf(""), 1, r)))
		return status;
	/* 1 where y == 0 or x == 1. */
	if ((status = ew_const(b, n, VNPU_OP_T_EQUAL, y, 0.0f, 0, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_WHERE, t, 1.0f, 1, r)) ||
	    (status = ew_const(b, n, VNPU_OP_T_EQUAL, x, 1.0f, 0, t)))
		return status;
	return ew_const(b, n, VNPU_OP_T_WHERE, t, 1.0f, 1, r);
}

/*
 * Pow: a constant exponent that is a multiple of 0.5 up to 64 by
 * multiplication (exact to a few roundings, as x * x is), any other
 * exponent (a tensor given at run, broadcast) by exp and log.
 */
static int op_pow(struct gbuild *b, struct gnode *n)
{
	struct gtensor *x, *y, *out;
	uint32_t rank;
	int64_t dims[MAX_RANK];
	int yid, r, status;
	const void *e;
	double p = 0;
	int scalar;

	if ((status = gop_check_attrs(n, NULL)) || (status = gop_need_inputs(n, 2, 2)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	y = gop_in(b, n, 1);
	yid = n->in[1];
	e = gop_const_data(b, yid);
	scalar = e && y->count == 1;
	if (scalar)
		p = gb_const_value(y->dtype, e, 0);
	if (y->dtype == VNPU_DTYPE_INT64) {
		/* An int64 exponent is a constant (int64 tensors are): as fp32. */
		float *v;
		char name[64];

		if (!e)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "an int64 exponent must be a constant");
		v = malloc((y->count ? y->count : 1) * sizeof(*v));
		if (!v)
			return VNPU_ERROR_OUT_OF_HOST_MEMORY;
		for (uint64_t i = 0; i < y->count; i++)
			v[i] = (float)((const int64_t *)e)[i];
		snprintf(name, sizeof(name), "\x01exponent.%d", n->index);
		status = gb_add_weight(b, name, VNPU_DTYPE_FLOAT, y->rank, y->dims, v, &yid);
		free(v);
		if (status != VNPU_SUCCESS)
			return status;
		x = gop_in(b, n, 0);
		y = &b->tensors[yid];
	} else if (!gb_is_float(y->dtype) && y->dtype != VNPU_DTYPE_INT32 &&
		   y->dtype != VNPU_DTYPE_INT8 && y->dtype != VNPU_DTYPE_UINT8) {
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "exponent of element type %d not supported", y->dtype);
	}
	status = gop_broadcast_shape(n, x, y, &rank, dims);
	if (status == VNPU_SUCCESS)
		status = gop_set_out(b, n, 0, rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	out = &b->tensors[n->out[0]];
	/* fp32 scratch when the output is fp16: one rounding, at the end. */
	r = n->out[0];
	if (out->dtype != VNPU_DTYPE_FLOAT && (status = temp(b, n, &r)))
		return status;
	if (scalar && p <= POW_MAX_MULTIPLIED && p >= -POW_MAX_MULTIPLIED &&
	    p * 2 == (double)(int64_t)(p * 2))
		status = pow_multiplied(b, n, p, r);
	else
		status = pow_exp_log(b, n, yid, r);
	if (status == VNPU_SUCCESS && r != n->out[0])
		status = ew(b, n, VNPU_OP_T_COPY, r, -1, n->out[0]);
	return status;
}

/*
 * y = relu(x) + alpha * f(min(x, 0)): f the identity (LeakyRelu, PRelu with
 * @slope a tensor) or exp(m / a) - 1 (Elu, Selu, Celu), all times @scale.
 */
static int neg_part(struct gbuild *b, const struct gnode *n, float alpha, int slope, int expo,
		    float a, float scale)
{
	int x = n->in[0], y = n->out[0], t, status;

	if ((status = temp(b, n, &t)) || (status = ew_const(b, n, VNPU_OP_T_MIN, x, 0.0f, 0, t)))
		return status;
	if (expo) {
		if (a != 1.0f && (status = ew_const(b, n, VNPU_OP_T_DIV, t, a, 0, t)))
			return status;
		if ((status = ew(b, n, VNPU_OP_T_EXP, t, -1, t)) ||
		    (status = ew_const(b, n, VNPU_OP_T_SUB, t, 1.0f, 0, t)))
			return status;
	}
	status = slope >= 0 ? ew(b, n, VNPU_OP_T_MUL, t, slope, t) :
			      ew_const(b, n, VNPU_OP_T_MUL, t, alpha, 0, t);
	if (status == VNPU_SUCCESS)
		status = ew(b, n, VNPU_OP_T_RELU, x, -1, y);
	if (status == VNPU_SUCCESS)
		status = ew(b, n, VNPU_OP_T_ADD, y, t, y);
	if (status == VNPU_SUCCESS && scale != 1.0f)
		status = ew_const(b, n, VNPU_OP_T_MUL, y, scale, 0, y);
	return status;
}

static int op_relu_family(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "alpha", "gamma", NULL };
	const char *op = n->np->op_type;
	int status = unary_prologue(b, n, allowed);

	if (status != VNPU_SUCCESS)
		return status;
	if (!strcmp(op, "LeakyRelu"))
		return neg_part(b, n, gop_attr_float(n, "alpha", 0.01f), -1, 0, 1, 1);
	if (!strcmp(op, "Elu"))
		return neg_part(b, n, gop_attr_float(n, "alpha", 1.0f), -1, 1, 1, 1);
	if (!strcmp(op, "Celu")) {
		float a = gop_attr_float(n, "alpha", 1.0f);

		return neg_part(b, n, a, -1, 1, a, 1);
	}
	return neg_part(b, n, gop_attr_float(n, "alpha", 1.67326319217681884765625f), -1, 1, 1,
			gop_attr_float(n, "gamma", 1.05070102214813232421875f));
}

static int op_prelu(struct gbuild *b, struct gnode *n)
{
	int64_t dims[MAX_RANK];
	uint32_t rank;
	int status;

	status = gop_check_float_op(b, n, NULL, 2, 2);
	if (status)
		return status;
	status = gop_broadcast_shape(n, gop_in(b, n, 0), gop_in(b, n, 1), &rank, dims);
	if (status == VNPU_SUCCESS && (rank != gop_in(b, n, 0)->rank ||
				       memcmp(dims, gop_in(b, n, 0)->dims, rank * sizeof(*dims))))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "slope does not broadcast to X");
	if (status == VNPU_SUCCESS)
		status = gop_set_out(b, n, 0, rank, dims);
	return status == VNPU_SUCCESS ? neg_part(b, n, 0, n->in[1], 0, 1, 1) : status;
}

static int op_hard(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "alpha", "beta", NULL };
	int swish = !strcmp(n->np->op_type, "HardSwish");
	int x = n->in[0], y = n->out[0], t = y, status;

	status = unary_prologue(b, n, swish ? NULL : allowed);
	if (status == VNPU_SUCCESS && swish)
		status = temp(b, n, &t);
	if (status != VNPU_SUCCESS)
		return status;
	if ((status = ew_const(b, n, VNPU_OP_T_MUL, x,
			       swish ? 1.0f / 6 : gop_attr_float(n, "alpha", 0.2f), 0, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_ADD, t, swish ? 0.5f : gop_attr_float(n, "beta", 0.5f),
			       0, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MIN, t, 1.0f, 1, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MAX, t, 0.0f, 1, t)))
		return status;
	return swish ? ew(b, n, VNPU_OP_T_MUL, x, t, y) : VNPU_SUCCESS;
}

static int op_softsign(struct gbuild *b, struct gnode *n)
{
	int x = n->in[0], y = n->out[0], t, status = unary_prologue(b, n, NULL);

	if (status || (status = temp(b, n, &t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_SUB, x, 0.0f, 1, t)) ||
	    (status = ew(b, n, VNPU_OP_T_MAX, x, t, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_ADD, t, 1.0f, 0, t)))
		return status;
	return ew(b, n, VNPU_OP_T_DIV, x, t, y);
}

/*
 * t = 1 where x > alpha (x < alpha with @below), else 0, NaN included:
 * the difference scaled by 2^254 (the smallest positive difference, 2^-149,
 * becomes 2^105) and clamped to [0, 1]; T_MAX with the difference first
 * turns NaN into 0.
 */
static int step_of(struct gbuild *b, const struct gnode *n, int x, float alpha, int below, int t)
{
	int status = ew_const(b, n, VNPU_OP_T_SUB, x, alpha, below, t);

	if (status || (status = ew_const(b, n, VNPU_OP_T_MUL, t, 0x1p127f, 0, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MUL, t, 0x1p127f, 0, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MAX, t, 0.0f, 0, t)))
		return status;
	return ew_const(b, n, VNPU_OP_T_MIN, t, 1.0f, 0, t);
}

/* ThresholdedRelu: max(x, alpha) * (x > alpha), exact (no inf times 0). */
static int op_thresholded_relu(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "alpha", NULL };
	float alpha = gop_attr_float(n, "alpha", 1.0f);
	int x = n->in[0], y = n->out[0], t, status = unary_prologue(b, n, allowed);

	if (status || (status = temp(b, n, &t)) || (status = step_of(b, n, x, alpha, 0, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MAX, x, alpha, 0, y)))
		return status;
	return ew(b, n, VNPU_OP_T_MUL, y, t, y);
}

/*
 * Shrink: (max(x, lambd) - bias) * (x > lambd) + (min(x, -lambd) + bias) *
 * (x < -lambd); each factor finite where its step is 0, so exact.
 */
static int op_shrink(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "bias", "lambd", NULL };
	float lambd = gop_attr_float(n, "lambd", 0.5f), bias = gop_attr_float(n, "bias", 0.0f);
	int x = n->in[0], y = n->out[0], t, u, status = unary_prologue(b, n, allowed);

	if (status)
		return status;
	if (!(lambd >= 0))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "lambd %g below 0", lambd);
	if ((status = temp(b, n, &t)) || (status = temp(b, n, &u)) ||
	    (status = step_of(b, n, x, lambd, 0, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MAX, x, lambd, 0, y)) ||
	    (status = ew_const(b, n, VNPU_OP_T_SUB, y, bias, 0, y)) ||
	    (status = ew(b, n, VNPU_OP_T_MUL, y, t, y)) ||
	    (status = step_of(b, n, x, -lambd, 1, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MIN, x, -lambd, 0, u)) ||
	    (status = ew_const(b, n, VNPU_OP_T_ADD, u, bias, 0, u)) ||
	    (status = ew(b, n, VNPU_OP_T_MUL, u, t, u)))
		return status;
	return ew(b, n, VNPU_OP_T_ADD, y, u, y);
}

/*
 * Sign: (x > 0) - (x < 0), plus 0 times x clamped to [-1, 1] (with the
 * bound first, T_MIN and T_MAX keep a NaN), which is NaN for NaN only.
 */
static int op_sign(struct gbuild *b, struct gnode *n)
{
	int x = n->in[0], y = n->out[0], t, status = unary_prologue(b, n, NULL);

	if (status || (status = temp(b, n, &t)) || (status = step_of(b, n, x, 0.0f, 0, y)) ||
	    (status = step_of(b, n, x, 0.0f, 1, t)) ||
	    (status = ew(b, n, VNPU_OP_T_SUB, y, t, y)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MIN, x, 1.0f, 1, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MAX, t, -1.0f, 1, t)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MUL, t, 0.0f, 0, t)))
		return status;
	return ew(b, n, VNPU_OP_T_ADD, y, t, y);
}

/*
 * LRN: the sum of squares over a window of @size channels is T_AVGPOOL
 * (padding counted) over the view [N, 1, C, d...] of x * x times size, so
 * y = x / exp(beta * log(bias + alpha * avgpool(x * x))).
 */
static int op_lrn(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "alpha", "beta", "bias", "size", NULL };
	float alpha = gop_attr_float(n, "alpha", 0.0001f), beta = gop_attr_float(n, "beta", 0.75f);
	float bias = gop_attr_float(n, "bias", 1.0f);
	int64_t size = gop_attr_int(n, "size", 0), v[4];
	int x = n->in[0], y = n->out[0], t, u, status = unary_prologue(b, n, allowed);
	const struct gtensor *xt;
	struct tlaunch l;

	if (status)
		return status;
	xt = gop_in(b, n, 0);
	if (xt->rank < 2)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input of rank %u, at least 2 expected",
				 xt->rank);
	if (size < 1 || size > 4096)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "size %lld outside 1..4096",
				 (long long)size);
	v[0] = xt->dims[0];
	v[1] = 1;
	v[2] = xt->dims[1];
	v[3] = (int64_t)gop_prod(xt->dims, 2, xt->rank);
	if ((status = temp(b, n, &t)) || (status = temp(b, n, &u)) ||
	    (status = ew(b, n, VNPU_OP_T_MUL, x, x, t)))
		return status;
	gop_tl_init(&l, VNPU_OP_T_AVGPOOL, 4, v);
	l.flags = VNPU_TENSOR_COUNT_INCLUDE_PAD;
	l.window = (struct vnpu_tensor_window){
		.kernel_h = (uint32_t)size, .kernel_w = 1, .stride_h = 1, .stride_w = 1,
		.dilation_h = 1, .dilation_w = 1, .pad_top = (uint32_t)((size - 1) / 2),
		.pad_bottom = (uint32_t)(size / 2), .out_h = (uint32_t)v[2],
		.out_w = (uint32_t)v[3],
	};
	gop_dense(v, 4, l.sa);
	memcpy(l.sc, l.sa, sizeof(l.sc));
	l.out_rank = 4;
	l.ta = t;
	l.tc = u;
	if ((status = gop_tl_emit(b, n, &l)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MUL, u, alpha, 0, u)) ||
	    (status = ew_const(b, n, VNPU_OP_T_ADD, u, bias, 0, u)) ||
	    (status = ew(b, n, VNPU_OP_T_LOG, u, -1, u)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MUL, u, beta, 0, u)) ||
	    (status = ew(b, n, VNPU_OP_T_EXP, u, -1, u)))
		return status;
	return ew(b, n, VNPU_OP_T_DIV, x, u, y);
}

/* Sum, Mean, Max, Min of one or more inputs, broadcast together. */
static int op_variadic(struct gbuild *b, struct gnode *n)
{
	const char *op = n->np->op_type;
	enum vnpu_op kop = !strcmp(op, "Max") ? VNPU_OP_T_MAX : !strcmp(op, "Min") ? VNPU_OP_T_MIN :
			   VNPU_OP_T_ADD;
	struct gtensor acc = { 0 };
	int64_t dims[MAX_RANK];
	uint32_t rank;
	int status;

	int integer;

	if ((status = gop_check_attrs(n, NULL)) ||
	    (status = gop_need_inputs(n, 1, GNODE_MAX_INPUTS)) ||
	    (status = gop_single_output(n)))
		return status;
	/* Integer Max and Min: exact comparisons and selects, not fp32. */
	integer = kop != VNPU_OP_T_ADD && is_int_type(gop_in(b, n, 0)->dtype);
	if (integer && (status = need_same_int(b, n, 1)))
		return status;
	for (size_t j = 0; j < n->num_in; j++) {
		if (!gop_in(b, n, j))
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input %zu missing", j);
		if (!integer && (status = gop_need_float(b, n, j)))
			return status;
		status = gop_broadcast_shape(n, j ? &acc : gop_in(b, n, 0), gop_in(b, n, j), &rank,
					     dims);
		if (status != VNPU_SUCCESS)
			return status;
		acc.rank = rank;
		memcpy(acc.dims, dims, sizeof(dims));
	}
	status = gop_set_out(b, n, 0, acc.rank, acc.dims);
	if (status != VNPU_SUCCESS)
		return status;
	if (integer) {
		gb_set_shape(&b->tensors[n->out[0]], gop_in(b, n, 0)->dtype, acc.rank, acc.dims);
		status = ew(b, n, VNPU_OP_T_COPY, n->in[0], -1, n->out[0]);
		for (size_t j = 1; j < n->num_in && status == VNPU_SUCCESS; j++)
			status = ew_int_extreme(b, n, kop == VNPU_OP_T_MAX, n->in[j], n->out[0]);
		return status;
	}
	if (n->num_in == 1)
		status = ew(b, n, VNPU_OP_T_COPY, n->in[0], -1, n->out[0]);
	else
		status = ew(b, n, kop, n->in[0], n->in[1], n->out[0]);
	for (size_t j = 2; j < n->num_in && status == VNPU_SUCCESS; j++)
		status = ew(b, n, kop, n->out[0], n->in[j], n->out[0]);
	if (status == VNPU_SUCCESS && !strcmp(op, "Mean") && n->num_in > 1)
		status = ew_const(b, n, VNPU_OP_T_DIV, n->out[0], (float)n->num_in, 0, n->out[0]);
	return status;
}

/*
 * ReduceMin, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum,
 * ReduceLogSumExp: the input transformed into a scratch tensor (negated,
 * squared, absolute, exponentiated), reduced into the output by the mapping
 * of ReduceMax or ReduceSum, then transformed back (negated, square root,
 * logarithm).
 */
static int op_reduce_more(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axes", "keepdims", "noop_with_empty_axes", NULL };
	const char *op = n->np->op_type;
	int min = !strcmp(op, "ReduceMin"), l2 = !strcmp(op, "ReduceL2");
	int l1 = !strcmp(op, "ReduceL1"), lse = !strcmp(op, "ReduceLogSumExp");
	int logsum = !strcmp(op, "ReduceLogSum");
	int64_t axes[MAX_RANK], sorted[MAX_RANK];
	struct gtensor *x;
	size_t count;
	int given, status, t, x_id = n->in[0];

	if ((status = gop_check_attrs(n, allowed)) ||
	    (status = gop_need_inputs(n, 1, b->opset >= 18 ? 2 : 1)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	if (gop_attr_int(n, "noop_with_empty_axes", 0))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "attribute 'noop_with_empty_axes' not supported");
	x = gop_in(b, n, 0);
	status = gop_get_axes(b, n, 18, axes, &count, &given);
	if (status != VNPU_SUCCESS)
		return status;
	if (!x->rank)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "scalar input");
	if (!count)
		for (uint32_t i = 0; i < x->rank; i++)
			axes[count++] = i;
	status = gop_norm_axes(n, axes, count, x->rank, sorted);
	t = x_id;	/* ReduceLogSum reduces x itself */
	if (status == VNPU_SUCCESS && !logsum)
		status = gop_scratch(b, n, gop_in(b, n, 0)->count, &t);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	if (!logsum)
		gb_set_shape(&b->tensors[t], VNPU_DTYPE_FLOAT, x->rank, x->dims);
	if (min || l1)
		status = ew_const(b, n, VNPU_OP_T_SUB, x_id, 0.0f, 1, t);
	if (status == VNPU_SUCCESS && l1)
		status = ew(b, n, VNPU_OP_T_MAX, x_id, t, t);
	if (status == VNPU_SUCCESS && lse)
		status = ew(b, n, VNPU_OP_T_EXP, x_id, -1, t);
	if (status == VNPU_SUCCESS && !min && !l1 && !lse && !logsum)
		status = ew(b, n, VNPU_OP_T_MUL, x_id, x_id, t);
	if (status != VNPU_SUCCESS)
		return status;
	/* Reduce the scratch tensor: the node's input 0 seen as t. */
	n->in[0] = t;
	status = gop_reduce(b, n, min ? VNPU_OP_T_REDUCE_MAX : VNPU_OP_T_REDUCE_SUM, sorted, count,
			    gop_attr_int(n, "keepdims", 1) != 0);
	n->in[0] = x_id;
	if (status == VNPU_SUCCESS && min)
		status = ew_const(b, n, VNPU_OP_T_SUB, n->out[0], 0.0f, 1, n->out[0]);
	if (status == VNPU_SUCCESS && l2)
		status = sqrt_of(b, n, n->out[0], n->out[0]);
	if (status == VNPU_SUCCESS && (lse || logsum))
		status = ew(b, n, VNPU_OP_T_LOG, n->out[0], -1, n->out[0]);
	return status;
}

/*
 * Softplus: log(exp(x) + 1) as max(x, 0) + log(exp(-|x|) + 1), which does
 * not overflow for large x.
 */
static int op_softplus(struct gbuild *b, struct gnode *n)
{
	int t, status = unary_prologue(b, n, NULL);
	int x = n->in[0], y = n->out[0];

	if (status == VNPU_SUCCESS)
		status = temp(b, n, &t);
	if (status == VNPU_SUCCESS)
		status = ew_const(b, n, VNPU_OP_T_SUB, x, 0.0f, 1, t);
	if (status == VNPU_SUCCESS)
		status = ew(b, n, VNPU_OP_T_MIN, x, t, t);
	if (status == VNPU_SUCCESS)
		status = ew(b, n, VNPU_OP_T_EXP, t, -1, t);
	if (status == VNPU_SUCCESS)
		status = ew_const(b, n, VNPU_OP_T_ADD, t, 1.0f, 0, t);
	if (status == VNPU_SUCCESS)
		status = ew(b, n, VNPU_OP_T_LOG, t, -1, t);
	if (status == VNPU_SUCCESS)
		status = ew(b, n, VNPU_OP_T_RELU, x, -1, y);
	if (status == VNPU_SUCCESS)
		status = ew(b, n, VNPU_OP_T_ADD, y, t, y);
	return status;
}

/*
 * ArgMax, ArgMin: T_ARGMAX or T_ARGMIN over the axis into an int32 scratch
 * tensor, then each index copied into the low word of its int64 output
 * element (little endian) and 0 into the high word: indices are never
 * negative.
 */
/*
 * The int32 indices of scratch @idx widened into the int64 tensor @y of
 * as many elements: the low words copied, the high words 0 (the indices
 * are not negative), two strided T_COPYs.
 */
static int widen_indices(struct gbuild *b, const struct gnode *n, int idx, int y)
{
	int64_t count = (int64_t)b->tensors[y].count;
	uint64_t one = 1, two = 2, zero = 0;
	int zero_id, status = gop_scalar(b, n, 0.0f, &zero_id);

	if (status == VNPU_SUCCESS)
		status = gop_copy(b, n, 1, &count, idx, 0, &one, y, 0, &two);
	if (status == VNPU_SUCCESS)
		status = gop_copy(b, n, 1, &count, zero_id, 0, &zero, y, 1, &two);
	return status;
}

static int op_arg(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed_old[] = { "axis", "keepdims", NULL };
	static const char *const allowed[] = { "axis", "keepdims", "select_last_index", NULL };
	int64_t axis = gop_attr_int(n, "axis", 0), dims[MAX_RANK], kept[MAX_RANK];
	int last = (int)gop_attr_int(n, "select_last_index", 0);
	int keep = gop_attr_int(n, "keepdims", 1) != 0;
	struct gtensor *x, *y;
	struct tlaunch l;
	uint32_t rank = 0;
	int idx, status;

	status = gop_check_float_op(b, n, b->opset >= 12 ? allowed : allowed_old, 1, 1);
	if (status)
		return status;
	x = gop_in(b, n, 0);
	if (!x->rank || axis < -(int64_t)x->rank || axis >= (int64_t)x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis %lld out of range for rank %u",
				 (long long)axis, x->rank);
	if (last != 0 && last != 1)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "select_last_index %d is not 0 or 1",
				 last);
	if (axis < 0)
		axis += x->rank;
	if (x->dims[axis] > INT32_MAX)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "axis of more than 2^31 - 1 elements");
	for (uint32_t i = 0; i < x->rank; i++) {
		kept[i] = i == axis ? 1 : x->dims[i];
		if (i != axis || keep)
			dims[rank++] = kept[i];
	}
	status = gop_set_out(b, n, 0, rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	y = &b->tensors[n->out[0]];
	gb_set_shape(y, VNPU_DTYPE_INT64, rank, dims);
	status = gop_scratch(b, n, y->count, &idx);
	if (status)
		return status;
	gop_tl_init(&l, !strcmp(n->np->op_type, "ArgMax") ? VNPU_OP_T_ARGMAX : VNPU_OP_T_ARGMIN,
		    x->rank, x->dims);
	l.flags = last ? VNPU_TENSOR_SELECT_LAST : 0;
	l.axes = 1u << axis;
	gop_dense(x->dims, x->rank, l.sa);
	gop_dense(kept, x->rank, l.sc);
	l.sc[axis] = 0;
	l.ta = n->in[0];
	l.tc = idx;
	status = gop_tl_emit(b, n, &l);
	return status ?: widen_indices(b, n, idx, n->out[0]);
}

/*
 * TopK (opsets 1, 10, 11): one T_TOPK into the values and an int32
 * scratch of indices, widened into the int64 indices output. k is the
 * attribute (opset 1) or a constant input; the values come sorted
 * whatever @sorted says (its order is then unspecified).
 */
static int op_topk(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed1[] = { "axis", "k", NULL };
	static const char *const allowed10[] = { "axis", NULL };
	static const char *const allowed11[] = { "axis", "largest", "sorted", NULL };
	int64_t axis = gop_attr_int(n, "axis", -1), k, dims[MAX_RANK];
	int64_t largest = gop_attr_int(n, "largest", 1), sorted = gop_attr_int(n, "sorted", 1);
	int in_k = b->opset >= 10;
	const struct gtensor *x;
	struct tlaunch l;
	int values, idx, status;

	status = gop_check_attrs(n, b->opset >= 11 ? allowed11 : in_k ? allowed10 : allowed1);
	if (!status)
		status = gop_need_inputs(n, 1 + in_k, 1 + in_k);
	if (status)
		return status;
	x = gop_in(b, n, 0);
	if (!gb_is_io_type(x->dtype) || x->dtype == VNPU_DTYPE_BOOL)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "input '%s' of element type %d not supported (float, float16, int8, uint8 and int32 are)",
				 x->name, x->dtype);
	if (!x->rank || axis < -(int64_t)x->rank || axis >= (int64_t)x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis %lld out of range for rank %u",
				 (long long)axis, x->rank);
	if (axis < 0)
		axis += x->rank;
	if (in_k) {
		size_t count;
		const int64_t *kv = gop_const_ints(b, n, 1, &count);

		if (!kv)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "k must be a constant int64 tensor (given at load)");
		if (count != 1)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "k has %zu values, 1 expected",
					 count);
		k = kv[0];
	} else {
		if (!gop_attr(n, "k"))
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "attribute k missing");
		k = gop_attr_int(n, "k", 0);
	}
	if (k < 1 || k > x->dims[axis])
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "k %lld out of range 1..%lld",
				 (long long)k, (long long)x->dims[axis]);
	if ((largest != 0 && largest != 1) || (sorted != 0 && sorted != 1))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "largest %lld or sorted %lld is not 0 or 1",
				 (long long)largest, (long long)sorted);
	if (x->dims[axis] > DRM_VNPU_TOPK_MAX_AXIS)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "an axis of %lld elements; the device sorts at most %u",
				 (long long)x->dims[axis], DRM_VNPU_TOPK_MAX_AXIS);
	if (n->num_out != 2)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "%zu outputs, 2 expected", n->num_out);
	memcpy(dims, x->dims, sizeof(dims));
	dims[axis] = k;
	/* The values into output 0 (or a scratch of the input's type), indices beside. */
	if (n->out[0] >= 0) {
		status = gop_set_out(b, n, 0, x->rank, dims);
		values = n->out[0];
	} else {
		status = gop_scratch(b, n, gop_prod(dims, 0, x->rank), &values);
	}
	if (status == VNPU_SUCCESS) {
		x = gop_in(b, n, 0);
		gb_set_shape(&b->tensors[values], x->dtype, x->rank, dims);
		status = gop_scratch(b, n, gop_prod(dims, 0, x->rank), &idx);
	}
	if (status == VNPU_SUCCESS && n->out[1] >= 0) {
		status = gop_set_out(b, n, 1, x->rank, dims);
		gb_set_shape(&b->tensors[n->out[1]], VNPU_DTYPE_INT64, x->rank, dims);
	}
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	gop_tl_init(&l, VNPU_OP_T_TOPK, x->rank, x->dims);
	l.axes = 1u << axis;
	l.k = (uint32_t)k;
	l.flags = largest ? 0 : VNPU_TENSOR_SMALLEST;
	gop_dense(x->dims, x->rank, l.sa);
	gop_dense(dims, x->rank, l.sc);
	gop_dense(dims, x->rank, l.sd);
	l.ta = n->in[0];
	l.tc = values;
	l.td = idx;
	status = gop_tl_emit(b, n, &l);
	if (status == VNPU_SUCCESS && n->out[1] >= 0)
		status = widen_indices(b, n, idx, n->out[1]);
	return status;
}

/* Longest CumSum axis: its triangular matrix has the square of it. */
#define CUMSUM_MAX_AXIS 2048

/*
 * CumSum: one T_DOT of x along the axis with a constant triangular matrix
 * U (U[j][i] = 1 where x[j] counts into y[i]: j <= i, j < i exclusive,
 * j >= i reverse), so y[i] adds the x[j] in order, as a running sum does,
 * plus zeros. fp32 U for float x; int8 U for int32 x, whose integer DOT
 * sums exactly (position ids from a mask).
 */
static int op_cumsum(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "exclusive", "reverse", NULL };
	int64_t excl = gop_attr_int(n, "exclusive", 0), rev = gop_attr_int(n, "reverse", 0);
	uint64_t outer, inner;
	int64_t axis, len, shape[2];
	struct gtensor *x, *ax;
	const void *av;
	char name[64];
	int integer, u, status;
	void *tri;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 2, 2)) ||
	    (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	integer = x->dtype == VNPU_DTYPE_INT32;
	if (!integer && (status = gop_need_float(b, n, 0)))
		return status;
	ax = gop_in(b, n, 1);
	av = gop_const_data(b, n->in[1]);
	if (!av || ax->count != 1 ||
	    (ax->dtype != VNPU_DTYPE_INT64 && ax->dtype != VNPU_DTYPE_INT32))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "axis must be a constant int32 or int64 scalar");
	if ((excl != 0 && excl != 1) || (rev != 0 && rev != 1))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "exclusive %lld and reverse %lld (0 or 1)",
				 (long long)excl, (long long)rev);
	axis = (int64_t)gb_const_value(ax->dtype, av, 0);
	if (!x->rank || axis < -(int64_t)x->rank || axis >= (int64_t)x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis %lld out of range for rank %u",
				 (long long)axis, x->rank);
	if (axis < 0)
		axis += x->rank;
	len = x->dims[axis];
	if (len > CUMSUM_MAX_AXIS)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "an axis of %lld elements (at most %d)",
				 (long long)len, CUMSUM_MAX_AXIS);
	status = gop_set_out(b, n, 0, x->rank, x->dims);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	tri = calloc((size_t)(len * len), integer ? 1 : sizeof(float));
	if (!tri)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (int64_t j = 0; j < len; j++)
		for (int64_t i = 0; i < len; i++) {
			int in = rev ? (excl ? j > i : j >= i) : (excl ? j < i : j <= i);

			if (!in)
				continue;
			if (integer)
				((int8_t *)tri)[j * len + i] = 1;
			else
				((float *)tri)[j * len + i] = 1.0f;
		}
	snprintf(name, sizeof(name), "\x01cumsum.%d", n->index);
	shape[0] = len;
	shape[1] = len;
	status = gb_add_weight(b, name, integer ? VNPU_DTYPE_INT8 : VNPU_DTYPE_FLOAT, 2, shape, tri,
			       &u);
	free(tri);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	outer = gop_prod(x->dims, 0, (uint32_t)axis);
	inner = gop_prod(x->dims, (uint32_t)axis + 1, x->rank);
	{
		/* (outer, i, inner, j), the sum over j. */
		const int64_t dot[4] = { (int64_t)outer, len, (int64_t)inner, len };
		const uint64_t sa[4] = { (uint64_t)len * inner, 0, 1, inner };
		const uint64_t sb[4] = { 0, 1, 0, (uint64_t)len };
		const uint64_t sc[4] = { (uint64_t)len * inner, inner, 1, 0 };

		return gop_launch_nd(b, n, VNPU_OP_T_DOT, 4, dot, 1u << 3, n->in[0], sa, u, sb,
				     n->out[0], sc);
	}
}

/* Horner's rule: C = (((c[0] u + c[1]) u + c[2]) ...) over @count coefficients. */
static int horner(struct gbuild *b, const struct gnode *n, int u, const float *c, int count, int tc)
{
	int status = ew_const(b, n, VNPU_OP_T_MUL, u, c[0], 0, tc);

	for (int i = 1; i < count && status == VNPU_SUCCESS; i++) {
		status = ew_const(b, n, VNPU_OP_T_ADD, tc, c[i], 0, tc);
		if (status == VNPU_SUCCESS && i < count - 1)
			status = ew(b, n, VNPU_OP_T_MUL, tc, u, tc);
	}
	return status;
}

static int op_erf(struct gbuild *b, struct gnode *n)
{
	static const float alpha[] = {
		-2.72614225801306e-10f, 2.77068142495902e-08f, -2.10102402082508e-06f,
		-5.69250639462346e-05f, -7.34990630326855e-04f, -2.95459980854025e-03f,
		-1.60960333262415e-02f,
	};
	static const float beta[] = {
		-1.45660718464996e-05f, -2.13374055278905e-04f, -1.68282697438203e-03f,
		-7.37332916720468e-03f, -1.42647390514189e-02f,
	};
	int x = n->in[0], y = n->out[0], xc, x2, p, q, status = unary_prologue(b, n, NULL);

	/* fp32 scratch for every step: a float16 y is rounded once, at the end. */
	q = y;
	if (status || (status = temp(b, n, &xc)) || (status = temp(b, n, &x2)) ||
	    (status = temp(b, n, &p)) ||
	    (b->tensors[y].dtype != VNPU_DTYPE_FLOAT && (status = temp(b, n, &q))))
		return status;
	/* The bound first: a NaN in x compares false and is kept. */
	if ((status = ew_const(b, n, VNPU_OP_T_MAX, x, -4.0f, 1, xc)) ||
	    (status = ew_const(b, n, VNPU_OP_T_MIN, xc, 4.0f, 1, xc)) ||
	    (status = ew(b, n, VNPU_OP_T_MUL, xc, xc, x2)) ||
	    (status = horner(b, n, x2, alpha, 7, p)) ||
	    (status = horner(b, n, x2, beta, 5, q)) ||
	    (status = ew(b, n, VNPU_OP_T_MUL, p, xc, p)))
		return status;
	return ew(b, n, VNPU_OP_T_DIV, p, q, y);
}

/* @op of A (R x C x D) and a per-C vector B into A in place. */
static int per_channel(struct gbuild *b, const struct gnode *n, enum vnpu_op op, int ta, int tb,
		       uint64_t R, uint64_t C, uint64_t D)
{
	int64_t shape[3] = { (int64_t)R, (int64_t)C, (int64_t)D };
	struct tlaunch l;

	gop_tl_init(&l, op, 3, shape);
	l.sa[0] = C * D, l.sa[1] = D, l.sa[2] = 1;
	l.sb[0] = 0, l.sb[1] = 1, l.sb[2] = 0;
	memcpy(l.sc, l.sa, sizeof(l.sc));
	l.ta = ta;
	l.tb = tb;
	l.tc = ta;
	return gop_tl_emit(b, n, &l);
}

/*
 * Y = (X - mean) / sqrt(var + eps) over each of the @R rows of @D elements
 * of X: the mean by T_REDUCE_MEAN, the variance as the mean of the squared
 * differences (T_DOT), both into scratch vectors, then BATCHNORM with the
 * rows as channels (scale 1, bias 0), computed in double.
 */
static int normalize_rows(struct gbuild *b, const struct gnode *n, uint64_t R, uint64_t D,
			  float eps, int mean_out, int inv_out)
{
	int64_t shape[2] = { (int64_t)R, (int64_t)D };
	int mean, var, diff, ones, zeros, one, status;
	struct tlaunch l;

	if (mean_out >= 0)
		mean = mean_out;
	else if ((status = gop_scratch(b, n, R, &mean)))
		return status;
	if ((status = gop_scratch(b, n, R, &var)) || (status = gop_scratch(b, n, R * D, &diff)) ||
	    (status = unit_arrays(b, n, R, &one, &ones, &zeros)))
		return status;
	gop_tl_init(&l, VNPU_OP_T_REDUCE_MEAN, 2, shape);
	l.sa[0] = D, l.sa[1] = 1, l.sc[0] = 1, l.sc[1] = 0;
	l.axes = 2;
	l.ta = n->in[0];
	l.tc = mean;
	if ((status = gop_tl_emit(b, n, &l)))
		return status;
	gop_tl_init(&l, VNPU_OP_T_SUB, 2, shape);
	l.sa[0] = D, l.sa[1] = 1, l.sb[0] = 1, l.sb[1] = 0, l.sc[0] = D, l.sc[1] = 1;
	l.ta = n->in[0];
	l.tb = mean;
	l.tc = diff;
	if ((status = gop_tl_emit(b, n, &l)))
		return status;
	gop_tl_init(&l, VNPU_OP_T_DOT, 2, shape);
	l.sa[0] = D, l.sa[1] = 1, l.sb[0] = D, l.sb[1] = 1, l.sc[0] = 1, l.sc[1] = 0;
	l.axes = 2;
	l.ta = diff;
	l.tb = diff;
	l.tc = var;
	if ((status = gop_tl_emit(b, n, &l)))
		return status;
	if ((status = ew_const(b, n, VNPU_OP_T_DIV, var, (float)D, 0, var)))
		return status;
	{
		int arrays[4] = { ones, zeros, mean, var }, inv[4] = { ones, zeros, zeros, var };

		status = batchnorm_rows(b, n, R, D, n->in[0], 0, n->out[0], arrays, eps);
		/* InvStdDev, 1 / sqrt(var + eps): BATCHNORM of a broadcast 1. */
		if (status == VNPU_SUCCESS && inv_out >= 0)
			status = batchnorm_rows(b, n, R, 1, one, 1, inv_out, inv, eps);
	}
	return status;
}

static int op_layer_norm(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axis", "epsilon", "stash_type", NULL };
	int64_t dims[MAX_RANK];
	struct gtensor *x;
	uint32_t rank, axis;
	int64_t a;
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 2, 3)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_need_float(b, n, 1)) ||
	    (status = gop_need_float(b, n, 2)))
		return status;
	x = gop_in(b, n, 0);
	a = gop_attr_int(n, "axis", -1);
	if (a < -(int64_t)x->rank || a >= (int64_t)x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis %lld out of range for rank %u",
				 (long long)a, x->rank);
	if (gop_attr_int(n, "stash_type", 1) != 1)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "attribute 'stash_type' = %lld not supported",
				 (long long)gop_attr_int(n, "stash_type", 1));
	axis = (uint32_t)(a < 0 ? a + x->rank : a);
	for (size_t j = 1; j < 3; j++) {
		if (!gop_in(b, n, j))
			continue;
		status = gop_broadcast_shape(n, x, gop_in(b, n, j), &rank, dims);
		if (status == VNPU_SUCCESS && (rank != x->rank || memcmp(dims, x->dims, rank * 8) ||
					       gop_in(b, n, j)->rank > x->rank - axis))
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "input %zu does not broadcast to the normalized axes", j);
		if (status != VNPU_SUCCESS)
			return status;
	}
	/* Mean and InvStdDev: the input's shape with 1 on the normalized axes. */
	memcpy(dims, x->dims, sizeof(dims));
	for (uint32_t d = axis; d < x->rank; d++)
		dims[d] = 1;
	for (size_t o = 1; o < n->num_out && o < 3; o++)
		if (n->out[o] >= 0 && (status = gop_set_out(b, n, o, x->rank, dims)))
			return status;
	status = gop_set_out(b, n, 0, x->rank, x->dims);
	if (status == VNPU_SUCCESS)
		status = normalize_rows(b, n, gop_prod(x->dims, 0, axis),
					gop_prod(x->dims, axis, x->rank),
					gop_attr_float(n, "epsilon", 1e-5f),
					n->num_out > 1 ? n->out[1] : -1, n->num_out > 2 ? n->out[2] : -1);
	if (status == VNPU_SUCCESS)
		status = ew(b, n, VNPU_OP_T_MUL, n->out[0], n->in[1], n->out[0]);
	if (status == VNPU_SUCCESS && gop_in(b, n, 2))
		status = ew(b, n, VNPU_OP_T_ADD, n->out[0], n->in[2], n->out[0]);
	return status;
}

static int op_instance_norm(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "epsilon", NULL };
	struct gtensor *x;
	uint64_t N, C, D;
	int status;

	status = gop_check_float_op(b, n, allowed, 3, 3);
	if (status)
		return status;
	x = gop_in(b, n, 0);
	if (x->rank < 3)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input of rank %u, at least 3 expected",
				 x->rank);
	for (size_t j = 1; j < 3; j++)
		if (gop_in(b, n, j)->rank != 1 || gop_in(b, n, j)->dims[0] != x->dims[1])
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input %zu must be a vector of %lld",
					 j, (long long)x->dims[1]);
	N = (uint64_t)x->dims[0];
	C = (uint64_t)x->dims[1];
	D = gop_prod(x->dims, 2, x->rank);
	status = gop_set_out(b, n, 0, x->rank, x->dims);
	if (status == VNPU_SUCCESS)
		status = normalize_rows(b, n, N * C, D, gop_attr_float(n, "epsilon", 1e-5f), -1, -1);
	if (status == VNPU_SUCCESS)
		status = per_channel(b, n, VNPU_OP_T_MUL, n->out[0], n->in[1], N, C, D);
	if (status == VNPU_SUCCESS)
		status = per_channel(b, n, VNPU_OP_T_ADD, n->out[0], n->in[2], N, C, D);
	return status;
}

const struct gop_map gop_math_ops[] = {
	{ "Clip", op_clip, 6 }, { "Neg", op_neg_abs_recip, 6 }, { "Abs", op_neg_abs_recip, 6 },
	{ "Reciprocal", op_neg_abs_recip, 6 }, { "Sqrt", op_sqrt, 6 }, { "Pow", op_pow, 7 },
	{ "LeakyRelu", op_relu_family, 6 }, { "Elu", op_relu_family, 6 },
	{ "Selu", op_relu_family, 6 }, { "Celu", op_relu_family, 12 }, { "PRelu", op_prelu, 9 },
	{ "HardSigmoid", op_hard, 6 }, { "HardSwish", op_hard, 14 },
	{ "Softsign", op_softsign, 1 },
	{ "Sum", op_variadic, 8 }, { "Mean", op_variadic, 8 }, { "Max", op_variadic, 8 },
	{ "Min", op_variadic, 8 },
	{ "ReduceMin", op_reduce_more, 1 }, { "ReduceSumSquare", op_reduce_more, 1 },
	{ "ReduceL1", op_reduce_more, 1 }, { "ReduceL2", op_reduce_more, 1 },
	{ "ReduceLogSum", op_reduce_more, 1 }, { "ReduceLogSumExp", op_reduce_more, 1 },
	{ "Softplus", op_softplus, 1 }, { "ThresholdedRelu", op_thresholded_relu, 10 },
	{ "Shrink", op_shrink, 9 }, { "Sign", op_sign, 9 }, { "LRN", op_lrn, 1 }, { "ArgMax", op_arg, 1 }, { "ArgMin", op_arg, 1 },
	{ "CumSum", op_cumsum, 11 },
	{ "TopK", op_topk, 1 },
	{ "Erf", op_erf, 9 }, { "LayerNormalization", op_layer_norm, 17 },
	{ "InstanceNormalization", op_instance_norm, 6 },
	{ NULL, NULL, 0 },
};
