// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: vnpu-poold, the device pool, on the real devices: leases
 * set and clear the kernel quota, tenants that exit, crash or disconnect
 * lose their lease within a second, a restart keeps live tenants' leases,
 * only the owner or root may see or release a lease, every malformed
 * request is refused and changes nothing, 50 concurrent clients never share
 * an exclusive device nor exceed a device's memory, 50 concurrent leases and
 * releases are in the state file before their reply (and survive a
 * SIGKILL of the daemon), a device failing
 * mid-lease is reset (or held out) before the next lease, and the runtime
 * sees only leased devices. Runs as root in the test VM from the repository
 * root; the daemon is build/bin/vnpu-poold (VNPU_BIN to change).
 */
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "vnpu_exec_utils.h"
#include "vnpu.h"

#define DIR_ "/run/vnpu-test"
#define SOCK DIR_ "/pool.sock"
#define STATE DIR_ "/pool.state"
#define CONF DIR_ "/pool.conf"
#define DAEMON_LOG DIR_ "/poold.log"
#define NOBODY 65534
#define MAXD 16
#define MIB (1024ULL * 1024)

/* The default configuration of the tests. */
static const char *const base_config =
	"# vnpu-poold test configuration\n"
	"request-timeout-ms 500\n"
	"poll-ms 100\n"
	"limit 65534 devices=1 memory=32M\n";

static long long ms_now(void)
{
	return (long long)(now_ns() / 1000000);
}

/* ---- the raw protocol, as Documentation/pool.rst describes it ---------- */

static int cl_connect(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	strcpy(a.sun_path, SOCK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/*
 * Reads one line (without '\n'); -1 on end of file or after 60 s (long:
 * the emulated guest can stall for seconds on a loaded host).
 */
static int cl_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char ch;

		if (poll(&p, 1, 60000) <= 0 || read(fd, &ch, 1) != 1)
			return -1;
		if (ch == '\n')
			break;
		buf[n++] = ch;
	}
	buf[n] = '\0';
	return (int)n;
}

static int cl_req(int fd, const char *req, char *reply, size_t len)
{
	char line[1100];
	int n = snprintf(line, sizeof(line), "%s\n", req);

	if (send(fd, line, n, MSG_NOSIGNAL) != n)
		return -1;
	return cl_line(fd, reply, len);
}

/* Connects and says HELLO; -1 unless the pool answers OK. */
static int cl_open(void)
{
	char reply[256];
	int fd = cl_connect();

	if (fd < 0)
		return -1;
	if (cl_req(fd, "HELLO version=1", reply, sizeof(reply)) < 0 || strncmp(reply, "OK ", 3)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* "LEASE @words" on @fd; the lease id, or 0 with the reply in @reply. */
static unsigned long long cl_lease(int fd, const char *words, char *reply, size_t len)
{
	char req[512];
	unsigned long long id = 0;

	snprintf(req, sizeof(req), "LEASE %s", words);
	if (cl_req(fd, req, reply, len) < 0)
		return 0;
	if (sscanf(reply, "OK id=%llu", &id) != 1)
		return 0;
	return id;
}

/* Physical indices of a lease reply or line (devices=a,b). */
static int reply_devices(const char *reply, int *devs)
{
	const char *p = strstr(reply, "devices=");
	int n = 0;

	if (!p)
		return 0;
	p += 8;
	while (*p >= '0' && *p <= '9' && n < MAXD) {
		devs[n++] = (int)strtol(p, (char **)&p, 10);
		if (*p == ',')
			p++;
	}
	return n;
}

/*
 * Sends a request answered by "OK n=K" and K lines; the lines go to
 * @out (joined by '\n'). Returns K or -1.
 */
static int cl_multi(const char *req, char *out, size_t len)
{
	char line[1100];
	int fd = cl_open(), k = -1;
	size_t off = 0;

	out[0] = '\0';
	if (fd < 0)
		return -1;
	if (cl_req(fd, req, line, sizeof(line)) >= 0 && sscanf(line, "OK n=%d", &k) == 1) {
		for (int i = 0; i < k; i++) {
			if (cl_line(fd, line, sizeof(line)) < 0) {
				k = -1;
				break;
			}
			off += (size_t)snprintf(out + off, len - off, "%s\n", line);
			if (off >= len)
				off = len - 1;
		}
	}
	close(fd);
	return k;
}

/* Whether the pool (as root sees it) has lease @id. */
static int has_lease(unsigned long long id)
{
	char out[8192], key[48];

	if (cl_multi("LIST", out, sizeof(out)) < 0)
		return -1;
	snprintf(key, sizeof(key), "lease id=%llu ", id);
	return strstr(out, key) != NULL;
}

/* Waits up to @ms for lease @id to go; the ms it took, or -1. */
static long long wait_lease_gone(unsigned long long id, int ms)
{
	char line[1100], key[48];
	long long start = ms_now(), took = -1;
	int fd = cl_open();

	/* One connection for every look, so that looking costs little. */
	snprintf(key, sizeof(key), "lease id=%llu ", id);
	while (fd >= 0 && took < 0 && ms_now() - start <= ms) {
		int k = -1, found = 0;

		if (cl_req(fd, "LIST", line, sizeof(line)) < 0 || sscanf(line, "OK n=%d", &k) != 1)
			break;
		for (int i = 0; i < k && cl_line(fd, line, sizeof(line)) >= 0; i++)
			found |= !strncmp(line, key, strlen(key));
		if (!found)
			took = ms_now() - start;
		else
			usleep(5000);
	}
	if (fd >= 0)
		close(fd);
	return took;
}

/* The STATUS line of physical device @index. */
static int device_status(int index, char *line, size_t len)
{
	char out[8192], key[32], *p, *e;

	if (cl_multi("STATUS", out, sizeof(out)) < 0)
		return -1;
	snprintf(key, sizeof(key), "device index=%d ", index);
	p = strstr(out, key);
	if (!p)
		return -1;
	e = strchr(p, '\n');
	snprintf(line, len, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
	return 0;
}

/* ---- the fixture: the devices and a daemon --------------------------------- */

struct pool_env {
	int ndev;
	int fd[MAXD];			/* by physical index */
	uint64_t vram[MAXD];
	pid_t daemon;
};

static int start_daemon(struct pool_env *e, const char *config)
{
	char bin[256];
	const char *dir = getenv("VNPU_BIN");
	int fd = open(CONF, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, config, strlen(config)) != (ssize_t)strlen(config))
		return -1;
	close(fd);
	snprintf(bin, sizeof(bin), "%s/vnpu-poold", dir ? dir : "build/bin");
	e->daemon = vnpu_fork();
	if (e->daemon == 0) {
		/* On tmpfs: a log on the VM's results share would slow the daemon. */
		int lfd = open(DAEMON_LOG, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (lfd >= 0)
			dup2(lfd, 2);
		execl(bin, bin, "--config", CONF, "--socket", SOCK, "--state", STATE, NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		int c = cl_open();

		if (c >= 0) {
			close(c);
			return 0;
		}
		usleep(10000);
	}
	return -1;
}

static void stop_daemon(struct pool_env *e)
{
	if (e->daemon > 0) {
		kill(e->daemon, SIGTERM);
		waitpid(e->daemon, NULL, 0);
	}
	e->daemon = 0;
}

/* Keeps the daemon's log next to the test's in the VM (VNPU_OUT). */
static void save_daemon_log(void)
{
	const char *out = getenv("VNPU_OUT");
	char cmd[512];

	if (out) {
		snprintf(cmd, sizeof(cmd), "cat %s >>'%s/poold-daemon.log' 2>/dev/null", DAEMON_LOG,
			 out);
		if (system(cmd))
			return;
	}
	unlink(DAEMON_LOG);
}

FIXTURE(poold) {
	struct pool_env e;
};

FIXTURE_SETUP(poold)
{
	memset(&self->e, 0, sizeof(self->e));
	for (int n = 0; n < MAXD; n++) {
		uint64_t index = 0;
		int fd = vnpu_open_nth(n);

		if (fd < 0)
			break;
		ASSERT_EQ(0, _vnpu_get_param(fd, DRM_VNPU_PARAM_DEVICE_INDEX, 0, &index));
		ASSERT_LT(index, MAXD);
		self->e.fd[index] = fd;
		ASSERT_EQ(0, _vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_SIZE, 0, &self->e.vram[index]));
		self->e.ndev++;
	}
	if (self->e.ndev < 2)
		SKIP(return, "needs at least two vnpu devices");
	for (int i = 0; i < self->e.ndev; i++)
		vnpu_sysfs_write(self->e.fd[i], "reset", "1");
	mkdir(DIR_, 0755);
	unlink(STATE);
	ASSERT_EQ(0, start_daemon(&self->e, base_config));
}

FIXTURE_TEARDOWN(poold)
{
	stop_daemon(&self->e);
	save_daemon_log();
	unlink(STATE);
	for (int i = 0; i < self->e.ndev; i++) {
		vnpu_debugfs_write_u64(self->e.fd[i], "allow_hang", 0);
		close(self->e.fd[i]);
	}
}

static uint64_t hard_limit(struct pool_env *e, int dev, pid_t pid)
{
	struct drm_vnpu_quota q;

	if (_vnpu_quota_get(e->fd[dev], pid, &q))
		return 0;
	return q.hard_limit;
}

/* Forks a tenant that takes a lease with @words and waits; its lease id in *id. */
static pid_t fork_tenant(const char *words, int keep_child, unsigned long long *id)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = vnpu_fork();
	if (pid == 0) {
		char reply[512];
		unsigned long long got;
		int fd = cl_open();

		got = fd < 0 ? 0 : cl_lease(fd, words, reply, sizeof(reply));
		/* A child that keeps the connection open outlives the tenant. */
		if (keep_child && fork() == 0) {
			sleep(2);
			_exit(0);
		}
		if (write(p[1], &got, sizeof(got)) != sizeof(got))
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], id, sizeof(*id)) != sizeof(*id))
		*id = 0;
	close(p[0]);
	return pid;
}

