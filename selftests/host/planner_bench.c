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
 *                 [--time-limit MS] [--deterministic] [--first-seed N] [--misses]
 *   planner_bench --emit FAMILY N SEED     (the instance as CSV)
 *   planner_bench --cores FAMILY N SEED [--time-limit MS] [--deterministic]
 *
 * --deterministic plans with VNPU_PLAN_DETERMINISTIC: the table is the
 * same on every run (but for its times), so two builds compare seed by
 * seed without the noise of the CPU clock.
 *
 * --misses names, on stderr, every seed whose plan is not at the optimum
 * (its ratio and time): the seeds two builds miss can then be compared
 * seed by seed, not only in count.
 *
 * --cores walks the generator's own plan of one instance (its witness)
 * as a tree of cuts: a piece splits by cuts in time where no buffer
 * crosses, else by cuts in memory. Each piece is planned alone, as an
 * instance of its own; a piece not planned at its optimum whose pieces
 * all are (or that has no cut: the witness is not guillotine there) is a
 * core, and is reported. The cores are where the planner fails whatever
 * happens above them.
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
		"                     [--time-limit MS] [--deterministic] [--first-seed N]\n"
		"                     [--misses]\n"
		"       planner_bench --emit FAMILY N SEED\n"
		"       planner_bench --cores FAMILY N SEED [--time-limit MS] [--deterministic]\n");
}

/* The strategy of every plan: VNPU_PLAN_BEST, with --deterministic its flag. */
static unsigned int strategy = VNPU_PLAN_BEST;

static int family_of(const char *name)
{
	for (unsigned int f = 0; f < PGEN_FAMILIES; f++)
		if (!strcmp(name, pgen_family_name(f)))
			return (int)f;
	return -1;
}

/* Buffers per instance and seeds per row the command line may ask for. */
#define BENCH_MAX_BUFFERS 1000000u
#define BENCH_MAX_SEEDS 100000u

/*
 * @s as a decimal number in [@min, @max] into *@v; 0, or -1 (said why,
 * naming @what) when it is not one.
 */
static int number(const char *what, const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) {
			x = UINT64_MAX;
			break;
		}
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (p == s || *p || x < min || x > max) {
		fprintf(stderr, "planner_bench: %s '%s': not a number from %" PRIu64 " to %" PRIu64
			"\n", what, s, min, max);
		return -1;
	}
	*v = x;
	return 0;
}

/*
 * The instance FAMILY N SEED of the command line, with its witness plan;
 * NULL (said why) for an unknown family, a bad number, or a family
 * without a known plan when @known.
 */
static struct vnpu_plan_buffer *instance(const char *fam, const char *ns, const char *seeds,
					 int known, size_t *count, uint64_t *opt)
{
	int f = family_of(fam);
	uint64_t n, seed;
	struct vnpu_plan_buffer *b;

	if (f < 0 || (known && !pgen_known_optimum((unsigned int)f))) {
		fprintf(stderr, f < 0 ? "planner_bench: unknown family '%s'\n" :
			"planner_bench: family '%s' has no known plan\n", fam);
		return NULL;
	}
	if (number("buffers", ns, 1, BENCH_MAX_BUFFERS, &n) ||
	    number("seed", seeds, 0, UINT64_MAX, &seed))
		return NULL;
	b = pgen_generate((unsigned int)f, n, seed, count, opt);
	if (!b)
		fprintf(stderr, "planner_bench: out of memory\n");
	return b;
}

