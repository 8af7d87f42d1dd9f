/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Wrappers over kernel APIs whose shape differs between the kernels vnpu
 * builds against. Which shape the target has is found by driver/configure
 * (compile probes), never by kernel version numbers.
 */
#ifndef __VNPU_COMPAT_H__
#define __VNPU_COMPAT_H__

#include <drm/gpu_scheduler.h>

#include "vnpu_kconfig.h"

#ifdef HAVE_DRM_DRIVER_DATE
#define VNPU_DRM_DRIVER_DATE .date = "20261202",
#else
#define VNPU_DRM_DRIVER_DATE
#endif

#ifdef HAVE_MODULE_IMPORT_NS_BARE
#define VNPU_MODULE_IMPORT_DMA_BUF() MODULE_IMPORT_NS(DMA_BUF)
#else
#define VNPU_MODULE_IMPORT_DMA_BUF() MODULE_IMPORT_NS("DMA_BUF")
#endif

/* drm_sched_init() with the arguments vnpu uses; no timeout_wq, no score. */
static inline int vnpu_sched_init(struct drm_gpu_scheduler *sched,
				  const struct drm_sched_backend_ops *ops,
				  u32 credit_limit, long timeout, const char *name,
				  struct device *dev)
{
#ifdef HAVE_DRM_SCHED_INIT_ARGS
	const struct drm_sched_init_args args = {
		.ops = ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = credit_limit,
		.timeout = timeout,
		.name = name,
		.dev = dev,
	};

	return drm_sched_init(sched, &args);
#else
	return drm_sched_init(sched, ops, NULL, DRM_SCHED_PRIORITY_COUNT, credit_limit,
			      0, timeout, NULL, NULL, name, dev);
#endif
}

/* drm_sched_job_init() for a job of one credit. */
static inline int vnpu_sched_job_init(struct drm_sched_job *job,
				      struct drm_sched_entity *entity, void *owner,
				      u64 client_id)
{
#ifdef HAVE_DRM_SCHED_JOB_INIT_CLIENT_ID
	return drm_sched_job_init(job, entity, 1, owner, client_id);
#else
	return drm_sched_job_init(job, entity, 1, owner);
#endif
}

#endif /* __VNPU_COMPAT_H__ */