/* ---- protocol and bad input ------------------------------------------------ */

TEST_F(poold, hello_and_version)
{
	char reply[256];
	int fd = cl_connect();

	ASSERT_LE(0, fd);
	ASSERT_LT(0, cl_req(fd, "LIST", reply, sizeof(reply)));
	EXPECT_EQ(0, strncmp(reply, "ERR hello-first ", 16)) TH_LOG("%s", reply);
	ASSERT_LT(0, cl_req(fd, "HELLO version=2", reply, sizeof(reply)));
	EXPECT_EQ(0, strncmp(reply, "ERR version ", 12)) TH_LOG("%s", reply);
	/* A version mismatch ends the connection. */
	EXPECT_EQ(-1, cl_line(fd, reply, sizeof(reply)));
	close(fd);
	fd = cl_connect();
	ASSERT_LT(0, cl_req(fd, "HELLO version=1", reply, sizeof(reply)));
	EXPECT_EQ(0, strncmp(reply, "OK version=1 server=vnpu-poold", 30)) TH_LOG("%s", reply);
	close(fd);
}

/* Every malformed request gets its error and leaves no lease behind. */
TEST_F(poold, malformed_requests_change_nothing)
{
	static const char *const bad[][2] = {
		{ "FROB", "ERR bad-request unknown request" },
		{ "LEASE count=0", "ERR bad-request count" },
		{ "LEASE count=abc", "ERR bad-request count" },
		{ "LEASE count=1 count=2", "ERR bad-request 'count' given twice" },
		{ "LEASE colour=red", "ERR bad-request unknown" },
		{ "LEASE count", "ERR bad-request unknown or valueless" },
		{ "LEASE mem=-1", "ERR bad-request mem" },
		{ "LEASE mem=0", "ERR bad-request mem" },
		{ "LEASE mem=12Q", "ERR bad-request mem" },
		{ "LEASE mode=sometimes", "ERR bad-request mode" },
		{ "LEASE placement=diagonal", "ERR bad-request placement 'diagonal'" },
		{ "LEASE mode=shared", "ERR bad-request a shared lease needs mem" },
		{ "LEASE from=", "ERR bad-request from" },
		{ "LEASE from=0,,1", "ERR bad-request from" },
		{ "LEASE from=99", "ERR bad-request from names device 99" },
		{ "LEASE a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9 j=10 k=11 l=12 m=13 n=14 o=15 p=16 q=17",
		  "ERR bad-request empty request or more than" },
		{ "RELEASE", "ERR bad-request want id" },
		{ "RELEASE id=x", "ERR bad-request want id" },
		{ "RELEASE id=999999", "ERR not-found" },
		{ "INFO id=999999", "ERR not-found" },
		{ "LIST all", "ERR bad-request" },
		{ "STATUS now", "ERR bad-request" },
	};
	char reply[512], out[8192];
	int fd = cl_open();

	ASSERT_LE(0, fd);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_LT(0, cl_req(fd, bad[i][0], reply, sizeof(reply)));
		EXPECT_EQ(0, strncmp(reply, bad[i][1], strlen(bad[i][1])))
			TH_LOG("'%s' -> '%s'", bad[i][0], reply);
	}
	/* Still connected and served, and nothing changed. */
	EXPECT_EQ(0, cl_multi("LIST", out, sizeof(out)));
	ASSERT_EQ(self->e.ndev, cl_multi("STATUS", out, sizeof(out)));
	EXPECT_EQ(NULL, strstr(out, "reserved=1"));
	EXPECT_EQ(NULL, strstr(out, "state=exclusive"));
	close(fd);
}

