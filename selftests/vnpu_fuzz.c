// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: ioctl fuzzer. Threads of this process and two forked
 * processes (one exits normally, one is SIGKILLed at a random moment) run
 * random and structured sequences over every vnpu ioctl and the generic
 * DRM ioctls the driver serves (VERSION, GET_CAP, SET_CLIENT_CAP, GEM
 * close, PRIME handle <-> fd, every syncobj ioctl including timelines and
 * SYNCOBJ_EVENTFD), with handles and addresses taken from what the device
 * returned (buffer starts and ends, one byte or page past them), non-zero
 * reserved fields, bad pointers, struct sizes around the real one, mmap
 * offsets and lengths at the edges, the device file closed, reopened or
 * dup2()ed over while other threads use it, device resets, and failures
 * injected through debugfs fail_nth into whichever step comes next.
 *
 * What must hold: the kernel stays up and its log clean (the VM runner
 * checks), unknown driver ioctl numbers fail with ENOTTY, a buffer created
 * lies in its region, a private file's data is what its jobs wrote (no
 * other file reaches it), and once every file is closed the device's
 * VRAM, host range, buffer and syncobj counts are back at their baseline
 * and a job still runs correctly.
 *
 * Environment: VNPU_FUZZ_SECONDS (default 20) bounds the run;
 * VNPU_FUZZ_SEED (default: time) seeds it and is printed; VNPU_FUZZ_THREADS
 * (default 4). Each thread and process draws from its own generator seeded
 * from VNPU_FUZZ_SEED, so a run with VNPU_FUZZ_THREADS=1
 * VNPU_FUZZ_PROCS=0 replays exactly; with more, the interleaving varies.
 * At the end it prints the ioctls executed and the distinct
 * (ioctl, result) paths seen.
 */
#include <linux/sync_file.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "vnpu_exec_utils.h"

/* Since Linux 6.6; older libdrm headers lack it. */
#ifndef DRM_IOCTL_SYNCOBJ_EVENTFD
struct drm_syncobj_eventfd {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__s32 fd;
	__u32 pad;
};

#define DRM_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct drm_syncobj_eventfd)
#endif

/* The device file slots all threads share: fixed numbers, dup2()ed over. */
#define SLOT_BASE 900
#define SLOTS 4
#define MAX_BOS 48
#define MAX_SYNCOBJS 32
#define MAX_QUEUES 8
#define MAX_ERRNO_SEEN 256

enum op {
	OP_VERSION, OP_GET_CAP, OP_SET_CLIENT_CAP, OP_GET_PARAM, OP_BO_CREATE,
	OP_BO_INFO, OP_GEM_CLOSE, OP_MMAP, OP_QUOTA_GET, OP_QUOTA_SET,
	OP_QUEUE_CREATE, OP_QUEUE_DESTROY, OP_QUEUE_INFO, OP_SUBMIT,
	OP_SYNCOBJ_CREATE, OP_SYNCOBJ_DESTROY, OP_SYNCOBJ_WAIT,
	OP_SYNCOBJ_TIMELINE_WAIT, OP_SYNCOBJ_SIGNAL, OP_SYNCOBJ_TIMELINE_SIGNAL,
	OP_SYNCOBJ_RESET, OP_SYNCOBJ_QUERY, OP_SYNCOBJ_TRANSFER,
	OP_SYNCOBJ_HANDLE_TO_FD, OP_SYNCOBJ_FD_TO_HANDLE, OP_SYNCOBJ_EVENTFD,
	OP_PRIME_HANDLE_TO_FD, OP_PRIME_FD_TO_HANDLE, OP_RAW_DRIVER, OP_RAW_SIZE,
	OP_FD_CLOSE, OP_FD_REOPEN, OP_FD_DUP, OP_POLL_FDINFO, OP_SCENARIO,
	OP_RESET, OP_INJECT, OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
	"VERSION", "GET_CAP", "SET_CLIENT_CAP", "GET_PARAM", "BO_CREATE", "BO_INFO",
	"GEM_CLOSE", "mmap", "QUOTA_GET", "QUOTA_SET", "QUEUE_CREATE",
	"QUEUE_DESTROY", "QUEUE_INFO", "SUBMIT", "SYNCOBJ_CREATE",
	"SYNCOBJ_DESTROY", "SYNCOBJ_WAIT", "SYNCOBJ_TIMELINE_WAIT",
	"SYNCOBJ_SIGNAL", "SYNCOBJ_TIMELINE_SIGNAL", "SYNCOBJ_RESET",
	"SYNCOBJ_QUERY", "SYNCOBJ_TRANSFER", "SYNCOBJ_HANDLE_TO_FD",
	"SYNCOBJ_FD_TO_HANDLE", "SYNCOBJ_EVENTFD", "PRIME_HANDLE_TO_FD",
	"PRIME_FD_TO_HANDLE", "raw driver nr", "raw struct size", "close",
	"reopen", "dup2", "poll+fdinfo", "scenario", "sysfs reset", "fail_nth",
};

/* Shared with the forked processes (MAP_SHARED). */
struct fuzz_stats {
	atomic_ullong ioctls;
	atomic_uchar seen[OP_COUNT][MAX_ERRNO_SEEN];
	atomic_uint violations;
	char first_violation[256];
	atomic_flag violation_logged;
};

static struct fuzz_stats *stats;
static uint64_t vram_size, host_size;
static int dev_index;
static atomic_bool stop;

struct fbo {
	int slot;
	uint32_t handle;
	uint64_t addr, size;
	uint32_t flags;
};

struct worker {
	uint64_t rng;
	struct fbo bos[MAX_BOS];
	unsigned int nbos;
	uint32_t syncobjs[SLOTS][MAX_SYNCOBJS];
	uint32_t queues[SLOTS][MAX_QUEUES];
	unsigned int thread;
};

static uint64_t rnd(struct worker *w)
{
	/* splitmix64: small, seedable, good enough for choices. */
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct worker *w, uint64_t n)
{
	return n ? rnd(w) % n : 0;
}

static bool chance(struct worker *w, unsigned int percent)
{
	return below(w, 100) < percent;
}

static void violation(const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&stats->violations, 1);
	if (atomic_flag_test_and_set(&stats->violation_logged))
		return;
	va_start(ap, fmt);
	vsnprintf(stats->first_violation, sizeof(stats->first_violation), fmt, ap);
	va_end(ap);
}

