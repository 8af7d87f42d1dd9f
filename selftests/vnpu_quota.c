// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: per-process VRAM quotas. DRM_IOCTL_VNPU_QUOTA_GET and
 * QUOTA_SET: defaults from sysfs default_quota_bytes, usage accounting,
 * the setrlimit()-like rules (soft <= hard, lowering is free, raising a
 * hard limit or touching another process needs CAP_SYS_ADMIN), the exact
 * errno of bad input, and isolation: a process that hits its soft limit
 * gets -EDQUOT on every file it opens while other processes keep their own
 * quota. Helper processes are driven step by step over pipes.
 */
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "vnpu_utils.h"

#define SZ_4K (4ULL << 10)
#define SZ_64K (64ULL << 10)
#define SZ_256K (256ULL << 10)
#define SZ_1M (1ULL << 20)
#define UNLIMITED DRM_VNPU_QUOTA_UNLIMITED
#define SET_SOFT DRM_VNPU_QUOTA_SET_SOFT
#define SET_HARD DRM_VNPU_QUOTA_SET_HARD

/* --- Capabilities ---------------------------------------------------------- */

static bool have_cap(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1u << (cap % 32));
}

/* Removes @cap from the calling process's effective and permitted sets. */
static int drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[cap / 32].effective &= ~(1u << (cap % 32));
	data[cap / 32].permitted &= ~(1u << (cap % 32));
	data[cap / 32].inheritable &= ~(1u << (cap % 32));
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return have_cap(cap) ? -EPERM : 0;
}

/* --- Helper processes -------------------------------------------------------- */

/*
 * A helper process runs commands sent by the test over a pipe and answers
 * each with a struct reply. It never uses the harness's ASSERTs (they would
 * unwind into the harness's own fork logic); the test checks the replies.
 */
enum op {
	OP_OPEN,	/* a0: device nth -> v[0] file slot */
	OP_GET,		/* a0: slot, a1: pid -> quota */
	OP_SET,		/* a0: slot, a1: pid, a2: flags, a3: soft, a4: hard -> quota */
	OP_CREATE,	/* a0: slot, a1: size, a2: flags -> v[0] handle */
	OP_FILL,	/* a0: slot, a1: size -> v[0] buffers created until the first error */
	OP_CLOSE_LAST,	/* a0: slot: closes the newest buffer created on it */
	OP_DROP_CAP,	/* drop CAP_SYS_ADMIN */
	OP_SETUID,	/* setuid(65534): drop all capabilities */
	OP_EXIT,
};

struct cmd {
	uint32_t op;
	uint32_t pad;
	uint64_t a[5];
};

struct reply {
	int32_t err;		/* 0 or -errno of the command */
	int32_t pad;
	uint64_t v[2];
	struct drm_vnpu_quota q;
};

#define MAX_SLOTS 4
#define MAX_HELD 4096

struct proc {
	pid_t pid;
	int cmd_wr;
	int rep_rd;
};

struct held {
	int slot;
	uint32_t handle;
};

static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : (ssize_t)done;
		done += n;
	}
	return done;
}

static void proc_main(int cmd_rd, int rep_wr)
{
	static struct held held[MAX_HELD];
	int fds[MAX_SLOTS], nslots = 0, nheld = 0;
	struct cmd c;

	while (read_full(cmd_rd, &c, sizeof(c)) == sizeof(c)) {
		struct reply r = { 0 };
		int slot = (int)c.a[0];
		int fd = slot >= 0 && slot < nslots ? fds[slot] : -1;

		switch (c.op) {
		case OP_OPEN:
			if (nslots == MAX_SLOTS) {
				r.err = -EMFILE;
				break;
			}
			fds[nslots] = vnpu_open_nth((unsigned int)c.a[0]);
			if (fds[nslots] < 0)
				r.err = -ENODEV;
			else
				r.v[0] = nslots++;
			break;
		case OP_GET:
			r.err = _vnpu_quota_get(fd, (int32_t)c.a[1], &r.q);
			break;
		case OP_SET:
			r.err = _vnpu_quota_set(fd, (int32_t)c.a[1], (uint32_t)c.a[2], c.a[3],
						c.a[4], &r.q);
			break;
		case OP_CREATE: {
			uint32_t h = 0;

			r.err = _vnpu_bo_create(fd, c.a[1], (uint32_t)c.a[2], &h, NULL);
			if (!r.err && nheld < MAX_HELD)
				held[nheld++] = (struct held){ slot, h };
			r.v[0] = h;
			break;
		}
		case OP_FILL:
			while (nheld < MAX_HELD) {
				uint32_t h = 0;

				r.err = _vnpu_bo_create(fd, c.a[1], 0, &h, NULL);
				if (r.err)
					break;
				held[nheld++] = (struct held){ slot, h };
				r.v[0]++;
			}
			break;
		case OP_CLOSE_LAST:
			r.err = -ENOENT;
			for (int i = nheld - 1; i >= 0; i--) {
				if (held[i].slot != slot)
					continue;
				r.err = _vnpu_gem_close(fd, held[i].handle);
				held[i] = held[--nheld];
				break;
			}
			break;
		case OP_DROP_CAP:
			r.err = drop_cap(CAP_SYS_ADMIN);
			break;
		case OP_SETUID:
			r.err = setuid(65534) ? -errno : (have_cap(CAP_SYS_ADMIN) ? -EPERM : 0);
			break;
		case OP_EXIT:
			_exit(0);
		default:
			r.err = -EINVAL;
		}
		if (write(rep_wr, &r, sizeof(r)) != sizeof(r))
			_exit(2);
	}
	_exit(0);
}

