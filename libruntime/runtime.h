/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Private state shared by the runtime's source files.
 */
#ifndef VNPU_RUNTIME_PRIVATE_H
#define VNPU_RUNTIME_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <drm/vnpu_accel.h>

#include "vnpu.h"

/* One opened vnpu accel node, used for device-wide queries. */
struct vnpu_rt_device {
	int fd;
	uint32_t physical_index;
	uint32_t accel_minor;
};

enum vnpu_obj_type {
	VNPU_OBJ_CONTEXT = 1,
};

/*
 * Common head of every object a handle names. @refs counts the handle
 * table's reference plus one per call using the object, so destroying an
 * object while another thread uses it frees it only after that call.
 */
struct vnpu_obj {
	atomic_uint refs;
	unsigned int type;
	uint64_t handle;
	void (*release)(struct vnpu_obj *obj);
	void *created_by;	/* return address of the creating call */
};

/* One device or host-pinned allocation of a context (one GEM buffer). */
struct vnpu_alloc {
	uint64_t devptr;
	uint64_t size;		/* as the driver rounded it */
	uint32_t gem_handle;
	uint32_t bo_flags;
	void *host;		/* host mapping, host-pinned allocations only */
	void *created_by;
};

/* A context: one open file of a device, and everything created in it. */
struct vnpu_ctx {
	struct vnpu_obj obj;
	uint32_t device;	/* logical index */
	int fd;
	/* Protects allocs and num_allocs. */
	pthread_mutex_t lock;
	struct vnpu_alloc **allocs;	/* sorted by devptr */
	size_t num_allocs;
	size_t cap_allocs;
};

/* runtime state, device.c */
int vnpu_rt_enter(void);
void vnpu_rt_exit(void);
int vnpu_rt_device(uint32_t logical, struct vnpu_rt_device *dev);

/* DRM_IOCTL_VNPU_GET_PARAM; returns 0 or -errno. */
int vnpu_get_param(int fd, uint32_t param, uint64_t *value);
/* Maps an errno from the driver to a status. */
int vnpu_status_from_errno(int err);
/* Records @status as the calling thread's last error and returns it. */
int vnpu_set_status(int status);

/* handle.c */
int vnpu_handle_alloc(struct vnpu_obj *obj, unsigned int type);
struct vnpu_obj *vnpu_handle_get(uint64_t handle, unsigned int type);
struct vnpu_obj *vnpu_handle_remove(uint64_t handle, unsigned int type);
void vnpu_obj_put(struct vnpu_obj *obj);
unsigned int vnpu_handle_for_each(unsigned int type, void (*fn)(struct vnpu_obj *, void *),
				  void *arg);

/* context.c */
int vnpu_ctx_get(struct vnpu_context handle, struct vnpu_ctx **ctx);
void vnpu_ctx_put(struct vnpu_ctx *ctx);

/* memory.c */
void vnpu_ctx_free_allocs(struct vnpu_ctx *ctx);
unsigned int vnpu_ctx_report_allocs(struct vnpu_ctx *ctx, FILE *out);

/* log.c */
enum vnpu_log_level { VNPU_LOG_ERROR = 1, VNPU_LOG_WARN, VNPU_LOG_INFO, VNPU_LOG_DEBUG };
void vnpu_log(enum vnpu_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void vnpu_describe_caller(void *addr, char *buf, size_t len);

#endif
