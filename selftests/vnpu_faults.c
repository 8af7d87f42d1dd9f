// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: fault-injection sweep. A workload that uses every fallible
 * step of the driver (open, buffer creation, BO_INFO, mmap, PRIME export
 * and cross-device import, syncobjs, queue creation, a submit with KERNEL,
 * waits and a timeline signal, then the wait and a data check) runs with
 * debugfs fail_nth = 1, 2, 3, ... until it passes without reaching the
 * injected failure. Each run must fail with the injected error exactly
 * (no step may swallow it, retry past it or report another one), and after
 * it the device's VRAM, host range, buffer and syncobj counts must be back
 * at their baseline (nothing half-created leaks). The number of failure
 * points exercised and the distinct sites (debugfs fail_sites) are
 * printed. On kernels with fail_function, the same workload runs with the
 * kernel's own injection pointed at vnpu_fault_inject.
 */
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "vnpu_exec_utils.h"

#define SWEEP_MAX 400

/* Device facts a failed workload must leave unchanged. */
struct snapshot {
	struct vnpu_mem_state mem[2];
	uint64_t syncobjs[2];
};

static int take_snapshot(int fd0, int fd1, struct snapshot *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = vnpu_mem_state(fd0, &s->mem[0]) ?: vnpu_sysfs_u64(fd0, "syncobj_count",
								 &s->syncobjs[0]);
	if (!ret && fd1 >= 0)
		ret = vnpu_mem_state(fd1, &s->mem[1]) ?:
		      vnpu_sysfs_u64(fd1, "syncobj_count", &s->syncobjs[1]);
	return ret;
}

/* Waits for the jobs of a finished workload to be released. */
static bool wait_snapshot(int fd0, int fd1, const struct snapshot *want, struct snapshot *now)
{
	for (int i = 0; i < 500; i++) {
		if (take_snapshot(fd0, fd1, now))
			return false;
		if (!memcmp(now, want, sizeof(*now)))
			return true;
		usleep(10000);
	}
	return false;
}

/* The device node of device 0, opened by path (not by search). */
static char dev_path[64];

#define TRY(expr) do { ret = (expr); if (ret) goto out; } while (0)