/* Runs one ioctl and records its (op, result) path; returns 0 or errno. */
static int fz_ioctl(enum op op, int fd, unsigned long cmd, void *arg)
{
	int ret = ioctl(fd, cmd, arg) ? errno : 0;

	atomic_fetch_add(&stats->ioctls, 1);
	atomic_store(&stats->seen[op][ret < MAX_ERRNO_SEEN ? ret : MAX_ERRNO_SEEN - 1], 1);
	return ret;
}

static void record(enum op op, int err)
{
	atomic_store(&stats->seen[op][err < MAX_ERRNO_SEEN ? err : MAX_ERRNO_SEEN - 1], 1);
}

static int slot_fd(struct worker *w)
{
	return SLOT_BASE + (int)below(w, SLOTS);
}

/* A 32-bit value that is often interesting: 0, small, max, a bit, random. */
static uint32_t r32(struct worker *w)
{
	switch (below(w, 6)) {
	case 0: return 0;
	case 1: return (uint32_t)below(w, 16);
	case 2: return ~0u;
	case 3: return 1u << below(w, 32);
	case 4: return 0x80000000u;
	default: return (uint32_t)rnd(w);
	}
}

/* A field that is reserved (must be zero): mostly zero, sometimes not. */
static uint32_t reserved32(struct worker *w)
{
	return chance(w, 90) ? 0 : r32(w) | 1;
}

/*
 * An fd number no file of the process has. Guessing the process's own fds
 * would let a thread import another thread's private buffer, which is
 * allowed (same process) and would spoil the private data check.
 */
static int bad_fd(struct worker *w)
{
	return chance(w, 50) ? -1 - (int)below(w, 4) : 0x100000 + (int)below(w, 1 << 20);
}

static uint64_t r64(struct worker *w)
{
	switch (below(w, 6)) {
	case 0: return 0;
	case 1: return below(w, 1 << 20);
	case 2: return ~0ULL;
	case 3: return 1ULL << below(w, 64);
	case 4: return ~0ULL - below(w, 4096);
	default: return rnd(w);
	}
}

static struct fbo *pick_bo(struct worker *w)
{
	return w->nbos ? &w->bos[below(w, w->nbos)] : NULL;
}

/* A handle: a known buffer's, a guess, or nonsense. */
static uint32_t pick_handle(struct worker *w)
{
	struct fbo *b = pick_bo(w);

	if (b && chance(w, 75))
		return b->handle;
	return chance(w, 50) ? (uint32_t)below(w, 64) : r32(w);
}

/* A device address near the edges of a known buffer, or anywhere. */
static uint64_t pick_addr(struct worker *w, uint64_t *size_hint)
{
	struct fbo *b = pick_bo(w);
	uint64_t a;

	*size_hint = below(w, 3) ? 4096 : r64(w);
	if (!b || chance(w, 15)) {
		switch (below(w, 4)) {
		case 0: return DRM_VNPU_VRAM_BASE + below(w, vram_size + 8192);
		case 1: return DRM_VNPU_HOST_BASE + below(w, host_size + 8192);
		case 2: return DRM_VNPU_VRAM_BASE - 4 * below(w, 4);
		default: return r64(w);
		}
	}
	switch (below(w, 7)) {
	case 0: a = b->addr; *size_hint = b->size; break;
	case 1: a = b->addr; *size_hint = b->size + 4; break;
	case 2: a = b->addr + b->size - 8; *size_hint = 8; break;
	case 3: a = b->addr + b->size; *size_hint = 4; break;
	case 4: a = b->addr - 8; *size_hint = 16; break;
	case 5: a = b->addr + 4 * below(w, b->size / 4 + 1); *size_hint = 4 * below(w, 64); break;
	default: a = b->addr + b->size - 4096 + 4 * below(w, 1024); break;
	}
	return a;
}

static uint32_t pick_syncobj(struct worker *w, int fd)
{
	unsigned int s = (unsigned int)(fd - SLOT_BASE) % SLOTS;
	uint32_t h = w->syncobjs[s][below(w, MAX_SYNCOBJS)];

	return h && chance(w, 85) ? h : (uint32_t)below(w, 40);
}

static uint32_t pick_queue(struct worker *w, int fd)
{
	unsigned int s = (unsigned int)(fd - SLOT_BASE) % SLOTS;
	uint32_t q = w->queues[s][below(w, MAX_QUEUES)];

	return q && chance(w, 85) ? q : r32(w);
}

static void remember_bo(struct worker *w, int fd, uint32_t handle, uint64_t addr,
			uint64_t size, uint32_t flags)
{
	struct fbo *b = w->nbos < MAX_BOS ? &w->bos[w->nbos++] : &w->bos[below(w, MAX_BOS)];

	if (b->handle && w->nbos == MAX_BOS && chance(w, 80)) {
		/* Full: give the old one back most of the time. */
		struct drm_gem_close c = { .handle = b->handle };

		fz_ioctl(OP_GEM_CLOSE, SLOT_BASE + b->slot, DRM_IOCTL_GEM_CLOSE, &c);
	}
	*b = (struct fbo){ .slot = fd - SLOT_BASE, .handle = handle, .addr = addr,
			   .size = size, .flags = flags };
}

static uint64_t pick_size(struct worker *w)
{
	static const uint64_t edges[] = { 0, 1, 4095, 4096, 4097, 65535, 65536, 65537,
					  1 << 20 };

	switch (below(w, 5)) {
	case 0: return edges[below(w, sizeof(edges) / sizeof(edges[0]))];
	case 1: return chance(w, 50) ? vram_size + below(w, 2) : host_size + below(w, 2);
	case 2: return r64(w);
	default: return 1 + below(w, 256 << 10);
	}
}

