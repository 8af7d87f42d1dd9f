// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Device pool leases: the client of vnpu-poold (lease_proto.h), and the
 * devices the runtime shows when VNPU_POOL_SOCKET is set.
 *
 * Each lease keeps its own connection to the pool open: the pool ends the
 * lease when that connection closes, which is also what happens when the
 * process exits.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/runtime.h"
#include "lease_proto.h"
#include "multi.h"

struct held_lease {
	uint64_t id;
	int fd;
	int runtime_owned;	/* taken by vnpu_init() for VNPU_POOL_REQUEST */
	struct held_lease *next;
};

/* Protects held: the leases this process took through this library. */
static pthread_mutex_t lease_lock = PTHREAD_MUTEX_INITIALIZER;
static struct held_lease *held;

static const char *socket_path_or_default(const char *path)
{
	const char *env = getenv("VNPU_POOL_SOCKET");

	if (path && *path)
		return path;
	return env && *env ? env : LP_DEFAULT_SOCKET;
}

static void set_reason(char *reason, size_t size, const char *text)
{
	if (reason && size)
		snprintf(reason, size, "%s", text);
}

/* The status for an "ERR CODE text" reply. */
static int status_of_error(const char *line)
{
	static const struct {
		const char *code;
		int status;
	} map[] = {
		{ "bad-request", VNPU_ERROR_INVALID_VALUE },
		{ "too-large", VNPU_ERROR_LEASE_REFUSED },
		{ "over-capacity", VNPU_ERROR_LEASE_REFUSED },
		{ "over-limit", VNPU_ERROR_LEASE_REFUSED },
		{ "permission", VNPU_ERROR_PERMISSION_DENIED },
		{ "not-found", VNPU_ERROR_INVALID_HANDLE },
	};
	size_t len = strcspn(line + 4, " ");

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strlen(map[i].code) == len && !strncmp(line + 4, map[i].code, len))
			return map[i].status;
	return VNPU_ERROR_POOL_UNAVAILABLE;
}

/*
 * Sends @request on @c and reads the reply line into @line. Returns
 * VNPU_SUCCESS for "OK", the mapped status for "ERR" (the text after the
 * code goes to @reason), VNPU_ERROR_POOL_UNAVAILABLE when the pool does
 * not answer.
 */
static int transact(struct lp_conn *c, const char *request, char *line, size_t size,
		    char *reason, size_t reason_size)
{
	int ret = vnpu_lp_send(c->fd, request, LP_CLIENT_TIMEOUT_MS);

	if (!ret)
		ret = vnpu_lp_recv(c, line, size, LP_CLIENT_TIMEOUT_MS);
	if (ret < 0) {
		set_reason(reason, reason_size, "the pool did not answer");
		return VNPU_ERROR_POOL_UNAVAILABLE;
	}
	if (!strncmp(line, "OK", 2) && (!line[2] || line[2] == ' '))
		return VNPU_SUCCESS;
	if (!strncmp(line, "ERR ", 4)) {
		const char *text = strchr(line + 4, ' ');

		set_reason(reason, reason_size, text ? text + 1 : line + 4);
		return status_of_error(line);
	}
	set_reason(reason, reason_size, "the pool sent a malformed reply");
	return VNPU_ERROR_POOL_UNAVAILABLE;
}

/* Connects and greets; VNPU_SUCCESS with @c->fd open, or a status. */
static int pool_connect(const char *path, struct lp_conn *c, char *reason, size_t reason_size)
{
	char line[LP_MAX_LINE], hello[32];
	int fd = vnpu_lp_connect(socket_path_or_default(path)), status;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (fd < 0) {
		if (reason && reason_size)
			snprintf(reason, reason_size, "cannot connect to %s: %s",
				 socket_path_or_default(path), strerror(-fd));
		return VNPU_ERROR_POOL_UNAVAILABLE;
	}
	c->fd = fd;
	snprintf(hello, sizeof(hello), "HELLO version=%d", LP_VERSION);
	status = transact(c, hello, line, sizeof(line), reason, reason_size);
	if (status != VNPU_SUCCESS) {
		close(fd);
		c->fd = -1;
		/* A refusal of the greeting is the pool's, not the caller's, fault. */
		return VNPU_ERROR_POOL_UNAVAILABLE;
	}
	return VNPU_SUCCESS;
}

