// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: buffer objects. DRM_IOCTL_VNPU_BO_CREATE and BO_INFO for
 * VRAM, mappable VRAM and host-pinned buffers, GEM close, mmap, PRIME
 * sharing within one device and across two, the exact errno of every bad
 * input (and that it changes nothing), VRAM exhaustion and fragmentation,
 * the fdinfo memory keys, backing pages allocated at a buffer's first use
 * (not at creation) and allocation fault injection through debugfs.
 */
#include <dirent.h>
#include <stdbool.h>

#include "kselftest_harness.h"
#include "vnpu_utils.h"

#define SZ_4K (4ULL << 10)
#define SZ_64K (64ULL << 10)
#define SZ_1M (1ULL << 20)

static const uint32_t bo_kinds[] = { 0, DRM_VNPU_BO_MAPPABLE, DRM_VNPU_BO_HOST };

static const char *kind_name(uint32_t flags)
{
	if (flags & DRM_VNPU_BO_HOST)
		return "host";
	return flags & DRM_VNPU_BO_MAPPABLE ? "mappable VRAM" : "VRAM";
}

static bool range_inside(uint64_t addr, uint64_t size, uint64_t base, uint64_t len)
{
	return addr >= base && size <= len && addr - base <= len - size;
}

/*
 * The teardown runs in the harness's parent process (FIXTURE_TEARDOWN_PARENT,
 * self is shared memory) so that it also runs after a failed ASSERT: the
 * fault-injection knobs the test armed are reset by path.
 */
FIXTURE(bo) {
	int fd;
	int fd_b;		/* second device, opened by the tests that need it */
	pid_t owner;		/* the test process, which owns the fds */
	uint64_t vram_size;
	uint64_t host_size;
	int nknobs;
	char knobs[4][300];	/* debugfs knobs armed: reset to 0 in teardown */
};

FIXTURE_SETUP(bo)
{
	self->owner = getpid();
	self->fd_b = -1;
	self->fd = vnpu_open_nth(0);
	if (self->fd < 0)
		SKIP(return, "no vnpu device");
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_SIZE, &self->vram_size);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_HOST_SIZE, &self->host_size);
	/*
	 * These tests are about the allocator, not the quota: lift this
	 * process's limits where allowed (as root).
	 */
	if (vnpu_quota_room(self->fd) < 16 * SZ_1M)
		SKIP(return, "VRAM quota below 16 MiB (default_quota_bytes); run as root");
}

FIXTURE_TEARDOWN_PARENT(bo)
{
	for (int i = 0; i < self->nknobs; i++)
		vnpu_write_path(self->knobs[i], "0\n");
	if (getpid() != self->owner)
		return;
	if (self->fd_b >= 0)
		close(self->fd_b);
	if (self->fd >= 0)
		close(self->fd);
}

/* Opens the second device into self->fd_b; returns false if there is none. */
static bool open_second_device(FIXTURE_DATA(bo) *self)
{
	self->fd_b = vnpu_open_nth(1);
	if (self->fd_b < 0)
		return false;
	vnpu_quota_unlimit(self->fd_b);
	return true;
}

/*
 * Checks BO_INFO of a buffer just created with (@req, @flags) on @fd:
 * rounded size, address range and alignment, flags, mmap offset.
 */
static void check_new_bo(struct __test_metadata *_metadata, int fd, uint32_t handle,
			 uint64_t addr, uint64_t req, uint32_t flags,
			 struct drm_vnpu_bo_info *out)
{
	uint64_t vram_size = 0, host_size = 0, want = vnpu_bo_rounded_size(req, flags);
	struct drm_vnpu_bo_info info;

	vnpu_get_param(fd, DRM_VNPU_PARAM_VRAM_SIZE, &vram_size);
	vnpu_get_param(fd, DRM_VNPU_PARAM_HOST_SIZE, &host_size);
	vnpu_bo_info(fd, handle, &info);

	EXPECT_EQ(handle, info.handle);
	EXPECT_EQ(want, info.size) {
		TH_LOG("%s buffer of %llu bytes", kind_name(flags), (unsigned long long)req);
	}
	EXPECT_EQ(addr, info.device_addr);
	EXPECT_EQ(0, info.pad);
	EXPECT_EQ(0, info.bo_flags & DRM_VNPU_BO_IMPORTED);
	EXPECT_EQ(flags & DRM_VNPU_BO_HOST, info.bo_flags & DRM_VNPU_BO_HOST);
	EXPECT_EQ(0, addr % SZ_4K);
	if (flags & DRM_VNPU_BO_HOST) {
		EXPECT_TRUE(range_inside(addr, info.size, DRM_VNPU_HOST_BASE, host_size)) {
			TH_LOG("host buffer at 0x%llx size %llu", (unsigned long long)addr,
			       (unsigned long long)info.size);
		}
	} else {
		EXPECT_EQ(flags & DRM_VNPU_BO_MAPPABLE, info.bo_flags & DRM_VNPU_BO_MAPPABLE);
		EXPECT_TRUE(range_inside(addr, info.size, DRM_VNPU_VRAM_BASE, vram_size)) {
			TH_LOG("VRAM buffer at 0x%llx size %llu", (unsigned long long)addr,
			       (unsigned long long)info.size);
		}
		if (info.size >= SZ_64K) {
			EXPECT_EQ(0, addr % SZ_64K) {
				TH_LOG("VRAM buffer of %llu bytes at 0x%llx",
				       (unsigned long long)info.size, (unsigned long long)addr);
			}
		}
	}
	if (flags & (DRM_VNPU_BO_HOST | DRM_VNPU_BO_MAPPABLE)) {
		EXPECT_NE(0, info.mmap_offset);
		EXPECT_EQ(0, info.mmap_offset % SZ_4K);
	}
	if (out)
		*out = info;
}

TEST_F(bo, create_info_close)
{
	static const uint64_t sizes[] = {
		1, 4095, 4096, 4097, 65535, 65536, 65537, 200000, SZ_1M, SZ_1M + 1,
	};

	for (size_t k = 0; k < sizeof(bo_kinds) / sizeof(bo_kinds[0]); k++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint32_t flags = bo_kinds[k], handle = 0;
			struct vnpu_mem_state before, after;
			struct drm_vnpu_bo_info info;
			uint64_t addr = 0;

			vnpu_get_mem_state(self->fd, &before);
			vnpu_bo_create(self->fd, sizes[i], flags, &handle, &addr);
			EXPECT_NE(0, handle);
			check_new_bo(_metadata, self->fd, handle, addr, sizes[i], flags, &info);

			vnpu_get_mem_state(self->fd, &after);
			if (flags & DRM_VNPU_BO_HOST) {
				EXPECT_EQ(before.vram_used, after.vram_used);
				EXPECT_EQ(before.host_used + info.size, after.host_used);
			} else {
				EXPECT_EQ(before.vram_used + info.size, after.vram_used);
				EXPECT_EQ(before.host_used, after.host_used);
			}
			EXPECT_EQ(after.vram_used, after.sysfs_vram_used);
			EXPECT_EQ(before.bo_count + 1, after.bo_count);

			vnpu_gem_close(self->fd, handle);
			vnpu_assert_mem_unchanged(self->fd, &before);
			vnpu_err_bo_info(ENOENT, self->fd, handle);
		}
	}
}

