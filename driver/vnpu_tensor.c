// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/**
 * DOC: vnpu tensor operators
 *
 * The N-d tensor operators of the KERNEL command (&struct
 * drm_vnpu_tensor_args, operators from %DRM_VNPU_OP_T_COPY). At submit
 * vnpu_tensor_check() checks the arguments and returns the device ranges
 * of every array, and vnpu_tensor_prepare() drops dimensions of size 1 and
 * merges neighbouring dimensions that every tensor walks contiguously, so
 * that dense work runs in long inner loops.
 *
 * vnpu_tensor_run() walks the iteration space with &struct vnpu_iter, in
 * row-major order. COPY and IM2COL move elements (converting them to C's
 * element type with the integer code of vnpu_dtype.h) and need no FPU, nor
 * does WHERE, which moves A's elements where B is non-zero; the others run
 * in vnpu_ops_fpu.c in sections of at most %VNPU_FPU_CHUNK points (pools:
 * window elements, plus one window) between kernel_fpu_begin() and
 * kernel_fpu_end(), with cond_resched() and the abort check between
 * sections, as the 2-D operators do.
 *
 * GATHER (uAPI 1.7) moves A's elements at the indices B holds, as COPY
 * moves them, and stops the job with -ERANGE at an index out of range.
 * TOPK (1.7) sorts each row of A along its axis with sort() on a scratch
 * array of keys and indices allocated at submit (vnpu_tensor_alloc()),
 * one row per section: integer keys, no FPU.
 */

#include <linux/fpu.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include <drm/vnpu_accel.h>

#include "vnpu_dtype.h"
#include "vnpu_ops.h"

/* 32-bit words COPY and IM2COL move between two scheduling points. */
#define VNPU_COPY_CHUNK (16 * VNPU_FPU_CHUNK)

enum vnpu_t_kind {
	VNPU_T_UNARY,	/* elementwise, A only */
	VNPU_T_BINARY,	/* elementwise, A and B */
	VNPU_T_REDUCE,	/* over @axes, C without them */
	VNPU_T_DOT,	/* over @axes, A and B, C without them */
	VNPU_T_SOFTMAX,	/* over @axes, C like A */
	VNPU_T_WINDOW,	/* IM2COL and the pools */
	VNPU_T_NORM,	/* BATCHNORM */
	VNPU_T_GATHER,	/* GATHER: A at B's indices along @axes */
	VNPU_T_TOPK,	/* TOPK: C and D along @axes */
};

static int vnpu_t_kind(u32 op)
{
	switch (op) {
	case DRM_VNPU_OP_T_COPY:
	case DRM_VNPU_OP_T_RELU:
	case DRM_VNPU_OP_T_SIGMOID:
	case DRM_VNPU_OP_T_TANH:
	case DRM_VNPU_OP_T_EXP:
	case DRM_VNPU_OP_T_LOG ... DRM_VNPU_OP_T_ATANH:
		return VNPU_T_UNARY;
	case DRM_VNPU_OP_T_ADD:
	case DRM_VNPU_OP_T_SUB:
	case DRM_VNPU_OP_T_MUL:
	case DRM_VNPU_OP_T_DIV:
	case DRM_VNPU_OP_T_MAX:
	case DRM_VNPU_OP_T_MIN:
	case DRM_VNPU_OP_T_EQUAL:
	case DRM_VNPU_OP_T_LESS:
	case DRM_VNPU_OP_T_LESS_EQUAL:
	case DRM_VNPU_OP_T_WHERE:
		return VNPU_T_BINARY;
	case DRM_VNPU_OP_T_REDUCE_SUM:
	case DRM_VNPU_OP_T_REDUCE_MEAN:
	case DRM_VNPU_OP_T_REDUCE_MAX:
	case DRM_VNPU_OP_T_ARGMAX:
	case DRM_VNPU_OP_T_ARGMIN:
	case DRM_VNPU_OP_T_REDUCE_PROD:
		return VNPU_T_REDUCE;
	case DRM_VNPU_OP_T_DOT:
		return VNPU_T_DOT;
	case DRM_VNPU_OP_T_SOFTMAX:
		return VNPU_T_SOFTMAX;
	case DRM_VNPU_OP_T_IM2COL:
	case DRM_VNPU_OP_T_MAXPOOL:
	case DRM_VNPU_OP_T_AVGPOOL:
		return VNPU_T_WINDOW;
	case DRM_VNPU_OP_T_BATCHNORM:
		return VNPU_T_NORM;
	case DRM_VNPU_OP_T_GATHER:
		return VNPU_T_GATHER;
	case DRM_VNPU_OP_T_TOPK:
		return VNPU_T_TOPK;
	default:
		return -EINVAL;
	}
}

static bool vnpu_t_is_arg(u32 op)
{
	return op == DRM_VNPU_OP_T_ARGMAX || op == DRM_VNPU_OP_T_ARGMIN;
}

/* The flags operator @op defines. */
static u32 vnpu_t_flags(u32 op)
{
	if (op == DRM_VNPU_OP_T_AVGPOOL)
		return DRM_VNPU_TENSOR_COUNT_INCLUDE_PAD;
	if (vnpu_t_is_arg(op))
		return DRM_VNPU_TENSOR_SELECT_LAST | DRM_VNPU_TENSOR_INDEX_FP32;
	if (op == DRM_VNPU_OP_T_TOPK)
		return DRM_VNPU_TENSOR_SMALLEST;
	return 0;
}

