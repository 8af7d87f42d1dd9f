// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * ONNX operators that select elements by int64 indices: GatherElements
 * and the losses over class scores (their targets constants of the graph).
 *
 *   GatherElements  y[i] = x[i with i[axis] replaced by indices[i]]; with
 *       indices given at run (or data that is not float), one T_GATHER
 *       (uAPI 1.7) over the indices' shape
 *
 *   NegativeLogLikelihoodLoss  loss[n][d] = -input[n][t][d] * weight[t],
 *       t = target[n][d]; 0 where t is ignore_index; then the reduction
 *       ('none', 'sum', or 'mean': the sum divided by the sum of the
 *       weights of the targets not ignored)
 *   SoftmaxCrossEntropyLoss    the same over LogSoftmax(scores) along the
 *       class axis, which is its second output log_prob
 *
 * A constant one-hot tensor H of constant indices turns each selection
 * into one T_DOT over the selected axis: exact, except that a non-finite
 * value at a position not selected makes NaN (0 times inf).
 *
 * For the losses, the input is seen as [N, C, D] (D the product of the trailing
 * dimensions). The targets become, at load, a constant one-hot tensor H of
 * that shape: 1 at [n][t][d], 0 elsewhere and where ignored. One T_DOT
 * over C of the input with H picks input[n][t][d] exactly (the other
 * products are zeros; a non-finite input at another class makes NaN); a
 * second T_DOT of the weights with H picks weight[t] (0 where ignored),
 * which the picked values are multiplied by and whose sum divides the
 * 'mean'. The sign comes last (T_SUB from 0).
 */
#include <stdlib.h>
#include <string.h>

#include "graph_ops.h"

/* C = A op B over @count elements; A is broadcast (one scalar) with @a_scalar. */
static int flat_op(struct gbuild *b, const struct gnode *n, enum vnpu_op op, int64_t count,
		   int ta, int a_scalar, int tb, int tc)
{
	uint64_t one = 1, zero = 0;

	return gop_launch_nd(b, n, op, 1, &count, 0, ta, a_scalar ? &zero : &one, tb, &one, tc,
			     &one);
}

/* The constant one-hot tensor H of the targets, [N, C, D]; counts the kept ones. */
static int one_hot(struct gbuild *b, const struct gnode *n, const int64_t *target, int64_t N,
		   int64_t C, int64_t D, int *id, uint64_t *kept)
{
	int has_ii = gop_attr(n, "ignore_index") != NULL;
	int64_t ii = gop_attr_int(n, "ignore_index", 0), shape[3] = { N, C, D };
	char name[64];
	float *h;
	int status;

	h = calloc((size_t)(N * C * D) + 1, sizeof(*h));
	if (!h)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	*kept = 0;
	for (int64_t i = 0; i < N; i++)
		for (int64_t d = 0; d < D; d++) {
			int64_t c = target[i * D + d];

			if (has_ii && c == ii)
				continue;
			if (c < 0 || c >= C) {
				free(h);
				return node_fail(n, VNPU_ERROR_INVALID_MODEL,
						 "target %lld outside [0, %lld)", (long long)c,
						 (long long)C);
			}
			h[(i * C + c) * D + d] = 1.0f;
			(*kept)++;
		}
	snprintf(name, sizeof(name), "\x01onehot.%d.%zu", n->index, b->num_tensors);
	status = gb_add_weight(b, name, VNPU_DTYPE_FLOAT, 3, shape, h, id);
	free(h);
	return status;
}

/*
 * The loss of the log-probabilities @logp (of the shape of input 0 of @n)
 * against the constant targets of input 1 and the optional weights of
 * input 2, into output 0.
 */
