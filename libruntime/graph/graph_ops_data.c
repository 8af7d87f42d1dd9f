// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * ONNX operators that move data: Concat, Split, Slice, Gather, Pad,
 * Expand, Tile, DepthToSpace, SpaceToDepth, Trilu, nearest Resize and
 * Upsample, Dropout where it is a view (its mask a constant), Cast and
 * CastLike (a view, a converting copy, or for the integer and bool
 * results the elementwise operators) and EyeLike (a constant).
 * Each but Cast is one or more T_COPY launches with the strides and
 * offsets that select, repeat or place the elements; pads and repeats are
 * constants of the graph (folded or given at load), and so are Gather's
 * indices unless given at run: then (or for constant indices in more than
 * 4096 runs) Gather is one T_GATHER (uAPI 1.7), which reads them on the
 * device.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_ops.h"

/* Copies the @rank-d window @shape of A (offset, strides) into C. */
int gop_copy(struct gbuild *b, const struct gnode *n, uint32_t rank, const int64_t *shape,
	     int ta, uint64_t oa, const uint64_t *sa, int tc, uint64_t oc, const uint64_t *sc)
{
	struct tlaunch l;

	for (uint32_t i = 0; i < rank; i++)
		if (!shape[i])
			return VNPU_SUCCESS;
	gop_tl_init(&l, VNPU_OP_T_COPY, rank, shape);
	memcpy(l.sa, sa, rank * sizeof(*sa));
	memcpy(l.sc, sc, rank * sizeof(*sc));
	l.ta = ta;
	l.oa = oa;
	l.tc = tc;
	l.oc = oc;
	return gop_tl_emit(b, n, &l);
}

/* Fills output 0 with the scalar tensor @value (stride 0 everywhere). */
static int fill(struct gbuild *b, const struct gnode *n, int value)
{
	struct gtensor *y = &b->tensors[n->out[0]];
	uint64_t zero[MAX_RANK] = { 0 }, sc[MAX_RANK];

	gop_dense(y->dims, y->rank, sc);
	return gop_copy(b, n, y->rank, y->dims, value, 0, zero, n->out[0], 0, sc);
}

static int axis_of(const struct gnode *n, int64_t axis, uint32_t rank, uint32_t *out)
{
	if (axis < -(int64_t)rank || axis >= (int64_t)rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "axis %lld out of range for rank %u",
				 (long long)axis, rank);
	*out = (uint32_t)(axis < 0 ? axis + rank : axis);
	return VNPU_SUCCESS;
}

static int op_concat(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axis", NULL };
	const Onnx__AttributeProto *a = gop_attr(n, "axis");
	int64_t dims[MAX_RANK];
	uint64_t sa[MAX_RANK], sc[MAX_RANK], off = 0;
	struct gtensor *x;
	uint32_t axis = 0;
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, GNODE_MAX_INPUTS)) ||
	    (status = gop_single_output(n)))
		return status;
	if (!a && b->opset >= 4)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "attribute 'axis' missing");
	x = gop_in(b, n, 0);
	status = axis_of(n, a ? a->i : 1, x->rank, &axis);
	if (status != VNPU_SUCCESS)
		return status;
	memcpy(dims, x->dims, sizeof(dims));
	dims[axis] = 0;
	for (size_t j = 0; j < n->num_in; j++) {
		struct gtensor *t = gop_in(b, n, j);

		if (!t)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input %zu missing", j);
		if ((status = gop_need_movable(b, n, j)))
			return status;
		if (t->rank != x->rank)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "inputs of ranks %u and %u",
					 x->rank, t->rank);
		for (uint32_t d = 0; d < x->rank; d++)
			if (d != axis && t->dims[d] != x->dims[d])
				return node_fail(n, VNPU_ERROR_INVALID_MODEL,
						 "input %zu differs in dimension %u", j, d);
		dims[axis] += t->dims[axis];
	}
	status = gop_set_out(b, n, 0, x->rank, dims);
	gop_dense(dims, x->rank, sc);
	for (size_t j = 0; j < n->num_in && status == VNPU_SUCCESS; j++) {
		struct gtensor *t = gop_in(b, n, j);

		gop_dense(t->dims, t->rank, sa);
		status = gop_copy(b, n, t->rank, t->dims, n->in[j], 0, sa, n->out[0],
				  off * sc[axis], sc);
		off += (uint64_t)t->dims[axis];
	}
	return status;
}

static int op_split(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axis", "split", NULL };
	const Onnx__AttributeProto *a = gop_attr(n, "split");
	int64_t sizes[4], dims[MAX_RANK], total = 0;
	uint64_t sa[MAX_RANK], sc[MAX_RANK], off = 0;
	const int64_t *given = NULL;
	size_t count = 0;
	struct gtensor *x;
	uint32_t axis = 0;
	int status;

	if ((status = gop_check_attrs(n, allowed)) ||
	    (status = gop_need_inputs(n, 1, b->opset >= 13 ? 2 : 1)) ||
	    (status = gop_need_movable(b, n, 0)))
		return status;
	x = gop_in(b, n, 0);
	status = axis_of(n, gop_attr_int(n, "axis", 0), x->rank, &axis);
	if (status != VNPU_SUCCESS)
		return status;
	if (b->opset >= 13 && gop_in(b, n, 1)) {
		given = gop_const_ints(b, n, 1, &count);
		if (!given)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "split must be a constant int64 tensor");
	} else if (a) {
		given = a->ints;
		count = a->n_ints;
	}
	if (given && count != n->num_out)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "%zu sizes for %zu outputs", count,
				 n->num_out);
	for (size_t o = 0; o < n->num_out; o++) {
		sizes[o] = given ? given[o] : x->dims[axis] / (int64_t)n->num_out;
		if (sizes[o] < 0)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "negative split");
		total += sizes[o];
	}
	if (total != x->dims[axis])
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "splits of %lld elements for %lld",
				 (long long)total, (long long)x->dims[axis]);
	gop_dense(x->dims, x->rank, sa);
	for (size_t o = 0; o < n->num_out; o++) {
		if (n->out[o] < 0) {
			off += (uint64_t)sizes[o];
			continue;
		}
		memcpy(dims, x->dims, sizeof(dims));
		dims[axis] = sizes[o];
		status = gop_set_out(b, n, o, x->rank, dims);
		if (status != VNPU_SUCCESS)
			return status;
		gop_dense(dims, x->rank, sc);
		status = gop_copy(b, n, x->rank, dims, n->in[0], off * sa[axis], sa, n->out[o], 0, sc);
		if (status != VNPU_SUCCESS)
			return status;
		off += (uint64_t)sizes[o];
	}
	return VNPU_SUCCESS;
}

/* starts, ends, axes, steps of Slice: attributes before opset 10, then inputs. */
static int slice_params(struct gbuild *b, const struct gnode *n, const int64_t **v, size_t *c)
{
	static const char *const names[] = { "starts", "ends", "axes" };

	memset(c, 0, 4 * sizeof(*c));
	for (int i = 0; i < 4; i++) {
		v[i] = NULL;
		if (b->opset < 10 && i < 3) {
			const Onnx__AttributeProto *a = gop_attr(n, names[i]);

			if (a) {
				v[i] = a->ints;
				c[i] = a->n_ints;
			}
		} else if (b->opset >= 10 && gop_in(b, n, 1 + i)) {
			v[i] = gop_const_ints(b, n, 1 + i, &c[i]);
			if (!v[i])
				return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
						 "starts, ends, axes and steps must be constant int64 tensors");
		}
	}
	if (!v[0] || !v[1] || c[0] != c[1] || (v[2] && c[2] != c[0]) || (v[3] && c[3] != c[0]))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "starts, ends, axes and steps differ in length");
	return VNPU_SUCCESS;
}

int gop_slice_ranges(struct gbuild *b, const struct gnode *n, uint32_t rank, const int64_t *in,
		     int64_t *start, int64_t *step, int64_t *dims)
{
	const int64_t *v[4];
	size_t c[4];
	int status = slice_params(b, n, v, c);

	if (status != VNPU_SUCCESS)
		return status;
	for (uint32_t d = 0; d < rank; d++) {
		start[d] = 0;
		step[d] = 1;
		dims[d] = in[d];
	}
	for (size_t i = 0; i < c[0]; i++) {
		int64_t ax = v[2] ? v[2][i] : (int64_t)i, len, s, e, k;
		uint32_t d = 0;

		status = axis_of(n, ax, rank, &d);
		if (status != VNPU_SUCCESS)
			return status;
		len = in[d];
		k = v[3] ? v[3][i] : 1;
		if (!k)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "step 0");
		s = v[0][i] < 0 ? v[0][i] + len : v[0][i];
		e = v[1][i] < 0 ? v[1][i] + len : v[1][i];
		if (k > 0) {
			s = s < 0 ? 0 : s > len ? len : s;
			e = e < 0 ? 0 : e > len ? len : e;
			dims[d] = e > s ? (e - s + k - 1) / k : 0;
		} else {
			s = s < -1 ? -1 : s > len - 1 ? len - 1 : s;
			e = e < -1 ? -1 : e > len - 1 ? len - 1 : e;
			dims[d] = s > e ? (s - e - k - 1) / -k : 0;
		}
		start[d] = s;
		step[d] = k;
	}
	return VNPU_SUCCESS;
}

