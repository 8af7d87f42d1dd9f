// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: queue state and errors (QUEUE_INFO, per-queue timeouts,
 * guilty queues), HANG and its debugfs switch, device health and the sysfs
 * reset, fdinfo and sysfs engine statistics, priorities on a busy engine,
 * parallel engines, cross-process syncobj dependencies, and teardown races
 * (VNPU_STRESS_ITERS rounds each, default 50; make stress runs 1000).
 *
 * Tests that make jobs time out reset the device when they finish, so the
 * health they leave behind is "ok". Ordering tests assert the order of
 * device timestamps only, never durations.
 */
#include <limits.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "vnpu_exec_utils.h"

#define PAGE 4096ULL

static int stress_iters(void)
{
	const char *s = getenv("VNPU_STRESS_ITERS");

	return s && atoi(s) > 0 ? atoi(s) : 50;
}

/*
 * Path of a debugfs file of the device, in accel/<platform device name>;
 * mounts debugfs if needed.
 */
static int debugfs_path(int fd, const char *name, char *buf, size_t len)
{
	char dir[256], real[PATH_MAX];
	int ret = vnpu_sysfs_dir(fd, dir, sizeof(dir));

	if (ret)
		return ret;
	*strrchr(dir, '/') = '\0';
	if (!realpath(dir, real))
		return -errno;
	if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) && errno != EBUSY)
		return -errno;
	snprintf(buf, len, "/sys/kernel/debug/accel/%s/%s", strrchr(real, '/') + 1, name);
	return 0;
}

static int set_allow_hang(int fd, int on)
{
	char path[256];
	int ret = debugfs_path(fd, "allow_hang", path, sizeof(path));

	return ret ? ret : write_file(path, on ? "1" : "0");
}

static int sysfs_write(int fd, const char *attr, const char *val)
{
	char dir[256], path[512];
	int ret = vnpu_sysfs_dir(fd, dir, sizeof(dir));

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	return write_file(path, val);
}

static uint64_t sysfs_u64(int fd, const char *attr)
{
	char buf[64] = "";

	if (vnpu_sysfs_read(fd, attr, buf, sizeof(buf)))
		return ~0ULL;
	return strtoull(buf, NULL, 10);
}

static uint64_t health(int fd)
{
	uint64_t h = ~0ULL;

	_vnpu_get_param(fd, DRM_VNPU_PARAM_HEALTH, 0, &h);
	return h;
}

static const struct drm_vnpu_cmd hang = { .opcode = DRM_VNPU_CMD_HANG };

