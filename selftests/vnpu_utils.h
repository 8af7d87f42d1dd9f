/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Helpers shared by the vnpu selftests. Each ioctl comes in three forms, as
 * in the iommufd selftests: _vnpu_x() returns 0 or -errno, vnpu_x() asserts
 * success, vnpu_err_x(errno, ...) asserts that exact failure.
 */
#ifndef VNPU_UTILS_H
#define VNPU_UTILS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <drm.h>
#include <drm/vnpu_accel.h>

#include "../tools/common/attr.h"

#define VNPU_ACCEL_MAJOR 261

/* Returns 1 if @fd is a DRM device whose driver is named "vnpu". */
static inline int vnpu_is_vnpu_fd(int fd)
{
	char name[64] = "";
	struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

	if (ioctl(fd, DRM_IOCTL_VERSION, &v))
		return 0;
	return !strcmp(name, "vnpu");
}

static inline int vnpu_cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/*
 * Opens the @nth vnpu device, in accel minor order, found by driver name.
 * Returns the fd or -1 if there are not that many vnpu devices.
 */
static inline int vnpu_open_nth(unsigned int nth)
{
	int minors[256], count = 0, fd = -1;
	struct dirent *e;
	DIR *d = opendir("/dev/accel");

	if (!d)
		return -1;
	while ((e = readdir(d)) && count < 256)
		if (!strncmp(e->d_name, "accel", 5))
			minors[count++] = atoi(e->d_name + 5);
	closedir(d);
	qsort(minors, count, sizeof(int), vnpu_cmp_int);

	for (int i = 0; i < count; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/dev/accel/accel%d", minors[i]);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (vnpu_is_vnpu_fd(fd) && nth-- == 0)
			return fd;
		close(fd);
	}
	return -1;
}

/* Number of vnpu devices present. */
static inline unsigned int vnpu_count_devices(void)
{
	unsigned int n = 0;
	int fd;

	while ((fd = vnpu_open_nth(n)) >= 0) {
		close(fd);
		n++;
	}
	return n;
}

static inline int _vnpu_get_param(int fd, uint32_t param, uint32_t flags, uint64_t *value)
{
	struct drm_vnpu_get_param args = { .param = param, .flags = flags };

	if (ioctl(fd, DRM_IOCTL_VNPU_GET_PARAM, &args))
		return -errno;
	*value = args.value;
	return 0;
}

#define vnpu_get_param(fd, param, value) \
	ASSERT_EQ(0, _vnpu_get_param(fd, param, 0, value))

#define vnpu_err_get_param(err, fd, param, flags) ({			\
	uint64_t __v = 0;						\
	ASSERT_EQ(-(err), _vnpu_get_param(fd, param, flags, &__v));	\
})

/* Path of the device's vnpu sysfs group: /sys/dev/char/M:m/device/vnpu. */
static inline int vnpu_sysfs_dir(int fd, char *buf, size_t len)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	snprintf(buf, len, "/sys/dev/char/%u:%u/device/vnpu", major(st.st_rdev),
		 minor(st.st_rdev));
	return 0;
}

/* Reads one sysfs attribute of the device into @buf, without the newline. */
static inline int vnpu_sysfs_read(int fd, const char *attr, char *buf, size_t len)
{
	char dir[256];
	int ret = vnpu_sysfs_dir(fd, dir, sizeof(dir));

	return ret ? ret : vnpu_read_attr(dir, attr, buf, len);
}

/* Reads a module parameter of vnpu from /sys/module/vnpu/parameters. */
static inline int vnpu_module_param(const char *name, char *buf, size_t len)
{
	return vnpu_read_attr("/sys/module/vnpu/parameters", name, buf, len);
}

/* --- Buffers ------------------------------------------------------------- */

#define VNPU_PAGE_SIZE 4096ULL
#define VNPU_SZ_64K (64ULL << 10)

static inline uint64_t vnpu_round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) & ~(align - 1);
}

/*
 * Size a buffer of @size bytes takes once created (BO_INFO size, quota
 * charge): whole pages, for both kinds. The 64 KiB alignment of large VRAM
 * buffers applies to their device address only (Documentation/memory.rst).
 */
