// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: buffer lifetime under stress. Create/mmap/PRIME-export
 * cycles whose references (handle, mapping, dma-buf) are dropped in random
 * order; processes killed while holding buffers; a dma-buf that outlives
 * its killed creator; threads and processes allocating concurrently. After
 * each, the device's accounting (VRAM_USED, sysfs bo_count and
 * host_used_bytes) must be back at its baseline exactly.
 *
 * VNPU_STRESS_ITERS (default 1000) sets the number of buffers cycled,
 * VNPU_STRESS_SEED the random seed (default: time; printed either way).
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "vnpu_utils.h"

#define SZ_4K (4ULL << 10)
#define SZ_64K (64ULL << 10)
#define SZ_1M (1ULL << 20)

/* Bytes of each buffer written and checked through its mapping. */
#define CHECK_BYTES (32u << 10)

/*
 * Helper processes die with the test process (vnpu_fork()), also after a
 * failed ASSERT, after which the harness runs no teardown in the test
 * process; the parent-side teardown below only reaps what is left.
 */
FIXTURE(stress) {
	int fd;
	pid_t owner;
	uint64_t vram_size;
	struct vnpu_mem_state base;
	pid_t children[4];
};

FIXTURE_SETUP(stress)
{
	self->owner = getpid();
	self->fd = vnpu_open_nth(0);
	if (self->fd < 0)
		SKIP(return, "no vnpu device");
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_SIZE, &self->vram_size);
	/* Helpers inherit the credentials, so they can lift theirs too. */
	if (vnpu_quota_room(self->fd) <= self->vram_size)
		SKIP(return, "VRAM quota not above the VRAM size; run as root");
	vnpu_get_mem_state(self->fd, &self->base);
}

FIXTURE_TEARDOWN_PARENT(stress)
{
	if (getpid() != self->owner)
		return;
	for (int i = 0; i < 4; i++) {
		if (self->children[i] > 0) {
			kill(self->children[i], SIGKILL);
			waitpid(self->children[i], NULL, 0);
		}
	}
	if (self->fd >= 0)
		close(self->fd);
}

static unsigned int stress_seed(struct __test_metadata *_metadata)
{
	unsigned int seed = vnpu_env_ul("VNPU_STRESS_SEED", (unsigned long)time(NULL));

	TH_LOG("VNPU_STRESS_SEED=%u", seed);
	return seed;
}

/* Waits for the device accounting to return to the fixture's baseline. */
#define expect_baseline() do {						\
	struct vnpu_mem_state __now;					\
	EXPECT_EQ(0, vnpu_wait_mem_state(self->fd, &self->base, &__now, 2000)) {	\
		TH_LOG("VRAM %llu bo_count %llu host %llu, baseline %llu %llu %llu", \
		       (unsigned long long)__now.vram_used,		\
		       (unsigned long long)__now.bo_count,		\
		       (unsigned long long)__now.host_used,		\
		       (unsigned long long)self->base.vram_used,	\
		       (unsigned long long)self->base.bo_count,		\
		       (unsigned long long)self->base.host_used);	\
	}								\
} while (0)

/* --- (a) random-order release ------------------------------------------- */

struct obj {
	uint32_t handle;	/* 0 once closed */
	uint32_t flags;
	void *map;		/* NULL once unmapped (or never mapped) */
	int dmabuf;		/* -1 once closed */
	bool ordered;		/* drop handle, then mapping, then dma-buf */
	uint64_t size;
	uint64_t addr;
	uint32_t seed;
};

static bool obj_live(const struct obj *o)
{
	return o->handle || o->map || o->dmabuf >= 0;
}

static size_t check_len(const struct obj *o)
{
	return o->size < CHECK_BYTES ? o->size : CHECK_BYTES;
}

