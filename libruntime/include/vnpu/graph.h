/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Graphs: ONNX models loaded, planned and run on a device; host tensors.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_GRAPH_H
#define VNPU_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "context.h"
#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Graphs: ONNX models run on a device.
 *
 * vnpu_graph_load() reads an ONNX model (protobuf), checks it completely,
 * infers every tensor's shape, maps each node to the device's built-in
 * operators and allocates its memory: static memory (weights, constants,
 * graph inputs and outputs) once, exactly; dynamic memory (intermediate
 * tensors) as one arena whose offsets the static planner chose. A node the
 * device cannot run is a load error naming the node and its operator;
 * nothing is ever computed on the host. Documentation/onnx.rst lists the
 * supported operators.
 */

/* Most dimensions of a tensor. */
#define VNPU_HOST_TENSOR_MAX_RANK 8

/* Element types (the numbers of ONNX's TensorProto.DataType). */
#define VNPU_DTYPE_FLOAT 1
#define VNPU_DTYPE_INT64 7
/* IEEE half, 2 bytes: stored and moved as fp16, computed in fp32. */
#define VNPU_DTYPE_FLOAT16 10
/*
 * Integer tensors (quantised values, integer and boolean graph inputs and
 * outputs); a bool is one byte, 0 or 1.
 */
#define VNPU_DTYPE_UINT8 2
#define VNPU_DTYPE_INT8 3
#define VNPU_DTYPE_INT32 6
#define VNPU_DTYPE_BOOL 9

/**
 * struct vnpu_graph - a graph handle
 * @handle: opaque; 0 is never a valid graph
 */
struct vnpu_graph {
	uint64_t handle;
};

/**
 * struct vnpu_host_tensor - a host tensor: graph input, output or test data
 * @name: the ONNX name, may be empty
 * @dtype: VNPU_DTYPE_*
 * @rank: number of dimensions, 0 for a scalar
 * @dims: the dimensions, outermost first
 * @data: the elements, row-major
 * @size: bytes at @data (for an output: bytes available)
 */
struct vnpu_host_tensor {
	char name[128];
	uint32_t dtype;
	uint32_t rank;
	int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
	void *data;
	uint64_t size;
};

/* vnpu_graph_options.flags: the caller's options have @dims and @num_dims. */
#define VNPU_GRAPH_LOAD_DIMS (1u << 0)

/**
 * struct vnpu_graph_dim - the size of a named symbolic input dimension
 * @name: the dimension's name in the model (its ONNX dim_param, such as
 *	"seq" in an input of shape [batch, seq, 8])
 * @size: the size it takes in this load, at least 1
 */
struct vnpu_graph_dim {
	const char *name;
	uint64_t size;
};

/**
 * struct vnpu_graph_options - how vnpu_graph_load() prepares a graph
 * @flags: 0, or %VNPU_GRAPH_LOAD_DIMS when @dims and @num_dims are set
 *	(callers built before API 0.3's dims pass 0 and a shorter struct)
 * @streams: streams vnpu_graph_run() spreads independent branches over
 *	(joined by events); 0 means 1
 * @workspaces: runs that may be in flight at once, each with its own
 *	arena and input/output buffers; 0 means 1
 * @batch: when not 0, the size of the first dimension of every graph
 *	input whose first dimension is symbolic or differs (a batch split
 *	across devices loads the graph on each with its share)
 * @plan_strategy: an enum vnpu_plan_strategy for the arena
 * @constants: graph inputs whose values are given at load, matched by name
 *	(the tensor's @name): each becomes a constant of the graph, like an
 *	initializer, and is no longer an input of vnpu_graph_run(). Shapes and
 *	axes that ONNX lets a model take as int64 inputs (Reshape's shape,
 *	Squeeze's and Unsqueeze's axes, ReduceSum's axes, TopK's k) must be
 *	known to plan memory, so such inputs must be given here (else the
 *	load fails saying the node's input "must be a constant"); other int64
 *	inputs (token ids, the indices of Gather and GatherElements) and
 *	inputs of the other element types may be given at run. The
 *	values are copied. NULL when @num_constants is 0
 * @num_constants: entries at @constants
 * @dims: with %VNPU_GRAPH_LOAD_DIMS, the sizes of symbolic input dimensions
 *	by name, as ONNX Runtime's free dimension overrides: every input
 *	dimension of that name takes that size, so a model exported with
 *	dynamic axes (batch, sequence) is planned for them; each name must
 *	name a symbolic dimension of an input, once. @batch, when not 0, still
 *	sizes every input's first dimension. Shapes computed from these
 *	(Shape, Gather, Slice ...) are folded at load
 * @num_dims: entries at @dims
 */
