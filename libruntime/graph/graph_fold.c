// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Shape arithmetic folded at load. Exporters compute the shapes of
 * Reshape, Expand or Slice from the input's shape at run time (Shape,
 * Gather, Unsqueeze, Concat, integer Add/Mul/Div...), so that a model with
 * dynamic axes works for any input size. The loader knows every shape, so
 * these nodes become constants of the graph: Shape and Size always,
 * ConstantOfShape and Range (float, int32 or int64) when their inputs are
 * constant, and the operators below (Add, Sub, Mul, Div, Max, Min, Mod,
 * Pow, the comparisons into bool, Neg, Abs, Trilu, Concat, Gather, Cast,
 * Slice, Transpose, Expand, and Where of a constant bool condition) when
 * all their inputs are constant and integer (int64). Apart from Range's sequence, nothing
 * of a float tensor's values is computed here: the device computes every
 * float node.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_ops.h"

/* A constant being folded: int64 values, or float for ConstantOfShape/Range/Cast. */
struct fval {
	int dtype;
	uint32_t rank;
	int64_t dims[MAX_RANK];
	uint64_t count;
	void *v;
};

static int fval_alloc(struct fval *f, int dtype, uint32_t rank, const int64_t *dims)
{
	f->dtype = dtype;
	f->rank = rank;
	memcpy(f->dims, dims, rank * sizeof(*dims));
	f->count = 1;
	for (uint32_t i = 0; i < rank; i++)
		f->count *= (uint64_t)dims[i];
	f->v = calloc(f->count ? f->count : 1, 8);
	return f->v ? VNPU_SUCCESS : VNPU_ERROR_OUT_OF_HOST_MEMORY;
}

/* The constant value of input @j, or 0 when it is not a constant. */
static int fval_in(struct gbuild *b, const struct gnode *n, size_t j, struct fval *f)
{
	struct gtensor *t = gop_in(b, n, j);

	if (!t || !gop_const_data(b, n->in[j]))
		return 0;
	f->dtype = t->dtype;
	f->rank = t->rank;
	memcpy(f->dims, t->dims, t->rank * sizeof(*t->dims));
	f->count = t->count;
	f->v = (void *)gop_const_data(b, n->in[j]);
	return 1;
}

static double fval_get(const struct fval *f, uint64_t i)
{
	return gb_const_value(f->dtype, f->v, i);
}

/* Makes @f (allocated here) the value of output 0; takes its memory. */
static int fval_out(struct gbuild *b, const struct gnode *n, struct fval *f)
{
	struct gtensor *t = &b->tensors[n->out[0]];

	if (!gb_set_shape(t, f->dtype, f->rank, f->dims)) {
		free(f->v);
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "folded shape out of range");
	}
	t->cls = GT_WEIGHT;
	t->host = f->v;
	t->producer = -1;
	return VNPU_SUCCESS;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int fold_shape(struct gbuild *b, const struct gnode *n)
{
	struct gtensor *x = gop_in(b, n, 0);
	int64_t r = x->rank, start = gop_attr_int(n, "start", 0), end = gop_attr_int(n, "end", r);
	int64_t len;
	struct fval f;

	start = clamp64(start < 0 ? start + r : start, 0, r);
	end = clamp64(end < 0 ? end + r : end, 0, r);
	len = end > start ? end - start : 0;
	if (fval_alloc(&f, VNPU_DTYPE_INT64, 1, &len))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (int64_t i = 0; i < len; i++)
		((int64_t *)f.v)[i] = x->dims[start + i];
	return fval_out(b, n, &f);
}

static int fold_size(struct gbuild *b, const struct gnode *n)
{
	struct fval f;

	if (fval_alloc(&f, VNPU_DTYPE_INT64, 0, NULL))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	*(int64_t *)f.v = (int64_t)gop_in(b, n, 0)->count;
	return fval_out(b, n, &f);
}