static int op_slice(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "starts", "ends", "axes", NULL };
	int64_t start[MAX_RANK], step[MAX_RANK], dims[MAX_RANK];
	uint64_t st[MAX_RANK], sa[MAX_RANK], sc[MAX_RANK], oa = 0;
	struct gtensor *x;
	int status, neg = -1;

	if ((status = gop_check_attrs(n, b->opset < 10 ? allowed : NULL)) ||
	    (status = gop_need_inputs(n, b->opset < 10 ? 1 : 3, b->opset < 10 ? 1 : 5)) ||
	    (status = gop_need_movable(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	status = gop_slice_ranges(b, n, x->rank, x->dims, start, step, dims);
	if (status != VNPU_SUCCESS)
		return status;
	for (uint32_t d = 0; d < x->rank; d++) {
		if (step[d] > 0)
			continue;
		if (neg >= 0)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "negative steps on more than one axis");
		neg = (int)d;
	}
	status = gop_set_out(b, n, 0, x->rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	gop_dense(x->dims, x->rank, st);
	gop_dense(dims, x->rank, sc);
	for (uint32_t d = 0; d < x->rank; d++) {
		oa += (uint64_t)start[d] * st[d];
		sa[d] = step[d] > 0 ? (uint64_t)step[d] * st[d] : 0;
	}
	if (neg < 0)
		return gop_copy(b, n, x->rank, dims, n->in[0], oa, sa, n->out[0], 0, sc);
	/* A negative step: one copy per output index along that axis. */
	if (dims[neg] > 4096)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "a negative step over %lld elements",
				 (long long)dims[neg]);
	{
		int64_t one[MAX_RANK];

		memcpy(one, dims, sizeof(one));
		one[neg] = 1;
		for (int64_t i = 0; i < dims[neg] && status == VNPU_SUCCESS; i++)
			status = gop_copy(b, n, x->rank, one, n->in[0],
					  oa - (uint64_t)(i * -step[neg]) * st[neg], sa, n->out[0],
					  (uint64_t)i * sc[neg], sc);
	}
	return status;
}

/* Most T_COPYs of a gather by runs; more indices go to one T_GATHER. */
#define GATHER_MAX_RUNS 4096

/* The runs of consecutive or of repeated indices in @idx. */
static size_t index_runs(const int64_t *idx, size_t count)
{
	size_t runs = 0;

	for (size_t i = 0; i < count; runs++) {
		int repeat = i + 1 < count && idx[i + 1] == idx[i];
		size_t run = 1;

		while (i + run < count && idx[i + run] == idx[i] + (repeat ? 0 : (int64_t)run))
			run++;
		i += run;
	}
	return runs;
}

/*
 * C[outer, count, inner] = A[outer, idx[j], inner], A's axis of @len
 * elements: one T_COPY per run of consecutive or of repeated indices
 * (@idx in 0..len-1).
 */
static int gather_runs(struct gbuild *b, const struct gnode *n, int ta, uint64_t outer,
		       uint64_t len, uint64_t inner, const int64_t *idx, size_t count, int tc)
{
	uint64_t sa[3], sc[3], steps = 0;
	int64_t shape[3];
	int status = VNPU_SUCCESS;

	for (size_t i = 0; i < count && status == VNPU_SUCCESS;) {
		int repeat = i + 1 < count && idx[i + 1] == idx[i];
		size_t run = 1;

		while (i + run < count && idx[i + run] == idx[i] + (repeat ? 0 : (int64_t)run))
			run++;
		if (++steps > GATHER_MAX_RUNS)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "more than %d index runs",
					 GATHER_MAX_RUNS);
		shape[0] = (int64_t)outer, shape[1] = (int64_t)run, shape[2] = (int64_t)inner;
		sa[0] = len * inner, sa[1] = repeat ? 0 : inner, sa[2] = 1;
		sc[0] = count * inner, sc[1] = inner, sc[2] = 1;
		status = gop_copy(b, n, 3, shape, ta, (uint64_t)idx[i] * inner, sa, tc, i * inner, sc);
		i += run;
	}
	return status;
}

/*
 * Gather at indices given at run: one T_GATHER over (outer, indices,
 * inner), the indices flattened into the gathered axis; an index out of
 * range fails the run (the device's -ERANGE).
 */
static int gather_at_run(struct gbuild *b, struct gnode *n, uint32_t axis)
{
	const struct gtensor *x = gop_in(b, n, 0), *ind = gop_in(b, n, 1);
	uint64_t outer = gop_prod(x->dims, 0, axis), len = (uint64_t)x->dims[axis];
	uint64_t inner = gop_prod(x->dims, axis + 1, x->rank);
	int64_t shape[3] = { (int64_t)outer, (int64_t)ind->count, (int64_t)inner };
	struct tlaunch l;

	if (len > MAX_DIM || ind->count > MAX_DIM)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "an axis or indices of more than %u elements", MAX_DIM);
	gop_tl_init(&l, VNPU_OP_T_GATHER, 3, shape);
	l.axes = 1u << 1;
	l.k = (uint32_t)len;
	l.sa[0] = len * inner, l.sa[1] = inner, l.sa[2] = 1;
	l.sb[0] = 0, l.sb[1] = 1, l.sb[2] = 0;
	l.sc[0] = ind->count * inner, l.sc[1] = inner, l.sc[2] = 1;
	l.ta = n->in[0];
	l.tb = n->in[1];
	l.tc = n->out[0];
	return gop_tl_emit(b, n, &l);
}

/* Gather: constant indices by runs of T_COPY, indices given at run by T_GATHER. */
static int op_gather(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axis", NULL };
	int64_t dims[MAX_RANK], *norm;
	const int64_t *idx;
	struct gtensor *x, *ind;
	uint32_t axis = 0, rank = 0;
	size_t count;
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 2, 2)) ||
	    (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	ind = gop_in(b, n, 1);
	status = axis_of(n, gop_attr_int(n, "axis", 0), x->rank, &axis);
	if (status != VNPU_SUCCESS)
		return status;
	if (x->rank + ind->rank - 1 > MAX_RANK)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "output of more than %d dimensions",
				 MAX_RANK);
	for (uint32_t d = 0; d < x->rank; d++) {
		if (d == axis)
			for (uint32_t e = 0; e < ind->rank; e++)
				dims[rank++] = ind->dims[e];
		else
			dims[rank++] = x->dims[d];
	}
	idx = gop_const_ints(b, n, 1, &count);
	if (!idx || x->dtype == VNPU_DTYPE_INT64) {
		status = gop_need_run_indices(b, n);
		if (status == VNPU_SUCCESS)
			status = gop_set_out(b, n, 0, rank, dims);
		if (status == VNPU_SUCCESS)
			gb_set_shape(&b->tensors[n->out[0]], gop_in(b, n, 0)->dtype, rank, dims);
		return status ?: gather_at_run(b, n, axis);
	}
	status = gop_need_movable(b, n, 0);
	if (status != VNPU_SUCCESS)
		return status;
	for (size_t i = 0; i < count; i++)
		if (idx[i] < -x->dims[axis] || idx[i] >= x->dims[axis])
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "index %lld out of range 0..%lld",
					 (long long)idx[i], (long long)x->dims[axis] - 1);
	status = gop_set_out(b, n, 0, rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	norm = malloc((count ? count : 1) * sizeof(*norm));
	if (!norm)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	x = gop_in(b, n, 0);
	for (size_t i = 0; i < count; i++)
		norm[i] = idx[i] < 0 ? idx[i] + x->dims[axis] : idx[i];
	/* Scattered indices: the constant is the indices of one T_GATHER. */
	if (index_runs(norm, count) > GATHER_MAX_RUNS)
		status = gather_at_run(b, n, axis);
	else
		status = gather_runs(b, n, n->in[0], gop_prod(x->dims, 0, axis),
				     (uint64_t)x->dims[axis], gop_prod(x->dims, axis + 1, x->rank),
				     norm, count, n->out[0]);
	free(norm);
	return status;
}

/* floor() of the small coordinates of Resize, without libm. */
static double floor_of(double v)
{
	double t = (double)(int64_t)v;

	return t > v ? t - 1 : t;
}

/* The input index of each output index of one axis of a nearest Resize. */
static void nearest_map(const char *ctm, const char *nm, int64_t in, int64_t out, double scale,
			int64_t *idx)
{
	for (int64_t x = 0; x < out; x++) {
		double o, f;
		int64_t i;

		if (!strcmp(ctm, "asymmetric"))
			o = x / scale;
		else if (!strcmp(ctm, "align_corners"))
			o = out == 1 ? 0 : (double)x * (double)(in - 1) / (double)(out - 1);
		else if (!strcmp(ctm, "tf_half_pixel_for_nn"))
			o = (x + 0.5) / scale;
		else if (!strcmp(ctm, "pytorch_half_pixel"))
			o = out > 1 ? (x + 0.5) / scale - 0.5 : 0;
		else
			o = (x + 0.5) / scale - 0.5;	/* half_pixel */
		f = floor_of(o);
		if (!strcmp(nm, "floor"))
			i = (int64_t)f;
		else if (!strcmp(nm, "ceil"))
			i = (int64_t)-floor_of(-o);
		else if (o - f == 0.5)
			i = !strcmp(nm, "round_prefer_ceil") ? (int64_t)f + 1 : (int64_t)f;
		else
			i = (int64_t)floor_of(o + 0.5);	/* not a tie: the nearest */
		idx[x] = i < 0 ? 0 : i >= in ? in - 1 : i;
	}
}