TEST_F(poold, oversized_request_is_refused)
{
	char big[3000], reply[256];
	int fd = cl_open(), other;

	ASSERT_LE(0, fd);
	memset(big, 'x', sizeof(big));
	ASSERT_EQ(sizeof(big), send(fd, big, sizeof(big), MSG_NOSIGNAL));
	ASSERT_LT(0, cl_line(fd, reply, sizeof(reply)));
	EXPECT_EQ(0, strncmp(reply, "ERR too-long ", 13)) TH_LOG("%s", reply);
	EXPECT_EQ(-1, cl_line(fd, reply, sizeof(reply)));
	close(fd);
	other = cl_open();
	EXPECT_LE(0, other);
	close(other);
}

TEST_F(poold, partial_request_times_out)
{
	char reply[256];
	int fd = cl_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(7, send(fd, "LEASE c", 7, MSG_NOSIGNAL));
	ASSERT_LT(0, cl_line(fd, reply, sizeof(reply)));
	EXPECT_EQ(0, strncmp(reply, "ERR timeout ", 12)) TH_LOG("%s", reply);
	close(fd);
	EXPECT_EQ(0, cl_multi("LIST", reply, sizeof(reply)));
}

/* A client gone in the middle of a request leaves no lease. */
TEST_F(poold, disconnect_mid_request_leaves_no_lease)
{
	char out[4096];
	int fd = cl_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(20, send(fd, "LEASE count=1 mem=8M", 20, MSG_NOSIGNAL));
	close(fd);
	/* A whole request, gone before its reply: granted, then taken back. */
	fd = cl_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(33, send(fd, "LEASE count=2 mem=8M mode=shared\n", 33, MSG_NOSIGNAL));
	close(fd);
	usleep(300000);
	EXPECT_EQ(0, cl_multi("LIST", out, sizeof(out))) TH_LOG("%s", out);
	ASSERT_EQ(self->e.ndev, cl_multi("STATUS", out, sizeof(out)));
	EXPECT_EQ(NULL, strstr(out, "leases=1"));
}

TEST_F(poold, quota_larger_than_a_device_is_refused)
{
	char words[128], reply[512];
	int fd = cl_open();

	ASSERT_LE(0, fd);
	snprintf(words, sizeof(words), "count=1 mode=shared mem=%llu",
		 (unsigned long long)self->e.vram[0] + 1);
	EXPECT_EQ(0, cl_lease(fd, words, reply, sizeof(reply)));
	EXPECT_EQ(0, strncmp(reply, "ERR too-large ", 14)) TH_LOG("%s", reply);
	close(fd);
}

TEST_F(poold, count_larger_than_available_is_refused)
{
	char words[128], reply[512];
	int fd = cl_open();
	unsigned long long id;

	ASSERT_LE(0, fd);
	snprintf(words, sizeof(words), "count=%d", self->e.ndev + 1);
	EXPECT_EQ(0, cl_lease(fd, words, reply, sizeof(reply)));
	EXPECT_EQ(0, strncmp(reply, "ERR over-capacity count", 23)) TH_LOG("%s", reply);
	id = cl_lease(fd, "count=1 mode=exclusive", reply, sizeof(reply));
	ASSERT_NE(0, id) TH_LOG("%s", reply);
	snprintf(words, sizeof(words), "count=%d mode=exclusive placement=least-loaded", self->e.ndev);
	EXPECT_EQ(0, cl_lease(fd, words, reply, sizeof(reply)));
	EXPECT_EQ(0, strncmp(reply, "ERR over-capacity ", 18)) TH_LOG("%s", reply);
	EXPECT_NE(NULL, strstr(reply, "available now")) TH_LOG("%s", reply);
	close(fd);
}

/* ---- quota and lifetime ------------------------------------------------------ */

/* The lease is the kernel's hard quota; releasing restores the default. */
TEST_F(poold, lease_sets_and_release_clears_the_kernel_quota)
{
	char reply[512], req[64], line[512];
	int devs[MAXD], d, fd = cl_open();
	unsigned long long id;
	uint64_t def;
	uint32_t h;

	ASSERT_LE(0, fd);
	id = cl_lease(fd, "count=1 mode=shared mem=16M placement=least-loaded", reply,
		      sizeof(reply));
	ASSERT_NE(0, id) TH_LOG("%s", reply);
	ASSERT_EQ(1, reply_devices(reply, devs));
	d = devs[0];
	ASSERT_EQ(0, vnpu_sysfs_u64(self->e.fd[d], "default_quota_bytes", &def));
	EXPECT_EQ(16 * MIB, hard_limit(&self->e, d, getpid()));
	ASSERT_EQ(0, device_status(d, line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, " state=shared ")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, " reserved=16777216 leases=1 ")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, " vram_free=")) TH_LOG("%s", line);
	/* The kernel enforces it. */
	EXPECT_EQ(-EDQUOT, _vnpu_bo_create(self->e.fd[d], 17 * MIB, 0, &h, NULL));
	ASSERT_EQ(0, _vnpu_bo_create(self->e.fd[d], 8 * MIB, 0, &h, NULL));
	_vnpu_gem_close(self->e.fd[d], h);
	snprintf(req, sizeof(req), "RELEASE id=%llu", id);
	ASSERT_LT(0, cl_req(fd, req, reply, sizeof(reply)));
	EXPECT_EQ(0, strncmp(reply, "OK ", 3)) TH_LOG("%s", reply);
	EXPECT_EQ(def, hard_limit(&self->e, d, getpid()));
	EXPECT_EQ(0, has_lease(id));
	close(fd);
}

/* A closed connection ends the lease and clears the quota at once. */
TEST_F(poold, disconnect_releases_lease_and_quota)
{
	char reply[512];
	int devs[MAXD], fd = cl_open();
	unsigned long long id;
	long long took;
	uint64_t def;

	ASSERT_LE(0, fd);
	id = cl_lease(fd, "count=2 mode=shared mem=8M", reply, sizeof(reply));
	ASSERT_NE(0, id) TH_LOG("%s", reply);
	ASSERT_EQ(2, reply_devices(reply, devs));
	ASSERT_EQ(0, vnpu_sysfs_u64(self->e.fd[devs[0]], "default_quota_bytes", &def));
	EXPECT_EQ(8 * MIB, hard_limit(&self->e, devs[1], getpid()));
	close(fd);
	took = wait_lease_gone(id, 1000);
	EXPECT_LE(0, took);
	TH_LOG("lease gone %lld ms after the disconnect", took);
	EXPECT_EQ(def, hard_limit(&self->e, devs[0], getpid()));
	EXPECT_EQ(def, hard_limit(&self->e, devs[1], getpid()));
}