static inline uint64_t vnpu_bo_rounded_size(uint64_t size, uint32_t flags)
{
	(void)flags;
	return vnpu_round_up(size, VNPU_PAGE_SIZE);
}

/* BO_CREATE with a caller-filled argument struct (to pass bad input). */
static inline int _vnpu_bo_create_args(int fd, struct drm_vnpu_bo_create *args)
{
	if (ioctl(fd, DRM_IOCTL_VNPU_BO_CREATE, args))
		return -errno;
	return 0;
}

static inline int _vnpu_bo_create(int fd, uint64_t size, uint32_t flags,
				  uint32_t *handle, uint64_t *device_addr)
{
	struct drm_vnpu_bo_create args = { .size = size, .flags = flags };
	int ret = _vnpu_bo_create_args(fd, &args);

	if (ret)
		return ret;
	if (handle)
		*handle = args.handle;
	if (device_addr)
		*device_addr = args.device_addr;
	return 0;
}

#define vnpu_bo_create(fd, size, flags, handle, device_addr) \
	ASSERT_EQ(0, _vnpu_bo_create(fd, size, flags, handle, device_addr))

#define vnpu_err_bo_create(err, fd, size, flags) ({			\
	uint32_t __h = 0;						\
	ASSERT_EQ(-(err), _vnpu_bo_create(fd, size, flags, &__h, NULL));	\
})

/* BO_INFO with a caller-filled argument struct (flags, pad). */
static inline int _vnpu_bo_info_args(int fd, struct drm_vnpu_bo_info *args)
{
	if (ioctl(fd, DRM_IOCTL_VNPU_BO_INFO, args))
		return -errno;
	return 0;
}

static inline int _vnpu_bo_info(int fd, uint32_t handle, struct drm_vnpu_bo_info *info)
{
	struct drm_vnpu_bo_info args = { .handle = handle };
	int ret = _vnpu_bo_info_args(fd, &args);

	if (!ret && info)
		*info = args;
	return ret;
}

#define vnpu_bo_info(fd, handle, info) \
	ASSERT_EQ(0, _vnpu_bo_info(fd, handle, info))

#define vnpu_err_bo_info(err, fd, handle) \
	ASSERT_EQ(-(err), _vnpu_bo_info(fd, handle, NULL))

/* The generic DRM_IOCTL_GEM_CLOSE. */
static inline int _vnpu_gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close args = { .handle = handle };

	if (ioctl(fd, DRM_IOCTL_GEM_CLOSE, &args))
		return -errno;
	return 0;
}

#define vnpu_gem_close(fd, handle) ASSERT_EQ(0, _vnpu_gem_close(fd, handle))
#define vnpu_err_gem_close(err, fd, handle) \
	ASSERT_EQ(-(err), _vnpu_gem_close(fd, handle))

/* PRIME export: a dma-buf fd (close-on-exec, read-write) for @handle. */
static inline int _vnpu_prime_export(int fd, uint32_t handle, int *dmabuf_fd)
{
	struct drm_prime_handle args = {
		.handle = handle,
		.flags = DRM_CLOEXEC | DRM_RDWR,
		.fd = -1,
	};

	if (ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &args))
		return -errno;
	*dmabuf_fd = args.fd;
	return 0;
}

#define vnpu_prime_export(fd, handle, dmabuf_fd) \
	ASSERT_EQ(0, _vnpu_prime_export(fd, handle, dmabuf_fd))

/* PRIME import of @dmabuf_fd into the file @fd. */
static inline int _vnpu_prime_import(int fd, int dmabuf_fd, uint32_t *handle)
{
	struct drm_prime_handle args = { .fd = dmabuf_fd };

	if (ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &args))
		return -errno;
	*handle = args.handle;
	return 0;
}

#define vnpu_prime_import(fd, dmabuf_fd, handle) \
	ASSERT_EQ(0, _vnpu_prime_import(fd, dmabuf_fd, handle))

#define vnpu_err_prime_import(err, fd, dmabuf_fd) ({			\
	uint32_t __h = 0;						\
	ASSERT_EQ(-(err), _vnpu_prime_import(fd, dmabuf_fd, &__h));	\
})

