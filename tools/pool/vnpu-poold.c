// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-poold: the per-node device pool. It keeps, for every vnpu device,
 * its health, memory and topology, and the tenant -> device leases; it
 * places lease requests topology-aware, sets each tenant's kernel hard
 * quota on its leased devices (DRM_IOCTL_VNPU_QUOTA_SET) and takes the
 * lease back when the tenant's connection closes or its process ends.
 *
 * One thread, one epoll loop: requests are handled one at a time, each to
 * the end, so two requests never see the same free device. Each wakeup
 * serves every ready client once, then commits the state file once for
 * all the changes it made (group commit) before any of their replies is
 * sent. Protocol, configuration and security model: Documentation/pool.rst.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <drm/vnpu_accel.h>

#include "../common/attr.h"
#include "lease_proto.h"

#define MAX_DEVS LP_MAX_DEVICES
#define DEFAULT_CONFIG "/etc/vnpu/pool.conf"
#define DEFAULT_STATE "/var/lib/vnpu/pool.state"
#define SYS_ACCEL "/sys/class/accel"
#define STATE_MAGIC "vnpu-poold-state"
#define MAX_LIMITS 64

enum health { H_OK = 0, H_DEGRADED = 1, H_NEEDS_RESET = 2, H_UNKNOWN = 3 };
static const char *const health_names[] = { "ok", "degraded", "needs-reset", "unknown" };

/* Link classes of the topology, nearest first. */
enum link { L_SELF = 0, L_BOARD = 1, L_NODE = 2, L_SYSTEM = 3 };
static const char *const link_names[] = { "self", "board", "node", "system" };

/* The sysfs attributes read on every request or poll, kept open (dev.attr_fd). */
enum dev_attr { A_HEALTH, A_VRAM_USED, A_RESETS, A_DEFAULT_QUOTA, A_COUNT };
static const char *const dev_attr_names[A_COUNT] = {
	"health", "vram_used_bytes", "reset_count", "default_quota_bytes",
};

struct dev {
	int index;			/* physical index (sysfs vnpu/index) */
	unsigned int minor;
	char sysdir[300];		/* /sys/class/accel/accelN/device/vnpu */
	int fd;				/* /dev/accel/accelN, for the quota ioctl */
	int attr_fd[A_COUNT];		/* enum dev_attr in sysdir, or -errno */
	uint64_t vram_total, vram_used, reset_count;
	enum health health;
	int node;			/* topology node, 0 without topology */
	unsigned char link[MAX_DEVS];	/* enum link to each device position */
	uint32_t bw_mbps[MAX_DEVS], lat_ns[MAX_DEVS];
	int held;			/* out of service: see reason */
	char reason[120];
	int failed_in_lease;		/* turned unhealthy while leased */
	uint64_t reserved;		/* sum of the leases' memory */
	int nleases;
	int exclusive;			/* held by an exclusive lease */
};

struct lease {
	uint64_t id;
	uid_t uid;
	pid_t pid;
	unsigned long long start;	/* tenant's start time, /proc/PID/stat */
	struct conn *conn;		/* NULL once the daemon restarted */
	int mode, placement;
	uint64_t mem;			/* per device */
	int ndev;
	int devs[MAX_DEVS];		/* positions in devs[] */
	struct lease *next;
};

struct conn {
	int fd;
	uid_t uid;
	pid_t pid;
	int stat_fd;			/* /proc/PID/stat of the peer, or -1 */
	int hello;
	size_t len;
	long long partial_since;	/* ms; 0 when no partial request */
	const char *closing;		/* why it closes once its replies are out */
	char *out;			/* replies held until the state is committed */
	size_t outlen, outcap;
	char buf[LP_MAX_LINE];
	struct conn *next;
};

struct limit {
	int any;			/* "*": every uid without its own line */
	uid_t uid;
	uint64_t devices, memory;	/* UINT64_MAX: no limit */
};

static struct {
	char config[PATH_MAX];
	char socket[PATH_MAX];
	char state[PATH_MAX];
	int request_timeout_ms;
	int max_clients;
	int poll_ms;
	int hold_unhealthy;		/* "unhealthy hold": never reset */
	struct limit limits[MAX_LIMITS];
	int nlimits;
} cfg = {
	.config = DEFAULT_CONFIG,
	.socket = LP_DEFAULT_SOCKET,
	.state = DEFAULT_STATE,
	.request_timeout_ms = 5000,
	.max_clients = 256,
	.poll_ms = 200,
};

static struct dev devs[MAX_DEVS];
static int ndevs;
static struct lease *leases;
static struct conn *conns;
static int nconns;
static uint64_t next_id = 1;
static int state_dirty;		/* leases changed since the state file was written */
static int health_fresh;	/* devices' health read in this wakeup */
static const char *sys_accel = SYS_ACCEL;
static volatile sig_atomic_t stop;
static int socket_activated;	/* the socket is systemd's: leave it in place */

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vnpu-poold: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* ---- sysfs and the device -------------------------------------------- */

static int read_u64(const char *dir, const char *name, uint64_t *v)
{
	char buf[64];

	if (vnpu_read_attr(dir, name, buf, sizeof(buf)) || vnpu_lp_parse_u64(buf, v))
		return -1;
	return 0;
}

/* Attribute @a of @d, read through its open fd; 0 or -errno. */
static int dev_read(const struct dev *d, enum dev_attr a, char *buf, size_t len)
{
	return d->attr_fd[a] < 0 ? d->attr_fd[a] : vnpu_read_attr_fd(d->attr_fd[a], buf, len);
}

static int dev_read_u64(const struct dev *d, enum dev_attr a, uint64_t *v)
{
	char buf[64];

	if (dev_read(d, a, buf, sizeof(buf)) || vnpu_lp_parse_u64(buf, v))
		return -1;
	return 0;
}

static int dev_by_index(int index)
{
	for (int i = 0; i < ndevs; i++)
		if (devs[i].index == index)
			return i;
	return -1;
}

/* The value of default_quota_bytes: what a device gives processes without a lease. */
static uint64_t default_quota(const struct dev *d)
{
	char buf[64];
	uint64_t v;

	if (dev_read(d, A_DEFAULT_QUOTA, buf, sizeof(buf)) || !strcmp(buf, "max") ||
	    vnpu_lp_parse_u64(buf, &v))
		return DRM_VNPU_QUOTA_UNLIMITED;
	return v;
}

static void read_health(struct dev *d)
{
	char buf[32];

	d->health = H_UNKNOWN;
	if (!dev_read(d, A_HEALTH, buf, sizeof(buf)))
		for (int h = H_OK; h < H_UNKNOWN; h++)
			if (!strcmp(buf, health_names[h]))
				d->health = (enum health)h;
}

/* Memory in use and resets: for STATUS and placement, sampled each poll. */
static void read_usage(struct dev *d)
{
	if (dev_read_u64(d, A_VRAM_USED, &d->vram_used))
		d->vram_used = 0;
	if (dev_read_u64(d, A_RESETS, &d->reset_count))
		d->reset_count = 0;
}

