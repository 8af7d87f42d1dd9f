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

#include "graph_ops.h"

const Onnx__AttributeProto *gop_attr(const struct gnode *n, const char *name)
{
	for (size_t i = 0; i < n->np->n_attribute; i++)
		if (!strcmp(n->np->attribute[i]->name, name))
			return n->np->attribute[i];
	return NULL;
}

/* Every attribute of the node must be in @allowed (NULL-terminated). */
int gop_check_attrs(const struct gnode *n, const char *const *allowed)
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

int64_t gop_attr_int(const struct gnode *n, const char *name, int64_t def)
{
	const Onnx__AttributeProto *a = gop_attr(n, name);

	return a ? a->i : def;
}

float gop_attr_float(const struct gnode *n, const char *name, float def)
{
	const Onnx__AttributeProto *a = gop_attr(n, name);

	return a ? a->f : def;
}

struct gtensor *gop_in(struct gbuild *b, const struct gnode *n, size_t j)
{
	if (j >= n->num_in || n->in[j] < 0)
		return NULL;
	return &b->tensors[n->in[j]];
}

int gop_need_inputs(const struct gnode *n, size_t min, size_t max)
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

int gop_need_float(struct gbuild *b, const struct gnode *n, size_t j)
{
	struct gtensor *t = gop_in(b, n, j);

	if (t && !gb_is_float(t->dtype))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "input '%s' of element type %d not supported (float and float16 are)",
				 t->name, t->dtype);
	if (t && !t->count)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "input '%s' is empty", t->name);
	return VNPU_SUCCESS;
}

int gop_need_movable(struct gbuild *b, const struct gnode *n, size_t j)
{
	struct gtensor *t = gop_in(b, n, j), *x = gop_in(b, n, 0);

	if (t && !gb_is_io_type(t->dtype))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "input '%s' of element type %d not supported (float, float16, int8, uint8, int32 and bool are)",
				 t->name, t->dtype);
	if (t && x && t->dtype != x->dtype && !(gb_is_float(t->dtype) && gb_is_float(x->dtype)))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "input '%s' of element type %d, input '%s' of %d", t->name, t->dtype,
				 x->name, x->dtype);
	if (t && !t->count)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "input '%s' is empty", t->name);
	return VNPU_SUCCESS;
}

int gop_need_run_indices(struct gbuild *b, const struct gnode *n)
{
	const struct gtensor *x = gop_in(b, n, 0), *ind = gop_in(b, n, 1);

	if (ind->dtype != VNPU_DTYPE_INT64 && ind->dtype != VNPU_DTYPE_INT32)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "indices '%s' of element type %d (int32 and int64 are)", ind->name,
				 ind->dtype);
	if (!ind->count || !x->count)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "empty data or indices");
	if (x->dtype == VNPU_DTYPE_INT64)
		return VNPU_SUCCESS;
	return gop_need_movable(b, n, 0);
}

/* Only the first output of these operators is supported. */
int gop_single_output(const struct gnode *n)
{
	for (size_t o = 1; o < n->num_out; o++)
		if (n->out[o] >= 0)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "output %zu not supported", o);
	return VNPU_SUCCESS;
}

int gop_check_float_op(struct gbuild *b, const struct gnode *n, const char *const *allowed,
		       size_t min, size_t max)
{
	int status = gop_check_attrs(n, allowed);

	if (!status)
		status = gop_need_inputs(n, min, max);
	for (size_t j = 0; !status && j < max; j++)
		if (!n->int_operands || !gop_in(b, n, j) ||
		    gop_in(b, n, j)->dtype != VNPU_DTYPE_INT32)
			status = gop_need_float(b, n, j);
	return status ?: gop_single_output(n);
}

int gop_set_out(struct gbuild *b, const struct gnode *n, size_t o, uint32_t rank,
		   const int64_t *dims)
{
	struct gtensor *t = &b->tensors[n->out[o]], *x = gop_in(b, n, 0);
	/*
	 * The node's type: float16 in, float16 out; likewise an integer or bool
	 * input 0 of the moves (the float operators refuse those, the others
	 * set their outputs' types); float otherwise.
	 */
	int dtype = x && x->dtype != VNPU_DTYPE_FLOAT && gb_is_io_type(x->dtype) ?
		    x->dtype : VNPU_DTYPE_FLOAT;

	if (!gb_set_shape(t, dtype, rank, dims))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "output shape out of range");
	t->cls = GT_INTER;
	return VNPU_SUCCESS;
}

int gop_set_alias(struct gbuild *b, const struct gnode *n, int src, uint32_t rank,
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
int gop_scratch(struct gbuild *b, const struct gnode *n, uint64_t count, int *id)
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

/*
 * A GEMM over float16 or int32 operands (the 2-D kernels are fp32 only): a
 * T_DOT, accumulated in fp32 (int32 operands: exactly); with beta 1, into
 * an fp32 scratch added to C.
 */
static int gemm_as_dot(struct gbuild *b, const struct gnode *n, uint32_t flags, uint64_t m,
		       uint64_t nn, uint64_t k, float alpha, float beta, int ta, uint64_t oa,
		       int tb, uint64_t ob, int tc, uint64_t oc)
{
	int64_t shape[3] = { (int64_t)m, (int64_t)nn, (int64_t)k };
	int trans_a = !!(flags & VNPU_GEMM_TRANS_A), trans_b = !!(flags & VNPU_GEMM_TRANS_B);
	struct tlaunch l;
	int acc, status;

	if (alpha != 1.0f || (beta != 0.0f && beta != 1.0f))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "alpha %g and beta %g on float16 (1, and 0 or 1, are supported)",
				 alpha, beta);
	gop_tl_init(&l, VNPU_OP_T_DOT, 3, shape);
	l.sa[0] = trans_a ? 1 : k, l.sa[1] = 0, l.sa[2] = trans_a ? m : 1;
	l.sb[0] = 0, l.sb[1] = trans_b ? k : 1, l.sb[2] = trans_b ? 1 : nn;
	l.sc[0] = nn, l.sc[1] = 1, l.sc[2] = 0;
	l.axes = 1u << 2;
	l.ta = ta, l.oa = oa, l.tb = tb, l.ob = ob;
	if (beta == 0.0f) {
		l.tc = tc, l.oc = oc;
		return gop_tl_emit(b, n, &l);
	}
	status = gop_scratch(b, n, m * nn, &acc);
	if (status != VNPU_SUCCESS)
		return status;
	l.tc = acc;
	status = gop_tl_emit(b, n, &l);
	if (status != VNPU_SUCCESS)
		return status;
	gop_tl_init(&l, VNPU_OP_T_ADD, 2, shape);
	l.sa[0] = l.sb[0] = l.sc[0] = nn;
	l.sa[1] = l.sb[1] = l.sc[1] = 1;
	l.ta = tc, l.oa = oc, l.tb = acc, l.tc = tc, l.oc = oc;
	return gop_tl_emit(b, n, &l);
}

int gop_launch(struct gbuild *b, const struct gnode *n, enum vnpu_op op, uint32_t flags,
		  uint64_t m, uint64_t nn, uint64_t k, float alpha, float beta,
		  int ta, uint64_t oa, int tb, uint64_t ob, int tc, uint64_t oc)
{
	struct gstep st = { .kind = GSTEP_KERNEL, .node = n->index };

	if (op == VNPU_OP_GEMM && (b->tensors[ta].dtype != VNPU_DTYPE_FLOAT ||
				   b->tensors[tb].dtype != VNPU_DTYPE_FLOAT ||
				   b->tensors[tc].dtype != VNPU_DTYPE_FLOAT))
		return gemm_as_dot(b, n, flags, m, nn, k, alpha, beta, ta, oa, tb, ob, tc, oc);

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
	for (int i = 0; i < 4; i++)
		st.norm[i] = (struct goperand){ -1, 0 };
	st.d = (struct goperand){ -1, 0 };
	return gb_add_step(b, &st);
}

uint64_t gop_prod(const int64_t *dims, uint32_t from, uint32_t to)
{
	uint64_t p = 1;

	for (uint32_t i = from; i < to; i++)
		p *= (uint64_t)dims[i];
	return p;
}

/* Constant int64 values of input @j (shapes, axes); NULL if not constant. */
const void *gop_const_data(struct gbuild *b, int id)
{
	struct gtensor *t;

	while (id >= 0 && b->tensors[id].cls == GT_ALIAS)
		id = b->tensors[id].base;
	if (id < 0)
		return NULL;
	t = &b->tensors[id];
	return t->cls == GT_WEIGHT ? t->host : NULL;
}

const int64_t *gop_const_ints(struct gbuild *b, const struct gnode *n, size_t j, size_t *count)
{
	struct gtensor *t = gop_in(b, n, j);

	if (!t || t->dtype != VNPU_DTYPE_INT64 || !gop_const_data(b, n->in[j]))
		return NULL;
	*count = t->count;
	return gop_const_data(b, n->in[j]);
}