/* Points of the reduced axes (dimensions below 2^24: at most 2^144 > u64). */
static u64 vnpu_t_axes_points(const struct drm_vnpu_tensor_args *t)
{
	u64 points = 1;
	u32 d;

	for (d = 0; d < t->ndim; d++)
		if ((t->axes & BIT(d)) && check_mul_overflow(points, (u64)t->shape[d], &points))
			return U64_MAX;
	return points;
}

/*
 * Elements a tensor of @ndim dimensions spans. Dimensions are below 2^24
 * and strides below 2^32, so the sum stays below 2^59: no overflow.
 */
static u64 vnpu_span(u32 ndim, const u32 *shape, const u32 *stride)
{
	u64 elems = 1;
	u32 d;

	for (d = 0; d < ndim; d++)
		elems += (u64)(shape[d] - 1) * stride[d];
	return elems;
}

static bool vnpu_t_overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	return a < b + blen && b < a + alen;
}

/* Same address and the same strides on every dimension that matters. */
static bool vnpu_t_in_place(u64 x, const u32 *sx, u64 y, const u32 *sy, u32 ndim,
			    const u32 *shape)
{
	u32 d;

	if (x != y)
		return false;
	for (d = 0; d < ndim; d++)
		if (shape[d] > 1 && sx[d] != sy[d])
			return false;
	return true;
}

static bool vnpu_t_all_zero(const u32 *v, u32 from, u32 to)
{
	for (; from < to; from++)
		if (v[from])
			return false;
	return true;
}

static bool vnpu_dim_ok(u32 v)
{
	return v && v <= DRM_VNPU_KERNEL_MAX_DIM;
}

/*
 * Checks the element types (uAPI 1.5) against the operator of kind @kind:
 * T_COPY and T_IM2COL move an element to the same type or to a float C;
 * the float operators read any type, and write an integer C only when
 * elementwise (a single rounding of each result) or a DOT of integer A
 * and B (an exact sum, saturated); T_WHERE moves A into C of A's type.
 * B's type is 0 when B is unused.
 */
static int vnpu_t_check_dtypes(const struct drm_vnpu_tensor_args *t, int kind, bool uses_b)
{
	static const u8 no_pad[sizeof(t->pad)];

	if (t->dtype_a > DRM_VNPU_DTYPE_I64 || t->dtype_b > DRM_VNPU_DTYPE_I64 ||
	    t->dtype_c > DRM_VNPU_DTYPE_I64 || memcmp(t->pad, no_pad, sizeof(no_pad)))
		return -EINVAL;
	if (!uses_b && t->dtype_b)
		return -EINVAL;
	/* GATHER moves A to C of its type at int32 or int64 indices. */
	if (kind == VNPU_T_GATHER)
		return t->dtype_a == t->dtype_c && (t->dtype_b == DRM_VNPU_DTYPE_I32 ||
						    t->dtype_b == DRM_VNPU_DTYPE_I64) ? 0 : -EINVAL;
	/* Elsewhere int64 is only copied to int64. */
	if (t->dtype_a == DRM_VNPU_DTYPE_I64 || t->dtype_b == DRM_VNPU_DTYPE_I64 ||
	    t->dtype_c == DRM_VNPU_DTYPE_I64)
		return t->op == DRM_VNPU_OP_T_COPY && t->dtype_a == t->dtype_c ? 0 : -EINVAL;
	/* TOPK moves A's elements to C of A's type; D holds int32 indices. */
	if (kind == VNPU_T_TOPK)
		return t->dtype_a == t->dtype_c ? 0 : -EINVAL;
	if (t->op == DRM_VNPU_OP_T_COPY || t->op == DRM_VNPU_OP_T_IM2COL)
		return t->dtype_a == t->dtype_c || vnpu_dtype_is_float(t->dtype_c) ? 0 : -EINVAL;
	if (t->op == DRM_VNPU_OP_T_WHERE)
		return t->dtype_a == t->dtype_c ? 0 : -EINVAL;
	if (!vnpu_dtype_is_float(t->dtype_c) && kind != VNPU_T_UNARY && kind != VNPU_T_BINARY &&
	    !(kind == VNPU_T_DOT && !vnpu_dtype_is_float(t->dtype_a) &&
	      !vnpu_dtype_is_float(t->dtype_b)))
		return -EINVAL;
	/* ARGMAX and ARGMIN write int32 (or, with INDEX_FP32, fp32) indices. */
	if (vnpu_t_is_arg(t->op) && t->dtype_c != DRM_VNPU_DTYPE_F32)
		return -EINVAL;
	return 0;
}