/* mmap() of @len bytes at the device-file offset @offset, shared, RW. */
static inline int _vnpu_mmap(int fd, uint64_t offset, size_t len, void **ptr)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);

	if (p == MAP_FAILED)
		return -errno;
	*ptr = p;
	return 0;
}

/* Maps the whole buffer @handle of @fd. */
static inline int _vnpu_bo_mmap(int fd, uint32_t handle, void **ptr, uint64_t *size)
{
	struct drm_vnpu_bo_info info;
	int ret = _vnpu_bo_info(fd, handle, &info);

	if (ret)
		return ret;
	ret = _vnpu_mmap(fd, info.mmap_offset, info.size, ptr);
	if (!ret && size)
		*size = info.size;
	return ret;
}

#define vnpu_bo_mmap(fd, handle, ptr, size) \
	ASSERT_EQ(0, _vnpu_bo_mmap(fd, handle, ptr, size))

/* Fills @len bytes with a pattern that depends on @seed and the position. */
static inline void vnpu_fill(void *ptr, size_t len, uint32_t seed)
{
	uint32_t *p = ptr;

	for (size_t i = 0; i < len / 4; i++)
		p[i] = seed ^ (uint32_t)(i * 2654435761u);
}

/* Returns the byte offset of the first mismatch with vnpu_fill(), or -1. */
static inline long vnpu_check(const void *ptr, size_t len, uint32_t seed)
{
	const uint32_t *p = ptr;

	for (size_t i = 0; i < len / 4; i++)
		if (p[i] != (seed ^ (uint32_t)(i * 2654435761u)))
			return (long)(i * 4);
	return -1;
}

/* --- Quota ----------------------------------------------------------------- */

static inline int _vnpu_quota_get_args(int fd, struct drm_vnpu_quota *args)
{
	if (ioctl(fd, DRM_IOCTL_VNPU_QUOTA_GET, args))
		return -errno;
	return 0;
}

static inline int _vnpu_quota_set_args(int fd, struct drm_vnpu_quota *args)
{
	if (ioctl(fd, DRM_IOCTL_VNPU_QUOTA_SET, args))
		return -errno;
	return 0;
}

static inline int _vnpu_quota_get(int fd, int32_t pid, struct drm_vnpu_quota *q)
{
	struct drm_vnpu_quota args = { .pid = pid };
	int ret = _vnpu_quota_get_args(fd, &args);

	if (!ret && q)
		*q = args;
	return ret;
}

static inline int _vnpu_quota_set(int fd, int32_t pid, uint32_t flags, uint64_t soft,
				  uint64_t hard, struct drm_vnpu_quota *q)
{
	struct drm_vnpu_quota args = {
		.pid = pid, .flags = flags, .soft_limit = soft, .hard_limit = hard,
	};
	int ret = _vnpu_quota_set_args(fd, &args);

	if (!ret && q)
		*q = args;
	return ret;
}

#define vnpu_quota_get(fd, pid, q) ASSERT_EQ(0, _vnpu_quota_get(fd, pid, q))
#define vnpu_err_quota_get(err, fd, pid) \
	ASSERT_EQ(-(err), _vnpu_quota_get(fd, pid, NULL))
#define vnpu_quota_set(fd, pid, flags, soft, hard, q) \
	ASSERT_EQ(0, _vnpu_quota_set(fd, pid, flags, soft, hard, q))
#define vnpu_err_quota_set(err, fd, pid, flags, soft, hard) \
	ASSERT_EQ(-(err), _vnpu_quota_set(fd, pid, flags, soft, hard, NULL))

/*
 * Lifts the calling process's quota on @fd's device (needs CAP_SYS_ADMIN
 * unless the hard limit is already unlimited). Returns 0 or -errno.
 */
static inline int vnpu_quota_unlimit(int fd)
{
	return _vnpu_quota_set(fd, 0, DRM_VNPU_QUOTA_SET_SOFT | DRM_VNPU_QUOTA_SET_HARD,
			       DRM_VNPU_QUOTA_UNLIMITED, DRM_VNPU_QUOTA_UNLIMITED, NULL);
}