/* Waits until every job of @q is accounted for; returns the info. */
static int queue_settle(int fd, uint32_t q, struct drm_vnpu_queue_info *info)
{
	for (int i = 0; i < 5000; i++) {
		int ret = queue_info(fd, q, info);

		if (ret)
			return ret;
		if (info->completed + info->failed == info->submitted)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

FIXTURE(exec) {
	int fd;
	struct buf host;	/* 64 KiB host-pinned */
	uint32_t sync;
};

FIXTURE_SETUP(exec)
{
	self->fd = vnpu_open_nth(0);
	if (self->fd < 0)
		SKIP(return, "no vnpu device");
	ASSERT_EQ(0, buf_create(self->fd, 64 << 10, DRM_VNPU_BO_HOST, &self->host));
	memset(self->host.map, 0, 64 << 10);
	self->sync = syncobj_create(self->fd);
	ASSERT_NE(0, self->sync);
}

FIXTURE_TEARDOWN(exec)
{
	if (self->fd < 0)
		return;
	/* Leave the device healthy for the next test. */
	if (health(self->fd) != DRM_VNPU_HEALTH_OK)
		sysfs_write(self->fd, "reset", "1");
	set_allow_hang(self->fd, 0);
	buf_destroy(self->fd, &self->host);
	close(self->fd);
}

TEST_F(exec, queue_info_counts_and_bad_fields)
{
	struct drm_vnpu_cmd fill = cmd_fill(self->host.addr, 4, 1);
	struct drm_vnpu_queue_info info;
	struct drm_vnpu_queue_create qc;
	char buf[32];
	uint32_t q = 0;

	ASSERT_EQ(0, vnpu_module_param("job_timeout_ms", buf, sizeof(buf)));
	ASSERT_EQ(0, queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE, DRM_VNPU_PRIORITY_LOW, &q));
	ASSERT_EQ(0, queue_info(self->fd, q, &info));
	EXPECT_EQ(strtoul(buf, NULL, 10), info.timeout_ms);
	EXPECT_EQ(0, info.submitted);
	EXPECT_EQ(0, info.last_error_seqno);
	EXPECT_EQ(DRM_VNPU_NO_CMD, info.last_error_cmd);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, submit_cmds(self->fd, q, &fill, 1, NULL, 0, 0));
	ASSERT_EQ(0, queue_settle(self->fd, q, &info));
	EXPECT_EQ(10, info.submitted);
	EXPECT_EQ(10, info.completed);
	EXPECT_EQ(0, info.failed);
	EXPECT_EQ(0, info.last_error);

	/* Timeout: at create, by ioctl, bounded. */
	info = (struct drm_vnpu_queue_info){ .queue_id = q, .timeout_ms = 1234,
		.flags = DRM_VNPU_QUEUE_INFO_SET_TIMEOUT };
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VNPU_QUEUE_INFO, &info));
	EXPECT_EQ(1234, info.timeout_ms);
	EXPECT_EQ(0, queue_destroy(self->fd, q));
	ASSERT_EQ(0, queue_create_timeout(self->fd, DRM_VNPU_ENGINE_COPY,
					  DRM_VNPU_PRIORITY_NORMAL, 77, &q));
	ASSERT_EQ(0, queue_info(self->fd, q, &info));
	EXPECT_EQ(77, info.timeout_ms);
	EXPECT_EQ(-EINVAL, queue_create_timeout(self->fd, DRM_VNPU_ENGINE_COPY, 0,
						DRM_VNPU_MAX_TIMEOUT_MS + 1, &q));
	qc = (struct drm_vnpu_queue_create){ .pad = 1 };
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VNPU_QUEUE_CREATE, &qc));
	EXPECT_EQ(EINVAL, errno);

	/* Bad QUEUE_INFO fields. */
	const struct {
		struct drm_vnpu_queue_info info;
		int err;
	} bad[] = {
		{ { .queue_id = q, .flags = 2 }, EINVAL },
		{ { .queue_id = q, .pad = 1 }, EINVAL },
		{ { .queue_id = q, .timeout_ms = 5 }, EINVAL },
		{ { .queue_id = q, .flags = DRM_VNPU_QUEUE_INFO_SET_TIMEOUT,
		    .timeout_ms = DRM_VNPU_MAX_TIMEOUT_MS + 1 }, EINVAL },
		{ { .queue_id = 0 }, ENOENT },
		{ { .queue_id = q + 1000 }, ENOENT },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		info = bad[i].info;
		EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VNPU_QUEUE_INFO, &info));
		EXPECT_EQ(bad[i].err, errno) TH_LOG("case %zu", i);
	}
	ASSERT_EQ(0, queue_info(self->fd, q, &info));
	EXPECT_EQ(77, info.timeout_ms);
}

/*
 * A job over its queue's timeout fails with -ETIMEDOUT; the queue turns
 * guilty (its queued job fails with -ECANCELED, submits fail with
 * -ECANCELED) and another queue keeps running.
 */
