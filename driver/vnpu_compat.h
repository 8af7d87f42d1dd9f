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

#endif /* __VNPU_COMPAT_H__ */
