// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Kernel launches: the driver's built-in operators. The driver reads a
 * launch's arguments from device-visible memory when the job is submitted,
 * so each stream keeps one host-pinned slot per command a job can hold:
 * slot 0 serves unbatched launches (the driver has read it once the submit
 * returns), slot i the ith command of an open batch.
 */
#include <string.h>

#include "runtime.h"
#include "trace.h"

/* Elements of an array of @rows rows of @cols with leading dimension @ld. */
static int extent(uint32_t rows, uint32_t cols, uint32_t ld, uint64_t *elems)
{
	if (!rows || !cols || ld < cols)
		return 0;
	*elems = (uint64_t)(rows - 1) * ld + cols;
	return 1;
}

struct shape {
	uint32_t a_rows, a_cols, b_rows, b_cols, c_rows, c_cols;
	int has_b, b_vector, c_vector;
	unsigned int in_size, out_size;	/* bytes per element */
};

static int kernel_shape(const struct vnpu_kernel *k, struct shape *sh)
{
	int gemm = k->op == VNPU_OP_GEMM || k->op == VNPU_OP_GEMM_I8;

	memset(sh, 0, sizeof(*sh));
	sh->in_size = k->op == VNPU_OP_GEMM_I8 ? 1 : 4;
	sh->out_size = 4;
	if (k->op < VNPU_OP_ADD || k->op > VNPU_OP_BIAS_ADD || !k->m || !k->n)
		return 0;
	if (gemm ? (!k->k || (k->flags & ~(VNPU_GEMM_TRANS_A | VNPU_GEMM_TRANS_B)))
		 : (k->k || k->flags))
		return 0;
	sh->a_rows = k->m;
	sh->a_cols = k->n;
	sh->c_rows = k->m;
	sh->c_cols = k->n;
	switch (k->op) {
	case VNPU_OP_ADD: case VNPU_OP_SUB: case VNPU_OP_MUL: case VNPU_OP_DIV:
	case VNPU_OP_MAX: case VNPU_OP_MIN: case VNPU_OP_AXPY:
		sh->has_b = 1;
		sh->b_rows = k->m;
		sh->b_cols = k->n;
		break;
	case VNPU_OP_BIAS_ADD:
		sh->has_b = 1;
		sh->b_vector = 1;
		sh->b_rows = 1;
		sh->b_cols = k->n;
		break;
	case VNPU_OP_REDUCE_SUM: case VNPU_OP_REDUCE_MAX:
		sh->c_vector = 1;
		sh->c_rows = 1;
		sh->c_cols = k->m;
		break;
	case VNPU_OP_GEMM: case VNPU_OP_GEMM_I8:
		sh->has_b = 1;
		sh->a_rows = k->flags & VNPU_GEMM_TRANS_A ? k->k : k->m;
		sh->a_cols = k->flags & VNPU_GEMM_TRANS_A ? k->m : k->k;
		sh->b_rows = k->flags & VNPU_GEMM_TRANS_B ? k->n : k->k;
		sh->b_cols = k->flags & VNPU_GEMM_TRANS_B ? k->k : k->n;
		break;
	default:
		break;
	}
	return 1;
}

/* Checks @k against the stream's context and fills the driver's arguments. */
static int kernel_args(struct vnpu_ctx *ctx, const struct vnpu_kernel *k,
		       struct drm_vnpu_kernel_args *args)
{
	struct shape sh;
	uint64_t elems;
	uint32_t lda, ldb, ldc;
	union { float f; uint32_t u; } alpha = { k->alpha }, beta = { k->beta };

	if (!kernel_shape(k, &sh))
		return VNPU_ERROR_INVALID_VALUE;
	lda = k->lda ? k->lda : sh.a_cols;
	ldb = sh.b_vector ? 0 : (k->ldb ? k->ldb : sh.b_cols);
	ldc = sh.c_vector ? 0 : (k->ldc ? k->ldc : sh.c_cols);
	if (!extent(sh.a_rows, sh.a_cols, lda, &elems) ||
	    !vnpu_ctx_owns_range(ctx, k->a, elems * sh.in_size))
		return VNPU_ERROR_INVALID_VALUE;
	if (sh.has_b && (!extent(sh.b_rows, sh.b_cols, sh.b_vector ? sh.b_cols : ldb, &elems) ||
			 !vnpu_ctx_owns_range(ctx, k->b, elems * sh.in_size)))
		return VNPU_ERROR_INVALID_VALUE;
	if (!sh.has_b && k->b)
		return VNPU_ERROR_INVALID_VALUE;
	if (!extent(sh.c_rows, sh.c_cols, sh.c_vector ? sh.c_cols : ldc, &elems) ||
	    !vnpu_ctx_owns_range(ctx, k->c, elems * sh.out_size))
		return VNPU_ERROR_INVALID_VALUE;

