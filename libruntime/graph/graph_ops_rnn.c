// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * ONNX recurrent layers (RNN, GRU, LSTM) unrolled over the sequence at
 * load: the sequence length is known, so each time step of each direction
 * is a handful of device operations on the rows of the step:
 *
 *   gates = bias (T_COPY, broadcast over the batch)
 *   gates += X[t] W^T, gates += H[t-1] R^T      (GEMM, beta 1)
 *   activations and the cell update             (T_SIGMOID, T_TANH, T_MUL...)
 *   H[t] written straight into Y[t, direction]
 *
 * Supported: the default activations, forward, reverse and bidirectional
 * layers, initial states, GRU's linear_before_reset 0 and 1. Refused: other
 * activations, clip, input_forget, the batch-first layout, sequence_lens
 * and LSTM's peepholes.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_ops.h"

enum rnn_kind { RNN_PLAIN, RNN_GRU, RNN_LSTM };

struct rnn {
	enum rnn_kind kind;
	uint64_t S, B, I, H, dirs, G;	/* G: gates per direction */
	int lbr;			/* GRU's linear_before_reset */
	int x, w, r, bias, h0, c0;	/* tensors; bias is a weight of zeros when not given */
	int y;				/* Y [S, dirs, B, H]: output 0 or scratch */
	int gx, gh, t1, t2;		/* scratch: gates [B, G H], hidden gates, [B, H] twice */
	int zero_h, cell, bsum;		/* [B, H] of zeros, cell state [dirs, B, H], W b + R b */
};

/* C = A op B over @rows x @cols, each row-strided (ld 0: a broadcast row). */
static int ew2(struct gbuild *b, const struct gnode *n, enum vnpu_op op, uint64_t rows,
	       uint64_t cols, int ta, uint64_t oa, uint64_t lda, int tb, uint64_t ob, uint64_t ldb,
	       int tc, uint64_t oc, uint64_t ldc)
{
	int64_t shape[2] = { (int64_t)rows, (int64_t)cols };
	struct tlaunch l;

	gop_tl_init(&l, op, 2, shape);
	l.sa[0] = lda, l.sa[1] = 1;
	if (tb >= 0)
		l.sb[0] = ldb, l.sb[1] = 1;
	l.sc[0] = ldc, l.sc[1] = 1;
	l.ta = ta, l.oa = oa;
	l.tb = tb, l.ob = ob;
	l.tc = tc, l.oc = oc;
	return gop_tl_emit(b, n, &l);
}

/* C[B x N] (+)= A[B x K] Bm^T, Bm the N x K rows at @ob of @tb. */
static int gemm_t(struct gbuild *b, const struct gnode *n, uint64_t rows, uint64_t N, uint64_t K,
		  int ta, uint64_t oa, int tb, uint64_t ob, int tc, float beta)
{
	return gop_launch(b, n, VNPU_OP_GEMM, VNPU_GEMM_TRANS_B, rows, N, K, 1.0f, beta, ta, oa,
			  tb, ob, tc, 0);
}

static int check_activations(const struct gnode *n, enum rnn_kind kind, uint64_t dirs)
{
	static const char *const lstm[] = { "Sigmoid", "Tanh", "Tanh" };
	static const char *const gru[] = { "Sigmoid", "Tanh" };
	static const char *const plain[] = { "Tanh" };
	const char *const *def = kind == RNN_LSTM ? lstm : kind == RNN_GRU ? gru : plain;
	size_t per = kind == RNN_LSTM ? 3 : kind == RNN_GRU ? 2 : 1;
	const Onnx__AttributeProto *a = gop_attr(n, "activations");

	if (gop_attr(n, "activation_alpha") || gop_attr(n, "activation_beta") || gop_attr(n, "clip"))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
				 "activation_alpha, activation_beta and clip not supported");
	if (gop_attr_int(n, "input_forget", 0) || gop_attr_int(n, "layout", 0))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "input_forget and layout 1 not supported");
	if (!a)
		return VNPU_SUCCESS;
	if (a->n_strings != per * dirs)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "%zu activations for %llu directions",
				 a->n_strings, (unsigned long long)dirs);
	for (size_t i = 0; i < a->n_strings; i++)
		if (a->strings[i].len != strlen(def[i % per]) ||
		    memcmp(a->strings[i].data, def[i % per], a->strings[i].len))
			return node_fail(n, VNPU_ERROR_NOT_SUPPORTED,
					 "activation %zu not supported (the defaults are)", i);
	return VNPU_SUCCESS;
}

