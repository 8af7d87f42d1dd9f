/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Events: points in a stream to query, wait for and time.
 * Part of the public API of libvnpurt: applications include <vnpu.h>,
 * which includes every header of vnpu/; each one also compiles on its own.
 */
#ifndef VNPU_EVENT_H
#define VNPU_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct vnpu_event - an event handle
 * @handle: opaque; 0 is never a valid event
 *
 * An event marks a point in a stream: recording it captures all work
 * submitted to the stream so far; it completes when that work is done.
 */
struct vnpu_event {
	uint64_t handle;
};

/**
 * vnpu_event_create() - create an event
 * @ctx: the context
 * @flags: 0 or VNPU_EVENT_TIMING
 * @event: out
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_VALUE, VNPU_ERROR_INVALID_HANDLE,
 * VNPU_ERROR_OUT_OF_HOST_MEMORY.
 */
int vnpu_event_create(struct vnpu_context ctx, uint32_t flags, struct vnpu_event *event);

/**
 * vnpu_event_record() - capture a stream's work so far in an event
 * @event: the event; recording again replaces the captured point
 * @stream: a stream of the event's context
 *
 * A timing event submits a timestamp command to the stream.
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_WRONG_CONTEXT when the stream belongs to
 * another context; the stream's sticky error; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_event_record(struct vnpu_event event, struct vnpu_stream stream);

/**
 * vnpu_event_query() - whether the captured work is done
 * @event: the event
 *
 * Return: VNPU_SUCCESS when done or never recorded, VNPU_NOT_READY when not,
 * the failed work's error, VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_event_query(struct vnpu_event event);

/**
 * vnpu_event_synchronize() - wait for the captured work
 * @event: the event
 * @timeout_ns: longest wait in ns; 0 polls; VNPU_TIMEOUT_INFINITE
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_TIMEOUT; the failed work's error;
 * VNPU_ERROR_NOT_PERMITTED from inside a host callback;
 * VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_event_synchronize(struct vnpu_event event, int64_t timeout_ns);

/**
 * vnpu_event_elapsed_ns() - device time between two completed timing events
 * @start: a recorded, completed VNPU_EVENT_TIMING event
 * @end: another one, of the same device
 * @ns: out, end minus start in nanoseconds (device clock)
 *
 * Return: VNPU_SUCCESS; VNPU_ERROR_INVALID_VALUE when an event is not a
 * timing event, was never recorded, or the two are on different devices;
 * VNPU_NOT_READY when one has not completed; VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_event_elapsed_ns(struct vnpu_event start, struct vnpu_event end, int64_t *ns);

/**
 * vnpu_stream_wait_event() - make a stream's later work wait for an event
 * @stream: the stream; its next submitted work waits
 * @event: an event of any context or device; waiting for an event never
 *	recorded is a no-op
 *
 * Return: VNPU_SUCCESS, VNPU_ERROR_INVALID_HANDLE, VNPU_ERROR_INVALID_VALUE
 * when the stream already has the maximum of pending waits (64).
 */
int vnpu_stream_wait_event(struct vnpu_stream stream, struct vnpu_event event);

/**
 * vnpu_event_destroy() - destroy an event, even while its work is pending
 * @event: the event
 *
 * Return: VNPU_SUCCESS or VNPU_ERROR_INVALID_HANDLE.
 */
int vnpu_event_destroy(struct vnpu_event event);

#ifdef __cplusplus
}
#endif

#endif /* VNPU_EVENT_H */
