// SPDX-License-Identifier: MIT
/*
 * hello: allocate device memory, copy data in, work on it on the device,
 * copy it out and check it.
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
	static uint32_t in[N], out[N];
	struct vnpu_context ctx;
	uint64_t a, b;

	for (int i = 0; i < N; i++)
		in[i] = (uint32_t)i * 3;
	if (check(vnpu_init(0), "init") || check(vnpu_ctx_create(0, 0, &ctx), "context") ||
	    check(vnpu_malloc(ctx, sizeof(in), 0, &a), "malloc a") ||
	    check(vnpu_malloc(ctx, 2 * sizeof(in), 0, &b), "malloc b"))
		return 1;

	/* b = [in | 7 7 7 ...]: a copy through the device and a device fill. */
	if (check(vnpu_memcpy_htod(ctx, a, in, sizeof(in)), "copy in") ||
	    check(vnpu_memcpy_dtod(ctx, b, a, sizeof(in)), "device copy") ||
	    check(vnpu_memset_d32(ctx, b + sizeof(in), 7, N), "fill") ||
	    check(vnpu_memcpy_dtoh(ctx, out, b, sizeof(out)), "copy out"))
		return 1;
	for (int i = 0; i < N; i++) {
		if (out[i] != in[i]) {
			fprintf(stderr, "hello: word %d is %u, expected %u\n", i, out[i], in[i]);
			return 1;
		}
	}
	if (check(vnpu_memcpy_dtoh(ctx, out, b + sizeof(in), sizeof(out)), "copy out") ||
	    out[0] != 7 || out[N - 1] != 7)
		return 1;
	printf("hello: %d words went to the device and back intact\n", N);
	vnpu_ctx_destroy(ctx, 0);
	return check(vnpu_finalize(), "finalize");
}
