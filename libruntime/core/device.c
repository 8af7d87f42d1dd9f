// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Runtime state and device discovery.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <xf86drm.h>

#include "runtime.h"
#include "trace.h"

static int vnpu_leak_report_locked(FILE *out, unsigned int *count);

/*
 * Runtime-wide state. @devices holds every vnpu device found, ordered by
 * physical index; @visible maps logical indices to positions in @devices.
 */
struct vnpu_runtime {
	unsigned int refcount;
	int ever_initialized;
	struct vnpu_rt_device *devices;
	uint32_t num_devices;
	uint32_t *visible;
	uint32_t num_visible;
	int launch_blocking;
};

/* Protects every field of rt: init, finalize and queries may race. */
static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vnpu_runtime rt;
/*
 * What vnpu_rt_enter() answers, written under rt_lock whenever the state
 * changes and read without it: every call checks it, and a lock there
 * would cost the allocation fast path more than its own work.
 */
_Atomic int vnpu_rt_call_status = VNPU_ERROR_UNINITIALIZED;

int vnpu_get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_vnpu_get_param args = { .param = param };

	if (drmIoctl(fd, DRM_IOCTL_VNPU_GET_PARAM, &args))
		return -errno;
	*value = args.value;
	return 0;
}

static int is_vnpu_fd(int fd)
{
	drmVersionPtr version = drmGetVersion(fd);
	int match;

	if (!version)
		return 0;
	match = version->name && !strcmp(version->name, "vnpu");
	drmFreeVersion(version);
	return match;
}

static int cmp_device(const void *a, const void *b)
{
	const struct vnpu_rt_device *da = a, *db = b;

	return (da->physical_index > db->physical_index) -
	       (da->physical_index < db->physical_index);
}

