// SPDX-License-Identifier: MIT
/*
 * outage: the pattern behind a real outage, made safe. Each "request"
 * gets its own context, queues asynchronous work, frees its memory and
 * destroys the context without synchronizing. vnpu keeps everything the
 * queued work uses alive until it is done, so nothing is used after free
 * and the device memory comes back exactly.
 *
 * Build: cc -std=c11 -Wall -O2 outage.c -o outage $(pkg-config --cflags --libs vnpurt)
 */
#include <stdio.h>
#include <unistd.h>

#include <vnpu.h>

static uint64_t process_used(struct vnpu_context ctx)
{
	struct vnpu_mem_info info = { 0 };

	vnpu_mem_get_info(ctx, &info);
	return info.total - info.free;
}

int main(void)
{
	struct vnpu_context probe;
	uint32_t request[256] = { 42 };
	uint64_t before, after = 0;

	if (vnpu_init(0) || vnpu_ctx_create(0, 0, &probe))
		return 1;
	before = process_used(probe);
	for (int i = 0; i < 100; i++) {
		struct vnpu_context ctx;
		struct vnpu_stream s;
		uint64_t in, out;

		if (vnpu_ctx_create(0, 0, &ctx) || vnpu_stream_create(ctx, 0, 0, &s) ||
		    vnpu_malloc(ctx, 1 << 20, 0, &in) || vnpu_malloc(ctx, 1 << 20, 0, &out) ||
		    vnpu_memcpy_htod_async(s, in, request, sizeof(request)) ||
		    vnpu_launch_delay(s, 2000000) ||
		    vnpu_memcpy_dtod_async(s, out, in, 1 << 20))
			return 1;
		/* No synchronize: free and destroy while the work is queued. */
		vnpu_free(ctx, in);
		vnpu_ctx_destroy(ctx, VNPU_DESTROY_ABORT);
	}
	/* The last requests' work finishes on its own; then memory is back. */
	for (int i = 0; i < 200 && (after = process_used(probe)) != before; i++)
		usleep(20000);
	printf("outage: 100 requests destroyed mid-flight; device memory in use %llu -> %llu bytes\n",
	       (unsigned long long)before, (unsigned long long)after);
	vnpu_ctx_destroy(probe, 0);
	vnpu_finalize();
	return after == before ? 0 : 1;
}
