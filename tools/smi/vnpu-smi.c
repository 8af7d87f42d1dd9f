// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-smi: the vnpu devices, their health, memory and engines, and the
 * processes using them. Everything comes from the kernel: sysfs for the
 * devices, /proc/PID/fdinfo of accel nodes (major 261) for the clients and
 * DRM_IOCTL_VNPU_QUOTA_GET for per-process quotas. The tool never keeps a
 * device open while it scans /proc, and skips itself, so it does not show
 * up as a client. See Documentation/observability.rst.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <drm/vnpu_accel.h>

#include "vnpu.h"

#include "../common/attr.h"

#define ACCEL_MAJOR 261
#define SYS_ACCEL "/sys/class/accel"
#define MAX_DEVS 64
#define NO_VALUE (-1LL)

/* Where sysfs and procfs live; tests may point them elsewhere. */
static const char *sys_accel = SYS_ACCEL;

struct smi_dev {
	unsigned int minor;
	int index;
	char name[16];
	char dir[300];			/* .../accelN/device */
	char uapi[16];
	char health[24];
	char default_quota[32];
	long long vram_total, vram_used, vram_peak, vram_largest_free, host_used, bo_count;
	int compute, copy, numa;
	int has_engines;		/* engines/ (uAPI 1.3) */
	long long busy[2];		/* summed over the class's engines, ns */
	long long queued;
	long long reset_count;		/* NO_VALUE without the attribute */
	double util[2];			/* percent, <0 unknown */
	int clients;			/* open DRM files */
	int procs;
};

struct smi_app {
	int pid;
	char comm[64];
	int dev;			/* index into devs[] */
	int files;			/* DRM files (contexts) of the process on the device */
	long long vram, host;		/* fdinfo drm-total-* summed over files */
	long long eng[2];		/* fdinfo drm-engine-*, ns, NO_VALUE when absent */
	/* fdinfo vnpu-queues, -syncobjs, -buffers summed; NO_VALUE when absent */
	long long queues, syncobjs, handles;
	int has_quota;
	struct drm_vnpu_quota q;
	double util[2];
};

static struct smi_dev devs[MAX_DEVS];
static int ndevs;
static struct smi_app *apps;
static int napps, capapps;

static long long read_ll(const char *dir, const char *name)
{
	char buf[64];

	if (vnpu_read_attr(dir, name, buf, sizeof(buf)))
		return NO_VALUE;
	return strtoll(buf, NULL, 10);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int dev_cmp(const void *a, const void *b)
{
	return ((const struct smi_dev *)a)->index - ((const struct smi_dev *)b)->index;
}

/* Sums engines/<class>N_busy_ns and _queued_jobs. */
static void read_engines(struct smi_dev *d)
{
	static const char *const cls[2] = { "compute", "copy" };
	char dir[320], name[64];

	snprintf(dir, sizeof(dir), "%s/engines", d->dir);
	d->has_engines = access(dir, R_OK) == 0;
	d->queued = d->has_engines ? 0 : NO_VALUE;
	for (int c = 0; c < 2; c++) {
		int n = c ? d->copy : d->compute;

		d->busy[c] = d->has_engines ? 0 : NO_VALUE;
		for (int e = 0; d->has_engines && e < n; e++) {
			long long v;

			snprintf(name, sizeof(name), "%s%d_busy_ns", cls[c], e);
			v = read_ll(dir, name);
			if (v >= 0)
				d->busy[c] += v;
			snprintf(name, sizeof(name), "%s%d_queued_jobs", cls[c], e);
			v = read_ll(dir, name);
			if (v >= 0)
				d->queued += v;
		}
	}
}

static void read_dev(struct smi_dev *d)
{
	char vdir[320];

	snprintf(vdir, sizeof(vdir), "%s/vnpu", d->dir);
	d->vram_total = read_ll(vdir, "vram_total_bytes");
	d->vram_used = read_ll(vdir, "vram_used_bytes");
	d->vram_peak = read_ll(vdir, "vram_peak_bytes");
	d->vram_largest_free = read_ll(vdir, "vram_largest_free_bytes");
	d->host_used = read_ll(vdir, "host_used_bytes");
	d->bo_count = read_ll(vdir, "bo_count");
	d->compute = (int)read_ll(vdir, "compute_engines");
	d->copy = (int)read_ll(vdir, "copy_engines");
	d->numa = (int)read_ll(vdir, "numa_node");
	d->reset_count = read_ll(vdir, "reset_count");
	if (vnpu_read_attr(vdir, "health", d->health, sizeof(d->health)))
		strcpy(d->health, "unknown");
	if (vnpu_read_attr(vdir, "uapi_version", d->uapi, sizeof(d->uapi)))
		strcpy(d->uapi, "-");
	if (vnpu_read_attr(vdir, "default_quota_bytes", d->default_quota, sizeof(d->default_quota)))
		strcpy(d->default_quota, "-");
	read_engines(d);
}

/* Finds the vnpu devices in sysfs; returns how many. */
static int scan_devices(void)
{
	DIR *dir = opendir(sys_accel);
	struct dirent *e;

	ndevs = 0;
	if (!dir)
		return 0;
	while ((e = readdir(dir)) && ndevs < MAX_DEVS) {
		struct smi_dev *d = &devs[ndevs];
		char vdir[320];
		unsigned int minor;

		if (sscanf(e->d_name, "accel%u", &minor) != 1)
			continue;
		memset(d, 0, sizeof(*d));
		d->minor = minor;
		snprintf(d->dir, sizeof(d->dir), "%s/%s/device", sys_accel, e->d_name);
		snprintf(vdir, sizeof(vdir), "%s/vnpu", d->dir);
		d->index = (int)read_ll(vdir, "index");
		if (d->index < 0)
			continue;	/* another accel driver, or gone meanwhile */
		snprintf(d->name, sizeof(d->name), "vnpu%d", d->index);
		ndevs++;
	}
	closedir(dir);
	qsort(devs, ndevs, sizeof(devs[0]), dev_cmp);
	for (int i = 0; i < ndevs; i++)
		read_dev(&devs[i]);
	return ndevs;
}

static int dev_by_minor(unsigned int minor)
{
	for (int i = 0; i < ndevs; i++)
		if (devs[i].minor == minor)
			return i;
	return -1;
}

static int dev_by_index(int index)
{
	for (int i = 0; i < ndevs; i++)
		if (devs[i].index == index)
			return i;
	return -1;
}

/* "104 KiB", "3 MiB", "12" -> bytes. */
static long long parse_mem(const char *v)
{
	char *end;
	long long n = strtoll(v, &end, 10);

	while (*end == ' ' || *end == '\t')
		end++;
	if (!strncmp(end, "KiB", 3))
		n <<= 10;
	else if (!strncmp(end, "MiB", 3))
		n <<= 20;
	else if (!strncmp(end, "GiB", 3))
		n <<= 30;
	return n;
}

static struct smi_app *app_for(int pid, int dev)
{
	for (int i = 0; i < napps; i++)
		if (apps[i].pid == pid && apps[i].dev == dev)
			return &apps[i];
	if (napps == capapps) {
		int cap = capapps ? capapps * 2 : 16;
		struct smi_app *n = realloc(apps, cap * sizeof(*n));

		if (!n)
			return NULL;
		apps = n;
		capapps = cap;
	}
	memset(&apps[napps], 0, sizeof(apps[0]));
	apps[napps].pid = pid;
	apps[napps].dev = dev;
	apps[napps].eng[0] = apps[napps].eng[1] = NO_VALUE;
	apps[napps].queues = apps[napps].syncobjs = apps[napps].handles = NO_VALUE;
	return &apps[napps++];
}

/* Adds a count that may be absent (NO_VALUE) to a sum that may be too. */
static void add_count(long long *sum, long long v)
{
	if (v >= 0)
		*sum = (*sum < 0 ? 0 : *sum) + v;
}

struct seen_client {
	int dev;
	long long id;
};

/*
 * One DRM file of @pid: fdinfo keys. Files shared by several fds (dup,
 * fork) have one client id and count once per process.
 */
static void scan_fd(int pid, const char *fd, const char *comm, struct seen_client **seen,
		    int *nseen, int *capseen)
{
	char path[320], line[256];
	struct stat st;
	long long id = -1, vram = 0, host = 0, eng[2] = { NO_VALUE, NO_VALUE };
	long long queues = NO_VALUE, syncobjs = NO_VALUE, handles = NO_VALUE;
	int is_vnpu = 0, dev;
	struct smi_app *a;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, fd);
	if (stat(path, &st) || !S_ISCHR(st.st_mode) || major(st.st_rdev) != ACCEL_MAJOR)
		return;
	dev = dev_by_minor(minor(st.st_rdev));
	if (dev < 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	f = fopen(path, "r");
	if (!f)
		return;		/* closed or exited meanwhile */
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		*v++ = 0;
		v += strspn(v, " \t");
		if (!strcmp(line, "drm-driver"))
			is_vnpu = !strncmp(v, "vnpu", 4);
		else if (!strcmp(line, "drm-client-id"))
			id = strtoll(v, NULL, 10);
		else if (!strcmp(line, "drm-total-vram"))
			vram = parse_mem(v);
		else if (!strcmp(line, "drm-total-host"))
			host = parse_mem(v);
		else if (!strcmp(line, "drm-engine-compute"))
			eng[0] = strtoll(v, NULL, 10);
		else if (!strcmp(line, "drm-engine-copy"))
			eng[1] = strtoll(v, NULL, 10);
		else if (!strcmp(line, "vnpu-queues"))
			queues = strtoll(v, NULL, 10);
		else if (!strcmp(line, "vnpu-syncobjs"))
			syncobjs = strtoll(v, NULL, 10);
		else if (!strcmp(line, "vnpu-buffers"))
			handles = strtoll(v, NULL, 10);
	}
	fclose(f);
	if (!is_vnpu)
		return;
	for (int i = 0; i < *nseen; i++)
		if ((*seen)[i].dev == dev && (*seen)[i].id == id)
			return;
	if (*nseen == *capseen) {
		int cap = *capseen ? *capseen * 2 : 32;
		struct seen_client *n = realloc(*seen, cap * sizeof(*n));

		if (!n)
			return;
		*seen = n;
		*capseen = cap;
	}
	(*seen)[(*nseen)++] = (struct seen_client){ dev, id };
	a = app_for(pid, dev);
	if (!a)
		return;
	snprintf(a->comm, sizeof(a->comm), "%s", comm);
	a->files++;
	a->vram += vram;
	a->host += host;
	for (int c = 0; c < 2; c++)
		add_count(&a->eng[c], eng[c]);
	add_count(&a->queues, queues);
	add_count(&a->syncobjs, syncobjs);
	add_count(&a->handles, handles);
	devs[dev].clients++;
}