TEST_F(exec, timeout_makes_the_queue_guilty_others_continue)
{
	struct drm_vnpu_cmd slow = cmd_delay(DRM_VNPU_MAX_DELAY_NS);
	struct drm_vnpu_cmd fill = cmd_fill(self->host.addr, 4, 0x55);
	uint32_t a = 0, b = 0, behind = syncobj_create(self->fd), other = syncobj_create(self->fd);
	struct drm_vnpu_queue_info info;

	ASSERT_EQ(0, queue_create_timeout(self->fd, DRM_VNPU_ENGINE_COMPUTE,
					  DRM_VNPU_PRIORITY_NORMAL, 100, &a));
	ASSERT_EQ(0, queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE, DRM_VNPU_PRIORITY_NORMAL, &b));
	ASSERT_EQ(0, submit_cmds(self->fd, a, &fill, 1, NULL, 0, 0));
	ASSERT_EQ(0, submit_cmds(self->fd, a, &slow, 1, NULL, 0, self->sync));
	ASSERT_EQ(0, submit_cmds(self->fd, a, &fill, 1, NULL, 0, behind));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 9000));
	/* -ETIMEDOUT, not 0: the timeout, not the DELAY's own end, ended it. */
	EXPECT_EQ(-ETIMEDOUT, syncobj_status(self->fd, self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, behind, 5000));
	EXPECT_EQ(-ECANCELED, syncobj_status(self->fd, behind));
	EXPECT_EQ(-ECANCELED, submit_cmds(self->fd, a, &fill, 1, NULL, 0, 0));

	ASSERT_EQ(0, submit_cmds(self->fd, b, &fill, 1, NULL, 0, other));
	ASSERT_EQ(0, syncobj_wait(self->fd, other, 5000));
	EXPECT_EQ(1, syncobj_status(self->fd, other));

	ASSERT_EQ(0, queue_settle(self->fd, a, &info));
	EXPECT_EQ(DRM_VNPU_QUEUE_STATE_GUILTY, info.state);
	EXPECT_EQ(3, info.submitted);
	EXPECT_EQ(1, info.completed);
	EXPECT_EQ(2, info.failed);
	/* The last failure is the cancelled job 3; job 2 timed out in cmd 0. */
	EXPECT_EQ(3, info.last_error_seqno);
	EXPECT_EQ(-ECANCELED, info.last_error);
	ASSERT_EQ(0, queue_info(self->fd, b, &info));
	EXPECT_EQ(0, info.state);
}

TEST_F(exec, timeout_reports_the_command)
{
	struct drm_vnpu_cmd cmds[] = { cmd_fill(self->host.addr, 4, 1), cmd_delay(DRM_VNPU_MAX_DELAY_NS) };
	struct drm_vnpu_queue_info info;
	uint32_t q = 0;

	ASSERT_EQ(0, queue_create_timeout(self->fd, DRM_VNPU_ENGINE_COPY,
					  DRM_VNPU_PRIORITY_NORMAL, 50, &q));
	ASSERT_EQ(0, submit_cmds(self->fd, q, cmds, 2, NULL, 0, self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 9000));
	ASSERT_EQ(0, queue_settle(self->fd, q, &info));
	EXPECT_EQ(1, info.last_error_seqno);
	EXPECT_EQ(1, info.last_error_cmd);
	EXPECT_EQ(-ETIMEDOUT, info.last_error);
	EXPECT_EQ(DRM_VNPU_QUEUE_STATE_GUILTY, info.state);
}

TEST_F(exec, hang_needs_the_debugfs_switch)
{
	uint32_t q = 0;
	struct drm_vnpu_cmd bad = hang;

	ASSERT_EQ(0, queue_create_timeout(self->fd, DRM_VNPU_ENGINE_COMPUTE,
					  DRM_VNPU_PRIORITY_NORMAL, 100, &q));
	ASSERT_EQ(0, set_allow_hang(self->fd, 0));
	EXPECT_EQ(-EPERM, submit_cmds(self->fd, q, (struct drm_vnpu_cmd *)&hang, 1, NULL, 0, 0));
	ASSERT_EQ(0, set_allow_hang(self->fd, 1));
	bad.size = 1;
	EXPECT_EQ(-EINVAL, submit_cmds(self->fd, q, &bad, 1, NULL, 0, 0));
	ASSERT_EQ(0, submit_cmds(self->fd, q, (struct drm_vnpu_cmd *)&hang, 1, NULL, 0,
				 self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 9000));
	EXPECT_EQ(-ETIMEDOUT, syncobj_status(self->fd, self->sync));
}