static int emit(const char *fam, const char *ns, const char *seeds)
{
	int f = family_of(fam);
	size_t count;
	uint64_t opt;
	struct vnpu_plan_buffer *b = instance(fam, ns, seeds, 0, &count, &opt);

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

struct walk {
	const struct vnpu_plan_buffer *b;	/* the instance, with its witness */
	struct vnpu_plan_buffer *scratch;
	uint64_t *keys;
	unsigned int ms;
	uint64_t seed;			/* the instance's, as the benchmark plans it */
	unsigned int cores, pieces;
};

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* Distinct values of @keys (@n of them), sorted in place; returns how many. */
static size_t distinct(uint64_t *keys, size_t n)
{
	size_t k = 0;

	qsort(keys, n, sizeof(*keys), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!k || keys[k - 1] != keys[i])
			keys[k++] = keys[i];
	return k;
}

/* Buffer @b's extent in time (@mem 0) or in the witness's memory (@mem 1). */
static void extent(const struct vnpu_plan_buffer *b, int mem, uint64_t *lo, uint64_t *hi)
{
	*lo = mem ? b->offset : b->first;
	*hi = mem ? b->offset + b->size : b->last;
}

/*
 * The cuts of the piece @ids (@m buffers) along time (@mem 0) or memory:
 * the values inside its extent no buffer crosses, sorted into @cut;
 * returns how many.
 */
static size_t cuts(struct walk *w, const uint32_t *ids, size_t m, int mem, uint64_t *cut)
{
	uint64_t lo = UINT64_MAX, hi = 0, *ends = w->keys;
	size_t n = 0, k;

	for (size_t i = 0; i < m; i++) {
		uint64_t a, z;

		extent(&w->b[ids[i]], mem, &a, &z);
		lo = a < lo ? a : lo;
		hi = z > hi ? z : hi;
		ends[i] = a;
	}
	k = distinct(ends, m);
	for (size_t j = 0; j < k; j++) {
		int crossed = ends[j] == lo;

		for (size_t i = 0; i < m && !crossed; i++) {
			uint64_t a, z;

			extent(&w->b[ids[i]], mem, &a, &z);
			crossed = a < ends[j] && z > ends[j];
		}
		if (!crossed)
			cut[n++] = ends[j];
	}
	cut[n] = hi;
	return n;
}

/* Plans the piece alone; 1 when at its optimum (its witness's height). */
static int plan_piece(struct walk *w, const uint32_t *ids, size_t m, double *ratio)
{
	struct vnpu_plan_options o = { .strategy = strategy, .time_limit_ms = w->ms,
				       .seed = w->seed };
	struct vnpu_plan_stats st;
	uint64_t lo = UINT64_MAX, hi = 0, arena;

	for (size_t i = 0; i < m; i++) {
		w->scratch[i] = w->b[ids[i]];
		lo = w->b[ids[i]].offset < lo ? w->b[ids[i]].offset : lo;
		if (w->b[ids[i]].offset + w->b[ids[i]].size > hi)
			hi = w->b[ids[i]].offset + w->b[ids[i]].size;
		w->scratch[i].offset = 0;
	}
	w->pieces++;
	/* Checked apart from the planner, as every plan of the benchmark. */
	if (vnpu_plan_compute(w->scratch, m, &o, &st) != VNPU_SUCCESS ||
	    pgen_check(w->scratch, m, &arena) || arena != st.arena_size) {
		fprintf(stderr, "planner_bench: a piece of %zu buffers: bad plan\n", m);
		return -1;
	}
	*ratio = (double)st.arena_size / (double)(hi - lo);
	return st.arena_size == hi - lo;
}

static void report_core(struct walk *w, const uint32_t *ids, size_t m, int mem, size_t parts,
			double ratio)
{
	uint64_t *t = w->keys, y0 = UINT64_MAX, y1 = 0;
	size_t times, one = 0;

	for (size_t i = 0; i < m; i++) {
		t[2 * i] = w->b[ids[i]].first;
		t[2 * i + 1] = w->b[ids[i]].last;
		y0 = w->b[ids[i]].offset < y0 ? w->b[ids[i]].offset : y0;
		if (w->b[ids[i]].offset + w->b[ids[i]].size > y1)
			y1 = w->b[ids[i]].offset + w->b[ids[i]].size;
	}
	times = distinct(t, 2 * m);
	/* Live in one section: no other instant of the piece inside its lifetime. */
	for (size_t i = 0; i < m; i++) {
		const uint64_t *p = bsearch(&w->b[ids[i]].first, t, times, sizeof(*t), cmp_u64);

		one += p && p + 1 < t + times && p[1] == w->b[ids[i]].last;
	}
	w->cores++;
	printf("core: %zu buffers, %zu sections, %.1f events per instant, %zu one-section, "
	       "%zu %s; time [%" PRIu64 ", %" PRIu64 "), memory [%" PRIu64 ", %" PRIu64 "); "
	       "planned at %.4f of its optimum\n",
	       m, times - 1, 2.0 * (double)m / (double)times, one, parts,
	       mem > 0 ? "strips" : mem ? "piece (no cut)" : "pieces in time", t[0],
	       t[times - 1], y0, y1, ratio);
}

/*
 * The piece @ids: 1 when planned at its optimum, 0 when not (its cores
 * reported), -1 on an error.
 */
static int walk_piece(struct walk *w, uint32_t *ids, size_t m)
{
	uint64_t *cut;
	uint32_t *sub;
	size_t n = 0;
	int mem, r, all = 1;
	double ratio;

	if (m <= 1)
		return 1;
	r = plan_piece(w, ids, m, &ratio);
	if (r)
		return r;
	cut = malloc((m + 1) * sizeof(*cut));
	sub = malloc(m * sizeof(*sub));
	if (!cut || !sub) {
		free(cut);
		free(sub);
		return -1;
	}
	for (mem = 0; mem < 2 && !n; mem++)
		n = cuts(w, ids, m, mem, cut);
	mem--;
	/* No cut (the witness is not guillotine here): the piece is a core. */
	for (size_t c = 0; n && c <= n && all >= 0; c++) {
		uint64_t lo = c ? cut[c - 1] : 0, hi = cut[c];
		size_t k = 0;

		for (size_t i = 0; i < m; i++) {
			uint64_t a, z;

			extent(&w->b[ids[i]], mem, &a, &z);
			if (a >= lo && z <= hi)
				sub[k++] = ids[i];
		}
		r = walk_piece(w, sub, k);
		all = r < 0 ? -1 : all && r;
	}
	if (all == 1)
		report_core(w, ids, m, n ? mem : -1, n + 1, ratio);
	free(cut);
	free(sub);
	return all < 0 ? -1 : 0;
}

static int cores(const char *fam, const char *ns, const char *seeds, unsigned int ms)
{
	struct walk w = { .ms = ms };
	uint32_t *ids = NULL;
	struct vnpu_plan_buffer *b;
	size_t count;
	uint64_t opt;
	int r = -1;

	b = instance(fam, ns, seeds, 1, &count, &opt);
	if (!b)
		return 1;
	/* instance() checked the seed: planned with it, as the benchmark does. */
	w.seed = strtoull(seeds, NULL, 10);
	w.b = b;
	w.scratch = malloc(count * sizeof(*w.scratch));
	w.keys = malloc(2 * count * sizeof(*w.keys));
	ids = malloc(count * sizeof(*ids));
	if (w.scratch && w.keys && ids) {
		for (size_t i = 0; i < count; i++)
			ids[i] = (uint32_t)i;
		r = walk_piece(&w, ids, count);
	}
	if (r >= 0)
		printf("%s %zu seed %s: pieces planned %u, cores %u\n", fam, count, seeds, w.pieces,
		       w.cores);
	free(ids);
	free(w.keys);
	free(w.scratch);
	free(b);
	return r < 0;
}

struct row {
	unsigned int runs, at_opt;
	double worst, sum_ratio, sum_ms, max_ms;
	size_t buffers;
	uint64_t worst_seed;
};

/*
 * Plans one instance into @r, naming it on stderr when @misses and it is
 * not at the optimum; returns -1 when a plan fails the checker.
 */
static int run_one(unsigned int fam, size_t n, uint64_t seed, unsigned int ms, int misses,
		   struct row *r)
{
	struct vnpu_plan_options o = { .strategy = strategy, .time_limit_ms = ms,
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
	if (misses && arena != opt)
		fprintf(stderr, "miss: %s %zu seed %" PRIu64 ": %.4f in %.0f ms\n",
			pgen_family_name(fam), count, seed, ratio, t);
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
		{ "deterministic", no_argument, NULL, 'd' },
		{ "first-seed", required_argument, NULL, 'S' },
		{ "misses", no_argument, NULL, 'm' },
		{ "emit", no_argument, NULL, 'e' },
		{ "cores", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	size_t sizes[32] = { 200, 400, 700, 1500, 3000, 6000 }, nsizes = 6;
	unsigned int fams[PGEN_FAMILIES], nfams = PGEN_FAMILIES, ms = 0, seeds = 50;
	uint64_t first_seed = 1, v;
	int opt, do_emit = 0, do_cores = 0, misses = 0;

	for (unsigned int f = 0; f < PGEN_FAMILIES; f++)
		fams[f] = f;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (number("--seeds", optarg, 1, BENCH_MAX_SEEDS, &v))
				return 1;
			seeds = (unsigned int)v;
			break;
		case 'n': {
			char *tok = strtok(optarg, ",");

			for (nsizes = 0; tok; tok = strtok(NULL, ",")) {
				if (nsizes == sizeof(sizes) / sizeof(sizes[0])) {
					fprintf(stderr, "planner_bench: more than %zu sizes\n",
						nsizes);
					return 1;
				}
				if (number("--sizes", tok, 1, BENCH_MAX_BUFFERS, &v))
					return 1;
				sizes[nsizes++] = v;
			}
			if (!nsizes) {
				fprintf(stderr, "planner_bench: --sizes lists no size\n");
				return 1;
			}
			break;
		}
		case 'f': {
			char *tok = strtok(optarg, ",");

			for (nfams = 0; tok; tok = strtok(NULL, ",")) {
				int f = family_of(tok);

				if (f < 0) {
					fprintf(stderr, "planner_bench: unknown family '%s'\n", tok);
					return 1;
				}
				if (nfams == PGEN_FAMILIES) {
					fprintf(stderr, "planner_bench: more than %u families\n",
						nfams);
					return 1;
				}
				fams[nfams++] = (unsigned int)f;
			}
			if (!nfams) {
				fprintf(stderr, "planner_bench: --families lists no family\n");
				return 1;
			}
			break;
		}
		case 't':
			if (number("--time-limit", optarg, 0, UINT32_MAX, &v))
				return 1;
			ms = (unsigned int)v;
			break;
		case 'd':
			strategy |= VNPU_PLAN_DETERMINISTIC;
			break;
		case 'S':
			if (number("--first-seed", optarg, 0, UINT64_MAX - BENCH_MAX_SEEDS, &v))
				return 1;
			first_seed = v;
			break;
		case 'm':
			misses = 1;
			break;
		case 'e':
			do_emit = 1;
			break;
		case 'c':
			do_cores = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (do_emit || do_cores) {
		if (argc - optind != 3 || (do_emit && do_cores) || misses) {
			usage(stderr);
			return 1;
		}
		if (do_cores)
			return cores(argv[optind], argv[optind + 1], argv[optind + 2], ms);
		return emit(argv[optind], argv[optind + 1], argv[optind + 2]);
	}
	if (optind < argc) {
		usage(stderr);
		return 1;
	}
	printf("| family | buffers | seeds | at optimum | worst ratio (seed) | mean ratio"
	       " | mean ms | max ms |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	for (unsigned int fi = 0; fi < nfams; fi++) {
		for (size_t si = 0; si < nsizes; si++) {
			struct row r = { 0 };
			unsigned int f = fams[fi];

			for (unsigned int k = 0; k < seeds; k++)
				if (run_one(f, sizes[si], first_seed + k, ms, misses, &r))
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
