// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * ONNX operators on the device: for each node, check its attributes and
 * input types, infer its output shapes and emit the device operations
 * (built-in kernel launches and device copies) that compute it. Views
 * (Reshape, Flatten, Squeeze, Unsqueeze, Identity) emit nothing: their
 * output names the input's memory. A node the device's operator set cannot
 * compute is an error naming the node, the operator and what is missing;
 * nothing is computed on the host.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

#define MAX_DIM DRM_VNPU_KERNEL_MAX_DIM

static const Onnx__AttributeProto *attr(const struct gnode *n, const char *name)
{
	for (size_t i = 0; i < n->np->n_attribute; i++)
		if (!strcmp(n->np->attribute[i]->name, name))
			return n->np->attribute[i];
	return NULL;
}

/* Every attribute of the node must be in @allowed (NULL-terminated). */
static int check_attrs(const struct gnode *n, const char *const *allowed)
{
	for (size_t i = 0; i < n->np->n_attribute; i++) {
		const char *name = n->np->attribute[i]->name;
		int ok = 0;

		for (size_t j = 0; allowed && allowed[j] && !ok; j++)
			ok = !strcmp(allowed[j], name);
		if (!ok)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "attribute '%s' not supported",
					 name);
	}
	return VNPU_SUCCESS;
}

static int64_t attr_int(const struct gnode *n, const char *name, int64_t def)
{
	const Onnx__AttributeProto *a = attr(n, name);

	return a ? a->i : def;
}

static float attr_float(const struct gnode *n, const char *name, float def)
{
	const Onnx__AttributeProto *a = attr(n, name);

	return a ? a->f : def;
}

static struct gtensor *T(struct gbuild *b, const struct gnode *n, size_t j)
{
	if (j >= n->num_in || n->in[j] < 0)
		return NULL;
	return &b->tensors[n->in[j]];
}

static int need_inputs(const struct gnode *n, size_t min, size_t max)
{
	size_t given = 0;

	for (size_t j = 0; j < n->num_in; j++)
		if (n->in[j] >= 0)
			given = j + 1;
	if (given < min || n->num_in > max)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "%zu inputs, %zu to %zu expected",
				 n->num_in, min, max);
	for (size_t j = 0; j < min; j++)
		if (n->in[j] < 0)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input %zu missing", j);
	if (n->num_out < 1 || n->out[0] < 0)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "no output");
	return VNPU_SUCCESS;
}

static int need_float(struct gbuild *b, const struct gnode *n, size_t j)
{
	struct gtensor *t = T(b, n, j);

	if (t && t->dtype != VNPU_DTYPE_FLOAT)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "input '%s' of element type %d not supported (float is)", t->name,
				 t->dtype);
	if (t && !t->count)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "input '%s' is empty", t->name);
	return VNPU_SUCCESS;
}

/* Only the first output of these operators is supported. */
static int single_output(const struct gnode *n)
{
	for (size_t o = 1; o < n->num_out; o++)
		if (n->out[o] >= 0)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "output %zu not supported", o);
	return VNPU_SUCCESS;
}

static int set_out(struct gbuild *b, const struct gnode *n, size_t o, uint32_t rank,
		   const int64_t *dims)
{
	struct gtensor *t = &b->tensors[n->out[o]];

	if (!gb_set_shape(t, VNPU_DTYPE_FLOAT, rank, dims))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "output shape out of range");
	t->cls = GT_INTER;
	return VNPU_SUCCESS;
}

static int set_alias(struct gbuild *b, const struct gnode *n, int src, uint32_t rank,
		     const int64_t *dims)
{
	struct gtensor *t = &b->tensors[n->out[0]];

	if (!gb_set_shape(t, b->tensors[src].dtype, rank, dims) || t->count != b->tensors[src].count)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "view changes the element count");
	t->cls = GT_ALIAS;
	t->base = src;
	return VNPU_SUCCESS;
}

/* A scratch intermediate of @count floats owned by the node. */
static int scratch(struct gbuild *b, const struct gnode *n, uint64_t count, int *id)
{
	char name[64];
	int64_t dims[1] = { (int64_t)count };
	int status;

	snprintf(name, sizeof(name), "\x01scratch.%d.%zu", n->index, b->num_tensors);
	status = gb_new_tensor(b, name, id);
	if (status != VNPU_SUCCESS)
		return status;
	gb_set_shape(&b->tensors[*id], VNPU_DTYPE_FLOAT, 1, dims);
	b->tensors[*id].cls = GT_INTER;
	b->tensors[*id].producer = n->index;
	return VNPU_SUCCESS;
}

