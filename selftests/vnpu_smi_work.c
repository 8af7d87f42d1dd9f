// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * A workload of known shape for the vnpu-smi and trace tests
 * (selftests/vnpu_smi.sh):
 *
 *   vnpu_smi_work hold VRAM_MIB HOST_KIB SECONDS [BUSY]
 *	allocates VRAM_MIB buffers of 1 MiB and one host-pinned buffer of
 *	HOST_KIB KiB on device 0, prints "ready PID" and stays SECONDS (or
 *	until SIGTERM). With BUSY=1 it keeps the compute engine busy with
 *	10 ms delays meanwhile.
 *   vnpu_smi_work objects CONTEXTS STREAMS EVENTS BUFFERS SECONDS
 *	opens CONTEXTS contexts on device 0 and in the first creates STREAMS
 *	streams, EVENTS events and BUFFERS buffers of 64 KiB, prints
 *	"ready PID" and stays SECONDS (or until SIGTERM).
 *   vnpu_smi_work grow STEPS SECONDS
 *	prints "ready PID", then on each SIGUSR1 opens STEPS more contexts,
 *	each with a stream, an event and a 64 KiB buffer ("grown N" with N
 *	contexts now); SIGUSR2 destroys them all ("released"). For
 *	--watch's growth verdicts.
 *   vnpu_smi_work churn SECONDS
 *	prints "ready PID", then creates and destroys contexts, each with a
 *	buffer, back to back for SECONDS or until SIGTERM: files that vanish
 *	while vnpu-smi reads them.
 *   vnpu_smi_work trace
 *	records an event, runs a 20 ms delay, records a second event, and
 *	prints "elapsed NS" (for comparison with the VNPU_TRACE file), after
 *	a copy, a fill, a kernel, pool allocations and a second stream's work.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vnpu.h>

static volatile sig_atomic_t done, grow_requests, release_requests;

static void on_signal(int sig)
{
	if (sig == SIGTERM)
		done = 1;
	else if (sig == SIGUSR1)
		grow_requests++;
	else
		release_requests++;
}

static int check(int status, const char *what)
{
	if (status != VNPU_SUCCESS)
		fprintf(stderr, "vnpu_smi_work: %s: %s\n", what, vnpu_status_name(status));
	return status != VNPU_SUCCESS;
}

static int hold(int mib, int host_kib, int seconds, int busy)
{
	struct vnpu_context ctx;
	struct vnpu_stream s;
	time_t end = time(NULL) + seconds;
	uint64_t p;
	void *h;

	if (check(vnpu_init(0), "init") || check(vnpu_ctx_create(0, 0, &ctx), "context"))
		return 1;
	for (int i = 0; i < mib; i++)
		if (check(vnpu_malloc(ctx, 1 << 20, 0, &p), "malloc"))
			return 1;
	if (host_kib && check(vnpu_malloc_host(ctx, (size_t)host_kib << 10, 0, &h), "malloc_host"))
		return 1;
	if (check(vnpu_ctx_default_stream(ctx, &s), "stream"))
		return 1;
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (!done && time(NULL) < end) {
		if (busy) {
			if (check(vnpu_launch_delay(s, 10000000), "delay") ||
			    check(vnpu_stream_synchronize(s, -1), "sync"))
				return 1;
		} else {
			usleep(20000);
		}
	}
	vnpu_finalize();
	return 0;
}

static int objects(int contexts, int streams, int events, int buffers, int seconds)
{
	struct vnpu_context ctx[16];
	struct vnpu_stream s;
	struct vnpu_event e;
	time_t end = time(NULL) + seconds;
	uint64_t p;

	if (contexts < 1 || contexts > 16 || check(vnpu_init(0), "init"))
		return 1;
	for (int i = 0; i < contexts; i++)
		if (check(vnpu_ctx_create(0, 0, &ctx[i]), "context"))
			return 1;
	for (int i = 0; i < streams; i++)
		if (check(vnpu_stream_create(ctx[0], VNPU_PRIORITY_NORMAL, 0, &s), "stream"))
			return 1;
	for (int i = 0; i < events; i++)
		if (check(vnpu_event_create(ctx[0], 0, &e), "event"))
			return 1;
	for (int i = 0; i < buffers; i++)
		if (check(vnpu_malloc(ctx[0], 64 << 10, 0, &p), "malloc"))
			return 1;
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (!done && time(NULL) < end)
		usleep(20000);
	vnpu_finalize();
	return 0;
}

