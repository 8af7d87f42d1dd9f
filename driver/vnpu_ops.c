// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/**
 * DOC: vnpu operators
 *
 * The KERNEL command runs one operator of a built-in library (see &struct
 * drm_vnpu_kernel_args). Its arguments are checked at submit by
 * vnpu_kernel_check(), which also returns the device ranges the operator
 * touches so the submit path can resolve them like any other command.
 *
 * vnpu_kernel_run() executes it on the engine's worker. Floating-point
 * work is done by vnpu_ops_fpu.c, the only file built with the FPU flags,
 * in sections of at most %VNPU_FPU_CHUNK elements or %VNPU_FPU_GEMM_MACS
 * multiply-adds between kernel_fpu_begin() and kernel_fpu_end(), which
 * disable preemption; cond_resched() runs between sections and an aborted
 * job (timeout, reset, unplug) stops at the next section. GEMM_I8 is
 * integer only and needs no FPU.
 */

#include <linux/fpu.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/sched.h>

#include <drm/vnpu_accel.h>

#include "vnpu_ops.h"

/* Bytes of a @rows x @cols matrix with leading dimension @ld. */
static int vnpu_mat_bytes(u32 rows, u32 cols, u32 ld, u32 esize, u64 *bytes)
{
	u64 elems;

	if (ld < cols)
		return -EINVAL;
	if (check_mul_overflow((u64)(rows - 1), (u64)ld, &elems) ||
	    check_add_overflow(elems, (u64)cols, &elems) ||
	    check_mul_overflow(elems, (u64)esize, bytes))
		return -EINVAL;
	return 0;
}

static bool vnpu_ranges_overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	return a < b + blen && b < a + alen;
}

static int vnpu_kernel_check_gemm(const struct drm_vnpu_kernel_args *args,
				  struct vnpu_kernel_ranges *r)
{
	bool ta = args->flags & DRM_VNPU_KERNEL_TRANS_A;
	bool tb = args->flags & DRM_VNPU_KERNEL_TRANS_B;
	u32 esize = args->op == DRM_VNPU_OP_GEMM_I8 ? 1 : 4;
	int ret;

	if (!args->k || args->k > DRM_VNPU_KERNEL_MAX_DIM ||
	    args->flags & ~(DRM_VNPU_KERNEL_TRANS_A | DRM_VNPU_KERNEL_TRANS_B))
		return -EINVAL;
	ret = vnpu_mat_bytes(ta ? args->k : args->m, ta ? args->m : args->k, args->lda,
			     esize, &r->size[0]);
	if (!ret)
		ret = vnpu_mat_bytes(tb ? args->n : args->k, tb ? args->k : args->n,
				     args->ldb, esize, &r->size[1]);
	if (!ret)
		ret = vnpu_mat_bytes(args->m, args->n, args->ldc, 4, &r->size[2]);
	if (ret)
		return ret;
	if (esize == 4 && (args->a | args->b) % 4)
		return -EINVAL;
	if (vnpu_ranges_overlap(args->c, r->size[2], args->a, r->size[0]) ||
	    vnpu_ranges_overlap(args->c, r->size[2], args->b, r->size[1]))
		return -EINVAL;
	return 0;
}

/**
 * vnpu_kernel_check - check the arguments of a KERNEL command
 * @args: the arguments, copied from device memory
 * @r: out, the ranges of A, B and C
 *
 * Return: 0 or -EINVAL; the caller checks that the ranges lie in buffers
 * (-EACCES) and that their ends do not wrap.
 */
