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
 * Reads the file @dir/@name into @buf (@len bytes, at least 1): its first
 * line, without the newline and trailing blanks. Returns 0 or -errno.
 */
static inline int vnpu_read_attr(const char *dir, const char *name, char *buf, size_t len)
{
	char path[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	n = (ssize_t)strcspn(buf, "\n");
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return 0;
}

#endif
