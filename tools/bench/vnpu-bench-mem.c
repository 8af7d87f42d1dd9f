// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-bench-mem: cost of buffer creation on a vnpu device.
 *
 *  1. create+close rate of 4 KiB VRAM (and host-pinned) buffers
 *     (DRM_IOCTL_VNPU_BO_CREATE + DRM_IOCTL_GEM_CLOSE), next to vgem's
 *     DRM_IOCTL_MODE_CREATE_DUMB + DRM_IOCTL_MODE_DESTROY_DUMB as a
 *     reference for the DRM core's own cost;
 *  2. the same with a first use in between: BO_INFO (MAP_DUMB for vgem),
 *     mmap, a write to the page, munmap, since both drivers allocate the
 *     backing page at first use (1 and 2 interleaved in 10 rounds);
 *  3. latency of one create+close while 1k, 10k and 100k 4 KiB buffers are
 *     live (needs VRAM >= 1 GiB), to show how the allocator scales.
 *
 * It reports and never judges timings. Output is kselftest TAP ending with
 * a "# Totals:" line: pass if it ran, fail if an ioctl failed unexpectedly,
 * skip if there is no vnpu device.
 *
 * Usage: vnpu-bench-mem [-n ITERATIONS] [-s SAMPLES] [-d DEVICE]
 *   -n  create+close iterations for the rate (default 20000,
 *       or $VNPU_BENCH_ITERS)
 *   -s  samples per live-buffer level (default 1000, or $VNPU_BENCH_SAMPLES)
 *   -d  which vnpu device, in accel minor order (default 0)
 * Run as root: it lifts its own VRAM quota and loads vgem.
 */
#include <dirent.h>
#include <getopt.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <time.h>

#include "../../selftests/vnpu_utils.h"

#define SZ_4K 4096ULL

static bool failed;

#define fail(fmt, ...) do {						\
	printf("# error: " fmt "\n", ##__VA_ARGS__);			\
	failed = true;							\
} while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Loads vgem and opens its card node; -1 if there is none. */
static int vgem_open(void)
{
	struct dirent *e;
	int fd = -1;
	DIR *d;

	if (system("modprobe vgem >/dev/null 2>&1") == -1)
		return -1;
	d = opendir("/dev/dri");
	if (!d)
		return -1;
	while (fd < 0 && (e = readdir(d))) {
		char path[300], name[64] = "";
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

		if (strncmp(e->d_name, "card", 4))
			continue;
		snprintf(path, sizeof(path), "/dev/dri/%s", e->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (ioctl(fd, DRM_IOCTL_VERSION, &v) || strcmp(name, "vgem")) {
			close(fd);
			fd = -1;
		}
	}
	closedir(d);
	return fd;
}

/* Maps the 4 KiB at @offset of @fd, writes to it and unmaps it; 0 or -errno. */
static int touch_page(int fd, uint64_t offset)
{
	volatile uint32_t *p = mmap(NULL, SZ_4K, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				    (off_t)offset);

	if (p == MAP_FAILED)
		return -errno;
	p[0] = 1;
	return munmap((void *)p, SZ_4K) ? -errno : 0;
}

/*
 * Seconds for @n vnpu create+close of 4 KiB with @flags, each mapped and
 * written once in between if @use; <0 on error.
 */
static double vnpu_rate_run(int fd, unsigned long n, uint32_t flags, bool use)
{
	double t0 = now_s();

	for (unsigned long i = 0; i < n; i++) {
		struct drm_vnpu_bo_info info;
		uint32_t h = 0;
		int ret = _vnpu_bo_create(fd, SZ_4K, flags, &h, NULL);

		if (!ret && use)
			ret = _vnpu_bo_info(fd, h, &info) ?: touch_page(fd, info.mmap_offset);
		if (h)
			ret = _vnpu_gem_close(fd, h) ?: ret;
		if (ret) {
			fail("vnpu create+close %lu: %s", i, strerror(-ret));
			return -1;
		}
	}
	return now_s() - t0;
}

static double vgem_rate_run(int fd, unsigned long n, bool use)
{
	double t0 = now_s();

	for (unsigned long i = 0; i < n; i++) {
		struct drm_mode_create_dumb c = { .height = 32, .width = 32, .bpp = 32 };
		struct drm_mode_destroy_dumb d = { 0 };
		int ret = 0;

		if (ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c)) {
			fail("vgem create dumb %lu: %s", i, strerror(errno));
			return -1;
		}
		if (use) {
			struct drm_mode_map_dumb m = { .handle = c.handle };

			ret = ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m) ? -errno :
			      touch_page(fd, m.offset);
		}
		d.handle = c.handle;
		if (ioctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &d) && !ret)
			ret = -errno;
		if (ret) {
			fail("vgem create+destroy dumb %lu: %s", i, strerror(-ret));
			return -1;
		}
	}
	return now_s() - t0;
}

