// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: the security model (Documentation/reliability.rst).
 *
 * - Node permissions: with the node set up as tools/udev/70-vnpu.rules says
 *   (the test VM has no udev, so the test applies the rule's GROUP and
 *   MODE), a non-root user in that group can open and use the device, a
 *   non-root user outside it cannot.
 * - An unprivileged process cannot raise its quota, set another process's
 *   quota or read it, create a realtime queue, submit a HANG, read or write
 *   debugfs, reset the device or change the default quota.
 * - Isolation between processes: another process's handles, mmap offsets
 *   and device addresses (told to it, or guessed) reach nothing; an
 *   imported buffer reaches exactly itself; a freed buffer's data is not
 *   seen by the next owner of its memory.
 * - Reserved fields must be zero; per-process limits on buffers, syncobjs
 *   and queues hold, across files, and give EMFILE.
 *
 * Needs root (to drop privileges to nobody); run in the VM.
 */
#include <grp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "vnpu_exec_utils.h"

#define NOBODY 65534
#define RULES "tools/udev/70-vnpu.rules"

/* GROUP and MODE of the udev rule. */
static int read_rule(char *group, size_t len, unsigned int *mode)
{
	char line[512], *g, *m;
	FILE *f = fopen(RULES, "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		g = strstr(line, "GROUP=\"");
		m = strstr(line, "MODE=\"");
		if (g && m && sscanf(g + 7, "%63[^\"]", group) == 1 &&
		    sscanf(m + 6, "%o", mode) == 1 && strlen(group) < len) {
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Becomes nobody with the supplementary groups @groups; all caps gone. */
static void become_nobody(const gid_t *groups, int n)
{
	if (setgroups(n, groups) || setgid(NOBODY) || setuid(NOBODY))
		_exit(99);
}

/* Runs @fn(@arg) in a child as nobody (+ @groups); returns its exit code. */
static int as_nobody(const gid_t *groups, int n, int (*fn)(void *), void *arg)
{
	pid_t pid = vnpu_fork();
	int status;

	if (pid == 0) {
		become_nobody(groups, n);
		_exit(fn(arg));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char node[64];

static void find_node(int fd)
{
	struct stat st;

	fstat(fd, &st);
	snprintf(node, sizeof(node), "/dev/accel/accel%u", minor(st.st_rdev));
}

/* Exit codes: 0 all as expected, else the number of the failed step. */
static int use_device(void *arg)
{
	struct buf b = {};
	uint32_t q = 0, s;
	struct drm_vnpu_cmd c;
	int fd = open(node, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return 1;
	if (buf_create(fd, 4096, DRM_VNPU_BO_HOST, &b))
		return 2;
	if (queue_create(fd, 0, DRM_VNPU_PRIORITY_NORMAL, &q) || !(s = syncobj_create(fd)))
		return 3;
	c = cmd_fill(b.addr, 4096, 0x77777777);
	if (submit_cmds(fd, q, &c, 1, NULL, 0, s) || syncobj_wait(fd, s, 10000))
		return 4;
	return ((uint32_t *)b.map)[1023] == 0x77777777 ? 0 : 5;
}

static int open_refused(void *arg)
{
	int fd = open(node, O_RDWR | O_CLOEXEC);

	return fd < 0 && errno == EACCES ? 0 : 1;
}

FIXTURE(sec) {
	int fd;
	gid_t render;
	unsigned int mode;
	struct stat orig;
};

FIXTURE_SETUP(sec)
{
	char group[64];
	struct group *gr;

	self->fd = vnpu_open_nth(0);
	if (self->fd < 0)
		SKIP(return, "no vnpu device");
	if (geteuid())
		SKIP(return, "needs root to drop privileges");
	find_node(self->fd);
	ASSERT_EQ(0, read_rule(group, sizeof(group), &self->mode));
	gr = getgrnam(group);
	ASSERT_NE(NULL, gr) TH_LOG("no group %s", group);
	self->render = gr->gr_gid;
	ASSERT_EQ(0, stat(node, &self->orig));
	/* What udev does with the rule. */
	ASSERT_EQ(0, chown(node, 0, self->render));
	ASSERT_EQ(0, chmod(node, self->mode));
}

FIXTURE_TEARDOWN(sec)
{
	if (self->fd < 0 || geteuid())
		return;
	chown(node, self->orig.st_uid, self->orig.st_gid);
	chmod(node, self->orig.st_mode & 07777);
	close(self->fd);
}

TEST_F(sec, node_open_by_group_only)
{
	gid_t render = self->render;

	EXPECT_EQ(0, as_nobody(&render, 1, use_device, NULL));
	EXPECT_EQ(0, as_nobody(NULL, 0, open_refused, NULL));
}

static int no_escalation(void *arg)
{
	const char *debugfs_file = arg;
	struct drm_vnpu_quota q;
	struct drm_vnpu_cmd hang = { .opcode = DRM_VNPU_CMD_HANG };
	uint32_t id = 0;
	char path[512];
	int fd = open(node, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return 1;
	if (_vnpu_quota_get(fd, 0, &q))
		return 2;
	/* The hard limit (the default, 64 MiB here) cannot go up... */
	if (_vnpu_quota_set(fd, 0, DRM_VNPU_QUOTA_SET_HARD, 0, q.hard_limit + 4096, NULL) != -EPERM)
		return 3;
	if (_vnpu_quota_set(fd, 0, DRM_VNPU_QUOTA_SET_SOFT, q.hard_limit + 4096, 0, NULL) !=
	    -EINVAL)
		return 4;
	/* ...only down, and then not up again. */
	if (_vnpu_quota_set(fd, 0, DRM_VNPU_QUOTA_SET_HARD | DRM_VNPU_QUOTA_SET_SOFT,
			    q.hard_limit / 2, q.hard_limit / 2, NULL))
		return 5;
	if (_vnpu_quota_set(fd, 0, DRM_VNPU_QUOTA_SET_HARD, 0, q.hard_limit, NULL) != -EPERM)
		return 6;
	/* Another process's quota: neither read nor written. */
	if (_vnpu_quota_get(fd, getppid(), NULL) != -EPERM ||
	    _vnpu_quota_set(fd, getppid(), DRM_VNPU_QUOTA_SET_SOFT, 0, 0, NULL) != -EPERM)
		return 7;
	if (queue_create(fd, 0, DRM_VNPU_PRIORITY_REALTIME, &id) != -EPERM)
		return 8;
	if (queue_create(fd, 0, DRM_VNPU_PRIORITY_HIGH, &id))
		return 9;
	if (submit_cmds(fd, id, &hang, 1, NULL, 0, 0) != -EPERM)
		return 10;
	/* debugfs: not even the directory. */
	if (open(debugfs_file, O_RDONLY) >= 0 || errno != EACCES)
		return 11;
	if (open(debugfs_file, O_WRONLY) >= 0 || errno != EACCES)
		return 12;
	/* Root-only sysfs files. */
	vnpu_sysfs_path(fd, "reset", path, sizeof(path));
	if (vnpu_write_path(path, "1") != -EACCES)
		return 13;
	vnpu_sysfs_path(fd, "default_quota_bytes", path, sizeof(path));
	if (vnpu_write_path(path, "max") != -EACCES)
		return 14;
	if (vnpu_write_path("/sys/module/vnpu/parameters/max_queues_per_process", "4096") !=
	    -EACCES)
		return 15;
	return 0;
}

TEST_F(sec, unprivileged_cannot_escalate)
{
	char debugfs_file[600], path[512];
	gid_t render = self->render;

	if (vnpu_debugfs_path(self->fd, "allow_hang", debugfs_file, sizeof(debugfs_file)))
		SKIP(return, "debugfs not mounted");
	/* allow_hang off: a HANG is refused to root too. */
	ASSERT_EQ(0, vnpu_debugfs_write_u64(self->fd, "allow_hang", 0));
	ASSERT_EQ(0, vnpu_sysfs_path(self->fd, "default_quota_bytes", path, sizeof(path)));
	ASSERT_EQ(0, vnpu_sysfs_write(self->fd, "default_quota_bytes", "67108864"));
	EXPECT_EQ(0, as_nobody(&render, 1, no_escalation, debugfs_file));
	vnpu_sysfs_write(self->fd, "default_quota_bytes", "max");
}

/* What process A tells process B about its buffers. */
struct secrets {
	uint32_t handle[2];
	uint64_t addr[2], mmap_offset[2], size;
};

#define SECRET 0x5ec2e75u

/*
 * Process B: with only its own file, reaches none of A's buffers; with an
 * import, reaches exactly the imported one.
 */
static int intruder(int sock, const struct secrets *s)
{
	struct buf mine = {}, args = {};
	uint32_t q = 0, h, imported;
	struct drm_vnpu_bo_info info;
	struct drm_vnpu_cmd c;
	struct drm_vnpu_kernel_args *ka;
	int fd = open(node, O_RDWR | O_CLOEXEC), dmabuf = -1;
	char byte;
	void *p;

	if (fd < 0 || buf_create(fd, 64 << 10, DRM_VNPU_BO_HOST, &mine) ||
	    buf_create(fd, 4096, DRM_VNPU_BO_HOST, &args) ||
	    queue_create(fd, 0, DRM_VNPU_PRIORITY_NORMAL, &q))
		return 1;
	for (int i = 0; i < 2; i++) {
		struct drm_prime_handle ph = { .handle = s->handle[i], .flags = DRM_CLOEXEC };

		/* A's handle numbers mean nothing here (B's own are 1 and 2). */
		if (s->handle[i] != mine.handle && s->handle[i] != args.handle &&
		    (_vnpu_bo_info(fd, s->handle[i], &info) != -ENOENT ||
		     ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) == 0))
			return 2;
		/* A's mmap offsets. */
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)s->mmap_offset[i]);
		if (p != MAP_FAILED)
			return 3;
		/* A's device addresses, as source and destination. */
		c = cmd_copy(mine.addr, s->addr[i], 4096);
		if (submit_cmds(fd, q, &c, 1, NULL, 0, 0) != -EACCES)
			return 4;
		c = cmd_fill(s->addr[i], 4096, 0);
		if (submit_cmds(fd, q, &c, 1, NULL, 0, 0) != -EACCES)
			return 5;
		/* And through KERNEL arguments. */
		ka = args.map;
		*ka = (struct drm_vnpu_kernel_args){ .op = DRM_VNPU_OP_RELU, .m = 1, .n = 16,
						     .a = s->addr[i], .c = mine.addr,
						     .lda = 16, .ldc = 16 };
		c = cmd_kernel(args.addr);
		if (submit_cmds(fd, q, &c, 1, NULL, 0, 0) != -EACCES)
			return 6;
	}
	/* Guessing: every handle and every 64 KiB of both ranges. */
	for (h = 1; h < 1024; h++)
		if (h != mine.handle && h != args.handle && _vnpu_bo_info(fd, h, &info) != -ENOENT)
			return 7;
	for (uint64_t a = DRM_VNPU_VRAM_BASE; a < DRM_VNPU_VRAM_BASE + (256ULL << 20);
	     a += 64 << 10) {
		c = cmd_copy(mine.addr, a, 4096);
		if (submit_cmds(fd, q, &c, 1, NULL, 0, 0) != -EACCES)
			return 8;
	}
	for (uint64_t a = DRM_VNPU_HOST_BASE; a < DRM_VNPU_HOST_BASE + (64ULL << 20);
	     a += 64 << 10) {
		if (a >= mine.addr && a < mine.addr + mine.size)
			continue;
		if (a >= args.addr && a < args.addr + 4096)
			continue;
		c = cmd_copy(mine.addr, a, 4096);
		if (submit_cmds(fd, q, &c, 1, NULL, 0, 0) != -EACCES)
			return 9;
	}
	/* The import A sent: exactly that buffer, nothing past it. */
	{
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				      .msg_controllen = sizeof(cbuf) };

		if (recvmsg(sock, &msg, 0) != 1 || !CMSG_FIRSTHDR(&msg))
			return 10;
		memcpy(&dmabuf, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
	}
	if (_vnpu_prime_import(fd, dmabuf, &imported) || _vnpu_bo_info(fd, imported, &info))
		return 11;
	c = cmd_copy(mine.addr, info.device_addr, info.size);
	if (submit_cmds(fd, q, &c, 1, NULL, 0, 0))
		return 12;
	c = cmd_copy(mine.addr, info.device_addr, info.size + 4);
	if (submit_cmds(fd, q, &c, 1, NULL, 0, 0) != -EACCES)
		return 13;
	/* Ranges straddling its ends (what lies next to it may be B's own). */
	c = cmd_copy(mine.addr, info.device_addr + info.size - 4, 8);
	if (submit_cmds(fd, q, &c, 1, NULL, 0, 0) != -EACCES)
		return 14;
	c = cmd_copy(mine.addr, info.device_addr - 4, 8);
	if (submit_cmds(fd, q, &c, 1, NULL, 0, 0) != -EACCES)
		return 16;
	p = mmap(NULL, info.size + 4096, PROT_READ, MAP_SHARED, fd, (off_t)info.mmap_offset);
	if (p != MAP_FAILED)
		return 15;
	/* A re-export of the import is the same buffer, not a way further. */
	close(dmabuf);
	return 0;
}

/* The guessing loops take minutes on a KASAN kernel: a bound above the default 30 s. */
TEST_F_TIMEOUT(sec, no_process_reaches_another_ones_memory, 300)
{
	struct buf a[2] = {};
	struct secrets s = {};
	int sock[2], status, dmabuf = -1;
	pid_t pid;
	gid_t render = self->render;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sock));
	/* A: this process. Two buffers with a secret. */
	ASSERT_EQ(0, buf_create(self->fd, 64 << 10, DRM_VNPU_BO_MAPPABLE, &a[0]));
	ASSERT_EQ(0, buf_create(self->fd, 64 << 10, DRM_VNPU_BO_HOST, &a[1]));
	for (int i = 0; i < 2; i++) {
		struct drm_vnpu_bo_info info;

		for (size_t k = 0; k < (64 << 10) / 4; k++)
			((uint32_t *)a[i].map)[k] = SECRET;
		ASSERT_EQ(0, _vnpu_bo_info(self->fd, a[i].handle, &info));
		s.handle[i] = a[i].handle;
		s.addr[i] = a[i].addr;
		s.mmap_offset[i] = info.mmap_offset;
	}
	/* B gets a 4 KiB dma-buf: one small buffer of A's, shared on purpose. */
	{
		struct buf shared;
		char byte = 0;
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u = {};
		struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				      .msg_controllen = sizeof(u.buf) };
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

		ASSERT_EQ(0, buf_create(self->fd, 4096, DRM_VNPU_BO_HOST, &shared));
		ASSERT_EQ(0, _vnpu_prime_export(self->fd, shared.handle, &dmabuf));
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &dmabuf, sizeof(int));
		ASSERT_EQ(1, sendmsg(sock[0], &msg, 0));
		close(dmabuf);
	}

	pid = vnpu_fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		become_nobody(&render, 1);
		_exit(intruder(sock[1], &s));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("intruder failed at step %d (status %#x)", WEXITSTATUS(status), status);
	}
	for (int i = 0; i < 2; i++)
		for (size_t k = 0; k < (64 << 10) / 4; k++)
			ASSERT_EQ(SECRET, ((uint32_t *)a[i].map)[k]);
	close(sock[0]);
	close(sock[1]);
}

