// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: the KERNEL command: every operator against a CPU reference,
 * chunk boundaries, transposes, in-place use, bad arguments, and the FAULT
 * command's error path.
 *
 * Tolerances (|got - want| <= abs + rel * |want|):
 *   ADD SUB MUL DIV MAX MIN RELU BIAS_ADD REDUCE_MAX GEMM_I8: exact
 *   AXPY: 1e-6 relative (a fused multiply-add in either side is allowed)
 *   REDUCE_SUM: 1e-6 relative + 1e-6 absolute against the same fp32
 *     column-order sum
 *   EXP: 2e-6 relative against exp() in double (one fp32 ulp is 1.2e-7)
 *   GELU: 1e-6 absolute + 1e-5 relative against the tanh form in double
 *   SOFTMAX: 1e-7 absolute + 1e-5 relative against double
 *   GEMM: 1e-5 + 2e-6 * k absolute against double (fp32 accumulation of k
 *     products of values in [-1, 1])
 */
#include <math.h>

#include "kselftest_harness.h"
#include "vnpu_cmd_fixture.h"

CMD_FIXTURE(kernel)

/* Carves @bytes (64-byte aligned) out of the buffer; returns its offset. */
static uint64_t carve(struct _test_data_kernel *self, uint64_t bytes)
{
	uint64_t off = self->next;

	self->next = (self->next + bytes + 63) & ~63ULL;
	return off;
}

/* Runs one KERNEL command with @args; returns the fence status (1 = ok). */
static int run(struct _test_data_kernel *self, struct drm_vnpu_kernel_args *args)
{
	return cmd_fixture_run(self->fd, self->queue, self->sync, &self->b,
			       cmd_kernel(self->b.addr), args, sizeof(*args), 20000);
}

static float *rand_mat(struct _test_data_kernel *self, uint64_t elems, unsigned int seed,
		       uint64_t *off)
{
	float *p;

	*off = carve(self, elems * 4);
	p = PTR(*off);
	for (uint64_t i = 0; i < elems; i++)
		p[i] = frand(&seed);
	return p;
}

static double ref_binary(uint32_t op, float a, float b, float alpha)
{
	switch (op) {
	case DRM_VNPU_OP_ADD: return (float)(a + b);
	case DRM_VNPU_OP_SUB: return (float)(a - b);
	case DRM_VNPU_OP_MUL: return (float)(a * b);
	case DRM_VNPU_OP_DIV: return (float)(a / b);
	case DRM_VNPU_OP_MAX: return a > b ? a : b;
	case DRM_VNPU_OP_MIN: return a < b ? a : b;
	default: return (float)(alpha * a + b);
	}
}

TEST_F(kernel, elementwise_binary)
{
	/* 3 rows of 2500 (crosses the 1024-element chunks), padded rows. */
	const uint32_t m = 3, n = 2500, ld = 2600;
	const uint32_t ops[] = { DRM_VNPU_OP_ADD, DRM_VNPU_OP_SUB, DRM_VNPU_OP_MUL,
				 DRM_VNPU_OP_DIV, DRM_VNPU_OP_MAX, DRM_VNPU_OP_MIN,
				 DRM_VNPU_OP_AXPY };
	uint64_t oa, ob, oc;
	float *a = rand_mat(self, m * ld, 1, &oa), *b = rand_mat(self, m * ld, 2, &ob);
	float *c = rand_mat(self, m * ld, 3, &oc);

	for (size_t t = 0; t < sizeof(ops) / sizeof(ops[0]); t++) {
		float alpha = 1.75f;
		struct drm_vnpu_kernel_args args = {
			.op = ops[t], .m = m, .n = n, .a = ADDR(oa), .b = ADDR(ob), .c = ADDR(oc),
			.lda = ld, .ldb = ld, .ldc = ld,
			.alpha = ops[t] == DRM_VNPU_OP_AXPY ? f2u(alpha) : 0,
		};
		int bad = 0;

		c[n] = 12345.0f;	/* padding between rows stays untouched */
		ASSERT_EQ(1, run(self, &args)) TH_LOG("op %u", ops[t]);
		for (uint32_t i = 0; i < m; i++)
			for (uint32_t j = 0; j < n; j++) {
				double want = ref_binary(ops[t], a[i * ld + j], b[i * ld + j], alpha);
				double tol = ops[t] == DRM_VNPU_OP_AXPY ? 1e-6 : 0;

				if (!close_enough(c[i * ld + j], want, 0, tol) && bad++ < 3)
					TH_LOG("op %u [%u][%u]: %g want %g", ops[t], i, j,
					       c[i * ld + j], want);
			}
		EXPECT_EQ(0, bad);
		EXPECT_EQ(12345.0f, c[n]);
	}
}

