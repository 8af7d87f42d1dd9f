/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_QUEUE_H__
#define __VNPU_QUEUE_H__

#include "vnpu_drv.h"

struct drm_file;

void vnpu_queues_release(struct vnpu_device *vdev, struct vnpu_file *vfile);

int vnpu_queue_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int vnpu_queue_destroy_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int vnpu_queue_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int vnpu_submit_ioctl(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* __VNPU_QUEUE_H__ */
