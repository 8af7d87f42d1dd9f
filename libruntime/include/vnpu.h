/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * libvnpurt: the vnpu runtime. This is its only public header.
 *
 * Every function returns a status from enum vnpu_status: VNPU_SUCCESS (0)
 * or an error whose number is stable across releases. The runtime is
 * thread-safe: any function may be called from any thread.
 */
#ifndef VNPU_H
#define VNPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VNPU_VERSION_MAJOR 0
#define VNPU_VERSION_MINOR 1

/**
 * enum vnpu_status - result of every runtime call
 *
 * Numbers are stable. They are grouped by kind: 1xx the caller used the API
 * wrongly, 2xx a resource ran out or is missing, 3xx the state of an object
 * does not allow the call, 5xx the device or driver failed.
 * vnpu_status_string() says in plain words what broke and what to do.
 */
enum vnpu_status {
	VNPU_SUCCESS = 0,
	VNPU_ERROR_INVALID_VALUE = 100,
	VNPU_ERROR_UNINITIALIZED = 101,
	VNPU_ERROR_DEINITIALIZED = 102,
	VNPU_ERROR_NO_DEVICE = 200,
	VNPU_ERROR_OUT_OF_HOST_MEMORY = 201,
	VNPU_ERROR_PERMISSION_DENIED = 202,
	VNPU_ERROR_DEVICE_LOST = 500,
	VNPU_ERROR_DRIVER = 501,
	VNPU_ERROR_DRIVER_VERSION = 502,
};

/** vnpu_status_name() - the enum name of @status, e.g. "VNPU_ERROR_NO_DEVICE". */
const char *vnpu_status_name(int status);

/** vnpu_status_string() - what @status means and what to do about it. */
const char *vnpu_status_string(int status);

/**
 * vnpu_init() - start the runtime and find the vnpu devices
 * @flags: reserved, must be 0
 *
 * Counted: every successful vnpu_init() needs one vnpu_finalize(). The first
 * call opens every /dev/accel/accelN whose DRM driver is "vnpu".
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for unknown @flags;
 * VNPU_ERROR_NO_DEVICE when no vnpu device is present;
 * VNPU_ERROR_PERMISSION_DENIED when a vnpu node exists but cannot be opened;
 * VNPU_ERROR_DRIVER_VERSION when the driver's uAPI major differs.
 */
int vnpu_init(unsigned int flags);

/**
 * vnpu_finalize() - drop one vnpu_init() reference
 *
 * The last reference closes the devices. Calls made afterwards return
 * VNPU_ERROR_DEINITIALIZED until vnpu_init() is called again.
 *
 * Return: VNPU_SUCCESS, or VNPU_ERROR_UNINITIALIZED without a matching init.
 */
int vnpu_finalize(void);

/**
 * vnpu_device_count() - number of vnpu devices found at init
 * @count: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE for a NULL @count, or the
 * init state errors.
 */
int vnpu_device_count(uint32_t *count);

/** enum vnpu_health - device health, as the driver reports it */
enum vnpu_health {
	VNPU_HEALTH_OK = 0,
	VNPU_HEALTH_DEGRADED = 1,
	VNPU_HEALTH_NEEDS_RESET = 2,
};

/**
 * struct vnpu_device_properties - facts about one device, read from the driver
 * @name: "vnpuN", N being @physical_index
 * @physical_index: index of the device inside the driver
 * @accel_minor: N of /dev/accel/accelN
 * @uapi_major: major version of the driver's uAPI
 * @uapi_minor: minor version of the driver's uAPI
 * @vram_total: device memory in bytes
 * @compute_engines: number of compute engines
 * @copy_engines: number of copy engines
 * @numa_node: host NUMA node, -1 for none
 * @health: current health
 */
struct vnpu_device_properties {
	char name[32];
	uint32_t physical_index;
	uint32_t accel_minor;
	uint32_t uapi_major;
	uint32_t uapi_minor;
	uint64_t vram_total;
	uint32_t compute_engines;
	uint32_t copy_engines;
	int32_t numa_node;
	enum vnpu_health health;
};

/**
 * vnpu_device_get_properties() - read a device's facts from the driver
 * @index: 0..count-1; devices are ordered by physical index
 * @props: out
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for a bad @index or NULL
 * @props; VNPU_ERROR_DEVICE_LOST if the device was unplugged;
 * VNPU_ERROR_DRIVER if the driver refused the query.
 */
int vnpu_device_get_properties(uint32_t index, struct vnpu_device_properties *props);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_H */
