// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-plan: plan the offsets of buffers with known lifetimes.
 *
 *   vnpu-plan FILE.csv [--capacity N] [--strategy size|breadth|best|skyline]
 *             [--time-limit MS] [--seed N] [--deterministic] [--output OUT.csv]
 *             [--table]
 *   vnpu-plan --synthetic N [same options]
 *
 * FILE.csv has the header "id,lower,upper,size" (an optional fifth column
 * "alignment" is accepted); each buffer is live over [lower, upper).
 * --synthetic N plans N generated buffers instead (a trace shaped like a
 * training graph: mostly short-lived activations, some long-lived ones,
 * sizes spread over four orders of magnitude; --seed picks the trace).
 * --deterministic counts the time limit in work (VNPU_PLAN_DETERMINISTIC):
 * the same input and options give the same plan on every run.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vnpu.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vnpu-plan FILE.csv [--capacity N] [--strategy size|breadth|best|skyline]\n"
		"                 [--time-limit MS] [--seed N] [--deterministic] [--output OUT.csv]\n"
		"                 [--table]\n"
		"       vnpu-plan --synthetic N [same options]\n");
}

/* Parses one unsigned decimal field ending at ',' or end of line. */
static int parse_u64(const char **pp, uint64_t *out, int last)
{
	const char *p = *pp;
	char *end;
	unsigned long long v;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;	/* empty, negative or not a number */
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno == ERANGE)
		return -2;
	while (*end == ' ' || *end == '\t')
		end++;
	if (last) {
		if (*end && *end != '\n' && *end != '\r')
			return -1;
	} else if (*end != ',') {
		return -1;
	} else {
		end++;
	}
	*out = v;
	*pp = end;
	return 0;
}

struct input {
	struct vnpu_plan_buffer *bufs;
	uint64_t *ids;
	size_t n, cap;
};

static int read_csv(const char *path, struct input *in)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t len = 0, lineno = 0;
	int columns = 4, rc = -1;

	if (!f) {
		fprintf(stderr, "vnpu-plan: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &len, f) >= 0) {
		const char *p = line;
		uint64_t v[5] = { 0 };
		int err = 0;

		lineno++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || *p == '\r' || !*p || *p == '#')
			continue;
		if (lineno == 1 && !isdigit((unsigned char)*p)) {
			if (!strncmp(p, "id,lower,upper,size,alignment", 29))
				columns = 5;
			else if (strncmp(p, "id,lower,upper,size", 19)) {
				fprintf(stderr, "vnpu-plan: %s:1: header is not \"id,lower,upper,size\"\n",
					path);
				goto out;
			}
			continue;
		}
		for (int c = 0; c < columns && !err; c++)
			err = parse_u64(&p, &v[c], c == columns - 1);
		if (err) {
			fprintf(stderr, "vnpu-plan: %s:%zu: %s\n", path, lineno,
				err == -2 ? "number too large" :
				"malformed line: want id,lower,upper,size with unsigned decimal numbers");
			goto out;
		}
		if (v[1] >= v[2]) {
			fprintf(stderr, "vnpu-plan: %s:%zu: empty lifetime [%" PRIu64 ", %" PRIu64 ")\n",
				path, lineno, v[1], v[2]);
			goto out;
		}
		if (!v[3] || v[3] > UINT64_MAX / 8) {
			fprintf(stderr, "vnpu-plan: %s:%zu: size %" PRIu64 " out of range\n",
				path, lineno, v[3]);
			goto out;
		}
		if (columns == 5 && (v[4] & (v[4] - 1))) {
			fprintf(stderr, "vnpu-plan: %s:%zu: alignment %" PRIu64 " is not a power of two\n",
				path, lineno, v[4]);
			goto out;
		}
		if (in->n == in->cap) {
			size_t cap = in->cap ? in->cap * 2 : 1024;
			struct vnpu_plan_buffer *nb = realloc(in->bufs, cap * sizeof(*nb));
			uint64_t *ni;

			if (!nb)
				goto oom;
			in->bufs = nb;
			ni = realloc(in->ids, cap * sizeof(*ni));
			if (!ni)
				goto oom;
			in->ids = ni;
			in->cap = cap;
		}
		in->ids[in->n] = v[0];
		in->bufs[in->n++] = (struct vnpu_plan_buffer){
			.size = v[3], .alignment = v[4], .first = v[1], .last = v[2] };
	}
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "vnpu-plan: out of memory\n");
out:
	free(line);
	fclose(f);
	return rc;
}