/* Sends "LEASE @words" and records the lease; the connection stays open. */
static int lease_words(const char *path, const char *words, int runtime_owned,
		       struct vnpu_lease *lease, char *reason, size_t reason_size)
{
	char line[LP_MAX_LINE], request[LP_MAX_LINE];
	struct vnpu_lp_word w[LP_MAX_WORDS];
	struct held_lease *h;
	struct lp_conn c;
	uint64_t id;
	char *verb;
	int status, n;

	h = calloc(1, sizeof(*h));
	if (!h)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	status = pool_connect(path, &c, reason, reason_size);
	if (status != VNPU_SUCCESS) {
		free(h);
		return status;
	}
	snprintf(request, sizeof(request), "LEASE %s", words);
	status = transact(&c, request, line, sizeof(line), reason, reason_size);
	n = status == VNPU_SUCCESS ? vnpu_lp_split(line, &verb, w, LP_MAX_WORDS) : -1;
	if (status == VNPU_SUCCESS && (n < 0 || vnpu_lp_parse_u64(vnpu_lp_get(w, n, "id"), &id) || !id)) {
		set_reason(reason, reason_size, "the pool sent a malformed reply");
		status = VNPU_ERROR_POOL_UNAVAILABLE;
	}
	if (status != VNPU_SUCCESS) {
		close(c.fd);
		free(h);
		return status;
	}
	set_reason(reason, reason_size, "");
	h->id = id;
	h->fd = c.fd;
	h->runtime_owned = runtime_owned;
	pthread_mutex_lock(&lease_lock);
	h->next = held;
	held = h;
	pthread_mutex_unlock(&lease_lock);
	lease->handle = id;
	vnpu_log(VNPU_LOG_INFO, "pool: lease %llu: %s", (unsigned long long)id, words);
	return VNPU_SUCCESS;
}

int vnpu_lease_acquire(const char *socket_path, const struct vnpu_lease_request *req,
		       struct vnpu_lease *lease, char *reason, size_t reason_size)
{
	char words[160];

	set_reason(reason, reason_size, "");
	if (!req || !lease || req->flags || !req->count || req->count > VNPU_LEASE_MAX_DEVICES ||
	    !vnpu_lp_mode_name((int)req->mode) || !vnpu_lp_placement_name((int)req->placement) ||
	    (req->mode == VNPU_LEASE_SHARED && !req->memory)) {
		set_reason(reason, reason_size, "invalid request");
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	}
	if (req->memory)
		snprintf(words, sizeof(words), "count=%u mem=%llu mode=%s placement=%s",
			 req->count, (unsigned long long)req->memory,
			 vnpu_lp_mode_name((int)req->mode), vnpu_lp_placement_name((int)req->placement));
	else
		snprintf(words, sizeof(words), "count=%u mem=all mode=%s placement=%s",
			 req->count, vnpu_lp_mode_name((int)req->mode),
			 vnpu_lp_placement_name((int)req->placement));
	return vnpu_set_status(lease_words(socket_path, words, 0, lease, reason, reason_size));
}

/* Unlinks the held lease @id; NULL if this process does not hold it. */
static struct held_lease *take_held(uint64_t id)
{
	struct held_lease *h = NULL;

	pthread_mutex_lock(&lease_lock);
	for (struct held_lease **pp = &held; *pp; pp = &(*pp)->next) {
		if ((*pp)->id == id) {
			h = *pp;
			*pp = h->next;
			break;
		}
	}
	pthread_mutex_unlock(&lease_lock);
	return h;
}

static void release_held(struct held_lease *h)
{
	char request[64], line[LP_MAX_LINE];
	struct lp_conn c = { .fd = h->fd };

	/* Closing the connection alone would do; RELEASE makes it synchronous. */
	snprintf(request, sizeof(request), "RELEASE id=%llu", (unsigned long long)h->id);
	transact(&c, request, line, sizeof(line), NULL, 0);
	close(h->fd);
	vnpu_log(VNPU_LOG_INFO, "pool: lease %llu released", (unsigned long long)h->id);
	free(h);
}