/* Checks the window; fills the output shape; adds the window to @points. */
static int vnpu_t_check_window(const struct drm_vnpu_tensor_args *t, u32 *cshape,
			       u32 *cndim, u64 *points)
{
	const struct drm_vnpu_tensor_window *w = &t->window;
	u64 area = (u64)w->kernel_h * w->kernel_w;

	if (!vnpu_dim_ok(w->kernel_h) || !vnpu_dim_ok(w->kernel_w) ||
	    !vnpu_dim_ok(w->stride_h) || !vnpu_dim_ok(w->stride_w) ||
	    !vnpu_dim_ok(w->dilation_h) || !vnpu_dim_ok(w->dilation_w) ||
	    !vnpu_dim_ok(w->out_h) || !vnpu_dim_ok(w->out_w) ||
	    w->pad_top > DRM_VNPU_KERNEL_MAX_DIM || w->pad_left > DRM_VNPU_KERNEL_MAX_DIM ||
	    w->pad_bottom > DRM_VNPU_KERNEL_MAX_DIM || w->pad_right > DRM_VNPU_KERNEL_MAX_DIM)
		return -EINVAL;
	if (t->op != DRM_VNPU_OP_T_IM2COL && area > VNPU_MAX_POOL_WINDOW)
		return -EINVAL;
	cshape[0] = t->shape[0];
	cshape[1] = t->shape[1];
	if (t->op == DRM_VNPU_OP_T_IM2COL) {
		cshape[2] = w->kernel_h;
		cshape[3] = w->kernel_w;
		cshape[4] = w->out_h;
		cshape[5] = w->out_w;
		*cndim = 6;
	} else {
		cshape[2] = w->out_h;
		cshape[3] = w->out_w;
		*cndim = 4;
	}
	/* The points are the input's N x C times out_h x out_w x the window. */
	*points = (u64)t->shape[0] * t->shape[1];
	if (check_mul_overflow(*points, (u64)w->out_h * w->out_w, points) ||
	    check_mul_overflow(*points, area, points))
		return -EINVAL;
	return 0;
}

static int vnpu_t_check_norm(const struct drm_vnpu_tensor_args *t, struct vnpu_kernel_ranges *r)
{
	const struct drm_vnpu_tensor_norm *nm = &t->norm;
	u64 addr[4] = { nm->scale, nm->bias, nm->mean, nm->var };
	int i;

	if (nm->axis >= t->ndim)
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		if (addr[i] % 4)
			return -EINVAL;
		r->addr[3 + i] = addr[i];
		r->size[3 + i] = (u64)t->shape[nm->axis] * 4;
	}
	return 0;
}

/*
 * The members of 1.7: @k, and D of TOPK. Sets C's length along the axis
 * (TOPK: @k) in @cshape and A's (GATHER: @k) in @ashape.
 */
static int vnpu_t_check_pick(const struct drm_vnpu_tensor_args *t, int kind, u32 *cshape,
			     u32 *ashape)
{
	static const u8 no_pad[sizeof(t->pad2)];
	u32 d = t->axes ? __ffs(t->axes) : 0;

	if (memcmp(t->pad2, no_pad, sizeof(no_pad)))
		return -EINVAL;
	if (kind != VNPU_T_TOPK &&
	    (t->d || t->dtype_d || !vnpu_t_all_zero(t->stride_d, 0, DRM_VNPU_TENSOR_MAX_DIMS)))
		return -EINVAL;
	switch (kind) {
	case VNPU_T_GATHER:
		if (!vnpu_dim_ok(t->k))
			return -EINVAL;
		ashape[d] = t->k;
		return 0;
	case VNPU_T_TOPK:
		if (!t->k || t->k > t->shape[d] || t->shape[d] > DRM_VNPU_TOPK_MAX_AXIS ||
		    t->dtype_d != DRM_VNPU_DTYPE_I32 || t->d % 4 ||
		    !vnpu_t_all_zero(t->stride_d, t->ndim, DRM_VNPU_TENSOR_MAX_DIMS))
			return -EINVAL;
		cshape[d] = t->k;
		return 0;
	default:
		return t->k ? -EINVAL : 0;
	}
}

/* Zero strides on the reduced axes (with @reduced_axes) and nowhere else of size above 1. */
static bool vnpu_t_out_strides_ok(const struct drm_vnpu_tensor_args *t, u32 ndim,
				  const u32 *shape, const u32 *stride, bool reduced_axes)
{
	u32 d;

	if (!vnpu_t_all_zero(stride, ndim, DRM_VNPU_TENSOR_MAX_DIMS))
		return false;
	for (d = 0; d < ndim; d++) {
		bool reduced = reduced_axes && (t->axes & BIT(d));

		if (reduced ? stride[d] != 0 : shape[d] > 1 && !stride[d])
			return false;
	}
	return true;
}

/**
 * vnpu_tensor_check - check the arguments of a tensor operator
 * @t: the arguments, copied from device memory
 * @r: out, the ranges of A, B, C and the BATCHNORM arrays
 *
 * Return: 0 or -EINVAL; the caller checks that the ranges lie in buffers
 * (-EACCES) and that their ends do not wrap.
 */
