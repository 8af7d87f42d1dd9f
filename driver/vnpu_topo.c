// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/**
 * DOC: vnpu topology
 *
 * The module parameters describe the machine the devices sit in: devices
 * are grouped into boards of devices_per_board devices (index order), and
 * boards into nodes of boards_per_node boards. Two devices are linked by
 * the nearest group they share: the same board (%DRM_VNPU_LINK_BOARD),
 * the same node (%DRM_VNPU_LINK_NODE), or only the system
 * (%DRM_VNPU_LINK_SYSTEM). Each class has a bandwidth (link_bandwidth_mbps,
 * MB/s, 10^6 bytes per second) and a latency (link_latency_ns), nearer
 * classes no slower than farther ones.
 *
 * The description is fixed at load, so it needs no lock. A copy engine
 * reaching another device's VRAM through an imported buffer takes at
 * least latency + bytes / bandwidth of the link (vnpu_engine.c).
 */

#include <linux/kernel.h>
#include <linux/moduleparam.h>

#include "vnpu_drv.h"
#include "vnpu_topo.h"

#define VNPU_LINK_CLASSES	3	/* board, node, system */
#define VNPU_MAX_LINK_MBPS	10000000u	/* 10 TB/s */
#define VNPU_MAX_LINK_NS	10000000u	/* 10 ms */

static unsigned int vnpu_devices_per_board = 2;
module_param_named(devices_per_board, vnpu_devices_per_board, uint, 0444);
MODULE_PARM_DESC(devices_per_board,
		 "Devices on one board, grouped in index order (1-16, default 2)");

static unsigned int vnpu_boards_per_node = 2;
module_param_named(boards_per_node, vnpu_boards_per_node, uint, 0444);
MODULE_PARM_DESC(boards_per_node, "Boards in one node (1-16, default 2)");

static unsigned int vnpu_link_mbps[VNPU_LINK_CLASSES] = { 4000, 1000, 250 };
static unsigned int vnpu_link_mbps_count;
module_param_array_named(link_bandwidth_mbps, vnpu_link_mbps, uint, &vnpu_link_mbps_count,
			 0444);
MODULE_PARM_DESC(link_bandwidth_mbps,
		 "Link bandwidth in MB/s: board,node,system (1-10000000, default 4000,1000,250)");

static unsigned int vnpu_link_ns[VNPU_LINK_CLASSES] = { 2000, 10000, 50000 };
static unsigned int vnpu_link_ns_count;
module_param_array_named(link_latency_ns, vnpu_link_ns, uint, &vnpu_link_ns_count, 0444);
MODULE_PARM_DESC(link_latency_ns,
		 "Link latency in ns: board,node,system (0-10000000, default 2000,10000,50000)");

static const char *const vnpu_link_names[] = {
	[DRM_VNPU_LINK_SELF] = "self",
	[DRM_VNPU_LINK_BOARD] = "board",
	[DRM_VNPU_LINK_NODE] = "node",
	[DRM_VNPU_LINK_SYSTEM] = "system",
};

static bool vnpu_topo_array_ok(const char *name, const unsigned int *values,
			       unsigned int count, unsigned int max, bool increasing)
{
	unsigned int i;

	if (count && count != VNPU_LINK_CLASSES) {
		pr_err("vnpu: %s needs 3 values (board,node,system), got %u\n", name, count);
		return false;
	}
	for (i = 0; i < VNPU_LINK_CLASSES; i++) {
		if (values[i] > max || (!increasing && !values[i])) {
			pr_err("vnpu: %s=%u for %s is out of range (%u-%u)\n", name, values[i],
			       vnpu_link_names[i + 1], increasing ? 0 : 1, max);
			return false;
		}
		if (!i)
			continue;
		if (increasing ? values[i] < values[i - 1] : values[i] > values[i - 1]) {
			pr_err("vnpu: %s: %s (%u) is %s than %s (%u)\n", name,
			       vnpu_link_names[i + 1], values[i],
			       increasing ? "lower" : "higher", vnpu_link_names[i], values[i - 1]);
			return false;
		}
	}
	return true;
}

/* Checks the topology parameters; a clear kernel log line for each refusal. */
int vnpu_topo_check_params(unsigned int num_devices)
{
	if (vnpu_devices_per_board < 1 || vnpu_devices_per_board > VNPU_MAX_DEVICES) {
		pr_err("vnpu: devices_per_board=%u is out of range (1-%u)\n",
		       vnpu_devices_per_board, VNPU_MAX_DEVICES);
		return -EINVAL;
	}
	if (vnpu_boards_per_node < 1 || vnpu_boards_per_node > VNPU_MAX_DEVICES) {
		pr_err("vnpu: boards_per_node=%u is out of range (1-%u)\n",
		       vnpu_boards_per_node, VNPU_MAX_DEVICES);
		return -EINVAL;
	}
	/* Nearer links are at least as fast: bandwidth falls, latency grows. */
	if (!vnpu_topo_array_ok("link_bandwidth_mbps", vnpu_link_mbps, vnpu_link_mbps_count,
				VNPU_MAX_LINK_MBPS, false) ||
	    !vnpu_topo_array_ok("link_latency_ns", vnpu_link_ns, vnpu_link_ns_count,
				VNPU_MAX_LINK_NS, true))
		return -EINVAL;
	/* The defaults are in use: show all three in /sys/module/vnpu/parameters. */
	vnpu_link_mbps_count = VNPU_LINK_CLASSES;
	vnpu_link_ns_count = VNPU_LINK_CLASSES;
	return 0;
}

unsigned int vnpu_topo_board(unsigned int index)
{
	return index / vnpu_devices_per_board;
}

unsigned int vnpu_topo_node(unsigned int index)
{
	return vnpu_topo_board(index) / vnpu_boards_per_node;
}

/* The DRM_VNPU_LINK_* class of the link between devices @from and @to. */
u32 vnpu_topo_class(unsigned int from, unsigned int to)
{
	if (from == to)
		return DRM_VNPU_LINK_SELF;
	if (vnpu_topo_board(from) == vnpu_topo_board(to))
		return DRM_VNPU_LINK_BOARD;
	if (vnpu_topo_node(from) == vnpu_topo_node(to))
		return DRM_VNPU_LINK_NODE;
	return DRM_VNPU_LINK_SYSTEM;
}

const char *vnpu_topo_class_name(u32 link_class)
{
	return link_class < ARRAY_SIZE(vnpu_link_names) ? vnpu_link_names[link_class] : "?";
}

/* The link from device @from to device @to; all zero but the class for self. */
void vnpu_topo_link(unsigned int from, unsigned int to, struct drm_vnpu_link *link)
{
	u32 link_class = vnpu_topo_class(from, to);

	*link = (struct drm_vnpu_link){ .link_class = link_class };
	if (link_class == DRM_VNPU_LINK_SELF)
		return;
	link->bandwidth_mbps = vnpu_link_mbps[link_class - DRM_VNPU_LINK_BOARD];
	link->latency_ns = vnpu_link_ns[link_class - DRM_VNPU_LINK_BOARD];
}
