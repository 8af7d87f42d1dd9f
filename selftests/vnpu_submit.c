// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: queues and job submission: QUEUE_CREATE/QUEUE_DESTROY,
 * SUBMIT with every command, ordering, syncobj waits and signals (binary
 * and timeline), every bad input, and teardown with jobs in flight.
 */
#include <linux/capability.h>
#include <limits.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "vnpu_exec_utils.h"

#define PAGE 4096ULL

static int syncobj_timeline_wait(int fd, uint32_t handle, uint64_t point,
				 uint64_t timeout_ms)
{
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)&handle, .points = (uintptr_t)&point,
		.count_handles = 1,
		.timeout_nsec = now_ns() + timeout_ms * 1000000ULL,
	};

	return ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w) ? -errno : 0;
}

/* A sync_file fd holding a binary syncobj's fence, or -errno. */
static int syncobj_export(int fd, uint32_t handle)
{
	struct drm_syncobj_handle h = {
		.handle = handle,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
	};

	return ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h) ? -errno : h.fd;
}

/* Waits for a sync_file; returns its status (1 signalled, <0 error). */
static int sync_file_wait(int sf, int timeout_ms)
{
	struct pollfd p = { .fd = sf, .events = POLLIN };
	struct sync_file_info info = {};

	if (poll(&p, 1, timeout_ms) != 1)
		return 0;
	return ioctl(sf, SYNC_IOC_FILE_INFO, &info) ? -1000 - errno : info.status;
}

FIXTURE(submit) {
	int fd;
	uint32_t queue;
	struct buf host;	/* 64 KiB host-pinned */
	struct buf vram;	/* 64 KiB mappable VRAM */
	uint32_t sync;
};

FIXTURE_SETUP(submit)
{
	self->fd = vnpu_open_nth(0);
	if (self->fd < 0)
		SKIP(return, "no vnpu device");
	ASSERT_EQ(0, _queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE,
				   DRM_VNPU_PRIORITY_NORMAL, 0, &self->queue));
	ASSERT_EQ(0, buf_create(self->fd, 64 << 10, DRM_VNPU_BO_HOST, &self->host));
	ASSERT_EQ(0, buf_create(self->fd, 64 << 10, DRM_VNPU_BO_MAPPABLE, &self->vram));
	self->sync = syncobj_create(self->fd);
	ASSERT_NE(0, self->sync);
}

FIXTURE_TEARDOWN(submit)
{
	if (self->fd < 0)
		return;
	buf_destroy(self->fd, &self->host);
	buf_destroy(self->fd, &self->vram);
	close(self->fd);
}

TEST_F(submit, queue_ids_are_nonzero_and_destroyable)
{
	uint32_t id = 0;

	EXPECT_NE(0, self->queue);
	ASSERT_EQ(0, _queue_create(self->fd, DRM_VNPU_ENGINE_COPY, DRM_VNPU_PRIORITY_HIGH,
				   0, &id));
	EXPECT_NE(self->queue, id);
	EXPECT_EQ(0, queue_destroy(self->fd, id));
	EXPECT_EQ(-ENOENT, queue_destroy(self->fd, id));
}