static int proc_start(struct proc *p)
{
	int to_child[2], to_parent[2];
	pid_t pid;

	if (pipe2(to_child, O_CLOEXEC))
		return -errno;
	if (pipe2(to_parent, O_CLOEXEC)) {
		close(to_child[0]);
		close(to_child[1]);
		return -errno;
	}
	/* Only the parent may write *p: the fixture is shared memory. */
	pid = vnpu_fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		proc_main(to_child[0], to_parent[1]);
	}
	p->pid = pid;
	close(to_child[0]);
	close(to_parent[1]);
	p->cmd_wr = to_child[1];
	p->rep_rd = to_parent[0];
	return 0;
}

/* Sends one command and waits (up to 20 s) for its reply. */
static int proc_call(struct proc *p, const struct cmd *c, struct reply *r)
{
	struct pollfd pfd = { .fd = p->rep_rd, .events = POLLIN };
	ssize_t n;

	if (write(p->cmd_wr, c, sizeof(*c)) != sizeof(*c))
		return -EPIPE;
	n = poll(&pfd, 1, 20000);
	if (n <= 0)
		return n ? -errno : -ETIMEDOUT;
	n = read_full(p->rep_rd, r, sizeof(*r));
	return n == sizeof(*r) ? 0 : -EPIPE;
}

static void proc_stop(struct proc *p)
{
	struct cmd c = { .op = OP_EXIT };

	if (p->pid <= 0)
		return;
	if (write(p->cmd_wr, &c, sizeof(c)) != sizeof(c))
		kill(p->pid, SIGKILL);
	close(p->cmd_wr);
	close(p->rep_rd);
	waitpid(p->pid, NULL, 0);
	p->pid = 0;
}

/* Runs @op in @p and returns the reply; the transport must work. */
static struct reply __call(struct __test_metadata *_metadata, struct proc *p, uint32_t op,
			   const uint64_t *a)
{
	struct cmd c = { .op = op, .a = { a[0], a[1], a[2], a[3], a[4] } };
	struct reply r = { 0 };

	ASSERT_EQ(0, proc_call(p, &c, &r)) {
		TH_LOG("helper process %d did not answer op %u", p->pid, op);
	}
	return r;
}

/* call(proc, OP_x, arguments...): up to five arguments, the rest are zero. */
#define call(p, op, ...) __call(_metadata, p, op, (const uint64_t[5]){ __VA_ARGS__ })

/* --- Fixture ---------------------------------------------------------------- */

/*
 * The teardown runs in the harness's parent process (FIXTURE_TEARDOWN_PARENT,
 * self is shared memory) so that it also runs after a failed ASSERT; helper
 * processes die with the test process (vnpu_fork()).
 */
FIXTURE(quota) {
	int fd;
	pid_t owner;			/* the test process, which owns fd and helpers */
	uint64_t vram_size;
	uint64_t def;			/* sysfs default_quota_bytes */
	char default_path[512];
	char saved_default[64];		/* restored in teardown when non-empty */
	struct proc procs[3];
};

FIXTURE_SETUP(quota)
{
	/* A helper that died must show up as a failed call, not kill the test. */
	signal(SIGPIPE, SIG_IGN);
	self->owner = getpid();
	self->fd = vnpu_open_nth(0);
	if (self->fd < 0)
		SKIP(return, "no vnpu device");
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_SIZE, &self->vram_size);
	ASSERT_EQ(0, vnpu_sysfs_u64(self->fd, "default_quota_bytes", &self->def));
}

FIXTURE_TEARDOWN_PARENT(quota)
{
	if (self->saved_default[0])
		vnpu_write_path(self->default_path, self->saved_default);
	if (getpid() != self->owner)
		return;
	for (int i = 0; i < 3; i++) {
		if (self->procs[i].pid > 0) {
			kill(self->procs[i].pid, SIGKILL);
			proc_stop(&self->procs[i]);
		}
	}
	if (self->fd >= 0)
		close(self->fd);
}

/* Makes sure the calling process may hold @bytes of VRAM, or SKIPs. */
#define need_quota(bytes) do {						\
	if (self->def < (bytes)) {					\
		if (!have_cap(CAP_SYS_ADMIN))				\
			SKIP(return, "default quota below %llu bytes",	\
			     (unsigned long long)(bytes));		\
		vnpu_quota_set(self->fd, 0, SET_SOFT | SET_HARD, UNLIMITED, UNLIMITED, NULL); \
	}								\
} while (0)

#define require_admin() do {						\
	if (!have_cap(CAP_SYS_ADMIN))					\
		SKIP(return, "needs CAP_SYS_ADMIN");			\
} while (0)

/* Gives the calling process soft/hard limits of @soft/@hard (needs admin to raise). */
#define set_own(soft, hard) \
	vnpu_quota_set(self->fd, 0, SET_SOFT | SET_HARD, soft, hard, NULL)

#define expect_quota(q, soft, hard) do {				\
	EXPECT_EQ((uint64_t)(soft), (q).soft_limit);			\
	EXPECT_EQ((uint64_t)(hard), (q).hard_limit);			\
} while (0)

/* --- Reading -------------------------------------------------------------- */