int vnpu_lease_release(struct vnpu_lease lease)
{
	struct held_lease *h = take_held(lease.handle);

	if (!h)
		return vnpu_set_status(VNPU_ERROR_INVALID_HANDLE);
	release_held(h);
	return VNPU_SUCCESS;
}

/* Fills @info from a "lease id=... " line of the pool. */
static int parse_lease_line(char *line, struct vnpu_lease_info *info)
{
	struct vnpu_lp_word w[LP_MAX_WORDS];
	uint64_t id, uid, pid, mem;
	const char *state;
	char *verb;
	int n = vnpu_lp_split(line, &verb, w, LP_MAX_WORDS), nd, mode, placement;

	if (n < 0 || strcmp(verb, "lease"))
		return -1;
	mode = vnpu_lp_mode_parse(vnpu_lp_get(w, n, "mode") ? vnpu_lp_get(w, n, "mode") : "");
	placement = vnpu_lp_placement_parse(vnpu_lp_get(w, n, "placement") ? vnpu_lp_get(w, n, "placement") : "");
	nd = vnpu_lp_parse_devices(vnpu_lp_get(w, n, "devices"), info->devices, VNPU_LEASE_MAX_DEVICES);
	state = vnpu_lp_get(w, n, "state");
	if (vnpu_lp_parse_u64(vnpu_lp_get(w, n, "id"), &id) || vnpu_lp_parse_u64(vnpu_lp_get(w, n, "uid"), &uid) ||
	    vnpu_lp_parse_u64(vnpu_lp_get(w, n, "pid"), &pid) || vnpu_lp_parse_u64(vnpu_lp_get(w, n, "mem"), &mem) ||
	    mode < 0 || placement < 0 || nd < 0 || !state)
		return -1;
	info->id = id;
	info->uid = (uint32_t)uid;
	info->pid = (int32_t)pid;
	info->mode = (uint32_t)mode;
	info->placement = (uint32_t)placement;
	info->memory = mem;
	info->count = (uint32_t)nd;
	info->degraded = !strcmp(state, "degraded");
	return 0;
}

/*
 * Runs a query with a reply of "OK n=K" and K lease lines on a new
 * connection; fills up to @max infos. Returns the count or -status.
 */
static int query_leases(const char *path, const char *request, struct vnpu_lease_info *infos,
			int max)
{
	char line[LP_MAX_LINE];
	struct vnpu_lp_word w[LP_MAX_WORDS];
	struct lp_conn c;
	uint64_t k = 0;
	char *verb;
	int status = pool_connect(path, &c, NULL, 0), n = 0;

	if (status != VNPU_SUCCESS)
		return -status;
	status = transact(&c, request, line, sizeof(line), NULL, 0);
	if (status == VNPU_SUCCESS &&
	    (vnpu_lp_split(line, &verb, w, LP_MAX_WORDS) != 1 || vnpu_lp_parse_u64(vnpu_lp_get(w, 1, "n"), &k)))
		status = VNPU_ERROR_POOL_UNAVAILABLE;
	for (uint64_t i = 0; status == VNPU_SUCCESS && i < k; i++) {
		struct vnpu_lease_info info;

		memset(&info, 0, sizeof(info));
		if (vnpu_lp_recv(&c, line, sizeof(line), LP_CLIENT_TIMEOUT_MS) < 0 ||
		    parse_lease_line(line, &info))
			status = VNPU_ERROR_POOL_UNAVAILABLE;
		else if (n < max)
			infos[n++] = info;
	}
	close(c.fd);
	return status == VNPU_SUCCESS ? n : -status;
}

