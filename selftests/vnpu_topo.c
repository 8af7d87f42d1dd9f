// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Topology of the driver: the machine the module parameters describe is
 * what sysfs and the ioctls report for every device, the topology ioctl
 * refuses bad input, and a copy through another device's VRAM is correct
 * and takes at least the link's latency + bytes / bandwidth.
 *
 * VNPU_TOPO_EXPECT, if set, is the link_class row device 0 must have
 * (e.g. "self board node node system"), checked in addition to the row the
 * test derives from the module parameters.
 */
#include "kselftest_harness.h"
#include "vnpu_exec_utils.h"

#define MAX_DEV 16

static const char *const class_names[] = { "self", "board", "node", "system" };

/* The machine as the module parameters describe it. */
struct machine {
	unsigned int num;
	unsigned int per_board, boards_per_node;
	unsigned int mbps[3], ns[3];
};

static int read_uint_list(const char *param, unsigned int *v, unsigned int n)
{
	char buf[256], *p = buf, *end;

	if (vnpu_module_param(param, buf, sizeof(buf)))
		return -1;
	for (unsigned int i = 0; i < n; i++) {
		v[i] = strtoul(p, &end, 10);
		if (end == p)
			return -1;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static int machine_read(struct machine *m)
{
	return read_uint_list("num_devices", &m->num, 1) ||
	       read_uint_list("devices_per_board", &m->per_board, 1) ||
	       read_uint_list("boards_per_node", &m->boards_per_node, 1) ||
	       read_uint_list("link_bandwidth_mbps", m->mbps, 3) ||
	       read_uint_list("link_latency_ns", m->ns, 3) ? -1 : 0;
}

static unsigned int board_of(const struct machine *m, unsigned int i)
{
	return i / m->per_board;
}

static unsigned int node_of(const struct machine *m, unsigned int i)
{
	return board_of(m, i) / m->boards_per_node;
}

static struct drm_vnpu_link expect_link(const struct machine *m, unsigned int a, unsigned int b)
{
	struct drm_vnpu_link l = { 0 };

	if (a == b)
		return l;
	l.link_class = board_of(m, a) == board_of(m, b) ? DRM_VNPU_LINK_BOARD :
		       node_of(m, a) == node_of(m, b) ? DRM_VNPU_LINK_NODE : DRM_VNPU_LINK_SYSTEM;
	l.bandwidth_mbps = m->mbps[l.link_class - 1];
	l.latency_ns = m->ns[l.link_class - 1];
	return l;
}

static int topology(int fd, uint32_t *count, struct drm_vnpu_link *links)
{
	struct drm_vnpu_topology t = { .count = *count, .links = (uintptr_t)links };

	if (ioctl(fd, DRM_IOCTL_VNPU_TOPOLOGY, &t))
		return -errno;
	*count = t.count;
	return 0;
}

FIXTURE(topo) {
	int fd[MAX_DEV];	/* by device index */
	struct machine m;
};

FIXTURE_SETUP(topo)
{
	unsigned int n = vnpu_count_devices();

	memset(self->fd, -1, sizeof(self->fd));
	ASSERT_EQ(0, machine_read(&self->m));
	ASSERT_EQ(self->m.num, n);
	for (unsigned int i = 0; i < n; i++) {
		int fd = vnpu_open_nth(i);
		uint64_t index = 0;

		ASSERT_LE(0, fd);
		vnpu_get_param(fd, DRM_VNPU_PARAM_DEVICE_INDEX, &index);
		ASSERT_GT(n, index);
		self->fd[index] = fd;
	}
}

FIXTURE_TEARDOWN(topo)
{
	for (unsigned int i = 0; i < MAX_DEV; i++)
		if (self->fd[i] >= 0)
			close(self->fd[i]);
}

/* Parses @n space-separated unsigned integers. */
static int parse_row(const char *s, unsigned int *v, unsigned int n)
{
	char *end;

	for (unsigned int i = 0; i < n; i++) {
		v[i] = strtoul(s, &end, 10);
		if (end == s || (*end != ' ' && *end != '\0') || (*end == '\0' && i + 1 < n))
			return -1;
		s = end;
	}
	return *s ? -1 : 0;
}

TEST_F(topo, sysfs_and_ioctl_match_the_parameters)
{
	const struct machine *m = &self->m;

	for (unsigned int i = 0; i < m->num; i++) {
		char buf[512], want[512] = "", *tok, *save;
		unsigned int mbps[MAX_DEV], ns[MAX_DEV], j = 0;
		struct drm_vnpu_link links[MAX_DEV];
		uint32_t count = MAX_DEV;
		uint64_t v = 0;

		vnpu_get_param(self->fd[i], DRM_VNPU_PARAM_NUM_DEVICES, &v);
		EXPECT_EQ(m->num, v);
		vnpu_get_param(self->fd[i], DRM_VNPU_PARAM_TOPOLOGY_NODE, &v);
		EXPECT_EQ(node_of(m, i), v);
		vnpu_get_param(self->fd[i], DRM_VNPU_PARAM_TOPOLOGY_BOARD, &v);
		EXPECT_EQ(board_of(m, i), v);
		ASSERT_EQ(0, vnpu_sysfs_read(self->fd[i], "topology_node", buf, sizeof(buf)));
		EXPECT_EQ(node_of(m, i), strtoul(buf, NULL, 10));
		ASSERT_EQ(0, vnpu_sysfs_read(self->fd[i], "topology_board", buf, sizeof(buf)));
		EXPECT_EQ(board_of(m, i), strtoul(buf, NULL, 10));

		ASSERT_EQ(0, topology(self->fd[i], &count, links));
		ASSERT_EQ(m->num, count);
		ASSERT_EQ(0, vnpu_sysfs_read(self->fd[i], "link_bandwidth_mbps", buf, sizeof(buf)));
		ASSERT_EQ(0, parse_row(buf, mbps, m->num)) TH_LOG("row '%s'", buf);
		ASSERT_EQ(0, vnpu_sysfs_read(self->fd[i], "link_latency_ns", buf, sizeof(buf)));
		ASSERT_EQ(0, parse_row(buf, ns, m->num)) TH_LOG("row '%s'", buf);
		ASSERT_EQ(0, vnpu_sysfs_read(self->fd[i], "link_class", buf, sizeof(buf)));
		for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save), j++) {
			struct drm_vnpu_link e;

			ASSERT_GT(m->num, j);
			e = expect_link(m, i, j);
			EXPECT_STREQ(class_names[e.link_class], tok) TH_LOG("%u -> %u", i, j);
			EXPECT_EQ(e.link_class, links[j].link_class);
			EXPECT_EQ(e.bandwidth_mbps, links[j].bandwidth_mbps);
			EXPECT_EQ(e.latency_ns, links[j].latency_ns);
			EXPECT_EQ(0, links[j].pad);
			EXPECT_EQ(e.bandwidth_mbps, mbps[j]);
			EXPECT_EQ(e.latency_ns, ns[j]);
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s",
				 j ? " " : "", class_names[e.link_class]);
		}
		EXPECT_EQ(m->num, j);
		if (i == 0 && getenv("VNPU_TOPO_EXPECT"))
			EXPECT_STREQ(getenv("VNPU_TOPO_EXPECT"), want);
	}
}

