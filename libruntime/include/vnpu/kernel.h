/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The device's built-in operators: kernels, tensor operators, delays.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_KERNEL_H
#define VNPU_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * enum vnpu_op - the device's built-in operators
 * @VNPU_OP_ADD: C = A + B, elementwise (m x n)
 * @VNPU_OP_SUB: C = A - B
 * @VNPU_OP_MUL: C = A * B
 * @VNPU_OP_DIV: C = A / B
 * @VNPU_OP_MAX: C = max(A, B)
 * @VNPU_OP_MIN: C = min(A, B)
 * @VNPU_OP_AXPY: C = alpha * A + B
 * @VNPU_OP_RELU: C = max(A, 0)
 * @VNPU_OP_GELU: C = GELU(A), tanh approximation
 * @VNPU_OP_EXP: C = exp(A)
 * @VNPU_OP_SOFTMAX: each row of C = softmax of that row of A
 * @VNPU_OP_REDUCE_SUM: C[i] = sum of row i of A (C is a vector of m)
 * @VNPU_OP_REDUCE_MAX: C[i] = max of row i of A
 * @VNPU_OP_GEMM: C = alpha * op(A) op(B) + beta * C, A m x k, B k x n
 * @VNPU_OP_GEMM_I8: GEMM on int8 A and B with int32 C and accumulation
 * @VNPU_OP_BIAS_ADD: C[i][j] = A[i][j] + B[j] (B a vector of n)
 * @VNPU_OP_T_COPY: C[i] = A[i], 4-byte elements (transpose, expand, any
 *	layout change)
 * @VNPU_OP_T_ADD: C[i] = A[i] + B[i], broadcasting by stride 0
 * @VNPU_OP_T_SUB: C[i] = A[i] - B[i]
 * @VNPU_OP_T_MUL: C[i] = A[i] * B[i]
 * @VNPU_OP_T_DIV: C[i] = A[i] / B[i]
 * @VNPU_OP_T_MAX: C[i] = max(A[i], B[i])
 * @VNPU_OP_T_MIN: C[i] = min(A[i], B[i])
 * @VNPU_OP_T_RELU: C[i] = max(A[i], 0)
 * @VNPU_OP_T_SIGMOID: C[i] = 1 / (1 + exp(-A[i]))
 * @VNPU_OP_T_TANH: C[i] = tanh(A[i])
 * @VNPU_OP_T_EXP: C[i] = exp(A[i])
 * @VNPU_OP_T_REDUCE_SUM: sum of A over the dimensions in the axes mask
 * @VNPU_OP_T_REDUCE_MEAN: mean of A over the axes
 * @VNPU_OP_T_REDUCE_MAX: maximum of A over the axes
 * @VNPU_OP_T_SOFTMAX: softmax of A over the axes
 * @VNPU_OP_T_DOT: sum of A[i] * B[i] over the axes (batched matrix product)
 * @VNPU_OP_T_IM2COL: the columns of a 2-D convolution of N x C x H x W
 * @VNPU_OP_T_MAXPOOL: 2-D max pooling of N x C x H x W
 * @VNPU_OP_T_AVGPOOL: 2-D average pooling of N x C x H x W
 * @VNPU_OP_T_BATCHNORM: inference batch normalization per channel
 * @VNPU_OP_T_LOG: C[i] = log(A[i]) (uAPI 1.5, like every operator below)
 * @VNPU_OP_T_FLOOR: C[i] = floor(A[i])
 * @VNPU_OP_T_CEIL: C[i] = ceil(A[i])
 * @VNPU_OP_T_ROUND: C[i] = A[i] rounded to the nearest integer, ties to even
 * @VNPU_OP_T_SIN: C[i] = sin(A[i])
 * @VNPU_OP_T_COS: C[i] = cos(A[i])
 * @VNPU_OP_T_TAN: C[i] = tan(A[i])
 * @VNPU_OP_T_ASIN: C[i] = asin(A[i])
 * @VNPU_OP_T_ACOS: C[i] = acos(A[i])
 * @VNPU_OP_T_ATAN: C[i] = atan(A[i])
 * @VNPU_OP_T_SINH: C[i] = sinh(A[i])
 * @VNPU_OP_T_COSH: C[i] = cosh(A[i])
 * @VNPU_OP_T_ASINH: C[i] = asinh(A[i])
 * @VNPU_OP_T_ACOSH: C[i] = acosh(A[i])
 * @VNPU_OP_T_ATANH: C[i] = atanh(A[i])
 * @VNPU_OP_T_ARGMAX: int32 index (row-major over the axes) of the maximum of
 *	A over the axes; the first, or the last with VNPU_TENSOR_SELECT_LAST
 * @VNPU_OP_T_ARGMIN: int32 index of the minimum of A over the axes
 * @VNPU_OP_T_REDUCE_PROD: product of A over the axes
 * @VNPU_OP_T_EQUAL: C[i] = A[i] == B[i] ? 1 : 0, compared exactly (uAPI 1.6,
 *	like every operator below)
 * @VNPU_OP_T_LESS: C[i] = A[i] < B[i] ? 1 : 0
 * @VNPU_OP_T_LESS_EQUAL: C[i] = A[i] <= B[i] ? 1 : 0
 * @VNPU_OP_T_WHERE: C[i] = A[i] where B[i] is non-zero; C[i] is left as it
 *	is where B[i] is 0
 * @VNPU_OP_T_GATHER: C[i] = A[i with i[d] replaced by B[i]], d the one
 *	axis in @axes, B int32 or int64 indices, negative ones counting from
 *	the end of A's axis of struct vnpu_tensor_ext k elements (uAPI 1.7,
 *	like the operator below); an index out of range fails the work with
 *	VNPU_ERROR_DEVICE_FAULT (the job's -ERANGE)
 * @VNPU_OP_T_TOPK: C = the k largest (or, with VNPU_TENSOR_SMALLEST, the k
 *	smallest) elements of A along the one axis in @axes, sorted, and D
 *	their int32 indices (struct vnpu_tensor_ext)
 *
 * Data is fp32 (IEEE single) and row-major unless said otherwise; the
 * numbers are the driver's (uapi/drm/vnpu_accel.h has the exact rules).
 * The operators up to @VNPU_OP_BIAS_ADD are launched with
 * vnpu_launch_kernel(), the VNPU_OP_T_* tensor operators with
 * vnpu_launch_tensor().
 */
enum vnpu_op {
	VNPU_OP_ADD = 1,
	VNPU_OP_SUB = 2,
	VNPU_OP_MUL = 3,
	VNPU_OP_DIV = 4,
	VNPU_OP_MAX = 5,
	VNPU_OP_MIN = 6,
	VNPU_OP_AXPY = 7,
	VNPU_OP_RELU = 8,
	VNPU_OP_GELU = 9,
	VNPU_OP_EXP = 10,
	VNPU_OP_SOFTMAX = 11,
	VNPU_OP_REDUCE_SUM = 12,
	VNPU_OP_REDUCE_MAX = 13,
	VNPU_OP_GEMM = 14,
	VNPU_OP_GEMM_I8 = 15,
	VNPU_OP_BIAS_ADD = 16,
	VNPU_OP_T_COPY = 0x11,
	VNPU_OP_T_ADD = 0x12,
	VNPU_OP_T_SUB = 0x13,
	VNPU_OP_T_MUL = 0x14,
	VNPU_OP_T_DIV = 0x15,
	VNPU_OP_T_MAX = 0x16,
	VNPU_OP_T_MIN = 0x17,
	VNPU_OP_T_RELU = 0x18,
	VNPU_OP_T_SIGMOID = 0x19,
	VNPU_OP_T_TANH = 0x1a,
	VNPU_OP_T_EXP = 0x1b,
	VNPU_OP_T_REDUCE_SUM = 0x1c,
	VNPU_OP_T_REDUCE_MEAN = 0x1d,
	VNPU_OP_T_REDUCE_MAX = 0x1e,
	VNPU_OP_T_SOFTMAX = 0x1f,
	VNPU_OP_T_DOT = 0x20,
	VNPU_OP_T_IM2COL = 0x21,
	VNPU_OP_T_MAXPOOL = 0x22,
	VNPU_OP_T_AVGPOOL = 0x23,
	VNPU_OP_T_BATCHNORM = 0x24,
	VNPU_OP_T_LOG = 0x25,
	VNPU_OP_T_FLOOR = 0x26,
	VNPU_OP_T_CEIL = 0x27,
	VNPU_OP_T_ROUND = 0x28,
	VNPU_OP_T_SIN = 0x29,
	VNPU_OP_T_COS = 0x2a,
	VNPU_OP_T_TAN = 0x2b,
	VNPU_OP_T_ASIN = 0x2c,
	VNPU_OP_T_ACOS = 0x2d,
	VNPU_OP_T_ATAN = 0x2e,
	VNPU_OP_T_SINH = 0x2f,
	VNPU_OP_T_COSH = 0x30,
	VNPU_OP_T_ASINH = 0x31,
	VNPU_OP_T_ACOSH = 0x32,
	VNPU_OP_T_ATANH = 0x33,
	VNPU_OP_T_ARGMAX = 0x34,
	VNPU_OP_T_ARGMIN = 0x35,
	VNPU_OP_T_REDUCE_PROD = 0x36,
	VNPU_OP_T_EQUAL = 0x37,
	VNPU_OP_T_LESS = 0x38,
	VNPU_OP_T_LESS_EQUAL = 0x39,
	VNPU_OP_T_WHERE = 0x3a,
	VNPU_OP_T_GATHER = 0x3b,
	VNPU_OP_T_TOPK = 0x3c,
};

/* struct vnpu_kernel flags for the GEMMs: A (B) is stored transposed. */
#define VNPU_GEMM_TRANS_A 0x1u
#define VNPU_GEMM_TRANS_B 0x2u

/**
 * struct vnpu_kernel - one operator launch
 * @op: the operator
 * @flags: VNPU_GEMM_TRANS_* for the GEMMs, else 0
 * @m: rows of the output (rows of the input for reductions)
 * @n: columns of the output and of elementwise inputs
 * @k: inner dimension of the GEMMs, 0 for other operators
 * @alpha: AXPY and GEMM scale
 * @beta: GEMM scale of the old C
 * @alpha_i32: GEMM_I8 alpha
 * @beta_i32: GEMM_I8 beta
 * @a: device address of A
 * @b: device address of B, 0 for operators without B
 * @c: device address of C, the output
 * @lda: elements between rows of A; 0 for dense rows
 * @ldb: elements between rows of B; 0 for dense rows
 * @ldc: elements between rows of C; 0 for dense rows
 *
 * Every array must lie inside one allocation of the stream's context.
 */
struct vnpu_kernel {
	enum vnpu_op op;
	uint32_t flags;
	uint32_t m, n, k;
	float alpha, beta;
	int32_t alpha_i32, beta_i32;
	uint64_t a, b, c;
	uint32_t lda, ldb, ldc;
};

/**
 * vnpu_launch_kernel() - run a built-in operator on a stream
 * @stream: the stream
 * @kernel: the launch; checked before anything is submitted
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for an unknown operator,
 * a zero dimension, flags or @k where the operator takes none, or an array
 * outside the context's allocations; the stream's sticky error;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_launch_kernel(struct vnpu_stream stream, const struct vnpu_kernel *kernel);

/* Most dimensions of a tensor operator. */
#define VNPU_TENSOR_MAX_DIMS 6
/* struct vnpu_tensor flags of VNPU_OP_T_AVGPOOL: padding counts. */
#define VNPU_TENSOR_COUNT_INCLUDE_PAD 0x1u
/* struct vnpu_tensor flags of VNPU_OP_T_ARGMAX and _ARGMIN: the last extremum. */
#define VNPU_TENSOR_SELECT_LAST 0x2u
/* struct vnpu_tensor flags of VNPU_OP_T_ARGMAX and _ARGMIN: fp32 indices. */
#define VNPU_TENSOR_INDEX_FP32 0x4u
/* struct vnpu_tensor flags of VNPU_OP_T_TOPK: the k smallest. */
#define VNPU_TENSOR_SMALLEST 0x8u

/**
 * struct vnpu_tensor_window - window of IM2COL, MAXPOOL and AVGPOOL
 * @kernel_h: window height
 * @kernel_w: window width
 * @stride_h: vertical step between windows
 * @stride_w: horizontal step between windows
 * @dilation_h: step between the rows of a window (1: dense)
 * @dilation_w: step between the columns of a window
 * @pad_top: padding rows before the input
 * @pad_left: padding columns before the input
 * @pad_bottom: padding rows after the input
 * @pad_right: padding columns after the input
 * @out_h: output rows, chosen by the caller (floor or ceil mode)
 * @out_w: output columns
 *
 * Output (oh, ow) looks at input rows oh * stride_h - pad_top + i *
 * dilation_h for i < kernel_h, and the columns likewise; positions outside
 * the input are padding (0 for IM2COL, ignored by the pools).
 */
struct vnpu_tensor_window {
	uint32_t kernel_h, kernel_w;
	uint32_t stride_h, stride_w;
	uint32_t dilation_h, dilation_w;
	uint32_t pad_top, pad_left, pad_bottom, pad_right;
	uint32_t out_h, out_w;
};

/**
 * struct vnpu_tensor_norm - per-channel arrays of VNPU_OP_T_BATCHNORM
 * @scale: device address of shape[axis] scales
 * @bias: device address of shape[axis] biases
 * @mean: device address of shape[axis] means
 * @var: device address of shape[axis] variances
 * @epsilon: added to the variance
 * @axis: the channel dimension
 */
struct vnpu_tensor_norm {
	uint64_t scale, bias, mean, var;
	float epsilon;
	uint32_t axis;
};

/**
 * struct vnpu_tensor - one N-d tensor operator launch
 * @op: a VNPU_OP_T_* operator
 * @flags: VNPU_TENSOR_COUNT_INCLUDE_PAD for VNPU_OP_T_AVGPOOL,
 *	VNPU_TENSOR_SELECT_LAST and VNPU_TENSOR_INDEX_FP32 for VNPU_OP_T_ARGMAX
 *	and _ARGMIN, VNPU_TENSOR_SMALLEST for VNPU_OP_T_TOPK, else 0
 * @ndim: dimensions of the iteration space, 1 to VNPU_TENSOR_MAX_DIMS
 * @axes: bit d set: dimension d is reduced (REDUCE_*), normalized
 *	(SOFTMAX) or contracted (DOT); 0 for the other operators
 * @shape: sizes of the iteration space, the last dimension varying
 *	fastest; N, C, H, W of the input for the window operators
 * @a: device address of A
 * @b: device address of B, 0 for operators without B
 * @c: device address of C, the output
 * @stride_a: element strides of A per dimension; 0 broadcasts
 * @stride_b: element strides of B, all 0 without B
 * @stride_c: element strides of C; 0 on the reduced axes. The window
 *	operators use 4 (pools: N, C, out_h, out_w) or 6 (IM2COL: N, C,
 *	kernel_h, kernel_w, out_h, out_w)
 * @window: IM2COL, MAXPOOL and AVGPOOL; zero for the others
 * @norm: BATCHNORM; zero for the others
 *
 * Element i of a tensor is at address + 4 * (i0 * stride[0] + ...).
 * Every array must lie inside one allocation of the stream's context.
 * Members past @ndim and members the operator does not use must be zero.
 * The complete rules are those of struct drm_vnpu_tensor_args in
 * uapi/drm/vnpu_accel.h.
 */
struct vnpu_tensor {
	enum vnpu_op op;
	uint32_t flags;
	uint32_t ndim;
	uint32_t axes;
	uint32_t shape[VNPU_TENSOR_MAX_DIMS];
	uint64_t a, b, c;
	uint32_t stride_a[VNPU_TENSOR_MAX_DIMS];
	uint32_t stride_b[VNPU_TENSOR_MAX_DIMS];
	uint32_t stride_c[VNPU_TENSOR_MAX_DIMS];
	struct vnpu_tensor_window window;
	struct vnpu_tensor_norm norm;
};

/**
 * vnpu_launch_tensor() - run an N-d tensor operator on a stream
 * @stream: the stream
 * @tensor: the launch
 *
 * The operator, the dimensions and that every array lies in the stream's
 * context are checked before anything is submitted; the driver checks the
 * rest when the work is submitted (inside a batch: when the batch is).
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for an operator that is
 * not a tensor operator, bad dimensions or strides, or an array outside
 * the context's allocations; the stream's sticky error;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_launch_tensor(struct vnpu_stream stream, const struct vnpu_tensor *tensor);

/**
 * enum vnpu_elem_type - element type of a tensor of a launch (uAPI 1.5)
 * @VNPU_ELEM_F32: IEEE single, 4 bytes (what vnpu_launch_tensor() uses)
 * @VNPU_ELEM_F16: IEEE half (binary16), 2 bytes
 * @VNPU_ELEM_I8: signed 8-bit integer
 * @VNPU_ELEM_U8: unsigned 8-bit integer
 * @VNPU_ELEM_I32: signed 32-bit integer
 * @VNPU_ELEM_I64: signed 64-bit integer (uAPI 1.7): the indices, data and
 *	output of VNPU_OP_T_GATHER, and VNPU_OP_T_COPY from int64 to int64
 */
enum vnpu_elem_type {
	VNPU_ELEM_F32 = 0,
	VNPU_ELEM_F16 = 1,
	VNPU_ELEM_I8 = 2,
	VNPU_ELEM_U8 = 3,
	VNPU_ELEM_I32 = 4,
	VNPU_ELEM_I64 = 5,
};

/**
 * struct vnpu_tensor_types - element types of the tensors of a launch
 * @a: enum vnpu_elem_type of A
 * @b: of B; VNPU_ELEM_F32 (0) for operators without B
 * @c: of C
 */
struct vnpu_tensor_types {
	uint8_t a;
	uint8_t b;
	uint8_t c;
};

/**
 * vnpu_launch_tensor_typed() - run an N-d tensor operator on tensors of
 *	the given element types
 * @stream: the stream
 * @tensor: the launch; element i of a tensor is at address + size *
 *	(i0 * stride[0] + ...), size the element size of its type
 * @types: the element types; NULL: all fp32, as vnpu_launch_tensor()
 *
 * The float operators (all but VNPU_OP_T_COPY, VNPU_OP_T_IM2COL, the
 * comparisons and VNPU_OP_T_WHERE) take
 * A and B of any type in any mix: each element read is converted to
 * fp32, the work is done in fp32 (sums accumulate in fp32) and each
 * result is rounded to C's type (to nearest, ties to even; integer types
 * also saturate, NaN gives 0). C may be of an integer type for the
 * elementwise operators only. COPY and IM2COL move elements of one type
 * bit exactly, or convert any type to a float C. The comparisons (uAPI
 * 1.6) compare A and B of any types exactly and write 1 or 0 into C of any
 * type; WHERE moves A's elements bit exactly into C of A's type. The
 * complete rules are those of struct drm_vnpu_tensor_args (uAPI 1.5 and
 * 1.6); a driver of uAPI 1.4 takes fp32 tensors only, one of 1.5 not the
 * operators of 1.6.
 *
 * Return: as vnpu_launch_tensor(); VNPU_ERROR_INVALID_VALUE also for an
 * unknown element type or an array not aligned to its element size; a
 * combination the operator does not take fails when the work is
 * submitted, with the same error.
 */
int vnpu_launch_tensor_typed(struct vnpu_stream stream, const struct vnpu_tensor *tensor,
			     const struct vnpu_tensor_types *types);

/**
 * struct vnpu_tensor_ext - the members of a launch of uAPI 1.7
 * @k: VNPU_OP_T_TOPK: the elements selected, 1 to shape[d];
 *	VNPU_OP_T_GATHER: the length of A's gathered axis
 * @d: VNPU_OP_T_TOPK: device address of D, the int32 indices; else 0
 * @stride_d: VNPU_OP_T_TOPK: element strides of D (C's shape: @k along
 *	the axis); else all 0
 */
struct vnpu_tensor_ext {
	uint32_t k;
	uint64_t d;
	uint32_t stride_d[VNPU_TENSOR_MAX_DIMS];
};

/**
 * vnpu_launch_tensor_ext() - run an N-d tensor operator with the members
 *	of uAPI 1.7 (VNPU_OP_T_GATHER, VNPU_OP_T_TOPK)
 * @stream: the stream
 * @tensor: the launch, as for vnpu_launch_tensor_typed(); for
 *	VNPU_OP_T_GATHER the iteration shape is C's, for VNPU_OP_T_TOPK A's
 * @types: the element types; NULL: all fp32
 * @ext: @k, and D of VNPU_OP_T_TOPK
 *
 * The complete rules are those of struct drm_vnpu_tensor_args (uAPI
 * 1.7). A GATHER index outside -k..k - 1 is not read: the work fails
 * with VNPU_ERROR_DEVICE_FAULT on the stream, as any failed job does.
 *
 * Return: as vnpu_launch_tensor_typed(); VNPU_ERROR_INVALID_VALUE also
 * for a NULL @ext, or D outside the context's allocations.
 */
int vnpu_launch_tensor_ext(struct vnpu_stream stream, const struct vnpu_tensor *tensor,
			   const struct vnpu_tensor_types *types,
			   const struct vnpu_tensor_ext *ext);

/**
 * vnpu_launch_delay() - occupy the stream's engine for a time (simulated work)
 * @stream: the stream
 * @ns: nanoseconds, 1 to 10 s
 *
 * Stands in for a long device operation in tests, demos and scheduling
 * experiments: the engine is busy, the stream's later work waits.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for @ns 0 or above 10 s;
 * the stream's sticky error; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_launch_delay(struct vnpu_stream stream, uint64_t ns);

/* vnpu_event_create(): the event records device timestamps. */
#define VNPU_EVENT_TIMING 0x1u
#define VNPU_EVENT_FLAGS VNPU_EVENT_TIMING

#ifdef __cplusplus
}
#endif

#endif /* VNPU_KERNEL_H */
