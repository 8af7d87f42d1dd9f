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

int vnpu_launch_kernel(struct vnpu_stream handle, const struct vnpu_kernel *k)
{
	VNPU_TRACE_API();
	struct drm_vnpu_cmd cmd = { .opcode = DRM_VNPU_CMD_KERNEL,
				    .size = sizeof(struct drm_vnpu_kernel_args) };
	struct drm_vnpu_kernel_args args;
	struct vnpu_stream_obj *s;
	uint64_t point;
	uint32_t slot;
	int status;

	if (!k)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_stream_get(handle, &s);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	status = kernel_args(s->ctx, k, &args);
	pthread_mutex_lock(&s->lock);
	if (status == VNPU_SUCCESS && !s->kernel_args)
		status = vnpu_alloc_create(s->ctx, DRM_VNPU_MAX_CMDS * sizeof(args),
					   DRM_VNPU_BO_HOST, NULL, &s->kernel_args);
	/* A full batch goes first, so the slot below is the command's. */
	if (status == VNPU_SUCCESS && s->batching && s->batch_count == DRM_VNPU_MAX_CMDS)
		status = vnpu_stream_flush_locked(s);
	if (status == VNPU_SUCCESS) {
		slot = s->batching ? s->batch_count : 0;
		memcpy((char *)s->kernel_args->host + slot * sizeof(args), &args, sizeof(args));
		cmd.src = s->kernel_args->devptr + slot * sizeof(args);
		status = vnpu_stream_submit_locked(s, &cmd, 1, "vnpu_launch_kernel", &point);
	}
	pthread_mutex_unlock(&s->lock);
	if (status == VNPU_SUCCESS && vnpu_launch_blocking() && !vnpu_in_callback())
		status = vnpu_stream_synchronize_obj(s, -1);
	vnpu_obj_put(&s->obj);
	return vnpu_set_status(status);
}