TEST_F(bo, sysfs_matches_params)
{
	uint64_t used = 0, largest = 0, value = 0, peak = 0;
	uint32_t handle = 0;

	for (int round = 0; round < 2; round++) {
		vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_USED, &used);
		vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_LARGEST_FREE, &largest);
		ASSERT_EQ(0, vnpu_sysfs_u64(self->fd, "vram_used_bytes", &value));
		EXPECT_EQ(used, value);
		ASSERT_EQ(0, vnpu_sysfs_u64(self->fd, "vram_largest_free_bytes", &value));
		EXPECT_EQ(largest, value);
		ASSERT_EQ(0, vnpu_sysfs_u64(self->fd, "vram_peak_bytes", &peak));
		EXPECT_GE(peak, used);
		EXPECT_LE(used, self->vram_size);
		EXPECT_LE(largest, self->vram_size - used);
		if (round == 0)
			vnpu_bo_create(self->fd, 3 * SZ_1M, 0, &handle, NULL);
	}
	vnpu_gem_close(self->fd, handle);
	/* The peak remembers the buffer. */
	ASSERT_EQ(0, vnpu_sysfs_u64(self->fd, "vram_peak_bytes", &value));
	EXPECT_GE(value, peak);
	EXPECT_GE(value, 3 * SZ_1M);
}

TEST_F(bo, host_size_param_is_sane)
{
	char buf[64];

	EXPECT_NE(0, self->host_size);
	EXPECT_EQ(0, self->host_size % SZ_4K);
	/* Default 1024 MiB unless the module parameter says otherwise. */
	if (!vnpu_module_param("host_size_mb", buf, sizeof(buf))) {
		EXPECT_EQ(strtoull(buf, NULL, 0) << 20, self->host_size);
	}
}

struct live_bo {
	uint32_t handle;
	uint32_t flags;
	uint64_t addr;
	uint64_t size;
};