/* The interpolation weights of one output index of a linear or cubic Resize. */
static void interp_coeffs(int cubic, double r, double a, double *c)
{
	double s = 1 - r;

	if (!cubic) {
		c[0] = 1 - r;
		c[1] = r;
		return;
	}
	/* Keys' cubic convolution with coefficient a, at r + 1, r, 1 - r, 2 - r. */
	c[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
	c[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
	c[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
	c[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
}

/* What Resize's definition fixes for one resized axis. */
struct interp_axis {
	int cubic;		/* else linear */
	const char *ctm;	/* coordinate_transformation_mode */
	double a;		/* cubic_coeff_a */
	int exclude_outside;
	int64_t in, out;
	double scale;		/* out / in, or the scale given */
	double roi_start, roi_end;	/* tf_crop_and_resize */
};

/*
 * Row x of the @out x @in matrix that resizes one axis (ONNX's reference,
 * interpolate_1d_with_x): the input coordinate of output index x, the
 * 2 (linear) or 4 (cubic) input indices nearest to it over the input
 * padded by that many halves at each end with its edge values, and their
 * weights. Returns 0, or 1 if x maps outside the crop (tf_crop_and_resize:
 * the output there is extrapolation_value, and the row stays zero).
 */
static int interp_row(const struct interp_axis *ax, int64_t x, float *row)
{
	int taps = ax->cubic ? 4 : 2, pad = taps / 2;
	double width = ax->scale * (double)ax->in, o, f, r, c[4], sum = 0;
	int64_t idx[4], first;

	if (!strcmp(ax->ctm, "align_corners")) {
		o = width == 1 ? 0 : (double)x * (double)(ax->in - 1) / (width - 1);
	} else if (!strcmp(ax->ctm, "asymmetric")) {
		o = (double)x / ax->scale;
	} else if (!strcmp(ax->ctm, "tf_crop_and_resize")) {
		o = width == 1 ? (ax->roi_end - ax->roi_start) * (double)(ax->in - 1) / 2 :
		    (double)x * (ax->roi_end - ax->roi_start) * (double)(ax->in - 1) / (width - 1);
		o += ax->roi_start * (double)(ax->in - 1);
		if (o < 0 || o > (double)(ax->in - 1))
			return 1;
	} else if (!strcmp(ax->ctm, "pytorch_half_pixel")) {
		o = width == 1 ? -0.5 : ((double)x + 0.5) / ax->scale - 0.5;
	} else {
		o = ((double)x + 0.5) / ax->scale - 0.5;	/* half_pixel */
	}
	f = floor_of(o);
	r = o == f ? 1 : o - f;
	interp_coeffs(ax->cubic, r, ax->a, c);
	/*
	 * The taps nearest to o, ties to the lower index, within the padded
	 * range [-pad, in + pad): a run of taps indices.
	 */
	first = (int64_t)f - (o == f ? pad : pad - 1);
	if (first < -pad)
		first = -pad;
	if (first + taps > ax->in + pad)
		first = ax->in + pad - taps;
	for (int t = 0; t < taps; t++) {
		idx[t] = first + t;
		if (ax->exclude_outside && (idx[t] < 0 || idx[t] >= ax->in))
			c[t] = 0;
		sum += c[t];
	}
	for (int t = 0; t < taps; t++) {
		int64_t i = idx[t] < 0 ? 0 : idx[t] >= ax->in ? ax->in - 1 : idx[t];

		row[i] += (float)(ax->exclude_outside ? c[t] / sum : c[t]);
	}
	return 0;
}

/*
 * One axis of a linear or cubic Resize, @outer x in x @inner into @outer x
 * out x @inner: C[o, x, i] = sum over j of W[x, j] A[o, j, i], one T_DOT
 * with the out x in matrix W as a weight; then, where rows map outside a
 * crop, a T_ADD of extrapolation_value on them.
 */
static int interp_axis_emit(struct gbuild *b, struct gnode *n, const struct interp_axis *ax,
			    float extrapolation, int src, int dst, uint64_t outer, uint64_t inner)
{
	int64_t wdims[2] = { ax->out, ax->in }, shape[4] = { (int64_t)outer, ax->out,
							      (int64_t)inner, ax->in };
	uint64_t sa[4] = { 0, (uint64_t)ax->in, 0, 1 };
	uint64_t sb[4] = { (uint64_t)ax->in * inner, 0, 1, inner };
	uint64_t sc[4] = { (uint64_t)ax->out * inner, inner, 1, 0 };
	float *w = calloc((size_t)(ax->out * ax->in), sizeof(*w));
	float *edge = calloc((size_t)ax->out, sizeof(*edge));
	int status = VNPU_SUCCESS, wid, eid, any = 0;
	char name[64];

	if (!w || !edge) {
		status = VNPU_ERROR_OUT_OF_HOST_MEMORY;
		goto out;
	}
	for (int64_t x = 0; x < ax->out; x++)
		if (interp_row(ax, x, w + x * ax->in)) {
			edge[x] = extrapolation;
			any = 1;
		}
	snprintf(name, sizeof(name), "\x01resize.%d.%zu", n->index, b->num_tensors);
	status = gb_add_weight(b, name, VNPU_DTYPE_FLOAT, 2, wdims, w, &wid);
	if (status == VNPU_SUCCESS)
		status = gop_launch_nd(b, n, VNPU_OP_T_DOT, 4, shape, 1u << 3, wid, sa, src, sb,
				       dst, sc);
	if (status != VNPU_SUCCESS || !any)
		goto out;
	snprintf(name, sizeof(name), "\x01resize.%d.%zu", n->index, b->num_tensors);
	status = gb_add_weight(b, name, VNPU_DTYPE_FLOAT, 1, wdims, edge, &eid);
	if (status == VNPU_SUCCESS) {
		uint64_t se[3] = { 0, 1, 0 }, sd[3] = { (uint64_t)ax->out * inner, inner, 1 };

		status = gop_launch_nd(b, n, VNPU_OP_T_ADD, 3, shape, 0, dst, sd, eid, se, dst, sd);
	}
out:
	free(w);
	free(edge);
	return status;
}

/* Whether a linear or cubic Resize leaves axis @d as it is. */
static int resize_keeps_axis(const int64_t *out, const double *scale, const float *roi,
			     const int64_t *dims, uint32_t rank, uint32_t d)
{
	return out[d] == dims[d] && scale[d] == 1.0 &&
	       (!roi || (roi[d] == 0.0f && roi[d + rank] == 1.0f));
}

/*
 * The linear or cubic resize of input 0 to @out (@scale per axis): the
 * resized axes from the last to the first, through scratch tensors.
 */
static int resize_interp(struct gbuild *b, struct gnode *n, const char *mode, const char *ctm,
			 const float *roi, const int64_t *out, const double *scale)
{
	struct gtensor *x = gop_in(b, n, 0);
	uint32_t rank = x->rank;
	int64_t dims[MAX_RANK];
	int src = n->in[0], first = -1, status = VNPU_SUCCESS;
	float extrapolation = gop_attr_float(n, "extrapolation_value", 0);
	struct interp_axis ax = {
		.cubic = !strcmp(mode, "cubic"), .ctm = ctm,
		.a = gop_attr_float(n, "cubic_coeff_a", -0.75f),
		.exclude_outside = gop_attr_int(n, "exclude_outside", 0) != 0,
	};

	memcpy(dims, x->dims, sizeof(dims));
	for (uint32_t d = 0; d < rank && first < 0; d++)
		if (!resize_keeps_axis(out, scale, roi, dims, rank, d))
			first = (int)d;
	if (first < 0) {
		uint64_t st[MAX_RANK];

		gop_dense(dims, rank, st);
		return gop_copy(b, n, rank, dims, src, 0, st, n->out[0], 0, st);
	}
	for (int d = (int)rank - 1; d >= first && status == VNPU_SUCCESS; d--) {
		uint64_t outer = gop_prod(dims, 0, (uint32_t)d);
		uint64_t inner = gop_prod(dims, (uint32_t)d + 1, rank);
		int dst = n->out[0];

		if (resize_keeps_axis(out, scale, roi, dims, rank, (uint32_t)d))
			continue;
		if (d > first)
			status = gop_scratch(b, n, outer * (uint64_t)out[d] * inner, &dst);
		if (status != VNPU_SUCCESS)
			break;
		ax.in = dims[d];
		ax.out = out[d];
		ax.scale = scale[d];
		ax.roi_start = roi ? roi[d] : 0;
		ax.roi_end = roi ? roi[d + rank] : 1;
		status = interp_axis_emit(b, n, &ax, extrapolation, src, dst, outer, inner);
		dims[d] = out[d];
		src = dst;
	}
	return status;
}

/*
 * Resize (from opset 11) and Upsample by constant scales or sizes. In
 * ``nearest`` mode the input index of every output index is computed at
 * load, then each resized axis is one gather of runs (gather_runs()),
 * through scratch tensors between axes. In ``linear`` and ``cubic`` mode
 * (every coordinate transformation, exclude_outside, and a constant roi
 * for tf_crop_and_resize) each resized axis is a matrix product with the
 * interpolation weights computed at load (interp_axis_emit()), the last
 * axis first, as the definition's reference interpolates; the scratch
 * tensors between axes are fp32, so a float16 input is computed in fp32
 * and rounded once, into the output.
 */
static int op_resize(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "coordinate_transformation_mode", "cubic_coeff_a",
					       "exclude_outside", "extrapolation_value", "mode",
					       "nearest_mode", "scales", NULL };
	int upsample = !strcmp(n->np->op_type, "Upsample"), interp;
	char mode[32], ctm[32], nm[32];
	const float *roi = NULL;
	int64_t out[MAX_RANK], dims[MAX_RANK], *idx;
	double scale[MAX_RANK];
	const float *scales = NULL;
	const int64_t *sizes = NULL;
	size_t count = 0;
	struct gtensor *x;
	int status, src, last = -1;

	if ((status = gop_check_attrs(n, allowed)) ||
	    (status = gop_need_inputs(n, 1, upsample ? 2 : 4)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	if (!gop_attr_str(n, "mode", mode, sizeof(mode))[0])
		strcpy(mode, "nearest");
	interp = !strcmp(mode, "linear") || (!upsample && !strcmp(mode, "cubic"));
	if (strcmp(mode, "nearest") && !interp)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "mode '%s' not supported (nearest, linear%s are)", mode,
				 upsample ? "" : " and cubic");
	if (upsample) {
		strcpy(ctm, "asymmetric");
		strcpy(nm, "floor");
	} else {
		gop_attr_str(n, "coordinate_transformation_mode", ctm, sizeof(ctm));
		gop_attr_str(n, "nearest_mode", nm, sizeof(nm));
		if (!strcmp(ctm, "tf_crop_and_resize") && !interp)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "coordinate_transformation_mode 'tf_crop_and_resize' in mode 'nearest' not supported");
		if (!strcmp(ctm, "tf_crop_and_resize")) {
			roi = gop_in(b, n, 1) && gop_in(b, n, 1)->dtype == VNPU_DTYPE_FLOAT ?
			      gop_const_data(b, n->in[1]) : NULL;
			if (!roi)
				return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
						 "roi must be a constant float tensor");
			if (gop_in(b, n, 1)->count != 2 * (uint64_t)x->rank)
				return node_fail(n, VNPU_ERROR_INVALID_MODEL,
						 "roi of %llu values for rank %u (twice the rank)",
						 (unsigned long long)gop_in(b, n, 1)->count, x->rank);
		}
	}
	if (upsample && b->opset < 9) {
		const Onnx__AttributeProto *a = gop_attr(n, "scales");

		scales = a ? a->floats : NULL;
		count = a ? a->n_floats : 0;
	} else if (gop_in(b, n, upsample ? 1 : 2) && gop_in(b, n, upsample ? 1 : 2)->count) {
		int j = upsample ? 1 : 2;

		scales = gop_in(b, n, j)->dtype == VNPU_DTYPE_FLOAT ? gop_const_data(b, n->in[j]) : NULL;
		count = gop_in(b, n, j)->count;
		if (!scales)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "scales must be a constant float tensor");
	} else if (!upsample && gop_in(b, n, 3)) {
		sizes = gop_const_ints(b, n, 3, &count);
		if (!sizes)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "sizes must be a constant int64 tensor");
	}
	if ((!scales && !sizes) || count != x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "%zu scales or sizes for rank %u", count,
				 x->rank);
	for (uint32_t d = 0; d < x->rank; d++) {
		out[d] = sizes ? sizes[d] : (int64_t)floor_of((double)x->dims[d] * scales[d]);
		scale[d] = sizes ? (double)sizes[d] / (double)x->dims[d] : scales[d];
		if (out[d] < 1 || !(scale[d] > 0))
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "output dimension %u of %lld", d,
					 (long long)out[d]);
		if (out[d] != x->dims[d] || scale[d] != 1.0)
			last = (int)d;
	}
	status = gop_set_out(b, n, 0, x->rank, out);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	memcpy(dims, x->dims, sizeof(dims));
	src = n->in[0];
	if (interp)
		return resize_interp(b, n, mode, ctm, roi, out, scale);
	if (last < 0) {
		uint64_t st[MAX_RANK];

		gop_dense(dims, x->rank, st);
		return gop_copy(b, n, x->rank, dims, src, 0, st, n->out[0], 0, st);
	}
	for (uint32_t d = 0; d <= (uint32_t)last && status == VNPU_SUCCESS; d++) {
		uint32_t rank = gop_in(b, n, 0)->rank;
		uint64_t outer = gop_prod(dims, 0, d), inner = gop_prod(dims, d + 1, rank);
		int dst = n->out[0];

		if (out[d] == dims[d] && scale[d] == 1.0)
			continue;
		if ((int)d < last)
			status = gop_scratch(b, n, outer * (uint64_t)out[d] * inner, &dst);
		idx = status == VNPU_SUCCESS ? malloc((size_t)out[d] * sizeof(*idx)) : NULL;
		if (status == VNPU_SUCCESS && !idx)
			status = VNPU_ERROR_OUT_OF_HOST_MEMORY;
		if (status != VNPU_SUCCESS)
			return status;
		nearest_map(ctm, nm, dims[d], out[d], scale[d], idx);
		status = gather_runs(b, n, src, outer, (uint64_t)dims[d], inner, idx,
				     (size_t)out[d], dst);
		free(idx);
		dims[d] = out[d];
		src = dst;
	}
	return status;
}

