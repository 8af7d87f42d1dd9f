/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * multi/: work across devices. Owns the links between devices and peer
 * access (topology.c), communicators and collectives (collective.c), and
 * device leases from vnpu-poold (lease.c on the wire protocol of
 * lease_proto.c, which the pool tools share). It may call the core
 * (core/runtime.h) and nothing else. See Documentation/architecture.rst.
 */
#ifndef VNPU_MULTI_H
#define VNPU_MULTI_H

#include <stdint.h>

#include "core/runtime.h"

/*
 * Registers multi/'s hook in the core: with VNPU_POOL_SOCKET, the
 * process's devices are its leases. Called by ../init.c before vnpu_init().
 */
void vnpu_multi_register(void);

/* topology.c: the link from logical device @device to @peer. */
int vnpu_rt_link(uint32_t device, uint32_t peer, struct vnpu_link *link);

#endif