static int launch(struct gbuild *b, const struct gnode *n, enum vnpu_op op, uint32_t flags,
		  uint64_t m, uint64_t nn, uint64_t k, float alpha, float beta,
		  int ta, uint64_t oa, int tb, uint64_t ob, int tc, uint64_t oc)
{
	struct gstep st = { .kind = GSTEP_KERNEL, .node = n->index };

	if (!m || !nn || m > MAX_DIM || nn > MAX_DIM || k > MAX_DIM)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "dimensions %llu x %llu (k %llu) outside the device's 1..%u",
				 (unsigned long long)m, (unsigned long long)nn,
				 (unsigned long long)k, MAX_DIM);
	st.k.op = op;
	st.k.flags = flags;
	st.k.m = (uint32_t)m;
	st.k.n = (uint32_t)nn;
	st.k.k = (uint32_t)k;
	st.k.alpha = alpha;
	st.k.beta = beta;
	st.a = (struct goperand){ ta, oa * 4 };
	st.b = (struct goperand){ tb, ob * 4 };
	st.c = (struct goperand){ tc, oc * 4 };
	return gb_add_step(b, &st);
}

static int copy(struct gbuild *b, const struct gnode *n, int src, uint64_t so, int dst,
		uint64_t dof, uint64_t count)
{
	struct gstep st = { .kind = GSTEP_COPY, .node = n->index, .copy_bytes = count * 4 };

	st.a = (struct goperand){ src, so * 4 };
	st.b = (struct goperand){ -1, 0 };
	st.c = (struct goperand){ dst, dof * 4 };
	return gb_add_step(b, &st);
}

/* Splits @count elements into rows of at most MAX_DIM. */
static int flat_mn(uint64_t count, uint64_t *m, uint64_t *nn)
{
	if (count <= MAX_DIM) {
		*m = 1;
		*nn = count;
		return 1;
	}
	for (uint64_t c = MAX_DIM; c > MAX_DIM / 2; c--)
		if (count % c == 0 && count / c <= MAX_DIM) {
			*m = count / c;
			*nn = c;
			return 1;
		}
	return 0;
}

/* The static 1.0f that GEMM multiplies by to scale (C = alpha * A * 1). */
static int one_tensor(struct gbuild *b)
{
	static const float one = 1.0f;
	int64_t dims[1] = { 1 };

	if (b->one_tensor < 0 &&
	    gb_add_weight(b, "\x01one", VNPU_DTYPE_FLOAT, 1, dims, &one, &b->one_tensor))
		return -1;
	return b->one_tensor;
}

/* out = alpha * in, on @count elements, by a GEMM with k = 1. */
static int scale(struct gbuild *b, const struct gnode *n, int in, int out, uint64_t count,
		 float alpha)
{
	int one = one_tensor(b);

	if (one < 0)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	return launch(b, n, VNPU_OP_GEMM, 0, count, 1, 1, alpha, 0.0f, in, 0, one, 0, out, 0);
}

static uint64_t prod(const int64_t *dims, uint32_t from, uint32_t to)
{
	uint64_t p = 1;

	for (uint32_t i = from; i < to; i++)
		p *= (uint64_t)dims[i];
	return p;
}

/* Constant int64 values of input @j (shapes, axes); NULL if not constant. */
static const int64_t *const_ints(struct gbuild *b, const struct gnode *n, size_t j, size_t *count)
{
	struct gtensor *t = T(b, n, j);

	if (!t || t->cls != GT_WEIGHT || t->dtype != VNPU_DTYPE_INT64 || !t->host)
		return NULL;
	*count = t->count;
	return t->host;
}

/* Normalizes axes against @rank: sorted, unique, in range. */
static int norm_axes(const struct gnode *n, const int64_t *in, size_t count, uint32_t rank,
		     int64_t *out)
{
	for (size_t i = 0; i < count; i++) {
		int64_t a = in[i] < 0 ? in[i] + rank : in[i];

		if (a < 0 || a >= (int64_t)rank)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis %lld out of range for rank %u",
					 (long long)in[i], rank);
		for (size_t j = 0; j < i; j++)
			if (out[j] == a)
				return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis %lld repeated",
						 (long long)in[i]);
		out[i] = a;
	}
	for (size_t i = 1; i < count; i++)
		for (size_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
			int64_t x = out[j];

			out[j] = out[j - 1];
			out[j - 1] = x;
		}
	return VNPU_SUCCESS;
}