/* Normalizes axes against @rank: sorted, unique, in range. */
int gop_norm_axes(const struct gnode *n, const int64_t *in, size_t count, uint32_t rank,
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
int gop_get_axes(struct gbuild *b, const struct gnode *n, int64_t input_opset, int64_t *axes,
		    size_t *count, int *given)
{
	const Onnx__AttributeProto *a = gop_attr(n, "axes");

	*given = 0;
	*count = 0;
	if (b->opset >= input_opset && gop_in(b, n, 1)) {
		const int64_t *v = gop_const_ints(b, n, 1, count);

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

int gop_broadcast_shape(const struct gnode *n, const struct gtensor *a, const struct gtensor *c,
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

/* --- N-d tensor operators (uAPI 1.4) ------------------------------------------------ */

/* Row-major element strides of @dims. */
void gop_dense(const int64_t *dims, uint32_t rank, uint64_t *st)
{
	uint64_t s = 1;

	for (uint32_t i = rank; i-- > 0;) {
		st[i] = s;
		s *= (uint64_t)dims[i];
	}
}

/* Strides of @t read as the shape (@rank, @dims) it broadcasts to. */
void gop_bcast(const struct gtensor *t, uint32_t rank, const int64_t *dims, uint64_t *st)
{
	uint64_t own[VNPU_HOST_TENSOR_MAX_RANK];

	gop_dense(t->dims, t->rank, own);
	for (uint32_t i = 0; i < rank; i++) {
		int j = (int)i - (int)(rank - t->rank);

		st[i] = j < 0 || (t->dims[j] == 1 && dims[i] != 1) ? 0 : own[j];
	}
}

/*
 * Drops dimensions of size 1 and merges neighbours that every operand
 * walks contiguously, until the launch has at most TDIMS dimensions.
 */
static void coalesce(struct tlaunch *l)
{
	uint32_t r = 0, axes = 0;

	for (uint32_t i = 0; i < l->rank; i++) {
		uint32_t red = (l->axes >> i) & 1;

		if (l->shape[i] == 1 && !red)
			continue;
		if (r > 0 && ((axes >> (r - 1)) & 1) == red &&
		    (uint64_t)l->shape[r - 1] * (uint64_t)l->shape[i] <= MAX_DIM &&
		    l->sa[r - 1] == l->sa[i] * (uint64_t)l->shape[i] &&
		    l->sb[r - 1] == l->sb[i] * (uint64_t)l->shape[i] &&
		    l->sc[r - 1] == l->sc[i] * (uint64_t)l->shape[i] &&
		    l->sd[r - 1] == l->sd[i] * (uint64_t)l->shape[i]) {
			l->shape[r - 1] *= l->shape[i];
			l->sa[r - 1] = l->sa[i];
			l->sb[r - 1] = l->sb[i];
			l->sc[r - 1] = l->sc[i];
			l->sd[r - 1] = l->sd[i];
			continue;
		}
		l->shape[r] = l->shape[i];
		l->sa[r] = l->sa[i];
		l->sb[r] = l->sb[i];
		l->sc[r] = l->sc[i];
		l->sd[r] = l->sd[i];
		axes |= red << r;
		r++;
	}
	if (!r) {
		l->shape[0] = 1;
		l->sa[0] = l->sb[0] = l->sc[0] = l->sd[0] = 0;
		r = 1;
	}
	l->rank = r;
	l->axes = axes;
}

/* The device's element type of tensor @id, fp32 for an unused operand. */
static uint8_t elem_type(const struct gbuild *b, int id)
{
	switch (id < 0 ? VNPU_DTYPE_FLOAT : b->tensors[id].dtype) {
	case VNPU_DTYPE_FLOAT16: return VNPU_ELEM_F16;
	case VNPU_DTYPE_INT8: return VNPU_ELEM_I8;
	case VNPU_DTYPE_UINT8:
	case VNPU_DTYPE_BOOL: return VNPU_ELEM_U8;
	case VNPU_DTYPE_INT32: return VNPU_ELEM_I32;
	default: return VNPU_ELEM_F32;
	}
}

/*
 * The element type @op reads tensor @id as: elem_type(), except that
 * int64 tensors are int64 to GATHER (their indices, or moved data); the
 * other operators see their 4-byte halves (ArgMax writes an int64
 * output as two strided copies of 4-byte words).
 */
static uint8_t elem_type_of(const struct gbuild *b, int id, enum vnpu_op op)
{
	if (id >= 0 && b->tensors[id].dtype == VNPU_DTYPE_INT64 && op == VNPU_OP_T_GATHER)
		return VNPU_ELEM_I64;
	return elem_type(b, id);
}

/* Bytes of an element of tensor @id as @op reads it (elem_type_of()). */
static uint64_t elem_bytes(const struct gbuild *b, int id, enum vnpu_op op)
{
	switch (elem_type_of(b, id, op)) {
	case VNPU_ELEM_I64: return 8;
	case VNPU_ELEM_F16: return 2;
	case VNPU_ELEM_I8:
	case VNPU_ELEM_U8: return 1;
	default: return 4;
	}
}

/*
 * A T_DOT into a float16 C: the device's blocked matrix kernels write
 * fp32, so the products go to an fp32 scratch (C's strides, from 0) that
 * a converting T_COPY rounds into C, once.
 */
static int dot_to_half(struct gbuild *b, const struct gnode *n, struct tlaunch *l)
{
	struct tlaunch cp;
	uint64_t span = 1;
	uint32_t r = 0;
	int acc, status;

	for (uint32_t i = 0; i < l->rank; i++)
		span += (uint64_t)(l->shape[i] - 1) * l->sc[i];
	status = gop_scratch(b, n, span, &acc);
	if (status != VNPU_SUCCESS)
		return status;
	gop_tl_init(&cp, VNPU_OP_T_COPY, 0, l->shape);
	for (uint32_t i = 0; i < l->rank; i++) {
		if ((l->axes >> i) & 1)
			continue;
		cp.shape[r] = l->shape[i];
		cp.sa[r] = l->sc[i];
		cp.sc[r] = l->sc[i];
		r++;
	}
	cp.rank = r;
	cp.ta = acc;
	cp.tc = l->tc;
	cp.oc = l->oc;
	l->tc = acc;
	l->oc = 0;
	status = gop_tl_emit(b, n, l);
	return status ? status : gop_tl_emit(b, n, &cp);
}

/*
 * The BATCHNORM arrays of @l that are float16, replaced by fp32 copies
 * (the device reads its per-channel arrays as fp32): converting T_COPYs
 * into scratch tensors of the node.
 */
static int norm_arrays_to_float(struct gbuild *b, const struct gnode *n, struct tlaunch *l)
{
	for (int i = 0; i < 4; i++) {
		int64_t count;
		uint64_t unit[1] = { 1 };
		int f32, status;

		if (elem_type(b, l->norm[i]) != VNPU_ELEM_F16)
			continue;
		count = (int64_t)b->tensors[l->norm[i]].count;
		status = gop_scratch(b, n, (uint64_t)count, &f32);
		if (status == VNPU_SUCCESS)
			status = gop_copy(b, n, 1, &count, l->norm[i], 0, unit, f32, 0, unit);
		if (status != VNPU_SUCCESS)
			return status;
		l->norm[i] = f32;
	}
	return VNPU_SUCCESS;
}

int gop_tl_emit(struct gbuild *b, const struct gnode *n, struct tlaunch *l)
{
	struct gstep st = { .kind = GSTEP_TENSOR, .node = n->index };
	int window = l->op == VNPU_OP_T_IM2COL || l->op == VNPU_OP_T_MAXPOOL ||
		     l->op == VNPU_OP_T_AVGPOOL;
	uint32_t crank;
	int status;

	if (l->op == VNPU_OP_T_DOT && elem_type(b, l->tc) == VNPU_ELEM_F16)
		return dot_to_half(b, n, l);
	if (l->op == VNPU_OP_T_BATCHNORM && (status = norm_arrays_to_float(b, n, l)))
		return status;

	if (!window && l->op != VNPU_OP_T_BATCHNORM)
		coalesce(l);
	crank = window ? l->out_rank : l->rank;
	if (l->rank > TDIMS || crank > TDIMS)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "%u dimensions, the device's tensor operators take at most %d",
				 l->rank > crank ? l->rank : crank, TDIMS);
	for (uint32_t i = 0; i < l->rank; i++)
		if (!l->shape[i] || (uint64_t)l->shape[i] > MAX_DIM || l->sa[i] > UINT32_MAX ||
		    l->sb[i] > UINT32_MAX)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "dimension %lld outside the device's 1..%u",
					 (long long)l->shape[i], MAX_DIM);
	for (uint32_t i = 0; i < crank; i++)
		if (l->sc[i] > UINT32_MAX)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "output too large");
	st.t.op = l->op;
	st.t.flags = l->flags;
	st.t.ndim = l->rank;
	st.t.axes = l->axes;
	for (uint32_t i = 0; i < l->rank; i++) {
		st.t.shape[i] = (uint32_t)l->shape[i];
		st.t.stride_a[i] = (uint32_t)l->sa[i];
		st.t.stride_b[i] = l->tb >= 0 ? (uint32_t)l->sb[i] : 0;
	}
	for (uint32_t i = 0; i < crank; i++) {
		st.t.stride_c[i] = (uint32_t)l->sc[i];
		if (l->td >= 0 && l->sd[i] > UINT32_MAX)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "output too large");
		st.ext.stride_d[i] = l->td >= 0 ? (uint32_t)l->sd[i] : 0;
	}
	st.has_ext = l->op == VNPU_OP_T_GATHER || l->op == VNPU_OP_T_TOPK;
	st.ext.k = l->k;
	st.d = (struct goperand){ l->td, l->od * 4 };
	st.t.window = l->window;
	st.t.norm.epsilon = l->epsilon;
	st.t.norm.axis = l->norm_axis;
	st.types.a = elem_type_of(b, l->ta, l->op);
	st.types.b = elem_type_of(b, l->tb, l->op);
	st.types.c = elem_type_of(b, l->tc, l->op);
	st.a = (struct goperand){ l->ta, l->oa * elem_bytes(b, l->ta, l->op) };
	st.b = (struct goperand){ l->tb, l->ob * elem_bytes(b, l->tb, l->op) };
	st.c = (struct goperand){ l->tc, l->oc * elem_bytes(b, l->tc, l->op) };
	for (int i = 0; i < 4; i++)
		st.norm[i] = (struct goperand){ l->op == VNPU_OP_T_BATCHNORM ? l->norm[i] : -1, 0 };
	return gb_add_step(b, &st);
}

void gop_tl_init(struct tlaunch *l, enum vnpu_op op, uint32_t rank, const int64_t *shape)
{
	memset(l, 0, sizeof(*l));
	l->op = op;
	l->rank = rank;
	memcpy(l->shape, shape, rank * sizeof(*shape));
	l->ta = l->tb = l->tc = l->td = -1;
	for (int i = 0; i < 4; i++)
		l->norm[i] = -1;
}

/* The ONNX operators that are one elementwise device operator. */
static const struct {
	const char *name;
	enum vnpu_op op;
} unary_ops[] = {
	{ "Relu", VNPU_OP_T_RELU }, { "Exp", VNPU_OP_T_EXP }, { "Sigmoid", VNPU_OP_T_SIGMOID },
	{ "Tanh", VNPU_OP_T_TANH }, { "Log", VNPU_OP_T_LOG }, { "Floor", VNPU_OP_T_FLOOR },
	{ "Ceil", VNPU_OP_T_CEIL }, { "Round", VNPU_OP_T_ROUND }, { "Sin", VNPU_OP_T_SIN },
	{ "Cos", VNPU_OP_T_COS }, { "Tan", VNPU_OP_T_TAN }, { "Asin", VNPU_OP_T_ASIN },
	{ "Acos", VNPU_OP_T_ACOS }, { "Atan", VNPU_OP_T_ATAN }, { "Sinh", VNPU_OP_T_SINH },
	{ "Cosh", VNPU_OP_T_COSH }, { "Asinh", VNPU_OP_T_ASINH }, { "Acosh", VNPU_OP_T_ACOSH },
	{ "Atanh", VNPU_OP_T_ATANH },
};

