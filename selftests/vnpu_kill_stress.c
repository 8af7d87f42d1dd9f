// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: SIGKILL stress. Worker processes allocate buffers (VRAM,
 * mappable, host), write them through mappings, create queues and
 * syncobjs, submit jobs that wait on and signal them, and share buffers:
 * each exports dma-bufs into a common unix socket and imports what others
 * put there, on the same device or the other one, and submits work on the
 * imports. The test SIGKILLs a random worker every few tens of
 * milliseconds and starts a new one, for a fixed time. Then it kills the
 * rest, drops the buffers still in flight in the socket, and the devices'
 * VRAM, host range, buffer and syncobj counts must be back at their
 * baseline, and a job must still run.
 *
 * VNPU_KILL_SECONDS (default 15), VNPU_KILL_PROCS (default 6),
 * VNPU_KILL_SEED (default: time; printed).
 *
 * The targeted test destroy_races_the_scheduler aims at the window where a
 * queue is destroyed while its engine's scheduler is popping one of its
 * jobs and more are queued: a queue gets many tiny jobs held back by a
 * gate, each with many dependencies that its pop walks, and its process is SIGKILLed inside the destroy ioctl at a random
 * point of the drain after the gate opens (the drain's length is learnt as
 * the test goes, so the aim holds on a fast or a slow machine). Several
 * such processes, at several priorities, share the copy engine. The driver warns if a destroyed queue's
 * scheduler entity is still linked in a run queue (the kernel log gate
 * fails the run), and a freed entity left there oopses the next pick.
 * VNPU_RACE_SECONDS (default 10), VNPU_RACE_PROCS (default 3).
 */
#include <poll.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "vnpu_exec_utils.h"

#define MAX_PROCS 16
#define MAX_HELD 24

struct kill_stats {
	atomic_ullong ops, jobs, shared, imported;
};

static struct kill_stats *stats;

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Sends @fd over the unix socket @sock; drops it if the socket is full. */
static void send_fd(int sock, int fd)
{
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u = {};
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	sendmsg(sock, &msg, MSG_DONTWAIT);
}

static int recv_fd(int sock)
{
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

struct held {
	int dev;
	struct buf b;
	bool imported;
};

/* One worker: random work until killed (or, rarely, it exits by itself). */
static void worker(int ndev, int send_sock, int recv_sock, uint32_t seed)
{
	int fds[2] = { -1, -1 };
	uint32_t queues[2] = {}, syncs[2] = {};
	struct held held[MAX_HELD] = {};
	unsigned int nheld = 0;

	for (int d = 0; d < ndev; d++) {
		fds[d] = vnpu_open_nth(d);
		if (fds[d] < 0 || queue_create(fds[d], d % 2, DRM_VNPU_PRIORITY_NORMAL, &queues[d]))
			_exit(2);
		syncs[d] = syncobj_create(fds[d]);
	}
	for (;;) {
		uint32_t r = xorshift(&seed);
		int d = (int)(r % ndev), fd = fds[d];
		struct held *h = nheld ? &held[xorshift(&seed) % nheld] : NULL;

		atomic_fetch_add(&stats->ops, 1);
		switch ((r >> 8) % 10) {
		case 0: case 1: {
			static const uint32_t kinds[] = { 0, DRM_VNPU_BO_MAPPABLE, DRM_VNPU_BO_HOST };
			struct held n = { .dev = d };
			uint32_t flags = kinds[xorshift(&seed) % 3];

			if (nheld == MAX_HELD || buf_create(fd, 4096 * (1 + r % 64), flags, &n.b))
				break;
			if (n.b.map)
				vnpu_fill(n.b.map, n.b.size, r);
			held[nheld++] = n;
			break;
		}
		case 2:
			if (h) {
				/* Drop a buffer (the last user frees it). */
				if (h->b.map)
					munmap(h->b.map, h->b.size);
				_vnpu_gem_close(fds[h->dev], h->b.handle);
				*h = held[--nheld];
			}
			break;
		case 3:
			if (h && !h->imported) {
				int dmabuf = -1;

				if (!_vnpu_prime_export(fds[h->dev], h->b.handle, &dmabuf)) {
					send_fd(send_sock, dmabuf);
					close(dmabuf);
					atomic_fetch_add(&stats->shared, 1);
				}
			}
			break;
		case 4: {
			int dmabuf = recv_fd(recv_sock);
			struct held n = { .dev = d, .imported = true };
			struct drm_vnpu_bo_info info;

			if (dmabuf < 0)
				break;
			if (nheld < MAX_HELD && !_vnpu_prime_import(fd, dmabuf, &n.b.handle) &&
			    !_vnpu_bo_info(fd, n.b.handle, &info)) {
				n.b.addr = info.device_addr;
				n.b.size = info.size;
				held[nheld++] = n;
				atomic_fetch_add(&stats->imported, 1);
			}
			close(dmabuf);
			break;
		}
		case 5: case 6: case 7:
			if (h) {
				/* Work on a buffer: fill, then a delay; signals, waits on the last. */
				struct drm_vnpu_cmd c[2] = {
					cmd_fill(h->b.addr, h->b.size & ~3ULL, r),
					cmd_delay(100000 * (1 + r % 20)),
				};
				struct drm_vnpu_sync w = { .handle = syncs[h->dev] };

				if (!submit_cmds(fds[h->dev], queues[h->dev], c, 2, &w,
						 r & 1, syncs[h->dev]))
					atomic_fetch_add(&stats->jobs, 1);
			}
			break;
		case 8: {
			uint32_t s = syncobj_create(fd);
			struct drm_syncobj_destroy ds = { .handle = syncs[d] };

			/* Replace the syncobj; the old one may still be waited on by jobs. */
			if (s) {
				ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &ds);
				syncs[d] = s;
			}
			break;
		}
		default:
			if (r % 500 == 0)
				_exit(0);	/* Sometimes a worker just exits. */
			if (r % 7 == 0) {
				uint32_t q = 0;

				/* A new queue while jobs of the old one are in flight. */
				if (!queue_create(fd, r % 2, DRM_VNPU_PRIORITY_NORMAL, &q)) {
					queue_destroy(fd, queues[d]);
					queues[d] = q;
				}
			} else {
				syncobj_wait(fd, syncs[d], 5);
			}
			break;
		}
	}
}