/* Axes from attribute "axes" or, from @input_opset on, from input 1. */
static int get_axes(struct gbuild *b, const struct gnode *n, int64_t input_opset, int64_t *axes,
		    size_t *count, int *given)
{
	const Onnx__AttributeProto *a = attr(n, "axes");

	*given = 0;
	*count = 0;
	if (b->opset >= input_opset && T(b, n, 1)) {
		const int64_t *v = const_ints(b, n, 1, count);

		if (!v)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "axes must be a constant int64 tensor");
		if (*count > VNPU_HOST_TENSOR_MAX_RANK)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "too many axes");
		memcpy(axes, v, *count * sizeof(*axes));
		*given = 1;
	} else if (a) {
		if (a->n_ints > VNPU_HOST_TENSOR_MAX_RANK)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "too many axes");
		memcpy(axes, a->ints, a->n_ints * sizeof(*axes));
		*count = a->n_ints;
		*given = 1;
	}
	return VNPU_SUCCESS;
}

/* --- operators ------------------------------------------------------------------ */

static int op_unary(struct gbuild *b, struct gnode *n)
{
	const char *op = n->np->op_type;
	enum vnpu_op kop = !strcmp(op, "Relu") ? VNPU_OP_RELU : VNPU_OP_EXP;
	struct gtensor *x;
	uint64_t m, nn;
	int status;

	if ((status = check_attrs(n, NULL)) || (status = need_inputs(n, 1, 1)) ||
	    (status = need_float(b, n, 0)) || (status = single_output(n)))
		return status;
	x = T(b, n, 0);
	if (!flat_mn(x->count, &m, &nn))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "tensor too large");
	status = set_out(b, n, 0, x->rank, x->dims);
	if (status == VNPU_SUCCESS)
		status = launch(b, n, kop, 0, m, nn, 0, 0, 0, n->in[0], 0, -1, 0, n->out[0], 0);
	return status;
}

static int broadcast_shape(const struct gnode *n, const struct gtensor *a, const struct gtensor *c,
			   uint32_t *rank, int64_t *dims)
{
	char sa[96], sc[96];

	*rank = a->rank > c->rank ? a->rank : c->rank;
	for (uint32_t i = 0; i < *rank; i++) {
		int64_t da = i < *rank - a->rank ? 1 : a->dims[i - (*rank - a->rank)];
		int64_t dc = i < *rank - c->rank ? 1 : c->dims[i - (*rank - c->rank)];

		if (da != dc && da != 1 && dc != 1) {
			shape_str(a, sa, sizeof(sa));
			shape_str(c, sc, sizeof(sc));
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "shapes %s and %s do not broadcast",
					 sa, sc);
		}
		dims[i] = da == 1 ? dc : da;
	}
	return VNPU_SUCCESS;
}

/* Whether @t, broadcast to (@rank, @dims), is a row repeated: [1..1, last dims]. */
static int is_row_of(const struct gtensor *t, uint32_t rank, const int64_t *dims)
{
	uint32_t lead = rank - t->rank, i = 0;

	/* Leading ones of t, then the same trailing dims as the output. */
	while (i < t->rank && t->dims[i] == 1 && t->count < prod(dims, 0, rank))
		i++;
	for (uint32_t j = i; j < t->rank; j++)
		if (t->dims[j] != dims[lead + j])
			return 0;
	return 1;
}

static int op_binary(struct gbuild *b, struct gnode *n)
{
	const char *op = n->np->op_type;
	enum vnpu_op kop = !strcmp(op, "Add") ? VNPU_OP_ADD : !strcmp(op, "Sub") ? VNPU_OP_SUB :
			   !strcmp(op, "Mul") ? VNPU_OP_MUL : VNPU_OP_DIV;
	struct gtensor *a, *c;
	int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
	uint64_t count, m, nn;
	uint32_t rank;
	int status;

	if ((status = check_attrs(n, NULL)) || (status = need_inputs(n, 2, 2)) ||
	    (status = need_float(b, n, 0)) || (status = need_float(b, n, 1)) ||
	    (status = single_output(n)))
		return status;
	a = T(b, n, 0);
	c = T(b, n, 1);
	status = broadcast_shape(n, a, c, &rank, dims);
	if (status == VNPU_SUCCESS)
		status = set_out(b, n, 0, rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	count = prod(dims, 0, rank);
	if (a->count == count && c->count == count) {
		if (!flat_mn(count, &m, &nn))
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "tensor too large");
		return launch(b, n, kop, 0, m, nn, 0, 0, 0, n->in[0], 0, n->in[1], 0, n->out[0], 0);
	}
	/* A bias row added to every row: BIAS_ADD. */
	if (kop == VNPU_OP_ADD && (a->count == count || c->count == count)) {
		int full = a->count == count ? n->in[0] : n->in[1];
		struct gtensor *row = a->count == count ? c : a;

		if (is_row_of(row, rank, dims))
			return launch(b, n, VNPU_OP_BIAS_ADD, 0, count / row->count, row->count, 0,
				      0, 0, full, 0, row == a ? n->in[0] : n->in[1], 0,
				      n->out[0], 0);
	}
	/* A product with a scalar: a GEMM with k = 1. */
	if (kop == VNPU_OP_MUL && (a->count == 1 || c->count == 1) && count <= MAX_DIM) {
		int full = a->count == 1 ? n->in[1] : n->in[0];
		int scalar = a->count == 1 ? n->in[0] : n->in[1];

		return launch(b, n, VNPU_OP_GEMM, 0, count, 1, 1, 1.0f, 0.0f, full, 0, scalar, 0,
			      n->out[0], 0);
	}
	{
		char sa[96], sc[96];

		shape_str(a, sa, sizeof(sa));
		shape_str(c, sc, sizeof(sc));
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "broadcasting %s with %s needs a broadcasting device operator", sa, sc);
	}
}

