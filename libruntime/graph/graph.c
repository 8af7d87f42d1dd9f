// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * ONNX graphs on a device. Loading parses the ModelProto (protobuf-c code
 * generated from Debian's onnx.proto at build time), checks the whole
 * graph, orders the nodes, lets graph_ops.c map each node to device
 * operations and infer its output shapes, then lays out the memory:
 *
 * - static: one device buffer for the weights and constants, uploaded
 *   once, and per workspace one buffer for the graph inputs and outputs;
 * - dynamic: per workspace one arena for the intermediate tensors, whose
 *   offsets the static planner (planner.c) chooses from their lifetimes
 *   over the node order.
 *
 * A run takes a free workspace, copies the inputs in, submits every node's
 * operations in order and copies the outputs back. With several streams,
 * each node goes to a lane (a chain continues on its producer's lane, a
 * new branch goes to the least loaded one) and waits, through events, for
 * the nodes of other lanes it depends on: its producers and, because the
 * arena reuses memory, the last users of every tensor placed where its
 * outputs go.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "graph.h"
#include "core/trace.h"

#define GRAPH_ALIGN 64u
#define MAX_LANES 16u
#define MAX_WORKSPACES 64u

static _Thread_local char graph_error[512];

int graph_fail(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(graph_error, sizeof(graph_error), fmt, ap);
	va_end(ap);
	return status;
}

int node_fail(const struct gnode *n, int status, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n->np->name && n->np->name[0])
		return graph_fail(status, "node '%s' (%s): %s", n->np->name, n->np->op_type, msg);
	return graph_fail(status, "node #%d (%s): %s", n->index, n->np->op_type, msg);
}

const char *vnpu_graph_error_message(void)
{
	return graph_error;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

unsigned int gb_dtype_size(int dtype)
{
	switch (dtype) {
	case VNPU_DTYPE_FLOAT: return 4;
	case VNPU_DTYPE_FLOAT16: return 2;
	case VNPU_DTYPE_INT64: return 8;
	case VNPU_DTYPE_INT8: return 1;
	case VNPU_DTYPE_UINT8: return 1;
	case VNPU_DTYPE_INT32: return 4;
	case VNPU_DTYPE_BOOL: return 1;
	default: return 0;
	}
}

int gb_is_io_type(int dtype)
{
	return gb_is_float(dtype) || dtype == VNPU_DTYPE_INT8 || dtype == VNPU_DTYPE_UINT8 ||
	       dtype == VNPU_DTYPE_INT32 || dtype == VNPU_DTYPE_BOOL;
}

int gb_is_float(int dtype)
{
	return dtype == VNPU_DTYPE_FLOAT || dtype == VNPU_DTYPE_FLOAT16;
}

double gb_const_value(int dtype, const void *data, uint64_t i)
{
	switch (dtype) {
	case VNPU_DTYPE_FLOAT16:
		return (double)((const _Float16 *)data)[i];
	case VNPU_DTYPE_INT64:
		return (double)((const int64_t *)data)[i];
	case VNPU_DTYPE_INT32:
		return (double)((const int32_t *)data)[i];
	case VNPU_DTYPE_INT8:
		return (double)((const int8_t *)data)[i];
	case VNPU_DTYPE_UINT8:
	case VNPU_DTYPE_BOOL:
		return (double)((const uint8_t *)data)[i];
	default:
		return ((const float *)data)[i];
	}
}

void shape_str(const struct gtensor *t, char *buf, size_t len)
{
	size_t used = 0;

	used += (size_t)snprintf(buf, len, "[");
	for (uint32_t i = 0; i < t->rank && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? "," : "",
					 (long long)t->dims[i]);
	if (used < len)
		snprintf(buf + used, len - used, "]");
}

int gb_set_shape(struct gtensor *t, int dtype, uint32_t rank, const int64_t *dims)
{
	uint64_t count = 1;

	if (rank > VNPU_HOST_TENSOR_MAX_RANK)
		return 0;
	for (uint32_t i = 0; i < rank; i++) {
		if (dims[i] < 0 || (dims[i] && count > UINT64_MAX / 4 / (uint64_t)dims[i]))
			return 0;
		count *= (uint64_t)dims[i];
	}
	t->dtype = dtype;
	t->rank = rank;
	memcpy(t->dims, dims, rank * sizeof(*dims));
	t->count = count;
	t->bytes = count * gb_dtype_size(dtype);
	return 1;
}

int gstep_operands(const struct gstep *st, const struct goperand **ops)
{
	int n = 0;

	ops[n++] = &st->a;
	ops[n++] = &st->b;
	for (int i = 0; i < 4; i++)
		ops[n++] = &st->norm[i];
	ops[n++] = &st->d;
	ops[n++] = &st->c;
	return n;
}

/* --- building ----------------------------------------------------------------- */

static int find_tensor(const struct gbuild *b, const char *name)
{
	for (size_t i = 0; i < b->num_tensors; i++)
		if (!strcmp(b->tensors[i].name, name))
			return (int)i;
	return -1;
}

int gb_new_tensor(struct gbuild *b, const char *name, int *id)
{
	struct gtensor *t;

	if (b->num_tensors == b->cap_tensors) {
		size_t cap = b->cap_tensors ? b->cap_tensors * 2 : 64;
		struct gtensor *n = realloc(b->tensors, cap * sizeof(*n));

		if (!n)
			return VNPU_ERROR_OUT_OF_HOST_MEMORY;
		b->tensors = n;
		b->cap_tensors = cap;
	}
	t = &b->tensors[b->num_tensors];
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	if (!t->name)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	t->producer = -1;
	t->base = -1;
	t->plan_index = -1;
	*id = (int)b->num_tensors++;
	return VNPU_SUCCESS;
}

int gb_add_step(struct gbuild *b, const struct gstep *step)
{
	if (b->num_steps == b->cap_steps) {
		size_t cap = b->cap_steps ? b->cap_steps * 2 : 64;
		struct gstep *n = realloc(b->steps, cap * sizeof(*n));

		if (!n)
			return VNPU_ERROR_OUT_OF_HOST_MEMORY;
		b->steps = n;
		b->cap_steps = cap;
	}
	b->steps[b->num_steps++] = *step;
	return VNPU_SUCCESS;
}

int gb_add_weight(struct gbuild *b, const char *name, int dtype, uint32_t rank,
		  const int64_t *dims, const void *data, int *id)
{
	struct gtensor *t;
	int status = gb_new_tensor(b, name, id);

	if (status != VNPU_SUCCESS)
		return status;
	t = &b->tensors[*id];
	t->cls = GT_WEIGHT;
	if (!gb_set_shape(t, dtype, rank, dims))
		return graph_fail(VNPU_ERROR_INVALID_MODEL, "tensor '%s': bad shape", name);
	t->host = malloc(t->bytes ? t->bytes : 1);
	if (!t->host)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	if (t->bytes)
		memcpy(t->host, data, t->bytes);
	return VNPU_SUCCESS;
}

/* Values in the typed field of @tp's type (float16 bits are in int32_data). */
static size_t typed_count(const Onnx__TensorProto *tp)
{
	switch (tp->data_type) {
	case VNPU_DTYPE_FLOAT: return tp->n_float_data;
	case VNPU_DTYPE_FLOAT16:
	case VNPU_DTYPE_INT8:
	case VNPU_DTYPE_UINT8:
	case VNPU_DTYPE_BOOL:
	case VNPU_DTYPE_INT32: return tp->n_int32_data;
	default: return tp->n_int64_data;
	}
}

/*
 * Decodes a TensorProto's type, shape and values (float, float16, int64, int8,
 * uint8, int32 or bool, inline;
 * raw_data or the typed field). @data is malloc'ed. Returns a status and,
 * on failure, the reason in @why.
 */
int gb_tensor_from_proto(const Onnx__TensorProto *tp, int *dtype, uint32_t *rank,
			 int64_t *dims, void **data, char *why, size_t whylen)
{
	uint64_t count = 1;
	unsigned int esize;
	size_t bytes;

	*data = NULL;
	if (tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL ||
	    tp->n_external_data) {
		snprintf(why, whylen, "external data not supported");
		return VNPU_ERROR_NOT_SUPPORTED;
	}
	if (tp->has_data_type == 0 && tp->data_type == 0) {
		snprintf(why, whylen, "no data type");
		return VNPU_ERROR_INVALID_MODEL;
	}
	esize = gb_dtype_size(tp->data_type);
	if (!esize) {
		snprintf(why, whylen,
			 "element type %d not supported (float, float16, int64, int8, uint8, int32, bool are)",
			 (int)tp->data_type);
		return VNPU_ERROR_NOT_SUPPORTED;
	}
	if (tp->n_dims > VNPU_HOST_TENSOR_MAX_RANK) {
		snprintf(why, whylen, "%zu dimensions, at most %d supported", tp->n_dims,
			 VNPU_HOST_TENSOR_MAX_RANK);
		return VNPU_ERROR_NOT_SUPPORTED;
	}
	for (size_t i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0 || (tp->dims[i] && count > (UINT64_MAX >> 4) / (uint64_t)tp->dims[i])) {
			snprintf(why, whylen, "bad dimension %lld", (long long)tp->dims[i]);
			return VNPU_ERROR_INVALID_MODEL;
		}
		count *= (uint64_t)tp->dims[i];
		dims[i] = tp->dims[i];
	}
	*rank = (uint32_t)tp->n_dims;
	*dtype = tp->data_type;
	bytes = (size_t)count * esize;
	if (tp->has_raw_data) {
		if (tp->raw_data.len != bytes) {
			snprintf(why, whylen, "raw data of %zu bytes for %llu elements",
				 tp->raw_data.len, (unsigned long long)count);
			return VNPU_ERROR_INVALID_MODEL;
		}
	} else if (typed_count(tp) != count) {
		snprintf(why, whylen, "%zu values for %llu elements", typed_count(tp),
			 (unsigned long long)count);
		return VNPU_ERROR_INVALID_MODEL;
	}
	*data = malloc(bytes ? bytes : 1);
	if (!*data)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	if (tp->has_raw_data)
		memcpy(*data, tp->raw_data.data, bytes);
	else if (tp->data_type == VNPU_DTYPE_FLOAT)
		memcpy(*data, tp->float_data, bytes);
	else if (tp->data_type == VNPU_DTYPE_FLOAT16)
		for (size_t i = 0; i < count; i++)	/* the bits, one value per int32 */
			((uint16_t *)*data)[i] = (uint16_t)tp->int32_data[i];
	else if (gb_dtype_size(tp->data_type) == 1)	/* int8, uint8, bool */
		for (size_t i = 0; i < count; i++)	/* one value per int32 */
			((uint8_t *)*data)[i] = (uint8_t)tp->int32_data[i];
	else if (tp->data_type == VNPU_DTYPE_INT32)
		memcpy(*data, tp->int32_data, bytes);
	else
		memcpy(*data, tp->int64_data, bytes);
	return VNPU_SUCCESS;
}

