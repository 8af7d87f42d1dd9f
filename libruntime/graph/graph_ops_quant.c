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
 *                     to the scale's type; without a zero point, or with one of zeros, one T_MUL
 *
 * scale and zero_point are per tensor (one element) or, from operator set
 * 13, per axis (a vector along ``axis``), read with stride 0 elsewhere.
 *
 * The integer products, with zero points and scales per tensor or along
 * the axis the definition allows (the weights' output channel, MatMul's
 * rows of A and columns of B):
 *
 *   MatMulInteger     (a - a_zero) and (b - b_zero) into int32 scratches
 *   ConvInteger       (T_SUB, exact), the mapping of MatMul or Conv on them
 *                     into the int32 output: a T_DOT of integer operands,
 *                     which the device sums exactly (uAPI 1.6)
 *   QLinearMatMul     the same sums (plus QLinearConv's int32 bias, exactly)
 *   QLinearConv       times a_scale * b_scale / y_scale, rounded to nearest
 *                     even into int32, plus y_zero_point into y's int8 or
 *                     uint8, saturated
 *
 * DynamicQuantizeLinear computes its scale and zero point on the device
 * from the extremes of x, then quantizes as QuantizeLinear.
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

/* Whether tensor @id is a constant whose bytes are all zero. */
static int all_zero(struct gbuild *b, int id)
{
	const uint8_t *v = gop_const_data(b, id);
	uint64_t bytes = (uint64_t)b->tensors[id].count * gb_dtype_size(b->tensors[id].dtype);

	if (!v)
		return 0;
	for (uint64_t i = 0; i < bytes; i++)
		if (v[i])
			return 0;
	return 1;
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
	/* A zero point of zeros (symmetric weights) subtracts nothing. */
	if (!z || all_zero(b, n->in[2]))
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

/*
 * Where a zero point or scale @p of operand @x may vary: along @x's
 * dimension @axis when it is a vector (-1: one element only, per tensor),
 * and, when @contract >= 0, as a tensor of @x's rank that is 1 along
 * @contract and @x's size or 1 along every other dimension (MatMul's
 * [D1, D2, M, 1] per row, [D1, D2, 1, N] per column). @per names the
 * vector's meaning for the error message.
 */
struct qaxis {
	int axis;
	int contract;
	const char *per;
};

/* Fills @st, the strides that read @p over @x's shape, as @q allows. */
static int qaxis_strides(const struct gnode *n, const struct gtensor *p, const struct gtensor *x,
			 const struct qaxis *q, uint64_t *st)
{
	char ps[64], xs[64];

	memset(st, 0, MAX_RANK * sizeof(*st));
	if (p->count == 1)
		return VNPU_SUCCESS;
	if (q->axis < 0)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "'%s' of %llu elements (the definition's is one, per tensor)",
				 p->name, (unsigned long long)p->count);
	if (p->rank == 1 && p->dims[0] == x->dims[q->axis]) {
		st[q->axis] = 1;
		return VNPU_SUCCESS;
	}
	if (q->contract >= 0 && p->rank == x->rank && p->dims[q->contract] == 1) {
		uint64_t step = 1;
		int fits = 1;

		for (int d = (int)x->rank - 1; d >= 0; d--) {
			if (p->dims[d] != x->dims[d] && p->dims[d] != 1)
				fits = 0;
			st[d] = p->dims[d] == 1 ? 0 : step;
			step *= (uint64_t)p->dims[d];
		}
		if (fits)
			return VNPU_SUCCESS;
		memset(st, 0, MAX_RANK * sizeof(*st));
	}
	shape_str(p, ps, sizeof(ps));
	shape_str(x, xs, sizeof(xs));
	return node_fail(n, VNPU_ERROR_INVALID_MODEL,
			 "'%s' of shape %s does not fit '%s' of shape %s (one element, or one %s)",
			 p->name, ps, x->name, xs, q->per);
}

/*
 * How the zero point and scale of the node's operand @j may vary: Conv's
 * x per tensor and its weights per output channel; MatMul's A per row and
 * B per column (operands of rank 2 or more).
 */
static void operand_qaxis(struct gbuild *b, const struct gnode *n, int conv, size_t j,
			  struct qaxis *q)
{
	int rank = (int)gop_in(b, n, j)->rank, first = j == 0;

	q->axis = -1;
	q->contract = -1;
	q->per = "";
	if (conv) {
		if (!first) {
			q->axis = 0;
			q->per = "per output channel";
		}
	} else if (rank >= 2) {
		q->axis = first ? rank - 2 : rank - 1;
		q->contract = first ? rank - 1 : rank - 2;
		q->per = first ? "per row" : "per column";
	}
}

/*
 * Input @j (int8 or uint8) minus its zero point @zj (optional, of the
 * same type, per tensor or as @q allows) into a new int32 scratch of its
 * shape, exactly.
 */
static int centred(struct gbuild *b, const struct gnode *n, size_t j, size_t zj,
		   const struct qaxis *q, int *id)
{
	struct gtensor *x = gop_in(b, n, j), *z = gop_in(b, n, zj);
	uint64_t st[MAX_RANK], zst[MAX_RANK] = { 0 };
	int64_t dims[MAX_RANK];
	uint32_t rank;
	int status;

	if (!x || !is_int8(x->dtype))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "input '%s' of element type %d (int8 and uint8 are)",
				 x ? x->name : "", x ? x->dtype : 0);
	if (!x->count)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "input '%s' is empty", x->name);
	if (z && z->dtype != x->dtype)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "zero point '%s' of element type %d, the input's is %d", z->name,
				 z->dtype, x->dtype);
	if (z && (status = qaxis_strides(n, z, x, q, zst)))
		return status;
	status = gop_scratch(b, n, x->count, id);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, j);
	gb_set_shape(&b->tensors[*id], VNPU_DTYPE_INT32, x->rank, x->dims);
	rank = x->rank ? x->rank : 1;
	memcpy(dims, x->dims, sizeof(dims));
	if (!x->rank)
		dims[0] = 1;
	gop_dense(dims, rank, st);
	/* Without a zero point, x - 0: the device copies only to the same type. */
	if (!z) {
		int k0;

		status = gop_scalar(b, n, 0.0f, &k0);
		return status ?: gop_launch_nd(b, n, VNPU_OP_T_SUB, rank, dims, 0, n->in[j], st,
					       k0, zst, *id, st);
	}
	return gop_launch_nd(b, n, VNPU_OP_T_SUB, rank, dims, 0, n->in[j], st, n->in[zj], zst,
			     *id, st);
}