static void op_bo_create(struct worker *w, int fd)
{
	static const uint32_t flag_sets[] = { 0, DRM_VNPU_BO_HOST, DRM_VNPU_BO_MAPPABLE,
					      DRM_VNPU_BO_HOST | DRM_VNPU_BO_MAPPABLE };
	struct drm_vnpu_bo_create c = {
		.size = pick_size(w),
		.flags = chance(w, 90) ? flag_sets[below(w, 4)] : r32(w),
		.handle = reserved32(w),
		.device_addr = chance(w, 95) ? 0 : r64(w),
	};
	uint32_t flags = c.flags;

	/* Keep pinned host memory bounded: the region sizes are the limits. */
	if (c.size > (64ULL << 20) && c.size <= host_size && chance(w, 80))
		c.size = 4096;
	if (fz_ioctl(OP_BO_CREATE, fd, DRM_IOCTL_VNPU_BO_CREATE, &c))
		return;
	{
		bool host = flags & DRM_VNPU_BO_HOST;
		uint64_t base = host ? DRM_VNPU_HOST_BASE : DRM_VNPU_VRAM_BASE;
		uint64_t lim = host ? host_size : vram_size;

		if (!c.handle || c.device_addr < base || c.device_addr % 4096 ||
		    c.device_addr - base + vnpu_round_up(c.size, 4096) > lim)
			violation("BO_CREATE size %llu flags %#x gave handle %u addr %#llx",
				  (unsigned long long)c.size, flags, c.handle,
				  (unsigned long long)c.device_addr);
	}
	remember_bo(w, fd, c.handle, c.device_addr, vnpu_round_up(c.size, 4096), flags);
}

static void op_mmap(struct worker *w, int fd)
{
	struct drm_vnpu_bo_info i = { .handle = pick_handle(w) };
	uint64_t len, off;
	void *p;
	int err;

	if (fz_ioctl(OP_BO_INFO, fd, DRM_IOCTL_VNPU_BO_INFO, &i))
		return;
	switch (below(w, 5)) {
	case 0: len = i.size + 4096; off = i.mmap_offset; break;
	case 1: len = 4096; off = i.mmap_offset + i.size - 4096; break;
	case 2: len = 4096; off = i.mmap_offset + i.size; break;
	case 3: len = 4096; off = i.mmap_offset - 4096; break;
	default: len = i.size; off = i.mmap_offset; break;
	}
	p = mmap(NULL, len, chance(w, 80) ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
		 fd, (off_t)off);
	err = p == MAP_FAILED ? errno : 0;
	atomic_fetch_add(&stats->ioctls, 1);
	record(OP_MMAP, err);
	if (err)
		return;
	/* Touch both ends; a fault here would be a SIGBUS/SIGSEGV: a bug. */
	(void)*(volatile uint8_t *)p;
	(void)*((volatile uint8_t *)p + len - 1);
	munmap(p, len);
}

static void op_submit(struct worker *w, int fd)
{
	struct drm_vnpu_cmd cmds[4] = {};
	struct drm_vnpu_sync waits[3] = {};
	struct drm_vnpu_submit s = {};
	unsigned int n = 1 + (unsigned int)below(w, 4), i;
	uint64_t hint;

	for (i = 0; i < n; i++) {
		struct drm_vnpu_cmd *c = &cmds[i];

		c->opcode = chance(w, 90) ? 1 + (uint32_t)below(w, 7) : r32(w);
		c->dst = pick_addr(w, &hint);
		c->size = hint;
		switch (c->opcode) {
		case DRM_VNPU_CMD_COPY:
			c->src = pick_addr(w, &hint);
			c->size = below(w, 2) ? hint : c->size;
			break;
		case DRM_VNPU_CMD_FILL:
			c->pattern = (uint32_t)rnd(w);
			c->dst &= chance(w, 80) ? ~3ULL : ~0ULL;
			c->size &= chance(w, 80) ? ~3ULL : ~0ULL;
			break;
		case DRM_VNPU_CMD_TIMESTAMP:
			c->size = 0;
			c->dst &= chance(w, 80) ? ~7ULL : ~0ULL;
			break;
		case DRM_VNPU_CMD_DELAY:
			c->dst = 0;
			c->size = chance(w, 95) ? below(w, 2000000) : 1ULL << below(w, 40);
			break;
		case DRM_VNPU_CMD_KERNEL:
			c->src = c->dst & ~7ULL;
			c->dst = 0;
			c->size = chance(w, 80) ? sizeof(struct drm_vnpu_kernel_args) : r64(w);
			break;
		case DRM_VNPU_CMD_HANG:
			c->dst = c->size = 0;
			break;
		case DRM_VNPU_CMD_FAULT:
			c->dst = c->size = 0;
			c->pattern = chance(w, 80) ? 1 + (uint32_t)below(w, 4095) : r32(w);
			break;
		}
		if (chance(w, 5))
			c->pattern = r32(w);
	}
	s.queue_id = pick_queue(w, fd);
	s.flags = reserved32(w);
	s.cmd_count = chance(w, 95) ? n : r32(w);
	s.cmds = chance(w, 97) ? (uintptr_t)cmds : (chance(w, 50) ? 0 : 4096);
	s.wait_count = (uint32_t)below(w, 4);
	for (i = 0; i < 3; i++) {
		waits[i].handle = pick_syncobj(w, fd);
		waits[i].point = chance(w, 60) ? 0 : below(w, 8);
		waits[i].flags = reserved32(w);
	}
	s.waits = chance(w, 97) ? (uintptr_t)waits : 8;
	if (chance(w, 70)) {
		s.signal.handle = pick_syncobj(w, fd);
		s.signal.point = chance(w, 60) ? 0 : 1 + below(w, 8);
	}
	s.signal.flags = reserved32(w);
	s.pad = chance(w, 97) ? 0 : 1;
	fz_ioctl(OP_SUBMIT, fd, DRM_IOCTL_VNPU_SUBMIT, &s);
}