/* Reads the quota of every app (needs CAP_SYS_ADMIN for other processes). */
static void read_quotas(void)
{
	for (int d = 0; d < ndevs; d++) {
		char node[48];
		int fd = -1;

		for (int i = 0; i < napps; i++) {
			if (apps[i].dev != d)
				continue;
			if (fd < 0) {
				snprintf(node, sizeof(node), "/dev/accel/accel%u", devs[d].minor);
				fd = open(node, O_RDWR | O_CLOEXEC);
				if (fd < 0)
					break;
			}
			memset(&apps[i].q, 0, sizeof(apps[i].q));
			apps[i].q.pid = apps[i].pid;
			apps[i].has_quota = !ioctl(fd, DRM_IOCTL_VNPU_QUOTA_GET, &apps[i].q);
		}
		if (fd >= 0)
			close(fd);
	}
}

static int app_cmp(const void *a, const void *b)
{
	const struct smi_app *x = a, *y = b;

	if (devs[x->dev].index != devs[y->dev].index)
		return devs[x->dev].index - devs[y->dev].index;
	return x->pid - y->pid;
}

/* Scans /proc for DRM files of vnpu devices; PIDs that vanish are skipped. */
static void scan_clients(int only_pid)
{
	struct seen_client *seen = NULL;
	int nseen = 0, capseen = 0, self = getpid();
	DIR *proc = opendir("/proc");
	struct dirent *p;

	napps = 0;
	for (int d = 0; d < ndevs; d++)
		devs[d].clients = devs[d].procs = 0;
	if (!proc)
		return;
	while ((p = readdir(proc))) {
		char path[64], comm[64] = "?";
		struct dirent *e;
		DIR *fds;
		int pid;

		if (!isdigit((unsigned char)p->d_name[0]))
			continue;
		pid = atoi(p->d_name);
		if (pid == self || (only_pid && pid != only_pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		if (!fds)
			continue;
		snprintf(path, sizeof(path), "/proc/%d", pid);
		vnpu_read_attr(path, "comm", comm, sizeof(comm));
		while ((e = readdir(fds)))
			if (isdigit((unsigned char)e->d_name[0]))
				scan_fd(pid, e->d_name, comm, &seen, &nseen, &capseen);
		closedir(fds);
	}
	closedir(proc);
	free(seen);
	qsort(apps, napps, sizeof(apps[0]), app_cmp);
	for (int i = 0; i < napps; i++)
		devs[apps[i].dev].procs++;
	read_quotas();
}

/* Everything, with utilization over @window seconds (0: none). */
static int collect(double window, int only_pid)
{
	long long busy0[MAX_DEVS][2];
	struct { int pid, dev; long long eng[2]; } *prev = NULL;
	int nprev = 0;
	double t0;

	scan_devices();
	for (int d = 0; d < ndevs; d++)
		devs[d].util[0] = devs[d].util[1] = -1;
	if (window <= 0) {
		scan_clients(only_pid);
		for (int i = 0; i < napps; i++)
			apps[i].util[0] = apps[i].util[1] = -1;
		return ndevs;
	}
	scan_clients(only_pid);
	prev = calloc(napps ? napps : 1, sizeof(*prev));
	for (int i = 0; prev && i < napps; i++) {
		prev[i].pid = apps[i].pid;
		prev[i].dev = devs[apps[i].dev].index;
		prev[i].eng[0] = apps[i].eng[0];
		prev[i].eng[1] = apps[i].eng[1];
	}
	nprev = prev ? napps : 0;
	for (int d = 0; d < ndevs; d++)
		busy0[d][0] = devs[d].busy[0], busy0[d][1] = devs[d].busy[1];
	int idx0[MAX_DEVS], n0 = ndevs;

	for (int d = 0; d < ndevs; d++)
		idx0[d] = devs[d].index;
	t0 = now_s();
	usleep((useconds_t)(window * 1e6));
	scan_devices();
	scan_clients(only_pid);
	double dt = now_s() - t0;

	for (int d = 0; d < ndevs; d++) {
		devs[d].util[0] = devs[d].util[1] = -1;
		for (int o = 0; o < n0; o++) {
			if (idx0[o] != devs[d].index)
				continue;
			for (int c = 0; c < 2; c++) {
				int n = c ? devs[d].copy : devs[d].compute;

				if (devs[d].busy[c] >= 0 && busy0[o][c] >= 0 && n > 0)
					devs[d].util[c] = 100.0 * (devs[d].busy[c] - busy0[o][c]) /
							  (dt * 1e9 * n);
			}
		}
	}
	for (int i = 0; i < napps; i++) {
		apps[i].util[0] = apps[i].util[1] = -1;
		for (int o = 0; o < nprev; o++) {
			if (prev[o].pid != apps[i].pid || prev[o].dev != devs[apps[i].dev].index)
				continue;
			for (int c = 0; c < 2; c++) {
				int n = c ? devs[apps[i].dev].copy : devs[apps[i].dev].compute;

				if (apps[i].eng[c] >= 0 && prev[o].eng[c] >= 0 && n > 0)
					apps[i].util[c] = 100.0 * (apps[i].eng[c] - prev[o].eng[c]) /
							  (dt * 1e9 * n);
			}
		}
	}
	free(prev);
	return ndevs;
}

/* ---- health verdict ---------------------------------------------------- */

static const char *verdict(const struct smi_dev *d, char *reason, size_t len)
{
	if (!strcmp(d->health, "needs-reset")) {
		snprintf(reason, len, "the device refuses work after repeated job timeouts; "
			 "reset it as root: vnpu-smi --reset %d", d->index);
		return "FAIL";
	}
	if (!strcmp(d->health, "degraded")) {
		snprintf(reason, len, "jobs timed out repeatedly within a minute; work still runs, "
			 "one more timeout and it needs a reset");
		return "WARN";
	}
	if (strcmp(d->health, "ok")) {
		snprintf(reason, len, "the driver reports health '%s'", d->health);
		return "WARN";
	}
	if (d->vram_total > 0 && d->vram_used * 100 >= d->vram_total * 95) {
		snprintf(reason, len, "VRAM is %lld%% full", d->vram_used * 100 / d->vram_total);
		return "WARN";
	}
	if (d->vram_total > 0 && d->vram_largest_free >= 0 &&
	    d->vram_total - d->vram_used >= (4LL << 20) &&
	    d->vram_largest_free * 4 < d->vram_total - d->vram_used) {
		snprintf(reason, len, "VRAM is fragmented: largest free range %lld MiB of %lld MiB free",
			 d->vram_largest_free >> 20, (d->vram_total - d->vram_used) >> 20);
		return "WARN";
	}
	snprintf(reason, len, "healthy");
	return "OK";
}

/* ---- formatting helpers ------------------------------------------------ */

static void human(long long b, char *buf, size_t len)
{
	if (b < 0)
		snprintf(buf, len, "-");
	else if (b >= (1LL << 30))
		snprintf(buf, len, "%.1f GiB", b / 1073741824.0);
	else if (b >= (1LL << 20))
		snprintf(buf, len, "%.1f MiB", b / 1048576.0);
	else if (b >= 1024)
		snprintf(buf, len, "%.0f KiB", b / 1024.0);
	else
		snprintf(buf, len, "%lld B", b);
}

static void pct(double v, char *buf, size_t len)
{
	if (v < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.0f%%", v > 100 ? 100 : v);
}

static void limit_str(unsigned long long v, char *buf, size_t len)
{
	if (v == DRM_VNPU_QUOTA_UNLIMITED)
		snprintf(buf, len, "max");
	else
		human((long long)v, buf, len);
}

static void ms_str(long long ns, char *buf, size_t len)
{
	if (ns < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1fs", ns / 1e9);
}

/* ---- default view ------------------------------------------------------ */

static void print_default(void)
{
	char t[64], a[32], b[32], c[32], e[32], reason[200];
	time_t now = time(NULL);

	strftime(t, sizeof(t), "%Y-%m-%d %H:%M:%S", localtime(&now));
	printf("vnpu-smi  %s  %d device%s\n", t, ndevs, ndevs == 1 ? "" : "s");
	if (!ndevs) {
		printf("No vnpu devices found (is the vnpu module loaded?)\n");
		return;
	}
	printf("%-3s %-6s %-11s %-23s %-7s %-7s %-6s %-7s %-6s %s\n", "DEV", "NAME", "HEALTH",
	       "VRAM used / total", "COMPUTE", "COPY", "QUEUED", "CLIENTS", "RESETS", "NODE");
	for (int i = 0; i < ndevs; i++) {
		struct smi_dev *d = &devs[i];
		char mem[80], q[24], r[24], node[32];

		human(d->vram_used, a, sizeof(a));
		human(d->vram_total, b, sizeof(b));
		snprintf(mem, sizeof(mem), "%s / %s", a, b);
		pct(d->util[0], c, sizeof(c));
		pct(d->util[1], e, sizeof(e));
		snprintf(q, sizeof(q), d->queued >= 0 ? "%lld" : "-", d->queued);
		snprintf(r, sizeof(r), d->reset_count >= 0 ? "%lld" : "-", d->reset_count);
		snprintf(node, sizeof(node), "/dev/accel/accel%u", d->minor);
		printf("%-3d %-6s %-11s %-23s %-7s %-7s %-6s %-7d %-6s %s\n", d->index, d->name,
		       d->health, mem, c, e, q, d->clients, r, node);
	}
	printf("\nHealth\n");
	for (int i = 0; i < ndevs; i++) {
		const char *v = verdict(&devs[i], reason, sizeof(reason));

		printf("  %-6s %-4s %s\n", devs[i].name, v, reason);
	}
	printf("\nProcesses\n");
	if (!napps) {
		printf("  No processes use a vnpu device\n");
		return;
	}
	printf("  %-7s %-16s %-3s %-5s %-10s %-10s %-10s %-10s %-10s %-5s %-8s %s\n", "PID",
	       "NAME", "DEV", "CTXS", "VRAM", "HOST", "PEAK", "SOFT", "HARD", "BOS", "COMPUTE",
	       "COPY");
	for (int i = 0; i < napps; i++) {
		struct smi_app *p = &apps[i];
		char vram[24], host[24], peak[24], soft[24], hard[24], bos[24];

		human(p->vram, vram, sizeof(vram));
		human(p->host, host, sizeof(host));
		if (p->has_quota) {
			human((long long)p->q.peak, peak, sizeof(peak));
			limit_str(p->q.soft_limit, soft, sizeof(soft));
			limit_str(p->q.hard_limit, hard, sizeof(hard));
			snprintf(bos, sizeof(bos), "%llu", (unsigned long long)p->q.bo_count);
		} else {
			strcpy(peak, "-");
			strcpy(soft, "-");
			strcpy(hard, "-");
			strcpy(bos, "-");
		}
		ms_str(p->eng[0], a, sizeof(a));
		ms_str(p->eng[1], b, sizeof(b));
		printf("  %-7d %-16s %-3d %-5d %-10s %-10s %-10s %-10s %-10s %-5s %-8s %s\n", p->pid,
		       p->comm, devs[p->dev].index, p->files, vram, host, peak, soft, hard, bos, a,
		       b);
	}
}

/* ---- query mode -------------------------------------------------------- */

enum unit { U_NONE, U_MIB, U_PCT, U_MS };

struct field {
	const char *name;
	enum unit unit;
	const char *help;
};

static const struct field dev_fields[] = {
	{ "index", U_NONE, "device index within the module (0-based)" },
	{ "name", U_NONE, "device name, vnpuN" },
	{ "accel", U_NONE, "accel node, /dev/accel/accelN" },
	{ "minor", U_NONE, "accel minor number" },
	{ "uapi", U_NONE, "uAPI version the driver implements" },
	{ "health", U_NONE, "driver health: ok, degraded or needs-reset" },
	{ "health.verdict", U_NONE, "vnpu-smi's verdict: OK, WARN or FAIL" },
	{ "health.reason", U_NONE, "why, in plain words" },
	{ "memory.total", U_MIB, "VRAM size" },
	{ "memory.used", U_MIB, "VRAM allocated now" },
	{ "memory.free", U_MIB, "VRAM not allocated" },
	{ "memory.peak", U_MIB, "highest memory.used since the module was loaded" },
	{ "memory.largest_free", U_MIB, "largest buffer that can be created now" },
	{ "memory.host_used", U_MIB, "host-pinned and imported memory in use" },
	{ "buffers", U_NONE, "live buffers created on the device" },
	{ "engines.compute", U_NONE, "compute engines" },
	{ "engines.copy", U_NONE, "copy engines" },
	{ "numa_node", U_NONE, "host NUMA node, -1 for none" },
	{ "utilization.compute", U_PCT, "compute engines busy over the sample window (uAPI 1.3)" },
	{ "utilization.copy", U_PCT, "copy engines busy over the sample window (uAPI 1.3)" },
	{ "busy.compute", U_MS, "compute engine time since load, summed over engines (1.3)" },
	{ "busy.copy", U_MS, "copy engine time since load, summed over engines (1.3)" },
	{ "queued_jobs", U_NONE, "jobs submitted and not finished, all engines (1.3)" },
	{ "reset_count", U_NONE, "device resets since load (1.3)" },
	{ "clients", U_NONE, "open DRM files (contexts) of all processes" },
	{ "processes", U_NONE, "processes with the device open" },
	{ "default_quota", U_NONE, "VRAM quota of new processes, bytes or max" },
	{ NULL, U_NONE, NULL },
};

static const struct field app_fields[] = {
	{ "pid", U_NONE, "process id" },
	{ "process_name", U_NONE, "process name (comm)" },
	{ "device", U_NONE, "device index" },
	{ "name", U_NONE, "device name" },
	{ "contexts", U_NONE, "DRM files (runtime contexts) the process has on the device" },
	{ "used_memory", U_MIB, "VRAM of the process's files (fdinfo drm-total-vram)" },
	{ "host_memory", U_MIB, "host-pinned memory of its files (fdinfo drm-total-host)" },
	{ "quota.used", U_MIB, "VRAM charged to the process (QUOTA_GET used)" },
	{ "quota.peak", U_MIB, "highest quota.used" },
	{ "quota.soft", U_MIB, "enforced VRAM limit, or max" },
	{ "quota.hard", U_MIB, "ceiling of the soft limit, or max" },
	{ "buffers", U_NONE, "VRAM buffers charged to the process" },
	{ "handles", U_NONE, "buffer handles of its files, any kind (fdinfo vnpu-buffers)" },
	{ "queues", U_NONE, "hardware queues of its files, one per stream (fdinfo vnpu-queues)" },
	{ "syncobjs", U_NONE, "sync objects of its files (fdinfo vnpu-syncobjs)" },
	{ "engine.compute", U_MS, "compute engine time of its jobs (fdinfo, uAPI 1.3)" },
	{ "engine.copy", U_MS, "copy engine time of its jobs (fdinfo, uAPI 1.3)" },
	{ "utilization.compute", U_PCT, "share of the compute engines over the sample window" },
	{ "utilization.copy", U_PCT, "share of the copy engines over the sample window" },
	{ NULL, U_NONE, NULL },
};

static const char *unit_name(enum unit u)
{
	return u == U_MIB ? "MiB" : u == U_PCT ? "%" : u == U_MS ? "ms" : NULL;
}

static int find_field(const struct field *set, const char *name)
{
	for (int i = 0; set[i].name; i++)
		if (!strcmp(set[i].name, name))
			return i;
	return -1;
}

static void fmt_num(char *buf, size_t len, long long v, enum unit u, int nounits)
{
	const char *un = unit_name(u);

	if (v < 0) {
		snprintf(buf, len, "[N/A]");
		return;
	}
	if (u == U_MIB)
		v >>= 20;
	else if (u == U_MS)
		v /= 1000000;
	if (nounits || !un)
		snprintf(buf, len, "%lld", v);
	else
		snprintf(buf, len, "%lld %s", v, un);
}

static void fmt_pct(char *buf, size_t len, double v, int nounits)
{
	if (v < 0)
		snprintf(buf, len, "[N/A]");
	else
		snprintf(buf, len, nounits ? "%.0f" : "%.0f %%", v > 100 ? 100 : v);
}

static void fmt_limit(char *buf, size_t len, const struct smi_app *a, unsigned long long v,
		      int nounits)
{
	if (!a->has_quota)
		snprintf(buf, len, "[N/A]");
	else if (v == DRM_VNPU_QUOTA_UNLIMITED)
		snprintf(buf, len, "max");
	else
		fmt_num(buf, len, (long long)v, U_MIB, nounits);
}

static void dev_value(const struct smi_dev *d, int f, int nounits, char *buf, size_t len)
{
	const char *name = dev_fields[f].name;
	enum unit u = dev_fields[f].unit;
	char reason[200];

	if (!strcmp(name, "index"))
		snprintf(buf, len, "%d", d->index);
	else if (!strcmp(name, "name"))
		snprintf(buf, len, "%s", d->name);
	else if (!strcmp(name, "accel"))
		snprintf(buf, len, "/dev/accel/accel%u", d->minor);
	else if (!strcmp(name, "minor"))
		snprintf(buf, len, "%u", d->minor);
	else if (!strcmp(name, "uapi"))
		snprintf(buf, len, "%s", d->uapi);
	else if (!strcmp(name, "health"))
		snprintf(buf, len, "%s", d->health);
	else if (!strcmp(name, "health.verdict"))
		snprintf(buf, len, "%s", verdict(d, reason, sizeof(reason)));
	else if (!strcmp(name, "health.reason"))
		verdict(d, buf, len);
	else if (!strcmp(name, "memory.total"))
		fmt_num(buf, len, d->vram_total, u, nounits);
	else if (!strcmp(name, "memory.used"))
		fmt_num(buf, len, d->vram_used, u, nounits);
	else if (!strcmp(name, "memory.free"))
		fmt_num(buf, len, d->vram_total < 0 ? -1 : d->vram_total - d->vram_used, u, nounits);
	else if (!strcmp(name, "memory.peak"))
		fmt_num(buf, len, d->vram_peak, u, nounits);
	else if (!strcmp(name, "memory.largest_free"))
		fmt_num(buf, len, d->vram_largest_free, u, nounits);
	else if (!strcmp(name, "memory.host_used"))
		fmt_num(buf, len, d->host_used, u, nounits);
	else if (!strcmp(name, "buffers"))
		fmt_num(buf, len, d->bo_count, u, nounits);
	else if (!strcmp(name, "engines.compute"))
		fmt_num(buf, len, d->compute, u, nounits);
	else if (!strcmp(name, "engines.copy"))
		fmt_num(buf, len, d->copy, u, nounits);
	else if (!strcmp(name, "numa_node"))
		snprintf(buf, len, "%d", d->numa);
	else if (!strcmp(name, "utilization.compute"))
		fmt_pct(buf, len, d->util[0], nounits);
	else if (!strcmp(name, "utilization.copy"))
		fmt_pct(buf, len, d->util[1], nounits);
	else if (!strcmp(name, "busy.compute"))
		fmt_num(buf, len, d->busy[0], u, nounits);
	else if (!strcmp(name, "busy.copy"))
		fmt_num(buf, len, d->busy[1], u, nounits);
	else if (!strcmp(name, "queued_jobs"))
		fmt_num(buf, len, d->queued, u, nounits);
	else if (!strcmp(name, "reset_count"))
		fmt_num(buf, len, d->reset_count, u, nounits);
	else if (!strcmp(name, "clients"))
		snprintf(buf, len, "%d", d->clients);
	else if (!strcmp(name, "processes"))
		snprintf(buf, len, "%d", d->procs);
	else if (!strcmp(name, "default_quota"))
		snprintf(buf, len, "%s", d->default_quota);
	else
		snprintf(buf, len, "[N/A]");
}

static void app_value(const struct smi_app *a, int f, int nounits, char *buf, size_t len)
{
	const char *name = app_fields[f].name;
	enum unit u = app_fields[f].unit;
	long long qv = -1;

	if (!strcmp(name, "pid"))
		snprintf(buf, len, "%d", a->pid);
	else if (!strcmp(name, "process_name"))
		snprintf(buf, len, "%s", a->comm);
	else if (!strcmp(name, "device"))
		snprintf(buf, len, "%d", devs[a->dev].index);
	else if (!strcmp(name, "name"))
		snprintf(buf, len, "%s", devs[a->dev].name);
	else if (!strcmp(name, "contexts"))
		snprintf(buf, len, "%d", a->files);
	else if (!strcmp(name, "used_memory"))
		fmt_num(buf, len, a->vram, u, nounits);
	else if (!strcmp(name, "host_memory"))
		fmt_num(buf, len, a->host, u, nounits);
	else if (!strcmp(name, "quota.soft"))
		fmt_limit(buf, len, a, a->q.soft_limit, nounits);
	else if (!strcmp(name, "quota.hard"))
		fmt_limit(buf, len, a, a->q.hard_limit, nounits);
	else if (!strcmp(name, "handles"))
		fmt_num(buf, len, a->handles, u, nounits);
	else if (!strcmp(name, "queues"))
		fmt_num(buf, len, a->queues, u, nounits);
	else if (!strcmp(name, "syncobjs"))
		fmt_num(buf, len, a->syncobjs, u, nounits);
	else if (!strcmp(name, "engine.compute"))
		fmt_num(buf, len, a->eng[0], u, nounits);
	else if (!strcmp(name, "engine.copy"))
		fmt_num(buf, len, a->eng[1], u, nounits);
	else if (!strcmp(name, "utilization.compute"))
		fmt_pct(buf, len, a->util[0], nounits);
	else if (!strcmp(name, "utilization.copy"))
		fmt_pct(buf, len, a->util[1], nounits);
	else {
		if (a->has_quota && !strcmp(name, "quota.used"))
			qv = (long long)a->q.used;
		else if (a->has_quota && !strcmp(name, "quota.peak"))
			qv = (long long)a->q.peak;
		else if (a->has_quota && !strcmp(name, "buffers"))
			qv = (long long)a->q.bo_count;
		fmt_num(buf, len, qv, u, nounits);
	}
}

struct format {
	int csv, header, units;
};

/* "csv[,noheader][,nounits]" in any order; csv is required. */
static int parse_format(const char *s, struct format *fmt)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int ok = 1;

	fmt->csv = 0;
	fmt->header = 1;
	fmt->units = 1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (!strcmp(tok, "csv")) {
			fmt->csv = 1;
		} else if (!strcmp(tok, "noheader")) {
			fmt->header = 0;
		} else if (!strcmp(tok, "nounits")) {
			fmt->units = 0;
		} else {
			fprintf(stderr, "vnpu-smi: unknown format option '%s' (use csv, noheader, nounits)\n",
				tok);
			ok = 0;
		}
	}
	free(copy);
	if (ok && !fmt->csv) {
		fprintf(stderr, "vnpu-smi: --format must include csv, e.g. --format=csv,noheader\n");
		ok = 0;
	}
	return ok ? 0 : -1;
}

/* Splits @list on commas into field indexes; fails on an unknown field. */
static int parse_fields(const struct field *set, const char *list, const char *opt, int *out,
			int max)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int n = 0;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int f;

		while (*tok == ' ')
			tok++;
		f = find_field(set, tok);
		if (f < 0) {
			fprintf(stderr, "vnpu-smi: %s: unknown field '%s'; vnpu-smi --help-query lists them\n",
				opt, tok);
			free(copy);
			return -1;
		}
		if (n < max)
			out[n++] = f;
	}
	free(copy);
	if (!n)
		fprintf(stderr, "vnpu-smi: %s: no fields given\n", opt);
	return n ? n : -1;
}

