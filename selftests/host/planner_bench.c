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
 *   planner_bench --strips FAMILY N SEED [--nodes N] [--sides MS]
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
 *
 * --strips walks the same cuts and, on every slab the committed cuts would
 * search a strip in (a piece cut in memory, less its buffers live over all
 * its span, when no instant cuts those), runs their strip search from each
 * buffer live first (pcs_probe(), N nodes per buffer of the slab, 20 as
 * they do by default) and judges its first balanced set against every plan
 * the witness's cuts allow (pieces cut in memory restacked in any order):
 * a strip of one of them, one but for buffers live in one section only,
 * or a near miss; or no set found (none exists, or not within the nodes).
 * The judge knows the witness's plans only: a set judged a near miss may
 * still tile, another way. With --sides, both sides of every set are
 * planned by the planner (vnpu_plan_compute(), MS ms each on the work
 * clock, as --cores plans a piece), and the sets whose sides both tile
 * are counted, those judged strips (how far the planner gets on sides of
 * that size in MS) and the others apart.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner_gen.h"
#include "mm/planner_search.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: planner_bench [--seeds N] [--sizes N,N,...] [--families NAME,...]\n"
		"                     [--time-limit MS] [--deterministic] [--first-seed N]\n"
		"                     [--misses]\n"
		"       planner_bench --emit FAMILY N SEED\n"
		"       planner_bench --cores FAMILY N SEED [--time-limit MS] [--deterministic]\n"
		"       planner_bench --strips FAMILY N SEED [--nodes N] [--sides MS]\n");
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

/*
 * The buffers of @ids (@m) within the @c-th piece between the cuts @cut
 * along time (@mem 0) or memory, into @sub; returns how many.
 */
static size_t piece(const struct walk *w, const uint32_t *ids, size_t m, int mem,
		    const uint64_t *cut, size_t c, uint32_t *sub)
{
	uint64_t lo = c ? cut[c - 1] : 0, hi = cut[c];
	size_t k = 0;

	for (size_t i = 0; i < m; i++) {
		uint64_t a, z;

		extent(&w->b[ids[i]], mem, &a, &z);
		if (a >= lo && z <= hi)
			sub[k++] = ids[i];
	}
	return k;
}

/*
 * Plans the buffers @ids (@m) alone, with the options @o, into *@arena;
 * -1 (said why) when the plan is bad.
 */
static int plan_alone(struct walk *w, const uint32_t *ids, size_t m,
		      const struct vnpu_plan_options *o, uint64_t *arena)
{
	struct vnpu_plan_stats st;

	for (size_t i = 0; i < m; i++) {
		w->scratch[i] = w->b[ids[i]];
		w->scratch[i].offset = 0;
	}
	/* Checked apart from the planner, as every plan of the benchmark. */
	if (vnpu_plan_compute(w->scratch, m, o, &st) != VNPU_SUCCESS ||
	    pgen_check(w->scratch, m, arena) || *arena != st.arena_size) {
		fprintf(stderr, "planner_bench: a piece of %zu buffers: bad plan\n", m);
		return -1;
	}
	return 0;
}