/* Reads a ValueInfo's float tensor type; 0 dims known when shape is absent. */
/* The size vnpu_graph_options.dims gives dimension @name, or 0. */
static uint64_t named_dim(const struct gbuild *b, const char *name)
{
	for (uint32_t k = 0; b && k < b->num_dims; k++)
		if (!strcmp(b->dims[k].name, name))
			return b->dims[k].size;
	return 0;
}

/*
 * The type and shape of @vi; a graph input's (@b given) with its first
 * dimension @b->batch when that is set, and its other symbolic
 * dimensions from @b->dims.
 */
static int value_info_shape(const Onnx__ValueInfoProto *vi, const struct gbuild *b,
			    int need_shape, int *dtype, uint32_t *rank, int64_t *dims,
			    int *has_shape)
{
	uint64_t batch = b ? b->batch : 0;
	const Onnx__TypeProto *tp = vi->type;
	const Onnx__TypeProto__Tensor *tt;

	*has_shape = 0;
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
		return graph_fail(VNPU_ERROR_NOT_SUPPORTED, "'%s': not a tensor (sequences and maps are not supported)",
				  vi->name);
	tt = tp->tensor_type;
	*dtype = tt->elem_type;
	if (!tt->shape) {
		if (need_shape)
			return graph_fail(VNPU_ERROR_INVALID_MODEL, "input '%s' has no shape", vi->name);
		return VNPU_SUCCESS;
	}
	if (tt->shape->n_dim > VNPU_HOST_TENSOR_MAX_RANK)
		return graph_fail(VNPU_ERROR_NOT_SUPPORTED, "'%s': %zu dimensions, at most %d supported",
				  vi->name, tt->shape->n_dim, VNPU_HOST_TENSOR_MAX_RANK);
	*rank = (uint32_t)tt->shape->n_dim;
	*has_shape = 1;
	for (size_t i = 0; i < tt->shape->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];

		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			if (d->dim_value < 0)
				return graph_fail(VNPU_ERROR_INVALID_MODEL, "'%s': negative dimension %lld",
						  vi->name, (long long)d->dim_value);
			dims[i] = (i == 0 && batch) ? (int64_t)batch : d->dim_value;
		} else if (i == 0 && batch) {
			dims[i] = (int64_t)batch;
		} else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
			   named_dim(b, d->dim_param)) {
			dims[i] = (int64_t)named_dim(b, d->dim_param);
		} else if (need_shape) {
			return graph_fail(VNPU_ERROR_NOT_SUPPORTED,
					  "input '%s': dimension %zu is symbolic ('%s'): give its size at load (vnpu_graph_options.dims%s)",
					  vi->name, i,
					  d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ?
					  d->dim_param : "", i ? "" : " or .batch");
		} else {
			*has_shape = 0;
		}
	}
	return VNPU_SUCCESS;
}

/* --- the graph object ------------------------------------------------------------ */

struct gworkspace {
	uint64_t io;		/* graph inputs and outputs */
	uint64_t arena;		/* intermediates, 0 when there are none */
	struct vnpu_event *node_events;	/* lanes > 1: one per node that others wait for */
	struct vnpu_event start;
	struct vnpu_event join[MAX_LANES];
	int busy;
};

struct gio {
	int tensor;		/* the graph's tensor */
	int copy_from;		/* outputs not computed in place: copied at the end, else -1 */
	uint64_t offset;	/* in the workspace's I/O buffer */
	struct vnpu_host_tensor desc;
};

struct graph_obj {
	struct vnpu_obj obj;
	struct vnpu_ctx *ctx;		/* referenced */
	struct vnpu_context ctx_handle;
	struct vnpu_graph_info info;
	struct vnpu_graph_memory mem;
	struct gtensor *tensors;
	size_t num_tensors;
	struct gstep *steps;
	size_t num_steps;
	size_t num_nodes;
	size_t *node_first_step;	/* num_nodes + 1 entries */
	uint32_t *lane;			/* per node */
	int *deps;			/* per node, MAX_LANES node indices or -1 */
	uint8_t *needs_event;		/* per node */
	struct gio *inputs, *outputs;
	uint64_t static_buf;		/* weights, 0 when there are none */
	uint64_t io_bytes_aligned;
	struct gworkspace *ws;
	/* Protects ws[].busy; free_ws signals a workspace coming free. */
	pthread_mutex_t lock;
	pthread_cond_t free_ws;
};

static void free_tensors(struct gtensor *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].name);
		free(t[i].host);
	}
	free(t);
}

static void destroy_event(struct vnpu_event ev)
{
	struct vnpu_obj *obj;

	if (!ev.handle)
		return;
	obj = vnpu_handle_remove(ev.handle, VNPU_OBJ_EVENT, NULL);
	vnpu_obj_put(obj);
}

static void graph_free_device(struct graph_obj *g)
{
	for (uint32_t w = 0; g->ws && w < g->info.workspaces; w++) {
		struct gworkspace *ws = &g->ws[w];

		if (ws->io)
			vnpu_ctx_free_device(g->ctx, ws->io);
		if (ws->arena)
			vnpu_ctx_free_device(g->ctx, ws->arena);
		for (size_t i = 0; ws->node_events && i < g->num_nodes; i++)
			destroy_event(ws->node_events[i]);
		free(ws->node_events);
		destroy_event(ws->start);
		for (uint32_t l = 0; l < MAX_LANES; l++)
			destroy_event(ws->join[l]);
	}
	free(g->ws);
	g->ws = NULL;
	if (g->static_buf)
		vnpu_ctx_free_device(g->ctx, g->static_buf);
	g->static_buf = 0;
}