static void print_header(const struct field *set, const int *f, int n, const struct format *fmt)
{
	for (int i = 0; i < n; i++) {
		const char *un = unit_name(set[f[i]].unit);

		printf("%s%s", i ? ", " : "", set[f[i]].name);
		if (un && fmt->units)
			printf(" [%s]", un);
	}
	printf("\n");
}

static void print_query(int apps_mode, const int *f, int n, const struct format *fmt)
{
	const struct field *set = apps_mode ? app_fields : dev_fields;
	char buf[256];

	if (fmt->header)
		print_header(set, f, n, fmt);
	for (int r = 0; r < (apps_mode ? napps : ndevs); r++) {
		for (int i = 0; i < n; i++) {
			if (apps_mode)
				app_value(&apps[r], f[i], !fmt->units, buf, sizeof(buf));
			else
				dev_value(&devs[r], f[i], !fmt->units, buf, sizeof(buf));
			printf("%s%s", i ? ", " : "", buf);
		}
		printf("\n");
	}
}

static void help_query(void)
{
	printf("Fields for --query-device=FIELD[,FIELD...]:\n");
	for (int i = 0; dev_fields[i].name; i++)
		printf("  %-22s %-4s %s\n", dev_fields[i].name,
		       unit_name(dev_fields[i].unit) ? unit_name(dev_fields[i].unit) : "",
		       dev_fields[i].help);
	printf("\nFields for --query-compute-apps=FIELD[,FIELD...] (one row per process and device):\n");
	for (int i = 0; app_fields[i].name; i++)
		printf("  %-22s %-4s %s\n", app_fields[i].name,
		       unit_name(app_fields[i].unit) ? unit_name(app_fields[i].unit) : "",
		       app_fields[i].help);
	printf("\n--format=csv[,noheader][,nounits]. Values the driver does not report (older\n"
	       "uAPI, or a quota not readable without CAP_SYS_ADMIN) print as [N/A].\n");
}

