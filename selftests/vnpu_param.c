// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: device discovery, DRM_IOCTL_VNPU_GET_PARAM, the uAPI size
 * rules, sysfs facts and fdinfo of a vnpu device.
 */
#include "kselftest_harness.h"
#include "vnpu_utils.h"

FIXTURE(vnpu) {
	int fd;
};

FIXTURE_VARIANT(vnpu) {
	unsigned int nth;
};

FIXTURE_VARIANT_ADD(vnpu, first_device) {
	.nth = 0,
};

FIXTURE_VARIANT_ADD(vnpu, second_device) {
	.nth = 1,
};

FIXTURE_SETUP(vnpu)
{
	self->fd = vnpu_open_nth(variant->nth);
	if (self->fd < 0)
		SKIP(return, "no vnpu device number %u", variant->nth);
}

FIXTURE_TEARDOWN(vnpu)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(vnpu, version_names_the_driver)
{
	char name[64] = "", desc[128] = "", date[64] = "";
	struct drm_version v = {
		.name = name, .name_len = sizeof(name) - 1,
		.desc = desc, .desc_len = sizeof(desc) - 1,
		.date = date, .date_len = sizeof(date) - 1,
	};

	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VERSION, &v));
	EXPECT_STREQ("vnpu", name);
	EXPECT_EQ(DRM_VNPU_UAPI_MAJOR, v.version_major);
	EXPECT_EQ(DRM_VNPU_UAPI_MINOR, v.version_minor);
}

TEST_F(vnpu, node_is_an_accel_char_device)
{
	struct stat st;

	ASSERT_EQ(0, fstat(self->fd, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(VNPU_ACCEL_MAJOR, major(st.st_rdev));
}

TEST_F(vnpu, get_param_reads_every_param)
{
	uint64_t value = 0;

	for (uint32_t p = 0; p < DRM_VNPU_PARAM_COUNT; p++) {
		EXPECT_EQ(0, _vnpu_get_param(self->fd, p, 0, &value)) {
			TH_LOG("param %u", p);
		}
	}

	vnpu_get_param(self->fd, DRM_VNPU_PARAM_UAPI_VERSION, &value);
	EXPECT_EQ((DRM_VNPU_UAPI_MAJOR << 16) | DRM_VNPU_UAPI_MINOR, value);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_DEVICE_INDEX, &value);
	EXPECT_EQ(variant->nth, value);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_SIZE, &value);
	EXPECT_GE(value, 16ULL << 20);
	EXPECT_EQ(0, value & ((1 << 20) - 1));
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_NUM_COMPUTE_ENGINES, &value);
	EXPECT_GE(value, 1);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_NUM_COPY_ENGINES, &value);
	EXPECT_GE(value, 1);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_HEALTH, &value);
	EXPECT_EQ(DRM_VNPU_HEALTH_OK, value);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_CAPABILITIES, &value);
	EXPECT_EQ(0, value);
}

TEST_F(vnpu, sysfs_matches_get_param)
{
	static const struct {
		const char *attr;
		uint32_t param;
	} facts[] = {
		{ "index", DRM_VNPU_PARAM_DEVICE_INDEX },
		{ "vram_total_bytes", DRM_VNPU_PARAM_VRAM_SIZE },
		{ "compute_engines", DRM_VNPU_PARAM_NUM_COMPUTE_ENGINES },
		{ "copy_engines", DRM_VNPU_PARAM_NUM_COPY_ENGINES },
	};
	char buf[64], want[64];
	uint64_t value = 0;

	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		ASSERT_EQ(0, vnpu_sysfs_read(self->fd, facts[i].attr, buf, sizeof(buf)));
		vnpu_get_param(self->fd, facts[i].param, &value);
		snprintf(want, sizeof(want), "%llu", (unsigned long long)value);
		EXPECT_STREQ(want, buf) {
			TH_LOG("attribute %s", facts[i].attr);
		}
	}

	vnpu_get_param(self->fd, DRM_VNPU_PARAM_NUMA_NODE, &value);
	ASSERT_EQ(0, vnpu_sysfs_read(self->fd, "numa_node", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%d",
		 value == DRM_VNPU_NUMA_NODE_NONE ? -1 : (int)value);
	EXPECT_STREQ(want, buf);

	snprintf(want, sizeof(want), "%d.%d", DRM_VNPU_UAPI_MAJOR, DRM_VNPU_UAPI_MINOR);
	ASSERT_EQ(0, vnpu_sysfs_read(self->fd, "uapi_version", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, vnpu_sysfs_read(self->fd, "health", buf, sizeof(buf)));
	EXPECT_STREQ("ok", buf);
}

TEST_F(vnpu, get_param_rejects_unknown_param)
{
	static const uint32_t bad[] = { DRM_VNPU_PARAM_COUNT, 0x100, 0xffffffff };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct drm_vnpu_get_param args = { .param = bad[i], .value = 0x1234 };

		EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VNPU_GET_PARAM, &args));
		EXPECT_EQ(EINVAL, errno);
		/* A refused query leaves the caller's struct as it was. */
		EXPECT_EQ(0x1234, args.value);
	}
}