struct vnpu_graph_options {
	uint32_t flags;
	uint32_t streams;
	uint32_t workspaces;
	uint64_t batch;
	unsigned int plan_strategy;
	const struct vnpu_host_tensor *constants;
	uint32_t num_constants;
	const struct vnpu_graph_dim *dims;
	uint32_t num_dims;
};

/**
 * struct vnpu_graph_info - what a loaded graph contains
 * @num_inputs: graph inputs to pass to vnpu_graph_run()
 * @num_outputs: graph outputs it fills
 * @num_nodes: ONNX nodes
 * @num_launches: device operations one run submits (launches and copies)
 * @streams: as loaded
 * @workspaces: as loaded
 * @opset: the model's default-domain operator set version
 */
struct vnpu_graph_info {
	uint32_t num_inputs;
	uint32_t num_outputs;
	uint32_t num_nodes;
	uint32_t num_launches;
	uint32_t streams;
	uint32_t workspaces;
	int64_t opset;
};

/**
 * struct vnpu_graph_memory - the device memory of a graph
 * @weights_bytes: exact bytes of initializers and constants on the device
 * @io_bytes: exact bytes of the graph inputs and outputs of one workspace
 * @static_bytes: exact static memory: @weights_bytes + @io_bytes per workspace
 * @static_allocated: device bytes allocated for it (with alignment)
 * @arena_bytes: the planned arena of intermediate tensors, per workspace
 * @naive_bytes: every intermediate tensor in its own range, each starting
 *	64-byte aligned as in the arena, per workspace
 * @lower_bound: most intermediate bytes alive at one step, per workspace
 * @dynamic_allocated: device bytes allocated for the arenas
 * @total_allocated: @static_allocated + @dynamic_allocated
 * @intermediates: number of intermediate tensors planned
 * @load_ns: time vnpu_graph_load() took, parse to uploaded weights
 * @plan_ns: time the planner took
 */
struct vnpu_graph_memory {
	uint64_t weights_bytes;
	uint64_t io_bytes;
	uint64_t static_bytes;
	uint64_t static_allocated;
	uint64_t arena_bytes;
	uint64_t naive_bytes;
	uint64_t lower_bound;
	uint64_t dynamic_allocated;
	uint64_t total_allocated;
	uint64_t intermediates;
	uint64_t load_ns;
	uint64_t plan_ns;
};

/**
 * vnpu_graph_load() - load an ONNX model from memory onto a device
 * @ctx: the context whose device runs the graph and holds its memory
 * @data: the serialized ModelProto
 * @size: bytes at @data
 * @opts: options, NULL for the defaults (one stream, one workspace)
 * @graph: out
 *
 * Checks the model completely before touching the device: a protobuf
 * that does not parse (truncated, corrupt), a cycle, a tensor nobody
 * produces (a missing initializer), shapes that do not fit, a symbolic
 * input dimension without @opts->batch, an operator, attribute or type the
 * device cannot run. vnpu_graph_error_message() then says which node
 * (name and operator) and why. A failed load leaves nothing allocated.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL arguments, unknown
 * @opts->flags or a bad strategy; VNPU_ERROR_INVALID_MODEL for a model that
 * is malformed or inconsistent; VNPU_ERROR_NOT_SUPPORTED for a valid model
 * the device cannot run; VNPU_ERROR_OUT_OF_DEVICE_MEMORY,
 * VNPU_ERROR_QUOTA_EXCEEDED; VNPU_ERROR_OUT_OF_HOST_MEMORY;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_load(struct vnpu_context ctx, const void *data, size_t size,
		    const struct vnpu_graph_options *opts, struct vnpu_graph *graph);

/**
 * vnpu_graph_load_file() - vnpu_graph_load() of a model file
 * @ctx: the context
 * @path: the .onnx file
 * @opts: options, NULL for the defaults
 * @graph: out
 *
 * Return: as vnpu_graph_load(); VNPU_ERROR_INVALID_VALUE when the file
 * cannot be read (vnpu_graph_error_message() has the reason).
 */