static int op_softmax(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axis", NULL };
	struct gtensor *x;
	int64_t axis;
	int status;

	if ((status = check_attrs(n, allowed)) || (status = need_inputs(n, 1, 1)) ||
	    (status = need_float(b, n, 0)) || (status = single_output(n)))
		return status;
	x = T(b, n, 0);
	axis = attr_int(n, "axis", b->opset >= 13 ? -1 : 1);
	if (axis < -(int64_t)x->rank || axis >= (int64_t)x->rank || !x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis %lld out of range", (long long)axis);
	if (axis < 0)
		axis += x->rank;
	/* Before opset 13 the input is a 2-D matrix split at axis; from 13 axis alone. */
	if (b->opset >= 13 && axis != (int64_t)x->rank - 1)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "attribute 'axis' = %lld: only the last axis is supported",
				 (long long)attr_int(n, "axis", -1));
	status = set_out(b, n, 0, x->rank, x->dims);
	if (status == VNPU_SUCCESS)
		status = launch(b, n, VNPU_OP_SOFTMAX, 0, prod(x->dims, 0, (uint32_t)axis),
				prod(x->dims, (uint32_t)axis, x->rank), 0, 0, 0, n->in[0], 0, -1, 0,
				n->out[0], 0);
	return status;
}

/* Sum or max of rows of @n elements into @out (a vector of @m), then the mean. */
static int reduce_rows(struct gbuild *b, const struct gnode *n, int mean, int max,
		       uint64_t m, uint64_t nn)
{
	int tmp, status;

	if (!mean)
		return launch(b, n, max ? VNPU_OP_REDUCE_MAX : VNPU_OP_REDUCE_SUM, 0, m, nn, 0, 0, 0,
			      n->in[0], 0, -1, 0, n->out[0], 0);
	status = scratch(b, n, m, &tmp);
	if (status == VNPU_SUCCESS)
		status = launch(b, n, VNPU_OP_REDUCE_SUM, 0, m, nn, 0, 0, 0, n->in[0], 0, -1, 0,
				tmp, 0);
	if (status == VNPU_SUCCESS)
		status = scale(b, n, tmp, n->out[0], m, 1.0f / (float)nn);
	return status;
}

static int op_reduce(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axes", "keepdims", "noop_with_empty_axes", NULL };
	const char *op = n->np->op_type;
	int mean = !strcmp(op, "ReduceMean"), max = !strcmp(op, "ReduceMax");
	int64_t axes[VNPU_HOST_TENSOR_MAX_RANK], sorted[VNPU_HOST_TENSOR_MAX_RANK];
	int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
	struct gtensor *x;
	size_t count;
	uint32_t rank = 0, first;
	int given, keep, status;

	if ((status = check_attrs(n, allowed)) ||
	    (status = need_inputs(n, 1, !strcmp(op, "ReduceSum") && b->opset >= 13 ? 2 : 1)) ||
	    (status = need_float(b, n, 0)) || (status = single_output(n)))
		return status;
	x = T(b, n, 0);
	status = get_axes(b, n, !strcmp(op, "ReduceSum") ? 13 : 18, axes, &count, &given);
	if (status != VNPU_SUCCESS)
		return status;
	keep = attr_int(n, "keepdims", 1) != 0;
	if (!count) {
		if (attr_int(n, "noop_with_empty_axes", 0))
			return set_alias(b, n, n->in[0], x->rank, x->dims);
		for (uint32_t i = 0; i < x->rank; i++)
			axes[i] = i;
		count = x->rank;
	}
	status = norm_axes(n, axes, count, x->rank, sorted);
	if (status != VNPU_SUCCESS)
		return status;
	/* The device reduces rows: the axes must be the trailing ones. */
	first = x->rank - (uint32_t)count;
	for (size_t i = 0; i < count; i++)
		if (sorted[i] != (int64_t)(first + i))
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "reducing axes other than the trailing ones needs a strided reduction operator");
	for (uint32_t i = 0; i < x->rank; i++) {
		if (i < first)
			dims[rank++] = x->dims[i];
		else if (keep)
			dims[rank++] = 1;
	}
	status = set_out(b, n, 0, rank, dims);
	if (status == VNPU_SUCCESS)
		status = reduce_rows(b, n, mean, max, prod(x->dims, 0, first),
				     prod(x->dims, first, x->rank));
	return status;
}

