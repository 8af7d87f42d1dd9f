/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The operator mapping's shared helpers (graph_ops.c) and the operators
 * of graph_ops_data.c (data movement), graph_ops_math.c (elementwise
 * operators lowered onto the device's arithmetic), graph_ops_rnn.c
 * (recurrent layers unrolled over the sequence), graph_ops_loss.c (the
 * losses over class scores), graph_ops_logic.c (bool tensors and
 * comparisons) and graph_fold.c (shape
 * arithmetic folded at load). Private to graph/.
 */
#ifndef VNPU_GRAPH_OPS_H
#define VNPU_GRAPH_OPS_H

#include "graph.h"

#define MAX_DIM DRM_VNPU_KERNEL_MAX_DIM
#define TDIMS VNPU_TENSOR_MAX_DIMS
#define MAX_RANK VNPU_HOST_TENSOR_MAX_RANK

/* One N-d launch: operands, iteration space and strides (elements). */
struct tlaunch {
	enum vnpu_op op;
	uint32_t flags;
	uint32_t rank;
	int64_t shape[VNPU_HOST_TENSOR_MAX_RANK];
	uint32_t axes;
	int ta, tb, tc;
	uint64_t oa, ob, oc;	/* element offsets */
	uint64_t sa[VNPU_HOST_TENSOR_MAX_RANK], sb[VNPU_HOST_TENSOR_MAX_RANK];
	uint64_t sc[VNPU_HOST_TENSOR_MAX_RANK];
	int norm[4];		/* BATCHNORM: scale, bias, mean, var */
	struct vnpu_tensor_window window;
	float epsilon;
	uint32_t norm_axis;
	uint32_t out_rank;	/* strides of C given for the window operators */
	uint32_t k;		/* GATHER: A's length on the axis; TOPK: the count */
	int td;			/* TOPK: D, the int32 indices */
	uint64_t od;
	uint64_t sd[VNPU_HOST_TENSOR_MAX_RANK];
};

/* Attributes. */
const Onnx__AttributeProto *gop_attr(const struct gnode *n, const char *name);
/* Every attribute of the node must be in @allowed (NULL-terminated). */
int gop_check_attrs(const struct gnode *n, const char *const *allowed);
int64_t gop_attr_int(const struct gnode *n, const char *name, int64_t def);
float gop_attr_float(const struct gnode *n, const char *name, float def);
const char *gop_attr_str(const struct gnode *n, const char *name, char *buf, size_t len);

/* Inputs and outputs. */
struct gtensor *gop_in(struct gbuild *b, const struct gnode *n, size_t j);
int gop_need_inputs(const struct gnode *n, size_t min, size_t max);
int gop_need_float(struct gbuild *b, const struct gnode *n, size_t j);
int gop_single_output(const struct gnode *n);
/*
 * Input @j of an operator that only moves elements (T_COPY, bit exact):
 * any type the device holds, that of input 0 (float and float16 may mix),
 * not empty.
 */
int gop_need_movable(struct gbuild *b, const struct gnode *n, size_t j);
/*
 * Input 1 of Gather and GatherElements given at run: int32 or int64
 * indices, input 0 any type the device moves, or int64; neither empty.
 */
int gop_need_run_indices(struct gbuild *b, const struct gnode *n);
/*
 * The usual prologue of a float operator: attributes within @allowed,
 * @min..@max inputs, each present one float, only the first output used.
 */
int gop_check_float_op(struct gbuild *b, const struct gnode *n, const char *const *allowed,
		       size_t min, size_t max);
int gop_set_out(struct gbuild *b, const struct gnode *n, size_t o, uint32_t rank,
		const int64_t *dims);
int gop_set_alias(struct gbuild *b, const struct gnode *n, int src, uint32_t rank,
		  const int64_t *dims);
/* A scratch intermediate of @count floats owned by the node. */
int gop_scratch(struct gbuild *b, const struct gnode *n, uint64_t count, int *id);
/* The values of tensor @id (or of the tensor it views) if it is a constant. */
const void *gop_const_data(struct gbuild *b, int id);
/* Constant int64 values of input @j (shapes, axes); NULL if not constant. */
const int64_t *gop_const_ints(struct gbuild *b, const struct gnode *n, size_t j, size_t *count);

/* Shapes and axes. */
uint64_t gop_prod(const int64_t *dims, uint32_t from, uint32_t to);
int gop_norm_axes(const struct gnode *n, const int64_t *in, size_t count, uint32_t rank,
		  int64_t *out);
int gop_get_axes(struct gbuild *b, const struct gnode *n, int64_t input_opset, int64_t *axes,
		 size_t *count, int *given);
int gop_broadcast_shape(const struct gnode *n, const struct gtensor *a, const struct gtensor *c,
			uint32_t *rank, int64_t *dims);
void gop_dense(const int64_t *dims, uint32_t rank, uint64_t *st);
void gop_bcast(const struct gtensor *t, uint32_t rank, const int64_t *dims, uint64_t *st);

/* Device operations. */
int gop_launch(struct gbuild *b, const struct gnode *n, enum vnpu_op op, uint32_t flags,
	       uint64_t m, uint64_t nn, uint64_t k, float alpha, float beta,
	       int ta, uint64_t oa, int tb, uint64_t ob, int tc, uint64_t oc);
void gop_tl_init(struct tlaunch *l, enum vnpu_op op, uint32_t rank, const int64_t *shape);
int gop_tl_emit(struct gbuild *b, const struct gnode *n, struct tlaunch *l);
int gop_reduce(struct gbuild *b, struct gnode *n, enum vnpu_op op, const int64_t *axes,
	       size_t count, int keep);

/* One launch of @op over the @rank-d @shape: A, B (or -1) and C with strides. */
int gop_launch_nd(struct gbuild *b, const struct gnode *n, enum vnpu_op op, uint32_t rank,
		  const int64_t *shape, uint32_t axes, int ta, const uint64_t *sa, int tb,
		  const uint64_t *sb, int tc, const uint64_t *sc);
/*
 * LogSoftmax of tensor @x into @y over the @axes (bit mask) of their
 * @rank-d view @shape: with m the maximum over the axes and d = x - m,
 * y = d - log(sum of exp(d)).
 */
int gop_log_softmax(struct gbuild *b, const struct gnode *n, int x, int y, uint32_t rank,
		    const int64_t *shape, uint32_t axes);

/* Copies the @rank-d window @shape of A (offset, strides) into C (T_COPY). */
int gop_copy(struct gbuild *b, const struct gnode *n, uint32_t rank, const int64_t *shape,
	     int ta, uint64_t oa, const uint64_t *sa, int tc, uint64_t oc, const uint64_t *sc);
/*
 * The mappings of MatMul and Conv (graph_ops.c), which the integer
 * operators of graph_ops_quant.c call with their centred fp32 operands.
 */
int gop_matmul(struct gbuild *b, struct gnode *n);
int gop_conv(struct gbuild *b, struct gnode *n);
/*
 * Slice's output range (graph_ops_data.c), for the device copy and for the
 * fold of an integer slice: from the starts, ends, axes and steps (the
 * attributes before operator set 10, constant inputs since) over an input
 * of @rank dimensions @in, the first index @start, the @step and the
 * output size @dims of every dimension.
 */
int gop_slice_ranges(struct gbuild *b, const struct gnode *n, uint32_t rank, const int64_t *in,
		     int64_t *start, int64_t *step, int64_t *dims);
/* A scalar float constant of the node (a weight). */
int gop_scalar(struct gbuild *b, const struct gnode *n, float value, int *id);

/*
 * An operator's mapping. @first_opset: the earliest operator set whose
 * definition of the operator the mapping implements.
 */
struct gop_map {
	const char *name;
	int (*map)(struct gbuild *b, struct gnode *n);
	int64_t first_opset;
};

/*
 * The operators of graph_ops_data.c, graph_ops_math.c, graph_ops_rnn.c
 * and graph_ops_quant.c (QuantizeLinear, DequantizeLinear), NULL-terminated.
 */
extern const struct gop_map gop_data_ops[];
extern const struct gop_map gop_math_ops[];
extern const struct gop_map gop_rnn_ops[];
extern const struct gop_map gop_loss_ops[];
extern const struct gop_map gop_quant_ops[];
/* graph_ops_logic.c: And, Or, Xor, Not, the comparisons, IsNaN, IsInf, Where. */
extern const struct gop_map gop_logic_ops[];
/* graph_ops_einsum.c: Einsum of one or two operands. */
extern const struct gop_map gop_einsum_ops[];

/* Shape arithmetic folded at load (graph_fold.c): 1 when @n was folded. */
int graph_fold_node(struct gbuild *b, struct gnode *n, int *folded);

#endif