static int cmp_live_addr(const void *a, const void *b)
{
	const struct live_bo *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

TEST_F(bo, addresses_disjoint)
{
	static const uint64_t sizes[] = { SZ_4K, 3 * SZ_4K, SZ_64K, 100000, SZ_1M, 5000 };
	enum { N = 48 };
	struct live_bo bos[N];
	struct vnpu_mem_state before;

	vnpu_get_mem_state(self->fd, &before);
	for (int i = 0; i < N; i++) {
		struct drm_vnpu_bo_info info;

		bos[i].flags = bo_kinds[i % 3];
		vnpu_bo_create(self->fd, sizes[(i / 3) % 6], bos[i].flags, &bos[i].handle,
			       &bos[i].addr);
		check_new_bo(_metadata, self->fd, bos[i].handle, bos[i].addr,
			     sizes[(i / 3) % 6], bos[i].flags, &info);
		bos[i].size = info.size;
	}
	qsort(bos, N, sizeof(bos[0]), cmp_live_addr);
	for (int i = 1; i < N; i++) {
		EXPECT_LE(bos[i - 1].addr + bos[i - 1].size, bos[i].addr) {
			TH_LOG("0x%llx+%llu overlaps 0x%llx",
			       (unsigned long long)bos[i - 1].addr,
			       (unsigned long long)bos[i - 1].size,
			       (unsigned long long)bos[i].addr);
		}
	}
	/* Handles are distinct too. */
	for (int i = 0; i < N; i++)
		for (int j = i + 1; j < N; j++)
			EXPECT_NE(bos[i].handle, bos[j].handle);
	for (int i = 0; i < N; i++)
		vnpu_gem_close(self->fd, bos[i].handle);
	vnpu_assert_mem_unchanged(self->fd, &before);
}

/* --- mmap and PRIME ------------------------------------------------------ */

TEST_F(bo, mmap_same_buffer_through_two_files)
{
	const uint32_t kinds[] = { DRM_VNPU_BO_MAPPABLE, DRM_VNPU_BO_HOST };

	for (size_t k = 0; k < 2; k++) {
		struct drm_vnpu_bo_info info, info2;
		struct vnpu_mem_state base, created;
		uint32_t handle = 0, again = 0, handle2 = 0;
		void *map = NULL, *map2 = NULL;
		uint64_t addr = 0;
		int dmabuf = -1, fd2;

		vnpu_get_mem_state(self->fd, &base);
		vnpu_bo_create(self->fd, 256 << 10, kinds[k], &handle, &addr);
		vnpu_bo_info(self->fd, handle, &info);
		vnpu_bo_mmap(self->fd, handle, &map, NULL);
		vnpu_fill(map, info.size, 0x1000 + k);
		vnpu_get_mem_state(self->fd, &created);

		vnpu_prime_export(self->fd, handle, &dmabuf);
		/* Importing into the exporting file gives back the same handle. */
		vnpu_prime_import(self->fd, dmabuf, &again);
		EXPECT_EQ(handle, again);

		/* A second file on the same device gets the same buffer. */
		fd2 = vnpu_open_nth(0);
		ASSERT_GE(fd2, 0);
		vnpu_prime_import(fd2, dmabuf, &handle2);
		vnpu_bo_info(fd2, handle2, &info2);
		EXPECT_EQ(info.device_addr, info2.device_addr);
		EXPECT_EQ(info.size, info2.size);
		EXPECT_EQ(0, info2.bo_flags & DRM_VNPU_BO_IMPORTED);
		EXPECT_EQ(info.bo_flags, info2.bo_flags);
		/* Sharing is not a second allocation. */
		vnpu_assert_mem_unchanged(self->fd, &created);

		ASSERT_EQ(0, _vnpu_mmap(fd2, info2.mmap_offset, info2.size, &map2));
		EXPECT_EQ(-1, vnpu_check(map2, info2.size, 0x1000 + k)) {
			TH_LOG("%s: data written through file 1 not seen through file 2",
			       kind_name(kinds[k]));
		}
		vnpu_fill(map2, info2.size, 0x2000 + k);
		EXPECT_EQ(-1, vnpu_check(map, info.size, 0x2000 + k));

		ASSERT_EQ(0, munmap(map2, info2.size));
		ASSERT_EQ(0, munmap(map, info.size));
		vnpu_gem_close(fd2, handle2);
		close(fd2);
		close(dmabuf);
		vnpu_assert_mem_unchanged(self->fd, &created);
		vnpu_gem_close(self->fd, handle);
		vnpu_assert_mem_unchanged(self->fd, &base);
	}
}

TEST_F(bo, mapping_outlives_handle)
{
	for (size_t k = 1; k < 3; k++) {
		struct vnpu_mem_state base, created;
		uint32_t handle = 0;
		uint64_t size = 0;
		void *map = NULL;

		vnpu_get_mem_state(self->fd, &base);
		vnpu_bo_create(self->fd, 128 << 10, bo_kinds[k], &handle, NULL);
		vnpu_bo_mmap(self->fd, handle, &map, &size);
		vnpu_fill(map, size, 0x3000 + k);
		vnpu_get_mem_state(self->fd, &created);

		vnpu_gem_close(self->fd, handle);
		vnpu_err_bo_info(ENOENT, self->fd, handle);
		/* The mapping still holds the buffer and its data. */
		vnpu_assert_mem_unchanged(self->fd, &created);
		EXPECT_EQ(-1, vnpu_check(map, size, 0x3000 + k));
		vnpu_fill(map, size, 0x4000 + k);
		EXPECT_EQ(-1, vnpu_check(map, size, 0x4000 + k));

		ASSERT_EQ(0, munmap(map, size));
		vnpu_assert_mem_unchanged(self->fd, &base);
	}
}

TEST_F(bo, dmabuf_outlives_handle)
{
	for (size_t k = 0; k < 3; k++) {
		struct drm_vnpu_bo_info info, info2;
		struct vnpu_mem_state base, created;
		uint32_t handle = 0, handle2 = 0;
		uint64_t addr = 0;
		void *map = NULL;
		int dmabuf = -1;

		vnpu_get_mem_state(self->fd, &base);
		vnpu_bo_create(self->fd, 192 << 10, bo_kinds[k], &handle, &addr);
		vnpu_bo_info(self->fd, handle, &info);
		if (bo_kinds[k]) {
			vnpu_bo_mmap(self->fd, handle, &map, NULL);
			vnpu_fill(map, info.size, 0x5000 + k);
			ASSERT_EQ(0, munmap(map, info.size));
		}
		vnpu_get_mem_state(self->fd, &created);
		vnpu_prime_export(self->fd, handle, &dmabuf);
		vnpu_gem_close(self->fd, handle);
		/* Only the dma-buf holds it now. */
		vnpu_assert_mem_unchanged(self->fd, &created);

		vnpu_prime_import(self->fd, dmabuf, &handle2);
		vnpu_bo_info(self->fd, handle2, &info2);
		EXPECT_EQ(addr, info2.device_addr);
		EXPECT_EQ(info.size, info2.size);
		EXPECT_EQ(info.bo_flags, info2.bo_flags);
		if (bo_kinds[k]) {
			vnpu_bo_mmap(self->fd, handle2, &map, NULL);
			EXPECT_EQ(-1, vnpu_check(map, info.size, 0x5000 + k));
			ASSERT_EQ(0, munmap(map, info.size));
		}
		vnpu_gem_close(self->fd, handle2);
		vnpu_assert_mem_unchanged(self->fd, &created);
		close(dmabuf);
		vnpu_assert_mem_unchanged(self->fd, &base);
	}
}

TEST_F(bo, prime_across_devices)
{
	const uint32_t kinds[] = { DRM_VNPU_BO_MAPPABLE, DRM_VNPU_BO_HOST, 0 };
	uint64_t host_size_b = 0;

	if (!open_second_device(self))
		SKIP(return, "needs two vnpu devices");
	vnpu_get_param(self->fd_b, DRM_VNPU_PARAM_HOST_SIZE, &host_size_b);

	for (size_t k = 0; k < 3; k++) {
		bool mappable = kinds[k] != 0;
		struct vnpu_mem_state base_a, created_a, base_b, imported_b;
		struct drm_vnpu_bo_info info_a, info_b;
		uint32_t ha = 0, hb = 0, hb_again = 0, ha_again = 0;
		void *map_a = NULL, *map_b = NULL;
		int dmabuf = -1, dmabuf_b = -1;

		vnpu_get_mem_state(self->fd, &base_a);
		vnpu_get_mem_state(self->fd_b, &base_b);
		vnpu_bo_create(self->fd, 320 << 10, kinds[k], &ha, NULL);
		vnpu_bo_info(self->fd, ha, &info_a);
		if (mappable) {
			vnpu_bo_mmap(self->fd, ha, &map_a, NULL);
			vnpu_fill(map_a, info_a.size, 0x6000 + k);
		}
		vnpu_get_mem_state(self->fd, &created_a);
		vnpu_prime_export(self->fd, ha, &dmabuf);

		vnpu_prime_import(self->fd_b, dmabuf, &hb);
		vnpu_bo_info(self->fd_b, hb, &info_b);
		EXPECT_EQ(info_a.size, info_b.size);
		EXPECT_NE(0, info_b.bo_flags & DRM_VNPU_BO_IMPORTED) {
			TH_LOG("%s buffer imported on device B: bo_flags 0x%x",
			       kind_name(kinds[k]), info_b.bo_flags);
		}
		EXPECT_TRUE(range_inside(info_b.device_addr, info_b.size, DRM_VNPU_HOST_BASE,
					 host_size_b)) {
			TH_LOG("imported at 0x%llx", (unsigned long long)info_b.device_addr);
		}
		EXPECT_EQ(0, info_b.device_addr % SZ_4K);
		/* An import is not a buffer of device B, nor B's VRAM. */
		vnpu_get_mem_state(self->fd_b, &imported_b);
		EXPECT_EQ(base_b.vram_used, imported_b.vram_used);
		EXPECT_EQ(base_b.bo_count, imported_b.bo_count);
		vnpu_assert_mem_unchanged(self->fd, &created_a);

		/* The same dma-buf imported again is the same handle. */
		vnpu_prime_import(self->fd_b, dmabuf, &hb_again);
		EXPECT_EQ(hb, hb_again);

		if (mappable) {
			EXPECT_NE(0, info_b.mmap_offset);
			ASSERT_EQ(0, _vnpu_mmap(self->fd_b, info_b.mmap_offset, info_b.size,
						&map_b));
			EXPECT_EQ(-1, vnpu_check(map_b, info_b.size, 0x6000 + k)) {
				TH_LOG("%s: device B does not see device A's data",
				       kind_name(kinds[k]));
			}
			vnpu_fill(map_b, info_b.size, 0x7000 + k);
			EXPECT_EQ(-1, vnpu_check(map_a, info_a.size, 0x7000 + k));
		}

		/* B's import exported again comes home as A's own buffer. */
		vnpu_prime_export(self->fd_b, hb, &dmabuf_b);
		vnpu_prime_import(self->fd, dmabuf_b, &ha_again);
		EXPECT_EQ(ha, ha_again);
		close(dmabuf_b);

		/* Drop everything on A's side: B's import keeps the memory. */
		close(dmabuf);
		if (mappable)
			ASSERT_EQ(0, munmap(map_a, info_a.size));
		vnpu_gem_close(self->fd, ha);
		vnpu_assert_mem_unchanged(self->fd, &created_a);
		if (mappable) {
			EXPECT_EQ(-1, vnpu_check(map_b, info_b.size, 0x7000 + k));
			ASSERT_EQ(0, munmap(map_b, info_b.size));
		}
		vnpu_gem_close(self->fd_b, hb);
		vnpu_assert_mem_unchanged(self->fd, &base_a);
		vnpu_get_mem_state(self->fd_b, &imported_b);
		EXPECT_EQ(base_b.vram_used, imported_b.vram_used);
		EXPECT_EQ(base_b.bo_count, imported_b.bo_count);
		EXPECT_EQ(base_b.host_used, imported_b.host_used);
	}
}

/* --- Bad input ------------------------------------------------------------- */

TEST_F(bo, create_rejects_bad_size)
{
	const uint64_t bad[] = {
		0, ~0ULL, ~0ULL - SZ_4K + 2, 1ULL << 63, self->vram_size + 1,
		self->vram_size + SZ_4K, 2 * self->vram_size,
	};
	struct vnpu_mem_state before;

	vnpu_get_mem_state(self->fd, &before);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (size_t k = 0; k < 2; k++) {
			int ret = _vnpu_bo_create(self->fd, bad[i], bo_kinds[k], NULL, NULL);

			EXPECT_EQ(-EINVAL, ret) {
				TH_LOG("%s size 0x%llx", kind_name(bo_kinds[k]),
				       (unsigned long long)bad[i]);
			}
		}
	}
	/* Host buffers are bounded by the host range instead. */
	const uint64_t bad_host[] = {
		0, ~0ULL, ~0ULL - SZ_4K + 2, 1ULL << 63, self->host_size + 1,
		self->host_size + SZ_4K,
	};
	for (size_t i = 0; i < sizeof(bad_host) / sizeof(bad_host[0]); i++) {
		EXPECT_EQ(-EINVAL, _vnpu_bo_create(self->fd, bad_host[i], DRM_VNPU_BO_HOST,
						   NULL, NULL)) {
			TH_LOG("host size 0x%llx", (unsigned long long)bad_host[i]);
		}
	}
	vnpu_assert_mem_unchanged(self->fd, &before);
}