static uint64_t synth_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * N buffers over about N / 2 steps: three in four live a few steps, the
 * rest up to a tenth of the trace (saved activations); sizes log-uniform
 * from 256 bytes to 4 MiB, multiples of 256.
 */
static int synthesize(struct input *in, size_t n, uint64_t seed)
{
	uint64_t rng = seed * 0x2545f4914f6cdd1dull + 1;
	uint64_t steps = n / 2 + 1;

	in->bufs = calloc(n + 1, sizeof(*in->bufs));
	in->ids = calloc(n + 1, sizeof(*in->ids));
	if (!in->bufs || !in->ids)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t r = synth_next(&rng), first = r % steps, len;
		unsigned int bits = 8 + (unsigned int)(synth_next(&rng) % 15);

		if ((r >> 32) % 4)
			len = 1 + (r >> 40) % 4;
		else
			len = 1 + (r >> 40) % (steps / 10 + 1);
		in->ids[i] = i;
		in->bufs[i] = (struct vnpu_plan_buffer){
			.size = ((1ull << bits) + synth_next(&rng) % (1ull << bits)) & ~255ull,
			.first = first, .last = first + len };
		if (!in->bufs[i].size)
			in->bufs[i].size = 256;
	}
	in->n = n;
	return 0;
}

static int parse_number(const char *s, uint64_t *out)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

