// SPDX-License-Identifier: MIT
/*
 * hello: allocate device memory, copy two vectors in, add them on the
 * device, copy the sum out and check it.
 *
 * Build: cc -std=c11 -Wall -O2 hello.c -o hello $(pkg-config --cflags --libs vnpurt)
 */
#include <stdio.h>
#include <stdlib.h>

#include <vnpu.h>

#define N 4096

static int check(int status, const char *what)
{
	if (status != VNPU_SUCCESS)
		fprintf(stderr, "hello: %s: %s: %s\n", what, vnpu_status_name(status),
			vnpu_status_string(status));
	return status != VNPU_SUCCESS;
}

int main(void)
{
	static float x[N], y[N], sum[N];
	struct vnpu_context ctx;
	struct vnpu_stream s;
	struct vnpu_kernel add = { .op = VNPU_OP_ADD, .m = 1, .n = N };

	for (int i = 0; i < N; i++) {
		x[i] = (float)i;
		y[i] = 0.5f * (float)i;
	}
	if (check(vnpu_init(0), "init") || check(vnpu_ctx_create(0, 0, &ctx), "context") ||
	    check(vnpu_ctx_default_stream(ctx, &s), "stream") ||
	    check(vnpu_malloc(ctx, sizeof(x), 0, &add.a), "malloc x") ||
	    check(vnpu_malloc(ctx, sizeof(y), 0, &add.b), "malloc y") ||
	    check(vnpu_malloc(ctx, sizeof(sum), 0, &add.c), "malloc sum"))
		return 1;

	if (check(vnpu_memcpy_htod(ctx, add.a, x, sizeof(x)), "copy x in") ||
	    check(vnpu_memcpy_htod(ctx, add.b, y, sizeof(y)), "copy y in") ||
	    check(vnpu_launch_kernel(s, &add), "add") ||
	    check(vnpu_memcpy_dtoh(ctx, sum, add.c, sizeof(sum)), "copy sum out"))
		return 1;
	for (int i = 0; i < N; i++) {
		if (sum[i] != x[i] + y[i]) {
			fprintf(stderr, "hello: sum[%d] is %f, expected %f\n", i, sum[i], x[i] + y[i]);
			return 1;
		}
	}
	printf("hello: the device added %d pairs of floats correctly\n", N);
	vnpu_ctx_destroy(ctx, 0);
	return check(vnpu_finalize(), "finalize");
}