/* ---- JSON and Prometheus ----------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void json_num(const char *key, long long v, int comma)
{
	if (v < 0)
		printf("\"%s\": null%s", key, comma ? ", " : "");
	else
		printf("\"%s\": %lld%s", key, v, comma ? ", " : "");
}

static void json_pct(const char *key, double v, int comma)
{
	if (v < 0)
		printf("\"%s\": null%s", key, comma ? ", " : "");
	else
		printf("\"%s\": %.1f%s", key, v, comma ? ", " : "");
}

static void print_json(void)
{
	char reason[200];

	printf("{\"timestamp\": %lld, \"devices\": [", (long long)time(NULL));
	for (int i = 0; i < ndevs; i++) {
		struct smi_dev *d = &devs[i];
		const char *v = verdict(d, reason, sizeof(reason));

		printf("%s\n  {\"index\": %d, \"name\": \"%s\", \"accel\": \"/dev/accel/accel%u\", "
		       "\"uapi\": \"%s\", \"health\": \"%s\", \"verdict\": \"%s\", \"reason\": ",
		       i ? "," : "", d->index, d->name, d->minor, d->uapi, d->health, v);
		json_str(reason);
		printf(", ");
		json_num("vram_total_bytes", d->vram_total, 1);
		json_num("vram_used_bytes", d->vram_used, 1);
		json_num("vram_peak_bytes", d->vram_peak, 1);
		json_num("vram_largest_free_bytes", d->vram_largest_free, 1);
		json_num("host_used_bytes", d->host_used, 1);
		json_num("buffers", d->bo_count, 1);
		json_num("compute_engines", d->compute, 1);
		json_num("copy_engines", d->copy, 1);
		printf("\"numa_node\": %d, ", d->numa);
		json_num("compute_busy_ns", d->busy[0], 1);
		json_num("copy_busy_ns", d->busy[1], 1);
		json_pct("compute_utilization", d->util[0], 1);
		json_pct("copy_utilization", d->util[1], 1);
		json_num("queued_jobs", d->queued, 1);
		json_num("reset_count", d->reset_count, 1);
		json_num("clients", d->clients, 1);
		json_num("processes", d->procs, 1);
		printf("\"default_quota\": ");
		json_str(d->default_quota);
		printf("}");
	}
	printf("\n], \"processes\": [");
	for (int i = 0; i < napps; i++) {
		struct smi_app *a = &apps[i];

		printf("%s\n  {\"pid\": %d, \"name\": ", i ? "," : "", a->pid);
		json_str(a->comm);
		printf(", \"device\": %d, ", devs[a->dev].index);
		json_num("contexts", a->files, 1);
		json_num("vram_bytes", a->vram, 1);
		json_num("host_bytes", a->host, 1);
		json_num("handles", a->handles, 1);
		json_num("queues", a->queues, 1);
		json_num("syncobjs", a->syncobjs, 1);
		json_num("compute_ns", a->eng[0], 1);
		json_num("copy_ns", a->eng[1], 1);
		if (a->has_quota) {
			printf("\"quota\": {");
			json_num("used_bytes", (long long)a->q.used, 1);
			json_num("peak_bytes", (long long)a->q.peak, 1);
			json_num("buffers", (long long)a->q.bo_count, 1);
			json_num("host_used_bytes", (long long)a->q.host_used, 1);
			if (a->q.soft_limit == DRM_VNPU_QUOTA_UNLIMITED)
				printf("\"soft_limit_bytes\": null, ");
			else
				json_num("soft_limit_bytes", (long long)a->q.soft_limit, 1);
			if (a->q.hard_limit == DRM_VNPU_QUOTA_UNLIMITED)
				printf("\"hard_limit_bytes\": null}");
			else
				printf("\"hard_limit_bytes\": %llu}",
				       (unsigned long long)a->q.hard_limit);
		} else {
			printf("\"quota\": null");
		}
		printf("}");
	}
	printf("\n]}\n");
}

static void prom_label_str(const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if (*s == '\n') {
			printf("\\n");
			continue;
		}
		putchar(*s);
	}
}

static void prom_metric(const char *name, const char *help, const char *type)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void print_prometheus(void)
{
	static const char *const cls[2] = { "compute", "copy" };
	static const struct { const char *name, *help; size_t off; } mem[] = {
		{ "vnpu_memory_total_bytes", "VRAM size", offsetof(struct smi_dev, vram_total) },
		{ "vnpu_memory_used_bytes", "VRAM allocated", offsetof(struct smi_dev, vram_used) },
		{ "vnpu_memory_peak_bytes", "highest VRAM allocated since load",
		  offsetof(struct smi_dev, vram_peak) },
		{ "vnpu_memory_largest_free_bytes", "largest creatable buffer",
		  offsetof(struct smi_dev, vram_largest_free) },
		{ "vnpu_host_memory_used_bytes", "host-pinned memory in use",
		  offsetof(struct smi_dev, host_used) },
		{ "vnpu_buffers", "live buffers", offsetof(struct smi_dev, bo_count) },
		{ "vnpu_queued_jobs", "jobs not finished", offsetof(struct smi_dev, queued) },
	};

	prom_metric("vnpu_device_info", "a vnpu device", "gauge");
	for (int i = 0; i < ndevs; i++)
		printf("vnpu_device_info{device=\"%d\",name=\"%s\",uapi=\"%s\",health=\"%s\"} 1\n",
		       devs[i].index, devs[i].name, devs[i].uapi, devs[i].health);
	prom_metric("vnpu_health", "0 ok, 1 degraded, 2 needs reset", "gauge");
	for (int i = 0; i < ndevs; i++)
		printf("vnpu_health{device=\"%d\"} %d\n", devs[i].index,
		       !strcmp(devs[i].health, "ok") ? 0 : !strcmp(devs[i].health, "degraded") ? 1 : 2);
	for (size_t m = 0; m < sizeof(mem) / sizeof(mem[0]); m++) {
		prom_metric(mem[m].name, mem[m].help, "gauge");
		for (int i = 0; i < ndevs; i++) {
			long long v = *(long long *)((char *)&devs[i] + mem[m].off);

			if (v >= 0)
				printf("%s{device=\"%d\"} %lld\n", mem[m].name, devs[i].index, v);
		}
	}
	prom_metric("vnpu_clients", "open DRM files", "gauge");
	for (int i = 0; i < ndevs; i++)
		printf("vnpu_clients{device=\"%d\"} %d\n", devs[i].index, devs[i].clients);
	prom_metric("vnpu_engine_busy_seconds_total", "engine busy time, summed over the class",
		    "counter");
	for (int i = 0; i < ndevs; i++)
		for (int c = 0; c < 2; c++)
			if (devs[i].busy[c] >= 0)
				printf("vnpu_engine_busy_seconds_total{device=\"%d\",engine=\"%s\"} %.9f\n",
				       devs[i].index, cls[c], devs[i].busy[c] / 1e9);
	prom_metric("vnpu_engines", "engines per class", "gauge");
	for (int i = 0; i < ndevs; i++)
		for (int c = 0; c < 2; c++)
			printf("vnpu_engines{device=\"%d\",engine=\"%s\"} %d\n", devs[i].index, cls[c],
			       c ? devs[i].copy : devs[i].compute);
	prom_metric("vnpu_resets_total", "device resets", "counter");
	for (int i = 0; i < ndevs; i++)
		if (devs[i].reset_count >= 0)
			printf("vnpu_resets_total{device=\"%d\"} %lld\n", devs[i].index,
			       devs[i].reset_count);
	prom_metric("vnpu_process_memory_bytes", "memory of a process's files", "gauge");
	for (int i = 0; i < napps; i++)
		for (int r = 0; r < 2; r++) {
			printf("vnpu_process_memory_bytes{device=\"%d\",pid=\"%d\",comm=\"",
			       devs[apps[i].dev].index, apps[i].pid);
			prom_label_str(apps[i].comm);
			printf("\",region=\"%s\"} %lld\n", r ? "host" : "vram",
			       r ? apps[i].host : apps[i].vram);
		}
	prom_metric("vnpu_process_quota_soft_bytes", "enforced VRAM limit (absent: unlimited)",
		    "gauge");
	for (int i = 0; i < napps; i++)
		if (apps[i].has_quota && apps[i].q.soft_limit != DRM_VNPU_QUOTA_UNLIMITED)
			printf("vnpu_process_quota_soft_bytes{device=\"%d\",pid=\"%d\"} %llu\n",
			       devs[apps[i].dev].index, apps[i].pid,
			       (unsigned long long)apps[i].q.soft_limit);
	prom_metric("vnpu_process_engine_busy_seconds_total", "engine time of a process's jobs",
		    "counter");
	for (int i = 0; i < napps; i++)
		for (int c = 0; c < 2; c++)
			if (apps[i].eng[c] >= 0)
				printf("vnpu_process_engine_busy_seconds_total{device=\"%d\",pid=\"%d\",engine=\"%s\"} %.9f\n",
				       devs[apps[i].dev].index, apps[i].pid, cls[c],
				       apps[i].eng[c] / 1e9);
}

/* ---- top --------------------------------------------------------------- */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void bar(double v, int width)
{
	int n = v < 0 ? 0 : (int)(v * width / 100 + 0.5);

	if (n > width)
		n = width;
	putchar('[');
	for (int i = 0; i < width; i++)
		putchar(i < n ? '#' : (v < 0 ? '?' : '.'));
	putchar(']');
}

