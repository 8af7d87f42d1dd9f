// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Device and host-pinned memory of a context. Each allocation is one
 * driver buffer; the context keeps them sorted by device address so any
 * address inside one finds it in O(log n).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <xf86drm.h>

#include "runtime.h"
#include "trace.h"

/* Index of the first allocation whose devptr is >= @devptr; under ctx->lock. */
static size_t lower_bound_locked(struct vnpu_ctx *ctx, uint64_t devptr)
{
	size_t lo = 0, hi = ctx->num_allocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ctx->allocs[mid]->devptr < devptr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert_locked(struct vnpu_ctx *ctx, struct vnpu_alloc *a)
{
	size_t pos;

	if (ctx->num_allocs == ctx->cap_allocs) {
		size_t cap = ctx->cap_allocs ? ctx->cap_allocs * 2 : 16;
		struct vnpu_alloc **grown = realloc(ctx->allocs, cap * sizeof(*grown));

		if (!grown)
			return VNPU_ERROR_OUT_OF_HOST_MEMORY;
		ctx->allocs = grown;
		ctx->cap_allocs = cap;
	}
	pos = lower_bound_locked(ctx, a->devptr);
	memmove(&ctx->allocs[pos + 1], &ctx->allocs[pos],
		(ctx->num_allocs - pos) * sizeof(*ctx->allocs));
	ctx->allocs[pos] = a;
	ctx->num_allocs++;
	return VNPU_SUCCESS;
}

static void remove_at_locked(struct vnpu_ctx *ctx, size_t pos)
{
	memmove(&ctx->allocs[pos], &ctx->allocs[pos + 1],
		(ctx->num_allocs - pos - 1) * sizeof(*ctx->allocs));
	ctx->num_allocs--;
}

static void close_gem(int fd, uint32_t handle)
{
	struct drm_gem_close args = { .handle = handle };

	drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &args);
}

void vnpu_alloc_release(struct vnpu_ctx *ctx, struct vnpu_alloc *a)
{
	if (a->host)
		munmap(a->host, a->size);
	close_gem(ctx->fd, a->gem_handle);
	free(a);
	if (vnpu_tracing)
		vnpu_trace_memory(ctx);
}

/* Creates a buffer and maps it if host-pinned. */
int vnpu_alloc_create(struct vnpu_ctx *ctx, uint64_t size, uint32_t bo_flags,
			void *caller, struct vnpu_alloc **out)
{
	struct drm_vnpu_bo_create create = { .size = size, .flags = bo_flags };
	struct drm_vnpu_bo_info info = { 0 };
	struct vnpu_alloc *a = calloc(1, sizeof(*a));

	if (!a)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	if (drmIoctl(ctx->fd, DRM_IOCTL_VNPU_BO_CREATE, &create)) {
		int err = errno;

		free(a);
		return err == EINVAL ? VNPU_ERROR_INVALID_VALUE : vnpu_status_from_errno(err);
	}
	a->gem_handle = create.handle;
	a->devptr = create.device_addr;
	a->bo_flags = bo_flags;
	a->created_by = caller;
	info.handle = create.handle;
	if (drmIoctl(ctx->fd, DRM_IOCTL_VNPU_BO_INFO, &info)) {
		int err = errno;

		vnpu_alloc_release(ctx, a);
		return vnpu_status_from_errno(err);
	}
	a->size = info.size;
	if (bo_flags & DRM_VNPU_BO_HOST) {
		void *p = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->fd,
			       (off_t)info.mmap_offset);

		if (p == MAP_FAILED) {
			vnpu_alloc_release(ctx, a);
			return VNPU_ERROR_OUT_OF_HOST_MEMORY;
		}
		a->host = p;
	}
	*out = a;
	if (vnpu_tracing)
		vnpu_trace_memory(ctx);
	return VNPU_SUCCESS;
}

static int ctx_alloc(struct vnpu_context handle, uint64_t size, uint32_t flags,
		     uint32_t bo_flags, void *caller, struct vnpu_alloc **out)
{
	struct vnpu_alloc *a = NULL;
	struct vnpu_ctx *ctx;
	int status;

	if (!size || flags)
		return VNPU_ERROR_INVALID_VALUE;
	status = vnpu_ctx_get(handle, &ctx);
	if (status != VNPU_SUCCESS)
		return status;
	status = vnpu_alloc_create(ctx, size, bo_flags, caller, &a);
	if (status == VNPU_SUCCESS) {
		pthread_mutex_lock(&ctx->lock);
		status = insert_locked(ctx, a);
		pthread_mutex_unlock(&ctx->lock);
		if (status != VNPU_SUCCESS)
			vnpu_alloc_release(ctx, a);
		else
			*out = a;
	}
	if (status == VNPU_SUCCESS)
		vnpu_log_site(caller, "context 0x%llx: allocate %s0x%llx, %llu bytes",
			      (unsigned long long)handle.handle,
			      bo_flags & DRM_VNPU_BO_HOST ? "host-pinned " : "",
			      (unsigned long long)a->devptr, (unsigned long long)a->size);
	else
		vnpu_log(VNPU_LOG_WARN, "context 0x%llx: allocate %llu bytes%s: %s",
			 (unsigned long long)handle.handle, (unsigned long long)size,
			 bo_flags & DRM_VNPU_BO_HOST ? " host-pinned" : "", vnpu_status_name(status));
	vnpu_ctx_put(ctx);
	return status;
}