/* ok -> degraded -> needs-reset after repeated hangs; reset recovers. */
TEST_F(exec, health_degrades_and_reset_recovers)
{
	struct drm_vnpu_cmd fill = cmd_fill(self->host.addr, 4, 9);
	uint32_t q[DRM_VNPU_HEALTH_RESET_HANGS], fresh = 0;
	uint64_t resets;
	char buf[32];

	ASSERT_EQ(0, sysfs_write(self->fd, "reset", "1"));
	EXPECT_EQ(-EINVAL, sysfs_write(self->fd, "reset", "0"));
	resets = sysfs_u64(self->fd, "reset_count");
	ASSERT_EQ(DRM_VNPU_HEALTH_OK, health(self->fd));
	ASSERT_EQ(0, set_allow_hang(self->fd, 1));
	for (int i = 0; i < DRM_VNPU_HEALTH_RESET_HANGS; i++) {
		ASSERT_EQ(0, queue_create_timeout(self->fd, DRM_VNPU_ENGINE_COMPUTE,
						  DRM_VNPU_PRIORITY_NORMAL, 50, &q[i]));
		ASSERT_EQ(0, submit_cmds(self->fd, q[i], (struct drm_vnpu_cmd *)&hang, 1, NULL,
					 0, self->sync));
		ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 9000));
		EXPECT_EQ(-ETIMEDOUT, syncobj_status(self->fd, self->sync));
		if (i + 1 == DRM_VNPU_HEALTH_DEGRADED_HANGS) {
			EXPECT_EQ(DRM_VNPU_HEALTH_DEGRADED, health(self->fd));
			ASSERT_EQ(0, vnpu_sysfs_read(self->fd, "health", buf, sizeof(buf)));
			EXPECT_STREQ("degraded", buf);
		}
	}
	EXPECT_EQ(DRM_VNPU_HEALTH_NEEDS_RESET, health(self->fd));
	ASSERT_EQ(0, vnpu_sysfs_read(self->fd, "health", buf, sizeof(buf)));
	EXPECT_STREQ("needs-reset", buf);
	ASSERT_EQ(0, queue_create(self->fd, DRM_VNPU_ENGINE_COPY, DRM_VNPU_PRIORITY_NORMAL,
				  &fresh));
	EXPECT_EQ(-EIO, submit_cmds(self->fd, fresh, &fill, 1, NULL, 0, 0));

	ASSERT_EQ(0, sysfs_write(self->fd, "reset", "1"));
	EXPECT_EQ(DRM_VNPU_HEALTH_OK, health(self->fd));
	EXPECT_EQ(resets + 1, sysfs_u64(self->fd, "reset_count"));
	EXPECT_EQ(0, submit_cmds(self->fd, fresh, &fill, 1, NULL, 0, self->sync));
	EXPECT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	/* Guilty queues stay guilty. */
	EXPECT_EQ(-ECANCELED, submit_cmds(self->fd, q[0], &fill, 1, NULL, 0, 0));
}

