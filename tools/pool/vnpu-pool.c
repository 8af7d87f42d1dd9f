// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-pool: lease devices from vnpu-poold, release leases, show the pool.
 *
 *   vnpu-pool lease [OPTIONS] [-- COMMAND [ARGS...]]
 *   vnpu-pool release ID
 *   vnpu-pool info ID
 *   vnpu-pool list
 *   vnpu-pool status
 *
 * With a COMMAND, lease runs it in its own place (exec, same process): the
 * lease's connection is inherited, so the lease lasts as long as the
 * command, and VNPU_POOL_SOCKET tells the command's runtime to use it.
 * Documentation/pool.rst.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lease_proto.h"

static const char *sock_path;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: vnpu-pool [-s SOCKET] lease [-n COUNT] [-m SIZE|all] [--shared|--exclusive]\n"
		"                 [-p same-node|spread|least-loaded|packed] [-d DEVICES]\n"
		"                 [-- COMMAND [ARGS...]]\n"
		"       vnpu-pool [-s SOCKET] release ID\n"
		"       vnpu-pool [-s SOCKET] info ID\n"
		"       vnpu-pool [-s SOCKET] list\n"
		"       vnpu-pool [-s SOCKET] status\n"
		"  -s, --socket PATH  the pool's socket (default $VNPU_POOL_SOCKET, else " LP_DEFAULT_SOCKET ")\n"
		"lease holds the devices until COMMAND exits, or without a COMMAND until\n"
		"stdin closes or a signal arrives.\n");
}

/* Connects and greets; exits with a message if the pool does not answer. */
static struct lp_conn *pool_open(void)
{
	static struct lp_conn c;
	char line[LP_MAX_LINE], hello[32];
	int fd = vnpu_lp_connect(sock_path), ret;

	if (fd < 0) {
		fprintf(stderr, "vnpu-pool: cannot connect to %s: %s (is vnpu-poold running?)\n",
			sock_path, strerror(-fd));
		exit(1);
	}
	c.fd = fd;
	snprintf(hello, sizeof(hello), "HELLO version=%d", LP_VERSION);
	ret = vnpu_lp_send(fd, hello, LP_CLIENT_TIMEOUT_MS);
	if (!ret)
		ret = vnpu_lp_recv(&c, line, sizeof(line), LP_CLIENT_TIMEOUT_MS);
	if (ret < 0 || strncmp(line, "OK", 2)) {
		fprintf(stderr, "vnpu-pool: %s: %s\n", sock_path,
			ret < 0 ? strerror(-ret) : line);
		exit(1);
	}
	return &c;
}

/* Sends @request; prints an ERR reply and returns -1, or 0 with the OK line. */
static int request(struct lp_conn *c, const char *req, char *line, size_t size)
{
	int ret = vnpu_lp_send(c->fd, req, LP_CLIENT_TIMEOUT_MS);

	if (!ret)
		ret = vnpu_lp_recv(c, line, size, LP_CLIENT_TIMEOUT_MS);
	if (ret < 0) {
		fprintf(stderr, "vnpu-pool: no reply from the pool: %s\n", strerror(-ret));
		return -1;
	}
	if (strncmp(line, "OK", 2)) {
		const char *text = strchr(line + 4, ' ');

		fprintf(stderr, "vnpu-pool: refused (%.*s): %s\n", (int)strcspn(line + 4, " "),
			line + 4, text ? text + 1 : "");
		return -1;
	}
	return 0;
}

/* Prints the K lines that follow an "OK n=K" reply, as they come. */
static int print_lines(struct lp_conn *c, char *line, size_t size, const char *empty)
{
	unsigned long long k = 0;

	if (sscanf(line, "OK n=%llu", &k) != 1) {
		fprintf(stderr, "vnpu-pool: malformed reply from the pool: %s\n", line);
		return 1;
	}
	if (!k && empty)
		printf("%s\n", empty);
	for (unsigned long long i = 0; i < k; i++) {
		int ret = vnpu_lp_recv(c, line, size, LP_CLIENT_TIMEOUT_MS);

		if (ret < 0) {
			fprintf(stderr, "vnpu-pool: the pool's reply broke off: %s\n", strerror(-ret));
			return 1;
		}
		printf("%s\n", line);
	}
	return 0;
}

