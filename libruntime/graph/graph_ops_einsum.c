// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Einsum (operator set 12) of one or two float operands, lowered onto a
 * single device operator over the iteration space of its letters: the
 * output's letters first, in the output's order, then the summed ones.
 * Each operand steps along a letter by its stride there (the sum of its
 * strides where a letter repeats in it, a diagonal; 0 where it lacks the
 * letter), the output densely along its letters and 0 along the summed
 * ones. Two operands: T_DOT over the summed letters (T_MUL if none);
 * one: T_REDUCE_SUM over them (T_COPY if none: a transpose or diagonal).
 * Without "->" the output is the letters that appear once, in alphabetical
 * order, as the definition says. Ellipses and three or more operands are
 * refused.
 */
#include <string.h>

#include "graph_ops.h"

#define EINSUM_LETTERS 52

/* 0..51 for a..z, A..Z; -1 for anything else. */
static int letter_index(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return 26 + c - 'A';
	return -1;
}

/* The letters of one term, spaces skipped; -1 on a character not allowed. */
static int term_letters(const char *s, size_t len, int *out, uint32_t *count)
{
	*count = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ')
			continue;
		if (letter_index(s[i]) < 0 || *count == MAX_RANK)
			return -1;
		out[(*count)++] = letter_index(s[i]);
	}
	return 0;
}

static int op_einsum(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "equation", NULL };
	int terms[2][MAX_RANK], outl[MAX_RANK], order[TDIMS];
	int64_t size[EINSUM_LETTERS], shape[TDIMS], odims[MAX_RANK];
	uint64_t st[3][TDIMS] = { { 0 } }, tst[2][MAX_RANK];
	uint32_t nterm[2], nout = 0, rank = 0, axes = 0, ops;
	int seen[EINSUM_LETTERS] = { 0 }, in_out[EINSUM_LETTERS] = { 0 };
	const char *eq, *arrow, *comma;
	char buf[256];
	int status;

	if ((status = gop_check_float_op(b, n, allowed, 1, 2)))
		return status;
	eq = gop_attr_str(n, "equation", buf, sizeof(buf));
	if (!eq[0])
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "no equation");
	if (strstr(eq, "..."))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "equation '%s': ellipses not supported", eq);
	ops = (uint32_t)n->num_in;
	arrow = strstr(eq, "->");
	comma = strchr(eq, ',');
	if ((ops == 1) != !comma || (comma && strchr(comma + 1, ',') &&
				     (!arrow || strchr(comma + 1, ',') < arrow)))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "equation '%s' for %u operands (one or two are supported)", eq,
				 ops);
	for (uint32_t k = 0; k < ops; k++) {
		const char *from = k ? comma + 1 : eq;
		const char *to = k || !comma ? (arrow ? arrow : eq + strlen(eq)) : comma;
		struct gtensor *x = gop_in(b, n, k);

		if (term_letters(from, (size_t)(to - from), terms[k], &nterm[k]) ||
		    nterm[k] != x->rank)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "equation '%s': term %u does not name the %u dimensions of '%s'",
					 eq, k, x->rank, x->name);
		gop_dense(x->dims, x->rank, tst[k]);
		for (uint32_t d = 0; d < nterm[k]; d++) {
			int l = terms[k][d];

			if (seen[l] && size[l] != x->dims[d])
				return node_fail(n, VNPU_ERROR_INVALID_MODEL,
						 "equation '%s': '%c' is %lld and %lld", eq,
						 l < 26 ? 'a' + l : 'A' + l - 26, (long long)size[l],
						 (long long)x->dims[d]);
			size[l] = x->dims[d];
			seen[l]++;
		}
	}
	if (arrow) {
		if (term_letters(arrow + 2, strlen(arrow + 2), outl, &nout))
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "equation '%s': bad output term", eq);
	} else {
		/* The letters that appear once, alphabetically. */
		for (int l = 0; l < EINSUM_LETTERS && nout < MAX_RANK; l++)
			if (seen[l] == 1)
				outl[nout++] = l;
	}
	for (uint32_t d = 0; d < nout; d++) {
		if (!seen[outl[d]] || in_out[outl[d]])
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "equation '%s': output letter %u is not an input letter, or repeats",
					 eq, d);
		in_out[outl[d]] = 1;
		order[rank] = outl[d];
		shape[rank] = size[outl[d]];
		odims[d] = size[outl[d]];
		rank++;
	}
	for (int l = 0; l < EINSUM_LETTERS; l++)
		if (seen[l] && !in_out[l]) {
			if (rank == TDIMS)
				return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
						 "equation '%s': more than %d letters", eq, TDIMS);
			axes |= 1u << rank;
			order[rank] = l;
			shape[rank++] = size[l];
		}
	/* Each operand's stride along each letter of the iteration space. */
	for (uint32_t k = 0; k < ops; k++)
		for (uint32_t d = 0; d < nterm[k]; d++)
			for (uint32_t r = 0; r < rank; r++)
				if (order[r] == terms[k][d])
					st[k][r] += tst[k][d];
	{
		uint64_t dense[MAX_RANK];

		gop_dense(odims, nout, dense);
		for (uint32_t d = 0; d < nout; d++)
			st[2][d] = dense[d];
	}
	status = gop_set_out(b, n, 0, nout, odims);
	if (status != VNPU_SUCCESS)
		return status;
	if (!rank) {
		/* Scalars only: one element. */
		shape[0] = 1;
		rank = 1;
	}
	if (ops == 2)
		return gop_launch_nd(b, n, axes ? VNPU_OP_T_DOT : VNPU_OP_T_MUL, rank, shape, axes,
				     n->in[0], st[0], n->in[1], st[1], n->out[0], st[2]);
	return gop_launch_nd(b, n, axes ? VNPU_OP_T_REDUCE_SUM : VNPU_OP_T_COPY, rank, shape, axes,
			     n->in[0], st[0], -1, NULL, n->out[0], st[2]);
}

const struct gop_map gop_einsum_ops[] = {
	{ "Einsum", op_einsum, 12 },
	{ NULL, NULL, 0 },
};