TEST_F(submit, fill_copy_readback)
{
	struct drm_vnpu_cmd cmds[] = {
		cmd_fill(self->host.addr, 64 << 10, 0xdeadbeef),
		cmd_copy(self->vram.addr + 4, self->host.addr, 1000),
		cmd_fill(self->host.addr + 8192, 16, 0x01020304),
		cmd_copy(self->host.addr + 60000, self->vram.addr + 4, 1000),
	};
	uint32_t *h = self->host.map;
	uint8_t *v = self->vram.map;

	memset(self->vram.map, 0x55, 64 << 10);
	ASSERT_EQ(0, submit_cmds(self->fd, self->queue, cmds, 4, NULL, 0, self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_EQ(1, syncobj_status(self->fd, self->sync));

	EXPECT_EQ(0xdeadbeef, h[0]);
	EXPECT_EQ(0xdeadbeef, h[(64 << 10) / 4 - 1]);
	EXPECT_EQ(0x01020304, h[8192 / 4]);
	EXPECT_EQ(0x01020304, h[8192 / 4 + 3]);
	EXPECT_EQ(0xdeadbeef, h[8192 / 4 + 4]);
	EXPECT_EQ(0x55, v[3]);
	EXPECT_EQ(0xef, v[4]);
	EXPECT_EQ(0, memcmp(v + 4, h, 1000));
	EXPECT_EQ(0x55, v[1004]);
	EXPECT_EQ(0, memcmp((uint8_t *)self->host.map + 60000, h, 1000));
}

TEST_F(submit, unused_buffer_is_backed_and_zero_at_first_job)
{
	struct buf fresh = {};
	struct drm_vnpu_cmd cmd;
	uint64_t before = ~0ULL, after = 0;

	/* Not mappable: only the job below can give it its pages. */
	ASSERT_EQ(0, buf_create(self->fd, 64 << 10, 0, &fresh));
	ASSERT_EQ(0, vnpu_fdinfo_bytes(self->fd, "drm-resident-vram", &before));
	memset(self->host.map, 0xa5, 64 << 10);
	cmd = cmd_copy(self->host.addr, fresh.addr, 64 << 10);
	ASSERT_EQ(0, submit_cmds(self->fd, self->queue, &cmd, 1, NULL, 0, self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_EQ(1, syncobj_status(self->fd, self->sync));
	for (size_t i = 0; i < (64 << 10); i++) {
		ASSERT_EQ(0, ((uint8_t *)self->host.map)[i]) {
			TH_LOG("byte %zu of a new buffer is not zero", i);
		}
	}
	ASSERT_EQ(0, vnpu_fdinfo_bytes(self->fd, "drm-resident-vram", &after));
	EXPECT_EQ(before + (64 << 10), after);
	buf_destroy(self->fd, &fresh);
}

TEST_F(submit, copy_engine_queue_copies)
{
	struct drm_vnpu_cmd cmd = cmd_copy(self->vram.addr, self->host.addr, 64 << 10);
	uint32_t q = 0;

	for (size_t i = 0; i < (64 << 10) / 4; i++)
		((uint32_t *)self->host.map)[i] = i * 2654435761u;
	ASSERT_EQ(0, _queue_create(self->fd, DRM_VNPU_ENGINE_COPY, DRM_VNPU_PRIORITY_LOW, 0,
				   &q));
	ASSERT_EQ(0, submit_cmds(self->fd, q, &cmd, 1, NULL, 0, self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_EQ(0, memcmp(self->vram.map, self->host.map, 64 << 10));
}

/*
 * Copies of every alignment and length class the copy engine treats apart:
 * shorter than a vector block, whole and partial blocks, across its FPU
 * sections (256 KiB) and its chunks (1 MiB), and overlapping ranges both
 * ways, which must move as memmove() does. The buffer is checked whole
 * against the same copies made on the CPU.
 */
TEST_F(submit, copies_of_every_alignment_and_overlap)
{
	static const struct { size_t dst, src, n; } c[] = {
		{ 0, 1 << 21, 1 }, { 3, (1 << 21) + 5, 127 }, { 4096, 1 << 21, 128 },
		{ 8191, (1 << 21) + 1, 129 }, { 12345, (1 << 21) + 777, 4099 },
		{ 65536 + 7, (1 << 21) + 11, 300001 }, { 1, (1 << 21) + 2, (1 << 20) + 333 },
		{ 100, 164, 5000 }, { 164, 100, 5000 },		/* overlapping, both ways */
		{ 17, 1, 400000 }, { (1 << 20) + 1, (1 << 20) + 9, 600000 },
	};
	const size_t size = 4 << 20;
	struct buf b = {};
	uint8_t *ref = malloc(size);
	uint32_t seed = 12345;

	ASSERT_NE(NULL, ref);
	ASSERT_EQ(0, buf_create(self->fd, size, DRM_VNPU_BO_HOST, &b));
	for (size_t i = 0; i < size; i++) {
		seed = seed * 1103515245u + 12345u;
		ref[i] = seed >> 16;
	}
	memcpy(b.map, ref, size);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct drm_vnpu_cmd cmd = cmd_copy(b.addr + c[i].dst, b.addr + c[i].src, c[i].n);

		ASSERT_EQ(0, submit_cmds(self->fd, self->queue, &cmd, 1, NULL, 0, self->sync)) {
			TH_LOG("copy %zu", i);
		}
		ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 20000));
		EXPECT_EQ(1, syncobj_status(self->fd, self->sync));
		memmove(ref + c[i].dst, ref + c[i].src, c[i].n);
		ASSERT_EQ(0, memcmp(ref, b.map, size)) {
			TH_LOG("copy %zu (%zu bytes from %zu to %zu) differs", i, c[i].n,
			       c[i].src, c[i].dst);
		}
	}
	buf_destroy(self->fd, &b);
	free(ref);
}

TEST_F(submit, jobs_of_a_queue_run_in_order)
{
	uint64_t *ts = self->host.map;
	uint32_t *last = (uint32_t *)((char *)self->host.map + 4096);

	for (uint32_t i = 0; i < 32; i++) {
		struct drm_vnpu_cmd cmds[] = {
			cmd_ts(self->host.addr + i * 8),
			cmd_fill(self->host.addr + 4096, 4, i),
		};

		ASSERT_EQ(0, submit_cmds(self->fd, self->queue, cmds, 2, NULL, 0,
					 i == 31 ? self->sync : 0));
	}
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_EQ(31, *last);
	for (int i = 1; i < 32; i++)
		EXPECT_LE(ts[i - 1], ts[i]);
}

TEST_F(submit, timestamp_is_the_monotonic_clock)
{
	struct drm_vnpu_cmd cmd = cmd_ts(self->host.addr + 8);
	uint64_t before = now_ns(), *ts = self->host.map;

	ASSERT_EQ(0, submit_cmds(self->fd, self->queue, &cmd, 1, NULL, 0, self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_LE(before, ts[1]);
	EXPECT_GE(now_ns(), ts[1]);
}

TEST_F(submit, delay_occupies_the_engine)
{
	struct drm_vnpu_cmd cmds[] = {
		cmd_ts(self->host.addr), cmd_delay(50000000), cmd_ts(self->host.addr + 8),
	};
	uint64_t *ts = self->host.map;

	ASSERT_EQ(0, submit_cmds(self->fd, self->queue, cmds, 3, NULL, 0, self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_GE(ts[1] - ts[0], 50000000ULL);
}

TEST_F(submit, binary_syncobj_orders_two_queues)
{
	struct drm_vnpu_cmd a[] = { cmd_delay(100000000), cmd_ts(self->host.addr) };
	struct drm_vnpu_cmd b = cmd_ts(self->host.addr + 8);
	struct drm_vnpu_sync wait = { .handle = self->sync };
	uint32_t q2 = 0, done = syncobj_create(self->fd);
	uint64_t *ts = self->host.map;

	ASSERT_EQ(0, _queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE,
				   DRM_VNPU_PRIORITY_HIGH, 0, &q2));
	ASSERT_EQ(0, submit_cmds(self->fd, self->queue, a, 2, NULL, 0, self->sync));
	ASSERT_EQ(0, submit_cmds(self->fd, q2, &b, 1, &wait, 1, done));
	ASSERT_EQ(0, syncobj_wait(self->fd, done, 5000));
	EXPECT_NE(0, ts[0]);
	EXPECT_LE(ts[0], ts[1]);
}

TEST_F(submit, timeline_points_wait_and_signal)
{
	uint32_t tl = syncobj_create(self->fd);
	struct drm_vnpu_cmd a[] = { cmd_delay(50000000), cmd_ts(self->host.addr) };
	struct drm_vnpu_cmd b = cmd_ts(self->host.addr + 8);
	struct drm_vnpu_sync wait = { .handle = tl, .point = 5 };
	struct drm_syncobj_timeline_array q = {
		.handles = (uintptr_t)&tl, .count_handles = 1,
	};
	uint64_t point = 0, *ts = self->host.map;
	uint32_t q2 = 0;

	ASSERT_NE(0, tl);
	ASSERT_EQ(0, _queue_create(self->fd, DRM_VNPU_ENGINE_COPY, DRM_VNPU_PRIORITY_NORMAL,
				   0, &q2));
	ASSERT_EQ(0, submit_cmds_at(self->fd, self->queue, a, 2, NULL, 0, tl, 5));
	ASSERT_EQ(0, submit_cmds_at(self->fd, q2, &b, 1, &wait, 1, tl, 6));
	ASSERT_EQ(0, syncobj_timeline_wait(self->fd, tl, 6, 5000));
	q.points = (uintptr_t)&point;
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_SYNCOBJ_QUERY, &q));
	EXPECT_EQ(6, point);
	EXPECT_NE(0, ts[0]);
	EXPECT_LE(ts[0], ts[1]);
}

TEST_F(submit, bad_submit_fields)
{
	struct drm_vnpu_cmd ok = cmd_fill(self->host.addr, 4, 1);
	struct drm_vnpu_submit s;
	struct drm_vnpu_sync w;

#define BASE() (s = (struct drm_vnpu_submit){ .queue_id = self->queue, \
	.cmds = (uintptr_t)&ok, .cmd_count = 1 })
	BASE();
	EXPECT_EQ(0, _submit(self->fd, &s));
	BASE(); s.flags = 1;
	EXPECT_EQ(-EINVAL, _submit(self->fd, &s));
	BASE(); s.pad = 1;
	EXPECT_EQ(-EINVAL, _submit(self->fd, &s));
	BASE(); s.cmd_count = 0;
	EXPECT_EQ(-EINVAL, _submit(self->fd, &s));
	BASE(); s.cmd_count = DRM_VNPU_MAX_CMDS + 1;
	EXPECT_EQ(-EINVAL, _submit(self->fd, &s));
	BASE(); s.cmd_count = 0xffffffff;
	EXPECT_EQ(-EINVAL, _submit(self->fd, &s));
	BASE(); s.wait_count = DRM_VNPU_MAX_WAITS + 1;
	EXPECT_EQ(-EINVAL, _submit(self->fd, &s));
	BASE(); s.queue_id = 0;
	EXPECT_EQ(-ENOENT, _submit(self->fd, &s));
	BASE(); s.queue_id = self->queue + 100;
	EXPECT_EQ(-ENOENT, _submit(self->fd, &s));
	BASE(); s.cmds = 8;
	EXPECT_EQ(-EFAULT, _submit(self->fd, &s));
	BASE(); s.wait_count = 1; s.waits = 8;
	EXPECT_EQ(-EFAULT, _submit(self->fd, &s));
	BASE(); s.wait_count = 1; s.waits = (uintptr_t)&w;
	w = (struct drm_vnpu_sync){ .handle = self->sync, .flags = 1 };
	EXPECT_EQ(-EINVAL, _submit(self->fd, &s));
	w = (struct drm_vnpu_sync){ .handle = 9999 };
	EXPECT_EQ(-ENOENT, _submit(self->fd, &s));
	/* A syncobj that never had a fence, and a point never submitted. */
	w = (struct drm_vnpu_sync){ .handle = self->sync };
	EXPECT_EQ(-EINVAL, _submit(self->fd, &s));
	w = (struct drm_vnpu_sync){ .handle = self->sync, .point = 3 };
	EXPECT_EQ(-EINVAL, _submit(self->fd, &s));
	BASE(); s.signal.handle = 9999;
	EXPECT_EQ(-ENOENT, _submit(self->fd, &s));
	BASE(); s.signal.handle = self->sync; s.signal.flags = 1;
	EXPECT_EQ(-EINVAL, _submit(self->fd, &s));
	BASE(); s.signal.point = 1;
	EXPECT_EQ(-EINVAL, _submit(self->fd, &s));
#undef BASE
	/* None of the failures signalled the syncobj. */
	EXPECT_EQ(-1000 - EINVAL, syncobj_status(self->fd, self->sync));
}

TEST_F(submit, bad_commands)
{
	uint64_t h = self->host.addr, v = self->vram.addr, sz = 64 << 10;
	const struct {
		const char *what;
		struct drm_vnpu_cmd cmd;
		int err;
	} bad[] = {
		{ "opcode 0", { .opcode = 0, .dst = h, .size = 4 }, -EINVAL },
		{ "opcode 99", { .opcode = 99, .dst = h, .size = 4 }, -EINVAL },
		{ "copy size 0", cmd_copy(h, v, 0), -EINVAL },
		{ "copy pattern", { .opcode = DRM_VNPU_CMD_COPY, .dst = h, .src = v,
				    .size = 4, .pattern = 1 }, -EINVAL },
		{ "copy src wraps", cmd_copy(h, ~0ULL - 1, 4), -EINVAL },
		{ "copy dst wraps", cmd_copy(~0ULL - 1, h, 4), -EINVAL },
		{ "copy past dst end", cmd_copy(h + sz - 4, v, 8), -EACCES },
		{ "copy past src end", cmd_copy(h, v + sz - 4, 8), -EACCES },
		{ "copy before buffer", cmd_copy(h - 4, v, 8), -EACCES },
		{ "copy unowned", cmd_copy(DRM_VNPU_VRAM_BASE + (1ULL << 40), h, 4), -EACCES },
		{ "copy address 0", cmd_copy(0, h, 4), -EACCES },
		{ "fill size 0", cmd_fill(h, 0, 1), -EINVAL },
		{ "fill misaligned dst", cmd_fill(h + 2, 4, 1), -EINVAL },
		{ "fill misaligned size", cmd_fill(h, 6, 1), -EINVAL },
		{ "fill src", { .opcode = DRM_VNPU_CMD_FILL, .dst = h, .src = h, .size = 4 },
		  -EINVAL },
		{ "fill past end", cmd_fill(h, sz + 4, 1), -EACCES },
		{ "fill huge", cmd_fill(h, 1ULL << 60, 1), -EACCES },
		{ "timestamp misaligned", cmd_ts(h + 4), -EINVAL },
		{ "timestamp size", { .opcode = DRM_VNPU_CMD_TIMESTAMP, .dst = h, .size = 8 },
		  -EINVAL },
		{ "timestamp at end", cmd_ts(h + sz), -EACCES },
		{ "timestamp wraps", cmd_ts(~0ULL - 7), -EINVAL },
		{ "delay 0", cmd_delay(0), -EINVAL },
		{ "delay too long", cmd_delay(DRM_VNPU_MAX_DELAY_NS + 1), -EINVAL },
		{ "delay dst", { .opcode = DRM_VNPU_CMD_DELAY, .dst = h, .size = 1 }, -EINVAL },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct drm_vnpu_cmd cmds[2] = { cmd_fill(h, 4, 7), bad[i].cmd };

		*(uint32_t *)self->host.map = 0;
		EXPECT_EQ(bad[i].err, submit_cmds(self->fd, self->queue, cmds, 2, NULL, 0,
						  self->sync)) {
			TH_LOG("%s", bad[i].what);
		}
	}
	/* Nothing ran: the good first command of each job was not executed. */
	usleep(20000);
	EXPECT_EQ(0, *(uint32_t *)self->host.map);
	EXPECT_EQ(0, submit_cmds_at(self->fd, self->queue, (struct drm_vnpu_cmd[]){
		cmd_copy(h + sz - 4, v + sz - 4, 4) }, 1, NULL, 0, self->sync, 0));
	EXPECT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
}

TEST_F(submit, buffer_of_another_file_is_refused)
{
	int fd2 = vnpu_open_nth(0);
	struct buf other;
	struct drm_vnpu_cmd cmd;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, buf_create(fd2, PAGE, DRM_VNPU_BO_HOST, &other));
	cmd = cmd_fill(other.addr, 4, 1);
	EXPECT_EQ(-EACCES, submit_cmds(self->fd, self->queue, &cmd, 1, NULL, 0, 0));
	cmd = cmd_copy(self->host.addr, other.addr, 4);
	EXPECT_EQ(-EACCES, submit_cmds(self->fd, self->queue, &cmd, 1, NULL, 0, 0));
	buf_destroy(fd2, &other);
	close(fd2);
}

TEST_F(submit, bad_queue_create_fields)
{
	struct drm_vnpu_queue_create q;
	uint32_t id = 0;

	EXPECT_EQ(-EINVAL, _queue_create(self->fd, 2, DRM_VNPU_PRIORITY_NORMAL, 0, &id));
	EXPECT_EQ(-EINVAL, _queue_create(self->fd, ~0u, DRM_VNPU_PRIORITY_NORMAL, 0, &id));
	EXPECT_EQ(-EINVAL, _queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE, 4, 0, &id));
	EXPECT_EQ(-EINVAL, _queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE, ~0u, 0, &id));
	EXPECT_EQ(-EINVAL, _queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE,
					 DRM_VNPU_PRIORITY_NORMAL, 1, &id));
	q = (struct drm_vnpu_queue_create){ .queue_id = 1 };
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VNPU_QUEUE_CREATE, &q));
	EXPECT_EQ(EINVAL, errno);

	struct drm_vnpu_queue_destroy d = { .queue_id = self->queue, .flags = 1 };

	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VNPU_QUEUE_DESTROY, &d));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-ENOENT, queue_destroy(self->fd, 0));
	EXPECT_EQ(-ENOENT, queue_destroy(self->fd, 12345));
}

