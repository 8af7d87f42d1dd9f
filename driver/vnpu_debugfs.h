/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_DEBUGFS_H__
#define __VNPU_DEBUGFS_H__

#include "vnpu_drv.h"

#ifdef CONFIG_DEBUG_FS
void vnpu_debugfs_init(struct vnpu_device *vdev);
#else
static inline void vnpu_debugfs_init(struct vnpu_device *vdev)
{
}
#endif

#endif /* __VNPU_DEBUGFS_H__ */