TEST_F(bo, create_rejects_unknown_flags)
{
	struct vnpu_mem_state before;
	uint32_t flags;

	vnpu_get_mem_state(self->fd, &before);
	for (int bit = 0; bit < 32; bit++) {
		if ((1u << bit) & DRM_VNPU_BO_FLAGS)
			continue;
		EXPECT_EQ(-EINVAL, _vnpu_bo_create(self->fd, SZ_4K, 1u << bit, NULL, NULL)) {
			TH_LOG("flag bit %d", bit);
		}
		/* Also next to valid flags. */
		flags = (1u << bit) | DRM_VNPU_BO_MAPPABLE;
		EXPECT_EQ(-EINVAL, _vnpu_bo_create(self->fd, SZ_4K, flags, NULL, NULL)) {
			TH_LOG("flag bit %d with MAPPABLE", bit);
		}
	}
	vnpu_err_bo_create(EINVAL, self->fd, SZ_4K, DRM_VNPU_BO_IMPORTED);
	vnpu_err_bo_create(EINVAL, self->fd, SZ_4K, ~0u);
	vnpu_assert_mem_unchanged(self->fd, &before);
}

TEST_F(bo, create_rejects_mappable_host)
{
	struct vnpu_mem_state before;

	vnpu_get_mem_state(self->fd, &before);
	vnpu_err_bo_create(EINVAL, self->fd, SZ_4K, DRM_VNPU_BO_MAPPABLE | DRM_VNPU_BO_HOST);
	vnpu_err_bo_create(EINVAL, self->fd, SZ_1M, DRM_VNPU_BO_MAPPABLE | DRM_VNPU_BO_HOST);
	vnpu_assert_mem_unchanged(self->fd, &before);
}

TEST_F(bo, create_rejects_nonzero_outputs)
{
	struct vnpu_mem_state before;

	vnpu_get_mem_state(self->fd, &before);
	for (size_t k = 0; k < 3; k++) {
		struct drm_vnpu_bo_create a = { .size = SZ_4K, .flags = bo_kinds[k], .handle = 1 };
		struct drm_vnpu_bo_create b = {
			.size = SZ_4K, .flags = bo_kinds[k], .device_addr = DRM_VNPU_VRAM_BASE,
		};
		struct drm_vnpu_bo_create c = {
			.size = SZ_4K, .flags = bo_kinds[k], .handle = ~0u, .device_addr = 1,
		};

		EXPECT_EQ(-EINVAL, _vnpu_bo_create_args(self->fd, &a));
		EXPECT_EQ(-EINVAL, _vnpu_bo_create_args(self->fd, &b));
		EXPECT_EQ(-EINVAL, _vnpu_bo_create_args(self->fd, &c));
	}
	vnpu_assert_mem_unchanged(self->fd, &before);
}

TEST_F(bo, info_rejects_unknown_handle)
{
	uint32_t handle = 0, other = 0;
	int fd2 = vnpu_open_nth(0);

	ASSERT_GE(fd2, 0);
	vnpu_err_bo_info(ENOENT, self->fd, 0);
	vnpu_err_bo_info(ENOENT, self->fd, 0xdeadbeef);
	vnpu_err_bo_info(ENOENT, self->fd, ~0u);
	/* A handle of another file is not this file's. */
	vnpu_bo_create(fd2, SZ_4K, 0, &other, NULL);
	vnpu_err_bo_info(ENOENT, self->fd, other);
	close(fd2);

	vnpu_bo_create(self->fd, SZ_4K, 0, &handle, NULL);
	vnpu_gem_close(self->fd, handle);
	vnpu_err_bo_info(ENOENT, self->fd, handle);
}

TEST_F(bo, info_rejects_flags_and_pad)
{
	uint32_t handle = 0;

	vnpu_bo_create(self->fd, SZ_4K, 0, &handle, NULL);
	for (int bit = 0; bit < 32; bit++) {
		struct drm_vnpu_bo_info a = { .handle = handle, .flags = 1u << bit };
		struct drm_vnpu_bo_info b = { .handle = handle, .pad = 1u << bit };

		EXPECT_EQ(-EINVAL, _vnpu_bo_info_args(self->fd, &a)) {
			TH_LOG("flags bit %d", bit);
		}
		EXPECT_EQ(-EINVAL, _vnpu_bo_info_args(self->fd, &b)) {
			TH_LOG("pad bit %d", bit);
		}
	}
	vnpu_bo_info(self->fd, handle, NULL);
	vnpu_gem_close(self->fd, handle);
}

TEST_F(bo, gem_close_rejects_bad_handle)
{
	struct vnpu_mem_state before;
	uint32_t handle = 0;

	vnpu_get_mem_state(self->fd, &before);
	vnpu_err_gem_close(EINVAL, self->fd, 0);
	vnpu_err_gem_close(EINVAL, self->fd, 0xdeadbeef);
	vnpu_bo_create(self->fd, SZ_4K, 0, &handle, NULL);
	vnpu_gem_close(self->fd, handle);
	vnpu_err_gem_close(EINVAL, self->fd, handle);
	vnpu_assert_mem_unchanged(self->fd, &before);
}

TEST_F(bo, mmap_rejects_non_mappable_vram)
{
	struct drm_vnpu_bo_info info;
	uint32_t handle = 0;
	void *map = NULL;

	vnpu_bo_create(self->fd, SZ_64K, 0, &handle, NULL);
	vnpu_bo_info(self->fd, handle, &info);
	EXPECT_EQ(-EACCES, _vnpu_mmap(self->fd, info.mmap_offset, info.size, &map));
	EXPECT_EQ(-EACCES, _vnpu_mmap(self->fd, info.mmap_offset, SZ_4K, &map));
	vnpu_gem_close(self->fd, handle);
}