/* Drops CAP_SYS_NICE from the calling (child) process. */
static int drop_sys_nice(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[0].effective &= ~(1u << CAP_SYS_NICE);
	data[0].permitted &= ~(1u << CAP_SYS_NICE);
	return syscall(SYS_capset, &hdr, data);
}

TEST_F(submit, realtime_needs_cap_sys_nice)
{
	uint32_t id = 0;
	pid_t pid;
	int status;

	ASSERT_EQ(0, _queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE,
				   DRM_VNPU_PRIORITY_REALTIME, 0, &id));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (drop_sys_nice())
			_exit(2);
		if (_queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE,
				  DRM_VNPU_PRIORITY_REALTIME, 0, &id) != -EPERM)
			_exit(3);
		_exit(_queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE,
				    DRM_VNPU_PRIORITY_HIGH, 0, &id) ? 4 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(submit, queue_limit_per_process)
{
	uint64_t max = 0;
	uint32_t ids[4096], id = 0;
	char buf[32];
	int fd2 = vnpu_open_nth(0);

	ASSERT_LE(0, fd2);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_MAX_QUEUES_PER_PROCESS, &max);
	ASSERT_EQ(0, vnpu_module_param("max_queues_per_process", buf, sizeof(buf)));
	EXPECT_EQ(strtoull(buf, NULL, 10), max);
	ASSERT_LE(max, 4096);
	/* The fixture's queue counts; so do queues on another file. */
	for (uint64_t i = 1; i < max; i++)
		ASSERT_EQ(0, _queue_create(i % 2 ? fd2 : self->fd, DRM_VNPU_ENGINE_COPY,
					   DRM_VNPU_PRIORITY_LOW, 0, &ids[i]));
	EXPECT_EQ(-EMFILE, _queue_create(self->fd, DRM_VNPU_ENGINE_COPY,
					 DRM_VNPU_PRIORITY_LOW, 0, &id));
	EXPECT_EQ(-EMFILE, _queue_create(fd2, DRM_VNPU_ENGINE_COMPUTE,
					 DRM_VNPU_PRIORITY_LOW, 0, &id));
	close(fd2);
	EXPECT_EQ(0, _queue_create(self->fd, DRM_VNPU_ENGINE_COPY,
				   DRM_VNPU_PRIORITY_LOW, 0, &id));
}

