// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: ONNX graphs through the runtime: every kind of bad model
 * and bad run is refused with its status and a message naming the node
 * and operator, and leaves the device's memory as it was; a good model
 * runs, on one and on two streams, and gives back all of its memory; a
 * model with uint8 input, bool intermediates and int32 output matches
 * numpy's integers exactly; int64 indices given at run (Gather,
 * GatherElements) and TopK match numpy, and an index out of range fails
 * the run.
 *
 * The models are generated at build time by tools/onnx/gen-models.py into
 * build/onnx (run from the repository root).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "../tools/run/tensor_compare.h"
#include "vnpu.h"
#include "vnpu_rt_memory.h"

#define MODELS "build/onnx"

FIXTURE(graph) {
	struct vnpu_context ctx;
	struct vnpu_stream stream;
	uint64_t baseline;
};

FIXTURE_SETUP(graph)
{
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &self->ctx));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(self->ctx, VNPU_PRIORITY_NORMAL, 0,
						   &self->stream));
	/*
	 * The streams' own buffers (launch arguments, the default stream of
	 * synchronous copies) exist before the baseline is taken.
	 */
	{
		struct vnpu_kernel k = { .op = VNPU_OP_RELU, .m = 1, .n = 1 };
		float one = 1.0f;
		uint64_t p;

		ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, 4, 0, &p));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_htod(self->ctx, p, &one, 4));
		k.a = k.c = p;
		ASSERT_EQ(VNPU_SUCCESS, vnpu_launch_kernel(self->stream, &k));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->stream, -1));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_free(self->ctx, p));
	}
	self->baseline = used_settled(self->ctx, UINT64_MAX);
}

FIXTURE_TEARDOWN(graph)
{
	vnpu_stream_destroy(self->stream, 0);
	vnpu_ctx_destroy(self->ctx, 0);
	vnpu_finalize();
}

/* Loads @name and expects @status with @words in the message, nothing kept. */
static void expect_refused(struct __test_metadata *_metadata, FIXTURE_DATA(graph) *self,
			   const char *name, int status, const char *const *words)
{
	struct vnpu_graph g = { 0 };
	char path[256];
	const char *msg;

	snprintf(path, sizeof(path), MODELS "/%s", name);
	EXPECT_EQ(status, vnpu_graph_load_file(self->ctx, path, NULL, &g));
	EXPECT_EQ(0, g.handle);
	msg = vnpu_graph_error_message();
	TH_LOG("%s: %s", name, msg);
	for (size_t i = 0; words && words[i]; i++) {
		EXPECT_NE(NULL, strstr(msg, words[i]))
			TH_LOG("'%s' missing", words[i]);
	}
	EXPECT_EQ(self->baseline, used_settled(self->ctx, self->baseline));
}

TEST_F(graph, truncated_file_is_an_invalid_model)
{
	expect_refused(_metadata, self, "bad/truncated.onnx", VNPU_ERROR_INVALID_MODEL,
		       (const char *const[]){ "truncated", NULL });
}

TEST_F(graph, corrupt_file_is_an_invalid_model)
{
	expect_refused(_metadata, self, "bad/corrupt.onnx", VNPU_ERROR_INVALID_MODEL,
		       (const char *const[]){ "protobuf", NULL });
}

TEST_F(graph, cycle_names_a_node_of_it)
{
	expect_refused(_metadata, self, "bad/cycle.onnx", VNPU_ERROR_INVALID_MODEL,
		       (const char *const[]){ "cycle", "_in_cycle", NULL });
}

TEST_F(graph, missing_initializer_names_node_and_tensor)
{
	expect_refused(_metadata, self, "bad/missing_initializer.onnx", VNPU_ERROR_INVALID_MODEL,
		       (const char *const[]){ "'needs_w' (MatMul)", "'W'", NULL });
}

TEST_F(graph, shape_mismatch_names_node_and_op)
{
	expect_refused(_metadata, self, "bad/shape_mismatch.onnx", VNPU_ERROR_INVALID_MODEL,
		       (const char *const[]){ "'mismatch' (MatMul)", "differ", NULL });
}

TEST_F(graph, unsupported_operator_names_node_and_op)
{
	expect_refused(_metadata, self, "bad/unsupported_op.onnx", VNPU_ERROR_NOT_SUPPORTED,
		       (const char *const[]){ "'det' (Det)", "not supported", NULL });
}

TEST_F(graph, unsupported_attribute_names_node_and_attribute)
{
	expect_refused(_metadata, self, "bad/unsupported_attribute.onnx", VNPU_ERROR_NOT_SUPPORTED,
		       (const char *const[]){ "'wrap_pad' (Pad)", "mode 'wrap'", NULL });
}