int vnpu_graph_load_file(struct vnpu_context ctx, const char *path,
			 const struct vnpu_graph_options *opts, struct vnpu_graph *graph);

/**
 * vnpu_graph_error_message() - why the calling thread's last graph call failed
 *
 * Return: a message such as "node 'conv1' (Conv): attribute 'group' = 2 not
 * supported", valid until the thread's next graph call; "" after a success.
 */
const char *vnpu_graph_error_message(void);

/**
 * vnpu_graph_get_info() - counts and settings of a loaded graph
 * @graph: the graph
 * @info: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_get_info(struct vnpu_graph graph, struct vnpu_graph_info *info);

/**
 * vnpu_graph_input_desc() - name, type and shape of a graph input
 * @graph: the graph
 * @index: 0 .. num_inputs - 1, in the model's order
 * @desc: out; @desc->data is NULL and @desc->size the bytes it needs
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_input_desc(struct vnpu_graph graph, uint32_t index, struct vnpu_host_tensor *desc);

/**
 * vnpu_graph_output_desc() - name, type and shape of a graph output
 * @graph: the graph
 * @index: 0 .. num_outputs - 1, in the model's order
 * @desc: out; @desc->data is NULL and @desc->size the bytes it needs
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_output_desc(struct vnpu_graph graph, uint32_t index, struct vnpu_host_tensor *desc);

/**
 * vnpu_graph_run() - run a graph once and wait for its outputs
 * @graph: the graph
 * @streams: streams of the graph's context; the inputs are copied and the
 *	outputs read on @streams[0], branches spread over the others
 * @num_streams: 1 .. the graph's @streams option; fewer streams than the
 *	graph was planned for run its branches on the first ones
 * @inputs: num_inputs tensors, in the order of vnpu_graph_input_desc(),
 *	whose type and shape must be exactly the graph's
 * @outputs: num_outputs tensors; @data and @size (capacity) in, the rest
 *	filled
 *
 * Takes a free workspace (waiting for one if all are in use), so several
 * threads may run the same graph at once, each on its own streams. Work
 * already submitted to @streams before the call runs first.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL arguments, a
 * wrong number of streams, an input of the wrong type or shape or an
 * output buffer too small (vnpu_graph_error_message() says which);
 * VNPU_ERROR_WRONG_CONTEXT for a stream of another context; the errors of
 * the streams' work (VNPU_ERROR_DEVICE_FAULT for an index of Gather or
 * GatherElements out of range, which the device does not read);
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_run(struct vnpu_graph graph, const struct vnpu_stream *streams,
		   uint32_t num_streams, const struct vnpu_host_tensor *inputs,
		   struct vnpu_host_tensor *outputs);

/**
 * vnpu_graph_memory_report() - static and dynamic device memory of a graph
 * @graph: the graph
 * @mem: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_memory_report(struct vnpu_graph graph, struct vnpu_graph_memory *mem);

/**
 * vnpu_graph_destroy() - free a graph and all its device memory
 * @graph: the graph; no vnpu_graph_run() of it may be in progress
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_destroy(struct vnpu_graph graph);

/**
 * vnpu_host_tensor_read_file() - read a tensor from an ONNX TensorProto file
 * @path: a .pb file, as in ONNX's test data sets
 * @tensor: out; @tensor->data is allocated, release it with vnpu_host_tensor_free()
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when the file cannot be
 * read; VNPU_ERROR_INVALID_MODEL when it is no valid TensorProto;
 * VNPU_ERROR_NOT_SUPPORTED for an element type other than float or int64,
 * more than VNPU_HOST_TENSOR_MAX_RANK dimensions or external data;
 * VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_host_tensor_read_file(const char *path, struct vnpu_host_tensor *tensor);

/**
 * vnpu_host_tensor_write_file() - write a tensor as an ONNX TensorProto file
 * @path: the file, created or replaced
 * @tensor: the tensor; its @size must match its type and shape
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a bad tensor or a file
 * that cannot be written; VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_host_tensor_write_file(const char *path, const struct vnpu_host_tensor *tensor);

/**
 * vnpu_host_tensor_free() - release the data vnpu_host_tensor_read_file() allocated
 * @tensor: the tensor; its @data becomes NULL, may be NULL
 */
void vnpu_host_tensor_free(struct vnpu_host_tensor *tensor);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_GRAPH_H */