/* Fills @q with @n slow jobs writing @b, the last one signalling @sync. */
static int submit_slow_jobs(int fd, uint32_t q, struct buf *b, int n, uint32_t sync)
{
	for (int i = 0; i < n; i++) {
		struct drm_vnpu_cmd cmds[] = {
			cmd_delay(1000000), cmd_fill(b->addr, b->size, i),
			cmd_copy(b->addr + 4, b->addr, 8),
		};
		int ret = submit_cmds(fd, q, cmds, 3, NULL, 0, i == n - 1 ? sync : 0);

		if (ret)
			return ret;
	}
	return 0;
}

TEST_F(submit, destroy_queue_with_jobs_in_flight)
{
	uint64_t base = vram_used(self->fd);
	struct buf b;
	uint32_t q = 0;

	ASSERT_EQ(0, buf_create(self->fd, 1 << 20, 0, &b));
	ASSERT_EQ(0, _queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE,
				   DRM_VNPU_PRIORITY_NORMAL, 0, &q));
	ASSERT_EQ(0, submit_slow_jobs(self->fd, q, &b, 100, self->sync));
	buf_destroy(self->fd, &b);
	ASSERT_EQ(0, queue_destroy(self->fd, q));
	EXPECT_EQ(-ENOENT, submit_slow_jobs(self->fd, q, &self->host, 1, 0));
	/* The last job ran or was cancelled; either way its fence signals. */
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 10000));
	EXPECT_EQ(base, wait_vram_used(self->fd, base, 5000));
}