/* A reset fails the running job and the jobs queued behind it with -EIO. */
TEST_F(exec, reset_fails_running_and_queued_jobs)
{
	struct drm_vnpu_cmd fill = cmd_fill(self->host.addr, 4, 0x77);
	uint32_t q = 0, queued = syncobj_create(self->fd);
	struct drm_vnpu_queue_info info;

	ASSERT_EQ(0, set_allow_hang(self->fd, 1));
	ASSERT_EQ(0, queue_create_timeout(self->fd, DRM_VNPU_ENGINE_COMPUTE,
					  DRM_VNPU_PRIORITY_NORMAL, 60000, &q));
	ASSERT_EQ(0, submit_cmds(self->fd, q, (struct drm_vnpu_cmd *)&hang, 1, NULL, 0,
				 self->sync));
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(0, submit_cmds(self->fd, q, &fill, 1, NULL, 0, i == 4 ? queued : 0));
	usleep(100000);
	EXPECT_EQ(0, syncobj_status(self->fd, self->sync));
	ASSERT_EQ(0, sysfs_write(self->fd, "reset", "1"));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_EQ(-EIO, syncobj_status(self->fd, self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, queued, 5000));
	EXPECT_EQ(-EIO, syncobj_status(self->fd, queued));
	EXPECT_EQ(0, *(uint32_t *)self->host.map);
	/* Not guilty: the queue works after the reset. */
	ASSERT_EQ(0, submit_cmds(self->fd, q, &fill, 1, NULL, 0, self->sync));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_EQ(1, syncobj_status(self->fd, self->sync));
	EXPECT_EQ(0x77, *(uint32_t *)self->host.map);
	ASSERT_EQ(0, queue_settle(self->fd, q, &info));
	EXPECT_EQ(0, info.state);
	EXPECT_EQ(6, info.failed);
	EXPECT_EQ(-EIO, info.last_error);
}

/* Reads "KEY:\t<uint>" from the fd's fdinfo; -1 if absent. */
static long long fdinfo_value(int fd, const char *key)
{
	char path[64], line[256];
	long long v = -1;
	size_t len = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':')
			v = strtoll(line + len + 1, NULL, 10);
	fclose(f);
	return v;
}

static uint64_t engines_sum(int fd, const char *cls, unsigned int count, const char *stat)
{
	uint64_t sum = 0;
	char attr[64];

	for (unsigned int i = 0; i < count; i++) {
		snprintf(attr, sizeof(attr), "../engines/%s%u_%s", cls, i, stat);
		sum += sysfs_u64(fd, attr);
	}
	return sum;
}

