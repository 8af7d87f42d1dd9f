/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_TOPO_H__
#define __VNPU_TOPO_H__

#include <linux/types.h>

#include <drm/vnpu_accel.h>

int vnpu_topo_check_params(unsigned int num_devices);
unsigned int vnpu_topo_node(unsigned int index);
unsigned int vnpu_topo_board(unsigned int index);
u32 vnpu_topo_class(unsigned int from, unsigned int to);
const char *vnpu_topo_class_name(u32 link_class);
void vnpu_topo_link(unsigned int from, unsigned int to, struct drm_vnpu_link *link);

#endif /* __VNPU_TOPO_H__ */