/* A scalar float constant of the node. */
int gop_scalar(struct gbuild *b, const struct gnode *n, float value, int *id)
{
	char name[64];

	snprintf(name, sizeof(name), "\x01value.%d.%zu", n->index, b->num_tensors);
	return gb_add_weight(b, name, VNPU_DTYPE_FLOAT, 0, NULL, &value, id);
}

/* Most copies of one reflected side of a Pad: one device command each. */
#define PAD_MAX_REFLECTED 4096

/*
 * The pads of axis @d of Pad's output @y in "edge" or "reflect" mode: the
 * centre (@lo..@lo + @len along @d) is in place, the axes before @d are
 * padded, those after it not yet (only their centres @clo..). Each side:
 * the slabs it repeats (edge: the outermost one; reflect: the @pad next
 * to the outermost, in reverse) copied to a scratch, since a copy cannot
 * read the tensor it writes, then back to each padded index.
 */
static int pad_side(struct gbuild *b, const struct gnode *n, uint32_t d, const int64_t *clo,
		    const int64_t *cdims, int64_t lo, int64_t len, int64_t pad, int before,
		    int reflect)
{
	const struct gtensor *y = &b->tensors[n->out[0]];
	int64_t shape[MAX_RANK], from;
	uint64_t sc[MAX_RANK], dense[MAX_RANK], zero_d[MAX_RANK], base = 0, cnt;
	int scr, status;
	int64_t taken = reflect ? pad : 1;

	gop_dense(y->dims, y->rank, sc);
	for (uint32_t e = 0; e < y->rank; e++) {
		shape[e] = e < d ? y->dims[e] : e == d ? taken : cdims[e];
		if (e > d)
			base += (uint64_t)clo[e] * sc[e];
	}
	/* The first slab taken along @d, in increasing index order. */
	if (before)
		from = reflect ? lo + 1 : lo;
	else
		from = reflect ? lo + len - 1 - pad : lo + len - 1;
	cnt = gop_prod(shape, 0, y->rank);
	status = gop_scratch(b, n, cnt, &scr);
	if (status != VNPU_SUCCESS)
		return status;
	gb_set_shape(&b->tensors[scr], y->dtype, y->rank, shape);
	gop_dense(shape, y->rank, dense);
	status = gop_copy(b, n, y->rank, shape, n->out[0], base + (uint64_t)from * sc[d], sc,
			  scr, 0, dense);
	if (status != VNPU_SUCCESS)
		return status;
	if (!reflect) {
		/* One copy, the slab repeated by a stride of 0 along @d. */
		memcpy(zero_d, dense, sizeof(zero_d));
		zero_d[d] = 0;
		shape[d] = pad;
		return gop_copy(b, n, y->rank, shape, scr, 0, zero_d, n->out[0],
				base + (uint64_t)(before ? lo - pad : lo + len) * sc[d], sc);
	}
	/* Reflect: slab k of the scratch to the index mirrored about the edge. */
	shape[d] = 1;
	for (int64_t k = 0; k < pad && status == VNPU_SUCCESS; k++) {
		int64_t to = before ? lo - 1 - k : lo + len + pad - 1 - k;

		status = gop_copy(b, n, y->rank, shape, scr, (uint64_t)k * dense[d], dense,
				  n->out[0], base + (uint64_t)to * sc[d], sc);
	}
	return status;
}

/*
 * Pad: "constant" fills the output with the value then copies the input
 * in; "edge" and "reflect" copy the input in, then pad axis by axis from
 * the output itself (pad_side). Negative pads crop.
 */
