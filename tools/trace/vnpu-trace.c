// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-trace: reads the Chrome Trace Event files VNPU_TRACE=FILE writes.
 *
 *   vnpu-trace summary FILE   per-stream busy time, queue wait percentiles,
 *                             longest operations, engine utilization
 *   vnpu-trace check FILE     structure: every line an event, slices of a
 *                             track nest, every flow start has its end
 *   vnpu-trace repair FILE [OUT]  close a file cut short by a crash
 *
 * The runtime writes one event per line, so the tools read line by line;
 * a file truncated by a crash loses at most its last, partial line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ev {
	char ph;
	char name[96];
	int tid;
	double ts, dur, wait;
	unsigned long long id;
};

struct track {
	int tid;
	char name[128];
};

static struct ev *evs;
static int nev, capev;
static struct track tracks[256];
static int ntracks;
static int truncated, bad_lines;

/* Value of "key": in @line as a string (copied) or a number. */
static const char *find_key(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	return p ? p + strlen(pat) : NULL;
}

static void get_str(const char *line, const char *key, char *out, size_t len)
{
	const char *p = find_key(line, key);
	size_t n = 0;

	out[0] = 0;
	if (!p || *p != '"')
		return;
	for (p++; *p && *p != '"' && n + 1 < len; p++) {
		if (*p == '\\' && p[1])
			p++;
		out[n++] = *p;
	}
	out[n] = 0;
}

static double get_num(const char *line, const char *key, double def)
{
	const char *p = find_key(line, key);

	return p ? strtod(p, NULL) : def;
}

/* Reads @path; returns the text, with *complete set if it ends in "]}". */
static char *slurp(const char *path, int *complete)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	if (!f) {
		perror(path);
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc(len + 1);
	if (!buf || fread(buf, 1, len, f) != (size_t)len) {
		fprintf(stderr, "vnpu-trace: cannot read %s\n", path);
		fclose(f);
		free(buf);
		return NULL;
	}
	buf[len] = 0;
	fclose(f);
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	*complete = len >= 2 && buf[len - 1] == '}' && buf[len - 2] == ']';
	return buf;
}

/* Parses the events; lines that are not complete events are counted. */
static int load(const char *path)
{
	int complete, lineno = 0;
	char *buf = slurp(path, &complete), *save = NULL, *line;

	if (!buf)
		return -1;
	if (strncmp(buf, "{\"displayTimeUnit\"", 18) && strncmp(buf, "{\"traceEvents\"", 14)) {
		fprintf(stderr, "vnpu-trace: %s is not a VNPU_TRACE file\n", path);
		free(buf);
		return -1;
	}
	truncated = !complete;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t len;
		struct ev e = { 0 };
		char ph[4];

		if (lineno++ == 0 || !strcmp(line, "]}"))
			continue;
		if (*line == ',')
			line++;
		len = strlen(line);
		if (len < 2 || line[0] != '{' || line[len - 1] != '}') {
			bad_lines++;
			continue;
		}
		get_str(line, "ph", ph, sizeof(ph));
		e.ph = ph[0];
		get_str(line, "name", e.name, sizeof(e.name));
		e.tid = (int)get_num(line, "tid", 0);
		e.ts = get_num(line, "ts", 0);
		e.dur = get_num(line, "dur", 0);
		e.wait = get_num(line, "queue_wait_us", -1);
		e.id = (unsigned long long)get_num(line, "id", 0);
		if (e.ph == 'M' && !strcmp(e.name, "thread_name") && ntracks < 256) {
			char *a = strstr(line, "\"args\":");

			tracks[ntracks].tid = e.tid;
			if (a)
				get_str(a, "name", tracks[ntracks].name, sizeof(tracks[ntracks].name));
			ntracks++;
		}
		if (nev == capev) {
			capev = capev ? capev * 2 : 1024;
			evs = realloc(evs, capev * sizeof(*evs));
			if (!evs)
				return -1;
		}
		evs[nev++] = e;
	}
	free(buf);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pctl(const double *v, int n, double p)
{
	int i = (int)(p * (n - 1) + 0.5);

	return n ? v[i] : 0;
}