static void graph_release(struct vnpu_obj *obj)
{
	struct graph_obj *g = (struct graph_obj *)obj;

	/* Runs are synchronous: no device work of the graph is pending here. */
	graph_free_device(g);
	free_tensors(g->tensors, g->num_tensors);
	free(g->steps);
	free(g->node_first_step);
	free(g->lane);
	free(g->deps);
	free(g->needs_event);
	free(g->inputs);
	free(g->outputs);
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->free_ws);
	vnpu_ctx_put(g->ctx);
	free(g);
}

static int root_of(const struct gtensor *t, int id)
{
	while (t[id].cls == GT_ALIAS)
		id = t[id].base;
	return id;
}

/* Checks names: every input produced once, no output produced twice. */
static int check_names(struct gbuild *b)
{
	Onnx__GraphProto *gp = b->gp;

	for (size_t i = 0; i < gp->n_node; i++) {
		Onnx__NodeProto *np = gp->node[i];
		struct gnode gn = { .index = (int)i, .np = np };

		if (!np->op_type || !np->op_type[0])
			return graph_fail(VNPU_ERROR_INVALID_MODEL, "node #%zu has no operator", i);
		if (np->domain && np->domain[0] && strcmp(np->domain, "ai.onnx"))
			return node_fail(&gn, VNPU_ERROR_NOT_SUPPORTED,
					 "operator domain '%s' not supported", np->domain);
		for (size_t o = 0; o < np->n_output; o++) {
			if (!np->output[o][0])
				continue;
			if (find_tensor(b, np->output[o]) >= 0)
				return node_fail(&gn, VNPU_ERROR_INVALID_MODEL,
						 "output '%s' is also an initializer or graph input",
						 np->output[o]);
			for (size_t k = 0; k < i; k++)
				for (size_t p = 0; p < gp->node[k]->n_output; p++)
					if (!strcmp(gp->node[k]->output[p], np->output[o]))
						return node_fail(&gn, VNPU_ERROR_INVALID_MODEL,
								 "output '%s' is produced twice",
								 np->output[o]);
		}
	}
	for (size_t i = 0; i < gp->n_node; i++) {
		Onnx__NodeProto *np = gp->node[i];
		struct gnode gn = { .index = (int)i, .np = np };

		for (size_t j = 0; j < np->n_input; j++) {
			int found = !np->input[j][0] || find_tensor(b, np->input[j]) >= 0;

			for (size_t k = 0; k < gp->n_node && !found; k++)
				for (size_t p = 0; p < gp->node[k]->n_output && !found; p++)
					found = !strcmp(gp->node[k]->output[p], np->input[j]);
			if (!found)
				return node_fail(&gn, VNPU_ERROR_INVALID_MODEL,
						 "input '%s' is no graph input, initializer or node output (a missing initializer?)",
						 np->input[j]);
		}
	}
	return VNPU_SUCCESS;
}

/* The constant of vnpu_graph_options named @name, or NULL. */
static const struct vnpu_host_tensor *find_constant(const struct gbuild *b, const char *name)
{
	for (uint32_t k = 0; k < b->num_constants; k++)
		if (!strcmp(b->constants[k].name, name))
			return &b->constants[k];
	return NULL;
}

/*
 * Graph input @vi given its value @c at load: a weight of the graph. The
 * value must have the input's type and, where the model declares them, its
 * dimensions.
 */
static int add_constant_input(struct gbuild *b, const Onnx__ValueInfoProto *vi,
			      const struct vnpu_host_tensor *c)
{
	int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
	uint64_t count = 1, esize;
	int dtype = 0, has_shape, id;
	uint32_t rank = 0;
	int status;

	status = value_info_shape(vi, NULL, 0, &dtype, &rank, dims, &has_shape);
	if (status != VNPU_SUCCESS)
		return status;
	esize = gb_dtype_size((int)c->dtype);
	if (!esize)
		return graph_fail(VNPU_ERROR_INVALID_VALUE,
				  "constant '%s': element type %u (float, float16, int8, uint8, int32, bool or int64 are)",
				  c->name, c->dtype);
	if ((int)c->dtype != dtype)
		return graph_fail(VNPU_ERROR_INVALID_VALUE,
				  "constant '%s': element type %u, the model's input is %d", c->name,
				  c->dtype, dtype);
	if (c->rank > VNPU_HOST_TENSOR_MAX_RANK || (has_shape && c->rank != rank))
		return graph_fail(VNPU_ERROR_INVALID_VALUE, "constant '%s': rank %u, %u expected",
				  c->name, c->rank, rank);
	for (uint32_t i = 0; i < c->rank; i++) {
		if (c->dims[i] < 0 || (has_shape && c->dims[i] != dims[i]))
			return graph_fail(VNPU_ERROR_INVALID_VALUE,
					  "constant '%s': dimension %u is %lld, %lld expected",
					  c->name, i, (long long)c->dims[i],
					  (long long)(has_shape ? dims[i] : 0));
		if (c->dims[i] && count > UINT64_MAX / 8 / (uint64_t)c->dims[i])
			return graph_fail(VNPU_ERROR_INVALID_VALUE, "constant '%s': too large",
					  c->name);
		count *= (uint64_t)c->dims[i];
	}
	if (c->size != count * esize || (count && !c->data))
		return graph_fail(VNPU_ERROR_INVALID_VALUE,
				  "constant '%s': %llu bytes of data, its shape needs %llu", c->name,
				  (unsigned long long)c->size, (unsigned long long)(count * esize));
	return gb_add_weight(b, c->name, (int)c->dtype, c->rank, c->dims, c->data, &id);
}

static int add_initializers_and_inputs(struct gbuild *b, struct graph_obj *g)
{
	Onnx__GraphProto *gp = b->gp;
	const struct vnpu_host_tensor *c;
	size_t ni = 0;
	int status;

	if (gp->n_sparse_initializer)
		return graph_fail(VNPU_ERROR_NOT_SUPPORTED, "sparse initializers not supported");
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *tp = gp->initializer[i];
		int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
		char why[160];
		uint32_t rank;
		void *data;
		int dtype, id;

		if (!tp->name || !tp->name[0])
			return graph_fail(VNPU_ERROR_INVALID_MODEL, "initializer #%zu has no name", i);
		if (find_tensor(b, tp->name) >= 0)
			return graph_fail(VNPU_ERROR_INVALID_MODEL, "initializer '%s' defined twice",
					  tp->name);
		status = gb_tensor_from_proto(tp, &dtype, &rank, dims, &data, why, sizeof(why));
		if (status != VNPU_SUCCESS)
			return graph_fail(status, "initializer '%s': %s", tp->name, why);
		status = gb_add_weight(b, tp->name, dtype, rank, dims, data, &id);
		free(data);
		if (status != VNPU_SUCCESS)
			return status;
	}
	/* Every named dimension names a symbolic input dimension, once. */
	for (uint32_t k = 0; k < b->num_dims; k++) {
		const char *name = b->dims[k].name;
		int found = 0;

		for (size_t i = 0; i < gp->n_input && !found; i++) {
			const Onnx__TypeProto *tp = gp->input[i]->type;
			const Onnx__TensorShapeProto *sp =
				tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
				tp->tensor_type ? tp->tensor_type->shape : NULL;

			for (size_t j = 0; sp && j < sp->n_dim && !found; j++)
				found = sp->dim[j]->value_case ==
					ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
					!strcmp(sp->dim[j]->dim_param, name);
		}
		for (uint32_t m = 0; m < k; m++)
			if (!strcmp(b->dims[m].name, name))
				return graph_fail(VNPU_ERROR_INVALID_VALUE,
						  "dimension '%s' given twice", name);
		if (!found)
			return graph_fail(VNPU_ERROR_INVALID_VALUE,
					  "dimension '%s' names no symbolic dimension of an input", name);
	}
	/* Every constant names a graph input, once. */
	for (uint32_t k = 0; k < b->num_constants; k++) {
		const char *name = b->constants[k].name;
		int found = 0;

		for (size_t i = 0; i < gp->n_input && !found; i++)
			found = gp->input[i]->name && !strcmp(gp->input[i]->name, name);
		if (!found || find_constant(b, name) != &b->constants[k])
			return graph_fail(VNPU_ERROR_INVALID_VALUE,
					  found ? "constant '%s' given twice" :
					  "constant '%s' names no graph input", name);
	}
	g->inputs = calloc(gp->n_input ? gp->n_input : 1, sizeof(*g->inputs));
	if (!g->inputs)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
		uint32_t rank = 0;
		int dtype = 0, has_shape, id;

		if (!vi->name || !vi->name[0])
			return graph_fail(VNPU_ERROR_INVALID_MODEL, "graph input #%zu has no name", i);
		/* An input with an initializer is a default value: a weight here. */
		if (find_tensor(b, vi->name) >= 0 && b->tensors[find_tensor(b, vi->name)].cls == GT_WEIGHT)
			continue;
		if (find_tensor(b, vi->name) >= 0)
			return graph_fail(VNPU_ERROR_INVALID_MODEL, "graph input '%s' listed twice",
					  vi->name);
		c = find_constant(b, vi->name);
		if (c) {
			status = add_constant_input(b, vi, c);
			if (status != VNPU_SUCCESS)
				return status;
			continue;
		}
		status = value_info_shape(vi, b, 1, &dtype, &rank, dims, &has_shape);
		if (status != VNPU_SUCCESS)
			return status;
		/*
		 * int64 (token ids, indices) is stored as it is: Gather and
		 * GatherElements read it as indices; an operator that needs
		 * the values at load (shapes, axes) says it must be a constant.
		 */
		if (!gb_is_io_type(dtype) && dtype != VNPU_DTYPE_INT64)
			return graph_fail(VNPU_ERROR_NOT_SUPPORTED,
					  "graph input '%s': element type %d not supported (float, float16, int8, uint8, int32, int64 and bool are)",
					  vi->name, dtype);
		status = gb_new_tensor(b, vi->name, &id);
		if (status != VNPU_SUCCESS)
			return status;
		b->tensors[id].cls = GT_INPUT;
		if (!gb_set_shape(&b->tensors[id], dtype, rank, dims))
			return graph_fail(VNPU_ERROR_INVALID_MODEL, "graph input '%s': bad shape",
					  vi->name);
		if (!b->tensors[id].count)
			return graph_fail(VNPU_ERROR_NOT_SUPPORTED,
					  "graph input '%s': empty tensors not supported", vi->name);
		g->inputs[ni].tensor = id;
		g->inputs[ni].copy_from = -1;
		ni++;
	}
	g->info.num_inputs = (uint32_t)ni;
	return VNPU_SUCCESS;
}