static void print_rate(const char *what, unsigned long n, double secs)
{
	printf("# %-34s %8lu in %7.3f s = %9.0f /s (%7.2f us each)\n", what, n, secs,
	       n / secs, secs * 1e6 / n);
}

/*
 * The rates are measured in RATE_ROUNDS rounds, each running a slice of
 * every measure in turn, so that a slow phase of a loaded (or emulated)
 * host weighs on vnpu and vgem alike and the ratios stay comparable.
 */
#define RATE_ROUNDS 10

static void bench_rate(int fd, unsigned long n)
{
	unsigned long slice = n / RATE_ROUNDS + 1, uslice = slice / 20 + 1;
	double vram = 0, host = 0, used = 0, vgem_s = 0, vgem_used = 0, t[5];
	int vgem;

	printf("# -- create+close rate, 4 KiB buffers, %d rounds --\n", RATE_ROUNDS);
	vgem = vgem_open();
	if (vgem < 0)
		printf("# vgem not available (modprobe vgem failed): no reference\n");
	/* Warm up the allocators and the caches. */
	if (vnpu_rate_run(fd, slice, 0, false) < 0 ||
	    (vgem >= 0 && vgem_rate_run(vgem, slice, false) < 0))
		goto out;
	for (int r = 0; r < RATE_ROUNDS; r++) {
		t[0] = vnpu_rate_run(fd, slice, 0, false);
		t[1] = vnpu_rate_run(fd, slice, DRM_VNPU_BO_HOST, false);
		t[2] = vnpu_rate_run(fd, uslice, DRM_VNPU_BO_HOST, true);
		t[3] = vgem >= 0 ? vgem_rate_run(vgem, slice, false) : 0;
		t[4] = vgem >= 0 ? vgem_rate_run(vgem, uslice, true) : 0;
		for (int i = 0; i < 5; i++)
			if (t[i] < 0)
				goto out;
		vram += t[0];
		host += t[1];
		used += t[2];
		vgem_s += t[3];
		vgem_used += t[4];
	}
	print_rate("vnpu BO_CREATE VRAM + GEM_CLOSE", slice * RATE_ROUNDS, vram);
	print_rate("vnpu BO_CREATE host + GEM_CLOSE", slice * RATE_ROUNDS, host);
	print_rate("vnpu host create + mmap/write + close", uslice * RATE_ROUNDS, used);
	if (vgem < 0)
		return;
	print_rate("vgem CREATE_DUMB + DESTROY_DUMB", slice * RATE_ROUNDS, vgem_s);
	print_rate("vgem create + mmap/write + destroy", uslice * RATE_ROUNDS, vgem_used);
	printf("# ratio vnpu VRAM rate / vgem rate: %.2f (1.00 = as fast as vgem)\n",
	       vgem_s / vram);
	printf("# ratio vnpu host rate / vgem rate: %.2f\n", vgem_s / host);
	printf("# ratio with first use, vnpu host / vgem: %.2f\n", vgem_used / used);
out:
	if (vgem >= 0)
		close(vgem);
}