int vnpu_tensor_check(const struct drm_vnpu_tensor_args *t, struct vnpu_kernel_ranges *r)
{
	static const struct drm_vnpu_tensor_window no_window;
	static const struct drm_vnpu_tensor_norm no_norm;
	u32 cshape[DRM_VNPU_TENSOR_MAX_DIMS], ashape[DRM_VNPU_TENSOR_MAX_DIMS];
	u32 cndim = t->ndim, d, sa, sb, sc;
	int kind = vnpu_t_kind(t->op);
	bool over_axes, one_axis, c_reduced, uses_b, in_place_ok;
	u64 points = 1;
	int ret;

	if (kind < 0 || !t->ndim || t->ndim > DRM_VNPU_TENSOR_MAX_DIMS)
		return -EINVAL;
	if (t->flags & ~vnpu_t_flags(t->op))
		return -EINVAL;
	if (kind == VNPU_T_WINDOW && t->ndim != 4)
		return -EINVAL;
	for (d = 0; d < t->ndim; d++) {
		if (!vnpu_dim_ok(t->shape[d]))
			return -EINVAL;
		cshape[d] = t->shape[d];
		ashape[d] = t->shape[d];
		if (check_mul_overflow(points, (u64)t->shape[d], &points))
			return -EINVAL;
	}
	if (!vnpu_t_all_zero(t->shape, t->ndim, DRM_VNPU_TENSOR_MAX_DIMS) ||
	    !vnpu_t_all_zero(t->stride_a, t->ndim, DRM_VNPU_TENSOR_MAX_DIMS) ||
	    !vnpu_t_all_zero(t->stride_b, t->ndim, DRM_VNPU_TENSOR_MAX_DIMS))
		return -EINVAL;

	over_axes = kind == VNPU_T_REDUCE || kind == VNPU_T_DOT || kind == VNPU_T_SOFTMAX;
	one_axis = kind == VNPU_T_GATHER || kind == VNPU_T_TOPK;
	if (one_axis ? hweight32(t->axes) != 1 || t->axes >> t->ndim :
	    over_axes ? !t->axes || t->axes >> t->ndim : t->axes)
		return -EINVAL;
	c_reduced = kind == VNPU_T_REDUCE || kind == VNPU_T_DOT;
	uses_b = kind == VNPU_T_BINARY || kind == VNPU_T_DOT || kind == VNPU_T_GATHER;
	in_place_ok = kind == VNPU_T_UNARY || kind == VNPU_T_BINARY ||
		      kind == VNPU_T_SOFTMAX || kind == VNPU_T_NORM;
	ret = vnpu_t_check_dtypes(t, kind, uses_b);
	if (ret)
		return ret;
	sa = vnpu_dtype_size(t->dtype_a);
	sb = vnpu_dtype_size(t->dtype_b);
	sc = vnpu_dtype_size(t->dtype_c);
	ret = vnpu_t_check_pick(t, kind, cshape, ashape);
	if (ret)
		return ret;

	if (kind == VNPU_T_WINDOW) {
		ret = vnpu_t_check_window(t, cshape, &cndim, &points);
		if (ret)
			return ret;
	} else if (memcmp(&t->window, &no_window, sizeof(no_window))) {
		return -EINVAL;
	}
	if (points > DRM_VNPU_TENSOR_MAX_POINTS)
		return -EINVAL;
	/* ARGMAX and ARGMIN write int32 indices. */
	if (vnpu_t_is_arg(t->op) && vnpu_t_axes_points(t) > S32_MAX)
		return -EINVAL;
	if (kind == VNPU_T_NORM) {
		ret = vnpu_t_check_norm(t, r);
		if (ret)
			return ret;
	} else if (memcmp(&t->norm, &no_norm, sizeof(no_norm))) {
		return -EINVAL;
	}

	/* The outputs: zero strides exactly on the reduced axes. */
	if (!vnpu_t_out_strides_ok(t, cndim, cshape, t->stride_c, c_reduced))
		return -EINVAL;
	if (kind == VNPU_T_TOPK) {
		if (!vnpu_t_out_strides_ok(t, cndim, cshape, t->stride_d, false))
			return -EINVAL;
		r->addr[VNPU_KERNEL_ARRAY_D] = t->d;
		r->size[VNPU_KERNEL_ARRAY_D] = vnpu_span(cndim, cshape, t->stride_d) * 4;
	}

	if (t->a % sa || t->c % sc)
		return -EINVAL;
	if (uses_b ? t->b % sb : t->b || !vnpu_t_all_zero(t->stride_b, 0, t->ndim))
		return -EINVAL;

	r->addr[0] = t->a;
	r->size[0] = vnpu_span(t->ndim, ashape, t->stride_a) * sa;
	r->addr[1] = t->b;
	r->size[1] = uses_b ? vnpu_span(t->ndim, t->shape, t->stride_b) * sb : 0;
	r->addr[2] = t->c;
	r->size[2] = vnpu_span(cndim, cshape, t->stride_c) * sc;

	/* In place only between tensors of one type: same elements, same bytes. */
	if (vnpu_t_overlap(t->c, r->size[2], t->a, r->size[0]) &&
	    !(in_place_ok && t->dtype_a == t->dtype_c &&
	      vnpu_t_in_place(t->c, t->stride_c, t->a, t->stride_a, t->ndim, t->shape)))
		return -EINVAL;
	if (uses_b && vnpu_t_overlap(t->c, r->size[2], t->b, r->size[1]) &&
	    !(in_place_ok && t->dtype_b == t->dtype_c &&
	      vnpu_t_in_place(t->c, t->stride_c, t->b, t->stride_b, t->ndim, t->shape)))
		return -EINVAL;
	/* BATCHNORM reads its arrays while it writes C; TOPK writes C and D. */
	for (d = 3; d < VNPU_KERNEL_MAX_ARRAYS; d++)
		if (r->size[d] && vnpu_t_overlap(t->c, r->size[2], r->addr[d], r->size[d]))
			return -EINVAL;
	if (kind == VNPU_T_TOPK &&
	    vnpu_t_overlap(t->d, r->size[VNPU_KERNEL_ARRAY_D], t->a, r->size[0]))
		return -EINVAL;
	return 0;
}