TEST_F(kernel, unary_relu_gelu_exp)
{
	const uint32_t m = 2, n = 3000;
	const uint32_t ops[] = { DRM_VNPU_OP_RELU, DRM_VNPU_OP_GELU, DRM_VNPU_OP_EXP };
	uint64_t oa, oc;
	float *a = rand_mat(self, m * n, 4, &oa), *c = rand_mat(self, m * n, 5, &oc);

	/* Wide range for exp, with the edges: overflow, underflow, subnormal. */
	for (uint32_t j = 0; j < n; j++)
		a[n + j] *= 100.0f;
	a[0] = 0.0f;
	a[1] = 88.0f;
	a[2] = 89.0f;
	a[3] = -87.0f;
	a[4] = -95.0f;
	a[5] = -120.0f;
	for (size_t t = 0; t < 3; t++) {
		struct drm_vnpu_kernel_args args = {
			.op = ops[t], .m = m, .n = n, .a = ADDR(oa), .c = ADDR(oc),
			.lda = n, .ldc = n,
		};
		int bad = 0;

		ASSERT_EQ(1, run(self, &args)) TH_LOG("op %u", ops[t]);
		for (uint32_t i = 0; i < m * n; i++) {
			double x = a[i], want, abs_tol = 0, rel_tol = 0;

			if (ops[t] == DRM_VNPU_OP_RELU) {
				want = x > 0 ? x : 0;
			} else if (ops[t] == DRM_VNPU_OP_GELU) {
				want = 0.5 * x * (1 + tanh(0.7978845608028654 *
							    (x + 0.044715 * x * x * x)));
				abs_tol = 1e-6;
				rel_tol = 1e-5;
			} else {
				want = (float)exp(x);
				rel_tol = 2e-6;
				/* Subnormal results keep fewer bits. */
				abs_tol = 1e-44;
			}
			if (isinf(want) ? c[i] != want : !close_enough(c[i], want, abs_tol, rel_tol))
				if (bad++ < 3)
					TH_LOG("op %u x=%g: %g want %g", ops[t], x, c[i], want);
		}
		EXPECT_EQ(0, bad);
	}
}

TEST_F(kernel, softmax_rows)
{
	const uint32_t m = 4, n = 2100, ld = 2112;
	uint64_t oa, oc;
	float *a = rand_mat(self, m * ld, 6, &oa), *c = rand_mat(self, m * ld, 7, &oc);
	struct drm_vnpu_kernel_args args = {
		.op = DRM_VNPU_OP_SOFTMAX, .m = m, .n = n, .a = ADDR(oa), .c = ADDR(oc),
		.lda = ld, .ldc = ld,
	};
	int bad = 0;

	for (uint32_t j = 0; j < n; j++)
		a[ld + j] *= 50.0f;	/* large values: needs the max subtraction */
	ASSERT_EQ(1, run(self, &args));
	for (uint32_t i = 0; i < m; i++) {
		double mx = -INFINITY, sum = 0, total = 0;

		for (uint32_t j = 0; j < n; j++)
			mx = fmax(mx, a[i * ld + j]);
		for (uint32_t j = 0; j < n; j++)
			sum += exp(a[i * ld + j] - mx);
		for (uint32_t j = 0; j < n; j++) {
			double want = exp(a[i * ld + j] - mx) / sum;

			total += c[i * ld + j];
			if (!close_enough(c[i * ld + j], want, 1e-7, 1e-5) && bad++ < 3)
				TH_LOG("[%u][%u]: %g want %g", i, j, c[i * ld + j], want);
		}
		EXPECT_TRUE(fabs(total - 1.0) < 1e-3);
	}
	EXPECT_EQ(0, bad);
}

TEST_F(kernel, reductions_sum_and_max)
{
	const uint32_t m = 5, n = 4000;
	uint64_t oa, oc;
	float *a = rand_mat(self, m * n, 8, &oa), *c = rand_mat(self, m, 9, &oc);

	for (int max = 0; max < 2; max++) {
		struct drm_vnpu_kernel_args args = {
			.op = max ? DRM_VNPU_OP_REDUCE_MAX : DRM_VNPU_OP_REDUCE_SUM,
			.m = m, .n = n, .a = ADDR(oa), .c = ADDR(oc), .lda = n,
		};

		ASSERT_EQ(1, run(self, &args));
		for (uint32_t i = 0; i < m; i++) {
			float want = max ? -INFINITY : 0.0f;

			for (uint32_t j = 0; j < n; j++)
				want = max ? fmaxf(want, a[i * n + j]) : want + a[i * n + j];
			if (max) {
				EXPECT_EQ(want, c[i]);
			} else {
				EXPECT_TRUE(close_enough(c[i], want, 1e-6, 1e-6))
					TH_LOG("row %u: %g want %g", i, c[i], want);
			}
		}
	}
}