static int cmd_lease(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "mem", required_argument, NULL, 'm' },
		{ "placement", required_argument, NULL, 'p' },
		{ "shared", no_argument, NULL, 'S' },
		{ "exclusive", no_argument, NULL, 'E' },
		{ NULL, 0, NULL, 0 },
	};
	const char *count = "1", *mem = NULL, *placement = "same-node", *mode = "exclusive";
	const char *from = NULL;
	char req[LP_MAX_LINE], line[LP_MAX_LINE], id[32] = "";
	struct lp_conn *c;
	int o;

	optind = 1;
	while ((o = getopt_long(argc, argv, "+n:m:p:d:", opts, NULL)) != -1) {
		switch (o) {
		case 'd': from = optarg; break;
		case 'n': count = optarg; break;
		case 'm': mem = optarg; break;
		case 'p': placement = optarg; break;
		case 'S': mode = "shared"; break;
		case 'E': mode = "exclusive"; break;
		default: usage(stderr); return 2;
		}
	}
	/* Checked by the pool; only keep the request one line of words. */
	if (strpbrk(count, " \t\n") || (mem && strpbrk(mem, " \t\n")) || strpbrk(placement, " \t\n") ||
	    (from && strpbrk(from, " \t\n"))) {
		fprintf(stderr, "vnpu-pool: lease: values may not contain spaces\n");
		return 2;
	}
	snprintf(req, sizeof(req), "LEASE count=%s mode=%s placement=%s%s%s%s%s", count, mode,
		 placement, mem ? " mem=" : "", mem ? mem : "", from ? " from=" : "",
		 from ? from : "");
	c = pool_open();
	if (request(c, req, line, sizeof(line)))
		return 1;
	sscanf(line, "OK id=%31s", id);
	if (optind < argc) {
		/* The connection (and so the lease) passes to the command. */
		fprintf(stderr, "vnpu-pool: %s\n", line + 3);
		setenv("VNPU_POOL_SOCKET", sock_path, 1);
		setenv("VNPU_POOL_LEASE", id, 1);
		if (fcntl(c->fd, F_SETFD, 0) == -1) {
			fprintf(stderr, "vnpu-pool: cannot pass the lease on: %s\n", strerror(errno));
			return 1;
		}
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "vnpu-pool: cannot run %s: %s\n", argv[optind], strerror(errno));
		return 127;
	}
	printf("%s\n", line + 3);
	fflush(stdout);
	/* Hold until stdin closes or a signal ends the process (and the lease). */
	for (;;) {
		struct pollfd p[2] = { { .fd = 0, .events = POLLIN }, { .fd = c->fd, .events = POLLIN } };
		char buf[256];

		if (poll(p, 2, -1) < 0)
			return 1;
		if (p[1].revents) {
			fprintf(stderr, "vnpu-pool: the pool closed the connection; lease %s ends\n", id);
			return 1;
		}
		if (p[0].revents && read(0, buf, sizeof(buf)) <= 0)
			return 0;
	}
}

static int cmd_id(const char *verb, int argc, char **argv)
{
	char req[64], line[LP_MAX_LINE];
	unsigned long long id;
	struct lp_conn *c;
	char *end;

	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	id = strtoull(argv[1], &end, 10);
	if (*end || end == argv[1]) {
		fprintf(stderr, "vnpu-pool: %s: '%s' is not a lease id\n", argv[0], argv[1]);
		return 2;
	}
	snprintf(req, sizeof(req), "%s id=%llu", verb, id);
	c = pool_open();
	if (request(c, req, line, sizeof(line)))
		return 1;
	if (!strcmp(verb, "RELEASE")) {
		printf("lease %llu released\n", id);
		return 0;
	}
	return print_lines(c, line, sizeof(line), NULL);
}

static int cmd_query(const char *verb, const char *empty)
{
	char line[LP_MAX_LINE];
	struct lp_conn *c = pool_open();

	if (request(c, verb, line, sizeof(line)))
		return 1;
	return print_lines(c, line, sizeof(line), empty);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("VNPU_POOL_SOCKET");
	int o;

	sock_path = env && *env ? env : LP_DEFAULT_SOCKET;
	signal(SIGPIPE, SIG_IGN);
	while ((o = getopt_long(argc, argv, "+s:h", opts, NULL)) != -1) {
		switch (o) {
		case 's': sock_path = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	argc -= optind;
	argv += optind;
	if (!strcmp(argv[0], "lease"))
		return cmd_lease(argc, argv);
	if (!strcmp(argv[0], "release"))
		return cmd_id("RELEASE", argc, argv);
	if (!strcmp(argv[0], "info"))
		return cmd_id("INFO", argc, argv);
	if (!strcmp(argv[0], "list") && argc == 1)
		return cmd_query("LIST", "no leases");
	if (!strcmp(argv[0], "status") && argc == 1)
		return cmd_query("STATUS", NULL);
	fprintf(stderr, "vnpu-pool: unknown command '%s'\n", argv[0]);
	usage(stderr);
	return 2;
}
