/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The device-pool protocol between vnpu-poold and its clients (the
 * runtime's vnpu_lease_*() calls and the vnpu-pool CLI): framing, word
 * parsing and the socket helpers both sides share. Not part of the public
 * API; the protocol itself is documented in Documentation/pool.rst.
 *
 * A request is one line of at most LP_MAX_LINE bytes, "VERB key=value ...".
 * A reply is "OK key=value ..." or "ERR CODE text"; an OK reply of LIST,
 * INFO and STATUS carries n=K and is followed by K more lines.
 */
#ifndef VNPU_LEASE_PROTO_H
#define VNPU_LEASE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define LP_VERSION 1
#define LP_MAX_LINE 1024
#define LP_MAX_WORDS 16
#define LP_MAX_DEVICES 64
#define LP_DEFAULT_SOCKET "/run/vnpu/pool.sock"
/* Clients give up on a reply after this long. */
#define LP_CLIENT_TIMEOUT_MS 30000

enum lp_mode { LP_EXCLUSIVE = 0, LP_SHARED = 1 };
enum lp_placement { LP_SAME_NODE = 0, LP_SPREAD = 1, LP_LEAST_LOADED = 2, LP_PACKED = 3 };

struct vnpu_lp_word {
	char *key;
	char *value;	/* NULL for a word without '=' */
};

/* Buffered line reader over a socket. */
struct lp_conn {
	int fd;
	size_t len;
	char buf[LP_MAX_LINE * 2];
};

/* The name of a mode or placement, or NULL; and back (-1 if unknown). */
const char *vnpu_lp_mode_name(int mode);
const char *vnpu_lp_placement_name(int placement);
int vnpu_lp_mode_parse(const char *s);
int vnpu_lp_placement_parse(const char *s);

/*
 * Splits @line in place into a verb and key=value words. Returns the
 * number of words, or -1 for an empty line or more than @max words.
 */
int vnpu_lp_split(char *line, char **verb, struct vnpu_lp_word *words, int max);

/* The value of @key among @words, or NULL. */
const char *vnpu_lp_get(const struct vnpu_lp_word *words, int n, const char *key);

/* "123", "64K", "64M", "2G" (also KiB/MiB/GiB) into bytes; -1 if malformed. */
int vnpu_lp_parse_bytes(const char *s, uint64_t *bytes);

/* A decimal u64 with nothing after it; -1 if malformed. */
int vnpu_lp_parse_u64(const char *s, uint64_t *v);

/* "0,2,3" into @devs; returns the count or -1 if malformed or too many. */
int vnpu_lp_parse_devices(const char *s, uint32_t *devs, int max);

/* Connects to the Unix socket @path; returns the fd or -errno. */
int vnpu_lp_connect(const char *path);

/* Sends @line plus '\n' within @timeout_ms; 0 or -errno. */
int vnpu_lp_send(int fd, const char *line, int timeout_ms);
/*
 * Sends the @len bytes at @buf (whole lines) within @timeout_ms, waiting
 * only while the socket is full; 0 or -errno (-ETIMEDOUT for a peer that
 * does not read).
 */
int vnpu_lp_write(int fd, const char *buf, size_t len, int timeout_ms);

/*
 * Reads one line without its '\n' into @out within @timeout_ms; returns
 * its length or -errno (-ECONNRESET on end of file, -EMSGSIZE for a line
 * longer than @size - 1).
 */
int vnpu_lp_recv(struct lp_conn *c, char *out, size_t size, int timeout_ms);

#endif /* VNPU_LEASE_PROTO_H */