/*
 * A float scale @j of the node's operand @jx: per tensor, or as @q
 * allows (@q NULL: per tensor only); @st the strides that read it over
 * the operand's shape.
 */
static int need_scale(struct gbuild *b, const struct gnode *n, size_t j, size_t jx,
		      const struct qaxis *q, uint64_t *st)
{
	static const struct qaxis per_tensor = { -1, -1, "" };
	const struct gtensor *s = gop_in(b, n, j), *x = gop_in(b, n, jx);

	if (!s || s->dtype != VNPU_DTYPE_FLOAT)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input %zu must be a float scale", j);
	return qaxis_strides(n, s, x, q ? q : &per_tensor, st);
}

/*
 * The integer product of the node's operands @ja and @jb (minus their zero
 * points @za and @zb) into a new int32 scratch *@acc: the mapping of MatMul
 * (@conv 0) or Conv on the centred operands, summed exactly.
 */
static int int_product(struct gbuild *b, struct gnode *n, int conv, size_t ja, size_t za,
		       size_t jb, size_t zb, int *acc)
{
	struct gtensor *a = gop_in(b, n, ja), *w = gop_in(b, n, jb);
	struct qaxis qa, qb;
	struct gnode m = *n;
	int ca, cb, status;

	if (!a || !w)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input missing");
	operand_qaxis(b, n, conv, ja, &qa);
	operand_qaxis(b, n, conv, jb, &qb);
	if ((status = centred(b, n, ja, za, &qa, &ca)) ||
	    (status = centred(b, n, jb, zb, &qb, &cb)) || (status = gop_scratch(b, n, 1, acc)))
		return status;
	m.in[0] = ca;
	m.in[1] = cb;
	m.num_in = 2;
	m.out[0] = *acc;
	m.num_out = 1;
	m.int_operands = 1;
	return conv ? gop_conv(b, &m) : gop_matmul(b, &m);
}