static void op_queue(struct worker *w, int fd, enum op op)
{
	unsigned int s = (unsigned int)(fd - SLOT_BASE) % SLOTS;

	if (op == OP_QUEUE_CREATE) {
		struct drm_vnpu_queue_create q = {
			.engine_class = chance(w, 90) ? (uint32_t)below(w, 2) : r32(w),
			.priority = chance(w, 90) ? (uint32_t)below(w, 4) : r32(w),
			.flags = reserved32(w), .queue_id = reserved32(w),
			.timeout_ms = chance(w, 80) ? 0 : 50 + (uint32_t)below(w, 5000),
			.pad = reserved32(w),
		};

		if (!fz_ioctl(op, fd, DRM_IOCTL_VNPU_QUEUE_CREATE, &q)) {
			unsigned int k = (unsigned int)below(w, MAX_QUEUES);
			uint32_t old = w->queues[s][k];

			if (old) {
				struct drm_vnpu_queue_destroy d = { .queue_id = old };

				fz_ioctl(OP_QUEUE_DESTROY, fd, DRM_IOCTL_VNPU_QUEUE_DESTROY, &d);
			}
			w->queues[s][k] = q.queue_id;
		}
	} else if (op == OP_QUEUE_DESTROY) {
		struct drm_vnpu_queue_destroy d = { .queue_id = pick_queue(w, fd),
						    .flags = reserved32(w) };

		fz_ioctl(op, fd, DRM_IOCTL_VNPU_QUEUE_DESTROY, &d);
	} else {
		struct drm_vnpu_queue_info i = {
			.queue_id = pick_queue(w, fd),
			.flags = chance(w, 70) ? 0 : (chance(w, 80) ? 1 : r32(w)),
			.pad = reserved32(w),
		};

		if (i.flags)
			i.timeout_ms = chance(w, 80) ? 100 + (uint32_t)below(w, 5000) : r32(w);
		fz_ioctl(op, fd, DRM_IOCTL_VNPU_QUEUE_INFO, &i);
	}
}

