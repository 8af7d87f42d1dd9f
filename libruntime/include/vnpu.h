/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * libvnpurt: the vnpu runtime. This is its only public header.
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

#ifdef __cplusplus
extern "C" {
#endif

#define VNPU_VERSION_MAJOR 0
#define VNPU_VERSION_MINOR 2

/**
 * enum vnpu_status - result of every runtime call
 *
 * Numbers are stable. They are grouped by kind: 1xx the caller used the API
 * wrongly, 2xx a resource ran out or is missing, 3xx the state of an object
 * does not allow the call, 5xx the device or driver failed.
 * vnpu_status_string() says in plain words what broke and what to do.
 */
enum vnpu_status {
	VNPU_SUCCESS = 0,
	VNPU_ERROR_INVALID_VALUE = 100,
	VNPU_ERROR_UNINITIALIZED = 101,
	VNPU_ERROR_DEINITIALIZED = 102,
	VNPU_ERROR_INVALID_HANDLE = 103,
	VNPU_ERROR_INVALID_CONFIG = 104,
	VNPU_ERROR_WRONG_CONTEXT = 105,
	VNPU_ERROR_NOT_PERMITTED = 106,
	VNPU_ERROR_PEER_ACCESS_ALREADY_ENABLED = 107,
	VNPU_ERROR_PEER_ACCESS_NOT_ENABLED = 108,
	VNPU_ERROR_INVALID_MODEL = 109,
	VNPU_ERROR_NOT_SUPPORTED = 110,
	VNPU_ERROR_NO_DEVICE = 200,
	VNPU_ERROR_OUT_OF_HOST_MEMORY = 201,
	VNPU_ERROR_PERMISSION_DENIED = 202,
	VNPU_ERROR_OUT_OF_DEVICE_MEMORY = 203,
	VNPU_ERROR_QUOTA_EXCEEDED = 204,
	VNPU_ERROR_DOES_NOT_FIT = 205,
	VNPU_ERROR_TOO_MANY_STREAMS = 206,
	VNPU_ERROR_POOL_UNAVAILABLE = 210,
	VNPU_ERROR_LEASE_REFUSED = 211,
	VNPU_NOT_READY = 300,
	VNPU_ERROR_TIMEOUT = 301,
	VNPU_ERROR_DEVICE_LOST = 500,
	VNPU_ERROR_DRIVER = 501,
	VNPU_ERROR_DRIVER_VERSION = 502,
	VNPU_ERROR_DEVICE_FAULT = 503,
	VNPU_ERROR_JOB_TIMEOUT = 504,
};

/* Kept for symmetry with the other 3xx codes: VNPU_NOT_READY is not an error. */
#define VNPU_ERROR_NOT_READY VNPU_NOT_READY

/** vnpu_status_name() - the enum name of @status, e.g. "VNPU_ERROR_NO_DEVICE". */
const char *vnpu_status_name(int status);

/** vnpu_status_string() - what @status means and what to do about it. */
const char *vnpu_status_string(int status);

/**
 * vnpu_get_last_error() - last error of the calling thread, then reset it
 *
 * Every call that fails records its status per thread. This returns the
 * most recent one and resets it to VNPU_SUCCESS.
 *
 * Return: the last error status, or VNPU_SUCCESS if none since the reset.
 */
int vnpu_get_last_error(void);

/** vnpu_peek_last_error() - like vnpu_get_last_error() without the reset. */
int vnpu_peek_last_error(void);

/**
 * vnpu_init() - start the runtime and find the vnpu devices
 * @flags: reserved, must be 0
 *
 * Counted: every successful vnpu_init() needs one vnpu_finalize(). The first
 * call opens every /dev/accel/accelN whose DRM driver is "vnpu".
 *
 * The environment variable VNPU_VISIBLE_DEVICES, when set, lists the
 * physical device indices the process sees, comma separated, in the order
 * that gives their logical indices ("1,0" makes physical device 1 logical
 * device 0). An entry that is not a number, names no device, or repeats
 * makes vnpu_init() fail with VNPU_ERROR_INVALID_CONFIG; an empty value
 * hides every device.
 *
 * With VNPU_POOL_SOCKET set (the socket of vnpu-poold), the devices come
 * from the device pool: the process sees only the devices of its leases
 * (vnpu_lease_acquire(), or a lease its parent took and passed on with
 * vnpu-pool lease -- COMMAND), in lease order. Without a lease, and with
 * VNPU_POOL_REQUEST set to a lease request ("count=2,mem=64M,mode=shared,
 * placement=spread"; see Documentation/pool.rst), vnpu_init() takes a lease
 * itself and the last vnpu_finalize() releases it. VNPU_VISIBLE_DEVICES
 * then selects and orders among the leased devices only.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for unknown @flags;
 * VNPU_ERROR_INVALID_CONFIG for a bad VNPU_VISIBLE_DEVICES;
 * VNPU_ERROR_NO_DEVICE when no vnpu device is present (or visible);
 * VNPU_ERROR_PERMISSION_DENIED when a vnpu node exists but cannot be opened;
 * VNPU_ERROR_DRIVER_VERSION when the driver's uAPI major differs;
 * VNPU_ERROR_POOL_UNAVAILABLE when VNPU_POOL_SOCKET names no running pool;
 * VNPU_ERROR_LEASE_REFUSED when the pool refused VNPU_POOL_REQUEST;
 * VNPU_ERROR_NO_DEVICE also when the process holds no lease and asked for
 * none.
 */
int vnpu_init(unsigned int flags);

/**
 * vnpu_finalize() - drop one vnpu_init() reference
 *
 * The last reference closes the devices. If VNPU_LEAK_REPORT=1 is set, it
 * first prints the leak report (see vnpu_leak_report()) to stderr. Objects
 * still alive are destroyed (contexts close, their memory is released once
 * the device no longer uses it). Calls made afterwards return
 * VNPU_ERROR_DEINITIALIZED until vnpu_init() is called again.
 *
 * Return: VNPU_SUCCESS, or VNPU_ERROR_UNINITIALIZED without a matching init.
 */
int vnpu_finalize(void);

/**
 * vnpu_device_count() - number of vnpu devices found at init
 * @count: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE for a NULL @count, or the
 * init state errors.
 */
int vnpu_device_count(uint32_t *count);

/** enum vnpu_health - device health, as the driver reports it */
enum vnpu_health {
	VNPU_HEALTH_OK = 0,
	VNPU_HEALTH_DEGRADED = 1,
	VNPU_HEALTH_NEEDS_RESET = 2,
};

/**
 * struct vnpu_device_properties - facts about one device, read from the driver
 * @name: "vnpuN", N being @physical_index
 * @logical_index: index the application uses (see VNPU_VISIBLE_DEVICES)
 * @physical_index: index of the device inside the driver
 * @accel_minor: N of /dev/accel/accelN
 * @uapi_major: major version of the driver's uAPI
 * @uapi_minor: minor version of the driver's uAPI
 * @vram_total: device memory in bytes
 * @compute_engines: number of compute engines
 * @copy_engines: number of copy engines
 * @numa_node: host NUMA node, -1 for none
 * @health: current health
 */
struct vnpu_device_properties {
	char name[32];
	uint32_t logical_index;
	uint32_t physical_index;
	uint32_t accel_minor;
	uint32_t uapi_major;
	uint32_t uapi_minor;
	uint64_t vram_total;
	uint32_t compute_engines;
	uint32_t copy_engines;
	int32_t numa_node;
	enum vnpu_health health;
};

/**
 * vnpu_device_get_properties() - read a device's facts from the driver
 * @index: 0..count-1; devices are ordered by physical index
 * @props: out
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a bad @index or NULL
 * @props; VNPU_ERROR_DEVICE_LOST if the device was unplugged;
 * VNPU_ERROR_DRIVER if the driver refused the query.
 */
int vnpu_device_get_properties(uint32_t index, struct vnpu_device_properties *props);

/**
 * struct vnpu_context - a context handle
 * @handle: opaque; 0 is never a valid context
 *
 * A context is the application's private part of one device: its own
 * open file of the device, the memory allocated in it and (later) its
 * streams. Handles carry a generation: a destroyed context's handle is
 * rejected with VNPU_ERROR_INVALID_HANDLE, never reused.
 */
struct vnpu_context {
	uint64_t handle;
};

/**
 * vnpu_ctx_create() - create a context on a device
 * @device: logical device index, or VNPU_DEVICE_ANY for the device nearest
 *	to the calling thread's CPU (vnpu_device_choose_nearest())
 * @flags: reserved, must be 0
 * @ctx: out
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a bad @device, @flags
 * or NULL @ctx; VNPU_ERROR_PERMISSION_DENIED if the device cannot be
 * opened; VNPU_ERROR_OUT_OF_HOST_MEMORY; init state errors.
 */
int vnpu_ctx_create(uint32_t device, uint32_t flags, struct vnpu_context *ctx);

/**
 * vnpu_ctx_destroy() - destroy a context and everything in it
 * @ctx: the context
 * @flags: reserved, must be 0
 *
 * Frees every allocation of the context. Memory that queued device work
 * still uses returns to the device only when that work is done: the
 * driver holds it until then, so destroying without synchronizing is safe.
 * A call using @ctx concurrently in another thread completes first.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_HANDLE for a stale or unknown
 * handle; init state errors.
 */
int vnpu_ctx_destroy(struct vnpu_context ctx, uint32_t flags);

/**
 * vnpu_ctx_set_current() - make @ctx the calling thread's current context
 * @ctx: a context, or { 0 } to clear
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_ctx_set_current(struct vnpu_context ctx);

/**
 * vnpu_ctx_get_current() - the calling thread's current context
 * @ctx: out; { 0 } if none was set or it was destroyed since
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_VALUE for NULL @ctx.
 */
int vnpu_ctx_get_current(struct vnpu_context *ctx);

/**
 * vnpu_ctx_get_device() - the logical device of a context
 * @ctx: the context
 * @device: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_HANDLE or VNPU_ERROR_INVALID_VALUE.
 */
int vnpu_ctx_get_device(struct vnpu_context ctx, uint32_t *device);

/**
 * vnpu_malloc() - allocate device memory (VRAM)
 * @ctx: the context that owns the allocation
 * @size: bytes, > 0; the driver rounds up to a page
 * @flags: reserved, must be 0
 * @devptr: out, the device address
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for size 0, a size larger
 * than the device, bad @flags or NULL @devptr; VNPU_ERROR_OUT_OF_DEVICE_MEMORY
 * when no free range is large enough (full or fragmented);
 * VNPU_ERROR_QUOTA_EXCEEDED when the process's device-memory quota would
 * be exceeded; VNPU_ERROR_INVALID_HANDLE; VNPU_ERROR_DEVICE_LOST.
 */
int vnpu_malloc(struct vnpu_context ctx, uint64_t size, uint32_t flags, uint64_t *devptr);

/**
 * vnpu_free() - free device memory from vnpu_malloc()
 * @ctx: the context that allocated it
 * @devptr: the address vnpu_malloc() returned
 *
 * Safe while queued device work still uses the memory: it returns to the
 * device when that work is done.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when @devptr is not the
 * start of a device allocation of @ctx; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_free(struct vnpu_context ctx, uint64_t devptr);

/**
 * vnpu_malloc_host() - allocate host-pinned memory the device can reach
 * @ctx: the context that owns the allocation
 * @size: bytes, > 0
 * @flags: reserved, must be 0
 * @ptr: out, host address of the memory
 *
 * Host-pinned memory is the fast path for copies between host and device.
 *
 * Return: as vnpu_malloc(), except that the quota does not apply.
 */
int vnpu_malloc_host(struct vnpu_context ctx, size_t size, uint32_t flags, void **ptr);

/**
 * vnpu_free_host() - free memory from vnpu_malloc_host()
 * @ctx: the context that allocated it
 * @ptr: the pointer vnpu_malloc_host() returned
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when @ptr is not the start
 * of a host-pinned allocation of @ctx; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_free_host(struct vnpu_context ctx, void *ptr);

/**
 * struct vnpu_mem_info - device memory as the driver reports it
 * @total: device memory in bytes
 * @free: bytes not allocated by anyone
 * @largest_free: largest allocation that can succeed now (fragmentation)
 * @process_used: bytes allocated by this process on the device
 * @process_peak: highest @process_used
 * @soft_limit: this process's enforced quota, UINT64_MAX for none
 * @hard_limit: ceiling of @soft_limit, UINT64_MAX for none
 */
struct vnpu_mem_info {
	uint64_t total;
	uint64_t free;
	uint64_t largest_free;
	uint64_t process_used;
	uint64_t process_peak;
	uint64_t soft_limit;
	uint64_t hard_limit;
};

/**
 * vnpu_mem_get_info() - device memory of @ctx's device and this process's use
 * @ctx: a context of the device
 * @info: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_HANDLE, VNPU_ERROR_INVALID_VALUE,
 * VNPU_ERROR_DEVICE_LOST.
 */
int vnpu_mem_get_info(struct vnpu_context ctx, struct vnpu_mem_info *info);

/**
 * vnpu_mem_set_soft_limit() - set this process's device-memory quota
 * @ctx: a context of the device
 * @bytes: new soft limit, at most the hard limit; UINT64_MAX for none
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when @bytes is above the
 * hard limit; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_mem_set_soft_limit(struct vnpu_context ctx, uint64_t bytes);

/**
 * vnpu_leak_report() - list the objects still alive
 * @out: where to print, e.g. stderr; NULL prints nothing
 * @count: out, number of live contexts and allocations; may be NULL
 *
 * Prints one line per live context and allocation with the function that
 * created it.
 *
 * Return: VNPU_SUCCESS or init state errors.
 */
int vnpu_leak_report(FILE *out, unsigned int *count);

/* Stream priorities; work of a higher-priority stream is started first. */
#define VNPU_PRIORITY_LOW (-1)
#define VNPU_PRIORITY_NORMAL 0
#define VNPU_PRIORITY_HIGH 1

/* vnpu_stream_create(): run the stream's work on a copy engine. */
#define VNPU_STREAM_COPY 0x1u
#define VNPU_STREAM_FLAGS VNPU_STREAM_COPY

/* vnpu_stream_destroy(), vnpu_ctx_destroy(): do not wait for queued work. */
#define VNPU_DESTROY_ABORT 0x1u

/* Wait forever, for the timeout_ns arguments. */
#define VNPU_TIMEOUT_INFINITE (-1)

/**
 * struct vnpu_stream - a stream handle
 * @handle: opaque; 0 is never a valid stream
 *
 * A stream runs its work in the order it was submitted. Several threads
 * may submit to one stream: each call is one unit, and units run in the
 * order the calls entered the stream (calls serialize on the stream).
 */
struct vnpu_stream {
	uint64_t handle;
};

/**
 * vnpu_stream_create() - create a stream in a context
 * @ctx: the context
 * @priority: VNPU_PRIORITY_LOW, _NORMAL or _HIGH; anything else is an error
 * @flags: 0 or VNPU_STREAM_COPY
 * @stream: out
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a bad @priority,
 * @flags or NULL @stream; VNPU_ERROR_TOO_MANY_STREAMS when the process
 * reached the driver's queue limit; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_create(struct vnpu_context ctx, int priority, uint32_t flags,
		       struct vnpu_stream *stream);

/**
 * vnpu_ctx_default_stream() - the context's default stream
 * @ctx: the context
 * @stream: out; created on first use at normal priority
 *
 * The default stream is an ordinary stream (no implicit barriers with
 * other streams); synchronous copies run on it. It cannot be destroyed
 * other than with its context.
 *
 * Return: VNPU_SUCCESS or the errors of vnpu_stream_create().
 */
int vnpu_ctx_default_stream(struct vnpu_context ctx, struct vnpu_stream *stream);

/**
 * vnpu_stream_destroy() - destroy a stream
 * @stream: the stream
 * @flags: 0 waits for the stream's work first; VNPU_DESTROY_ABORT does not
 *
 * Either way nothing is freed while the device still uses it.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for bad @flags or the
 * default stream; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_destroy(struct vnpu_stream stream, uint32_t flags);

/**
 * vnpu_stream_synchronize() - wait for all work submitted to a stream
 * @stream: the stream
 * @timeout_ns: longest wait in ns; 0 polls; VNPU_TIMEOUT_INFINITE
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_TIMEOUT (the work goes on); the
 * stream's sticky error (see vnpu_stream_get_error()); VNPU_ERROR_NOT_PERMITTED
 * from inside a host callback; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_synchronize(struct vnpu_stream stream, int64_t timeout_ns);

/**
 * vnpu_stream_query() - whether a stream's work is done
 * @stream: the stream
 *
 * Return: VNPU_SUCCESS when done, VNPU_NOT_READY when not (not recorded as
 * an error), or the stream's error.
 */
int vnpu_stream_query(struct vnpu_stream stream);

/**
 * struct vnpu_stream_error - the sticky error of a stream
 * @status: VNPU_SUCCESS, or the first asynchronous failure
 * @point: sequence number of the failed unit of work (1 = first submitted)
 * @operation: the runtime call that submitted it, e.g. "vnpu_memcpy_htod_async"
 *
 * Once work on a stream fails, every later synchronize of the stream and
 * every later submission to it returns @status; destroy the stream (or
 * its context) to go on.
 */
struct vnpu_stream_error {
	int status;
	uint64_t point;
	const char *operation;
};

/**
 * vnpu_stream_get_error() - read a stream's sticky error
 * @stream: the stream
 * @error: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_get_error(struct vnpu_stream stream, struct vnpu_stream_error *error);

/**
 * vnpu_stream_get_context() - the context a stream belongs to
 * @stream: the stream
 * @ctx: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_get_context(struct vnpu_stream stream, struct vnpu_context *ctx);

/**
 * vnpu_memcpy_htod_async() - copy host memory to device memory, in stream order
 * @stream: the stream
 * @dst: device address inside one vnpu_malloc() allocation of the stream's context
 * @src: host memory: a vnpu_malloc_host() allocation of the context (copied
 *	by the device) or any other host memory (copied into a pinned staging
 *	buffer before the call returns, so @src may be reused at once)
 * @size: bytes, > 0
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL @src, size 0 or
 * a range outside the context's allocations; the stream's sticky error;
 * VNPU_ERROR_OUT_OF_HOST_MEMORY; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_memcpy_htod_async(struct vnpu_stream stream, uint64_t dst, const void *src,
			   size_t size);

/**
 * vnpu_memcpy_dtoh_async() - copy device memory to host memory, in stream order
 * @stream: the stream
 * @dst: host memory: a vnpu_malloc_host() allocation of the context, which
 *	the device writes when the stream gets there (the call does not wait),
 *	or any other host memory, filled through a pinned staging buffer: then
 *	the call waits for the stream to reach the copy, so the data is in
 *	@dst when it returns (use host-pinned memory for copies that overlap)
 * @src: device address inside one allocation of the context
 * @size: bytes, > 0
 *
 * Return: as vnpu_memcpy_htod_async().
 */
int vnpu_memcpy_dtoh_async(struct vnpu_stream stream, void *dst, uint64_t src, size_t size);

/**
 * vnpu_memcpy_dtod_async() - copy between device allocations, in stream order
 * @stream: the stream
 * @dst: device address inside one allocation of the context
 * @src: device address inside one allocation of the context
 * @size: bytes, > 0
 *
 * Return: as vnpu_memcpy_htod_async().
 */
int vnpu_memcpy_dtod_async(struct vnpu_stream stream, uint64_t dst, uint64_t src, size_t size);

/**
 * vnpu_memset_d32_async() - fill device memory with a 32-bit value
 * @stream: the stream
 * @dst: device address, 4-byte aligned, inside one allocation of the context
 * @value: the value written to every 32-bit word
 * @count: number of 32-bit words, > 0
 *
 * Return: as vnpu_memcpy_htod_async().
 */
int vnpu_memset_d32_async(struct vnpu_stream stream, uint64_t dst, uint32_t value,
			  size_t count);

/**
 * vnpu_memcpy_htod() - synchronous vnpu_memcpy_htod_async() on the default stream
 * @ctx: the context
 * @dst: as for vnpu_memcpy_htod_async()
 * @src: as for vnpu_memcpy_htod_async()
 * @size: as for vnpu_memcpy_htod_async()
 *
 * Returns once the copy is done.
 *
 * Return: as vnpu_memcpy_htod_async(), plus the errors of vnpu_stream_synchronize().
 */
int vnpu_memcpy_htod(struct vnpu_context ctx, uint64_t dst, const void *src, size_t size);

/** vnpu_memcpy_dtoh() - synchronous vnpu_memcpy_dtoh_async() on the default stream */
int vnpu_memcpy_dtoh(struct vnpu_context ctx, void *dst, uint64_t src, size_t size);

/** vnpu_memcpy_dtod() - synchronous vnpu_memcpy_dtod_async() on the default stream */
int vnpu_memcpy_dtod(struct vnpu_context ctx, uint64_t dst, uint64_t src, size_t size);

/** vnpu_memset_d32() - synchronous vnpu_memset_d32_async() on the default stream */
int vnpu_memset_d32(struct vnpu_context ctx, uint64_t dst, uint32_t value, size_t count);

/**
 * vnpu_memcpy_peer_async() - copy from memory of another context, in stream order
 * @stream: the stream; @dst lies in its context
 * @dst: device address inside one allocation of the stream's context
 * @src_ctx: the context owning @src, on the same or another device
 * @src: device address inside one device or host-pinned allocation of @src_ctx
 * @size: bytes, > 0
 *
 * The stream's device reads the source through a dma-buf of the source
 * buffer; the runtime sets that up per call. The source must not be freed
 * before the copy is done (the driver keeps it alive if it is). When
 * @src_ctx is on another device, the stream's context must have enabled
 * peer access to it (vnpu_ctx_enable_peer_access()); the copy then goes
 * over the link between the devices, at its bandwidth and latency.
 *
 * Return: as vnpu_memcpy_htod_async(); VNPU_ERROR_PEER_ACCESS_NOT_ENABLED
 * for another device without peer access.
 */
int vnpu_memcpy_peer_async(struct vnpu_stream stream, uint64_t dst, struct vnpu_context src_ctx,
			   uint64_t src, size_t size);

/** vnpu_memcpy_peer() - synchronous vnpu_memcpy_peer_async() on @ctx's default stream */
int vnpu_memcpy_peer(struct vnpu_context ctx, uint64_t dst, struct vnpu_context src_ctx,
		     uint64_t src, size_t size);

/**
 * vnpu_ctx_synchronize_all() - wait for the work of every stream of a context
 * @ctx: the context
 * @timeout_ns: longest wait per stream in ns; VNPU_TIMEOUT_INFINITE
 *
 * Return: VNPU_SUCCESS, the first stream error, VNPU_ERROR_TIMEOUT,
 * VNPU_ERROR_NOT_PERMITTED inside a callback, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_ctx_synchronize_all(struct vnpu_context ctx, int64_t timeout_ns);

/**
 * vnpu_device_synchronize() - wait for the work of every context on a device
 * @device: logical device index
 * @timeout_ns: longest wait per stream in ns; VNPU_TIMEOUT_INFINITE
 *
 * Return: as vnpu_ctx_synchronize_all(), VNPU_ERROR_INVALID_VALUE for a bad
 * @device.
 */
int vnpu_device_synchronize(uint32_t device, int64_t timeout_ns);

/**
 * vnpu_device_reset() - reset a device (needs root)
 * @device: logical device index
 *
 * The driver fails the device's running and queued work (their streams get
 * a sticky VNPU_ERROR_DEVICE_FAULT) and returns its health to OK; queues of
 * work that timed out stay refused. Use it when vnpu_device_get_health()
 * says VNPU_HEALTH_NEEDS_RESET.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_PERMISSION_DENIED without root;
 * VNPU_ERROR_INVALID_VALUE for a bad @device; VNPU_ERROR_DEVICE_LOST.
 */
int vnpu_device_reset(uint32_t device);

/**
 * vnpu_device_get_health() - the device's health as the driver reports it now
 * @device: logical device index
 * @health: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_DEVICE_LOST.
 */
int vnpu_device_get_health(uint32_t device, enum vnpu_health *health);

/**
 * vnpu_stream_begin_batch() - gather the stream's next operations into one job
 * @stream: the stream
 *
 * Until vnpu_stream_end_batch(), copies, fills and launches on @stream are
 * collected and submitted to the driver together, as one job (or several
 * of DRM_VNPU_MAX_CMDS commands each), which saves a system call and a
 * scheduler round trip per operation. Anything that must see the work in
 * the driver — synchronize, query, recording an event, adding a callback,
 * a copy into pageable memory — submits what was gathered first. Other
 * threads' operations on the stream join the batch too.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when a batch is already
 * open; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_begin_batch(struct vnpu_stream stream);

/**
 * vnpu_stream_end_batch() - submit what the batch gathered and close it
 * @stream: the stream
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when no batch is open; the
 * submission's error; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_stream_end_batch(struct vnpu_stream stream);

/**
 * enum vnpu_op - the device's built-in operators
 * @VNPU_OP_ADD: C = A + B, elementwise (m x n)
 * @VNPU_OP_SUB: C = A - B
 * @VNPU_OP_MUL: C = A * B
 * @VNPU_OP_DIV: C = A / B
 * @VNPU_OP_MAX: C = max(A, B)
 * @VNPU_OP_MIN: C = min(A, B)
 * @VNPU_OP_AXPY: C = alpha * A + B
 * @VNPU_OP_RELU: C = max(A, 0)
 * @VNPU_OP_GELU: C = GELU(A), tanh approximation
 * @VNPU_OP_EXP: C = exp(A)
 * @VNPU_OP_SOFTMAX: each row of C = softmax of that row of A
 * @VNPU_OP_REDUCE_SUM: C[i] = sum of row i of A (C is a vector of m)
 * @VNPU_OP_REDUCE_MAX: C[i] = max of row i of A
 * @VNPU_OP_GEMM: C = alpha * op(A) op(B) + beta * C, A m x k, B k x n
 * @VNPU_OP_GEMM_I8: GEMM on int8 A and B with int32 C and accumulation
 * @VNPU_OP_BIAS_ADD: C[i][j] = A[i][j] + B[j] (B a vector of n)
 * @VNPU_OP_T_COPY: C[i] = A[i], 4-byte elements (transpose, expand, any
 *	layout change)
 * @VNPU_OP_T_ADD: C[i] = A[i] + B[i], broadcasting by stride 0
 * @VNPU_OP_T_SUB: C[i] = A[i] - B[i]
 * @VNPU_OP_T_MUL: C[i] = A[i] * B[i]
 * @VNPU_OP_T_DIV: C[i] = A[i] / B[i]
 * @VNPU_OP_T_MAX: C[i] = max(A[i], B[i])
 * @VNPU_OP_T_MIN: C[i] = min(A[i], B[i])
 * @VNPU_OP_T_RELU: C[i] = max(A[i], 0)
 * @VNPU_OP_T_SIGMOID: C[i] = 1 / (1 + exp(-A[i]))
 * @VNPU_OP_T_TANH: C[i] = tanh(A[i])
 * @VNPU_OP_T_EXP: C[i] = exp(A[i])
 * @VNPU_OP_T_REDUCE_SUM: sum of A over the dimensions in the axes mask
 * @VNPU_OP_T_REDUCE_MEAN: mean of A over the axes
 * @VNPU_OP_T_REDUCE_MAX: maximum of A over the axes
 * @VNPU_OP_T_SOFTMAX: softmax of A over the axes
 * @VNPU_OP_T_DOT: sum of A[i] * B[i] over the axes (batched matrix product)
 * @VNPU_OP_T_IM2COL: the columns of a 2-D convolution of N x C x H x W
 * @VNPU_OP_T_MAXPOOL: 2-D max pooling of N x C x H x W
 * @VNPU_OP_T_AVGPOOL: 2-D average pooling of N x C x H x W
 * @VNPU_OP_T_BATCHNORM: inference batch normalization per channel
 *
 * Data is fp32 (IEEE single) and row-major unless said otherwise; the
 * numbers are the driver's (uapi/drm/vnpu_accel.h has the exact rules).
 * The operators up to @VNPU_OP_BIAS_ADD are launched with
 * vnpu_launch_kernel(), the VNPU_OP_T_* tensor operators with
 * vnpu_launch_tensor().
 */
enum vnpu_op {
	VNPU_OP_ADD = 1,
	VNPU_OP_SUB = 2,
	VNPU_OP_MUL = 3,
	VNPU_OP_DIV = 4,
	VNPU_OP_MAX = 5,
	VNPU_OP_MIN = 6,
	VNPU_OP_AXPY = 7,
	VNPU_OP_RELU = 8,
	VNPU_OP_GELU = 9,
	VNPU_OP_EXP = 10,
	VNPU_OP_SOFTMAX = 11,
	VNPU_OP_REDUCE_SUM = 12,
	VNPU_OP_REDUCE_MAX = 13,
	VNPU_OP_GEMM = 14,
	VNPU_OP_GEMM_I8 = 15,
	VNPU_OP_BIAS_ADD = 16,
	VNPU_OP_T_COPY = 0x11,
	VNPU_OP_T_ADD = 0x12,
	VNPU_OP_T_SUB = 0x13,
	VNPU_OP_T_MUL = 0x14,
	VNPU_OP_T_DIV = 0x15,
	VNPU_OP_T_MAX = 0x16,
	VNPU_OP_T_MIN = 0x17,
	VNPU_OP_T_RELU = 0x18,
	VNPU_OP_T_SIGMOID = 0x19,
	VNPU_OP_T_TANH = 0x1a,
	VNPU_OP_T_EXP = 0x1b,
	VNPU_OP_T_REDUCE_SUM = 0x1c,
	VNPU_OP_T_REDUCE_MEAN = 0x1d,
	VNPU_OP_T_REDUCE_MAX = 0x1e,
	VNPU_OP_T_SOFTMAX = 0x1f,
	VNPU_OP_T_DOT = 0x20,
	VNPU_OP_T_IM2COL = 0x21,
	VNPU_OP_T_MAXPOOL = 0x22,
	VNPU_OP_T_AVGPOOL = 0x23,
	VNPU_OP_T_BATCHNORM = 0x24,
};

/* struct vnpu_kernel flags for the GEMMs: A (B) is stored transposed. */
#define VNPU_GEMM_TRANS_A 0x1u
#define VNPU_GEMM_TRANS_B 0x2u

/**
 * struct vnpu_kernel - one operator launch
 * @op: the operator
 * @flags: VNPU_GEMM_TRANS_* for the GEMMs, else 0
 * @m: rows of the output (rows of the input for reductions)
 * @n: columns of the output and of elementwise inputs
 * @k: inner dimension of the GEMMs, 0 for other operators
 * @alpha: AXPY and GEMM scale
 * @beta: GEMM scale of the old C
 * @alpha_i32: GEMM_I8 alpha
 * @beta_i32: GEMM_I8 beta
 * @a: device address of A
 * @b: device address of B, 0 for operators without B
 * @c: device address of C, the output
 * @lda: elements between rows of A; 0 for dense rows
 * @ldb: elements between rows of B; 0 for dense rows
 * @ldc: elements between rows of C; 0 for dense rows
 *
 * Every array must lie inside one allocation of the stream's context.
 */
struct vnpu_kernel {
	enum vnpu_op op;
	uint32_t flags;
	uint32_t m, n, k;
	float alpha, beta;
	int32_t alpha_i32, beta_i32;
	uint64_t a, b, c;
	uint32_t lda, ldb, ldc;
};

/**
 * vnpu_launch_kernel() - run a built-in operator on a stream
 * @stream: the stream
 * @kernel: the launch; checked before anything is submitted
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for an unknown operator,
 * a zero dimension, flags or @k where the operator takes none, or an array
 * outside the context's allocations; the stream's sticky error;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_launch_kernel(struct vnpu_stream stream, const struct vnpu_kernel *kernel);

/* Most dimensions of a tensor operator. */
#define VNPU_TENSOR_MAX_DIMS 6
/* struct vnpu_tensor flags of VNPU_OP_T_AVGPOOL: padding counts. */
#define VNPU_TENSOR_COUNT_INCLUDE_PAD 0x1u

/**
 * struct vnpu_tensor_window - window of IM2COL, MAXPOOL and AVGPOOL
 * @kernel_h: window height
 * @kernel_w: window width
 * @stride_h: vertical step between windows
 * @stride_w: horizontal step between windows
 * @dilation_h: step between the rows of a window (1: dense)
 * @dilation_w: step between the columns of a window
 * @pad_top: padding rows before the input
 * @pad_left: padding columns before the input
 * @pad_bottom: padding rows after the input
 * @pad_right: padding columns after the input
 * @out_h: output rows, chosen by the caller (floor or ceil mode)
 * @out_w: output columns
 *
 * Output (oh, ow) looks at input rows oh * stride_h - pad_top + i *
 * dilation_h for i < kernel_h, and the columns likewise; positions outside
 * the input are padding (0 for IM2COL, ignored by the pools).
 */
struct vnpu_tensor_window {
	uint32_t kernel_h, kernel_w;
	uint32_t stride_h, stride_w;
	uint32_t dilation_h, dilation_w;
	uint32_t pad_top, pad_left, pad_bottom, pad_right;
	uint32_t out_h, out_w;
};

/**
 * struct vnpu_tensor_norm - per-channel arrays of VNPU_OP_T_BATCHNORM
 * @scale: device address of shape[axis] scales
 * @bias: device address of shape[axis] biases
 * @mean: device address of shape[axis] means
 * @var: device address of shape[axis] variances
 * @epsilon: added to the variance
 * @axis: the channel dimension
 */
struct vnpu_tensor_norm {
	uint64_t scale, bias, mean, var;
	float epsilon;
	uint32_t axis;
};

/**
 * struct vnpu_tensor - one N-d tensor operator launch
 * @op: a VNPU_OP_T_* operator
 * @flags: VNPU_TENSOR_COUNT_INCLUDE_PAD for VNPU_OP_T_AVGPOOL, else 0
 * @ndim: dimensions of the iteration space, 1 to VNPU_TENSOR_MAX_DIMS
 * @axes: bit d set: dimension d is reduced (REDUCE_*), normalized
 *	(SOFTMAX) or contracted (DOT); 0 for the other operators
 * @shape: sizes of the iteration space, the last dimension varying
 *	fastest; N, C, H, W of the input for the window operators
 * @a: device address of A
 * @b: device address of B, 0 for operators without B
 * @c: device address of C, the output
 * @stride_a: element strides of A per dimension; 0 broadcasts
 * @stride_b: element strides of B, all 0 without B
 * @stride_c: element strides of C; 0 on the reduced axes. The window
 *	operators use 4 (pools: N, C, out_h, out_w) or 6 (IM2COL: N, C,
 *	kernel_h, kernel_w, out_h, out_w)
 * @window: IM2COL, MAXPOOL and AVGPOOL; zero for the others
 * @norm: BATCHNORM; zero for the others
 *
 * Element i of a tensor is at address + 4 * (i0 * stride[0] + ...).
 * Every array must lie inside one allocation of the stream's context.
 * Members past @ndim and members the operator does not use must be zero.
 * The complete rules are those of struct drm_vnpu_tensor_args in
 * uapi/drm/vnpu_accel.h.
 */
struct vnpu_tensor {
	enum vnpu_op op;
	uint32_t flags;
	uint32_t ndim;
	uint32_t axes;
	uint32_t shape[VNPU_TENSOR_MAX_DIMS];
	uint64_t a, b, c;
	uint32_t stride_a[VNPU_TENSOR_MAX_DIMS];
	uint32_t stride_b[VNPU_TENSOR_MAX_DIMS];
	uint32_t stride_c[VNPU_TENSOR_MAX_DIMS];
	struct vnpu_tensor_window window;
	struct vnpu_tensor_norm norm;
};

/**
 * vnpu_launch_tensor() - run an N-d tensor operator on a stream
 * @stream: the stream
 * @tensor: the launch
 *
 * The operator, the dimensions and that every array lies in the stream's
 * context are checked before anything is submitted; the driver checks the
 * rest when the work is submitted (inside a batch: when the batch is).
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for an operator that is
 * not a tensor operator, bad dimensions or strides, or an array outside
 * the context's allocations; the stream's sticky error;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_launch_tensor(struct vnpu_stream stream, const struct vnpu_tensor *tensor);

/**
 * vnpu_launch_delay() - occupy the stream's engine for a time (simulated work)
 * @stream: the stream
 * @ns: nanoseconds, 1 to 10 s
 *
 * Stands in for a long device operation in tests, demos and scheduling
 * experiments: the engine is busy, the stream's later work waits.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for @ns 0 or above 10 s;
 * the stream's sticky error; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_launch_delay(struct vnpu_stream stream, uint64_t ns);

/* vnpu_event_create(): the event records device timestamps. */
#define VNPU_EVENT_TIMING 0x1u
#define VNPU_EVENT_FLAGS VNPU_EVENT_TIMING

/**
 * struct vnpu_event - an event handle
 * @handle: opaque; 0 is never a valid event
 *
 * An event marks a point in a stream: recording it captures all work
 * submitted to the stream so far; it completes when that work is done.
 */
struct vnpu_event {
	uint64_t handle;
};

/**
 * vnpu_event_create() - create an event
 * @ctx: the context
 * @flags: 0 or VNPU_EVENT_TIMING
 * @event: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE,
 * VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_event_create(struct vnpu_context ctx, uint32_t flags, struct vnpu_event *event);

/**
 * vnpu_event_record() - capture a stream's work so far in an event
 * @event: the event; recording again replaces the captured point
 * @stream: a stream of the event's context
 *
 * A timing event submits a timestamp command to the stream.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_WRONG_CONTEXT when the stream belongs to
 * another context; the stream's sticky error; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_event_record(struct vnpu_event event, struct vnpu_stream stream);

/**
 * vnpu_event_query() - whether the captured work is done
 * @event: the event
 *
 * Return: VNPU_SUCCESS when done or never recorded, VNPU_NOT_READY when not,
 * the failed work's error, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_event_query(struct vnpu_event event);

/**
 * vnpu_event_synchronize() - wait for the captured work
 * @event: the event
 * @timeout_ns: longest wait in ns; 0 polls; VNPU_TIMEOUT_INFINITE
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_TIMEOUT; the failed work's error;
 * VNPU_ERROR_NOT_PERMITTED from inside a host callback;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_event_synchronize(struct vnpu_event event, int64_t timeout_ns);

/**
 * vnpu_event_elapsed_ns() - device time between two completed timing events
 * @start: a recorded, completed VNPU_EVENT_TIMING event
 * @end: another one, of the same device
 * @ns: out, end minus start in nanoseconds (device clock)
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when an event is not a
 * timing event, was never recorded, or the two are on different devices;
 * VNPU_NOT_READY when one has not completed; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_event_elapsed_ns(struct vnpu_event start, struct vnpu_event end, int64_t *ns);

/**
 * vnpu_stream_wait_event() - make a stream's later work wait for an event
 * @stream: the stream; its next submitted work waits
 * @event: an event of any context or device; waiting for an event never
 *	recorded is a no-op
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_HANDLE, VNPU_ERROR_INVALID_VALUE
 * when the stream already has the maximum of pending waits (64).
 */
int vnpu_stream_wait_event(struct vnpu_stream stream, struct vnpu_event event);

/**
 * vnpu_event_destroy() - destroy an event, even while its work is pending
 * @event: the event
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_event_destroy(struct vnpu_event event);

/**
 * typedef-free callback type: void fn(void *user_data, int status)
 *
 * vnpu_stream_add_callback() - run a host function when a stream reaches this point
 * @stream: the stream
 * @fn: called with @user_data and the stream's status (VNPU_SUCCESS or its
 *	sticky error) once all earlier work of the stream is done
 * @user_data: passed to @fn
 *
 * Callbacks of a context run on one runtime thread, in the order they were
 * added per stream. They never hold the device: later device work of the
 * stream does not wait for the callback. Runtime calls that would block
 * (synchronize) return VNPU_ERROR_NOT_PERMITTED inside a callback; calls
 * that only submit work are allowed.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a NULL @fn;
 * VNPU_ERROR_INVALID_HANDLE; VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_stream_add_callback(struct vnpu_stream stream, void (*fn)(void *user_data, int status),
			     void *user_data);

/*
 * Caching pool allocator and device-resident data cache.
 *
 * A pool sits between the application and the driver: it takes device
 * memory from the driver in large segments (each one vnpu_malloc()
 * allocation) and hands out blocks, sub-ranges of one segment, so copies
 * and fills work on block addresses unchanged. Freed blocks are cached and
 * reused; see Documentation/memory-management.rst.
 */

/**
 * struct vnpu_pool - a pool handle
 * @handle: opaque; 0 is never a valid pool
 */
struct vnpu_pool {
	uint64_t handle;
};

/**
 * enum vnpu_pool_attr - knobs of a pool, for vnpu_pool_set_attr()
 * @VNPU_POOL_ATTR_RELEASE_THRESHOLD: cached (reserved but unallocated)
 *	bytes a pool keeps; above it, a free releases whole free segments to
 *	the driver. UINT64_MAX (the default) keeps everything until trimmed.
 * @VNPU_POOL_ATTR_MAX_SPLIT_SIZE: requests above it get a segment of their
 *	own that is never split, and smaller requests never take such a block;
 *	at least 1 MiB, default UINT64_MAX (no limit)
 * @VNPU_POOL_ATTR_SEGMENT_SIZE: size of the segments for requests of more
 *	than 1 MiB and up to 10 MiB; larger requests get a segment of their
 *	size rounded up to 2 MiB. At least 1 MiB, default 20 MiB
 * @VNPU_POOL_ATTR_SMALL_SEGMENT_SIZE: size of the segments for requests up
 *	to 1 MiB; at least 1 MiB, default 2 MiB
 */
enum vnpu_pool_attr {
	VNPU_POOL_ATTR_RELEASE_THRESHOLD = 0,
	VNPU_POOL_ATTR_MAX_SPLIT_SIZE = 1,
	VNPU_POOL_ATTR_SEGMENT_SIZE = 2,
	VNPU_POOL_ATTR_SMALL_SEGMENT_SIZE = 3,
};

/**
 * struct vnpu_pool_stats - what a pool holds and did
 * @allocated: bytes of the blocks handed out (rounded to 512 bytes)
 * @requested: bytes the callers asked for in those blocks
 * @reserved: bytes of the segments the pool holds from the driver
 * @active: @allocated plus free bytes that queued work may still use
 *	(freed in stream order, not yet reusable by other streams)
 * @peak_allocated: highest @allocated
 * @peak_reserved: highest @reserved
 * @active_blocks: blocks handed out
 * @num_allocs: successful allocations
 * @num_frees: successful frees
 * @cache_hits: allocations served from cached memory (no new segment)
 * @num_segment_allocs: segments taken from the driver
 * @num_segment_frees: segments given back to the driver
 * @num_segments: segments held now
 * @oom_retries: times the driver was out of memory and the pool retried
 *	after waiting for pending frees and releasing its cached segments
 * @oom_failures: allocations that failed after that retry
 * @bad_frees: frees refused: unknown address or freed twice
 * @free_blocks: free blocks, pending ones included
 * @pending_blocks: free blocks fenced by queued work
 * @largest_free_block: largest free block in bytes
 * @fragmentation: 1 - @largest_free_block / free bytes, in millionths
 *	(0 when the free memory is one block or there is none)
 */
struct vnpu_pool_stats {
	uint64_t allocated;
	uint64_t requested;
	uint64_t reserved;
	uint64_t active;
	uint64_t peak_allocated;
	uint64_t peak_reserved;
	uint64_t active_blocks;
	uint64_t num_allocs;
	uint64_t num_frees;
	uint64_t cache_hits;
	uint64_t num_segment_allocs;
	uint64_t num_segment_frees;
	uint64_t num_segments;
	uint64_t oom_retries;
	uint64_t oom_failures;
	uint64_t bad_frees;
	uint64_t free_blocks;
	uint64_t pending_blocks;
	uint64_t largest_free_block;
	uint64_t fragmentation;
};

/**
 * vnpu_pool_create() - create a pool of device memory in a context
 * @ctx: the context whose device memory the pool holds
 * @flags: reserved, must be 0
 * @pool: out
 *
 * The pool starts with the defaults, then VNPU_POOL_CONF (see
 * vnpu_ctx_default_pool()). It is destroyed with its context at the latest.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for bad @flags or NULL
 * @pool; VNPU_ERROR_INVALID_CONFIG for a malformed VNPU_POOL_CONF;
 * VNPU_ERROR_INVALID_HANDLE; VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_pool_create(struct vnpu_context ctx, uint32_t flags, struct vnpu_pool *pool);

/**
 * vnpu_pool_destroy() - destroy a pool and give its memory back
 * @pool: a pool from vnpu_pool_create()
 *
 * Blocks still allocated become invalid. Queued work that uses them is
 * safe: the driver keeps the memory until that work is done.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for the default pool;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_pool_destroy(struct vnpu_pool pool);

/**
 * vnpu_ctx_default_pool() - the context's default pool
 * @ctx: the context
 * @pool: out; created on first use
 *
 * vnpu_malloc_async() and vnpu_free_async() use it. Every pool reads the
 * environment variable VNPU_POOL_CONF when it is created: comma-separated
 * key=value pairs among max_split_mb, release_threshold_mb, segment_mb and
 * small_segment_kb ("max" means no limit), e.g.
 * "max_split_mb=64,release_threshold_mb=256".
 *
 * Return: as vnpu_pool_create().
 */
int vnpu_ctx_default_pool(struct vnpu_context ctx, struct vnpu_pool *pool);

/**
 * vnpu_pool_set_attr() - set a knob of a pool
 * @pool: the pool
 * @attr: an enum vnpu_pool_attr
 * @value: the new value, in bytes
 *
 * A lower release threshold releases free segments at once.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for an unknown @attr or a
 * value out of range; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_pool_set_attr(struct vnpu_pool pool, int attr, uint64_t value);

/** vnpu_pool_get_attr() - read a knob of a pool; errors as vnpu_pool_set_attr(). */
int vnpu_pool_get_attr(struct vnpu_pool pool, int attr, uint64_t *value);

/**
 * vnpu_pool_malloc() - allocate device memory from a pool
 * @pool: the pool
 * @size: bytes, > 0; rounded up to a multiple of 512
 * @stream: the stream whose work will use the memory first, or { 0 }
 * @devptr: out, a device address inside one allocation of the pool's
 *	context, 512-byte aligned
 *
 * With a stream, a block freed on that same stream may be handed out at
 * once (stream order protects it); blocks freed on other streams only once
 * the work that used them is done. Without a stream only the latter. If
 * nothing cached fits, the pool takes a new segment from the driver; if the
 * driver is out of memory, the pool waits for the work holding its pending
 * free blocks, then releases its free segments and retries once.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for size 0 or NULL
 * @devptr; VNPU_ERROR_WRONG_CONTEXT for a stream of another context;
 * VNPU_ERROR_OUT_OF_DEVICE_MEMORY or VNPU_ERROR_QUOTA_EXCEEDED after the
 * retry; VNPU_ERROR_INVALID_HANDLE; VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_pool_malloc(struct vnpu_pool pool, uint64_t size, struct vnpu_stream stream,
		     uint64_t *devptr);

/**
 * vnpu_pool_free() - give a block back to its pool
 * @pool: the pool it came from
 * @devptr: the address vnpu_pool_malloc() returned
 * @stream: the stream of the last work that uses the block, or { 0 }: then
 *	the stream it was allocated on, if any; a block allocated without a
 *	stream and freed without one must not be in use by queued work
 *
 * The block is reusable by other streams only once the stream's work
 * submitted so far is done.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when @devptr is not a
 * block of @pool handed out and not yet freed (a double free changes
 * nothing and is counted in bad_frees); VNPU_ERROR_WRONG_CONTEXT;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_pool_free(struct vnpu_pool pool, uint64_t devptr, struct vnpu_stream stream);

/**
 * vnpu_malloc_async() - allocate from the context's default pool in stream order
 * @stream: the stream whose work uses the memory
 * @size: bytes, > 0
 * @devptr: out
 *
 * Return: as vnpu_pool_malloc().
 */
int vnpu_malloc_async(struct vnpu_stream stream, uint64_t size, uint64_t *devptr);

/**
 * vnpu_free_async() - free pool memory in stream order
 * @stream: the stream whose work so far may use the memory
 * @devptr: an address from vnpu_malloc_async() or vnpu_pool_malloc() of a
 *	pool of the stream's context
 *
 * Returns at once; the block is reused by @stream's later work, and by
 * other streams once @stream's work submitted so far is done.
 *
 * Return: as vnpu_pool_free().
 */
int vnpu_free_async(struct vnpu_stream stream, uint64_t devptr);

/**
 * vnpu_pool_trim() - give free segments back until at most @keep bytes are reserved
 * @pool: the pool
 * @keep: bytes to keep reserved; 0 releases every free segment
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_pool_trim(struct vnpu_pool pool, uint64_t keep);

/**
 * vnpu_pool_get_stats() - read a pool's statistics
 * @pool: the pool
 * @stats: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_pool_get_stats(struct vnpu_pool pool, struct vnpu_pool_stats *stats);

/**
 * vnpu_pool_snapshot_json() - every segment and block of a pool, as JSON
 * @pool: the pool
 * @buf: where to write, NUL-terminated; may be NULL when @size is 0
 * @size: bytes at @buf
 * @needed: out, bytes the snapshot needs with its NUL; may be NULL
 *
 * The format is described in Documentation/memory-management.rst.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when @buf is too small
 * (it then holds a truncated snapshot) or NULL with @size > 0;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_pool_snapshot_json(struct vnpu_pool pool, char *buf, size_t size, size_t *needed);

/* vnpu_data_cache_create() flags */
#define VNPU_DATA_CACHE_SHARED 0x1u	/* any stream of the context may use it */
#define VNPU_DATA_CACHE_LRU 0x2u	/* evict the least recently used (for comparison) */
#define VNPU_DATA_CACHE_FLAGS (VNPU_DATA_CACHE_SHARED | VNPU_DATA_CACHE_LRU)

/**
 * struct vnpu_data_cache - a data cache handle
 * @handle: opaque; 0 is never a valid data cache
 *
 * A data cache keeps small, frequently used host data (lookup tables,
 * constants, per-request parameters) resident on the device under a byte
 * budget, keyed by the caller. On a miss it loads the data through the
 * stream; when the budget is full it evicts the entries with the lowest
 * score of access frequency against size (aged, so once-hot entries go
 * eventually). Its memory comes from the context's default pool, and an
 * evicted entry is freed in stream order: queued work that reads it is safe.
 */
struct vnpu_data_cache {
	uint64_t handle;
};

/**
 * struct vnpu_data_cache_stats - what a data cache did
 * @hits: gets answered from the device copy
 * @misses: gets that loaded the data
 * @bytes_loaded: bytes copied to the device by misses
 * @bytes_hit: bytes of the data answered by hits (not copied)
 * @evictions: entries evicted to make room
 * @entries: entries resident now
 * @resident_bytes: bytes of the resident entries
 * @budget: the byte budget
 */
struct vnpu_data_cache_stats {
	uint64_t hits;
	uint64_t misses;
	uint64_t bytes_loaded;
	uint64_t bytes_hit;
	uint64_t evictions;
	uint64_t entries;
	uint64_t resident_bytes;
	uint64_t budget;
};

/**
 * vnpu_data_cache_create() - create a data cache
 * @stream: the stream it belongs to; with VNPU_DATA_CACHE_SHARED, any
 *	stream of its context may use it
 * @budget: bytes the resident entries may take, > 0
 * @flags: 0, VNPU_DATA_CACHE_SHARED, VNPU_DATA_CACHE_LRU
 * @cache: out
 *
 * A cache of one stream is never contended by other streams. A shared
 * cache serializes every get on one lock; a hit on a stream other than the
 * one that loaded the entry makes that stream's later work wait for the
 * load (without blocking the host).
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for budget 0, bad @flags
 * or NULL @cache; VNPU_ERROR_INVALID_HANDLE; VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_data_cache_create(struct vnpu_stream stream, uint64_t budget, uint32_t flags,
			   struct vnpu_data_cache *cache);

/**
 * vnpu_data_cache_destroy() - destroy a data cache, freeing its entries in stream order
 * @cache: the cache
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_data_cache_destroy(struct vnpu_data_cache cache);

/**
 * vnpu_data_cache_get() - the device copy of host data, loaded if missing
 * @cache: the cache
 * @stream: the stream whose work will read the data: the cache's stream
 *	(or { 0 } for it), or for a shared cache any stream of its context
 * @key: the caller's name for the data; the same key with another size is
 *	reloaded
 * @host: the data (read only on a miss, before the call returns)
 * @size: bytes, > 0 and at most the budget
 * @devptr: out; valid for work submitted to @stream before the next call
 *	on the cache (which may evict it)
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL @host or
 * @devptr, size 0, a size above the budget or a stream the cache does not
 * serve; the errors of vnpu_malloc_async() and vnpu_memcpy_htod_async();
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_data_cache_get(struct vnpu_data_cache cache, struct vnpu_stream stream, uint64_t key,
			const void *host, size_t size, uint64_t *devptr);

/**
 * vnpu_data_cache_invalidate() - drop an entry (its host data changed)
 * @cache: the cache
 * @key: the entry; an absent key is not an error
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_data_cache_invalidate(struct vnpu_data_cache cache, uint64_t key);

/**
 * vnpu_data_cache_get_stats() - read a data cache's counters
 * @cache: the cache
 * @stats: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_data_cache_get_stats(struct vnpu_data_cache cache, struct vnpu_data_cache_stats *stats);

/*
 * Static memory planner: pure computation, no device needed.
 *
 * Given buffers with a size, an alignment and a lifetime [first, last) over
 * an execution order, the planner gives each buffer an offset in one arena
 * so that buffers alive at the same time never overlap.
 */

/**
 * struct vnpu_plan_buffer - one buffer to plan
 * @size: bytes, at least 1
 * @alignment: the offset must be a multiple of it; a power of two, 0 means 1
 * @first: first step at which the buffer is alive
 * @last: first step at which it is no longer alive; @first < @last
 * @offset: out, the planned offset in the arena
 */
struct vnpu_plan_buffer {
	uint64_t size;
	uint64_t alignment;
	uint64_t first;
	uint64_t last;
	uint64_t offset;
};

/**
 * enum vnpu_plan_strategy - how vnpu_plan_compute() places the buffers
 * @VNPU_PLAN_GREEDY_BY_SIZE: largest buffer first, each into the smallest
 *	gap that fits (Pisarchyk & Lee 2020, the TFLite planner)
 * @VNPU_PLAN_GREEDY_BY_BREADTH: steps with the largest total live first,
 *	their buffers largest first, each into the smallest gap that fits
 * @VNPU_PLAN_BEST: the skyline plan and, while cheap, both greedy plans;
 *	then, if the best is above the lower bound or the capacity, a search
 *	within the time limit (branch and bound over canonical plans for small
 *	instances, skyline and greedy plans of perturbed orders for large)
 * @VNPU_PLAN_SKYLINE: buffers placed in non-decreasing offset order, each
 *	time the best-ranked buffer that fits on the lowest part of the
 *	skyline of the placed ones; O(n log^2 n) whatever the overlaps
 */
enum vnpu_plan_strategy {
	VNPU_PLAN_GREEDY_BY_SIZE = 0,
	VNPU_PLAN_GREEDY_BY_BREADTH = 1,
	VNPU_PLAN_BEST = 2,
	VNPU_PLAN_SKYLINE = 3,
};

/**
 * struct vnpu_plan_options - parameters of vnpu_plan_compute()
 * @strategy: an enum vnpu_plan_strategy
 * @capacity: arena bytes available; 0 for no limit
 * @time_limit_ms: budget of the search stage in CPU time of the calling
 *	thread (a loaded machine does not cut it short); 0 for the default
 *	(2000 ms)
 * @seed: seed of the randomized search; the same seed gives the same plan
 */
struct vnpu_plan_options {
	unsigned int strategy;
	uint64_t capacity;
	unsigned int time_limit_ms;
	uint64_t seed;
};

/**
 * struct vnpu_plan_stats - what vnpu_plan_compute() achieved
 * @naive_size: sum of all sizes (every buffer its own range)
 * @lower_bound: largest total of sizes alive at one instant
 * @greedy_size: arena of the best greedy plan
 * @arena_size: arena of the returned plan (of the best plan found when
 *	it does not fit)
 * @elapsed_ns: planning time
 * @search_nodes: nodes or iterations the search stage visited
 * @optimal: 1 when @arena_size equals @lower_bound
 */
struct vnpu_plan_stats {
	uint64_t naive_size;
	uint64_t lower_bound;
	uint64_t greedy_size;
	uint64_t arena_size;
	uint64_t elapsed_ns;
	uint64_t search_nodes;
	int optimal;
};

/**
 * vnpu_plan_compute() - plan the offsets of @count buffers
 * @bufs: the buffers; their @offset fields are written on success only
 * @count: number of buffers, may be 0
 * @opts: options, NULL for the defaults (VNPU_PLAN_BEST, no capacity)
 * @stats: out, may be NULL; filled on success and on
 *	VNPU_ERROR_DOES_NOT_FIT
 *
 * The plan is verified with vnpu_plan_verify() before it is returned.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a zero size, an empty
 * lifetime, an alignment that is not a power of two, sizes whose sum
 * overflows or an unknown strategy; VNPU_ERROR_DOES_NOT_FIT when no plan
 * within @opts->capacity was found (@stats->lower_bound says how much is
 * needed at least); VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_plan_compute(struct vnpu_plan_buffer *bufs, size_t count,
		      const struct vnpu_plan_options *opts,
		      struct vnpu_plan_stats *stats);

/**
 * vnpu_plan_verify() - check a plan
 * @bufs: buffers with their offsets
 * @count: number of buffers
 * @capacity: arena bytes available; 0 for no limit
 * @arena_size: out, the arena the plan needs; may be NULL
 *
 * Return: VNPU_SUCCESS when no two buffers alive at the same time overlap,
 * every offset is aligned and the plan fits in @capacity;
 * VNPU_ERROR_INVALID_VALUE otherwise or for invalid buffers;
 * VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_plan_verify(const struct vnpu_plan_buffer *bufs, size_t count,
		     uint64_t capacity, uint64_t *arena_size);

/**
 * vnpu_plan_bounds() - naive sum and lower bound of an instance
 * @bufs: the buffers
 * @count: number of buffers
 * @naive_size: out, sum of the sizes; may be NULL
 * @lower_bound: out, largest total alive at one instant; may be NULL
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for invalid buffers;
 * VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_plan_bounds(const struct vnpu_plan_buffer *bufs, size_t count,
		     uint64_t *naive_size, uint64_t *lower_bound);

/** vnpu_plan_strategy_name() - "size", "breadth", "best" or NULL. */
const char *vnpu_plan_strategy_name(unsigned int strategy);

/* --- Topology, peer access and collectives ------------------------------ */

/** enum vnpu_link_class - how two devices are connected, nearest first */
enum vnpu_link_class {
	VNPU_LINK_SELF = 0,
	VNPU_LINK_BOARD = 1,
	VNPU_LINK_NODE = 2,
	VNPU_LINK_SYSTEM = 3,
};

/**
 * struct vnpu_link - the link between two devices, as the driver describes it
 * @link_class: VNPU_LINK_SELF for a device and itself, else the nearest
 *	group the two devices share (board, node, or only the system)
 * @bandwidth_mbps: MB/s (10^6 bytes per second); 0 for self
 * @latency_ns: latency of one transfer in ns; 0 for self
 */
struct vnpu_link {
	enum vnpu_link_class link_class;
	uint32_t bandwidth_mbps;
	uint32_t latency_ns;
};

/**
 * struct vnpu_device_location - where a device sits in the machine
 * @numa_node: host NUMA node, -1 for none
 * @topology_node: id of the node (group of boards) of the device
 * @board: id of the board of the device, unique in the system
 */
struct vnpu_device_location {
	int32_t numa_node;
	uint32_t topology_node;
	uint32_t board;
};

/**
 * vnpu_device_get_location() - the node, board and NUMA node of a device
 * @device: logical device index
 * @location: out
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a bad @device or NULL
 * @location; VNPU_ERROR_DRIVER_VERSION when the driver has no topology
 * (uAPI before 1.4); VNPU_ERROR_DEVICE_LOST; init state errors.
 */
int vnpu_device_get_location(uint32_t device, struct vnpu_device_location *location);

/**
 * vnpu_device_get_topology() - the link matrix of the visible devices
 * @count: the number of visible devices (vnpu_device_count())
 * @links: out, @count * @count entries; links[i * @count + j] is the link
 *	from logical device i to logical device j
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL @links or a
 * @count other than the number of visible devices;
 * VNPU_ERROR_DRIVER_VERSION when the driver has no topology (uAPI before
 * 1.4); VNPU_ERROR_DEVICE_LOST; VNPU_ERROR_OUT_OF_HOST_MEMORY; init state
 * errors.
 */
int vnpu_device_get_topology(uint32_t count, struct vnpu_link *links);

/**
 * vnpu_device_can_access_peer() - whether a device can reach another's memory
 * @device: logical index of the device that would access
 * @peer: logical index of the device whose memory would be accessed
 * @can_access: out, 1 if vnpu_ctx_enable_peer_access() can succeed for
 *	contexts of the two devices, else 0 (a device and itself: 0)
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a bad index or NULL
 * @can_access; init state errors.
 */
int vnpu_device_can_access_peer(uint32_t device, uint32_t peer, int *can_access);

/**
 * vnpu_ctx_enable_peer_access() - let a context's device reach a peer context's memory
 * @ctx: the context whose device accesses (the destination of
 *	vnpu_memcpy_peer())
 * @peer: a context on another device whose memory is accessed
 * @flags: reserved, must be 0
 *
 * One direction only, per pair of contexts, as in CUDA. Copies between
 * contexts of two different devices need it (see vnpu_memcpy_peer()); they
 * go over the link between the devices, at its bandwidth and latency.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_PEER_ACCESS_ALREADY_ENABLED;
 * VNPU_ERROR_INVALID_VALUE for bad @flags or two contexts of the same
 * device (which need no peer access); VNPU_ERROR_INVALID_HANDLE;
 * VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_ctx_enable_peer_access(struct vnpu_context ctx, struct vnpu_context peer,
				uint32_t flags);

/**
 * vnpu_ctx_disable_peer_access() - undo vnpu_ctx_enable_peer_access()
 * @ctx: the accessing context
 * @peer: the accessed context
 *
 * Copies already queued are not affected.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_PEER_ACCESS_NOT_ENABLED;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_ctx_disable_peer_access(struct vnpu_context ctx, struct vnpu_context peer);

/* vnpu_ctx_create(): any device, the one nearest to the calling thread's CPU. */
#define VNPU_DEVICE_ANY 0xffffffffu

/**
 * vnpu_device_choose_nearest() - the device nearest to the calling thread's CPU
 * @device: out, a logical device index
 *
 * Nearest by NUMA distance between the CPU the thread runs on
 * (sched_getcpu()) and each device's NUMA node (devices without one count
 * as farthest); ties go to the lowest index. vnpu_ctx_create() with
 * VNPU_DEVICE_ANY uses it.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL @device; init
 * state errors.
 */
int vnpu_device_choose_nearest(uint32_t *device);

/**
 * struct vnpu_comm - a communicator handle
 * @handle: opaque; 0 is never a valid communicator
 *
 * A communicator is a set of streams, one per rank, each on a different
 * device. Collectives on it enqueue work on those streams (they return
 * before the work is done, like any asynchronous call): synchronize the
 * streams, or record events on them, to wait. Data moves around a ring
 * ordered by topology: the devices of a board, then of a node, next to
 * each other, so the ring crosses each slow link as few times as possible.
 */
struct vnpu_comm {
	uint64_t handle;
};

/** enum vnpu_dtype - element type of a collective */
enum vnpu_dtype {
	VNPU_DTYPE_F32 = 1,
};

/** enum vnpu_reduce_op - reduction of a collective */
enum vnpu_reduce_op {
	VNPU_REDUCE_SUM = 1,
};

/**
 * vnpu_comm_create() - create a communicator over streams of different devices
 * @count: number of ranks, 1 to 64
 * @streams: one stream per rank; rank r is @streams[r]
 * @comm: out
 *
 * The communicator keeps the streams alive until it is destroyed.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL arguments, a
 * bad @count or two streams on the same device; VNPU_ERROR_INVALID_HANDLE
 * for a bad stream; VNPU_ERROR_DRIVER_VERSION without topology (uAPI
 * before 1.4); VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_comm_create(uint32_t count, const struct vnpu_stream *streams, struct vnpu_comm *comm);

/**
 * vnpu_comm_destroy() - destroy a communicator
 * @comm: the communicator
 *
 * Work already enqueued goes on; its scratch memory is released when done.
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_comm_destroy(struct vnpu_comm comm);

/**
 * vnpu_comm_get_ring() - the order in which data travels between the ranks
 * @comm: the communicator
 * @count: the communicator's number of ranks
 * @ranks: out, @count ranks; each rank receives from the one before it and
 *	the first from the last
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL @ranks or a
 * wrong @count; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_comm_get_ring(struct vnpu_comm comm, uint32_t count, uint32_t *ranks);

/**
 * vnpu_all_reduce() - sum every rank's buffer into every rank's output
 * @comm: the communicator
 * @send: per rank, device address of @count elements in its stream's context
 * @recv: per rank, device address of @count elements; may equal @send
 * @count: elements per rank, > 0
 * @dtype: VNPU_DTYPE_F32
 * @op: VNPU_REDUCE_SUM
 *
 * Ring algorithm: a reduce-scatter then an all-gather, each of
 * (ranks - 1) steps moving 1/ranks of the data over every ring link; the
 * sums are computed by each device's ADD operator. Sums are added in ring
 * order, so results can differ from another order in the last bits.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL arrays, @count
 * 0, an unknown @dtype or @op, or a buffer outside its context's
 * allocations; a stream's sticky error; VNPU_ERROR_INVALID_HANDLE;
 * VNPU_ERROR_OUT_OF_DEVICE_MEMORY for the scratch space (1/ranks of the
 * data per rank).
 */
int vnpu_all_reduce(struct vnpu_comm comm, const uint64_t *send, const uint64_t *recv,
		    size_t count, enum vnpu_dtype dtype, enum vnpu_reduce_op op);

/**
 * vnpu_broadcast() - copy the root's buffer to every rank
 * @comm: the communicator
 * @root: the rank whose @send is copied
 * @send: device address of @count elements of the root's context
 * @recv: per rank, device address of @count elements (the root's may equal
 *	@send)
 * @count: elements, > 0
 * @dtype: VNPU_DTYPE_F32
 *
 * The data goes around the ring from the root, one hop per rank.
 *
 * Return: as vnpu_all_reduce(); VNPU_ERROR_INVALID_VALUE for a bad @root.
 */
int vnpu_broadcast(struct vnpu_comm comm, uint32_t root, uint64_t send, const uint64_t *recv,
		   size_t count, enum vnpu_dtype dtype);

/**
 * vnpu_all_gather() - every rank gets every rank's buffer, in rank order
 * @comm: the communicator
 * @send: per rank, device address of @count elements
 * @recv: per rank, device address of ranks * @count elements; rank r's
 *	data lands at element r * @count
 * @count: elements per rank, > 0
 * @dtype: VNPU_DTYPE_F32
 *
 * Return: as vnpu_all_reduce().
 */
int vnpu_all_gather(struct vnpu_comm comm, const uint64_t *send, const uint64_t *recv,
		    size_t count, enum vnpu_dtype dtype);

/**
 * vnpu_reduce_scatter() - sum every rank's buffer; rank r keeps block r
 * @comm: the communicator
 * @send: per rank, device address of ranks * @count elements
 * @recv: per rank, device address of @count elements: elements
 *	r * @count .. (r + 1) * @count - 1 of the sum, for rank r
 * @count: elements per rank, > 0
 * @dtype: VNPU_DTYPE_F32
 * @op: VNPU_REDUCE_SUM
 *
 * Needs scratch device memory of ranks * @count elements per rank.
 *
 * Return: as vnpu_all_reduce().
 */
int vnpu_reduce_scatter(struct vnpu_comm comm, const uint64_t *send, const uint64_t *recv,
			size_t count, enum vnpu_dtype dtype, enum vnpu_reduce_op op);

/*
 * Device pool leases: the client side of vnpu-poold, the per-node device
 * pool (Documentation/pool.rst). A lease gives the calling process some
 * devices, exclusively or shared, with a kernel-enforced memory quota on
 * each; it ends with vnpu_lease_release(), or when the process exits.
 */

/* Lease modes: the devices are the tenant's alone, or shared up to their memory. */
#define VNPU_LEASE_EXCLUSIVE 0u
#define VNPU_LEASE_SHARED 1u

/* Placement of a lease of several devices. */
#define VNPU_PLACEMENT_SAME_NODE 0u	/* all on one topology node, nearest links */
#define VNPU_PLACEMENT_SPREAD 1u	/* on as many nodes as possible */
#define VNPU_PLACEMENT_LEAST_LOADED 2u	/* the devices with the least memory reserved */
#define VNPU_PLACEMENT_PACKED 3u	/* the most loaded devices that still fit */

/* Most devices one lease names. */
#define VNPU_LEASE_MAX_DEVICES 64

/**
 * struct vnpu_lease_request - what a lease asks for
 * @count: number of devices, 1..VNPU_LEASE_MAX_DEVICES
 * @mode: VNPU_LEASE_EXCLUSIVE or VNPU_LEASE_SHARED
 * @placement: a VNPU_PLACEMENT_* value
 * @flags: reserved, must be 0
 * @memory: bytes of device memory per device, the process's hard quota
 *	there; 0 asks for a whole device (exclusive leases only)
 */
struct vnpu_lease_request {
	uint32_t count;
	uint32_t mode;
	uint32_t placement;
	uint32_t flags;
	uint64_t memory;
};

/**
 * struct vnpu_lease - a lease handle
 * @handle: the lease id the pool gave; 0 is never a lease
 */
struct vnpu_lease {
	uint64_t handle;
};

/**
 * struct vnpu_lease_info - a lease as the pool reports it
 * @id: the lease id
 * @uid: the tenant's user id
 * @pid: the tenant's process id
 * @mode: VNPU_LEASE_EXCLUSIVE or VNPU_LEASE_SHARED
 * @placement: the VNPU_PLACEMENT_* it was placed with
 * @memory: bytes per device (the quota)
 * @count: number of devices
 * @devices: their physical indices, @count of them, in placement order
 * @degraded: 1 when a leased device turned unhealthy during the lease
 */
struct vnpu_lease_info {
	uint64_t id;
	uint32_t uid;
	int32_t pid;
	uint32_t mode;
	uint32_t placement;
	uint64_t memory;
	uint32_t count;
	uint32_t devices[VNPU_LEASE_MAX_DEVICES];
	uint32_t degraded;
};

/**
 * vnpu_lease_acquire() - lease devices from the device pool
 * @socket_path: the pool's socket; NULL for VNPU_POOL_SOCKET, or
 *	/run/vnpu/pool.sock without it
 * @req: what to lease
 * @lease: out, the lease
 * @reason: out, may be NULL: on a refusal, the pool's reason in words
 *	("2 devices requested, 1 of 4 available now ..."), NUL-terminated
 * @reason_size: bytes at @reason
 *
 * The pool picks the devices, sets this process's hard and soft memory
 * quota on each to @req->memory and keeps a connection open for the
 * lease: it ends with vnpu_lease_release() or when the process exits. Call
 * it before vnpu_init() with VNPU_POOL_SOCKET set, and the runtime shows
 * the leased devices only.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL arguments, a
 * count of 0 or above VNPU_LEASE_MAX_DEVICES, an unknown mode, placement
 * or flags, memory 0 for a shared lease, or a request the pool calls
 * malformed; VNPU_ERROR_LEASE_REFUSED when the pool cannot or may not
 * grant it (more memory than a device has, more devices than are free, a
 * per-user limit; see @reason); VNPU_ERROR_POOL_UNAVAILABLE when no pool
 * answers at the socket; VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_lease_acquire(const char *socket_path, const struct vnpu_lease_request *req,
		       struct vnpu_lease *lease, char *reason, size_t reason_size);

/**
 * vnpu_lease_release() - end a lease of this process
 * @lease: a lease from vnpu_lease_acquire()
 *
 * The pool clears the quotas the lease set and gives the devices to
 * others. Release only after the runtime stopped using the devices
 * (memory beyond the restored default quota stays allocated, but no more
 * can be allocated).
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_HANDLE for a lease this process
 * does not hold (or released already).
 */
int vnpu_lease_release(struct vnpu_lease lease);

/**
 * vnpu_lease_get_info() - ask the pool about a lease of this process
 * @lease: a lease from vnpu_lease_acquire()
 * @info: out
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL @info;
 * VNPU_ERROR_INVALID_HANDLE for a lease this process does not hold, or
 * one the pool no longer has (root released it);
 * VNPU_ERROR_POOL_UNAVAILABLE when the pool does not answer.
 */
int vnpu_lease_get_info(struct vnpu_lease lease, struct vnpu_lease_info *info);


/*
 * Graphs: ONNX models run on a device.
 *
 * vnpu_graph_load() reads an ONNX model (protobuf), checks it completely,
 * infers every tensor's shape, maps each node to the device's built-in
 * operators and allocates its memory: static memory (weights, constants,
 * graph inputs and outputs) once, exactly; dynamic memory (intermediate
 * tensors) as one arena whose offsets the static planner chose. A node the
 * device cannot run is a load error naming the node and its operator;
 * nothing is ever computed on the host. Documentation/onnx.rst lists the
 * supported operators.
 */

/* Most dimensions of a tensor. */
#define VNPU_HOST_TENSOR_MAX_RANK 8

/* Element types (the numbers of ONNX's TensorProto.DataType). */
#define VNPU_DTYPE_FLOAT 1
#define VNPU_DTYPE_INT64 7

/**
 * struct vnpu_graph - a graph handle
 * @handle: opaque; 0 is never a valid graph
 */
struct vnpu_graph {
	uint64_t handle;
};

/**
 * struct vnpu_host_tensor - a host tensor: graph input, output or test data
 * @name: the ONNX name, may be empty
 * @dtype: VNPU_DTYPE_*
 * @rank: number of dimensions, 0 for a scalar
 * @dims: the dimensions, outermost first
 * @data: the elements, row-major
 * @size: bytes at @data (for an output: bytes available)
 */
struct vnpu_host_tensor {
	char name[128];
	uint32_t dtype;
	uint32_t rank;
	int64_t dims[VNPU_HOST_TENSOR_MAX_RANK];
	void *data;
	uint64_t size;
};

/**
 * struct vnpu_graph_options - how vnpu_graph_load() prepares a graph
 * @flags: reserved, must be 0
 * @streams: streams vnpu_graph_run() spreads independent branches over
 *	(joined by events); 0 means 1
 * @workspaces: runs that may be in flight at once, each with its own
 *	arena and input/output buffers; 0 means 1
 * @batch: when not 0, the size of the first dimension of every graph
 *	input whose first dimension is symbolic or differs (a batch split
 *	across devices loads the graph on each with its share)
 * @plan_strategy: an enum vnpu_plan_strategy for the arena
 * @constants: graph inputs whose values are given at load, matched by name
 *	(the tensor's @name): each becomes a constant of the graph, like an
 *	initializer, and is no longer an input of vnpu_graph_run(). Shapes and
 *	axes that ONNX lets a model take as int64 inputs (Reshape's shape,
 *	Squeeze's and Unsqueeze's axes, ReduceSum's axes) must be known to plan
 *	memory, so such inputs must be given here; float32 inputs may be. The
 *	values are copied. NULL when @num_constants is 0
 * @num_constants: entries at @constants
 */
struct vnpu_graph_options {
	uint32_t flags;
	uint32_t streams;
	uint32_t workspaces;
	uint64_t batch;
	unsigned int plan_strategy;
	const struct vnpu_host_tensor *constants;
	uint32_t num_constants;
};

/**
 * struct vnpu_graph_info - what a loaded graph contains
 * @num_inputs: graph inputs to pass to vnpu_graph_run()
 * @num_outputs: graph outputs it fills
 * @num_nodes: ONNX nodes
 * @num_launches: device operations one run submits (launches and copies)
 * @streams: as loaded
 * @workspaces: as loaded
 * @opset: the model's default-domain operator set version
 */
struct vnpu_graph_info {
	uint32_t num_inputs;
	uint32_t num_outputs;
	uint32_t num_nodes;
	uint32_t num_launches;
	uint32_t streams;
	uint32_t workspaces;
	int64_t opset;
};

/**
 * struct vnpu_graph_memory - the device memory of a graph
 * @weights_bytes: exact bytes of initializers and constants on the device
 * @io_bytes: exact bytes of the graph inputs and outputs of one workspace
 * @static_bytes: exact static memory: @weights_bytes + @io_bytes per workspace
 * @static_allocated: device bytes allocated for it (with alignment)
 * @arena_bytes: the planned arena of intermediate tensors, per workspace
 * @naive_bytes: every intermediate tensor in its own range, per workspace
 * @lower_bound: most intermediate bytes alive at one step, per workspace
 * @dynamic_allocated: device bytes allocated for the arenas
 * @total_allocated: @static_allocated + @dynamic_allocated
 * @intermediates: number of intermediate tensors planned
 * @load_ns: time vnpu_graph_load() took, parse to uploaded weights
 * @plan_ns: time the planner took
 */
struct vnpu_graph_memory {
	uint64_t weights_bytes;
	uint64_t io_bytes;
	uint64_t static_bytes;
	uint64_t static_allocated;
	uint64_t arena_bytes;
	uint64_t naive_bytes;
	uint64_t lower_bound;
	uint64_t dynamic_allocated;
	uint64_t total_allocated;
	uint64_t intermediates;
	uint64_t load_ns;
	uint64_t plan_ns;
};

/**
 * vnpu_graph_load() - load an ONNX model from memory onto a device
 * @ctx: the context whose device runs the graph and holds its memory
 * @data: the serialized ModelProto
 * @size: bytes at @data
 * @opts: options, NULL for the defaults (one stream, one workspace)
 * @graph: out
 *
 * Checks the model completely before touching the device: a protobuf
 * that does not parse (truncated, corrupt), a cycle, a tensor nobody
 * produces (a missing initializer), shapes that do not fit, a symbolic
 * input dimension without @opts->batch, an operator, attribute or type the
 * device cannot run. vnpu_graph_error_message() then says which node
 * (name and operator) and why. A failed load leaves nothing allocated.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL arguments, unknown
 * @opts->flags or a bad strategy; VNPU_ERROR_INVALID_MODEL for a model that
 * is malformed or inconsistent; VNPU_ERROR_NOT_SUPPORTED for a valid model
 * the device cannot run; VNPU_ERROR_OUT_OF_DEVICE_MEMORY,
 * VNPU_ERROR_QUOTA_EXCEEDED; VNPU_ERROR_OUT_OF_HOST_MEMORY;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_load(struct vnpu_context ctx, const void *data, size_t size,
		    const struct vnpu_graph_options *opts, struct vnpu_graph *graph);

/**
 * vnpu_graph_load_file() - vnpu_graph_load() of a model file
 * @ctx: the context
 * @path: the .onnx file
 * @opts: options, NULL for the defaults
 * @graph: out
 *
 * Return: as vnpu_graph_load(); VNPU_ERROR_INVALID_VALUE when the file
 * cannot be read (vnpu_graph_error_message() has the reason).
 */
int vnpu_graph_load_file(struct vnpu_context ctx, const char *path,
			 const struct vnpu_graph_options *opts, struct vnpu_graph *graph);

/**
 * vnpu_graph_error_message() - why the calling thread's last graph call failed
 *
 * Return: a message such as "node 'conv1' (Conv): attribute 'group' = 2 not
 * supported", valid until the thread's next graph call; "" after a success.
 */
const char *vnpu_graph_error_message(void);

/**
 * vnpu_graph_get_info() - counts and settings of a loaded graph
 * @graph: the graph
 * @info: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_get_info(struct vnpu_graph graph, struct vnpu_graph_info *info);

/**
 * vnpu_graph_input_desc() - name, type and shape of a graph input
 * @graph: the graph
 * @index: 0 .. num_inputs - 1, in the model's order
 * @desc: out; @desc->data is NULL and @desc->size the bytes it needs
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_input_desc(struct vnpu_graph graph, uint32_t index, struct vnpu_host_tensor *desc);

/**
 * vnpu_graph_output_desc() - name, type and shape of a graph output
 * @graph: the graph
 * @index: 0 .. num_outputs - 1, in the model's order
 * @desc: out; @desc->data is NULL and @desc->size the bytes it needs
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_output_desc(struct vnpu_graph graph, uint32_t index, struct vnpu_host_tensor *desc);

/**
 * vnpu_graph_run() - run a graph once and wait for its outputs
 * @graph: the graph
 * @streams: streams of the graph's context; the inputs are copied and the
 *	outputs read on @streams[0], branches spread over the others
 * @num_streams: 1 .. the graph's @streams option; fewer streams than the
 *	graph was planned for run its branches on the first ones
 * @inputs: num_inputs tensors, in the order of vnpu_graph_input_desc(),
 *	whose type and shape must be exactly the graph's
 * @outputs: num_outputs tensors; @data and @size (capacity) in, the rest
 *	filled
 *
 * Takes a free workspace (waiting for one if all are in use), so several
 * threads may run the same graph at once, each on its own streams. Work
 * already submitted to @streams before the call runs first.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for NULL arguments, a
 * wrong number of streams, an input of the wrong type or shape or an
 * output buffer too small (vnpu_graph_error_message() says which);
 * VNPU_ERROR_WRONG_CONTEXT for a stream of another context; the errors of
 * the streams' work; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_run(struct vnpu_graph graph, const struct vnpu_stream *streams,
		   uint32_t num_streams, const struct vnpu_host_tensor *inputs,
		   struct vnpu_host_tensor *outputs);

/**
 * vnpu_graph_memory_report() - static and dynamic device memory of a graph
 * @graph: the graph
 * @mem: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_memory_report(struct vnpu_graph graph, struct vnpu_graph_memory *mem);

/**
 * vnpu_graph_destroy() - free a graph and all its device memory
 * @graph: the graph; no vnpu_graph_run() of it may be in progress
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_graph_destroy(struct vnpu_graph graph);

/**
 * vnpu_host_tensor_read_file() - read a tensor from an ONNX TensorProto file
 * @path: a .pb file, as in ONNX's test data sets
 * @tensor: out; @tensor->data is allocated, release it with vnpu_host_tensor_free()
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when the file cannot be
 * read; VNPU_ERROR_INVALID_MODEL when it is no valid TensorProto;
 * VNPU_ERROR_NOT_SUPPORTED for an element type other than float or int64,
 * more than VNPU_HOST_TENSOR_MAX_RANK dimensions or external data;
 * VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_host_tensor_read_file(const char *path, struct vnpu_host_tensor *tensor);

/**
 * vnpu_host_tensor_write_file() - write a tensor as an ONNX TensorProto file
 * @path: the file, created or replaced
 * @tensor: the tensor; its @size must match its type and shape
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a bad tensor or a file
 * that cannot be written; VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_host_tensor_write_file(const char *path, const struct vnpu_host_tensor *tensor);

/**
 * vnpu_host_tensor_free() - release the data vnpu_host_tensor_read_file() allocated
 * @tensor: the tensor; its @data becomes NULL, may be NULL
 */
void vnpu_host_tensor_free(struct vnpu_host_tensor *tensor);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_H */