static int fold_constant_of_shape(struct gbuild *b, const struct gnode *n, const struct fval *shape)
{
	const Onnx__AttributeProto *a = gop_attr(n, "value");
	int64_t dims[MAX_RANK];
	uint32_t vrank = 0;
	int dtype = VNPU_DTYPE_FLOAT, status;
	void *value = NULL;
	struct fval f;
	char why[160];

	if (shape->rank != 1 || shape->dtype != VNPU_DTYPE_INT64 || shape->count > MAX_RANK)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "the shape must be a vector of at most %d",
				 MAX_RANK);
	if (a && a->t) {
		status = gb_tensor_from_proto(a->t, &dtype, &vrank, dims, &value, why, sizeof(why));
		if (status != VNPU_SUCCESS)
			return node_fail(n, status, "value: %s", why);
		if (vrank > 1 || (vrank == 1 && dims[0] != 1)) {
			free(value);
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "value must hold one element");
		}
	}
	for (uint64_t i = 0; i < shape->count; i++)
		if (((int64_t *)shape->v)[i] < 0) {
			free(value);
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "negative dimension");
		}
	status = fval_alloc(&f, dtype, (uint32_t)shape->count, shape->v);
	if (status == VNPU_SUCCESS && value)
		for (uint64_t i = 0; i < f.count; i++)
			memcpy((char *)f.v + i * gb_dtype_size(dtype), value, gb_dtype_size(dtype));
	free(value);
	return status == VNPU_SUCCESS ? fval_out(b, n, &f) : status;
}

/*
 * Range of constant scalars, as numpy.arange computes it (the reference
 * implementation of the definition): ceil((limit - start) / delta)
 * elements, at least 0, the difference in the inputs' type and the
 * quotient in double. Integers are start + i * delta. float32 values are
 * start, then start + delta, then start + i * d with d = (start + delta)
 * - start, each sum, difference and product rounded to float32.
 */
/* Element 0 of an int32 or int64 scalar, exactly. */
static int64_t fval_int(const struct fval *f)
{
	return f->dtype == VNPU_DTYPE_INT32 ? ((int32_t *)f->v)[0] : ((int64_t *)f->v)[0];
}

static int fold_range(struct gbuild *b, const struct gnode *n, const struct fval *in)
{
	int dtype = in[0].dtype, isf = dtype == VNPU_DTYPE_FLOAT;
	double q;
	int64_t count;
	struct fval f;

	for (int i = 0; i < 3; i++)
		if (in[i].count != 1 || in[i].rank > 1 || in[i].dtype != dtype)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "start, limit and delta must be scalars of one type");
	if (!isf && dtype != VNPU_DTYPE_INT32 && dtype != VNPU_DTYPE_INT64)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "element type %d (float, int32 and int64 are)", dtype);
	if (isf ? ((float *)in[2].v)[0] == 0 : fval_int(&in[2]) == 0)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "delta is 0");
	if (isf) {
		float start = ((float *)in[0].v)[0], limit = ((float *)in[1].v)[0];
		float span = limit - start;

		q = (double)span / (double)((float *)in[2].v)[0];
	} else {
		int64_t start = fval_int(&in[0]), limit = fval_int(&in[1]);
		int64_t delta = fval_int(&in[2]);
		uint64_t span = delta > 0 ? (uint64_t)limit - (uint64_t)start :
				(uint64_t)start - (uint64_t)limit;
		uint64_t step = delta > 0 ? (uint64_t)delta : 0 - (uint64_t)delta;

		/* Exact: the quotient rounded up, of integers of at most 63 bits. */
		if ((limit > start) != (delta > 0) || limit == start)
			q = 0;
		else
			q = (double)((span - 1) / step + 1);
	}
	if (!(q <= MAX_DIM))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "%g elements (at most %u)", q,
				 MAX_DIM);
	count = q > 0 ? (int64_t)q + ((double)(int64_t)q < q) : 0;
	if (count > MAX_DIM)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "%lld elements (at most %u)",
				 (long long)count, MAX_DIM);
	if (fval_alloc(&f, dtype, 1, &count))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	if (isf) {
		float start = ((float *)in[0].v)[0], next = start + ((float *)in[2].v)[0];
		float d = next - start;

		for (int64_t i = 0; i < count; i++) {
			float step = (float)i * d;

			((float *)f.v)[i] = i == 0 ? start : i == 1 ? next : start + step;
		}
	} else {
		int64_t start = fval_int(&in[0]), delta = fval_int(&in[2]);

		for (int64_t i = 0; i < count; i++) {
			int64_t v = (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta);

			if (dtype == VNPU_DTYPE_INT32)
				((int32_t *)f.v)[i] = (int32_t)v;
			else
				((int64_t *)f.v)[i] = v;
		}
	}
	return fval_out(b, n, &f);
}

