/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * libvnpurt: the vnpu runtime. This is the header applications include:
 * it includes one header per area of the API (vnpu/stream.h,
 * vnpu/graph.h, ...), which each read on their own.
 *
 * Every function returns a status from enum vnpu_status: VNPU_SUCCESS (0)
 * or an error whose number is stable across releases. The runtime is
 * thread-safe: any function may be called from any thread.
 */
#ifndef VNPU_H
#define VNPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define VNPU_VERSION_MAJOR 0
#define VNPU_VERSION_MINOR 3

#include "vnpu/status.h"
#include "vnpu/device.h"
#include "vnpu/context.h"
#include "vnpu/memory.h"
#include "vnpu/stream.h"
#include "vnpu/copy.h"
#include "vnpu/kernel.h"
#include "vnpu/event.h"
#include "vnpu/pool.h"
#include "vnpu/planner.h"
#include "vnpu/topology.h"
#include "vnpu/collective.h"
#include "vnpu/lease.h"
#include "vnpu/graph.h"

#endif /* VNPU_H */