TEST_F_TIMEOUT(stress, random_release_order, 240)
{
	enum { POOL = 8 };
	unsigned long iters = vnpu_env_ul("VNPU_STRESS_ITERS", 1000);
	unsigned int seed = stress_seed(_metadata);
	uint64_t live_vram = 0, live_host = 0, live_count = 0, used = 0;
	struct obj pool[POOL];
	unsigned long created = 0, reimports = 0;
	int npool = 0;

	while (created < iters || npool) {
		bool make = npool < POOL && created < iters &&
			    (npool == 0 || rand_r(&seed) % 3 == 0);
		struct obj *o;

		if (make) {
			static const uint32_t kinds[] = {
				DRM_VNPU_BO_MAPPABLE, DRM_VNPU_BO_HOST, 0,
			};
			struct drm_vnpu_bo_info info;

			o = &pool[npool++];
			memset(o, 0, sizeof(*o));
			/* The first of each kind drops its references in a fixed order. */
			o->ordered = created < 3;
			o->flags = kinds[o->ordered ? created : rand_r(&seed) % 3];
			o->seed = rand_r(&seed);
			vnpu_bo_create(self->fd, 1 + rand_r(&seed) % (300 << 10), o->flags,
				       &o->handle, &o->addr);
			vnpu_bo_info(self->fd, o->handle, &info);
			o->size = info.size;
			if (o->flags) {
				ASSERT_EQ(0, _vnpu_mmap(self->fd, info.mmap_offset, o->size,
							&o->map));
				vnpu_fill(o->map, check_len(o), o->seed);
			}
			vnpu_prime_export(self->fd, o->handle, &o->dmabuf);
			if (o->flags & DRM_VNPU_BO_HOST)
				live_host += o->size;
			else
				live_vram += o->size;
			live_count++;
			created++;
		} else {
			int idx = rand_r(&seed) % npool, step;

			o = &pool[idx];
			if (o->ordered)
				step = o->handle ? 0 : o->map ? 1 : 2;
			else
				step = rand_r(&seed) % 4;
			/* Pick the first remaining reference from a random start. */
			for (int tries = 0; tries < 4; tries++, step = (step + 1) % 4) {
				if (step == 0 && o->handle) {
					vnpu_gem_close(self->fd, o->handle);
					vnpu_err_bo_info(ENOENT, self->fd, o->handle);
					o->handle = 0;
					break;
				}
				if (step == 1 && o->map) {
					EXPECT_EQ(-1, vnpu_check(o->map, check_len(o), o->seed));
					ASSERT_EQ(0, munmap(o->map, o->size));
					o->map = NULL;
					break;
				}
				if (step == 2 && o->dmabuf >= 0) {
					ASSERT_EQ(0, close(o->dmabuf));
					o->dmabuf = -1;
					break;
				}
				if (step == 3 && !o->handle && o->dmabuf >= 0) {
					/* Back from the dma-buf: the same buffer. */
					struct drm_vnpu_bo_info info;

					vnpu_prime_import(self->fd, o->dmabuf, &o->handle);
					vnpu_bo_info(self->fd, o->handle, &info);
					EXPECT_EQ(o->addr, info.device_addr);
					EXPECT_EQ(o->size, info.size);
					reimports++;
					break;
				}
			}
			if (o->map)
				EXPECT_EQ(-1, vnpu_check(o->map, check_len(o), o->seed));
			if (!obj_live(o)) {
				if (o->flags & DRM_VNPU_BO_HOST)
					live_host -= o->size;
				else
					live_vram -= o->size;
				live_count--;
				*o = pool[--npool];
			}
		}
		/* Nothing is freed while any reference remains. */
		vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_USED, &used);
		ASSERT_GE(used, self->base.vram_used + live_vram) {
			TH_LOG("after %lu buffers: VRAM used %llu, live %llu", created,
			       (unsigned long long)used, (unsigned long long)live_vram);
		}
	}
	ASSERT_EQ(0, live_vram);
	ASSERT_EQ(0, live_host);
	ASSERT_EQ(0, live_count);
	TH_LOG("%lu buffers, %lu re-imports", created, reimports);
	expect_baseline();
}

/* --- (b) killed while holding buffers ---------------------------------------- */