/* Bad attributes and shapes of each operator: the node and the reason, nothing kept. */
TEST_F(graph, bad_operator_attributes_and_shapes_name_the_node)
{
	static const struct {
		const char *file;
		int status;
		const char *words[3];
	} cases[] = {
		{ "conv_group", VNPU_ERROR_INVALID_MODEL, { "'conv_group' (Conv)", "group 3 does not divide" } },
		{ "conv3d_kernel_shape", VNPU_ERROR_INVALID_MODEL,
		  { "'conv3d_kernel_shape' (Conv)", "kernel_shape of 2 values for 3 spatial" } },
		{ "conv3d_pads", VNPU_ERROR_INVALID_MODEL,
		  { "'conv3d_pads' (Conv)", "pads of the wrong length" } },
		{ "conv3d_group", VNPU_ERROR_INVALID_MODEL,
		  { "'conv3d_group' (Conv)", "group 3 does not divide 4 input" } },
		{ "convtranspose3d_pads", VNPU_ERROR_INVALID_MODEL,
		  { "'convtranspose3d_pads' (ConvTranspose)", "pads or output_shape of the wrong length" } },
		{ "concat_shapes", VNPU_ERROR_INVALID_MODEL, { "'concat_shapes' (Concat)", "differs in dimension 1" } },
		{ "concat_axis", VNPU_ERROR_INVALID_MODEL, { "'concat_axis' (Concat)", "axis 5 out of range" } },
		{ "split_sizes", VNPU_ERROR_INVALID_MODEL, { "'split_sizes' (Split)", "2 sizes for 1 outputs" } },
		{ "slice_step0", VNPU_ERROR_INVALID_MODEL, { "'slice_step0' (Slice)", "step 0" } },
		{ "gather_index", VNPU_ERROR_INVALID_MODEL, { "'gather_index' (Gather)", "index 9 out of range" } },
		{ "scatternd_index", VNPU_ERROR_INVALID_MODEL, { "'scatternd_index' (ScatterND)", "index 4 out of range 0..3" } },
		{ "scatternd_updates", VNPU_ERROR_INVALID_MODEL, { "'scatternd_updates' (ScatterND)", "dimension 1 is 3, 4 expected" } },
		{ "pad_length", VNPU_ERROR_INVALID_MODEL, { "'pad_length' (Pad)", "3 pads for rank 2" } },
		{ "clip_bounds", VNPU_ERROR_INVALID_MODEL, { "'clip_bounds' (Clip)", "must be a scalar" } },
		{ "pow_exponent", VNPU_ERROR_NOT_SUPPORTED, { "'pow_exponent' (Pow)", "exponent of element type 9" } },
		{ "pow_shapes", VNPU_ERROR_INVALID_MODEL, { "'pow_shapes' (Pow)", "do not broadcast" } },
		{ "tile_repeats", VNPU_ERROR_INVALID_MODEL, { "'tile_repeats' (Tile)", "3 repeats for rank 2" } },
		{ "expand_shape", VNPU_ERROR_INVALID_MODEL, { "'expand_shape' (Expand)", "do not broadcast" } },
		{ "depth_to_space", VNPU_ERROR_INVALID_MODEL, { "'depth_to_space' (DepthToSpace)", "blocksize 3" } },
		{ "prelu_slope", VNPU_ERROR_INVALID_MODEL, { "'prelu_slope' (PRelu)", "do not broadcast" } },
		{ "cast_to", VNPU_ERROR_NOT_SUPPORTED, { "'cast_to' (Cast)", "element type 7" } },
		{ "range_delta", VNPU_ERROR_INVALID_MODEL, { "'range_delta' (Range)", "delta is 0" } },
		{ "range_scalars", VNPU_ERROR_INVALID_MODEL,
		  { "'range_scalars' (Range)", "start, limit and delta must be scalars of one type" } },
		{ "range_type", VNPU_ERROR_NOT_SUPPORTED,
		  { "'range_type' (Range)", "element type 2 (float, int32 and int64 are)" } },
		{ "conv_transpose_weights", VNPU_ERROR_INVALID_MODEL, { "'conv_transpose_weights' (ConvTranspose)", "weights for 3 do not fit" } },
		{ "batchnorm_training", VNPU_ERROR_NOT_SUPPORTED, { "'batchnorm_training' (BatchNormalization)", "operator set 14" } },
		{ "shrink_lambd", VNPU_ERROR_NOT_SUPPORTED, { "'shrink_lambd' (Shrink)", "lambd -1 below 0" } },
		{ "argmax_axis", VNPU_ERROR_INVALID_MODEL, { "'argmax_axis' (ArgMax)", "axis 2 out of range" } },
		{ "argmin_select", VNPU_ERROR_INVALID_MODEL, { "'argmin_select' (ArgMin)", "select_last_index 2" } },
		{ "logsoftmax_axis", VNPU_ERROR_INVALID_MODEL, { "'logsoftmax_axis' (LogSoftmax)", "axis -3 out of range" } },
		{ "nll_target", VNPU_ERROR_INVALID_MODEL, { "'nll_target' (NegativeLogLikelihoodLoss)", "target 7 outside [0, 4)" } },
		{ "nll_reduction", VNPU_ERROR_INVALID_MODEL, { "'nll_reduction' (NegativeLogLikelihoodLoss)", "reduction 'max'" } },
		{ "sce_weight", VNPU_ERROR_INVALID_MODEL, { "'sce_weight' (SoftmaxCrossEntropyLoss)", "weight must be a vector of 4" } },
		{ "gather_elements_index", VNPU_ERROR_INVALID_MODEL, { "'gather_elements_index' (GatherElements)", "index 5 out of range" } },
		{ "lstm_weights", VNPU_ERROR_INVALID_MODEL, { "'lstm_weights' (LSTM)", "do not fit" } },
		{ "gru_activation", VNPU_ERROR_NOT_SUPPORTED, { "'gru_activation' (GRU)", "activation 0" } },
		{ "resize_roi", VNPU_ERROR_INVALID_MODEL, { "'resize_roi' (Resize)", "roi of 3 values for rank 2" } },
		{ "resize_mode", VNPU_ERROR_NOT_SUPPORTED, { "'resize_mode' (Resize)", "mode 'bicubic'" } },
		{ "fold_div", VNPU_ERROR_INVALID_MODEL, { "'fold_div' (Div)", "division by 0" } },
		{ "gemm_fp16_alpha", VNPU_ERROR_NOT_SUPPORTED,
		  { "'gemm_fp16_alpha' (Gemm)", "alpha 2 and beta 0 on float16" } },
		{ "quant_scale", VNPU_ERROR_INVALID_MODEL,
		  { "'quant_scale' (QuantizeLinear)", "has 3 elements, axis 1 of the input 4" } },
		{ "quant_zero_type", VNPU_ERROR_NOT_SUPPORTED,
		  { "'quant_zero_type' (QuantizeLinear)", "of element type 6 (int8 and uint8 are)" } },
		{ "dequant_input_type", VNPU_ERROR_NOT_SUPPORTED,
		  { "'dequant_input_type' (DequantizeLinear)", "input 'x' of element type 1" } },
		{ "dequant_zero_type", VNPU_ERROR_INVALID_MODEL,
		  { "'dequant_zero_type' (DequantizeLinear)", "of element type 2, the input's is 3" } },
		{ "and_type", VNPU_ERROR_NOT_SUPPORTED,
		  { "'and_type' (And)", "input 'x' of element type 1 not supported (bool is)" } },
		{ "less_shapes", VNPU_ERROR_INVALID_MODEL, { "'less_shapes' (Less)", "do not broadcast" } },
		{ "equal_types", VNPU_ERROR_INVALID_MODEL,
		  { "'equal_types' (Equal)", "differ in element type (1, 6)" } },
		{ "isinf_detect", VNPU_ERROR_INVALID_MODEL, { "'isinf_detect' (IsInf)", "detect_negative 2" } },
		{ "where_shapes", VNPU_ERROR_INVALID_MODEL, { "'where_shapes' (Where)", "do not broadcast" } },
		{ "cast_narrow", VNPU_ERROR_NOT_SUPPORTED,
		  { "'cast_narrow' (Cast)", "from element type 6 to 3 not supported (it narrows" } },
		{ "castlike_type", VNPU_ERROR_NOT_SUPPORTED,
		  { "'castlike_type' (CastLike)", "cast to element type 7 not supported" } },
		{ "eyelike_rank", VNPU_ERROR_INVALID_MODEL,
		  { "'eyelike_rank' (EyeLike)", "input 'x3' of rank 3, 2 expected" } },
		{ "dynquant_type", VNPU_ERROR_NOT_SUPPORTED,
		  { "'dynquant_type' (DynamicQuantizeLinear)", "input 'h16' of element type 10 (float is)" } },
		{ "pool3d_pads", VNPU_ERROR_INVALID_MODEL,
		  { "'pool3d_pads' (MaxPool)", "pads of the wrong length" } },
		{ "einsum_size", VNPU_ERROR_INVALID_MODEL,
		  { "'einsum_size' (Einsum)", "'j' is 4 and 3" } },
		{ "einsum_output", VNPU_ERROR_INVALID_MODEL,
		  { "'einsum_output' (Einsum)", "output letter 0 is not an input letter" } },
		{ "einsum_ellipsis", VNPU_ERROR_NOT_SUPPORTED,
		  { "'einsum_ellipsis' (Einsum)", "an output without the inputs' ellipsis" } },
		{ "matmulinteger_inner", VNPU_ERROR_INVALID_MODEL,
		  { "'matmulinteger_inner' (MatMulInteger)", "inner dimensions 3 and 4 differ" } },
		{ "convinteger_zero", VNPU_ERROR_INVALID_MODEL,
		  { "'convinteger_zero' (ConvInteger)", "'qz' of 2 elements (the definition's is one, per tensor)" } },
		{ "matmulinteger_zero_rows", VNPU_ERROR_INVALID_MODEL,
		  { "'matmulinteger_zero_rows' (MatMulInteger)", "'qz23' of shape [2,3] does not fit 'qa' of shape [2,3] (one element, or one per row)" } },
		{ "qlinearmatmul_scale", VNPU_ERROR_INVALID_MODEL,
		  { "'qlinearmatmul_scale' (QLinearMatMul)", "'s3' of shape [3] does not fit 'qa'" } },
		{ "qlinearconv_bias", VNPU_ERROR_INVALID_MODEL,
		  { "'qlinearconv_bias' (QLinearConv)", "bias 'bias' of element type 6 and shape [1] (int32, one per output channel: [2])" } },
		{ "scatter_elements_index", VNPU_ERROR_INVALID_MODEL,
		  { "'scatter_elements_index' (ScatterElements)", "index 5 out of range 0..3" } },
		{ "gathernd_batch", VNPU_ERROR_INVALID_MODEL,
		  { "'gathernd_batch' (GatherND)", "batch dimension 0 differs: 3 and 2" } },
		{ "onehot_depth", VNPU_ERROR_INVALID_MODEL, { "'onehot_depth' (OneHot)", "depth 0 for indices of rank 1" } },
		{ "cumsum_axis", VNPU_ERROR_INVALID_MODEL, { "'cumsum_axis' (CumSum)", "axis 2 out of range for rank 2" } },
		{ "pad_edge_empty", VNPU_ERROR_INVALID_MODEL,
		  { "'pad_edge_empty' (Pad)", "edge pads of dimension 1 with nothing to repeat" } },
		{ "fold_transpose_perm", VNPU_ERROR_INVALID_MODEL,
		  { "'fold_transpose_perm' (Transpose)", "perm is not a permutation" } },
		{ "pad_reflect_wide", VNPU_ERROR_NOT_SUPPORTED,
		  { "'pad_reflect_wide' (Pad)", "reflect pads of dimension 1 beyond its 4 elements" } },
		{ "concat_inputs", VNPU_ERROR_NOT_SUPPORTED,
		  { "'concat_inputs' (Concat)", "257 inputs and 1 outputs (at most 256 and 4" } },
		{ "gather_run_type", VNPU_ERROR_INVALID_MODEL,
		  { "'gather_run_type' (Gather)", "indices 'fi' of element type 1" } },
		{ "gather_elements_rank", VNPU_ERROR_INVALID_MODEL,
		  { "'gather_elements_rank' (GatherElements)", "indices of rank 3, the data's is 2" } },
		{ "topk_k", VNPU_ERROR_INVALID_MODEL, { "'topk_k' (TopK)", "k 5 out of range 1..4" } },
		{ "topk_k_zero", VNPU_ERROR_INVALID_MODEL, { "'topk_k_zero' (TopK)", "k 0 out of range" } },
		{ "topk_axis", VNPU_ERROR_INVALID_MODEL, { "'topk_axis' (TopK)", "axis 2 out of range" } },
		{ "topk_largest", VNPU_ERROR_INVALID_MODEL, { "'topk_largest' (TopK)", "largest 2" } },
		{ "topk_k_at_run", VNPU_ERROR_NOT_SUPPORTED,
		  { "'topk_k_at_run' (TopK)", "k must be a constant" } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "bad/op_%s.onnx", cases[i].file);
		expect_refused(_metadata, self, name, cases[i].status, cases[i].words);
	}
}

