// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-bench-compute: time of the device's compute operators, reported
 * and never asserted. Run by tools/bench/vnpu-bench-compute.py, which
 * times the same work with numpy in the same guest and prints the ratios.
 *
 *   vnpu-bench-compute CASE...
 *
 * CASE is sgemm:N (C = A B, N x N x N, fp32), conv (3 x 3 convolution,
 * stride 1, padding 1, of a 1 x 64 x 56 x 56 input with 64 filters, as
 * IM2COL + T_DOT in one job, the way the runtime runs an ONNX Conv) or
 * submit (a job of one 4-byte FILL: the cost of a job without work);
 * im2col is the convolution's first command alone. Each
 * case is one job, timed from submit to its fence, on one compute queue of
 * device 0; the inputs are in device memory already. Prints one line per
 * case: "CASE median_s min_s reps". VNPU_BENCH_SCALE (default 1) scales
 * the repetitions.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../selftests/vnpu_exec_utils.h"

#define BUF_SIZE (64ULL << 20)
/* Arguments at 0, arrays from ARR. */
#define ARR 4096ULL

/* The convolution: input C x H x W, F filters of C x 3 x 3. */
#define CONV_C 64
#define CONV_H 56
#define CONV_W 56
#define CONV_F 64

static int fd;
static uint32_t queue, sync_h;
static struct buf b;

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, c = *(const double *)y;

	return a < c ? -1 : a > c;
}

static void fill_random(float *p, uint64_t n, unsigned int seed)
{
	for (uint64_t i = 0; i < n; i++)
		p[i] = (float)rand_r(&seed) / RAND_MAX * 2.0f - 1.0f;
}

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* Runs @n commands whose arguments are in the buffer; seconds, or -1. */
static double run_job(struct drm_vnpu_cmd *cmds, uint32_t n)
{
	uint64_t t0 = now_ns();

	if (submit_cmds(fd, queue, cmds, n, NULL, 0, sync_h) ||
	    syncobj_wait(fd, sync_h, 600000) || syncobj_status(fd, sync_h) != 1)
		return -1;
	return (now_ns() - t0) / 1e9;
}

/* One job: GEMM N x N x N, arguments at 0. */
static int setup_sgemm(uint32_t n, struct drm_vnpu_cmd *cmd)
{
	uint64_t elems = (uint64_t)n * n, oa = ARR, ob = oa + elems * 4, oc = ob + elems * 4;
	struct drm_vnpu_kernel_args args = {
		.op = DRM_VNPU_OP_GEMM, .m = n, .n = n, .k = n, .alpha = f2u(1.0f),
		.a = b.addr + oa, .b = b.addr + ob, .c = b.addr + oc,
		.lda = n, .ldb = n, .ldc = n,
	};

	if (oc + elems * 4 > BUF_SIZE)
		return -1;
	fill_random((float *)((char *)b.map + oa), elems, 1);
	fill_random((float *)((char *)b.map + ob), elems, 2);
	memcpy(b.map, &args, sizeof(args));
	cmd[0] = cmd_kernel(b.addr);
	return 1;
}