/* A freed buffer's pages come back zeroed to the next owner. */
static int reads_zero(void *arg)
{
	struct buf b = {};
	int fd = open(node, O_RDWR | O_CLOEXEC);

	for (int n = 0; n < 16; n++) {
		if (fd < 0 || buf_create(fd, 1 << 20, n % 2 ? DRM_VNPU_BO_HOST :
					 DRM_VNPU_BO_MAPPABLE, &b))
			return 1;
		for (size_t k = 0; k < (1 << 20) / 4; k++)
			if (((uint32_t *)b.map)[k])
				return 2;
		buf_destroy(fd, &b);
	}
	return 0;
}

TEST_F(sec, freed_memory_is_not_seen_by_the_next_owner)
{
	gid_t render = self->render;

	for (int n = 0; n < 16; n++) {
		struct buf b = {};

		ASSERT_EQ(0, buf_create(self->fd, 1 << 20, n % 2 ? DRM_VNPU_BO_HOST :
					DRM_VNPU_BO_MAPPABLE, &b));
		memset(b.map, 0xa5, 1 << 20);
		buf_destroy(self->fd, &b);
	}
	EXPECT_EQ(0, as_nobody(&render, 1, reads_zero, NULL));
}

TEST_F(sec, reserved_fields_must_be_zero)
{
	struct drm_vnpu_get_param gp = { .flags = 1 };
	struct drm_vnpu_bo_create bc = { .size = 4096, .handle = 1 };
	struct drm_vnpu_bo_info bi = { .handle = 1, .pad = 1 };
	struct drm_vnpu_quota qt = { .pad = 1 };
	struct drm_vnpu_queue_create qc = { .pad = 1 };
	struct drm_vnpu_queue_destroy qd = { .queue_id = 1, .flags = 1 };
	struct drm_vnpu_queue_info qi = { .queue_id = 1, .pad = 1 };
	struct drm_vnpu_cmd cmd = cmd_delay(1000);
	struct drm_vnpu_submit sb = { .queue_id = 1, .cmds = (uintptr_t)&cmd, .cmd_count = 1,
				      .pad = 1 };
	uint32_t q = 0;
	struct buf b;

	EXPECT_EQ(-EINVAL, ioctl(self->fd, DRM_IOCTL_VNPU_GET_PARAM, &gp) ? -errno : 0);
	EXPECT_EQ(-EINVAL, ioctl(self->fd, DRM_IOCTL_VNPU_BO_CREATE, &bc) ? -errno : 0);
	ASSERT_EQ(0, buf_create(self->fd, 4096, DRM_VNPU_BO_HOST, &b));
	bi.handle = b.handle;
	EXPECT_EQ(-EINVAL, ioctl(self->fd, DRM_IOCTL_VNPU_BO_INFO, &bi) ? -errno : 0);
	EXPECT_EQ(-EINVAL, ioctl(self->fd, DRM_IOCTL_VNPU_QUOTA_GET, &qt) ? -errno : 0);
	EXPECT_EQ(-EINVAL, ioctl(self->fd, DRM_IOCTL_VNPU_QUEUE_CREATE, &qc) ? -errno : 0);
	ASSERT_EQ(0, queue_create(self->fd, 0, DRM_VNPU_PRIORITY_NORMAL, &q));
	qd.queue_id = qi.queue_id = sb.queue_id = q;
	EXPECT_EQ(-EINVAL, ioctl(self->fd, DRM_IOCTL_VNPU_QUEUE_DESTROY, &qd) ? -errno : 0);
	EXPECT_EQ(-EINVAL, ioctl(self->fd, DRM_IOCTL_VNPU_QUEUE_INFO, &qi) ? -errno : 0);
	EXPECT_EQ(-EINVAL, ioctl(self->fd, DRM_IOCTL_VNPU_SUBMIT, &sb) ? -errno : 0);
	sb.pad = 0;
	sb.signal.flags = 1;
	EXPECT_EQ(-EINVAL, ioctl(self->fd, DRM_IOCTL_VNPU_SUBMIT, &sb) ? -errno : 0);
	sb.signal.flags = 0;
	cmd.dst = 8;	/* unused by DELAY */
	EXPECT_EQ(-EINVAL, ioctl(self->fd, DRM_IOCTL_VNPU_SUBMIT, &sb) ? -errno : 0);
	buf_destroy(self->fd, &b);
}