static int nll(struct gbuild *b, struct gnode *n, int logp)
{
	const struct gtensor *x = gop_in(b, n, 0), *t = gop_in(b, n, 1), *w = gop_in(b, n, 2);
	int64_t out[MAX_RANK], shape[3], N, C, D;
	uint64_t sx[3], sw[3] = { 0, 1, 0 }, sl[3], kept;
	const int64_t *target;
	uint32_t out_rank = 0;
	char red[16];
	size_t count;
	int h, g, wg = -1, den, zero, status, mode;

	if (!gop_attr(n, "reduction"))
		strcpy(red, "mean");
	else
		gop_attr_str(n, "reduction", red, sizeof(red));
	mode = !strcmp(red, "none") ? 0 : !strcmp(red, "sum") ? 1 : !strcmp(red, "mean") ? 2 : -1;
	if (mode < 0)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "reduction '%s' is not none, sum or mean",
				 red);
	if (x->rank < 2)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input of rank %u, at least 2 expected",
				 x->rank);
	if (t->dtype != VNPU_DTYPE_INT64)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "target of element type %d (int64 is)",
				 t->dtype);
	target = gop_const_ints(b, n, 1, &count);
	if (!target)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "the target must be constant (an initializer or given at load)");
	if (t->rank != x->rank - 1 || t->dims[0] != x->dims[0] ||
	    memcmp(t->dims + 1, x->dims + 2, (x->rank - 2) * sizeof(*t->dims)))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "target shape does not match the input without its class axis");
	N = x->dims[0];
	C = x->dims[1];
	D = (int64_t)gop_prod(x->dims, 2, x->rank);
	if (w && (w->rank != 1 || w->dims[0] != C))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "weight must be a vector of %lld",
				 (long long)C);
	/* Output: [N, d...] for 'none', a scalar otherwise. */
	if (!mode) {
		out[out_rank++] = N;
		for (uint32_t i = 2; i < x->rank; i++)
			out[out_rank++] = x->dims[i];
	}
	status = gop_set_out(b, n, 0, out_rank, out);
	if (status == VNPU_SUCCESS)
		status = one_hot(b, n, target, N, C, D, &h, &kept);
	if (status == VNPU_SUCCESS)
		status = gop_scalar(b, n, 0.0f, &zero);
	if (status != VNPU_SUCCESS)
		return status;

	shape[0] = N;
	shape[1] = C;
	shape[2] = D;
	gop_dense(shape, 3, sx);
	sl[0] = (uint64_t)D;
	sl[1] = 0;
	sl[2] = 1;
	/* g = x[n][t][d] (0 where ignored), weighted by wg = weight[t]. */
	g = n->out[0];
	if (mode && (status = gop_scratch(b, n, (uint64_t)(N * D), &g)))
		return status;
	status = gop_launch_nd(b, n, VNPU_OP_T_DOT, 3, shape, 2, logp, sx, h, sx, g, sl);
	if (status == VNPU_SUCCESS && w) {
		if ((status = gop_scratch(b, n, (uint64_t)(N * D), &wg)) ||
		    (status = gop_launch_nd(b, n, VNPU_OP_T_DOT, 3, shape, 2, n->in[2], sw, h, sx, wg, sl)))
			return status;
		status = flat_op(b, n, VNPU_OP_T_MUL, N * D, g, 0, wg, g);
	}
	if (status != VNPU_SUCCESS || !mode)
		return status ?: flat_op(b, n, VNPU_OP_T_SUB, N * D, zero, 1, g, g);

	/* The sum, divided for 'mean' by the weights' sum or the kept count. */
	{
		int64_t one = 1, all = N * D;
		uint64_t dense = 1, none = 0;

		status = gop_launch_nd(b, n, VNPU_OP_T_REDUCE_SUM, 1, &all, 1, g, &dense, -1, NULL,
				n->out[0], &none);
		if (status == VNPU_SUCCESS && mode == 2) {
			if (w) {
				status = gop_scratch(b, n, 1, &den);
				if (status == VNPU_SUCCESS)
					status = gop_launch_nd(b, n, VNPU_OP_T_REDUCE_SUM, 1, &all, 1, wg,
							&dense, -1, NULL, den, &none);
			} else {
				status = gop_scalar(b, n, (float)kept, &den);
			}
			if (status == VNPU_SUCCESS)
				status = flat_op(b, n, VNPU_OP_T_DIV, one, n->out[0], 0, den,
						 n->out[0]);
		}
	}
	return status ?: flat_op(b, n, VNPU_OP_T_SUB, 1, zero, 1, n->out[0], n->out[0]);
}

static int op_nll(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "reduction", "ignore_index", NULL };
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 2, 3)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)) ||
	    (gop_in(b, n, 2) && (status = gop_need_float(b, n, 2))))
		return status;
	return nll(b, n, n->in[0]);
}

/* SoftmaxCrossEntropyLoss: LogSoftmax over the class axis, then the loss. */
static int op_sce(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "reduction", "ignore_index", NULL };
	const struct gtensor *x;
	int64_t shape[3];
	int logp, status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 2, 3)) ||
	    (status = gop_need_float(b, n, 0)) ||
	    (gop_in(b, n, 2) && (status = gop_need_float(b, n, 2))))
		return status;
	if (n->num_out > 2)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "%zu outputs, at most 2 expected",
				 n->num_out);
	x = gop_in(b, n, 0);
	if (x->rank < 2)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input of rank %u, at least 2 expected",
				 x->rank);
	shape[0] = x->dims[0];
	shape[1] = x->dims[1];
	shape[2] = (int64_t)gop_prod(x->dims, 2, x->rank);
	/* log_prob: the second output when the model uses it, else a scratch tensor. */
	if (n->num_out > 1 && n->out[1] >= 0) {
		logp = n->out[1];
		status = gop_set_out(b, n, 1, x->rank, x->dims);
	} else {
		status = gop_scratch(b, n, x->count, &logp);
	}
	if (status == VNPU_SUCCESS)
		status = gop_log_softmax(b, n, n->in[0], logp, 3, shape, 2);
	return status ?: nll(b, n, logp);
}

/*
 * GatherElements at indices given at run: one T_GATHER over the indices'
 * shape, A strided as the data; an index out of range fails the run.
 */
