// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Topology through the runtime: the link matrix and locations match the
 * driver's sysfs, peer access follows its rules, "any device" picks the
 * nearest one, and the collectives give the CPU reference's result for
 * every device count from 1 to the number of devices (up to 8) and sizes
 * that do not divide evenly.
 *
 * VNPU_TOPO_NEAREST, if set, is the logical device VNPU_DEVICE_ANY must
 * choose (the group loads devices whose NUMA nodes make it the only near
 * one).
 */
#include <math.h>
#include <sched.h>
#include <time.h>

#include "kselftest_harness.h"
#include "vnpu_utils.h"
#include "vnpu.h"

#define MAX_DEV 8

static const char *const class_names[] = { "self", "board", "node", "system" };

FIXTURE(topo) {
	uint32_t n;
	struct vnpu_context ctx[MAX_DEV];
	struct vnpu_stream s[MAX_DEV];
};

FIXTURE_SETUP(topo)
{
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_count(&self->n));
	if (self->n > MAX_DEV)
		self->n = MAX_DEV;
	for (uint32_t i = 0; i < self->n; i++) {
		ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(i, 0, &self->ctx[i]));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_create(self->ctx[i], VNPU_PRIORITY_NORMAL, 0,
							   &self->s[i]));
	}
}

FIXTURE_TEARDOWN(topo)
{
	unsigned int leaks = 0;

	for (uint32_t i = 0; i < self->n; i++)
		vnpu_ctx_destroy(self->ctx[i], 0);
	vnpu_leak_report(NULL, &leaks);
	EXPECT_EQ(0, leaks);
	vnpu_finalize();
}

/* The runtime's matrix and locations are what each device's sysfs says. */
TEST_F(topo, matrix_matches_sysfs)
{
	uint32_t n = 0;
	struct vnpu_link *links;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_count(&n));
	links = calloc((size_t)n * n, sizeof(*links));
	ASSERT_NE(NULL, links);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_topology(n, links));
	for (uint32_t i = 0; i < n; i++) {
		struct vnpu_device_properties props;
		struct vnpu_device_location loc;
		char classes[512], mbps[512], attr[64], *save, *tok;
		int fd;

		ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_properties(i, &props));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_location(i, &loc));
		EXPECT_EQ(props.numa_node, loc.numa_node);
		fd = vnpu_open_nth(props.physical_index);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, vnpu_sysfs_read(fd, "topology_node", attr, sizeof(attr)));
		EXPECT_EQ(loc.topology_node, strtoul(attr, NULL, 10));
		ASSERT_EQ(0, vnpu_sysfs_read(fd, "topology_board", attr, sizeof(attr)));
		EXPECT_EQ(loc.board, strtoul(attr, NULL, 10));
		ASSERT_EQ(0, vnpu_sysfs_read(fd, "link_class", classes, sizeof(classes)));
		ASSERT_EQ(0, vnpu_sysfs_read(fd, "link_bandwidth_mbps", mbps, sizeof(mbps)));
		close(fd);
		/* Every device is visible: logical index == physical index. */
		tok = strtok_r(classes, " ", &save);
		for (uint32_t j = 0; j < n; j++, tok = strtok_r(NULL, " ", &save)) {
			ASSERT_NE(NULL, tok);
			EXPECT_STREQ(class_names[links[i * n + j].link_class], tok);
		}
		tok = strtok_r(mbps, " ", &save);
		for (uint32_t j = 0; j < n; j++, tok = strtok_r(NULL, " ", &save)) {
			ASSERT_NE(NULL, tok);
			EXPECT_EQ(links[i * n + j].bandwidth_mbps, strtoul(tok, NULL, 10));
		}
	}
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_get_topology(n + 1, links));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_get_topology(n, NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_get_location(n, &(struct vnpu_device_location){ 0 }));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_get_location(0, NULL));
	free(links);
}

