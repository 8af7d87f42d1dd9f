// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-bench-topo: the topology as felt by the runtime.
 *
 *  - peer copies: for each link class present, bandwidth of large copies
 *    and time of a small one between two devices of that class, next to
 *    the configured bandwidth and latency;
 *  - all-reduce over every device: per message size, time, algorithm
 *    bandwidth (bytes / time) and bus bandwidth (algbw * 2 (n - 1) / n,
 *    the nccl-tests definition: what each link carries), next to the
 *    bandwidth of the slowest link on the communicator's ring.
 *
 * Times are host wall clock around a stream synchronize, averaged over
 * repetitions. Reports only; never fails on a number.
 *
 * usage: vnpu-bench-topo [MAX_BYTES]   (default 16 MiB)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vnpu.h"

#define MAX_DEV 16

static const char *const class_names[] = { "self", "board", "node", "system" };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define CHECK(call) do {							\
	int __s = (call);							\
	if (__s != VNPU_SUCCESS) {						\
		fprintf(stderr, "vnpu-bench-topo: %s: %s\n", #call, vnpu_status_name(__s)); \
		exit(1);							\
	}									\
} while (0)

static struct vnpu_context ctx[MAX_DEV];
static struct vnpu_stream stream[MAX_DEV];

/* Seconds per copy of @bytes from device @from into device @to, over @reps. */
static double time_copy(uint32_t to, uint32_t from, uint64_t dst, uint64_t src, size_t bytes,
			int reps)
{
	double t0;

	/* One untimed copy: the first import is set up outside the figure. */
	CHECK(vnpu_memcpy_peer_async(stream[to], dst, ctx[from], src, bytes));
	CHECK(vnpu_stream_synchronize(stream[to], VNPU_TIMEOUT_INFINITE));
	t0 = now_s();
	for (int i = 0; i < reps; i++)
		CHECK(vnpu_memcpy_peer_async(stream[to], dst, ctx[from], src, bytes));
	CHECK(vnpu_stream_synchronize(stream[to], VNPU_TIMEOUT_INFINITE));
	return (now_s() - t0) / reps;
}

static void bench_peer(uint32_t n, const struct vnpu_link *links, size_t max_bytes)
{
	printf("Peer copies (device 0 <- peer), per link class\n\n");
	printf("| class  | peer | configured MB/s | measured MB/s | configured ns | 4 KiB copy us |\n");
	printf("|--------|------|-----------------|---------------|---------------|---------------|\n");
	for (int c = 1; c <= 3; c++) {
		uint64_t src, dst;
		double t_big, t_small;
		uint32_t peer = 0;

		for (uint32_t j = 1; j < n && !peer; j++)
			if ((int)links[j].link_class == c)
				peer = j;
		if (!peer)
			continue;
		CHECK(vnpu_malloc(ctx[peer], max_bytes, 0, &src));
		CHECK(vnpu_malloc(ctx[0], max_bytes, 0, &dst));
		CHECK(vnpu_memset_d32(ctx[peer], src, 0x1234, max_bytes / 4));
		CHECK(vnpu_ctx_enable_peer_access(ctx[0], ctx[peer], 0));
		t_big = time_copy(0, peer, dst, src, max_bytes, 4);
		t_small = time_copy(0, peer, dst, src, 4096, 50);
		printf("| %-6s | %4u | %15u | %13.0f | %13u | %13.1f |\n", class_names[c], peer,
		       links[peer].bandwidth_mbps, max_bytes / t_big / 1e6, links[peer].latency_ns,
		       t_small * 1e6);
		CHECK(vnpu_ctx_disable_peer_access(ctx[0], ctx[peer]));
		CHECK(vnpu_free(ctx[peer], src));
		CHECK(vnpu_free(ctx[0], dst));
	}
	printf("\n");
}

static void bench_all_reduce(uint32_t n, const struct vnpu_link *links, size_t max_bytes)
{
	uint64_t buf[MAX_DEV];
	uint32_t ring[MAX_DEV], slowest = ~0u;
	const char *slow_class = "-";
	struct vnpu_comm comm;

	CHECK(vnpu_comm_create(n, stream, &comm));
	CHECK(vnpu_comm_get_ring(comm, n, ring));
	printf("All-reduce (sum, fp32) over %u devices, ring", n);
	for (uint32_t p = 0; p < n; p++) {
		const struct vnpu_link *l = &links[ring[p] * n + ring[(p + 1) % n]];

		printf(" %u", ring[p]);
		if (n > 1 && l->bandwidth_mbps < slowest) {
			slowest = l->bandwidth_mbps;
			slow_class = class_names[l->link_class];
		}
	}
	if (n > 1)
		printf("; slowest ring link: %s, %u MB/s\n\n", slow_class, slowest);
	else
		printf("; no links\n\n");
	for (uint32_t r = 0; r < n; r++)
		CHECK(vnpu_malloc(ctx[r], max_bytes, 0, &buf[r]));
	printf("| bytes     | time us   | algbw MB/s | busbw MB/s | busbw / slowest link |\n");
	printf("|-----------|-----------|------------|------------|----------------------|\n");
	for (size_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
		int reps = bytes <= (1 << 20) ? 5 : 2;
		double t, algbw, busbw;

		for (uint32_t r = 0; r < n; r++)
			CHECK(vnpu_memset_d32(ctx[r], buf[r], 0x3f800000, bytes / 4));
		CHECK(vnpu_all_reduce(comm, buf, buf, bytes / 4, VNPU_DTYPE_F32, VNPU_REDUCE_SUM));
		for (uint32_t r = 0; r < n; r++)
			CHECK(vnpu_stream_synchronize(stream[r], VNPU_TIMEOUT_INFINITE));
		t = now_s();
		for (int i = 0; i < reps; i++)
			CHECK(vnpu_all_reduce(comm, buf, buf, bytes / 4, VNPU_DTYPE_F32,
					      VNPU_REDUCE_SUM));
		for (uint32_t r = 0; r < n; r++)
			CHECK(vnpu_stream_synchronize(stream[r], VNPU_TIMEOUT_INFINITE));
		t = (now_s() - t) / reps;
		algbw = bytes / t / 1e6;
		busbw = algbw * 2.0 * (n - 1) / n;
		printf("| %9zu | %9.0f | %10.1f | %10.1f | %20.2f |\n", bytes, t * 1e6, algbw, busbw,
		       n > 1 ? busbw / slowest : 0.0);
	}
	printf("\n");
	for (uint32_t r = 0; r < n; r++)
		CHECK(vnpu_free(ctx[r], buf[r]));
	CHECK(vnpu_comm_destroy(comm));
}

int main(int argc, char **argv)
{
	size_t max_bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 16 << 20;
	struct vnpu_link *links;
	uint32_t n = 0;

	if (max_bytes < 4096 || max_bytes % 4) {
		fprintf(stderr, "usage: vnpu-bench-topo [MAX_BYTES]  (>= 4096, a multiple of 4)\n");
		return 2;
	}
	CHECK(vnpu_init(0));
	CHECK(vnpu_device_count(&n));
	if (n > MAX_DEV)
		n = MAX_DEV;
	links = calloc((size_t)n * n, sizeof(*links));
	if (!links)
		return 1;
	CHECK(vnpu_device_get_topology(n, links));
	for (uint32_t i = 0; i < n; i++) {
		CHECK(vnpu_ctx_create(i, 0, &ctx[i]));
		CHECK(vnpu_stream_create(ctx[i], VNPU_PRIORITY_NORMAL, 0, &stream[i]));
	}
	bench_peer(n, links, max_bytes);
	bench_all_reduce(n, links, max_bytes);
	free(links);
	CHECK(vnpu_finalize());
	return 0;
}