	memset(args, 0, sizeof(*args));
	args->op = k->op;
	args->flags = k->flags;
	args->m = k->m;
	args->n = k->n;
	args->k = k->k;
	if (k->op == VNPU_OP_GEMM_I8) {
		args->alpha = (uint32_t)k->alpha_i32;
		args->beta = (uint32_t)k->beta_i32;
	} else if (k->op == VNPU_OP_AXPY || k->op == VNPU_OP_GEMM) {
		args->alpha = alpha.u;
		args->beta = k->op == VNPU_OP_GEMM ? beta.u : 0;
	}
	args->a = k->a;
	args->b = sh.has_b ? k->b : 0;
	args->c = k->c;
	args->lda = lda;
	args->ldb = ldb;
	args->ldc = ldc;
	return VNPU_SUCCESS;
}

/* Elements spanned by a tensor of @ndim dimensions @shape with @stride. */
static uint64_t span(uint32_t ndim, const uint32_t *shape, const uint32_t *stride)
{
	uint64_t elems = 1;

	/* Dimensions below 2^24 and strides below 2^32: no overflow. */
	for (uint32_t d = 0; d < ndim; d++)
		elems += (uint64_t)(shape[d] - 1) * stride[d];
	return elems;
}

/* Bytes of an element of type @type (enum vnpu_elem_type), 0 if unknown. */
static unsigned int elem_size(uint8_t type)
{
	switch (type) {
	case VNPU_ELEM_F32:
	case VNPU_ELEM_I32:
		return 4;
	case VNPU_ELEM_F16:
		return 2;
	case VNPU_ELEM_I8:
	case VNPU_ELEM_U8:
		return 1;
	case VNPU_ELEM_I64:
		return 8;
	default:
		return 0;
	}
}

static int tensor_array_ok(struct vnpu_ctx *ctx, uint64_t addr, uint64_t elems,
			   unsigned int size)
{
	return addr % size == 0 && vnpu_ctx_owns_range(ctx, addr, elems * size);
}

/*
 * Checks what the driver cannot report before a batch is submitted: the
 * operator, the dimensions and that every array is the context's; fills
 * the driver's arguments. The driver checks every other rule.
 */
static int tensor_args(struct vnpu_ctx *ctx, const struct vnpu_tensor *t,
		       const struct vnpu_tensor_types *types, const struct vnpu_tensor_ext *ext,
		       struct drm_vnpu_tensor_args *args)
{
	static const struct vnpu_tensor_types f32;
	static const struct vnpu_tensor_ext none;
	unsigned int sa, sb, sc;
	uint32_t ashape[VNPU_TENSOR_MAX_DIMS], axis = 0;
	int window = t->op == VNPU_OP_T_IM2COL || t->op == VNPU_OP_T_MAXPOOL ||
		     t->op == VNPU_OP_T_AVGPOOL;
	int has_b = (t->op >= VNPU_OP_T_ADD && t->op <= VNPU_OP_T_MIN) ||
		    t->op == VNPU_OP_T_DOT ||
		    (t->op >= VNPU_OP_T_EQUAL && t->op <= VNPU_OP_T_GATHER);
	int one_axis = t->op == VNPU_OP_T_GATHER || t->op == VNPU_OP_T_TOPK;
	const struct vnpu_tensor_window *w = &t->window;
	union { float f; uint32_t u; } eps = { t->norm.epsilon };
	uint32_t out[VNPU_TENSOR_MAX_DIMS];
	uint32_t out_ndim = t->ndim;

