// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The boolean operators, lowered onto the device's elementwise operators
 * with bool tensors stored as one byte, 0 or 1 (the device's uint8):
 *
 *   And, Or           T_MIN, T_MAX of the two operands (exact on 0 and 1)
 *   Xor               T_SUB into an int8 scratch (-1, 0, 1), T_MUL by itself
 *   Not               T_SUB of x from the constant 1
 *   Equal             T_EQUAL (uAPI 1.6): compared exactly, any element type
 *   Less, Greater     T_LESS, with the operands swapped for Greater
 *   LessOrEqual,      T_LESS_EQUAL, likewise
 *   GreaterOrEqual
 *   IsNaN             T_EQUAL of x with itself (false for NaN only), Not
 *   IsInf             T_EQUAL with +inf and -inf, T_MAX of the two
 *   Where             T_COPY of Y into the output, T_WHERE of X where the
 *                     condition is true (bit exact, any element type)
 *
 * Every operand broadcasts by stride 0 (numpy broadcasting: the operator
 * sets from 7, and Where's from 9; the legacy broadcast attributes of the
 * earlier sets are not supported).
 */
#include <math.h>
#include <string.h>

#include "graph_ops.h"

/* Input @j must be bool. */
static int need_bool(struct gbuild *b, const struct gnode *n, size_t j)
{
	struct gtensor *t = gop_in(b, n, j);

	if (t->dtype != VNPU_DTYPE_BOOL)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "input '%s' of element type %d not supported (bool is)", t->name,
				 t->dtype);
	return VNPU_SUCCESS;
}

/* Input @j must be a type the device holds (float, float16, int8, uint8, int32, bool). */
static int need_io_type(struct gbuild *b, const struct gnode *n, size_t j)
{
	struct gtensor *t = gop_in(b, n, j);

	if (!gb_is_io_type(t->dtype))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "input '%s' of element type %d not supported (float, float16, int8, uint8, int32 and bool are)",
				 t->name, t->dtype);
	return VNPU_SUCCESS;
}

/* Output @o: @rank-d @dims of element type @dtype, an intermediate. */
static int set_out_typed(struct gbuild *b, const struct gnode *n, size_t o, uint32_t rank,
			 const int64_t *dims, int dtype)
{
	int status = gop_set_out(b, n, o, rank, dims);

	if (status == VNPU_SUCCESS)
		gb_set_shape(&b->tensors[n->out[o]], dtype, rank, dims);
	return status;
}

/* A scratch tensor of the node: @count elements of @dtype. */
static int scratch_typed(struct gbuild *b, const struct gnode *n, uint64_t count, int dtype,
			 int *id)
{
	int status = gop_scratch(b, n, count, id);

	if (status == VNPU_SUCCESS)
		gb_set_shape(&b->tensors[*id], dtype, 1, b->tensors[*id].dims);
	return status;
}

/* C = A op B over the @rank-d @dims: A and B broadcast, C dense. */
static int emit_bcast(struct gbuild *b, const struct gnode *n, enum vnpu_op op, uint32_t rank,
		      const int64_t *dims, int ta, int tb, int tc)
{
	struct tlaunch l;

	gop_tl_init(&l, op, rank, dims);
	l.ta = ta;
	l.tb = tb;
	l.tc = tc;
	gop_bcast(&b->tensors[ta], rank, dims, l.sa);
	if (tb >= 0)
		gop_bcast(&b->tensors[tb], rank, dims, l.sb);
	gop_dense(dims, rank, l.sc);
	return gop_tl_emit(b, n, &l);
}

/* The prologue of a binary operator: its inputs, their broadcast shape. */
static int binary_shape(struct gbuild *b, const struct gnode *n, uint32_t *rank, int64_t *dims)
{
	int status;

	if ((status = gop_check_attrs(n, NULL)) || (status = gop_need_inputs(n, 2, 2)) ||
	    (status = gop_single_output(n)))
		return status;
	return gop_broadcast_shape(n, gop_in(b, n, 0), gop_in(b, n, 1), rank, dims);
}