static int op_unary_t(struct gbuild *b, struct gnode *n)
{
	enum vnpu_op kop = VNPU_OP_T_RELU;
	struct tlaunch l;
	struct gtensor *x;
	int status;

	for (size_t i = 0; i < sizeof(unary_ops) / sizeof(unary_ops[0]); i++)
		if (!strcmp(n->np->op_type, unary_ops[i].name))
			kop = unary_ops[i].op;
	if ((status = gop_check_attrs(n, NULL)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	status = gop_set_out(b, n, 0, x->rank, x->dims);
	if (status != VNPU_SUCCESS)
		return status;
	gop_tl_init(&l, kop, x->rank, x->dims);
	l.ta = n->in[0];
	l.tc = n->out[0];
	gop_dense(x->dims, x->rank, l.sa);
	gop_dense(x->dims, x->rank, l.sc);
	return gop_tl_emit(b, n, &l);
}

static int op_binary_t(struct gbuild *b, struct gnode *n)
{
	const char *op = n->np->op_type;
	enum vnpu_op kop = !strcmp(op, "Add") ? VNPU_OP_T_ADD : !strcmp(op, "Sub") ? VNPU_OP_T_SUB :
			   !strcmp(op, "Mul") ? VNPU_OP_T_MUL : !strcmp(op, "Div") ? VNPU_OP_T_DIV :
			   !strcmp(op, "Max") ? VNPU_OP_T_MAX : VNPU_OP_T_MIN;
	int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
	struct tlaunch l;
	uint32_t rank;
	int status;

	status = gop_check_float_op(b, n, NULL, 2, 2);
	if (status)
		return status;
	status = gop_broadcast_shape(n, gop_in(b, n, 0), gop_in(b, n, 1), &rank, dims);
	if (status == VNPU_SUCCESS)
		status = gop_set_out(b, n, 0, rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	gop_tl_init(&l, kop, rank, dims);
	l.ta = n->in[0];
	l.tb = n->in[1];
	l.tc = n->out[0];
	gop_bcast(gop_in(b, n, 0), rank, dims, l.sa);
	gop_bcast(gop_in(b, n, 1), rank, dims, l.sb);
	gop_dense(dims, rank, l.sc);
	return gop_tl_emit(b, n, &l);
}

static int op_transpose(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "perm", NULL };
	const Onnx__AttributeProto *a = gop_attr(n, "perm");
	int64_t dims[VNPU_HOST_TENSOR_MAX_RANK], perm[VNPU_HOST_TENSOR_MAX_RANK];
	uint64_t in_st[VNPU_HOST_TENSOR_MAX_RANK];
	struct tlaunch l;
	struct gtensor *x;
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_need_movable(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	if (a && a->n_ints != x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "perm of %zu axes for rank %u",
				 a->n_ints, x->rank);
	for (uint32_t i = 0; i < x->rank; i++)
		perm[i] = a ? a->ints[i] : (int64_t)(x->rank - 1 - i);
	{
		int64_t sorted[VNPU_HOST_TENSOR_MAX_RANK];

		status = gop_norm_axes(n, perm, x->rank, x->rank, sorted);
		if (status != VNPU_SUCCESS)
			return status;
	}
	gop_dense(x->dims, x->rank, in_st);
	gop_tl_init(&l, VNPU_OP_T_COPY, x->rank, x->dims);
	for (uint32_t i = 0; i < x->rank; i++) {
		int64_t p = perm[i] < 0 ? perm[i] + x->rank : perm[i];

		dims[i] = x->dims[p];
		l.sa[i] = in_st[p];
	}
	status = gop_set_out(b, n, 0, x->rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	memcpy(l.shape, dims, sizeof(dims));
	gop_dense(dims, x->rank, l.sc);
	l.ta = n->in[0];
	l.tc = n->out[0];
	return gop_tl_emit(b, n, &l);
}

int gop_launch_nd(struct gbuild *b, const struct gnode *n, enum vnpu_op op, uint32_t rank,
		     const int64_t *shape, uint32_t axes, int ta, const uint64_t *sa, int tb,
		     const uint64_t *sb, int tc, const uint64_t *sc)
{
	struct tlaunch l;

	gop_tl_init(&l, op, rank, shape);
	l.axes = axes;
	l.ta = ta;
	l.tb = tb;
	l.tc = tc;
	memcpy(l.sa, sa, rank * sizeof(*sa));
	if (tb >= 0)
		memcpy(l.sb, sb, rank * sizeof(*sb));
	memcpy(l.sc, sc, rank * sizeof(*sc));
	return gop_tl_emit(b, n, &l);
}

int gop_log_softmax(struct gbuild *b, const struct gnode *n, int x, int y, uint32_t rank,
		    const int64_t *shape, uint32_t axes)
{
	int64_t kept[VNPU_HOST_TENSOR_MAX_RANK];
	uint64_t full[VNPU_HOST_TENSOR_MAX_RANK], red[VNPU_HOST_TENSOR_MAX_RANK];
	int m, d, status;

	for (uint32_t i = 0; i < rank; i++)
		kept[i] = (axes >> i) & 1 ? 1 : shape[i];
	gop_dense(shape, rank, full);
	gop_dense(kept, rank, red);
	for (uint32_t i = 0; i < rank; i++)
		if ((axes >> i) & 1)
			red[i] = 0;
	if ((status = gop_scratch(b, n, gop_prod(kept, 0, rank), &m)) ||
	    (status = gop_scratch(b, n, gop_prod(shape, 0, rank), &d)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_REDUCE_MAX, rank, shape, axes, x, full, -1, NULL,
				m, red)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_SUB, rank, shape, 0, x, full, m, red, d, full)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_EXP, rank, shape, 0, d, full, -1, NULL, y, full)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_REDUCE_SUM, rank, shape, axes, y, full, -1, NULL,
				m, red)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_LOG, rank, kept, 0, m, red, -1, NULL, m, red)))
		return status;
	return gop_launch_nd(b, n, VNPU_OP_T_SUB, rank, shape, 0, d, full, m, red, y, full);
}

/*
 * Hardmax over the one axis in @axes of the @rank-d view @shape: i the index
 * of the first maximum (T_ARGMAX, as fp32), y = 1 - min(|iota - i|, 1) with
 * iota the constant 0, 1, ... along the axis: exactly 1 at i, 0 elsewhere.
 */
static int hardmax(struct gbuild *b, struct gnode *n, uint32_t rank, const int64_t *shape,
		   uint32_t axes)
{
	int64_t kept[VNPU_HOST_TENSOR_MAX_RANK];
	uint64_t full[VNPU_HOST_TENSOR_MAX_RANK], red[VNPU_HOST_TENSOR_MAX_RANK];
	uint64_t along[VNPU_HOST_TENSOR_MAX_RANK] = { 0 }, zero[VNPU_HOST_TENSOR_MAX_RANK] = { 0 };
	int y = n->out[0], idx, iota, t, k0, k1, status;
	uint32_t axis = 0;
	struct tlaunch l;
	char name[64];
	float *v;

	while (!((axes >> axis) & 1))
		axis++;
	for (uint32_t i = 0; i < rank; i++)
		kept[i] = i == axis ? 1 : shape[i];
	gop_dense(shape, rank, full);
	gop_dense(kept, rank, red);
	red[axis] = 0;
	along[axis] = 1;
	v = malloc((size_t)shape[axis] * sizeof(*v));
	if (!v)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (int64_t i = 0; i < shape[axis]; i++)
		v[i] = (float)i;
	snprintf(name, sizeof(name), "\x01iota.%d.%zu", n->index, b->num_tensors);
	status = gb_add_weight(b, name, VNPU_DTYPE_FLOAT, 1, &shape[axis], v, &iota);
	free(v);
	if ((status = status ?: gop_scratch(b, n, gop_prod(kept, 0, rank), &idx)) ||
	    (status = gop_scratch(b, n, gop_prod(shape, 0, rank), &t)) ||
	    (status = gop_scalar(b, n, 0.0f, &k0)) || (status = gop_scalar(b, n, 1.0f, &k1)))
		return status;
	gop_tl_init(&l, VNPU_OP_T_ARGMAX, rank, shape);
	l.flags = VNPU_TENSOR_INDEX_FP32;
	l.axes = axes;
	l.ta = n->in[0];
	l.tc = idx;
	memcpy(l.sa, full, sizeof(full));
	memcpy(l.sc, red, sizeof(red));
	if ((status = gop_tl_emit(b, n, &l)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_SUB, rank, shape, 0, iota, along, idx, red, y,
				    full)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_SUB, rank, shape, 0, k0, zero, y, full, t,
				    full)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_MAX, rank, shape, 0, y, full, t, full, y,
				    full)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_MIN, rank, shape, 0, y, full, k1, zero, y,
				    full)))
		return status;
	return gop_launch_nd(b, n, VNPU_OP_T_SUB, rank, shape, 0, k1, zero, y, full, y, full);
}