static int grow(int step, int seconds)
{
	struct vnpu_context ctx[64];
	struct vnpu_event ev[64];
	time_t end = time(NULL) + seconds;
	int n = 0, grown = 0, released = 0;

	if (step < 1 || step > 16 || check(vnpu_init(0), "init"))
		return 1;
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (!done && time(NULL) < end) {
		if (grown < grow_requests && n + step <= 64) {
			grown++;
			for (int i = 0; i < step; i++) {
				struct vnpu_stream s;
				uint64_t p;

				if (check(vnpu_ctx_create(0, 0, &ctx[n]), "context"))
					return 1;
				n++;
				if (check(vnpu_stream_create(ctx[n - 1], VNPU_PRIORITY_NORMAL, 0, &s),
					  "stream") ||
				    check(vnpu_event_create(ctx[n - 1], 0, &ev[n - 1]), "event") ||
				    check(vnpu_malloc(ctx[n - 1], 64 << 10, 0, &p), "malloc"))
					return 1;
			}
			printf("grown %d\n", n);
			fflush(stdout);
		} else if (released < release_requests) {
			released++;
			/*
			 * Destroying a context releases its streams and buffers;
			 * events hold their context and go first.
			 */
			while (n--)
				if (check(vnpu_event_destroy(ev[n]), "event destroy") ||
				    check(vnpu_ctx_destroy(ctx[n], 0), "destroy"))
					return 1;
			n = 0;
			printf("released\n");
			fflush(stdout);
		} else {
			usleep(20000);
		}
	}
	vnpu_finalize();
	return 0;
}

static int churn(int seconds)
{
	time_t end = time(NULL) + seconds;
	struct vnpu_context ctx;
	uint64_t p;

	if (check(vnpu_init(0), "init"))
		return 1;
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (!done && time(NULL) < end)
		if (check(vnpu_ctx_create(0, 0, &ctx), "context") ||
		    check(vnpu_malloc(ctx, 64 << 10, 0, &p), "malloc") ||
		    check(vnpu_ctx_destroy(ctx, 0), "destroy"))
			return 1;
	return check(vnpu_finalize(), "finalize");
}

static int trace(void)
{
	struct vnpu_context ctx;
	struct vnpu_stream s, s2;
	struct vnpu_event a, b;
	static uint32_t buf[4096];
	struct vnpu_kernel relu;
	int64_t ns;
	uint64_t d, pooled;

	if (check(vnpu_init(0), "init") || check(vnpu_ctx_create(0, 0, &ctx), "context") ||
	    check(vnpu_stream_create(ctx, VNPU_PRIORITY_NORMAL, 0, &s), "stream") ||
	    check(vnpu_stream_create(ctx, VNPU_PRIORITY_NORMAL, VNPU_STREAM_COPY, &s2), "stream2") ||
	    check(vnpu_malloc(ctx, sizeof(buf), 0, &d), "malloc") ||
	    check(vnpu_event_create(ctx, VNPU_EVENT_TIMING, &a), "event") ||
	    check(vnpu_event_create(ctx, VNPU_EVENT_TIMING, &b), "event"))
		return 1;
	if (check(vnpu_memcpy_htod_async(s2, d, buf, sizeof(buf)), "copy") ||
	    check(vnpu_memset_d32_async(s2, d, 7, 4096), "fill") ||
	    check(vnpu_stream_synchronize(s2, -1), "sync2"))
		return 1;
	if (check(vnpu_event_record(a, s), "record") ||
	    check(vnpu_launch_delay(s, 20000000), "delay") ||
	    check(vnpu_event_record(b, s), "record") ||
	    check(vnpu_stream_synchronize(s, -1), "sync") ||
	    check(vnpu_event_elapsed_ns(a, b, &ns), "elapsed"))
		return 1;
	for (int i = 0; i < 5; i++)
		if (check(vnpu_launch_delay(s, 1000000 * (i + 1)), "delay"))
			return 1;
	if (check(vnpu_stream_synchronize(s, -1), "sync"))
		return 1;
	relu = (struct vnpu_kernel){ .op = VNPU_OP_RELU, .m = 1, .n = 4096, .a = d, .c = d };
	if (check(vnpu_launch_kernel(s, &relu), "kernel") ||
	    check(vnpu_malloc_async(s, 1 << 20, &pooled), "malloc_async") ||
	    check(vnpu_memset_d32_async(s, pooled, 1, 1024), "fill pooled") ||
	    check(vnpu_free_async(s, pooled), "free_async") ||
	    check(vnpu_stream_synchronize(s, -1), "sync"))
		return 1;
	printf("elapsed %lld\n", (long long)ns);
	vnpu_event_destroy(a);
	vnpu_event_destroy(b);
	vnpu_free(ctx, d);
	vnpu_stream_destroy(s, 0);
	vnpu_stream_destroy(s2, 0);
	vnpu_ctx_destroy(ctx, 0);
	return check(vnpu_finalize(), "finalize");
}

int main(int argc, char **argv)
{
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_signal);
	signal(SIGUSR2, on_signal);
	if (argc >= 5 && !strcmp(argv[1], "hold"))
		return hold(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
			    argc > 5 && atoi(argv[5]));
	if (argc == 7 && !strcmp(argv[1], "objects"))
		return objects(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]),
			       atoi(argv[6]));
	if (argc == 4 && !strcmp(argv[1], "grow"))
		return grow(atoi(argv[2]), atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "churn"))
		return churn(atoi(argv[2]));
	if (argc == 2 && !strcmp(argv[1], "trace"))
		return trace();
	fprintf(stderr, "usage: vnpu_smi_work hold MIB HOST_KIB SECONDS [BUSY] | objects CONTEXTS "
		"STREAMS EVENTS BUFFERS SECONDS | grow STEPS SECONDS | churn SECONDS | trace\n");
	return 2;
}