/* Plans the piece alone; 1 when at its optimum (its witness's height). */
static int plan_piece(struct walk *w, const uint32_t *ids, size_t m, double *ratio)
{
	struct vnpu_plan_options o = { .strategy = strategy, .time_limit_ms = w->ms,
				       .seed = w->seed };
	uint64_t lo = UINT64_MAX, hi = 0, arena;

	for (size_t i = 0; i < m; i++) {
		lo = w->b[ids[i]].offset < lo ? w->b[ids[i]].offset : lo;
		if (w->b[ids[i]].offset + w->b[ids[i]].size > hi)
			hi = w->b[ids[i]].offset + w->b[ids[i]].size;
	}
	w->pieces++;
	if (plan_alone(w, ids, m, &o, &arena))
		return -1;
	*ratio = (double)arena / (double)(hi - lo);
	return arena == hi - lo;
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
		r = walk_piece(w, sub, piece(w, ids, m, mem, cut, c, sub));
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

/*
 * --strips: the strip search of the committed cuts (pcs_probe()) judged on
 * the slabs of the witness, where the strips that exist are known.
 */
enum { PROBE_STRIP, PROBE_LOOSE, PROBE_NEAR, PROBE_NONE, PROBE_LIMIT, PROBE_KINDS };

struct strips {
	struct walk w;
	struct sks_problem pb;
	uint64_t *times;	/* the instant each section starts at */
	uint64_t per_buffer;	/* nodes per buffer of a slab for each search */
	uint64_t unit;		/* the gcd of the sizes: widths are counted in it */
	uint64_t nodes;		/* nodes searched in all */
	uint8_t *in;		/* per buffer of the instance: in the set judged */
	uint8_t *slab_in;	/* per buffer of a slab: pcs_probe()'s set */
	unsigned int sides_ms;	/* --sides: ms per side, 0 for none */
	uint32_t *side;		/* a side's buffers */
	/*
	 * Sets whose sides were planned and those both of whose sides
	 * tile: judged strips, then the others.
	 */
	unsigned int sides[4], sides_large[4];
	/*
	 * Slabs probed, those reported, and the searches by what they found;
	 * the same on the slabs of STRIPS_LARGE_MIN buffers or more.
	 */
	unsigned int slabs, reported, found[PROBE_KINDS];
	unsigned int large, found_large[PROBE_KINDS];
};

/* Slabs of at least this many buffers get a line of their own. */
#define STRIPS_REPORT_MIN 100u
/*
 * and those of at least this many a summary of their own: where the
 * planner's misses come from (Documentation/planner.rst).
 */
#define STRIPS_LARGE_MIN 500u
/* Nodes per buffer of a slab for each search (PCS_COMMIT_NODES), and at most. */
#define PROBE_NODES 20u
#define PROBE_NODES_MAX 1000000u
/* --sides: the most ms per side. */
#define SIDES_MS_MAX 60000u

/* A bitset of widths 0 to @bits - 1, in units. */
struct widths {
	uint64_t *w;
	size_t words, bits;
};

static int widths_new(struct widths *v, size_t bits)
{
	v->bits = bits;
	v->words = bits / 64 + 1;
	v->w = calloc(v->words, sizeof(*v->w));
	return v->w ? 0 : -1;
}

static int widths_has(const struct widths *v, uint64_t k)
{
	return k < v->bits && (v->w[k / 64] >> (k % 64) & 1);
}

static void widths_set(struct widths *v, uint64_t k)
{
	if (k < v->bits)
		v->w[k / 64] |= 1ull << (k % 64);
}

/* @dst |= @src << @k, what falls beyond dst's widths dropped. */
static void widths_or_shifted(struct widths *dst, const struct widths *src, uint64_t k)
{
	size_t q = k / 64, r = k % 64;

	for (size_t i = dst->words; i-- > q;) {
		size_t j = i - q;
		uint64_t v = src->w[j] << r;

		if (r && j)
			v |= src->w[j - 1] >> (64 - r);
		dst->w[i] |= v;
	}
	if (dst->bits % 64)
		dst->w[dst->words - 1] &= (1ull << (dst->bits % 64)) - 1;
}

/* The witness's extent of @ids (@m buffers) in memory, in units. */
static uint64_t witness_width(const struct strips *st, const uint32_t *ids, size_t m)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < m; i++) {
		const struct vnpu_plan_buffer *b = &st->w.b[ids[i]];

		lo = b->offset < lo ? b->offset : lo;
		hi = b->offset + b->size > hi ? b->offset + b->size : hi;
	}
	return (hi - lo) / st->unit;
}

/*
 * The widths of the bottom strip that holds exactly the buffers of @ids
 * (@m) marked in st->in (@loose: a buffer live in one section either way)
 * in the plans the witness's cuts allow: pieces cut in time side by side,
 * pieces cut in memory stacked in any order (each one restacked so
 * again), into @out (all clear, widths up to the slab's). A piece without
 * a cut has none. Returns -1 out of memory.
 */
static int bottom_widths(struct strips *st, uint32_t *ids, size_t m, int loose,
			 struct widths *out)
{
	struct walk *w = &st->w;
	struct widths full = { 0 }, some = { 0 }, part = { 0 }, next = { 0 };
	uint64_t *cut = NULL;
	uint32_t *sub = NULL;
	size_t n = 0;
	int mem, r = -1;