/* Opens one accel node; returns 1 if it is a vnpu device, 0 if not, or a status. */
static int probe_node(const char *path, struct vnpu_rt_device *dev)
{
	struct stat st;
	uint64_t index, version;
	int fd;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == EACCES || errno == EPERM ? -VNPU_ERROR_PERMISSION_DENIED : 0;
	if (!is_vnpu_fd(fd) || fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	if (vnpu_get_param(fd, DRM_VNPU_PARAM_UAPI_VERSION, &version) ||
	    vnpu_get_param(fd, DRM_VNPU_PARAM_DEVICE_INDEX, &index)) {
		close(fd);
		return -VNPU_ERROR_DRIVER;
	}
	if ((version >> 16) != DRM_VNPU_UAPI_MAJOR) {
		close(fd);
		return -VNPU_ERROR_DRIVER_VERSION;
	}
	dev->fd = fd;
	dev->physical_index = index;
	dev->accel_minor = minor(st.st_rdev);
	return 1;
}

static void close_devices(void)
{
	for (uint32_t i = 0; i < rt.num_devices; i++)
		close(rt.devices[i].fd);
	free(rt.devices);
	free(rt.visible);
	rt.devices = NULL;
	rt.visible = NULL;
	rt.num_devices = 0;
	rt.num_visible = 0;
}

/* Position in rt.devices of physical device @physical, or -1. */
static int find_physical(unsigned long physical)
{
	for (uint32_t i = 0; i < rt.num_devices; i++)
		if (rt.devices[i].physical_index == physical)
			return (int)i;
	return -1;
}

/*
 * Parses a list of physical device indices ("1,0") into rt.visible:
 * strict, so a typo is an error instead of silently running on fewer or
 * other devices. With @allowed, every entry must be one of its @nallowed
 * physical indices.
 */
static int parse_device_list(const char *list, const uint32_t *allowed, unsigned int nallowed)
{
	const char *p = list;

	while (*p) {
		char *end;
		unsigned long physical;
		int pos, ok = !allowed;

		if (*p < '0' || *p > '9')
			return VNPU_ERROR_INVALID_CONFIG;
		physical = strtoul(p, &end, 10);
		pos = find_physical(physical);
		if (pos < 0 || (*end && *end != ','))
			return VNPU_ERROR_INVALID_CONFIG;
		for (unsigned int i = 0; i < nallowed; i++)
			ok |= allowed[i] == physical;
		if (!ok)
			return VNPU_ERROR_INVALID_CONFIG;
		for (uint32_t i = 0; i < rt.num_visible; i++)
			if (rt.visible[i] == (uint32_t)pos)
				return VNPU_ERROR_INVALID_CONFIG;
		rt.visible[rt.num_visible++] = (uint32_t)pos;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return VNPU_ERROR_INVALID_CONFIG;	/* trailing comma */
	}
	return VNPU_SUCCESS;
}

/* The pool's leases (multi/lease.c), registered by ../init.c; may be NULL. */
static const struct vnpu_device_source *device_source;

void vnpu_rt_set_device_source(const struct vnpu_device_source *source)
{
	device_source = source;
}

static void release_leased_devices(void)
{
	if (device_source)
		device_source->release();
}

/*
 * Decides which devices the process sees, in which logical order: with
 * VNPU_POOL_SOCKET, the devices of its leases; VNPU_VISIBLE_DEVICES then
 * selects among them (or among all devices without a pool).
 */
static int parse_visible_devices(void)
{
	const char *env = getenv("VNPU_VISIBLE_DEVICES");
	const char *pool = getenv("VNPU_POOL_SOCKET");
	uint32_t leased[VNPU_LEASE_MAX_DEVICES];
	unsigned int nleased = 0;
	char list[VNPU_LEASE_MAX_DEVICES * 12] = "";
	size_t off = 0;
	int status;

	rt.visible = calloc(rt.num_devices ? rt.num_devices : 1, sizeof(*rt.visible));
	if (!rt.visible)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	if (pool && *pool) {
		if (!device_source)
			return VNPU_ERROR_POOL_UNAVAILABLE;
		status = device_source->leased_devices(leased, &nleased);
		if (status != VNPU_SUCCESS)
			return status;
		for (unsigned int i = 0; i < nleased; i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%u", i ? "," : "",
						leased[i]);
		/* A lease naming a device this process cannot see is the pool's error. */
		status = parse_device_list(list, NULL, 0);
		if (status != VNPU_SUCCESS || !env)
			return status == VNPU_SUCCESS ? status : VNPU_ERROR_DRIVER;
		rt.num_visible = 0;
		return parse_device_list(env, leased, nleased);
	}
	if (!env) {
		for (uint32_t i = 0; i < rt.num_devices; i++)
			rt.visible[i] = i;
		rt.num_visible = rt.num_devices;
		return VNPU_SUCCESS;
	}
	return parse_device_list(env, NULL, 0);
}

static int discover_devices(void)
{
	const char *dir = "/dev/accel";
	int denied = 0, status = VNPU_SUCCESS;
	struct dirent *entry;
	DIR *d = opendir(dir);

	if (!d)
		return VNPU_ERROR_NO_DEVICE;
	while ((entry = readdir(d))) {
		struct vnpu_rt_device dev, *grown;
		char path[512];
		int ret;

		if (strncmp(entry->d_name, "accel", 5))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, entry->d_name);
		ret = probe_node(path, &dev);
		if (ret == -VNPU_ERROR_PERMISSION_DENIED)
			denied = 1;
		if (ret < 0 && ret != -VNPU_ERROR_PERMISSION_DENIED) {
			status = -ret;
			break;
		}
		if (ret <= 0)
			continue;
		grown = realloc(rt.devices, (rt.num_devices + 1) * sizeof(*grown));
		if (!grown) {
			close(dev.fd);
			status = VNPU_ERROR_OUT_OF_HOST_MEMORY;
			break;
		}
		rt.devices = grown;
		rt.devices[rt.num_devices++] = dev;
	}
	closedir(d);
	if (status == VNPU_SUCCESS && !rt.num_devices)
		status = denied ? VNPU_ERROR_PERMISSION_DENIED : VNPU_ERROR_NO_DEVICE;
	if (status != VNPU_SUCCESS) {
		close_devices();
		return status;
	}
	qsort(rt.devices, rt.num_devices, sizeof(*rt.devices), cmp_device);
	status = parse_visible_devices();
	if (status == VNPU_SUCCESS && !rt.num_visible)
		status = VNPU_ERROR_NO_DEVICE;
	if (status != VNPU_SUCCESS) {
		close_devices();
		release_leased_devices();
	}
	return status;
}