TEST_F(graph, operator_from_an_older_operator_set_is_not_supported)
{
	expect_refused(_metadata, self, "bad/old_opset.onnx", VNPU_ERROR_NOT_SUPPORTED,
		       (const char *const[]){ "'old_add' (Add)", "operator set 6", NULL });
}

TEST_F(graph, missing_file_and_bad_arguments)
{
	struct vnpu_graph_options opts = { .flags = 2 };
	struct vnpu_graph g = { 0 };
	char byte = 0;

	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_graph_load_file(self->ctx, MODELS "/no-such.onnx", NULL, &g));
	EXPECT_NE(NULL, strstr(vnpu_graph_error_message(), "no-such.onnx"));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_load(self->ctx, NULL, 1, NULL, &g));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_load(self->ctx, &byte, 1, &opts, &g));
	EXPECT_EQ(VNPU_ERROR_INVALID_MODEL, vnpu_graph_load(self->ctx, &byte, 0, NULL, &g));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_graph_destroy(g));
	EXPECT_EQ(self->baseline, used_settled(self->ctx, self->baseline));
}

/* A one-dimensional int64 tensor over @v. */
static struct vnpu_host_tensor int64_vector(const char *name, int64_t *v, uint32_t n)
{
	struct vnpu_host_tensor t = { .dtype = VNPU_DTYPE_INT64, .rank = 1, .data = v };

