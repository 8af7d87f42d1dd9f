/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_OPS_H__
#define __VNPU_OPS_H__

#include <linux/types.h>

struct drm_vnpu_kernel_args;

/* Floating-point work of one FPU section: at most this many elements. */
#define VNPU_FPU_CHUNK 1024
/* GEMM: at most this many multiply-adds per FPU section. */
#define VNPU_FPU_GEMM_MACS 2048

/* Initial accumulators, as fp32 bit patterns. */
#define VNPU_FP32_ZERO 0x00000000u
#define VNPU_FP32_NEG_INF 0xff800000u

/**
 * struct vnpu_kernel_op - a KERNEL command resolved at submit
 * @op: DRM_VNPU_OP_*
 * @flags: DRM_VNPU_KERNEL_TRANS_*
 * @m: rows
 * @n: columns
 * @k: GEMM inner dimension
 * @alpha: fp32 bits (int32 for GEMM_I8)
 * @beta: fp32 bits (int32 for GEMM_I8)
 * @lda: leading dimension of @a, elements
 * @ldb: leading dimension of @b, elements
 * @ldc: leading dimension of @c, elements
 * @a: kernel address of A
 * @b: kernel address of B, or NULL
 * @c: kernel address of C
 *
 * No floating-point types here: this header is shared between FPU and
 * non-FPU code.
 */
struct vnpu_kernel_op {
	u32 op;
	u32 flags;
	u32 m;
	u32 n;
	u32 k;
	u32 alpha;
	u32 beta;
	u32 lda;
	u32 ldb;
	u32 ldc;
	const void *a;
	const void *b;
	void *c;
};

/**
 * struct vnpu_kernel_ranges - device ranges a KERNEL command touches
 * @addr: device address of A, B and C
 * @size: bytes of A, B and C; 0 for an unused array
 */
struct vnpu_kernel_ranges {
	u64 addr[3];
	u64 size[3];
};

int vnpu_kernel_check(const struct drm_vnpu_kernel_args *args,
		      struct vnpu_kernel_ranges *ranges);
void vnpu_kernel_run(const struct vnpu_kernel_op *op, const bool *aborted);

/*
 * vnpu_ops_fpu.c, built with the FPU flags: call only between
 * kernel_fpu_begin() and kernel_fpu_end(). Each call does bounded work.
 */
void vnpu_fpu_binary(u32 op, const void *a, const void *b, void *c, u32 count, u32 alpha);
void vnpu_fpu_unary(u32 op, const void *a, void *c, u32 count);
u32 vnpu_fpu_reduce(u32 op, const void *a, u32 count, u32 acc);
u32 vnpu_fpu_exp_sum(const void *a, void *c, u32 count, u32 max, u32 acc);
void vnpu_fpu_div_by(void *c, u32 count, u32 divisor);
void vnpu_fpu_gemm_row(const struct vnpu_kernel_op *op, u32 i, u32 j0, u32 j1);
u32 vnpu_fpu_gemm_dot(const struct vnpu_kernel_op *op, u32 i, u32 j, u32 p0, u32 p1,
		      u32 acc);
void vnpu_fpu_gemm_store(const struct vnpu_kernel_op *op, u32 i, u32 j, u32 acc);

#endif /* __VNPU_OPS_H__ */