/* Checks the node and sets the shapes of its outputs. */
static int rnn_check(struct gbuild *b, struct gnode *n, struct rnn *rn)
{
	static const char *const allowed[] = { "activation_alpha", "activation_beta", "activations",
					       "clip", "direction", "hidden_size", "input_forget",
					       "layout", "linear_before_reset", NULL };
	const char *op = n->np->op_type;
	struct gtensor *x, *w, *r, *bias;
	int64_t dims[4];
	char dir[32];
	size_t max_in;
	int status, any_out = 0;

	rn->kind = !strcmp(op, "LSTM") ? RNN_LSTM : !strcmp(op, "GRU") ? RNN_GRU : RNN_PLAIN;
	rn->G = rn->kind == RNN_LSTM ? 4 : rn->kind == RNN_GRU ? 3 : 1;
	max_in = rn->kind == RNN_LSTM ? 8 : 6;

	if ((status = gop_check_attrs(n, allowed)))
		return status;
	/* Y may be left out when Y_h (or Y_c) is asked for. */
	for (size_t o = 0; o < n->num_out; o++)
		any_out |= n->out[o] >= 0;
	if (n->num_in < 3 || n->num_in > max_in || n->in[0] < 0 || n->in[1] < 0 || n->in[2] < 0)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "%zu inputs, 3 to %zu expected",
				 n->num_in, max_in);
	if (!any_out)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "no output");
	for (size_t j = 0; j < n->num_in; j++)
		if (j != 4 && (status = gop_need_float(b, n, j)))
			return status;
	if (gop_in(b, n, 4) || gop_in(b, n, 7))
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "sequence_lens and peepholes not supported");
	gop_attr_str(n, "direction", dir, sizeof(dir));
	if (dir[0] && strcmp(dir, "forward") && strcmp(dir, "reverse") && strcmp(dir, "bidirectional"))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "direction '%s'", dir);
	rn->dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
	status = check_activations(n, rn->kind, rn->dirs);
	if (status != VNPU_SUCCESS)
		return status;
	rn->lbr = gop_attr_int(n, "linear_before_reset", 0) != 0;
	x = gop_in(b, n, 0), w = gop_in(b, n, 1), r = gop_in(b, n, 2), bias = gop_in(b, n, 3);
	if (x->rank != 3 || w->rank != 3 || r->rank != 3)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "X, W and R must be of rank 3");
	rn->S = (uint64_t)x->dims[0], rn->B = (uint64_t)x->dims[1], rn->I = (uint64_t)x->dims[2];
	rn->H = (uint64_t)r->dims[2];
	if (gop_attr(n, "hidden_size") && (uint64_t)gop_attr_int(n, "hidden_size", 0) != rn->H)
		return node_fail(n, VNPU_ERROR_INVALID_MODEL, "hidden_size differs from R");
	if ((uint64_t)w->dims[0] != rn->dirs || (uint64_t)r->dims[0] != rn->dirs ||
	    (uint64_t)w->dims[1] != rn->G * rn->H || (uint64_t)r->dims[1] != rn->G * rn->H ||
	    (uint64_t)w->dims[2] != rn->I ||
	    (bias && (bias->rank != 2 || (uint64_t)bias->dims[0] != rn->dirs ||
		      (uint64_t)bias->dims[1] != 2 * rn->G * rn->H)))
		return node_fail(n, VNPU_ERROR_INVALID_MODEL,
				 "W, R or B do not fit %llu directions of %llu gates of %llu",
				 (unsigned long long)rn->dirs, (unsigned long long)rn->G,
				 (unsigned long long)rn->H);
	for (size_t j = 5; j < 7; j++) {
		struct gtensor *s = gop_in(b, n, j);

		if (s && (s->rank != 3 || (uint64_t)s->dims[0] != rn->dirs ||
			  (uint64_t)s->dims[1] != rn->B || (uint64_t)s->dims[2] != rn->H))
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "initial state %zu of the wrong shape", j);
	}
	if (rn->S > 4096)
		return node_fail(n, VNPU_ERROR_NOT_SUPPORTED, "a sequence of more than 4096 steps");
	dims[0] = (int64_t)rn->S, dims[1] = (int64_t)rn->dirs;
	dims[2] = (int64_t)rn->B, dims[3] = (int64_t)rn->H;
	if (n->out[0] >= 0 && (status = gop_set_out(b, n, 0, 4, dims)))
		return status;
	for (size_t o = 1; o < n->num_out; o++) {
		if (o > (rn->kind == RNN_LSTM ? 2u : 1u))
			return node_fail(n, VNPU_ERROR_INVALID_MODEL, "output %zu", o);
		if (n->out[o] >= 0 && (status = gop_set_out(b, n, o, 3, dims + 1)))
			return status;
	}
	return VNPU_SUCCESS;
}

