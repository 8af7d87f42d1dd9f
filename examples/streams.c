// SPDX-License-Identifier: MIT
/*
 * streams: two streams of different priority, a timing event pair around
 * simulated device work, a cross-stream dependency through an event, and
 * a host callback that reports when the device got there.
 *
 * Build: cc -std=c11 -Wall -O2 streams.c -o streams -lpthread $(pkg-config --cflags --libs vnpurt)
 */
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include <vnpu.h>

static atomic_int callback_status = -1;

static void done(void *user, int status)
{
	printf("streams: callback: %s reached, status %s\n", (const char *)user,
	       vnpu_status_name(status));
	atomic_store(&callback_status, status);
}

#define TRY(call) do {							\
	int s_ = (call);						\
	if (s_ != VNPU_SUCCESS) {					\
		fprintf(stderr, "streams: %s: %s\n", #call, vnpu_status_name(s_)); \
		return 1;						\
	}								\
} while (0)

int main(void)
{
	struct vnpu_context ctx;
	struct vnpu_stream low, high;
	struct vnpu_event start, stop, ready;
	int64_t ns;

	TRY(vnpu_init(0));
	TRY(vnpu_ctx_create(0, 0, &ctx));
	TRY(vnpu_stream_create(ctx, VNPU_PRIORITY_LOW, 0, &low));
	TRY(vnpu_stream_create(ctx, VNPU_PRIORITY_HIGH, 0, &high));
	TRY(vnpu_event_create(ctx, VNPU_EVENT_TIMING, &start));
	TRY(vnpu_event_create(ctx, VNPU_EVENT_TIMING, &stop));
	TRY(vnpu_event_create(ctx, 0, &ready));

	TRY(vnpu_event_record(start, low));
	TRY(vnpu_launch_delay(low, 20000000));		/* 20 ms of "work" */
	TRY(vnpu_event_record(stop, low));
	TRY(vnpu_event_record(ready, low));
	/* The high-priority stream's work starts only after the low one's. */
	TRY(vnpu_stream_wait_event(high, ready));
	TRY(vnpu_launch_delay(high, 1000000));
	TRY(vnpu_stream_add_callback(high, done, "high-priority stream"));

	TRY(vnpu_stream_synchronize(high, VNPU_TIMEOUT_INFINITE));
	TRY(vnpu_event_elapsed_ns(start, stop, &ns));
	printf("streams: 20 ms of device work took %.1f ms of device time\n", ns / 1e6);
	for (int i = 0; i < 2000 && atomic_load(&callback_status) < 0; i++)
		usleep(1000);
	vnpu_ctx_destroy(ctx, 0);
	vnpu_finalize();
	return atomic_load(&callback_status) == VNPU_SUCCESS && ns >= 20000000 ? 0 : 1;
}