/* SIGKILL: the lease and the quota are gone within a second. */
TEST_F(poold, killed_tenant_loses_lease_within_a_second)
{
	char reply[512], words[64];
	unsigned long long id, again;
	int fd = cl_open();
	long long took;
	pid_t t;

	ASSERT_LE(0, fd);
	snprintf(words, sizeof(words), "count=%d mode=exclusive placement=spread", self->e.ndev);
	t = fork_tenant(words, 0, &id);
	ASSERT_LT(0, t);
	ASSERT_NE(0, id);
	EXPECT_EQ(self->e.vram[0], hard_limit(&self->e, 0, t));
	EXPECT_EQ(0, cl_lease(fd, "count=1", reply, sizeof(reply)));
	kill(t, SIGKILL);
	waitpid(t, NULL, 0);
	took = wait_lease_gone(id, 1000);
	EXPECT_LE(0, took);
	TH_LOG("lease of the killed tenant gone after %lld ms", took);
	/* The process and its quota are gone; its devices are free again. */
	EXPECT_EQ(-ESRCH, _vnpu_quota_get(self->e.fd[0], t, NULL));
	again = cl_lease(fd, words, reply, sizeof(reply));
	EXPECT_NE(0, again) TH_LOG("%s", reply);
	close(fd);
}

/* The lease belongs to the process: a child holding the connection does not keep it. */
TEST_F(poold, tenant_exit_ends_lease_despite_inherited_connection)
{
	unsigned long long id;
	long long took;
	pid_t t = fork_tenant("count=1 mode=shared mem=4M", 1, &id);

	ASSERT_LT(0, t);
	ASSERT_NE(0, id);
	kill(t, SIGKILL);
	waitpid(t, NULL, 0);
	took = wait_lease_gone(id, 1000);
	EXPECT_LE(0, took);
	TH_LOG("lease gone %lld ms after the tenant, its child still holding the socket", took);
}

/* A restart keeps the leases of live tenants, drops those of dead ones. */
TEST_F_TIMEOUT(poold, restart_keeps_live_leases, 120)
{
	unsigned long long live_id, dead_id, id;
	char out[8192], key[48], reply[512];
	pid_t live = fork_tenant("count=1 mode=shared mem=8M placement=packed", 0, &live_id);
	pid_t dead = fork_tenant("count=1 mode=shared mem=4M placement=packed", 0, &dead_id);
	int devs[MAXD], fd;

	ASSERT_LT(0, live);
	ASSERT_LT(0, dead);
	ASSERT_NE(0, live_id);
	ASSERT_NE(0, dead_id);
	stop_daemon(&self->e);
	kill(dead, SIGKILL);
	waitpid(dead, NULL, 0);
	ASSERT_EQ(0, start_daemon(&self->e, base_config));
	ASSERT_EQ(1, cl_multi("LIST", out, sizeof(out))) TH_LOG("%s", out);
	snprintf(key, sizeof(key), "lease id=%llu ", live_id);
	EXPECT_NE(NULL, strstr(out, key)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "bound=process"));
	ASSERT_EQ(1, reply_devices(out, devs));
	EXPECT_EQ(8 * MIB, hard_limit(&self->e, devs[0], live));
	/* Without a connection, the process ends the lease. */
	kill(live, SIGKILL);
	waitpid(live, NULL, 0);
	EXPECT_LE(0, wait_lease_gone(live_id, 1000));
	/* New ids do not reuse old ones. */
	fd = cl_open();
	id = cl_lease(fd, "count=1 mode=shared mem=4M", reply, sizeof(reply));
	EXPECT_LT(dead_id, id) TH_LOG("%s", reply);
	close(fd);
}

/* ---- authorization and limits ------------------------------------------------- */

/* Runs @fn as uid nobody in a child; its exit status. */
static int as_nobody(int (*fn)(unsigned long long), unsigned long long arg)
{
	int status;
	pid_t pid = vnpu_fork();

	if (pid == 0) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(99);
		_exit(fn(arg));
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 98;
}

static int nobody_meddles(unsigned long long root_id)
{
	char reply[512], req[64], out[4096];
	int fd = cl_open();

	if (fd < 0)
		return 1;
	snprintf(req, sizeof(req), "RELEASE id=%llu", root_id);
	if (cl_req(fd, req, reply, sizeof(reply)) < 0 || strncmp(reply, "ERR permission ", 15))
		return 2;
	snprintf(req, sizeof(req), "INFO id=%llu", root_id);
	if (cl_req(fd, req, reply, sizeof(reply)) < 0 || strncmp(reply, "ERR permission ", 15))
		return 3;
	/* LIST shows nobody's own leases only. */
	if (cl_multi("LIST", out, sizeof(out)) != 0)
		return 4;
	/* Its own lease it may take, see and release. */
	unsigned long long id = cl_lease(fd, "count=1 mode=shared mem=8M", reply, sizeof(reply));

	if (!id)
		return 5;
	if (cl_multi("LIST", out, sizeof(out)) != 1)
		return 6;
	snprintf(req, sizeof(req), "RELEASE id=%llu", id);
	if (cl_req(fd, req, reply, sizeof(reply)) < 0 || strncmp(reply, "OK ", 3))
		return 7;
	return 0;
}

TEST_F(poold, only_owner_or_root_may_release_or_inspect)
{
	char reply[512], req[64];
	int fd = cl_open();
	unsigned long long id;

	ASSERT_LE(0, fd);
	id = cl_lease(fd, "count=1 mode=shared mem=4M", reply, sizeof(reply));
	ASSERT_NE(0, id) TH_LOG("%s", reply);
	EXPECT_EQ(0, as_nobody(nobody_meddles, id));
	EXPECT_EQ(1, has_lease(id));
	snprintf(req, sizeof(req), "INFO id=%llu", id);
	ASSERT_LT(0, cl_req(fd, req, reply, sizeof(reply)));
	EXPECT_EQ(0, strncmp(reply, "OK n=1", 6));
	close(fd);
}

static int nobody_over_limit(unsigned long long unused)
{
	char reply[512];
	int fd = cl_open();

	(void)unused;
	if (fd < 0)
		return 1;
	/* The configuration allows uid 65534 one device and 32M. */
	if (cl_lease(fd, "count=2 mode=shared mem=4M", reply, sizeof(reply)) ||
	    strncmp(reply, "ERR over-limit uid 65534 may lease 1 devices", 44))
		return 2;
	if (cl_lease(fd, "count=1 mode=shared mem=33M", reply, sizeof(reply)) ||
	    strncmp(reply, "ERR over-limit uid 65534 may lease 33554432 bytes", 49))
		return 3;
	if (!cl_lease(fd, "count=1 mode=shared mem=32M", reply, sizeof(reply)))
		return 4;
	if (cl_lease(fd, "count=1 mode=shared mem=4M", reply, sizeof(reply)) ||
	    strncmp(reply, "ERR over-limit ", 15))
		return 5;
	return 0;
}