/* The tensors of the unrolled layer: bias sum, states, gates. */
static int rnn_tensors(struct gbuild *b, struct gnode *n, struct rnn *rn)
{
	uint64_t GH = rn->G * rn->H, BH = rn->B * rn->H;
	int64_t bdims[2] = { (int64_t)rn->dirs, (int64_t)(2 * GH) };
	uint64_t zero[1] = { 0 }, unit[1] = { 1 };
	int64_t cnt[1];
	int status, z;

	rn->x = n->in[0], rn->w = n->in[1], rn->r = n->in[2];
	rn->h0 = gop_in(b, n, 5) ? n->in[5] : -1;
	rn->c0 = gop_in(b, n, 6) ? n->in[6] : -1;
	rn->bias = gop_in(b, n, 3) ? n->in[3] : -1;
	if (rn->bias < 0) {
		float *zeros = calloc(rn->dirs * 2 * GH, sizeof(float));
		char name[64];

		if (!zeros)
			return VNPU_ERROR_OUT_OF_HOST_MEMORY;
		snprintf(name, sizeof(name), "\x01bias.%d", n->index);
		status = gb_add_weight(b, name, VNPU_DTYPE_FLOAT, 2, bdims, zeros, &rn->bias);
		free(zeros);
		if (status != VNPU_SUCCESS)
			return status;
	}
	rn->y = n->out[0];
	if (rn->y < 0 && (status = gop_scratch(b, n, rn->S * rn->dirs * BH, &rn->y)))
		return status;
	rn->gh = rn->t2 = rn->cell = -1;
	if ((rn->kind == RNN_GRU && (status = gop_scratch(b, n, rn->B * GH, &rn->gh))) ||
	    (rn->kind == RNN_GRU && !rn->lbr && (status = gop_scratch(b, n, BH, &rn->t2))) ||
	    (rn->kind == RNN_LSTM && (status = gop_scratch(b, n, rn->dirs * BH, &rn->cell))))
		return status;
	if ((status = gop_scratch(b, n, rn->B * GH, &rn->gx)) ||
	    (status = gop_scratch(b, n, BH, &rn->t1)) ||
	    (status = gop_scratch(b, n, BH, &rn->zero_h)) ||
	    (status = gop_scratch(b, n, rn->dirs * GH, &rn->bsum)) ||
	    (status = gop_scalar(b, n, 0.0f, &z)))
		return status;
	/* Zeros for a missing initial state; W b + R b per direction. */
	cnt[0] = (int64_t)BH;
	status = gop_copy(b, n, 1, cnt, z, 0, zero, rn->zero_h, 0, unit);
	if (status == VNPU_SUCCESS)
		status = ew2(b, n, VNPU_OP_T_ADD, rn->dirs, GH, rn->bias, 0, 2 * GH, rn->bias, GH,
			     2 * GH, rn->bsum, 0, GH);
	for (uint64_t d = 0; d < rn->dirs && status == VNPU_SUCCESS && rn->kind == RNN_LSTM; d++)
		status = rn->c0 >= 0 ? ew2(b, n, VNPU_OP_T_COPY, rn->B, rn->H, rn->c0, d * BH, rn->H,
					   -1, 0, 0, rn->cell, d * BH, rn->H)
				     : ew2(b, n, VNPU_OP_T_COPY, rn->B, rn->H, rn->zero_h, 0, rn->H,
					   -1, 0, 0, rn->cell, d * BH, rn->H);
	return status;
}

