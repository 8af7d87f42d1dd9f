// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: reset, unplug and module unload while clients run work.
 * Client processes submit jobs in a loop and wait for each through a
 * sync_file (which, unlike syncobj ioctls, still works once the device is
 * gone). Meanwhile the test resets device 0 through sysfs, or unbinds it
 * from the platform driver, or unloads the module:
 *
 * - reset: every job completes or fails with -EIO, none hangs, work runs
 *   again afterwards;
 * - unbind: every job completes or fails with -EIO/-ENODEV, ioctls on the
 *   open files fail with ENODEV, existing mappings stay readable and
 *   writable (they reach the buffer's own pages, never freed memory), the
 *   accounting of the other device is untouched, and binding the device
 *   again gives a working device;
 * - unload: rmmod is refused (EBUSY/EWOULDBLOCK) while a file, a mapping,
 *   a dma-buf or a fence of the module is held, and succeeds once all are
 *   released, also with jobs still queued when the last file closed.
 *
 * Needs root and the group's module loaded with num_devices=2.
 */
#include <linux/sync_file.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "vnpu_exec_utils.h"

#define CLIENTS 3
#define DRIVER_DIR "/sys/bus/platform/drivers/vnpu"

/* What a client saw, shared with the test (MAP_SHARED). */
struct client_result {
	atomic_uint jobs_ok, jobs_eio, jobs_enodev, jobs_other, hung;
	atomic_uint submit_enodev, submit_other, enodev_ioctls_ok, map_ok;
	atomic_int last_other;
	atomic_bool ready;
};

struct shared {
	atomic_bool stop;
	struct client_result c[CLIENTS];
};

/* Status of a sync_file's fence after up to @ms: 1, -errno, or 0 (pending). */
static int sync_file_wait(int sfd, int ms)
{
	struct pollfd p = { .fd = sfd, .events = POLLIN };
	struct sync_file_info info = {};

	if (poll(&p, 1, ms) <= 0)
		return 0;
	if (ioctl(sfd, SYNC_IOC_FILE_INFO, &info))
		return -1000;
	return info.status;
}

/* Exports the current fence of binary syncobj @h as a sync_file. */
static int export_sync_file(int fd, uint32_t h)
{
	struct drm_syncobj_handle a = {
		.handle = h, .flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE, .fd = -1,
	};

	return ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &a) ? -errno : a.fd;
}

/*
 * A client: jobs of FILL + DELAY on its own buffer until told to stop or
 * the device is gone. Never returns.
 */
static void client(const char *path, struct shared *sh, struct client_result *r,
		   uint32_t seed)
{
	uint32_t q = 0, sync, i = 0;
	struct buf b = {};
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0 || buf_create(fd, 256 << 10, DRM_VNPU_BO_HOST, &b) ||
	    queue_create(fd, seed % 2, DRM_VNPU_PRIORITY_NORMAL, &q) ||
	    !(sync = syncobj_create(fd)))
		_exit(2);
	atomic_store(&r->ready, true);

	while (!atomic_load(&sh->stop)) {
		struct drm_vnpu_cmd cmds[2] = {
			cmd_fill(b.addr, 256 << 10, seed + i),
			cmd_delay(2000000),
		};
		int ret = submit_cmds(fd, q, cmds, 2, NULL, 0, sync), sfd, st;

		i++;
		if (ret == -ENODEV) {
			atomic_fetch_add(&r->submit_enodev, 1);
			break;
		}
		if (ret == -EIO) {
			/* Health needs a reset: the test resets. */
			usleep(1000);
			continue;
		}
		if (ret) {
			atomic_fetch_add(&r->submit_other, 1);
			atomic_store(&r->last_other, ret);
			usleep(1000);
			continue;
		}
		sfd = export_sync_file(fd, sync);
		if (sfd == -ENODEV) {
			atomic_fetch_add(&r->submit_enodev, 1);
			break;
		}
		if (sfd < 0)
			continue;
		st = sync_file_wait(sfd, 20000);
		close(sfd);
		if (st == 1) {
			atomic_fetch_add(&r->jobs_ok, 1);
		} else if (st == -EIO) {
			atomic_fetch_add(&r->jobs_eio, 1);
		} else if (st == -ENODEV) {
			atomic_fetch_add(&r->jobs_enodev, 1);
		} else if (st == 0) {
			atomic_fetch_add(&r->hung, 1);
		} else {
			atomic_fetch_add(&r->jobs_other, 1);
			atomic_store(&r->last_other, st);
		}
	}
	if (atomic_load(&r->submit_enodev)) {
		uint64_t v = 0;
		struct drm_syncobj_create sc = {};
		unsigned int n = 0;

		/* Gone: every ioctl says so, the mapping is still memory. */
		n += _vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_SIZE, 0, &v) == -ENODEV;
		n += _vnpu_bo_create(fd, 4096, 0, NULL, NULL) == -ENODEV;
		n += ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc) && errno == ENODEV;
		n += queue_destroy(fd, q) == -ENODEV;
		atomic_store(&r->enodev_ioctls_ok, n == 4);
		memset(b.map, 0x5a, 256 << 10);
		atomic_store(&r->map_ok, ((uint8_t *)b.map)[(256 << 10) - 1] == 0x5a);
	}
	_exit(0);
}