static void op_syncobj(struct worker *w, int fd, enum op op)
{
	unsigned int s = (unsigned int)(fd - SLOT_BASE) % SLOTS;
	uint32_t handles[3] = { pick_syncobj(w, fd), pick_syncobj(w, fd), pick_syncobj(w, fd) };
	uint64_t points[3] = { below(w, 6), below(w, 6), below(w, 6) };
	/*
	 * Counts stay below 2^20: above that, 6.12's DRM core asks the page
	 * allocator for a too-large temporary array, which warns (a core
	 * issue, not vnpu's; Documentation/reliability.rst).
	 */
	uint32_t count = chance(w, 90) ? 1 + (uint32_t)below(w, 3) : (uint32_t)below(w, 1 << 16);
	uint64_t deadline = now_ns() + below(w, 3) * 1000000ULL;

	switch (op) {
	case OP_SYNCOBJ_CREATE: {
		struct drm_syncobj_create c = {
			.flags = chance(w, 85) ? (uint32_t)below(w, 2) : r32(w),
			.handle = reserved32(w),
		};

		if (!fz_ioctl(op, fd, DRM_IOCTL_SYNCOBJ_CREATE, &c)) {
			unsigned int k = (unsigned int)below(w, MAX_SYNCOBJS);
			struct drm_syncobj_destroy d = { .handle = w->syncobjs[s][k] };

			if (d.handle)
				fz_ioctl(OP_SYNCOBJ_DESTROY, fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
			w->syncobjs[s][k] = c.handle;
		}
		break;
	}
	case OP_SYNCOBJ_DESTROY: {
		struct drm_syncobj_destroy d = { .handle = handles[0], .pad = reserved32(w) };

		fz_ioctl(op, fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
		break;
	}
	case OP_SYNCOBJ_WAIT: {
		struct drm_syncobj_wait wt = {
			.handles = chance(w, 97) ? (uintptr_t)handles : 16,
			.timeout_nsec = chance(w, 50) ? 0 : (int64_t)deadline,
			.count_handles = count,
			.flags = chance(w, 90) ? (uint32_t)below(w, 8) : r32(w),
			.pad = reserved32(w),
		};

		fz_ioctl(op, fd, DRM_IOCTL_SYNCOBJ_WAIT, &wt);
		break;
	}
	case OP_SYNCOBJ_TIMELINE_WAIT: {
		struct drm_syncobj_timeline_wait wt = {
			.handles = (uintptr_t)handles,
			.points = chance(w, 97) ? (uintptr_t)points : 24,
			.timeout_nsec = chance(w, 50) ? 0 : (int64_t)deadline,
			.count_handles = count,
			.flags = chance(w, 90) ? (uint32_t)below(w, 16) : r32(w),
			.pad = reserved32(w),
		};

		fz_ioctl(op, fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &wt);
		break;
	}
	case OP_SYNCOBJ_SIGNAL:
	case OP_SYNCOBJ_RESET: {
		struct drm_syncobj_array a = { .handles = (uintptr_t)handles,
					       .count_handles = count, .pad = reserved32(w) };

		fz_ioctl(op, fd, op == OP_SYNCOBJ_SIGNAL ? DRM_IOCTL_SYNCOBJ_SIGNAL :
			 DRM_IOCTL_SYNCOBJ_RESET, &a);
		break;
	}
	case OP_SYNCOBJ_TIMELINE_SIGNAL:
	case OP_SYNCOBJ_QUERY: {
		struct drm_syncobj_timeline_array a = {
			.handles = (uintptr_t)handles, .points = (uintptr_t)points,
			.count_handles = count,
			.flags = chance(w, 90) ? (uint32_t)below(w, 2) : r32(w),
		};

		if (op == OP_SYNCOBJ_TIMELINE_SIGNAL)
			for (int i = 0; i < 3; i++)
				points[i] += 1 + below(w, 4);
		fz_ioctl(op, fd, op == OP_SYNCOBJ_QUERY ? DRM_IOCTL_SYNCOBJ_QUERY :
			 DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a);
		break;
	}
	case OP_SYNCOBJ_TRANSFER: {
		struct drm_syncobj_transfer t = {
			.src_handle = handles[0], .dst_handle = handles[1],
			.src_point = points[0], .dst_point = points[1] + 1,
			.flags = chance(w, 90) ? (uint32_t)below(w, 2) : r32(w),
			.pad = reserved32(w),
		};

		fz_ioctl(op, fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &t);
		break;
	}
	case OP_SYNCOBJ_HANDLE_TO_FD:
	case OP_SYNCOBJ_FD_TO_HANDLE: {
		struct drm_syncobj_handle h = {
			.handle = handles[0],
			.flags = chance(w, 50) ? 0 : DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
			.pad = reserved32(w),
			.fd = -1,
		};

		if (fz_ioctl(OP_SYNCOBJ_HANDLE_TO_FD, fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h))
			break;
		if (h.flags) {
			struct sync_file_info info = {};

			ioctl(h.fd, SYNC_IOC_FILE_INFO, &info);
		}
		{
			int other = slot_fd(w);
			struct drm_syncobj_handle in = {
				.fd = h.fd,
				.flags = h.flags ? DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE : 0,
				.handle = h.flags ? pick_syncobj(w, other) : 0,
			};

			if (!fz_ioctl(OP_SYNCOBJ_FD_TO_HANDLE, other,
				      DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &in) && !h.flags) {
				struct drm_syncobj_destroy d = { .handle = in.handle };

				fz_ioctl(OP_SYNCOBJ_DESTROY, other, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
			}
		}
		close(h.fd);
		break;
	}
	case OP_SYNCOBJ_EVENTFD: {
		int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		struct drm_syncobj_eventfd e = {
			.handle = handles[0],
			.flags = chance(w, 90) ? (uint32_t)below(w, 2) : r32(w),
			.point = points[0],
			.fd = chance(w, 95) ? efd : bad_fd(w),
			.pad = reserved32(w),
		};

		if (efd < 0)
			break;
		fz_ioctl(op, fd, DRM_IOCTL_SYNCOBJ_EVENTFD, &e);
		close(efd);
		break;
	}
	default:
		break;
	}
}

static void op_prime(struct worker *w, int fd)
{
	struct drm_prime_handle h = {
		.handle = pick_handle(w),
		.flags = chance(w, 90) ? DRM_CLOEXEC | (chance(w, 50) ? DRM_RDWR : 0) : r32(w),
		.fd = -1,
	};
	int other = slot_fd(w), efd;

	if (!fz_ioctl(OP_PRIME_HANDLE_TO_FD, fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &h)) {
		struct drm_prime_handle in = { .fd = h.fd, .flags = reserved32(w) };

		/* Same file, another file of the device: the same or a new handle. */
		if (!fz_ioctl(OP_PRIME_FD_TO_HANDLE, other, DRM_IOCTL_PRIME_FD_TO_HANDLE, &in) &&
		    other != fd && chance(w, 50)) {
			struct drm_gem_close c = { .handle = in.handle };

			fz_ioctl(OP_GEM_CLOSE, other, DRM_IOCTL_GEM_CLOSE, &c);
		}
		if (chance(w, 30)) {
			/* The dma-buf itself: map it, then drop it. */
			void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, h.fd, 0);

			if (p != MAP_FAILED) {
				(void)*(volatile uint8_t *)p;
				munmap(p, 4096);
			}
		}
		close(h.fd);
		return;
	}
	/* Import of something that is not a vnpu dma-buf. */
	efd = eventfd(0, EFD_CLOEXEC);
	{
		struct drm_prime_handle in = { .fd = chance(w, 50) ? efd : bad_fd(w) };

		fz_ioctl(OP_PRIME_FD_TO_HANDLE, fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &in);
	}
	if (efd >= 0)
		close(efd);
}

/*
 * Driver ioctl numbers: unknown ones must fail with ENOTTY; known ones with
 * a struct size around the real one and random bytes.
 */
static void op_raw(struct worker *w, int fd, enum op op)
{
	uint8_t buf[256];
	unsigned int nr, size, dir;
	int err;

	for (unsigned int i = 0; i < sizeof(buf); i++)
		buf[i] = chance(w, 70) ? 0 : (uint8_t)rnd(w);
	if (op == OP_RAW_DRIVER) {
		nr = DRM_COMMAND_BASE + 0x09 + (unsigned int)below(w, DRM_COMMAND_END -
								  DRM_COMMAND_BASE - 0x09);
		size = (unsigned int)below(w, sizeof(buf));
		dir = (unsigned int)below(w, 4);
		err = fz_ioctl(op, fd, _IOC(dir, DRM_IOCTL_BASE, nr, size), buf);
		/* Numbers 0x0c, 0x0d may be taken by newer modules. */
		if (err != ENOTTY && err != EBADF && nr - DRM_COMMAND_BASE > 0x10)
			violation("unknown driver ioctl nr %#x gave errno %d", nr, err);
		return;
	}
	nr = DRM_COMMAND_BASE + (unsigned int)below(w, 0x09);
	if (nr == DRM_COMMAND_BASE + DRM_VNPU_SUBMIT || nr == DRM_COMMAND_BASE + DRM_VNPU_QUOTA_SET)
		nr = DRM_COMMAND_BASE + DRM_VNPU_BO_INFO;
	size = 8 * (unsigned int)below(w, 12);
	fz_ioctl(op, fd, _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, nr, size), buf);
}

static void op_generic(struct worker *w, int fd, enum op op)
{
	if (op == OP_VERSION) {
		char name[8], date[8], desc[8];
		struct drm_version v = {
			.name_len = below(w, sizeof(name)), .name = name,
			.date_len = below(w, sizeof(date)), .date = chance(w, 95) ? date : (char *)8,
			.desc_len = below(w, sizeof(desc)), .desc = desc,
		};

		fz_ioctl(op, fd, DRM_IOCTL_VERSION, &v);
	} else if (op == OP_GET_CAP) {
		struct drm_get_cap c = { .capability = below(w, 24) };

		fz_ioctl(op, fd, DRM_IOCTL_GET_CAP, &c);
	} else if (op == OP_SET_CLIENT_CAP) {
		struct drm_set_client_cap c = { .capability = below(w, 8), .value = below(w, 3) };

		fz_ioctl(op, fd, DRM_IOCTL_SET_CLIENT_CAP, &c);
	} else if (op == OP_GET_PARAM) {
		struct drm_vnpu_get_param p = { .param = (uint32_t)below(w, 20),
						.flags = reserved32(w) };

		fz_ioctl(op, fd, DRM_IOCTL_VNPU_GET_PARAM, &p);
	} else if (op == OP_BO_INFO) {
		struct drm_vnpu_bo_info i = { .handle = pick_handle(w), .flags = reserved32(w),
					      .pad = reserved32(w) };

		fz_ioctl(op, fd, DRM_IOCTL_VNPU_BO_INFO, &i);
	} else if (op == OP_GEM_CLOSE) {
		struct drm_gem_close c = { .handle = pick_handle(w), .pad = reserved32(w) };

		fz_ioctl(op, fd, DRM_IOCTL_GEM_CLOSE, &c);
	} else if (op == OP_QUOTA_GET || op == OP_QUOTA_SET) {
		static const int32_t pids[] = { 0, 1, -1, 0x7fffffff };
		struct drm_vnpu_quota q = {
			.pid = chance(w, 70) ? pids[below(w, 4)] : (int32_t)getpid(),
			.pad = reserved32(w),
		};

		if (op == OP_QUOTA_GET) {
			q.flags = reserved32(w);
			fz_ioctl(op, fd, DRM_IOCTL_VNPU_QUOTA_GET, &q);
			return;
		}
		q.flags = chance(w, 90) ? (uint32_t)below(w, 4) : r32(w);
		/* Mostly unlimited, so that the rest of the run can allocate. */
		q.soft_limit = chance(w, 70) ? DRM_VNPU_QUOTA_UNLIMITED : r64(w);
		q.hard_limit = chance(w, 70) ? DRM_VNPU_QUOTA_UNLIMITED : r64(w);
		fz_ioctl(op, fd, DRM_IOCTL_VNPU_QUOTA_SET, &q);
	}
}

/* Opens the device's node again (a fresh file). */
static int open_dev(void)
{
	return vnpu_open_nth((unsigned int)dev_index);
}

static void op_fd(struct worker *w, enum op op)
{
	int slot = slot_fd(w), nfd;

	switch (op) {
	case OP_FD_CLOSE:
		/* Another thread may be inside an ioctl on it right now. */
		atomic_fetch_add(&stats->ioctls, 1);
		record(op, close(slot) ? errno : 0);
		break;
	case OP_FD_REOPEN:
		nfd = open_dev();
		if (nfd < 0)
			break;
		atomic_fetch_add(&stats->ioctls, 1);
		record(op, dup2(nfd, slot) < 0 ? errno : 0);
		close(nfd);
		break;
	case OP_FD_DUP:
		atomic_fetch_add(&stats->ioctls, 1);
		record(op, dup2(slot_fd(w), slot) < 0 ? errno : 0);
		break;
	default:
		break;
	}
}

static void op_poll_fdinfo(struct worker *w, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char path[64], buf[1024];
	int f;

	atomic_fetch_add(&stats->ioctls, 1);
	record(OP_POLL_FDINFO, poll(&p, 1, 0) < 0 ? errno : 0);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f >= 0) {
		while (read(f, buf, sizeof(buf)) > 0)
			;
		close(f);
	}
}