TEST_F(bo, mmap_rejects_oversize_and_bogus_offsets)
{
	for (size_t k = 1; k < 3; k++) {
		struct drm_vnpu_bo_info info, gone;
		uint32_t handle = 0, closed = 0;
		void *map = NULL;

		vnpu_bo_create(self->fd, SZ_64K, bo_kinds[k], &handle, NULL);
		vnpu_bo_info(self->fd, handle, &info);
		EXPECT_EQ(-EINVAL, _vnpu_mmap(self->fd, info.mmap_offset, info.size + SZ_4K, &map));
		EXPECT_EQ(-EINVAL, _vnpu_mmap(self->fd, info.mmap_offset, 2 * info.size, &map));
		/* Offsets that name no buffer. */
		EXPECT_EQ(-EINVAL, _vnpu_mmap(self->fd, 0, SZ_4K, &map));
		EXPECT_EQ(-EINVAL, _vnpu_mmap(self->fd, 1ULL << 44, SZ_4K, &map));
		vnpu_bo_create(self->fd, SZ_4K, bo_kinds[k], &closed, NULL);
		vnpu_bo_info(self->fd, closed, &gone);
		vnpu_gem_close(self->fd, closed);
		EXPECT_EQ(-EINVAL, _vnpu_mmap(self->fd, gone.mmap_offset, SZ_4K, &map));
		/* The right size still works. */
		ASSERT_EQ(0, _vnpu_mmap(self->fd, info.mmap_offset, info.size, &map));
		munmap(map, info.size);
		vnpu_gem_close(self->fd, handle);
	}
}

TEST_F(bo, mmap_needs_a_handle_in_this_file)
{
	struct drm_vnpu_bo_info info;
	uint32_t handle = 0;
	void *map = NULL;
	int fd2 = vnpu_open_nth(0);

	ASSERT_GE(fd2, 0);
	vnpu_bo_create(fd2, SZ_64K, DRM_VNPU_BO_MAPPABLE, &handle, NULL);
	vnpu_bo_info(fd2, handle, &info);
	/* The offset is valid on the device, but this file holds no handle. */
	EXPECT_EQ(-EACCES, _vnpu_mmap(self->fd, info.mmap_offset, info.size, &map));
	close(fd2);
}

TEST_F(bo, prime_import_rejects_non_dmabuf_fds)
{
	struct vnpu_mem_state before;
	int pipefd[2];

	vnpu_get_mem_state(self->fd, &before);
	ASSERT_EQ(0, pipe(pipefd));
	vnpu_err_prime_import(EBADF, self->fd, -1);
	vnpu_err_prime_import(EINVAL, self->fd, pipefd[0]);
	vnpu_err_prime_import(EINVAL, self->fd, self->fd);
	close(pipefd[0]);
	close(pipefd[1]);
	vnpu_assert_mem_unchanged(self->fd, &before);
}

/* Loads vgem and opens its card node; returns -1 if there is none. */
static int vgem_open(void)
{
	struct dirent *e;
	int fd = -1;
	DIR *d;

	if (system("modprobe vgem >/dev/null 2>&1") == -1)
		return -1;
	d = opendir("/dev/dri");
	if (!d)
		return -1;
	while (fd < 0 && (e = readdir(d))) {
		char path[300], name[64] = "";
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

		if (strncmp(e->d_name, "card", 4))
			continue;
		snprintf(path, sizeof(path), "/dev/dri/%s", e->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (ioctl(fd, DRM_IOCTL_VERSION, &v) || strcmp(name, "vgem")) {
			close(fd);
			fd = -1;
		}
	}
	closedir(d);
	return fd;
}

TEST_F(bo, prime_import_of_foreign_dmabuf_is_eopnotsupp)
{
	struct drm_mode_create_dumb dumb = { .height = 64, .width = 64, .bpp = 32 };
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC | DRM_RDWR, .fd = -1 };
	struct vnpu_mem_state before;
	int vgem = vgem_open();

	if (vgem < 0)
		SKIP(return, "vgem is not available (modprobe vgem failed or no card node)");
	ASSERT_EQ(0, ioctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb));
	exp.handle = dumb.handle;
	ASSERT_EQ(0, ioctl(vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));

	vnpu_get_mem_state(self->fd, &before);
	vnpu_err_prime_import(EOPNOTSUPP, self->fd, exp.fd);
	vnpu_assert_mem_unchanged(self->fd, &before);
	if (open_second_device(self))
		vnpu_err_prime_import(EOPNOTSUPP, self->fd_b, exp.fd);
	close(exp.fd);
	close(vgem);
}

/* The uAPI struct size rules, for the two buffer ioctls. */
struct vnpu_bo_create_short {
	__u64 size;
	__u32 flags;
};

struct vnpu_bo_create_long {
	struct drm_vnpu_bo_create base;
	__u64 future[2];
};

struct vnpu_bo_info_short {
	__u32 handle;
	__u32 flags;
};

struct vnpu_bo_info_long {
	struct drm_vnpu_bo_info base;
	__u64 future[2];
};

#define VNPU_IOWR(nr, type) DRM_IOWR(DRM_COMMAND_BASE + (nr), type)

TEST_F(bo, struct_size_rules)
{
	struct vnpu_bo_create_short cs = { .size = SZ_4K };
	struct vnpu_bo_info_short is = { 0 };
	struct vnpu_mem_state before;
	uint32_t handle = 0;

	vnpu_get_mem_state(self->fd, &before);
	EXPECT_EQ(-1, ioctl(self->fd, VNPU_IOWR(DRM_VNPU_BO_CREATE, struct vnpu_bo_create_short),
			    &cs));
	EXPECT_EQ(EINVAL, errno);
	for (int i = 0; i < 2; i++) {
		struct vnpu_bo_create_long cl = { .base.size = SZ_4K };
		unsigned long cmd = VNPU_IOWR(DRM_VNPU_BO_CREATE, struct vnpu_bo_create_long);

		cl.future[i] = 1;
		EXPECT_EQ(-1, ioctl(self->fd, cmd, &cl));
		EXPECT_EQ(E2BIG, errno);
	}
	vnpu_assert_mem_unchanged(self->fd, &before);
	{
		struct vnpu_bo_create_long cl = { .base.size = SZ_4K };

		ASSERT_EQ(0, ioctl(self->fd,
				   VNPU_IOWR(DRM_VNPU_BO_CREATE, struct vnpu_bo_create_long), &cl));
		handle = cl.base.handle;
		EXPECT_NE(0, handle);
	}

	is.handle = handle;
	EXPECT_EQ(-1, ioctl(self->fd, VNPU_IOWR(DRM_VNPU_BO_INFO, struct vnpu_bo_info_short), &is));
	EXPECT_EQ(EINVAL, errno);
	for (int i = 0; i < 2; i++) {
		struct vnpu_bo_info_long il = { .base.handle = handle };

		il.future[i] = 1;
		EXPECT_EQ(-1, ioctl(self->fd, VNPU_IOWR(DRM_VNPU_BO_INFO, struct vnpu_bo_info_long),
				    &il));
		EXPECT_EQ(E2BIG, errno);
	}
	{
		struct vnpu_bo_info_long il = { .base.handle = handle };

		ASSERT_EQ(0, ioctl(self->fd, VNPU_IOWR(DRM_VNPU_BO_INFO, struct vnpu_bo_info_long),
				   &il));
		EXPECT_EQ(SZ_4K, il.base.size);
		EXPECT_EQ(0, il.future[0]);
	}
	vnpu_gem_close(self->fd, handle);
	vnpu_assert_mem_unchanged(self->fd, &before);
}