static int op_pad(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed_old[] = { "mode", "pads", "value", NULL };
	static const char *const allowed[] = { "mode", NULL };
	const Onnx__AttributeProto *a = gop_attr(n, "pads");
	int64_t dims[MAX_RANK], inner[MAX_RANK], lo[MAX_RANK];
	uint64_t st[MAX_RANK], sc[MAX_RANK], oa = 0, oc = 0;
	const int64_t *pads = NULL;
	struct gtensor *x, *cv;
	size_t count = 0;
	char mode[32];
	int status, value = -1, any = 0, constant, reflect;

	if ((status = gop_check_attrs(n, b->opset < 11 ? allowed_old : allowed)) ||
	    (status = gop_need_inputs(n, b->opset < 11 ? 1 : 2, b->opset < 11 ? 1 : 3)) ||
	    (status = gop_single_output(n)))
		return status;
	gop_attr_str(n, "mode", mode, sizeof(mode));
	constant = !mode[0] || !strcmp(mode, "constant");
	reflect = !strcmp(mode, "reflect");
	if (!constant && !reflect && strcmp(mode, "edge"))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "mode '%s' not supported (constant, reflect and edge are)", mode);
	/* The value of "constant" is a float; edge and reflect move any type. */
	status = constant ? gop_need_float(b, n, 0) : gop_need_movable(b, n, 0);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	if (b->opset < 11) {
		pads = a ? a->ints : NULL;
		count = a ? a->n_ints : 0;
	} else {
		pads = gop_const_ints(b, n, 1, &count);
		if (!pads)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "pads must be a constant int64 tensor");
	}
	if (!pads || count != 2 * (size_t)x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "%zu pads for rank %u", count, x->rank);
	for (uint32_t d = 0; d < x->rank; d++) {
		int64_t pb = pads[d], pe = pads[d + x->rank];

		dims[d] = x->dims[d] + pb + pe;
		inner[d] = x->dims[d] - (pb < 0 ? -pb : 0) - (pe < 0 ? -pe : 0);
		lo[d] = pb > 0 ? pb : 0;
		if (dims[d] < 1 || inner[d] < 0)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "pads leave dimension %u empty", d);
		if (!constant && !inner[d] && (pb > 0 || pe > 0))
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "%s pads of dimension %u with nothing to repeat", mode, d);
		if (reflect && ((pb > 0 && pb >= inner[d]) || (pe > 0 && pe >= inner[d]) ||
				pb > PAD_MAX_REFLECTED || pe > PAD_MAX_REFLECTED))
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "reflect pads of dimension %u beyond its %lld elements less one (or %d)",
					 d, (long long)inner[d], PAD_MAX_REFLECTED);
		any |= pb > 0 || pe > 0;
	}
	status = gop_set_out(b, n, 0, x->rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	cv = gop_in(b, n, 2);
	if (cv && (!constant || cv->count != 1 || (status = gop_need_float(b, n, 2))))
		return status ? status : node_fail(n, VNPU_ERROR_INVALID_MODEL,
						   "constant_value must be a scalar (of mode constant)");
	if (any && constant) {
		if (cv)
			value = n->in[2];
		else
			status = gop_scalar(b, n, gop_attr_float(n, "value", 0.0f), &value);
		if (status == VNPU_SUCCESS)
			status = fill(b, n, value);
		if (status != VNPU_SUCCESS)
			return status;
	}
	x = gop_in(b, n, 0);	/* the tensors may have moved */
	gop_dense(x->dims, x->rank, st);
	gop_dense(dims, x->rank, sc);
	for (uint32_t d = 0; d < x->rank; d++) {
		int64_t pb = pads[d];

		if (pb < 0)
			oa += (uint64_t)-pb * st[d];
		else
			oc += (uint64_t)pb * sc[d];
	}
	status = gop_copy(b, n, x->rank, inner, n->in[0], oa, st, n->out[0], oc, sc);
	for (uint32_t d = 0; d < x->rank && !constant && status == VNPU_SUCCESS; d++) {
		int64_t pb = pads[d], pe = pads[d + x->rank];

		if (pb > 0)
			status = pad_side(b, n, d, lo, inner, lo[d], inner[d], pb, 1, reflect);
		if (status == VNPU_SUCCESS && pe > 0)
			status = pad_side(b, n, d, lo, inner, lo[d], inner[d], pe, 0, reflect);
	}
	return status;
}

static int op_expand(struct gbuild *b, struct gnode *n)
{
	int64_t dims[MAX_RANK];
	uint64_t sa[MAX_RANK], sc[MAX_RANK];
	struct gtensor *x, s = { 0 };
	const int64_t *shape;
	size_t count;
	uint32_t rank;
	int status;

	if ((status = gop_check_attrs(n, NULL)) || (status = gop_need_inputs(n, 2, 2)) ||
	    (status = gop_need_movable(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	shape = gop_const_ints(b, n, 1, &count);
	if (!shape)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "the shape must be a constant int64 tensor");
	if (count > MAX_RANK)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "more than %d dimensions", MAX_RANK);
	s.rank = (uint32_t)count;
	memcpy(s.dims, shape, count * sizeof(*shape));
	status = gop_broadcast_shape(n, x, &s, &rank, dims);
	if (status == VNPU_SUCCESS)
		status = gop_set_out(b, n, 0, rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	gop_bcast(x, rank, dims, sa);
	gop_dense(dims, rank, sc);
	return gop_copy(b, n, rank, dims, n->in[0], 0, sa, n->out[0], 0, sc);
}

/* Tile: (repeat, dim) pairs, A repeated with stride 0 along each repeat. */
static int op_tile(struct gbuild *b, struct gnode *n)
{
	int64_t dims[MAX_RANK], shape[2 * MAX_RANK];
	uint64_t st[MAX_RANK], so[MAX_RANK], sa[2 * MAX_RANK], sc[2 * MAX_RANK];
	const int64_t *rep;
	struct gtensor *x;
	size_t count;
	int status;

	if ((status = gop_check_attrs(n, NULL)) || (status = gop_need_inputs(n, 2, 2)) ||
	    (status = gop_need_movable(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	rep = gop_const_ints(b, n, 1, &count);
	if (!rep)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "repeats must be a constant int64 tensor");
	if (count != x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "%zu repeats for rank %u", count, x->rank);
	for (uint32_t d = 0; d < x->rank; d++) {
		if (rep[d] < 1)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "repeat %lld", (long long)rep[d]);
		dims[d] = x->dims[d] * rep[d];
	}
	status = gop_set_out(b, n, 0, x->rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	gop_dense(x->dims, x->rank, st);
	gop_dense(dims, x->rank, so);
	for (uint32_t d = 0; d < x->rank; d++) {
		shape[2 * d] = rep[d];
		shape[2 * d + 1] = x->dims[d];
		sa[2 * d] = 0;
		sa[2 * d + 1] = st[d];
		sc[2 * d] = (uint64_t)x->dims[d] * so[d];
		sc[2 * d + 1] = so[d];
	}
	return gop_copy(b, n, 2 * x->rank, shape, n->in[0], 0, sa, n->out[0], 0, sc);
}

/* DepthToSpace and SpaceToDepth: a permuted copy of a 6-d view of the input. */
static int op_depth_space(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "blocksize", "mode", NULL };
	int to_space = !strcmp(n->np->op_type, "DepthToSpace");
	int64_t bs = gop_attr_int(n, "blocksize", 0), N, C, H, W, dims[4], shape[6];
	uint64_t sa[6], sc[6];
	struct gtensor *x;
	char mode[16];
	int status, crd;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_need_movable(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	crd = !strcmp(gop_attr_str(n, "mode", mode, sizeof(mode)), "CRD");
	if (mode[0] && !crd && strcmp(mode, "DCR"))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "mode '%s'", mode);
	if (x->rank != 4 || bs < 1 || (to_space && x->dims[1] % (bs * bs)) ||
	    (!to_space && (x->dims[2] % bs || x->dims[3] % bs)))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "blocksize %lld does not fit the input",
				 (long long)bs);
	N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
	if (to_space) {
		int64_t c = C / (bs * bs);

		dims[0] = N, dims[1] = c, dims[2] = H * bs, dims[3] = W * bs;
		/* Output viewed as (N, c, H, bs, W, bs), read from the input's channels. */
		shape[0] = N, shape[1] = c, shape[2] = H, shape[3] = bs, shape[4] = W, shape[5] = bs;
		sa[0] = (uint64_t)(C * H * W);
		sa[1] = (uint64_t)((crd ? bs * bs : 1) * H * W);
		sa[2] = (uint64_t)W;
		sa[3] = (uint64_t)((crd ? bs : bs * c) * H * W);
		sa[4] = 1;
		sa[5] = (uint64_t)((crd ? 1 : c) * H * W);
		sc[0] = (uint64_t)(c * H * bs * W * bs);
		sc[1] = (uint64_t)(H * bs * W * bs);
		sc[2] = (uint64_t)(bs * W * bs);
		sc[3] = (uint64_t)(W * bs);
		sc[4] = (uint64_t)bs;
		sc[5] = 1;
	} else {
		int64_t h = H / bs, w = W / bs;

		if (crd)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "attribute 'mode' of DepthToSpace");
		dims[0] = N, dims[1] = C * bs * bs, dims[2] = h, dims[3] = w;
		/* Input viewed as (N, C, h, bs, w, bs); output channel (b1 bs + b2) C + c. */
		shape[0] = N, shape[1] = C, shape[2] = h, shape[3] = bs, shape[4] = w, shape[5] = bs;
		sa[0] = (uint64_t)(C * H * W);
		sa[1] = (uint64_t)(H * W);
		sa[2] = (uint64_t)(bs * W);
		sa[3] = (uint64_t)W;
		sa[4] = (uint64_t)bs;
		sa[5] = 1;
		sc[0] = (uint64_t)(C * bs * bs * h * w);
		sc[1] = (uint64_t)(h * w);
		sc[2] = (uint64_t)w;
		sc[3] = (uint64_t)(bs * C * h * w);
		sc[4] = 1;
		sc[5] = (uint64_t)(C * h * w);
	}
	status = gop_set_out(b, n, 0, 4, dims);
	if (status != VNPU_SUCCESS)
		return status;
	return gop_copy(b, n, 6, shape, n->in[0], 0, sa, n->out[0], 0, sc);
}

/* Trilu: the output filled with 0, then the kept part of each row copied. */
static int op_trilu(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "upper", NULL };
	int upper = gop_attr_int(n, "upper", 1) != 0, zero, status;
	int64_t k = 0, M, N, batch, shape[2];
	uint64_t s[2];
	const int64_t *kv;
	struct gtensor *x;
	size_t count;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 2)) ||
	    (status = gop_need_float(b, n, 0)) || (status = gop_single_output(n)))
		return status;
	if (gop_in(b, n, 1)) {
		kv = gop_const_ints(b, n, 1, &count);
		if (!kv || count != 1)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "k must be a constant int64 scalar");
		k = kv[0];
	}
	x = gop_in(b, n, 0);
	if (x->rank < 2)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input of rank %u, at least 2 expected",
				 x->rank);
	M = x->dims[x->rank - 2];
	N = x->dims[x->rank - 1];
	batch = (int64_t)gop_prod(x->dims, 0, x->rank - 2);
	if (M > 4096)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "more than 4096 rows");
	status = gop_set_out(b, n, 0, x->rank, x->dims);
	if (status == VNPU_SUCCESS)
		status = gop_scalar(b, n, 0.0f, &zero);
	if (status == VNPU_SUCCESS)
		status = fill(b, n, zero);
	s[0] = (uint64_t)(M * N);
	s[1] = 1;
	for (int64_t i = 0; i < M && status == VNPU_SUCCESS; i++) {
		int64_t lo = upper ? i + k : 0, hi = upper ? N : i + k + 1;

		lo = lo < 0 ? 0 : lo > N ? N : lo;
		hi = hi < 0 ? 0 : hi > N ? N : hi;
		if (hi <= lo)
			continue;
		shape[0] = batch;
		shape[1] = hi - lo;
		status = gop_copy(b, n, 2, shape, n->in[0], (uint64_t)(i * N + lo), s, n->out[0],
				  (uint64_t)(i * N + lo), s);
	}
	return status;
}