TEST_F(poold, per_uid_limit_is_enforced)
{
	char out[4096];

	EXPECT_EQ(0, as_nobody(nobody_over_limit, 0));
	EXPECT_EQ(0, cl_multi("LIST", out, sizeof(out))) TH_LOG("%s", out);
}

/* ---- placement ------------------------------------------------------------------ */

static int read_attr_int(struct pool_env *e, int dev, const char *attr)
{
	uint64_t v;

	return vnpu_sysfs_u64(e->fd[dev], attr, &v) ? -1 : (int)v;
}

static int read_node(struct pool_env *e, int dev)
{
	return read_attr_int(e, dev, "topology_node");
}

TEST_F(poold, placement_least_loaded_and_packed)
{
	char reply[512];
	int a[MAXD], b[MAXD], c[MAXD], fd = cl_open();

	ASSERT_LE(0, fd);
	ASSERT_NE(0, cl_lease(fd, "count=1 mode=shared mem=16M placement=least-loaded", reply,
			      sizeof(reply)));
	ASSERT_EQ(1, reply_devices(reply, a));
	ASSERT_NE(0, cl_lease(fd, "count=1 mode=shared mem=8M placement=least-loaded", reply,
			      sizeof(reply)));
	ASSERT_EQ(1, reply_devices(reply, b));
	EXPECT_NE(a[0], b[0]);
	/* Packed goes to the fullest device that still fits. */
	ASSERT_NE(0, cl_lease(fd, "count=1 mode=shared mem=8M placement=packed", reply,
			      sizeof(reply)));
	ASSERT_EQ(1, reply_devices(reply, c));
	EXPECT_EQ(a[0], c[0]);
	close(fd);
}

TEST_F(poold, placement_follows_topology)
{
	char reply[512], words[64];
	int devs[MAXD], nodes = 0, seen[MAXD] = { 0 }, fd = cl_open(), n;

	ASSERT_LE(0, fd);
	for (int i = 0; i < self->e.ndev; i++) {
		int node = read_node(&self->e, i);

		if (node >= 0 && node < MAXD && !seen[node]++)
			nodes++;
	}
	TH_LOG("%d topology node%s", nodes, nodes == 1 ? "" : "s");
	/* More devices than a node has, on one node: refused with the reason. */
	if (nodes > 1) {
		snprintf(words, sizeof(words), "count=%d placement=same-node", self->e.ndev);
		EXPECT_EQ(0, cl_lease(fd, words, reply, sizeof(reply)));
		EXPECT_NE(NULL, strstr(reply, "no topology node has")) TH_LOG("%s", reply);
	}
	/* Same node: every device on the node of the first. */
	ASSERT_NE(0, cl_lease(fd, "count=2 placement=same-node", reply, sizeof(reply)))
		TH_LOG("%s", reply);
	ASSERT_EQ(2, reply_devices(reply, devs));
	EXPECT_EQ(read_node(&self->e, devs[0]), read_node(&self->e, devs[1]));
	/* On an idle machine, the nearest pair: one board. */
	EXPECT_EQ(read_attr_int(&self->e, devs[0], "topology_board"),
		  read_attr_int(&self->e, devs[1], "topology_board"));
	close(fd);
	fd = cl_open();
	/* Spread: distinct nodes while there are nodes left. */
	n = nodes > 1 ? nodes : 2;
	snprintf(words, sizeof(words), "count=%d placement=spread", n);
	ASSERT_NE(0, cl_lease(fd, words, reply, sizeof(reply))) TH_LOG("%s", reply);
	ASSERT_EQ(n, reply_devices(reply, devs));
	if (nodes > 1)
		for (int i = 1; i < n; i++)
			EXPECT_NE(read_node(&self->e, devs[0]), read_node(&self->e, devs[i]));
	close(fd);
	if (nodes <= 1)
		SKIP(return, "the driver reports no topology nodes: same-node and spread are trivial");
}

/* from=: only the devices a scheduler gave the job. */
TEST_F(poold, lease_restricted_to_given_devices)
{
	struct vnpu_device_properties props[2];
	char reply[512];
	int devs[MAXD], fd = cl_open();
	uint32_t count;

	ASSERT_LE(0, fd);
	ASSERT_NE(0, cl_lease(fd, "count=2 mode=shared mem=4M placement=least-loaded from=1,3",
			      reply, sizeof(reply))) TH_LOG("%s", reply);
	ASSERT_EQ(2, reply_devices(reply, devs));
	EXPECT_TRUE((devs[0] == 1 && devs[1] == 3) || (devs[0] == 3 && devs[1] == 1));
	EXPECT_EQ(0, cl_lease(fd, "count=3 mode=shared mem=4M from=1,3", reply, sizeof(reply)));
	EXPECT_EQ(0, strncmp(reply, "ERR over-capacity count 3 is more than the 2 devices from= allows",
			     65)) TH_LOG("%s", reply);
	ASSERT_NE(0, cl_lease(fd, "count=1 mode=exclusive from=2", reply, sizeof(reply)));
	EXPECT_EQ(0, cl_lease(fd, "count=1 mode=exclusive from=2", reply, sizeof(reply)));
	EXPECT_NE(NULL, strstr(reply, "0 of 1 available now")) TH_LOG("%s", reply);
	close(fd);
	/* The runtime's request takes a list too. */
	setenv("VNPU_POOL_SOCKET", SOCK, 1);
	setenv("VNPU_POOL_REQUEST", "count=2,mode=shared,mem=4M,from=0,3,placement=spread", 1);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_count(&count));
	ASSERT_EQ(2, count);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_properties(0, &props[0]));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_properties(1, &props[1]));
	EXPECT_EQ(3, props[0].physical_index + props[1].physical_index);
	EXPECT_NE(props[0].physical_index, props[1].physical_index);
	vnpu_finalize();
	unsetenv("VNPU_POOL_REQUEST");
	unsetenv("VNPU_POOL_SOCKET");
}

/* ---- 50 concurrent clients ------------------------------------------------------ */

struct shared_view {
	atomic_int holders[MAXD];	/* -1: exclusive, else shared holders */
	atomic_ullong mem[MAXD];
	atomic_int shared_exclusive, over_memory, quota_wrong;
	atomic_int granted, refused, unexpected, unserved;
	char first_unexpected[256];
};