static int gather_elements_at_run(struct gbuild *b, struct gnode *n, uint32_t axis)
{
	const struct gtensor *x = gop_in(b, n, 0), *ind = gop_in(b, n, 1);
	struct tlaunch l;
	int status;

	if (x->dims[axis] > MAX_DIM)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "an axis of more than %u elements",
				 MAX_DIM);
	gop_tl_init(&l, VNPU_OP_T_GATHER, ind->rank, ind->dims);
	l.axes = 1u << axis;
	l.k = (uint32_t)x->dims[axis];
	gop_dense(x->dims, x->rank, l.sa);
	gop_dense(ind->dims, ind->rank, l.sb);
	gop_dense(ind->dims, ind->rank, l.sc);
	l.ta = n->in[0];
	l.tb = n->in[1];
	l.tc = n->out[0];
	status = gop_tl_emit(b, n, &l);
	return status;
}

/*
 * GatherElements: y[i] = x[i with i[axis] replaced by indices[i]]. With
 * constant indices, as one T_DOT over a last dimension of the data's size
 * along the axis, with the constant one-hot H[i][c] = (c == indices[i]);
 * with indices given at run, one T_GATHER.
 */
static int op_gather_elements(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axis", NULL };
	int64_t axis = gop_attr_int(n, "axis", 0), shape[MAX_RANK + 1], C;
	uint64_t sx[MAX_RANK], sa[MAX_RANK + 1], sh[MAX_RANK + 1], sc[MAX_RANK + 1];
	const struct gtensor *x, *ind;
	const int64_t *idx;
	char name[64];
	size_t count;
	uint32_t r;
	float *h;
	int hid, status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 2, 2)) ||
	    (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	ind = gop_in(b, n, 1);
	r = x->rank;
	if (!r || axis < -(int64_t)r || axis >= (int64_t)r)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis %lld out of range for rank %u",
				 (long long)axis, r);
	if (axis < 0)
		axis += r;
	if (ind->rank != r)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "indices of rank %u, the data's is %u",
				 ind->rank, r);
	for (uint32_t d = 0; d < r; d++)
		if (d != axis && ind->dims[d] > x->dims[d])
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "indices dimension %u is %lld, above the data's %lld", d,
					 (long long)ind->dims[d], (long long)x->dims[d]);
	idx = gop_const_ints(b, n, 1, &count);
	if (!idx || !gb_is_float(x->dtype)) {
		int64_t dims[MAX_RANK];

		memcpy(dims, ind->dims, sizeof(dims));
		status = gop_need_run_indices(b, n);
		if (status == VNPU_SUCCESS)
			status = gop_set_out(b, n, 0, r, dims);
		if (status == VNPU_SUCCESS)
			gb_set_shape(&b->tensors[n->out[0]], gop_in(b, n, 0)->dtype, r, dims);
		return status ?: gather_elements_at_run(b, n, (uint32_t)axis);
	}
	if ((status = gop_need_float(b, n, 0)))
		return status;
	if (r + 1 > MAX_RANK)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "data of more than %d dimensions",
				 MAX_RANK - 1);
	C = x->dims[axis];
	status = gop_set_out(b, n, 0, r, ind->dims);
	if (status != VNPU_SUCCESS)
		return status;
	if (!count)
		return VNPU_SUCCESS;
	h = calloc(count * (size_t)C, sizeof(*h));
	if (!h)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (size_t i = 0; i < count; i++) {
		int64_t v = idx[i] < 0 ? idx[i] + C : idx[i];

		if (v < 0 || v >= C) {
			free(h);
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "index %lld out of range %lld..%lld",
					 (long long)idx[i], (long long)-C, (long long)C - 1);
		}
		h[i * C + v] = 1.0f;
	}
	ind = gop_in(b, n, 1);
	memcpy(shape, ind->dims, r * sizeof(*shape));
	shape[r] = C;
	snprintf(name, sizeof(name), "\x01onehot.%d.%zu", n->index, b->num_tensors);
	status = gb_add_weight(b, name, VNPU_DTYPE_FLOAT, r + 1, shape, h, &hid);
	free(h);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	gop_dense(x->dims, r, sx);
	memcpy(sa, sx, r * sizeof(*sa));
	sa[axis] = 0;
	sa[r] = sx[axis];
	gop_dense(shape, r + 1, sh);
	gop_dense(shape, r, sc);
	sc[r] = 0;
	return gop_launch_nd(b, n, VNPU_OP_T_DOT, r + 1, shape, 1u << r, n->in[0], sa, hid, sh,
			     n->out[0], sc);
}

const struct gop_map gop_loss_ops[] = {
	{ "NegativeLogLikelihoodLoss", op_nll, 12 }, { "SoftmaxCrossEntropyLoss", op_sce, 12 },
	{ "GatherElements", op_gather_elements, 11 },
	{ NULL, NULL, 0 },
};
