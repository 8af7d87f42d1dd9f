/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_OPS_H__
#define __VNPU_OPS_H__

#include <linux/types.h>

#include <drm/vnpu_accel.h>

/* Floating-point work of one FPU section: at most this many elements. */
#define VNPU_FPU_CHUNK 1024
/* GEMM: at most this many multiply-adds per FPU section. */
#define VNPU_FPU_GEMM_MACS 2048

/* Pools: at most this many window elements per output element. */
#define VNPU_MAX_POOL_WINDOW 4096

/* Initial accumulators, as fp32 bit patterns. */
#define VNPU_FP32_ZERO 0x00000000u
#define VNPU_FP32_NEG_INF 0xff800000u
#define VNPU_FP32_ONE 0x3f800000u

/* The accumulator a reduction starts from (fp32 bits). */
static inline u32 vnpu_t_reduce_start(u32 op)
{
	if (op == DRM_VNPU_OP_T_REDUCE_MAX)
		return VNPU_FP32_NEG_INF;
	return op == DRM_VNPU_OP_T_REDUCE_PROD ? VNPU_FP32_ONE : VNPU_FP32_ZERO;
}

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
 * @d: TOPK: kernel address of D, the indices; else NULL
 * @scratch: TOPK: one row of keys and indices, allocated at submit
 *	(vnpu_tensor_alloc()); else NULL
 * @t: tensor operators: the checked arguments, dimensions merged where the
 *	layout allows (vnpu_tensor_prepare())
 * @norm: BATCHNORM: kernel addresses of scale, bias, mean and var
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
	void *d;
	void *scratch;
	struct drm_vnpu_tensor_args t;
	const void *norm[4];
};

/* Arrays of an operator: A, B, C, the four BATCHNORM arrays and D. */
#define VNPU_KERNEL_MAX_ARRAYS 8
/* Index of D in &struct vnpu_kernel_ranges. */
#define VNPU_KERNEL_ARRAY_D 7

/**
 * struct vnpu_kernel_ranges - device ranges a KERNEL command touches
 * @addr: device address of A, B, C, then scale, bias, mean and var, then D
 * @size: bytes of each array; 0 for an unused array
 */
struct vnpu_kernel_ranges {
	u64 addr[VNPU_KERNEL_MAX_ARRAYS];
	u64 size[VNPU_KERNEL_MAX_ARRAYS];
};

int vnpu_kernel_check(const struct drm_vnpu_kernel_args *args,
		      struct vnpu_kernel_ranges *ranges);
int vnpu_tensor_check(const struct drm_vnpu_tensor_args *args,
		      struct vnpu_kernel_ranges *ranges);
void vnpu_tensor_prepare(struct drm_vnpu_tensor_args *t);
int vnpu_tensor_alloc(struct vnpu_kernel_op *op);
void vnpu_kernel_op_free(struct vnpu_kernel_op *op);
struct vnpu_engine;
int vnpu_kernel_run(const struct vnpu_kernel_op *op, struct vnpu_engine *engine,
		    const bool *aborted);
int vnpu_tensor_run(const struct vnpu_kernel_op *op, const bool *aborted);

/* vnpu_gemm.c: the blocked matrix products. */
int vnpu_gemm_init(void);
void vnpu_copy_bytes(void *dst, const void *src, size_t n);
void vnpu_gemm_fini(void);
bool vnpu_gemm_run(const struct vnpu_kernel_op *op, struct vnpu_engine *engine,
		   const bool *aborted);
bool vnpu_gemm_dot_run(const struct vnpu_kernel_op *op, struct vnpu_engine *engine,
		       const bool *aborted);

/**
 * struct vnpu_iter - position in an iteration space and in its tensors
 * @ndim: dimensions, 0 for a single point
 * @shape: sizes of the dimensions
 * @idx: the index of the position
 * @stride: element strides of up to three tensors
 * @off: element offsets of the position in the three tensors
 *
 * Walks the space in row-major order. Integer only, shared by both files.
 */
struct vnpu_iter {
	u32 ndim;
	u32 shape[DRM_VNPU_TENSOR_MAX_DIMS];
	u32 idx[DRM_VNPU_TENSOR_MAX_DIMS];
	u32 stride[3][DRM_VNPU_TENSOR_MAX_DIMS];
	u64 off[3];
};

/* Elements left in the last dimension from the position of @it. */
static inline u32 vnpu_iter_run(const struct vnpu_iter *it)
{
	return it->ndim ? it->shape[it->ndim - 1] - it->idx[it->ndim - 1] : 1;
}

/*
 * Moves @it @n positions on, @n <= vnpu_iter_run(); from the last position
 * it wraps to the first.
 */
static inline void vnpu_iter_advance(struct vnpu_iter *it, u32 n)
{
	int d = it->ndim - 1, t;

	if (d < 0)
		return;
	for (t = 0; t < 3; t++)
		it->off[t] += (u64)n * it->stride[t][d];
	it->idx[d] += n;
	while (it->idx[d] == it->shape[d]) {
		for (t = 0; t < 3; t++)
			it->off[t] -= (u64)it->shape[d] * it->stride[t][d];
		it->idx[d] = 0;
		if (--d < 0)
			return;
		for (t = 0; t < 3; t++)
			it->off[t] += it->stride[t][d];
		it->idx[d]++;
	}
}

/**
 * struct vnpu_reduce - a reduction in progress (REDUCE_*, DOT)
 * @outer: position over the kept dimensions (A, B and C offsets)
 * @inner: position over the reduced dimensions (A and B offsets)
 * @inner_points: points of @inner per output element
 * @inner_left: points of the current output element still to add
 * @outer_left: output elements still to compute, the current one included
 * @acc: the accumulator of the current output element, fp32 bits (ARGMAX
 *	and ARGMIN: the extremum so far)
 * @arg: ARGMAX and ARGMIN: the position of @acc among the reduced points
 * @iacc: a DOT of integer A and B: the exact sum of the current output
 *	element (saturated to the s64 range)
 */
struct vnpu_reduce {
	struct vnpu_iter outer;
	struct vnpu_iter inner;
	u64 inner_points;
	u64 inner_left;
	u64 outer_left;
	u32 acc;
	u32 arg;
	s64 iacc;
};

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
void vnpu_fpu_t_map(const struct vnpu_kernel_op *op, struct vnpu_iter *it, u32 count);
void vnpu_fpu_t_reduce(const struct vnpu_kernel_op *op, struct vnpu_reduce *r, u32 budget);
u32 vnpu_fpu_t_group_max(const struct vnpu_kernel_op *op, struct vnpu_iter *it, u64 a0,
			 u32 count, u32 acc);
u32 vnpu_fpu_t_group_exp(const struct vnpu_kernel_op *op, struct vnpu_iter *it, u64 a0,
			 u64 c0, u32 count, u32 max, u32 acc);
void vnpu_fpu_t_group_div(const struct vnpu_kernel_op *op, struct vnpu_iter *it, u64 c0,
			  u32 count, u32 sum);
u32 vnpu_fpu_t_pool(const struct vnpu_kernel_op *op, struct vnpu_iter *it, u32 count);

#endif /* __VNPU_OPS_H__ */