static void draw_top(double interval)
{
	char a[24], b[24], t[32];
	time_t now = time(NULL);

	strftime(t, sizeof(t), "%H:%M:%S", localtime(&now));
	printf("\033[H\033[2J");
	printf("vnpu-smi top  %s  every %.1fs  (q to quit)\r\n\r\n", t, interval);
	if (!ndevs)
		printf("No vnpu devices found\r\n");
	for (int i = 0; i < ndevs; i++) {
		struct smi_dev *d = &devs[i];
		double mem = d->vram_total > 0 ? 100.0 * d->vram_used / d->vram_total : 0;

		human(d->vram_used, a, sizeof(a));
		human(d->vram_total, b, sizeof(b));
		printf("%s %-11s MEM ", d->name, d->health);
		bar(mem, 20);
		printf(" %s/%s\r\n", a, b);
		printf("      COMPUTE ");
		bar(d->util[0], 20);
		pct(d->util[0], a, sizeof(a));
		printf(" %-4s COPY ", a);
		bar(d->util[1], 20);
		pct(d->util[1], a, sizeof(a));
		printf(" %s\r\n", a);
	}
	printf("\r\n%-7s %-16s", "PID", "NAME");
	for (int i = 0; i < ndevs; i++)
		printf(" %-26s", devs[i].name);
	printf("\r\n");
	/* Processes x devices: one row per process, one cell per device. */
	for (int i = 0; i < napps; i++) {
		int seen = 0;

		for (int j = 0; j < i; j++)
			seen |= apps[j].pid == apps[i].pid;
		if (seen)
			continue;
		printf("%-7d %-16.16s", apps[i].pid, apps[i].comm);
		for (int d = 0; d < ndevs; d++) {
			struct smi_app *cell = NULL;

			for (int j = 0; j < napps; j++)
				if (apps[j].pid == apps[i].pid && apps[j].dev == d)
					cell = &apps[j];
			if (!cell) {
				printf(" %-26s", "");
				continue;
			}
			human(cell->vram, a, sizeof(a));
			pct(cell->util[0], b, sizeof(b));
			printf(" %-10s ", a);
			bar(cell->util[0] < 0 ? 0 : cell->util[0], 8);
			printf(" %-4s", b);
		}
		printf("\r\n");
	}
	if (!napps)
		printf("(no processes use a vnpu device)\r\n");
	fflush(stdout);
}

static int run_top(double interval)
{
	struct termios old, raw;
	int tty = isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &old);

	if (tty) {
		raw = old;
		raw.c_lflag &= ~(ICANON | ECHO);
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	printf("\033[?25l");
	while (!stop_flag) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		char c;

		collect(0.25, 0);
		draw_top(interval);
		if (poll(&pfd, 1, (int)(interval * 1000)) > 0) {
			if (read(STDIN_FILENO, &c, 1) != 1 || c == 'q' || c == 'Q')
				break;
		}
	}
	printf("\033[?25h\n");
	if (tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &old);
	return 0;
}

/* ---- watch ------------------------------------------------------------- */

enum { W_CTX, W_QUEUES, W_SYNCOBJS, W_BUFS, W_BYTES, W_N };
static const char *const watch_names[W_N] = { "contexts", "queues", "syncobjs", "buffers",
					       "bytes" };

static int pid_alive(int pid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return access(path, F_OK) == 0;
}

static void stamp(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
	snprintf(buf + strlen(buf), len - strlen(buf), ".%03ld", ts.tv_nsec / 1000000);
}

/*
 * Samples the kernel's counts for @pid, summed over devices: contexts
 * (open DRM files), queues, syncobjs and buffer handles (fdinfo vnpu-*;
 * buffers fall back to QUOTA_GET's VRAM buffers on older drivers), bytes
 * (QUOTA_GET VRAM plus host-pinned, else fdinfo). Counts the driver does
 * not report are NO_VALUE.
 */
static int watch_sample(int pid, long long *v)
{
	for (int i = 0; i < W_N; i++)
		v[i] = NO_VALUE;
	scan_devices();
	scan_clients(pid);
	if (!pid_alive(pid))
		return -1;
	v[W_CTX] = v[W_BYTES] = 0;
	for (int i = 0; i < napps; i++) {
		v[W_CTX] += apps[i].files;
		add_count(&v[W_QUEUES], apps[i].queues);
		add_count(&v[W_SYNCOBJS], apps[i].syncobjs);
		if (apps[i].handles >= 0)
			add_count(&v[W_BUFS], apps[i].handles);
		else if (apps[i].has_quota)
			add_count(&v[W_BUFS], (long long)apps[i].q.bo_count);
		if (apps[i].has_quota)
			v[W_BYTES] += (long long)(apps[i].q.used + apps[i].q.host_used);
		else
			v[W_BYTES] += apps[i].vram + apps[i].host;
	}
	return 0;
}