TEST_F(kernel, bias_add_and_in_place)
{
	const uint32_t m = 3, n = 1500;
	uint64_t oa, ob;
	float *a = rand_mat(self, m * n, 10, &oa), *b = rand_mat(self, n, 11, &ob);
	float *orig = malloc(m * n * 4);
	struct drm_vnpu_kernel_args args = {
		.op = DRM_VNPU_OP_BIAS_ADD, .m = m, .n = n, .a = ADDR(oa), .b = ADDR(ob),
		.c = ADDR(oa), .lda = n, .ldc = n,
	};

	ASSERT_NE(NULL, orig);
	memcpy(orig, a, m * n * 4);
	ASSERT_EQ(1, run(self, &args));
	for (uint32_t i = 0; i < m; i++)
		for (uint32_t j = 0; j < n; j++)
			ASSERT_EQ((float)(orig[i * n + j] + b[j]), a[i * n + j]);
	free(orig);
}

/*
 * GEMM of @m x @n x @k with both transposes; alpha 1.5, beta @beta. With
 * @c_last, C's last element is the last float of the buffer.
 */
static void check_gemm(struct __test_metadata *_metadata, struct _test_data_kernel *self,
		       uint32_t m, uint32_t n, uint32_t k, float beta, bool c_last)
{
	for (uint32_t flags = 0; flags < 4; flags++) {
		int ta = flags & DRM_VNPU_KERNEL_TRANS_A, tb = flags & DRM_VNPU_KERNEL_TRANS_B;
		uint32_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 1, ldc = n + 2;
		uint64_t oa, ob, oc, save = self->next;
		float *a = rand_mat(self, (uint64_t)(ta ? k : m) * lda, 20 + flags, &oa);
		float *b = rand_mat(self, (uint64_t)(tb ? n : k) * ldb, 30 + flags, &ob);
		/* Elements of C up to its last one, C(m - 1, n - 1). */
		uint64_t c_elems = (uint64_t)(m - 1) * ldc + n;
		float *c = rand_mat(self, c_elems, 40 + flags, &oc);
		float *c0 = malloc(c_elems * 4);
		struct drm_vnpu_kernel_args args = {
			.op = DRM_VNPU_OP_GEMM, .flags = flags, .m = m, .n = n, .k = k,
			.alpha = f2u(1.5f), .beta = f2u(beta),
			.a = ADDR(oa), .b = ADDR(ob), .c = ADDR(oc),
			.lda = lda, .ldb = ldb, .ldc = ldc,
		};
		int bad = 0;

		ASSERT_NE(NULL, c0);
		if (c_last) {
			oc = BUF_SIZE - c_elems * 4;
			memcpy(PTR(oc), c, c_elems * 4);
			c = PTR(oc);
			args.c = ADDR(oc);
		}
		if (beta == 0.0f)
			for (uint64_t i = 0; i < c_elems; i++)
				c[i] = NAN;	/* not read when beta is 0 */
		memcpy(c0, c, c_elems * 4);
		ASSERT_EQ(1, run(self, &args));
		for (uint32_t i = 0; i < m; i++)
			for (uint32_t j = 0; j < n; j++) {
				double s = 0, want;

				for (uint32_t p = 0; p < k; p++)
					s += (double)(ta ? a[p * lda + i] : a[i * lda + p]) *
					     (tb ? b[j * ldb + p] : b[p * ldb + j]);
				want = 1.5 * s + (beta != 0.0f ? beta * c0[i * ldc + j] : 0);
				if (!close_enough(c[i * ldc + j], want, 1e-5 + 2e-6 * k, 0) &&
				    bad++ < 3)
					TH_LOG("flags %u [%u][%u]: %g want %g", flags, i, j,
					       c[i * ldc + j], want);
			}
		EXPECT_EQ(0, bad);
		free(c0);
		self->next = save;
	}
}