static int op_global_average_pool(struct gbuild *b, struct gnode *n)
{
	int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
	struct gtensor *x;
	int status;

	if ((status = check_attrs(n, NULL)) || (status = need_inputs(n, 1, 1)) ||
	    (status = need_float(b, n, 0)) || (status = single_output(n)))
		return status;
	x = T(b, n, 0);
	if (x->rank < 3)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input of rank %u, at least 3 expected",
				 x->rank);
	for (uint32_t i = 0; i < x->rank; i++)
		dims[i] = i < 2 ? x->dims[i] : 1;
	status = set_out(b, n, 0, x->rank, dims);
	if (status == VNPU_SUCCESS)
		status = reduce_rows(b, n, 1, 0, prod(x->dims, 0, 2), prod(x->dims, 2, x->rank));
	return status;
}

static int op_gemm(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "alpha", "beta", "transA", "transB", NULL };
	struct gtensor *a, *w, *c;
	uint64_t M, K, N, K2;
	int64_t dims[2];
	float alpha, beta;
	int ta, tb, status;

	if ((status = check_attrs(n, allowed)) || (status = need_inputs(n, 2, 3)) ||
	    (status = need_float(b, n, 0)) || (status = need_float(b, n, 1)) ||
	    (status = need_float(b, n, 2)) || (status = single_output(n)))
		return status;
	a = T(b, n, 0);
	w = T(b, n, 1);
	c = T(b, n, 2);
	ta = attr_int(n, "transA", 0) != 0;
	tb = attr_int(n, "transB", 0) != 0;
	alpha = attr_float(n, "alpha", 1.0f);
	beta = attr_float(n, "beta", 1.0f);
	if (a->rank != 2 || w->rank != 2)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "A and B must be matrices");
	M = (uint64_t)(ta ? a->dims[1] : a->dims[0]);
	K = (uint64_t)(ta ? a->dims[0] : a->dims[1]);
	K2 = (uint64_t)(tb ? w->dims[1] : w->dims[0]);
	N = (uint64_t)(tb ? w->dims[0] : w->dims[1]);
	if (K != K2)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "inner dimensions %llu and %llu differ", (unsigned long long)K,
				 (unsigned long long)K2);
	dims[0] = (int64_t)M;
	dims[1] = (int64_t)N;
	status = set_out(b, n, 0, 2, dims);
	if (status != VNPU_SUCCESS)
		return status;
	if (!c || beta == 0.0f)
		return launch(b, n, VNPU_OP_GEMM, (ta ? VNPU_GEMM_TRANS_A : 0) |
			      (tb ? VNPU_GEMM_TRANS_B : 0), M, N, K, alpha, 0.0f, n->in[0], 0,
			      n->in[1], 0, n->out[0], 0);
	{
		uint32_t r;
		int64_t bd[VNPU_HOST_TENSOR_MAX_RANK];
		struct gtensor y = { .rank = 2, .dims = { (int64_t)M, (int64_t)N } };

		status = broadcast_shape(n, &y, c, &r, bd);
		if (status != VNPU_SUCCESS)
			return status;
		if (r != 2 || bd[0] != (int64_t)M || bd[1] != (int64_t)N)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "C does not broadcast to the output");
	}
	if (c->count == M * N) {
		/* Y = C, then Y = alpha A B + beta Y. */
		status = copy(b, n, n->in[2], 0, n->out[0], 0, M * N);
		if (status == VNPU_SUCCESS)
			status = launch(b, n, VNPU_OP_GEMM, (ta ? VNPU_GEMM_TRANS_A : 0) |
					(tb ? VNPU_GEMM_TRANS_B : 0), M, N, K, alpha, beta,
					n->in[0], 0, n->in[1], 0, n->out[0], 0);
		return status;
	}
	if (c->count == N && is_row_of(c, 2, (int64_t[]){ (int64_t)M, (int64_t)N }) &&
	    beta == 1.0f) {
		status = launch(b, n, VNPU_OP_GEMM, (ta ? VNPU_GEMM_TRANS_A : 0) |
				(tb ? VNPU_GEMM_TRANS_B : 0), M, N, K, alpha, 0.0f, n->in[0], 0,
				n->in[1], 0, n->out[0], 0);
		if (status == VNPU_SUCCESS)
			status = launch(b, n, VNPU_OP_BIAS_ADD, 0, M, N, 0, 0, 0, n->out[0], 0,
					n->in[2], 0, n->out[0], 0);
		return status;
	}
	if (c->count == N && M <= 64) {
		/* Each row of Y = C, then the GEMM accumulates with beta. */
		for (uint64_t i = 0; i < M && status == VNPU_SUCCESS; i++)
			status = copy(b, n, n->in[2], 0, n->out[0], i * N, N);
		if (status == VNPU_SUCCESS)
			status = launch(b, n, VNPU_OP_GEMM, (ta ? VNPU_GEMM_TRANS_A : 0) |
					(tb ? VNPU_GEMM_TRANS_B : 0), M, N, K, alpha, beta,
					n->in[0], 0, n->in[1], 0, n->out[0], 0);
		return status;
	}
	{
		char sc[96];

		shape_str(c, sc, sizeof(sc));
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "C of shape %s broadcast over a %llux%llu output needs a broadcasting device operator",
				 sc, (unsigned long long)M, (unsigned long long)N);
	}
}