TEST_F(topo, can_access_peer)
{
	int can = -1;

	for (uint32_t i = 0; i < self->n; i++) {
		for (uint32_t j = 0; j < self->n; j++) {
			ASSERT_EQ(VNPU_SUCCESS, vnpu_device_can_access_peer(i, j, &can));
			EXPECT_EQ(i != j, can);
		}
	}
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_can_access_peer(0, 99, &can));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_can_access_peer(99, 0, &can));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_can_access_peer(0, 0, NULL));
}

TEST_F(topo, peer_access_rules_and_copies)
{
	struct vnpu_context same;
	uint64_t src = 0, dst = 0;
	uint32_t out[1024];

	if (self->n < 2)
		SKIP(return, "needs two devices");
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx[1], sizeof(out), 0, &src));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx[0], sizeof(out), 0, &dst));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(self->ctx[1], src, 0x5eed, 1024));
	/* Not enabled: refused, nothing copied. */
	EXPECT_EQ(VNPU_ERROR_PEER_ACCESS_NOT_ENABLED,
		  vnpu_memcpy_peer(self->ctx[0], dst, self->ctx[1], src, sizeof(out)));
	EXPECT_EQ(VNPU_ERROR_PEER_ACCESS_NOT_ENABLED,
		  vnpu_memcpy_peer_async(self->s[0], dst, self->ctx[1], src, sizeof(out)));
	EXPECT_EQ(VNPU_ERROR_PEER_ACCESS_NOT_ENABLED,
		  vnpu_ctx_disable_peer_access(self->ctx[0], self->ctx[1]));
	/* Bad input. */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_ctx_enable_peer_access(self->ctx[0], self->ctx[0], 0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &same));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_ctx_enable_peer_access(self->ctx[0], same, 0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(same, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_ctx_enable_peer_access(self->ctx[0], self->ctx[1], 1));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE,
		  vnpu_ctx_enable_peer_access(self->ctx[0], (struct vnpu_context){ 42 }, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE,
		  vnpu_ctx_enable_peer_access((struct vnpu_context){ 42 }, self->ctx[1], 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE,
		  vnpu_ctx_disable_peer_access(self->ctx[0], (struct vnpu_context){ 42 }));
	/* Enabled: one direction, once. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_enable_peer_access(self->ctx[0], self->ctx[1], 0));
	EXPECT_EQ(VNPU_ERROR_PEER_ACCESS_ALREADY_ENABLED,
		  vnpu_ctx_enable_peer_access(self->ctx[0], self->ctx[1], 0));
	EXPECT_EQ(VNPU_ERROR_PEER_ACCESS_NOT_ENABLED,
		  vnpu_memcpy_peer(self->ctx[1], src, self->ctx[0], dst, sizeof(out)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_peer(self->ctx[0], dst, self->ctx[1], src, sizeof(out)));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx[0], out, dst, sizeof(out)));
	for (int i = 0; i < 1024; i++)
		ASSERT_EQ(0x5eed, out[i]);
	/* Asynchronous, into the middle of the buffer. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memset_d32(self->ctx[1], src, 0xcafe, 16));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_peer_async(self->s[0], dst + 512, self->ctx[1], src, 64));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s[0], VNPU_TIMEOUT_INFINITE));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx[0], out, dst, sizeof(out)));
	EXPECT_EQ(0x5eed, out[127]);
	EXPECT_EQ(0xcafe, out[128]);
	EXPECT_EQ(0xcafe, out[143]);
	EXPECT_EQ(0x5eed, out[144]);
	/* Disabled again: refused. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_disable_peer_access(self->ctx[0], self->ctx[1]));
	EXPECT_EQ(VNPU_ERROR_PEER_ACCESS_NOT_ENABLED,
		  vnpu_memcpy_peer(self->ctx[0], dst, self->ctx[1], src, sizeof(out)));
	EXPECT_EQ(VNPU_ERROR_PEER_ACCESS_NOT_ENABLED,
		  vnpu_ctx_disable_peer_access(self->ctx[0], self->ctx[1]));
}

TEST_F(topo, any_device_is_the_nearest)
{
	const char *want = getenv("VNPU_TOPO_NEAREST");
	struct vnpu_context any;
	uint32_t chosen = 99, device = 99;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_choose_nearest(&chosen));
	ASSERT_GT(self->n, chosen);
	if (want)
		EXPECT_EQ(strtoul(want, NULL, 10), chosen);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(VNPU_DEVICE_ANY, 0, &any));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_get_device(any, &device));
	EXPECT_EQ(chosen, device);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(any, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_choose_nearest(NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_ctx_create(VNPU_DEVICE_ANY - 1, 0, &any));
}

/* --- collectives ----------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Integer-valued inputs: every sum is exact in fp32, in any order. */
static float input(uint32_t rank, size_t i)
{
	return (float)((rank + 1) * 3 + (i * 7) % 101);
}

struct bufs {
	uint64_t send[MAX_DEV], recv[MAX_DEV];
};

static void upload(struct __test_metadata *_metadata, struct vnpu_context ctx, uint64_t dst,
		   const float *data, size_t count)
{
	ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_htod(ctx, dst, data, count * 4));
}

/* Ranks 0..n-1 on devices @dev[0..n-1]; the comm over their streams. */
static void make_comm(struct __test_metadata *_metadata, FIXTURE_DATA(topo) *self,
		      const uint32_t *dev, uint32_t n, struct vnpu_comm *comm)
{
	struct vnpu_stream streams[MAX_DEV];

	for (uint32_t r = 0; r < n; r++)
		streams[r] = self->s[dev[r]];
	ASSERT_EQ(VNPU_SUCCESS, vnpu_comm_create(n, streams, comm));
}

static void sync_all(struct __test_metadata *_metadata, FIXTURE_DATA(topo) *self,
		     const uint32_t *dev, uint32_t n)
{
	for (uint32_t r = 0; r < n; r++)
		ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_synchronize(self->s[dev[r]], VNPU_TIMEOUT_INFINITE));
}