struct state {
	struct vnpu_mem_state mem;
	uint64_t syncobjs;
};

static int read_state(int fd, struct state *s)
{
	memset(s, 0, sizeof(*s));
	return vnpu_mem_state(fd, &s->mem) ?: vnpu_sysfs_u64(fd, "syncobj_count", &s->syncobjs);
}

FIXTURE(kill) {
	int fd[2];
	int ndev;
	struct state base[2];
};

FIXTURE_SETUP(kill)
{
	self->fd[1] = -1;
	self->fd[0] = vnpu_open_nth(0);
	if (self->fd[0] < 0)
		SKIP(return, "no vnpu device");
	self->fd[1] = vnpu_open_nth(1);
	self->ndev = self->fd[1] >= 0 ? 2 : 1;
	for (int d = 0; d < self->ndev; d++) {
		vnpu_quota_unlimit(self->fd[d]);
		ASSERT_EQ(0, read_state(self->fd[d], &self->base[d]));
	}
	stats = mmap(NULL, sizeof(*stats), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	ASSERT_NE(MAP_FAILED, stats);
}

FIXTURE_TEARDOWN(kill)
{
	for (int d = 0; d < 2; d++)
		if (self->fd[d] >= 0)
			close(self->fd[d]);
}

TEST_F_TIMEOUT(kill, random_sigkills_leave_nothing, 3600)
{
	unsigned long seconds = vnpu_env_ul("VNPU_KILL_SECONDS", 15);
	unsigned int nprocs = vnpu_env_ul("VNPU_KILL_PROCS", 6);
	uint32_t seed = vnpu_env_ul("VNPU_KILL_SEED", (unsigned long)time(NULL)) | 1;
	uint64_t end = now_ns() + seconds * 1000000000ULL;
	unsigned int kills = 0, spawned = 0, exits = 0, bad_exits = 0;
	pid_t pids[MAX_PROCS];
	int sock[2], status;

	if (nprocs > MAX_PROCS)
		nprocs = MAX_PROCS;
	ksft_print_msg("VNPU_KILL_SEED=%u VNPU_KILL_SECONDS=%lu VNPU_KILL_PROCS=%u devices=%d\n",
		       seed, seconds, nprocs, self->ndev);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sock));

	for (unsigned int i = 0; i < nprocs; i++) {
		pids[i] = vnpu_fork();
		ASSERT_GE(pids[i], 0);
		if (!pids[i])
			worker(self->ndev, sock[0], sock[1], seed + 7919 * (i + 1));
	}
	spawned = nprocs;
	while (now_ns() < end) {
		unsigned int i = xorshift(&seed) % nprocs;
		pid_t done;

		usleep(10000 + xorshift(&seed) % 90000);
		/* Workers that exited by themselves are replaced too. */
		while ((done = waitpid(-1, &status, WNOHANG)) > 0) {
			for (unsigned int k = 0; k < nprocs; k++)
				if (pids[k] == done)
					pids[k] = 0;
			exits++;
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				bad_exits++;
		}
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
			kills++;
		}
		pids[i] = vnpu_fork();
		ASSERT_GE(pids[i], 0);
		if (!pids[i])
			worker(self->ndev, sock[0], sock[1], seed + 7919 * (spawned + 1));
		spawned++;
		for (unsigned int k = 0; k < nprocs; k++) {
			if (pids[k])
				continue;
			pids[k] = vnpu_fork();
			ASSERT_GE(pids[k], 0);
			if (!pids[k])
				worker(self->ndev, sock[0], sock[1], seed + 7919 * (spawned + 1));
			spawned++;
		}
	}
	for (unsigned int i = 0; i < nprocs; i++) {
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
			kills++;
		}
	}
	/* The buffers still travelling in the socket go with it. */
	close(sock[0]);
	close(sock[1]);

	ksft_print_msg("kill stress: %u processes, %llu operations (%llu jobs, %llu buffers shared, %llu imported), %u SIGKILLs, %u normal exits\n",
		       spawned, (unsigned long long)stats->ops, (unsigned long long)stats->jobs,
		       (unsigned long long)stats->shared, (unsigned long long)stats->imported,
		       kills, exits);
	EXPECT_EQ(0, bad_exits);
	EXPECT_GT(kills, 0);
	for (int d = 0; d < self->ndev; d++) {
		struct state now = {};

		for (int t = 0; t < 3000; t++) {
			ASSERT_EQ(0, read_state(self->fd[d], &now));
			if (!memcmp(&now, &self->base[d], sizeof(now)))
				break;
			usleep(10000);
		}
		EXPECT_EQ(self->base[d].mem.vram_used, now.mem.vram_used);
		EXPECT_EQ(self->base[d].mem.bo_count, now.mem.bo_count);
		EXPECT_EQ(self->base[d].mem.host_used, now.mem.host_used);
		EXPECT_EQ(self->base[d].syncobjs, now.syncobjs);
	}
	/* And the device still works. */
	{
		struct buf b = {};
		uint32_t q = 0, s = syncobj_create(self->fd[0]);
		struct drm_vnpu_cmd c;

		vnpu_sysfs_write(self->fd[0], "reset", "1");
		ASSERT_EQ(0, buf_create(self->fd[0], 4096, DRM_VNPU_BO_HOST, &b));
		ASSERT_EQ(0, queue_create(self->fd[0], 0, DRM_VNPU_PRIORITY_NORMAL, &q));
		c = cmd_fill(b.addr, 4096, 0x12345678);
		ASSERT_EQ(0, submit_cmds(self->fd[0], q, &c, 1, NULL, 0, s));
		ASSERT_EQ(0, syncobj_wait(self->fd[0], s, 10000));
		EXPECT_EQ(0x12345678, ((uint32_t *)b.map)[1023]);
		buf_destroy(self->fd[0], &b);
	}
}