/* Called with rt_lock held: the error for a call made outside init..finalize. */
static int state_error_locked(void)
{
	if (rt.refcount)
		return VNPU_SUCCESS;
	return rt.ever_initialized ? VNPU_ERROR_DEINITIALIZED : VNPU_ERROR_UNINITIALIZED;
}

int vnpu_rt_init(unsigned int flags)
{
	int status = VNPU_SUCCESS;

	if (flags)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	pthread_mutex_lock(&rt_lock);
	if (!rt.refcount)
		status = discover_devices();
	if (status == VNPU_SUCCESS) {
		const char *blocking = getenv("VNPU_LAUNCH_BLOCKING");

		rt.refcount++;
		rt.ever_initialized = 1;
		atomic_store(&vnpu_rt_call_status, VNPU_SUCCESS);
		rt.launch_blocking = blocking && !strcmp(blocking, "1");
		vnpu_trace_init();
		vnpu_log(VNPU_LOG_INFO, "init: %u of %u devices visible", rt.num_visible,
			 rt.num_devices);
	}
	pthread_mutex_unlock(&rt_lock);
	return vnpu_set_status(status);
}

static void collect_handle(struct vnpu_obj *obj, void *arg)
{
	uint64_t **cursor = arg;

	*(*cursor)++ = obj->handle;
}

/* Removes every live object of @type, tearing contexts down like destroy. */
static void destroy_all(unsigned int type)
{
	uint64_t *handles, *cursor;
	unsigned int n;

	n = vnpu_handle_for_each(type, NULL, NULL);
	handles = calloc(n ? n : 1, sizeof(*handles));
	if (!handles)
		return;
	cursor = handles;
	vnpu_handle_for_each(type, collect_handle, &cursor);
	for (uint64_t *h = handles; h < cursor; h++) {
		struct vnpu_obj *obj = vnpu_handle_remove(*h, type, NULL);

		if (obj && type == VNPU_OBJ_CONTEXT)
			vnpu_ctx_destroy_streams((struct vnpu_ctx *)obj, 0);
		vnpu_obj_put(obj);
	}
	free(handles);
}

/* Destroys every live object; called by the last finalize. */
static void destroy_all_objects(void)
{
	/*
	 * Graphs hold events and a context; events and communicators hold
	 * streams; contexts take their streams along.
	 */
	destroy_all(VNPU_OBJ_GRAPH);
	destroy_all(VNPU_OBJ_COMM);
	destroy_all(VNPU_OBJ_EVENT);
	destroy_all(VNPU_OBJ_CONTEXT);
}

int vnpu_finalize(void)
{
	int status = VNPU_SUCCESS;
	const char *report = getenv("VNPU_LEAK_REPORT");

	pthread_mutex_lock(&rt_lock);
	if (!rt.refcount) {
		status = rt.ever_initialized ? VNPU_ERROR_DEINITIALIZED : VNPU_ERROR_UNINITIALIZED;
	} else if (rt.refcount == 1) {
		/* New calls fail from here on; running ones hold references. */
		atomic_store(&vnpu_rt_call_status, VNPU_ERROR_DEINITIALIZED);
		if (report && !strcmp(report, "1"))
			vnpu_leak_report_locked(stderr, NULL);
		destroy_all_objects();
		vnpu_trace_finalize();
		rt.refcount = 0;
		close_devices();
		release_leased_devices();
	} else {
		rt.refcount--;
	}
	pthread_mutex_unlock(&rt_lock);
	return vnpu_set_status(status);
}

int vnpu_rt_device(uint32_t logical, struct vnpu_rt_device *dev)
{
	int status;

	pthread_mutex_lock(&rt_lock);
	status = state_error_locked();
	if (status == VNPU_SUCCESS && logical >= rt.num_visible)
		status = VNPU_ERROR_INVALID_VALUE;
	if (status == VNPU_SUCCESS)
		*dev = rt.devices[rt.visible[logical]];
	pthread_mutex_unlock(&rt_lock);
	return status;
}