/*
 * Output @o of the node: a constant of @dtype and the @rank-d @dims,
 * every element from @fill(@i, @ctx) (a weight of the graph, no work at run).
 */
static int const_out(struct gbuild *b, const struct gnode *n, size_t o, int dtype,
		     uint32_t rank, const int64_t *dims, double (*fill)(uint64_t, const void *),
		     const void *ctx)
{
	struct gtensor *t = &b->tensors[n->out[o]];

	if (!gb_set_shape(t, dtype, rank, dims))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "output shape out of range");
	t->host = calloc(t->bytes ? t->bytes : 1, 1);
	if (!t->host)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	t->cls = GT_WEIGHT;
	t->producer = -1;
	for (uint64_t i = 0; i < t->count; i++) {
		double v = fill(i, ctx);

		switch (dtype) {
		case VNPU_DTYPE_FLOAT: ((float *)t->host)[i] = (float)v; break;
		case VNPU_DTYPE_FLOAT16: ((_Float16 *)t->host)[i] = (_Float16)v; break;
		case VNPU_DTYPE_INT32: ((int32_t *)t->host)[i] = (int32_t)v; break;
		default: ((uint8_t *)t->host)[i] = (uint8_t)(int)v; break;
		}
	}
	return VNPU_SUCCESS;
}

static double fill_one(uint64_t i, const void *ctx)
{
	(void)i;
	(void)ctx;
	return 1.0;
}

/* EyeLike: ones on diagonal k of a 2-D shape, {cols, k} in @ctx. */
static double fill_eye(uint64_t i, const void *ctx)
{
	const int64_t *ck = ctx;

	return (int64_t)(i % (uint64_t)ck[0]) - (int64_t)(i / (uint64_t)ck[0]) == ck[1];
}

/*
 * Dropout in inference: y is x (a view) and the mask, output 1 from
 * operator set 10 (a bool), is all true: a constant.
 */
static int op_dropout(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "ratio", "seed", "is_test", NULL };
	struct gtensor *x;
	size_t count;
	const int64_t *training;
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 3)) ||
	    (status = gop_need_float(b, n, 0)))
		return status;
	for (size_t o = b->opset >= 10 ? 2 : 1; o < n->num_out; o++)
		if (n->out[o] >= 0)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "output %zu not supported", o);
	if (gop_in(b, n, 2)) {
		training = gop_const_data(b, n->in[2]);
		count = gop_in(b, n, 2)->count;
		if (!training || count != 1)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "training_mode must be a constant scalar");
		/*
		 * Training with a ratio of 0 keeps every element, scaled by 1:
		 * the identity (Swin's attention dropout is exported so).
		 */
		if (*(const uint8_t *)training &&
		    (!gop_in(b, n, 1) || !gop_const_data(b, n->in[1]) ||
		     gop_in(b, n, 1)->count != 1 ||
		     gb_const_value(gop_in(b, n, 1)->dtype, gop_const_data(b, n->in[1]), 0) != 0))
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "training mode not supported (but with a constant ratio of 0)");
	}
	x = gop_in(b, n, 0);
	if (n->num_out > 1 && n->out[1] >= 0) {
		status = const_out(b, n, 1, VNPU_DTYPE_BOOL, x->rank, x->dims, fill_one, NULL);
		if (status != VNPU_SUCCESS)
			return status;
		x = gop_in(b, n, 0);
	}
	return gop_set_alias(b, n, n->in[0], x->rank, x->dims);
}

/* EyeLike: a constant of x's 2-D shape, of x's type or dtype's, ones on diagonal k. */
static int op_eyelike(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "dtype", "k", NULL };
	struct gtensor *x;
	int64_t ck[2], dtype;
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	if (x->rank != 2)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "input '%s' of rank %u, 2 expected",
				 x->name, x->rank);
	dtype = gop_attr_int(n, "dtype", x->dtype);
	if (!gb_is_io_type((int)dtype))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "element type %lld not supported (float, float16, int8, uint8, int32 and bool are)",
				 (long long)dtype);
	ck[0] = x->dims[1];
	ck[1] = gop_attr_int(n, "k", 0);
	return const_out(b, n, 0, (int)dtype, 2, x->dims, fill_eye, ck);
}

/*
 * Cast between the types the device holds (float, float16, int8, uint8,
 * int32, bool; integer casts of int64 constants are folded). The same
 * type: a view. To float or float16: a converting T_COPY, rounded to
 * nearest even. To bool: x != 0, 1 - T_EQUAL(x, 0) (NaN is true). From
 * float to an integer type: truncated toward zero, floor(max(x, 0)) +
 * ceil(min(x, 0)) added into the integer type, saturated (NaN gives 0;
 * ONNX leaves values out of range undefined). Between integer types the
 * widening casts (bool, int8, uint8 to int32; bool to int8, uint8): a
 * T_ADD of 0, exact; the narrowing ones would wrap and are refused.
 */
static int cast_trunc(struct gbuild *b, const struct gnode *n)
{
	const struct gtensor *x = gop_in(b, n, 0);
	uint64_t st[MAX_RANK], zero[MAX_RANK] = { 0 };
	int64_t dims[MAX_RANK];
	uint32_t rank = x->rank;
	int k0, lo, hi, status;

	memcpy(dims, x->dims, sizeof(dims));
	gop_dense(dims, rank, st);
	if ((status = gop_scalar(b, n, 0.0f, &k0)) ||
	    (status = gop_scratch(b, n, gop_in(b, n, 0)->count, &hi)) ||
	    (status = gop_scratch(b, n, gop_in(b, n, 0)->count, &lo)))
		return status;
	if (!rank) {
		rank = 1;
		dims[0] = 1;
		st[0] = 1;
	}
	if ((status = gop_launch_nd(b, n, VNPU_OP_T_MAX, rank, dims, 0, n->in[0], st, k0, zero,
				    hi, st)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_FLOOR, rank, dims, 0, hi, st, -1, NULL, hi,
				    st)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_MIN, rank, dims, 0, n->in[0], st, k0, zero,
				    lo, st)) ||
	    (status = gop_launch_nd(b, n, VNPU_OP_T_CEIL, rank, dims, 0, lo, st, -1, NULL, lo,
				    st)))
		return status;
	return gop_launch_nd(b, n, VNPU_OP_T_ADD, rank, dims, 0, hi, st, lo, st, n->out[0], st);
}

/* Cast of input 0 into type @to (Cast's attribute, CastLike's input 1's type). */
static int cast_to(struct gbuild *b, struct gnode *n, int64_t to)
{
	uint64_t st[MAX_RANK], zero[MAX_RANK] = { 0 };
	int64_t dims[MAX_RANK];
	struct gtensor *x;
	uint32_t rank;
	int status, k;

	x = gop_in(b, n, 0);
	if (!gb_is_io_type(x->dtype))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "input '%s' of element type %d not supported (float, float16, int8, uint8, int32 and bool are)",
				 x->name, x->dtype);
	if (!gb_is_io_type((int)to))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "cast to element type %lld not supported (float, float16, int8, uint8, int32 and bool are)",
				 (long long)to);
	if (!x->count)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "input '%s' is empty", x->name);
	if (x->dtype == to)
		return gop_set_alias(b, n, n->in[0], x->rank, x->dims);
	if (!gb_is_float((int)to) && to != VNPU_DTYPE_BOOL && !gb_is_float(x->dtype) &&
	    x->dtype != VNPU_DTYPE_BOOL && (to != VNPU_DTYPE_INT32 || x->dtype == VNPU_DTYPE_INT32))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "cast from element type %d to %lld not supported (it narrows: the values would wrap)",
				 x->dtype, (long long)to);
	status = gop_set_out(b, n, 0, x->rank, x->dims);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	gb_set_shape(&b->tensors[n->out[0]], (int)to, x->rank, x->dims);
	rank = x->rank ? x->rank : 1;
	memcpy(dims, x->dims, sizeof(dims));
	if (!x->rank)
		dims[0] = 1;
	gop_dense(dims, rank, st);
	/* To float or float16: a converting device copy, rounded to nearest even. */
	if (gb_is_float((int)to))
		return gop_copy(b, n, rank, dims, n->in[0], 0, st, n->out[0], 0, st);
	if (to == VNPU_DTYPE_BOOL) {
		int eq;

		if ((status = gop_scalar(b, n, 0.0f, &k)) ||
		    (status = gop_scratch(b, n, gop_in(b, n, 0)->count, &eq)))
			return status;
		x = gop_in(b, n, 0);
		gb_set_shape(&b->tensors[eq], VNPU_DTYPE_BOOL, x->rank, x->dims);
		if ((status = gop_launch_nd(b, n, VNPU_OP_T_EQUAL, rank, dims, 0, n->in[0], st, k,
					    zero, eq, st)) ||
		    (status = gop_scalar(b, n, 1.0f, &k)))
			return status;
		return gop_launch_nd(b, n, VNPU_OP_T_SUB, rank, dims, 0, k, zero, eq, st,
				     n->out[0], st);
	}
	if (gb_is_float(x->dtype))
		return cast_trunc(b, n);
	status = gop_scalar(b, n, 0.0f, &k);
	return status ? status :
	       gop_launch_nd(b, n, VNPU_OP_T_ADD, rank, dims, 0, n->in[0], st, k, zero, n->out[0],
			     st);
}

