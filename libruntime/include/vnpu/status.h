/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Status codes, their names and meanings, and the last error of a thread.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_STATUS_H
#define VNPU_STATUS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

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
	VNPU_ERROR_INVALID_HANDLE = 103,
	VNPU_ERROR_INVALID_CONFIG = 104,
	VNPU_ERROR_WRONG_CONTEXT = 105,
	VNPU_ERROR_NOT_PERMITTED = 106,
	VNPU_ERROR_PEER_ACCESS_ALREADY_ENABLED = 107,
	VNPU_ERROR_PEER_ACCESS_NOT_ENABLED = 108,
	VNPU_ERROR_INVALID_MODEL = 109,
	VNPU_ERROR_NOT_SUPPORTED = 110,
	VNPU_ERROR_NO_DEVICE = 200,
	VNPU_ERROR_OUT_OF_HOST_MEMORY = 201,
	VNPU_ERROR_PERMISSION_DENIED = 202,
	VNPU_ERROR_OUT_OF_DEVICE_MEMORY = 203,
	VNPU_ERROR_QUOTA_EXCEEDED = 204,
	VNPU_ERROR_DOES_NOT_FIT = 205,
	VNPU_ERROR_TOO_MANY_STREAMS = 206,
	VNPU_ERROR_POOL_UNAVAILABLE = 210,
	VNPU_ERROR_LEASE_REFUSED = 211,
	VNPU_NOT_READY = 300,
	VNPU_ERROR_TIMEOUT = 301,
	VNPU_ERROR_DEVICE_LOST = 500,
	VNPU_ERROR_DRIVER = 501,
	VNPU_ERROR_DRIVER_VERSION = 502,
	VNPU_ERROR_DEVICE_FAULT = 503,
	VNPU_ERROR_JOB_TIMEOUT = 504,
};

/* Kept for symmetry with the other 3xx codes: VNPU_NOT_READY is not an error. */
#define VNPU_ERROR_NOT_READY VNPU_NOT_READY

/** vnpu_status_name() - the enum name of @status, e.g. "VNPU_ERROR_NO_DEVICE". */
const char *vnpu_status_name(int status);

/** vnpu_status_string() - what @status means and what to do about it. */
const char *vnpu_status_string(int status);

/**
 * vnpu_get_last_error() - last error of the calling thread, then reset it
 *
 * Every call that fails records its status per thread. This returns the
 * most recent one and resets it to VNPU_SUCCESS.
 *
 * Return: the last error status, or VNPU_SUCCESS if none since the reset.
 */
int vnpu_get_last_error(void);

/** vnpu_peek_last_error() - like vnpu_get_last_error() without the reset. */
int vnpu_peek_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_STATUS_H */