/* A watch column: the count, or "-" when the driver does not report it. */
static const char *watch_cell(char *buf, size_t len, long long v)
{
	if (v < 0)
		return "-";
	snprintf(buf, len, "%lld", v);
	return buf;
}

static int run_watch(int pid, double interval, long count)
{
	long long (*s)[W_N] = NULL;
	long n = 0, cap = 0;
	int flagged = 0, exited = 0;
	char t[32], cq[24], cs[24], cb[24];

	if (pid <= 0 || !pid_alive(pid)) {
		fprintf(stderr, "vnpu-smi: --watch: no process %d\n", pid);
		return 1;
	}
	printf("# vnpu-smi --watch %d every %.2fs\n", pid, interval);
	printf("%-12s %8s %8s %8s %8s %12s\n", "TIME", watch_names[0], watch_names[1],
	       watch_names[2], watch_names[3], watch_names[4]);
	fflush(stdout);
	while (!stop_flag && (count <= 0 || n < count)) {
		long long v[W_N];

		if (n == cap) {
			long long (*grown)[W_N];

			cap = cap ? cap * 2 : 64;
			grown = realloc(s, cap * sizeof(*s));
			if (!grown) {
				free(s);
				return 1;
			}
			s = grown;
		}
		stamp(t, sizeof(t));
		if (watch_sample(pid, v)) {
			printf("%-12s pid %d exited\n", t, pid);
			exited = 1;
			break;
		}
		memcpy(s[n++], v, sizeof(v));
		printf("%-12s %8lld %8s %8s %8s %12lld\n", t, v[W_CTX],
		       watch_cell(cq, sizeof(cq), v[W_QUEUES]),
		       watch_cell(cs, sizeof(cs), v[W_SYNCOBJS]),
		       watch_cell(cb, sizeof(cb), v[W_BUFS]), v[W_BYTES]);
		fflush(stdout);
		if (count <= 0 || n < count)
			usleep((useconds_t)(interval * 1e6));
	}
	/*
	 * A process that exited closed its files on the way out: samples
	 * taken after it closed its last one are its teardown, not a return
	 * to the baseline.
	 */
	while (exited && n > 0 && s[n - 1][W_CTX] == 0)
		n--;
	/*
	 * Growth that does not return to baseline: the last sample is above
	 * the first and no sample of the second half came back down to it.
	 */
	for (int m = 0; m < W_N && n >= 3; m++) {
		long long base = s[0][m], low = s[n / 2][m];

		if (s[0][m] < 0)
			continue;
		for (long i = n / 2; i < n; i++)
			if (s[i][m] < low)
				low = s[i][m];
		if (s[n - 1][m] > base && low > base) {
			printf("LEAK? %s grew from %lld to %lld over %ld samples and never returned to the baseline\n",
			       watch_names[m], base, s[n - 1][m], n);
			flagged = 1;
		}
	}
	if (!flagged)
		printf("no growth above the baseline (%ld samples%s)\n", n, exited ? ", process exited" : "");
	free(s);
	return 0;
}

/* ---- quota, reset, error ----------------------------------------------- */