static int op_logical(struct gbuild *b, struct gnode *n)
{
	const char *op = n->np->op_type;
	int64_t dims[MAX_RANK];
	uint32_t rank;
	int status, d;

	if ((status = binary_shape(b, n, &rank, dims)) || (status = need_bool(b, n, 0)) ||
	    (status = need_bool(b, n, 1)) ||
	    (status = set_out_typed(b, n, 0, rank, dims, VNPU_DTYPE_BOOL)))
		return status;
	if (strcmp(op, "Xor"))
		return emit_bcast(b, n, !strcmp(op, "And") ? VNPU_OP_T_MIN : VNPU_OP_T_MAX, rank,
				  dims, n->in[0], n->in[1], n->out[0]);
	/* (a - b)^2: 1 where they differ, 0 where they agree. */
	status = scratch_typed(b, n, gop_prod(dims, 0, rank), VNPU_DTYPE_INT8, &d);
	if (status == VNPU_SUCCESS) {
		gb_set_shape(&b->tensors[d], VNPU_DTYPE_INT8, rank, dims);
		status = emit_bcast(b, n, VNPU_OP_T_SUB, rank, dims, n->in[0], n->in[1], d);
	}
	if (status == VNPU_SUCCESS)
		status = emit_bcast(b, n, VNPU_OP_T_MUL, rank, dims, d, d, n->out[0]);
	return status;
}

/* C = 1 - A over A's shape: the negation of a bool (or 0/1) tensor into bool C. */
static int emit_not(struct gbuild *b, const struct gnode *n, int ta, int tc)
{
	const struct gtensor *a = &b->tensors[ta];
	int one, status = gop_scalar(b, n, 1.0f, &one);

	if (status != VNPU_SUCCESS)
		return status;
	a = &b->tensors[ta];
	return emit_bcast(b, n, VNPU_OP_T_SUB, a->rank, a->dims, one, ta, tc);
}

static int op_not(struct gbuild *b, struct gnode *n)
{
	struct gtensor *x;
	int status;

	if ((status = gop_check_attrs(n, NULL)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_single_output(n)) || (status = need_bool(b, n, 0)))
		return status;
	x = gop_in(b, n, 0);
	status = set_out_typed(b, n, 0, x->rank, x->dims, VNPU_DTYPE_BOOL);
	return status ? status : emit_not(b, n, n->in[0], n->out[0]);
}

static int op_compare(struct gbuild *b, struct gnode *n)
{
	const char *op = n->np->op_type;
	int greater = !strncmp(op, "Greater", 7);
	enum vnpu_op kop = !strcmp(op, "Equal") ? VNPU_OP_T_EQUAL :
			   strstr(op, "OrEqual") ? VNPU_OP_T_LESS_EQUAL : VNPU_OP_T_LESS;
	struct gtensor *x, *y;
	int64_t dims[MAX_RANK];
	uint32_t rank;
	int status;

	if ((status = binary_shape(b, n, &rank, dims)) || (status = need_io_type(b, n, 0)) ||
	    (status = need_io_type(b, n, 1)))
		return status;
	x = gop_in(b, n, 0);
	y = gop_in(b, n, 1);
	if (x->dtype != y->dtype)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "inputs '%s' and '%s' differ in element type (%d, %d)", x->name,
				 y->name, x->dtype, y->dtype);
	status = set_out_typed(b, n, 0, rank, dims, VNPU_DTYPE_BOOL);
	if (status != VNPU_SUCCESS)
		return status;
	/* a > b is b < a: the operands swapped. */
	return emit_bcast(b, n, kop, rank, dims, n->in[greater], n->in[!greater], n->out[0]);
}

/* The prologue of IsNaN and IsInf: x float, the output bool of x's shape. */
static int float_test_out(struct gbuild *b, struct gnode *n, const char *const *allowed)
{
	struct gtensor *x;
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	return set_out_typed(b, n, 0, x->rank, x->dims, VNPU_DTYPE_BOOL);
}

static int op_isnan(struct gbuild *b, struct gnode *n)
{
	struct gtensor *x;
	int eq, status;

	if ((status = float_test_out(b, n, NULL)))
		return status;
	x = gop_in(b, n, 0);
	status = scratch_typed(b, n, x->count, VNPU_DTYPE_BOOL, &eq);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	gb_set_shape(&b->tensors[eq], VNPU_DTYPE_BOOL, x->rank, x->dims);
	status = emit_bcast(b, n, VNPU_OP_T_EQUAL, x->rank, x->dims, n->in[0], n->in[0], eq);
	return status ? status : emit_not(b, n, eq, n->out[0]);
}