TEST_F(quota, get_defaults)
{
	struct drm_vnpu_quota q, q2;

	vnpu_quota_get(self->fd, 0, &q);
	expect_quota(q, self->def, self->def);
	EXPECT_EQ(0, q.used);
	EXPECT_EQ(0, q.peak);
	EXPECT_EQ(0, q.bo_count);
	EXPECT_EQ(0, q.host_used);
	EXPECT_EQ(0, q.pad);
	EXPECT_EQ(0, q.flags);

	/* Naming oneself by pid is the same as pid 0, and needs no privilege. */
	vnpu_quota_get(self->fd, getpid(), &q2);
	expect_quota(q2, q.soft_limit, q.hard_limit);
	EXPECT_EQ(q.used, q2.used);
}

TEST_F(quota, usage_is_counted_across_files)
{
	struct drm_vnpu_bo_info i1, i2, i3, i4;
	uint32_t h1 = 0, h2 = 0, h3 = 0, h4 = 0, h5 = 0;
	struct drm_vnpu_quota q;
	uint64_t peak;
	int fd2;

	need_quota(8 * SZ_1M);
	vnpu_bo_create(self->fd, SZ_1M, 0, &h1, NULL);
	vnpu_bo_create(self->fd, SZ_64K + 1, DRM_VNPU_BO_MAPPABLE, &h2, NULL);
	vnpu_bo_create(self->fd, SZ_1M, DRM_VNPU_BO_HOST, &h3, NULL);
	vnpu_bo_create(self->fd, 5000, DRM_VNPU_BO_HOST, &h4, NULL);
	vnpu_bo_info(self->fd, h1, &i1);
	vnpu_bo_info(self->fd, h2, &i2);
	vnpu_bo_info(self->fd, h3, &i3);
	vnpu_bo_info(self->fd, h4, &i4);
	EXPECT_EQ(SZ_64K + SZ_4K, i2.size);

	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(i1.size + i2.size, q.used);
	EXPECT_EQ(2, q.bo_count);
	EXPECT_EQ(i3.size + i4.size, q.host_used);
	EXPECT_EQ(q.used, q.peak);
	peak = q.peak;

	vnpu_gem_close(self->fd, h1);
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(i2.size, q.used);
	EXPECT_EQ(1, q.bo_count);
	EXPECT_EQ(peak, q.peak);

	/* A second file of the same process counts in the same quota. */
	fd2 = vnpu_open_nth(0);
	ASSERT_GE(fd2, 0);
	vnpu_bo_create(fd2, 2 * SZ_1M, 0, &h5, NULL);
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(i2.size + 2 * SZ_1M, q.used);
	EXPECT_EQ(2, q.bo_count);
	EXPECT_EQ(i2.size + 2 * SZ_1M, q.peak);
	vnpu_quota_get(fd2, 0, &q);
	EXPECT_EQ(i2.size + 2 * SZ_1M, q.used);
	/* Closing the file releases its buffers. */
	close(fd2);
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(i2.size, q.used);

	vnpu_gem_close(self->fd, h2);
	vnpu_gem_close(self->fd, h3);
	vnpu_gem_close(self->fd, h4);
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(0, q.used);
	EXPECT_EQ(0, q.bo_count);
	EXPECT_EQ(0, q.host_used);
	EXPECT_EQ(i2.size + 2 * SZ_1M, q.peak);
}

static void *thread_create(void *arg)
{
	int *fd = arg;
	uint32_t h = 0;

	if (_vnpu_bo_create(*fd, SZ_1M, 0, &h, NULL))
		return NULL;
	return (void *)(uintptr_t)h;
}

TEST_F(quota, threads_share_the_process_quota)
{
	struct drm_vnpu_quota q;
	pthread_t t;
	void *ret = NULL;

	need_quota(SZ_1M);
	ASSERT_EQ(0, pthread_create(&t, NULL, thread_create, &self->fd));
	ASSERT_EQ(0, pthread_join(t, &ret));
	ASSERT_NE(NULL, ret);
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(SZ_1M, q.used);
	EXPECT_EQ(1, q.bo_count);
	vnpu_gem_close(self->fd, (uint32_t)(uintptr_t)ret);
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(0, q.used);
}

/* --- Own limits -------------------------------------------------------------- */

TEST_F(quota, set_soft_within_hard)
{
	struct drm_vnpu_quota q0, q;
	uint64_t soft;

	vnpu_quota_get(self->fd, 0, &q0);
	soft = q0.hard_limit >= 16 * SZ_1M ? 8 * SZ_1M : q0.hard_limit / 2;

	/* hard_limit is ignored without SET_HARD. */
	vnpu_quota_set(self->fd, 0, SET_SOFT, soft, 12345, &q);
	expect_quota(q, soft, q0.hard_limit);
	vnpu_quota_get(self->fd, 0, &q);
	expect_quota(q, soft, q0.hard_limit);

	/* Up to the hard limit, inclusive. */
	vnpu_quota_set(self->fd, 0, SET_SOFT, q0.hard_limit, 0, &q);
	expect_quota(q, q0.hard_limit, q0.hard_limit);
	vnpu_quota_set(self->fd, 0, SET_SOFT, 0, 0, &q);
	expect_quota(q, 0, q0.hard_limit);
	vnpu_err_bo_create(EDQUOT, self->fd, SZ_4K, 0);
}