static void client_loop(struct pool_env *e, struct shared_view *v, int seed, int rounds)
{
	static const char *const placements[] = { "same-node", "spread", "least-loaded", "packed" };
	unsigned int r = (unsigned int)seed * 2654435761u;
	int fd = cl_open();

	for (int i = 0; i < rounds && fd >= 0; i++) {
		char words[128], reply[512], req[64];
		int excl, count, devs[MAXD], n;
		unsigned long long id;
		uint64_t mem;

		r = r * 1103515245u + 12345u;
		excl = (r >> 8) % 3 == 0;
		count = 1 + (int)((r >> 12) % 2);
		mem = (4 + (r >> 16) % 28) * MIB;
		snprintf(words, sizeof(words), "count=%d mode=%s placement=%s mem=%llu", count,
			 excl ? "exclusive" : "shared", placements[(r >> 20) % 4],
			 (unsigned long long)mem);
		reply[0] = '\0';
		id = cl_lease(fd, words, reply, sizeof(reply));
		if (!id) {
			if (!strncmp(reply, "ERR over-capacity ", 18)) {
				atomic_fetch_add(&v->refused, 1);
			} else if (atomic_fetch_add(&v->unexpected, 1) == 0) {
				snprintf(v->first_unexpected, sizeof(v->first_unexpected), "%s -> %s",
					 words, reply[0] ? reply : "(no reply)");
			}
			continue;
		}
		atomic_fetch_add(&v->granted, 1);
		n = reply_devices(reply, devs);
		for (int k = 0; k < n; k++) {
			int d = devs[k], cur;

			if (excl) {
				int zero = 0;

				if (!atomic_compare_exchange_strong(&v->holders[d], &zero, -1))
					atomic_fetch_add(&v->shared_exclusive, 1);
			} else {
				do {
					cur = atomic_load(&v->holders[d]);
					if (cur < 0) {
						atomic_fetch_add(&v->shared_exclusive, 1);
						break;
					}
				} while (!atomic_compare_exchange_weak(&v->holders[d], &cur, cur + 1));
				if (atomic_fetch_add(&v->mem[d], mem) + mem > e->vram[d])
					atomic_fetch_add(&v->over_memory, 1);
			}
			if (hard_limit(e, d, getpid()) != mem)
				atomic_fetch_add(&v->quota_wrong, 1);
		}
		usleep((r >> 4) % 3000);
		/* Give back our view before the pool takes the lease back. */
		for (int k = 0; k < n; k++) {
			if (excl) {
				atomic_store(&v->holders[devs[k]], 0);
			} else {
				atomic_fetch_sub(&v->holders[devs[k]], 1);
				atomic_fetch_sub(&v->mem[devs[k]], mem);
			}
		}
		snprintf(req, sizeof(req), "RELEASE id=%llu", id);
		reply[0] = '\0';
		if ((cl_req(fd, req, reply, sizeof(reply)) < 0 || strncmp(reply, "OK ", 3)) &&
		    atomic_fetch_add(&v->unexpected, 1) == 0)
			snprintf(v->first_unexpected, sizeof(v->first_unexpected), "%s -> %s", req,
				 reply[0] ? reply : "(no reply)");
	}
	if (fd < 0)
		atomic_fetch_add(&v->unserved, 1);
	close(fd);
}