/*
 * Child side: creates buffers of every kind on two files, maps some,
 * exports some, reports 0 (or -errno) on @ready and waits to be killed.
 * When @sock >= 0, also sends the dma-buf of a 1 MiB mappable VRAM buffer
 * filled with vnpu_fill(seed 0xfeed) over it.
 */
static void holder_main(int ready, int sock)
{
	int fds[2] = { vnpu_open_nth(0), vnpu_open_nth(0) }, err = 0;

	if (fds[0] < 0 || fds[1] < 0)
		err = -ENODEV;
	if (!err)
		vnpu_quota_unlimit(fds[0]);
	for (int i = 0; i < 24 && !err; i++) {
		static const uint32_t kinds[] = { 0, DRM_VNPU_BO_MAPPABLE, DRM_VNPU_BO_HOST };
		int fd = fds[i % 2], dmabuf;
		uint32_t flags = kinds[i % 3], h = 0;
		void *map = NULL;
		uint64_t size = 0;

		bool mapped = flags && i % 4 < 2, exported = i % 5 < 2;

		err = _vnpu_bo_create(fd, (i + 1) * 40000, flags, &h, NULL);
		if (!err && mapped) {
			err = _vnpu_bo_mmap(fd, h, &map, &size);
			if (!err)
				memset(map, i, size);
		}
		if (!err && exported)
			err = _vnpu_prime_export(fd, h, &dmabuf);
		/* Some only live on through their mapping or dma-buf. */
		if (!err && i % 3 == 0 && (mapped || exported))
			err = _vnpu_gem_close(fd, h);
	}
	if (!err && sock >= 0) {
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int))];
		} u = { 0 };
		char byte = 0;
		struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
		};
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		uint32_t h = 0;
		uint64_t size = 0;
		void *map = NULL;
		int dmabuf = -1;

		err = _vnpu_bo_create(fds[0], SZ_1M, DRM_VNPU_BO_MAPPABLE, &h, NULL);
		if (!err)
			err = _vnpu_bo_mmap(fds[0], h, &map, &size);
		if (!err) {
			vnpu_fill(map, size, 0xfeed);
			err = _vnpu_prime_export(fds[0], h, &dmabuf);
		}
		if (!err) {
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &dmabuf, sizeof(int));
			if (sendmsg(sock, &msg, 0) != 1)
				err = -errno;
		}
	}
	if (write(ready, &err, sizeof(err)) != sizeof(err))
		_exit(1);
	for (;;)
		pause();
}

static pid_t start_holder(struct __test_metadata *_metadata, int *ready_rd, int sock)
{
	int p[2];
	pid_t pid;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	pid = vnpu_fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		close(p[0]);
		holder_main(p[1], sock);
	}
	close(p[1]);
	*ready_rd = p[0];
	return pid;
}

static int recv_fd(int sock)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

TEST_F_TIMEOUT(stress, killed_holder_releases_everything, 60)
{
	struct vnpu_mem_state held;
	int ready, err = 1;

	for (int round = 0; round < 3; round++) {
		self->children[0] = start_holder(_metadata, &ready, -1);
		ASSERT_EQ(sizeof(err), read(ready, &err, sizeof(err)));
		close(ready);
		ASSERT_EQ(0, err);
		vnpu_get_mem_state(self->fd, &held);
		EXPECT_GT(held.vram_used, self->base.vram_used);
		EXPECT_GT(held.host_used, self->base.host_used);
		EXPECT_EQ(self->base.bo_count + 24, held.bo_count);

		ASSERT_EQ(0, kill(self->children[0], SIGKILL));
		ASSERT_EQ(self->children[0], waitpid(self->children[0], NULL, 0));
		self->children[0] = 0;
		expect_baseline();
	}
}

