/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_FAULT_H__
#define __VNPU_FAULT_H__

#include <linux/types.h>

struct vnpu_device;

/*
 * The fallible steps of the driver that fault injection can fail, in the
 * order a typical client meets them. Names in vnpu_fault.c; the list is
 * what debugfs fail_sites prints.
 */
enum vnpu_fault_site {
	VNPU_FAULT_OPEN_FILE,
	VNPU_FAULT_OPEN_CLIENT,
	VNPU_FAULT_BO_SHMEM,
	VNPU_FAULT_BO_RESERVE,
	VNPU_FAULT_BO_PIN,
	VNPU_FAULT_BO_MMAP_OFFSET,
	VNPU_FAULT_BO_HANDLE,
	VNPU_FAULT_BO_INFO,
	VNPU_FAULT_BO_EXPORT,
	VNPU_FAULT_BO_IMPORT,
	VNPU_FAULT_BO_IMPORT_RESERVE,
	VNPU_FAULT_QUEUE_ALLOC,
	VNPU_FAULT_QUEUE_STATE,
	VNPU_FAULT_QUEUE_CHARGE,
	VNPU_FAULT_QUEUE_ENTITY,
	VNPU_FAULT_QUEUE_ID,
	VNPU_FAULT_JOB_ALLOC,
	VNPU_FAULT_JOB_CMDS_COPY,
	VNPU_FAULT_JOB_BO_VMAP,
	VNPU_FAULT_JOB_KERNEL_OP,
	VNPU_FAULT_JOB_SCHED_INIT,
	VNPU_FAULT_JOB_WAITS_COPY,
	VNPU_FAULT_JOB_WAIT_FENCE,
	VNPU_FAULT_JOB_DEPENDENCY,
	VNPU_FAULT_JOB_SIGNAL_SYNCOBJ,
	VNPU_FAULT_JOB_SIGNAL_CHAIN,
	VNPU_FAULT_SYNCOBJ_LIMIT,
	VNPU_FAULT_SITES
};

int vnpu_fault_inject(struct vnpu_device *vdev, enum vnpu_fault_site site);
const char *vnpu_fault_site_name(enum vnpu_fault_site site);

#endif /* __VNPU_FAULT_H__ */