static const char *track_name(int tid)
{
	for (int i = 0; i < ntracks; i++)
		if (tracks[i].tid == tid)
			return tracks[i].name;
	return "?";
}

static int is_device(const struct ev *e)
{
	return e->ph == 'X' && e->tid >= 1000000;
}

static int cmp_dur_desc(const void *a, const void *b)
{
	const struct ev *x = *(const struct ev *const *)a, *y = *(const struct ev *const *)b;

	return x->dur < y->dur ? 1 : x->dur > y->dur ? -1 : 0;
}

static int summary(void)
{
	double t0 = 1e300, t1 = 0, cls_busy[2] = { 0, 0 };
	int cls_tracks[2] = { 0, 0 }, ndev = 0;
	const struct ev **sorted;

	for (int i = 0; i < nev; i++) {
		if (!is_device(&evs[i]))
			continue;
		ndev++;
		if (evs[i].ts < t0)
			t0 = evs[i].ts;
		if (evs[i].ts + evs[i].dur > t1)
			t1 = evs[i].ts + evs[i].dur;
	}
	if (truncated)
		printf("note: the trace was cut short (no closing \"]}\"); read %d complete events%s\n",
		       nev, bad_lines ? ", dropped a partial last line" : "");
	if (!ndev) {
		printf("no device work in the trace\n");
		return 0;
	}
	printf("device work: %d jobs over %.3f ms\n\n", ndev, (t1 - t0) / 1000);
	printf("%-44s %6s %10s %6s %9s %9s %9s %9s\n", "STREAM", "JOBS", "BUSY ms", "BUSY%",
	       "WAIT p50", "p90", "p99", "max us");
	for (int t = 0; t < ntracks; t++) {
		double busy = 0, *w = malloc(sizeof(double) * (nev + 1));
		int n = 0, jobs = 0, cls = strstr(tracks[t].name, "(copy") != NULL;

		if (tracks[t].tid < 1000000 || !w) {
			free(w);
			continue;
		}
		for (int i = 0; i < nev; i++) {
			if (!is_device(&evs[i]) || evs[i].tid != tracks[t].tid)
				continue;
			jobs++;
			busy += evs[i].dur;
			if (evs[i].wait >= 0)
				w[n++] = evs[i].wait;
		}
		qsort(w, n, sizeof(*w), cmp_double);
		cls_busy[cls] += busy;
		cls_tracks[cls]++;
		printf("%-44.44s %6d %10.3f %5.1f%% %9.1f %9.1f %9.1f %9.1f\n", tracks[t].name, jobs,
		       busy / 1000, t1 > t0 ? 100 * busy / (t1 - t0) : 0, pctl(w, n, 0.5),
		       pctl(w, n, 0.9), pctl(w, n, 0.99), n ? w[n - 1] : 0);
		free(w);
	}
	printf("\nqueue wait = device start - submit (us)\n\nlongest operations:\n");
	sorted = malloc(sizeof(*sorted) * ndev);
	if (!sorted)
		return 1;
	ndev = 0;
	for (int i = 0; i < nev; i++)
		if (is_device(&evs[i]))
			sorted[ndev++] = &evs[i];
	qsort(sorted, ndev, sizeof(*sorted), cmp_dur_desc);
	for (int i = 0; i < ndev && i < 10; i++)
		printf("  %10.3f ms  %-28s %s\n", sorted[i]->dur / 1000, sorted[i]->name,
		       track_name(sorted[i]->tid));
	free(sorted);
	printf("\nengine utilization over the device span:\n");
	for (int c = 0; c < 2; c++)
		if (cls_tracks[c])
			printf("  %-8s %5.1f%% (%d stream%s, %.3f ms busy)\n", c ? "copy" : "compute",
			       100 * cls_busy[c] / (t1 - t0), cls_tracks[c],
			       cls_tracks[c] == 1 ? "" : "s", cls_busy[c] / 1000);
	return 0;
}

