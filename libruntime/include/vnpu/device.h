/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The runtime's start and end, and devices: count, properties, health,
 * synchronize, reset.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_DEVICE_H
#define VNPU_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * vnpu_init() - start the runtime and find the vnpu devices
 * @flags: reserved, must be 0
 *
 * Counted: every successful vnpu_init() needs one vnpu_finalize(). The first
 * call opens every /dev/accel/accelN whose DRM driver is "vnpu".
 *
 * The environment variable VNPU_VISIBLE_DEVICES, when set, lists the
 * physical device indices the process sees, comma separated, in the order
 * that gives their logical indices ("1,0" makes physical device 1 logical
 * device 0). An entry that is not a number, names no device, or repeats
 * makes vnpu_init() fail with VNPU_ERROR_INVALID_CONFIG; an empty value
 * hides every device.
 *
 * With VNPU_POOL_SOCKET set (the socket of vnpu-poold), the devices come
 * from the device pool: the process sees only the devices of its leases
 * (vnpu_lease_acquire(), or a lease its parent took and passed on with
 * vnpu-pool lease -- COMMAND), in lease order. Without a lease, and with
 * VNPU_POOL_REQUEST set to a lease request ("count=2,mem=64M,mode=shared,
 * placement=spread"; see Documentation/pool.rst), vnpu_init() takes a lease
 * itself and the last vnpu_finalize() releases it. VNPU_VISIBLE_DEVICES
 * then selects and orders among the leased devices only.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE for unknown @flags;
 * VNPU_ERROR_INVALID_CONFIG for a bad VNPU_VISIBLE_DEVICES;
 * VNPU_ERROR_NO_DEVICE when no vnpu device is present (or visible);
 * VNPU_ERROR_PERMISSION_DENIED when a vnpu node exists but cannot be opened;
 * VNPU_ERROR_DRIVER_VERSION when the driver's uAPI major differs;
 * VNPU_ERROR_POOL_UNAVAILABLE when VNPU_POOL_SOCKET names no running pool;
 * VNPU_ERROR_LEASE_REFUSED when the pool refused VNPU_POOL_REQUEST;
 * VNPU_ERROR_NO_DEVICE also when the process holds no lease and asked for
 * none.
 */
int vnpu_init(unsigned int flags);

/**
 * vnpu_finalize() - drop one vnpu_init() reference
 *
 * The last reference closes the devices. If VNPU_LEAK_REPORT=1 is set, it
 * first prints the leak report (see vnpu_leak_report()) to stderr. Objects
 * still alive are destroyed (contexts close, their memory is released once
 * the device no longer uses it). Calls made afterwards return
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
 * @logical_index: index the application uses (see VNPU_VISIBLE_DEVICES)
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
	uint32_t logical_index;
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

/**
 * vnpu_device_synchronize() - wait for the work of every context on a device
 * @device: logical device index
 * @timeout_ns: longest wait per stream in ns; VNPU_TIMEOUT_INFINITE
 *
 * Return: as vnpu_ctx_synchronize_all(), VNPU_ERROR_INVALID_VALUE for a bad
 * @device.
 */
int vnpu_device_synchronize(uint32_t device, int64_t timeout_ns);

/**
 * vnpu_device_reset() - reset a device (needs root)
 * @device: logical device index
 *
 * The driver fails the device's running and queued work (their streams get
 * a sticky VNPU_ERROR_DEVICE_FAULT) and returns its health to OK; queues of
 * work that timed out stay refused. Use it when vnpu_device_get_health()
 * says VNPU_HEALTH_NEEDS_RESET.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_PERMISSION_DENIED without root;
 * VNPU_ERROR_INVALID_VALUE for a bad @device; VNPU_ERROR_DEVICE_LOST.
 */
int vnpu_device_reset(uint32_t device);

/**
 * vnpu_device_get_health() - the device's health as the driver reports it now
 * @device: logical device index
 * @health: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_DEVICE_LOST.
 */
int vnpu_device_get_health(uint32_t device, enum vnpu_health *health);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_DEVICE_H */