TEST_F(submit, close_fd_with_jobs_in_flight)
{
	uint64_t base = vram_used(self->fd);

	for (int round = 0; round < 10; round++) {
		int fd2 = vnpu_open_nth(0);
		struct buf b;
		uint32_t q = 0;

		ASSERT_LE(0, fd2);
		ASSERT_EQ(0, buf_create(fd2, 1 << 20, 0, &b));
		ASSERT_EQ(0, _queue_create(fd2, round % 2, round % 3, 0, &q));
		ASSERT_EQ(0, submit_slow_jobs(fd2, q, &b, 100, 0));
		close(fd2);
	}
	EXPECT_EQ(base, wait_vram_used(self->fd, base, 10000));
}

TEST_F(submit, killed_process_with_jobs_in_flight)
{
	uint64_t base = vram_used(self->fd);
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		int fd2 = vnpu_open_nth(0);
		struct buf b;
		uint32_t q = 0;

		if (fd2 < 0 || buf_create(fd2, 1 << 20, 0, &b) ||
		    _queue_create(fd2, 0, 1, 0, &q) || submit_slow_jobs(fd2, q, &b, 100, 0))
			_exit(1);
		pause();
		_exit(0);
	}
	usleep(100000);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(base, wait_vram_used(self->fd, base, 10000));
}