int vnpu_malloc(struct vnpu_context ctx, uint64_t size, uint32_t flags, uint64_t *devptr)
{
	VNPU_TRACE_API();
	struct vnpu_alloc *a = NULL;
	int status;

	if (!devptr)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = ctx_alloc(ctx, size, flags, 0, __builtin_return_address(0), &a);
	if (status == VNPU_SUCCESS)
		*devptr = a->devptr;
	return vnpu_set_status(status);
}

int vnpu_malloc_host(struct vnpu_context ctx, size_t size, uint32_t flags, void **ptr)
{
	VNPU_TRACE_API();
	struct vnpu_alloc *a = NULL;
	int status;

	if (!ptr)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = ctx_alloc(ctx, size, flags, DRM_VNPU_BO_HOST, __builtin_return_address(0), &a);
	if (status == VNPU_SUCCESS)
		*ptr = a->host;
	return vnpu_set_status(status);
}

/* Removes and returns the allocation matching @match; under ctx->lock. */
static struct vnpu_alloc *take_locked(struct vnpu_ctx *ctx, uint64_t devptr, const void *host)
{
	if (!host) {
		size_t pos = lower_bound_locked(ctx, devptr);
		struct vnpu_alloc *a;

		if (pos == ctx->num_allocs)
			return NULL;
		a = ctx->allocs[pos];
		if (a->devptr != devptr || (a->bo_flags & DRM_VNPU_BO_HOST))
			return NULL;
		remove_at_locked(ctx, pos);
		return a;
	}
	for (size_t pos = 0; pos < ctx->num_allocs; pos++) {
		struct vnpu_alloc *a = ctx->allocs[pos];

		if (a->host == host) {
			remove_at_locked(ctx, pos);
			return a;
		}
	}
	return NULL;
}

static int ctx_free(struct vnpu_context handle, uint64_t devptr, const void *host, void *caller)
{
	struct vnpu_alloc *a = NULL;
	struct vnpu_ctx *ctx;
	int status = vnpu_ctx_get(handle, &ctx);

	if (status != VNPU_SUCCESS)
		return status;
	pthread_mutex_lock(&ctx->lock);
	a = take_locked(ctx, devptr, host);
	pthread_mutex_unlock(&ctx->lock);
	if (a) {
		vnpu_log_site(caller, "context 0x%llx: free %s0x%llx, %llu bytes",
			      (unsigned long long)handle.handle, host ? "host-pinned " : "",
			      (unsigned long long)a->devptr, (unsigned long long)a->size);
		vnpu_alloc_release(ctx, a);
	} else {
		status = VNPU_ERROR_INVALID_VALUE;
	}
	vnpu_ctx_put(ctx);
	return status;
}

int vnpu_free(struct vnpu_context ctx, uint64_t devptr)
{
	VNPU_TRACE_API();

	return vnpu_set_status(ctx_free(ctx, devptr, NULL, __builtin_return_address(0)));
}

int vnpu_free_host(struct vnpu_context ctx, void *ptr)
{
	VNPU_TRACE_API();

	if (!ptr)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	return vnpu_set_status(ctx_free(ctx, 0, ptr, __builtin_return_address(0)));
}

void vnpu_ctx_free_allocs(struct vnpu_ctx *ctx)
{
	/* Only the releasing thread is left; the buffers close with the file. */
	for (size_t i = 0; i < ctx->num_allocs; i++) {
		if (ctx->allocs[i]->host)
			munmap(ctx->allocs[i]->host, ctx->allocs[i]->size);
		free(ctx->allocs[i]);
	}
	free(ctx->allocs);
	ctx->allocs = NULL;
	ctx->num_allocs = 0;
}

unsigned int vnpu_ctx_report_allocs(struct vnpu_ctx *ctx, FILE *out)
{
	unsigned int n;

	pthread_mutex_lock(&ctx->lock);
	n = (unsigned int)ctx->num_allocs;
	for (size_t i = 0; out && i < ctx->num_allocs; i++) {
		struct vnpu_alloc *a = ctx->allocs[i];
		char where[128];

		vnpu_describe_caller(a->created_by, where, sizeof(where));
		fprintf(out, "vnpu: leak:   %s allocation 0x%llx (%llu bytes), created by %s\n",
			a->bo_flags & DRM_VNPU_BO_HOST ? "host-pinned" : "device",
			(unsigned long long)a->devptr, (unsigned long long)a->size, where);
	}
	pthread_mutex_unlock(&ctx->lock);
	return n;
}

