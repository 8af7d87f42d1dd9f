/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The process's device memory as the runtime tests read it, settled.
 */
#ifndef VNPU_RT_MEMORY_H
#define VNPU_RT_MEMORY_H

#include <stdint.h>
#include <unistd.h>

#include "vnpu.h"

static inline uint64_t used_now(struct vnpu_context ctx)
{
	struct vnpu_mem_info info = { 0 };

	vnpu_mem_get_info(ctx, &info);
	return info.process_used;
}

/*
 * The process's device memory once the staging buffers of finished copies
 * are gone: the runtime drops them at synchronization, the driver a moment
 * after the job's fence signals. Waits (boundedly) for the value to settle
 * at @expect, or to stay the same when @expect is UINT64_MAX.
 */
static inline uint64_t used_settled(struct vnpu_context ctx, uint64_t expect)
{
	struct vnpu_stream def;
	uint64_t u = 0, prev = UINT64_MAX;
	int same = 0;

	vnpu_ctx_synchronize_all(ctx, -1);
	if (vnpu_ctx_default_stream(ctx, &def) == VNPU_SUCCESS)
		vnpu_stream_synchronize(def, -1);
	/*
	 * Up to 20 s: a loaded host can delay the driver's frees. Settled
	 * means unchanged for 100 ms, not for two readings, so that a free
	 * still pending is not taken into the baseline.
	 */
	for (int i = 0; i < 10000; i++) {
		u = used_now(ctx);
		if (expect != UINT64_MAX && u == expect)
			break;
		same = u == prev ? same + 1 : 0;
		if (expect == UINT64_MAX && same == 50)
			break;
		prev = u;
		usleep(2000);
	}
	return u;
}

#endif /* VNPU_RT_MEMORY_H */