static pid_t start_client(const char *path, struct shared *sh, int i)
{
	pid_t pid = vnpu_fork();

	if (pid == 0)
		client(path, sh, &sh->c[i], 0x1000 * (i + 1));
	return pid;
}

static void node_path(int fd, char *buf, size_t len)
{
	struct stat st;

	fstat(fd, &st);
	snprintf(buf, len, "/dev/accel/accel%u", minor(st.st_rdev));
}

/* Waits for every client to have its work set up. */
static bool clients_ready(struct shared *sh)
{
	for (int t = 0; t < 3000; t++) {
		int n = 0;

		for (int i = 0; i < CLIENTS; i++)
			n += atomic_load(&sh->c[i].ready);
		if (n == CLIENTS)
			return true;
		usleep(10000);
	}
	return false;
}

/* Reaps the clients, failing on a crash (a SIGBUS on the mapping, say). */
static void reap(struct __test_metadata *_metadata, pid_t *pids)
{
	for (int i = 0; i < CLIENTS; i++) {
		int status;

		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			TH_LOG("client %d: status %#x", i, status);
		}
	}
}

/* One FILL job on a new buffer, waited for and checked: 0 if all went well. */
static int run_fill(int fd, uint32_t pattern)
{
	struct buf b = {};
	uint32_t q = 0, s = syncobj_create(fd);
	struct drm_vnpu_cmd c;
	int ret;

	ret = buf_create(fd, 4096, DRM_VNPU_BO_HOST, &b) ?:
	      queue_create(fd, 0, DRM_VNPU_PRIORITY_NORMAL, &q);
	if (!ret) {
		c = cmd_fill(b.addr, 4096, pattern);
		ret = submit_cmds(fd, q, &c, 1, NULL, 0, s) ?: syncobj_wait(fd, s, 10000);
	}
	if (!ret && ((uint32_t *)b.map)[1023] != pattern)
		ret = -EBADMSG;
	if (b.handle)
		buf_destroy(fd, &b);
	return ret;
}

static struct shared *shared_new(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return sh == MAP_FAILED ? NULL : sh;
}

/* Only for the per-test timeouts of TEST_F_TIMEOUT. */
FIXTURE(unplug) {
	int unused;
};

FIXTURE_SETUP(unplug)
{
}

FIXTURE_TEARDOWN(unplug)
{
}