	if (m == 1) {
		uint32_t i = ids[0];
		int one = st->pb.t1[i] - st->pb.t0[i] == 1;

		if (!st->in[i] || (loose && one))
			widths_set(out, 0);
		if (st->in[i] || (loose && one))
			widths_set(out, st->w.b[i].size / st->unit);
		return 0;
	}
	cut = malloc((m + 1) * sizeof(*cut));
	sub = malloc(m * sizeof(*sub));
	if (!cut || !sub)
		goto out;
	for (mem = 0; mem < 2 && !n; mem++)
		n = cuts(w, ids, m, mem, cut);
	mem--;
	if (!n) {
		r = 0;
		goto out;
	}
	/*
	 * In time, full: the widths every piece allows. In memory, full: the
	 * widths made of whole pieces (the strip's top between two), some:
	 * those where the strip's top splits one piece.
	 */
	if (widths_new(&full, out->bits) || widths_new(&some, out->bits) ||
	    widths_new(&part, out->bits) || widths_new(&next, out->bits))
		goto out;
	widths_set(&full, 0);
	if (!mem)
		memset(full.w, 0xff, full.words * sizeof(*full.w));
	for (size_t c = 0; c <= n; c++) {
		size_t k = piece(w, ids, m, mem, cut, c, sub);
		uint64_t wc;

		if (!k)
			continue;
		memset(part.w, 0, part.words * sizeof(*part.w));
		if (bottom_widths(st, sub, k, loose, &part))
			goto out;
		if (!mem) {
			for (size_t i = 0; i < full.words; i++)
				full.w[i] &= part.w[i];
			continue;
		}
		wc = witness_width(st, sub, k);
		memset(next.w, 0, next.words * sizeof(*next.w));
		/* The piece wholly above the strip, or wholly in it. */
		if (widths_has(&part, 0))
			widths_or_shifted(&next, &some, 0);
		if (widths_has(&part, wc))
			widths_or_shifted(&next, &some, wc);
		for (uint64_t x = 1; x < wc && x < part.bits; x++)
			if (widths_has(&part, x))
				widths_or_shifted(&next, &full, x);
		memcpy(some.w, next.w, next.words * sizeof(*next.w));
		memset(next.w, 0, next.words * sizeof(*next.w));
		if (widths_has(&part, 0))
			widths_or_shifted(&next, &full, 0);
		if (widths_has(&part, wc))
			widths_or_shifted(&next, &full, wc);
		memcpy(full.w, next.w, next.words * sizeof(*next.w));
	}
	for (size_t i = 0; i < out->words; i++)
		out->w[i] = full.w[i] | (mem ? some.w[i] : 0);
	if (out->bits % 64)
		out->w[out->words - 1] &= (1ull << (out->bits % 64)) - 1;
	r = 0;
out:
	free(full.w);
	free(some.w);
	free(part.w);
	free(next.w);
	free(cut);
	free(sub);
	return r;
}

static const char *const probe_kind[PROBE_KINDS] = {
	"strips", "strips but for one-section buffers", "near misses", "no set",
	"node limit"
};

/*
 * The judge checked on sets known to be strips: each piece the witness
 * cuts the slab @ids (@m buffers, @width) into in memory. Returns -1 (said
 * why) when one is not judged a strip or out of memory.
 */
static int witness_strips(struct strips *st, uint32_t *ids, size_t m, uint64_t width)
{
	uint64_t *cut = malloc((m + 1) * sizeof(*cut));
	uint32_t *sub = malloc(m * sizeof(*sub));
	struct widths exact = { 0 };
	size_t n;
	int r = -1;

	if (!cut || !sub || widths_new(&exact, width / st->unit + 1))
		goto out;
	n = cuts(&st->w, ids, m, 1, cut);
	for (size_t c = 0; c <= n; c++) {
		size_t k = piece(&st->w, ids, m, 1, cut, c, sub);

		memset(st->in, 0, st->pb.n);
		for (size_t i = 0; i < k; i++)
			st->in[sub[i]] = 1;
		memset(exact.w, 0, exact.words * sizeof(*exact.w));
		if (bottom_widths(st, ids, m, 0, &exact))
			goto out;
		/* Its buffers' extent: the space of those live over all the slab is left out. */
		if (!widths_has(&exact, witness_width(st, sub, k))) {
			fprintf(stderr, "planner_bench: piece %zu in memory of a slab of %zu "
				"buffers in the witness is not judged a strip\n", c + 1, m);
			r = -2;
			goto out;
		}
	}
	r = 0;
out:
	if (r == -1)
		fprintf(stderr, "planner_bench: out of memory\n");
	free(cut);
	free(sub);
	free(exact.w);
	return r < 0 ? -1 : 0;
}