static int map_nodes(struct gbuild *b, const size_t *order)
{
	Onnx__GraphProto *gp = b->gp;
	int status;

	for (size_t pos = 0; pos < gp->n_node; pos++) {
		Onnx__NodeProto *np = gp->node[order[pos]];
		struct gnode gn = { .index = (int)pos, .np = np };

		if (np->n_input > GNODE_MAX_INPUTS || np->n_output > GNODE_MAX_OUTPUTS)
			return node_fail(&gn, VNPU_ERROR_NOT_SUPPORTED,
					 "%zu inputs and %zu outputs (at most %d and %d are supported)",
					 np->n_input, np->n_output, GNODE_MAX_INPUTS,
					 GNODE_MAX_OUTPUTS);
		gn.num_in = np->n_input;
		for (size_t j = 0; j < np->n_input; j++) {
			gn.in[j] = np->input[j][0] ? find_tensor(b, np->input[j]) : -1;
			if (gn.in[j] >= 0 && !b->tensors[gn.in[j]].dtype &&
			    b->tensors[gn.in[j]].cls != GT_WEIGHT)
				return node_fail(&gn, VNPU_ERROR_INVALID_MODEL, "input '%s' has no shape",
						 np->input[j]);
		}
		gn.num_out = np->n_output;
		for (size_t o = 0; o < np->n_output; o++) {
			if (!np->output[o][0]) {
				gn.out[o] = -1;
				continue;
			}
			status = gb_new_tensor(b, np->output[o], &gn.out[o]);
			if (status != VNPU_SUCCESS)
				return status;
			b->tensors[gn.out[o]].producer = (int)pos;
		}
		status = graph_map_node(b, &gn);
		if (status != VNPU_SUCCESS)
			return status;
		for (size_t o = 0; o < np->n_output; o++) {
			struct gtensor *t;

			if (gn.out[o] < 0)
				continue;
			t = &b->tensors[gn.out[o]];
			if (t->cls == GT_UNSET)
				return node_fail(&gn, VNPU_ERROR_NOT_SUPPORTED, "output '%s' not computed",
						 t->name);
			if (t->cls != GT_WEIGHT && !t->count)
				return node_fail(&gn, VNPU_ERROR_NOT_SUPPORTED,
						 "output '%s' is empty; empty tensors are not supported",
						 t->name);
		}
	}
	return VNPU_SUCCESS;
}

static int same_shape(const struct gtensor *t, uint32_t rank, const int64_t *dims)
{
	if (t->rank != rank)
		return 0;
	for (uint32_t i = 0; i < rank; i++)
		if (t->dims[i] != dims[i])
			return 0;
	return 1;
}

static int set_outputs(struct gbuild *b, struct graph_obj *g)
{
	Onnx__GraphProto *gp = b->gp;
	int status;

	if (!gp->n_output)
		return graph_fail(VNPU_ERROR_INVALID_MODEL, "the graph has no output");
	g->outputs = calloc(gp->n_output, sizeof(*g->outputs));
	if (!g->outputs)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (size_t i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
		uint32_t rank = 0;
		int dtype = 0, has_shape = 0;
		int id = vi->name ? find_tensor(b, vi->name) : -1;
		struct gtensor *t;
		char have[96], want[96];

		if (id < 0)
			return graph_fail(VNPU_ERROR_INVALID_MODEL,
					  "graph output '%s' is produced by no node", vi->name ? vi->name : "");
		status = value_info_shape(vi, NULL, 0, &dtype, &rank, dims, &has_shape);
		if (status != VNPU_SUCCESS)
			return status;
		t = &b->tensors[id];
		/* int64 outputs: constants (folded shape arithmetic) and indices (ArgMax). */
		if (!gb_is_io_type(t->dtype) && t->dtype != VNPU_DTYPE_INT64)
			return graph_fail(VNPU_ERROR_NOT_SUPPORTED,
					  "graph output '%s': element type %d not supported (float, float16, int8, uint8, int32 and bool are)",
					  vi->name, t->dtype);
		if (!t->count)
			return graph_fail(VNPU_ERROR_NOT_SUPPORTED,
					  "graph output '%s' is empty; empty tensors are not supported",
					  vi->name);
		if (dtype && dtype != t->dtype)
			return graph_fail(VNPU_ERROR_INVALID_MODEL,
					  "graph output '%s' is declared of type %d but computed as %d",
					  vi->name, dtype, t->dtype);
		/* The batch size given at load changes the first dimension. */
		if (has_shape && b->batch && rank)
			dims[0] = t->rank ? t->dims[0] : dims[0];
		if (has_shape && !same_shape(t, rank, dims)) {
			struct gtensor d = { .rank = rank };

			memcpy(d.dims, dims, rank * sizeof(*dims));
			shape_str(t, have, sizeof(have));
			shape_str(&d, want, sizeof(want));
			return graph_fail(VNPU_ERROR_INVALID_MODEL,
					  "graph output '%s' is declared %s but its producer computes %s",
					  vi->name, want, have);
		}
		g->outputs[i].tensor = id;
		g->outputs[i].copy_from = -1;
		if (t->cls == GT_INTER) {
			t->cls = GT_OUTPUT;
		} else {
			/* An input, weight, view or repeated output: copied at the end. */
			int slot;

			status = gb_new_tensor(b, vi->name, &slot);
			if (status != VNPU_SUCCESS)
				return status;
			t = &b->tensors[id];
			b->tensors[slot].cls = GT_OUTPUT;
			gb_set_shape(&b->tensors[slot], t->dtype, t->rank, t->dims);
			g->outputs[i].tensor = slot;
			g->outputs[i].copy_from = id;
		}
	}
	g->info.num_outputs = (uint32_t)gp->n_output;
	return VNPU_SUCCESS;
}