TEST_F_TIMEOUT(unplug, reset_under_load, 120)
{
	char path[64];
	pid_t pids[CLIENTS];
	uint64_t resets_before, resets_after;
	struct shared *sh = shared_new();
	unsigned int ok = 0, eio = 0;
	int fd = vnpu_open_nth(0);

	if (fd < 0)
		SKIP(return, "no vnpu device");
	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_NE(NULL, sh);
	node_path(fd, path, sizeof(path));
	ASSERT_EQ(0, vnpu_sysfs_u64(fd, "reset_count", &resets_before));
	for (int i = 0; i < CLIENTS; i++)
		ASSERT_GT(pids[i] = start_client(path, sh, i), 0);
	ASSERT_TRUE(clients_ready(sh));
	for (int k = 0; k < 5; k++) {
		usleep(200000);
		ASSERT_EQ(0, vnpu_sysfs_write(fd, "reset", "1"));
	}
	usleep(200000);
	atomic_store(&sh->stop, true);
	reap(_metadata, pids);

	for (int i = 0; i < CLIENTS; i++) {
		struct client_result *r = &sh->c[i];

		ok += r->jobs_ok;
		eio += r->jobs_eio;
		EXPECT_EQ(0, r->hung);
		EXPECT_EQ(0, r->jobs_other) {
			TH_LOG("client %d: job error %d", i, r->last_other);
		}
		EXPECT_EQ(0, r->submit_other) {
			TH_LOG("client %d: submit error %d", i,
						     r->last_other);
		}
		EXPECT_EQ(0, r->jobs_enodev);
	}
	ASSERT_EQ(0, vnpu_sysfs_u64(fd, "reset_count", &resets_after));
	EXPECT_EQ(resets_before + 5, resets_after);
	EXPECT_GT(ok, 0);
	ksft_print_msg("reset under load: %u jobs completed, %u failed with EIO, 5 resets\n",
		       ok, eio);
	/* Work runs after the resets. */
	EXPECT_EQ(0, run_fill(fd, 0xabcd1234));
	close(fd);
}

/* Writes "vnpu.N" to the platform driver's bind or unbind file. */
static int platform_write(const char *what, unsigned int index)
{
	char path[128], dev[32];

	snprintf(path, sizeof(path), DRIVER_DIR "/%s", what);
	snprintf(dev, sizeof(dev), "vnpu.%u", index);
	return vnpu_write_path(path, dev);
}

/* The fd of the vnpu device whose index is @index, or -1. */
static int open_index(unsigned int index)
{
	for (unsigned int n = 0; n < 16; n++) {
		uint64_t v = ~0ULL;
		int fd = vnpu_open_nth(n);

		if (fd < 0)
			return -1;
		if (!_vnpu_get_param(fd, DRM_VNPU_PARAM_DEVICE_INDEX, 0, &v) && v == index)
			return fd;
		close(fd);
	}
	return -1;
}

TEST_F_TIMEOUT(unplug, unbind_under_load, 120)
{
	char path[64];
	pid_t pids[CLIENTS];
	struct shared *sh = shared_new();
	struct vnpu_mem_state other_before, other_after, fresh;
	uint64_t v = 0;
	int fd = open_index(0), other = open_index(1), fd2;
	unsigned int ok = 0, failed = 0;

	if (fd < 0 || other < 0)
		SKIP(return, "needs two vnpu devices");
	if (geteuid() || access(DRIVER_DIR "/unbind", W_OK))
		SKIP(return, "needs root and the platform driver's unbind file");
	ASSERT_NE(NULL, sh);
	node_path(fd, path, sizeof(path));
	vnpu_get_mem_state(other, &other_before);
	for (int i = 0; i < CLIENTS; i++)
		ASSERT_GT(pids[i] = start_client(path, sh, i), 0);
	ASSERT_TRUE(clients_ready(sh));
	usleep(300000);

	ASSERT_EQ(0, platform_write("unbind", 0));
	/* The test's own file is unplugged too. */
	EXPECT_EQ(-ENODEV, _vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_SIZE, 0, &v));
	/* Clients notice by themselves; a client still looping would hang here. */
	reap(_metadata, pids);
	for (int i = 0; i < CLIENTS; i++) {
		struct client_result *r = &sh->c[i];

		ok += r->jobs_ok;
		failed += r->jobs_eio + r->jobs_enodev;
		EXPECT_EQ(1, r->submit_enodev);
		EXPECT_EQ(0, r->hung);
		EXPECT_EQ(0, r->jobs_other) {
			TH_LOG("client %d: job error %d", i, r->last_other);
		}
		EXPECT_EQ(1, r->enodev_ioctls_ok);
		EXPECT_EQ(1, r->map_ok);
	}
	ksft_print_msg("unbind under load: %u jobs completed, %u failed with an error\n", ok,
		       failed);
	/* The other device did not notice. */
	vnpu_get_mem_state(other, &other_after);
	EXPECT_EQ(other_before.bo_count, other_after.bo_count);
	EXPECT_EQ(other_before.vram_used, other_after.vram_used);
	close(fd);

	/* Bound again, device 0 works (a new node, fresh accounting). */
	ASSERT_EQ(0, platform_write("bind", 0));
	fd2 = -1;
	for (int t = 0; t < 500 && fd2 < 0; t++) {
		fd2 = open_index(0);
		if (fd2 < 0)
			usleep(10000);
	}
	ASSERT_GE(fd2, 0);
	vnpu_get_mem_state(fd2, &fresh);
	EXPECT_EQ(0, fresh.bo_count);
	EXPECT_EQ(0, run_fill(fd2, 0x600df00d));
	close(fd2);
	close(other);
}