int vnpu_device_count(uint32_t *count)
{
	int status;

	if (!count)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	pthread_mutex_lock(&rt_lock);
	status = state_error_locked();
	if (status == VNPU_SUCCESS)
		*count = rt.num_visible;
	pthread_mutex_unlock(&rt_lock);
	return vnpu_set_status(status);
}

static int read_properties_locked(const struct vnpu_rt_device *dev, uint32_t logical,
				  struct vnpu_device_properties *props)
{
	static const uint32_t params[] = {
		DRM_VNPU_PARAM_UAPI_VERSION, DRM_VNPU_PARAM_VRAM_SIZE,
		DRM_VNPU_PARAM_NUM_COMPUTE_ENGINES, DRM_VNPU_PARAM_NUM_COPY_ENGINES,
		DRM_VNPU_PARAM_NUMA_NODE, DRM_VNPU_PARAM_HEALTH,
	};
	uint64_t v[sizeof(params) / sizeof(params[0])];

	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		int ret = vnpu_get_param(dev->fd, params[i], &v[i]);

		if (ret)
			return vnpu_status_from_errno(ret);
	}
	memset(props, 0, sizeof(*props));
	props->logical_index = logical;
	snprintf(props->name, sizeof(props->name), "vnpu%u", dev->physical_index);
	props->physical_index = dev->physical_index;
	props->accel_minor = dev->accel_minor;
	props->uapi_major = v[0] >> 16;
	props->uapi_minor = v[0] & 0xffff;
	props->vram_total = v[1];
	props->compute_engines = v[2];
	props->copy_engines = v[3];
	props->numa_node = v[4] == DRM_VNPU_NUMA_NODE_NONE ? -1 : (int32_t)v[4];
	props->health = (enum vnpu_health)v[5];
	return VNPU_SUCCESS;
}

int vnpu_device_get_properties(uint32_t index, struct vnpu_device_properties *props)
{
	int status;

	if (!props)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	pthread_mutex_lock(&rt_lock);
	status = state_error_locked();
	if (status == VNPU_SUCCESS && index >= rt.num_visible)
		status = VNPU_ERROR_INVALID_VALUE;
	if (status == VNPU_SUCCESS)
		status = read_properties_locked(&rt.devices[rt.visible[index]], index, props);
	pthread_mutex_unlock(&rt_lock);
	return vnpu_set_status(status);
}

static void report_context(struct vnpu_obj *obj, void *arg)
{
	struct vnpu_ctx *ctx = (struct vnpu_ctx *)obj;
	unsigned int *count = ((void **)arg)[1];
	FILE *out = ((void **)arg)[0];
	char where[128];

	vnpu_describe_caller(obj->created_by, where, sizeof(where));
	if (out)
		fprintf(out, "vnpu: leak: context 0x%llx on device %u, created by %s\n",
			(unsigned long long)obj->handle, ctx->device, where);
	*count += 1 + vnpu_ctx_report_allocs(ctx, out);
}

static void report_other(struct vnpu_obj *obj, void *arg)
{
	unsigned int *count = ((void **)arg)[1];
	FILE *out = ((void **)arg)[0];
	char where[128];

	vnpu_describe_caller(obj->created_by, where, sizeof(where));
	if (out)
		fprintf(out, "vnpu: leak: %s 0x%llx, created by %s\n",
			obj->type == VNPU_OBJ_STREAM ? "stream" : "event",
			(unsigned long long)obj->handle, where);
	*count += 1;
}

/* Under rt_lock, so that finalize cannot run meanwhile. */
static int vnpu_leak_report_locked(FILE *out, unsigned int *count)
{
	unsigned int total = 0;
	void *arg[2] = { out, &total };

	vnpu_handle_for_each(VNPU_OBJ_CONTEXT, report_context, arg);
	vnpu_handle_for_each(VNPU_OBJ_STREAM, report_other, arg);
	vnpu_handle_for_each(VNPU_OBJ_EVENT, report_other, arg);
	if (out)
		fprintf(out, "vnpu: leak report: %u live object%s\n", total, total == 1 ? "" : "s");
	if (count)
		*count = total;
	return VNPU_SUCCESS;
}

