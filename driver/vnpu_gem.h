/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_GEM_H__
#define __VNPU_GEM_H__

#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>

#include "vnpu_drv.h"

struct dma_buf;
struct drm_printer;

/**
 * struct vnpu_bo - a vnpu buffer
 * @base: the shmem GEM object holding the backing pages
 * @node: the buffer's device-address range in @region
 * @region: &vnpu_device.vram or &vnpu_device.host
 * @flags: DRM_VNPU_BO_* flags
 * @owner: process charged for the buffer, NULL for imports
 * @pinned: the backing pages are pinned: set on the buffer's first use
 *	(mmap, vmap, dma-buf attachment) under the reservation lock, never
 *	cleared; fdinfo reads it locklessly. Always false for imports
 * @peer_vram: an import of another vnpu device's VRAM buffer; copies
 *	through it are paced by the link to that device
 * @peer_index: index of that device when @peer_vram
 * @kmap: the kernel mapping jobs use (vnpu_bo_vaddr(); for an import, the
 *	exporter's dma-buf vmap), made by the first job that needs it and
 *	kept until the buffer is freed. Set once under the reservation lock
 * @vaddr: @kmap's address, NULL until set; published with a release
 *	store, so jobs read it without the lock (acquire)
 *
 * @node and the charge to @owner are set once at creation under
 * &vnpu_device.mem_lock and released in the free callback, so the memory
 * returns to the device exactly when the last reference is dropped. The
 * shmem file and its pages come later, at first use, under the object's
 * reservation lock (see vnpu_bo_populate_locked()).
 */
struct vnpu_bo {
	struct drm_gem_shmem_object base;
	struct drm_mm_node node;
	struct vnpu_region *region;
	u32 flags;
	struct vnpu_process *owner;
	bool pinned;
	bool peer_vram;
	unsigned int peer_index;
	struct iosys_map kmap;
	void *vaddr;
};

static inline struct vnpu_bo *to_vnpu_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct vnpu_bo, base);
}

static inline u64 vnpu_bo_device_addr(struct vnpu_bo *bo)
{
	return bo->region->base + bo->node.start;
}

struct drm_gem_object *vnpu_gem_create_object(struct drm_device *drm, size_t size);
struct drm_gem_object *vnpu_gem_prime_import(struct drm_device *drm, struct dma_buf *dma_buf);
void vnpu_gem_show_fdinfo(struct drm_printer *p, struct drm_file *file);
void *vnpu_bo_vaddr(struct drm_gem_object *obj);

int vnpu_bo_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int vnpu_bo_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* __VNPU_GEM_H__ */