TEST_F(exec, fdinfo_and_sysfs_engine_stats)
{
	struct drm_vnpu_cmd d = cmd_delay(20000000), big[2];
	uint64_t ncomp = 0, ncopy = 0, busy0, queued = 0, *end_ts;
	long long running_ns = 0, long_jobs = 0;
	int fd2 = vnpu_open_nth(0), sampled = 0;
	struct buf hb = {};
	uint32_t qc = 0, qk = 0, done = syncobj_create(fd2), last = syncobj_create(fd2);
	char buf[32];

	ASSERT_LE(0, fd2);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_NUM_COMPUTE_ENGINES, &ncomp);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_NUM_COPY_ENGINES, &ncopy);
	EXPECT_EQ(0, fdinfo_value(fd2, "drm-engine-compute"));
	EXPECT_EQ(0, fdinfo_value(fd2, "drm-engine-copy"));
	EXPECT_EQ(ncomp > 1 ? (long long)ncomp : -1,
		  fdinfo_value(fd2, "drm-engine-capacity-compute"));
	EXPECT_EQ(ncopy > 1 ? (long long)ncopy : -1,
		  fdinfo_value(fd2, "drm-engine-capacity-copy"));
	/* Only the device's engines have attributes. */
	EXPECT_EQ(0, vnpu_sysfs_read(fd2, "../engines/compute0_busy_ns", buf, sizeof(buf)));
	snprintf(buf, sizeof(buf), "../engines/compute%llu_busy_ns", (unsigned long long)ncomp);
	EXPECT_EQ(-ENOENT, vnpu_sysfs_read(fd2, buf, buf, sizeof(buf)));

	ASSERT_EQ(0, buf_create(fd2, 4096, DRM_VNPU_BO_HOST, &hb));
	end_ts = hb.map;
	big[0] = cmd_delay(300000000);
	big[1] = cmd_ts(hb.addr);
	busy0 = engines_sum(fd2, "compute", ncomp, "busy_ns");
	ASSERT_EQ(0, queue_create(fd2, DRM_VNPU_ENGINE_COMPUTE, DRM_VNPU_PRIORITY_NORMAL, &qc));
	ASSERT_EQ(0, queue_create(fd2, DRM_VNPU_ENGINE_COPY, DRM_VNPU_PRIORITY_NORMAL, &qk));
	/*
	 * While the long job runs, the four compute jobs are queued and the
	 * executing one counts: sampled, then checked that the long job had
	 * not ended by then (its end timestamp still 0), else tried again on
	 * the next long job, so a slow machine cannot make it fail.
	 */
	for (int attempt = 0; attempt < 3 && !sampled; attempt++) {
		*end_ts = 0;
		ASSERT_EQ(0, submit_cmds(fd2, qc, big, 2, NULL, 0, 0));
		for (int i = 0; i < 3; i++)
			ASSERT_EQ(0, submit_cmds(fd2, qc, &d, 1, NULL, 0, i == 2 ? last : 0));
		usleep(20000);
		queued = engines_sum(fd2, "compute", ncomp, "queued_jobs");
		running_ns = fdinfo_value(fd2, "drm-engine-compute");
		sampled = !__atomic_load_n(end_ts, __ATOMIC_SEQ_CST);
		ASSERT_EQ(0, syncobj_wait(fd2, last, 5000));
		ksft_print_msg("attempt %d: %s\n", attempt,
			       sampled ? "sampled while the long job ran" : "the long job ended first");
		long_jobs++;
	}
	ASSERT_TRUE(sampled);
	EXPECT_LE(4, queued);
	/* The executing job counts before it finishes. */
	EXPECT_LT(0, running_ns);
	ASSERT_EQ(0, submit_cmds(fd2, qk, &d, 1, NULL, 0, done));
	ASSERT_EQ(0, syncobj_wait(fd2, done, 5000));
	/* Jobs are freed after their fences signal: wait for it, bounded. */
	for (int t = 0; t < 500 && (engines_sum(fd2, "compute", ncomp, "queued_jobs") ||
				     engines_sum(fd2, "copy", ncopy, "queued_jobs")); t++)
		usleep(10000);
	EXPECT_EQ(0, engines_sum(fd2, "compute", ncomp, "queued_jobs"));
	EXPECT_EQ(0, engines_sum(fd2, "copy", ncopy, "queued_jobs"));
	/* Busy time is the DELAYs' own length at least, on any machine. */
	EXPECT_LE(busy0 + long_jobs * 360000000ULL, engines_sum(fd2, "compute", ncomp, "busy_ns"));
	EXPECT_LE(long_jobs * 360000000LL, fdinfo_value(fd2, "drm-engine-compute"));
	EXPECT_LE(20000000LL, fdinfo_value(fd2, "drm-engine-copy"));
	/* Per client: the other file did no work. */
	EXPECT_EQ(0, fdinfo_value(self->fd, "drm-engine-compute"));
	buf_destroy(fd2, &hb);
	close(fd2);
}

/*
 * On a busy engine, a high-priority job overtakes the low-priority jobs
 * queued before it. One copy engine (the default) or the first compute
 * engine with every other compute engine kept busy.
 */