static void bench_live(unsigned int nth, unsigned long samples)
{
	static const unsigned long levels[] = { 1000, 10000, 100000 };
	const unsigned long max_live = levels[2];
	uint64_t vram = 0, used = 0;
	struct drm_vnpu_quota q;
	unsigned long live = 0;
	uint32_t *handles;
	double *t;
	int fd;

	printf("# -- create+close latency with live buffers --\n");
	fd = vnpu_open_nth(nth);
	if (fd < 0) {
		fail("cannot open vnpu device %u", nth);
		return;
	}
	if (_vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_SIZE, 0, &vram) ||
	    _vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_USED, 0, &used)) {
		fail("GET_PARAM: %s", strerror(errno));
		close(fd);
		return;
	}
	if (vram < (1ULL << 30) || vram - used < (max_live + 16) * SZ_4K) {
		printf("# skipped: needs vram_size_mb >= 1024 and %llu MiB free",
		       (unsigned long long)((max_live + 16) * SZ_4K >> 20));
		printf(" (VRAM %llu MiB, used %llu MiB)\n", (unsigned long long)(vram >> 20),
		       (unsigned long long)(used >> 20));
		close(fd);
		return;
	}
	vnpu_quota_unlimit(fd);
	if (!_vnpu_quota_get(fd, 0, &q) && q.soft_limit - q.used < (max_live + 16) * SZ_4K) {
		printf("# skipped: VRAM quota too small (%llu bytes); run as root\n",
		       (unsigned long long)q.soft_limit);
		close(fd);
		return;
	}
	handles = calloc(max_live, sizeof(*handles));
	t = calloc(samples, sizeof(*t));
	if (!handles || !t) {
		fail("out of memory");
		goto out;
	}

	printf("# %12s %10s %10s %10s %10s %10s\n", "live", "mean us", "median us", "min us",
	       "p99 us", "max us");
	for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
		double sum = 0;

		for (; live < levels[l]; live++) {
			int ret = _vnpu_bo_create(fd, SZ_4K, 0, &handles[live], NULL);

			if (ret) {
				fail("creating live buffer %lu: %s", live, strerror(-ret));
				goto out;
			}
		}
		for (unsigned long s = 0; s < samples; s++) {
			uint32_t h = 0;
			double t0 = now_s();
			int ret = _vnpu_bo_create(fd, SZ_4K, 0, &h, NULL);

			if (!ret)
				ret = _vnpu_gem_close(fd, h);
			t[s] = (now_s() - t0) * 1e6;
			if (ret) {
				fail("sample %lu at %lu live: %s", s, live, strerror(-ret));
				goto out;
			}
			sum += t[s];
		}
		qsort(t, samples, sizeof(*t), cmp_double);
		printf("# %12lu %10.2f %10.2f %10.2f %10.2f %10.2f\n", live, sum / samples,
		       t[samples / 2], t[0], t[samples * 99 / 100], t[samples - 1]);
	}
out:
	/* Closing the file releases every live buffer at once. */
	free(handles);
	free(t);
	close(fd);
}

int main(int argc, char **argv)
{
	unsigned long iters = vnpu_env_ul("VNPU_BENCH_ITERS", 20000);
	unsigned long samples = vnpu_env_ul("VNPU_BENCH_SAMPLES", 1000);
	unsigned int nth = 0;
	uint64_t vram = 0, index = 0;
	int fd, opt;

	while ((opt = getopt(argc, argv, "n:s:d:h")) != -1) {
		switch (opt) {
		case 'n':
			iters = strtoul(optarg, NULL, 0);
			break;
		case 's':
			samples = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			nth = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-n ITERATIONS] [-s SAMPLES] [-d DEVICE]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!iters)
		iters = 1;
	if (!samples)
		samples = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);

	printf("TAP version 13\n1..1\n");
	fd = vnpu_open_nth(nth);
	if (fd < 0) {
		printf("ok 1 vnpu-bench-mem # SKIP no vnpu device %u\n", nth);
		printf("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0\n");
		return 4;
	}
	_vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_SIZE, 0, &vram);
	_vnpu_get_param(fd, DRM_VNPU_PARAM_DEVICE_INDEX, 0, &index);
	printf("# vnpu device %llu, VRAM %llu MiB, %lu iterations, %lu samples per level\n",
	       (unsigned long long)index, (unsigned long long)(vram >> 20), iters, samples);
	vnpu_quota_unlimit(fd);

	bench_rate(fd, iters);
	close(fd);
	if (!failed)
		bench_live(nth, samples);

	printf("%s 1 vnpu-bench-mem\n", failed ? "not ok" : "ok");
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n", !failed, failed);
	return failed;
}