TEST_F_TIMEOUT(poold, fifty_clients_never_share_an_exclusive_device, 300)
{
	int clients = 50, rounds = (int)vnpu_env_ul("VNPU_POOL_ROUNDS", 8);
	struct shared_view *v = mmap(NULL, sizeof(*v), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pids[50];
	char out[8192];

	ASSERT_NE(MAP_FAILED, v);
	memset(v, 0, sizeof(*v));
	for (int c = 0; c < clients; c++) {
		pids[c] = vnpu_fork();
		ASSERT_LE(0, pids[c]);
		if (pids[c] == 0) {
			client_loop(&self->e, v, c + 1, rounds);
			_exit(0);
		}
	}
	for (int c = 0; c < clients; c++) {
		int status;

		waitpid(pids[c], &status, 0);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	TH_LOG("%d leases granted, %d refused as over capacity", atomic_load(&v->granted),
	       atomic_load(&v->refused));
	EXPECT_EQ(0, atomic_load(&v->shared_exclusive));
	EXPECT_EQ(0, atomic_load(&v->over_memory));
	EXPECT_EQ(0, atomic_load(&v->quota_wrong));
	EXPECT_EQ(0, atomic_load(&v->unserved));
	EXPECT_EQ(0, atomic_load(&v->unexpected)) TH_LOG("first: %s", v->first_unexpected);
	EXPECT_LT(0, atomic_load(&v->granted));
	EXPECT_EQ(0, cl_multi("LIST", out, sizeof(out))) TH_LOG("%s", out);
	ASSERT_EQ(self->e.ndev, cl_multi("STATUS", out, sizeof(out)));
	EXPECT_EQ(NULL, strstr(out, "leases=1"));
	munmap(v, sizeof(*v));
}

/*
 * 50 clients lease at once: the daemon commits the state file once for
 * every request of a wakeup (group commit), and still no reply goes out
 * before the file holds its change.
 */
struct durable_view {
	atomic_int ready, phase, failed, missing, stale;
	unsigned long long id[50];
	int dev[50];
	char first_failure[256];
};

/* Whether the state file holds @key (it is replaced by a rename: one read sees one version). */
static int state_has(const char *key)
{
	static char buf[65536];
	int fd = open(STATE, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, key) != NULL;
}

static void durable_fail(struct durable_view *v, const char *what, const char *reply)
{
	if (atomic_fetch_add(&v->failed, 1) == 0)
		snprintf(v->first_failure, sizeof(v->first_failure), "%s -> %s", what,
			 reply[0] ? reply : "(no reply)");
}

/* Client @i: leases, checks the state file, then (phase 1) releases and checks again. */
static void durable_client(struct durable_view *v, int i)
{
	char reply[512] = "", key[96], req[64];
	int fd = cl_open(), devs[MAXD];
	unsigned long long id = 0;
	long long start;

	if (fd >= 0)
		id = cl_lease(fd, "count=1 mode=shared mem=1M placement=least-loaded", reply,
			      sizeof(reply));
	if (!id || reply_devices(reply, devs) != 1) {
		durable_fail(v, "LEASE", reply);
		atomic_fetch_add(&v->ready, 1);
		_exit(1);
	}
	v->id[i] = id;
	v->dev[i] = devs[0];
	snprintf(key, sizeof(key), "lease id=%llu uid=0 pid=%d ", id, (int)getpid());
	if (!state_has(key))
		atomic_fetch_add(&v->missing, 1);
	atomic_fetch_add(&v->ready, 1);
	/* The test kills and restarts the daemon meanwhile; it bounds this wait. */
	for (start = ms_now(); !atomic_load(&v->phase) && ms_now() - start < 240000;)
		usleep(10000);
	close(fd);
	fd = cl_open();
	snprintf(req, sizeof(req), "RELEASE id=%llu", id);
	reply[0] = '\0';
	if (fd < 0 || cl_req(fd, req, reply, sizeof(reply)) < 0 || strncmp(reply, "OK ", 3))
		durable_fail(v, req, reply);
	else if (state_has(key))
		atomic_fetch_add(&v->stale, 1);
	if (fd >= 0)
		close(fd);
	_exit(0);
}

TEST_F_TIMEOUT(poold, concurrent_leases_are_committed_before_their_reply, 300)
{
	struct durable_view *v = mmap(NULL, sizeof(*v), PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int clients = 50, kept = 0, quota_ok = 0, restarted;
	static char out[16384];
	pid_t pids[50];
	long long start;

	ASSERT_NE(MAP_FAILED, v);
	memset(v, 0, sizeof(*v));
	for (int c = 0; c < clients; c++) {
		pids[c] = vnpu_fork();
		ASSERT_LE(0, pids[c]);
		if (pids[c] == 0)
			durable_client(v, c);
	}
	for (start = ms_now(); atomic_load(&v->ready) < clients && ms_now() - start < 120000;)
		usleep(10000);
	EXPECT_EQ(clients, atomic_load(&v->ready));
	EXPECT_EQ(0, atomic_load(&v->failed)) TH_LOG("first: %s", v->first_failure);
	/* Every client found its lease in the state file when its OK came. */
	EXPECT_EQ(0, atomic_load(&v->missing));
	/* SIGKILL: no state written at exit, only what each wakeup committed. */
	kill(self->e.daemon, SIGKILL);
	waitpid(self->e.daemon, NULL, 0);
	self->e.daemon = 0;
	restarted = start_daemon(&self->e, base_config) == 0;
	EXPECT_TRUE(restarted);
	if (restarted && cl_multi("LIST", out, sizeof(out)) >= 0) {
		for (int c = 0; c < clients; c++) {
			char key[48];

			snprintf(key, sizeof(key), "lease id=%llu ", v->id[c]);
			kept += v->id[c] && strstr(out, key);
			quota_ok += v->id[c] && hard_limit(&self->e, v->dev[c], pids[c]) == MIB;
		}
	}
	EXPECT_EQ(clients, kept) TH_LOG("%s", out);
	EXPECT_EQ(clients, quota_ok);
	/* Now 50 releases at once: no OK before the file lost the lease. */
	atomic_store(&v->phase, 1);
	for (int c = 0; c < clients; c++) {
		int status;

		waitpid(pids[c], &status, 0);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	EXPECT_EQ(0, atomic_load(&v->failed)) TH_LOG("first: %s", v->first_failure);
	EXPECT_EQ(0, atomic_load(&v->stale));
	EXPECT_EQ(0, cl_multi("LIST", out, sizeof(out))) TH_LOG("%s", out);
	munmap(v, sizeof(*v));
}

/* ---- a device failing mid-lease ---------------------------------------------------- */

/* Makes device @dev need a reset: DRM_VNPU_HEALTH_RESET_HANGS job timeouts. */
static int break_device(struct pool_env *e, int dev)
{
	struct drm_vnpu_cmd hang = { .opcode = DRM_VNPU_CMD_HANG };
	uint32_t sync = syncobj_create(e->fd[dev]);
	int ret = vnpu_debugfs_write_u64(e->fd[dev], "allow_hang", 1);

	for (int i = 0; !ret && i < DRM_VNPU_HEALTH_RESET_HANGS; i++) {
		uint32_t q = 0;

		ret = queue_create_timeout(e->fd[dev], DRM_VNPU_ENGINE_COMPUTE,
					   DRM_VNPU_PRIORITY_NORMAL, 50, &q);
		if (!ret)
			ret = submit_cmds(e->fd[dev], q, &hang, 1, NULL, 0, sync);
		if (!ret)
			ret = syncobj_wait(e->fd[dev], sync, 9000);
	}
	vnpu_debugfs_write_u64(e->fd[dev], "allow_hang", 0);
	return ret;
}

static int wait_status(int dev, const char *want, int ms, char *line, size_t len)
{
	long long start = ms_now();

	while (ms_now() - start <= ms) {
		if (!device_status(dev, line, len) && strstr(line, want))
			return 0;
		usleep(20000);
	}
	return -1;
}

TEST_F_TIMEOUT(poold, device_failing_mid_lease_is_reset_before_the_next, 120)
{
	char reply[512], req[64], line[512], words[64];
	int devs[MAXD], d, fd = cl_open();
	unsigned long long id;
	uint64_t resets, after;

	ASSERT_LE(0, fd);
	id = cl_lease(fd, "count=1 mode=exclusive placement=least-loaded", reply, sizeof(reply));
	ASSERT_NE(0, id) TH_LOG("%s", reply);
	ASSERT_EQ(1, reply_devices(reply, devs));
	d = devs[0];
	ASSERT_EQ(0, vnpu_sysfs_u64(self->e.fd[d], "reset_count", &resets));
	ASSERT_EQ(0, break_device(&self->e, d));
	snprintf(req, sizeof(req), "INFO id=%llu", id);
	ASSERT_LT(0, cl_req(fd, req, reply, sizeof(reply)));
	ASSERT_LT(0, cl_line(fd, line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "health=needs-reset")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "state=degraded")) TH_LOG("%s", line);
	ASSERT_EQ(0, device_status(d, line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "during a lease")) TH_LOG("%s", line);
	/* Nobody else gets it meanwhile. */
	snprintf(words, sizeof(words), "count=%d mode=shared mem=1M placement=least-loaded", self->e.ndev);
	EXPECT_EQ(0, cl_lease(fd, words, reply, sizeof(reply)));
	EXPECT_NE(NULL, strstr(reply, "1 unhealthy")) TH_LOG("%s", reply);
	/* The release resets it; the next lease can have it. */
	snprintf(req, sizeof(req), "RELEASE id=%llu", id);
	ASSERT_LT(0, cl_req(fd, req, reply, sizeof(reply)));
	EXPECT_EQ(0, wait_status(d, "health=ok state=free", 1000, line, sizeof(line)))
		TH_LOG("%s", line);
	ASSERT_EQ(0, vnpu_sysfs_u64(self->e.fd[d], "reset_count", &after));
	EXPECT_EQ(resets + 1, after);
	EXPECT_NE(0, cl_lease(fd, words, reply, sizeof(reply))) TH_LOG("%s", reply);
	close(fd);
}

TEST_F_TIMEOUT(poold, unhealthy_device_is_held_out_when_configured, 120)
{
	char reply[512], line[512], conf[256], words[64];
	int devs[MAXD], d, fd;
	unsigned long long id;

	stop_daemon(&self->e);
	snprintf(conf, sizeof(conf), "%sunhealthy hold\n", base_config);
	ASSERT_EQ(0, start_daemon(&self->e, conf));
	fd = cl_open();
	id = cl_lease(fd, "count=1 mode=exclusive", reply, sizeof(reply));
	ASSERT_NE(0, id) TH_LOG("%s", reply);
	ASSERT_EQ(1, reply_devices(reply, devs));
	d = devs[0];
	ASSERT_EQ(0, break_device(&self->e, d));
	close(fd);
	ASSERT_LE(0, wait_lease_gone(id, 1000));
	EXPECT_EQ(0, wait_status(d, "state=held", 1000, line, sizeof(line))) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(line, "reason=health needs-reset; reset it")) TH_LOG("%s", line);
	fd = cl_open();
	snprintf(words, sizeof(words), "count=%d mode=shared mem=1M placement=least-loaded", self->e.ndev);
	EXPECT_EQ(0, cl_lease(fd, words, reply, sizeof(reply)));
	EXPECT_NE(NULL, strstr(reply, "1 unhealthy")) TH_LOG("%s", reply);
	/* The administrator's reset brings it back. */
	ASSERT_EQ(0, vnpu_sysfs_write(self->e.fd[d], "reset", "1"));
	EXPECT_EQ(0, wait_status(d, "health=ok state=free", 1000, line, sizeof(line)))
		TH_LOG("%s", line);
	EXPECT_NE(0, cl_lease(fd, words, reply, sizeof(reply))) TH_LOG("%s", reply);
	close(fd);
}

/* ---- the runtime and the CLI honour the lease --------------------------------------- */

TEST_F(poold, runtime_sees_only_leased_devices)
{
	struct vnpu_lease_request req = {
		.count = 1, .mode = VNPU_LEASE_SHARED, .placement = VNPU_PLACEMENT_LEAST_LOADED,
		.memory = 16 * MIB,
	};
	struct vnpu_device_properties props;
	struct vnpu_lease_info info;
	struct vnpu_lease lease;
	struct vnpu_context ctx;
	char reason[256];
	uint32_t count;
	uint64_t p;

	setenv("VNPU_POOL_SOCKET", SOCK, 1);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_lease_acquire(NULL, &req, &lease, reason, sizeof(reason)))
		TH_LOG("%s", reason);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_lease_get_info(lease, &info));
	EXPECT_EQ(1, info.count);
	EXPECT_EQ(getpid(), info.pid);
	EXPECT_EQ(16 * MIB, info.memory);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_count(&count));
	EXPECT_EQ(1, count);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_properties(0, &props));
	EXPECT_EQ(info.devices[0], props.physical_index);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &ctx));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_malloc(ctx, 8 * MIB, 0, &p));
	EXPECT_EQ(VNPU_ERROR_QUOTA_EXCEEDED, vnpu_malloc(ctx, 16 * MIB, 0, &p));
	vnpu_finalize();
	EXPECT_EQ(VNPU_SUCCESS, vnpu_lease_release(lease));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_lease_release(lease));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_lease_get_info(lease, &info));
	EXPECT_EQ(0, has_lease(info.id));
}