TEST_F(exec, high_priority_overtakes_queued_low_priority)
{
	uint64_t *ts = self->host.map, ncopy = 0;
	uint32_t lo = 0, hi = 0;
	const int n = 8;

	vnpu_get_param(self->fd, DRM_VNPU_PARAM_NUM_COPY_ENGINES, &ncopy);
	if (ncopy != 1)
		SKIP(return, "needs exactly one copy engine");
	ASSERT_EQ(0, queue_create(self->fd, DRM_VNPU_ENGINE_COPY, DRM_VNPU_PRIORITY_LOW, &lo));
	ASSERT_EQ(0, queue_create(self->fd, DRM_VNPU_ENGINE_COPY, DRM_VNPU_PRIORITY_HIGH, &hi));
	for (int i = 0; i < n; i++) {
		/* Job 0 also stamps when it starts, in slot n + 1. */
		struct drm_vnpu_cmd cmds[] = {
			cmd_ts(self->host.addr + 8 * (i ? i : n + 1)),
			cmd_delay(i ? 10000000 : 100000000), cmd_ts(self->host.addr + 8 * i),
		};

		ASSERT_EQ(0, submit_cmds(self->fd, lo, cmds, 3, NULL, 0,
					 i == n - 1 ? self->sync : 0));
	}
	struct drm_vnpu_cmd h = cmd_ts(self->host.addr + 8 * n);
	uint32_t hdone = syncobj_create(self->fd);

	/* The engine is busy with job 0 before the high-priority job arrives. */
	for (int i = 0; i < 5000 && !__atomic_load_n(&ts[n + 1], __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	ASSERT_NE(0, ts[n + 1]);
	ASSERT_EQ(0, submit_cmds(self->fd, hi, &h, 1, NULL, 0, hdone));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 10000));
	ASSERT_EQ(0, syncobj_wait(self->fd, hdone, 10000));
	for (int i = 1; i < n; i++)
		EXPECT_LT(ts[i - 1], ts[i]);
	/*
	 * Low job 0 executes and job 1 is already on the engine (two credits)
	 * when the high job arrives; it runs before low job 2.
	 */
	EXPECT_LT(ts[n + 1], ts[n]);
	EXPECT_LT(ts[n], ts[2]);
}

/* Two queues' jobs run on two compute engines at once. */
/*
 * Two queues' jobs run on two engines at once: their execution overlaps.
 * An ordering statement, not a timing one: on one engine two jobs can never
 * overlap, however long they are, while on two they can only fail to when
 * the second job reaches its engine after the first ended (a slow or loaded
 * machine): then it is tried again with jobs 5x longer, which cannot hide a
 * serialising bug. The log says whether the second submit came late (its
 * time is on the clock of the device's timestamps).
 */
TEST_F(exec, two_engines_run_in_parallel)
{
	uint64_t *ts = self->host.map, ncomp = 0, delay_ns = 200000000ULL;
	int overlapped = 0;

	vnpu_get_param(self->fd, DRM_VNPU_PARAM_NUM_COMPUTE_ENGINES, &ncomp);
	if (ncomp < 2)
		SKIP(return, "needs two compute engines");
	for (int attempt = 0; attempt < 3 && !overlapped; attempt++, delay_ns *= 5) {
		uint32_t q[2] = {}, done[2];
		uint64_t submitted = 0;

		memset(ts, 0, 32);
		for (int i = 0; i < 2; i++) {
			struct drm_vnpu_cmd cmds[] = {
				cmd_ts(self->host.addr + 16 * i), cmd_delay(delay_ns),
				cmd_ts(self->host.addr + 16 * i + 8),
			};

			done[i] = syncobj_create(self->fd);
			ASSERT_EQ(0, queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE,
						  DRM_VNPU_PRIORITY_NORMAL, &q[i]));
			ASSERT_EQ(0, submit_cmds(self->fd, q[i], cmds, 3, NULL, 0, done[i]));
			submitted = now_ns();
		}
		for (int i = 0; i < 2; i++) {
			ASSERT_EQ(0, syncobj_wait(self->fd, done[i], 5000 + 2 * delay_ns / 1000000));
			EXPECT_EQ(0, queue_destroy(self->fd, q[i]));
		}
		/* Both started before either finished. */
		overlapped = ts[0] < ts[3] && ts[2] < ts[1];
		ksft_print_msg("attempt %d: %llu ms jobs %s\n", attempt,
			       (unsigned long long)(delay_ns / 1000000),
			       overlapped ? "overlapped" :
			       submitted < ts[1] ? "did not overlap" : "inconclusive (submitted late)");
	}
	EXPECT_TRUE(overlapped);
}