	if (!types)
		types = &f32;
	if (!ext)
		ext = &none;
	sa = elem_size(types->a);
	sb = elem_size(types->b);
	sc = elem_size(types->c);
	if (t->op < VNPU_OP_T_COPY || t->op > VNPU_OP_T_TOPK || !t->ndim ||
	    t->ndim > VNPU_TENSOR_MAX_DIMS || (window && t->ndim != 4) || !sa || !sb || !sc)
		return VNPU_ERROR_INVALID_VALUE;
	if (one_axis) {
		/* One axis; A (GATHER) or C and D (TOPK) have @k elements on it. */
		if (!t->axes || (t->axes & (t->axes - 1)) || t->axes >> t->ndim || !ext->k ||
		    ext->k > DRM_VNPU_KERNEL_MAX_DIM)
			return VNPU_ERROR_INVALID_VALUE;
		axis = (uint32_t)__builtin_ctz(t->axes);
	}
	for (uint32_t d = 0; d < t->ndim; d++) {
		if (!t->shape[d] || t->shape[d] > DRM_VNPU_KERNEL_MAX_DIM)
			return VNPU_ERROR_INVALID_VALUE;
		out[d] = t->shape[d];
		ashape[d] = t->shape[d];
	}
	if (t->op == VNPU_OP_T_GATHER)
		ashape[axis] = ext->k;
	if (t->op == VNPU_OP_T_TOPK) {
		out[axis] = ext->k;
		if (!tensor_array_ok(ctx, ext->d, span(t->ndim, out, ext->stride_d), 4))
			return VNPU_ERROR_INVALID_VALUE;
	}
	if (window) {
		if (!w->out_h || !w->out_w || !w->kernel_h || !w->kernel_w ||
		    w->out_h > DRM_VNPU_KERNEL_MAX_DIM || w->out_w > DRM_VNPU_KERNEL_MAX_DIM ||
		    w->kernel_h > DRM_VNPU_KERNEL_MAX_DIM || w->kernel_w > DRM_VNPU_KERNEL_MAX_DIM)
			return VNPU_ERROR_INVALID_VALUE;
		if (t->op == VNPU_OP_T_IM2COL) {
			out_ndim = 6;
			out[2] = w->kernel_h;
			out[3] = w->kernel_w;
			out[4] = w->out_h;
			out[5] = w->out_w;
		} else {
			out[2] = w->out_h;
			out[3] = w->out_w;
		}
	}
	if (!tensor_array_ok(ctx, t->a, span(t->ndim, ashape, t->stride_a), sa) ||
	    !tensor_array_ok(ctx, t->c, span(out_ndim, out, t->stride_c), sc))
		return VNPU_ERROR_INVALID_VALUE;
	if (has_b ? !tensor_array_ok(ctx, t->b, span(t->ndim, t->shape, t->stride_b), sb) :
		    !!t->b)
		return VNPU_ERROR_INVALID_VALUE;
	if (t->op == VNPU_OP_T_BATCHNORM) {
		uint32_t channels;

		if (t->norm.axis >= t->ndim)
			return VNPU_ERROR_INVALID_VALUE;
		channels = t->shape[t->norm.axis];
		if (!tensor_array_ok(ctx, t->norm.scale, channels, 4) ||
		    !tensor_array_ok(ctx, t->norm.bias, channels, 4) ||
		    !tensor_array_ok(ctx, t->norm.mean, channels, 4) ||
		    !tensor_array_ok(ctx, t->norm.var, channels, 4))
			return VNPU_ERROR_INVALID_VALUE;
	}

	memset(args, 0, sizeof(*args));
	args->op = t->op;
	args->flags = t->flags;
	args->ndim = t->ndim;
	args->axes = t->axes;
	memcpy(args->shape, t->shape, sizeof(args->shape));
	args->a = t->a;
	args->b = t->b;
	args->c = t->c;
	memcpy(args->stride_a, t->stride_a, sizeof(args->stride_a));
	memcpy(args->stride_b, t->stride_b, sizeof(args->stride_b));
	memcpy(args->stride_c, t->stride_c, sizeof(args->stride_c));
	/* Copied as given: the driver refuses members an operator does not use. */
	args->window = (struct drm_vnpu_tensor_window){
		.kernel_h = w->kernel_h, .kernel_w = w->kernel_w,
		.stride_h = w->stride_h, .stride_w = w->stride_w,
		.dilation_h = w->dilation_h, .dilation_w = w->dilation_w,
		.pad_top = w->pad_top, .pad_left = w->pad_left,
		.pad_bottom = w->pad_bottom, .pad_right = w->pad_right,
			.out_h = w->out_h, .out_w = w->out_w,
	};
	args->norm = (struct drm_vnpu_tensor_norm){
		.scale = t->norm.scale, .bias = t->norm.bias,
		.mean = t->norm.mean, .var = t->norm.var,
		.epsilon = eps.u, .axis = t->norm.axis,
	};
	args->dtype_a = types->a;
	args->dtype_b = types->b;
	args->dtype_c = types->c;
	args->k = ext->k;
	args->d = ext->d;
	memcpy(args->stride_d, ext->stride_d, sizeof(args->stride_d));
	args->dtype_d = t->op == VNPU_OP_T_TOPK ? DRM_VNPU_DTYPE_I32 : 0;
	return VNPU_SUCCESS;
}