TEST_F(poold, runtime_lease_errors)
{
	struct vnpu_lease_request req = { .count = 1, .mode = VNPU_LEASE_EXCLUSIVE };
	struct vnpu_device_properties props;
	struct vnpu_lease lease;
	char reason[256], list[16], out[4096];

	/* Bad requests are refused before the pool sees them. */
	req.count = 0;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_lease_acquire(SOCK, &req, &lease, NULL, 0));
	req.count = 1;
	req.placement = 9;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_lease_acquire(SOCK, &req, &lease, NULL, 0));
	req.placement = 0;
	req.mode = VNPU_LEASE_SHARED;
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_lease_acquire(SOCK, &req, &lease, NULL, 0));
	req.memory = self->e.vram[0] * 2;
	EXPECT_EQ(VNPU_ERROR_LEASE_REFUSED,
		  vnpu_lease_acquire(SOCK, &req, &lease, reason, sizeof(reason)));
	EXPECT_NE(NULL, strstr(reason, "more than a device has")) TH_LOG("%s", reason);
	EXPECT_EQ(VNPU_ERROR_POOL_UNAVAILABLE,
		  vnpu_lease_acquire(DIR_ "/nothing.sock", &req, &lease, NULL, 0));
	/* No pool, no lease, or a visible device outside the lease: init says so. */
	setenv("VNPU_POOL_SOCKET", DIR_ "/nothing.sock", 1);
	EXPECT_EQ(VNPU_ERROR_POOL_UNAVAILABLE, vnpu_init(0));
	setenv("VNPU_POOL_SOCKET", SOCK, 1);
	EXPECT_EQ(VNPU_ERROR_NO_DEVICE, vnpu_init(0));
	setenv("VNPU_POOL_REQUEST", "count=1,mode=shared,mem=4M,placement=least-loaded", 1);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_properties(0, &props));
	EXPECT_EQ(1, cl_multi("LIST", out, sizeof(out)));
	vnpu_finalize();
	/* The lease taken for VNPU_POOL_REQUEST ends with the runtime. */
	EXPECT_EQ(0, cl_multi("LIST", out, sizeof(out))) TH_LOG("%s", out);
	snprintf(list, sizeof(list), "%u", (props.physical_index + 1) % self->e.ndev);
	setenv("VNPU_VISIBLE_DEVICES", list, 1);
	setenv("VNPU_POOL_REQUEST", "count=1,mode=exclusive,placement=least-loaded", 1);
	/* least-loaded on an idle pool takes device 0; list names another. */
	EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG, vnpu_init(0));
	setenv("VNPU_POOL_REQUEST", "count=64", 1);
	unsetenv("VNPU_VISIBLE_DEVICES");
	EXPECT_EQ(VNPU_ERROR_LEASE_REFUSED, vnpu_init(0));
	setenv("VNPU_POOL_REQUEST", "count=1;rm", 1);
	EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG, vnpu_init(0));
	unsetenv("VNPU_POOL_REQUEST");
	unsetenv("VNPU_POOL_SOCKET");
}

/* vnpu-pool lease -- COMMAND: the command holds the lease while it runs. */
TEST_F(poold, cli_lease_runs_a_command_under_the_lease)
{
	char cmd[512], out[4096], key[48];
	const char *dir = getenv("VNPU_BIN"), *l;
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd),
		 "%1$s/vnpu-pool -s %2$s lease -n 2 -m 8M --shared -- sh -c 'echo lease=$VNPU_POOL_LEASE pid=$$; %1$s/vnpu-pool list' 2>&1",
		 dir ? dir : "build/bin", SOCK);
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	EXPECT_EQ(0, pclose(p)) TH_LOG("%s", out);
	l = strstr(out, "pid=");
	ASSERT_NE(NULL, l) TH_LOG("%s", out);
	/* The lease's tenant is the command itself. */
	snprintf(key, sizeof(key), " pid=%d mode=shared", atoi(l + 4));
	EXPECT_NE(NULL, strstr(out, key)) TH_LOG("%s", out);
	EXPECT_EQ(0, cl_multi("LIST", out, sizeof(out))) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