/* MatMulInteger, ConvInteger: the exact sums moved into the int32 output. */
static int op_integer_product(struct gbuild *b, struct gnode *n)
{
	static const char *const conv_attrs[] = { "auto_pad", "dilations", "group",
						  "kernel_shape", "pads", "strides", NULL };
	int conv = !strcmp(n->np->op_type, "ConvInteger");
	int64_t dims[MAX_RANK] = { 1 };
	uint64_t st[MAX_RANK];
	struct gtensor *t;
	uint32_t rank;
	int acc, status;

	if ((status = gop_check_attrs(n, conv ? conv_attrs : NULL)) ||
	    (status = gop_need_inputs(n, 2, 4)) || (status = gop_single_output(n)) ||
	    (status = int_product(b, n, conv, 0, 2, 1, 3, &acc)))
		return status;
	t = &b->tensors[acc];
	status = gop_set_out(b, n, 0, t->rank, t->dims);
	if (status != VNPU_SUCCESS)
		return status;
	t = &b->tensors[acc];
	gb_set_shape(&b->tensors[n->out[0]], VNPU_DTYPE_INT32, t->rank, t->dims);
	rank = t->rank ? t->rank : 1;
	if (t->rank)
		memcpy(dims, t->dims, sizeof(dims));
	gop_dense(dims, rank, st);
	return gop_copy(b, n, rank, dims, acc, 0, st, n->out[0], 0, st);
}

/*
 * QLinearConv's bias B (int32, one per output channel) added to the int32
 * sums @acc (N x M x positions), exactly: both side by side in a scratch
 * [acc | B broadcast], then a T_DOT of it with int32 ones over that pair,
 * which the device sums in 64 bits and stores saturated into @acc (an
 * elementwise T_ADD would round through fp32 above 2^24).
 */
static int add_bias(struct gbuild *b, const struct gnode *n, int acc)
{
	static const int32_t one = 1;
	const struct gtensor *bias = gop_in(b, n, 8), *t = &b->tensors[acc];
	int64_t M = t->dims[1], count = (int64_t)t->count, flat[1] = { count };
	int64_t shape[4] = { t->dims[0], M, count / (t->dims[0] * M), 2 };
	uint64_t unit[1] = { 1 }, zero[4] = { 0 };
	uint64_t sc[4] = { (uint64_t)(count / t->dims[0]), (uint64_t)shape[2], 1, 0 };
	uint64_t sa[4] = { sc[0], sc[1], 1, (uint64_t)count };
	uint64_t sb[3] = { 0, 1, 0 };
	char name[64], bs[64];
	int pair, k1, status;


	if (bias->dtype != VNPU_DTYPE_INT32 || bias->rank != 1 || bias->dims[0] != M) {
		shape_str(bias, bs, sizeof(bs));
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "bias '%s' of element type %d and shape %s (int32, one per output channel: [%lld])",
				 bias->name, bias->dtype, bs, (long long)M);
	}
	snprintf(name, sizeof(name), "\x01one.%d.%zu", n->index, b->num_tensors);
	if ((status = gb_add_weight(b, name, VNPU_DTYPE_INT32, 0, NULL, &one, &k1)) ||
	    (status = gop_scratch(b, n, 2 * (uint64_t)count, &pair)))
		return status;
	flat[0] = 2 * count;
	gb_set_shape(&b->tensors[pair], VNPU_DTYPE_INT32, 1, flat);
	flat[0] = count;
	if ((status = gop_copy(b, n, 1, flat, acc, 0, unit, pair, 0, unit)) ||
	    (status = gop_copy(b, n, 3, shape, n->in[8], 0, sb, pair, (uint64_t)count, sc)))
		return status;
	return gop_launch_nd(b, n, VNPU_OP_T_DOT, 4, shape, 1u << 3, pair, sa, k1, zero, acc, sc);
}