/* Removes dimension @d of @t. */
static void vnpu_t_drop_dim(struct drm_vnpu_tensor_args *t, u32 d)
{
	u32 low = t->axes & (BIT(d) - 1), high = t->axes >> (d + 1);

	t->axes = low | high << d;

	for (; d + 1 < t->ndim; d++) {
		t->shape[d] = t->shape[d + 1];
		t->stride_a[d] = t->stride_a[d + 1];
		t->stride_b[d] = t->stride_b[d + 1];
		t->stride_c[d] = t->stride_c[d + 1];
		t->stride_d[d] = t->stride_d[d + 1];
	}
	t->ndim--;
	t->shape[t->ndim] = 0;
	t->stride_a[t->ndim] = 0;
	t->stride_b[t->ndim] = 0;
	t->stride_c[t->ndim] = 0;
	t->stride_d[t->ndim] = 0;
}

/* Whether dimension @d + 1 continues dimension @d in @stride. */
static bool vnpu_t_contiguous(const u32 *shape, const u32 *stride, u32 d)
{
	return (u64)stride[d] == (u64)shape[d + 1] * stride[d + 1];
}

/**
 * vnpu_tensor_prepare - simplify the iteration space of checked arguments
 * @t: arguments that passed vnpu_tensor_check()
 *
 * Drops dimensions of size 1 and merges a dimension into the next one
 * when both are (or are not) in @axes and every tensor steps over the
 * pair as over one dimension. The result walks the same elements in the
 * same order; @ndim may become 0 (a single point). The window operators
 * and BATCHNORM, whose dimensions have meanings, are left as they are;
 * the axis of GATHER and TOPK stays, whatever its size.
 */
void vnpu_tensor_prepare(struct drm_vnpu_tensor_args *t)
{
	int kind = vnpu_t_kind(t->op);
	bool keep_axis = kind == VNPU_T_GATHER || kind == VNPU_T_TOPK;
	u32 d;

	if (kind == VNPU_T_WINDOW || kind == VNPU_T_NORM)
		return;
	for (d = 0; d < t->ndim;) {
		if (t->shape[d] == 1 && !(keep_axis && (t->axes & BIT(d))))
			vnpu_t_drop_dim(t, d);
		else
			d++;
	}
	for (d = 0; d + 1 < t->ndim;) {
		u64 merged = (u64)t->shape[d] * t->shape[d + 1];

		if (merged <= U32_MAX &&
		    !!(t->axes & BIT(d)) == !!(t->axes & BIT(d + 1)) &&
		    vnpu_t_contiguous(t->shape, t->stride_a, d) &&
		    vnpu_t_contiguous(t->shape, t->stride_b, d) &&
		    vnpu_t_contiguous(t->shape, t->stride_c, d) &&
		    vnpu_t_contiguous(t->shape, t->stride_d, d)) {
			/* Dimension d + 1 takes the product; d goes. */
			t->shape[d + 1] = merged;
			t->shape[d] = 1;
			vnpu_t_drop_dim(t, d);
		} else {
			d++;
		}
	}
}

/*
 * Sets @it to the first point of the dimensions of @t that are in @axes
 * (@in) or not (!@in), with the strides of A, B and C.
 */
static void vnpu_iter_init(struct vnpu_iter *it, const struct drm_vnpu_tensor_args *t,
			   bool in)
{
	u32 d;

	memset(it, 0, sizeof(*it));
	for (d = 0; d < t->ndim; d++) {
		if (!!(t->axes & BIT(d)) != in)
			continue;
		it->shape[it->ndim] = t->shape[d];
		it->stride[0][it->ndim] = t->stride_a[d];
		it->stride[1][it->ndim] = t->stride_b[d];
		it->stride[2][it->ndim] = t->stride_c[d];
		it->ndim++;
	}
}

static u64 vnpu_iter_points(const struct vnpu_iter *it)
{
	u64 points = 1;
	u32 d;

	for (d = 0; d < it->ndim; d++)
		points *= it->shape[d];
	return points;
}

/*
 * Between two sections of a walker: a chance to reschedule, then false
 * once the job is aborted, and the walker returns.
 */
static bool vnpu_t_continue(const bool *aborted)
{
	cond_resched();
	return !READ_ONCE(*aborted);
}

/*
 * For the walkers without FPU sections: counts @n more words in *@done,
 * and every VNPU_COPY_CHUNK of them ends a section as vnpu_t_continue().
 */
static bool vnpu_t_count(u64 *done, u64 n, const bool *aborted)
{
	*done += n;
	if (*done < VNPU_COPY_CHUNK)
		return true;
	*done = 0;
	return vnpu_t_continue(aborted);
}

/* Padding of IM2COL: zero bits are 0 in every element type. */
static const u32 vnpu_t_zero;

/* Element @j of A to element @i of C, converted to C's type if it differs. */
static void vnpu_t_move(const struct vnpu_kernel_op *op, size_t i, size_t j)
{
	u32 da = op->t.dtype_a, dc = op->t.dtype_c;

	if (da == dc)
		vnpu_dtype_move(op->c, i, op->a, j, da);
	else
		vnpu_dtype_store(op->c, dc, i, vnpu_dtype_load(op->a, da, j));
}

