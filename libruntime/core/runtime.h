/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * core/: the bottom layer of the runtime, and its private state. Owns
 * devices (device.c, locality.c), contexts (context.c), handles (handle.c),
 * streams (stream.c), events (event.c), host callbacks (callback.c),
 * device and host-pinned memory (memory.c), copies (copy.c), kernel
 * launches (kernel.c), and the status, log, lock and trace plumbing every
 * layer uses. It includes no header of a layer above it (mm/, graph/,
 * multi/): where it needs one, that layer registers a hook (below).
 * See Documentation/architecture.rst.
 */
#ifndef VNPU_RUNTIME_PRIVATE_H
#define VNPU_RUNTIME_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <drm/vnpu_accel.h>

#include "addr_map.h"
#include "lock.h"
#include "vnpu.h"

/* One opened vnpu accel node, used for device-wide queries. */
struct vnpu_rt_device {
	int fd;
	uint32_t physical_index;
	uint32_t accel_minor;
};

enum vnpu_obj_type {
	VNPU_OBJ_CONTEXT = 1,
	VNPU_OBJ_STREAM = 2,
	VNPU_OBJ_EVENT = 3,
	VNPU_OBJ_POOL = 4,
	VNPU_OBJ_DATA_CACHE = 5,
	VNPU_OBJ_COMM = 6,
	VNPU_OBJ_GRAPH = 7,
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

struct vnpu_stream_obj;

/* A context: one open file of a device, and everything created in it. */
struct vnpu_ctx {
	struct vnpu_obj obj;
	uint32_t device;	/* logical index */
	int fd;
	/* Protects allocs, num_allocs, cap_allocs, streams, num_streams, default_stream. */
	pthread_mutex_t lock;
	struct vnpu_alloc **allocs;	/* sorted by devptr */
	size_t num_allocs;
	size_t cap_allocs;
	struct vnpu_stream_obj **streams;	/* live streams, each referenced */
	size_t num_streams;
	struct vnpu_stream_obj *default_stream;
	struct vnpu_callbacks *callbacks;	/* callback thread, created on first use */
	/* Under lock: the pools (each referenced, default first) and data caches. */
	struct vnpu_pool_obj *default_pool;
	struct vnpu_pool_obj *pools;
	struct vnpu_data_cache_obj *caches;
	/*
	 * Read without lock by vnpu_malloc_async(): the default pool's handle,
	 * 0 if none; stored under lock by mm/ (pool.c).
	 */
	_Atomic uint64_t default_pool_handle;
	/* The handle of the pool owning each pool segment's addresses (mm/pool.c). */
	struct vnpu_addr_map pool_map;
	/* Under lock: contexts this one may access (vnpu_ctx_enable_peer_access()). */
	uint64_t *peers;
	size_t num_peers;
};

/* A buffer a stream's job still uses, released once the job's point is reached. */
struct vnpu_deferred {
	struct vnpu_alloc *alloc;
	uint64_t point;
	struct vnpu_deferred *next;
};

/* A stream: a driver queue and a timeline syncobj whose point N is job N. */
struct vnpu_stream_obj {
	struct vnpu_obj obj;
	struct vnpu_ctx *ctx;		/* referenced */
	uint32_t queue_id;
	uint32_t timeline;
	int priority;
	uint32_t flags;
	int is_default;
	/*
	 * Protects every field below; taken for each submission, in order.
	 * @seq is also read without it, atomically (vnpu_stream_point()).
	 */
	pthread_mutex_t lock;
	uint64_t seq;			/* point of the last job submitted */
	const char *last_op;		/* what the last job does */
	struct vnpu_stream_error error;	/* sticky */
	struct drm_vnpu_sync waits[DRM_VNPU_MAX_WAITS];	/* for the next job */
	uint32_t num_waits;
	struct vnpu_deferred *deferred;	/* ordered by point */
	int batching;			/* between begin_batch and end_batch */
	struct drm_vnpu_cmd *batch;	/* DRM_VNPU_MAX_CMDS commands gathered */
	uint32_t batch_count;
	const char *batch_op;
	struct vnpu_trace_stream *trace;	/* VNPU_TRACE only, trace.c */
	struct vnpu_alloc *kernel_args;	/* one argument slot per batch command */
};

/* runtime state, device.c */
extern _Atomic int vnpu_rt_call_status;
/* VNPU_SUCCESS between init and finalize, else the error a call gets. */
static inline int vnpu_rt_enter(void)
{
	return atomic_load(&vnpu_rt_call_status);
}
void vnpu_rt_exit(void);
int vnpu_rt_device(uint32_t logical, struct vnpu_rt_device *dev);

/* Whether VNPU_LAUNCH_BLOCKING=1 was set at init. */
int vnpu_launch_blocking(void);

/* DRM_IOCTL_VNPU_GET_PARAM; returns 0 or -errno. */
int vnpu_get_param(int fd, uint32_t param, uint64_t *value);
/* Maps an errno from the driver to a status. */
int vnpu_status_from_errno(int err);
/* The same for a query an older driver lacks (ENOTTY, EINVAL: VNPU_ERROR_DRIVER_VERSION). */
int vnpu_status_from_query_errno(int err);
/* Records @status as the calling thread's last error and returns it. */
int vnpu_set_status(int status);

/* handle.c */
int vnpu_handle_alloc(struct vnpu_obj *obj, unsigned int type);
struct vnpu_obj *vnpu_handle_get(uint64_t handle, unsigned int type);
int vnpu_obj_lookup(uint64_t handle, unsigned int type, struct vnpu_obj **obj);
/*
 * vnpu_obj_lookup() for objects of a type-stable @type (their memory is
 * never freed while the library is loaded, and @refs is not reset while
 * in use: streams, stream.c): tried first without table_lock, taking the
 * reference with a compare-and-exchange and checking the slot again.
 */
int vnpu_obj_lookup_stable(uint64_t handle, unsigned int type, struct vnpu_obj **obj);
/*
 * The fast path of calls that do all their work under one struct
 * vnpu_lock of the object, at @lock_offset in it: the live object @handle
 * names, returned with that lock held and no reference (*@ref = 0), or,
 * if the lock was busy while the table was locked, with one (*@ref = 1:
 * put it after unlocking). It first tries without table_lock: the slot is
 * read lock-free, the object's lock taken, and the slot checked again.
 * Objects of @type must therefore be type-stable: their memory is never
 * freed and stays a lock while the library is loaded (a lookup may lock an
 * object being destroyed), and their release takes and drops that lock
 * before tearing anything down. Pools are (pool.c).
 * Lock order: table_lock, then the object's lock, only ever tried; the
 * lock-free path takes the object's lock holding nothing.
 */
int vnpu_obj_lookup_locked(uint64_t handle, unsigned int type, size_t lock_offset,
			   struct vnpu_obj **obj, int *ref);
struct vnpu_obj *vnpu_handle_remove(uint64_t handle, unsigned int type, void *caller);
void vnpu_obj_put(struct vnpu_obj *obj);
unsigned int vnpu_handle_for_each(unsigned int type, void (*fn)(struct vnpu_obj *, void *),
				  void *arg);

/* context.c */
int vnpu_ctx_get(struct vnpu_context handle, struct vnpu_ctx **ctx);
void vnpu_ctx_put(struct vnpu_ctx *ctx);

void vnpu_ctx_destroy_streams(struct vnpu_ctx *ctx, int abort);
int vnpu_ctx_synchronize(struct vnpu_ctx *ctx, int64_t timeout_ns);
int vnpu_ctx_add_stream(struct vnpu_ctx *ctx, struct vnpu_stream_obj *s);
void vnpu_ctx_remove_stream(struct vnpu_ctx *ctx, struct vnpu_stream_obj *s);
int vnpu_ctx_default_stream_obj(struct vnpu_ctx *ctx, struct vnpu_stream_obj **s);

/* stream.c */
int vnpu_stream_get(struct vnpu_stream handle, struct vnpu_stream_obj **s);
int vnpu_stream_create_in(struct vnpu_ctx *ctx, int priority, uint32_t flags, void *caller,
			  struct vnpu_stream_obj **out);
int vnpu_stream_submit_locked(struct vnpu_stream_obj *s, const struct drm_vnpu_cmd *cmds,
			      uint32_t count, const char *op, uint64_t *point);
int vnpu_stream_flush_locked(struct vnpu_stream_obj *s);
int vnpu_stream_synchronize_obj(struct vnpu_stream_obj *s, int64_t timeout_ns);
int vnpu_wait_point(int fd, uint32_t syncobj, uint64_t point, int64_t timeout_ns);
int vnpu_wait_binary(int fd, uint32_t syncobj, int64_t timeout_ns);
int vnpu_point_status(int fd, uint32_t syncobj, uint64_t point);
void vnpu_stream_reap(struct vnpu_stream_obj *s, uint64_t point);
int vnpu_stream_defer_locked(struct vnpu_stream_obj *s, struct vnpu_alloc *a, uint64_t point);

/* callback.c */
int vnpu_in_callback(void);
void vnpu_callbacks_stop(struct vnpu_ctx *ctx);

/* memory.c */
void vnpu_ctx_free_allocs(struct vnpu_ctx *ctx);
unsigned int vnpu_ctx_report_allocs(struct vnpu_ctx *ctx, FILE *out);
int vnpu_alloc_create(struct vnpu_ctx *ctx, uint64_t size, uint32_t bo_flags, void *caller,
		      struct vnpu_alloc **out);
void vnpu_alloc_release(struct vnpu_ctx *ctx, struct vnpu_alloc *a);
/* Device address of [ptr, ptr+size) if inside a host-pinned allocation, else 0. */
uint64_t vnpu_ctx_host_devptr(struct vnpu_ctx *ctx, const void *ptr, uint64_t size);
/* vnpu_malloc() and vnpu_free() of device memory for a context the caller holds. */
int vnpu_ctx_alloc_device(struct vnpu_ctx *ctx, uint64_t size, void *caller, uint64_t *devptr);
int vnpu_ctx_free_device(struct vnpu_ctx *ctx, uint64_t devptr);
/* Whether [devptr, devptr+size) lies inside one allocation of the context. */
int vnpu_ctx_owns_range(struct vnpu_ctx *ctx, uint64_t devptr, uint64_t size);

/* context.c: the peer list vnpu_ctx_enable_peer_access() keeps. */
/* Whether @ctx enabled peer access to @peer. */
int vnpu_ctx_peer_enabled(struct vnpu_ctx *ctx, struct vnpu_ctx *peer);
/* Position of @peer in @ctx's peer list, or -1; under ctx->lock. */
long vnpu_ctx_find_peer_locked(struct vnpu_ctx *ctx, uint64_t peer);

/* copy.c: a copy from another context's memory, with no peer-access check. */
int vnpu_stream_copy_peer(struct vnpu_stream_obj *s, uint64_t dst, struct vnpu_ctx *src_ctx,
			  uint64_t src, size_t size, const char *op);
/*
 * Imports the allocation of @src_ctx holding [src, src + size) into @ctx:
 * *@addr is @src's address in @ctx, *@handle the import to close (0 when
 * @src_ctx is @ctx). Jobs keep the buffer alive after the close.
 */
int vnpu_import_range(struct vnpu_ctx *ctx, struct vnpu_ctx *src_ctx, uint64_t src,
		      uint64_t size, uint64_t *addr, uint32_t *handle);
/* Submits one command (addresses already resolved) to @s. */
int vnpu_stream_submit_cmd(struct vnpu_stream_obj *s, const struct drm_vnpu_cmd *cmd,
			   const char *op);

/*
 * Hooks: where the core needs a layer above it, that layer registers a
 * function here and the core calls it; the core includes no upper header
 * (Documentation/architecture.rst). ../init.c has every upper layer
 * register its hooks before the first vnpu_init() brings the core up.
 */

/* context.c: called for a context whose streams are drained (mm/ releases its pools). */
void vnpu_ctx_set_teardown_hook(void (*fn)(struct vnpu_ctx *ctx));

/* device.c: where the devices of a process come from when VNPU_POOL_SOCKET is set. */
struct vnpu_device_source {
	/*
	 * The physical indices of the devices this process leased from the
	 * pool (taking a lease first if VNPU_POOL_REQUEST asks for one), at
	 * most VNPU_LEASE_MAX_DEVICES into @out. Returns a status.
	 */
	int (*leased_devices)(uint32_t *out, unsigned int *count);
	/* Releases the lease vnpu_init() took for VNPU_POOL_REQUEST, if any. */
	void (*release)(void);
};
void vnpu_rt_set_device_source(const struct vnpu_device_source *source);
/* vnpu_init() once the hooks are registered. */
int vnpu_rt_init(unsigned int flags);

/* log.c */
enum vnpu_log_level { VNPU_LOG_ERROR = 1, VNPU_LOG_WARN, VNPU_LOG_INFO, VNPU_LOG_DEBUG };
void vnpu_log(enum vnpu_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void vnpu_describe_caller(void *addr, char *buf, size_t len);
/* VNPU_LOG=debug: an object created or destroyed, with the call site @caller. */
void vnpu_log_site(void *caller, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