/* Bytes of one argument slot: room for either argument layout. */
#define KERNEL_SLOT 320
_Static_assert(sizeof(struct drm_vnpu_kernel_args) <= KERNEL_SLOT, "slot");
_Static_assert(sizeof(struct drm_vnpu_tensor_args) <= KERNEL_SLOT, "slot");

/* Submits a KERNEL command for @k (the 2-D layout) or else @t (N-d). */
static int launch_args(struct vnpu_stream handle, const struct vnpu_kernel *k,
		       const struct vnpu_tensor *t, const struct vnpu_tensor_types *types,
		       const struct vnpu_tensor_ext *ext, const char *what)
{
	struct drm_vnpu_cmd cmd = { .opcode = DRM_VNPU_CMD_KERNEL };
	union {
		struct drm_vnpu_kernel_args kernel;
		struct drm_vnpu_tensor_args tensor;
	} args;
	struct vnpu_stream_obj *s;
	uint64_t point;
	uint32_t slot;
	int status;

	status = vnpu_stream_get(handle, &s);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (k) {
		status = kernel_args(s->ctx, k, &args.kernel);
		cmd.size = sizeof(args.kernel);
	} else {
		status = tensor_args(s->ctx, t, types, ext, &args.tensor);
		/*
		 * fp32 only: the size of 1.4, which every driver of 1.4 takes;
		 * typed: of 1.5, which drivers of 1.5 and 1.6 take; the members
		 * of 1.7: the whole struct.
		 */
		cmd.size = ext ? sizeof(args.tensor) : types ? DRM_VNPU_TENSOR_ARGS_SIZE_V2 :
		       DRM_VNPU_TENSOR_ARGS_SIZE_V1;
	}
	pthread_mutex_lock(&s->lock);
	if (status == VNPU_SUCCESS && !s->kernel_args)
		status = vnpu_alloc_create(s->ctx, DRM_VNPU_MAX_CMDS * KERNEL_SLOT,
					   DRM_VNPU_BO_HOST, NULL, &s->kernel_args);
	/* A full batch goes first, so the slot below is the command's. */
	if (status == VNPU_SUCCESS && s->batching && s->batch_count == DRM_VNPU_MAX_CMDS)
		status = vnpu_stream_flush_locked(s);
	if (status == VNPU_SUCCESS) {
		slot = s->batching ? s->batch_count : 0;
		memcpy((char *)s->kernel_args->host + slot * KERNEL_SLOT, &args, cmd.size);
		cmd.src = s->kernel_args->devptr + slot * KERNEL_SLOT;
		status = vnpu_stream_submit_locked(s, &cmd, 1, what, &point);
	}
	pthread_mutex_unlock(&s->lock);
	if (status == VNPU_SUCCESS && vnpu_launch_blocking() && !vnpu_in_callback())
		status = vnpu_stream_synchronize_obj(s, -1);
	vnpu_obj_put(&s->obj);
	return vnpu_set_status(status);
}

int vnpu_launch_kernel(struct vnpu_stream handle, const struct vnpu_kernel *k)
{
	VNPU_TRACE_API();

	if (!k)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	return launch_args(handle, k, NULL, NULL, NULL, "vnpu_launch_kernel");
}

int vnpu_launch_tensor(struct vnpu_stream handle, const struct vnpu_tensor *t)
{
	VNPU_TRACE_API();

	if (!t)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	return launch_args(handle, NULL, t, NULL, NULL, "vnpu_launch_tensor");
}

int vnpu_launch_tensor_typed(struct vnpu_stream handle, const struct vnpu_tensor *t,
			     const struct vnpu_tensor_types *types)
{
	VNPU_TRACE_API();

	if (!t)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	return launch_args(handle, NULL, t, types, NULL, "vnpu_launch_tensor_typed");
}

int vnpu_launch_tensor_ext(struct vnpu_stream handle, const struct vnpu_tensor *t,
			   const struct vnpu_tensor_types *types, const struct vnpu_tensor_ext *ext)
{
	VNPU_TRACE_API();

	if (!t || !ext)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	return launch_args(handle, NULL, t, types, ext, "vnpu_launch_tensor_ext");
}