TEST_F(kernel, gemm_fp32_transposes_alpha_beta)
{
	check_gemm(_metadata, self, 17, 23, 31, 0.5f, false);
	check_gemm(_metadata, self, 9, 70, 64, 0.0f, false);
}

/*
 * C read for beta (and for the second depth block) up to the last float
 * of its buffer, from tiles that end inside the micro-tile: no read may
 * go past it (an emulated CPU once read 16 bytes for a scalar FMA there,
 * and the guard page after the buffer's mapping faulted).
 */
TEST_F(kernel, gemm_reads_c_up_to_the_end_of_its_buffer)
{
	check_gemm(_metadata, self, 16, 20, 300, 0.5f, true);
	check_gemm(_metadata, self, 20, 16, 40, -1.0f, true);
}

/*
 * Sizes that cross every block of the blocked kernels (96 rows, 512
 * columns, depth 256) and end inside a micro-tile; few columns (computed
 * transposed); few outputs (the scalar path).
 */
TEST_F(kernel, gemm_fp32_across_blocks)
{
	check_gemm(_metadata, self, 101, 530, 300, 0.5f, false);
	check_gemm(_metadata, self, 200, 5, 40, 0.0f, false);
	check_gemm(_metadata, self, 2, 7, 9, 1.0f, false);
}

/* k above VNPU_FPU_GEMM_MACS: dot products split over FPU sections. */
TEST_F(kernel, gemm_fp32_long_dot_products)
{
	check_gemm(_metadata, self, 3, 4, 5000, -2.0f, false);
}

TEST_F(kernel, gemm_int8_int32_accumulation)
{
	const uint32_t m = 13, n = 19, k = 300;

	for (uint32_t flags = 0; flags < 4; flags++) {
		int ta = flags & DRM_VNPU_KERNEL_TRANS_A, tb = flags & DRM_VNPU_KERNEL_TRANS_B;
		uint32_t lda = (ta ? m : k) + 5, ldb = (tb ? k : n) + 7, ldc = n;
		uint64_t oa = carve(self, (uint64_t)(ta ? k : m) * lda);
		uint64_t ob = carve(self, (uint64_t)(tb ? n : k) * ldb);
		uint64_t oc = carve(self, (uint64_t)m * ldc * 4);
		int8_t *a = PTR(oa), *b = PTR(ob);
		int32_t *c = PTR(oc), *c0 = malloc(m * ldc * 4);
		unsigned int seed = 77 + flags;
		int32_t alpha = 3, beta = -2;
		struct drm_vnpu_kernel_args args = {
			.op = DRM_VNPU_OP_GEMM_I8, .flags = flags, .m = m, .n = n, .k = k,
			.alpha = (uint32_t)alpha, .beta = (uint32_t)beta,
			.a = ADDR(oa) + 1, .b = ADDR(ob) + 3, .c = ADDR(oc),
			.lda = lda, .ldb = ldb, .ldc = ldc,
		};

		ASSERT_NE(NULL, c0);
		/* Odd addresses: int8 arrays need no alignment. */
		a += 1;
		b += 3;
		for (uint32_t i = 0; i < (ta ? k : m) * lda - 1; i++)
			a[i] = (int8_t)(rand_r(&seed) & 0xff);
		for (uint32_t i = 0; i < (tb ? n : k) * ldb - 3; i++)
			b[i] = (int8_t)(rand_r(&seed) & 0xff);
		for (uint32_t i = 0; i < m * ldc; i++)
			c[i] = rand_r(&seed) - RAND_MAX / 2;
		memcpy(c0, c, m * ldc * 4);
		ASSERT_EQ(1, run(self, &args));
		for (uint32_t i = 0; i < m; i++)
			for (uint32_t j = 0; j < n; j++) {
				uint32_t s = 0;

				for (uint32_t p = 0; p < k; p++)
					s += (uint32_t)((int32_t)(ta ? a[p * lda + i] : a[i * lda + p]) *
							(tb ? b[j * ldb + p] : b[p * ldb + j]));
				ASSERT_EQ(s * (uint32_t)alpha + (uint32_t)beta * (uint32_t)c0[i * ldc + j],
					  (uint32_t)c[i * ldc + j]);
			}
		free(c0);
	}
}

