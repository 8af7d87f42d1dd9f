// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Lease request latency of vnpu-poold with 1 and with N concurrent
 * clients: each client leases (shared, 1 MiB, least-loaded) and releases
 * in a loop on its own connection, LEASES/CLIENTS times; the time from sending LEASE to its
 * reply is one sample. Reports percentiles, never asserts.
 *
 *   vnpu-bench-lease SOCKET [LEASES] [CLIENTS...]
 *
 * LEASES (default 200) is the total per run, divided among the clients.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lease_proto.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * One client's loop; its samples (us) go to @out. Returns failed requests.
 * Without @lease, a HELLO round trip: the floor under every request.
 */
static int client(const char *path, int iters, int lease, double *out)
{
	char line[LP_MAX_LINE], req[64];
	struct lp_conn c = { .fd = vnpu_lp_connect(path) };
	int failed = 0;

	if (c.fd < 0 || vnpu_lp_send(c.fd, "HELLO version=1", LP_CLIENT_TIMEOUT_MS) ||
	    vnpu_lp_recv(&c, line, sizeof(line), LP_CLIENT_TIMEOUT_MS) < 0)
		return iters;
	for (int i = 0; i < iters; i++) {
		unsigned long long id = 0;
		double t0 = now_us();

		out[i] = -1;
		if (!lease) {
			if (vnpu_lp_send(c.fd, "HELLO version=1", LP_CLIENT_TIMEOUT_MS) ||
			    vnpu_lp_recv(&c, line, sizeof(line), LP_CLIENT_TIMEOUT_MS) < 0)
				failed++;
			else
				out[i] = now_us() - t0;
			continue;
		}
		if (vnpu_lp_send(c.fd, "LEASE count=1 mode=shared mem=1M placement=least-loaded",
				 LP_CLIENT_TIMEOUT_MS) ||
		    vnpu_lp_recv(&c, line, sizeof(line), LP_CLIENT_TIMEOUT_MS) < 0 ||
		    sscanf(line, "OK id=%llu", &id) != 1) {
			failed++;
			continue;
		}
		out[i] = now_us() - t0;
		snprintf(req, sizeof(req), "RELEASE id=%llu", id);
		if (vnpu_lp_send(c.fd, req, LP_CLIENT_TIMEOUT_MS) ||
		    vnpu_lp_recv(&c, line, sizeof(line), LP_CLIENT_TIMEOUT_MS) < 0)
			failed++;
	}
	close(c.fd);
	return failed;
}

static int run(const char *path, int clients, int total, int lease)
{
	int iters = total / clients > 0 ? total / clients : 1;
	size_t n = (size_t)clients * iters, ok = 0;
	double *s = mmap(NULL, n * sizeof(double), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0), t0, wall;
	int failed = 0;

	if (s == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < n; i++)
		s[i] = -1;
	t0 = now_us();
	for (int c = 0; c < clients; c++)
		if (fork() == 0)
			_exit(client(path, iters, lease, s + (size_t)c * iters) ? 1 : 0);
	for (int c = 0; c < clients; c++) {
		int status;

		wait(&status);
		failed += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	wall = now_us() - t0;
	for (size_t i = 0; i < n; i++)
		if (s[i] >= 0)
			s[ok++] = s[i];
	qsort(s, ok, sizeof(double), cmp_double);
	if (!ok) {
		printf("| %-7s | %7d | no request succeeded |\n", lease ? "LEASE" : "HELLO", clients);
	} else {
		printf("| %-7s | %7d | %6zu | %8.0f | %8.0f | %8.0f | %8.0f | %8.0f |%s\n",
		       lease ? "LEASE" : "HELLO", clients, ok,
		       s[ok / 2], s[ok * 9 / 10], s[ok * 99 / 100], s[ok - 1],
		       ok / (wall / 1e6), failed ? " (clients failed)" : "");
	}
	munmap(s, n * sizeof(double));
	return failed != 0;
}

int main(int argc, char **argv)
{
	int total = argc > 2 ? atoi(argv[2]) : 200, ret = 0;

	if (argc < 2 || total <= 0) {
		fprintf(stderr, "usage: vnpu-bench-lease SOCKET [LEASES] [CLIENTS...]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The daemon may still be starting. */
	for (int i = 0, fd; i < 200; i++) {
		fd = vnpu_lp_connect(argv[1]);
		if (fd >= 0) {
			close(fd);
			break;
		}
		usleep(100000);
	}
	printf("request latency, us (request to its reply; LEASE: shared, 1 MiB, least-loaded;\n"
	       "HELLO: the protocol round trip alone)\n");
	printf("| request | clients |   reqs |      p50 |      p90 |      p99 |      max |   reqs/s |\n");
	printf("|---------|---------|--------|----------|----------|----------|----------|----------|\n");
	ret |= run(argv[1], 1, total, 0);
	if (argc <= 3) {
		ret |= run(argv[1], 1, total, 1);
		ret |= run(argv[1], 50, total, 1);
	}
	for (int i = 3; i < argc; i++)
		ret |= run(argv[1], atoi(argv[i]) > 0 ? atoi(argv[i]) : 1, total, 1);
	return ret;
}