/*
 * The requantisation multiplier a_scale * b_scale / y_scale into a new fp32
 * scratch *@mul, and @mst, the strides that read it over the sums @acc:
 * one element when every scale is per tensor, else one per output element
 * (the scales read along the output's channel, row or column).
 */
static int multiplier(struct gbuild *b, const struct gnode *n, int conv, int acc,
		      const uint64_t *sta, const uint64_t *stb, int *mul, uint64_t *mst)
{
	const struct gtensor *t = &b->tensors[acc];
	uint64_t oa[MAX_RANK] = { 0 }, ob[MAX_RANK] = { 0 }, zero[MAX_RANK] = { 0 };
	int64_t one[1] = { 1 }, dims[MAX_RANK];
	uint32_t rank = t->rank;
	int status;

	memset(mst, 0, MAX_RANK * sizeof(*mst));
	if (gop_in(b, n, 1)->count == 1 && gop_in(b, n, 4)->count == 1) {
		if ((status = gop_scratch(b, n, 1, mul)) ||
		    (status = gop_launch_nd(b, n, VNPU_OP_T_MUL, 1, one, 0, n->in[1], zero,
					    n->in[4], zero, *mul, zero)))
			return status;
		return gop_launch_nd(b, n, VNPU_OP_T_DIV, 1, one, 0, *mul, zero, n->in[6], zero,
				     *mul, zero);
	}
	memcpy(dims, t->dims, sizeof(dims));
	if (conv) {
		/* w_scale per output channel, dimension 1 of N x M x ... */
		ob[1] = stb[0];
	} else {
		/* A's and B's dimensions are the output's last ones. */
		uint32_t ra = gop_in(b, n, 0)->rank, rb = gop_in(b, n, 3)->rank;

		if (ra < 2 || rb < 2)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "per-axis scales with a 1-D operand");
		for (uint32_t d = 0; d < ra; d++)
			oa[d + rank - ra] = sta[d];
		for (uint32_t d = 0; d < rb; d++)
			ob[d + rank - rb] = stb[d];
	}
	status = gop_scratch(b, n, t->count, mul);
	if (status != VNPU_SUCCESS)
		return status;
	gop_dense(dims, rank, mst);
	status = gop_launch_nd(b, n, VNPU_OP_T_MUL, rank, dims, 0, n->in[1], oa, n->in[4], ob,
			       *mul, mst);
	return status ? status :
	       gop_launch_nd(b, n, VNPU_OP_T_DIV, rank, dims, 0, *mul, mst, n->in[6], zero, *mul,
			     mst);
}

/*
 * QLinearMatMul, QLinearConv: y = saturate(round((acc + B) * (a_scale *
 * b_scale / y_scale)) + y_zero_point), acc the exact integer product and B
 * QLinearConv's optional int32 bias (added exactly); the multiplier is
 * computed on the device in fp32 (two roundings; per output element when
 * a scale is per axis), the product rounded to nearest even into an int32
 * scratch, the zero point added into y's type with saturation, as
 * QuantizeLinear does.
 */