/* Ends a report line: with --sides, how many sets tile on both sides. */
static void print_sides(const struct strips *st, const unsigned int sides[4])
{
	if (st->sides_ms)
		printf("; both sides tile: strips %u of %u, others %u of %u", sides[1], sides[0],
		       sides[3], sides[2]);
	printf("\n");
}

/*
 * --sides: the set in st->in of the slab @ids (@m buffers, @width), its
 * in side @set wide, planned side by side by the planner (on the work
 * clock: the same plans on every run). Returns 1 when both sides tile
 * (each plan at its side's width), 0 when not, -1 when a plan is bad.
 */
static int sides_tile(struct strips *st, const uint32_t *ids, size_t m, uint64_t set,
		      uint64_t width)
{
	struct vnpu_plan_options o = { .strategy = VNPU_PLAN_BEST | VNPU_PLAN_DETERMINISTIC,
				       .time_limit_ms = st->sides_ms };
	uint64_t arena;
	int tiles = 1;

	for (int in = 1; in >= 0 && tiles; in--) {
		size_t k = 0;

		for (size_t i = 0; i < m; i++)
			if (st->in[ids[i]] == in)
				st->side[k++] = ids[i];
		if (plan_alone(&st->w, st->side, k, &o, &arena))
			return -1;
		tiles = arena == (in ? set : width - set);
	}
	return tiles;
}

/*
 * The slab @ids (@m buffers, none live over its whole span, no cut in
 * time): the strip search from each buffer live first, each set judged.
 */
static int probe_slab(struct strips *st, uint32_t *ids, size_t m, size_t strips)
{
	const struct sks_problem *pb = &st->pb;
	uint32_t t0 = UINT32_MAX, t1 = 0, first = 0;
	unsigned int found[PROBE_KINDS] = { 0 }, sides[4] = { 0 };
	uint64_t width = 0;
	struct widths exact = { 0 }, loose = { 0 };
	int r = -1;

	for (size_t i = 0; i < m; i++)
		t0 = pb->t0[ids[i]] < t0 ? pb->t0[ids[i]] : t0;
	for (size_t i = 0; i < m; i++) {
		t1 = pb->t1[ids[i]] > t1 ? pb->t1[ids[i]] : t1;
		width += pb->t0[ids[i]] == t0 ? pb->size[ids[i]] : 0;
	}
	if (widths_new(&exact, width / st->unit + 1) || widths_new(&loose, width / st->unit + 1)) {
		fprintf(stderr, "planner_bench: out of memory\n");
		goto out;
	}
	if (witness_strips(st, ids, m, width))
		goto out;
	for (size_t c0 = 0; c0 < m; c0++) {
		uint64_t set = 0;
		int k;

		if (pb->t0[ids[c0]] != t0)
			continue;
		first++;
		k = pcs_probe(pb, ids, (uint32_t)m, width, (uint32_t)c0, st->per_buffer * m,
			      st->slab_in, &st->nodes);
		if (k == SKS_NOMEM) {
			fprintf(stderr, "planner_bench: out of memory\n");
			goto out;
		}
		if (k != SKS_FOUND) {
			found[k == SKS_INFEASIBLE ? PROBE_NONE : PROBE_LIMIT]++;
			continue;
		}
		memset(st->in, 0, pb->n);
		for (size_t i = 0; i < m; i++) {
			st->in[ids[i]] = st->slab_in[i];
			set += st->in[ids[i]] && pb->t0[ids[i]] == t0 ? pb->size[ids[i]] : 0;
		}
		memset(exact.w, 0, exact.words * sizeof(*exact.w));
		memset(loose.w, 0, loose.words * sizeof(*loose.w));
		if (bottom_widths(st, ids, m, 0, &exact) || bottom_widths(st, ids, m, 1, &loose)) {
			fprintf(stderr, "planner_bench: out of memory\n");
			goto out;
		}
		k = widths_has(&exact, set / st->unit) ? PROBE_STRIP :
		    widths_has(&loose, set / st->unit) ? PROBE_LOOSE : PROBE_NEAR;
		found[k]++;
		if (st->sides_ms) {
			int tiles = sides_tile(st, ids, m, set, width);

			if (tiles < 0)
				goto out;
			sides[k == PROBE_STRIP ? 0 : 2]++;
			sides[k == PROBE_STRIP ? 1 : 3] += (unsigned int)tiles;
		}
	}
	st->slabs++;
	st->large += m >= STRIPS_LARGE_MIN;
	for (int k = 0; k < PROBE_KINDS; k++) {
		st->found[k] += found[k];
		st->found_large[k] += m >= STRIPS_LARGE_MIN ? found[k] : 0;
	}
	for (int k = 0; k < 4; k++) {
		st->sides[k] += sides[k];
		st->sides_large[k] += m >= STRIPS_LARGE_MIN ? sides[k] : 0;
	}
	r = 0;
	if (m < STRIPS_REPORT_MIN)
		goto out;
	st->reported++;
	printf("slab: %zu buffers, %zu pieces in memory, %u live first; time [%" PRIu64 ", %"
	       PRIu64 "), width %" PRIu64 ";", m, strips, first, st->times[t0],
	       st->times[t1], width);
	for (int k = 0; k < PROBE_KINDS; k++)
		printf(" %s %u%s", probe_kind[k], found[k], k + 1 < PROBE_KINDS ? "," : "");
	print_sides(st, sides);
out:
	free(exact.w);
	free(loose.w);
	return r;
}