TEST_F(vnpu, get_param_rejects_nonzero_flags)
{
	for (int bit = 0; bit < 32; bit++)
		vnpu_err_get_param(EINVAL, self->fd, DRM_VNPU_PARAM_VRAM_SIZE, 1u << bit);
}

/* First driver ioctl number the uAPI does not define; bump with new ioctls. */
#define VNPU_FIRST_UNUSED_IOCTL (DRM_VNPU_TOPOLOGY + 1)

TEST_F(vnpu, unknown_ioctl_is_enotty)
{
	struct drm_vnpu_get_param args = { 0 };

	for (unsigned int nr = VNPU_FIRST_UNUSED_IOCTL; nr < 0x60; nr++) {
		unsigned long cmd = DRM_IOWR(DRM_COMMAND_BASE + nr, struct drm_vnpu_get_param);

		EXPECT_EQ(-1, ioctl(self->fd, cmd, &args));
		EXPECT_EQ(ENOTTY, errno) {
			TH_LOG("ioctl nr 0x%x", nr);
		}
	}
}

struct vnpu_get_param_short {
	__u32 param;
	__u32 flags;
};

struct vnpu_get_param_long {
	struct drm_vnpu_get_param base;
	__u64 future[3];
};

TEST_F(vnpu, short_struct_is_einval)
{
	struct vnpu_get_param_short args = { .param = DRM_VNPU_PARAM_VRAM_SIZE };
	unsigned long cmd = DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_GET_PARAM,
				     struct vnpu_get_param_short);

	EXPECT_EQ(-1, ioctl(self->fd, cmd, &args));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(vnpu, long_struct_with_zero_tail_is_accepted)
{
	struct vnpu_get_param_long args = { .base.param = DRM_VNPU_PARAM_VRAM_SIZE };
	unsigned long cmd = DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_GET_PARAM,
				     struct vnpu_get_param_long);
	uint64_t vram = 0;

	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_SIZE, &vram);
	ASSERT_EQ(0, ioctl(self->fd, cmd, &args));
	EXPECT_EQ(vram, args.base.value);
	EXPECT_EQ(0, args.future[0]);
}

TEST_F(vnpu, long_struct_with_nonzero_tail_is_e2big)
{
	for (int i = 0; i < 3; i++) {
		struct vnpu_get_param_long args = {
			.base.param = DRM_VNPU_PARAM_VRAM_SIZE,
			.base.value = 7,
		};
		unsigned long cmd = DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_GET_PARAM,
					     struct vnpu_get_param_long);

		args.future[i] = 1;
		EXPECT_EQ(-1, ioctl(self->fd, cmd, &args));
		EXPECT_EQ(E2BIG, errno);
		EXPECT_EQ(7, args.base.value);
	}
}

TEST_F(vnpu, bad_pointer_is_efault)
{
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VNPU_GET_PARAM, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VNPU_GET_PARAM, (void *)16));
	EXPECT_EQ(EFAULT, errno);
}

/* Reads the value of @key from /proc/self/fdinfo/@fd; returns 0 if found. */
static int fdinfo_value(int fd, const char *key, char *value, size_t len)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		snprintf(value, len, "%s", line + klen + 1 + strspn(line + klen + 1, " \t"));
		value[strcspn(value, "\n")] = '\0';
		found = 0;
	}
	fclose(f);
	return found;
}

TEST_F(vnpu, fdinfo_has_standard_keys)
{
	char driver[64], id1[64], id2[64];
	int fd2 = vnpu_open_nth(variant->nth);

	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, fdinfo_value(self->fd, "drm-driver", driver, sizeof(driver)));
	EXPECT_STREQ("vnpu", driver);
	ASSERT_EQ(0, fdinfo_value(self->fd, "drm-client-id", id1, sizeof(id1)));
	ASSERT_EQ(0, fdinfo_value(fd2, "drm-client-id", id2, sizeof(id2)));
	/* Every open file is its own client. */
	EXPECT_STRNE(id1, id2);
	close(fd2);
}

TEST_HARNESS_MAIN