/* COPY: elements moved or converted as integers, no FPU. */
static void vnpu_t_run_copy(const struct vnpu_kernel_op *op, const bool *aborted)
{
	const u32 *a = op->a;
	u32 *c = op->c;
	bool words = op->t.dtype_a == op->t.dtype_c && vnpu_dtype_size(op->t.dtype_a) == 4;
	struct vnpu_iter it;
	u64 left, done = 0;

	vnpu_iter_init(&it, &op->t, false);
	for (left = vnpu_iter_points(&it); left; ) {
		u32 n = min_t(u64, vnpu_iter_run(&it), left), i;
		u32 sa = it.ndim ? it.stride[0][it.ndim - 1] : 0;
		u32 sc = it.ndim ? it.stride[2][it.ndim - 1] : 0;

		if (words) {
			const u32 *x = a + it.off[0];
			u32 *z = c + it.off[2];

			for (i = 0; i < n; i++)
				z[(size_t)i * sc] = x[(size_t)i * sa];
		} else {
			for (i = 0; i < n; i++)
				vnpu_t_move(op, it.off[2] + (size_t)i * sc,
					    it.off[0] + (size_t)i * sa);
		}
		vnpu_iter_advance(&it, n);
		left -= n;
		if (!vnpu_t_count(&done, n, aborted))
			return;
	}
}

/* Whether element @i of the array of type @dt at @base is non-zero (-0 is zero). */
static bool vnpu_t_nonzero(const void *base, u32 dt, size_t i)
{
	switch (dt) {
	case DRM_VNPU_DTYPE_F16:
		return ((const u16 *)base)[i] & 0x7fff;
	case DRM_VNPU_DTYPE_I8:
	case DRM_VNPU_DTYPE_U8:
		return ((const u8 *)base)[i];
	case DRM_VNPU_DTYPE_I32:
		return ((const u32 *)base)[i];
	default:
		return ((const u32 *)base)[i] & 0x7fffffff;
	}
}

/* WHERE: A's elements moved where B is non-zero, as integers, no FPU. */
static void vnpu_t_run_where(const struct vnpu_kernel_op *op, const bool *aborted)
{
	struct vnpu_iter it;
	u64 left, done = 0;

	vnpu_iter_init(&it, &op->t, false);
	for (left = vnpu_iter_points(&it); left; ) {
		u32 n = min_t(u64, vnpu_iter_run(&it), left), i;
		u32 sa = it.ndim ? it.stride[0][it.ndim - 1] : 0;
		u32 sb = it.ndim ? it.stride[1][it.ndim - 1] : 0;
		u32 sc = it.ndim ? it.stride[2][it.ndim - 1] : 0;

		for (i = 0; i < n; i++)
			if (vnpu_t_nonzero(op->b, op->t.dtype_b, it.off[1] + (size_t)i * sb))
				vnpu_dtype_move(op->c, it.off[2] + (size_t)i * sc, op->a,
						it.off[0] + (size_t)i * sa, op->t.dtype_a);
		vnpu_iter_advance(&it, n);
		left -= n;
		if (!vnpu_t_count(&done, n, aborted))
			return;
	}
}

/* Elementwise operators and BATCHNORM, VNPU_FPU_CHUNK points a section. */
static void vnpu_t_run_map(const struct vnpu_kernel_op *op, const bool *aborted)
{
	struct vnpu_iter it;
	u64 left;

	vnpu_iter_init(&it, &op->t, false);
	for (left = vnpu_iter_points(&it); left; ) {
		u32 n = min_t(u64, left, VNPU_FPU_CHUNK);

		if (!vnpu_t_continue(aborted))
			return;
		kernel_fpu_begin();
		vnpu_fpu_t_map(op, &it, n);
		kernel_fpu_end();
		left -= n;
	}
}

/* Reductions and DOT: output element by output element, in sections. */
static void vnpu_t_run_reduce(const struct vnpu_kernel_op *op, const bool *aborted)
{
	struct vnpu_reduce r;

	vnpu_iter_init(&r.outer, &op->t, false);
	vnpu_iter_init(&r.inner, &op->t, true);
	r.inner_points = vnpu_iter_points(&r.inner);
	r.inner_left = r.inner_points;
	r.outer_left = vnpu_iter_points(&r.outer);
	r.acc = vnpu_t_reduce_start(op->t.op);
	r.arg = 0;
	r.iacc = 0;
	while (r.outer_left) {
		if (!vnpu_t_continue(aborted))
			return;
		kernel_fpu_begin();
		vnpu_fpu_t_reduce(op, &r, VNPU_FPU_CHUNK);
		kernel_fpu_end();
	}
}

/* SOFTMAX: per group of the axes, maximum, exp(x - max) and sum, divide. */
static void vnpu_t_run_softmax(const struct vnpu_kernel_op *op, const bool *aborted)
{
	struct vnpu_iter outer, inner;
	u64 groups, points, left;
	int pass;

	vnpu_iter_init(&outer, &op->t, false);
	vnpu_iter_init(&inner, &op->t, true);
	points = vnpu_iter_points(&inner);
	for (groups = vnpu_iter_points(&outer); groups; groups--) {
		u32 max = VNPU_FP32_NEG_INF, sum = VNPU_FP32_ZERO, n;
		u64 a0 = outer.off[0], c0 = outer.off[2];

		/* Three passes; @inner wraps back to its first point after each. */
		for (pass = 0; pass < 3; pass++) {
			for (left = points; left; left -= n) {
				if (!vnpu_t_continue(aborted))
					return;
				n = min_t(u64, left, VNPU_FPU_CHUNK);
				kernel_fpu_begin();
				if (pass == 0)
					max = vnpu_fpu_t_group_max(op, &inner, a0, n, max);
				else if (pass == 1)
					sum = vnpu_fpu_t_group_exp(op, &inner, a0, c0, n, max, sum);
				else
					vnpu_fpu_t_group_div(op, &inner, c0, n, sum);
				kernel_fpu_end();
			}
		}
		vnpu_iter_advance(&outer, 1);
	}
}