/* Softmax, LogSoftmax and Hardmax over @axis (before opset 13: the 2-D view). */
static int op_softmax_t(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axis", NULL };
	struct tlaunch l;
	struct gtensor *x;
	int64_t axis;
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	axis = gop_attr_int(n, "axis", b->opset >= 13 ? -1 : 1);
	if (!x->rank || axis < -(int64_t)x->rank || axis >= (int64_t)x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis %lld out of range", (long long)axis);
	if (axis < 0)
		axis += x->rank;
	status = gop_set_out(b, n, 0, x->rank, x->dims);
	if (status != VNPU_SUCCESS)
		return status;
	if (b->opset >= 13) {
		gop_tl_init(&l, VNPU_OP_T_SOFTMAX, x->rank, x->dims);
		l.axes = 1u << axis;
	} else {
		/* Before opset 13: the 2-D view [gop_prod(:axis), gop_prod(axis:)]. */
		int64_t two[2] = { (int64_t)gop_prod(x->dims, 0, (uint32_t)axis),
				   (int64_t)gop_prod(x->dims, (uint32_t)axis, x->rank) };

		gop_tl_init(&l, VNPU_OP_T_SOFTMAX, 2, two);
		l.axes = 2;
	}
	if (!strcmp(n->np->op_type, "LogSoftmax"))
		return gop_log_softmax(b, n, n->in[0], n->out[0], l.rank, l.shape, l.axes);
	if (!strcmp(n->np->op_type, "Hardmax"))
		return hardmax(b, n, l.rank, l.shape, l.axes);
	gop_dense(l.shape, l.rank, l.sa);
	gop_dense(l.shape, l.rank, l.sc);
	l.ta = n->in[0];
	l.tc = n->out[0];
	return gop_tl_emit(b, n, &l);
}

int gop_reduce(struct gbuild *b, struct gnode *n, enum vnpu_op op, const int64_t *axes,
		    size_t count, int keep)
{
	int64_t kept[VNPU_HOST_TENSOR_MAX_RANK], dims[VNPU_HOST_TENSOR_MAX_RANK];
	struct gtensor *x = gop_in(b, n, 0);
	struct tlaunch l;
	uint32_t rank = 0;
	int status;

	gop_tl_init(&l, op, x->rank, x->dims);
	for (size_t i = 0; i < count; i++)
		l.axes |= 1u << axes[i];
	for (uint32_t i = 0; i < x->rank; i++) {
		int red = (l.axes >> i) & 1;

		kept[i] = red ? 1 : x->dims[i];
		if (!red || keep)
			dims[rank++] = kept[i];
	}
	status = gop_set_out(b, n, 0, rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	gop_dense(x->dims, x->rank, l.sa);
	gop_dense(kept, x->rank, l.sc);
	for (uint32_t i = 0; i < x->rank; i++)
		if ((l.axes >> i) & 1)
			l.sc[i] = 0;
	l.ta = n->in[0];
	l.tc = n->out[0];
	return gop_tl_emit(b, n, &l);
}

static int op_reduce_t(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axes", "keepdims", "noop_with_empty_axes", NULL };
	const char *op = n->np->op_type;
	enum vnpu_op kop = !strcmp(op, "ReduceSum") ? VNPU_OP_T_REDUCE_SUM :
			   !strcmp(op, "ReduceMean") ? VNPU_OP_T_REDUCE_MEAN :
			   !strcmp(op, "ReduceProd") ? VNPU_OP_T_REDUCE_PROD : VNPU_OP_T_REDUCE_MAX;
	int64_t axes[VNPU_HOST_TENSOR_MAX_RANK], sorted[VNPU_HOST_TENSOR_MAX_RANK];
	struct gtensor *x;
	size_t count;
	int given, status;

	if ((status = gop_check_attrs(n, allowed)) ||
	    (status = gop_need_inputs(n, 1, kop == VNPU_OP_T_REDUCE_SUM && b->opset >= 13 ? 2 : 1)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	status = gop_get_axes(b, n, kop == VNPU_OP_T_REDUCE_SUM ? 13 : 18, axes, &count, &given);
	if (status != VNPU_SUCCESS)
		return status;
	if (!count) {
		if (gop_attr_int(n, "noop_with_empty_axes", 0))
			return gop_set_alias(b, n, n->in[0], x->rank, x->dims);
		for (uint32_t i = 0; i < x->rank; i++)
			axes[i] = i;
		count = x->rank;
	}
	status = gop_norm_axes(n, axes, count, x->rank, sorted);
	if (status != VNPU_SUCCESS)
		return status;
	if (!x->rank)
		return gop_set_alias(b, n, n->in[0], 0, x->dims);
	return gop_reduce(b, n, kop, sorted, count, gop_attr_int(n, "keepdims", 1) != 0);
}

/* GlobalAveragePool, GlobalMaxPool: the mean or maximum over the spatial axes. */
static int op_global_pool(struct gbuild *b, struct gnode *n)
{
	enum vnpu_op op = !strcmp(n->np->op_type, "GlobalMaxPool") ? VNPU_OP_T_REDUCE_MAX :
							       VNPU_OP_T_REDUCE_MEAN;
	int64_t axes[VNPU_HOST_TENSOR_MAX_RANK];
	struct gtensor *x;
	int status;

	if ((status = gop_check_attrs(n, NULL)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	if (x->rank < 3)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input of rank %u, at least 3 expected",
				 x->rank);
	for (uint32_t i = 2; i < x->rank; i++)
		axes[i - 2] = i;
	return gop_reduce(b, n, op, axes, x->rank - 2, 1);
}

/* Batched A[..., M, K] x B[..., K, N] as one DOT (batch dims broadcast). */
static int matmul_dot(struct gbuild *b, const struct gnode *n, uint32_t nb, const int64_t *batch,
		      const struct gtensor *ab, const struct gtensor *bb, uint64_t M, uint64_t N,
		      uint64_t K)
{
	uint64_t sa[VNPU_HOST_TENSOR_MAX_RANK], sb[VNPU_HOST_TENSOR_MAX_RANK];
	uint64_t sc[VNPU_HOST_TENSOR_MAX_RANK];
	int64_t shape[VNPU_HOST_TENSOR_MAX_RANK + 3];
	struct tlaunch l;

	if (nb + 3 > VNPU_HOST_TENSOR_MAX_RANK)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "too many batch dimensions");
	memcpy(shape, batch, nb * sizeof(*batch));
	shape[nb] = (int64_t)M;
	shape[nb + 1] = (int64_t)N;
	shape[nb + 2] = (int64_t)K;
	gop_tl_init(&l, VNPU_OP_T_DOT, nb + 3, shape);
	/* Batch strides in units of whole matrices. */
	gop_bcast(ab, nb, batch, sa);
	gop_bcast(bb, nb, batch, sb);
	gop_dense(batch, nb, sc);
	for (uint32_t i = 0; i < nb; i++) {
		l.sa[i] = sa[i] * M * K;
		l.sb[i] = sb[i] * K * N;
		l.sc[i] = sc[i] * M * N;
	}
	l.sa[nb] = K;
	l.sa[nb + 1] = 0;
	l.sa[nb + 2] = 1;
	l.sb[nb] = 0;
	l.sb[nb + 1] = 1;
	l.sb[nb + 2] = N;
	l.sc[nb] = N;
	l.sc[nb + 1] = 1;
	l.sc[nb + 2] = 0;
	l.axes = 1u << (nb + 2);
	l.ta = n->in[0];
	l.tb = n->in[1];
	l.tc = n->out[0];
	return gop_tl_emit(b, n, &l);
}

/* Output size and padding of one spatial dimension of a window. */
static int window_dim(const struct gnode *n, const char *auto_pad, int64_t in, int64_t k,
		      int64_t s, int64_t d, int64_t pb, int64_t pe, int ceil_mode, uint32_t *out,
		      uint32_t *pad_begin, uint32_t *pad_end)
{
	int64_t span = (k - 1) * d + 1, o;

	if (k < 1 || s < 1 || d < 1 || pb < 0 || pe < 0)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "bad kernel, stride, dilation or pads");
	if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
		int64_t total;

		o = (in + s - 1) / s;
		total = (o - 1) * s + span - in;
		if (total < 0)
			total = 0;
		pb = !strcmp(auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
		pe = total - pb;
	} else if (!strcmp(auto_pad, "VALID")) {
		pb = pe = 0;
		o = (in - span) / s + 1;
	} else if (!strcmp(auto_pad, "NOTSET") || !auto_pad[0]) {
		int64_t room = in + pb + pe - span;

		if (room < 0)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "window larger than the padded input");
		o = ceil_mode ? (room + s - 1) / s + 1 : room / s + 1;
		/* A last window starting in the end padding is dropped. */
		if (ceil_mode && (o - 1) * s >= in + pb)
			o--;
	} else {
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "auto_pad '%s' not supported", auto_pad);
	}
	if (o < 1 || (uint64_t)o > MAX_DIM)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "output size %lld", (long long)o);
	*out = (uint32_t)o;
	*pad_begin = (uint32_t)pb;
	*pad_end = (uint32_t)pe;
	return VNPU_SUCCESS;
}

const char *gop_attr_str(const struct gnode *n, const char *name, char *buf, size_t len)
{
	const Onnx__AttributeProto *a = gop_attr(n, name);

	buf[0] = 0;
	if (a && a->has_s)
		snprintf(buf, len, "%.*s", (int)a->s.len, (const char *)a->s.data);
	return buf;
}

/*
 * Window of a Conv or pool over X, N x C x H x W (@spatial 2) or N x C x W
 * (@spatial 1, run as H = 1), kernel @kh x @kw; the attributes have one
 * value per spatial dimension (pads two).
 */
static int window_nd(const struct gnode *n, const struct gtensor *x, int spatial, int64_t kh,
		     int64_t kw, int ceil_mode, struct vnpu_tensor_window *w)
{
	const Onnx__AttributeProto *strides = gop_attr(n, "strides"), *dil = gop_attr(n, "dilations");
	const Onnx__AttributeProto *pads = gop_attr(n, "pads");
	int64_t s[2] = { 1, 1 }, d[2] = { 1, 1 }, pb[2] = { 0, 0 }, pe[2] = { 0, 0 };
	int64_t in_h = spatial == 2 ? x->dims[2] : 1;
	char auto_pad[32];
	int status;

	if ((strides && strides->n_ints != (size_t)spatial) ||
	    (dil && dil->n_ints != (size_t)spatial) || (pads && pads->n_ints != 2 * (size_t)spatial))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "strides, dilations or pads of the wrong length");
	for (int i = 0; i < spatial; i++) {
		int j = i + 2 - spatial;

		s[j] = strides ? strides->ints[i] : 1;
		d[j] = dil ? dil->ints[i] : 1;
		pb[j] = pads ? pads->ints[i] : 0;
		pe[j] = pads ? pads->ints[i + spatial] : 0;
	}
	gop_attr_str(n, "auto_pad", auto_pad, sizeof(auto_pad));
	memset(w, 0, sizeof(*w));
	w->kernel_h = (uint32_t)kh;
	w->kernel_w = (uint32_t)kw;
	w->stride_h = (uint32_t)s[0];
	w->stride_w = (uint32_t)s[1];
	w->dilation_h = (uint32_t)d[0];
	w->dilation_w = (uint32_t)d[1];
	status = window_dim(n, spatial == 2 ? auto_pad : "NOTSET", in_h, kh, s[0], d[0], pb[0],
			    pe[0], ceil_mode, &w->out_h, &w->pad_top, &w->pad_bottom);
	if (status == VNPU_SUCCESS)
		status = window_dim(n, auto_pad, x->dims[x->rank - 1], kw, s[1], d[1], pb[1], pe[1],
				    ceil_mode, &w->out_w, &w->pad_left, &w->pad_right);
	return status;
}

/* X of rank 3 (N x C x W) seen as N x C x 1 x W, the device's 2-D windows. */
static void as_2d(const struct gtensor *x, int64_t *dims4)
{
	dims4[0] = x->dims[0];
	dims4[1] = x->dims[1];
	dims4[2] = x->rank == 4 ? x->dims[2] : 1;
	dims4[3] = x->dims[x->rank - 1];
}

/*
 * One 2-D window pass of a 3-D pool: A and C (strides dense over @in4 and
 * @out4) through @w, max or average with the node's flags.
 */
static int pool_pass(struct gbuild *b, const struct gnode *n, int max, uint32_t flags,
		     const int64_t *in4, const struct vnpu_tensor_window *w, int ta, int tc)
{
	int64_t out4[4] = { in4[0], in4[1], w->out_h, w->out_w };
	struct tlaunch l;

	gop_tl_init(&l, max ? VNPU_OP_T_MAXPOOL : VNPU_OP_T_AVGPOOL, 4, in4);
	l.window = *w;
	l.flags = flags;
	if (max) {
		/* The driver reads the end padding only for the average's divisor. */
		l.window.pad_bottom = 0;
		l.window.pad_right = 0;
	}
	gop_dense(in4, 4, l.sa);
	gop_dense(out4, 4, l.sc);
	l.out_rank = 4;
	l.ta = ta;
	l.tc = tc;
	return gop_tl_emit(b, n, &l);
}

/*
 * MaxPool and AveragePool over N x C x D x H x W, in two passes of the
 * device's 2-D windows: over H and W of every depth (X seen as N x CD x H
 * x W) into a scratch, then over D of that (seen as NC x 1 x D x OH OW).
 * A maximum is separable; so is an average, since the window's part
 * inside the input (or, with count_include_pad, inside the padded input)
 * is a box, its count the product of the counts along each axis.
 */