/* Links are symmetric and the classes order bandwidth and latency. */
TEST_F(topo, links_are_symmetric_and_ordered)
{
	struct drm_vnpu_link row[MAX_DEV][MAX_DEV];

	for (unsigned int i = 0; i < self->m.num; i++) {
		uint32_t count = MAX_DEV;

		ASSERT_EQ(0, topology(self->fd[i], &count, row[i]));
	}
	for (unsigned int i = 0; i < self->m.num; i++) {
		for (unsigned int j = 0; j < self->m.num; j++) {
			EXPECT_EQ(row[i][j].link_class, row[j][i].link_class);
			EXPECT_EQ(row[i][j].bandwidth_mbps, row[j][i].bandwidth_mbps);
			EXPECT_EQ(i == j, row[i][j].link_class == DRM_VNPU_LINK_SELF);
			for (unsigned int k = 0; k < self->m.num; k++) {
				if (row[i][j].link_class >= row[i][k].link_class || j == i)
					continue;
				EXPECT_GE(row[i][j].bandwidth_mbps, row[i][k].bandwidth_mbps);
				EXPECT_LE(row[i][j].latency_ns, row[i][k].latency_ns);
			}
		}
	}
}

TEST_F(topo, partial_and_count_only_rows)
{
	struct drm_vnpu_link links[MAX_DEV + 1];
	struct drm_vnpu_topology t = { 0 };
	uint32_t count = 0;

	/* Count only. */
	ASSERT_EQ(0, ioctl(self->fd[0], DRM_IOCTL_VNPU_TOPOLOGY, &t));
	EXPECT_EQ(self->m.num, t.count);
	/* One entry: the rest untouched. */
	memset(links, 0xa5, sizeof(links));
	count = 1;
	ASSERT_EQ(0, topology(self->fd[0], &count, links));
	EXPECT_EQ(self->m.num, count);
	EXPECT_EQ(DRM_VNPU_LINK_SELF, links[0].link_class);
	EXPECT_EQ(0xa5a5a5a5, links[1].link_class);
	/* More room than devices: nothing written past N. */
	memset(links, 0xa5, sizeof(links));
	count = MAX_DEV + 1;
	ASSERT_EQ(0, topology(self->fd[0], &count, links));
	EXPECT_EQ(self->m.num, count);
	EXPECT_EQ(0xa5a5a5a5, links[self->m.num].link_class);
}