static int op_cast(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "to", "saturate", NULL };
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 1, 1)) ||
	    (status = gop_single_output(n)))
		return status;
	return cast_to(b, n, gop_attr_int(n, "to", 0));
}

static int op_castlike(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "saturate", NULL };
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 2, 2)) ||
	    (status = gop_single_output(n)))
		return status;
	return cast_to(b, n, gop_in(b, n, 1)->dtype);
}

/* Most index tuples of a ScatterND, ScatterElements or GatherND. */
#define SCATTER_MAX_TUPLES 65536

/*
 * Moves @count slices of @slice elements from tensor @src at element
 * offsets @so[j] to @dst at @dco[j], in the order of j: T_COPY, or with
 * T_ADD or T_MUL @dst's slice combined with @src's in place. Each run of
 * slices consecutive in both is one device command.
 */
static int move_runs(struct gbuild *b, const struct gnode *n, enum vnpu_op op, int src,
		     const uint64_t *so, int dst, const uint64_t *dco, uint64_t count,
		     uint64_t slice)
{
	int status = VNPU_SUCCESS;

	for (uint64_t j = 0, run; j < count && status == VNPU_SUCCESS; j += run) {
		int64_t len;
		struct tlaunch l;

		for (run = 1; j + run < count && so[j + run] == so[j] + run * slice &&
			      dco[j + run] == dco[j] + run * slice; run++)
			;
		len = (int64_t)(run * slice);
		gop_tl_init(&l, op, 1, &len);
		l.sa[0] = l.sb[0] = l.sc[0] = 1;
		if (op == VNPU_OP_T_COPY) {
			l.ta = src;
			l.oa = so[j];
		} else {
			l.ta = dst;
			l.oa = dco[j];
			l.tb = src;
			l.ob = so[j];
		}
		l.tc = dst;
		l.oc = dco[j];
		status = gop_tl_emit(b, n, &l);
	}
	return status;
}

/* The "reduction" of ScatterND and ScatterElements (operator set 16). */
static int scatter_reduction(struct gbuild *b, const struct gnode *n, enum vnpu_op *op)
{
	char red[16];

	gop_attr_str(n, "reduction", red, sizeof(red));
	*op = VNPU_OP_T_COPY;
	if (!strcmp(red, "add") || !strcmp(red, "mul"))
		*op = red[0] == 'a' ? VNPU_OP_T_ADD : VNPU_OP_T_MUL;
	else if (red[0] && strcmp(red, "none"))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "reduction '%s' not supported (none, add and mul are)", red);
	return *op == VNPU_OP_T_COPY ? VNPU_SUCCESS : gop_need_float(b, n, 0);
}

/*
 * The element offsets in a tensor of @dims of the @tuples index tuples of
 * @k indices each in @idx (negative from the end), after @base[j]; fails
 * naming the node for an index out of range.
 */
static int tuple_offsets(const struct gnode *n, const int64_t *dims, uint32_t rank,
			 uint32_t first, const int64_t *idx, uint64_t tuples, uint64_t k,
			 uint64_t *off)
{
	uint64_t st[MAX_RANK];

	gop_dense(dims, rank, st);
	for (uint64_t j = 0; j < tuples; j++)
		for (uint64_t d = 0; d < k; d++) {
			int64_t i = idx[j * k + d], dim = dims[first + d];

			if (i < -dim || i >= dim)
				return node_fail(n, VNPU_ERROR_INVALID_MODEL,
						 "index %lld out of range 0..%lld", (long long)i,
						 (long long)dim - 1);
			off[j] += (uint64_t)(i < 0 ? i + dim : i) * st[first + d];
		}
	return VNPU_SUCCESS;
}

/* Constant int64 indices of input 1, or the reason they are refused. */
static const int64_t *const_indices(struct gbuild *b, const struct gnode *n, size_t *count)
{
	const int64_t *idx = gop_const_ints(b, n, 1, count);

	if (!idx)
		node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
			  "indices must be a constant int64 tensor (given at load)");
	return idx;
}

/*
 * What ScatterND and ScatterElements share: their inputs, the reduction,
 * the constant indices and the updates' type (the data's).
 */
static int scatter_prologue(struct gbuild *b, const struct gnode *n, const char *const *allowed,
			    enum vnpu_op *op, const int64_t **idx, size_t *count)
{
	struct gtensor *x, *upd;
	int status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 3, 3)) ||
	    (status = gop_need_movable(b, n, 0)) || (status = gop_single_output(n)) ||
	    (status = scatter_reduction(b, n, op)))
		return status;
	x = gop_in(b, n, 0);
	upd = gop_in(b, n, 2);
	*idx = const_indices(b, n, count);
	if (!*idx)
		return VNPU_ERROR_NOT_SUPPORTED;
	if (upd->dtype != x->dtype)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "updates of element type %d, the data's is %d", upd->dtype, x->dtype);
	return VNPU_SUCCESS;
}

/*
 * ScatterND with constant indices: the data copied to the output, then
 * each index tuple's slice of the updates moved in (move_runs()), in the
 * order of the tuples.
 */
static int op_scatter_nd(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "reduction", NULL };
	uint64_t st[MAX_RANK], slice, tuples, k, *so = NULL, *dco = NULL;
	struct gtensor *x, *ind, *upd;
	enum vnpu_op op;
	const int64_t *idx;
	size_t count;
	int status;

	status = scatter_prologue(b, n, b->opset >= 16 ? allowed : NULL, &op, &idx, &count);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	ind = gop_in(b, n, 1);
	upd = gop_in(b, n, 2);
	k = ind->rank ? (uint64_t)ind->dims[ind->rank - 1] : 0;
	if (!ind->rank || !k || k > x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "indices' last dimension %llu for data of rank %u",
				 (unsigned long long)k, x->rank);
	/* updates: the indices' shape without its last dimension, then data's past k. */
	if (upd->rank != ind->rank - 1 + x->rank - k)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "updates of rank %u, %llu expected",
				 upd->rank, (unsigned long long)(ind->rank - 1 + x->rank - k));
	for (uint32_t d = 0; d < upd->rank; d++) {
		int64_t want = d < ind->rank - 1 ? ind->dims[d] : x->dims[k + d - (ind->rank - 1)];

		if (upd->dims[d] != want)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "updates' dimension %u is %lld, %lld expected", d,
					 (long long)upd->dims[d], (long long)want);
	}
	tuples = count / k;
	if (tuples > SCATTER_MAX_TUPLES)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "%llu index tuples (at most %d)",
				 (unsigned long long)tuples, SCATTER_MAX_TUPLES);
	slice = gop_prod(x->dims, (uint32_t)k, x->rank);
	so = calloc(tuples ? tuples : 1, sizeof(*so));
	dco = calloc(tuples ? tuples : 1, sizeof(*dco));
	status = so && dco ? VNPU_SUCCESS : VNPU_ERROR_OUT_OF_HOST_MEMORY;
	if (status == VNPU_SUCCESS)
		status = tuple_offsets(n, x->dims, x->rank, 0, idx, tuples, k, dco);
	for (uint64_t j = 0; j < tuples; j++)
		if (so)
			so[j] = j * slice;
	if (status == VNPU_SUCCESS)
		status = gop_set_out(b, n, 0, x->rank, x->dims);
	if (status == VNPU_SUCCESS) {
		x = gop_in(b, n, 0);
		gop_dense(x->dims, x->rank, st);
		status = gop_copy(b, n, x->rank, x->dims, n->in[0], 0, st, n->out[0], 0, st);
	}
	if (status == VNPU_SUCCESS)
		status = move_runs(b, n, op, n->in[2], so, n->out[0], dco, tuples, slice);
	free(so);
	free(dco);
	return status;
}

/*
 * ScatterElements (and Scatter, its name before operator set 11) with
 * constant indices: the data copied to the output, then each update
 * element moved to its place (the indices' position with the axis
 * replaced by the index), in row-major order of the indices.
 */
static int op_scatter_elements(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed_old[] = { "axis", NULL };
	static const char *const allowed[] = { "axis", "reduction", NULL };
	uint64_t st[MAX_RANK], *so = NULL, *dco = NULL;
	int64_t pos[MAX_RANK] = { 0 };
	struct gtensor *x, *ind, *upd;
	const int64_t *idx;
	uint32_t axis = 0;
	enum vnpu_op op;
	size_t count;
	int status;

	status = scatter_prologue(b, n, b->opset >= 16 ? allowed : allowed_old, &op, &idx, &count);
	if (status != VNPU_SUCCESS)
		return status;
	x = gop_in(b, n, 0);
	ind = gop_in(b, n, 1);
	upd = gop_in(b, n, 2);
	status = axis_of(n, gop_attr_int(n, "axis", 0), x->rank, &axis);
	if (status != VNPU_SUCCESS)
		return status;
	if (ind->rank != x->rank || upd->rank != x->rank)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "indices and updates of rank %u and %u, the data's is %u", ind->rank,
				 upd->rank, x->rank);
	for (uint32_t d = 0; d < x->rank; d++)
		if (upd->dims[d] != ind->dims[d] || (d != axis && ind->dims[d] > x->dims[d]))
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "indices' dimension %u is %lld: updates' %lld, at most the data's %lld",
					 d, (long long)ind->dims[d], (long long)upd->dims[d],
					 (long long)x->dims[d]);
	if (count > SCATTER_MAX_TUPLES)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "%zu indices (at most %d)", count,
				 SCATTER_MAX_TUPLES);
	so = calloc(count ? count : 1, sizeof(*so));
	dco = calloc(count ? count : 1, sizeof(*dco));
	if (!so || !dco) {
		free(so);
		free(dco);
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	}
	gop_dense(x->dims, x->rank, st);
	for (size_t j = 0; j < count && status == VNPU_SUCCESS; j++) {
		int64_t i = idx[j], dim = x->dims[axis];

		if (i < -dim || i >= dim) {
			status = node_fail(n, VNPU_ERROR_INVALID_MODEL, "index %lld out of range 0..%lld",
					   (long long)i, (long long)dim - 1);
			break;
		}
		so[j] = j;
		for (uint32_t d = 0; d < x->rank; d++)
			dco[j] += (uint64_t)(d == axis ? (i < 0 ? i + dim : i) : pos[d]) * st[d];
		for (uint32_t d = x->rank; d-- > 0;) {
			if (++pos[d] < ind->dims[d])
				break;
			pos[d] = 0;
		}
	}
	if (status == VNPU_SUCCESS)
		status = gop_set_out(b, n, 0, x->rank, x->dims);
	if (status == VNPU_SUCCESS) {
		x = gop_in(b, n, 0);
		status = gop_copy(b, n, x->rank, x->dims, n->in[0], 0, st, n->out[0], 0, st);
	}
	if (status == VNPU_SUCCESS)
		status = move_runs(b, n, op, n->in[2], so, n->out[0], dco, count, 1);
	free(so);
	free(dco);
	return status;
}