static int pool_3d(struct gbuild *b, struct gnode *n, int max, const int64_t *ks)
{
	const Onnx__AttributeProto *strides = gop_attr(n, "strides"), *dil = gop_attr(n, "dilations");
	const Onnx__AttributeProto *pads = gop_attr(n, "pads");
	int ceil_mode = gop_attr_int(n, "ceil_mode", 0) != 0;
	uint32_t flags = !max && gop_attr_int(n, "count_include_pad", 0) ?
			 VNPU_TENSOR_COUNT_INCLUDE_PAD : 0;
	struct vnpu_tensor_window hw = { 0 }, dw = { 0 };
	uint32_t out[3], pb[3], pe[3];
	int64_t s[3], d[3], in4[4], dims[5];
	struct gtensor *x = gop_in(b, n, 0);
	char auto_pad[32];
	int z, status = VNPU_SUCCESS;

	if ((strides && strides->n_ints != 3) || (dil && dil->n_ints != 3) ||
	    (pads && pads->n_ints != 6))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "strides, dilations or pads of the wrong length");
	gop_attr_str(n, "auto_pad", auto_pad, sizeof(auto_pad));
	for (int i = 0; i < 3 && status == VNPU_SUCCESS; i++) {
		s[i] = strides ? strides->ints[i] : 1;
		d[i] = dil ? dil->ints[i] : 1;
		status = window_dim(n, auto_pad, x->dims[2 + i], ks[i], s[i], d[i],
				    pads ? pads->ints[i] : 0, pads ? pads->ints[i + 3] : 0, ceil_mode,
				    &out[i], &pb[i], &pe[i]);
	}
	if (status != VNPU_SUCCESS)
		return status;
	hw.kernel_h = (uint32_t)ks[1], hw.kernel_w = (uint32_t)ks[2];
	hw.stride_h = (uint32_t)s[1], hw.stride_w = (uint32_t)s[2];
	hw.dilation_h = (uint32_t)d[1], hw.dilation_w = (uint32_t)d[2];
	hw.pad_top = pb[1], hw.pad_bottom = pe[1], hw.pad_left = pb[2], hw.pad_right = pe[2];
	hw.out_h = out[1], hw.out_w = out[2];
	dw.kernel_h = (uint32_t)ks[0], dw.kernel_w = 1;
	dw.stride_h = (uint32_t)s[0], dw.stride_w = 1;
	dw.dilation_h = (uint32_t)d[0], dw.dilation_w = 1;
	dw.pad_top = pb[0], dw.pad_bottom = pe[0];
	dw.out_h = out[0], dw.out_w = out[1] * out[2];
	dims[0] = x->dims[0], dims[1] = x->dims[1];
	dims[2] = out[0], dims[3] = out[1], dims[4] = out[2];
	if ((status = gop_set_out(b, n, 0, 5, dims)) ||
	    (status = gop_scratch(b, n, (uint64_t)(x->dims[0] * x->dims[1] * x->dims[2]) *
					out[1] * out[2], &z)))
		return status;
	x = gop_in(b, n, 0);
	in4[0] = x->dims[0], in4[1] = x->dims[1] * x->dims[2];
	in4[2] = x->dims[3], in4[3] = x->dims[4];
	status = pool_pass(b, n, max, flags, in4, &hw, n->in[0], z);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	in4[0] = x->dims[0] * x->dims[1], in4[1] = 1;
	in4[2] = x->dims[2], in4[3] = (int64_t)out[1] * out[2];
	return pool_pass(b, n, max, flags, in4, &dw, z, n->out[0]);
}

static int op_pool(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "auto_pad", "ceil_mode", "count_include_pad",
					       "dilations", "kernel_shape", "pads",
					       "storage_order", "strides", NULL };
	int max = !strcmp(n->np->op_type, "MaxPool");
	const Onnx__AttributeProto *ks = gop_attr(n, "kernel_shape");
	int64_t dims[4], x4[4];
	struct tlaunch l;
	struct gtensor *x;
	int status, sp;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	sp = (int)x->rank - 2;
	if ((sp < 1 || sp > 3) || !ks || ks->n_ints != (size_t)sp)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "only 1-D, 2-D and 3-D pooling (N x C x W, N x C x H x W, N x C x D x H x W) is supported");
	if (gop_attr_int(n, "storage_order", 0))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "attribute 'storage_order' = 1 not supported");
	if (!max && gop_attr(n, "dilations"))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "attribute 'dilations' not supported");
	if (sp == 3)
		return pool_3d(b, n, max, ks->ints);
	as_2d(x, x4);
	gop_tl_init(&l, max ? VNPU_OP_T_MAXPOOL : VNPU_OP_T_AVGPOOL, 4, x4);
	status = window_nd(n, x, sp, sp == 2 ? ks->ints[0] : 1, ks->ints[sp - 1],
			   gop_attr_int(n, "ceil_mode", 0) != 0, &l.window);
	if (status != VNPU_SUCCESS)
		return status;
	if (!max && gop_attr_int(n, "count_include_pad", 0))
		l.flags = VNPU_TENSOR_COUNT_INCLUDE_PAD;
	if (max) {
		/* The driver reads the end padding only for the average's divisor. */
		l.window.pad_bottom = 0;
		l.window.pad_right = 0;
	}
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	dims[2] = l.window.out_h;
	dims[3] = l.window.out_w;
	if (sp == 1)
		dims[2] = dims[3];
	status = gop_set_out(b, n, 0, (uint32_t)sp + 2, dims);
	if (status != VNPU_SUCCESS)
		return status;
	dims[2] = l.window.out_h;
	dims[3] = l.window.out_w;
	gop_dense(x4, 4, l.sa);
	gop_dense(dims, 4, l.sc);
	l.out_rank = 4;
	l.ta = n->in[0];
	l.tc = n->out[0];
	return gop_tl_emit(b, n, &l);
}

/*
 * The columns of a 1-D or 2-D Conv, N x (C kh kw) x (oh ow), into a new
 * scratch *@cols: one IM2COL of the whole input. Sets the output's shape
 * (@dims) and *@P, the output positions of one image.
 */
static int conv_cols_2d(struct gbuild *b, const struct gnode *n, int sp, int64_t *dims,
			uint64_t *P, int *cols)
{
	struct gtensor *x = gop_in(b, n, 0), *w = gop_in(b, n, 1);
	int64_t cols_dims[6], x4[4], kh = sp == 2 ? w->dims[2] : 1, kw = w->dims[w->rank - 1];
	struct tlaunch l;
	int status;

	as_2d(x, x4);
	gop_tl_init(&l, VNPU_OP_T_IM2COL, 4, x4);
	status = window_nd(n, x, sp, kh, kw, 0, &l.window);
	if (status != VNPU_SUCCESS)
		return status;
	l.window.pad_bottom = 0;
	l.window.pad_right = 0;
	dims[0] = x->dims[0];
	dims[1] = w->dims[0];
	dims[2] = sp == 2 ? l.window.out_h : l.window.out_w;
	dims[3] = l.window.out_w;
	*P = (uint64_t)l.window.out_h * l.window.out_w;
	if ((status = gop_set_out(b, n, 0, (uint32_t)sp + 2, dims)) ||
	    (status = gop_scratch(b, n, (uint64_t)(x4[0] * x4[1] * kh * kw) * *P, cols)))
		return status;
	x = gop_in(b, n, 0);	/* the tensors may have moved */
	/* float16 and int32 columns: IM2COL moves the elements as they are. */
	if (x->dtype != VNPU_DTYPE_FLOAT)
		gb_set_shape(&b->tensors[*cols], x->dtype, 1, b->tensors[*cols].dims);
	cols_dims[0] = x4[0];
	cols_dims[1] = x4[1];
	cols_dims[2] = kh;
	cols_dims[3] = kw;
	cols_dims[4] = l.window.out_h;
	cols_dims[5] = l.window.out_w;
	gop_dense(x4, 4, l.sa);
	gop_dense(cols_dims, 6, l.sc);
	l.out_rank = 6;
	l.ta = n->in[0];
	l.tc = *cols;
	return gop_tl_emit(b, n, &l);
}

/*
 * Zeros into the rows [@r0, @r1) of output depth of kernel depth @kd of
 * the 3-D columns @cols, NC x kD x (kh kw) x oD x (oh ow): the column
 * entries whose input depth is padding.
 */
static int conv_cols_zero(struct gbuild *b, const struct gnode *n, int cols, int zero,
			  const int64_t *g, int64_t kd, int64_t r0, int64_t r1)
{
	/* g: NC, kD, kh kw, oD, oh ow */
	int64_t shape[3] = { g[0], g[2], (r1 - r0) * g[4] };
	uint64_t sa[3] = { 0, 0, 0 };
	uint64_t sc[3] = { (uint64_t)(g[1] * g[2] * g[3] * g[4]), (uint64_t)(g[3] * g[4]), 1 };
	uint64_t oc = (uint64_t)((kd * g[2] * g[3] + r0) * g[4]);

	if (r0 >= r1)
		return VNPU_SUCCESS;
	return gop_copy(b, n, 3, shape, zero, 0, sa, cols, oc, sc);
}

/*
 * The columns of a 3-D Conv, N x (C kD kH kW) x (oD oH oW), into a new
 * scratch *@cols, from the device's 2-D IM2COL: for each kernel depth kd,
 * one IM2COL over X seen as (the output depths od whose input depth
 * od sD - pad + kd dD lies inside X) x NC x H x W, its first stride sD H W
 * from the first such input depth, writing the rows (c, kd, kh, kw) of
 * those output depths; the entries of the other output depths (the depth
 * padding) are zeros. Batch and channel are one dimension: both step
 * whole channels, in X and in the columns alike. Sets the output's shape
 * (@dims) and *@P, the output positions of one image.
 */