int vnpu_lease_get_info(struct vnpu_lease lease, struct vnpu_lease_info *info)
{
	char request[64];
	int found = 0, n;

	if (!info)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	pthread_mutex_lock(&lease_lock);
	for (struct held_lease *h = held; h; h = h->next)
		found |= h->id == lease.handle;
	pthread_mutex_unlock(&lease_lock);
	if (!found)
		return vnpu_set_status(VNPU_ERROR_INVALID_HANDLE);
	snprintf(request, sizeof(request), "INFO id=%llu", (unsigned long long)lease.handle);
	n = query_leases(NULL, request, info, 1);
	if (n < 0)
		return vnpu_set_status(-n);
	return n == 1 ? VNPU_SUCCESS : vnpu_set_status(VNPU_ERROR_INVALID_HANDLE);
}

/* Appends @dev to the list @out of @n entries unless it is there. */
static void add_device(uint32_t *out, unsigned int *n, uint32_t dev)
{
	for (unsigned int i = 0; i < *n; i++)
		if (out[i] == dev)
			return;
	if (*n < VNPU_LEASE_MAX_DEVICES)
		out[(*n)++] = dev;
}

/*
 * The physical indices of the devices this process leased from the pool at
 * VNPU_POOL_SOCKET (taking a lease first if VNPU_POOL_REQUEST asks for one),
 * at most VNPU_LEASE_MAX_DEVICES into @out. Returns a status.
 */
static int leased_devices(uint32_t *out, unsigned int *count)
{
	const char *request = getenv("VNPU_POOL_REQUEST");
	struct vnpu_lease_info infos[VNPU_LEASE_MAX_DEVICES];
	char reason[256], words[LP_MAX_LINE / 2];
	struct vnpu_lease lease;
	int n, status;

	*count = 0;
	/* The leases of this process, whoever took them (e.g. vnpu-pool lease -- COMMAND). */
	n = query_leases(NULL, "INFO", infos, VNPU_LEASE_MAX_DEVICES);
	if (n < 0) {
		vnpu_log(VNPU_LOG_ERROR, "pool: no answer at %s", socket_path_or_default(NULL));
		return -n;
	}
	if (!n && request) {
		size_t len = strlen(request);

		if (len >= sizeof(words) || strspn(request, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789=,-. ") != len)
			return VNPU_ERROR_INVALID_CONFIG;
		/*
		 * Commas separate the words, except inside a list: a piece
		 * without '=' continues the previous word ("from=0,2").
		 */
		for (size_t i = 0; i <= len; i++) {
			words[i] = request[i];
			if (request[i] == ',' && strcspn(request + i + 1, ",=") !=
						   strcspn(request + i + 1, ","))
				words[i] = ' ';
		}
		status = lease_words(NULL, words, 1, &lease, reason, sizeof(reason));
		if (status != VNPU_SUCCESS) {
			vnpu_log(VNPU_LOG_ERROR, "pool: VNPU_POOL_REQUEST '%s' refused: %s", request,
				 reason);
			return status == VNPU_ERROR_INVALID_VALUE ? VNPU_ERROR_INVALID_CONFIG : status;
		}
		n = query_leases(NULL, "INFO", infos, VNPU_LEASE_MAX_DEVICES);
		if (n < 0)
			return -n;
	}
	for (int i = 0; i < n; i++)
		for (uint32_t j = 0; j < infos[i].count; j++)
			add_device(out, count, infos[i].devices[j]);
	if (!*count)
		vnpu_log(VNPU_LOG_ERROR, "pool: this process holds no lease (VNPU_POOL_SOCKET is set)");
	return VNPU_SUCCESS;
}

/* Releases the lease vnpu_init() took for VNPU_POOL_REQUEST, if any. */
static void release_runtime_leases(void)
{
	for (;;) {
		struct held_lease *h = NULL;

		pthread_mutex_lock(&lease_lock);
		for (struct held_lease **pp = &held; *pp; pp = &(*pp)->next) {
			if ((*pp)->runtime_owned) {
				h = *pp;
				*pp = h->next;
				break;
			}
		}
		pthread_mutex_unlock(&lease_lock);
		if (!h)
			return;
		release_held(h);
	}
}

static const struct vnpu_device_source lease_source = {
	.leased_devices = leased_devices,
	.release = release_runtime_leases,
};

void vnpu_multi_register(void)
{
	vnpu_rt_set_device_source(&lease_source);
}