TEST_F_TIMEOUT(stress, dmabuf_outlives_killed_creator, 60)
{
	struct vnpu_mem_state want, now;
	struct drm_vnpu_bo_info info;
	struct drm_vnpu_quota q;
	int sv[2], ready, err = 1, dmabuf;
	uint32_t handle = 0;
	void *map = NULL;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	self->children[0] = start_holder(_metadata, &ready, sv[1]);
	close(sv[1]);
	ASSERT_EQ(sizeof(err), read(ready, &err, sizeof(err)));
	close(ready);
	ASSERT_EQ(0, err);
	dmabuf = recv_fd(sv[0]);
	close(sv[0]);
	ASSERT_GE(dmabuf, 0);

	ASSERT_EQ(0, kill(self->children[0], SIGKILL));
	ASSERT_EQ(self->children[0], waitpid(self->children[0], NULL, 0));
	self->children[0] = 0;

	/* Everything is gone but the buffer behind the dma-buf. */
	want = self->base;
	want.vram_used += SZ_1M;
	want.sysfs_vram_used += SZ_1M;
	want.bo_count += 1;
	EXPECT_EQ(0, vnpu_wait_mem_state(self->fd, &want, &now, 2000)) {
		TH_LOG("VRAM %llu bo_count %llu host %llu", (unsigned long long)now.vram_used,
		       (unsigned long long)now.bo_count, (unsigned long long)now.host_used);
	}

	vnpu_prime_import(self->fd, dmabuf, &handle);
	vnpu_bo_info(self->fd, handle, &info);
	EXPECT_EQ(SZ_1M, info.size);
	EXPECT_EQ(0, info.bo_flags & DRM_VNPU_BO_IMPORTED);
	ASSERT_EQ(0, _vnpu_mmap(self->fd, info.mmap_offset, info.size, &map));
	EXPECT_EQ(-1, vnpu_check(map, info.size, 0xfeed));
	/* Importing is not allocating: this process is not charged. */
	vnpu_quota_get(self->fd, 0, &q);
	EXPECT_EQ(0, q.used);

	close(dmabuf);
	vnpu_gem_close(self->fd, handle);
	EXPECT_EQ(-1, vnpu_check(map, info.size, 0xfeed));
	vnpu_get_mem_state(self->fd, &now);
	EXPECT_EQ(want.vram_used, now.vram_used);
	ASSERT_EQ(0, munmap(map, info.size));
	expect_baseline();
}

/* --- (c) concurrency ------------------------------------------------------------ */

struct worker {
	pthread_t thread;
	int fd;
	unsigned int seed;
	unsigned long iters;
	unsigned long failures;
	int first_err;
	unsigned long first_iter;
};