/* Integer Add, Sub, Mul, Div (and the comparisons) with numpy broadcasting. */
/* x^y for y >= 0, wrapping around like the other int64 arithmetic. */
static int64_t ipow(int64_t x, int64_t y)
{
	uint64_t r = 1, base = (uint64_t)x;

	for (; y; y >>= 1) {
		if (y & 1)
			r *= base;
		base *= base;
	}
	return (int64_t)r;
}

/* Trilu of an int64 constant: the upper (or lower) triangle from diagonal k. */
static int fold_trilu(struct gbuild *b, const struct gnode *n, const struct fval *in, size_t given)
{
	int upper = gop_attr_int(n, "upper", 1) != 0;
	int64_t k = 0, rows, cols;
	struct fval f;

	if (in[0].rank < 2)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input of rank %u, at least 2 expected",
				 in[0].rank);
	if (given > 1) {
		if (in[1].dtype != VNPU_DTYPE_INT64 || in[1].count != 1)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "k must be an int64 scalar");
		k = ((int64_t *)in[1].v)[0];
	}
	if (fval_alloc(&f, VNPU_DTYPE_INT64, in[0].rank, in[0].dims))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	rows = in[0].dims[in[0].rank - 2];
	cols = in[0].dims[in[0].rank - 1];
	for (uint64_t i = 0; i < f.count; i++) {
		int64_t c = (int64_t)(i % (uint64_t)cols), r = (int64_t)(i / (uint64_t)cols % (uint64_t)rows);
		int keep = upper ? c - r >= k : c - r <= k;

		((int64_t *)f.v)[i] = keep ? ((int64_t *)in[0].v)[i] : 0;
	}
	return fval_out(b, n, &f);
}

static int fold_arith(struct gbuild *b, const struct gnode *n, const struct fval *in)
{
	const char *op = n->np->op_type;
	struct gtensor ta = { .rank = in[0].rank }, tb = { .rank = in[1].rank };
	uint64_t sa[MAX_RANK], sb[MAX_RANK], st[MAX_RANK];
	int64_t dims[MAX_RANK];
	uint32_t rank;
	int cmp = !strcmp(op, "Equal") || !strncmp(op, "Less", 4) || !strncmp(op, "Greater", 7);
	struct fval f;
	int status;

	memcpy(ta.dims, in[0].dims, sizeof(ta.dims));
	memcpy(tb.dims, in[1].dims, sizeof(tb.dims));
	status = gop_broadcast_shape(n, &ta, &tb, &rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	gop_bcast(&ta, rank, dims, sa);
	gop_bcast(&tb, rank, dims, sb);
	gop_dense(dims, rank, st);
	if (fval_alloc(&f, cmp ? VNPU_DTYPE_BOOL : VNPU_DTYPE_INT64, rank, dims))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (uint64_t i = 0; i < f.count; i++) {
		uint64_t ia = 0, ib = 0, rest = i;
		int64_t x, y, r;

		for (uint32_t d = 0; d < rank; d++) {
			uint64_t k = rest / st[d];

			rest %= st[d];
			ia += k * sa[d];
			ib += k * sb[d];
		}
		x = ((int64_t *)in[0].v)[ia];
		y = ((int64_t *)in[1].v)[ib];
		if ((!strcmp(op, "Div") || !strcmp(op, "Mod")) &&
		    (y == 0 || (x == INT64_MIN && y == -1))) {
			free(f.v);
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "integer division by %lld",
					 (long long)y);
		}
		if (!strcmp(op, "Pow") && y < 0) {
			free(f.v);
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "integer power with the negative exponent %lld", (long long)y);
		}
		if (cmp) {
			/* Equal, Less, LessOrEqual, Greater, GreaterOrEqual: a bool. */
			((uint8_t *)f.v)[i] = op[0] == 'E' ? x == y :
					      op[0] == 'L' ? (op[4] ? x <= y : x < y) :
					      (op[7] ? x >= y : x > y);
			continue;
		}
		if (!strcmp(op, "Add"))
			r = (int64_t)((uint64_t)x + (uint64_t)y);
		else if (!strcmp(op, "Sub"))
			r = (int64_t)((uint64_t)x - (uint64_t)y);
		else if (!strcmp(op, "Mul"))
			r = (int64_t)((uint64_t)x * (uint64_t)y);
		else if (!strcmp(op, "Max"))
			r = x > y ? x : y;
		else if (!strcmp(op, "Min"))
			r = x < y ? x : y;
		else if (!strcmp(op, "Pow"))
			r = ipow(x, y);
		else if (!strcmp(op, "Mod"))
			/* fmod: the sign of the dividend (C's %); else of the divisor. */
			r = gop_attr_int(n, "fmod", 0) || !(x % y) || (x % y < 0) == (y < 0) ?
			    x % y : x % y + y;
		else
			r = x / y;
		((int64_t *)f.v)[i] = r;
	}
	return fval_out(b, n, &f);
}