/* Two commands: IM2COL (arguments at 0), then T_DOT (at 1024). */
static int setup_conv(struct drm_vnpu_cmd *cmd)
{
	const uint32_t q = CONV_C * 9, p = CONV_H * CONV_W;
	uint64_t ox = ARR, ocol = ox + (uint64_t)CONV_C * p * 4;
	uint64_t ow = ocol + (uint64_t)q * p * 4, oy = ow + (uint64_t)CONV_F * q * 4;
	struct drm_vnpu_tensor_args im2col = {
		.op = DRM_VNPU_OP_T_IM2COL, .ndim = 4, .shape = { 1, CONV_C, CONV_H, CONV_W },
		.stride_a = { CONV_C * p, p, CONV_W, 1 },
		.stride_c = { q * p, 9 * p, 3 * p, p, CONV_W, 1 },
		.a = b.addr + ox, .c = b.addr + ocol,
		.window = { .kernel_h = 3, .kernel_w = 3, .stride_h = 1, .stride_w = 1,
			    .dilation_h = 1, .dilation_w = 1, .pad_top = 1, .pad_left = 1,
			    .pad_bottom = 1, .pad_right = 1, .out_h = CONV_H, .out_w = CONV_W },
	};
	/* Y (F x P) = W (F x Q) cols (Q x P): dimensions (F, P, Q), Q contracted. */
	struct drm_vnpu_tensor_args dot = {
		.op = DRM_VNPU_OP_T_DOT, .ndim = 3, .axes = 4, .shape = { CONV_F, p, q },
		.stride_a = { q, 0, 1 }, .stride_b = { 0, 1, p }, .stride_c = { p, 1, 0 },
		.a = b.addr + ow, .b = b.addr + ocol, .c = b.addr + oy,
	};

	if (oy + (uint64_t)CONV_F * p * 4 > BUF_SIZE)
		return -1;
	fill_random((float *)((char *)b.map + ox), (uint64_t)CONV_C * p, 3);
	fill_random((float *)((char *)b.map + ow), (uint64_t)CONV_F * q, 4);
	memcpy(b.map, &im2col, sizeof(im2col));
	memcpy((char *)b.map + 1024, &dot, sizeof(dot));
	cmd[0] = cmd_tensor(b.addr);
	cmd[1] = cmd_tensor(b.addr + 1024);
	return 2;
}

static int reps_of(const char *name, int scale)
{
	int reps = 3;

	if (!strcmp(name, "sgemm:64") || !strcmp(name, "submit"))
		reps = 50;
	else if (!strcmp(name, "sgemm:256"))
		reps = 10;
	else if (!strcmp(name, "sgemm:1024"))
		reps = 1;
	return reps * scale;
}

static int bench_case(const char *name, int scale)
{
	struct drm_vnpu_cmd cmds[2];
	double t[1000];
	int n, reps = reps_of(name, scale);

	if (!strncmp(name, "sgemm:", 6))
		n = setup_sgemm(atoi(name + 6), cmds);
	else if (!strcmp(name, "conv"))
		n = setup_conv(cmds);
	else if (!strcmp(name, "im2col"))
		n = setup_conv(cmds) < 0 ? -1 : 1;
	else
		n = -1;
	if (!strcmp(name, "submit")) {
		cmds[0] = cmd_fill(b.addr + ARR, 4, 0);
		n = 1;
	}
	if (n < 0 || reps > 1000) {
		fprintf(stderr, "vnpu-bench-compute: bad case %s\n", name);
		return -1;
	}
	if (reps > 1 && run_job(cmds, n) < 0)	/* warm-up */
		return -1;
	for (int i = 0; i < reps; i++) {
		t[i] = run_job(cmds, n);
		if (t[i] < 0) {
			fprintf(stderr, "vnpu-bench-compute: %s: job failed: %d\n", name,
				syncobj_status(fd, sync_h));
			return -1;
		}
	}
	qsort(t, reps, sizeof(t[0]), cmp_double);
	printf("%s %.6f %.6f %d\n", name, t[reps / 2], t[0], reps);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	struct drm_vnpu_cmd warm[1];
	const char *s = getenv("VNPU_BENCH_SCALE");
	int scale = s ? atoi(s) : 1, fail = 0;

	if (scale < 1)
		scale = 1;
	fd = vnpu_open_nth(0);
	if (fd < 0) {
		fprintf(stderr, "vnpu-bench-compute: no vnpu device\n");
		return 4;
	}
	/* 1024^3 under software emulation outlasts the default job timeout. */
	if (queue_create_timeout(fd, DRM_VNPU_ENGINE_COMPUTE, DRM_VNPU_PRIORITY_NORMAL, 600000,
				 &queue) ||
	    buf_create(fd, BUF_SIZE, DRM_VNPU_BO_HOST, &b) || !(sync_h = syncobj_create(fd))) {
		fprintf(stderr, "vnpu-bench-compute: setup failed: %s\n", strerror(errno));
		return 1;
	}
	/* One operator first, so that no case pays for first-use allocations. */
	if (setup_sgemm(256, warm) < 0 || run_job(warm, 1) < 0)
		fail = 1;
	for (int i = 1; i < argc && !fail; i++)
		fail = bench_case(argv[i], scale) < 0;
	buf_destroy(fd, &b);
	close(fd);
	return fail;
}
