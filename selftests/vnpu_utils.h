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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <drm.h>
#include <drm/vnpu_accel.h>

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
	char dir[256], path[512];
	ssize_t n;
	int afd, ret = vnpu_sysfs_dir(fd, dir, sizeof(dir));

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	afd = open(path, O_RDONLY | O_CLOEXEC);
	if (afd < 0)
		return -errno;
	n = read(afd, buf, len - 1);
	close(afd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Reads a module parameter of vnpu from /sys/module/vnpu/parameters. */
static inline int vnpu_module_param(const char *name, char *buf, size_t len)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/module/vnpu/parameters/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

#endif