TEST_F(quota, soft_above_hard_is_einval)
{
	struct drm_vnpu_quota q0, q;

	vnpu_quota_get(self->fd, 0, &q0);
	if (q0.hard_limit < 32 * SZ_1M && !have_cap(CAP_SYS_ADMIN))
		SKIP(return, "hard limit too low to test without CAP_SYS_ADMIN");
	set_own(16 * SZ_1M, 32 * SZ_1M);

	vnpu_err_quota_set(EINVAL, self->fd, 0, SET_SOFT, 32 * SZ_1M + 1, 0);
	vnpu_err_quota_set(EINVAL, self->fd, 0, SET_SOFT, 64 * SZ_1M, 0);
	vnpu_err_quota_set(EINVAL, self->fd, 0, SET_SOFT, UNLIMITED, 0);
	vnpu_err_quota_set(EINVAL, self->fd, 0, SET_SOFT | SET_HARD, 64 * SZ_1M, 32 * SZ_1M);
	vnpu_err_quota_set(EINVAL, self->fd, 0, SET_SOFT | SET_HARD, 24 * SZ_1M, 16 * SZ_1M);
	vnpu_quota_get(self->fd, 0, &q);
	expect_quota(q, 16 * SZ_1M, 32 * SZ_1M);
}

TEST_F(quota, lower_own_hard_then_raise_as_admin)
{
	struct drm_vnpu_quota q0, q;

	vnpu_quota_get(self->fd, 0, &q0);
	if (q0.hard_limit < 32 * SZ_1M && !have_cap(CAP_SYS_ADMIN))
		SKIP(return, "hard limit too low to test without CAP_SYS_ADMIN");
	set_own(16 * SZ_1M, 32 * SZ_1M);
	vnpu_quota_set(self->fd, 0, SET_HARD, 0, 24 * SZ_1M, &q);
	expect_quota(q, 16 * SZ_1M, 24 * SZ_1M);
	vnpu_quota_set(self->fd, 0, SET_HARD, 0, 16 * SZ_1M, &q);
	expect_quota(q, 16 * SZ_1M, 16 * SZ_1M);

	require_admin();
	vnpu_quota_set(self->fd, 0, SET_HARD, 0, 64 * SZ_1M, &q);
	expect_quota(q, 16 * SZ_1M, 64 * SZ_1M);
	vnpu_quota_set(self->fd, 0, SET_HARD, 0, UNLIMITED, &q);
	expect_quota(q, 16 * SZ_1M, UNLIMITED);
	vnpu_quota_set(self->fd, 0, SET_SOFT, UNLIMITED, 0, &q);
	expect_quota(q, UNLIMITED, UNLIMITED);
	vnpu_quota_get(self->fd, 0, &q);
	expect_quota(q, UNLIMITED, UNLIMITED);
}

/*
 * A helper drops its privileges (CAP_SYS_ADMIN only, or everything with
 * setuid) after opening the device, then tries what needs them.
 */
static void unprivileged_rules(struct __test_metadata *_metadata,
			       FIXTURE_DATA(quota) *self, uint32_t drop_op)
{
	struct proc *p = &self->procs[0];
	struct drm_vnpu_quota q;
	struct reply r;

	ASSERT_EQ(0, proc_start(p));
	r = call(p, OP_OPEN, 0);
	ASSERT_EQ(0, r.err);
	r = call(p, OP_SET, 0, 0, SET_SOFT | SET_HARD, 8 * SZ_1M, 16 * SZ_1M);
	ASSERT_EQ(0, r.err);
	r = call(p, drop_op);
	ASSERT_EQ(0, r.err);

	/* Own limits: readable, hard may go down but not up, soft moves freely below it. */
	r = call(p, OP_GET, 0, 0);
	EXPECT_EQ(0, r.err);
	expect_quota(r.q, 8 * SZ_1M, 16 * SZ_1M);
	r = call(p, OP_GET, 0, (uint64_t)p->pid);
	EXPECT_EQ(0, r.err);
	r = call(p, OP_SET, 0, 0, SET_HARD, 0, 32 * SZ_1M);
	EXPECT_EQ(-EPERM, r.err);
	r = call(p, OP_SET, 0, 0, SET_HARD, 0, UNLIMITED);
	EXPECT_EQ(-EPERM, r.err);
	r = call(p, OP_SET, 0, 0, SET_SOFT | SET_HARD, 8 * SZ_1M, 32 * SZ_1M);
	EXPECT_EQ(-EPERM, r.err);
	r = call(p, OP_GET, 0, 0);
	expect_quota(r.q, 8 * SZ_1M, 16 * SZ_1M);
	r = call(p, OP_SET, 0, 0, SET_HARD, 0, 12 * SZ_1M);
	EXPECT_EQ(0, r.err);
	expect_quota(r.q, 8 * SZ_1M, 12 * SZ_1M);
	r = call(p, OP_SET, 0, 0, SET_SOFT, 12 * SZ_1M, 0);
	EXPECT_EQ(0, r.err);
	expect_quota(r.q, 12 * SZ_1M, 12 * SZ_1M);
	r = call(p, OP_SET, 0, 0, SET_SOFT, 4 * SZ_1M, 0);
	EXPECT_EQ(0, r.err);
	r = call(p, OP_SET, 0, 0, SET_SOFT, 16 * SZ_1M, 0);
	EXPECT_EQ(-EINVAL, r.err);
	/* Once lowered, not even back to where it was. */
	r = call(p, OP_SET, 0, 0, SET_HARD, 0, 16 * SZ_1M);
	EXPECT_EQ(-EPERM, r.err);

	/* Another process: neither readable nor writable. */
	r = call(p, OP_GET, 0, (uint64_t)getpid());
	EXPECT_EQ(-EPERM, r.err);
	r = call(p, OP_SET, 0, (uint64_t)getpid(), SET_SOFT, SZ_1M, 0);
	EXPECT_EQ(-EPERM, r.err);
	r = call(p, OP_SET, 0, (uint64_t)getpid(), SET_HARD, 0, SZ_1M);
	EXPECT_EQ(-EPERM, r.err);
	vnpu_quota_get(self->fd, 0, &q);
	expect_quota(q, self->def, self->def);

	/* The admin can read and raise the helper's limits. */
	vnpu_quota_get(self->fd, p->pid, &q);
	expect_quota(q, 4 * SZ_1M, 12 * SZ_1M);
	vnpu_quota_set(self->fd, p->pid, SET_SOFT | SET_HARD, 24 * SZ_1M, 48 * SZ_1M, &q);
	expect_quota(q, 24 * SZ_1M, 48 * SZ_1M);
	r = call(p, OP_GET, 0, 0);
	EXPECT_EQ(0, r.err);
	expect_quota(r.q, 24 * SZ_1M, 48 * SZ_1M);
	proc_stop(p);
}