static int cmp_ts(const void *a, const void *b)
{
	const struct ev *x = *(const struct ev *const *)a, *y = *(const struct ev *const *)b;

	if (x->tid != y->tid)
		return x->tid - y->tid;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->dur < y->dur ? 1 : x->dur > y->dur ? -1 : 0;
}

/* Slices of one track must nest: each starts after the previous ends or
 * lies inside it (up to 1 ns of rounding). */
static int check(void)
{
	const struct ev **x = malloc(sizeof(*x) * (nev + 1));
	int n = 0, errors = 0, flows_s = 0, flows_f = 0;

	if (!x)
		return 1;
	for (int i = 0; i < nev; i++) {
		if (evs[i].ph == 'X')
			x[n++] = &evs[i];
		if (evs[i].ph == 's')
			flows_s++;
		if (evs[i].ph == 'f')
			flows_f++;
		if (!strchr("XMCsf", evs[i].ph) || evs[i].dur < 0) {
			printf("event %d: bad phase or duration\n", i);
			errors++;
		}
	}
	qsort(x, n, sizeof(*x), cmp_ts);
	for (int i = 0; i < n; i++) {
		/* The enclosing stack of this track. */
		static double stack[64];
		static int depth, tid = -1;

		if (x[i]->tid != tid) {
			tid = x[i]->tid;
			depth = 0;
		}
		while (depth && x[i]->ts >= stack[depth - 1] - 0.001)
			depth--;
		if (depth && x[i]->ts + x[i]->dur > stack[depth - 1] + 0.001) {
			printf("track %d: slice %s at %.3f overlaps its parent\n", tid, x[i]->name,
			       x[i]->ts);
			errors++;
		}
		if (depth < 64)
			stack[depth++] = x[i]->ts + x[i]->dur;
	}
	for (int i = 0; i < nev; i++) {
		int found = 0;

		if (evs[i].ph != 'f')
			continue;
		for (int j = 0; j < nev && !found; j++)
			found = evs[j].ph == 's' && evs[j].id == evs[i].id;
		if (!found) {
			printf("flow %llu ends without a start\n", evs[i].id);
			errors++;
		}
	}
	free(x);
	printf("%d events, %d slices, %d flows (%d started), %d problems%s\n", nev, n, flows_f,
	       flows_s, errors, truncated ? " (truncated file)" : "");
	return errors ? 1 : 0;
}

/* Writes the complete events of @in, closed, to @out. */
static int repair(const char *in, const char *out)
{
	int complete;
	char *buf = slurp(in, &complete);
	size_t len;
	FILE *f;

	if (!buf)
		return 1;
	len = strlen(buf);
	if (!complete) {
		/* Cut back to the end of the last complete line that is an event. */
		while (len && buf[len - 1] != '\n')
			len--;
		while (len > 1 && buf[len - 2] != '}' && buf[len - 2] != '[') {
			len--;
			while (len && buf[len - 1] != '\n')
				len--;
		}
	}
	f = out ? fopen(out, "w") : stdout;
	if (!f) {
		perror(out);
		free(buf);
		return 1;
	}
	fwrite(buf, 1, len, f);
	if (!complete)
		fputs("]}\n", f);
	if (out)
		fclose(f);
	fprintf(stderr, "vnpu-trace: %s\n", complete ? "already complete" : "repaired");
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "summary"))
		return load(argv[2]) ? 1 : summary();
	if (argc == 3 && !strcmp(argv[1], "check"))
		return load(argv[2]) ? 1 : check();
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "repair"))
		return repair(argv[2], argc == 4 ? argv[3] : NULL);
	fprintf(stderr, "usage: vnpu-trace summary FILE | check FILE | repair FILE [OUT]\n");
	return 2;
}