/* Lifetimes of the intermediates, then their offsets in the arena. */
static int plan_arena(struct gbuild *b, struct graph_obj *g, unsigned int strategy)
{
	struct gtensor *t = b->tensors;
	size_t n = b->num_tensors, count = 0;
	struct vnpu_plan_buffer *bufs;
	struct vnpu_plan_options opts = { .strategy = strategy, .time_limit_ms = 200, .seed = 1 };
	struct vnpu_plan_stats stats = { 0 };
	int status;

	for (size_t i = 0; i < n; i++)
		if (t[i].cls == GT_INTER) {
			t[i].first = t[i].producer;
			t[i].last = t[i].producer + 1;
		}
	for (size_t s = 0; s < b->num_steps; s++) {
		const struct goperand *ops[8];
		int nops = gstep_operands(&b->steps[s], ops);

		for (int k = 0; k < nops; k++) {
			int r;

			if (ops[k]->tensor < 0)
				continue;
			r = root_of(t, ops[k]->tensor);
			if (t[r].cls == GT_INTER && t[r].last < b->steps[s].node + 1)
				t[r].last = b->steps[s].node + 1;
		}
	}
	for (uint32_t i = 0; i < g->info.num_outputs; i++)
		if (g->outputs[i].copy_from >= 0) {
			int r = root_of(t, g->outputs[i].copy_from);

			if (t[r].cls == GT_INTER)
				t[r].last = (int)g->num_nodes + 1;
		}
	for (size_t i = 0; i < n; i++)
		if (t[i].cls == GT_INTER)
			count++;
	g->mem.intermediates = count;
	if (!count)
		return VNPU_SUCCESS;
	bufs = calloc(count, sizeof(*bufs));
	if (!bufs)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	count = 0;
	g->mem.naive_bytes = 0;
	for (size_t i = 0; i < n; i++)
		if (t[i].cls == GT_INTER) {
			/* The naive layout aligns every range as the arena does. */
			g->mem.naive_bytes += align_up(t[i].bytes, GRAPH_ALIGN);
			t[i].plan_index = (int)count;
			bufs[count].size = t[i].bytes;
			bufs[count].alignment = GRAPH_ALIGN;
			bufs[count].first = (uint64_t)t[i].first;
			bufs[count].last = (uint64_t)t[i].last;
			count++;
		}
	status = vnpu_plan_compute(bufs, count, &opts, &stats);
	if (status == VNPU_SUCCESS) {
		for (size_t i = 0; i < n; i++)
			if (t[i].cls == GT_INTER)
				t[i].offset = bufs[t[i].plan_index].offset;
		g->mem.arena_bytes = stats.arena_size;
		g->mem.lower_bound = stats.lower_bound;
		g->mem.plan_ns = stats.elapsed_ns;
	} else {
		status = graph_fail(status, "planning the arena of %zu intermediates failed: %s",
				    count, vnpu_status_name(status));
	}
	free(bufs);
	return status;
}

static int node_uses(const struct graph_obj *g, size_t node, int root)
{
	for (size_t s = g->node_first_step[node]; s < g->node_first_step[node + 1]; s++) {
		const struct goperand *ops[8];
		int nops = gstep_operands(&g->steps[s], ops);

		for (int k = 0; k < nops; k++)
			if (ops[k]->tensor >= 0 && root_of(g->tensors, ops[k]->tensor) == root)
				return 1;
	}
	return 0;
}

static void add_dep(struct graph_obj *g, size_t node, size_t dep)
{
	int *d = &g->deps[node * MAX_LANES];
	uint32_t l = g->lane[dep];

	if (l == g->lane[node])
		return;
	if (d[l] < (int)dep)
		d[l] = (int)dep;
}

/* Lanes of the nodes and the cross-lane waits they need. */
static int assign_lanes(struct graph_obj *g, uint32_t lanes)
{
	size_t n = g->num_nodes;
	struct gtensor *t = g->tensors;
	size_t *load;
	int *last_on_lane;

	g->lane = calloc(n ? n : 1, sizeof(*g->lane));
	g->deps = malloc((n ? n : 1) * MAX_LANES * sizeof(*g->deps));
	g->needs_event = calloc(n ? n : 1, 1);
	load = calloc(lanes, sizeof(*load));
	last_on_lane = malloc(lanes * sizeof(*last_on_lane));
	if (!g->lane || !g->deps || !g->needs_event || !load || !last_on_lane) {
		free(load);
		free(last_on_lane);
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	}
	for (size_t i = 0; i < n * MAX_LANES; i++)
		g->deps[i] = -1;
	for (uint32_t l = 0; l < lanes; l++)
		last_on_lane[l] = -1;
	for (size_t i = 0; i < n && lanes > 1; i++) {
		uint32_t lane = UINT32_MAX, best = 0;

		/* Continue the chain of a producer that is the last of its lane. */
		for (size_t s = g->node_first_step[i]; s < g->node_first_step[i + 1] && lane == UINT32_MAX; s++) {
			const struct goperand *ops[2] = { &g->steps[s].a, &g->steps[s].b };

			for (int k = 0; k < 2; k++) {
				int r, p;

				if (ops[k]->tensor < 0)
					continue;
				r = root_of(t, ops[k]->tensor);
				p = t[r].producer;
				if (p >= 0 && (size_t)p < i && last_on_lane[g->lane[p]] == p) {
					lane = g->lane[p];
					break;
				}
			}
		}
		if (lane == UINT32_MAX) {
			for (uint32_t l = 1; l < lanes; l++)
				if (load[l] < load[best])
					best = l;
			lane = best;
		}
		g->lane[i] = lane;
		load[lane]++;
		last_on_lane[lane] = (int)i;
	}
	for (size_t i = 0; i < n && lanes > 1; i++) {
		for (size_t s = g->node_first_step[i]; s < g->node_first_step[i + 1]; s++) {
			const struct goperand *ops[8];
			int nops = gstep_operands(&g->steps[s], ops);

			for (int k = 0; k < nops; k++) {
				int r;

				if (ops[k]->tensor < 0)
					continue;
				r = root_of(t, ops[k]->tensor);
				/* Producers on other lanes. */
				if (t[r].producer >= 0 && (size_t)t[r].producer < i)
					add_dep(g, i, (size_t)t[r].producer);
				/* Earlier users of arena memory this node writes (C, D). */
				if ((k == nops - 1 || ops[k] == &g->steps[s].d) &&
				    t[r].cls == GT_INTER) {
					for (size_t y = 0; y < g->num_tensors; y++) {
						if (t[y].cls != GT_INTER || (int)y == r ||
						    t[y].last > t[r].first ||
						    t[y].offset >= t[r].offset + t[r].bytes ||
						    t[r].offset >= t[y].offset + t[y].bytes)
							continue;
						for (size_t u = 0; u < i; u++)
							if (node_uses(g, u, (int)y))
								add_dep(g, i, u);
					}
				}
			}
		}
		for (uint32_t l = 0; l < MAX_LANES; l++)
			if (g->deps[i * MAX_LANES + l] >= 0)
				g->needs_event[g->deps[i * MAX_LANES + l]] = 1;
	}
	free(load);
	free(last_on_lane);
	return VNPU_SUCCESS;
}

static void fill_desc(const struct gtensor *t, struct vnpu_host_tensor *d, const char *name)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->dtype = (uint32_t)t->dtype;
	d->rank = t->rank;
	memcpy(d->dims, t->dims, t->rank * sizeof(t->dims[0]));
	d->size = t->bytes;
}

