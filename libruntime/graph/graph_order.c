// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The order the nodes are mapped and run in. Each node comes after the
 * producers of its inputs, in the file's order where that allows (Kahn's
 * algorithm taking the lowest ready index), except one kind: a node
 * computed from constants alone (a weight's DequantizeLinear, or a
 * Transpose or Reshape of a weight) runs just before its first consumer. Exporters list such nodes first; run there,
 * every one of their results would be alive at once, and the arena would
 * hold every weight again in its computed form.
 */
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/* A node's output and the node: sorted by name, to find producers. */
struct produced {
	const char *name;
	size_t node;
};

static int cmp_produced(const void *pa, const void *pb)
{
	return strcmp(((const struct produced *)pa)->name, ((const struct produced *)pb)->name);
}

/* The node that produces @name, or -1 (a graph input, initializer or ""). */
static long producer(const struct produced *out, size_t n, const char *name)
{
	struct produced key = { .name = name };
	const struct produced *p;

	if (!name[0])
		return -1;
	p = bsearch(&key, out, n, sizeof(*out), cmp_produced);
	return p ? (long)p->node : -1;
}

static int cmp_name(const void *pa, const void *pb)
{
	return strcmp(*(const char *const *)pa, *(const char *const *)pb);
}

/*
 * Whether @name, which no node produces, is given at run: a graph input
 * that is neither an initializer (@inits, sorted) nor a constant of the
 * load's options.
 */
static int given_at_run(const struct gbuild *b, const char **inits, size_t num_inits,
			const char *name)
{
	if (!name[0] || bsearch(&name, inits, num_inits, sizeof(*inits), cmp_name))
		return 0;
	for (uint32_t k = 0; k < b->num_constants; k++)
		if (!strcmp(b->constants[k].name, name))
			return 0;
	return 1;
}

/* A min-heap of node indices: the ready node listed first in the file. */
struct ready {
	size_t *v;
	size_t n;
};

static void ready_push(struct ready *h, size_t x)
{
	size_t i = h->n++;

	while (i && h->v[(i - 1) / 2] > x) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = x;
}

static size_t ready_pop(struct ready *h)
{
	size_t top = h->v[0], x = h->v[--h->n], i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (x <= h->v[c])
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
	return top;
}

static int cycle_fail(const Onnx__GraphProto *gp, size_t i)
{
	const Onnx__NodeProto *np = gp->node[i];

	if (np->name && np->name[0])
		return graph_fail(VNPU_ERROR_INVALID_MODEL,
				  "node '%s' (%s): the graph has a cycle through it",
				  np->name, np->op_type);
	return graph_fail(VNPU_ERROR_INVALID_MODEL,
			  "node #%zu (%s): the graph has a cycle through it", i, np->op_type);
}

/* The working arrays of graph_order_nodes(), n nodes and e input edges. */
struct order_work {
	struct produced *out;
	size_t num_out;
	const char **inits;	/* initializer names, sorted */
	long *prod;		/* producer of each input edge, -1 for none */
	size_t *first_edge;	/* node i's input edges: [first_edge[i], first_edge[i + 1]) */
	size_t *waiting;	/* inputs of each node whose producer is not placed */
	size_t *consumers;	/* consumer edges (CSR by producer), node indices */
	size_t *first_consumer;
	size_t *topo;
	unsigned char *deferred, *emitted;
	size_t *stack, *stack_edge;
};

static void order_work_free(struct order_work *w)
{
	free(w->out);
	free(w->inits);
	free(w->prod);
	free(w->first_edge);
	free(w->waiting);
	free(w->consumers);
	free(w->first_consumer);
	free(w->topo);
	free(w->deferred);
	free(w->emitted);
	free(w->stack);
	free(w->stack_edge);
}

/*
 * Appends @root to @order after every deferred node it needs that is not
 * placed yet, producers first: a depth-first walk with its own stack, as
 * chains of such nodes can be long.
 */
static void emit_with_deferred(struct order_work *w, size_t root, size_t *order, size_t *done)
{
	size_t top = 1;

	w->stack[0] = root;
	w->stack_edge[0] = w->first_edge[root];
	w->emitted[root] = 1;
	while (top) {
		size_t i = w->stack[top - 1], e = w->stack_edge[top - 1];
		long p;

		if (e == w->first_edge[i + 1]) {
			order[(*done)++] = i;
			top--;
			continue;
		}
		w->stack_edge[top - 1]++;
		p = w->prod[e];
		if (p >= 0 && w->deferred[p] && !w->emitted[p]) {
			w->emitted[p] = 1;
			w->stack[top] = (size_t)p;
			w->stack_edge[top] = w->first_edge[p];
			top++;
		}
	}
}

