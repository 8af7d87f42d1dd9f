/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Device and host-pinned memory: allocation, information, quota, leak report.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_MEMORY_H
#define VNPU_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "context.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* VNPU_MEMORY_H */
