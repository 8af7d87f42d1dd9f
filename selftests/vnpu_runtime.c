// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: libvnpurt runtime, devices, contexts and memory against the
 * real driver: init/finalize counting, visible devices, handle checks,
 * allocation, quotas, leak report and bad input of every call.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "vnpu.h"
#include "vnpu_utils.h"

#define NO_CTX ((struct vnpu_context){ 0 })

static int have_device(void)
{
	return vnpu_count_devices() > 0;
}

/* VRAM in use on the first visible device, read from the driver. */
static uint64_t vram_used(unsigned int nth)
{
	uint64_t used = 0;
	int fd = vnpu_open_nth(nth);

	if (fd >= 0) {
		_vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_USED, 0, &used);
		close(fd);
	}
	return used;
}

TEST(calls_before_init_fail_cleanly)
{
	struct vnpu_device_properties props;
	struct vnpu_context ctx;
	uint32_t count;

	EXPECT_EQ(VNPU_ERROR_UNINITIALIZED, vnpu_device_count(&count));
	EXPECT_EQ(VNPU_ERROR_UNINITIALIZED, vnpu_device_get_properties(0, &props));
	EXPECT_EQ(VNPU_ERROR_UNINITIALIZED, vnpu_ctx_create(0, 0, &ctx));
	EXPECT_EQ(VNPU_ERROR_UNINITIALIZED, vnpu_finalize());
	EXPECT_EQ(VNPU_ERROR_UNINITIALIZED, vnpu_get_last_error());
	EXPECT_EQ(VNPU_SUCCESS, vnpu_get_last_error());
}

TEST(init_is_counted_and_finalize_is_safe)
{
	uint32_t count;

	if (!have_device())
		SKIP(return, "no vnpu device");
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_init(1));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_finalize());
	/* Still initialized once. */
	EXPECT_EQ(VNPU_SUCCESS, vnpu_device_count(&count));
	EXPECT_EQ(vnpu_count_devices(), count);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_finalize());
	EXPECT_EQ(VNPU_ERROR_DEINITIALIZED, vnpu_device_count(&count));
	EXPECT_EQ(VNPU_ERROR_DEINITIALIZED, vnpu_finalize());
	/* And it comes back. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_device_count(&count));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_finalize());
}

TEST(properties_come_from_the_driver)
{
	struct vnpu_device_properties props;
	uint32_t count;

	if (!have_device())
		SKIP(return, "no vnpu device");
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_count(&count));
	for (uint32_t i = 0; i < count; i++) {
		int fd = vnpu_open_nth(i);
		uint64_t vram = 0, index = 0;

		ASSERT_GE(fd, 0);
		_vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_SIZE, 0, &vram);
		_vnpu_get_param(fd, DRM_VNPU_PARAM_DEVICE_INDEX, 0, &index);
		close(fd);
		ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_properties(i, &props));
		EXPECT_EQ(i, props.logical_index);
		EXPECT_EQ(index, props.physical_index);
		EXPECT_EQ(vram, props.vram_total);
		EXPECT_EQ(DRM_VNPU_UAPI_MAJOR, props.uapi_major);
		EXPECT_EQ(VNPU_HEALTH_OK, props.health);
	}
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_get_properties(count, &props));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_get_properties(0, NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_device_count(NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_get_last_error());
	vnpu_finalize();
}

TEST(visible_devices_reorder)
{
	struct vnpu_device_properties props;
	uint32_t count;

	if (vnpu_count_devices() < 2)
		SKIP(return, "needs two vnpu devices");
	setenv("VNPU_VISIBLE_DEVICES", "1,0", 1);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_count(&count));
	EXPECT_EQ(2, count);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_properties(0, &props));
	EXPECT_EQ(1, props.physical_index);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_properties(1, &props));
	EXPECT_EQ(0, props.physical_index);
	vnpu_finalize();

	setenv("VNPU_VISIBLE_DEVICES", "1", 1);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_count(&count));
	EXPECT_EQ(1, count);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_device_get_properties(0, &props));
	EXPECT_EQ(1, props.physical_index);
	vnpu_finalize();
}

TEST(visible_devices_is_strict)
{
	static const char *const bad[] = { "x", "99", "0,0", "0,", ",0", "0;1", "-1", "0 " };
	uint32_t count;

	if (!have_device())
		SKIP(return, "no vnpu device");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("VNPU_VISIBLE_DEVICES", bad[i], 1);
		EXPECT_EQ(VNPU_ERROR_INVALID_CONFIG, vnpu_init(0)) {
			TH_LOG("VNPU_VISIBLE_DEVICES=\"%s\"", bad[i]);
		}
		/* A failed init leaves the runtime uninitialized. */
		EXPECT_EQ(VNPU_ERROR_UNINITIALIZED, vnpu_device_count(&count));
	}
	setenv("VNPU_VISIBLE_DEVICES", "", 1);
	EXPECT_EQ(VNPU_ERROR_NO_DEVICE, vnpu_init(0));
	unsetenv("VNPU_VISIBLE_DEVICES");
}

