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
 * An ellipsis stands for the dimensions a term's letters leave, aligned
 * to the right and broadcast across the operands as numpy does; the
 * output takes them where its own "..." stands. Without "->" the output is
 * the ellipsis' dimensions, then the letters that appear once, in
 * alphabetical order, as the definition says. Three or more operands are
 * refused.
 */
#include <string.h>

#include "graph_ops.h"

/* a..z, A..Z, then one for each dimension an ellipsis can stand for. */
#define EINSUM_NAMED 52
#define EINSUM_LETTERS (EINSUM_NAMED + MAX_RANK)

/* 0..51 for a..z, A..Z; -1 for anything else. */
static int letter_index(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return 26 + c - 'A';
	return -1;
}

/*
 * The letters of one term, spaces skipped; its ellipsis (at most one)
 * becomes the last @ell of the ellipsis letters, or, with @ell -1 (the
 * output), all @ell_all of them; -1 on anything else.
 */
static int term_letters(const char *s, size_t len, int ell, uint32_t ell_all, int *out,
			uint32_t *count, int *has_ell)
{
	*count = 0;
	*has_ell = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ')
			continue;
		if (s[i] == '.' && i + 2 < len && s[i + 1] == '.' && s[i + 2] == '.' &&
		    !*has_ell) {
			uint32_t e = ell < 0 ? ell_all : (uint32_t)ell;

			if (*count + e > MAX_RANK)
				return -1;
			for (uint32_t k = ell_all - e; k < ell_all; k++)
				out[(*count)++] = EINSUM_NAMED + (int)k;
			*has_ell = 1;
			i += 2;
			continue;
		}
		if (letter_index(s[i]) < 0 || *count == MAX_RANK)
			return -1;
		out[(*count)++] = letter_index(s[i]);
	}
	return 0;
}

/* Letters (not spaces nor an ellipsis) in a term. */
static uint32_t named_in(const char *s, size_t len)
{
	uint32_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += letter_index(s[i]) >= 0;
	return n;
}

static int op_einsum(struct gbuild *b, struct gnode *n)
{
	static const char *const allowed[] = { "equation", NULL };
	int terms[2][MAX_RANK], outl[MAX_RANK], order[TDIMS];
	int64_t size[EINSUM_LETTERS], shape[TDIMS], odims[MAX_RANK];
	uint64_t st[3][TDIMS] = { { 0 } }, tst[2][MAX_RANK];
	uint32_t nterm[2], nout = 0, rank = 0, axes = 0, ops, ell[2] = { 0 }, ell_all = 0;
	int seen[EINSUM_LETTERS] = { 0 }, in_out[EINSUM_LETTERS] = { 0 }, has_ell;
	const char *eq, *arrow, *comma;
	char buf[256];
	int status;

	if ((status = gop_check_float_op(b, n, allowed, 1, 2)))
		return status;
	eq = gop_attr_str(n, "equation", buf, sizeof(buf));
	if (!eq[0])
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "no equation");
	ops = (uint32_t)n->num_in;
	arrow = strstr(eq, "->");
	comma = strchr(eq, ',');
	if ((ops == 1) != !comma || (comma && strchr(comma + 1, ',') &&
				     (!arrow || strchr(comma + 1, ',') < arrow)))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "equation '%s' for %u operands (one or two are supported)", eq,
				 ops);
	/* The dimensions each operand's ellipsis stands for, and the most. */
	for (uint32_t k = 0; k < ops; k++) {
		const char *from = k ? comma + 1 : eq;
		const char *to = k || !comma ? (arrow ? arrow : eq + strlen(eq)) : comma;
		uint32_t named = named_in(from, (size_t)(to - from));
		char *dots = memmem(from, (size_t)(to - from), "...", 3);

		if ((!dots && named != gop_in(b, n, k)->rank) || named > gop_in(b, n, k)->rank)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "equation '%s': term %u does not name the %u dimensions of '%s'",
					 eq, k, gop_in(b, n, k)->rank, gop_in(b, n, k)->name);
		ell[k] = dots ? gop_in(b, n, k)->rank - named : 0;
		ell_all = ell[k] > ell_all ? ell[k] : ell_all;
	}
	for (uint32_t k = 0; k < ops; k++) {
		const char *from = k ? comma + 1 : eq;
		const char *to = k || !comma ? (arrow ? arrow : eq + strlen(eq)) : comma;
		struct gtensor *x = gop_in(b, n, k);

		if (term_letters(from, (size_t)(to - from), (int)ell[k], ell_all, terms[k],
				 &nterm[k], &has_ell) || nterm[k] != x->rank)
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "equation '%s': term %u does not name the %u dimensions of '%s'",
					 eq, k, x->rank, x->name);
		gop_dense(x->dims, x->rank, tst[k]);
		for (uint32_t d = 0; d < nterm[k]; d++) {
			int l = terms[k][d];

			/* An ellipsis' dimensions broadcast (1 against any size). */
			if (seen[l] && size[l] != x->dims[d] &&
			    (l < EINSUM_NAMED || (size[l] != 1 && x->dims[d] != 1)))
				return node_fail(n, VNPU_ERROR_INVALID_MODEL,
						 "equation '%s': '%c' is %lld and %lld", eq,
						 l >= EINSUM_NAMED ? '.' :
						 l < 26 ? 'a' + l : 'A' + l - 26, (long long)size[l],
						 (long long)x->dims[d]);
			if (!seen[l] || size[l] == 1)
				size[l] = x->dims[d];
			seen[l]++;
		}
	}
	if (arrow) {
		if (term_letters(arrow + 2, strlen(arrow + 2), -1, ell_all, outl, &nout, &has_ell))
			return node_fail(n, VNPU_ERROR_INVALID_MODEL,
					 "equation '%s': bad output term", eq);
		if (ell_all && !has_ell)
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "equation '%s': an output without the inputs' ellipsis", eq);
	} else {
		/* The ellipsis' dimensions, then the letters that appear once. */
		for (uint32_t e = 0; e < ell_all; e++)
			outl[nout++] = EINSUM_NAMED + (int)e;
		for (int l = 0; l < EINSUM_NAMED; l++)
			if (seen[l] == 1) {
				if (nout == MAX_RANK)
					return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
							 "equation '%s': more than %d output dimensions",
							 eq, MAX_RANK);
				outl[nout++] = l;
			}
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
				if (order[r] == terms[k][d] && gop_in(b, n, k)->dims[d] == shape[r])
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