/*
 * VRAM bytes the calling process may still allocate on @fd's device under
 * its soft limit, after lifting its limits where allowed; 0 on error.
 */
static inline uint64_t vnpu_quota_room(int fd)
{
	struct drm_vnpu_quota q;

	vnpu_quota_unlimit(fd);
	if (_vnpu_quota_get(fd, 0, &q))
		return 0;
	if (q.soft_limit == DRM_VNPU_QUOTA_UNLIMITED)
		return DRM_VNPU_QUOTA_UNLIMITED;
	return q.soft_limit > q.used ? q.soft_limit - q.used : 0;
}

/* --- sysfs, debugfs, fdinfo ---------------------------------------------- */

/* Reads a numeric sysfs attribute; "max" reads as DRM_VNPU_QUOTA_UNLIMITED. */
static inline int vnpu_sysfs_u64(int fd, const char *attr, uint64_t *value)
{
	char buf[64], *end;
	int ret = vnpu_sysfs_read(fd, attr, buf, sizeof(buf));

	if (ret)
		return ret;
	if (!strcmp(buf, "max")) {
		*value = DRM_VNPU_QUOTA_UNLIMITED;
		return 0;
	}
	errno = 0;
	*value = strtoull(buf, &end, 10);
	if (errno || end == buf || *end)
		return -EINVAL;
	return 0;
}

/* Writes @value to the file @path. */
static inline int vnpu_write_path(const char *path, const char *value)
{
	size_t len = strlen(value);
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, value, len);
	ret = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
	close(fd);
	return ret;
}

/* Path of the sysfs attribute @attr of @fd's device. */
static inline int vnpu_sysfs_path(int fd, const char *attr, char *buf, size_t len)
{
	char dir[256];
	int ret = vnpu_sysfs_dir(fd, dir, sizeof(dir));

	if (!ret)
		snprintf(buf, len, "%s/%s", dir, attr);
	return ret;
}

/* Writes @value to a sysfs attribute of the device. */
static inline int vnpu_sysfs_write(int fd, const char *attr, const char *value)
{
	char path[512];
	int ret = vnpu_sysfs_path(fd, attr, path, sizeof(path));

	return ret ? ret : vnpu_write_path(path, value);
}

/*
 * Path of the debugfs file @name of @fd's device. The accel core names the
 * directory after the device (/sys/kernel/debug/accel/vnpu.N); a directory
 * named after the accel minor is accepted as well. Returns 0 if it exists.
 */
static inline int vnpu_debugfs_path(int fd, const char *name, char *buf, size_t len)
{
	char link[512], target[512], *base;
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st))
		return -errno;
	snprintf(buf, len, "/sys/kernel/debug/accel/%u/%s", minor(st.st_rdev), name);
	if (!access(buf, F_OK))
		return 0;
	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device", major(st.st_rdev),
		 minor(st.st_rdev));
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	snprintf(buf, len, "/sys/kernel/debug/accel/%s/%s", base ? base + 1 : target, name);
	return access(buf, F_OK) ? -errno : 0;
}

static inline int vnpu_debugfs_write_u64(int fd, const char *name, uint64_t value)
{
	char path[600], buf[32];
	int ret = vnpu_debugfs_path(fd, name, path, sizeof(path));

	if (ret)
		return ret;
	snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)value);
	return vnpu_write_path(path, buf);
}