/*
 * A job longer than job_timeout_ms fails with -ETIMEDOUT; the job queued
 * behind it on the same (now guilty) queue fails with -ECANCELED, and the
 * engine goes on with another queue's job (uAPI 1.3).
 */
TEST_F(submit, job_timeout_fails_the_job)
{
	struct drm_vnpu_cmd slow = cmd_delay(DRM_VNPU_MAX_DELAY_NS);
	struct drm_vnpu_cmd ok = cmd_fill(self->host.addr, 4, 0x1234);
	uint32_t done = syncobj_create(self->fd), behind = syncobj_create(self->fd);
	uint32_t q2 = 0;
	char buf[32];

	ASSERT_EQ(0, vnpu_module_param("job_timeout_ms", buf, sizeof(buf)));
	if (strtoul(buf, NULL, 10) > 1000)
		SKIP(return, "job_timeout_ms=%s is too long for this test", buf);
	ASSERT_EQ(0, _queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE,
				   DRM_VNPU_PRIORITY_NORMAL, 0, &q2));
	ASSERT_EQ(0, submit_cmds(self->fd, self->queue, &slow, 1, NULL, 0, self->sync));
	ASSERT_EQ(0, submit_cmds(self->fd, self->queue, &ok, 1, NULL, 0, behind));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 9000));
	EXPECT_EQ(-ETIMEDOUT, syncobj_status(self->fd, self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, behind, 5000));
	EXPECT_EQ(-ECANCELED, syncobj_status(self->fd, behind));
	EXPECT_EQ(-ECANCELED, submit_cmds(self->fd, self->queue, &ok, 1, NULL, 0, 0));
	ASSERT_EQ(0, submit_cmds(self->fd, q2, &ok, 1, NULL, 0, done));
	ASSERT_EQ(0, syncobj_wait(self->fd, done, 5000));
	EXPECT_EQ(1, syncobj_status(self->fd, done));
	EXPECT_EQ(0x1234, *(uint32_t *)self->host.map);
}