static int op_matmul(struct gbuild *b, struct gnode *n)
{
	int64_t ad[VNPU_HOST_TENSOR_MAX_RANK], bd[VNPU_HOST_TENSOR_MAX_RANK], od[VNPU_HOST_TENSOR_MAX_RANK];
	int64_t batch[VNPU_HOST_TENSOR_MAX_RANK];
	struct gtensor *a, *w;
	uint32_t ar, br, nb = 0, orank = 0;
	uint64_t M, K, N, batches = 1;
	int status;

	if ((status = check_attrs(n, NULL)) || (status = need_inputs(n, 2, 2)) ||
	    (status = need_float(b, n, 0)) || (status = need_float(b, n, 1)) ||
	    (status = single_output(n)))
		return status;
	a = T(b, n, 0);
	w = T(b, n, 1);
	if (!a->rank || !w->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "scalar operand");
	/* 1-D operands become a row (A) or a column (B), removed from the output. */
	ar = a->rank == 1 ? 2 : a->rank;
	br = w->rank == 1 ? 2 : w->rank;
	memcpy(ad + (a->rank == 1), a->dims, a->rank * sizeof(*ad));
	if (a->rank == 1)
		ad[0] = 1;
	memcpy(bd, w->dims, w->rank * sizeof(*bd));
	if (w->rank == 1)
		bd[1] = 1;
	M = (uint64_t)ad[ar - 2];
	K = (uint64_t)ad[ar - 1];
	N = (uint64_t)bd[br - 1];
	if ((uint64_t)bd[br - 2] != K)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "inner dimensions %llu and %llu differ",
				 (unsigned long long)K, (unsigned long long)bd[br - 2]);
	{
		struct gtensor ab = { .rank = ar - 2 }, bb = { .rank = br - 2 };

		memcpy(ab.dims, ad, (ar - 2) * sizeof(*ad));
		memcpy(bb.dims, bd, (br - 2) * sizeof(*bd));
		status = broadcast_shape(n, &ab, &bb, &nb, batch);
		if (status != VNPU_SUCCESS)
			return status;
	}
	for (uint32_t i = 0; i < nb; i++) {
		od[orank++] = batch[i];
		batches *= (uint64_t)batch[i];
	}
	if (a->rank > 1)
		od[orank++] = (int64_t)M;
	if (w->rank > 1)
		od[orank++] = (int64_t)N;
	status = set_out(b, n, 0, orank, od);
	if (status != VNPU_SUCCESS)
		return status;
	/* B shared by every batch: fold the batch into the rows of A. */
	if (br == 2)
		return launch(b, n, VNPU_OP_GEMM, 0, batches * M, N, K, 1.0f, 0.0f, n->in[0], 0,
			      n->in[1], 0, n->out[0], 0);
	if (batches > 1024)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "%llu batched products, at most 1024",
				 (unsigned long long)batches);
	for (uint64_t i = 0; i < batches && status == VNPU_SUCCESS; i++) {
		uint64_t rem = i, aoff = 0, boff = 0, astride = 1, bstride = 1;

		/* Index of batch i in A's and B's own (broadcast) batch dims. */
		for (int d = (int)nb - 1; d >= 0; d--) {
			uint64_t idx = rem % (uint64_t)batch[d];
			int da = d - (int)(nb - (ar - 2)), db = d - (int)(nb - (br - 2));

			rem /= (uint64_t)batch[d];
			if (da >= 0) {
				aoff += (ad[da] == 1 ? 0 : idx) * astride;
				astride *= (uint64_t)ad[da];
			}
			if (db >= 0) {
				boff += (bd[db] == 1 ? 0 : idx) * bstride;
				bstride *= (uint64_t)bd[db];
			}
		}
		status = launch(b, n, VNPU_OP_GEMM, 0, M, N, K, 1.0f, 0.0f, n->in[0], aoff * M * K,
				n->in[1], boff * K * N, n->out[0], i * M * N);
	}
	return status;
}