static inline int vnpu_debugfs_read_u64(int fd, const char *name, uint64_t *value)
{
	char path[600], buf[32];
	int dfd, ret = vnpu_debugfs_path(fd, name, path, sizeof(path));
	ssize_t n;

	if (ret)
		return ret;
	dfd = open(path, O_RDONLY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	n = read(dfd, buf, sizeof(buf) - 1);
	ret = n < 0 ? -errno : 0;
	close(dfd);
	if (ret)
		return ret;
	buf[n] = '\0';
	*value = strtoull(buf, NULL, 0);
	return 0;
}

/*
 * Reads the memory key @key ("drm-total-vram", ...) of the open file @fd
 * from /proc/self/fdinfo, as printed by drm_print_memory_stats(): a number
 * with an optional unit (B, KiB, MiB, GiB). Returns 0, or -ENOENT if the
 * key is absent, -EINVAL if the value does not parse.
 */
static inline int vnpu_fdinfo_bytes(int fd, const char *key, uint64_t *bytes)
{
	static const struct { const char *unit; unsigned int shift; } units[] = {
		{ "", 0 }, { "B", 0 }, { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 },
		{ "TiB", 40 },
	};
	char path[64], line[256], *p, *end;
	size_t klen = strlen(key);
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (ret == -ENOENT && fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		ret = -EINVAL;
		p = line + klen + 1;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno || end == p)
			break;
		end += strspn(end, " \t");
		end[strcspn(end, " \t\n")] = '\0';
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (!strcmp(end, units[i].unit)) {
				*bytes = (uint64_t)v << units[i].shift;
				ret = 0;
			}
		}
	}
	fclose(f);
	return ret;
}

/*
 * Memory accounting of a device, as seen by the GET_PARAM ioctl and sysfs:
 * everything a failed call must leave unchanged.
 */
struct vnpu_mem_state {
	uint64_t vram_used;		/* DRM_VNPU_PARAM_VRAM_USED */
	uint64_t sysfs_vram_used;	/* vram_used_bytes */
	uint64_t bo_count;		/* bo_count */
	uint64_t host_used;		/* host_used_bytes */
};

static inline int vnpu_mem_state(int fd, struct vnpu_mem_state *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = _vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_USED, 0, &s->vram_used);

	if (!ret)
		ret = vnpu_sysfs_u64(fd, "vram_used_bytes", &s->sysfs_vram_used);
	if (!ret)
		ret = vnpu_sysfs_u64(fd, "bo_count", &s->bo_count);
	if (!ret)
		ret = vnpu_sysfs_u64(fd, "host_used_bytes", &s->host_used);
	return ret;
}

#define vnpu_get_mem_state(fd, s) ASSERT_EQ(0, vnpu_mem_state(fd, s))

/* Asserts that @fd's device accounting equals the snapshot @before. */
#define vnpu_assert_mem_unchanged(fd, before) ({			\
	struct vnpu_mem_state __now = { 0 };					\
	vnpu_get_mem_state(fd, &__now);					\
	EXPECT_EQ((before)->vram_used, __now.vram_used);		\
	EXPECT_EQ((before)->sysfs_vram_used, __now.sysfs_vram_used);	\
	EXPECT_EQ((before)->bo_count, __now.bo_count);			\
	EXPECT_EQ((before)->host_used, __now.host_used);		\
})

/*
 * Waits up to @ms milliseconds for @fd's device accounting to equal
 * @want (releases that happen when a killed process's files close).
 * Returns 0 once equal, -ETIMEDOUT otherwise; @now holds the last reading.
 */
static inline int vnpu_wait_mem_state(int fd, const struct vnpu_mem_state *want,
				      struct vnpu_mem_state *now, unsigned int ms)
{
	for (unsigned int waited = 0;; waited += 10) {
		int ret = vnpu_mem_state(fd, now);

		if (ret)
			return ret;
		if (now->vram_used == want->vram_used &&
		    now->sysfs_vram_used == want->sysfs_vram_used &&
		    now->bo_count == want->bo_count && now->host_used == want->host_used)
			return 0;
		if (waited >= ms)
			return -ETIMEDOUT;
		usleep(10 * 1000);
	}
}

/*
 * fork() for tests that need helper processes. The child is killed when
 * the test process dies: after a failed ASSERT the harness does not run a
 * FIXTURE_TEARDOWN in the test process, and a helper left behind would hold
 * buffers (and the module) past the test. Returns what fork() returns.
 */
static inline pid_t vnpu_fork(void)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent))
		_exit(1);
	return pid;
}

/* Reads an unsigned integer from the environment, or @def. */
static inline unsigned long vnpu_env_ul(const char *name, unsigned long def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long r;

	if (!v || !*v)
		return def;
	errno = 0;
	r = strtoul(v, &end, 0);
	return errno || *end ? def : r;
}

#endif