/* The process's CPU time: the planner's budget is CPU time, not wall clock. */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "capacity", required_argument, NULL, 'c' },
		{ "strategy", required_argument, NULL, 's' },
		{ "time-limit", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'r' },
		{ "deterministic", no_argument, NULL, 'D' },
		{ "output", required_argument, NULL, 'o' },
		{ "table", no_argument, NULL, 'T' },
		{ "synthetic", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vnpu_plan_options opts = { .strategy = VNPU_PLAN_BEST };
	struct vnpu_plan_stats st = { 0 };
	struct input in = { 0 };
	const char *output = NULL, *path;
	int table = 0, deterministic = 0, opt, status;
	uint64_t v, synthetic = 0;
	double cpu0, cpu;

	while ((opt = getopt_long(argc, argv, "c:s:t:r:Do:TS:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (parse_number(optarg, &opts.capacity) || !opts.capacity) {
				fprintf(stderr, "vnpu-plan: bad --capacity '%s'\n", optarg);
				return 2;
			}
			break;
		case 's':
			for (opts.strategy = 0; vnpu_plan_strategy_name(opts.strategy); opts.strategy++)
				if (!strcmp(optarg, vnpu_plan_strategy_name(opts.strategy)))
					break;
			if (!vnpu_plan_strategy_name(opts.strategy)) {
				fprintf(stderr, "vnpu-plan: unknown --strategy '%s' (size, breadth, best, skyline)\n",
					optarg);
				return 2;
			}
			break;
		case 't':
			if (parse_number(optarg, &v) || !v || v > 3600000) {
				fprintf(stderr, "vnpu-plan: bad --time-limit '%s' (1..3600000 ms)\n",
					optarg);
				return 2;
			}
			opts.time_limit_ms = (unsigned int)v;
			break;
		case 'r':
			if (parse_number(optarg, &opts.seed)) {
				fprintf(stderr, "vnpu-plan: bad --seed '%s'\n", optarg);
				return 2;
			}
			break;
		case 'D':
			deterministic = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case 'T':
			table = 1;
			break;
		case 'S':
			if (parse_number(optarg, &synthetic) || !synthetic ||
			    synthetic > 100000000) {
				fprintf(stderr, "vnpu-plan: bad --synthetic '%s' (1..100000000)\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + (synthetic ? 0 : 1) != argc) {
		usage(stderr);
		return 2;
	}
	if (synthetic) {
		static char name[64];

		snprintf(name, sizeof(name), "synthetic-%" PRIu64, synthetic);
		path = name;
		if (synthesize(&in, (size_t)synthetic, opts.seed)) {
			fprintf(stderr, "vnpu-plan: out of memory\n");
			free(in.bufs);
			free(in.ids);
			return 1;
		}
	} else {
		path = argv[optind];
		if (read_csv(path, &in))
			return 1;
	}

	if (deterministic)
		opts.strategy |= VNPU_PLAN_DETERMINISTIC;
	cpu0 = cpu_ms();
	status = vnpu_plan_compute(in.bufs, in.n, &opts, &st);
	cpu = cpu_ms() - cpu0;
	if (status == VNPU_ERROR_DOES_NOT_FIT) {
		if (opts.capacity < st.lower_bound)
			fprintf(stderr, "vnpu-plan: %s: does not fit: needs at least %" PRIu64
				" bytes (the lower bound), capacity is %" PRIu64 "\n",
				path, st.lower_bound, opts.capacity);
		else
			fprintf(stderr, "vnpu-plan: %s: does not fit: no plan within %" PRIu64
				" bytes found (lower bound %" PRIu64 ", best plan %" PRIu64
				"); raise --capacity or --time-limit\n",
				path, opts.capacity, st.lower_bound, st.arena_size);
		goto fail;
	}
	if (status != VNPU_SUCCESS) {
		fprintf(stderr, "vnpu-plan: %s: %s: %s\n", path, vnpu_status_name(status),
			vnpu_status_string(status));
		goto fail;
	}

	if (table) {
		double ref = opts.capacity ? (double)opts.capacity : (double)st.lower_bound;

		printf("| %s | %zu | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %.4f | %.4f | %.1f | %.1f | %" PRIu64 " |\n",
		       base_name(path), in.n, st.lower_bound, st.greedy_size, st.arena_size,
		       ref ? (double)st.greedy_size / ref : 1.0,
		       ref ? (double)st.arena_size / ref : 1.0, st.elapsed_ns / 1e6, cpu,
		       st.search_nodes);
	} else {
		double lb = st.lower_bound ? (double)st.lower_bound : 1.0;

		printf("instance:     %s\n", path);
		printf("buffers:      %zu\n", in.n);
		printf("strategy:     %s%s\n",
		       vnpu_plan_strategy_name(opts.strategy & ~VNPU_PLAN_DETERMINISTIC),
		       deterministic ? ", deterministic" : "");
		printf("naive sum:    %" PRIu64 "\n", st.naive_size);
		printf("lower bound:  %" PRIu64 "\n", st.lower_bound);
		printf("greedy arena: %" PRIu64 " (%.4f x lower bound)\n", st.greedy_size,
		       st.greedy_size / lb);
		printf("arena:        %" PRIu64 " (%.4f x lower bound, %.4f of naive sum)%s\n",
		       st.arena_size, st.arena_size / lb,
		       st.naive_size ? (double)st.arena_size / st.naive_size : 1.0,
		       st.optimal ? " optimal" : "");
		if (opts.capacity)
			printf("capacity:     %" PRIu64 " (arena uses %.4f)\n", opts.capacity,
			       (double)st.arena_size / opts.capacity);
		printf("search:       %" PRIu64 " nodes\n", st.search_nodes);
		printf("time:         %.1f ms (%.1f ms of CPU)\n", st.elapsed_ns / 1e6, cpu);
	}

	if (output) {
		FILE *f = fopen(output, "w");

		if (!f) {
			fprintf(stderr, "vnpu-plan: %s: %s\n", output, strerror(errno));
			goto fail;
		}
		fprintf(f, "id,lower,upper,size,offset\n");
		for (size_t i = 0; i < in.n; i++)
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
				in.ids[i], in.bufs[i].first, in.bufs[i].last, in.bufs[i].size,
				in.bufs[i].offset);
		if (fclose(f)) {
			fprintf(stderr, "vnpu-plan: %s: write failed\n", output);
			goto fail;
		}
	}
	free(in.bufs);
	free(in.ids);
	return 0;
fail:
	free(in.bufs);
	free(in.ids);
	return 1;
}
