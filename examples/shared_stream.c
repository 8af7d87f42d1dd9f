// SPDX-License-Identifier: MIT
/*
 * shared_stream: two threads submit to one stream. Each call is one unit
 * of work and units run in the order the calls entered the stream, so each
 * thread's own order holds and nothing interleaves inside a unit.
 *
 * Build: cc -std=c11 -Wall -O2 shared_stream.c -o shared_stream -lpthread $(pkg-config --cflags --libs vnpurt)
 */
#include <pthread.h>
#include <stdio.h>

#include <vnpu.h>

struct worker {
	struct vnpu_stream s;
	uint64_t slot;
	uint32_t id;
	int failed;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	/* Each thread fills its own slot 100 times; the last fill must win. */
	for (uint32_t i = 0; i < 100; i++)
		w->failed |= vnpu_memset_d32_async(w->s, w->slot, w->id * 1000 + i, 1024);
	return NULL;
}

int main(void)
{
	struct vnpu_context ctx;
	struct vnpu_stream s;
	struct worker w[2];
	pthread_t t[2];
	uint32_t out[1024];
	uint64_t buf;
	int ok = 1;

	if (vnpu_init(0) || vnpu_ctx_create(0, 0, &ctx) || vnpu_stream_create(ctx, 0, 0, &s) ||
	    vnpu_malloc(ctx, 2 * 4096, 0, &buf))
		return 1;
	for (int i = 0; i < 2; i++) {
		w[i] = (struct worker){ s, buf + (uint64_t)i * 4096, (uint32_t)i + 1, 0 };
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (vnpu_stream_synchronize(s, VNPU_TIMEOUT_INFINITE))
		return 1;
	for (int i = 0; i < 2; i++) {
		if (w[i].failed || vnpu_memcpy_dtoh(ctx, out, w[i].slot, sizeof(out)))
			return 1;
		ok &= out[0] == w[i].id * 1000 + 99 && out[1023] == out[0];
		printf("shared_stream: thread %d's last fill %u is in place\n", i + 1, out[0]);
	}
	vnpu_ctx_destroy(ctx, 0);
	vnpu_finalize();
	return ok ? 0 : 1;
}