static int ioctl_err(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * The workload, on the device @dev (0) and importing a buffer of @peer_fd's
 * device when @peer_fd >= 0. Returns 0 or the first error; releases
 * everything it created either way.
 */
static int workload(int peer_fd)
{
	struct buf a = {}, b = {}, args = {};
	uint32_t q = 0, sync_a = 0, sync_b = 0, imported = 0, peer_handle = 0;
	int fd, dmabuf = -1, peer_dmabuf = -1, ret;
	struct drm_vnpu_cmd cmds[3];
	struct drm_vnpu_sync wait;
	struct drm_vnpu_kernel_args *ka;
	struct drm_syncobj_create sc = {};
	struct drm_vnpu_submit s;
	uint64_t point = 1;

	/* An injected open failure must not make the search pick another device. */
	fd = open(dev_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;

	TRY(buf_create(fd, 64 << 10, DRM_VNPU_BO_MAPPABLE, &a));
	TRY(buf_create(fd, 64 << 10, DRM_VNPU_BO_HOST, &b));
	TRY(buf_create(fd, 4096, DRM_VNPU_BO_HOST, &args));
	TRY(_vnpu_prime_export(fd, a.handle, &dmabuf));
	if (peer_fd >= 0) {
		TRY(_vnpu_bo_create(peer_fd, 4096, DRM_VNPU_BO_HOST, &peer_handle, NULL));
		TRY(_vnpu_prime_export(peer_fd, peer_handle, &peer_dmabuf));
		TRY(_vnpu_prime_import(fd, peer_dmabuf, &imported));
	}
	TRY(ioctl_err(fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc));
	sync_a = sc.handle;
	sc = (struct drm_syncobj_create){};
	TRY(ioctl_err(fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc));
	sync_b = sc.handle;
	TRY(queue_create(fd, DRM_VNPU_ENGINE_COMPUTE, DRM_VNPU_PRIORITY_NORMAL, &q));

	/* Job 1: fill A, signal sync_a (binary). */
	cmds[0] = cmd_fill(a.addr, 64 << 10, 0x3f800000); /* 1.0f */
	TRY(submit_cmds(fd, q, cmds, 1, NULL, 0, sync_a));

	/* Job 2 waits for job 1: B = relu(A) by KERNEL, then a copy; timeline. */
	ka = args.map;
	*ka = (struct drm_vnpu_kernel_args){
		.op = DRM_VNPU_OP_RELU, .m = 1, .n = 1024, .a = a.addr, .c = b.addr,
		.lda = 1024, .ldc = 1024,
	};
	cmds[0] = cmd_kernel(args.addr);
	cmds[1] = cmd_copy(b.addr + 4096, a.addr, 4096);
	wait = (struct drm_vnpu_sync){ .handle = sync_a };
	s = (struct drm_vnpu_submit){
		.queue_id = q, .cmds = (uintptr_t)cmds, .cmd_count = 2,
		.waits = (uintptr_t)&wait, .wait_count = 1,
		.signal = { .handle = sync_b, .point = 1 },
	};
	TRY(ioctl_err(fd, DRM_IOCTL_VNPU_SUBMIT, &s));
	{
		struct drm_syncobj_timeline_wait tw = {
			.handles = (uintptr_t)&sync_b, .points = (uintptr_t)&point,
			.count_handles = 1, .timeout_nsec = (int64_t)(now_ns() + 30000000000ULL),
			.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
		};

		TRY(ioctl_err(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &tw));
	}
	if (((uint32_t *)b.map)[0] != 0x3f800000 || ((uint32_t *)b.map)[1024] != 0x3f800000)
		ret = -EBADMSG;
out:
	if (peer_dmabuf >= 0)
		close(peer_dmabuf);
	if (peer_handle)
		_vnpu_gem_close(peer_fd, peer_handle);
	if (dmabuf >= 0)
		close(dmabuf);
	if (a.handle)
		buf_destroy(fd, &a);
	if (b.handle)
		buf_destroy(fd, &b);
	if (args.handle)
		buf_destroy(fd, &args);
	close(fd);
	return ret;
}

/* Sum of the per-site counters of debugfs fail_sites; sites with hits in @hit. */
static int read_sites(int fd, unsigned int *hits, char names[][32], unsigned int max)
{
	char path[600], line[128];
	unsigned int n = 0;
	FILE *f;

	if (vnpu_debugfs_path(fd, "fail_sites", path, sizeof(path)))
		return -1;
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %u", names[n], &hits[n]) == 2)
			n++;
	fclose(f);
	return (int)n;
}

FIXTURE(faults) {
	int fd0, fd1;
	struct snapshot base;
};

FIXTURE_SETUP(faults)
{
	uint64_t v;

	self->fd1 = -1;
	self->fd0 = vnpu_open_nth(0);
	if (self->fd0 < 0)
		SKIP(return, "no vnpu device");
	if (vnpu_debugfs_read_u64(self->fd0, "fail_nth", &v))
		SKIP(return, "no debugfs fail_nth (debugfs not mounted, or not root)");
	self->fd1 = vnpu_open_nth(1);
	{
		struct stat st;

		ASSERT_EQ(0, fstat(self->fd0, &st));
		snprintf(dev_path, sizeof(dev_path), "/dev/accel/accel%u", minor(st.st_rdev));
	}
	vnpu_quota_unlimit(self->fd0);
	ASSERT_EQ(0, take_snapshot(self->fd0, self->fd1, &self->base));
}

FIXTURE_TEARDOWN(faults)
{
	if (self->fd0 >= 0) {
		vnpu_debugfs_write_u64(self->fd0, "fail_nth", 0);
		close(self->fd0);
	}
	if (self->fd1 >= 0)
		close(self->fd1);
}

TEST_F_TIMEOUT(faults, every_failure_point_unwinds, 1200)
{
	unsigned int before[64] = {}, after[64] = {}, sites = 0, points = 0, n;
	char names[64][32];
	struct snapshot now;
	int nsites;
	uint64_t left;

	/* The workload passes as is. */
	ASSERT_EQ(0, workload(self->fd1));
	ASSERT_TRUE(wait_snapshot(self->fd0, self->fd1, &self->base, &now));

	nsites = read_sites(self->fd0, before, names, 64);
	ASSERT_GT(nsites, 0);
	for (n = 1; n <= SWEEP_MAX; n++) {
		int ret;

		ASSERT_EQ(0, vnpu_debugfs_write_u64(self->fd0, "fail_nth", n));
		ret = workload(self->fd1);
		ASSERT_EQ(0, vnpu_debugfs_read_u64(self->fd0, "fail_nth", &left));
		ASSERT_EQ(0, vnpu_debugfs_write_u64(self->fd0, "fail_nth", 0));
		if (left) {
			/* The Nth step was never reached: every point is done. */
			EXPECT_EQ(0, ret);
			break;
		}
		points++;
		/* The injected error, and only it, reaches userspace. */
		EXPECT_TRUE(ret == -ENOMEM || ret == -ENOSPC || ret == -ENOENT) {
			TH_LOG("fail_nth=%u: workload returned %d (%s)", n, ret, strerror(-ret));
		}
		EXPECT_TRUE(wait_snapshot(self->fd0, self->fd1, &self->base, &now)) {
			TH_LOG("fail_nth=%u: VRAM %llu/%llu bo %llu/%llu host %llu/%llu syncobjs %llu/%llu",
			       n, (unsigned long long)now.mem[0].vram_used,
			       (unsigned long long)self->base.mem[0].vram_used,
			       (unsigned long long)now.mem[0].bo_count,
			       (unsigned long long)self->base.mem[0].bo_count,
			       (unsigned long long)now.mem[0].host_used,
			       (unsigned long long)self->base.mem[0].host_used,
			       (unsigned long long)now.syncobjs[0],
			       (unsigned long long)self->base.syncobjs[0]);
		}
	}
	ASSERT_LE(n, SWEEP_MAX);
	ASSERT_EQ(nsites, read_sites(self->fd0, after, names, 64));
	for (int i = 0; i < nsites; i++) {
		if (after[i] > before[i])
			sites++;
		else
			ksft_print_msg("site %s not reached by the workload\n", names[i]);
	}
	ksft_print_msg("faults: %u failure points exercised, %u of %d sites, 0 leaks\n",
		       points, sites, nsites);
	/* Every site; the import sites need a second device. */
	EXPECT_EQ(sites, (unsigned int)nsites - (self->fd1 < 0 ? 2 : 0));
	/* And still passes. */
	EXPECT_EQ(0, workload(self->fd1));
}

/*
 * The kernel's fail_function pointed at vnpu_fault_inject: the first step
 * the workload meets fails, through the same unwinding.
 */
TEST_F_TIMEOUT(faults, fail_function_reaches_the_same_sites, 300)
{
	const char *dir = "/sys/kernel/debug/fail_function";
	char path[256], retval[32];
	struct snapshot now;
	int ret;

	if (access(dir, F_OK))
		SKIP(return, "kernel without CONFIG_FAIL_FUNCTION");
	/*
	 * 6.12's should_fail_ex() draws get_random_u32_below() inside the
	 * kprobe's int3 handler: lockdep reports crngs.lock taken in NMI
	 * context and then switches itself off for the rest of the boot. The
	 * report is the kernel's, not vnpu's; run this only when asked.
	 */
	if (!getenv("VNPU_FAIL_FUNCTION") || strcmp(getenv("VNPU_FAIL_FUNCTION"), "1"))
		SKIP(return, "set VNPU_FAIL_FUNCTION=1 (a lockdep report from the kernel's fault-inject core)");
	/* verbose 0: no stack dump per injection (a "Call Trace" in the log). */
	snprintf(path, sizeof(path), "%s/verbose", dir);
	ASSERT_EQ(0, vnpu_write_path(path, "0"));
	snprintf(path, sizeof(path), "%s/inject", dir);
	ASSERT_EQ(0, vnpu_write_path(path, "vnpu_fault_inject"));
	/* The file takes the value unsigned: -ENOMEM as a 64-bit word. */
	snprintf(path, sizeof(path), "%s/vnpu_fault_inject/retval", dir);
	snprintf(retval, sizeof(retval), "%#llx", (unsigned long long)-ENOMEM);
	ASSERT_EQ(0, vnpu_write_path(path, retval));
	snprintf(path, sizeof(path), "%s/probability", dir);
	ASSERT_EQ(0, vnpu_write_path(path, "100"));
	snprintf(path, sizeof(path), "%s/times", dir);
	ASSERT_EQ(0, vnpu_write_path(path, "1"));
	ret = workload(self->fd1);
	snprintf(path, sizeof(path), "%s/inject", dir);
	vnpu_write_path(path, "\n");
	EXPECT_EQ(-ENOMEM, ret);
	EXPECT_TRUE(wait_snapshot(self->fd0, self->fd1, &self->base, &now));
	EXPECT_EQ(0, workload(self->fd1));
}

TEST_HARNESS_MAIN