static int op_reshape(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "allowzero", NULL };
	int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
	const int64_t *shape;
	struct gtensor *x;
	uint64_t known = 1;
	size_t count;
	int infer = -1, status;

	if ((status = check_attrs(n, allowed)) || (status = need_inputs(n, 2, 2)) ||
	    (status = single_output(n)))
		return status;
	x = T(b, n, 0);
	shape = const_ints(b, n, 1, &count);
	if (!shape)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "the shape must be a constant int64 tensor");
	if (count > VNPU_HOST_TENSOR_MAX_RANK)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "more than %d dimensions",
				 VNPU_HOST_TENSOR_MAX_RANK);
	for (size_t i = 0; i < count; i++) {
		if (shape[i] == 0 && !attr_int(n, "allowzero", 0)) {
			if (i >= x->rank)
				return node_fail(n, VNPU_ERROR_INVALID_MODEL, "dimension %zu copies a missing one", i);
			dims[i] = x->dims[i];
		} else if (shape[i] == -1) {
			if (infer >= 0)
				return node_fail(n, VNPU_ERROR_INVALID_MODEL, "two dimensions of -1");
			infer = (int)i;
			continue;
		} else if (shape[i] < 0) {
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "dimension %lld", (long long)shape[i]);
		} else {
			dims[i] = shape[i];
		}
		known *= (uint64_t)dims[i];
	}
	if (infer >= 0) {
		if (!known || x->count % known)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "%llu elements do not fit the shape",
					 (unsigned long long)x->count);
		dims[infer] = (int64_t)(x->count / known);
	}
	return set_alias(b, n, n->in[0], (uint32_t)count, dims);
}

static int op_flatten(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axis", NULL };
	struct gtensor *x;
	int64_t axis, dims[2];
	int status;

	if ((status = check_attrs(n, allowed)) || (status = need_inputs(n, 1, 1)) ||
	    (status = single_output(n)))
		return status;
	x = T(b, n, 0);
	axis = attr_int(n, "axis", 1);
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > (int64_t)x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis out of range");
	dims[0] = (int64_t)prod(x->dims, 0, (uint32_t)axis);
	dims[1] = (int64_t)prod(x->dims, (uint32_t)axis, x->rank);
	return set_alias(b, n, n->in[0], 2, dims);
}

static int op_squeeze(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axes", NULL };
	int64_t axes[VNPU_HOST_TENSOR_MAX_RANK], sorted[VNPU_HOST_TENSOR_MAX_RANK], dims[VNPU_HOST_TENSOR_MAX_RANK];
	struct gtensor *x;
	size_t count;
	uint32_t rank = 0;
	int given, status;

	if ((status = check_attrs(n, allowed)) || (status = need_inputs(n, 1, 2)) ||
	    (status = single_output(n)))
		return status;
	x = T(b, n, 0);
	status = get_axes(b, n, 13, axes, &count, &given);
	if (status == VNPU_SUCCESS)
		status = norm_axes(n, axes, count, x->rank, sorted);
	if (status != VNPU_SUCCESS)
		return status;
	for (uint32_t i = 0; i < x->rank; i++) {
		int drop = 0;

		for (size_t j = 0; j < count; j++)
			drop |= sorted[j] == (int64_t)i;
		if (!count)
			drop = x->dims[i] == 1;
		if (drop && x->dims[i] != 1)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis %u has size %lld, not 1", i,
					 (long long)x->dims[i]);
		if (!drop)
			dims[rank++] = x->dims[i];
	}
	return set_alias(b, n, n->in[0], rank, dims);
}