/*
 * GatherND with constant indices: each index tuple's slice of the data
 * (within its batch, the first @batch_dims dimensions shared by the data
 * and the indices) moved to its place in the output.
 */
static int op_gather_nd(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "batch_dims", NULL };
	int64_t bd = gop_attr_int(n, "batch_dims", 0), dims[MAX_RANK];
	uint64_t slice, tuples, per_batch, batches, k, *so = NULL, *dco = NULL, bstride;
	struct gtensor *x, *ind;
	const int64_t *idx;
	uint32_t rank = 0;
	size_t count;
	int status;

	if ((status = gop_check_attrs(n, b->opset >= 12 ? allowed : NULL)) ||
	    (status = gop_need_inputs(n, 2, 2)) || (status = gop_need_movable(b, n, 0)) ||
	    (status = gop_single_output(n)))
		return status;
	x = gop_in(b, n, 0);
	ind = gop_in(b, n, 1);
	idx = const_indices(b, n, &count);
	if (!idx)
		return VNPU_ERROR_NOT_SUPPORTED;
	k = ind->rank ? (uint64_t)ind->dims[ind->rank - 1] : 0;
	if (bd < 0 || !ind->rank || bd >= ind->rank || bd >= x->rank || !k ||
	    k > x->rank - (uint64_t)bd)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "indices' last dimension %llu and batch_dims %lld for data of rank %u",
				 (unsigned long long)k, (long long)bd, x->rank);
	for (int64_t d = 0; d < bd; d++)
		if (ind->dims[d] != x->dims[d])
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "batch dimension %lld differs: %lld and %lld", (long long)d,
					 (long long)ind->dims[d], (long long)x->dims[d]);
	/* batch dims, indices' dims to the last, data's past bd + k. */
	for (uint32_t d = 0; d < ind->rank - 1; d++)
		dims[rank++] = ind->dims[d];
	for (uint64_t d = (uint64_t)bd + k; d < x->rank; d++)
		dims[rank++] = x->dims[d];
	if (rank > MAX_RANK)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "output of more than %d dimensions",
				 MAX_RANK);
	tuples = count / k;
	if (tuples > SCATTER_MAX_TUPLES)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "%llu index tuples (at most %d)",
				 (unsigned long long)tuples, SCATTER_MAX_TUPLES);
	batches = gop_prod(x->dims, 0, (uint32_t)bd);
	per_batch = batches ? tuples / batches : 0;
	bstride = gop_prod(x->dims, (uint32_t)bd, x->rank);
	slice = gop_prod(x->dims, (uint32_t)(bd + k), x->rank);
	so = calloc(tuples ? tuples : 1, sizeof(*so));
	dco = calloc(tuples ? tuples : 1, sizeof(*dco));
	status = so && dco ? VNPU_SUCCESS : VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (uint64_t j = 0; j < tuples && status == VNPU_SUCCESS; j++) {
		so[j] = (j / per_batch) * bstride;
		dco[j] = j * slice;
	}
	if (status == VNPU_SUCCESS)
		status = tuple_offsets(n, x->dims + bd, x->rank - (uint32_t)bd, 0, idx, tuples, k,
				       so);
	if (status == VNPU_SUCCESS)
		status = gop_set_out(b, n, 0, rank, dims);
	if (status == VNPU_SUCCESS)
		status = move_runs(b, n, VNPU_OP_T_COPY, n->in[0], so, n->out[0], dco, tuples,
				   slice);
	free(so);
	free(dco);
	return status;
}

/*
 * OneHot with constant indices and depth: a constant bool mask of the
 * output's shape (1 where the position along the axis is the index,
 * negative ones counted from the end, none for an index out of range);
 * the output filled with values[0] (the off value), then T_WHERE of the
 * mask writes values[1].
 */
static int op_one_hot(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "axis", NULL };
	int64_t dims[MAX_RANK], depth, outer, inner;
	uint64_t zero[MAX_RANK] = { 0 }, sc[MAX_RANK];
	struct gtensor *ind, *dep, *val, *y;
	const void *dv, *iv;
	uint32_t rank, axis = 0;
	char name[64];
	uint8_t *mask;
	int mid, status;

	if ((status = gop_check_attrs(n, allowed)) || (status = gop_need_inputs(n, 3, 3)) ||
	    (status = gop_single_output(n)))
		return status;
	ind = gop_in(b, n, 0);
	dep = gop_in(b, n, 1);
	val = gop_in(b, n, 2);
	/* The output is of the values' type, moved bit exactly. */
	if (!gb_is_io_type(val->dtype))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "values of element type %d not supported (float, float16, int8, uint8, int32 and bool are)",
				 val->dtype);
	iv = gop_const_data(b, n->in[0]);
	dv = gop_const_data(b, n->in[1]);
	if (!iv || !dv)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "indices and depth: each must be a constant (given at load)");
	if (dep->count != 1 || val->count != 2)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "depth of %llu elements and values of %llu (1 and 2 expected)",
				 (unsigned long long)dep->count, (unsigned long long)val->count);
	depth = (int64_t)gb_const_value(dep->dtype, dv, 0);
	rank = ind->rank + 1;
	if (depth < 1 || depth > (1 << 24) || rank > MAX_RANK)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "depth %lld for indices of rank %u",
				 (long long)depth, ind->rank);
	status = axis_of(n, gop_attr_int(n, "axis", -1), rank, &axis);
	if (status != VNPU_SUCCESS)
		return status;
	for (uint32_t d = 0, e = 0; d < rank; d++)
		dims[d] = d == axis ? depth : ind->dims[e++];
	outer = (int64_t)gop_prod(ind->dims, 0, axis);
	inner = (int64_t)gop_prod(ind->dims, axis, ind->rank);
	mask = calloc((size_t)(outer * depth * inner) + 1, 1);
	if (!mask)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			/* A fraction truncates, as the reference's cast does. */
			int64_t k = (int64_t)gb_const_value(ind->dtype, iv,
							    (uint64_t)(o * inner + i));

			if (k < 0)
				k += depth;
			if (k >= 0 && k < depth)
				mask[(o * depth + k) * inner + i] = 1;
		}
	snprintf(name, sizeof(name), "\x01onehot.%d", n->index);
	status = gb_add_weight(b, name, VNPU_DTYPE_BOOL, rank, dims, mask, &mid);
	free(mask);
	if (status == VNPU_SUCCESS)
		status = gop_set_out(b, n, 0, rank, dims);
	if (status != VNPU_SUCCESS)
		return status;
	y = &b->tensors[n->out[0]];
	gb_set_shape(y, gop_in(b, n, 2)->dtype, rank, dims);
	gop_dense(dims, rank, sc);
	status = gop_copy(b, n, rank, dims, n->in[2], 0, zero, n->out[0], 0, sc);
	if (status == VNPU_SUCCESS) {
		struct tlaunch l;

		gop_tl_init(&l, VNPU_OP_T_WHERE, rank, dims);
		l.ta = n->in[2];
		l.oa = 1;
		l.tb = mid;
		memcpy(l.sb, sc, sizeof(sc));
		l.tc = n->out[0];
		memcpy(l.sc, sc, sizeof(sc));
		status = gop_tl_emit(b, n, &l);
	}
	return status;
}

const struct gop_map gop_data_ops[] = {
	{ "Concat", op_concat, 1 }, { "Split", op_split, 2 }, { "Slice", op_slice, 1 },
	{ "Gather", op_gather, 1 }, { "Pad", op_pad, 2 }, { "Expand", op_expand, 8 },
	{ "Tile", op_tile, 6 }, { "DepthToSpace", op_depth_space, 1 },
	{ "SpaceToDepth", op_depth_space, 1 }, { "Dropout", op_dropout, 7 },
	{ "Cast", op_cast, 6 }, { "CastLike", op_castlike, 15 }, { "EyeLike", op_eyelike, 9 },
	{ "Trilu", op_trilu, 14 }, { "Resize", op_resize, 11 },
	{ "Upsample", op_resize, 7 }, { "ScatterND", op_scatter_nd, 11 },
	{ "ScatterElements", op_scatter_elements, 11 }, { "Scatter", op_scatter_elements, 9 },
	{ "GatherND", op_gather_nd, 11 }, { "OneHot", op_one_hot, 9 },
	{ NULL, NULL, 0 },
};