	snprintf(t.name, sizeof(t.name), "%s", name);
	t.dims[0] = n;
	t.size = n * sizeof(*v);
	return t;
}

TEST_F(graph, int64_inputs_are_constants_given_at_load)
{
	int64_t shape[2] = { 3, 4 }, three[3] = { 3, 2, 2 };
	struct vnpu_host_tensor c = int64_vector("shape", shape, 2), in = { 0 }, out = { 0 };
	struct vnpu_graph_options opts = { .constants = &c, .num_constants = 1 };
	struct vnpu_host_tensor twice[2] = { c, c };
	struct vnpu_graph_options twice_opts = { .constants = twice, .num_constants = 2 };
	float x[12], y[12] = { 0 }, fshape[2] = { 3, 4 };
	struct vnpu_graph_info info;
	struct vnpu_graph g = { 0 };
	const char *path = MODELS "/bad/shape_input.onnx";

	/* Not given: refused by the node that needs it at load. */
	expect_refused(_metadata, self, "bad/shape_input.onnx", VNPU_ERROR_NOT_SUPPORTED,
		       (const char *const[]){ "'reshape' (Reshape)", "must be a constant", NULL });
	/* Given wrong: each refused, naming the constant, nothing allocated. */
	opts.constants = NULL;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_load_file(self->ctx, path, &opts, &g));
	c = int64_vector("nope", shape, 2);
	opts.constants = &c;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_load_file(self->ctx, path, &opts, &g));
	EXPECT_NE(NULL, strstr(vnpu_graph_error_message(), "'nope' names no graph input"));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_load_file(self->ctx, path, &twice_opts, &g));
	EXPECT_NE(NULL, strstr(vnpu_graph_error_message(), "'shape' given twice"));
	c = int64_vector("shape", three, 3);
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_load_file(self->ctx, path, &opts, &g));
	EXPECT_NE(NULL, strstr(vnpu_graph_error_message(), "dimension 0 is 3, 2 expected"));
	c = int64_vector("shape", shape, 2);
	c.size = 8;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_load_file(self->ctx, path, &opts, &g));
	EXPECT_NE(NULL, strstr(vnpu_graph_error_message(), "8 bytes of data, its shape needs 16"));
	c = int64_vector("shape", shape, 2);
	c.dtype = VNPU_DTYPE_FLOAT;
	c.data = fshape;
	c.size = sizeof(fshape);
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_load_file(self->ctx, path, &opts, &g));
	EXPECT_NE(NULL, strstr(vnpu_graph_error_message(), "the model's input is 7"));
	shape[0] = 5;
	c = int64_vector("shape", shape, 2);
	EXPECT_EQ(VNPU_ERROR_INVALID_MODEL, vnpu_graph_load_file(self->ctx, path, &opts, &g));
	EXPECT_EQ(0, g.handle);
	EXPECT_EQ(self->baseline, used_settled(self->ctx, self->baseline));

	/* Given right: a constant of the graph, no longer a run input. */
	shape[0] = 3;
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_load_file(self->ctx, path, &opts, &g));
	shape[0] = 6;	/* copied at load: later changes do not matter */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_get_info(g, &info));
	EXPECT_EQ(1, info.num_inputs);
	for (int i = 0; i < 12; i++)
		x[i] = (float)i;
	in.dtype = VNPU_DTYPE_FLOAT;
	in.rank = 2;
	in.dims[0] = 2;
	in.dims[1] = 6;
	in.data = x;
	in.size = sizeof(x);
	out.data = y;
	out.size = sizeof(y);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_run(g, &self->stream, 1, &in, &out));
	EXPECT_EQ(2, out.rank);
	EXPECT_EQ(3, out.dims[0]);
	EXPECT_EQ(4, out.dims[1]);
	EXPECT_EQ(0, memcmp(x, y, sizeof(x)));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_graph_destroy(g));
	EXPECT_EQ(self->baseline, used_settled(self->ctx, self->baseline));
}