/* Where of a constant bool condition between int64 constants, broadcast. */
static int fold_where(struct gbuild *b, const struct gnode *n, const struct fval *in)
{
	struct gtensor t[3], xy = { 0 };
	uint64_t s[3][MAX_RANK], st[MAX_RANK];
	int64_t dims[MAX_RANK];
	uint32_t rank;
	struct fval f;
	int status;

	for (int j = 0; j < 3; j++) {
		memset(&t[j], 0, sizeof(t[j]));
		t[j].rank = in[j].rank;
		memcpy(t[j].dims, in[j].dims, sizeof(t[j].dims));
	}
	status = gop_broadcast_shape(n, &t[1], &t[2], &xy.rank, xy.dims);
	if (status == VNPU_SUCCESS)
		status = gop_broadcast_shape(n, &t[0], &xy, &rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	for (int j = 0; j < 3; j++)
		gop_bcast(&t[j], rank, dims, s[j]);
	gop_dense(dims, rank, st);
	if (fval_alloc(&f, VNPU_DTYPE_INT64, rank, dims))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (uint64_t i = 0; i < f.count; i++) {
		uint64_t o[3] = { 0, 0, 0 }, rest = i;

		for (uint32_t d = 0; d < rank; d++) {
			uint64_t k = rest / st[d];

			rest %= st[d];
			for (int j = 0; j < 3; j++)
				o[j] += k * s[j][d];
		}
		((int64_t *)f.v)[i] = ((const uint8_t *)in[0].v)[o[0]] ?
				      ((int64_t *)in[1].v)[o[1]] : ((int64_t *)in[2].v)[o[2]];
	}
	return fval_out(b, n, &f);
}

static int fold_concat(struct gbuild *b, const struct gnode *n, const struct fval *in, size_t count)
{
	int64_t axis = gop_attr_int(n, "axis", 0), dims[MAX_RANK];
	uint64_t outer, off = 0;
	struct fval f;

	if (!in[0].rank || axis < -(int64_t)in[0].rank || axis >= (int64_t)in[0].rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis out of range");
	if (axis < 0)
		axis += in[0].rank;
	memcpy(dims, in[0].dims, sizeof(dims));
	dims[axis] = 0;
	for (size_t j = 0; j < count; j++) {
		if (in[j].rank != in[0].rank)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "inputs of different ranks");
		for (uint32_t d = 0; d < in[0].rank; d++)
			if (d != axis && in[j].dims[d] != in[0].dims[d])
				return node_fail(n, VNPU_ERROR_INVALID_MODEL, "inputs of different shapes");
		dims[axis] += in[j].dims[axis];
	}
	if (fval_alloc(&f, VNPU_DTYPE_INT64, in[0].rank, dims))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	outer = gop_prod(dims, 0, (uint32_t)axis);
	for (uint64_t o = 0; o < outer; o++)
		for (size_t j = 0; j < count; j++) {
			uint64_t inner = gop_prod(in[j].dims, (uint32_t)axis, in[j].rank);

			memcpy((int64_t *)f.v + off, (int64_t *)in[j].v + o * inner, inner * 8);
			off += inner;
		}
	return fval_out(b, n, &f);
}

static int fold_gather(struct gbuild *b, const struct gnode *n, const struct fval *in)
{
	int64_t axis = gop_attr_int(n, "axis", 0), dims[MAX_RANK];
	uint64_t outer, inner, k = 0;
	uint32_t rank = 0;
	struct fval f;

	if (!in[0].rank || axis < -(int64_t)in[0].rank || axis >= (int64_t)in[0].rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis out of range");
	if (axis < 0)
		axis += in[0].rank;
	if (in[1].dtype != VNPU_DTYPE_INT64 || in[0].rank + in[1].rank - 1 > MAX_RANK)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "indices must be int64, rank at most %d",
				 MAX_RANK);
	for (uint32_t d = 0; d < in[0].rank; d++) {
		if (d == axis)
			for (uint32_t e = 0; e < in[1].rank; e++)
				dims[rank++] = in[1].dims[e];
		else
			dims[rank++] = in[0].dims[d];
	}
	if (fval_alloc(&f, VNPU_DTYPE_INT64, rank, dims))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	outer = gop_prod(in[0].dims, 0, (uint32_t)axis);
	inner = gop_prod(in[0].dims, (uint32_t)axis + 1, in[0].rank);
	for (uint64_t o = 0; o < outer; o++)
		for (uint64_t i = 0; i < in[1].count; i++) {
			int64_t idx = ((int64_t *)in[1].v)[i];

			if (idx < 0)
				idx += in[0].dims[axis];
			if (idx < 0 || idx >= in[0].dims[axis]) {
				free(f.v);
				return node_fail(n, VNPU_ERROR_INVALID_MODEL, "index %lld out of range",
						 (long long)((int64_t *)in[1].v)[i]);
			}
			memcpy((int64_t *)f.v + k, (int64_t *)in[0].v + (o * in[0].dims[axis] + idx) * inner,
			       inner * 8);
			k += inner;
		}
	return fval_out(b, n, &f);
}

static int fold_cast(struct gbuild *b, const struct gnode *n, const struct fval *in)
{
	int64_t to = gop_attr_int(n, "to", 0);
	struct fval f;

	if (to != VNPU_DTYPE_INT64 && !gb_is_float((int)to))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "cast to element type %lld not supported",
				 (long long)to);
	if (fval_alloc(&f, (int)to, in[0].rank, in[0].dims))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (uint64_t i = 0; i < f.count; i++) {
		if (to == VNPU_DTYPE_INT64)
			((int64_t *)f.v)[i] = (int64_t)fval_get(&in[0], i);
		else if (to == VNPU_DTYPE_FLOAT16)	/* rounded once, from the exact value */
			((_Float16 *)f.v)[i] = (_Float16)fval_get(&in[0], i);
		else
			((float *)f.v)[i] = (float)fval_get(&in[0], i);
	}
	return fval_out(b, n, &f);
}