static int op_unsqueeze(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axes", NULL };
	int64_t axes[VNPU_HOST_TENSOR_MAX_RANK], sorted[VNPU_HOST_TENSOR_MAX_RANK], dims[VNPU_HOST_TENSOR_MAX_RANK];
	struct gtensor *x;
	size_t count;
	uint32_t rank, k = 0;
	int given, status;

	if ((status = check_attrs(n, allowed)) || (status = need_inputs(n, 1, 2)) ||
	    (status = single_output(n)))
		return status;
	x = T(b, n, 0);
	status = get_axes(b, n, 13, axes, &count, &given);
	if (status != VNPU_SUCCESS)
		return status;
	if (!given || !count)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "no axes");
	rank = x->rank + (uint32_t)count;
	if (rank > VNPU_HOST_TENSOR_MAX_RANK)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "more than %d dimensions",
				 VNPU_HOST_TENSOR_MAX_RANK);
	status = norm_axes(n, axes, count, rank, sorted);
	if (status != VNPU_SUCCESS)
		return status;
	for (uint32_t i = 0, j = 0; i < rank; i++) {
		if (j < count && sorted[j] == (int64_t)i) {
			dims[i] = 1;
			j++;
		} else {
			dims[i] = x->dims[k++];
		}
	}
	return set_alias(b, n, n->in[0], rank, dims);
}

static int op_identity(struct gbuild *b, struct gnode *n)
{
	struct gtensor *x;
	int status;

	if ((status = check_attrs(n, NULL)) || (status = need_inputs(n, 1, 1)) ||
	    (status = single_output(n)))
		return status;
	x = T(b, n, 0);
	return set_alias(b, n, n->in[0], x->rank, x->dims);
}

static int op_constant(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "value", "value_float", "value_floats",
					       "value_int", "value_ints", NULL };
	const Onnx__AttributeProto *a;
	struct gtensor *t = &b->tensors[n->out[0]];
	int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
	uint32_t rank = 0;
	void *data = NULL;
	int dtype, status;

	if ((status = check_attrs(n, allowed)) || (status = single_output(n)))
		return status;
	if (n->np->n_attribute != 1 || n->num_in)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "exactly one value attribute expected");
	a = n->np->attribute[0];
	if (!strcmp(a->name, "value")) {
		char why[160];

		if (!a->t)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "'value' holds no tensor");
		status = gb_tensor_from_proto(a->t, &dtype, &rank, dims, &data, why, sizeof(why));
		if (status != VNPU_SUCCESS)
			return node_fail(n, status, "value: %s", why);
	} else if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_floats")) {
		int many = !strcmp(a->name, "value_floats");
		size_t count = many ? a->n_floats : 1;

		dtype = VNPU_DTYPE_FLOAT;
		rank = many;
		dims[0] = (int64_t)count;
		data = malloc(count * 4 + 1);
		if (data)
			memcpy(data, many ? a->floats : &a->f, count * 4);
	} else {
		int many = !strcmp(a->name, "value_ints");
		size_t count = many ? a->n_ints : 1;

		dtype = VNPU_DTYPE_INT64;
		rank = many;
		dims[0] = (int64_t)count;
		data = malloc(count * 8 + 1);
		if (data)
			memcpy(data, many ? a->ints : &a->i, count * 8);
	}
	if (!data)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	if (!gb_set_shape(t, dtype, rank, dims)) {
		free(data);
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "bad shape");
	}
	t->cls = GT_WEIGHT;
	t->host = data;
	t->producer = -1;
	return VNPU_SUCCESS;
}

/* Operators whose device operator the device does not have yet. */
static int op_missing(struct gbuild *b, struct gnode *n)
{
	(void)b;
	return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
			 "operator not supported: the device has no operator for it");
}

struct op_map {
	const char *name;
	int (*map)(struct gbuild *b, struct gnode *n);
};

static const struct op_map ops[] = {
	{ "Add", op_binary }, { "Sub", op_binary }, { "Mul", op_binary }, { "Div", op_binary },
	{ "Relu", op_unary }, { "Exp", op_unary },
	{ "Softmax", op_softmax },
	{ "ReduceSum", op_reduce }, { "ReduceMean", op_reduce }, { "ReduceMax", op_reduce },
	{ "Gemm", op_gemm }, { "MatMul", op_matmul },
	{ "Reshape", op_reshape }, { "Flatten", op_flatten }, { "Squeeze", op_squeeze },
	{ "Unsqueeze", op_unsqueeze }, { "Identity", op_identity }, { "Constant", op_constant },
	{ "GlobalAveragePool", op_global_average_pool },
	{ "Sigmoid", op_missing }, { "Tanh", op_missing }, { "Transpose", op_missing },
	{ "Conv", op_missing }, { "MaxPool", op_missing }, { "AveragePool", op_missing },
	{ "BatchNormalization", op_missing },
};

int graph_op_known(const char *op_type)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(ops[i].name, op_type))
			return ops[i].map != op_missing;
	return 0;
}

int graph_map_node(struct gbuild *b, struct gnode *n)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(ops[i].name, n->np->op_type))
			return ops[i].map(b, n);
	return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "operator not supported");
}