/*
 * A valid sequence on a private file: two buffers, a queue, a timeline
 * syncobj, FILL + COPY + TIMESTAMP, a wait, a PRIME round trip, then the
 * data is checked and everything released. Nothing else can reach the
 * private file, so the data must be exactly what the job wrote.
 */
/* Why the last op_scenario() stopped before its submit, for the final check. */
static char scenario_stop[128];

static void op_scenario(struct worker *w)
{
	uint64_t size = 4096 * (1 + below(w, 16));
	uint32_t pattern = (uint32_t)rnd(w), q = 0, sync = 0, imported = 0;
	struct buf src = {}, dst = {};
	struct drm_vnpu_cmd cmds[3];
	struct drm_vnpu_submit s = {};
	int fd = open_dev(), dmabuf = -1, err;

	if (fd < 0) {
		snprintf(scenario_stop, sizeof(scenario_stop), "open: %d", errno);
		return;
	}
	err = buf_create(fd, size, DRM_VNPU_BO_MAPPABLE, &src);
	if (!err)
		err = buf_create(fd, size + 8, DRM_VNPU_BO_HOST, &dst);
	if (!err)
		err = queue_create(fd, below(w, 2), (uint32_t)below(w, 3), &q);
	if (err) {
		snprintf(scenario_stop, sizeof(scenario_stop),
			 "buffer or queue create: %d", err);
		goto out;
	}
	sync = syncobj_create(fd);
	if (!sync) {
		snprintf(scenario_stop, sizeof(scenario_stop), "syncobj create: %d", errno);
		goto out;
	}
	memset(dst.map, 0, size + 8);
	cmds[0] = cmd_fill(src.addr, size, pattern);
	cmds[1] = cmd_copy(dst.addr, src.addr, size);
	cmds[2] = cmd_ts(dst.addr + vnpu_round_up(size + 8, 4096) - 8);
	s = (struct drm_vnpu_submit){ .queue_id = q, .cmds = (uintptr_t)cmds, .cmd_count = 3,
				      .signal = { .handle = sync, .point = 1 } };
	err = fz_ioctl(OP_SCENARIO, fd, DRM_IOCTL_VNPU_SUBMIT, &s);
	snprintf(scenario_stop, sizeof(scenario_stop), "submit: %d", err);
	if (err) {
		/*
		 * Only a device needing a reset or an injected failure (ENOMEM,
		 * or ENOENT from a failed syncobj lookup) may refuse a valid job.
		 */
		if (err != ENOMEM && err != EIO && err != ENOENT)
			violation("valid submit failed with errno %d", err);
		goto out;
	}
	{
		uint64_t point = 1;
		struct drm_syncobj_timeline_wait wt = {
			.handles = (uintptr_t)&sync, .points = (uintptr_t)&point,
			.timeout_nsec = (int64_t)(now_ns() + 60000000000ULL), .count_handles = 1,
			.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
		};

		/* Behind other files' long jobs it may time out: not a bug. */
		err = fz_ioctl(OP_SCENARIO, fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &wt);
		if (err && err != ETIME)
			violation("timeline wait of a valid job failed with errno %d", err);
		if (err)
			goto out;
	}
	if (_vnpu_prime_export(fd, dst.handle, &dmabuf) == 0)
		_vnpu_prime_import(fd, dmabuf, &imported);
	if (imported && imported != dst.handle)
		violation("re-import into the same file gave handle %u, not %u", imported,
			  dst.handle);
	/*
	 * A reset makes the job fail; then the data is not checked. The queue
	 * says how the job ended: a timeline point's fence (a dma_fence_chain)
	 * does not carry the job's error.
	 */
	{
		struct drm_vnpu_queue_info qi = {};

		for (int t = 0; t < 2000; t++) {
			if (queue_info(fd, q, &qi) || qi.completed + qi.failed == 1)
				break;
			usleep(1000);
		}
		if (qi.completed != 1)
			goto out;
	}
	for (uint64_t i = 0; i < size / 4; i++) {
		if (((uint32_t *)dst.map)[i] != pattern) {
			violation("private job data wrong at %llu: %#x, want %#x",
				  (unsigned long long)i * 4, ((uint32_t *)dst.map)[i], pattern);
			break;
		}
	}
out:
	if (dmabuf >= 0)
		close(dmabuf);
	if (src.handle)
		buf_destroy(fd, &src);
	if (dst.handle)
		buf_destroy(fd, &dst);
	close(fd);
}