/* --- Exhaustion and fragmentation ---------------------------------------- */

TEST_F_TIMEOUT(bo, exhaustion_and_fragmentation, 120)
{
	struct vnpu_mem_state base, now;
	struct drm_vnpu_quota q;
	uint64_t chunk = SZ_64K, n_fit, used = 0, largest = 0, value = 0, filler_size;
	uint32_t filler = 0, extra = 0;
	struct live_bo *bos;
	size_t n = 0, max, freed = 0;
	int ret = 0;

	vnpu_get_mem_state(self->fd, &base);
	if (base.vram_used)
		SKIP(return, "VRAM is in use by someone else (%llu bytes)",
		     (unsigned long long)base.vram_used);
	/* With the quota as tight as the VRAM, EDQUOT and ENOSPC would race. */
	vnpu_quota_get(self->fd, 0, &q);
	if (q.soft_limit != DRM_VNPU_QUOTA_UNLIMITED && q.soft_limit <= self->vram_size)
		SKIP(return, "quota (%llu) not above the VRAM size; needs CAP_SYS_ADMIN",
		     (unsigned long long)q.soft_limit);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_LARGEST_FREE, &largest);
	EXPECT_EQ(self->vram_size, largest);

	/* Equal buffers, a power of two of 64 KiB or more, 32 to 64 of them. */
	while (chunk * 2 <= self->vram_size / 32)
		chunk *= 2;
	n_fit = self->vram_size / chunk;
	max = n_fit + 2;
	bos = calloc(max, sizeof(*bos));
	ASSERT_NE(NULL, bos);

	for (;;) {
		ASSERT_LT(n, max);
		ret = _vnpu_bo_create(self->fd, chunk, 0, &bos[n].handle, &bos[n].addr);
		if (ret)
			break;
		bos[n++].size = chunk;
	}
	EXPECT_EQ(-ENOSPC, ret);
	EXPECT_EQ(n_fit, n);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_USED, &used);
	EXPECT_EQ(n * chunk, used);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_LARGEST_FREE, &largest);
	filler_size = self->vram_size - n * chunk;
	EXPECT_EQ(filler_size, largest);
	/* Fill the remainder exactly so that no free range is left at all. */
	if (filler_size) {
		vnpu_bo_create(self->fd, filler_size, 0, &filler, NULL);
		vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_LARGEST_FREE, &largest);
		EXPECT_EQ(0, largest);
	}
	vnpu_get_mem_state(self->fd, &now);
	EXPECT_EQ(self->vram_size, now.vram_used);
	vnpu_err_bo_create(ENOSPC, self->fd, SZ_4K, 0);
	vnpu_err_bo_create(ENOSPC, self->fd, SZ_4K, DRM_VNPU_BO_MAPPABLE);
	vnpu_assert_mem_unchanged(self->fd, &now);
	/* Host-pinned buffers do not use VRAM. */
	vnpu_bo_create(self->fd, SZ_64K, DRM_VNPU_BO_HOST, &extra, NULL);
	vnpu_gem_close(self->fd, extra);

	/* Free every other buffer in address order: holes of one chunk. */
	qsort(bos, n, sizeof(bos[0]), cmp_live_addr);
	for (size_t i = 0; i < n; i += 2) {
		vnpu_gem_close(self->fd, bos[i].handle);
		bos[i].handle = 0;
		freed++;
	}
	ASSERT_GE(freed, 2);
	vnpu_get_mem_state(self->fd, &now);
	EXPECT_EQ(self->vram_size - freed * chunk, now.vram_used);
	EXPECT_EQ(now.vram_used, now.sysfs_vram_used);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_LARGEST_FREE, &largest);
	EXPECT_EQ(chunk, largest);
	ASSERT_EQ(0, vnpu_sysfs_u64(self->fd, "vram_largest_free_bytes", &value));
	EXPECT_EQ(chunk, value);

	/* Half the VRAM is free, yet two chunks in one piece do not fit. */
	EXPECT_GE(self->vram_size - now.vram_used, 2 * chunk);
	vnpu_err_bo_create(ENOSPC, self->fd, 2 * chunk, 0);
	vnpu_err_bo_create(ENOSPC, self->fd, chunk + SZ_4K, DRM_VNPU_BO_MAPPABLE);
	vnpu_assert_mem_unchanged(self->fd, &now);

	/* One chunk fits in a hole, exactly. */
	vnpu_bo_create(self->fd, chunk, DRM_VNPU_BO_MAPPABLE, &extra, NULL);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_USED, &used);
	EXPECT_EQ(now.vram_used + chunk, used);
	vnpu_gem_close(self->fd, extra);

	/* The peak saw the full device. */
	ASSERT_EQ(0, vnpu_sysfs_u64(self->fd, "vram_peak_bytes", &value));
	EXPECT_EQ(self->vram_size, value);

	for (size_t i = 0; i < n; i++)
		if (bos[i].handle)
			vnpu_gem_close(self->fd, bos[i].handle);
	if (filler)
		vnpu_gem_close(self->fd, filler);
	free(bos);
	vnpu_assert_mem_unchanged(self->fd, &base);
	vnpu_get_param(self->fd, DRM_VNPU_PARAM_VRAM_LARGEST_FREE, &largest);
	EXPECT_EQ(self->vram_size, largest);
	/* Everything coalesced: the whole VRAM is one buffer again. */
	vnpu_bo_create(self->fd, self->vram_size, 0, &extra, NULL);
	vnpu_gem_close(self->fd, extra);
}

/* --- fdinfo ------------------------------------------------------------------ */

/* drm-<key>-<region> of @fd in bytes; an absent key reads as @absent. */
static uint64_t fdinfo_or(struct __test_metadata *_metadata, int fd, const char *key,
			  uint64_t absent)
{
	uint64_t v = 0;
	int ret = vnpu_fdinfo_bytes(fd, key, &v);

	if (ret == -ENOENT)
		return absent;
	EXPECT_EQ(0, ret) {
		TH_LOG("fdinfo key %s does not parse", key);
	}
	return v;
}