static int op_qlinear(struct gbuild *b, struct gnode *n)
{
	static const char *const conv_attrs[] = { "auto_pad", "dilations", "group",
						  "kernel_shape", "pads", "strides", NULL };
	int conv = !strcmp(n->np->op_type, "QLinearConv");
	uint64_t st[MAX_RANK], zero[MAX_RANK] = { 0 }, sta[MAX_RANK], stb[MAX_RANK];
	uint64_t mst[MAX_RANK];
	struct qaxis qa, qb;
	struct gtensor *t, *yz;
	int acc, mul, q, status;

	if ((status = gop_check_attrs(n, conv ? conv_attrs : NULL)) ||
	    (status = gop_need_inputs(n, 8, conv ? 9 : 8)) || (status = gop_single_output(n)))
		return status;
	if (!gop_in(b, n, 0) || !gop_in(b, n, 3))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input missing");
	operand_qaxis(b, n, conv, 0, &qa);
	operand_qaxis(b, n, conv, 3, &qb);
	if ((status = need_scale(b, n, 1, 0, &qa, sta)) ||
	    (status = need_scale(b, n, 4, 3, &qb, stb)) ||
	    (status = need_scale(b, n, 6, 0, NULL, st)))
		return status;
	yz = gop_in(b, n, 7);
	if (!is_int8(yz->dtype) || yz->count != 1 || yz->rank > 1)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "output zero point '%s' must be one int8 or uint8 element", yz->name);
	if ((status = int_product(b, n, conv, 0, 2, 3, 5, &acc)))
		return status;
	if (conv && gop_in(b, n, 8) && (status = add_bias(b, n, acc)))
		return status;
	if ((status = multiplier(b, n, conv, acc, sta, stb, &mul, mst)))
		return status;
	t = &b->tensors[acc];
	if ((status = gop_scratch(b, n, t->count, &q)))
		return status;
	t = &b->tensors[acc];
	gb_set_shape(&b->tensors[q], VNPU_DTYPE_INT32, t->rank, t->dims);
	status = gop_set_out(b, n, 0, t->rank, t->dims);
	if (status != VNPU_SUCCESS)
		return status;
	t = &b->tensors[acc];
	gb_set_shape(&b->tensors[n->out[0]], gop_in(b, n, 7)->dtype, t->rank, t->dims);
	gop_dense(t->dims, t->rank, st);
	if ((status = gop_launch_nd(b, n, VNPU_OP_T_MUL, t->rank, t->dims, 0, acc, st, mul, mst, q,
				    st)))
		return status;
	t = &b->tensors[acc];
	return gop_launch_nd(b, n, VNPU_OP_T_ADD, t->rank, t->dims, 0, q, st, n->in[7], zero,
			     n->out[0], st);
}

/* Output @o of the node, or a scratch when the model leaves it unnamed. */
static int dq_out(struct gbuild *b, const struct gnode *n, size_t o, int dtype, uint32_t rank,
		  const int64_t *dims, int *id)
{
	int status;

	if (o < n->num_out && n->out[o] >= 0) {
		status = gop_set_out(b, n, o, rank, dims);
		*id = n->out[o];
	} else {
		status = gop_scratch(b, n, gop_prod(dims, 0, rank), id);
	}
	if (status == VNPU_SUCCESS)
		gb_set_shape(&b->tensors[*id], dtype, rank, dims);
	return status;
}

/*
 * DynamicQuantizeLinear, as the definition's function body computes it:
 * max and min of x (T_REDUCE_MAX of x and of 0 - x) widened to include 0,
 * y_scale = (max - min) / 255, y_zero_point = saturate(round(0 - min /
 * y_scale)) (T_SUB into uint8: the rounding half to even and the clip
 * to [0, 255] of the body at once), y = QuantizeLinear(x, y_scale,
 * y_zero_point).
 */