/* Static buffer, workspaces, events; uploads the weights. */
static int allocate(struct graph_obj *g, uint32_t lanes)
{
	struct gtensor *t = g->tensors;
	uint64_t wbytes = 0, wexact = 0, io = 0, ioexact = 0;
	char *staging = NULL;
	int status = VNPU_SUCCESS;

	for (size_t i = 0; i < g->num_tensors; i++) {
		if (t[i].cls == GT_WEIGHT && t[i].bytes) {
			t[i].offset = wbytes;
			wbytes = align_up(wbytes + t[i].bytes, GRAPH_ALIGN);
			wexact += t[i].bytes;
		} else if (t[i].cls == GT_INPUT || t[i].cls == GT_OUTPUT) {
			t[i].offset = io;
			io = align_up(io + t[i].bytes, GRAPH_ALIGN);
			ioexact += t[i].bytes;
		}
	}
	g->mem.weights_bytes = wexact;
	g->mem.io_bytes = ioexact;
	g->mem.static_bytes = wexact + ioexact * g->info.workspaces;
	g->io_bytes_aligned = io;
	if (wbytes) {
		status = vnpu_ctx_alloc_device(g->ctx, wbytes, __builtin_return_address(0),
					       &g->static_buf);
		if (status != VNPU_SUCCESS)
			return graph_fail(status, "allocating %llu bytes of weights: %s",
					  (unsigned long long)wbytes, vnpu_status_name(status));
		staging = calloc(1, wbytes);
		if (!staging)
			return VNPU_ERROR_OUT_OF_HOST_MEMORY;
		for (size_t i = 0; i < g->num_tensors; i++)
			if (t[i].cls == GT_WEIGHT && t[i].bytes)
				memcpy(staging + t[i].offset, t[i].host, t[i].bytes);
		status = vnpu_memcpy_htod(g->ctx_handle, g->static_buf, staging, wbytes);
		free(staging);
		if (status != VNPU_SUCCESS)
			return graph_fail(status, "uploading the weights: %s", vnpu_status_name(status));
		g->mem.static_allocated += wbytes;
	}
	/* Host copies are no longer needed once on the device. */
	for (size_t i = 0; i < g->num_tensors; i++) {
		free(t[i].host);
		t[i].host = NULL;
	}
	g->ws = calloc(g->info.workspaces, sizeof(*g->ws));
	if (!g->ws)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (uint32_t w = 0; w < g->info.workspaces; w++) {
		struct gworkspace *ws = &g->ws[w];

		if (io) {
			status = vnpu_ctx_alloc_device(g->ctx, io, __builtin_return_address(0), &ws->io);
			if (status != VNPU_SUCCESS)
				return graph_fail(status, "allocating %llu bytes of inputs and outputs: %s",
						  (unsigned long long)io, vnpu_status_name(status));
			g->mem.static_allocated += io;
		}
		if (g->mem.arena_bytes) {
			status = vnpu_ctx_alloc_device(g->ctx, g->mem.arena_bytes,
						       __builtin_return_address(0), &ws->arena);
			if (status != VNPU_SUCCESS)
				return graph_fail(status, "allocating the %llu-byte arena: %s",
						  (unsigned long long)g->mem.arena_bytes,
						  vnpu_status_name(status));
			g->mem.dynamic_allocated += g->mem.arena_bytes;
		}
		if (lanes > 1) {
			ws->node_events = calloc(g->num_nodes ? g->num_nodes : 1, sizeof(*ws->node_events));
			if (!ws->node_events)
				return VNPU_ERROR_OUT_OF_HOST_MEMORY;
			for (size_t i = 0; i < g->num_nodes && status == VNPU_SUCCESS; i++)
				if (g->needs_event[i])
					status = vnpu_event_create(g->ctx_handle, 0, &ws->node_events[i]);
			if (status == VNPU_SUCCESS)
				status = vnpu_event_create(g->ctx_handle, 0, &ws->start);
			for (uint32_t l = 1; l < lanes && status == VNPU_SUCCESS; l++)
				status = vnpu_event_create(g->ctx_handle, 0, &ws->join[l]);
			if (status != VNPU_SUCCESS)
				return status;
		}
	}
	g->mem.total_allocated = g->mem.static_allocated + g->mem.dynamic_allocated;
	return VNPU_SUCCESS;
}

static int graph_build(struct graph_obj *g, const void *data, size_t size,
		       const struct vnpu_graph_options *opts)
{
	struct gbuild b = { .batch = opts->batch, .constants = opts->constants,
			    .num_constants = opts->num_constants };

	/* Older callers' options end before @dims: read it only when flagged. */
	if (opts->flags & VNPU_GRAPH_LOAD_DIMS) {
		b.dims = opts->dims;
		b.num_dims = opts->num_dims;
	}
	Onnx__ModelProto *model;
	size_t *order = NULL;
	int status;

	model = onnx__model_proto__unpack(NULL, size, data);
	if (!model)
		return graph_fail(VNPU_ERROR_INVALID_MODEL,
				  "not an ONNX model: the protobuf does not parse (truncated or corrupt file)");
	if (!model->graph) {
		status = graph_fail(VNPU_ERROR_INVALID_MODEL, "the model has no graph");
		goto out;
	}
	b.gp = model->graph;
	b.opset = -1;
	for (size_t i = 0; i < model->n_opset_import; i++) {
		const char *d = model->opset_import[i]->domain;

		if (!d || !d[0] || !strcmp(d, "ai.onnx"))
			b.opset = model->opset_import[i]->version;
	}
	if (b.opset < 0) {
		if (model->n_opset_import)
			status = graph_fail(VNPU_ERROR_NOT_SUPPORTED,
					    "operator domain '%s' not supported",
					    model->opset_import[0]->domain);
		else
			status = graph_fail(VNPU_ERROR_INVALID_MODEL,
					    "the model imports no operator set");
		goto out;
	}
	/* Each operator's mapping names its own first operator set. */
	if (b.opset < 1 || b.opset > 17) {
		status = graph_fail(VNPU_ERROR_NOT_SUPPORTED,
				    "operator set %lld not supported (1 to 17 are)", (long long)b.opset);
		goto out;
	}
	g->info.opset = b.opset;
	g->info.num_nodes = (uint32_t)b.gp->n_node;
	g->num_nodes = b.gp->n_node;
	status = add_initializers_and_inputs(&b, g);
	if (status == VNPU_SUCCESS)
		status = check_names(&b);
	if (status != VNPU_SUCCESS)
		goto out;
	order = calloc(b.gp->n_node ? b.gp->n_node : 1, sizeof(*order));
	if (!order) {
		status = VNPU_ERROR_OUT_OF_HOST_MEMORY;
		goto out;
	}
	status = graph_order_nodes(&b, order);
	if (status == VNPU_SUCCESS)
		status = map_nodes(&b, order);
	if (status == VNPU_SUCCESS)
		status = set_outputs(&b, g);
	if (status != VNPU_SUCCESS)
		goto out;
	g->node_first_step = calloc(g->num_nodes + 1, sizeof(*g->node_first_step));
	if (!g->node_first_step) {
		status = VNPU_ERROR_OUT_OF_HOST_MEMORY;
		goto out;
	}
	for (size_t s = 0, node = 0; node <= g->num_nodes; node++) {
		while (s < b.num_steps && (size_t)b.steps[s].node < node)
			s++;
		g->node_first_step[node] = s;
	}
	status = plan_arena(&b, g, opts->plan_strategy);
	if (status != VNPU_SUCCESS)
		goto out;
	g->tensors = b.tensors;
	g->num_tensors = b.num_tensors;
	g->steps = b.steps;
	g->num_steps = b.num_steps;
	b.tensors = NULL;
	b.num_tensors = 0;
	b.steps = NULL;
	g->info.num_launches = (uint32_t)g->num_steps;
	for (uint32_t i = 0; i < g->info.num_outputs; i++)
		if (g->outputs[i].copy_from >= 0)
			g->info.num_launches++;
	status = assign_lanes(g, g->info.streams);
	if (status == VNPU_SUCCESS)
		status = allocate(g, g->info.streams);
	for (uint32_t i = 0; status == VNPU_SUCCESS && i < g->info.num_inputs; i++) {
		struct gtensor *t = &g->tensors[g->inputs[i].tensor];

		g->inputs[i].offset = t->offset;
		fill_desc(t, &g->inputs[i].desc, t->name);
	}
	for (uint32_t i = 0; status == VNPU_SUCCESS && i < g->info.num_outputs; i++) {
		struct gtensor *t = &g->tensors[g->outputs[i].tensor];

		g->outputs[i].offset = t->offset;
		fill_desc(t, &g->outputs[i].desc, b.gp->output[i]->name);
	}
out:
	free(order);
	free_tensors(b.tensors, b.num_tensors);
	free(b.steps);
	onnx__model_proto__free_unpacked(model, NULL);
	return status;
}

/* @opts->dims, read only with VNPU_GRAPH_LOAD_DIMS: each named, of size 1 or more. */
static int dims_valid(const struct vnpu_graph_options *opts)
{
	if (!(opts->flags & VNPU_GRAPH_LOAD_DIMS))
		return 1;
	if (opts->num_dims && !opts->dims)
		return 0;
	for (uint32_t k = 0; k < opts->num_dims; k++)
		if (!opts->dims[k].name || !opts->dims[k].name[0] || !opts->dims[k].size ||
		    opts->dims[k].size > INT64_MAX)
			return 0;
	return 1;
}