int graph_order_nodes(const struct gbuild *b, size_t *order)
{
	const Onnx__GraphProto *gp = b->gp;
	size_t n = gp->n_node, edges = 0, done = 0, placed = 0;
	struct order_work w = { 0 };
	struct ready heap = { 0 };
	int status = VNPU_SUCCESS;

	for (size_t i = 0; i < n; i++) {
		edges += gp->node[i]->n_input;
		w.num_out += gp->node[i]->n_output;
	}
	w.out = calloc(w.num_out + 1, sizeof(*w.out));
	w.inits = calloc(gp->n_initializer + 1, sizeof(*w.inits));
	w.prod = calloc(edges + 1, sizeof(*w.prod));
	w.first_edge = calloc(n + 1, sizeof(*w.first_edge));
	w.waiting = calloc(n + 1, sizeof(*w.waiting));
	w.consumers = calloc(edges + 1, sizeof(*w.consumers));
	w.first_consumer = calloc(n + 2, sizeof(*w.first_consumer));
	w.topo = calloc(n + 1, sizeof(*w.topo));
	w.deferred = calloc(n + 1, 1);
	w.emitted = calloc(n + 1, 1);
	w.stack = calloc(n + 1, sizeof(*w.stack));
	w.stack_edge = calloc(n + 1, sizeof(*w.stack_edge));
	heap.v = calloc(n + 1, sizeof(*heap.v));
	if (!w.out || !w.inits || !w.prod || !w.first_edge || !w.waiting || !w.consumers ||
	    !w.first_consumer || !w.topo || !w.deferred || !w.emitted || !w.stack ||
	    !w.stack_edge || !heap.v) {
		status = VNPU_ERROR_OUT_OF_HOST_MEMORY;
		goto out;
	}

	/* Producers by name (check_names() made every output name unique). */
	w.num_out = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t o = 0; o < gp->node[i]->n_output; o++)
			if (gp->node[i]->output[o][0])
				w.out[w.num_out++] = (struct produced){ gp->node[i]->output[o], i };
	qsort(w.out, w.num_out, sizeof(*w.out), cmp_produced);

	for (size_t k = 0; k < gp->n_initializer; k++)
		w.inits[k] = gp->initializer[k]->name ? gp->initializer[k]->name : "";
	qsort(w.inits, gp->n_initializer, sizeof(*w.inits), cmp_name);

	/* Input edges, their producers, and each producer's consumer edges. */
	for (size_t i = 0, e = 0; i < n; i++) {
		const Onnx__NodeProto *np = gp->node[i];

		w.first_edge[i] = e;
		for (size_t j = 0; j < np->n_input; j++, e++) {
			w.prod[e] = producer(w.out, w.num_out, np->input[j]);
			if (w.prod[e] == (long)i) {
				/* A node reading its own output is a cycle of one. */
				status = cycle_fail(gp, i);
				goto out;
			}
			if (w.prod[e] >= 0) {
				w.waiting[i]++;
				w.first_consumer[w.prod[e] + 1]++;
			}
		}
		w.first_edge[i + 1] = e;
	}
	for (size_t i = 0; i < n; i++)
		w.first_consumer[i + 1] += w.first_consumer[i];
	{
		size_t *fill = w.stack;	/* free until the last pass */

		memcpy(fill, w.first_consumer, n * sizeof(*fill));
		for (size_t i = 0; i < n; i++)
			for (size_t e = w.first_edge[i]; e < w.first_edge[i + 1]; e++)
				if (w.prod[e] >= 0)
					w.consumers[fill[w.prod[e]]++] = i;
	}

	/* Kahn's algorithm, the lowest ready index first. */
	for (size_t i = 0; i < n; i++)
		if (!w.waiting[i])
			ready_push(&heap, i);
	while (heap.n) {
		size_t i = ready_pop(&heap);

		w.topo[placed++] = i;
		for (size_t c = w.first_consumer[i]; c < w.first_consumer[i + 1]; c++)
			if (!--w.waiting[w.consumers[c]])
				ready_push(&heap, w.consumers[c]);
	}
	if (placed < n) {
		for (size_t i = 0; i < n; i++)
			if (w.waiting[i]) {
				status = cycle_fail(gp, i);
				goto out;
			}
	}

	/*
	 * Deferred: every input a constant or deferred too. Not the readers
	 * of a graph input given at run: moved later, they would keep it
	 * alive longer.
	 */
	for (size_t t = 0; t < n; t++) {
		size_t i = w.topo[t];

		w.deferred[i] = 1;
		for (size_t e = w.first_edge[i], j = 0; e < w.first_edge[i + 1]; e++, j++)
			if (w.prod[e] >= 0 ? !w.deferred[w.prod[e]] :
			    given_at_run(b, w.inits, gp->n_initializer, gp->node[i]->input[j]))
				w.deferred[i] = 0;
	}
	for (size_t t = 0; t < n; t++)
		if (!w.deferred[w.topo[t]])
			emit_with_deferred(&w, w.topo[t], order, &done);
	/* Deferred nodes that only graph outputs read. */
	for (size_t t = 0; t < n; t++)
		if (!w.emitted[w.topo[t]])
			emit_with_deferred(&w, w.topo[t], order, &done);
out:
	order_work_free(&w);
	free(heap.v);
	return status;
}