TEST_F(quota, raise_hard_without_cap_sys_admin_is_eperm)
{
	require_admin();
	unprivileged_rules(_metadata, self, OP_DROP_CAP);
}

TEST_F(quota, unprivileged_user_is_eperm)
{
	require_admin();
	unprivileged_rules(_metadata, self, OP_SETUID);
}

/* --- Other processes ------------------------------------------------------- */

TEST_F(quota, admin_reads_and_sets_another_process)
{
	struct proc *p = &self->procs[0];
	struct drm_vnpu_quota q;
	struct reply r;

	require_admin();
	ASSERT_EQ(0, proc_start(p));
	/* Never used the device: default limits, no usage. */
	vnpu_quota_get(self->fd, p->pid, &q);
	expect_quota(q, self->def, self->def);
	EXPECT_EQ(0, q.used);
	EXPECT_EQ(0, q.bo_count);

	ASSERT_EQ(0, call(p, OP_OPEN, 0).err);
	ASSERT_EQ(0, call(p, OP_SET, 0, 0, SET_SOFT | SET_HARD, UNLIMITED, UNLIMITED).err);
	ASSERT_EQ(0, call(p, OP_CREATE, 0, SZ_1M, 0).err);
	ASSERT_EQ(0, call(p, OP_CREATE, 0, SZ_64K, DRM_VNPU_BO_HOST).err);
	vnpu_quota_get(self->fd, p->pid, &q);
	EXPECT_EQ(SZ_1M, q.used);
	EXPECT_EQ(1, q.bo_count);
	EXPECT_EQ(SZ_64K, q.host_used);
	/* The admin's own usage is separate. */
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(0, q.used);

	/* A soft limit at the usage: nothing more fits. */
	vnpu_quota_set(self->fd, p->pid, SET_SOFT, SZ_1M, 0, &q);
	expect_quota(q, SZ_1M, UNLIMITED);
	EXPECT_EQ(SZ_1M, q.used);
	r = call(p, OP_GET, 0, 0);
	expect_quota(r.q, SZ_1M, UNLIMITED);
	EXPECT_EQ(-EDQUOT, call(p, OP_CREATE, 0, SZ_4K, 0).err);

	vnpu_quota_set(self->fd, p->pid, SET_SOFT, 2 * SZ_1M, 0, NULL);
	EXPECT_EQ(0, call(p, OP_CREATE, 0, SZ_1M, 0).err);
	EXPECT_EQ(-EDQUOT, call(p, OP_CREATE, 0, SZ_4K, 0).err);

	/* Limits below the usage are allowed; they only block new buffers. */
	vnpu_quota_set(self->fd, p->pid, SET_SOFT | SET_HARD, SZ_1M, SZ_1M, &q);
	expect_quota(q, SZ_1M, SZ_1M);
	EXPECT_EQ(2 * SZ_1M, q.used);
	EXPECT_EQ(-EDQUOT, call(p, OP_CREATE, 0, SZ_4K, 0).err);
	EXPECT_EQ(0, call(p, OP_CLOSE_LAST, 0).err);
	EXPECT_EQ(0, call(p, OP_CLOSE_LAST, 0).err);
	vnpu_quota_get(self->fd, p->pid, &q);
	EXPECT_EQ(SZ_1M, q.used);
	EXPECT_EQ(-EDQUOT, call(p, OP_CREATE, 0, SZ_4K, 0).err);
	proc_stop(p);
}

TEST_F(quota, nonexistent_pid_is_esrch)
{
	pid_t gone;

	require_admin();
	gone = vnpu_fork();
	ASSERT_GE(gone, 0);
	if (!gone)
		_exit(0);
	ASSERT_EQ(gone, waitpid(gone, NULL, 0));
	if (!(kill(gone, 0) == -1 && errno == ESRCH))
		SKIP(return, "pid %d was reused", gone);

	vnpu_err_quota_get(ESRCH, self->fd, gone);
	vnpu_err_quota_set(ESRCH, self->fd, gone, SET_SOFT, SZ_1M, 0);
	/* Above any pid_max. */
	vnpu_err_quota_get(ESRCH, self->fd, 0x7fffffff);
	vnpu_err_quota_set(ESRCH, self->fd, 0x7fffffff, SET_SOFT, SZ_1M, 0);
}

/* --- Bad input --------------------------------------------------------------- */