FIXTURE(rt) {
	struct vnpu_context ctx;
	uint64_t baseline;
};

FIXTURE_SETUP(rt)
{
	if (!have_device())
		SKIP(return, "no vnpu device");
	self->baseline = vram_used(0);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &self->ctx));
}

FIXTURE_TEARDOWN(rt)
{
	if (!have_device())
		return;
	vnpu_ctx_destroy(self->ctx, 0);
	vnpu_finalize();
	/* Whatever the test did, the device is back where it was. */
	EXPECT_EQ(self->baseline, vram_used(0));
}

TEST_F(rt, context_handles_are_checked)
{
	struct vnpu_context other, stale, wrong = { self->ctx.handle ^ (1ULL << 56) };
	uint32_t device = 99;

	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_ctx_create(0, 0, NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_ctx_create(0, 1, &other));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_ctx_create(1000, 0, &other));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &stale));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(stale, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_ctx_destroy(stale, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_ctx_get_device(stale, &device));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_ctx_destroy(NO_CTX, 0));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_ctx_get_device(wrong, &device));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_ctx_destroy(self->ctx, 0x80));
	/* A new context never reuses the stale handle. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &other));
	EXPECT_NE(stale.handle, other.handle);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_get_device(other, &device));
	EXPECT_EQ(0, device);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(other, 0));
}

TEST_F(rt, current_context_is_per_thread_and_goes_stale)
{
	struct vnpu_context cur, other;

	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_get_current(&cur));
	EXPECT_EQ(0, cur.handle);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &other));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_set_current(other));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_get_current(&cur));
	EXPECT_EQ(other.handle, cur.handle);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(other, 0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_get_current(&cur));
	EXPECT_EQ(0, cur.handle);
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_ctx_set_current(other));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_ctx_get_current(NULL));
}

TEST_F(rt, device_memory_is_allocated_and_freed)
{
	uint64_t a = 0, b = 0;
	struct vnpu_mem_info info;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, 1 << 20, 0, &a));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, 5000, 0, &b));
	EXPECT_GE(a, DRM_VNPU_VRAM_BASE);
	EXPECT_GE(b, DRM_VNPU_VRAM_BASE);
	EXPECT_NE(a, b);
	EXPECT_EQ(self->baseline + (1 << 20) + 8192, vram_used(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_mem_get_info(self->ctx, &info));
	EXPECT_EQ((1 << 20) + 8192, info.process_used);
	EXPECT_EQ(info.total - vram_used(0), info.free);
	EXPECT_LE(info.largest_free, info.free);

	/* Only the exact start of an allocation of this context frees it. */
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free(self->ctx, a + 4096));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free(self->ctx, 0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_free(self->ctx, a));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free(self->ctx, a));
	EXPECT_EQ(self->baseline + 8192, vram_used(0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_free(self->ctx, b));
	EXPECT_EQ(self->baseline, vram_used(0));
}

TEST_F(rt, memory_bad_input)
{
	uint64_t p = 0;
	void *h = NULL;
	struct vnpu_context other;

	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_malloc(self->ctx, 0, 0, &p));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_malloc(self->ctx, 4096, 1, &p));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_malloc(self->ctx, 4096, 0, NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_malloc(self->ctx, ~0ULL, 0, &p));
	EXPECT_EQ(VNPU_ERROR_INVALID_HANDLE, vnpu_malloc(NO_CTX, 4096, 0, &p));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_malloc_host(self->ctx, 0, 0, &h));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_malloc_host(self->ctx, 4096, 0, NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free_host(self->ctx, NULL));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free_host(self->ctx, &p));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_mem_get_info(self->ctx, NULL));
	EXPECT_EQ(self->baseline, vram_used(0));

	/* Memory of one context cannot be freed through another. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, 4096, 0, &p));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &other));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free(other, p));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_ctx_destroy(other, 0));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_free(self->ctx, p));
}

TEST_F(rt, host_memory_is_usable)
{
	unsigned char *h = NULL;
	struct vnpu_mem_info before, after;

	ASSERT_EQ(VNPU_SUCCESS, vnpu_mem_get_info(self->ctx, &before));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_host(self->ctx, 3 * 4096 + 1, 0, (void **)&h));
	ASSERT_NE(NULL, h);
	memset(h, 0xa5, 4 * 4096);
	EXPECT_EQ(0xa5, h[4 * 4096 - 1]);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_mem_get_info(self->ctx, &after));
	/* Host-pinned memory does not count against device memory. */
	EXPECT_EQ(before.process_used, after.process_used);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_free_host(self->ctx, h));
	EXPECT_EQ(VNPU_ERROR_INVALID_VALUE, vnpu_free_host(self->ctx, h));
}