int vnpu_kernel_check(const struct drm_vnpu_kernel_args *args, struct vnpu_kernel_ranges *r)
{
	bool uses_b = true, vec_b = false, vec_c = false, uses_alpha = false;
	u32 m = args->m, n = args->n;
	int ret;

	if (args->pad || args->pad2 || !m || !n || m > DRM_VNPU_KERNEL_MAX_DIM ||
	    n > DRM_VNPU_KERNEL_MAX_DIM)
		return -EINVAL;
	r->addr[0] = args->a;
	r->addr[1] = args->b;
	r->addr[2] = args->c;
	if (args->c % 4)
		return -EINVAL;

	switch (args->op) {
	case DRM_VNPU_OP_GEMM:
	case DRM_VNPU_OP_GEMM_I8:
		return vnpu_kernel_check_gemm(args, r);
	case DRM_VNPU_OP_AXPY:
		uses_alpha = true;
		break;
	case DRM_VNPU_OP_ADD:
	case DRM_VNPU_OP_SUB:
	case DRM_VNPU_OP_MUL:
	case DRM_VNPU_OP_DIV:
	case DRM_VNPU_OP_MAX:
	case DRM_VNPU_OP_MIN:
		break;
	case DRM_VNPU_OP_BIAS_ADD:
		vec_b = true;
		break;
	case DRM_VNPU_OP_REDUCE_SUM:
	case DRM_VNPU_OP_REDUCE_MAX:
		vec_c = true;
		fallthrough;
	case DRM_VNPU_OP_RELU:
	case DRM_VNPU_OP_GELU:
	case DRM_VNPU_OP_EXP:
	case DRM_VNPU_OP_SOFTMAX:
		uses_b = false;
		break;
	default:
		return -EINVAL;
	}

	if (args->flags || args->k || args->beta || (!uses_alpha && args->alpha) ||
	    args->a % 4)
		return -EINVAL;
	ret = vnpu_mat_bytes(m, n, args->lda, 4, &r->size[0]);
	if (ret)
		return ret;
	if (vec_c) {
		if (args->ldc)
			return -EINVAL;
		r->size[2] = (u64)m * 4;
	} else {
		ret = vnpu_mat_bytes(m, n, args->ldc, 4, &r->size[2]);
		if (ret)
			return ret;
	}
	if (!uses_b) {
		if (args->b || args->ldb)
			return -EINVAL;
		r->size[1] = 0;
		return 0;
	}
	if (args->b % 4)
		return -EINVAL;
	if (vec_b) {
		if (args->ldb)
			return -EINVAL;
		r->size[1] = (u64)n * 4;
		return 0;
	}
	return vnpu_mat_bytes(m, n, args->ldb, 4, &r->size[1]);
}

static const float *vnpu_row(const void *base, u32 ld, u32 i)
{
	return (const float *)base + (size_t)i * ld;
}

static float *vnpu_row_mut(void *base, u32 ld, u32 i)
{
	return (float *)base + (size_t)i * ld;
}

/* Elementwise operators: each row in chunks. */
static void vnpu_run_elementwise(const struct vnpu_kernel_op *op, const bool *aborted)
{
	bool unary = !op->b;
	u32 i, j, len;

	for (i = 0; i < op->m; i++) {
		const float *a = vnpu_row(op->a, op->lda, i);
		const float *b = unary ? NULL :
			op->op == DRM_VNPU_OP_BIAS_ADD ? op->b : vnpu_row(op->b, op->ldb, i);
		float *c = vnpu_row_mut(op->c, op->ldc, i);

		for (j = 0; j < op->n; j += len) {
			if (READ_ONCE(*aborted))
				return;
			len = min_t(u32, op->n - j, VNPU_FPU_CHUNK);
			kernel_fpu_begin();
			if (unary)
				vnpu_fpu_unary(op->op, a + j, c + j, len);
			else
				vnpu_fpu_binary(op->op, a + j, b + j, c + j, len, op->alpha);
			kernel_fpu_end();
			cond_resched();
		}
	}
}

/* Reduces row @a of @n elements with @rop from @acc; false if aborted. */
static bool vnpu_run_reduce_row(u32 rop, const float *a, u32 n, u32 *acc,
				const bool *aborted)
{
	u32 j, len;

	for (j = 0; j < n; j += len) {
		if (READ_ONCE(*aborted))
			return false;
		len = min_t(u32, n - j, VNPU_FPU_CHUNK);
		kernel_fpu_begin();
		*acc = vnpu_fpu_reduce(rop, a + j, len, *acc);
		kernel_fpu_end();
		cond_resched();
	}
	return true;
}

static void vnpu_run_reduce(const struct vnpu_kernel_op *op, const bool *aborted)
{
	u32 *c = op->c, i;

	for (i = 0; i < op->m; i++) {
		u32 acc = op->op == DRM_VNPU_OP_REDUCE_SUM ? VNPU_FP32_ZERO : VNPU_FP32_NEG_INF;

		if (!vnpu_run_reduce_row(op->op, vnpu_row(op->a, op->lda, i), op->n, &acc,
					 aborted))
			return;
		WRITE_ONCE(c[i], acc);
	}
}

/* Softmax of each row: maximum, then exp(x - max) and its sum, then divide. */
static void vnpu_run_softmax(const struct vnpu_kernel_op *op, const bool *aborted)
{
	u32 i, j, len;

	for (i = 0; i < op->m; i++) {
		const float *a = vnpu_row(op->a, op->lda, i);
		float *c = vnpu_row_mut(op->c, op->ldc, i);
		u32 max = VNPU_FP32_NEG_INF, sum = VNPU_FP32_ZERO;

		if (!vnpu_run_reduce_row(DRM_VNPU_OP_REDUCE_MAX, a, op->n, &max, aborted))
			return;
		for (j = 0; j < op->n; j += len) {
			if (READ_ONCE(*aborted))
				return;
			len = min_t(u32, op->n - j, VNPU_FPU_CHUNK);
			kernel_fpu_begin();
			sum = vnpu_fpu_exp_sum(a + j, c + j, len, max, sum);
			kernel_fpu_end();
			cond_resched();
		}
		for (j = 0; j < op->n; j += len) {
			if (READ_ONCE(*aborted))
				return;
			len = min_t(u32, op->n - j, VNPU_FPU_CHUNK);
			kernel_fpu_begin();
			vnpu_fpu_div_by(c + j, len, sum);
			kernel_fpu_end();
			cond_resched();
		}
	}
}