/* One step: H[t] of direction @d from H[t-1] (@hp at element offset @hop). */
static int rnn_step(struct gbuild *b, struct gnode *n, const struct rnn *rn, uint64_t d,
		    uint64_t t, int hp, uint64_t hop)
{
	uint64_t B = rn->B, H = rn->H, GH = rn->G * H, I = rn->I;
	uint64_t yo = (t * rn->dirs + d) * B * H, co = d * B * H;
	int lstm = rn->kind == RNN_LSTM, gru = rn->kind == RNN_GRU, status;

	/* gx = bias (GRU with linear_before_reset: W b only), += X[t] W^T. */
	status = ew2(b, n, VNPU_OP_T_COPY, B, GH, gru && rn->lbr ? rn->bias : rn->bsum,
		     gru && rn->lbr ? d * 2 * GH : d * GH, 0, -1, 0, 0, rn->gx, 0, GH);
	if (status == VNPU_SUCCESS)
		status = gemm_t(b, n, B, GH, I, rn->x, t * B * I, rn->w, d * GH * I, rn->gx, 1.0f);
	if (status != VNPU_SUCCESS)
		return status;
	if (!gru) {
		status = gemm_t(b, n, B, GH, H, hp, hop, rn->r, d * GH * H, rn->gx, 1.0f);
		if (status != VNPU_SUCCESS)
			return status;
		if (!lstm)
			return ew2(b, n, VNPU_OP_T_TANH, B, H, rn->gx, 0, H, -1, 0, 0, rn->y, yo, H);
		/* LSTM gates i, o, f, c: c' = i * tanh(c), cell = f * cell + c'. */
		if ((status = ew2(b, n, VNPU_OP_T_SIGMOID, B, 3 * H, rn->gx, 0, GH, -1, 0, 0, rn->gx, 0, GH)) ||
		    (status = ew2(b, n, VNPU_OP_T_TANH, B, H, rn->gx, 3 * H, GH, -1, 0, 0, rn->gx, 3 * H, GH)) ||
		    (status = ew2(b, n, VNPU_OP_T_MUL, B, H, rn->gx, 0, GH, rn->gx, 3 * H, GH, rn->t1, 0, H)) ||
		    (status = ew2(b, n, VNPU_OP_T_MUL, B, H, rn->gx, 2 * H, GH, rn->cell, co, H, rn->cell, co, H)) ||
		    (status = ew2(b, n, VNPU_OP_T_ADD, B, H, rn->cell, co, H, rn->t1, 0, H, rn->cell, co, H)) ||
		    (status = ew2(b, n, VNPU_OP_T_TANH, B, H, rn->cell, co, H, -1, 0, 0, rn->t1, 0, H)))
			return status;
		return ew2(b, n, VNPU_OP_T_MUL, B, H, rn->gx, H, GH, rn->t1, 0, H, rn->y, yo, H);
	}
	/* GRU gates z, r, h. */
	if (rn->lbr) {
		/* gh = R b + H[t-1] R^T; h = tanh(gx_h + r * gh_h). */
		status = ew2(b, n, VNPU_OP_T_COPY, B, GH, rn->bias, d * 2 * GH + GH, 0, -1, 0, 0,
			     rn->gh, 0, GH);
		if (status == VNPU_SUCCESS)
			status = gemm_t(b, n, B, GH, H, hp, hop, rn->r, d * GH * H, rn->gh, 1.0f);
	} else {
		/* gh = H[t-1] R_zr^T (the biases are in gx); h = tanh(gx_h + (r * H) R_h^T). */
		status = gemm_t(b, n, B, 2 * H, H, hp, hop, rn->r, d * GH * H, rn->gh, 0.0f);
	}
	if (status == VNPU_SUCCESS)
		status = ew2(b, n, VNPU_OP_T_ADD, B, 2 * H, rn->gx, 0, GH, rn->gh, 0, rn->lbr ? GH : 2 * H,
			     rn->gx, 0, GH);
	if (status == VNPU_SUCCESS)
		status = ew2(b, n, VNPU_OP_T_SIGMOID, B, 2 * H, rn->gx, 0, GH, -1, 0, 0, rn->gx, 0, GH);
	if (status != VNPU_SUCCESS)
		return status;
	if (rn->lbr) {
		status = ew2(b, n, VNPU_OP_T_MUL, B, H, rn->gx, H, GH, rn->gh, 2 * H, GH, rn->t1, 0, H);
	} else {
		status = ew2(b, n, VNPU_OP_T_MUL, B, H, rn->gx, H, GH, hp, hop, H, rn->t2, 0, H);
		if (status == VNPU_SUCCESS)
			status = gemm_t(b, n, B, H, H, rn->t2, 0, rn->r, d * GH * H + 2 * H * H, rn->t1,
					0.0f);
	}
	/* h = tanh(gx_h + t1); H[t] = h + z * (H[t-1] - h). */
	if ((status = status ? status : ew2(b, n, VNPU_OP_T_ADD, B, H, rn->gx, 2 * H, GH, rn->t1, 0, H, rn->gx, 2 * H, GH)) ||
	    (status = ew2(b, n, VNPU_OP_T_TANH, B, H, rn->gx, 2 * H, GH, -1, 0, 0, rn->gx, 2 * H, GH)) ||
	    (status = ew2(b, n, VNPU_OP_T_SUB, B, H, hp, hop, H, rn->gx, 2 * H, GH, rn->t1, 0, H)) ||
	    (status = ew2(b, n, VNPU_OP_T_MUL, B, H, rn->gx, 0, GH, rn->t1, 0, H, rn->t1, 0, H)))
		return status;
	return ew2(b, n, VNPU_OP_T_ADD, B, H, rn->gx, 2 * H, GH, rn->t1, 0, H, rn->y, yo, H);
}