static void fuzz_one(struct worker *w)
{
	static const uint8_t weights[OP_COUNT] = {
		[OP_VERSION] = 2, [OP_GET_CAP] = 2, [OP_SET_CLIENT_CAP] = 1,
		[OP_GET_PARAM] = 3, [OP_BO_CREATE] = 10, [OP_BO_INFO] = 4,
		[OP_GEM_CLOSE] = 4, [OP_MMAP] = 4, [OP_QUOTA_GET] = 2, [OP_QUOTA_SET] = 2,
		[OP_QUEUE_CREATE] = 4, [OP_QUEUE_DESTROY] = 2, [OP_QUEUE_INFO] = 3,
		[OP_SUBMIT] = 16, [OP_SYNCOBJ_CREATE] = 5, [OP_SYNCOBJ_DESTROY] = 2,
		[OP_SYNCOBJ_WAIT] = 3, [OP_SYNCOBJ_TIMELINE_WAIT] = 3,
		[OP_SYNCOBJ_SIGNAL] = 2, [OP_SYNCOBJ_TIMELINE_SIGNAL] = 2,
		[OP_SYNCOBJ_RESET] = 2, [OP_SYNCOBJ_QUERY] = 2, [OP_SYNCOBJ_TRANSFER] = 2,
		[OP_SYNCOBJ_HANDLE_TO_FD] = 3, [OP_SYNCOBJ_FD_TO_HANDLE] = 1,
		[OP_SYNCOBJ_EVENTFD] = 2, [OP_PRIME_HANDLE_TO_FD] = 4,
		[OP_PRIME_FD_TO_HANDLE] = 1, [OP_RAW_DRIVER] = 3, [OP_RAW_SIZE] = 3,
		[OP_FD_CLOSE] = 1, [OP_FD_REOPEN] = 2, [OP_FD_DUP] = 1,
		[OP_POLL_FDINFO] = 1, [OP_SCENARIO] = 2, [OP_RESET] = 1,
		[OP_INJECT] = 1,
	};
	unsigned int total = 0, pick;
	enum op op;
	int fd = slot_fd(w);

	for (op = 0; op < OP_COUNT; op++)
		total += weights[op];
	pick = (unsigned int)below(w, total);
	for (op = 0; pick >= weights[op]; op++)
		pick -= weights[op];

	switch (op) {
	case OP_BO_CREATE: op_bo_create(w, fd); break;
	case OP_MMAP: op_mmap(w, fd); break;
	case OP_SUBMIT: op_submit(w, fd); break;
	case OP_QUEUE_CREATE: case OP_QUEUE_DESTROY: case OP_QUEUE_INFO:
		op_queue(w, fd, op);
		break;
	case OP_SYNCOBJ_CREATE ... OP_SYNCOBJ_EVENTFD:
		op_syncobj(w, fd, op);
		break;
	case OP_PRIME_HANDLE_TO_FD: case OP_PRIME_FD_TO_HANDLE: op_prime(w, fd); break;
	case OP_RAW_DRIVER: case OP_RAW_SIZE: op_raw(w, fd, op); break;
	case OP_FD_CLOSE: case OP_FD_REOPEN: case OP_FD_DUP: op_fd(w, op); break;
	case OP_POLL_FDINFO: op_poll_fdinfo(w, fd); break;
	case OP_SCENARIO: op_scenario(w); break;
	case OP_RESET:
		/* Also gets a device that timeouts made refuse work going again. */
		if (chance(w, 20)) {
			atomic_fetch_add(&stats->ioctls, 1);
			record(op, -vnpu_sysfs_write(fd, "reset", "1"));
		}
		break;
	case OP_INJECT:
		/*
		 * A failure injected into whichever fallible step comes next,
		 * in whatever thread or process: error unwinding under races.
		 */
		atomic_fetch_add(&stats->ioctls, 1);
		record(op, -vnpu_debugfs_write_u64(fd, "fail_nth", 1 + below(w, 20)));
		break;
	default: op_generic(w, fd, op); break;
	}
}

struct run {
	uint64_t seed;
	uint64_t end_ns;
	unsigned int index;
};

static void *worker_main(void *arg)
{
	const struct run *r = arg;
	struct worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->rng = r->seed * 0x100000001b3ULL + r->index;
	w->thread = r->index;
	while (!atomic_load(&stop) && now_ns() < r->end_ns)
		fuzz_one(w);
	free(w);
	return NULL;
}

/* Threads of this process fuzzing the shared slots until @end_ns. */
static void fuzz_threads(uint64_t seed, unsigned int first, unsigned int n, uint64_t end_ns)
{
	pthread_t th[16];
	struct run runs[16];
	unsigned int i;

	for (i = 0; i < n && i < 16; i++) {
		runs[i] = (struct run){ .seed = seed, .end_ns = end_ns, .index = first + i };
		if (pthread_create(&th[i], NULL, worker_main, &runs[i]))
			break;
	}
	n = i;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

static void open_slots(void)
{
	for (int s = 0; s < SLOTS; s++) {
		int fd = open_dev();

		if (fd >= 0) {
			dup2(fd, SLOT_BASE + s);
			close(fd);
		}
	}
}

static void close_slots(void)
{
	for (int s = 0; s < SLOTS; s++)
		close(SLOT_BASE + s);
}

static unsigned int count_paths(unsigned int *ops_hit)
{
	unsigned int paths = 0;

	*ops_hit = 0;
	for (int op = 0; op < OP_COUNT; op++) {
		unsigned int n = 0;

		for (int e = 0; e < MAX_ERRNO_SEEN; e++)
			n += atomic_load(&stats->seen[op][e]);
		paths += n;
		*ops_hit += n > 0;
	}
	return paths;
}

static void print_paths(struct __test_metadata *_metadata)
{
	for (int op = 0; op < OP_COUNT; op++) {
		char line[512];
		int len = snprintf(line, sizeof(line), "%-24s", op_names[op]);

		for (int e = 0; e < MAX_ERRNO_SEEN && len < (int)sizeof(line) - 16; e++)
			if (atomic_load(&stats->seen[op][e]))
				len += snprintf(line + len, sizeof(line) - len, " %s",
						e ? strerrorname_np(e) ?: "?" : "ok");
		ksft_print_msg("%s\n", line);
	}
}

/* Device facts that must be back where they were once every file is closed. */
struct baseline {
	struct vnpu_mem_state mem;
	uint64_t syncobjs;
};

static int read_baseline(int fd, struct baseline *b)
{
	int ret = vnpu_mem_state(fd, &b->mem);

	return ret ?: vnpu_sysfs_u64(fd, "syncobj_count", &b->syncobjs);
}

FIXTURE(fuzz) {
	int fd;
	struct baseline base;
};

FIXTURE_SETUP(fuzz)
{
	self->fd = vnpu_open_nth(0);
	if (self->fd < 0)
		SKIP(return, "no vnpu device");
	dev_index = 0;
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_SIZE, &vram_size);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_HOST_SIZE, &host_size);
	ASSERT_EQ(0, read_baseline(self->fd, &self->base));
	stats = mmap(NULL, sizeof(*stats), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	ASSERT_NE(MAP_FAILED, stats);
}