int vnpu_graph_load(struct vnpu_context ctx, const void *data, size_t size,
		    const struct vnpu_graph_options *opts, struct vnpu_graph *graph)
{
	VNPU_TRACE_API();
	struct vnpu_graph_options defaults = { 0 };
	uint64_t start = now_ns();
	struct graph_obj *g;
	int status;

	graph_error[0] = 0;
	if (!opts)
		opts = &defaults;
	if (!data || !graph || (opts->flags & ~VNPU_GRAPH_LOAD_DIMS) ||
	    (opts->num_constants && !opts->constants) || !dims_valid(opts) ||
	    opts->streams > MAX_LANES ||
	    opts->workspaces > MAX_WORKSPACES || !vnpu_plan_strategy_name(opts->plan_strategy))
		return vnpu_set_status(graph_fail(VNPU_ERROR_INVALID_VALUE,
						  "bad arguments (streams at most %u, workspaces at most %u, flags 0 or VNPU_GRAPH_LOAD_DIMS, every dimension named and of size 1 or more)",
						  MAX_LANES, MAX_WORKSPACES));
	g = calloc(1, sizeof(*g));
	if (!g)
		return vnpu_set_status(VNPU_ERROR_OUT_OF_HOST_MEMORY);
	status = vnpu_ctx_get(ctx, &g->ctx);
	if (status != VNPU_SUCCESS) {
		free(g);
		return vnpu_set_status(graph_fail(status, "bad context"));
	}
	g->ctx_handle = ctx;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->free_ws, NULL);
	g->obj.release = graph_release;
	g->obj.created_by = __builtin_return_address(0);
	g->info.streams = opts->streams ? opts->streams : 1;
	g->info.workspaces = opts->workspaces ? opts->workspaces : 1;
	status = graph_build(g, data, size, opts);
	if (status == VNPU_SUCCESS) {
		g->mem.load_ns = now_ns() - start;
		status = vnpu_handle_alloc(&g->obj, VNPU_OBJ_GRAPH);
	}
	if (status != VNPU_SUCCESS) {
		if (!graph_error[0])
			graph_fail(status, "%s", vnpu_status_string(status));
		graph_release(&g->obj);
		return vnpu_set_status(status);
	}
	graph->handle = g->obj.handle;
	return VNPU_SUCCESS;
}

int vnpu_graph_load_file(struct vnpu_context ctx, const char *path,
			 const struct vnpu_graph_options *opts, struct vnpu_graph *graph)
{
	struct stat st;
	void *buf;
	ssize_t got;
	int fd, status;

	graph_error[0] = 0;
	if (!path || !graph)
		return vnpu_set_status(graph_fail(VNPU_ERROR_INVALID_VALUE, "NULL argument"));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return vnpu_set_status(graph_fail(VNPU_ERROR_INVALID_VALUE, "%s: %s", path,
						  strerror(errno)));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return vnpu_set_status(graph_fail(VNPU_ERROR_INVALID_VALUE, "%s: not a regular file",
						  path));
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		close(fd);
		return vnpu_set_status(VNPU_ERROR_OUT_OF_HOST_MEMORY);
	}
	got = read(fd, buf, (size_t)st.st_size);
	close(fd);
	if (got != st.st_size) {
		free(buf);
		return vnpu_set_status(graph_fail(VNPU_ERROR_INVALID_VALUE, "%s: short read", path));
	}
	status = vnpu_graph_load(ctx, buf, (size_t)st.st_size, opts, graph);
	free(buf);
	return status;
}

static int graph_get(struct vnpu_graph handle, struct graph_obj **g)
{
	struct vnpu_obj *obj;
	int status = vnpu_obj_lookup(handle.handle, VNPU_OBJ_GRAPH, &obj);

	if (status == VNPU_SUCCESS)
		*g = (struct graph_obj *)obj;
	return status;
}

int vnpu_graph_get_info(struct vnpu_graph handle, struct vnpu_graph_info *info)
{
	struct graph_obj *g;
	int status;

	if (!info)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = graph_get(handle, &g);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	*info = g->info;
	vnpu_obj_put(&g->obj);
	return VNPU_SUCCESS;
}

static int io_desc(struct vnpu_graph handle, uint32_t index, struct vnpu_host_tensor *desc, int output)
{
	struct graph_obj *g;
	int status;

	if (!desc)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = graph_get(handle, &g);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (index >= (output ? g->info.num_outputs : g->info.num_inputs))
		status = VNPU_ERROR_INVALID_VALUE;
	else
		*desc = output ? g->outputs[index].desc : g->inputs[index].desc;
	vnpu_obj_put(&g->obj);
	return vnpu_set_status(status);
}

int vnpu_graph_input_desc(struct vnpu_graph graph, uint32_t index, struct vnpu_host_tensor *desc)
{
	return io_desc(graph, index, desc, 0);
}

int vnpu_graph_output_desc(struct vnpu_graph graph, uint32_t index, struct vnpu_host_tensor *desc)
{
	return io_desc(graph, index, desc, 1);
}

int vnpu_graph_memory_report(struct vnpu_graph handle, struct vnpu_graph_memory *mem)
{
	struct graph_obj *g;
	int status;

	if (!mem)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = graph_get(handle, &g);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	*mem = g->mem;
	vnpu_obj_put(&g->obj);
	return VNPU_SUCCESS;
}

int vnpu_graph_destroy(struct vnpu_graph handle)
{
	VNPU_TRACE_API();
	struct vnpu_obj *obj;
	int status = vnpu_rt_enter();

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	obj = vnpu_handle_remove(handle.handle, VNPU_OBJ_GRAPH, __builtin_return_address(0));
	if (!obj)
		return vnpu_set_status(VNPU_ERROR_INVALID_HANDLE);
	vnpu_obj_put(obj);
	return VNPU_SUCCESS;
}

/* --- running ------------------------------------------------------------------ */

static uint64_t operand_addr(const struct graph_obj *g, const struct gworkspace *ws,
			     const struct goperand *op)
{
	const struct gtensor *t;
	int r;

	if (op->tensor < 0)
		return 0;
	r = root_of(g->tensors, op->tensor);
	t = &g->tensors[r];
	switch (t->cls) {
	case GT_WEIGHT: return g->static_buf + t->offset + op->offset;
	case GT_INPUT: case GT_OUTPUT: return ws->io + t->offset + op->offset;
	case GT_INTER: return ws->arena + t->offset + op->offset;
	default: return 0;
	}
}

static int check_io(const struct graph_obj *g, const struct vnpu_host_tensor *inputs,
		    const struct vnpu_host_tensor *outputs)
{
	char want[96], have[96];

	for (uint32_t i = 0; i < g->info.num_inputs; i++) {
		const struct vnpu_host_tensor *d = &g->inputs[i].desc, *in = &inputs[i];
		struct gtensor a = { .rank = d->rank }, b = { .rank = in->rank };

		if (in->rank > VNPU_HOST_TENSOR_MAX_RANK)
			return graph_fail(VNPU_ERROR_INVALID_VALUE, "input %u ('%s'): rank %u", i,
					  d->name, in->rank);
		memcpy(a.dims, d->dims, sizeof(a.dims));
		memcpy(b.dims, in->dims, sizeof(b.dims));
		shape_str(&a, want, sizeof(want));
		shape_str(&b, have, sizeof(have));
		if (in->dtype != d->dtype)
			return graph_fail(VNPU_ERROR_INVALID_VALUE,
					  "input %u ('%s'): element type %u, the graph takes %u", i,
					  d->name, in->dtype, d->dtype);
		if (!same_shape(&a, in->rank, in->dims))
			return graph_fail(VNPU_ERROR_INVALID_VALUE,
					  "input %u ('%s'): shape %s, the graph takes %s", i, d->name,
					  have, want);
		if (!in->data || in->size != d->size)
			return graph_fail(VNPU_ERROR_INVALID_VALUE,
					  "input %u ('%s'): %llu bytes of data, the shape needs %llu", i,
					  d->name, (unsigned long long)in->size,
					  (unsigned long long)d->size);
	}
	for (uint32_t i = 0; i < g->info.num_outputs; i++)
		if (!outputs[i].data || outputs[i].size < g->outputs[i].desc.size)
			return graph_fail(VNPU_ERROR_INVALID_VALUE,
					  "output %u ('%s'): buffer of %llu bytes, %llu needed", i,
					  g->outputs[i].desc.name,
					  (unsigned long long)outputs[i].size,
					  (unsigned long long)g->outputs[i].desc.size);
	return VNPU_SUCCESS;
}