int vnpu_leak_report(FILE *out, unsigned int *count)
{
	int status;

	pthread_mutex_lock(&rt_lock);
	status = state_error_locked();
	if (status == VNPU_SUCCESS)
		status = vnpu_leak_report_locked(out, count);
	pthread_mutex_unlock(&rt_lock);
	return vnpu_set_status(status);
}

int vnpu_launch_blocking(void)
{
	int blocking;

	pthread_mutex_lock(&rt_lock);
	blocking = rt.launch_blocking;
	pthread_mutex_unlock(&rt_lock);
	return blocking;
}

int vnpu_device_get_health(uint32_t device, enum vnpu_health *health)
{
	struct vnpu_rt_device dev;
	uint64_t value = 0;
	int status, ret;

	if (!health)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_rt_device(device, &dev);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	/* The fd stays open until finalize; a racing finalize makes this fail cleanly. */
	ret = vnpu_get_param(dev.fd, DRM_VNPU_PARAM_HEALTH, &value);
	if (ret)
		return vnpu_set_status(vnpu_status_from_errno(ret));
	*health = (enum vnpu_health)value;
	return VNPU_SUCCESS;
}

struct device_streams {
	uint32_t device;
	uint64_t *handles;
	unsigned int n, cap;
};

static void collect_device_context(struct vnpu_obj *obj, void *arg)
{
	struct vnpu_ctx *ctx = (struct vnpu_ctx *)obj;
	struct device_streams *ds = arg;

	if (ctx->device == ds->device && ds->n < ds->cap)
		ds->handles[ds->n++] = obj->handle;
}

int vnpu_device_synchronize(uint32_t device, int64_t timeout_ns)
{
	VNPU_TRACE_API();
	struct device_streams ds = { .device = device };
	struct vnpu_rt_device dev;
	int status = vnpu_rt_device(device, &dev);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (vnpu_in_callback())
		return vnpu_set_status(VNPU_ERROR_NOT_PERMITTED);
	ds.cap = vnpu_handle_for_each(VNPU_OBJ_CONTEXT, NULL, NULL) + 1;
	ds.handles = calloc(ds.cap, sizeof(*ds.handles));
	if (!ds.handles)
		return vnpu_set_status(VNPU_ERROR_OUT_OF_HOST_MEMORY);
	vnpu_handle_for_each(VNPU_OBJ_CONTEXT, collect_device_context, &ds);
	for (unsigned int i = 0; i < ds.n && status == VNPU_SUCCESS; i++) {
		struct vnpu_ctx *ctx;

		/* A context destroyed meanwhile has nothing left to wait for. */
		if (vnpu_ctx_get((struct vnpu_context){ ds.handles[i] }, &ctx) != VNPU_SUCCESS)
			continue;
		status = vnpu_ctx_synchronize(ctx, timeout_ns);
		vnpu_ctx_put(ctx);
	}
	free(ds.handles);
	return vnpu_set_status(status);
}

int vnpu_device_reset(uint32_t device)
{
	VNPU_TRACE_API();
	struct vnpu_rt_device dev;
	char path[128];
	int fd, status = vnpu_rt_device(device, &dev);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	/* The driver's reset is a root-only sysfs trigger on the device. */
	snprintf(path, sizeof(path), "/sys/class/accel/accel%u/device/vnpu/reset", dev.accel_minor);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return vnpu_set_status(errno == ENOENT ? VNPU_ERROR_DRIVER
						       : vnpu_status_from_errno(errno));
	if (write(fd, "1", 1) != 1)
		status = vnpu_status_from_errno(errno);
	close(fd);
	vnpu_log(VNPU_LOG_INFO, "device %u reset: %s", device, vnpu_status_name(status));
	return vnpu_set_status(status);
}