TEST_F(quota, unknown_flags_are_einval)
{
	struct drm_vnpu_quota q0, q;

	vnpu_quota_get(self->fd, 0, &q0);
	for (int bit = 0; bit < 32; bit++) {
		struct drm_vnpu_quota get = { .flags = 1u << bit };

		/* GET takes no flags at all, not even SET_*. */
		EXPECT_EQ(-EINVAL, _vnpu_quota_get_args(self->fd, &get)) {
			TH_LOG("GET flags bit %d", bit);
		}
		if ((1u << bit) & DRM_VNPU_QUOTA_SET_FLAGS)
			continue;
		EXPECT_EQ(-EINVAL, _vnpu_quota_set(self->fd, 0, 1u << bit, 0, 0, NULL)) {
			TH_LOG("SET flags bit %d", bit);
		}
		EXPECT_EQ(-EINVAL, _vnpu_quota_set(self->fd, 0, (1u << bit) | SET_SOFT, 0, 0,
						   NULL)) {
			TH_LOG("SET flags bit %d with SET_SOFT", bit);
		}
	}
	vnpu_quota_get(self->fd, 0, &q);
	expect_quota(q, q0.soft_limit, q0.hard_limit);
}

TEST_F(quota, nonzero_pad_is_einval)
{
	static const uint64_t pads[] = { 1, 1ULL << 32, 1ULL << 63 };
	struct drm_vnpu_quota q0, q;

	vnpu_quota_get(self->fd, 0, &q0);
	for (size_t i = 0; i < 3; i++) {
		struct drm_vnpu_quota get = { .pad = pads[i] };
		struct drm_vnpu_quota set = { .flags = SET_SOFT, .soft_limit = 0, .pad = pads[i] };

		EXPECT_EQ(-EINVAL, _vnpu_quota_get_args(self->fd, &get));
		EXPECT_EQ(-EINVAL, _vnpu_quota_set_args(self->fd, &set));
	}
	vnpu_quota_get(self->fd, 0, &q);
	expect_quota(q, q0.soft_limit, q0.hard_limit);
}

struct vnpu_quota_short {
	__s32 pid;
	__u32 flags;
	__u64 soft_limit;
};

struct vnpu_quota_long {
	struct drm_vnpu_quota base;
	__u64 future[2];
};

#define VNPU_IOWR(nr, type) DRM_IOWR(DRM_COMMAND_BASE + (nr), type)

TEST_F(quota, struct_size_rules)
{
	struct vnpu_quota_short s = { 0 };
	struct drm_vnpu_quota q0, q;

	vnpu_quota_get(self->fd, 0, &q0);
	EXPECT_EQ(-1, ioctl(self->fd, VNPU_IOWR(DRM_VNPU_QUOTA_GET, struct vnpu_quota_short), &s));
	EXPECT_EQ(EINVAL, errno);
	s.flags = SET_SOFT;
	EXPECT_EQ(-1, ioctl(self->fd, VNPU_IOWR(DRM_VNPU_QUOTA_SET, struct vnpu_quota_short), &s));
	EXPECT_EQ(EINVAL, errno);
	for (int i = 0; i < 2; i++) {
		struct vnpu_quota_long l = { .base.flags = SET_SOFT };

		l.future[i] = 1;
		EXPECT_EQ(-1, ioctl(self->fd, VNPU_IOWR(DRM_VNPU_QUOTA_SET, struct vnpu_quota_long),
				    &l));
		EXPECT_EQ(E2BIG, errno);
		l.base.flags = 0;
		EXPECT_EQ(-1, ioctl(self->fd, VNPU_IOWR(DRM_VNPU_QUOTA_GET, struct vnpu_quota_long),
				    &l));
		EXPECT_EQ(E2BIG, errno);
	}
	vnpu_quota_get(self->fd, 0, &q);
	expect_quota(q, q0.soft_limit, q0.hard_limit);
	{
		struct vnpu_quota_long l = { 0 };

		ASSERT_EQ(0, ioctl(self->fd, VNPU_IOWR(DRM_VNPU_QUOTA_GET, struct vnpu_quota_long),
				   &l));
		expect_quota(l.base, q0.soft_limit, q0.hard_limit);
	}
}

/* --- Enforcement -------------------------------------------------------------- */

TEST_F(quota, edquot_changes_nothing)
{
	struct vnpu_mem_state before;
	struct drm_vnpu_quota q0, q;
	uint32_t h = 0;

	need_quota(4 * SZ_1M);

	vnpu_quota_set(self->fd, 0, SET_SOFT, SZ_1M, 0, NULL);
	vnpu_bo_create(self->fd, 512 << 10, 0, &h, NULL);
	vnpu_quota_get(self->fd, 0, &q0);
	vnpu_get_mem_state(self->fd, &before);
	vnpu_err_bo_create(EDQUOT, self->fd, 768 << 10, 0);
	vnpu_err_bo_create(EDQUOT, self->fd, SZ_1M, DRM_VNPU_BO_MAPPABLE);
	vnpu_err_bo_create(EDQUOT, self->fd, 2 * SZ_1M, 0);
	vnpu_assert_mem_unchanged(self->fd, &before);
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(q0.used, q.used);
	EXPECT_EQ(q0.peak, q.peak);
	EXPECT_EQ(q0.bo_count, q.bo_count);
	/* What still fits does. */
	vnpu_bo_create(self->fd, 512 << 10, 0, NULL, NULL);
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(SZ_1M, q.used);
	vnpu_err_bo_create(EDQUOT, self->fd, SZ_4K, 0);
}