#define RACE_JOBS 48

/*
 * One round of the race. A gate queue on the compute engine runs a
 * GATE_NS DELAY job; the raced queue, of @prio on the copy engine, gets
 * RACE_JOBS fills of four bytes (the shortest job there is), all waiting
 * for the gate through RACE_WAITS timeline syncobjs, so all of them wait in
 * the entity, and the scheduler's pop of each walks RACE_WAITS dependencies
 * (each syncobj's point is a fence of its own context): that walk is the
 * race's window, between picking the queue and putting it back. The
 * process sends the time the gate opens on @ready and destroys the raced
 * queue, which waits for the drain until the parent's SIGKILL cuts it
 * short.
 */
#define GATE_NS 20000000ULL
#define RACE_WAITS 64

static void race_child(int ready, uint32_t prio)
{
	struct drm_vnpu_cmd gate = cmd_delay(GATE_NS), tiny;
	struct drm_vnpu_sync waits[RACE_WAITS];
	int fd = vnpu_open_nth(0);
	uint32_t gq = 0, q = 0, gated;
	struct buf b = {};
	uint64_t opens;

	if (fd < 0 || queue_create(fd, DRM_VNPU_ENGINE_COMPUTE, DRM_VNPU_PRIORITY_NORMAL, &gq) ||
	    queue_create(fd, DRM_VNPU_ENGINE_COPY, prio, &q) ||
	    buf_create(fd, 4096, DRM_VNPU_BO_HOST, &b))
		_exit(2);
	tiny = cmd_fill(b.addr, 4, 0x5a5a5a5a);
	gated = syncobj_create(fd);
	opens = now_ns() + GATE_NS;
	if (!gated || submit_cmds(fd, gq, &gate, 1, NULL, 0, gated))
		_exit(3);
	for (int i = 0; i < RACE_WAITS; i++) {
		struct drm_syncobj_transfer t = { .src_handle = gated, .dst_point = 1 };

		waits[i] = (struct drm_vnpu_sync){ .handle = syncobj_create(fd), .point = 1 };
		t.dst_handle = waits[i].handle;
		if (!t.dst_handle || ioctl(fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &t))
			_exit(3);
	}
	for (int i = 0; i < RACE_JOBS; i++)
		if (submit_cmds(fd, q, &tiny, 1, waits, RACE_WAITS, 0))
			_exit(4);
	if (write(ready, &opens, sizeof(opens)) != sizeof(opens))
		_exit(5);
	queue_destroy(fd, q);
	/* The drain finished before the SIGKILL came: a normal end. */
	_exit(0);
}