/*
 * The topology the driver reports (vnpu/topology_node, link_class,
 * link_bandwidth_mbps, link_latency_ns: one word per device index). A
 * driver without it gets one node of equally linked devices.
 */
static void read_topology(struct dev *d)
{
	char buf[1024], *save = NULL, *w;
	uint64_t node;
	int i = 0;

	d->node = read_u64(d->sysdir, "topology_node", &node) ? 0 : (int)node;
	for (int p = 0; p < MAX_DEVS; p++) {
		d->link[p] = L_NODE;
		d->bw_mbps[p] = 0;
		d->lat_ns[p] = 0;
	}
	if (!vnpu_read_attr(d->sysdir, "link_class", buf, sizeof(buf)))
		for (w = strtok_r(buf, " ", &save); w && i < MAX_DEVS; w = strtok_r(NULL, " ", &save), i++) {
			int p = dev_by_index(i);

			for (int l = L_SELF; p >= 0 && l <= L_SYSTEM; l++)
				if (!strcmp(w, link_names[l]))
					d->link[p] = (unsigned char)l;
		}
	for (int which = 0; which < 2; which++) {
		i = 0;
		save = NULL;
		if (vnpu_read_attr(d->sysdir, which ? "link_latency_ns" : "link_bandwidth_mbps", buf,
			      sizeof(buf)))
			continue;
		for (w = strtok_r(buf, " ", &save); w && i < MAX_DEVS; w = strtok_r(NULL, " ", &save), i++) {
			int p = dev_by_index(i);
			uint64_t v;

			if (p < 0 || vnpu_lp_parse_u64(w, &v))
				continue;
			if (which)
				d->lat_ns[p] = (uint32_t)(v > UINT32_MAX ? UINT32_MAX : v);
			else
				d->bw_mbps[p] = (uint32_t)(v > UINT32_MAX ? UINT32_MAX : v);
		}
	}
	d->link[d - devs] = L_SELF;
}

static int cmp_dev(const void *a, const void *b)
{
	const struct dev *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static int scan_devices(void)
{
	DIR *dir = opendir(sys_accel);
	struct dirent *e;

	if (!dir)
		return 0;
	while ((e = readdir(dir)) && ndevs < MAX_DEVS) {
		struct dev *d = &devs[ndevs];
		unsigned int minor;
		uint64_t index;
		char node[64];

		if (sscanf(e->d_name, "accel%u", &minor) != 1)
			continue;
		memset(d, 0, sizeof(*d));
		d->minor = minor;
		snprintf(d->sysdir, sizeof(d->sysdir), "%s/%s/device/vnpu", sys_accel, e->d_name);
		if (read_u64(d->sysdir, "index", &index) ||
		    read_u64(d->sysdir, "vram_total_bytes", &d->vram_total))
			continue;	/* another accel driver */
		d->index = (int)index;
		snprintf(node, sizeof(node), "/dev/accel/accel%u", minor);
		d->fd = open(node, O_RDWR | O_CLOEXEC);
		if (d->fd < 0) {
			logmsg("%s: %s; skipping the device", node, strerror(errno));
			continue;
		}
		/* Kept open: a read from offset 0 is fresh, without a path walk. */
		for (int a = 0; a < A_COUNT; a++)
			d->attr_fd[a] = vnpu_open_attr(d->sysdir, dev_attr_names[a]);
		ndevs++;
	}
	closedir(dir);
	qsort(devs, ndevs, sizeof(devs[0]), cmp_dev);
	for (int i = 0; i < ndevs; i++) {
		read_topology(&devs[i]);
		read_health(&devs[i]);
		read_usage(&devs[i]);
	}
	return ndevs;
}

/* Sets @pid's soft and hard VRAM limit on @d; 0 or -errno. */
static int set_quota(struct dev *d, pid_t pid, uint64_t bytes)
{
	struct drm_vnpu_quota q = {
		.pid = pid,
		.flags = DRM_VNPU_QUOTA_SET_SOFT | DRM_VNPU_QUOTA_SET_HARD,
		.soft_limit = bytes,
		.hard_limit = bytes,
	};

	return ioctl(d->fd, DRM_IOCTL_VNPU_QUOTA_SET, &q) ? -errno : 0;
}

static int reset_device(struct dev *d)
{
	char path[512];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/reset", d->sysdir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

/* ---- tenants ------------------------------------------------------------ */

/* /proc/@pid/stat opened: it names that process even once its pid is reused. */
static int open_stat(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/*
 * Start time (field 22) of the process whose /proc/PID/stat is open at
 * @fd, 0 if it has exited (a reaped process's file reads ESRCH).
 */
static unsigned long long stat_start(int fd)
{
	char buf[1024], *p;
	unsigned long long start = 0;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* After the comm: state is field 3, starttime field 22. */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &start) != 1)
		return 0;
	/* A zombie has exited: its lease goes. */
	if (p[2] == 'Z' || p[2] == 'X')
		return 0;
	return start;
}

/* Start time of @pid, 0 if it has none. */
static unsigned long long proc_start(pid_t pid)
{
	unsigned long long start;
	int fd = open_stat(pid);

	if (fd < 0)
		return 0;
	start = stat_start(fd);
	close(fd);
	return start;
}

/* Start time of @c's peer, through its /proc/PID/stat kept open. */
static unsigned long long conn_start(const struct conn *c)
{
	return c->stat_fd >= 0 ? stat_start(c->stat_fd) : proc_start(c->pid);
}

/* Bytes @pid holds on device position @p through its leases, but @skip. */
static uint64_t pid_reserved(pid_t pid, int p, const struct lease *skip)
{
	uint64_t sum = 0;

	for (struct lease *l = leases; l; l = l->next)
		for (int i = 0; l != skip && l->pid == pid && i < l->ndev; i++)
			if (l->devs[i] == p)
				sum += l->mem;
	return sum;
}

static void list_devices(const struct lease *l, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < l->ndev && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%d", i ? "," : "",
					devs[l->devs[i]].index);
}

/*
 * Writes every lease to the state file: to a temporary file, fsync'ed,
 * renamed over the old one. The loop calls it once per wakeup for all
 * the changes of that wakeup (state_dirty), before their replies.
 */
static void save_state(void)
{
	char tmp[PATH_MAX + 8], devlist[LP_MAX_LINE / 2];
	FILE *f;
	int fd;

	state_dirty = 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", cfg.state);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		logmsg("cannot write %s: %s; leases are not persistent", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "%s version=1 next=%llu\n", STATE_MAGIC, (unsigned long long)next_id);
	for (struct lease *l = leases; l; l = l->next) {
		list_devices(l, devlist, sizeof(devlist));
		fprintf(f, "lease id=%llu uid=%u pid=%d start=%llu mode=%s placement=%s mem=%llu devices=%s\n",
			(unsigned long long)l->id, (unsigned int)l->uid, (int)l->pid, l->start,
			vnpu_lp_mode_name(l->mode), vnpu_lp_placement_name(l->placement),
			(unsigned long long)l->mem, devlist);
	}
	if (fflush(f) || fsync(fd)) {
		logmsg("cannot write %s: %s", tmp, strerror(errno));
		fclose(f);
		return;
	}
	fclose(f);
	if (rename(tmp, cfg.state))
		logmsg("cannot rename %s to %s: %s", tmp, cfg.state, strerror(errno));
}