TEST_F(bo, fdinfo_memory_keys)
{
	static const char * const keys[] = {
		"drm-total-vram", "drm-shared-vram", "drm-active-vram", "drm-resident-vram",
		"drm-total-host",
	};
	uint32_t h_vram = 0, h_map = 0, h_host = 0, h_imp = 0;
	struct drm_vnpu_bo_info i_vram, i_map, i_host;
	uint64_t mine_before, v = 0;
	int fd2, fd3, dmabuf = -1;

	fd2 = vnpu_open_nth(0);
	fd3 = vnpu_open_nth(0);
	ASSERT_GE(fd2, 0);
	ASSERT_GE(fd3, 0);
	/* A file without buffers shows zero (or nothing). */
	EXPECT_EQ(0, fdinfo_or(_metadata, fd2, "drm-total-vram", 0));
	EXPECT_EQ(0, fdinfo_or(_metadata, fd2, "drm-total-host", 0));
	mine_before = fdinfo_or(_metadata, self->fd, "drm-total-vram", 0);

	vnpu_bo_create(fd2, SZ_1M, 0, &h_vram, NULL);
	vnpu_bo_create(fd2, 128 * 1024 + 1, DRM_VNPU_BO_MAPPABLE, &h_map, NULL);
	vnpu_bo_create(fd2, 300 * 1024, DRM_VNPU_BO_HOST, &h_host, NULL);
	vnpu_bo_info(fd2, h_vram, &i_vram);
	vnpu_bo_info(fd2, h_map, &i_map);
	vnpu_bo_info(fd2, h_host, &i_host);

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		EXPECT_EQ(0, vnpu_fdinfo_bytes(fd2, keys[i], &v)) {
			TH_LOG("fdinfo key %s missing or malformed", keys[i]);
		}
	}
	EXPECT_EQ(i_vram.size + i_map.size, fdinfo_or(_metadata, fd2, "drm-total-vram", ~0ULL));
	EXPECT_EQ(i_host.size, fdinfo_or(_metadata, fd2, "drm-total-host", ~0ULL));
	EXPECT_EQ(0, fdinfo_or(_metadata, fd2, "drm-shared-vram", ~0ULL));
	EXPECT_LE(fdinfo_or(_metadata, fd2, "drm-resident-vram", 0), i_vram.size + i_map.size);
	/* Other files are not charged. */
	EXPECT_EQ(mine_before, fdinfo_or(_metadata, self->fd, "drm-total-vram", 0));
	EXPECT_EQ(0, fdinfo_or(_metadata, fd3, "drm-total-vram", 0));

	/* Shared with another file: counted in both, as shared. */
	vnpu_prime_export(fd2, h_map, &dmabuf);
	vnpu_prime_import(fd3, dmabuf, &h_imp);
	close(dmabuf);
	EXPECT_EQ(i_map.size, fdinfo_or(_metadata, fd3, "drm-total-vram", ~0ULL));
	EXPECT_EQ(i_map.size, fdinfo_or(_metadata, fd3, "drm-shared-vram", ~0ULL));
	EXPECT_EQ(i_map.size, fdinfo_or(_metadata, fd2, "drm-shared-vram", ~0ULL));
	EXPECT_EQ(i_vram.size + i_map.size, fdinfo_or(_metadata, fd2, "drm-total-vram", ~0ULL));

	vnpu_gem_close(fd2, h_vram);
	vnpu_gem_close(fd2, h_host);
	EXPECT_EQ(i_map.size, fdinfo_or(_metadata, fd2, "drm-total-vram", ~0ULL));
	EXPECT_EQ(0, fdinfo_or(_metadata, fd2, "drm-total-host", 0));
	vnpu_gem_close(fd2, h_map);
	vnpu_gem_close(fd3, h_imp);
	EXPECT_EQ(0, fdinfo_or(_metadata, fd2, "drm-total-vram", 0));
	EXPECT_EQ(0, fdinfo_or(_metadata, fd3, "drm-total-vram", 0));
	close(fd3);
	close(fd2);
}

/* --- Backing pages at first use ---------------------------------------------- */

static bool all_zero(const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

TEST_F(bo, backing_is_allocated_at_first_use)
{
	uint32_t h_vram = 0, h_map = 0, h_host = 0;
	uint64_t size = 0, hsize = 0;
	void *map = NULL, *hmap = NULL;
	int fd2 = vnpu_open_nth(0);

	ASSERT_GE(fd2, 0);
	vnpu_bo_create(fd2, SZ_1M, 0, &h_vram, NULL);
	vnpu_bo_create(fd2, SZ_1M, DRM_VNPU_BO_MAPPABLE, &h_map, NULL);
	vnpu_bo_create(fd2, 256 * 1024, DRM_VNPU_BO_HOST, &h_host, NULL);
	/* Charged at creation, but no host page behind them yet. */
	EXPECT_EQ(2 * SZ_1M, fdinfo_or(_metadata, fd2, "drm-total-vram", ~0ULL));
	EXPECT_EQ(256 * 1024, fdinfo_or(_metadata, fd2, "drm-total-host", ~0ULL));
	EXPECT_EQ(0, fdinfo_or(_metadata, fd2, "drm-resident-vram", ~0ULL));
	EXPECT_EQ(0, fdinfo_or(_metadata, fd2, "drm-resident-host", ~0ULL));

	/* The first mmap backs the buffer, with zeroed pages. */
	vnpu_bo_mmap(fd2, h_map, &map, &size);
	ASSERT_EQ(SZ_1M, size);
	EXPECT_EQ(SZ_1M, fdinfo_or(_metadata, fd2, "drm-resident-vram", ~0ULL));
	EXPECT_EQ(0, fdinfo_or(_metadata, fd2, "drm-resident-host", ~0ULL));
	EXPECT_TRUE(all_zero(map, size));
	vnpu_fill(map, size, 17);
	ASSERT_EQ(0, munmap(map, size));

	/* The pages stay until the buffer is freed: a second mapping sees the data. */
	vnpu_bo_mmap(fd2, h_map, &map, &size);
	EXPECT_EQ(-1, vnpu_check(map, size, 17));
	ASSERT_EQ(0, munmap(map, size));
	EXPECT_EQ(SZ_1M, fdinfo_or(_metadata, fd2, "drm-resident-vram", ~0ULL));

	vnpu_bo_mmap(fd2, h_host, &hmap, &hsize);
	EXPECT_TRUE(all_zero(hmap, hsize));
	EXPECT_EQ(256 * 1024, fdinfo_or(_metadata, fd2, "drm-resident-host", ~0ULL));
	ASSERT_EQ(0, munmap(hmap, hsize));

	vnpu_gem_close(fd2, h_vram);
	vnpu_gem_close(fd2, h_map);
	vnpu_gem_close(fd2, h_host);
	EXPECT_EQ(0, fdinfo_or(_metadata, fd2, "drm-total-vram", 0));
	EXPECT_EQ(0, fdinfo_or(_metadata, fd2, "drm-resident-vram", 0));
	close(fd2);
}

/* --- Fault injection --------------------------------------------------------- */

/* Records @fd's debugfs knob @name for the teardown to reset; 0 or -errno. */
static int arm_fault_knob(FIXTURE_DATA(bo) *self, int fd, const char *name)
{
	int ret;

	if (self->nknobs == 4)
		return -ENOSPC;
	ret = vnpu_debugfs_path(fd, name, self->knobs[self->nknobs], sizeof(self->knobs[0]));
	if (!ret)
		self->nknobs++;
	return ret;
}

/* Records @fd's fault knobs for the teardown to reset; 0 or -errno. */
static int arm_fault_knobs(FIXTURE_DATA(bo) *self, int fd)
{
	return arm_fault_knob(self, fd, "fail_alloc_nth") ?:
	       arm_fault_knob(self, fd, "fail_alloc_above");
}

/* SKIPs unless the debugfs fault knobs can be used; arms their reset. */
#define require_fault_knobs(fd) do {						\
	if (geteuid())								\
		SKIP(return, "debugfs fault injection needs root");		\
	if (access("/sys/kernel/debug/accel", F_OK))				\
		SKIP(return, "debugfs is not mounted");				\
	ASSERT_EQ(0, arm_fault_knobs(self, fd)) {				\
		TH_LOG("no fail_alloc_nth/fail_alloc_above in debugfs");	\
	}									\
} while (0)