TEST_F(rt, quota_and_exhaustion_are_told_apart)
{
	struct vnpu_mem_info info;
	uint64_t p[4] = { 0 };

	ASSERT_EQ(VNPU_SUCCESS, vnpu_mem_get_info(self->ctx, &info));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_mem_set_soft_limit(self->ctx, 3 << 20));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, 2 << 20, 0, &p[0]));
	EXPECT_EQ(VNPU_ERROR_QUOTA_EXCEEDED, vnpu_malloc(self->ctx, 2 << 20, 0, &p[1]));
	EXPECT_EQ(VNPU_ERROR_QUOTA_EXCEEDED, vnpu_get_last_error());
	ASSERT_EQ(VNPU_SUCCESS, vnpu_mem_set_soft_limit(self->ctx, UINT64_MAX));
	/* Larger than what is free, smaller than the device: out of memory. */
	ASSERT_EQ(VNPU_SUCCESS, vnpu_mem_get_info(self->ctx, &info));
	EXPECT_EQ(VNPU_ERROR_OUT_OF_DEVICE_MEMORY,
		  vnpu_malloc(self->ctx, info.total - (1 << 20), 0, &p[1]));
	EXPECT_EQ(VNPU_SUCCESS, vnpu_free(self->ctx, p[0]));
}

TEST_F(rt, leak_report_lists_live_objects)
{
	unsigned int count = 0;
	uint64_t p;
	void *h;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(self->ctx, 4096, 0, &p));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc_host(self->ctx, 4096, 0, &h));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_leak_report(out, &count));
	fclose(out);
	/* The context and its two allocations. */
	EXPECT_EQ(3, count);
	EXPECT_NE(NULL, strstr(text, "context 0x"));
	EXPECT_NE(NULL, strstr(text, "device allocation"));
	EXPECT_NE(NULL, strstr(text, "host-pinned allocation"));
	free(text);
	EXPECT_EQ(VNPU_SUCCESS, vnpu_leak_report(NULL, NULL));
}

TEST(finalize_releases_everything)
{
	struct vnpu_context ctx;
	uint64_t p, baseline;

	if (!have_device())
		SKIP(return, "no vnpu device");
	baseline = vram_used(0);
	ASSERT_EQ(VNPU_SUCCESS, vnpu_init(0));
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(VNPU_SUCCESS, vnpu_ctx_create(0, 0, &ctx));
		ASSERT_EQ(VNPU_SUCCESS, vnpu_malloc(ctx, 1 << 20, 0, &p));
	}
	EXPECT_EQ(baseline + (4 << 20), vram_used(0));
	ASSERT_EQ(VNPU_SUCCESS, vnpu_finalize());
	EXPECT_EQ(baseline, vram_used(0));
	EXPECT_EQ(VNPU_ERROR_DEINITIALIZED, vnpu_ctx_destroy(ctx, 0));
	EXPECT_EQ(VNPU_ERROR_DEINITIALIZED, vnpu_malloc(ctx, 4096, 0, &p));
}

TEST(status_names_are_stable)
{
	static const struct { int status; const char *name; } known[] = {
		{ VNPU_SUCCESS, "VNPU_SUCCESS" },
		{ VNPU_ERROR_INVALID_VALUE, "VNPU_ERROR_INVALID_VALUE" },
		{ VNPU_ERROR_INVALID_HANDLE, "VNPU_ERROR_INVALID_HANDLE" },
		{ VNPU_ERROR_INVALID_CONFIG, "VNPU_ERROR_INVALID_CONFIG" },
		{ VNPU_ERROR_OUT_OF_DEVICE_MEMORY, "VNPU_ERROR_OUT_OF_DEVICE_MEMORY" },
		{ VNPU_ERROR_QUOTA_EXCEEDED, "VNPU_ERROR_QUOTA_EXCEEDED" },
		{ VNPU_ERROR_DEVICE_LOST, "VNPU_ERROR_DEVICE_LOST" },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		EXPECT_STREQ(known[i].name, vnpu_status_name(known[i].status));
		EXPECT_NE(0, strlen(vnpu_status_string(known[i].status)));
	}
	EXPECT_STREQ("VNPU_ERROR_UNKNOWN", vnpu_status_name(12345));
	EXPECT_EQ(203, VNPU_ERROR_OUT_OF_DEVICE_MEMORY);
	EXPECT_EQ(204, VNPU_ERROR_QUOTA_EXCEEDED);
}

TEST_HARNESS_MAIN