/* The small model: y = x W with W all ones (x 2 x 4). */
static void small_io(struct vnpu_host_tensor *in, float *x, struct vnpu_host_tensor *out, float *y)
{
	memset(in, 0, sizeof(*in));
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < 8; i++)
		x[i] = (float)i;
	in->dtype = VNPU_DTYPE_FLOAT;
	in->rank = 2;
	in->dims[0] = 2;
	in->dims[1] = 4;
	in->data = x;
	in->size = 32;
	out->data = y;
	out->size = 32;
}

TEST_F(graph, wrong_inputs_at_run_are_refused_and_change_nothing)
{
	struct vnpu_host_tensor in, out;
	struct vnpu_graph g;
	float x[8], y[8];

	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_load_file(self->ctx, MODELS "/bad/small.onnx", NULL, &g));
	small_io(&in, x, &out, y);

	in.dims[1] = 3;
	in.size = 24;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_run(g, &self->stream, 1, &in, &out));
	EXPECT_NE(NULL, strstr(vnpu_graph_error_message(), "shape [2,3]"));
	small_io(&in, x, &out, y);
	in.dtype = VNPU_DTYPE_INT64;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_run(g, &self->stream, 1, &in, &out));
	EXPECT_NE(NULL, strstr(vnpu_graph_error_message(), "element type"));
	small_io(&in, x, &out, y);
	in.size = 16;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_run(g, &self->stream, 1, &in, &out));
	small_io(&in, x, &out, y);
	out.size = 16;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_run(g, &self->stream, 1, &in, &out));
	EXPECT_NE(NULL, strstr(vnpu_graph_error_message(), "output 0"));
	small_io(&in, x, &out, y);
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_run(g, &self->stream, 2, &in, &out));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_graph_run(g, NULL, 1, &in, &out));

	/* After all that, a good run works and gives the right answer. */
	memset(y, 0, sizeof(y));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_run(g, &self->stream, 1, &in, &out));
	for (int r = 0; r < 2; r++)
		for (int c = 0; c < 4; c++)
			EXPECT_EQ(x[r * 4] + x[r * 4 + 1] + x[r * 4 + 2] + x[r * 4 + 3], y[r * 4 + c]);
	EXPECT_EQ(2, out.rank);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_graph_destroy(g));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_graph_destroy(g));
	EXPECT_EQ(self->baseline, used_settled(self->ctx, self->baseline));
}

