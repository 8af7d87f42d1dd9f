// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Topology: the links between devices and peer access between contexts.
 * The driver describes the links (DRM_IOCTL_VNPU_TOPOLOGY, uAPI 1.4). Where
 * a single device sits (NUMA node, nearest device) is core/locality.c;
 * the peer list a context keeps is core/context.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xf86drm.h>

#include "core/runtime.h"
#include "multi.h"

/*
 * The driver's row for @dev: the links to every device of the module, by
 * physical index, in @row (malloc'd, *@n entries).
 */
static int driver_row(const struct vnpu_rt_device *dev, struct drm_vnpu_link **row, uint32_t *n)
{
	struct drm_vnpu_topology t = { 0 };

	if (drmIoctl(dev->fd, DRM_IOCTL_VNPU_TOPOLOGY, &t))
		return vnpu_status_from_query_errno(errno);
	*row = calloc(t.count ? t.count : 1, sizeof(**row));
	if (!*row)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	t.links = (uintptr_t)*row;
	if (drmIoctl(dev->fd, DRM_IOCTL_VNPU_TOPOLOGY, &t)) {
		free(*row);
		return vnpu_status_from_query_errno(errno);
	}
	*n = t.count;
	return VNPU_SUCCESS;
}

int vnpu_rt_link(uint32_t device, uint32_t peer, struct vnpu_link *link)
{
	struct vnpu_rt_device a, b;
	struct drm_vnpu_link *row = NULL;
	uint32_t n = 0;
	int status = vnpu_rt_device(device, &a);

	if (status == VNPU_SUCCESS)
		status = vnpu_rt_device(peer, &b);
	if (status == VNPU_SUCCESS)
		status = driver_row(&a, &row, &n);
	if (status != VNPU_SUCCESS)
		return status;
	if (b.physical_index >= n) {
		status = VNPU_ERROR_DRIVER;
	} else {
		link->link_class = (enum vnpu_link_class)row[b.physical_index].link_class;
		link->bandwidth_mbps = row[b.physical_index].bandwidth_mbps;
		link->latency_ns = row[b.physical_index].latency_ns;
	}
	free(row);
	return status;
}

int vnpu_device_get_topology(uint32_t count, struct vnpu_link *links)
{
	uint32_t visible = 0;
	int status;

	if (!links)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_device_count(&visible);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (count != visible)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	for (uint32_t i = 0; i < count && status == VNPU_SUCCESS; i++)
		for (uint32_t j = 0; j < count && status == VNPU_SUCCESS; j++)
			status = vnpu_rt_link(i, j, &links[(size_t)i * count + j]);
	return vnpu_set_status(status);
}

int vnpu_device_can_access_peer(uint32_t device, uint32_t peer, int *can_access)
{
	struct vnpu_rt_device a, b;
	int status;

	if (!can_access)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_rt_device(device, &a);
	if (status == VNPU_SUCCESS)
		status = vnpu_rt_device(peer, &b);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	/* Every vnpu device imports the others' buffers through dma-bufs. */
	*can_access = a.physical_index != b.physical_index;
	return VNPU_SUCCESS;
}

/* Both contexts, referenced; VNPU_ERROR_INVALID_VALUE if on the same device. */
static int get_pair(struct vnpu_context a, struct vnpu_context b, struct vnpu_ctx **ca,
		    struct vnpu_ctx **cb)
{
	struct vnpu_rt_device da, db;
	int status = vnpu_ctx_get(a, ca);

	if (status != VNPU_SUCCESS)
		return status;
	status = vnpu_ctx_get(b, cb);
	if (status != VNPU_SUCCESS) {
		vnpu_ctx_put(*ca);
		return status;
	}
	status = vnpu_rt_device((*ca)->device, &da);
	if (status == VNPU_SUCCESS)
		status = vnpu_rt_device((*cb)->device, &db);
	if (status == VNPU_SUCCESS && da.physical_index == db.physical_index)
		status = VNPU_ERROR_INVALID_VALUE;
	if (status != VNPU_SUCCESS) {
		vnpu_ctx_put(*cb);
		vnpu_ctx_put(*ca);
	}
	return status;
}

int vnpu_ctx_enable_peer_access(struct vnpu_context handle, struct vnpu_context peer_handle,
				uint32_t flags)
{
	struct vnpu_ctx *ctx, *peer;
	int status;

	if (flags)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = get_pair(handle, peer_handle, &ctx, &peer);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	pthread_mutex_lock(&ctx->lock);
	if (vnpu_ctx_find_peer_locked(ctx, peer->obj.handle) >= 0) {
		status = VNPU_ERROR_PEER_ACCESS_ALREADY_ENABLED;
	} else {
		uint64_t *grown = realloc(ctx->peers, (ctx->num_peers + 1) * sizeof(*grown));

		if (!grown) {
			status = VNPU_ERROR_OUT_OF_HOST_MEMORY;
		} else {
			ctx->peers = grown;
			ctx->peers[ctx->num_peers++] = peer->obj.handle;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	vnpu_log(VNPU_LOG_DEBUG, "context 0x%llx: enable peer access to 0x%llx: %s",
		 (unsigned long long)handle.handle, (unsigned long long)peer_handle.handle,
		 vnpu_status_name(status));
	vnpu_ctx_put(peer);
	vnpu_ctx_put(ctx);
	return vnpu_set_status(status);
}

int vnpu_ctx_disable_peer_access(struct vnpu_context handle, struct vnpu_context peer_handle)
{
	struct vnpu_ctx *ctx;
	long pos;
	int status = vnpu_ctx_get(handle, &ctx);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	/* The peer may be destroyed already: its handle still names the entry. */
	pthread_mutex_lock(&ctx->lock);
	pos = vnpu_ctx_find_peer_locked(ctx, peer_handle.handle);
	if (pos < 0) {
		status = VNPU_ERROR_PEER_ACCESS_NOT_ENABLED;
	} else {
		memmove(&ctx->peers[pos], &ctx->peers[pos + 1],
			(ctx->num_peers - (size_t)pos - 1) * sizeof(*ctx->peers));
		ctx->num_peers--;
	}
	pthread_mutex_unlock(&ctx->lock);
	vnpu_ctx_put(ctx);
	if (status == VNPU_ERROR_PEER_ACCESS_NOT_ENABLED) {
		struct vnpu_ctx *peer;

		/* Never enabled and not a live context: a bad handle. */
		if (vnpu_ctx_get(peer_handle, &peer) != VNPU_SUCCESS)
			status = VNPU_ERROR_INVALID_HANDLE;
		else
			vnpu_ctx_put(peer);
	}
	return vnpu_set_status(status);
}