TEST_F(quota, charge_is_the_rounded_size_and_host_is_free)
{
	struct drm_vnpu_quota q;
	uint32_t h = 0;

	need_quota(4 * SZ_1M);

	vnpu_quota_set(self->fd, 0, SET_SOFT, SZ_64K + SZ_4K, 0, NULL);
	/* 64 KiB + 1 takes 17 pages: exactly the limit. */
	vnpu_bo_create(self->fd, SZ_64K + 1, 0, &h, NULL);
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(SZ_64K + SZ_4K, q.used);
	vnpu_err_bo_create(EDQUOT, self->fd, 1, 0);
	/* Host-pinned memory is not limited by the quota. */
	vnpu_bo_create(self->fd, 4 * SZ_1M, DRM_VNPU_BO_HOST, NULL, NULL);
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(SZ_64K + SZ_4K, q.used);
	EXPECT_EQ(4 * SZ_1M, q.host_used);
	EXPECT_EQ(1, q.bo_count);
	vnpu_gem_close(self->fd, h);
	/* Small buffers are charged whole pages. */
	vnpu_quota_set(self->fd, 0, SET_SOFT, 3 * SZ_4K, 0, NULL);
	vnpu_bo_create(self->fd, 1, 0, NULL, NULL);
	vnpu_bo_create(self->fd, SZ_4K + 1, 0, NULL, NULL);
	vnpu_err_bo_create(EDQUOT, self->fd, 1, 0);
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(3 * SZ_4K, q.used);
}

TEST_F(quota, limit_below_usage_blocks_new_buffers_only)
{
	uint32_t h1 = 0, h2 = 0;
	struct drm_vnpu_quota q;

	need_quota(4 * SZ_1M);

	vnpu_bo_create(self->fd, SZ_1M, 0, &h1, NULL);
	vnpu_bo_create(self->fd, SZ_1M, DRM_VNPU_BO_MAPPABLE, &h2, NULL);
	vnpu_quota_set(self->fd, 0, SET_SOFT, SZ_1M, 0, &q);
	EXPECT_EQ(SZ_1M, q.soft_limit);
	EXPECT_EQ(2 * SZ_1M, q.used);
	vnpu_err_bo_create(EDQUOT, self->fd, SZ_4K, 0);
	/* The buffers over the limit are untouched. */
	vnpu_bo_info(self->fd, h1, NULL);
	vnpu_bo_info(self->fd, h2, NULL);
	vnpu_gem_close(self->fd, h1);
	vnpu_err_bo_create(EDQUOT, self->fd, SZ_4K, 0);
	vnpu_gem_close(self->fd, h2);
	vnpu_bo_create(self->fd, SZ_1M, 0, NULL, NULL);
	vnpu_err_bo_create(EDQUOT, self->fd, SZ_4K, 0);
}

TEST_F_TIMEOUT(quota, processes_are_isolated, 90)
{
	struct proc *a = &self->procs[0], *b = &self->procs[1];
	uint64_t limit = 8 * SZ_1M, per_buf = SZ_256K, n;
	struct vnpu_mem_state base, now;
	struct drm_vnpu_quota q;
	struct reply r;

	vnpu_get_mem_state(self->fd, &base);
	while (limit > SZ_1M && 3 * limit > self->vram_size - base.vram_used)
		limit /= 2;
	if (3 * limit > self->vram_size - base.vram_used)
		SKIP(return, "not enough free VRAM");
	if (self->def < 2 * limit && !have_cap(CAP_SYS_ADMIN))
		SKIP(return, "default quota too small without CAP_SYS_ADMIN");
	n = limit / per_buf;

	/* A sets its own soft limit and fills it: EDQUOT, not ENOSPC. */
	ASSERT_EQ(0, proc_start(a));
	ASSERT_EQ(0, call(a, OP_OPEN, 0).err);
	if (self->def < 2 * limit)
		ASSERT_EQ(0, call(a, OP_SET, 0, 0, SET_HARD, 0, UNLIMITED).err);
	ASSERT_EQ(0, call(a, OP_SET, 0, 0, SET_SOFT, limit, 0).err);
	r = call(a, OP_FILL, 0, per_buf);
	EXPECT_EQ(-EDQUOT, r.err);
	EXPECT_EQ(n, r.v[0]);
	r = call(a, OP_GET, 0, 0);
	EXPECT_EQ(limit, r.q.used);
	EXPECT_LE(r.q.used, limit);
	EXPECT_EQ(n, r.q.bo_count);

	/* B gets its own full quota while A holds all of its own. */
	ASSERT_EQ(0, proc_start(b));
	ASSERT_EQ(0, call(b, OP_OPEN, 0).err);
	if (self->def < 2 * limit)
		ASSERT_EQ(0, call(b, OP_SET, 0, 0, SET_HARD, 0, UNLIMITED).err);
	ASSERT_EQ(0, call(b, OP_SET, 0, 0, SET_SOFT, limit, 0).err);
	r = call(b, OP_FILL, 0, per_buf);
	EXPECT_EQ(-EDQUOT, r.err);
	EXPECT_EQ(n, r.v[0]);

	/* A second file does not escape A's quota... */
	ASSERT_EQ(1, call(a, OP_OPEN, 0).v[0]);
	EXPECT_EQ(-EDQUOT, call(a, OP_CREATE, 1, per_buf, 0).err);
	EXPECT_EQ(-EDQUOT, call(a, OP_CREATE, 1, SZ_4K, DRM_VNPU_BO_MAPPABLE).err);
	/* ...and room freed on one file is usable on the other. */
	EXPECT_EQ(0, call(a, OP_CLOSE_LAST, 0).err);
	EXPECT_EQ(0, call(a, OP_CREATE, 1, per_buf, 0).err);
	EXPECT_EQ(-EDQUOT, call(a, OP_CREATE, 1, SZ_4K, 0).err);
	r = call(a, OP_GET, 1, 0);
	EXPECT_EQ(limit, r.q.used);

	vnpu_get_mem_state(self->fd, &now);
	EXPECT_EQ(base.vram_used + 2 * limit, now.vram_used);

	/* The admin raises A's limit by pid; A sees it and may use it. */
	if (have_cap(CAP_SYS_ADMIN)) {
		vnpu_quota_set(self->fd, a->pid, SET_SOFT, 2 * limit, 0, &q);
		EXPECT_EQ(2 * limit, q.soft_limit);
		EXPECT_EQ(limit, q.used);
		r = call(a, OP_GET, 0, 0);
		EXPECT_EQ(2 * limit, r.q.soft_limit);
		r = call(a, OP_FILL, 1, per_buf);
		EXPECT_EQ(-EDQUOT, r.err);
		EXPECT_EQ(n, r.v[0]);
		/* B's limit did not move. */
		EXPECT_EQ(-EDQUOT, call(b, OP_CREATE, 0, SZ_4K, 0).err);
		vnpu_quota_get(self->fd, b->pid, &q);
		EXPECT_EQ(limit, q.soft_limit);
		EXPECT_EQ(limit, q.used);
	}

	proc_stop(a);
	proc_stop(b);
	EXPECT_EQ(0, vnpu_wait_mem_state(self->fd, &base, &now, 2000)) {
		TH_LOG("VRAM used %llu, baseline %llu", (unsigned long long)now.vram_used,
		       (unsigned long long)base.vram_used);
	}
}