static int parse_bytes(const char *s, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!strcmp(s, "max") || !strcmp(s, "unlimited")) {
		*out = DRM_VNPU_QUOTA_UNLIMITED;
		return 0;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	switch (toupper((unsigned char)*end)) {
	case 'K': v <<= 10; end++; break;
	case 'M': v <<= 20; end++; break;
	case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int open_device(int index, int *fd)
{
	char node[48];
	int d;

	if (!scan_devices()) {
		fprintf(stderr, "vnpu-smi: no vnpu devices found (is the vnpu module loaded?)\n");
		return -1;
	}
	d = dev_by_index(index);
	if (d < 0) {
		fprintf(stderr, "vnpu-smi: no device %d (there %s %d)\n", index,
			ndevs == 1 ? "is" : "are", ndevs);
		return -1;
	}
	snprintf(node, sizeof(node), "/dev/accel/accel%u", devs[d].minor);
	*fd = open(node, O_RDWR | O_CLOEXEC);
	if (*fd < 0) {
		fprintf(stderr, "vnpu-smi: %s: %s\n", node, strerror(errno));
		return -1;
	}
	return 0;
}

static int run_quota(int argc, char **argv)
{
	unsigned long long soft = 0, hard = 0;
	struct drm_vnpu_quota q = { 0 };
	int device = 0, fd, c, ret = 0;
	char *end, s[24], h[24], u[24], p[24];
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "soft", required_argument, NULL, 's' },
		{ "hard", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:s:H:", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			device = (int)strtol(optarg, &end, 10);
			if (*end || device < 0) {
				fprintf(stderr, "vnpu-smi: quota: bad device '%s'\n", optarg);
				return 2;
			}
			break;
		case 's':
		case 'H':
			if (parse_bytes(optarg, c == 's' ? &soft : &hard)) {
				fprintf(stderr, "vnpu-smi: quota: bad size '%s' (bytes, 64M, 1G or max)\n",
					optarg);
				return 2;
			}
			q.flags |= c == 's' ? DRM_VNPU_QUOTA_SET_SOFT : DRM_VNPU_QUOTA_SET_HARD;
			break;
		default:
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: vnpu-smi quota PID [--device N] [--soft SIZE] [--hard SIZE]\n");
		return 2;
	}
	q.pid = (int)strtol(argv[optind], &end, 10);
	if (*end || q.pid <= 0) {
		fprintf(stderr, "vnpu-smi: quota: bad pid '%s'\n", argv[optind]);
		return 2;
	}
	q.soft_limit = soft;
	q.hard_limit = hard;
	if (open_device(device, &fd))
		return 1;
	if (ioctl(fd, q.flags ? DRM_IOCTL_VNPU_QUOTA_SET : DRM_IOCTL_VNPU_QUOTA_GET, &q)) {
		int err = errno;

		fprintf(stderr, "vnpu-smi: quota of pid %s on vnpu%d: %s\n", argv[optind], device,
			err == ESRCH ? "no such process" :
			err == EPERM ? "not permitted (another process's quota, or raising a hard limit, needs root)" :
			err == EINVAL ? "invalid (the soft limit may not exceed the hard limit)" :
			strerror(err));
		ret = 1;
	} else {
		limit_str(q.soft_limit, s, sizeof(s));
		limit_str(q.hard_limit, h, sizeof(h));
		human((long long)q.used, u, sizeof(u));
		human((long long)q.peak, p, sizeof(p));
		printf("pid %d on vnpu%d: soft %s, hard %s, used %s, peak %s, %llu buffers, host %llu bytes\n",
		       q.pid, device, s, h, u, p, (unsigned long long)q.bo_count,
		       (unsigned long long)q.host_used);
	}
	close(fd);
	return ret;
}

static int run_reset(const char *arg)
{
	char path[400], *end;
	int index = (int)strtol(arg, &end, 10), d, fd;

	if (*end || index < 0) {
		fprintf(stderr, "vnpu-smi: --reset: bad device '%s'\n", arg);
		return 2;
	}
	if (!scan_devices()) {
		fprintf(stderr, "vnpu-smi: no vnpu devices found (is the vnpu module loaded?)\n");
		return 1;
	}
	d = dev_by_index(index);
	if (d < 0) {
		fprintf(stderr, "vnpu-smi: --reset: no device %d\n", index);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/vnpu/reset", devs[d].dir);
	if (access(path, F_OK)) {
		fprintf(stderr, "vnpu-smi: --reset: this driver (uAPI %s) has no reset; it needs uAPI 1.3\n",
			devs[d].uapi);
		return 1;
	}
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, "1\n", 2) != 2) {
		int err = errno;

		fprintf(stderr, "vnpu-smi: --reset vnpu%d: %s\n", index,
			err == EACCES || err == EPERM ? "permission denied: resetting needs root" :
			strerror(err));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	close(fd);
	read_dev(&devs[d]);
	printf("vnpu%d reset; health %s, %lld resets so far\n", index, devs[d].health,
	       devs[d].reset_count);
	return 0;
}

struct errno_text {
	int err;
	const char *name, *text;
};

/* What the vnpu driver means by each errno (see Documentation/memory.rst and execution.rst). */
static const struct errno_text errno_texts[] = {
	{ EINVAL, "EINVAL", "a malformed request: unknown flags, non-zero padding or reserved fields, a size 0 or out of range, a soft limit above the hard limit" },
	{ ENOSPC, "ENOSPC", "the device has no free VRAM range large enough (full or fragmented); free buffers" },
	{ EDQUOT, "EDQUOT", "the buffer would take the process over its VRAM soft limit; free buffers or raise the soft limit (vnpu-smi quota)" },
	{ ENOMEM, "ENOMEM", "the host could not back the buffer or job, or fault injection said so" },
	{ ENOENT, "ENOENT", "a buffer handle or queue id the file does not hold" },
	{ EACCES, "EACCES", "mmap of a VRAM buffer created without MAPPABLE, or a command touching memory outside the file's buffers" },
	{ EPERM, "EPERM", "needs privileges: another process's quota or a hard-limit raise needs CAP_SYS_ADMIN, realtime priority CAP_SYS_NICE" },
	{ ESRCH, "ESRCH", "the pid names no live process (quota calls), or the job's queue was destroyed by a killed process" },
	{ ENODEV, "ENODEV", "the device was unplugged; close it and reopen another" },
	{ EMFILE, "EMFILE", "the process already has max_queues_per_process queues on the device; destroy streams" },
	{ ETIMEDOUT, "ETIMEDOUT", "a job ran longer than its queue's timeout (job_timeout_ms) and was stopped" },
	{ EIO, "EIO", "the device needs a reset (or a reset cancelled the job); vnpu-smi --reset as root" },
	{ ECANCELED, "ECANCELED", "the queue is guilty after a timeout, or the job was behind one that timed out; recreate the stream" },
	{ E2BIG, "E2BIG", "an ioctl struct longer than the kernel knows has non-zero bytes past its end (newer userspace)" },
	{ ENOTTY, "ENOTTY", "an ioctl this driver does not know (older kernel module)" },
	{ EOPNOTSUPP, "EOPNOTSUPP", "importing a dma-buf that vnpu did not export" },
	{ EFAULT, "EFAULT", "a pointer in the request points to unmapped memory" },
	{ EBUSY, "EBUSY", "the device or module is in use" },
	{ 0, NULL, NULL },
};

static int run_error(const char *arg)
{
	const struct errno_text *e = NULL;
	char *end;
	long v = strtol(arg, &end, 10);
	int is_errno = 0, status = -1;

	if (*arg == 'E' && !strncmp(arg, "E", 1) && *end) {
		for (int i = 0; errno_texts[i].name; i++)
			if (!strcasecmp(errno_texts[i].name, arg))
				e = &errno_texts[i];
		if (!e) {
			fprintf(stderr, "vnpu-smi: error: unknown code '%s'\n", arg);
			return 1;
		}
		is_errno = 1;
	} else if (!strncasecmp(arg, "VNPU_", 5)) {
		for (int s = 0; s < 1000; s++)
			if (!strcasecmp(vnpu_status_name(s), arg))
				status = s;
		if (status < 0) {
			fprintf(stderr, "vnpu-smi: error: unknown code '%s'\n", arg);
			return 1;
		}
	} else if (*end || end == arg) {
		fprintf(stderr, "vnpu-smi: error: '%s' is not a code (a number, VNPU_..., or E...)\n",
			arg);
		return 1;
	} else if (v < 0) {
		is_errno = 1;
		v = -v;
	} else {
		const char *name = vnpu_status_name((int)v);

		if (v == 0 || (name && strncmp(name, "VNPU_ERROR_UNKNOWN", 18) &&
			       !strncmp(name, "VNPU_", 5)))
			status = (int)v;
		else
			is_errno = 1;
	}
	if (is_errno) {
		if (!e)
			for (int i = 0; errno_texts[i].name; i++)
				if (errno_texts[i].err == v)
					e = &errno_texts[i];
		if (!e) {
			if (v <= 0 || v > 4095 || !strncmp(strerror((int)v), "Unknown", 7)) {
				fprintf(stderr, "vnpu-smi: error: unknown code '%s'\n", arg);
				return 1;
			}
			printf("kernel errno %ld: %s\n", v, strerror((int)v));
			return 0;
		}
		printf("kernel errno -%d %s (%s): %s\n", e->err, e->name, strerror(e->err), e->text);
		printf("runtime status: %s\n", vnpu_status_name(e->err == ETIMEDOUT ? VNPU_ERROR_JOB_TIMEOUT :
				       e->err == EIO ? VNPU_ERROR_DEVICE_FAULT :
				       e->err == ENODEV ? VNPU_ERROR_DEVICE_LOST :
				       e->err == ENOSPC ? VNPU_ERROR_OUT_OF_DEVICE_MEMORY :
				       e->err == EDQUOT ? VNPU_ERROR_QUOTA_EXCEEDED :
				       e->err == ENOMEM ? VNPU_ERROR_OUT_OF_HOST_MEMORY :
				       e->err == EMFILE ? VNPU_ERROR_TOO_MANY_STREAMS :
				       e->err == EPERM || e->err == EACCES ? VNPU_ERROR_PERMISSION_DENIED :
				       VNPU_ERROR_DRIVER));
		return 0;
	}
	printf("runtime status %d %s: %s\n", status, vnpu_status_name(status),
	       vnpu_status_string(status));
	return 0;
}

/* ---- topo -------------------------------------------------------------- */

static const char *const topo_classes[] = { "self", "board", "node", "system" };
static const char *const topo_short[] = { "X", "BRD", "NODE", "SYS" };

/* Class index of @word in link_class, or -1. */
static int topo_class(const char *word)
{
	for (int c = 0; c < 4; c++)
		if (!strcmp(word, topo_classes[c]))
			return c;
	return -1;
}

/* Splits a row of @n space-separated words of the device's vnpu/@attr. */
static int topo_row(const struct smi_dev *d, const char *attr, char words[][16], int n)
{
	char vdir[320], buf[1024], *save = NULL, *tok;
	int i = 0;

	snprintf(vdir, sizeof(vdir), "%s/vnpu", d->dir);
	if (vnpu_read_attr(vdir, attr, buf, sizeof(buf)))
		return -1;
	for (tok = strtok_r(buf, " ", &save); tok && i < n; tok = strtok_r(NULL, " ", &save))
		snprintf(words[i++], 16, "%s", tok);
	return i == n && !tok ? 0 : -1;
}

/*
 * The link matrix, like nvidia-smi topo -m: one row and column per device
 * (rows and columns are device indices, so the module's whole set must be
 * present), then each device's NUMA node, topology node and board, then the
 * legend with each class's bandwidth and latency as configured.
 */
static int run_topo(void)
{
	static char cls[MAX_DEVS][MAX_DEVS][16];
	long long mbps[4] = { -1, -1, -1, -1 }, ns[4] = { -1, -1, -1, -1 };
	char bw[MAX_DEVS][16], lat[MAX_DEVS][16], vdir[320];

	if (!scan_devices()) {
		printf("No vnpu devices found.\n");
		return 0;
	}
	for (int i = 0; i < ndevs; i++) {
		if (devs[i].index != i || topo_row(&devs[i], "link_class", cls[i], ndevs) ||
		    topo_row(&devs[i], "link_bandwidth_mbps", bw, ndevs) ||
		    topo_row(&devs[i], "link_latency_ns", lat, ndevs)) {
			fprintf(stderr, "vnpu-smi topo: %s has no topology (needs uAPI 1.4 and every device of the module)\n",
				devs[i].name);
			return 1;
		}
		for (int j = 0; j < ndevs; j++) {
			int c = topo_class(cls[i][j]);

			if (c < 0) {
				fprintf(stderr, "vnpu-smi topo: %s: unknown link class '%s'\n",
					devs[i].name, cls[i][j]);
				return 1;
			}
			mbps[c] = strtoll(bw[j], NULL, 10);
			ns[c] = strtoll(lat[j], NULL, 10);
		}
	}
	printf("%-8s", "");
	for (int j = 0; j < ndevs; j++)
		printf("%-8s", devs[j].name);
	printf("%-15s%-7s%s\n", "NUMA Affinity", "Node", "Board");
	for (int i = 0; i < ndevs; i++) {
		char numa[16];

		printf("%-8s", devs[i].name);
		for (int j = 0; j < ndevs; j++)
			printf("%-8s", topo_short[topo_class(cls[i][j])]);
		snprintf(vdir, sizeof(vdir), "%s/vnpu", devs[i].dir);
		if (devs[i].numa < 0)
			snprintf(numa, sizeof(numa), "N/A");
		else
			snprintf(numa, sizeof(numa), "%d", devs[i].numa);
		printf("%-15s%-7lld%lld\n", numa, read_ll(vdir, "topology_node"),
		       read_ll(vdir, "topology_board"));
	}
	printf("\nLegend:\n\n");
	printf("  X    = Self\n");
	for (int c = 3; c >= 1; c--) {
		static const char *const what[] = {
			NULL,
			"Connection on the same board (switch)",
			"Connection between boards of the same node",
			"Connection between nodes",
		};

		if (mbps[c] < 0)
			printf("  %-4s = %s\n", topo_short[c], what[c]);
		else
			printf("  %-4s = %s: %lld MB/s, %lld ns\n", topo_short[c], what[c], mbps[c],
			       ns[c]);
	}
	return 0;
}

/* ---- cluster integration: Slurm GRES and Kubernetes ---------------------- */

static const char *const link_names[] = { "self", "board", "node", "system" };

/* Slurm's Links= weight of a link class: more for nearer, -1 for self. */
static int link_weight(const char *cls)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(cls, link_names[i]))
			return i == 0 ? -1 : 3 - i;
	return 0;
}

/* Host CPUs of NUMA node @node ("0-3"), or "" when unknown. */
static void node_cpus(int node, char *buf, size_t len)
{
	char dir[64];

	buf[0] = '\0';
	if (node < 0)
		return;
	snprintf(dir, sizeof(dir), "/sys/devices/system/node/node%d", node);
	if (vnpu_read_attr(dir, "cpulist", buf, len))
		buf[0] = '\0';
}

/* The Links= list of device @d, from vnpu/link_class; "" without topology. */
static void device_links(const struct smi_dev *d, char *buf, size_t len)
{
	char vdir[320], cls[1024], *save = NULL, *w;
	size_t off = 0;

	buf[0] = '\0';
	snprintf(vdir, sizeof(vdir), "%s/vnpu", d->dir);
	if (vnpu_read_attr(vdir, "link_class", cls, sizeof(cls)))
		return;
	for (w = strtok_r(cls, " \n", &save); w && off < len; w = strtok_r(NULL, " \n", &save))
		off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? "," : "",
					link_weight(w));
}

/* Minors as a Slurm range list: "0-3,5". */
static void minor_ranges(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < ndevs && off < len; i++) {
		int j = i;

		while (j + 1 < ndevs && devs[j + 1].minor == devs[j].minor + 1)
			j++;
		if (j > i)
			off += (size_t)snprintf(buf + off, len - off, "%s%u-%u", off ? "," : "",
						devs[i].minor, devs[j].minor);
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%u", off ? "," : "",
						devs[i].minor);
		i = j;
	}
}

static int cmp_minor(const void *a, const void *b)
{
	const struct smi_dev *x = a, *y = b;

	return (x->minor > y->minor) - (x->minor < y->minor);
}

static void host_name(char *buf, size_t len)
{
	if (gethostname(buf, len))
		snprintf(buf, len, "localhost");
	buf[len - 1] = '\0';
	buf[strcspn(buf, ".")] = '\0';
}