static void worker_fail(struct worker *w, int err, unsigned long i)
{
	if (!w->failures++) {
		w->first_err = err;
		w->first_iter = i;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (unsigned long i = 0; i < w->iters; i++) {
		static const uint32_t kinds[] = { 0, DRM_VNPU_BO_MAPPABLE, DRM_VNPU_BO_HOST };
		uint32_t flags = kinds[rand_r(&w->seed) % 3], h = 0, h2 = 0;
		uint64_t size = 0, len = 0;
		void *map = NULL;
		int err, dmabuf = -1;

		err = _vnpu_bo_create(w->fd, 1 + rand_r(&w->seed) % (128 << 10), flags, &h, NULL);
		if (err) {
			worker_fail(w, err, i);
			continue;
		}
		if (flags) {
			err = _vnpu_bo_mmap(w->fd, h, &map, &size);
			if (err) {
				worker_fail(w, err, i);
				map = NULL;
			} else {
				len = size < CHECK_BYTES ? size : CHECK_BYTES;
				vnpu_fill(map, len, (uint32_t)i);
			}
		}
		if (i % 3 == 0) {
			err = _vnpu_prime_export(w->fd, h, &dmabuf);
			if (!err)
				err = _vnpu_prime_import(w->fd, dmabuf, &h2);
			if (!err && h2 != h)
				err = -EBADSLT;
			if (err)
				worker_fail(w, err, i);
		}
		err = _vnpu_gem_close(w->fd, h);
		if (err)
			worker_fail(w, err, i);
		if (map) {
			if (vnpu_check(map, len, (uint32_t)i) != -1)
				worker_fail(w, -EIO, i);
			munmap(map, size);
		}
		if (dmabuf >= 0)
			close(dmabuf);
	}
	return NULL;
}

TEST_F_TIMEOUT(stress, concurrent_threads, 120)
{
	enum { THREADS = 4 };
	unsigned long iters = vnpu_env_ul("VNPU_STRESS_ITERS", 1000) / THREADS;
	unsigned int seed = stress_seed(_metadata);
	struct worker w[THREADS];

	for (int i = 0; i < THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		/* Two threads share the fixture's file, two have their own. */
		w[i].fd = i < 2 ? self->fd : vnpu_open_nth(0);
		ASSERT_GE(w[i].fd, 0);
		w[i].seed = seed + i;
		w[i].iters = iters ? iters : 1;
	}
	for (int i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_create(&w[i].thread, NULL, worker_main, &w[i]));
	for (int i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(0, w[i].failures) {
			TH_LOG("thread %d: %lu failures, first %d at iteration %lu", i,
			       w[i].failures, w[i].first_err, w[i].first_iter);
		}
		if (i >= 2)
			close(w[i].fd);
	}
	expect_baseline();
}

/*
 * Processes race to fill the VRAM with equal buffers. Each reports how
 * many it got and its own quota usage; together they never exceed the VRAM
 * and every process sees exactly its own buffers.
 */
TEST_F_TIMEOUT(stress, concurrent_processes_fill_vram, 120)
{
	enum { PROCS = 3 };
	uint64_t chunk = SZ_64K, total = 0, used = 0;
	int pipes[PROCS][2], go[2];

	if (self->base.vram_used)
		SKIP(return, "VRAM is in use by someone else");
	while (chunk * 2 <= self->vram_size / 128)
		chunk *= 2;
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	for (int i = 0; i < PROCS; i++) {
		ASSERT_EQ(0, pipe2(pipes[i], O_CLOEXEC));
		/* Only the parent may write self: the fixture is shared memory. */
		pid_t pid = vnpu_fork();

		ASSERT_GE(pid, 0);
		if (!pid) {
			/* count, error, quota used, quota bo_count */
			int64_t rep[4] = { 0, 0, -1, -1 };
			int fd = vnpu_open_nth(0);
			struct drm_vnpu_quota q;
			char c;

			close(go[1]);
			if (fd >= 0)
				vnpu_quota_unlimit(fd);
			if (fd < 0)
				rep[1] = -ENODEV;
			else if (read(go[0], &c, 1) != 0)
				rep[1] = -EPROTO;
			while (!rep[1]) {
				uint32_t h, flags = i == 1 ? DRM_VNPU_BO_MAPPABLE : 0;

				rep[1] = _vnpu_bo_create(fd, chunk, flags, &h, NULL);
				if (!rep[1])
					rep[0]++;
			}
			if (!_vnpu_quota_get(fd, 0, &q)) {
				rep[2] = q.used;
				rep[3] = q.bo_count;
			}
			if (write(pipes[i][1], rep, sizeof(rep)) != sizeof(rep))
				_exit(1);
			for (;;)
				pause();
		}
		self->children[i] = pid;
		close(pipes[i][1]);
	}
	/* Closing the write end starts them all at once. */
	close(go[0]);
	close(go[1]);
	for (int i = 0; i < PROCS; i++) {
		int64_t rep[4];

		ASSERT_EQ(sizeof(rep), read(pipes[i][0], rep, sizeof(rep)));
		close(pipes[i][0]);
		EXPECT_EQ(-ENOSPC, rep[1]) {
			TH_LOG("process %d stopped with %lld", i, (long long)rep[1]);
		}
		EXPECT_EQ(rep[0] * (int64_t)chunk, rep[2]);
		EXPECT_EQ(rep[0], rep[3]);
		total += rep[0] * chunk;
	}
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_USED, &used);
	EXPECT_EQ(self->vram_size / chunk * chunk, total);
	EXPECT_EQ(total, used);
	for (int i = 0; i < PROCS; i++) {
		kill(self->children[i], SIGKILL);
		waitpid(self->children[i], NULL, 0);
		self->children[i] = 0;
	}
	expect_baseline();
}

TEST_HARNESS_MAIN