static int delete_module(const char *name)
{
	return syscall(__NR_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

static bool module_busy(int err)
{
	return err == -EBUSY || err == -EWOULDBLOCK;
}

static int load_module(void)
{
	const char *ko = getenv("VNPU_KO");
	int fd, ret;

	if (!ko)
		return -ENOENT;
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(__NR_finit_module, fd, "num_devices=2", 0) ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * Last in its group: unloads the module (and loads it again with the
 * group's parameters, so the group's own unload still has a module).
 */
TEST_F_TIMEOUT(unplug, unload_refused_while_in_use, 120)
{
	struct buf b = {};
	uint32_t q = 0, s;
	struct drm_vnpu_cmd cmds[2];
	int fd = vnpu_open_nth(0), dmabuf = -1, sfd, ret = -1;
	void *map;

	if (fd < 0)
		SKIP(return, "no vnpu device");
	if (geteuid() || !getenv("VNPU_KO"))
		SKIP(return, "needs root and VNPU_KO (run from a VM plan)");

	/* An open file holds the module. */
	EXPECT_TRUE(module_busy(delete_module("vnpu")));

	/* A mapping, a dma-buf and a fence each hold it after the file is closed. */
	ASSERT_EQ(0, buf_create(fd, 64 << 10, DRM_VNPU_BO_HOST, &b));
	ASSERT_EQ(0, _vnpu_prime_export(fd, b.handle, &dmabuf));
	ASSERT_EQ(0, queue_create(fd, 0, DRM_VNPU_PRIORITY_NORMAL, &q));
	ASSERT_NE(0, s = syncobj_create(fd));
	cmds[0] = cmd_delay(300000000);
	cmds[1] = cmd_fill(b.addr, 64 << 10, 0x11111111);
	ASSERT_EQ(0, submit_cmds(fd, q, cmds, 2, NULL, 0, s));
	sfd = export_sync_file(fd, s);
	ASSERT_GE(sfd, 0);
	map = b.map;
	/* Jobs still queued when the last file closes. */
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, submit_cmds(fd, q, cmds, 2, NULL, 0, 0));
	close(fd);

	EXPECT_TRUE(module_busy(delete_module("vnpu")));	/* mapping */
	munmap(map, 64 << 10);
	EXPECT_TRUE(module_busy(delete_module("vnpu")));	/* dma-buf */
	close(dmabuf);
	EXPECT_NE(0, sync_file_wait(sfd, 20000));
	/* The other jobs are done or cancelled by now; only the fence is left. */
	sleep(2);
	EXPECT_TRUE(module_busy(delete_module("vnpu")));	/* the fence */
	close(sfd);

	/* Nothing is held: it unloads (jobs and releases may still drain). */
	for (int t = 0; t < 1000; t++) {
		ret = delete_module("vnpu");
		if (!module_busy(ret))
			break;
		usleep(10000);
	}
	EXPECT_EQ(0, ret);
	ASSERT_EQ(0, load_module());
	fd = vnpu_open_nth(0);
	EXPECT_GE(fd, 0);
	close(fd);
}

TEST_HARNESS_MAIN