/*
 * Walks the witness's cuts from the piece @ids (@m buffers): where a piece
 * is cut in memory, its buffers not live over its whole span are the slab
 * the committed cuts search a strip in, probed when no instant cuts them.
 */
static int walk_strips(struct strips *st, uint32_t *ids, size_t m)
{
	struct walk *w = &st->w;
	uint64_t *cut = NULL, lo = UINT64_MAX, hi = 0;
	uint32_t *sub = NULL;
	size_t n = 0, k = 0;
	int mem, r = -1;

	if (m <= 1)
		return 0;
	cut = malloc((m + 1) * sizeof(*cut));
	sub = malloc(m * sizeof(*sub));
	if (!cut || !sub) {
		fprintf(stderr, "planner_bench: out of memory\n");
		goto out;
	}
	for (mem = 0; mem < 2 && !n; mem++)
		n = cuts(w, ids, m, mem, cut);
	mem--;
	r = 0;
	if (!n)
		goto out;
	if (mem) {
		for (size_t i = 0; i < m; i++) {
			lo = w->b[ids[i]].first < lo ? w->b[ids[i]].first : lo;
			hi = w->b[ids[i]].last > hi ? w->b[ids[i]].last : hi;
		}
		for (size_t i = 0; i < m; i++)
			if (w->b[ids[i]].first != lo || w->b[ids[i]].last != hi)
				sub[k++] = ids[i];
		/* The cuts of the slab go where the piece's are no longer needed. */
		if (k > 1 && !cuts(w, sub, k, 0, cut))
			r = probe_slab(st, sub, k, cuts(w, sub, k, 1, cut) + 1);
		if (r)
			goto out;
		n = cuts(w, ids, m, mem, cut);
	}
	for (size_t c = 0; c <= n && !r; c++)
		r = walk_strips(st, sub, piece(w, ids, m, mem, cut, c, sub));
out:
	free(cut);
	free(sub);
	return r;
}

