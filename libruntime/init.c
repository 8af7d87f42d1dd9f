// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The one file above every layer (Documentation/architecture.rst): before
 * the core comes up, each layer above it registers the hooks through which
 * the core reaches it, so that no file of core/ includes an upper header.
 */
#include <pthread.h>

#include "core/runtime.h"
#include "mm/mm.h"
#include "multi/multi.h"

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static void register_hooks(void)
{
	vnpu_mm_register();
	vnpu_multi_register();
}

int vnpu_init(unsigned int flags)
{
	pthread_once(&hooks_once, register_hooks);
	return vnpu_rt_init(flags);
}