/* Integer Slice (shape arithmetic, index tables) by its inputs or attributes. */
static int fold_slice(struct gbuild *b, const struct gnode *n, const struct fval *in)
{
	int64_t start[MAX_RANK], step[MAX_RANK], dims[MAX_RANK], idx[MAX_RANK] = { 0 };
	uint64_t stride[MAX_RANK];
	struct fval f;
	int status;

	if (!in[0].rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "a slice of a scalar");
	status = gop_slice_ranges(b, n, in[0].rank, in[0].dims, start, step, dims);
	if (status != VNPU_SUCCESS)
		return status;
	if (fval_alloc(&f, VNPU_DTYPE_INT64, in[0].rank, dims))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	gop_dense(in[0].dims, in[0].rank, stride);
	/* Output element i, its index idx[] counted in row-major order. */
	for (uint64_t i = 0; i < f.count; i++) {
		uint64_t src = 0;

		for (uint32_t d = 0; d < in[0].rank; d++)
			src += (uint64_t)(start[d] + idx[d] * step[d]) * stride[d];
		((int64_t *)f.v)[i] = ((int64_t *)in[0].v)[src];
		for (uint32_t d = in[0].rank; d-- > 0;) {
			if (++idx[d] < dims[d])
				break;
			idx[d] = 0;
		}
	}
	return fval_out(b, n, &f);
}