/* A child process waits for the parent's job through an exported syncobj. */
TEST_F(exec, cross_process_syncobj_dependency)
{
	struct drm_vnpu_cmd cmds[] = { cmd_delay(100000000), cmd_ts(self->host.addr) };
	struct drm_syncobj_handle h = { .handle = self->sync };
	uint64_t *ts = self->host.map, child_ts = 0;
	uint32_t q = 0;
	int pipefd[2], status;
	pid_t pid;

	ASSERT_EQ(0, queue_create(self->fd, DRM_VNPU_ENGINE_COMPUTE, DRM_VNPU_PRIORITY_NORMAL, &q));
	ASSERT_EQ(0, submit_cmds(self->fd, q, cmds, 2, NULL, 0, self->sync));
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = vnpu_open_nth(0);
		struct drm_syncobj_handle imp = { .fd = h.fd };
		struct drm_vnpu_sync wait = {};
		struct drm_vnpu_cmd t;
		uint32_t cq = 0, done;
		struct buf b;

		if (fd < 0 || ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &imp) ||
		    buf_create(fd, PAGE, DRM_VNPU_BO_HOST, &b) ||
		    queue_create(fd, DRM_VNPU_ENGINE_COPY, DRM_VNPU_PRIORITY_HIGH, &cq))
			_exit(1);
		wait.handle = imp.handle;
		done = syncobj_create(fd);
		t = cmd_ts(b.addr);
		if (submit_cmds(fd, cq, &t, 1, &wait, 1, done) || syncobj_wait(fd, done, 5000))
			_exit(2);
		if (write(pipefd[1], b.map, 8) != 8)
			_exit(3);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(8, read(pipefd[0], &child_ts, 8));
	ASSERT_EQ(0, syncobj_wait(self->fd, self->sync, 5000));
	EXPECT_NE(0, ts[0]);
	EXPECT_LE(ts[0], child_ts);
	close(pipefd[0]);
	close(pipefd[1]);
	close(h.fd);
}

/* Fills @q with @n short jobs using a 1 MiB VRAM buffer. */
static int submit_jobs(int fd, uint32_t q, struct buf *b, int n)
{
	for (int i = 0; i < n; i++) {
		struct drm_vnpu_cmd cmds[] = {
			cmd_fill(b->addr, 4096, i), cmd_copy(b->addr + 8192, b->addr, 4096),
		};
		int ret = submit_cmds(fd, q, cmds, 2, NULL, 0, 0);

		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Destroy queue / close fd / SIGKILL with 100 jobs in flight, repeated.
 * The harness limit covers make stress's 1000 rounds.
 */
TEST_F_TIMEOUT(exec, teardown_races_repeated, 3600)
{
	uint64_t base = vram_used(self->fd);
	int iters = stress_iters();

	for (int it = 0; it < iters; it++) {
		int fd2 = vnpu_open_nth(0), status;
		struct buf b;
		uint32_t q = 0;
		pid_t pid;

		ASSERT_LE(0, fd2);
		ASSERT_EQ(0, buf_create(fd2, 1 << 20, 0, &b));
		/* Destroy the queue, then close the file with a second queue busy. */
		ASSERT_EQ(0, queue_create(fd2, it % 2, it % 3, &q));
		ASSERT_EQ(0, submit_jobs(fd2, q, &b, 100));
		ASSERT_EQ(0, queue_destroy(fd2, q));
		ASSERT_EQ(0, queue_create(fd2, (it + 1) % 2, it % 3, &q));
		ASSERT_EQ(0, submit_jobs(fd2, q, &b, 100));
		buf_destroy(fd2, &b);
		close(fd2);

		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			int fd3 = vnpu_open_nth(0);

			if (fd3 < 0 || buf_create(fd3, 1 << 20, 0, &b) ||
			    queue_create(fd3, it % 2, 1, &q) || submit_jobs(fd3, q, &b, 100))
				_exit(1);
			kill(getpid(), SIGKILL);
			_exit(2);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFSIGNALED(status));
	}
	EXPECT_EQ(base, wait_vram_used(self->fd, base, 20000));
	TH_LOG("%d rounds", iters);
}

TEST_HARNESS_MAIN