static void vnpu_run_gemm(const struct vnpu_kernel_op *op, struct vnpu_engine *engine,
			  const bool *aborted)
{
	u32 i, j, p, len;

	if (vnpu_gemm_run(op, engine, aborted))
		return;
	for (i = 0; i < op->m; i++) {
		if (op->k <= VNPU_FPU_GEMM_MACS) {
			/* Whole dot products, several outputs per section. */
			u32 cols = max_t(u32, 1, VNPU_FPU_GEMM_MACS / op->k);

			for (j = 0; j < op->n; j += len) {
				if (READ_ONCE(*aborted))
					return;
				len = min_t(u32, op->n - j, cols);
				kernel_fpu_begin();
				vnpu_fpu_gemm_row(op, i, j, j + len);
				kernel_fpu_end();
				cond_resched();
			}
			continue;
		}
		/* Long dot products, split over several sections. */
		for (j = 0; j < op->n; j++) {
			u32 acc = VNPU_FP32_ZERO;

			for (p = 0; p < op->k; p += len) {
				if (READ_ONCE(*aborted))
					return;
				len = min_t(u32, op->k - p, VNPU_FPU_GEMM_MACS);
				kernel_fpu_begin();
				acc = vnpu_fpu_gemm_dot(op, i, j, p, p + len, acc);
				kernel_fpu_end();
				cond_resched();
			}
			kernel_fpu_begin();
			vnpu_fpu_gemm_store(op, i, j, acc);
			kernel_fpu_end();
		}
	}
}

/* int8 GEMM with int32 accumulation; unsigned arithmetic wraps. */
static void vnpu_run_gemm_i8(const struct vnpu_kernel_op *op, const bool *aborted)
{
	bool ta = op->flags & DRM_VNPU_KERNEL_TRANS_A;
	bool tb = op->flags & DRM_VNPU_KERNEL_TRANS_B;
	const s8 *a = op->a, *b = op->b;
	u32 i, j, p, macs = 0;

	for (i = 0; i < op->m; i++) {
		u32 *c = (u32 *)op->c + (size_t)i * op->ldc;

		for (j = 0; j < op->n; j++) {
			u32 acc = 0;

			for (p = 0; p < op->k; p++) {
				size_t ia = ta ? (size_t)p * op->lda + i : (size_t)i * op->lda + p;
				size_t ib = tb ? (size_t)j * op->ldb + p : (size_t)p * op->ldb + j;
				s32 x = a[ia], y = b[ib];

				acc += (u32)(x * y);
			}
			acc *= op->alpha;
			if (op->beta)
				acc += op->beta * c[j];
			c[j] = acc;
			macs += op->k;
			if (macs >= 64 * VNPU_FPU_GEMM_MACS) {
				macs = 0;
				if (READ_ONCE(*aborted))
					return;
				cond_resched();
			}
		}
	}
}

/**
 * vnpu_kernel_run - execute an operator
 * @op: the resolved operator
 * @engine: the engine executing it; large matrix products may also use
 *	the idle engines of its class (vnpu_gemm.c)
 * @aborted: checked between sections; the operator stops when it is set
 *
 * Return: 0, or the error that stops the job (vnpu_tensor_run()).
 */
int vnpu_kernel_run(const struct vnpu_kernel_op *op, struct vnpu_engine *engine,
		    const bool *aborted)
{
	if (op->op >= DRM_VNPU_OP_T_COPY) {
		if (op->op == DRM_VNPU_OP_T_DOT && vnpu_gemm_dot_run(op, engine, aborted))
			return 0;
		return vnpu_tensor_run(op, aborted);
	}
	switch (op->op) {
	case DRM_VNPU_OP_GEMM:
		vnpu_run_gemm(op, engine, aborted);
		break;
	case DRM_VNPU_OP_GEMM_I8:
		vnpu_run_gemm_i8(op, aborted);
		break;
	case DRM_VNPU_OP_SOFTMAX:
		vnpu_run_softmax(op, aborted);
		break;
	case DRM_VNPU_OP_REDUCE_SUM:
	case DRM_VNPU_OP_REDUCE_MAX:
		vnpu_run_reduce(op, aborted);
		break;
	default:
		vnpu_run_elementwise(op, aborted);
		break;
	}
	return 0;
}