static void apply_lease_to_devices(struct lease *l, int sign)
{
	for (int i = 0; i < l->ndev; i++) {
		struct dev *d = &devs[l->devs[i]];

		d->reserved = sign > 0 ? d->reserved + l->mem : d->reserved - l->mem;
		d->nleases += sign;
		d->exclusive = l->mode == LP_EXCLUSIVE && sign > 0;
	}
}

static void check_device(struct dev *d);

/* Takes @l back: quotas to what the tenant's other leases need, or the default. */
static void release_lease(struct lease *l, const char *why)
{
	char devlist[256];

	for (struct lease **pp = &leases; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	apply_lease_to_devices(l, -1);
	for (int i = 0; i < l->ndev; i++) {
		struct dev *d = &devs[l->devs[i]];
		uint64_t rest = pid_reserved(l->pid, l->devs[i], NULL);
		int ret = set_quota(d, l->pid, rest ? rest : default_quota(d));

		if (ret && ret != -ESRCH)
			logmsg("lease %llu: resetting the quota of pid %d on vnpu%d: %s",
			       (unsigned long long)l->id, (int)l->pid, d->index, strerror(-ret));
		if (!d->nleases)
			d->failed_in_lease = 0;
		check_device(d);
	}
	list_devices(l, devlist, sizeof(devlist));
	logmsg("lease %llu of uid %u pid %d released (%s): devices %s", (unsigned long long)l->id,
	       (unsigned int)l->uid, (int)l->pid, why, devlist);
	free(l);
	state_dirty = 1;
}

/*
 * Brings the view of @d up to date. A device that is not healthy is
 * reset once no lease uses it (unless configured to hold), and held out
 * of service with a reason while it stays unhealthy.
 */
static void check_device(struct dev *d)
{
	read_health(d);
	if (d->health == H_OK) {
		if (d->held)
			logmsg("vnpu%d healthy again, back in service", d->index);
		d->held = 0;
		d->reason[0] = '\0';
		return;
	}
	if (d->nleases) {
		if (!d->failed_in_lease)
			logmsg("vnpu%d turned %s during a lease", d->index, health_names[d->health]);
		d->failed_in_lease = 1;
		snprintf(d->reason, sizeof(d->reason), "health %s during a lease",
			 health_names[d->health]);
		return;
	}
	if (!cfg.hold_unhealthy && d->health != H_UNKNOWN) {
		int ret = reset_device(d);

		read_health(d);
		logmsg("vnpu%d was %s with no lease: reset %s, now %s", d->index,
		       d->health == H_OK ? "unhealthy" : "still unhealthy",
		       ret ? strerror(-ret) : "done", health_names[d->health]);
		if (d->health == H_OK) {
			d->held = 0;
			d->reason[0] = '\0';
			return;
		}
		snprintf(d->reason, sizeof(d->reason), "health %s after a reset (%s)",
			 health_names[d->health], ret ? strerror(-ret) : "reset done");
	} else {
		snprintf(d->reason, sizeof(d->reason), "health %s; reset it (vnpu-smi --reset %d)",
			 health_names[d->health], d->index);
	}
	if (!d->held)
		logmsg("vnpu%d held out of service: %s", d->index, d->reason);
	d->held = 1;
}

/*
 * Fresh health for the decisions and replies of a wakeup: the periodic
 * check may not have run yet. Read once a wakeup (its requests arrived
 * together; a release checks its own devices again). @usage: memory and
 * resets too, every time (STATUS and the periodic check).
 */
static void check_all_devices(int usage)
{
	if (health_fresh && !usage)
		return;
	for (int p = 0; p < ndevs; p++) {
		check_device(&devs[p]);
		if (usage)
			read_usage(&devs[p]);
	}
	health_fresh = 1;
}

/* Restores the leases of live tenants from the state file. */
static void load_state(void)
{
	char line[LP_MAX_LINE + 2];
	int lineno = 0, kept = 0, dropped = 0;
	FILE *f = fopen(cfg.state, "re");

	if (!f) {
		if (errno != ENOENT)
			logmsg("cannot read %s: %s; starting without leases", cfg.state, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		struct vnpu_lp_word w[LP_MAX_WORDS];
		uint64_t id, uid, pid, start, mem;
		uint32_t idx[MAX_DEVS];
		struct lease *l;
		char *verb;
		int n, nd, bad = 0;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		n = vnpu_lp_split(line, &verb, w, LP_MAX_WORDS);
		if (n < 0)
			continue;
		if (!strcmp(verb, STATE_MAGIC)) {
			if (!vnpu_lp_parse_u64(vnpu_lp_get(w, n, "next"), &id) && id > next_id)
				next_id = id;
			continue;
		}
		nd = vnpu_lp_parse_devices(vnpu_lp_get(w, n, "devices"), idx, MAX_DEVS);
		if (strcmp(verb, "lease") || vnpu_lp_parse_u64(vnpu_lp_get(w, n, "id"), &id) ||
		    vnpu_lp_parse_u64(vnpu_lp_get(w, n, "uid"), &uid) ||
		    vnpu_lp_parse_u64(vnpu_lp_get(w, n, "pid"), &pid) ||
		    vnpu_lp_parse_u64(vnpu_lp_get(w, n, "start"), &start) ||
		    vnpu_lp_parse_u64(vnpu_lp_get(w, n, "mem"), &mem) || nd <= 0 ||
		    vnpu_lp_mode_parse(vnpu_lp_get(w, n, "mode") ? vnpu_lp_get(w, n, "mode") : "") < 0 ||
		    vnpu_lp_placement_parse(vnpu_lp_get(w, n, "placement") ? vnpu_lp_get(w, n, "placement") : "") < 0) {
			logmsg("%s:%d: malformed, ignored", cfg.state, lineno);
			continue;
		}
		l = calloc(1, sizeof(*l));
		if (!l)
			break;
		l->id = id;
		l->uid = (uid_t)uid;
		l->pid = (pid_t)pid;
		l->start = start;
		l->mem = mem;
		l->mode = vnpu_lp_mode_parse(vnpu_lp_get(w, n, "mode"));
		l->placement = vnpu_lp_placement_parse(vnpu_lp_get(w, n, "placement"));
		l->ndev = nd;
		for (int i = 0; i < nd; i++) {
			l->devs[i] = dev_by_index((int)idx[i]);
			bad |= l->devs[i] < 0;
		}
		if (id >= next_id)
			next_id = id + 1;
		if (bad || !start || proc_start(l->pid) != start) {
			/* The tenant is gone (or the device): its quota went with it. */
			logmsg("lease %llu of pid %d dropped: %s", (unsigned long long)id, (int)l->pid,
			       bad ? "a device is gone" : "the tenant has exited");
			free(l);
			dropped++;
			continue;
		}
		l->next = leases;
		leases = l;
		apply_lease_to_devices(l, 1);
		kept++;
	}
	fclose(f);
	/* Reapply the quotas: the module may have been reloaded meanwhile. */
	for (struct lease *l = leases; l; l = l->next)
		for (int i = 0; i < l->ndev; i++)
			set_quota(&devs[l->devs[i]], l->pid, pid_reserved(l->pid, l->devs[i], NULL));
	logmsg("state %s: %d lease%s of live tenants kept, %d dropped", cfg.state, kept,
	       kept == 1 ? "" : "s", dropped);
	save_state();
}

/* ---- placement ---------------------------------------------------------- */

struct request {
	int count, mode, placement;
	uint64_t mem;
	int all_mem;
	int restricted;			/* from= given: only allowed[] devices */
	unsigned char allowed[MAX_DEVS];	/* by position in devs[] */
	int nallowed;
};

/* Lower is nearer: link class first, then latency, then bandwidth. */
static long long pair_cost(int a, int b)
{
	long long bw = devs[a].bw_mbps[b];

	return devs[a].link[b] * 1000000000LL + (long long)devs[a].lat_ns[b] * 100 -
	       (bw > 99 ? 99 : bw);
}

/* Reserved share in 1/1000s, then memory in use: lower is less loaded. */
static long long load(int p)
{
	struct dev *d = &devs[p];

	return (long long)(d->reserved * 1000 / (d->vram_total ? d->vram_total : 1)) * 1000000 +
	       (long long)(d->vram_used * 1000 / (d->vram_total ? d->vram_total : 1)) * 1000 +
	       d->nleases;
}

static uint64_t request_mem(const struct request *r, int p)
{
	return r->all_mem ? devs[p].vram_total : r->mem;
}

/* Why device position @p cannot take @r now, or NULL if it can. */
static const char *unavailable(const struct request *r, int p)
{
	struct dev *d = &devs[p];

	if (d->held || d->health != H_OK)
		return "unhealthy";
	if (d->exclusive)
		return "leased exclusively";
	if (r->mode == LP_EXCLUSIVE && d->nleases)
		return "shared by other leases";
	if (d->reserved + request_mem(r, p) > d->vram_total)
		return "memory reserved";
	return NULL;
}

/* Greedily grows a set from @seed, nearest first; its cost, or -1. */
static long long grow(const int *cand, int n, int seed, int k, int same_node, int prefer_loaded,
		      int *out)
{
	long long total = 0;
	int used[MAX_DEVS] = { 0 }, m = 1;

	out[0] = cand[seed];
	used[seed] = 1;
	while (m < k) {
		long long best = LLONG_MAX;
		int bi = -1;

		for (int i = 0; i < n; i++) {
			long long c = 0, ld;

			if (used[i] || (same_node && devs[cand[i]].node != devs[out[0]].node))
				continue;
			for (int j = 0; j < m; j++)
				c += pair_cost(out[j], cand[i]);
			ld = load(cand[i]) / 1000000;
			c = c * 2000 + (prefer_loaded ? 1000 - ld : ld);
			if (c < best) {
				best = c;
				bi = i;
			}
		}
		if (bi < 0)
			return -1;
		used[bi] = 1;
		out[m++] = cand[bi];
		total += best;
	}
	return total;
}

static int cmp_load_p;
static int cmp_by_load(const void *a, const void *b)
{
	long long x = load(*(const int *)a), y = load(*(const int *)b);
	int r = (x > y) - (x < y);

	if (!r)
		r = (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
	return cmp_load_p ? -r : r;
}

/*
 * Picks @r->count devices into @out. Returns 0, or -1 with @why set to a
 * sentence for the client.
 */
static int place(const struct request *r, int *out, char *why, size_t len)
{
	int cand[MAX_DEVS], n = 0, busy = 0, full = 0, sick = 0;

	for (int p = 0; p < ndevs; p++) {
		const char *u = r->restricted && !r->allowed[p] ? "" : unavailable(r, p);

		if (u && !*u)
			continue;	/* not among the devices the request allows */
		if (!u)
			cand[n++] = p;
		else if (!strcmp(u, "unhealthy"))
			sick++;
		else if (!strcmp(u, "memory reserved"))
			full++;
		else
			busy++;
	}
	if (n < r->count) {
		snprintf(why, len, "%d device%s requested, %d of %d available now (%d busy, %d without %s of memory free, %d unhealthy)",
			 r->count, r->count == 1 ? "" : "s", n, r->restricted ? r->nallowed : ndevs,
			 busy, full,
			 r->all_mem ? "all" : "enough", sick);
		return -1;
	}
	cmp_load_p = r->placement == LP_PACKED;
	qsort(cand, n, sizeof(cand[0]), cmp_by_load);
	switch (r->placement) {
	case LP_LEAST_LOADED:
		memcpy(out, cand, sizeof(int) * r->count);
		return 0;
	case LP_PACKED:
		/* The most loaded device that fits, then its nearest neighbours. */
		return grow(cand, n, 0, r->count, 0, 1, out) < 0 ? -1 : 0;
	case LP_SPREAD: {
		int used[MAX_DEVS] = { 0 }, m = 0;

		/* Rounds over the nodes, least loaded first: distinct nodes before a second pick. */
		while (m < r->count) {
			int nodes_taken[MAX_DEVS], nt = 0;

			for (int i = 0; i < n && m < r->count; i++) {
				int seen = 0;

				if (used[i])
					continue;
				for (int j = 0; j < nt; j++)
					seen |= nodes_taken[j] == devs[cand[i]].node;
				if (seen)
					continue;
				nodes_taken[nt++] = devs[cand[i]].node;
				used[i] = 1;
				out[m++] = cand[i];
			}
		}
		return 0;
	}
	case LP_SAME_NODE:
	default: {
		long long best = LLONG_MAX;
		int set[MAX_DEVS], most = 0;

		for (int s = 0; s < n; s++) {
			long long c = grow(cand, n, s, r->count, 1, 0, set);
			int here = 0;

			for (int i = 0; i < n; i++)
				here += devs[cand[i]].node == devs[cand[s]].node;
			most = here > most ? here : most;
			if (c >= 0 && c < best) {
				best = c;
				memcpy(out, set, sizeof(int) * r->count);
			}
		}
		if (best == LLONG_MAX) {
			snprintf(why, len, "no topology node has %d available devices (at most %d on one node)",
				 r->count, most);
			return -1;
		}
		return 0;
	}
	}
}

/* ---- per-uid limits ------------------------------------------------------- */

static const struct limit *limit_for(uid_t uid)
{
	const struct limit *any = NULL;

	for (int i = 0; i < cfg.nlimits; i++) {
		if (!cfg.limits[i].any && cfg.limits[i].uid == uid)
			return &cfg.limits[i];
		if (cfg.limits[i].any)
			any = &cfg.limits[i];
	}
	return any;
}

static int check_limit(uid_t uid, const struct request *r, const int *chosen, char *why,
		       size_t len)
{
	const struct limit *lim = limit_for(uid);
	uint64_t ndev = 0, mem = 0, want = 0;

	if (!lim)
		return 0;
	for (struct lease *l = leases; l; l = l->next)
		if (l->uid == uid) {
			ndev += (uint64_t)l->ndev;
			mem += l->mem * (uint64_t)l->ndev;
		}
	for (int i = 0; i < r->count; i++)
		want += request_mem(r, chosen[i]);
	if (lim->devices != UINT64_MAX && ndev + (uint64_t)r->count > lim->devices) {
		snprintf(why, len, "uid %u may lease %llu devices at once, holds %llu, asked for %d",
			 (unsigned int)uid, (unsigned long long)lim->devices,
			 (unsigned long long)ndev, r->count);
		return -1;
	}
	if (lim->memory != UINT64_MAX && mem + want > lim->memory) {
		snprintf(why, len, "uid %u may lease %llu bytes at once, holds %llu, asked for %llu",
			 (unsigned int)uid, (unsigned long long)lim->memory,
			 (unsigned long long)mem, (unsigned long long)want);
		return -1;
	}
	return 0;
}

/* ---- requests ------------------------------------------------------------- */

/*
 * Queues a reply line in @c->out; the loop sends it once the state file
 * holds what the request changed (flush_replies()). 0, or -1 when out of
 * memory (the connection is then closed).
 */
static int reply(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int reply(struct conn *c, const char *fmt, ...)
{
	char line[LP_MAX_LINE];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	n = n < 0 ? 0 : n > (int)sizeof(line) - 2 ? (int)sizeof(line) - 2 : n;
	line[n++] = '\n';
	if (c->outlen + (size_t)n > c->outcap) {
		size_t cap = c->outcap ? c->outcap * 2 : 4096;
		char *out;

		while (cap < c->outlen + (size_t)n)
			cap *= 2;
		out = realloc(c->out, cap);
		if (!out) {
			c->closing = "out of memory for its replies";
			return -1;
		}
		c->out = out;
		c->outcap = cap;
	}
	memcpy(c->out + c->outlen, line, (size_t)n);
	c->outlen += (size_t)n;
	return 0;
}

static int lease_visible(const struct conn *c, const struct lease *l)
{
	return c->uid == 0 || c->uid == l->uid;
}

static void lease_line(struct conn *c, const struct lease *l)
{
	char devlist[256], health[256];
	size_t off = 0;
	int degraded = 0;

	list_devices(l, devlist, sizeof(devlist));
	health[0] = '\0';
	for (int i = 0; i < l->ndev && off < sizeof(health); i++) {
		const struct dev *d = &devs[l->devs[i]];

		degraded |= d->health != H_OK;
		off += (size_t)snprintf(health + off, sizeof(health) - off, "%s%s", i ? "," : "",
					health_names[d->health]);
	}
	reply(c, "lease id=%llu uid=%u pid=%d mode=%s placement=%s mem=%llu devices=%s health=%s state=%s bound=%s",
	      (unsigned long long)l->id, (unsigned int)l->uid, (int)l->pid, vnpu_lp_mode_name(l->mode),
	      vnpu_lp_placement_name(l->placement), (unsigned long long)l->mem, devlist, health,
	      degraded ? "degraded" : "active", l->conn ? "connection" : "process");
}

static struct lease *find_lease(uint64_t id)
{
	for (struct lease *l = leases; l; l = l->next)
		if (l->id == id)
			return l;
	return NULL;
}

static int parse_request(const struct vnpu_lp_word *w, int n, struct request *r, char *why, size_t len)
{
	static const char *const keys[] = { "count", "mem", "mode", "placement", "from" };
	const char *v;
	uint64_t u;

	*r = (struct request){ .count = 1, .mode = LP_EXCLUSIVE, .placement = LP_SAME_NODE };
	for (int i = 0; i < n; i++) {
		int known = 0;

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			known |= !strcmp(w[i].key, keys[k]);
		if (!known || !w[i].value) {
			snprintf(why, len, "unknown or valueless word '%s' (keys: count mem mode placement from)",
				 w[i].key);
			return -1;
		}
		for (int j = 0; j < i; j++)
			if (!strcmp(w[i].key, w[j].key)) {
				snprintf(why, len, "'%s' given twice", w[i].key);
				return -1;
			}
	}
	if ((v = vnpu_lp_get(w, n, "count"))) {
		if (vnpu_lp_parse_u64(v, &u) || u == 0 || u > MAX_DEVS) {
			snprintf(why, len, "count '%s' is not a number from 1 to %d", v, MAX_DEVS);
			return -1;
		}
		r->count = (int)u;
	}
	if ((v = vnpu_lp_get(w, n, "mode")) && (r->mode = vnpu_lp_mode_parse(v)) < 0) {
		snprintf(why, len, "mode '%s' is not exclusive or shared", v);
		return -1;
	}
	if ((v = vnpu_lp_get(w, n, "placement")) && (r->placement = vnpu_lp_placement_parse(v)) < 0) {
		snprintf(why, len, "placement '%s' is not same-node, spread, least-loaded or packed", v);
		return -1;
	}
	if ((v = vnpu_lp_get(w, n, "from"))) {
		uint32_t idx[MAX_DEVS];
		int k = vnpu_lp_parse_devices(v, idx, MAX_DEVS);

		if (k <= 0) {
			snprintf(why, len, "from '%.64s' is not a list of device indices (0,2,3)", v);
			return -1;
		}
		r->restricted = 1;
		for (int i = 0; i < k; i++) {
			int p = dev_by_index((int)idx[i]);

			if (p < 0) {
				snprintf(why, len, "from names device %u, which this machine does not have",
					 idx[i]);
				return -1;
			}
			r->nallowed += !r->allowed[p];
			r->allowed[p] = 1;
		}
	}
	v = vnpu_lp_get(w, n, "mem");
	if (!v || !strcmp(v, "all")) {
		if (r->mode == LP_SHARED) {
			snprintf(why, len, "a shared lease needs mem=SIZE, the memory it may use per device");
			return -1;
		}
		r->all_mem = 1;
	} else if (vnpu_lp_parse_bytes(v, &r->mem) || !r->mem) {
		snprintf(why, len, "mem '%s' is not a size (bytes, 64M, 2G or all) above 0", v);
		return -1;
	}
	return 0;
}

static void do_lease(struct conn *c, const struct vnpu_lp_word *w, int n)
{
	int chosen[MAX_DEVS], done = 0, ret = 0;
	uint64_t largest = 0;
	struct request r;
	char why[300], devlist[256];
	struct lease *l;

	if (parse_request(w, n, &r, why, sizeof(why))) {
		reply(c, "ERR bad-request %s", why);
		return;
	}
	for (int p = 0; p < ndevs; p++)
		largest = devs[p].vram_total > largest ? devs[p].vram_total : largest;
	if (!r.all_mem && r.mem > largest) {
		reply(c, "ERR too-large mem %llu is more than a device has (%llu bytes)",
		      (unsigned long long)r.mem, (unsigned long long)largest);
		return;
	}
	if (r.count > ndevs) {
		reply(c, "ERR over-capacity count %d is more than the %d device%s of this machine",
		      r.count, ndevs, ndevs == 1 ? "" : "s");
		return;
	}
	if (r.restricted && r.count > r.nallowed) {
		reply(c, "ERR over-capacity count %d is more than the %d device%s from= allows",
		      r.count, r.nallowed, r.nallowed == 1 ? "" : "s");
		return;
	}
	check_all_devices(0);
	if (place(&r, chosen, why, sizeof(why))) {
		reply(c, "ERR over-capacity %s", why);
		return;
	}
	if (check_limit(c->uid, &r, chosen, why, sizeof(why))) {
		reply(c, "ERR over-limit %s", why);
		return;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		reply(c, "ERR internal out of memory");
		return;
	}
	l->uid = c->uid;
	l->pid = c->pid;
	l->start = conn_start(c);
	l->conn = c;
	l->mode = r.mode;
	l->placement = r.placement;
	l->mem = r.all_mem ? devs[chosen[0]].vram_total : r.mem;
	l->ndev = r.count;
	memcpy(l->devs, chosen, sizeof(int) * r.count);
	if (!l->start) {
		free(l);
		reply(c, "ERR gone the requesting process has exited");
		return;
	}
	/* The kernel enforces the lease: the tenant's hard quota on each device. */
	for (; done < l->ndev; done++) {
		int p = l->devs[done];

		ret = set_quota(&devs[p], l->pid, pid_reserved(l->pid, p, NULL) + l->mem);
		if (ret)
			break;
	}
	if (ret) {
		for (int i = 0; i < done; i++) {
			int p = l->devs[i];
			uint64_t rest = pid_reserved(l->pid, p, NULL);

			set_quota(&devs[p], l->pid, rest ? rest : default_quota(&devs[p]));
		}
		reply(c, "ERR internal setting the quota on vnpu%d failed: %s",
		      devs[l->devs[done]].index, strerror(-ret));
		free(l);
		return;
	}
	l->id = next_id++;
	l->next = leases;
	leases = l;
	apply_lease_to_devices(l, 1);
	/* Committed with the loop's other changes before this reply goes out. */
	state_dirty = 1;
	list_devices(l, devlist, sizeof(devlist));
	logmsg("lease %llu to uid %u pid %d: %s %s, %llu bytes each, devices %s",
	       (unsigned long long)l->id, (unsigned int)l->uid, (int)l->pid, vnpu_lp_mode_name(l->mode),
	       vnpu_lp_placement_name(l->placement), (unsigned long long)l->mem, devlist);
	reply(c, "OK id=%llu devices=%s mem=%llu mode=%s placement=%s", (unsigned long long)l->id,
	      devlist, (unsigned long long)l->mem, vnpu_lp_mode_name(l->mode),
	      vnpu_lp_placement_name(l->placement));
}

/* The lease named by id=, checked against the caller; NULL after an error reply. */
static struct lease *lookup(struct conn *c, const struct vnpu_lp_word *w, int n)
{
	const char *v = vnpu_lp_get(w, n, "id");
	struct lease *l;
	uint64_t id;

	if (n != 1 || !v || vnpu_lp_parse_u64(v, &id)) {
		reply(c, "ERR bad-request want id=NUMBER");
		return NULL;
	}
	l = find_lease(id);
	if (!l) {
		reply(c, "ERR not-found no lease %llu", (unsigned long long)id);
		return NULL;
	}
	if (!lease_visible(c, l)) {
		reply(c, "ERR permission lease %llu belongs to uid %u; only that uid or root may use it",
		      (unsigned long long)id, (unsigned int)l->uid);
		return NULL;
	}
	return l;
}

static void do_info(struct conn *c, const struct vnpu_lp_word *w, int n)
{
	struct lease *l;
	int k = 0;

	check_all_devices(0);
	if (n) {
		l = lookup(c, w, n);
		if (l && !reply(c, "OK n=1"))
			lease_line(c, l);
		return;
	}
	/* Without an id: the leases of the calling process. */
	for (l = leases; l; l = l->next)
		k += l->pid == c->pid;
	if (reply(c, "OK n=%d", k))
		return;
	for (l = leases; l; l = l->next)
		if (l->pid == c->pid)
			lease_line(c, l);
}

static void do_list(struct conn *c, int n)
{
	int k = 0;

	if (n) {
		reply(c, "ERR bad-request LIST takes no arguments");
		return;
	}
	check_all_devices(0);
	for (struct lease *l = leases; l; l = l->next)
		k += lease_visible(c, l);
	if (reply(c, "OK n=%d", k))
		return;
	for (struct lease *l = leases; l; l = l->next)
		if (lease_visible(c, l))
			lease_line(c, l);
}

static void do_status(struct conn *c, int n)
{
	if (n) {
		reply(c, "ERR bad-request STATUS takes no arguments");
		return;
	}
	check_all_devices(1);
	if (reply(c, "OK n=%d", ndevs))
		return;
	for (int p = 0; p < ndevs; p++) {
		struct dev *d = &devs[p];

		reply(c, "device index=%d minor=%u node=%d health=%s state=%s vram_total=%llu vram_used=%llu vram_free=%llu reserved=%llu leases=%d resets=%llu reason=%s",
		      d->index, d->minor, d->node, health_names[d->health],
		      d->held ? "held" : d->exclusive ? "exclusive" : d->nleases ? "shared" : "free",
		      (unsigned long long)d->vram_total, (unsigned long long)d->vram_used,
		      (unsigned long long)(d->vram_total > d->vram_used ?
					   d->vram_total - d->vram_used : 0),
		      (unsigned long long)d->reserved, d->nleases,
		      (unsigned long long)d->reset_count, d->reason[0] ? d->reason : "-");
	}
}

static void handle_line(struct conn *c, char *line)
{
	struct vnpu_lp_word w[LP_MAX_WORDS];
	char *verb;
	int n = vnpu_lp_split(line, &verb, w, LP_MAX_WORDS);

	if (n < 0) {
		reply(c, "ERR bad-request empty request or more than %d words", LP_MAX_WORDS);
		return;
	}
	if (!strcmp(verb, "HELLO")) {
		const char *v = vnpu_lp_get(w, n, "version");
		uint64_t ver;

		if (n != 1 || !v || vnpu_lp_parse_u64(v, &ver)) {
			reply(c, "ERR bad-request want HELLO version=%d", LP_VERSION);
		} else if (ver != LP_VERSION) {
			reply(c, "ERR version this daemon speaks version %d, not %llu", LP_VERSION,
			      (unsigned long long)ver);
			c->hello = -1;
		} else {
			c->hello = 1;
			reply(c, "OK version=%d server=vnpu-poold devices=%d", LP_VERSION, ndevs);
		}
		return;
	}
	if (c->hello != 1) {
		reply(c, "ERR hello-first send HELLO version=%d first", LP_VERSION);
		return;
	}
	if (!strcmp(verb, "LEASE"))
		do_lease(c, w, n);
	else if (!strcmp(verb, "RELEASE")) {
		struct lease *l = lookup(c, w, n);

		if (l) {
			uint64_t id = l->id;

			release_lease(l, c->uid == l->uid ? "released by its tenant" : "released by root");
			reply(c, "OK id=%llu", (unsigned long long)id);
		}
	} else if (!strcmp(verb, "INFO"))
		do_info(c, w, n);
	else if (!strcmp(verb, "LIST"))
		do_list(c, n);
	else if (!strcmp(verb, "STATUS"))
		do_status(c, n);
	else
		reply(c, "ERR bad-request unknown request '%.32s' (HELLO LEASE RELEASE INFO LIST STATUS)",
		      verb);
}

/* ---- connections ---------------------------------------------------------- */

static int epfd;		/* the loop's epoll instance: the socket and every conn */

static void close_conn(struct conn *c, const char *why)
{
	for (struct conn **pp = &conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	/* A lease lives as long as the connection it was taken on. */
	for (struct lease *l = leases, *next; l; l = next) {
		next = l->next;
		if (l->conn == c)
			release_lease(l, why);
	}
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->stat_fd >= 0)
		close(c->stat_fd);
	free(c->out);
	free(c);
	nconns--;
}

/* Takes one waiting connection; 0 when none was waiting. */
static int accept_conn(int lfd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct epoll_event ev = { .events = EPOLLIN };
	struct conn *c;
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return 0;
	if (nconns >= cfg.max_clients) {
		vnpu_lp_send(fd, "ERR busy too many clients; try again later", 10);
		close(fd);
		return 1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || !(c = calloc(1, sizeof(*c)))) {
		close(fd);
		return 1;
	}
	ev.data.ptr = c;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
		logmsg("cannot watch a new connection: %s", strerror(errno));
		free(c);
		close(fd);
		return 1;
	}
	c->fd = fd;
	c->uid = cred.uid;
	c->pid = cred.pid;
	/* Kept open: the tenant check of each lease and poll is one read. */
	c->stat_fd = open_stat(cred.pid);
	c->next = conns;
	conns = c;
	nconns++;
	return 1;
}

/*
 * Reads what @c sent, one recv a wakeup so that every ready client gets its
 * turn, and handles every complete line. Sets @c->closing to close it.
 */
static void read_conn(struct conn *c)
{
	ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
	char *nl;

	if (n == 0) {
		c->closing = c->len ? "disconnected mid-request" : "connection closed";
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			c->closing = "connection error";
		return;
	}
	c->len += (size_t)n;
	while (!c->closing && (nl = memchr(c->buf, '\n', c->len))) {
		size_t used = (size_t)(nl - c->buf) + 1;

		*nl = '\0';
		if (nl > c->buf && nl[-1] == '\r')
			nl[-1] = '\0';
		handle_line(c, c->buf);
		c->len -= used;
		memmove(c->buf, c->buf + used, c->len);
		if (c->hello < 0)
			c->closing = "protocol error";
	}
	if (!c->closing && c->len == sizeof(c->buf)) {
		reply(c, "ERR too-long a request is at most %d bytes with its newline", LP_MAX_LINE);
		c->closing = "oversized request";
	}
	c->partial_since = c->len ? (c->partial_since ? c->partial_since : now_ms()) : 0;
}

/*
 * The end of a wakeup: the state file is written once for every change of
 * the wakeup (one fsync, however many requests), then the replies go out,
 * then the connections that asked for it are closed.
 */
static void flush_replies(void)
{
	if (state_dirty)
		save_state();
	for (struct conn *c = conns; c; c = c->next) {
		if (c->outlen && vnpu_lp_write(c->fd, c->out, c->outlen, 100) && !c->closing)
			c->closing = "not reading its replies";
		c->outlen = 0;
	}
	for (struct conn *c = conns, *next; c; c = next) {
		next = c->next;
		if (c->closing)
			close_conn(c, c->closing);
	}
	/* What the closes released: no reply waits for it. */
	if (state_dirty)
		save_state();
}

/* Leases of tenants that ended, even if their connection lives on in a child. */
static void reap_tenants(void)
{
	for (struct lease *l = leases, *next; l; l = next) {
		next = l->next;
		if ((l->conn ? conn_start(l->conn) : proc_start(l->pid)) != l->start)
			release_lease(l, "tenant exited");
	}
}

static int listen_socket(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	const char *lp = getenv("LISTEN_PID"), *lf = getenv("LISTEN_FDS");
	char dir[PATH_MAX], *slash;
	int fd;

	/* Socket activation: systemd passes the listening socket as fd 3. */
	if (lp && lf && atoi(lp) == getpid() && atoi(lf) >= 1) {
		fd = 3;
		socket_activated = 1;
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_FDNAMES");
		logmsg("listening on the socket systemd passed");
		return fd;
	}
	if (strlen(cfg.socket) >= sizeof(addr.sun_path)) {
		logmsg("socket path %s is too long", cfg.socket);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", cfg.socket);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	strcpy(addr.sun_path, cfg.socket);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	unlink(cfg.socket);
	/* Anyone may connect; what they may do is decided per request (SO_PEERCRED). */
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || chmod(cfg.socket, 0666) ||
	    listen(fd, 128)) {
		logmsg("cannot listen on %s: %s", cfg.socket, strerror(errno));
		close(fd);
		return -1;
	}
	logmsg("listening on %s", cfg.socket);
	return fd;
}

/* Tells systemd (Type=notify) that the socket is ready. */
static void notify_ready(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(addr.sun_path))
		return;
	memcpy(addr.sun_path, path, strlen(path));
	if (path[0] == '@')
		addr.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, "READY=1", 7, MSG_NOSIGNAL, (struct sockaddr *)&addr, len);
	close(fd);
}

/* ---- configuration -------------------------------------------------------- */

static int parse_int(const char *v, int lo, int hi, int *out)
{
	uint64_t u;

	if (vnpu_lp_parse_u64(v, &u) || u < (uint64_t)lo || u > (uint64_t)hi)
		return -1;
	*out = (int)u;
	return 0;
}

static int parse_limit(char *rest, struct limit *lim)
{
	struct vnpu_lp_word w[LP_MAX_WORDS];
	char *who;
	int n = vnpu_lp_split(rest, &who, w, LP_MAX_WORDS);

	*lim = (struct limit){ .devices = UINT64_MAX, .memory = UINT64_MAX };
	if (n < 1)
		return -1;
	if (!strcmp(who, "*")) {
		lim->any = 1;
	} else {
		uint64_t uid;

		if (!vnpu_lp_parse_u64(who, &uid)) {
			lim->uid = (uid_t)uid;
		} else {
			struct passwd *pw = getpwnam(who);

			if (!pw)
				return -1;
			lim->uid = pw->pw_uid;
		}
	}
	for (int i = 0; i < n; i++) {
		uint64_t *dst = !strcmp(w[i].key, "devices") ? &lim->devices :
				!strcmp(w[i].key, "memory") ? &lim->memory : NULL;

		if (!dst || !w[i].value)
			return -1;
		if (!strcmp(w[i].value, "max"))
			*dst = UINT64_MAX;
		else if (dst == &lim->devices ? vnpu_lp_parse_u64(w[i].value, dst) :
						 vnpu_lp_parse_bytes(w[i].value, dst))
			return -1;
	}
	return 0;
}

/* Reads the configuration file; @must: fail if it does not exist. */
static int read_config(const char *path, int must, int socket_set, int state_set)
{
	char line[512];
	int lineno = 0, errors = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		if (!must && errno == ENOENT)
			return 0;
		logmsg("%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *key, *val, *save = NULL;
		int bad = 0;

		lineno++;
		line[strcspn(line, "#\n")] = '\0';
		key = strtok_r(line, " \t", &save);
		if (!key)
			continue;
		val = save ? save + strspn(save, " \t") : NULL;
		if (val)
			val[strcspn(val, "\r")] = '\0';
		while (val && *val && isspace((unsigned char)val[strlen(val) - 1]))
			val[strlen(val) - 1] = '\0';
		if (!val || !*val) {
			bad = 1;
		} else if (!strcmp(key, "socket")) {
			if (!socket_set)
				snprintf(cfg.socket, sizeof(cfg.socket), "%s", val);
		} else if (!strcmp(key, "state")) {
			if (!state_set)
				snprintf(cfg.state, sizeof(cfg.state), "%s", val);
		} else if (!strcmp(key, "request-timeout-ms")) {
			bad = parse_int(val, 10, 600000, &cfg.request_timeout_ms);
		} else if (!strcmp(key, "max-clients")) {
			bad = parse_int(val, 1, 4096, &cfg.max_clients);
		} else if (!strcmp(key, "poll-ms")) {
			bad = parse_int(val, 10, 1000, &cfg.poll_ms);
		} else if (!strcmp(key, "unhealthy")) {
			bad = strcmp(val, "reset") && strcmp(val, "hold");
			cfg.hold_unhealthy = !strcmp(val, "hold");
		} else if (!strcmp(key, "limit")) {
			bad = cfg.nlimits == MAX_LIMITS || parse_limit(val, &cfg.limits[cfg.nlimits]);
			if (!bad)
				cfg.nlimits++;
		} else {
			logmsg("%s:%d: unknown setting '%s'", path, lineno, key);
			errors++;
			continue;
		}
		if (bad) {
			logmsg("%s:%d: bad value for '%s'", path, lineno, key);
			errors++;
		}
	}
	fclose(f);
	return errors ? -1 : 0;
}

/*
 * Two descriptors a client (its socket and its /proc/PID/stat) and five a
 * device: raises the soft limit on open files to what max-clients needs,
 * within the hard limit.
 */
static void raise_fd_limit(void)
{
	rlim_t need = (rlim_t)cfg.max_clients * 2 + (A_COUNT + 1) * MAX_DEVS + 32;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need ? rl.rlim_max : need;
	if (setrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur < need)
		logmsg("open files limited to %llu; max-clients %d wants %llu",
		       (unsigned long long)rl.rlim_cur, cfg.max_clients, (unsigned long long)need);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: vnpu-poold [OPTIONS]\n"
		"The vnpu device pool: leases devices to tenants (Documentation/pool.rst).\n"
		"  -c, --config FILE   configuration (default " DEFAULT_CONFIG ", optional)\n"
		"  -s, --socket PATH   listening socket (default " LP_DEFAULT_SOCKET ")\n"
		"  -S, --state FILE    lease state (default " DEFAULT_STATE ")\n"
		"      --check-config  read the configuration, report errors and exit\n"
		"  -h, --help          this text\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "state", required_argument, NULL, 'S' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, lfd, config_set = 0, socket_set = 0, state_set = 0, check_only = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	const char *env = getenv("VNPU_SMI_SYSFS");
	long long last_tick = 0;

	while ((c = getopt_long(argc, argv, "c:s:S:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			snprintf(cfg.config, sizeof(cfg.config), "%s", optarg);
			config_set = 1;
			break;
		case 's':
			snprintf(cfg.socket, sizeof(cfg.socket), "%s", optarg);
			socket_set = 1;
			break;
		case 'S':
			snprintf(cfg.state, sizeof(cfg.state), "%s", optarg);
			state_set = 1;
			break;
		case 'C':
			check_only = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (read_config(cfg.config, config_set, socket_set, state_set))
		return 2;
	if (check_only) {
		printf("%s: ok (socket %s, state %s, %d limit%s, unhealthy devices are %s)\n",
		       cfg.config, cfg.socket, cfg.state, cfg.nlimits, cfg.nlimits == 1 ? "" : "s",
		       cfg.hold_unhealthy ? "held" : "reset");
		return 0;
	}
	if (env && *env)
		sys_accel = env;
	setvbuf(stderr, NULL, _IOLBF, 0);
	raise_fd_limit();
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	scan_devices();
	logmsg("%d device%s", ndevs, ndevs == 1 ? "" : "s");
	for (int p = 0; p < ndevs; p++)
		logmsg("vnpu%d: node %d, %llu bytes, health %s", devs[p].index, devs[p].node,
		       (unsigned long long)devs[p].vram_total, health_names[devs[p].health]);
	load_state();
	lfd = listen_socket();
	if (lfd < 0)
		return 1;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &(struct epoll_event){ .events = EPOLLIN })) {
		logmsg("epoll: %s", strerror(errno));
		return 1;
	}
	notify_ready();
	while (!stop) {
		struct epoll_event ev[64];
		long long now = now_ms(), wait = cfg.poll_ms;
		int n;

		for (struct conn *k = conns; k; k = k->next) {
			if (k->partial_since) {
				long long left = k->partial_since + cfg.request_timeout_ms - now;

				wait = left < wait ? (left < 0 ? 0 : left) : wait;
			}
		}
		/* Only the ready connections come back: a wakeup costs no more with more clients. */
		n = epoll_wait(epfd, ev, (int)(sizeof(ev) / sizeof(ev[0])), (int)wait);
		health_fresh = 0;
		if (n < 0 && errno != EINTR) {
			logmsg("epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			struct conn *k = ev[i].data.ptr;

			if (!k) {
				/* Every waiting client, up to max-clients (accept_conn refuses beyond). */
				for (int a = 0; a <= cfg.max_clients && accept_conn(lfd); a++)
					;
				continue;
			}
			read_conn(k);
			/* Gone with nothing to tell: what it held is free for the next request. */
			if (k->closing && !k->outlen)
				close_conn(k, k->closing);
		}
		now = now_ms();
		for (struct conn *k = conns; k; k = k->next) {
			if (!k->closing && k->partial_since &&
			    now - k->partial_since >= cfg.request_timeout_ms) {
				reply(k, "ERR timeout request not completed within %d ms",
				      cfg.request_timeout_ms);
				k->closing = "request timed out";
			}
		}
		if (now - last_tick >= cfg.poll_ms) {
			last_tick = now;
			reap_tenants();
			check_all_devices(1);
		}
		flush_replies();
	}
	/* Leases outlive the daemon: the state file carries them to the next start. */
	save_state();
	logmsg("stopping; leases kept in %s", cfg.state);
	if (!socket_activated)
		unlink(cfg.socket);
	return 0;
}