/* Writes @dev to /sys/bus/platform/drivers/vnpu/@what (bind or unbind). */
static int driver_write(const char *what, const char *dev)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/bus/platform/drivers/vnpu/%s", what);
	return write_file(path, dev);
}

/*
 * Unplug with jobs running and queued: every fence signals with -ENODEV,
 * ioctls fail with -ENODEV, mappings stay readable, and once the file is
 * closed the device can be bound again. Runs last: it rebinds device 0.
 */
TEST(zz_unplug_with_jobs_in_flight)
{
	struct drm_vnpu_cmd slow[] = { cmd_delay(DRM_VNPU_MAX_DELAY_NS / 2) };
	char dir[256], real[PATH_MAX], *name;
	uint32_t q = 0, first, last;
	int first_sf, last_sf;
	uint64_t v = 0;
	unsigned long job_timeout_ms;
	char param[32];
	struct buf b;
	int fd = vnpu_open_nth(0);

	if (fd < 0)
		SKIP(return, "no vnpu device");
	ASSERT_EQ(0, vnpu_module_param("job_timeout_ms", param, sizeof(param)));
	job_timeout_ms = strtoul(param, NULL, 10);
	/*
	 * The jobs must still be running at the unbind: with a job timeout
	 * shorter than the slow job (group job-timeout), when the timeout ends
	 * it first depends on the machine's speed. The other groups run it.
	 */
	if (job_timeout_ms * 1000000ULL < DRM_VNPU_MAX_DELAY_NS / 2)
		SKIP(close(fd); return, "job_timeout_ms=%lu ends the slow job first", job_timeout_ms);
	ASSERT_EQ(0, vnpu_sysfs_dir(fd, dir, sizeof(dir)));
	*strrchr(dir, '/') = '\0';
	ASSERT_NE(NULL, realpath(dir, real));
	name = strrchr(real, '/') + 1;
	ASSERT_EQ(0, buf_create(fd, 64 << 10, DRM_VNPU_BO_HOST, &b));
	ASSERT_EQ(0, _queue_create(fd, DRM_VNPU_ENGINE_COMPUTE, DRM_VNPU_PRIORITY_NORMAL, 0,
				   &q));
	first = syncobj_create(fd);
	last = syncobj_create(fd);
	ASSERT_EQ(0, submit_cmds(fd, q, slow, 1, NULL, 0, first));
	ASSERT_EQ(0, submit_slow_jobs(fd, q, &b, 50, last));
	/* Syncobj ioctls fail after unplug too: hold the fences as sync files. */
	first_sf = syncobj_export(fd, first);
	last_sf = syncobj_export(fd, last);
	ASSERT_LE(0, first_sf);
	ASSERT_LE(0, last_sf);
	usleep(50000);

	/* -ENODEV, not 0: the unbind, not the jobs' own end, signalled them. */
	ASSERT_EQ(0, driver_write("unbind", name));
	EXPECT_EQ(-ENODEV, sync_file_wait(first_sf, 5000));
	EXPECT_EQ(-ENODEV, sync_file_wait(last_sf, 5000));
	close(first_sf);
	close(last_sf);
	EXPECT_EQ(-ENODEV, syncobj_wait(fd, first, 0));
	EXPECT_EQ(-ENODEV, _vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_USED, 0, &v));
	EXPECT_EQ(-ENODEV, submit_slow_jobs(fd, q, &b, 1, 0));
	EXPECT_EQ(-ENODEV, _queue_create(fd, 0, 0, 0, &q));
	EXPECT_EQ(-ENODEV, queue_destroy(fd, q));
	*(volatile uint32_t *)b.map = 1;
	buf_destroy(fd, &b);
	close(fd);

	ASSERT_EQ(0, driver_write("bind", name));
	fd = vnpu_open_nth(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, _vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_USED, 0, &v));
	EXPECT_EQ(0, v);
	close(fd);
}

TEST_HARNESS_MAIN