static int op_rnn(struct gbuild *b, struct gnode *n)
{
	struct rnn rn = { 0 };
	int status = rnn_check(b, n, &rn);

	if (status == VNPU_SUCCESS)
		status = rnn_tensors(b, n, &rn);
	for (uint64_t d = 0; d < rn.dirs && status == VNPU_SUCCESS; d++) {
		char dir[32];
		int reverse = !strcmp(gop_attr_str(n, "direction", dir, sizeof(dir)), "reverse") || d == 1;
		uint64_t BH = rn.B * rn.H, last = 0;

		for (uint64_t s = 0; s < rn.S && status == VNPU_SUCCESS; s++) {
			uint64_t t = reverse ? rn.S - 1 - s : s, prev = reverse ? t + 1 : t - 1;

			if (s == 0)
				status = rnn_step(b, n, &rn, d, t, rn.h0 >= 0 ? rn.h0 : rn.zero_h,
						  rn.h0 >= 0 ? d * BH : 0);
			else
				status = rnn_step(b, n, &rn, d, t, rn.y, (prev * rn.dirs + d) * BH);
			last = t;
		}
		/* Y_h and Y_c: the last step's hidden state and the cell. */
		if (status == VNPU_SUCCESS && n->num_out > 1 && n->out[1] >= 0)
			status = ew2(b, n, VNPU_OP_T_COPY, rn.B, rn.H, rn.y, (last * rn.dirs + d) * BH,
				     rn.H, -1, 0, 0, n->out[1], d * BH, rn.H);
		if (status == VNPU_SUCCESS && n->num_out > 2 && n->out[2] >= 0)
			status = ew2(b, n, VNPU_OP_T_COPY, rn.B, rn.H, rn.cell, d * BH, rn.H, -1, 0, 0,
				     n->out[2], d * BH, rn.H);
	}
	return status;
}

const struct gop_map gop_rnn_ops[] = {
	{ "RNN", op_rnn, 7 }, { "GRU", op_rnn, 7 }, { "LSTM", op_rnn, 7 },
	{ NULL, NULL, 0 },
};