/* Devices of @n ranks, reversed and rotated, so ranks are not ring positions. */
static void pick_devices(uint32_t n, uint32_t *dev)
{
	for (uint32_t r = 0; r < n; r++)
		dev[r] = (n + 2 - r) % n;
}

static const size_t sizes[] = { 1, 3, 1000, 4099, 20001 };

/*
 * All-reduce of @count elements over @n ranks against the CPU sum. Ranks
 * whose bit is set in @batched have a batch of the caller's open on their
 * stream during the call: the collective leaves it open and opens none.
 */
static void check_all_reduce(struct __test_metadata *_metadata, FIXTURE_DATA(topo) *self,
			     uint32_t n, size_t count, int in_place, uint32_t batched)
{
	float *host = malloc(count * 4), *out = malloc(count * 4);
	uint32_t dev[MAX_DEV] = { 0 };
	struct vnpu_comm comm;
	struct bufs b;

	ASSERT_NE(NULL, host);
	ASSERT_NE(NULL, out);
	pick_devices(n, dev);
	for (uint32_t r = 0; r < n; r++) {
		ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx[dev[r]], count * 4, 0, &b.send[r]));
		b.recv[r] = b.send[r];
		if (!in_place)
			ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx[dev[r]], count * 4, 0, &b.recv[r]));
		for (size_t i = 0; i < count; i++)
			host[i] = input(r, i);
		upload(_metadata, self->ctx[dev[r]], b.send[r], host, count);
	}
	make_comm(_metadata, self, dev, n, &comm);
	for (uint32_t r = 0; r < n; r++)
		if (batched >> r & 1)
			ASSERT_EQ(VNPU_SUCCESS, vnpu_stream_begin_batch(self->s[dev[r]]));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_all_reduce(comm, b.send, b.recv, count, VNPU_DTYPE_F32,
						VNPU_REDUCE_SUM));
	for (uint32_t r = 0; r < n; r++) {
		int want = batched >> r & 1 ? VNPU_SUCCESS : VNPU_ERROR_INVALID_VALUE;

		EXPECT_EQ(want, vnpu_stream_end_batch(self->s[dev[r]])) TH_LOG("rank %u", r);
	}
	sync_all(_metadata, self, dev, n);
	for (uint32_t r = 0; r < n; r++) {
		ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx[dev[r]], out, b.recv[r], count * 4));
		for (size_t i = 0; i < count; i++) {
			float want = 0;

			for (uint32_t q = 0; q < n; q++)
				want += input(q, i);
			ASSERT_EQ(want, out[i]) TH_LOG("n %u count %zu rank %u elem %zu", n, count, r, i);
		}
		if (!in_place) {
			ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx[dev[r]], out, b.send[r],
								  count * 4));
			EXPECT_EQ(input(r, count - 1), out[count - 1]);
			vnpu_free(self->ctx[dev[r]], b.recv[r]);
		}
		vnpu_free(self->ctx[dev[r]], b.send[r]);
	}
	EXPECT_EQ(VNPU_SUCCESS, vnpu_comm_destroy(comm));
	free(host);
	free(out);
}

