// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The quantisation operators of ONNX's QDQ format, QuantizeLinear and
 * DequantizeLinear, lowered onto the device's elementwise operators with
 * integer tensors (uAPI 1.5 element types), exactly as the definition
 * rounds:
 *
 *   QuantizeLinear    y = saturate(round_half_even(x / scale) + zero_point)
 *                     T_DIV into an int32 scratch (rounded to nearest even,
 *                     saturated), T_ADD of the zero point into int8 or
 *                     uint8 (saturated); without a zero point one T_DIV
 *                     into uint8
 *   DequantizeLinear  y = (x - zero_point) * scale
 *                     T_SUB into an fp32 scratch (exact), T_MUL rounded once
 *                     to the scale's type; without a zero point one T_MUL
 *
 * scale and zero_point are per tensor (one element) or, from operator set
 * 13, per axis (a vector along ``axis``), read with stride 0 elsewhere.
 */
#include <string.h>

#include "graph_ops.h"

static int is_int8(int dtype)
{
	return dtype == VNPU_DTYPE_INT8 || dtype == VNPU_DTYPE_UINT8;
}

/*
 * Checks scale (input 1) and zero_point (input 2, optional) against x
 * (input 0) and fills @st, the strides that read them over x's shape.
 */
static int qparams(struct gbuild *b, const struct gnode *n, uint64_t *st)
{
	struct gtensor *x = gop_in(b, n, 0), *s = gop_in(b, n, 1), *z = gop_in(b, n, 2);
	int64_t axis = gop_attr_int(n, "axis", 1);

	memset(st, 0, MAX_RANK * sizeof(*st));
	if (!gb_is_float(s->dtype))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "scale '%s' of element type %d (float and float16 are)", s->name,
				 s->dtype);
	/* One element each (a scalar or [1]), or vectors of one length. */
	if (z && (z->count != s->count || (s->count != 1 && z->rank != s->rank)))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "zero point '%s' and scale '%s' differ in shape", z->name, s->name);
	if (s->count == 1 && s->rank <= 1)
		return VNPU_SUCCESS;
	if (b->opset < 13 || s->rank != 1)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "scale '%s' must be one element%s", s->name,
				 b->opset < 13 ? "" : " or a vector along the axis");
	if (axis < -(int64_t)x->rank || axis >= (int64_t)x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis %lld out of range for rank %u",
				 (long long)axis, x->rank);
	if (axis < 0)
		axis += x->rank;
	if (s->dims[0] != x->dims[axis])
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "scale '%s' has %lld elements, axis %lld of the input %lld", s->name,
				 (long long)s->dims[0], (long long)axis, (long long)x->dims[axis]);
	st[axis] = 1;
	return VNPU_SUCCESS;
}

/* C = A op B over @x's shape: A dense like x, B read with @sb. */
static int qstep(struct gbuild *b, const struct gnode *n, enum vnpu_op op, int ta, int tb,
		 const uint64_t *sb, int tc)
{
	const struct gtensor *x = gop_in(b, n, 0);
	struct tlaunch l;

	gop_tl_init(&l, op, x->rank, x->dims);
	gop_dense(x->dims, x->rank, l.sa);
	memcpy(l.sb, sb, sizeof(l.sb));
	gop_dense(x->dims, x->rank, l.sc);
	l.ta = ta;
	l.tb = tb;
	l.tc = tc;
	return gop_tl_emit(b, n, &l);
}

/* The output of the node: x's shape, element type @dtype. */
static int qout(struct gbuild *b, const struct gnode *n, int dtype)
{
	struct gtensor *x = gop_in(b, n, 0);
	int status = gop_set_out(b, n, 0, x->rank, x->dims);

	if (status == VNPU_SUCCESS)
		gb_set_shape(&b->tensors[n->out[0]], dtype, x->rank, x->dims);
	return status;
}

/* A scratch tensor of x's element count and type @dtype. */
static int qscratch(struct gbuild *b, const struct gnode *n, int dtype, int *id)
{
	int status = gop_scratch(b, n, gop_in(b, n, 0)->count, id);

	if (status == VNPU_SUCCESS)
		gb_set_shape(&b->tensors[*id], dtype, 1, b->tensors[*id].dims);
	return status;
}

static int op_quantize_linear(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axis", "saturate", NULL };
	uint64_t st[MAX_RANK];
	struct gtensor *z;
	int status, t;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 2, 3)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)) ||
	    (status = qparams(b, n, st)))
		return status;
	z = gop_in(b, n, 2);
	if (z && !is_int8(z->dtype))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "zero point '%s' of element type %d (int8 and uint8 are)", z->name,
				 z->dtype);
	if (!gop_attr_int(n, "saturate", 1))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "attribute 'saturate' = 0 not supported");
	status = qout(b, n, z ? z->dtype : VNPU_DTYPE_UINT8);
	if (status != VNPU_SUCCESS)
		return status;
	if (!z)
		return qstep(b, n, VNPU_OP_T_DIV, n->in[0], n->in[1], st, n->out[0]);
	status = qscratch(b, n, VNPU_DTYPE_INT32, &t);
	if (status == VNPU_SUCCESS)
		status = qstep(b, n, VNPU_OP_T_DIV, n->in[0], n->in[1], st, t);
	if (status == VNPU_SUCCESS)
		status = qstep(b, n, VNPU_OP_T_ADD, t, n->in[2], st, n->out[0]);
	return status;
}

static int op_dequantize_linear(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axis", NULL };
	uint64_t st[MAX_RANK];
	struct gtensor *x, *z;
	int status, t;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 2, 3)) ||
	    (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	z = gop_in(b, n, 2);
	if (!is_int8(x->dtype) && x->dtype != VNPU_DTYPE_INT32)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "input '%s' of element type %d (int8, uint8 and int32 are)", x->name,
				 x->dtype);
	if (z && z->dtype != x->dtype)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "zero point '%s' of element type %d, the input's is %d", z->name,
				 z->dtype, x->dtype);
	status = qparams(b, n, st);
	if (status == VNPU_SUCCESS)
		status = qout(b, n, gop_in(b, n, 1)->dtype);
	if (status != VNPU_SUCCESS)
		return status;
	if (!z)
		return qstep(b, n, VNPU_OP_T_MUL, n->in[0], n->in[1], st, n->out[0]);
	status = qscratch(b, n, VNPU_DTYPE_FLOAT, &t);
	if (status == VNPU_SUCCESS)
		status = qstep(b, n, VNPU_OP_T_SUB, n->in[0], n->in[2], st, t);
	if (status == VNPU_SUCCESS) {
		/* A dense fp32 tensor of x's shape, multiplied by the scale. */
		x = gop_in(b, n, 0);
		gb_set_shape(&b->tensors[t], VNPU_DTYPE_FLOAT, x->rank, x->dims);
		status = qstep(b, n, VNPU_OP_T_MUL, t, n->in[1], st, n->out[0]);
	}
	return status;
}

const struct gop_map gop_quant_ops[] = {
	{ "QuantizeLinear", op_quantize_linear, 10 },
	{ "DequantizeLinear", op_dequantize_linear, 10 },
	{ NULL, NULL, 0 },
};