/* Output @f element i is in[0]'s at sum of index[d] * @sa[d] (0 broadcasts). */
static void fold_strided(struct fval *f, const struct fval *in, const uint64_t *sa)
{
	int64_t idx[MAX_RANK] = { 0 };

	for (uint64_t i = 0; i < f->count; i++) {
		uint64_t src = 0;

		for (uint32_t d = 0; d < f->rank; d++)
			src += (uint64_t)idx[d] * sa[d];
		((int64_t *)f->v)[i] = ((int64_t *)in->v)[src];
		for (uint32_t d = f->rank; d-- > 0;) {
			if (++idx[d] < f->dims[d])
				break;
			idx[d] = 0;
		}
	}
}

/* Integer Transpose (index tables of attention windows) by its perm. */
static int fold_transpose(struct gbuild *b, const struct gnode *n, const struct fval *in)
{
	const Onnx__AttributeProto *a = gop_attr(n, "perm");
	uint64_t st[MAX_RANK], sa[MAX_RANK];
	int64_t dims[MAX_RANK];
	uint32_t seen = 0;
	struct fval f;

	if (a && a->n_ints != in[0].rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "perm of %zu axes for rank %u",
				 a->n_ints, in[0].rank);
	gop_dense(in[0].dims, in[0].rank, st);
	for (uint32_t d = 0; d < in[0].rank; d++) {
		int64_t p = a ? a->ints[d] : (int64_t)(in[0].rank - 1 - d);

		if (p < 0 || p >= (int64_t)in[0].rank || (seen & (1u << p)))
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "perm is not a permutation");
		seen |= 1u << p;
		dims[d] = in[0].dims[p];
		sa[d] = st[p];
	}
	if (fval_alloc(&f, VNPU_DTYPE_INT64, in[0].rank, dims))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	fold_strided(&f, &in[0], sa);
	return fval_out(b, n, &f);
}

/* Integer Expand: in[0] broadcast against the shape in[1]. */
static int fold_expand(struct gbuild *b, const struct gnode *n, const struct fval *in)
{
	struct gtensor ta = { .rank = in[0].rank }, ts = { 0 };
	uint64_t sa[MAX_RANK];
	int64_t dims[MAX_RANK];
	uint32_t rank;
	struct fval f;
	int status;

	if (in[1].rank != 1 || in[1].dtype != VNPU_DTYPE_INT64 || in[1].count > MAX_RANK)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "the shape must be a vector of at most %d",
				 MAX_RANK);
	memcpy(ta.dims, in[0].dims, sizeof(ta.dims));
	ts.rank = (uint32_t)in[1].count;
	for (uint32_t d = 0; d < ts.rank; d++) {
		ts.dims[d] = ((int64_t *)in[1].v)[d];
		if (ts.dims[d] < 0)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "negative dimension");
	}
	status = gop_broadcast_shape(n, &ta, &ts, &rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	gop_bcast(&ta, rank, dims, sa);
	if (fval_alloc(&f, VNPU_DTYPE_INT64, rank, dims))
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	fold_strided(&f, &in[0], sa);
	return fval_out(b, n, &f);
}