TEST_F_TIMEOUT(topo, all_reduce_matches_cpu_reference, 280)
{
	for (uint32_t n = 1; n <= self->n; n++) {
		double t0 = now_s();

		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			check_all_reduce(_metadata, self, n, sizes[i], i % 2, 0);
		TH_LOG("%u devices: %.1f s", n, now_s() - t0);
	}
}

/*
 * A batch of the caller's open on some or all streams gathers the
 * collective's work there: the all-reduce is exact and the batch stays open.
 */
TEST_F(topo, all_reduce_in_callers_batches)
{
	uint32_t all = (1u << self->n) - 1;

	check_all_reduce(_metadata, self, self->n, 4099, 1, 0x55 & all);
	check_all_reduce(_metadata, self, self->n, 1000, 0, all);
}

TEST_F_TIMEOUT(topo, broadcast_from_every_root, 280)
{
	size_t count = 4099;
	float *host = malloc(count * 4), *out = malloc(count * 4);

	ASSERT_NE(NULL, host);
	ASSERT_NE(NULL, out);
	for (uint32_t n = 1; n <= self->n; n++) {
		uint32_t dev[MAX_DEV];
		struct vnpu_comm comm;
		struct bufs b;

		pick_devices(n, dev);
		make_comm(_metadata, self, dev, n, &comm);
		for (uint32_t r = 0; r < n; r++) {
			ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx[dev[r]], count * 4, 0, &b.recv[r]));
			ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx[dev[r]], count * 4, 0, &b.send[r]));
			for (size_t i = 0; i < count; i++)
				host[i] = input(r, i);
			upload(_metadata, self->ctx[dev[r]], b.send[r], host, count);
		}
		for (uint32_t root = 0; root < n; root++) {
			ASSERT_EQ(VNPU_SUCCESS, vnpu_broadcast(comm, root, b.send[root], b.recv,
							       count, VNPU_DTYPE_F32));
			sync_all(_metadata, self, dev, n);
			for (uint32_t r = 0; r < n; r++) {
				ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx[dev[r]], out,
									  b.recv[r], count * 4));
				for (size_t i = 0; i < count; i++) {
					ASSERT_EQ(input(root, i), out[i])
						TH_LOG("n %u root %u rank %u elem %zu", n, root, r, i);
				}
			}
		}
		EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_broadcast(comm, n, b.send[0], b.recv,
								   count, VNPU_DTYPE_F32));
		for (uint32_t r = 0; r < n; r++) {
			vnpu_free(self->ctx[dev[r]], b.send[r]);
			vnpu_free(self->ctx[dev[r]], b.recv[r]);
		}
		EXPECT_EQ(VNPU_SUCCESS, vnpu_comm_destroy(comm));
	}
	free(host);
	free(out);
}