FIXTURE_TEARDOWN(fuzz)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(fuzz, random_and_structured_ioctls, 86400)
{
	uint64_t seed = vnpu_env_ul("VNPU_FUZZ_SEED", (unsigned long)time(NULL));
	unsigned long seconds = vnpu_env_ul("VNPU_FUZZ_SECONDS", 20);
	unsigned int threads = vnpu_env_ul("VNPU_FUZZ_THREADS", 4);
	unsigned int procs = vnpu_env_ul("VNPU_FUZZ_PROCS", 2);
	uint64_t start = now_ns(), end = start + seconds * 1000000000ULL;
	pid_t kids[2] = { -1, -1 };
	unsigned int ops_hit, paths, i;
	struct baseline now = {};
	int status;

	ksft_print_msg("VNPU_FUZZ_SEED=%llu VNPU_FUZZ_SECONDS=%lu VNPU_FUZZ_THREADS=%u VNPU_FUZZ_PROCS=%u\n",
		       (unsigned long long)seed, seconds, threads, procs);
	/* Root may lift the quota; the fuzzer lowers and raises it again. */
	vnpu_quota_unlimit(self->fd);
	signal(SIGPIPE, SIG_IGN);
	open_slots();

	for (i = 0; i < procs && i < 2; i++) {
		kids[i] = vnpu_fork();
		ASSERT_GE(kids[i], 0);
		if (kids[i] == 0) {
			/* The forked process inherits the slots: same files. */
			fuzz_threads(seed, 100 * (i + 1), 2, end);
			_exit(0);
		}
	}
	if (procs > 1) {
		/* The second process is killed at a random moment mid-flight. */
		struct worker k = { .rng = seed ^ 0x5eed };
		uint64_t kill_at = start + below(&k, seconds * 1000000000ULL);

		fuzz_threads(seed, 0, threads, kill_at);
		kill(kids[1], SIGKILL);
	}
	fuzz_threads(seed, 50, threads, end);
	for (i = 0; i < 2; i++) {
		if (kids[i] > 0) {
			ASSERT_EQ(kids[i], waitpid(kids[i], &status, 0));
			if (i == 0)
				EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
					TH_LOG("fuzzing process died: status %#x", status);
				}
		}
	}
	close_slots();
	vnpu_debugfs_write_u64(self->fd, "fail_nth", 0);

	paths = count_paths(&ops_hit);
	print_paths(_metadata);
	ksft_print_msg("fuzz: %llu ioctls in %.1f s, %u distinct (ioctl, result) paths over %u of %u ioctls, seed %llu\n",
		       (unsigned long long)atomic_load(&stats->ioctls),
		       (now_ns() - start) / 1e9, paths, ops_hit, OP_COUNT,
		       (unsigned long long)seed);
	EXPECT_EQ(0, atomic_load(&stats->violations)) {
		TH_LOG("first violation: %s", stats->first_violation);
	}

	/* Every file is closed: the device is back where it started. */
	for (i = 0; i < 2000; i++) {
		ASSERT_EQ(0, read_baseline(self->fd, &now));
		if (!memcmp(&now, &self->base, sizeof(now)))
			break;
		usleep(10000);
	}
	EXPECT_EQ(self->base.mem.vram_used, now.mem.vram_used);
	EXPECT_EQ(self->base.mem.sysfs_vram_used, now.mem.sysfs_vram_used);
	EXPECT_EQ(self->base.mem.bo_count, now.mem.bo_count);
	EXPECT_EQ(self->base.mem.host_used, now.mem.host_used);
	EXPECT_EQ(self->base.syncobjs, now.syncobjs);

	/* A timeout during the run may have left the device needing a reset. */
	vnpu_sysfs_write(self->fd, "reset", "1");
	{
		/*
		 * The run may have set this process's own quota to a few
		 * bytes (a QUOTA_SET of a random limit is one of its moves):
		 * the valid scenario needs it unlimited again.
		 */
		struct drm_vnpu_quota unlimited = {
			.flags = DRM_VNPU_QUOTA_SET_FLAGS,
			.soft_limit = DRM_VNPU_QUOTA_UNLIMITED,
			.hard_limit = DRM_VNPU_QUOTA_UNLIMITED,
		};
		struct worker w = { .rng = seed };

		ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VNPU_QUOTA_SET, &unlimited)) {
			TH_LOG("QUOTA_SET unlimited: %s", strerror(errno));
		}

		memset(stats->seen, 0, sizeof(stats->seen));
		atomic_store(&stats->violations, 0);
		op_scenario(&w);
		EXPECT_EQ(1, atomic_load(&stats->seen[OP_SCENARIO][0])) {
			TH_LOG("the valid scenario stopped at %s", scenario_stop);
		}
		EXPECT_EQ(0, atomic_load(&stats->violations)) {
			TH_LOG("after the run: %s", stats->first_violation);
		}
	}
}

TEST_HARNESS_MAIN
