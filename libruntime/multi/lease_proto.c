// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The device-pool protocol helpers shared by vnpu-poold, vnpu-pool and
 * the runtime (see lease_proto.h).
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lease_proto.h"

static const char *const mode_names[] = { "exclusive", "shared" };
static const char *const placement_names[] = { "same-node", "spread", "least-loaded", "packed" };

const char *vnpu_lp_mode_name(int mode)
{
	return mode >= 0 && mode < 2 ? mode_names[mode] : NULL;
}

const char *vnpu_lp_placement_name(int placement)
{
	return placement >= 0 && placement < 4 ? placement_names[placement] : NULL;
}

int vnpu_lp_mode_parse(const char *s)
{
	for (int i = 0; i < 2; i++)
		if (!strcmp(s, mode_names[i]))
			return i;
	return -1;
}

int vnpu_lp_placement_parse(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, placement_names[i]))
			return i;
	return -1;
}

int vnpu_lp_split(char *line, char **verb, struct vnpu_lp_word *words, int max)
{
	char *save = NULL, *tok;
	int n = 0;

	*verb = strtok_r(line, " \t", &save);
	if (!*verb)
		return -1;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		char *eq = strchr(tok, '=');

		if (n == max)
			return -1;
		words[n].key = tok;
		words[n].value = NULL;
		if (eq) {
			*eq = '\0';
			words[n].value = eq + 1;
		}
		n++;
	}
	return n;
}

const char *vnpu_lp_get(const struct vnpu_lp_word *words, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(words[i].key, key))
			return words[i].value;
	return NULL;
}

int vnpu_lp_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

int vnpu_lp_parse_bytes(const char *s, uint64_t *bytes)
{
	unsigned int shift = 0;
	uint64_t v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (shift && (*end == 'B' || *end == 'b'))
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*bytes = v << shift;
	return 0;
}

int vnpu_lp_parse_devices(const char *s, uint32_t *devs, int max)
{
	int n = 0;

	if (!s)
		return -1;
	if (!*s)
		return 0;
	for (;;) {
		char *end;
		unsigned long v;

		if (!isdigit((unsigned char)*s) || n == max)
			return -1;
		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || v > UINT32_MAX)
			return -1;
		devs[n++] = (uint32_t)v;
		if (!*end)
			return n;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

int vnpu_lp_connect(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * Waits for @events on @fd until @deadline (ms); 0, or -ETIMEDOUT / -errno.
 * Past the deadline it still looks once: a caller descheduled for longer
 * than its timeout must not fail a socket that is ready.
 */
static int wait_fd(int fd, short events, long long deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		long long left = deadline - now_ms();
		int ret;

		ret = poll(&p, 1, left < 0 ? 0 : (int)left);
		if (ret > 0)
			return 0;
		if (ret == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

int vnpu_lp_write(int fd, const char *buf, size_t len, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	size_t off = 0;

	/* Send first, wait only when the socket is full: one call in the usual case. */
	while (off < len) {
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		int ret;

		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		ret = wait_fd(fd, POLLOUT, deadline);
		if (ret)
			return ret;
	}
	return 0;
}

int vnpu_lp_send(int fd, const char *line, int timeout_ms)
{
	char buf[LP_MAX_LINE + 2];
	size_t len = strlen(line);

	if (len > LP_MAX_LINE - 1)
		return -EMSGSIZE;
	memcpy(buf, line, len);
	buf[len++] = '\n';
	return vnpu_lp_write(fd, buf, len, timeout_ms);
}

int vnpu_lp_recv(struct lp_conn *c, char *out, size_t size, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;

	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		ssize_t n;
		int ret;

		if (nl) {
			size_t len = (size_t)(nl - c->buf);

			if (len >= size)
				return -EMSGSIZE;
			memcpy(out, c->buf, len);
			out[len] = '\0';
			c->len -= len + 1;
			memmove(c->buf, nl + 1, c->len);
			return (int)len;
		}
		if (c->len == sizeof(c->buf))
			return -EMSGSIZE;
		ret = wait_fd(c->fd, POLLIN, deadline);
		if (ret)
			return ret;
		n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n > 0)
			c->len += (size_t)n;
	}
}