TEST_F_TIMEOUT(topo, all_gather_and_reduce_scatter, 280)
{
	static const size_t counts[] = { 1, 333 };

	for (uint32_t n = 1; n <= self->n; n++) {
		for (size_t ci = 0; ci < 2; ci++) {
			size_t count = counts[ci], total = count * n;
			float *host = malloc(total * 4), *out = malloc(total * 4);
			uint64_t small[MAX_DEV], big[MAX_DEV];
			uint32_t dev[MAX_DEV];
			struct vnpu_comm comm;

			ASSERT_NE(NULL, host);
			ASSERT_NE(NULL, out);
			pick_devices(n, dev);
			make_comm(_metadata, self, dev, n, &comm);
			for (uint32_t r = 0; r < n; r++) {
				ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx[dev[r]], count * 4, 0,
								    &small[r]));
				ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx[dev[r]], total * 4, 0,
								    &big[r]));
				for (size_t i = 0; i < count; i++)
					host[i] = input(r, i);
				upload(_metadata, self->ctx[dev[r]], small[r], host, count);
			}
			/* All-gather: rank r's block at r * count everywhere. */
			ASSERT_EQ(VNPU_SUCCESS, vnpu_all_gather(comm, small, big, count,
								VNPU_DTYPE_F32));
			sync_all(_metadata, self, dev, n);
			for (uint32_t r = 0; r < n; r++) {
				ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx[dev[r]], out, big[r],
									  total * 4));
				for (size_t i = 0; i < total; i++) {
					ASSERT_EQ(input(i / count, i % count), out[i])
						TH_LOG("gather n %u rank %u elem %zu", n, r, i);
				}
			}
			/* Reduce-scatter: each rank's big buffer is its input. */
			for (uint32_t r = 0; r < n; r++) {
				for (size_t i = 0; i < total; i++)
					host[i] = input(r, i);
				upload(_metadata, self->ctx[dev[r]], big[r], host, total);
			}
			ASSERT_EQ(VNPU_SUCCESS, vnpu_reduce_scatter(comm, big, small, count,
								    VNPU_DTYPE_F32, VNPU_REDUCE_SUM));
			sync_all(_metadata, self, dev, n);
			for (uint32_t r = 0; r < n; r++) {
				ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx[dev[r]], out, small[r],
									  count * 4));
				for (size_t i = 0; i < count; i++) {
					float want = 0;

					for (uint32_t q = 0; q < n; q++)
						want += input(q, r * count + i);
					ASSERT_EQ(want, out[i])
						TH_LOG("scatter n %u rank %u elem %zu", n, r, i);
				}
				/* The input is left as it was. */
				ASSERT_EQ(VNPU_SUCCESS, vnpu_memcpy_dtoh(self->ctx[dev[r]], out, big[r],
									  total * 4));
				EXPECT_EQ(input(r, total - 1), out[total - 1]);
				vnpu_free(self->ctx[dev[r]], small[r]);
				vnpu_free(self->ctx[dev[r]], big[r]);
			}
			EXPECT_EQ(VNPU_SUCCESS, vnpu_comm_destroy(comm));
			free(host);
			free(out);
		}
	}
}