TEST_F_TIMEOUT(kill, destroy_races_the_scheduler, 600)
{
	static const uint32_t prios[] = { DRM_VNPU_PRIORITY_LOW, DRM_VNPU_PRIORITY_NORMAL,
					  DRM_VNPU_PRIORITY_HIGH };
	unsigned long seconds = vnpu_env_ul("VNPU_RACE_SECONDS", 10);
	unsigned int nprocs = vnpu_env_ul("VNPU_RACE_PROCS", 3);
	uint32_t seed = vnpu_env_ul("VNPU_KILL_SEED", (unsigned long)time(NULL)) | 1;
	uint64_t end = now_ns() + seconds * 1000000000ULL;
	/*
	 * A slow kernel (KASAN, lockdep) fits few rounds in the time: go on
	 * for up to four times as long until a kill has landed in a drain.
	 */
	uint64_t end_unlanded = now_ns() + 4 * seconds * 1000000000ULL;
	/* How long a drain takes here, learnt from the ones that finished. */
	uint64_t drain_ns = 1000000;
	unsigned int rounds = 0, killed = 0, drained = 0, bad = 0;
	struct state now = {};

	if (nprocs < 1 || nprocs > MAX_PROCS)
		nprocs = 3;
	ksft_print_msg("VNPU_KILL_SEED=%u VNPU_RACE_SECONDS=%lu VNPU_RACE_PROCS=%u\n",
		       seed, seconds, nprocs);
	while (now_ns() < end || (!killed && now_ns() < end_unlanded)) {
		pid_t pids[MAX_PROCS];
		int ready[MAX_PROCS];

		for (unsigned int i = 0; i < nprocs; i++) {
			int p[2];

			ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
			pids[i] = vnpu_fork();
			ASSERT_GE(pids[i], 0);
			if (!pids[i])
				race_child(p[1], prios[(rounds + i) % 3]);
			close(p[1]);
			ready[i] = p[0];
		}
		for (unsigned int i = 0; i < nprocs; i++) {
			/* A child that failed early never reports: kill it anyway. */
			struct pollfd p = { .fd = ready[i], .events = POLLIN };
			uint64_t opens = 0, t0, until;
			int status;

			if (poll(&p, 1, 5000) == 1) {
				ASSERT_EQ(sizeof(opens), read(ready[i], &opens, sizeof(opens)));
			}
			close(ready[i]);
			/* Somewhere inside the drain, which the destroy waits for. */
			t0 = now_ns() > opens ? now_ns() : opens;
			until = t0 + xorshift(&seed) % (drain_ns + 1);
			while (now_ns() < until && !waitpid(pids[i], &status, WNOHANG))
				;
			kill(pids[i], SIGKILL);
			waitpid(pids[i], &status, 0);
			if (WIFSIGNALED(status)) {
				killed++;
			} else if (WIFEXITED(status) && !WEXITSTATUS(status)) {
				drained++;
				if (now_ns() > t0)
					drain_ns = (drain_ns + now_ns() - t0) / 2;
			} else {
				bad++;
			}
		}
		rounds++;
	}
	ksft_print_msg("scheduler race: %u rounds, %u processes killed inside the drain, %u drained first (drain about %llu us)\n",
		       rounds, killed, drained, (unsigned long long)drain_ns / 1000);
	EXPECT_EQ(0, bad);
	EXPECT_GT(killed, 0);
	for (int t = 0; t < 3000; t++) {
		ASSERT_EQ(0, read_state(self->fd[0], &now));
		if (!memcmp(&now, &self->base[0], sizeof(now)))
			break;
		usleep(10000);
	}
	EXPECT_EQ(0, memcmp(&now, &self->base[0], sizeof(now)));
	/* Every engine still runs jobs at every priority. */
	for (uint32_t class = 0; class < 2; class++) {
		for (unsigned int p = 0; p < 3; p++) {
			uint32_t q = 0, s = syncobj_create(self->fd[0]);
			struct drm_vnpu_cmd d = cmd_delay(1);

			ASSERT_EQ(0, queue_create(self->fd[0], class, prios[p], &q));
			ASSERT_EQ(0, submit_cmds(self->fd[0], q, &d, 1, NULL, 0, s));
			EXPECT_EQ(0, syncobj_wait(self->fd[0], s, 10000));
			EXPECT_EQ(0, queue_destroy(self->fd[0], q));
		}
	}
}

TEST_HARNESS_MAIN
