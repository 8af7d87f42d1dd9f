// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: planner benchmark on generated instances (planner_gen.h):
 * per family and size, over many seeds, the share of plans at the optimum
 * (the lower bound for the random family), the worst and mean ratio to it
 * and the planning time. Every plan is checked with pgen_check().
 *
 *   planner_bench [--seeds N] [--sizes N,N,...] [--families NAME,...]
 *                 [--time-limit MS] [--first-seed N]
 *   planner_bench --emit FAMILY N SEED     (the instance as CSV)
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner_gen.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: planner_bench [--seeds N] [--sizes N,N,...] [--families NAME,...]\n"
		"                     [--time-limit MS] [--first-seed N]\n"
		"       planner_bench --emit FAMILY N SEED\n");
}

static int family_of(const char *name)
{
	for (unsigned int f = 0; f < PGEN_FAMILIES; f++)
		if (!strcmp(name, pgen_family_name(f)))
			return (int)f;
	return -1;
}

static int emit(const char *fam, const char *ns, const char *seeds)
{
	int f = family_of(fam);
	size_t count;
	uint64_t opt;
	struct vnpu_plan_buffer *b;

	if (f < 0) {
		fprintf(stderr, "planner_bench: unknown family '%s'\n", fam);
		return 1;
	}
	b = pgen_generate((unsigned int)f, strtoull(ns, NULL, 10), strtoull(seeds, NULL, 10),
			  &count, &opt);
	if (!b)
		return 1;
	printf("id,lower,upper,size\n");
	for (size_t i = 0; i < count; i++)
		printf("%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", i, b[i].first, b[i].last,
		       b[i].size);
	if (getenv("PGEN_WITNESS")) {
		FILE *w = fopen(getenv("PGEN_WITNESS"), "w");

		for (size_t i = 0; w && i < count; i++)
			fprintf(w, "%" PRIu64 "\n", b[i].offset);
		if (w)
			fclose(w);
	}
	fprintf(stderr, "%s: %zu buffers, %s %" PRIu64 "\n", fam, count,
		pgen_known_optimum((unsigned int)f) ? "optimum" : "lower bound", opt);
	free(b);
	return 0;
}

struct row {
	unsigned int runs, at_opt;
	double worst, sum_ratio, sum_ms, max_ms;
	size_t buffers;
	uint64_t worst_seed;
};

/* Plans one instance into @r; returns -1 when a plan fails the checker. */
static int run_one(unsigned int fam, size_t n, uint64_t seed, unsigned int ms, struct row *r)
{
	struct vnpu_plan_options o = { .strategy = VNPU_PLAN_BEST, .time_limit_ms = ms,
				       .seed = seed };
	struct vnpu_plan_stats st;
	struct vnpu_plan_buffer *b;
	uint64_t opt, arena;
	size_t count;
	double ratio, t;

	b = pgen_generate(fam, n, seed, &count, &opt);
	if (!b || vnpu_plan_compute(b, count, &o, &st) != VNPU_SUCCESS ||
	    pgen_check(b, count, &arena) || arena != st.arena_size || arena < opt) {
		fprintf(stderr, "planner_bench: %s n=%zu seed=%" PRIu64 ": bad plan\n",
			pgen_family_name(fam), n, seed);
		free(b);
		return -1;
	}
	ratio = (double)arena / (double)opt;
	t = st.elapsed_ns / 1e6;
	r->runs++;
	r->at_opt += arena == opt;
	if (ratio > r->worst) {
		r->worst = ratio;
		r->worst_seed = seed;
	}
	r->sum_ratio += ratio;
	r->sum_ms += t;
	if (t > r->max_ms)
		r->max_ms = t;
	r->buffers += count;
	free(b);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seeds", required_argument, NULL, 's' },
		{ "sizes", required_argument, NULL, 'n' },
		{ "families", required_argument, NULL, 'f' },
		{ "time-limit", required_argument, NULL, 't' },
		{ "first-seed", required_argument, NULL, 'S' },
		{ "emit", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	size_t sizes[32] = { 200, 400, 700, 1500, 3000, 6000 }, nsizes = 6;
	unsigned int fams[PGEN_FAMILIES], nfams = PGEN_FAMILIES, ms = 0, seeds = 50;
	uint64_t first_seed = 1;
	int opt, do_emit = 0;

	for (unsigned int f = 0; f < PGEN_FAMILIES; f++)
		fams[f] = f;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			seeds = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'n': {
			char *p = optarg;

			for (nsizes = 0; *p && nsizes < 32; nsizes++) {
				sizes[nsizes] = strtoull(p, &p, 10);
				if (*p == ',')
					p++;
			}
			break;
		}
		case 'f': {
			char *tok = strtok(optarg, ",");

			for (nfams = 0; tok && nfams < PGEN_FAMILIES; tok = strtok(NULL, ",")) {
				int f = family_of(tok);

				if (f < 0) {
					fprintf(stderr, "planner_bench: unknown family '%s'\n", tok);
					return 1;
				}
				fams[nfams++] = (unsigned int)f;
			}
			break;
		}
		case 't':
			ms = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'S':
			first_seed = strtoull(optarg, NULL, 10);
			break;
		case 'e':
			do_emit = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (do_emit) {
		if (argc - optind != 3) {
			usage(stderr);
			return 1;
		}
		return emit(argv[optind], argv[optind + 1], argv[optind + 2]);
	}
	printf("| family | buffers | seeds | at optimum | worst ratio (seed) | mean ratio"
	       " | mean ms | max ms |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	for (unsigned int fi = 0; fi < nfams; fi++) {
		for (size_t si = 0; si < nsizes; si++) {
			struct row r = { 0 };
			unsigned int f = fams[fi];

			for (unsigned int k = 0; k < seeds; k++)
				if (run_one(f, sizes[si], first_seed + k, ms, &r))
					return 1;
			printf("| %s%s | %zu | %u | %u (%.0f%%) | %.4f (%" PRIu64 ") | %.4f"
			       " | %.0f | %.0f |\n",
			       pgen_family_name(f), pgen_known_optimum(f) ? "" : " (vs LB)",
			       r.buffers / r.runs, r.runs, r.at_opt, 100.0 * r.at_opt / r.runs,
			       r.worst, r.worst_seed, r.sum_ratio / r.runs, r.sum_ms / r.runs,
			       r.max_ms);
			fflush(stdout);
		}
	}
	return 0;
}