/* The ring keeps boards and nodes together: each slow class crossed least. */
TEST_F(topo, ring_follows_topology)
{
	uint32_t dev[MAX_DEV], ring[MAX_DEV], nodes = 0, boards = 0;
	uint32_t seen_node[MAX_DEV * 2] = { 0 }, seen_board[MAX_DEV * 2] = { 0 };
	unsigned int crossings[4] = { 0 };
	struct vnpu_link *links;
	struct vnpu_comm comm;
	uint32_t n = self->n;

	pick_devices(n, dev);
	make_comm(_metadata, self, dev, n, &comm);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_comm_get_ring(comm, n, ring));
	links = calloc((size_t)n * n, sizeof(*links));
	ASSERT_NE(NULL, links);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_topology(n, links));
	for (uint32_t p = 0; p < n; p++) {
		uint32_t a = dev[ring[p]], b = dev[ring[(p + 1) % n]];
		struct vnpu_device_location loc;

		ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_location(a, &loc));
		ASSERT_GT(MAX_DEV * 2, loc.topology_node);
		ASSERT_GT(MAX_DEV * 2, loc.board);
		nodes += !seen_node[loc.topology_node]++;
		boards += !seen_board[loc.board]++;
		if (n > 1)
			crossings[links[a * n + b].link_class]++;
	}
	/* A ring visiting k groups one after the other crosses k group borders. */
	EXPECT_EQ(nodes > 1 ? nodes : 0, crossings[VNPU_LINK_SYSTEM]);
	EXPECT_EQ(boards > 1 ? boards : 0,
		  crossings[VNPU_LINK_SYSTEM] + crossings[VNPU_LINK_NODE]);
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_comm_get_ring(comm, n + 1, ring));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_comm_get_ring(comm, n, NULL));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_comm_destroy(comm));
	free(links);
}

TEST_F(topo, collective_bad_input)
{
	uint64_t buf[MAX_DEV], big[MAX_DEV];
	struct vnpu_stream twice[2];
	struct vnpu_comm comm;
	uint32_t dev[MAX_DEV];
	uint32_t n = self->n;

	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_comm_create(0, self->s, &comm));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_comm_create(65, self->s, &comm));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_comm_create(1, NULL, &comm));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_comm_create(1, self->s, NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE,
		  vnpu_comm_create(1, &(struct vnpu_stream){ 42 }, &comm));
	/* Two ranks on one device. */
	twice[0] = twice[1] = self->s[0];
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_comm_create(2, twice, &comm));

	pick_devices(n, dev);
	make_comm(_metadata, self, dev, n, &comm);
	for (uint32_t r = 0; r < n; r++) {
		ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx[dev[r]], 4096, 0, &buf[r]));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx[dev[r]], 4096 * n, 0, &big[r]));
	}
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_all_reduce(comm, buf, buf, 0, VNPU_DTYPE_F32, VNPU_REDUCE_SUM));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_all_reduce(comm, buf, buf, 1, (enum vnpu_dtype)7, VNPU_REDUCE_SUM));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_all_reduce(comm, buf, buf, 1, VNPU_DTYPE_F32, (enum vnpu_reduce_op)7));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_all_reduce(comm, NULL, buf, 1, VNPU_DTYPE_F32, VNPU_REDUCE_SUM));
	/* One element past the allocation. */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_all_reduce(comm, buf, buf, 1025, VNPU_DTYPE_F32, VNPU_REDUCE_SUM));
	/* The gathered output must hold every rank's block. */
	if (n > 1)
		EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
			  vnpu_all_gather(comm, buf, buf, 1024, VNPU_DTYPE_F32));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_reduce_scatter(comm, buf, buf, 1025, VNPU_DTYPE_F32, VNPU_REDUCE_SUM));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE,
		  vnpu_broadcast(comm, 0, buf[0] + 4092, buf, 2, VNPU_DTYPE_F32));
	/* Nothing ran: the streams are clean and the comm still works. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_all_reduce(comm, buf, buf, 1024, VNPU_DTYPE_F32,
						VNPU_REDUCE_SUM));
	sync_all(_metadata, self, dev, n);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_comm_destroy(comm));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_comm_destroy(comm));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE,
		  vnpu_all_reduce(comm, buf, buf, 1, VNPU_DTYPE_F32, VNPU_REDUCE_SUM));
	for (uint32_t r = 0; r < n; r++) {
		vnpu_free(self->ctx[dev[r]], buf[r]);
		vnpu_free(self->ctx[dev[r]], big[r]);
	}
}

TEST_HARNESS_MAIN