static int read_quota(int fd, struct drm_vnpu_quota *quota)
{
	memset(quota, 0, sizeof(*quota));
	if (drmIoctl(fd, DRM_IOCTL_VNPU_QUOTA_GET, quota))
		return vnpu_status_from_errno(errno);
	return VNPU_SUCCESS;
}

int vnpu_mem_get_info(struct vnpu_context handle, struct vnpu_mem_info *info)
{
	struct drm_vnpu_quota quota;
	uint64_t total = 0, used = 0, largest = 0;
	struct vnpu_ctx *ctx;
	int status, ret;

	if (!info)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_ctx_get(handle, &ctx);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	ret = vnpu_get_param(ctx->fd, DRM_VNPU_PARAM_VRAM_SIZE, &total);
	if (!ret)
		ret = vnpu_get_param(ctx->fd, DRM_VNPU_PARAM_VRAM_USED, &used);
	if (!ret)
		ret = vnpu_get_param(ctx->fd, DRM_VNPU_PARAM_VRAM_LARGEST_FREE, &largest);
	status = ret ? vnpu_status_from_errno(ret) : read_quota(ctx->fd, &quota);
	if (status == VNPU_SUCCESS) {
		info->total = total;
		info->free = total - used;
		info->largest_free = largest;
		info->process_used = quota.used;
		info->process_peak = quota.peak;
		info->soft_limit = quota.soft_limit;
		info->hard_limit = quota.hard_limit;
	}
	vnpu_ctx_put(ctx);
	return vnpu_set_status(status);
}

int vnpu_mem_set_soft_limit(struct vnpu_context handle, uint64_t bytes)
{
	struct drm_vnpu_quota quota = { .flags = DRM_VNPU_QUOTA_SET_SOFT, .soft_limit = bytes };
	struct vnpu_ctx *ctx;
	int status = vnpu_ctx_get(handle, &ctx);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (drmIoctl(ctx->fd, DRM_IOCTL_VNPU_QUOTA_SET, &quota))
		status = errno == EINVAL ? VNPU_ERROR_INVALID_VALUE : vnpu_status_from_errno(errno);
	vnpu_ctx_put(ctx);
	return vnpu_set_status(status);
}

uint64_t vnpu_ctx_host_devptr(struct vnpu_ctx *ctx, const void *ptr, uint64_t size)
{
	uint64_t devptr = 0;

	pthread_mutex_lock(&ctx->lock);
	for (size_t i = 0; i < ctx->num_allocs; i++) {
		struct vnpu_alloc *a = ctx->allocs[i];
		const char *base = a->host;

		if (base && (const char *)ptr >= base && size <= a->size &&
		    (uint64_t)((const char *)ptr - base) <= a->size - size) {
			devptr = a->devptr + (uint64_t)((const char *)ptr - base);
			break;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	return devptr;
}

int vnpu_ctx_owns_range(struct vnpu_ctx *ctx, uint64_t devptr, uint64_t size)
{
	int owns = 0;
	size_t pos;

	pthread_mutex_lock(&ctx->lock);
	/* The allocation starting at or before devptr is the only candidate. */
	pos = lower_bound_locked(ctx, devptr + 1);
	if (pos > 0) {
		struct vnpu_alloc *a = ctx->allocs[pos - 1];

		owns = devptr >= a->devptr && size <= a->size &&
		       devptr - a->devptr <= a->size - size;
	}
	pthread_mutex_unlock(&ctx->lock);
	return owns;
}

int vnpu_ctx_alloc_device(struct vnpu_ctx *ctx, uint64_t size, void *caller, uint64_t *devptr)
{
	struct vnpu_alloc *a = NULL;
	int status = vnpu_alloc_create(ctx, size, 0, caller, &a);

	if (status != VNPU_SUCCESS)
		return status;
	pthread_mutex_lock(&ctx->lock);
	status = insert_locked(ctx, a);
	pthread_mutex_unlock(&ctx->lock);
	if (status != VNPU_SUCCESS)
		vnpu_alloc_release(ctx, a);
	else
		*devptr = a->devptr;
	return status;
}

int vnpu_ctx_free_device(struct vnpu_ctx *ctx, uint64_t devptr)
{
	struct vnpu_alloc *a;

	pthread_mutex_lock(&ctx->lock);
	a = take_locked(ctx, devptr, NULL);
	pthread_mutex_unlock(&ctx->lock);
	if (!a)
		return VNPU_ERROR_INVALID_VALUE;
	vnpu_alloc_release(ctx, a);
	return VNPU_SUCCESS;
}