TEST_F(graph, stream_of_another_context_is_refused)
{
	struct vnpu_host_tensor in, out;
	struct vnpu_context other;
	struct vnpu_stream s;
	struct vnpu_graph g;
	float x[8], y[8];

	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_load_file(self->ctx, MODELS "/bad/small.onnx", NULL, &g));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &other));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(other, VNPU_PRIORITY_NORMAL, 0, &s));
	small_io(&in, x, &out, y);
	EXPECT_EQ(VNPU_ERROR_WRONG_CONTEXT, vnpu_graph_run(g, &s, 1, &in, &out));
	vnpu_stream_destroy(s, 0);
	vnpu_ctx_destroy(other, 0);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_graph_destroy(g));
	EXPECT_EQ(self->baseline, used_settled(self->ctx, self->baseline));
}

TEST_F(graph, load_that_runs_out_of_device_memory_unwinds)
{
	struct vnpu_graph_options opts = { .workspaces = 8 };
	struct vnpu_graph g = { 0 };
	int status;

	/* The weights fit, the eight workspaces do not. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_mem_set_soft_limit(self->ctx, self->baseline + 100000));
	status = vnpu_graph_load_file(self->ctx, MODELS "/mlp.onnx", &opts, &g);
	EXPECT_TRUE(status == VNPU_ERROR_QUOTA_EXCEEDED || status == VNPU_ERROR_OUT_OF_DEVICE_MEMORY)
		TH_LOG("%s", vnpu_status_name(status));
	TH_LOG("%s", vnpu_graph_error_message());
	EXPECT_EQ(0, g.handle);
	EXPECT_EQ(self->baseline, used_settled(self->ctx, self->baseline));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_mem_set_soft_limit(self->ctx, UINT64_MAX));
}

/* Runs @model with its generated test data on @streams streams. */
static void run_model(struct __test_metadata *_metadata, FIXTURE_DATA(graph) *self,
		      const char *model, uint32_t streams)
{
	struct vnpu_graph_options opts = { .streams = streams };
	struct vnpu_host_tensor in, want[2] = { 0 }, got[2] = { 0 };
	struct vnpu_graph_memory mem;
	struct vnpu_stream s[2] = { self->stream };
	struct vnpu_graph_info info;
	struct vnpu_graph g;
	char path[256], why[256];

	if (streams > 1)
		ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(self->ctx, 0, 0, &s[1]));
	snprintf(path, sizeof(path), MODELS "/%s.onnx", model);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_load_file(self->ctx, path, &opts, &g));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_memory_report(g, &mem));
	/* The arena is never above the naive sum nor below the lower bound. */
	EXPECT_LE(mem.lower_bound, mem.arena_bytes);
	EXPECT_LE(mem.arena_bytes, mem.naive_bytes);
	EXPECT_EQ(mem.static_allocated + mem.dynamic_allocated, mem.total_allocated);
	snprintf(path, sizeof(path), MODELS "/%s/test_data_set_0/input_0.pb", model);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_host_tensor_read_file(path, &in));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_get_info(g, &info));
	ASSERT_GE(2, info.num_outputs);
	for (uint32_t o = 0; o < info.num_outputs; o++) {
		snprintf(path, sizeof(path), MODELS "/%s/test_data_set_0/output_%u.pb", model, o);
		ASSERT_EQ(VNPU_SUCCESS, vnpu_host_tensor_read_file(path, &want[o]));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_output_desc(g, o, &got[o]));
		got[o].data = calloc(1, got[o].size);
	}
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_run(g, s, streams, &in, got));
	for (uint32_t o = 0; o < info.num_outputs; o++) {
		EXPECT_TRUE(vnpu_host_tensor_allclose(&got[o], &want[o], VNPU_CMP_RTOL,
						      VNPU_CMP_ATOL, why, sizeof(why)))
			TH_LOG("output %u: %s", o, why);
	}
	/* The device's memory use is what the report says, and goes back. */
	EXPECT_LE(self->baseline + mem.total_allocated, used_now(self->ctx));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_graph_destroy(g));
	if (streams > 1)
		vnpu_stream_destroy(s[1], 0);
	EXPECT_EQ(self->baseline, used_settled(self->ctx, self->baseline));
	for (uint32_t o = 0; o < 2; o++) {
		free(got[o].data);
		vnpu_host_tensor_free(&want[o]);
	}
	vnpu_host_tensor_free(&in);
}

TEST_F(graph, mlp_matches_numpy)
{
	run_model(_metadata, self, "mlp", 1);
}

TEST_F(graph, branches_on_two_streams_match_numpy)
{
	run_model(_metadata, self, "branches", 2);
}

/*
 * Symbolic input dimensions sized at load by name (vnpu_graph_options.dims):
 * refused without their sizes, and every bad size, name or flag refused
 * with nothing kept; with batch 2 and seq 5 the graph takes and gives
 * 2 x 5 x 4 and computes on them.
 */
