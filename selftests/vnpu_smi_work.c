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
 *   vnpu_smi_work trace
 *	records an event, runs a 20 ms delay, records a second event, and
 *	prints "elapsed NS" (for comparison with the VNPU_TRACE file), after
 *	a copy, a fill and a second stream's work.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vnpu.h>

static volatile sig_atomic_t done;

static void on_term(int sig)
{
	(void)sig;
	done = 1;
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

static int trace(void)
{
	struct vnpu_context ctx;
	struct vnpu_stream s, s2;
	struct vnpu_event a, b;
	static uint32_t buf[4096];
	int64_t ns;
	uint64_t d;

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
	signal(SIGTERM, on_term);
	if (argc >= 5 && !strcmp(argv[1], "hold"))
		return hold(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
			    argc > 5 && atoi(argv[5]));
	if (argc == 2 && !strcmp(argv[1], "trace"))
		return trace();
	fprintf(stderr, "usage: vnpu_smi_work hold MIB HOST_KIB SECONDS [BUSY] | trace\n");
	return 2;
}
