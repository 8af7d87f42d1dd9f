/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_MEM_H__
#define __VNPU_MEM_H__

#include "vnpu_drv.h"

struct drm_file;
struct pid;

int vnpu_mem_init(struct vnpu_device *vdev, u64 host_size);

struct vnpu_process *vnpu_process_get_locked(struct vnpu_device *vdev, struct pid *pid);
void vnpu_process_put_locked(struct vnpu_device *vdev, struct vnpu_process *proc);
void vnpu_process_prune_locked(struct vnpu_device *vdev);

int vnpu_quota_get_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int vnpu_quota_set_ioctl(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* __VNPU_MEM_H__ */