TEST_F(graph, symbolic_dimensions_are_sized_at_load_by_name)
{
	static const struct {
		uint32_t flags;
		struct vnpu_graph_dim dims[2];
		uint32_t num;
		int status;
		const char *word;
	} bad[] = {
		{ 0, { { "seq", 5 } }, 1, VNPU_ERROR_NOT_SUPPORTED, "'seq'" },	/* no flag: unread */
		{ VNPU_GRAPH_LOAD_DIMS, { { "seq", 0 } }, 1, VNPU_ERROR_INVALID_VALUE, "size 1" },
		{ VNPU_GRAPH_LOAD_DIMS, { { NULL, 5 } }, 1, VNPU_ERROR_INVALID_VALUE, "named" },
		{ VNPU_GRAPH_LOAD_DIMS, { { "", 5 } }, 1, VNPU_ERROR_INVALID_VALUE, "named" },
		{ VNPU_GRAPH_LOAD_DIMS, { { "time", 5 } }, 1, VNPU_ERROR_INVALID_VALUE, "'time' names no" },
		{ VNPU_GRAPH_LOAD_DIMS, { { "seq", 5 }, { "seq", 6 } }, 2, VNPU_ERROR_INVALID_VALUE,
		  "'seq' given twice" },
		{ VNPU_GRAPH_LOAD_DIMS | 2, { { "seq", 5 } }, 1, VNPU_ERROR_INVALID_VALUE, "flags" },
	};
	float in_data[40], out_data[40];
	struct vnpu_host_tensor in = { .name = "x", .dtype = VNPU_DTYPE_FLOAT, .rank = 3,
				       .dims = { 2, 5, 4 }, .data = in_data,
				       .size = sizeof(in_data) };
	struct vnpu_host_tensor out;
	struct vnpu_graph_dim seq = { "seq", 5 };
	struct vnpu_graph_options opts = { .batch = 2 };
	struct vnpu_graph g = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		opts.flags = bad[i].flags;
		opts.dims = bad[i].dims;
		opts.num_dims = bad[i].num;
		EXPECT_EQ(bad[i].status, vnpu_graph_load_file(self->ctx, MODELS "/dynamic_axes.onnx",
							      &opts, &g)) TH_LOG("case %zu", i);
		EXPECT_EQ(0, g.handle);
		EXPECT_NE(NULL, strstr(vnpu_graph_error_message(), bad[i].word))
			TH_LOG("case %zu: '%s' not in '%s'", i, bad[i].word,
			       vnpu_graph_error_message());
		EXPECT_EQ(self->baseline, used_settled(self->ctx, self->baseline));
	}
	opts.flags = VNPU_GRAPH_LOAD_DIMS;
	opts.dims = &seq;
	opts.num_dims = 1;
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_load_file(self->ctx, MODELS "/dynamic_axes.onnx", &opts,
						     &g));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_output_desc(g, 0, &out));
	EXPECT_EQ(3, out.rank);
	EXPECT_EQ(2, out.dims[0]);
	EXPECT_EQ(5, out.dims[1]);
	EXPECT_EQ(4, out.dims[2]);
	for (int i = 0; i < 40; i++)
		in_data[i] = (float)(i % 7) - 3.0f;
	out.data = out_data;
	out.size = sizeof(out_data);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_run(g, &self->stream, 1, &in, &out));
	for (int i = 0; i < 40; i++) {
		float want = in_data[i] > 0 ? in_data[i] : 0.0f;

		EXPECT_EQ(want, out_data[i]) TH_LOG("element %d", i);
	}
	EXPECT_EQ(VNPU_SUCCESS, vnpu_graph_destroy(g));
}

/*
 * Four weights transposed by nodes listed before the chain of MatMuls
 * that uses them: each Transpose runs just before its MatMul, so the
 * lower bound of the order holds one transposed weight (16 KiB) and the
 * chain's two 2 KiB activations, not all four weights.
 */
TEST_F(graph, constant_only_nodes_run_before_their_consumer)
{
	struct vnpu_graph_memory mem;
	struct vnpu_graph g;

	run_model(_metadata, self, "weights_first", 1);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_load_file(self->ctx, MODELS "/weights_first.onnx",
						     NULL, &g));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_memory_report(g, &mem));
	EXPECT_LT(mem.lower_bound, 2 * 16384) TH_LOG("lower bound %llu",
						     (unsigned long long)mem.lower_bound);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_graph_destroy(g));
}

/* uint8 in, int32 out, a bool in between: exact, as numpy's integers. */
TEST_F(graph, integer_model_matches_numpy)
{
	run_model(_metadata, self, "int_io", 1);
}

/* MatMulInteger of 1024 terms, int32 sums above 2^24: exact, element by element. */
TEST_F(graph, integer_product_of_1024_terms_is_exact)
{
	run_model(_metadata, self, "int_large_k", 1);
}

/* Einsum: products, sums, transposes and diagonals against numpy's einsum. */
TEST_F(graph, einsum_equations_match_numpy)
{
	static const char *const models[] = {
		"einsum_batch_matmul", "einsum_implicit", "einsum_inner", "einsum_outer",
		"einsum_transpose", "einsum_diagonal", "einsum_trace", "einsum_sum",
		"einsum_attention", "einsum_ellipsis", "einsum_ellipsis_implicit",
	};

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		TH_LOG("%s", models[i]);
		run_model(_metadata, self, models[i], 1);
	}
}

