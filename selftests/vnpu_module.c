// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: the module's devices match its parameters, and the module
 * cannot be unloaded while a client holds a device open.
 */
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "vnpu_utils.h"

static unsigned long module_param_ul(const char *name)
{
	char buf[64];

	if (vnpu_module_param(name, buf, sizeof(buf)))
		return 0;
	return strtoul(buf, NULL, 0);
}

TEST(devices_match_module_params)
{
	unsigned long num_devices = module_param_ul("num_devices");
	unsigned int count = vnpu_count_devices();
	unsigned int seen = 0;

	if (!count)
		SKIP(return, "vnpu is not loaded");
	ASSERT_EQ(num_devices, count);

	for (unsigned int i = 0; i < count; i++) {
		int fd = vnpu_open_nth(i);
		uint64_t value = 0;

		ASSERT_GE(fd, 0);
		vnpu_get_param(fd, DRM_VNPU_PARAM_DEVICE_INDEX, &value);
		ASSERT_LT(value, count);
		/* Indices are unique: each device sets its own bit once. */
		EXPECT_EQ(0, seen & (1u << value));
		seen |= 1u << value;
		vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_SIZE, &value);
		EXPECT_EQ(module_param_ul("vram_size_mb") << 20, value);
		vnpu_get_param(fd, DRM_VNPU_PARAM_NUM_COMPUTE_ENGINES, &value);
		EXPECT_EQ(module_param_ul("compute_engines"), value);
		vnpu_get_param(fd, DRM_VNPU_PARAM_NUM_COPY_ENGINES, &value);
		EXPECT_EQ(module_param_ul("copy_engines"), value);
		close(fd);
	}
	EXPECT_EQ((1u << count) - 1, seen);
}

TEST(numa_nodes_match_module_param)
{
	char list[256], *tok, *save = NULL;
	long nodes[16];
	unsigned int n = 0, count = vnpu_count_devices();

	if (!count)
		SKIP(return, "vnpu is not loaded");
	ASSERT_EQ(0, vnpu_module_param("numa_node", list, sizeof(list)));
	for (tok = strtok_r(list, ",", &save); tok && n < 16; tok = strtok_r(NULL, ",", &save))
		nodes[n++] = strtol(tok, NULL, 10);

	for (unsigned int i = 0; i < count; i++) {
		int fd = vnpu_open_nth(i);
		uint64_t index = 0, node = 0;
		long want;

		ASSERT_GE(fd, 0);
		vnpu_get_param(fd, DRM_VNPU_PARAM_DEVICE_INDEX, &index);
		vnpu_get_param(fd, DRM_VNPU_PARAM_NUMA_NODE, &node);
		want = index < n ? nodes[index] : -1;
		if (want < 0) {
			EXPECT_EQ(DRM_VNPU_NUMA_NODE_NONE, node);
		} else {
			EXPECT_EQ((uint64_t)want, node);
		}
		close(fd);
	}
}

TEST(unload_refused_while_open)
{
	int fd = vnpu_open_nth(0);
	uint64_t value = 0;

	if (fd < 0)
		SKIP(return, "vnpu is not loaded");
	if (geteuid())
		SKIP(close(fd); return, "unloading a module needs root");

	/* The open file holds a module reference: unloading must fail. */
	EXPECT_EQ(-1, syscall(SYS_delete_module, "vnpu", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	/* And the device keeps working. */
	vnpu_get_param(fd, DRM_VNPU_PARAM_HEALTH, &value);
	EXPECT_EQ(DRM_VNPU_HEALTH_OK, value);
	close(fd);
}

TEST_HARNESS_MAIN
