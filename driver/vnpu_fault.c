// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/**
 * DOC: vnpu fault injection
 *
 * Every fallible step of the driver that a client can reach (allocations,
 * address reservation, pinning, mmap offsets, handle and queue ids, dma-buf
 * export and import, scheduler entity and job initialisation, syncobj and
 * fence lookups, fence chain allocation, the syncobj limit) first calls
 * vnpu_fault_inject() with its &enum vnpu_fault_site. The step then fails,
 * with the error the step itself returns when it fails for real, if
 *
 * - the device's debugfs ``fail_nth`` counted down to zero at this call:
 *   writing N makes the Nth next fallible step on the device fail, once
 *   (the knob reads 0 again afterwards, or the steps still to go); or
 * - the kernel's fail_function (CONFIG_FAIL_FUNCTION) targets
 *   vnpu_fault_inject, which is marked for error injection, so every
 *   fail_function policy (probability, interval, times, task filter)
 *   applies to every step at once.
 *
 * debugfs ``fail_sites`` lists each site with the number of failures
 * fail_nth injected there. The older ``fail_alloc_nth`` and
 * ``fail_alloc_above`` knobs fail only buffer creation.
 */

#include <linux/error-injection.h>

#include "vnpu_drv.h"
#include "vnpu_fault.h"

static const struct {
	const char *name;
	int error;
} vnpu_fault_sites[VNPU_FAULT_SITES] = {
	[VNPU_FAULT_OPEN_FILE] = { "open_file", -ENOMEM },
	[VNPU_FAULT_OPEN_CLIENT] = { "open_client", -ENOMEM },
	[VNPU_FAULT_BO_SHMEM] = { "bo_shmem", -ENOMEM },
	[VNPU_FAULT_BO_RESERVE] = { "bo_reserve", -ENOMEM },
	[VNPU_FAULT_BO_PIN] = { "bo_pin", -ENOMEM },
	[VNPU_FAULT_BO_MMAP_OFFSET] = { "bo_mmap_offset", -ENOMEM },
	[VNPU_FAULT_BO_HANDLE] = { "bo_handle", -ENOMEM },
	[VNPU_FAULT_BO_INFO] = { "bo_info", -ENOMEM },
	[VNPU_FAULT_BO_EXPORT] = { "bo_export", -ENOMEM },
	[VNPU_FAULT_BO_IMPORT] = { "bo_import", -ENOMEM },
	[VNPU_FAULT_BO_IMPORT_RESERVE] = { "bo_import_reserve", -ENOSPC },
	[VNPU_FAULT_QUEUE_ALLOC] = { "queue_alloc", -ENOMEM },
	[VNPU_FAULT_QUEUE_STATE] = { "queue_state", -ENOMEM },
	[VNPU_FAULT_QUEUE_CHARGE] = { "queue_charge", -ENOMEM },
	[VNPU_FAULT_QUEUE_ENTITY] = { "queue_entity", -ENOMEM },
	[VNPU_FAULT_QUEUE_ID] = { "queue_id", -ENOMEM },
	[VNPU_FAULT_JOB_ALLOC] = { "job_alloc", -ENOMEM },
	[VNPU_FAULT_JOB_CMDS_COPY] = { "job_cmds_copy", -ENOMEM },
	[VNPU_FAULT_JOB_BO_VMAP] = { "job_bo_vmap", -ENOMEM },
	[VNPU_FAULT_JOB_KERNEL_OP] = { "job_kernel_op", -ENOMEM },
	[VNPU_FAULT_JOB_SCHED_INIT] = { "job_sched_init", -ENOMEM },
	[VNPU_FAULT_JOB_WAITS_COPY] = { "job_waits_copy", -ENOMEM },
	[VNPU_FAULT_JOB_WAIT_FENCE] = { "job_wait_fence", -ENOENT },
	[VNPU_FAULT_JOB_DEPENDENCY] = { "job_dependency", -ENOMEM },
	[VNPU_FAULT_JOB_SIGNAL_SYNCOBJ] = { "job_signal_syncobj", -ENOENT },
	[VNPU_FAULT_JOB_SIGNAL_CHAIN] = { "job_signal_chain", -ENOMEM },
	[VNPU_FAULT_SYNCOBJ_LIMIT] = { "syncobj_create", -ENOMEM },
};

const char *vnpu_fault_site_name(enum vnpu_fault_site site)
{
	return site < VNPU_FAULT_SITES ? vnpu_fault_sites[site].name : "unknown";
}

/* Not inlined: fail_function replaces the whole call. */
noinline int vnpu_fault_inject(struct vnpu_device *vdev, enum vnpu_fault_site site)
{
	/* Counts down only while positive; the call that reaches 0 fails. */
	if (atomic_dec_if_positive(&vdev->fail_nth) != 0)
		return 0;
	atomic_inc(&vdev->fail_hits[site]);
	return vnpu_fault_sites[site].error;
}
ALLOW_ERROR_INJECTION(vnpu_fault_inject, ERRNO);
