// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * VNPU_LOG=error|warn|info|debug: what the runtime says on stderr, each line
 * with the wall-clock time.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime.h"

static const char *const level_names[] = { "", "error", "warn", "info", "debug" };

static enum vnpu_log_level configured_level(void)
{
	const char *env = getenv("VNPU_LOG");

	if (!env)
		return VNPU_LOG_ERROR;
	for (int l = VNPU_LOG_ERROR; l <= VNPU_LOG_DEBUG; l++)
		if (!strcmp(env, level_names[l]))
			return (enum vnpu_log_level)l;
	return VNPU_LOG_ERROR;
}

void vnpu_log(enum vnpu_log_level level, const char *fmt, ...)
{
	char line[512], when[16];
	struct timespec ts;
	struct tm tm;
	va_list ap;

	if (level > configured_level())
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* Wall-clock time to the ms, as vnpu-smi --watch prints it, to line them up. */
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	/* One write per line so lines of concurrent threads do not interleave. */
	fprintf(stderr, "vnpu: %s.%03ld %s: %s\n", when, ts.tv_nsec / 1000000, level_names[level],
		line);
}

void vnpu_log_site(void *caller, const char *fmt, ...)
{
	char what[256], where[160];
	va_list ap;

	if (configured_level() < VNPU_LOG_DEBUG)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!caller) {
		vnpu_log(VNPU_LOG_DEBUG, "%s", what);
		return;
	}
	vnpu_describe_caller(caller, where, sizeof(where));
	vnpu_log(VNPU_LOG_DEBUG, "%s, called from %s", what, where);
}

void vnpu_describe_caller(void *addr, char *buf, size_t len)
{
	Dl_info info;

	if (!addr) {
		snprintf(buf, len, "the runtime");
		return;
	}
	if (dladdr(addr, &info) && info.dli_sname)
		snprintf(buf, len, "%s+0x%lx (%s)", info.dli_sname,
			 (unsigned long)((char *)addr - (char *)info.dli_saddr),
			 info.dli_fname ? info.dli_fname : "?");
	else if (dladdr(addr, &info) && info.dli_fname)
		snprintf(buf, len, "%p (%s+0x%lx)", addr, info.dli_fname,
			 (unsigned long)((char *)addr - (char *)info.dli_fbase));
	else
		snprintf(buf, len, "%p", addr);
}