static int conv_cols_3d(struct gbuild *b, const struct gnode *n, int64_t *dims, uint64_t *P,
			int *cols)
{
	const Onnx__AttributeProto *strides = gop_attr(n, "strides"), *dil = gop_attr(n, "dilations");
	const Onnx__AttributeProto *pads = gop_attr(n, "pads");
	static const uint64_t zero_bits;
	struct gtensor *x = gop_in(b, n, 0), *w = gop_in(b, n, 1);
	int64_t s[3], d[3], k[3], in[3], g[5], HW;
	uint32_t out[3], pb[3], pe[3];
	char auto_pad[32], name[64];
	int zero = -1, status = VNPU_SUCCESS;

	if ((strides && strides->n_ints != 3) || (dil && dil->n_ints != 3) ||
	    (pads && pads->n_ints != 6))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "strides, dilations or pads of the wrong length");
	gop_attr_str(n, "auto_pad", auto_pad, sizeof(auto_pad));
	for (int i = 0; i < 3 && status == VNPU_SUCCESS; i++) {
		s[i] = strides ? strides->ints[i] : 1;
		d[i] = dil ? dil->ints[i] : 1;
		k[i] = w->dims[2 + i];
		in[i] = x->dims[2 + i];
		status = window_dim(n, auto_pad, in[i], k[i], s[i], d[i], pads ? pads->ints[i] : 0,
				    pads ? pads->ints[i + 3] : 0, 0, &out[i], &pb[i], &pe[i]);
	}
	if (status != VNPU_SUCCESS)
		return status;
	dims[0] = x->dims[0];
	dims[1] = w->dims[0];
	for (int i = 0; i < 3; i++)
		dims[2 + i] = out[i];
	g[0] = x->dims[0] * x->dims[1];
	g[1] = k[0];
	g[2] = k[1] * k[2];
	g[3] = out[0];
	g[4] = (int64_t)out[1] * out[2];
	*P = (uint64_t)(g[3] * g[4]);
	HW = in[1] * in[2];
	if ((status = gop_set_out(b, n, 0, 5, dims)) ||
	    (status = gop_scratch(b, n, (uint64_t)(g[0] * g[1] * g[2]) * *P, cols)))
		return status;
	x = gop_in(b, n, 0);	/* the tensors may have moved */
	if (x->dtype != VNPU_DTYPE_FLOAT)
		gb_set_shape(&b->tensors[*cols], x->dtype, 1, b->tensors[*cols].dims);
	for (int64_t kd = 0; kd < k[0] && status == VNPU_SUCCESS; kd++) {
		int64_t base = kd * d[0] - pb[0], lo, hi;
		int64_t x4[4];
		struct tlaunch l;

		/* The output depths whose input depth od s + base is inside X. */
		lo = base >= 0 ? 0 : (-base + s[0] - 1) / s[0];
		hi = in[0] - 1 - base < 0 ? -1 : (in[0] - 1 - base) / s[0];
		if (hi > g[3] - 1)
			hi = g[3] - 1;
		if (lo > hi)
			lo = hi = g[3];		/* no input depth: all zeros */
		if (zero < 0 && (lo > 0 || hi < g[3] - 1)) {
			/* A zero of the columns' type: all bits 0 in each. */
			snprintf(name, sizeof(name), "\x01zero.%d.%zu", n->index, b->num_tensors);
			status = gb_add_weight(b, name, gop_in(b, n, 0)->dtype, 0, NULL, &zero_bits,
					       &zero);
		}
		if (status == VNPU_SUCCESS)
			status = conv_cols_zero(b, n, *cols, zero, g, kd, 0, lo);
		if (status == VNPU_SUCCESS)
			status = conv_cols_zero(b, n, *cols, zero, g, kd, hi + 1, g[3]);
		if (status != VNPU_SUCCESS || lo >= g[3])
			continue;
		x = gop_in(b, n, 0);
		x4[0] = hi - lo + 1;
		x4[1] = g[0];
		x4[2] = in[1];
		x4[3] = in[2];
		gop_tl_init(&l, VNPU_OP_T_IM2COL, 4, x4);
		l.window.kernel_h = (uint32_t)k[1];
		l.window.kernel_w = (uint32_t)k[2];
		l.window.stride_h = (uint32_t)s[1];
		l.window.stride_w = (uint32_t)s[2];
		l.window.dilation_h = (uint32_t)d[1];
		l.window.dilation_w = (uint32_t)d[2];
		l.window.pad_top = pb[1];
		l.window.pad_left = pb[2];
		l.window.out_h = out[1];
		l.window.out_w = out[2];
		l.sa[0] = (uint64_t)(s[0] * HW);
		l.sa[1] = (uint64_t)(in[0] * HW);
		l.sa[2] = (uint64_t)in[2];
		l.sa[3] = 1;
		l.oa = (uint64_t)((lo * s[0] + base) * HW);
		l.sc[0] = (uint64_t)g[4];
		l.sc[1] = (uint64_t)(g[1] * g[2]) * *P;
		l.sc[2] = (uint64_t)k[2] * *P;
		l.sc[3] = *P;
		l.sc[4] = out[2];
		l.sc[5] = 1;
		l.oc = (uint64_t)((kd * g[2] * g[3] + lo) * g[4]);
		l.out_rank = 6;
		l.ta = n->in[0];
		l.tc = *cols;
		status = gop_tl_emit(b, n, &l);
	}
	return status;
}

/*
 * Conv, 1-D, 2-D or 3-D, grouped: the columns of the whole input (N x C
 * kD kh kw x P, a scratch tensor; IM2COL), then Y[n, g Kg + k] = W[g Kg +
 * k] cols[n, g Qg ...] as one DOT over (N, G, Kg, P, Qg), then the bias.
 */
int gop_conv(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "auto_pad", "dilations", "group", "kernel_shape",
					       "pads", "strides", NULL };
	const Onnx__AttributeProto *ks = gop_attr(n, "kernel_shape");
	struct gtensor *x, *w, *bias;
	int64_t dims[5], group;
	uint64_t P = 0, Q, K, G, Kg, Qg;
	struct tlaunch l;
	int cols, status, sp;

	status = gop_check_float_op(b, n, allowed, 2, 3);
	if (status)
		return status;
	x = gop_in(b, n, 0);
	w = gop_in(b, n, 1);
	bias = gop_in(b, n, 2);
	sp = (int)x->rank - 2;
	if (sp < 1 || sp > 3 || w->rank != x->rank)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "only 1-D, 2-D and 3-D convolution (N x C x W, N x C x H x W, N x C x D x H x W) is supported");
	group = gop_attr_int(n, "group", 1);
	if (group < 1 || x->dims[1] % group || w->dims[0] % group)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "group %lld does not divide %lld input and %lld output channels",
				 (long long)group, (long long)x->dims[1], (long long)w->dims[0]);
	if (w->dims[1] * group != x->dims[1])
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "%lld input channels, the weights take %lld",
				 (long long)x->dims[1], (long long)(w->dims[1] * group));
	if (ks && ks->n_ints != (size_t)sp)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "kernel_shape of %zu values for %d spatial dimensions", ks->n_ints, sp);
	for (int i = 0; ks && i < sp; i++)
		if (ks->ints[i] != w->dims[2 + i])
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "kernel_shape differs from the weights");
	if (bias && (bias->rank != 1 || bias->dims[0] != w->dims[0]))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "bias of the wrong shape");
	K = (uint64_t)w->dims[0];
	Q = (uint64_t)x->dims[1] * gop_prod(w->dims, 2, w->rank);
	status = sp == 3 ? conv_cols_3d(b, n, dims, &P, &cols) :
			   conv_cols_2d(b, n, sp, dims, &P, &cols);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);	/* the tensors may have moved */
	G = (uint64_t)group;
	Kg = K / G;
	Qg = Q / G;
	{
		int64_t shape[5] = { x->dims[0], (int64_t)G, (int64_t)Kg, (int64_t)P, (int64_t)Qg };

		gop_tl_init(&l, VNPU_OP_T_DOT, 5, shape);
		l.sa[0] = 0, l.sa[1] = Kg * Qg, l.sa[2] = Qg, l.sa[3] = 0, l.sa[4] = 1;
		l.sb[0] = Q * P, l.sb[1] = Qg * P, l.sb[2] = 0, l.sb[3] = 1, l.sb[4] = P;
		l.sc[0] = K * P, l.sc[1] = Kg * P, l.sc[2] = P, l.sc[3] = 1, l.sc[4] = 0;
		l.axes = 1u << 4;
		l.ta = n->in[1];
		l.tb = cols;
		l.tc = n->out[0];
		status = gop_tl_emit(b, n, &l);
	}
	if (status != VNPU_SUCCESS || !bias)
		return status;
	x = gop_in(b, n, 0);	/* the product may have added a scratch tensor */
	/* Y += bias per output channel, in place. */
	{
		int64_t shape[3] = { x->dims[0], (int64_t)K, (int64_t)P };

		gop_tl_init(&l, VNPU_OP_T_ADD, 3, shape);
		l.sa[0] = K * P, l.sa[1] = P, l.sa[2] = 1;
		l.sb[0] = 0, l.sb[1] = 1, l.sb[2] = 0;
		memcpy(l.sc, l.sa, sizeof(l.sc));
		l.ta = n->out[0];
		l.tb = n->in[2];
		l.tc = n->out[0];
		return gop_tl_emit(b, n, &l);
	}
}

/*
 * ConvTranspose's output size and begin padding along one spatial axis:
 * pads, or with output_shape (or a SAME auto_pad) the total padding split
 * as the operator's definition says (SAME_UPPER puts the smaller half
 * first, the others the larger).
 */
static int conv_t_dim(const struct gnode *n, const char *auto_pad, int64_t in, int64_t k,
		      int64_t s, int64_t d, int64_t op, int64_t pb, int64_t pe, int64_t want,
		      int64_t *out, int64_t *pad_begin)
{
	int64_t full, total;

	if (k < 1 || s < 1 || d < 1 || op < 0 || pb < 0 || pe < 0)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "bad kernel, stride, dilation, output padding or pads");
	full = s * (in - 1) + op + (k - 1) * d + 1;
	if (want > 0 || !strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
		int64_t o = want > 0 ? want : in * s, half;

		total = full - o;
		/* floor(total / 2), for negative totals too */
		half = total >= 0 ? total / 2 : -((-total + 1) / 2);
		*pad_begin = !strcmp(auto_pad, "SAME_UPPER") ? half : total - half;
		*out = o;
	} else if (!strcmp(auto_pad, "NOTSET") || !strcmp(auto_pad, "VALID") || !auto_pad[0]) {
		if (!strcmp(auto_pad, "VALID"))
			pb = pe = 0;
		*pad_begin = pb;
		*out = full - pb - pe;
	} else {
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "auto_pad '%s' not supported", auto_pad);
	}
	if (*out < 1 || (uint64_t)*out > MAX_DIM)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "output size %lld", (long long)*out);
	return VNPU_SUCCESS;
}

/*
 * ConvTranspose (1-D, 2-D and 3-D, any group): one T_DOT makes every
 * kernel position's contribution Z[n][oc][kd kh kw][id ih iw] = sum over
 * the input channels of the group of W[ic][oc][kd][kh][kw] X[n][ic][id][ih][iw];
 * Y starts as the bias (or 0) and each kernel position adds its slice of
 * Z into the output positions i * stride + k * dilation - pad along each
 * axis (T_ADD in place on a strided view of Y, the positions outside Y
 * left out). 1-D and 2-D run as 3-D with leading axes of size 1.
 */