TEST_F(quota, default_quota_applies_to_new_processes)
{
	struct proc *p = &self->procs[0], *p2 = &self->procs[1];
	struct drm_vnpu_quota mine, q;
	char buf[64];
	struct reply r;

	if (geteuid() || !have_cap(CAP_SYS_ADMIN))
		SKIP(return, "writing default_quota_bytes needs root");
	ASSERT_EQ(0, vnpu_sysfs_path(self->fd, "default_quota_bytes", self->default_path,
				     sizeof(self->default_path)));
	ASSERT_EQ(0, vnpu_sysfs_read(self->fd, "default_quota_bytes", self->saved_default,
				     sizeof(self->saved_default)));
	/* This process has used the device before the change. */
	vnpu_quota_get(self->fd, 0, &mine);

	ASSERT_EQ(0, vnpu_sysfs_write(self->fd, "default_quota_bytes", "4194304"));
	ASSERT_EQ(0, vnpu_sysfs_read(self->fd, "default_quota_bytes", buf, sizeof(buf)));
	EXPECT_STREQ("4194304", buf);
	vnpu_quota_get(self->fd, 0, &q);
	expect_quota(q, mine.soft_limit, mine.hard_limit);

	ASSERT_EQ(0, proc_start(p));
	ASSERT_EQ(0, call(p, OP_OPEN, 0).err);
	r = call(p, OP_GET, 0, 0);
	EXPECT_EQ(0, r.err);
	expect_quota(r.q, 4 * SZ_1M, 4 * SZ_1M);
	r = call(p, OP_FILL, 0, SZ_1M);
	EXPECT_EQ(-EDQUOT, r.err);
	EXPECT_EQ(4, r.v[0]);
	/* The default's hard limit binds an unprivileged process. */
	ASSERT_EQ(0, call(p, OP_DROP_CAP).err);
	EXPECT_EQ(-EPERM, call(p, OP_SET, 0, 0, SET_HARD, 0, 8 * SZ_1M).err);

	ASSERT_EQ(0, vnpu_sysfs_write(self->fd, "default_quota_bytes", "max"));
	ASSERT_EQ(0, vnpu_sysfs_read(self->fd, "default_quota_bytes", buf, sizeof(buf)));
	EXPECT_STREQ("max", buf);
	/* The earlier helper keeps what it had. */
	r = call(p, OP_GET, 0, 0);
	expect_quota(r.q, 4 * SZ_1M, 4 * SZ_1M);
	ASSERT_EQ(0, proc_start(p2));
	ASSERT_EQ(0, call(p2, OP_OPEN, 0).err);
	r = call(p2, OP_GET, 0, 0);
	expect_quota(r.q, UNLIMITED, UNLIMITED);
	proc_stop(p);
	proc_stop(p2);
}

TEST_F(quota, quota_is_per_device)
{
	struct drm_vnpu_quota q;
	int fd_b = vnpu_open_nth(1);
	uint64_t def_b = 0;

	if (fd_b < 0)
		SKIP(return, "needs two vnpu devices");
	ASSERT_EQ(0, vnpu_sysfs_u64(fd_b, "default_quota_bytes", &def_b));
	vnpu_quota_set(self->fd, 0, SET_SOFT, SZ_64K, 0, NULL);
	vnpu_bo_create(self->fd, SZ_64K, 0, NULL, NULL);
	vnpu_err_bo_create(EDQUOT, self->fd, SZ_4K, 0);

	vnpu_quota_get(fd_b, 0, &q);
	expect_quota(q, def_b, def_b);
	EXPECT_EQ(0, q.used);
	if (def_b >= SZ_1M)
		vnpu_bo_create(fd_b, SZ_1M, 0, NULL, NULL);
	close(fd_b);
}

TEST_HARNESS_MAIN
