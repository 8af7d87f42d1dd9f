/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * One reader of sysfs (and procfs) attribute files, shared by vnpu-smi,
 * vnpu-poold and the selftests (vnpu_utils.h).
 */
#ifndef VNPU_TOOLS_ATTR_H
#define VNPU_TOOLS_ATTR_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * Reads the attribute open at @fd from its start into @buf (@len bytes, at
 * least 1): its first line, without the newline and trailing blanks. A
 * sysfs attribute read again from offset 0 is generated anew, so a daemon
 * can keep the fd open and skip the path walk of every read. Returns 0 or
 * -errno.
 */
static inline int vnpu_read_attr_fd(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	n = (ssize_t)strcspn(buf, "\n");
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return 0;
}

/* The file @dir/@name opened for vnpu_read_attr_fd(), or -errno. */
static inline int vnpu_open_attr(const char *dir, const char *name)
{
	char path[1024];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Reads the file @dir/@name into @buf (@len bytes, at least 1): its first
 * line, without the newline and trailing blanks. Returns 0 or -errno.
 */
static inline int vnpu_read_attr(const char *dir, const char *name, char *buf, size_t len)
{
	int fd = vnpu_open_attr(dir, name), ret;

	if (fd < 0)
		return fd;
	ret = vnpu_read_attr_fd(fd, buf, len);
	close(fd);
	return ret;
}

#endif