/* gres.conf lines for this machine, plus the slurm.conf and cgroup.conf notes. */
static int print_gres(void)
{
	char host[256], ranges[512], cpus[256], links[512];
	int detailed = 0;

	if (!scan_devices()) {
		fprintf(stderr, "vnpu-smi: no vnpu devices found (is the vnpu module loaded?)\n");
		return 1;
	}
	qsort(devs, ndevs, sizeof(devs[0]), cmp_minor);
	host_name(host, sizeof(host));
	for (int i = 0; i < ndevs; i++) {
		node_cpus(devs[i].numa, cpus, sizeof(cpus));
		device_links(&devs[i], links, sizeof(links));
		detailed |= cpus[0] || links[0];
	}
	printf("# Slurm GRES for the %d vnpu device%s of %s (vnpu-smi gres).\n", ndevs,
	       ndevs == 1 ? "" : "s", host);
	printf("# slurm.conf:  GresTypes=vnpu\n");
	printf("#              NodeName=%s ... Gres=vnpu:%d\n", host, ndevs);
	printf("# cgroup.conf: ConstrainDevices=yes\n");
	printf("#   so that a job opens only the /dev/accel/accelN Slurm gave it; the vnpu\n");
	printf("#   runtime skips the nodes it may not open. Jobs ask with --gres=vnpu:N.\n");
	printf("# gres.conf:\n");
	if (!detailed) {
		minor_ranges(ranges, sizeof(ranges));
		printf("NodeName=%s Name=vnpu File=/dev/accel/accel%s%s%s\n", host,
		       strchr(ranges, '-') || strchr(ranges, ',') ? "[" : "", ranges,
		       strchr(ranges, '-') || strchr(ranges, ',') ? "]" : "");
		return 0;
	}
	/* One line per device: its CPUs (Cores=) and its links (Links=). */
	for (int i = 0; i < ndevs; i++) {
		node_cpus(devs[i].numa, cpus, sizeof(cpus));
		device_links(&devs[i], links, sizeof(links));
		printf("NodeName=%s Name=vnpu File=/dev/accel/accel%u%s%s%s%s\n", host,
		       devs[i].minor, cpus[0] ? " Cores=" : "", cpus, links[0] ? " Links=" : "",
		       links);
	}
	return 0;
}

/* squat/generic-device-plugin configuration exposing each vnpu device node. */
static int print_k8s(void)
{
	char host[256];

	if (!scan_devices()) {
		fprintf(stderr, "vnpu-smi: no vnpu devices found (is the vnpu module loaded?)\n");
		return 1;
	}
	qsort(devs, ndevs, sizeof(devs[0]), cmp_minor);
	host_name(host, sizeof(host));
	printf("# Kubernetes: /etc/generic-device-plugin/config.yaml of the\n");
	printf("# squat/generic-device-plugin DaemonSet on %s (vnpu-smi k8s), %d vnpu\n", host,
	       ndevs);
	printf("# device%s. Pods ask for whole devices with\n", ndevs == 1 ? "" : "s");
	printf("#   resources: {limits: {squat.ai/vnpu: 1}}\n");
	printf("# and get the device node; the vnpu runtime in the pod sees that device only.\n");
	printf("devices:\n");
	printf("  - name: vnpu\n");
	printf("    groups:\n");
	for (int i = 0; i < ndevs; i++) {
		printf("      # vnpu%d, NUMA node %d\n", devs[i].index, devs[i].numa);
		printf("      - paths:\n");
		printf("          - path: /dev/accel/accel%u\n", devs[i].minor);
	}
	return 0;
}

/* ---- main -------------------------------------------------------------- */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: vnpu-smi [OPTIONS]                 every device, its health and its processes\n"
		"       vnpu-smi --query-device=FIELDS --format=csv[,noheader][,nounits]\n"
		"       vnpu-smi --query-compute-apps=FIELDS --format=csv[,noheader][,nounits]\n"
		"       vnpu-smi top [-i SECONDS]           live view, q quits\n"
		"       vnpu-smi --watch PID [-i SECONDS] [-c COUNT]   leak monitor\n"
		"       vnpu-smi quota PID [--device N] [--soft SIZE] [--hard SIZE]\n"
		"       vnpu-smi --reset N                  reset device N (root)\n"
		"       vnpu-smi topo [-m]                  link matrix between the devices\n"
		"       vnpu-smi error CODE                 explain a runtime status or errno\n"
		"       vnpu-smi gres                       Slurm gres.conf for this machine\n"
		"       vnpu-smi k8s                        Kubernetes generic device plugin config\n"
		"Options:\n"
		"  -j, --json              all devices and processes as one JSON object\n"
		"  -p, --prometheus        Prometheus text exposition format\n"
		"      --help-query        list every query field\n"
		"  -l, --loop SECONDS      repeat the output every SECONDS\n"
		"  -i, --interval SECONDS  top/--watch refresh period (default 1)\n"
		"  -c, --count N           --watch: stop after N samples\n"
		"  -s, --sample MS         window for utilization (default 200 ms, 0: none)\n"
		"  -h, --help              this text\n");
}

static double parse_seconds(const char *s, const char *opt)
{
	char *end;
	double v = strtod(s, &end);

	if (*end || end == s || v <= 0 || v > 86400) {
		fprintf(stderr, "vnpu-smi: %s: bad number of seconds '%s'\n", opt, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	enum { O_QDEV = 256, O_QAPPS, O_FORMAT, O_HELPQ, O_WATCH, O_RESET };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ "query-device", required_argument, NULL, O_QDEV },
		{ "query-gpu", required_argument, NULL, O_QDEV },
		{ "query-compute-apps", required_argument, NULL, O_QAPPS },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "help-query", no_argument, NULL, O_HELPQ },
		{ "loop", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "sample", required_argument, NULL, 's' },
		{ "watch", required_argument, NULL, O_WATCH },
		{ "reset", required_argument, NULL, O_RESET },
		{ NULL, 0, NULL, 0 },
	};
	const char *qdev = NULL, *qapps = NULL, *format = NULL, *reset = NULL, *env;
	int json = 0, prom = 0, c, watch = 0, fields[64], nfields = 0;
	double loop = 0, interval = 1, sample = 0.2;
	long count = 0;
	struct format fmt = { 1, 1, 1 };
	char *end;

	env = getenv("VNPU_SMI_SYSFS");
	if (env && *env)
		sys_accel = env;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (argc > 1 && !strcmp(argv[1], "error")) {
		if (argc != 3) {
			fprintf(stderr, "usage: vnpu-smi error CODE\n");
			return 2;
		}
		return run_error(argv[2]);
	}
	if (argc > 1 && !strcmp(argv[1], "quota"))
		return run_quota(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "topo")) {
		if (argc > 3 || (argc == 3 && strcmp(argv[2], "-m") && strcmp(argv[2], "--matrix"))) {
			fprintf(stderr, "usage: vnpu-smi topo [-m]\n");
			return 2;
		}
		return run_topo();
	}
	if (argc == 2 && !strcmp(argv[1], "gres"))
		return print_gres();
	if (argc == 2 && !strcmp(argv[1], "k8s"))
		return print_k8s();
	while ((c = getopt_long(argc, argv, "jphl:i:c:s:", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'p':
			prom = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case O_QDEV:
			qdev = optarg;
			break;
		case O_QAPPS:
			qapps = optarg;
			break;
		case O_FORMAT:
			format = optarg;
			break;
		case O_HELPQ:
			help_query();
			return 0;
		case 'l':
			loop = parse_seconds(optarg, "--loop");
			break;
		case 'i':
			interval = parse_seconds(optarg, "--interval");
			break;
		case 'c':
			count = strtol(optarg, &end, 10);
			if (*end || count <= 0) {
				fprintf(stderr, "vnpu-smi: --count: bad number '%s'\n", optarg);
				return 2;
			}
			break;
		case 's':
			sample = strtod(optarg, &end) / 1000;
			if (*end || sample < 0 || sample > 10) {
				fprintf(stderr, "vnpu-smi: --sample: bad milliseconds '%s'\n", optarg);
				return 2;
			}
			break;
		case O_WATCH:
			watch = (int)strtol(optarg, &end, 10);
			if (*end || watch <= 0) {
				fprintf(stderr, "vnpu-smi: --watch: bad pid '%s'\n", optarg);
				return 2;
			}
			break;
		case O_RESET:
			reset = optarg;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc && !strcmp(argv[optind], "top") && optind + 1 == argc)
		return run_top(interval);
	if (optind != argc) {
		fprintf(stderr, "vnpu-smi: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (reset)
		return run_reset(reset);
	if (watch)
		return run_watch(watch, interval, count);
	if (qdev && qapps) {
		fprintf(stderr, "vnpu-smi: give --query-device or --query-compute-apps, not both\n");
		return 2;
	}
	if (format && !qdev && !qapps) {
		fprintf(stderr, "vnpu-smi: --format needs --query-device or --query-compute-apps\n");
		return 2;
	}
	if ((qdev || qapps) && !format) {
		fprintf(stderr, "vnpu-smi: a query needs --format=csv[,noheader][,nounits]\n");
		return 2;
	}
	if (format && parse_format(format, &fmt))
		return 2;
	if (qdev || qapps) {
		nfields = parse_fields(qdev ? dev_fields : app_fields, qdev ? qdev : qapps,
				       qdev ? "--query-device" : "--query-compute-apps", fields, 64);
		if (nfields < 0)
			return 2;
	}
	if (json + prom + (nfields > 0) > 1) {
		fprintf(stderr, "vnpu-smi: choose one of --json, --prometheus, --query-*\n");
		return 2;
	}
	for (;;) {
		collect(sample, 0);
		if (json)
			print_json();
		else if (prom)
			print_prometheus();
		else if (nfields > 0)
			print_query(qapps != NULL, fields, nfields, &fmt);
		else
			print_default();
		fflush(stdout);
		if (!loop || stop_flag)
			break;
		usleep((useconds_t)(loop * 1e6));
		if (stop_flag)
			break;
		if (!json && !prom && !nfields)
			printf("\n");
	}
	return 0;
}