static unsigned long module_param_ul(const char *name)
{
	char buf[32];

	return vnpu_module_param(name, buf, sizeof(buf)) ? 0 : strtoul(buf, NULL, 10);
}

/* Fills the buffer, syncobj and queue limits with two files; 0 if all held. */
static int limits_hold(void *arg)
{
	unsigned long max_bos = module_param_ul("max_bos_per_process");
	unsigned long max_syncobjs = module_param_ul("max_syncobjs_per_process");
	unsigned long max_queues = module_param_ul("max_queues_per_process");
	int fd[2] = { open(node, O_RDWR | O_CLOEXEC), open(node, O_RDWR | O_CLOEXEC) };
	unsigned long n;
	uint32_t h = 0, id = 0, last = 0;
	struct drm_syncobj_create sc;
	struct drm_syncobj_handle exp = { .fd = -1 };

	if (fd[0] < 0 || fd[1] < 0 || !max_bos || max_bos > 4096 || !max_syncobjs ||
	    max_syncobjs > 4096 || !max_queues)
		return 1;
	/* Buffers of both kinds, spread over the two files. */
	for (n = 0; n < max_bos; n++) {
		if (_vnpu_bo_create(fd[n % 2], 4096, n % 3 ? DRM_VNPU_BO_HOST : 0, &h, NULL))
			return 2;
		if (n % 2)
			last = h;
	}
	if (_vnpu_bo_create(fd[0], 4096, 0, &h, NULL) != -EMFILE ||
	    _vnpu_bo_create(fd[1], 4096, DRM_VNPU_BO_HOST, &h, NULL) != -EMFILE)
		return 3;
	/* One freed, one more allowed. */
	if (_vnpu_gem_close(fd[1], last))
		return 4;
	if (_vnpu_bo_create(fd[1], 4096, 0, &h, NULL))
		return 5;
	for (n = 0; n < max_syncobjs; n++) {
		sc = (struct drm_syncobj_create){};
		if (ioctl(fd[n % 2], DRM_IOCTL_SYNCOBJ_CREATE, &sc))
			return 6;
	}
	sc = (struct drm_syncobj_create){};
	if (!ioctl(fd[0], DRM_IOCTL_SYNCOBJ_CREATE, &sc) || errno != EMFILE)
		return 7;
	/* An import adds a handle too. */
	exp.handle = 1;
	if (ioctl(fd[0], DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &exp))
		return 8;
	{
		struct drm_syncobj_handle imp = { .fd = exp.fd };

		if (!ioctl(fd[1], DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &imp) || errno != EMFILE)
			return 9;
		close(exp.fd);
	}
	for (n = 0; n < max_queues; n++)
		if (queue_create(fd[n % 2], 0, DRM_VNPU_PRIORITY_NORMAL, &id))
			return 10;
	if (queue_create(fd[0], 0, DRM_VNPU_PRIORITY_NORMAL, &id) != -EMFILE)
		return 11;
	return 0;
}

TEST_F_TIMEOUT(sec, per_process_limits, 120)
{
	gid_t render = self->render;
	uint32_t h;

	if (module_param_ul("max_bos_per_process") > 4096 ||
	    module_param_ul("max_syncobjs_per_process") > 4096)
		SKIP(return, "limits too large to fill; load with small max_*_per_process");
	EXPECT_EQ(0, as_nobody(&render, 1, limits_hold, NULL));
	/* The limits are per process: this one is not affected. */
	EXPECT_EQ(0, _vnpu_bo_create(self->fd, 4096, 0, &h, NULL));
	_vnpu_gem_close(self->fd, h);
}

TEST_HARNESS_MAIN