/*
 * The output iteration of the window operators: dimensions N and C of A
 * (the window's rows and columns are computed), and C's own dimensions.
 */
static void vnpu_t_window_iter(struct vnpu_iter *it, const struct drm_vnpu_tensor_args *t)
{
	const struct drm_vnpu_tensor_window *w = &t->window;
	bool im2col = t->op == DRM_VNPU_OP_T_IM2COL;
	u32 d;

	memset(it, 0, sizeof(*it));
	it->ndim = im2col ? 6 : 4;
	it->shape[0] = t->shape[0];
	it->shape[1] = t->shape[1];
	it->shape[2] = im2col ? w->kernel_h : w->out_h;
	it->shape[3] = im2col ? w->kernel_w : w->out_w;
	it->shape[4] = im2col ? w->out_h : 0;
	it->shape[5] = im2col ? w->out_w : 0;
	it->stride[0][0] = t->stride_a[0];
	it->stride[0][1] = t->stride_a[1];
	for (d = 0; d < it->ndim; d++)
		it->stride[2][d] = t->stride_c[d];
}

/* IM2COL: elements moved or converted as integers, no FPU; 0 for padding. */
static void vnpu_t_run_im2col(const struct vnpu_kernel_op *op, const bool *aborted)
{
	const struct drm_vnpu_tensor_window *w = &op->t.window;
	struct vnpu_iter it;
	u64 left, done = 0;

	vnpu_t_window_iter(&it, &op->t);
	for (left = vnpu_iter_points(&it); left; left--) {
		s64 h = (s64)it.idx[4] * w->stride_h - w->pad_top + (s64)it.idx[2] * w->dilation_h;
		s64 x = (s64)it.idx[5] * w->stride_w - w->pad_left + (s64)it.idx[3] * w->dilation_w;

		if (h >= 0 && h < op->t.shape[2] && x >= 0 && x < op->t.shape[3])
			vnpu_t_move(op, it.off[2], it.off[0] + (u64)h * op->t.stride_a[2] +
				    (u64)x * op->t.stride_a[3]);
		else
			vnpu_dtype_move(op->c, it.off[2], &vnpu_t_zero, 0, op->t.dtype_c);
		vnpu_iter_advance(&it, 1);
		if (!vnpu_t_count(&done, 1, aborted))
			return;
	}
}

/* MAXPOOL, AVGPOOL: output elements in sections of about VNPU_FPU_CHUNK reads. */
static void vnpu_t_run_pool(const struct vnpu_kernel_op *op, const bool *aborted)
{
	struct vnpu_iter it;
	u64 left;

	vnpu_t_window_iter(&it, &op->t);
	for (left = vnpu_iter_points(&it); left; ) {
		if (!vnpu_t_continue(aborted))
			return;
		kernel_fpu_begin();
		left -= vnpu_fpu_t_pool(op, &it, min_t(u64, left, VNPU_FPU_CHUNK));
		kernel_fpu_end();
	}
}

/*
 * GATHER: C[i] = A[i with i[d] replaced by B[i]], moved as COPY moves;
 * -ERANGE at the first index outside -k..k - 1, which is not read.
 */
static int vnpu_t_run_gather(const struct vnpu_kernel_op *op, const bool *aborted)
{
	const struct drm_vnpu_tensor_args *t = &op->t;
	struct drm_vnpu_tensor_args all = *t;
	u32 d = __ffs(t->axes);
	u64 step = t->stride_a[d], left, done = 0;
	s64 len = t->k;
	struct vnpu_iter it;

	/* Every dimension walks; A steps along d by the index, not by i[d]. */
	all.axes = 0;
	all.stride_a[d] = 0;
	vnpu_iter_init(&it, &all, false);
	for (left = vnpu_iter_points(&it); left; ) {
		u32 n = min_t(u64, vnpu_iter_run(&it), left), i;
		u32 sa = it.stride[0][it.ndim - 1];
		u32 sb = it.stride[1][it.ndim - 1];
		u32 sc = it.stride[2][it.ndim - 1];

		for (i = 0; i < n; i++) {
			s64 x = vnpu_dtype_load_int(op->b, t->dtype_b, it.off[1] + (size_t)i * sb);

			if (x < 0)
				x += len;
			if (x < 0 || x >= len)
				return -ERANGE;
			vnpu_dtype_move(op->c, it.off[2] + (size_t)i * sc, op->a,
					it.off[0] + (size_t)i * sa + (u64)x * step, t->dtype_a);
		}
		vnpu_iter_advance(&it, n);
		left -= n;
		if (!vnpu_t_count(&done, n, aborted))
			return 0;
	}
	return 0;
}

/* One element of a TOPK row: its sort key and its index along the axis. */
struct vnpu_topk_entry {
	s64 key;
	u32 index;
};

/*
 * The order of element @i of A (type @dt) as an integer: integers as they
 * are; fp32 and fp16 (exactly widened) by sign and magnitude, so that -0
 * and +0 are equal; NaN above every number.
 */
