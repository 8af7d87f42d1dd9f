// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Topology: where devices sit, the links between them, peer access between
 * contexts, and the device nearest to the calling thread's CPU. The driver
 * describes the links (DRM_IOCTL_VNPU_TOPOLOGY, uAPI 1.4); the host's NUMA
 * distances come from sysfs.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <xf86drm.h>

#include "core/runtime.h"

/* 0 or the status of a failed topology query. */
static int driver_status(int err)
{
	return err == ENOTTY || err == EINVAL ? VNPU_ERROR_DRIVER_VERSION : vnpu_status_from_errno(err);
}

/*
 * The driver's row for @dev: the links to every device of the module, by
 * physical index, in @row (malloc'd, *@n entries).
 */
static int driver_row(const struct vnpu_rt_device *dev, struct drm_vnpu_link **row, uint32_t *n)
{
	struct drm_vnpu_topology t = { 0 };

	if (drmIoctl(dev->fd, DRM_IOCTL_VNPU_TOPOLOGY, &t))
		return driver_status(errno);
	*row = calloc(t.count ? t.count : 1, sizeof(**row));
	if (!*row)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	t.links = (uintptr_t)*row;
	if (drmIoctl(dev->fd, DRM_IOCTL_VNPU_TOPOLOGY, &t)) {
		free(*row);
		return driver_status(errno);
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

int vnpu_device_get_location(uint32_t device, struct vnpu_device_location *loc)
{
	struct vnpu_rt_device dev;
	uint64_t numa = 0, node = 0, board = 0;
	int status, ret;

	if (!loc)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_rt_device(device, &dev);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	ret = vnpu_get_param(dev.fd, DRM_VNPU_PARAM_NUMA_NODE, &numa);
	if (!ret)
		ret = vnpu_get_param(dev.fd, DRM_VNPU_PARAM_TOPOLOGY_NODE, &node);
	if (!ret)
		ret = vnpu_get_param(dev.fd, DRM_VNPU_PARAM_TOPOLOGY_BOARD, &board);
	if (ret)
		return vnpu_set_status(driver_status(-ret));
	loc->numa_node = numa == DRM_VNPU_NUMA_NODE_NONE ? -1 : (int32_t)numa;
	loc->topology_node = (uint32_t)node;
	loc->board = (uint32_t)board;
	return VNPU_SUCCESS;
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

/* Position of @peer in @ctx's peer list, or -1; under ctx->lock. */
static long find_peer_locked(struct vnpu_ctx *ctx, uint64_t peer)
{
	for (size_t i = 0; i < ctx->num_peers; i++)
		if (ctx->peers[i] == peer)
			return (long)i;
	return -1;
}

int vnpu_ctx_peer_enabled(struct vnpu_ctx *ctx, struct vnpu_ctx *peer)
{
	int enabled;

	pthread_mutex_lock(&ctx->lock);
	enabled = find_peer_locked(ctx, peer->obj.handle) >= 0;
	pthread_mutex_unlock(&ctx->lock);
	return enabled;
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
	if (find_peer_locked(ctx, peer->obj.handle) >= 0) {
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
	pos = find_peer_locked(ctx, peer_handle.handle);
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

/* NUMA node of CPU @cpu, from /sys/devices/system/cpu/cpuN/nodeM; -1 if none. */
static int cpu_node(int cpu)
{
	char path[64];
	struct dirent *e;
	int node = -1;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "node", 4) && e->d_name[4] >= '0' && e->d_name[4] <= '9')
			node = atoi(e->d_name + 4);
	closedir(d);
	return node;
}

/* NUMA distance from node @from to node @to; 10 for itself, 255 unknown. */
static unsigned int numa_distance(int from, int to)
{
	char path[80], buf[1024];
	unsigned int distance = 255;
	FILE *f;

	if (from < 0 || to < 0)
		return 255;
	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/distance", from);
	f = fopen(path, "re");
	if (!f)
		return from == to ? 10 : 255;
	if (fgets(buf, sizeof(buf), f)) {
		char *p = buf, *end;

		for (int i = 0; i <= to; i++, p = end) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p)
				break;
			if (i == to)
				distance = (unsigned int)v;
		}
	}
	fclose(f);
	return distance;
}

int vnpu_device_choose_nearest(uint32_t *device)
{
	unsigned int best_distance = ~0u;
	uint32_t count = 0, best = 0;
	int cpu, node, status;

	if (!device)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_device_count(&count);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	cpu = sched_getcpu();
	node = cpu < 0 ? -1 : cpu_node(cpu);
	for (uint32_t i = 0; i < count; i++) {
		struct vnpu_device_location loc;
		unsigned int distance;

		if (vnpu_device_get_location(i, &loc) != VNPU_SUCCESS)
			continue;
		distance = numa_distance(node, loc.numa_node);
		if (distance < best_distance) {
			best_distance = distance;
			best = i;
		}
	}
	vnpu_log(VNPU_LOG_INFO, "nearest device to cpu %d (numa node %d): %u", cpu, node, best);
	*device = best;
	return VNPU_SUCCESS;
}
