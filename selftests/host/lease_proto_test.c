// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: host unit tests of the device-pool protocol helpers
 * (libruntime/multi/lease_proto.c) that vnpu-poold, vnpu-pool and the runtime
 * share: word splitting, sizes, counts, device lists, names, and line
 * framing over a socket pair (split reads, several lines in one read,
 * oversized lines, end of file, timeout), and a reply batch written whole
 * to a reader, or refused with a timeout when nobody reads.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "lease_proto.h"

TEST(split_words)
{
	char line[] = "LEASE count=2  mem=64M\tflag";
	struct vnpu_lp_word w[4];
	char *verb;

	ASSERT_EQ(3, vnpu_lp_split(line, &verb, w, 4));
	EXPECT_STREQ("LEASE", verb);
	EXPECT_STREQ("2", vnpu_lp_get(w, 3, "count"));
	EXPECT_STREQ("64M", vnpu_lp_get(w, 3, "mem"));
	EXPECT_STREQ("flag", w[2].key);
	EXPECT_EQ(NULL, w[2].value);
	EXPECT_EQ(NULL, vnpu_lp_get(w, 3, "mode"));
}

TEST(split_rejects_empty_and_too_many)
{
	char empty[] = "   ", many[] = "V a=1 b=2 c=3";
	struct vnpu_lp_word w[2];
	char *verb;

	EXPECT_EQ(-1, vnpu_lp_split(empty, &verb, w, 2));
	EXPECT_EQ(-1, vnpu_lp_split(many, &verb, w, 2));
}

TEST(sizes)
{
	static const struct {
		const char *s;
		int ok;
		uint64_t v;
	} cases[] = {
		{ "0", 1, 0 }, { "4096", 1, 4096 }, { "64K", 1, 64 << 10 }, { "64M", 1, 64 << 20 },
		{ "2G", 1, 2ULL << 30 }, { "1T", 1, 1ULL << 40 }, { "3MiB", 1, 3 << 20 },
		{ "3mb", 1, 3 << 20 }, { "", 0, 0 }, { "-1", 0, 0 }, { "12Q", 0, 0 },
		{ "M", 0, 0 }, { "1MM", 0, 0 }, { " 1", 0, 0 }, { "99999999999999999999", 0, 0 },
		{ "17179869184G", 0, 0 }, { "1B", 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;

		EXPECT_EQ(cases[i].ok ? 0 : -1, vnpu_lp_parse_bytes(cases[i].s, &v))
			TH_LOG("'%s'", cases[i].s);
		if (cases[i].ok)
			EXPECT_EQ(cases[i].v, v) TH_LOG("'%s'", cases[i].s);
	}
	EXPECT_EQ(-1, vnpu_lp_parse_bytes(NULL, &(uint64_t){ 0 }));
}

TEST(numbers_and_device_lists)
{
	uint32_t d[3];
	uint64_t v;

	EXPECT_EQ(0, vnpu_lp_parse_u64("42", &v));
	EXPECT_EQ(42, v);
	EXPECT_EQ(-1, vnpu_lp_parse_u64("4x", &v));
	EXPECT_EQ(-1, vnpu_lp_parse_u64("-4", &v));
	EXPECT_EQ(-1, vnpu_lp_parse_u64(NULL, &v));
	EXPECT_EQ(3, vnpu_lp_parse_devices("0,2,7", d, 3));
	EXPECT_EQ(7, d[2]);
	EXPECT_EQ(0, vnpu_lp_parse_devices("", d, 3));
	EXPECT_EQ(-1, vnpu_lp_parse_devices("0,1,2,3", d, 3));
	EXPECT_EQ(-1, vnpu_lp_parse_devices("0,", d, 3));
	EXPECT_EQ(-1, vnpu_lp_parse_devices(",1", d, 3));
	EXPECT_EQ(-1, vnpu_lp_parse_devices("1;2", d, 3));
	EXPECT_EQ(-1, vnpu_lp_parse_devices(NULL, d, 3));
}

TEST(names_round_trip)
{
	for (int i = 0; i < 2; i++)
		EXPECT_EQ(i, vnpu_lp_mode_parse(vnpu_lp_mode_name(i)));
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(i, vnpu_lp_placement_parse(vnpu_lp_placement_name(i)));
	EXPECT_EQ(NULL, vnpu_lp_mode_name(2));
	EXPECT_EQ(NULL, vnpu_lp_placement_name(-1));
	EXPECT_EQ(-1, vnpu_lp_placement_parse("diagonal"));
	EXPECT_EQ(-1, vnpu_lp_mode_parse("Exclusive"));
}

TEST(framing)
{
	char big[LP_MAX_LINE + 8], line[64];
	struct lp_conn c = { 0 };
	int sv[2];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	c.fd = sv[0];
	/* Two lines in one write, then one in two writes. */
	ASSERT_EQ(9, write(sv[1], "OK a=1\nOK", 9));
	ASSERT_EQ(6, vnpu_lp_recv(&c, line, sizeof(line), 1000));
	EXPECT_STREQ("OK a=1", line);
	EXPECT_EQ(-ETIMEDOUT, vnpu_lp_recv(&c, line, sizeof(line), 50));
	ASSERT_EQ(5, write(sv[1], " b=2\n", 5));
	ASSERT_EQ(6, vnpu_lp_recv(&c, line, sizeof(line), 1000));
	EXPECT_STREQ("OK b=2", line);
	/* A line longer than the buffer is an error, not a truncation. */
	ASSERT_EQ(21, write(sv[1], "0123456789abcdefghij\n", 21));
	EXPECT_EQ(-EMSGSIZE, vnpu_lp_recv(&c, line, 8, 1000));
	/* Sending: the newline is added; an oversized request is refused. */
	ASSERT_EQ(0, vnpu_lp_send(sv[1], "HELLO version=1", 1000));
	c.len = 0;
	ASSERT_LT(0, vnpu_lp_recv(&c, line, sizeof(line), 1000));
	EXPECT_STREQ("HELLO version=1", line);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	EXPECT_EQ(-EMSGSIZE, vnpu_lp_send(sv[1], big, 1000));
	close(sv[1]);
	EXPECT_EQ(-ECONNRESET, vnpu_lp_recv(&c, line, sizeof(line), 1000));
	close(sv[0]);
	EXPECT_EQ(-ENOENT, vnpu_lp_connect("/nonexistent/vnpu-pool.sock"));
}

/* What the daemon sends after a commit: many lines at once, more than the socket holds. */
TEST(write_batch)
{
	static char buf[1 << 20], got[1 << 20];
	int sv[2], status, size = 4096;
	size_t off = 0;
	pid_t pid;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)));
	/* Nobody reads: the socket fills, and the writer gives up. */
	EXPECT_EQ(-ETIMEDOUT, vnpu_lp_write(sv[1], buf, sizeof(buf), 50));
	close(sv[0]);
	close(sv[1]);
	/* A reader: every byte arrives, in order. */
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(0, setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		_exit(vnpu_lp_write(sv[1], buf, sizeof(buf), 30000) ? 1 : 0);
	}
	close(sv[1]);
	while (off < sizeof(got)) {
		ssize_t n = read(sv[0], got + off, sizeof(got) - off);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(sizeof(buf), off);
	EXPECT_EQ(0, memcmp(buf, got, sizeof(buf)));
	/* A peer that went away: an error, not SIGPIPE. */
	EXPECT_EQ(-EPIPE, vnpu_lp_write(sv[0], buf, 64, 1000));
	close(sv[0]);
}

TEST_HARNESS_MAIN
