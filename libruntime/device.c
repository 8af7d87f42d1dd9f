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

/* Protects every field of rt: init, finalize and queries may race. */
static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vnpu_runtime rt;

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
	rt.devices = NULL;
	rt.num_devices = 0;
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
	return VNPU_SUCCESS;
}

int vnpu_init(unsigned int flags)
{
	int status = VNPU_SUCCESS;

	if (flags)
		return VNPU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&rt_lock);
	if (!rt.refcount)
		status = discover_devices();
	if (status == VNPU_SUCCESS) {
		rt.refcount++;
		rt.ever_initialized = 1;
	}
	pthread_mutex_unlock(&rt_lock);
	return status;
}

int vnpu_finalize(void)
{
	int status = VNPU_SUCCESS;

	pthread_mutex_lock(&rt_lock);
	if (!rt.refcount)
		status = rt.ever_initialized ? VNPU_ERROR_DEINITIALIZED : VNPU_ERROR_UNINITIALIZED;
	else if (!--rt.refcount)
		close_devices();
	pthread_mutex_unlock(&rt_lock);
	return status;
}

/* Called with rt_lock held: the error for a call made outside init..finalize. */
static int state_error_locked(void)
{
	if (rt.refcount)
		return VNPU_SUCCESS;
	return rt.ever_initialized ? VNPU_ERROR_DEINITIALIZED : VNPU_ERROR_UNINITIALIZED;
}

int vnpu_device_count(uint32_t *count)
{
	int status;

	if (!count)
		return VNPU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&rt_lock);
	status = state_error_locked();
	if (status == VNPU_SUCCESS)
		*count = rt.num_devices;
	pthread_mutex_unlock(&rt_lock);
	return status;
}

static int status_from_errno(int err)
{
	return err == -ENODEV ? VNPU_ERROR_DEVICE_LOST : VNPU_ERROR_DRIVER;
}

static int read_properties_locked(const struct vnpu_rt_device *dev,
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
			return status_from_errno(ret);
	}
	memset(props, 0, sizeof(*props));
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
		return VNPU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&rt_lock);
	status = state_error_locked();
	if (status == VNPU_SUCCESS && index >= rt.num_devices)
		status = VNPU_ERROR_INVALID_VALUE;
	if (status == VNPU_SUCCESS)
		status = read_properties_locked(&rt.devices[index], props);
	pthread_mutex_unlock(&rt_lock);
	return status;
}