TEST_F(kernel, bad_arguments)
{
	uint64_t oa = carve(self, 4096), ob = carve(self, 4096), oc = carve(self, 4096);
	const struct drm_vnpu_kernel_args ok = {
		.op = DRM_VNPU_OP_ADD, .m = 4, .n = 8, .a = ADDR(oa), .b = ADDR(ob),
		.c = ADDR(oc), .lda = 8, .ldb = 8, .ldc = 8,
	};
	const struct drm_vnpu_kernel_args gemm = {
		.op = DRM_VNPU_OP_GEMM, .m = 4, .n = 4, .k = 4, .a = ADDR(oa), .b = ADDR(ob),
		.c = ADDR(oc), .lda = 4, .ldb = 4, .ldc = 4,
	};
	struct {
		const char *what;
		struct drm_vnpu_kernel_args args;
		int err;
	} bad[] = {
		{ "op 0", ok, -EINVAL }, { "op 0x11", ok, -EINVAL }, { "flags", ok, -EINVAL },
		{ "m 0", ok, -EINVAL }, { "n 0", ok, -EINVAL }, { "k on add", ok, -EINVAL },
		{ "huge m", ok, -EINVAL }, { "pad", ok, -EINVAL }, { "pad2", ok, -EINVAL },
		{ "alpha on add", ok, -EINVAL }, { "beta on add", ok, -EINVAL },
		{ "lda < n", ok, -EINVAL }, { "misaligned a", ok, -EINVAL },
		{ "misaligned c", ok, -EINVAL }, { "b on relu", ok, -EINVAL },
		{ "ldc on reduce", ok, -EINVAL }, { "ldb on bias", ok, -EINVAL },
		{ "gemm k 0", gemm, -EINVAL }, { "gemm flags 4", gemm, -EINVAL },
		{ "gemm c overlaps a", gemm, -EINVAL },
		{ "ld overflow", ok, -EACCES }, { "a outside", ok, -EACCES },
		{ "c unowned", ok, -EACCES }, { "c past end", ok, -EACCES },
		{ "gemm trans a past end", gemm, -EACCES },
	};
	int i = 0;

	bad[i++].args.op = 0;
	bad[i++].args.op = 0x11;
	bad[i++].args.flags = 1;
	bad[i++].args.m = 0;
	bad[i++].args.n = 0;
	bad[i++].args.k = 1;
	bad[i++].args.m = DRM_VNPU_KERNEL_MAX_DIM + 1;
	bad[i++].args.pad = 1;
	bad[i++].args.pad2 = 1;
	bad[i++].args.alpha = f2u(1.0f);
	bad[i++].args.beta = f2u(1.0f);
	bad[i++].args.lda = 7;
	bad[i++].args.a += 2;
	bad[i++].args.c += 1;
	bad[i].args.op = DRM_VNPU_OP_RELU;
	bad[i++].args.ldb = 0;
	bad[i].args.op = DRM_VNPU_OP_REDUCE_SUM;
	bad[i].args.b = 0;
	bad[i++].args.ldb = 0;
	bad[i++].args.op = DRM_VNPU_OP_BIAS_ADD;
	bad[i++].args.k = 0;
	bad[i++].args.flags = 4;
	bad[i++].args.c = ADDR(oa) + 16;
	bad[i].args.lda = 0xffffffff;
	bad[i++].args.ldb = 0xffffffff;
	bad[i++].args.a = self->b.addr + BUF_SIZE - 16;
	bad[i++].args.c = DRM_VNPU_HOST_BASE + (1ULL << 40);
	bad[i++].args.c = self->b.addr + BUF_SIZE - 64;
	bad[i].args.flags = DRM_VNPU_KERNEL_TRANS_A;
	bad[i].args.m = 2048;
	bad[i].args.lda = 2048;
	bad[i].args.a = self->b.addr + BUF_SIZE - 4096;
	bad[i].args.c = ADDR(carve(self, 4 * 2048 * 4));
	bad[i++].args.ldc = 4;
	ASSERT_EQ(sizeof(bad) / sizeof(bad[0]), i);

	for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
		struct drm_vnpu_cmd cmds[2] = { cmd_fill(ADDR(oc), 4, 7), cmd_kernel(self->b.addr) };

		memcpy(self->b.map, &bad[i].args, sizeof(bad[i].args));
		*(uint32_t *)PTR(oc) = 0;
		EXPECT_EQ(bad[i].err, submit_cmds(self->fd, self->queue, cmds, 2, NULL, 0,
						  self->sync)) TH_LOG("%s", bad[i].what);
	}

	/* The command itself: args misaligned, wrong size, members, outside. */
	struct drm_vnpu_cmd c = cmd_kernel(self->b.addr + 4);

	memcpy(self->b.map, &ok, sizeof(ok));
	EXPECT_EQ(-EINVAL, submit_cmds(self->fd, self->queue, &c, 1, NULL, 0, 0));
	c = cmd_kernel(self->b.addr);
	c.size = 64;
	EXPECT_EQ(-EINVAL, submit_cmds(self->fd, self->queue, &c, 1, NULL, 0, 0));
	c = cmd_kernel(self->b.addr);
	c.dst = self->b.addr;
	EXPECT_EQ(-EINVAL, submit_cmds(self->fd, self->queue, &c, 1, NULL, 0, 0));
	c = cmd_kernel(self->b.addr);
	c.pattern = 1;
	EXPECT_EQ(-EINVAL, submit_cmds(self->fd, self->queue, &c, 1, NULL, 0, 0));
	c = cmd_kernel(self->b.addr + BUF_SIZE - 64);
	EXPECT_EQ(-EACCES, submit_cmds(self->fd, self->queue, &c, 1, NULL, 0, 0));

	/* Nothing ran; the good arguments still work. */
	usleep(20000);
	EXPECT_EQ(0, *(uint32_t *)PTR(oc));
	EXPECT_EQ(1, run(self, (struct drm_vnpu_kernel_args *)&ok));
}