static int op_conv_transpose(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "auto_pad", "dilations", "group", "kernel_shape",
					       "output_padding", "output_shape", "pads", "strides",
					       NULL };
	const char *const names[] = { "strides", "dilations", "output_padding", "kernel_shape" };
	const Onnx__AttributeProto *a[4], *pads = gop_attr(n, "pads"), *osh;
	int64_t v[4][3], pb[3] = { 0 }, pe[3] = { 0 }, want[3] = { 0 };
	int64_t in[3], k[3], out[3], pad0[3], dims[5], group, N, C, OC, OCg, Cg, KK, HW, O;
	struct gtensor *x, *w, *bias;
	char auto_pad[32];
	int z, init, status, sp, has_bias;

	status = gop_check_float_op(b, n, allowed, 2, 3);
	if (status)
		return status;
	x = gop_in(b, n, 0);
	w = gop_in(b, n, 1);
	bias = gop_in(b, n, 2);
	has_bias = bias != NULL;
	sp = (int)x->rank - 2;
	if (sp < 1 || sp > 3 || w->rank != x->rank)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "only 1-D, 2-D and 3-D transposed convolution is supported");
	group = gop_attr_int(n, "group", 1);
	N = x->dims[0];
	C = x->dims[1];
	if (group < 1 || C % group || w->dims[0] != C)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "group %lld, %lld input channels and weights for %lld do not fit",
				 (long long)group, (long long)C, (long long)w->dims[0]);
	OCg = w->dims[1];
	OC = OCg * group;
	Cg = C / group;
	if (bias && (bias->rank != 1 || bias->dims[0] != OC))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "bias of the wrong shape");
	for (int i = 0; i < 4; i++) {
		a[i] = gop_attr(n, names[i]);
		if (a[i] && a[i]->n_ints != (size_t)sp)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "%s of the wrong length",
					 names[i]);
	}
	osh = gop_attr(n, "output_shape");
	if ((pads && pads->n_ints != 2 * (size_t)sp) ||
	    (osh && osh->n_ints != (size_t)sp && osh->n_ints != (size_t)sp + 2))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "pads or output_shape of the wrong length");
	gop_attr_str(n, "auto_pad", auto_pad, sizeof(auto_pad));
	/* The leading axes a 1-D or 2-D operator does not have: size 1. */
	for (int j = 0; j < 3; j++) {
		v[0][j] = v[1][j] = 1;
		v[2][j] = 0;
		in[j] = k[j] = 1;
	}
	for (int i = 0; i < sp; i++) {
		int j = i + 3 - sp;

		for (int t = 0; t < 4; t++)
			v[t][j] = a[t] ? a[t]->ints[i] : t < 2;
		if (a[3] && a[3]->ints[i] != w->dims[2 + i])
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "kernel_shape differs from the weights");
		pb[j] = pads ? pads->ints[i] : 0;
		pe[j] = pads ? pads->ints[i + sp] : 0;
		want[j] = osh ? osh->ints[osh->n_ints - sp + i] : 0;
		in[j] = x->dims[2 + i];
		k[j] = w->dims[2 + i];
	}
	for (int j = 0; j < 3; j++) {
		status = conv_t_dim(n, j < 3 - sp ? "NOTSET" : auto_pad, in[j], k[j], v[0][j],
				    v[1][j], v[2][j], pb[j], pe[j], want[j], &out[j], &pad0[j]);
		if (status != VNPU_SUCCESS)
			return status;
	}
	dims[0] = N;
	dims[1] = OC;
	for (int i = 0; i < sp; i++)
		dims[2 + i] = out[i + 3 - sp];
	status = gop_set_out(b, n, 0, (uint32_t)sp + 2, dims);
	if (status != VNPU_SUCCESS)
		return status;
	KK = k[0] * k[1] * k[2];
	HW = in[0] * in[1] * in[2];
	O = out[0] * out[1] * out[2];
	if ((status = gop_scratch(b, n, (uint64_t)(N * OC * KK * HW), &z)))
		return status;
	/* Z[n][g][ocg][kk][hw] = sum over icg of W[g Cg + icg][ocg][kk] X[n][g Cg + icg][hw]. */
	{
		int64_t shape[6] = { N, group, OCg, KK, HW, Cg };
		uint64_t sa[6] = { 0, (uint64_t)(Cg * OCg * KK), (uint64_t)KK, 1, 0,
				   (uint64_t)(OCg * KK) };
		uint64_t sb[6] = { (uint64_t)(C * HW), (uint64_t)(Cg * HW), 0, 0, 1, (uint64_t)HW };
		uint64_t sc[6] = { (uint64_t)(OC * KK * HW), (uint64_t)(OCg * KK * HW),
				   (uint64_t)(KK * HW), (uint64_t)HW, 1, 0 };

		status = gop_launch_nd(b, n, VNPU_OP_T_DOT, 6, shape, 1u << 5, n->in[1], sa,
				       n->in[0], sb, z, sc);
	}
	/* Y = bias per output channel, or 0. */
	if (status == VNPU_SUCCESS) {
		int64_t shape[3] = { N, OC, O };
		uint64_t sa[3] = { 0, has_bias, 0 };
		uint64_t sc[3] = { (uint64_t)(OC * O), (uint64_t)O, 1 };

		init = n->in[2];
		if (!has_bias)
			status = gop_scalar(b, n, 0.0f, &init);
		if (status == VNPU_SUCCESS)
			status = gop_copy(b, n, 3, shape, init, 0, sa, n->out[0], 0, sc);
	}
	for (int64_t kk = 0; kk < KK && status == VNPU_SUCCESS; kk++) {
		int64_t lo[3], hi[3], kj[3] = { kk / (k[1] * k[2]), kk / k[2] % k[1], kk % k[2] };
		int64_t shape[5], oa = 0, ob = 0, empty = 0;
		struct tlaunch l;

		/* Along each axis, the inputs whose output lies inside Y. */
		for (int j = 0; j < 3; j++) {
			int64_t base = kj[j] * v[1][j] - pad0[j], s = v[0][j];

			lo[j] = base >= 0 ? 0 : (-base + s - 1) / s;
			hi[j] = out[j] - 1 - base < 0 ? -1 : (out[j] - 1 - base) / s;
			if (hi[j] > in[j] - 1)
				hi[j] = in[j] - 1;
			empty |= lo[j] > hi[j];
			oa = oa * out[j] + lo[j] * s + base;
			ob = ob * in[j] + lo[j];
		}
		if (empty)
			continue;
		shape[0] = N;
		shape[1] = OC;
		gop_tl_init(&l, VNPU_OP_T_ADD, 5, shape);
		l.sa[0] = (uint64_t)(OC * O);
		l.sa[1] = (uint64_t)O;
		l.sa[2] = (uint64_t)(v[0][0] * out[1] * out[2]);
		l.sa[3] = (uint64_t)(v[0][1] * out[2]);
		l.sa[4] = (uint64_t)v[0][2];
		l.sb[0] = (uint64_t)(OC * KK * HW);
		l.sb[1] = (uint64_t)(KK * HW);
		l.sb[2] = (uint64_t)(in[1] * in[2]);
		l.sb[3] = (uint64_t)in[2];
		l.sb[4] = 1;
		for (int j = 0; j < 3; j++)
			l.shape[2 + j] = hi[j] - lo[j] + 1;
		memcpy(l.sc, l.sa, sizeof(l.sc));
		l.oa = (uint64_t)oa;
		l.oc = l.oa;
		l.ob = (uint64_t)(kk * HW + ob);
		l.ta = n->out[0];
		l.tb = z;
		l.tc = n->out[0];
		status = gop_tl_emit(b, n, &l);
	}
	return status;
}

/*
 * BatchNormalization in training mode (operator set 14): the batch mean m
 * and population variance v per channel (T_REDUCE_MEAN over the view
 * [N, C, D] of x and of its squared differences), T_BATCHNORM of @l with
 * them, and the running statistics input * momentum + batch * (1 -
 * momentum) as outputs 1 and 2 when the model uses them.
 */
static int batchnorm_training(struct gbuild *b, struct gnode *n, struct tlaunch *l)
{
	const struct gtensor *x = gop_in(b, n, 0);
	float momentum = gop_attr_float(n, "momentum", 0.9f);
	int64_t shape[3] = { x->dims[0], x->dims[1], (int64_t)gop_prod(x->dims, 2, x->rank) };
	int64_t C = x->dims[1];
	uint64_t full[3], per_c[3] = { 0, 1, 0 }, one = 1, zero = 0, count = x->count;
	int m, v, d, k_mom, k_rest, status;

	gop_dense(shape, 3, full);
	if ((status = gop_scratch(b, n, (uint64_t)C, &m)) ||
	    (status = gop_scratch(b, n, (uint64_t)C, &v)) ||
	    (status = gop_scratch(b, n, count, &d)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_REDUCE_MEAN, 3, shape, 5, n->in[0], full, -1,
				    NULL, m, per_c)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_SUB, 3, shape, 0, n->in[0], full, m, per_c, d,
				    full)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_MUL, 3, shape, 0, d, full, d, full, d, full)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_REDUCE_MEAN, 3, shape, 5, d, full, -1, NULL, v,
				    per_c)))
		return status;
	l->norm[2] = m;
	l->norm[3] = v;
	status = gop_tl_emit(b, n, l);
	if (status == VNPU_SUCCESS)
		status = gop_scalar(b, n, momentum, &k_mom);
	if (status == VNPU_SUCCESS)
		status = gop_scalar(b, n, 1.0f - momentum, &k_rest);
	for (size_t o = 1; o < 3 && o < n->num_out && status == VNPU_SUCCESS; o++) {
		int batch = o == 1 ? m : v, y = n->out[o];

		if (y < 0)
			continue;
		if ((status = gop_set_out(b, n, o, 1, &C)) ||
		    (status = gop_launch_nd(b, n, VNPU_OP_T_MUL, 1, &C, 0, batch, &one, k_rest, &zero,
					    batch, &one)) ||
		    (status = gop_launch_nd(b, n, VNPU_OP_T_MUL, 1, &C, 0, n->in[2 + o], &one, k_mom,
					    &zero, y, &one)))
			return status;
		status = gop_launch_nd(b, n, VNPU_OP_T_ADD, 1, &C, 0, y, &one, batch, &one, y, &one);
	}
	return status;
}