static s64 vnpu_topk_key(const void *a, u32 dt, size_t i)
{
	u32 f;

	if (!vnpu_dtype_is_float(dt))
		return vnpu_dtype_load_int(a, dt, i);
	f = vnpu_dtype_load(a, dt, i);
	if ((f & 0x7fffffff) > 0x7f800000)
		return S64_MAX;
	return f & 0x80000000 ? -(s64)(f & 0x7fffffff) : (s64)f;
}

/* Largest first; equal keys by lower index first. */
static int vnpu_topk_cmp_down(const void *x, const void *y)
{
	const struct vnpu_topk_entry *p = x, *q = y;

	if (p->key != q->key)
		return p->key > q->key ? -1 : 1;
	return p->index < q->index ? -1 : p->index > q->index;
}

/* Smallest first; equal keys by lower index first. */
static int vnpu_topk_cmp_up(const void *x, const void *y)
{
	const struct vnpu_topk_entry *p = x, *q = y;

	if (p->key != q->key)
		return p->key < q->key ? -1 : 1;
	return p->index < q->index ? -1 : p->index > q->index;
}

/* TOPK: each row along d sorted in the scratch; one row per section. */
static int vnpu_t_run_topk(const struct vnpu_kernel_op *op, const bool *aborted)
{
	const struct drm_vnpu_tensor_args *t = &op->t;
	struct drm_vnpu_tensor_args rows = *t;
	struct vnpu_topk_entry *e = op->scratch;
	u32 d = __ffs(t->axes), n = t->shape[d], j;
	u32 sa = t->stride_a[d], sc = t->stride_c[d], sd = t->stride_d[d];
	bool smallest = t->flags & DRM_VNPU_TENSOR_SMALLEST;
	s32 *out_d = op->d;
	struct vnpu_iter it;
	u64 left;

	/* The rows: every dimension but d; D walks in B's place. */
	memcpy(rows.stride_b, t->stride_d, sizeof(rows.stride_b));
	vnpu_iter_init(&it, &rows, false);
	for (left = vnpu_iter_points(&it); left; left--) {
		if (!vnpu_t_continue(aborted))
			return 0;
		for (j = 0; j < n; j++) {
			e[j].key = vnpu_topk_key(op->a, t->dtype_a, it.off[0] + (size_t)j * sa);
			e[j].index = j;
		}
		sort(e, n, sizeof(*e), smallest ? vnpu_topk_cmp_up : vnpu_topk_cmp_down, NULL);
		for (j = 0; j < t->k; j++) {
			vnpu_dtype_move(op->c, it.off[2] + (size_t)j * sc, op->a,
					it.off[0] + (size_t)e[j].index * sa, t->dtype_a);
			out_d[it.off[1] + (size_t)j * sd] = e[j].index;
		}
		vnpu_iter_advance(&it, 1);
	}
	return 0;
}

/**
 * vnpu_tensor_alloc - allocate what a checked operator needs to run
 * @op: the operator, @op->t prepared
 *
 * TOPK gets its scratch row (at most %DRM_VNPU_TOPK_MAX_AXIS entries).
 *
 * Return: 0 or -ENOMEM.
 */
int vnpu_tensor_alloc(struct vnpu_kernel_op *op)
{
	if (op->t.op != DRM_VNPU_OP_T_TOPK)
		return 0;
	op->scratch = kvmalloc_array(op->t.shape[__ffs(op->t.axes)],
				     sizeof(struct vnpu_topk_entry), GFP_KERNEL);
	return op->scratch ? 0 : -ENOMEM;
}

/**
 * vnpu_kernel_op_free - free a resolved operator and its scratch
 * @op: the operator, or NULL
 */
void vnpu_kernel_op_free(struct vnpu_kernel_op *op)
{
	if (!op)
		return;
	kvfree(op->scratch);
	kfree(op);
}

/**
 * vnpu_tensor_run - execute a tensor operator
 * @op: the resolved operator (@op->t prepared)
 * @aborted: checked between sections; the operator stops when it is set
 *
 * Return: 0, or -ERANGE for a GATHER index out of range (the operator
 * stops there).
 */
int vnpu_tensor_run(const struct vnpu_kernel_op *op, const bool *aborted)
{
	switch (vnpu_t_kind(op->t.op)) {
	case VNPU_T_GATHER:
		return vnpu_t_run_gather(op, aborted);
	case VNPU_T_TOPK:
		return vnpu_t_run_topk(op, aborted);
	case VNPU_T_REDUCE:
	case VNPU_T_DOT:
		vnpu_t_run_reduce(op, aborted);
		break;
	case VNPU_T_SOFTMAX:
		vnpu_t_run_softmax(op, aborted);
		break;
	case VNPU_T_WINDOW:
		if (op->t.op == DRM_VNPU_OP_T_IM2COL)
			vnpu_t_run_im2col(op, aborted);
		else
			vnpu_t_run_pool(op, aborted);
		break;
	default:
		if (op->t.op == DRM_VNPU_OP_T_COPY)
			vnpu_t_run_copy(op, aborted);
		else if (op->t.op == DRM_VNPU_OP_T_WHERE)
			vnpu_t_run_where(op, aborted);
		else
			vnpu_t_run_map(op, aborted);
		break;
	}
	return 0;
}
