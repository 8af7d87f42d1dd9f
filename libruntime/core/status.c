// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Status names and plain-words explanations.
 */
#include <errno.h>
#include <stddef.h>

#include "runtime.h"

struct status_text {
	int status;
	const char *name;
	const char *text;
};

static const struct status_text status_texts[] = {
	{ VNPU_SUCCESS, "VNPU_SUCCESS", "success" },
	{ VNPU_ERROR_INVALID_VALUE, "VNPU_ERROR_INVALID_VALUE",
	  "an argument is out of range, NULL or has unknown flags; fix the call" },
	{ VNPU_ERROR_UNINITIALIZED, "VNPU_ERROR_UNINITIALIZED",
	  "the runtime was never initialized; call vnpu_init() first" },
	{ VNPU_ERROR_DEINITIALIZED, "VNPU_ERROR_DEINITIALIZED",
	  "the runtime was finalized; call vnpu_init() again before using it" },
	{ VNPU_ERROR_INVALID_HANDLE, "VNPU_ERROR_INVALID_HANDLE",
	  "the handle names no live object of that kind: it was destroyed, never created, or is of another type" },
	{ VNPU_ERROR_INVALID_CONFIG, "VNPU_ERROR_INVALID_CONFIG",
	  "an environment setting is malformed (VNPU_VISIBLE_DEVICES lists a device that does not exist, twice, or not a number); fix it" },
	{ VNPU_ERROR_WRONG_CONTEXT, "VNPU_ERROR_WRONG_CONTEXT",
	  "the object or memory belongs to another context or device than the one given; pass matching objects" },
	{ VNPU_ERROR_NOT_PERMITTED, "VNPU_ERROR_NOT_PERMITTED",
	  "the call is not allowed here: a blocking call from inside a host callback would deadlock; synchronize outside the callback" },
	{ VNPU_ERROR_PEER_ACCESS_ALREADY_ENABLED, "VNPU_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	  "peer access from this context to that one is already enabled; enable it once" },
	{ VNPU_ERROR_PEER_ACCESS_NOT_ENABLED, "VNPU_ERROR_PEER_ACCESS_NOT_ENABLED",
	  "the context has no peer access to the other device's context; call vnpu_ctx_enable_peer_access() first" },
	{ VNPU_ERROR_INVALID_MODEL, "VNPU_ERROR_INVALID_MODEL",
	  "the model file is malformed or inconsistent (truncated, a cycle, a missing tensor, shapes that do not fit); vnpu_graph_error_message() names the node; fix the model" },
	{ VNPU_ERROR_NOT_SUPPORTED, "VNPU_ERROR_NOT_SUPPORTED",
	  "the model is valid but uses an operator, attribute or type the device cannot run; vnpu_graph_error_message() names the node and operator" },
	{ VNPU_ERROR_NO_DEVICE, "VNPU_ERROR_NO_DEVICE",
	  "no vnpu device found; load the module (modprobe vnpu) and check /dev/accel" },
	{ VNPU_ERROR_OUT_OF_HOST_MEMORY, "VNPU_ERROR_OUT_OF_HOST_MEMORY",
	  "the host ran out of memory; free memory or lower the load" },
	{ VNPU_ERROR_PERMISSION_DENIED, "VNPU_ERROR_PERMISSION_DENIED",
	  "a vnpu device exists but cannot be opened; join the render group or run make install for the udev rule" },
	{ VNPU_ERROR_OUT_OF_DEVICE_MEMORY, "VNPU_ERROR_OUT_OF_DEVICE_MEMORY",
	  "the device has no free range large enough (full or fragmented); free device memory or allocate less" },
	{ VNPU_ERROR_QUOTA_EXCEEDED, "VNPU_ERROR_QUOTA_EXCEEDED",
	  "this process would exceed its device-memory quota; free memory or raise the soft limit (up to the hard limit)" },
	{ VNPU_ERROR_DOES_NOT_FIT, "VNPU_ERROR_DOES_NOT_FIT",
	  "the buffers do not fit in the given capacity: it is below the lower bound or no plan within it was found; raise the capacity or the time limit" },
	{ VNPU_ERROR_TOO_MANY_STREAMS, "VNPU_ERROR_TOO_MANY_STREAMS",
	  "this process reached the driver's queue limit (GET_PARAM MAX_QUEUES_PER_PROCESS); destroy streams or raise max_queues_per_process" },
	{ VNPU_ERROR_POOL_UNAVAILABLE, "VNPU_ERROR_POOL_UNAVAILABLE",
	  "the device pool (vnpu-poold) does not answer at VNPU_POOL_SOCKET; start it (systemctl start vnpu-poold) or fix the path" },
	{ VNPU_ERROR_LEASE_REFUSED, "VNPU_ERROR_LEASE_REFUSED",
	  "the device pool refused the lease: too few free devices, more memory than a device has, or over your per-user limit; ask for less or wait (vnpu-pool status)" },
	{ VNPU_NOT_READY, "VNPU_NOT_READY",
	  "not an error: the work is still running; query again or synchronize" },
	{ VNPU_ERROR_TIMEOUT, "VNPU_ERROR_TIMEOUT",
	  "the wait ended before the work was done; the work goes on, wait again or longer" },
	{ VNPU_ERROR_DEVICE_LOST, "VNPU_ERROR_DEVICE_LOST",
	  "the device was unplugged or removed; restart the runtime once it is back" },
	{ VNPU_ERROR_DRIVER, "VNPU_ERROR_DRIVER",
	  "the driver refused a request the runtime expected to work; check the kernel log" },
	{ VNPU_ERROR_DEVICE_FAULT, "VNPU_ERROR_DEVICE_FAULT",
	  "work on the device failed; vnpu_stream_get_error() names the operation; destroy the stream and check its inputs" },
	{ VNPU_ERROR_JOB_TIMEOUT, "VNPU_ERROR_JOB_TIMEOUT",
	  "work ran longer than the driver's job timeout (job_timeout_ms) and was stopped; split it or raise the timeout" },
	{ VNPU_ERROR_DRIVER_VERSION, "VNPU_ERROR_DRIVER_VERSION",
	  "the loaded driver speaks a different uAPI major version; install matching runtime and module" },
};

static const struct status_text *find(int status)
{
	for (size_t i = 0; i < sizeof(status_texts) / sizeof(status_texts[0]); i++)
		if (status_texts[i].status == status)
			return &status_texts[i];
	return NULL;
}

const char *vnpu_status_name(int status)
{
	const struct status_text *t = find(status);

	return t ? t->name : "VNPU_ERROR_UNKNOWN";
}

const char *vnpu_status_string(int status)
{
	const struct status_text *t = find(status);

	return t ? t->text : "unknown status code";
}

/* Last error of each thread, for vnpu_get_last_error(). */
static _Thread_local int last_error;

int vnpu_set_status(int status)
{
	if (status != VNPU_SUCCESS)
		last_error = status;
	return status;
}

int vnpu_get_last_error(void)
{
	int status = last_error;

	last_error = VNPU_SUCCESS;
	return status;
}

int vnpu_peek_last_error(void)
{
	return last_error;
}

int vnpu_status_from_errno(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return VNPU_SUCCESS;
	case ENODEV:
		return VNPU_ERROR_DEVICE_LOST;
	case ENOSPC:
		return VNPU_ERROR_OUT_OF_DEVICE_MEMORY;
	case EDQUOT:
		return VNPU_ERROR_QUOTA_EXCEEDED;
	case ENOMEM:
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	case ECANCELED:
		/* The driver refuses work on a queue whose job timed out. */
		return VNPU_ERROR_JOB_TIMEOUT;
	case EIO:
		/* The device needs a reset, or a reset failed the work. */
		return VNPU_ERROR_DEVICE_FAULT;
	case EACCES:
	case EPERM:
		return VNPU_ERROR_PERMISSION_DENIED;
	default:
		return VNPU_ERROR_DRIVER;
	}
}

int vnpu_status_from_query_errno(int err)
{
	err = err < 0 ? -err : err;
	return err == ENOTTY || err == EINVAL ? VNPU_ERROR_DRIVER_VERSION : vnpu_status_from_errno(err);
}