TEST_F(topo, bad_topology_args)
{
	struct drm_vnpu_link links[MAX_DEV];
	struct drm_vnpu_topology t;

	t = (struct drm_vnpu_topology){ .count = 1, .links = (uintptr_t)links, .flags = 1 };
	EXPECT_EQ(-1, ioctl(self->fd[0], DRM_IOCTL_VNPU_TOPOLOGY, &t));
	EXPECT_EQ(EINVAL, errno);
	t = (struct drm_vnpu_topology){ .count = 1, .links = (uintptr_t)links, .pad = 1 };
	EXPECT_EQ(-1, ioctl(self->fd[0], DRM_IOCTL_VNPU_TOPOLOGY, &t));
	EXPECT_EQ(EINVAL, errno);
	t = (struct drm_vnpu_topology){ .count = 1 };
	EXPECT_EQ(-1, ioctl(self->fd[0], DRM_IOCTL_VNPU_TOPOLOGY, &t));
	EXPECT_EQ(EINVAL, errno);
	t = (struct drm_vnpu_topology){ .count = 1, .links = 8 };
	EXPECT_EQ(-1, ioctl(self->fd[0], DRM_IOCTL_VNPU_TOPOLOGY, &t));
	EXPECT_EQ(EFAULT, errno);
	/* A struct shorter than the first version. */
	t = (struct drm_vnpu_topology){ .count = 0 };
	EXPECT_EQ(-1, ioctl(self->fd[0], DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_TOPOLOGY,
						  struct drm_vnpu_link), &t));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * Device @to's copy engine copies @size bytes out of a VRAM buffer of
 * device @from into its own VRAM, between two device timestamps. Returns
 * the device time of the copy, or 0 on failure; checks the data.
 */
static uint64_t peer_copy(struct __test_metadata *_metadata, int from_fd, int to_fd,
			  uint64_t size)
{
	struct buf src, dst, host, ts;
	struct drm_vnpu_cmd cmds[4];
	uint32_t imported = 0, queue, sync;
	struct drm_vnpu_bo_info info = { 0 };
	uint64_t elapsed = 0;
	int dmabuf;

	if (buf_create(from_fd, size, DRM_VNPU_BO_MAPPABLE, &src) ||
	    buf_create(to_fd, size, 0, &dst) ||
	    buf_create(to_fd, size, DRM_VNPU_BO_HOST, &host) ||
	    buf_create(to_fd, 4096, DRM_VNPU_BO_HOST, &ts))
		return 0;
	vnpu_fill(src.map, size, 0x70b0);
	if (_vnpu_prime_export(from_fd, src.handle, &dmabuf) ||
	    _vnpu_prime_import(to_fd, dmabuf, &imported))
		return 0;
	close(dmabuf);
	info.handle = imported;
	if (ioctl(to_fd, DRM_IOCTL_VNPU_BO_INFO, &info))
		return 0;
	sync = syncobj_create(to_fd);
	if (queue_create(to_fd, DRM_VNPU_ENGINE_COPY, DRM_VNPU_PRIORITY_NORMAL, &queue))
		return 0;
	cmds[0] = cmd_ts(ts.addr);
	cmds[1] = cmd_copy(dst.addr, info.device_addr, size);
	cmds[2] = cmd_ts(ts.addr + 8);
	cmds[3] = cmd_copy(host.addr, dst.addr, size);
	EXPECT_EQ(0, submit_cmds(to_fd, queue, cmds, 4, NULL, 0, sync));
	EXPECT_EQ(0, syncobj_wait(to_fd, sync, 20000));
	EXPECT_EQ(1, syncobj_status(to_fd, sync));
	EXPECT_EQ(-1, vnpu_check(host.map, size, 0x70b0));
	elapsed = ((uint64_t *)ts.map)[1] - ((uint64_t *)ts.map)[0];
	queue_destroy(to_fd, queue);
	_vnpu_gem_close(to_fd, imported);
	buf_destroy(to_fd, &ts);
	buf_destroy(to_fd, &host);
	buf_destroy(to_fd, &dst);
	buf_destroy(from_fd, &src);
	return elapsed;
}

/*
 * Every pair of devices: the copy is correct and lasts at least the
 * link's latency + size / bandwidth, the pacing the driver guarantees (a
 * lower bound only; how much longer it takes is the benchmark's business).
 */
TEST_F(topo, peer_copy_is_correct_and_paced)
{
	const uint64_t size = 1 << 20;

	for (unsigned int from = 0; from < self->m.num; from++) {
		for (unsigned int to = 0; to < self->m.num; to++) {
			struct drm_vnpu_link l = expect_link(&self->m, to, from);
			uint64_t floor_ns, t;

			if (from == to)
				continue;
			floor_ns = l.latency_ns + size * 1000 / l.bandwidth_mbps;
			t = peer_copy(_metadata, self->fd[from], self->fd[to], size);
			ASSERT_NE(0, t);
			EXPECT_LE(floor_ns, t) TH_LOG("%u -> %u", from, to);
		}
	}
}

TEST_HARNESS_MAIN