static struct gworkspace *take_workspace(struct graph_obj *g)
{
	struct gworkspace *ws = NULL;

	pthread_mutex_lock(&g->lock);
	while (!ws) {
		for (uint32_t w = 0; w < g->info.workspaces && !ws; w++)
			if (!g->ws[w].busy)
				ws = &g->ws[w];
		if (!ws)
			pthread_cond_wait(&g->free_ws, &g->lock);
	}
	ws->busy = 1;
	pthread_mutex_unlock(&g->lock);
	return ws;
}

static void give_workspace(struct graph_obj *g, struct gworkspace *ws)
{
	pthread_mutex_lock(&g->lock);
	ws->busy = 0;
	pthread_cond_signal(&g->free_ws);
	pthread_mutex_unlock(&g->lock);
}

static int run_step(const struct graph_obj *g, const struct gworkspace *ws,
		    const struct gstep *st, struct vnpu_stream s)
{
	if (st->kind == GSTEP_COPY)
		return vnpu_memcpy_dtod_async(s, operand_addr(g, ws, &st->c),
					      operand_addr(g, ws, &st->a), st->copy_bytes);
	if (st->kind == GSTEP_TENSOR) {
		struct vnpu_tensor t = st->t;

		t.a = operand_addr(g, ws, &st->a);
		t.b = operand_addr(g, ws, &st->b);
		t.c = operand_addr(g, ws, &st->c);
		t.norm.scale = operand_addr(g, ws, &st->norm[0]);
		t.norm.bias = operand_addr(g, ws, &st->norm[1]);
		t.norm.mean = operand_addr(g, ws, &st->norm[2]);
		t.norm.var = operand_addr(g, ws, &st->norm[3]);
		if (st->has_ext) {
			struct vnpu_tensor_ext ext = st->ext;

			ext.d = operand_addr(g, ws, &st->d);
			return vnpu_launch_tensor_ext(s, &t, &st->types, &ext);
		}
		if (st->types.a | st->types.b | st->types.c)
			return vnpu_launch_tensor_typed(s, &t, &st->types);
		return vnpu_launch_tensor(s, &t);
	}
	{
		struct vnpu_kernel k = st->k;

		k.a = operand_addr(g, ws, &st->a);
		k.b = operand_addr(g, ws, &st->b);
		k.c = operand_addr(g, ws, &st->c);
		return vnpu_launch_kernel(s, &k);
	}
}

static int enqueue(struct graph_obj *g, struct gworkspace *ws, const struct vnpu_stream *streams,
		   uint32_t ns, const struct vnpu_host_tensor *inputs, int *batched)
{
	uint32_t lanes = g->info.streams;
	int status = VNPU_SUCCESS;

	for (uint32_t i = 0; i < g->info.num_inputs && status == VNPU_SUCCESS; i++)
		status = vnpu_memcpy_htod_async(streams[0], ws->io + g->inputs[i].offset,
						inputs[i].data, inputs[i].size);
	if (status == VNPU_SUCCESS && lanes > 1 && ns > 1) {
		status = vnpu_event_record(ws->start, streams[0]);
		for (uint32_t l = 1; l < ns && status == VNPU_SUCCESS; l++)
			status = vnpu_stream_wait_event(streams[l], ws->start);
	}
	for (uint32_t l = 0; l < ns; l++)
		batched[l] = vnpu_stream_begin_batch(streams[l]) == VNPU_SUCCESS;
	for (size_t i = 0; i < g->num_nodes && status == VNPU_SUCCESS; i++) {
		struct vnpu_stream s = streams[g->lane[i] % ns];

		if (lanes > 1 && ns > 1)
			for (uint32_t l = 0; l < MAX_LANES && status == VNPU_SUCCESS; l++) {
				int d = g->deps[i * MAX_LANES + l];

				if (d >= 0 && g->lane[d] % ns != g->lane[i] % ns)
					status = vnpu_stream_wait_event(s, ws->node_events[d]);
			}
		for (size_t st = g->node_first_step[i];
		     st < g->node_first_step[i + 1] && status == VNPU_SUCCESS; st++)
			status = run_step(g, ws, &g->steps[st], s);
		if (status == VNPU_SUCCESS && lanes > 1 && ns > 1 && g->needs_event[i])
			status = vnpu_event_record(ws->node_events[i], s);
	}
	if (status == VNPU_SUCCESS && lanes > 1 && ns > 1)
		for (uint32_t l = 1; l < ns && status == VNPU_SUCCESS; l++) {
			status = vnpu_event_record(ws->join[l], streams[l]);
			if (status == VNPU_SUCCESS)
				status = vnpu_stream_wait_event(streams[0], ws->join[l]);
		}
	for (uint32_t i = 0; i < g->info.num_outputs && status == VNPU_SUCCESS; i++)
		if (g->outputs[i].copy_from >= 0) {
			struct goperand src = { .tensor = g->outputs[i].copy_from };

			status = vnpu_memcpy_dtod_async(streams[0], ws->io + g->outputs[i].offset,
							operand_addr(g, ws, &src),
							g->outputs[i].desc.size);
		}
	return status;
}

int vnpu_graph_run(struct vnpu_graph handle, const struct vnpu_stream *streams,
		   uint32_t num_streams, const struct vnpu_host_tensor *inputs,
		   struct vnpu_host_tensor *outputs)
{
	VNPU_TRACE_API();
	int batched[MAX_LANES] = { 0 };
	struct gworkspace *ws;
	struct graph_obj *g;
	int status, sync;

	graph_error[0] = 0;
	status = graph_get(handle, &g);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(graph_fail(status, "bad graph handle"));
	if (!streams || !num_streams || num_streams > g->info.streams ||
	    (g->info.num_inputs && !inputs) || !outputs) {
		status = graph_fail(VNPU_ERROR_INVALID_VALUE,
				    "bad arguments: 1 to %u streams, inputs and outputs needed",
				    g->info.streams);
		goto out;
	}
	for (uint32_t l = 0; l < num_streams && status == VNPU_SUCCESS; l++) {
		struct vnpu_context c;

		status = vnpu_stream_get_context(streams[l], &c);
		if (status == VNPU_SUCCESS && c.handle != g->ctx_handle.handle)
			status = graph_fail(VNPU_ERROR_WRONG_CONTEXT,
					    "stream %u belongs to another context than the graph", l);
	}
	if (status == VNPU_SUCCESS)
		status = check_io(g, inputs, outputs);
	if (status != VNPU_SUCCESS)
		goto out;
	ws = take_workspace(g);
	status = enqueue(g, ws, streams, num_streams, inputs, batched);
	for (uint32_t l = 0; l < num_streams; l++)
		if (batched[l]) {
			int end = vnpu_stream_end_batch(streams[l]);

			if (status == VNPU_SUCCESS)
				status = end;
		}
	/*
	 * A stream reports the error of its last job: the graph's work is
	 * waited for before the outputs are copied back, so that a job that
	 * failed (a Gather index out of range) fails the run.
	 */
	if (status == VNPU_SUCCESS)
		status = vnpu_stream_synchronize(streams[0], -1);
	for (uint32_t i = 0; i < g->info.num_outputs && status == VNPU_SUCCESS; i++)
		status = vnpu_memcpy_dtoh_async(streams[0], outputs[i].data,
						ws->io + g->outputs[i].offset, g->outputs[i].desc.size);
	/* Whatever happened, the workspace is free only once its work is done. */
	for (uint32_t l = 0; l < num_streams; l++) {
		sync = vnpu_stream_synchronize(streams[l], -1);
		if (status == VNPU_SUCCESS)
			status = sync;
	}
	give_workspace(g, ws);
	if (status == VNPU_SUCCESS)
		for (uint32_t i = 0; i < g->info.num_outputs; i++) {
			const struct vnpu_host_tensor *d = &g->outputs[i].desc;

			memcpy(outputs[i].name, d->name, sizeof(d->name));
			outputs[i].dtype = d->dtype;
			outputs[i].rank = d->rank;
			memcpy(outputs[i].dims, d->dims, sizeof(d->dims));
		}
	else if (!graph_error[0])
		graph_fail(status, "running the graph: %s%s", vnpu_status_name(status),
			   status == VNPU_ERROR_DEVICE_FAULT ?
			   " (a device operation failed: an index of Gather or GatherElements out of range fails the run)" :
			   "");
out:
	vnpu_obj_put(&g->obj);
	return vnpu_set_status(status);
}