/*
 * 3-D Conv (groups, strides, dilations, pads, depth padding past a whole
 * kernel depth, depthwise with SAME_UPPER) and 3-D ConvTranspose
 * (output_padding, output_shape) against numpy. The depth padding's
 * columns reuse the memory of a larger non-zero tensor, so their zero rows
 * must be written (fresh device memory is zero).
 */
TEST_F(graph, convs_3d_match_numpy)
{
	static const char *const models[] = {
		"conv3d", "conv3d_depth_pads", "conv3d_depthwise_same", "convtranspose3d",
		"convtranspose3d_output_shape",
	};

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		TH_LOG("%s", models[i]);
		run_model(_metadata, self, models[i], 1);
	}
}

/*
 * QLinearConv with its int32 bias and per-channel weight scales and zero
 * points, ConvInteger in 3-D with per-channel zero points, MatMulInteger
 * with zero points per row and per column, QLinearMatMul with scales and
 * zero points per row and per column: exactly numpy's integers (and its
 * float32 requantisation).
 */
TEST_F(graph, per_axis_quantisation_matches_numpy)
{
	static const char *const models[] = {
		"qlinearconv_bias_per_channel", "convinteger3d_per_channel",
		"matmulinteger_per_row_column", "qlinearmatmul_per_row_column",
	};

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		TH_LOG("%s", models[i]);
		run_model(_metadata, self, models[i], 1);
	}
}

/*
 * Range of constant float32 and int32 scalars folded at load as
 * numpy.arange computes it (the float32 sequence bit for bit: an Equal
 * with numpy's), and linear and cubic Resize of float16, against numpy.
 */
TEST_F(graph, range_and_float16_resize_match_numpy)
{
	static const char *const models[] = {
		"range_float", "range_int32", "resize_linear_fp16", "resize_cubic_fp16",
	};

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		TH_LOG("%s", models[i]);
		run_model(_metadata, self, models[i], 1);
	}
}

/* 3-D MaxPool and AveragePool (strides, pads, count_include_pad) against numpy. */
TEST_F(graph, pools_3d_match_numpy)
{
	static const char *const models[] = {
		"maxpool3d", "avgpool3d", "avgpool3d_include_pad",
	};

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		TH_LOG("%s", models[i]);
		run_model(_metadata, self, models[i], 1);
	}
}

/* CumSum, float (exclusive, reverse) and int32 past 2^24, against numpy. */
TEST_F(graph, cumsum_matches_numpy)
{
	run_model(_metadata, self, "cumsum", 1);
	run_model(_metadata, self, "cumsum_exclusive_reverse", 1);
	run_model(_metadata, self, "cumsum_int", 1);
}

/* Pad in reflect and edge modes over three axes against numpy.pad. */
TEST_F(graph, pad_modes_match_numpy)
{
	run_model(_metadata, self, "pad_reflect", 1);
	run_model(_metadata, self, "pad_edge", 1);
}

/* A Sum of 20 inputs and a Concat of 41 (DenseNet's run to 65). */
TEST_F(graph, variadic_nodes_of_many_inputs_match_numpy)
{
	run_model(_metadata, self, "variadic", 1);
}

/*
 * int64 inputs at run (uAPI 1.7): an embedding of token ids (Gather),
 * GatherElements, negative indices among them; TopK's values and int64
 * indices.
 */
TEST_F(graph, indices_given_at_run_match_numpy)
{
	static const char *const models[] = { "embedding", "gather_elements_run", "topk" };

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		TH_LOG("%s", models[i]);
		run_model(_metadata, self, models[i], 1);
	}
}

/*
 * A token id out of range fails the run (the device's -ERANGE), reported
 * on the stream; the graph and the memory are as before.
 */
TEST_F(graph, index_out_of_range_at_run_fails_the_run)
{
	int64_t ids[15] = { 0 };
	float y[60];
	struct vnpu_host_tensor in = { .dtype = VNPU_DTYPE_INT64, .rank = 2, .dims = { 3, 5 },
				       .data = ids, .size = sizeof(ids) };
	struct vnpu_host_tensor out = { .data = y, .size = sizeof(y) };
	struct vnpu_stream s;
	struct vnpu_graph g;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_graph_load_file(self->ctx, MODELS "/embedding.onnx", NULL, &g));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(self->ctx, 0, 0, &s));
	ids[7] = 10;	/* the table has 10 rows */
	EXPECT_EQ(VNPU_ERROR_DEVICE_FAULT, vnpu_graph_run(g, &s, 1, &in, &out));
	TH_LOG("%s", vnpu_graph_error_message());
	vnpu_stream_destroy(s, 0);
	/* On a good stream the same ids less the bad one run. */
	ids[7] = -10;
	EXPECT_EQ(VNPU_SUCCESS, vnpu_graph_run(g, &self->stream, 1, &in, &out));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_graph_destroy(g));
	EXPECT_EQ(self->baseline, used_settled(self->ctx, self->baseline));
}

TEST_HARNESS_MAIN