/* --strips FAMILY N SEED: the strip search on every slab of the witness. */
static int strips(const char *fam, const char *ns, const char *seeds, uint64_t per_buffer,
		  unsigned int sides_ms)
{
	struct strips st = { .per_buffer = per_buffer, .sides_ms = sides_ms };
	uint32_t *ids = NULL, *t0 = NULL, *t1 = NULL;
	uint64_t *size = NULL, *align = NULL, *total = NULL, opt;
	struct vnpu_plan_buffer *b;
	size_t count, nt = 0;
	int r = -1;

	switch (family_of(fam)) {
	case PGEN_GUILLOTINE:
	case PGEN_GUILLOTINE_FINE:
	case PGEN_GUILLOTINE_AREA:
	case PGEN_GUILLOTINE_ASPECT:
		break;
	default:
		/* Unknown families are named by instance(). */
		if (family_of(fam) >= 0) {
			fprintf(stderr, "planner_bench: family '%s' is not cut by guillotine cuts\n",
				fam);
			return 1;
		}
	}
	b = instance(fam, ns, seeds, 1, &count, &opt);
	if (!b)
		return 1;
	st.w.b = b;
	st.w.keys = malloc(2 * count * sizeof(*st.w.keys));
	st.times = malloc(2 * count * sizeof(*st.times));
	ids = malloc(count * sizeof(*ids));
	t0 = malloc(count * sizeof(*t0));
	t1 = malloc(count * sizeof(*t1));
	size = malloc(count * sizeof(*size));
	align = malloc(count * sizeof(*align));
	total = calloc(2 * count, sizeof(*total));
	st.in = malloc(count);
	st.slab_in = malloc(count);
	st.w.scratch = malloc(count * sizeof(*st.w.scratch));
	st.side = malloc(count * sizeof(*st.side));
	if (!st.w.keys || !st.times || !ids || !t0 || !t1 || !size || !align || !total ||
	    !st.in || !st.slab_in || !st.w.scratch || !st.side) {
		fprintf(stderr, "planner_bench: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		st.times[2 * i] = b[i].first;
		st.times[2 * i + 1] = b[i].last;
	}
	nt = distinct(st.times, 2 * count);
	for (size_t i = 0; i < count; i++) {
		const uint64_t *a = bsearch(&b[i].first, st.times, nt, sizeof(*a), cmp_u64);
		const uint64_t *z = bsearch(&b[i].last, st.times, nt, sizeof(*z), cmp_u64);

		ids[i] = (uint32_t)i;
		t0[i] = (uint32_t)(a - st.times);
		t1[i] = (uint32_t)(z - st.times);
		size[i] = b[i].size;
		align[i] = 1;
		st.unit = vnpu_plan_gcd(st.unit, b[i].size);
		for (uint32_t k = t0[i]; k < t1[i]; k++)
			total[k] += b[i].size;
	}
	st.pb = (struct sks_problem){ .n = count, .size = size, .align = align, .t0 = t0,
				      .t1 = t1, .nsec = (uint32_t)(nt - 1), .sec_total = total };
	r = walk_strips(&st, ids, count);
	if (!r) {
		printf("slabs of %u buffers or more: %u;", STRIPS_LARGE_MIN, st.large);
		for (int k = 0; k < PROBE_KINDS; k++)
			printf(" %s %u%s", probe_kind[k], st.found_large[k],
			       k + 1 < PROBE_KINDS ? "," : "");
		print_sides(&st, st.sides_large);
		printf("%s %zu seed %s: slabs %u (%u of %u buffers or more), %" PRIu64
		       " nodes;", fam, count, seeds, st.slabs, st.reported, STRIPS_REPORT_MIN,
		       st.nodes);
		for (int k = 0; k < PROBE_KINDS; k++)
			printf(" %s %u%s", probe_kind[k], st.found[k],
			       k + 1 < PROBE_KINDS ? "," : "");
		print_sides(&st, st.sides);
	}
out:
	free(st.w.keys);
	free(st.times);
	free(ids);
	free(t0);
	free(t1);
	free(size);
	free(align);
	free(total);
	free(st.in);
	free(st.slab_in);
	free(st.w.scratch);
	free(st.side);
	free(b);
	return r != 0;
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
		{ "strips", no_argument, NULL, 'p' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "sides", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	size_t sizes[32] = { 200, 400, 700, 1500, 3000, 6000 }, nsizes = 6;
	unsigned int fams[PGEN_FAMILIES], nfams = PGEN_FAMILIES, ms = 0, seeds = 50;
	uint64_t first_seed = 1, v, per_buffer = PROBE_NODES;
	unsigned int sides_ms = 0;
	int opt, do_emit = 0, do_cores = 0, do_strips = 0, nodes_set = 0, misses = 0;
	int planning_set = 0;	/* --time-limit or --deterministic: nothing --strips uses */

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
			planning_set = 1;
			break;
		case 'd':
			strategy |= VNPU_PLAN_DETERMINISTIC;
			planning_set = 1;
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
		case 'p':
			do_strips = 1;
			break;
		case 'N':
			if (number("--nodes", optarg, 1, PROBE_NODES_MAX, &v))
				return 1;
			per_buffer = v;
			nodes_set = 1;
			break;
		case 'D':
			if (number("--sides", optarg, 1, SIDES_MS_MAX, &v))
				return 1;
			sides_ms = (unsigned int)v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (do_emit + do_cores + do_strips > 1 || ((nodes_set || sides_ms) && !do_strips) ||
	    (do_strips && planning_set)) {
		usage(stderr);
		return 1;
	}
	if (do_emit || do_cores || do_strips) {
		if (argc - optind != 3 || misses) {
			usage(stderr);
			return 1;
		}
		if (do_strips)
			return strips(argv[optind], argv[optind + 1], argv[optind + 2], per_buffer,
				      sides_ms);
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