static int op_dynamic_quantize(struct gbuild *b, struct gnode *n)
{
	int64_t flat[1], none[1] = { 1 };
	uint64_t unit[1] = { 1 }, zero[1] = { 0 }, st[MAX_RANK], z0[MAX_RANK] = { 0 };
	int neg, mx, mn, k0, k255, sc, zp, q, y, status;
	struct gtensor *x;

	if ((status = gop_check_attrs(n, NULL)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_need_float(b, n, 0)))
		return status;
	x = gop_in(b, n, 0);
	if (x->dtype != VNPU_DTYPE_FLOAT)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "input '%s' of element type %d (float is)", x->name, x->dtype);
	flat[0] = (int64_t)x->count;
	if ((status = dq_out(b, n, 0, VNPU_DTYPE_UINT8, x->rank, x->dims, &y)) ||
	    (status = dq_out(b, n, 1, VNPU_DTYPE_FLOAT, 0, none, &sc)) ||
	    (status = dq_out(b, n, 2, VNPU_DTYPE_UINT8, 0, none, &zp)) ||
	    (status = gop_scratch(b, n, (uint64_t)flat[0], &neg)) ||
	    (status = gop_scratch(b, n, 1, &mx)) || (status = gop_scratch(b, n, 1, &mn)) ||
	    (status = gop_scratch(b, n, (uint64_t)flat[0], &q)) ||
	    (status = gop_scalar(b, n, 0.0f, &k0)) || (status = gop_scalar(b, n, 255.0f, &k255)))
		return status;
	gb_set_shape(&b->tensors[q], VNPU_DTYPE_INT32, 1, flat);
	/* max(x) and min(x) = 0 - max(0 - x), over every element. */
	if ((status = gop_launch_nd(b, n, VNPU_OP_T_REDUCE_MAX, 1, flat, 1, n->in[0], unit, -1,
				    NULL, mx, zero)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_SUB, 1, flat, 0, k0, zero, n->in[0], unit, neg,
				    unit)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_REDUCE_MAX, 1, flat, 1, neg, unit, -1, NULL,
				    mn, zero)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_SUB, 1, none, 0, k0, zero, mn, zero, mn,
				    zero)) ||
	    /* The range includes 0. */
	    (status = gop_launch_nd(b, n, VNPU_OP_T_MAX, 1, none, 0, mx, zero, k0, zero, mx,
				    zero)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_MIN, 1, none, 0, mn, zero, k0, zero, mn,
				    zero)) ||
	    /* y_scale = (max - min) / 255. */
	    (status = gop_launch_nd(b, n, VNPU_OP_T_SUB, 1, none, 0, mx, zero, mn, zero, sc,
				    zero)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_DIV, 1, none, 0, sc, zero, k255, zero, sc,
				    zero)) ||
	    /* y_zero_point = saturate(round(0 - min / y_scale)). */
	    (status = gop_launch_nd(b, n, VNPU_OP_T_DIV, 1, none, 0, mn, zero, sc, zero, mn,
				    zero)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_SUB, 1, none, 0, k0, zero, mn, zero, zp,
				    zero)))
		return status;
	/* y = saturate(round(x / y_scale) + y_zero_point), as QuantizeLinear. */
	x = gop_in(b, n, 0);
	gop_dense(x->dims, x->rank, st);
	if (!x->rank) {
		st[0] = 1;
		status = gop_launch_nd(b, n, VNPU_OP_T_DIV, 1, none, 0, n->in[0], st, sc, z0, q, st);
		return status ? status :
		       gop_launch_nd(b, n, VNPU_OP_T_ADD, 1, none, 0, q, st, zp, z0, y, st);
	}
	status = gop_launch_nd(b, n, VNPU_OP_T_DIV, x->rank, x->dims, 0, n->in[0], st, sc, z0, q,
			       st);
	x = gop_in(b, n, 0);
	return status ? status :
	       gop_launch_nd(b, n, VNPU_OP_T_ADD, x->rank, x->dims, 0, q, st, zp, z0, y, st);
}

const struct gop_map gop_quant_ops[] = {
	{ "DynamicQuantizeLinear", op_dynamic_quantize, 11 },
	{ "QuantizeLinear", op_quantize_linear, 10 },
	{ "DequantizeLinear", op_dequantize_linear, 10 },
	{ "MatMulInteger", op_integer_product, 10 },
	{ "ConvInteger", op_integer_product, 10 },
	{ "QLinearMatMul", op_qlinear, 10 },
	{ "QLinearConv", op_qlinear, 10 },
	{ NULL, NULL, 0 },
};