TEST_F(bo, fault_alloc_nth)
{
	struct vnpu_mem_state base, one;
	uint32_t h1 = 0, h2 = 0, h3 = 0;
	uint64_t knob = 1;

	require_fault_knobs(self->fd);
	vnpu_get_mem_state(self->fd, &base);

	ASSERT_EQ(0, vnpu_debugfs_write_u64(self->fd, "fail_alloc_nth", 2));
	ASSERT_EQ(0, vnpu_debugfs_read_u64(self->fd, "fail_alloc_nth", &knob));
	EXPECT_EQ(2, knob);
	vnpu_bo_create(self->fd, SZ_64K, 0, &h1, NULL);
	vnpu_get_mem_state(self->fd, &one);
	vnpu_err_bo_create(ENOMEM, self->fd, SZ_64K, 0);
	vnpu_assert_mem_unchanged(self->fd, &one);
	ASSERT_EQ(0, vnpu_debugfs_read_u64(self->fd, "fail_alloc_nth", &knob));
	EXPECT_EQ(0, knob);
	vnpu_bo_create(self->fd, SZ_64K, 0, &h2, NULL);
	vnpu_bo_create(self->fd, SZ_64K, 0, &h3, NULL);

	/* Host-pinned and mappable creations count too. */
	ASSERT_EQ(0, vnpu_debugfs_write_u64(self->fd, "fail_alloc_nth", 1));
	vnpu_get_mem_state(self->fd, &one);
	vnpu_err_bo_create(ENOMEM, self->fd, SZ_64K, DRM_VNPU_BO_HOST);
	vnpu_assert_mem_unchanged(self->fd, &one);
	ASSERT_EQ(0, vnpu_debugfs_write_u64(self->fd, "fail_alloc_nth", 1));
	vnpu_err_bo_create(ENOMEM, self->fd, SZ_64K, DRM_VNPU_BO_MAPPABLE);
	vnpu_assert_mem_unchanged(self->fd, &one);

	vnpu_gem_close(self->fd, h1);
	vnpu_gem_close(self->fd, h2);
	vnpu_gem_close(self->fd, h3);
	vnpu_assert_mem_unchanged(self->fd, &base);
}

TEST_F(bo, fault_alloc_above)
{
	struct vnpu_mem_state base, mid;
	uint32_t h1 = 0, h2 = 0, h3 = 0;
	uint64_t knob = 0;

	require_fault_knobs(self->fd);
	vnpu_get_mem_state(self->fd, &base);

	ASSERT_EQ(0, vnpu_debugfs_write_u64(self->fd, "fail_alloc_above", SZ_64K));
	ASSERT_EQ(0, vnpu_debugfs_read_u64(self->fd, "fail_alloc_above", &knob));
	EXPECT_EQ(SZ_64K, knob);
	vnpu_bo_create(self->fd, SZ_64K, 0, &h1, NULL);
	vnpu_bo_create(self->fd, SZ_4K, DRM_VNPU_BO_HOST, &h2, NULL);
	vnpu_get_mem_state(self->fd, &mid);
	for (int i = 0; i < 3; i++) {
		vnpu_err_bo_create(ENOMEM, self->fd, SZ_64K + SZ_4K, 0);
		vnpu_err_bo_create(ENOMEM, self->fd, SZ_1M, DRM_VNPU_BO_MAPPABLE);
		vnpu_err_bo_create(ENOMEM, self->fd, SZ_1M, DRM_VNPU_BO_HOST);
	}
	vnpu_assert_mem_unchanged(self->fd, &mid);
	/* The knob stays armed until cleared. */
	ASSERT_EQ(0, vnpu_debugfs_read_u64(self->fd, "fail_alloc_above", &knob));
	EXPECT_EQ(SZ_64K, knob);

	ASSERT_EQ(0, vnpu_debugfs_write_u64(self->fd, "fail_alloc_above", 0));
	vnpu_bo_create(self->fd, SZ_1M, 0, &h3, NULL);
	vnpu_gem_close(self->fd, h1);
	vnpu_gem_close(self->fd, h2);
	vnpu_gem_close(self->fd, h3);
	vnpu_assert_mem_unchanged(self->fd, &base);
}

TEST_F(bo, first_use_failure_is_enomem_and_retryable)
{
	struct drm_vnpu_bo_info info;
	struct vnpu_mem_state base, one;
	uint64_t knob = 1;
	void *map = NULL;
	uint32_t h = 0;
	int fd2;

	require_fault_knobs(self->fd);
	ASSERT_EQ(0, arm_fault_knob(self, self->fd, "fail_nth"));
	fd2 = vnpu_open_nth(0);
	ASSERT_GE(fd2, 0);
	vnpu_get_mem_state(self->fd, &base);
	vnpu_bo_create(fd2, SZ_64K, DRM_VNPU_BO_HOST, &h, NULL);
	vnpu_bo_info(fd2, h, &info);
	vnpu_get_mem_state(self->fd, &one);

	/* The next fallible step is backing the buffer, at its first mmap. */
	ASSERT_EQ(0, vnpu_debugfs_write_u64(self->fd, "fail_nth", 1));
	EXPECT_EQ(-ENOMEM, _vnpu_mmap(fd2, info.mmap_offset, SZ_64K, &map));
	ASSERT_EQ(0, vnpu_debugfs_read_u64(self->fd, "fail_nth", &knob));
	EXPECT_EQ(0, knob);
	EXPECT_EQ(0, fdinfo_or(_metadata, fd2, "drm-resident-host", ~0ULL));
	vnpu_assert_mem_unchanged(self->fd, &one);

	/* The buffer is intact: the next first use backs it. */
	ASSERT_EQ(0, _vnpu_mmap(fd2, info.mmap_offset, SZ_64K, &map));
	EXPECT_TRUE(all_zero(map, SZ_64K));
	EXPECT_EQ(SZ_64K, fdinfo_or(_metadata, fd2, "drm-resident-host", ~0ULL));
	ASSERT_EQ(0, munmap(map, SZ_64K));
	vnpu_gem_close(fd2, h);
	close(fd2);
	vnpu_assert_mem_unchanged(self->fd, &base);
}

TEST_F(bo, fault_knobs_are_per_device)
{
	uint32_t h1 = 0, h2 = 0;

	require_fault_knobs(self->fd);
	if (!open_second_device(self))
		SKIP(return, "needs two vnpu devices");
	require_fault_knobs(self->fd_b);
	ASSERT_EQ(0, vnpu_debugfs_write_u64(self->fd, "fail_alloc_nth", 1));
	vnpu_bo_create(self->fd_b, SZ_4K, 0, &h1, NULL);
	vnpu_bo_create(self->fd_b, SZ_4K, 0, &h2, NULL);
	vnpu_err_bo_create(ENOMEM, self->fd, SZ_4K, 0);
	vnpu_gem_close(self->fd_b, h1);
	vnpu_gem_close(self->fd_b, h2);
}

TEST_HARNESS_MAIN