int graph_fold_node(struct gbuild *b, struct gnode *n, int *folded)
{
	const char *op = n->np->op_type;
	struct fval in[GNODE_MAX_INPUTS];
	size_t given = 0;
	int all_const = 1, any_int = 0;

	*folded = 0;
	if (n->num_out < 1 || n->out[0] < 0)
		return VNPU_SUCCESS;
	for (size_t j = 0; j < n->num_in; j++) {
		memset(&in[j], 0, sizeof(in[j]));
		if (n->in[j] < 0)
			continue;
		given = j + 1;
		if (!fval_in(b, n, j, &in[j]))
			all_const = 0;
		else if (in[j].dtype == VNPU_DTYPE_INT64)
			any_int = 1;
	}
	if (!strcmp(op, "Shape") || !strcmp(op, "Size")) {
		if (given != 1 || n->num_out != 1)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "one input and one output expected");
		*folded = 1;
		return op[1] == 'h' ? fold_shape(b, n) : fold_size(b, n);
	}
	if (!strcmp(op, "Range") && !all_const)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "start, limit and delta: each must be a constant (given at load)");
	if (!all_const || !given)
		return VNPU_SUCCESS;
	if (!strcmp(op, "ConstantOfShape")) {
		*folded = 1;
		return fold_constant_of_shape(b, n, &in[0]);
	}
	if (!strcmp(op, "Range")) {
		if (given != 3)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "start, limit and delta expected");
		*folded = 1;
		return fold_range(b, n, in);
	}
	if (!strcmp(op, "Where") && given == 3 && n->num_out == 1 &&
	    in[0].dtype == VNPU_DTYPE_BOOL && in[1].dtype == VNPU_DTYPE_INT64 &&
	    in[2].dtype == VNPU_DTYPE_INT64) {
		*folded = 1;
		return fold_where(b, n, in);
	}
	if (!any_int || in[0].dtype != VNPU_DTYPE_INT64 || n->num_out != 1)
		return VNPU_SUCCESS;
	if ((!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div") ||
	     !strcmp(op, "Max") || !strcmp(op, "Min") || !strcmp(op, "Mod") || !strcmp(op, "Pow") ||
	     !strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "LessOrEqual") ||
	     !strcmp(op, "Greater") || !strcmp(op, "GreaterOrEqual")) &&
	    given == 2 && in[1].dtype == VNPU_DTYPE_INT64) {
		*folded = 1;
		return fold_arith(b, n, in);
	}
	if (!strcmp(op, "Trilu")) {
		*folded = 1;
		return fold_trilu(b, n, in, given);
	}
	if (!strcmp(op, "Concat")) {
		for (size_t j = 0; j < given; j++)
			if (in[j].dtype != VNPU_DTYPE_INT64 || !in[j].v)
				return VNPU_SUCCESS;
		*folded = 1;
		return fold_concat(b, n, in, given);
	}
	if (!strcmp(op, "Gather") && given == 2) {
		*folded = 1;
		return fold_gather(b, n, in);
	}
	if (!strcmp(op, "Cast") && given == 1) {
		*folded = 1;
		return fold_cast(b, n, in);
	}
	if ((!strcmp(op, "Neg") || !strcmp(op, "Abs")) && given == 1) {
		struct fval f;

		if (fval_alloc(&f, VNPU_DTYPE_INT64, in[0].rank, in[0].dims))
			return VNPU_ERROR_OUT_OF_HOST_MEMORY;
		for (uint64_t i = 0; i < f.count; i++) {
			int64_t v = ((int64_t *)in[0].v)[i];

			((int64_t *)f.v)[i] = op[0] == 'N' || v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
		}
		*folded = 1;
		return fval_out(b, n, &f);
	}
	if (!strcmp(op, "Slice")) {
		*folded = 1;
		return fold_slice(b, n, in);
	}
	if (!strcmp(op, "Transpose") && given == 1) {
		*folded = 1;
		return fold_transpose(b, n, in);
	}
	if (!strcmp(op, "Expand") && given == 2) {
		*folded = 1;
		return fold_expand(b, n, in);
	}
	return VNPU_SUCCESS;
}