static int op_batchnorm(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "epsilon", "momentum", "training_mode", "spatial",
					       NULL };
	struct tlaunch l;
	struct gtensor *x;
	int status;

	int training = gop_attr_int(n, "training_mode", 0) != 0;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 5, 5)) ||
	    (!training && (status = gop_single_output(n))))
		return status;
	for (size_t j = 0; j < 5; j++)
		if ((status = gop_need_float(b, n, j)))
			return status;
	if (training && (b->opset < 14 || n->num_out > 3))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "training mode only as operator set 14 defines it (3 outputs)");
	if (!gop_attr_int(n, "spatial", 1))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "attribute 'spatial' = 0 not supported");
	x = gop_in(b, n, 0);
	if (x->rank < 2)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input of rank %u", x->rank);
	for (size_t j = 1; j < 5; j++)
		if (gop_in(b, n, j)->rank != 1 || gop_in(b, n, j)->dims[0] != x->dims[1])
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input %zu must be a vector of %lld",
					 j, (long long)x->dims[1]);
	status = gop_set_out(b, n, 0, x->rank, x->dims);
	if (status != VNPU_SUCCESS)
		return status;
	gop_tl_init(&l, VNPU_OP_T_BATCHNORM, x->rank, x->dims);
	gop_dense(x->dims, x->rank, l.sa);
	gop_dense(x->dims, x->rank, l.sc);
	l.ta = n->in[0];
	l.tc = n->out[0];
	for (int i = 0; i < 4; i++)
		l.norm[i] = n->in[1 + i];
	l.epsilon = gop_attr_float(n, "epsilon", 1e-5f);
	l.norm_axis = 1;
	if (training)
		return batchnorm_training(b, n, &l);
	return gop_tl_emit(b, n, &l);
}

static int op_gemm(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "alpha", "beta", "transA", "transB", NULL };
	struct gtensor *a, *w, *c;
	uint64_t M, K, N, K2;
	int64_t dims[2];
	float alpha, beta;
	int ta, tb, status;

	status = gop_check_float_op(b, n, allowed, 2, 3);
	if (status)
		return status;
	a = gop_in(b, n, 0);
	w = gop_in(b, n, 1);
	c = gop_in(b, n, 2);
	ta = gop_attr_int(n, "transA", 0) != 0;
	tb = gop_attr_int(n, "transB", 0) != 0;
	alpha = gop_attr_float(n, "alpha", 1.0f);
	beta = gop_attr_float(n, "beta", 1.0f);
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
	status = gop_set_out(b, n, 0, 2, dims);
	if (status != VNPU_SUCCESS)
		return status;
	if (!c || beta == 0.0f)
		return gop_launch(b, n, VNPU_OP_GEMM, (ta ? VNPU_GEMM_TRANS_A : 0) |
			      (tb ? VNPU_GEMM_TRANS_B : 0), M, N, K, alpha, 0.0f, n->in[0], 0,
			      n->in[1], 0, n->out[0], 0);
	{
		uint32_t r;
		int64_t bd[VNPU_HOST_TENSOR_MAX_RANK];
		struct gtensor y = { .rank = 2, .dims = { (int64_t)M, (int64_t)N } };

		status = gop_broadcast_shape(n, &y, c, &r, bd);
		if (status != VNPU_SUCCESS)
			return status;
		if (r != 2 || bd[0] != (int64_t)M || bd[1] != (int64_t)N)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "C does not broadcast to the output");
	}
	/* Y = C broadcast (a device copy), then Y = alpha A B + beta Y. */
	{
		struct tlaunch l;
		int64_t yd[2] = { (int64_t)M, (int64_t)N };

		gop_tl_init(&l, VNPU_OP_T_COPY, 2, yd);
		gop_bcast(c, 2, yd, l.sa);
		gop_dense(yd, 2, l.sc);
		l.ta = n->in[2];
		l.tc = n->out[0];
		status = gop_tl_emit(b, n, &l);
	}
	if (status == VNPU_SUCCESS)
		status = gop_launch(b, n, VNPU_OP_GEMM, (ta ? VNPU_GEMM_TRANS_A : 0) |
				(tb ? VNPU_GEMM_TRANS_B : 0), M, N, K, alpha, beta, n->in[0], 0,
				n->in[1], 0, n->out[0], 0);
	return status;
}

int gop_matmul(struct gbuild *b, struct gnode *n)
{
	int64_t ad[VNPU_HOST_TENSOR_MAX_RANK], bd[VNPU_HOST_TENSOR_MAX_RANK], od[VNPU_HOST_TENSOR_MAX_RANK];
	int64_t batch[VNPU_HOST_TENSOR_MAX_RANK];
	struct gtensor *a, *w;
	uint32_t ar, br, nb = 0, orank = 0;
	uint64_t M, K, N, batches = 1;
	int status;

	status = gop_check_float_op(b, n, NULL, 2, 2);
	if (status)
		return status;
	a = gop_in(b, n, 0);
	w = gop_in(b, n, 1);
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
		status = gop_broadcast_shape(n, &ab, &bb, &nb, batch);
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
	status = gop_set_out(b, n, 0, orank, od);
	if (status != VNPU_SUCCESS)
		return status;
	/* B shared by every batch: fold the batch into the rows of A. */
	if (br == 2)
		return gop_launch(b, n, VNPU_OP_GEMM, 0, batches * M, N, K, 1.0f, 0.0f, n->in[0], 0,
			      n->in[1], 0, n->out[0], 0);
	{
		struct gtensor ab = { .rank = ar - 2 }, bb = { .rank = br - 2 };

		memcpy(ab.dims, ad, (ar - 2) * sizeof(*ad));
		memcpy(bb.dims, bd, (br - 2) * sizeof(*bd));
		return matmul_dot(b, n, nb, batch, &ab, &bb, M, N, K);
	}
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

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 2, 2)) ||
	    (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	shape = gop_const_ints(b, n, 1, &count);
	if (!shape)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "the shape must be a constant int64 tensor");
	if (count > VNPU_HOST_TENSOR_MAX_RANK)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "more than %d dimensions",
				 VNPU_HOST_TENSOR_MAX_RANK);
	for (size_t i = 0; i < count; i++) {
		if (shape[i] == 0 && !gop_attr_int(n, "allowzero", 0)) {
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
	return gop_set_alias(b, n, n->in[0], (uint32_t)count, dims);
}

static int op_flatten(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axis", NULL };
	struct gtensor *x;
	int64_t axis, dims[2];
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	axis = gop_attr_int(n, "axis", 1);
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > (int64_t)x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis out of range");
	dims[0] = (int64_t)gop_prod(x->dims, 0, (uint32_t)axis);
	dims[1] = (int64_t)gop_prod(x->dims, (uint32_t)axis, x->rank);
	return gop_set_alias(b, n, n->in[0], 2, dims);
}

static int op_squeeze(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axes", NULL };
	int64_t axes[VNPU_HOST_TENSOR_MAX_RANK], sorted[VNPU_HOST_TENSOR_MAX_RANK], dims[VNPU_HOST_TENSOR_MAX_RANK];
	struct gtensor *x;
	size_t count;
	uint32_t rank = 0;
	int given, status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 2)) ||
	    (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	status = gop_get_axes(b, n, 13, axes, &count, &given);
	if (status == VNPU_SUCCESS)
		status = gop_norm_axes(n, axes, count, x->rank, sorted);
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
	return gop_set_alias(b, n, n->in[0], rank, dims);
}

static int op_unsqueeze(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axes", NULL };
	int64_t axes[VNPU_HOST_TENSOR_MAX_RANK], sorted[VNPU_HOST_TENSOR_MAX_RANK], dims[VNPU_HOST_TENSOR_MAX_RANK];
	struct gtensor *x;
	size_t count;
	uint32_t rank, k = 0;
	int given, status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 2)) ||
	    (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	status = gop_get_axes(b, n, 13, axes, &count, &given);
	if (status != VNPU_SUCCESS)
		return status;
	if (!given || !count)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "no axes");
	rank = x->rank + (uint32_t)count;
	if (rank > VNPU_HOST_TENSOR_MAX_RANK)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "more than %d dimensions",
				 VNPU_HOST_TENSOR_MAX_RANK);
	status = gop_norm_axes(n, axes, count, rank, sorted);
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
	return gop_set_alias(b, n, n->in[0], rank, dims);
}

static int op_identity(struct gbuild *b, struct gnode *n)
{
	struct gtensor *x;
	int status;

	if ((status = gop_check_attrs(n, NULL)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	return gop_set_alias(b, n, n->in[0], x->rank, x->dims);
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

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_single_output(n)))
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

static const struct gop_map core_ops[] = {
	{ "Add", op_binary_t, 7 }, { "Sub", op_binary_t, 7 }, { "Mul", op_binary_t, 7 },
	{ "Div", op_binary_t, 7 },
	{ "Relu", op_unary_t, 7 }, { "Exp", op_unary_t, 7 }, { "Sigmoid", op_unary_t, 7 },
	{ "Tanh", op_unary_t, 7 }, { "Log", op_unary_t, 6 }, { "Floor", op_unary_t, 6 },
	{ "Ceil", op_unary_t, 6 }, { "Round", op_unary_t, 11 }, { "Sin", op_unary_t, 7 },
	{ "Cos", op_unary_t, 7 }, { "Tan", op_unary_t, 7 }, { "Asin", op_unary_t, 7 },
	{ "Acos", op_unary_t, 7 }, { "Atan", op_unary_t, 7 }, { "Sinh", op_unary_t, 9 },
	{ "Cosh", op_unary_t, 9 }, { "Asinh", op_unary_t, 9 }, { "Acosh", op_unary_t, 9 },
	{ "Atanh", op_unary_t, 9 },
	{ "Softmax", op_softmax_t, 7 }, { "LogSoftmax", op_softmax_t, 1 },
	{ "Hardmax", op_softmax_t, 1 },
	{ "ReduceSum", op_reduce_t, 7 }, { "ReduceMean", op_reduce_t, 7 },
	{ "ReduceMax", op_reduce_t, 7 }, { "ReduceProd", op_reduce_t, 1 },
	{ "Gemm", op_gemm, 7 }, { "MatMul", gop_matmul, 7 }, { "Transpose", op_transpose, 1 },
	{ "Reshape", op_reshape, 7 }, { "Flatten", op_flatten, 7 }, { "Squeeze", op_squeeze, 7 },
	{ "Unsqueeze", op_unsqueeze, 7 }, { "Identity", op_identity, 1 },
	{ "Constant", op_constant, 7 },
	{ "Conv", gop_conv, 7 }, { "ConvTranspose", op_conv_transpose, 1 }, { "MaxPool", op_pool, 7 }, { "AveragePool", op_pool, 7 },
	{ "GlobalAveragePool", op_global_pool, 1 }, { "GlobalMaxPool", op_global_pool, 1 },
	{ "BatchNormalization", op_batchnorm, 7 },
	{ NULL, NULL, 0 },
};

int graph_map_node(struct gbuild *b, struct gnode *n)
{
	static const struct gop_map *const tables[] = { core_ops, gop_data_ops, gop_math_ops,
								gop_rnn_ops, gop_quant_ops, gop_loss_ops,
								gop_logic_ops, gop_einsum_ops };
	int folded, status;

	status = graph_fold_node(b, n, &folded);
	if (status != VNPU_SUCCESS || folded)
		return status;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct gop_map *op = tables[t]; op->name; op++) {
			if (strcmp(op->name, n->np->op_type))
				continue;
			if (b->opset < op->first_opset)
				return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
						 "operator set %lld not supported for this operator (%lld to 17 are)",
						 (long long)b->opset, (long long)op->first_opset);
			return op->map(b, n);
		}
	return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "operator not supported");
}