static int op_isinf(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "detect_negative", "detect_positive", NULL };
	int64_t neg = gop_attr_int(n, "detect_negative", 1);
	int64_t pos = gop_attr_int(n, "detect_positive", 1);
	struct gtensor *x;
	int kp, kn, t, status;

	if ((status = float_test_out(b, n, allowed)))
		return status;
	if ((neg != 0 && neg != 1) || (pos != 0 && pos != 1))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "detect_negative %lld and detect_positive %lld (0 or 1 are)",
				 (long long)neg, (long long)pos);
	/* Neither: equal to NaN, false everywhere. */
	if ((status = gop_scalar(b, n, pos ? INFINITY : neg ? -INFINITY : NAN, &kp)))
		return status;
	x = gop_in(b, n, 0);
	if (!pos || !neg)
		return emit_bcast(b, n, VNPU_OP_T_EQUAL, x->rank, x->dims, n->in[0], kp, n->out[0]);
	if ((status = gop_scalar(b, n, -INFINITY, &kn)) ||
	    (status = scratch_typed(b, n, gop_in(b, n, 0)->count, VNPU_DTYPE_BOOL, &t)))
		return status;
	x = gop_in(b, n, 0);
	gb_set_shape(&b->tensors[t], VNPU_DTYPE_BOOL, x->rank, x->dims);
	if ((status = emit_bcast(b, n, VNPU_OP_T_EQUAL, x->rank, x->dims, n->in[0], kp, t)) ||
	    (status = emit_bcast(b, n, VNPU_OP_T_EQUAL, x->rank, x->dims, n->in[0], kn,
				 n->out[0])))
		return status;
	return emit_bcast(b, n, VNPU_OP_T_MAX, x->rank, x->dims, t, n->out[0], n->out[0]);
}

static int op_where(struct gbuild *b, struct gnode *n)
{
	struct gtensor *c, *x, *y, xy;
	int64_t dims[MAX_RANK];
	uint64_t sa[MAX_RANK], sc[MAX_RANK];
	uint32_t rank;
	int status;

	if ((status = gop_check_attrs(n, NULL)) || (status = gop_need_inputs(n, 3, 3)) ||
	    (status = gop_single_output(n)) || (status = need_bool(b, n, 0)) ||
	    (status = need_io_type(b, n, 1)) || (status = need_io_type(b, n, 2)))
		return status;
	c = gop_in(b, n, 0);
	x = gop_in(b, n, 1);
	y = gop_in(b, n, 2);
	if (x->dtype != y->dtype)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "inputs '%s' and '%s' differ in element type (%d, %d)", x->name,
				 y->name, x->dtype, y->dtype);
	memset(&xy, 0, sizeof(xy));
	status = gop_broadcast_shape(n, x, y, &xy.rank, xy.dims);
	if (status == VNPU_SUCCESS)
		status = gop_broadcast_shape(n, c, &xy, &rank, dims);
	if (status == VNPU_SUCCESS)
		status = set_out_typed(b, n, 0, rank, dims, x->dtype);
	if (status != VNPU_SUCCESS)
		return status;
	y = gop_in(b, n, 2);
	gop_bcast(y, rank, dims, sa);
	gop_dense(dims, rank, sc);
	status = gop_copy(b, n, rank, dims, n->in[2], 0, sa, n->out[0], 0, sc);
	return status ? status :
	       emit_bcast(b, n, VNPU_OP_T_WHERE, rank, dims, n->in[1], n->in[0], n->out[0]);
}

const struct gop_map gop_logic_ops[] = {
	{ "And", op_logical, 7 }, { "Or", op_logical, 7 }, { "Xor", op_logical, 7 },
	{ "Not", op_not, 1 }, { "Equal", op_compare, 7 }, { "Less", op_compare, 7 },
	{ "Greater", op_compare, 7 }, { "LessOrEqual", op_compare, 12 },
	{ "GreaterOrEqual", op_compare, 12 }, { "IsNaN", op_isnan, 9 },
	{ "IsInf", op_isinf, 10 }, { "Where", op_where, 9 },
	{ NULL, NULL, 0 },
};
