/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * graph/: the ONNX graph engine, the top layer of the runtime. Owns the
 * graph loader and runner (graph.c), the mapping of ONNX operators to the
 * device's (graph_ops.c) and tensor files (tensor_file.c); this header is
 * their private interface. It may call the core (core/runtime.h,
 * core/trace.h) and memory management (the planner, through the public
 * vnpu_plan_*() calls); nothing calls it but the application.
 * See Documentation/architecture.rst.
 */
#ifndef VNPU_GRAPH_PRIVATE_H
#define VNPU_GRAPH_PRIVATE_H

#include <stdarg.h>
#include <stdint.h>

#include "onnx/onnx.pb-c.h"
#include "core/runtime.h"

/* Where a tensor lives on the device. */
enum gt_class {
	GT_UNSET = 0,
	GT_WEIGHT,	/* initializer or constant: static buffer, read-only */
	GT_INPUT,	/* graph input: workspace I/O buffer */
	GT_OUTPUT,	/* graph output computed by a node: workspace I/O buffer */
	GT_INTER,	/* intermediate: workspace arena, planned */
	GT_ALIAS,	/* a view of another tensor (Reshape and friends) */
};

struct gtensor {
	char *name;
	int dtype;
	uint32_t rank;
	int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
	uint64_t count;		/* elements */
	uint64_t bytes;
	int cls;
	int producer;		/* node index, -1 for inputs and weights */
	int base;		/* GT_ALIAS: the tensor it views */
	uint64_t offset;	/* in the static buffer, the I/O area or the arena */
	void *host;		/* GT_WEIGHT: the values, for upload and constant shapes */
	int first, last;	/* GT_INTER: lifetime in node steps [first, last) */
	int plan_index;		/* GT_INTER: index in the planner's buffers */
};

enum gstep_kind {
	GSTEP_KERNEL = 1,
	GSTEP_COPY,
	GSTEP_TENSOR,
};

/* An operand: a tensor (resolved to its storage at run) and a byte offset. */
struct goperand {
	int tensor;		/* -1: unused */
	uint64_t offset;
};

/* One device operation. */
struct gstep {
	int kind;
	int node;
	struct vnpu_kernel k;	/* GSTEP_KERNEL: a, b, c filled at run from the operands */
	struct vnpu_tensor t;	/* GSTEP_TENSOR: likewise, and norm's arrays */
	struct goperand a, b, c;
	struct goperand norm[4];	/* BATCHNORM: scale, bias, mean, var */
	struct goperand d;		/* TOPK: the indices, a second output */
	struct vnpu_tensor_types types;	/* GSTEP_TENSOR: element types of A, B, C */
	int has_ext;			/* GSTEP_TENSOR of uAPI 1.7: launched with ext */
	struct vnpu_tensor_ext ext;	/* k, and D's strides (its address at run) */
	uint64_t copy_bytes;	/* GSTEP_COPY: bytes from a to c */
};

/*
 * The operands of @st (at most 8), inputs first, then D (TOPK's second
 * output), its output C last; returns the count.
 */
int gstep_operands(const struct gstep *st, const struct goperand **ops);

/* What the operator mapping sees of the model being built. */
struct gbuild {
	Onnx__GraphProto *gp;
	int64_t opset;
	struct gtensor *tensors;
	size_t num_tensors, cap_tensors;
	struct gstep *steps;
	size_t num_steps, cap_steps;
	uint64_t batch;
	const struct vnpu_host_tensor *constants;	/* vnpu_graph_options.constants */
	uint32_t num_constants;
	const struct vnpu_graph_dim *dims;		/* vnpu_graph_options.dims */
	uint32_t num_dims;
};

/*
 * Most inputs and outputs of a node. The variadic operators (Concat, Sum,
 * Max, Min, Mean) take one input per branch: DenseNet's Concat has one per
 * layer of its block, up to 65 in DenseNet-264.
 */
#define GNODE_MAX_INPUTS 256
#define GNODE_MAX_OUTPUTS 4

/* The operator's node being mapped. */
struct gnode {
	int index;
	Onnx__NodeProto *np;
	int in[GNODE_MAX_INPUTS];	/* tensor ids of the inputs, -1 for an empty name */
	size_t num_in;
	int out[GNODE_MAX_OUTPUTS];	/* tensor ids of the outputs (created, shape unset) */
	size_t num_out;
	/*
	 * Set by the integer products (graph_ops_quant.c) for the MatMul or
	 * Conv mapping they run on int32 operands: accepted, and the device
	 * sums their products exactly.
	 */
	int int_operands;
};

/* Bytes of an element of @dtype (VNPU_DTYPE_*), 0 for a type not supported. */
unsigned int gb_dtype_size(int dtype);
/* fp32 and fp16: the types the device computes with. */
int gb_is_float(int dtype);
/* The types of graph inputs and outputs: float, float16, int8, uint8, int32, bool. */
int gb_is_io_type(int dtype);
/*
 * Element @i of constant data @data of @dtype (float, float16, int64,
 * int32, int8, uint8, bool) as a double.
 */
double gb_const_value(int dtype, const void *data, uint64_t i);

/*
 * The order to map and run @b's nodes in (graph_order.c): @order gets
 * every node index once. Fails with VNPU_ERROR_INVALID_MODEL, naming a
 * node, if the graph has a cycle.
 */
int graph_order_nodes(const struct gbuild *b, size_t *order);

/* Records a thread's graph error message and returns @status. */
int graph_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* graph_fail() prefixed with "node 'NAME' (OP): ". */
int node_fail(const struct gnode *n, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Maps one node: checks it, sets its outputs' shapes and emits its steps. */
int graph_map_node(struct gbuild *b, struct gnode *n);

/* Helpers of the mapping, in graph.c. */
int gb_new_tensor(struct gbuild *b, const char *name, int *id);
int gb_add_step(struct gbuild *b, const struct gstep *step);
int gb_add_weight(struct gbuild *b, const char *name, int dtype, uint32_t rank,
		  const int64_t *dims, const void *data, int *id);
int gb_set_shape(struct gtensor *t, int dtype, uint32_t rank, const int64_t *dims);
int gb_tensor_from_proto(const Onnx__TensorProto *tp, int *dtype, uint32_t *rank,
			 int64_t *dims, void **data, char *why, size_t whylen);
void shape_str(const struct gtensor *t, char *buf, size_t len);

#endif