/* Arguments are read at submit: changing them afterwards has no effect. */
TEST_F(kernel, arguments_are_read_at_submit)
{
	uint64_t oa, oc;
	float *a = rand_mat(self, 64, 50, &oa), *c = rand_mat(self, 64, 51, &oc);
	struct drm_vnpu_kernel_args args = {
		.op = DRM_VNPU_OP_RELU, .m = 1, .n = 64, .a = ADDR(oa), .c = ADDR(oc),
		.lda = 64, .ldc = 64,
	};
	struct drm_vnpu_cmd cmds[] = { cmd_delay(50000000), cmd_kernel(self->b.addr) };

	memcpy(self->b.map, &args, sizeof(args));
	ASSERT_EQ(0, submit_cmds(self->fd, self->queue, cmds, 2, NULL, 0, self->sync));
	((struct drm_vnpu_kernel_args *)self->b.map)->n = 1;
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_EQ(a[63] > 0 ? a[63] : 0.0f, c[63]);
}

/* FAULT fails the job at execution: the commands before it ran, not after. */
TEST_F(kernel, fault_signals_the_fence_and_queue_state)
{
	uint64_t o = carve(self, 64);
	struct drm_vnpu_cmd cmds[] = {
		cmd_fill(ADDR(o), 4, 0x11), { .opcode = DRM_VNPU_CMD_FAULT, .pattern = EIO },
		cmd_fill(ADDR(o) + 4, 4, 0x22),
	};
	struct drm_vnpu_cmd okc = cmd_fill(ADDR(o) + 8, 4, 0x33);
	struct drm_vnpu_cmd badf = { .opcode = DRM_VNPU_CMD_FAULT, .pattern = 4096 };
	struct drm_vnpu_queue_info info;

	memset(PTR(o), 0, 16);
	EXPECT_EQ(-EINVAL, submit_cmds(self->fd, self->queue, &badf, 1, NULL, 0, 0));
	badf.pattern = 0;
	EXPECT_EQ(-EINVAL, submit_cmds(self->fd, self->queue, &badf, 1, NULL, 0, 0));
	ASSERT_EQ(0, submit_cmds(self->fd, self->queue, &okc, 1, NULL, 0, 0));
	ASSERT_EQ(0, submit_cmds(self->fd, self->queue, cmds, 3, NULL, 0, self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_EQ(-EIO, syncobj_status(self->fd, self->sync));
	EXPECT_EQ(0x11, ((uint32_t *)PTR(o))[0]);
	EXPECT_EQ(0, ((uint32_t *)PTR(o))[1]);
	/* The queue is not guilty: a fault is not a hang. */
	ASSERT_EQ(0, submit_cmds(self->fd, self->queue, &okc, 1, NULL, 0, self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	for (int i = 0; i < 1000; i++) {
		ASSERT_EQ(0, queue_info(self->fd, self->queue, &info));
		if (info.completed + info.failed == info.submitted)
			break;
		usleep(1000);
	}
	EXPECT_EQ(3, info.submitted);
	EXPECT_EQ(2, info.completed);
	EXPECT_EQ(1, info.failed);
	EXPECT_EQ(2, info.last_error_seqno);
	EXPECT_EQ(1, info.last_error_cmd);
	EXPECT_EQ(-EIO, info.last_error);
	EXPECT_EQ(0, info.state);
}

TEST_HARNESS_MAIN
