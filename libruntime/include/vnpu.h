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
	VNPU_ERROR_NO_DEVICE = 200,
	VNPU_ERROR_OUT_OF_HOST_MEMORY = 201,
	VNPU_ERROR_PERMISSION_DENIED = 202,
	VNPU_ERROR_OUT_OF_DEVICE_MEMORY = 203,
	VNPU_ERROR_QUOTA_EXCEEDED = 204,
	VNPU_ERROR_DOES_NOT_FIT = 205,
	VNPU_ERROR_DEVICE_LOST = 500,
	VNPU_ERROR_DRIVER = 501,
	VNPU_ERROR_DRIVER_VERSION = 502,
};

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
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for unknown @flags;
 * VNPU_ERROR_INVALID_CONFIG for a bad VNPU_VISIBLE_DEVICES;
 * VNPU_ERROR_NO_DEVICE when no vnpu device is present (or visible);
 * VNPU_ERROR_PERMISSION_DENIED when a vnpu node exists but cannot be opened;
 * VNPU_ERROR_DRIVER_VERSION when the driver's uAPI major differs.
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
 * @device: logical device index
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
 * @VNPU_PLAN_BEST: both greedy plans, then, if the best is above the lower
 *	bound or the capacity, a search within the time limit (branch and bound
 *	over canonical plans for small instances, randomized greedy for large)
 */
enum vnpu_plan_strategy {
	VNPU_PLAN_GREEDY_BY_SIZE = 0,
	VNPU_PLAN_GREEDY_BY_BREADTH = 1,
	VNPU_PLAN_BEST = 2,
};

/**
 * struct vnpu_plan_options - parameters of vnpu_plan_compute()
 * @strategy: an enum vnpu_plan_strategy
 * @capacity: arena bytes available; 0 for no limit
 * @time_limit_ms: budget of the search stage; 0 for the default (2000 ms)
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

#ifdef __cplusplus
}
#endif

#endif /* VNPU_H */
