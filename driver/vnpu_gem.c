// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/**
 * DOC: vnpu buffers
 *
 * A buffer is a shmem GEM object plus a range of device addresses in VRAM
 * or in the host-pinned range. Creation reserves the range and charges the
 * calling process under &vnpu_device.mem_lock, so -ENOSPC, -EDQUOT and
 * -EMFILE come from BO_CREATE; the free callback gives both back. Handles,
 * mmaps, dma-bufs and importers each hold a GEM reference, so whichever of
 * them goes last frees it.
 *
 * The backing store (the shmem file and its pages) is allocated on the
 * buffer's first use, as a real device's memory manager populates a buffer
 * when it is first bound: the first mmap, job (vmap) or dma-buf attachment
 * creates the file and pins the pages, under the object's reservation lock,
 * and they stay pinned until the buffer is freed. A buffer that is created
 * and closed unused costs the host no file, no page and no zeroing; one that
 * the host cannot back fails its first use with -ENOMEM.
 *
 * Buffers are exported with vnpu's own dma_buf_ops (the DRM defaults), which
 * lets an import recognise a vnpu buffer: on the same device it is the same
 * buffer, on another vnpu device a new buffer in that device's host range
 * backed by the exporter's pages. Other exporters are refused.
 */

#include <linux/dma-buf.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/shmem_fs.h>
#include <linux/sizes.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>

#include "vnpu_compat.h"
#include "vnpu_fault.h"
#include "vnpu_gem.h"
#include "vnpu_mem.h"

VNPU_MODULE_IMPORT_DMA_BUF();

/* VRAM buffers this large get this alignment, as GPUs align large pages. */
#define VNPU_BO_LARGE_ALIGN SZ_64K

static const struct dma_buf_ops vnpu_dmabuf_ops = {
	.cache_sgt_mapping = true,
	.attach = drm_gem_map_attach,
	.detach = drm_gem_map_detach,
	.map_dma_buf = drm_gem_map_dma_buf,
	.unmap_dma_buf = drm_gem_unmap_dma_buf,
	.release = drm_gem_dmabuf_release,
	.mmap = drm_gem_dmabuf_mmap,
	.vmap = drm_gem_dmabuf_vmap,
	.vunmap = drm_gem_dmabuf_vunmap,
};

/* Gives back the address range and the charge; under mem_lock. */
static void vnpu_bo_release_locked(struct vnpu_device *vdev, struct vnpu_bo *bo)
{
	u64 size = bo->base.base.size;

	lockdep_assert_held(&vdev->mem_lock);

	if (drm_mm_node_allocated(&bo->node)) {
		drm_mm_remove_node(&bo->node);
		bo->region->used -= size;
	}
	if (!bo->owner)
		return;
	bo->owner->buffers--;
	if (bo->flags & DRM_VNPU_BO_HOST) {
		bo->owner->host_used -= size;
	} else {
		bo->owner->used -= size;
		bo->owner->bo_count--;
	}
	vdev->bo_count--;
	vnpu_process_put_locked(vdev, bo->owner);
	bo->owner = NULL;
}

static void vnpu_bo_free(struct drm_gem_object *obj)
{
	struct vnpu_device *vdev = to_vnpu_device(obj->dev);
	struct vnpu_bo *bo = to_vnpu_bo(obj);

	/* No job is left: each held a reference. */
	if (bo->vaddr)
		drm_gem_vunmap_unlocked(obj, &bo->kmap);
	if (bo->pinned)
		drm_gem_shmem_unpin(&bo->base);

	mutex_lock(&vdev->mem_lock);
	vnpu_bo_release_locked(vdev, bo);
	mutex_unlock(&vdev->mem_lock);

	/* Also puts the shmem file, if the buffer was ever populated. */
	drm_gem_shmem_free(&bo->base);
}

/*
 * Gives @bo its backing store on first use: the shmem file, then its pages,
 * pinned until the buffer is freed. Under the reservation lock, which
 * serialises concurrent first uses. Imports use the exporter's pages.
 */
static int vnpu_bo_populate_locked(struct vnpu_bo *bo)
{
	struct drm_gem_object *obj = &bo->base.base;
	struct file *filp;
	int ret;

	dma_resv_assert_held(obj->resv);

	if (bo->pinned || obj->import_attach)
		return 0;
	ret = vnpu_fault_inject(to_vnpu_device(obj->dev), VNPU_FAULT_BO_PIN);
	if (ret)
		return ret;
	if (!obj->filp) {
		/* As drm_gem_object_init() and drm_gem_shmem_create() set it up. */
		filp = shmem_file_setup("drm mm object", obj->size, VM_NORESERVE);
		if (IS_ERR(filp))
			return PTR_ERR(filp);
		/* Pinned pages must not come from ZONE_MOVABLE or CMA. */
		mapping_set_gfp_mask(filp->f_mapping,
				     GFP_HIGHUSER | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
		obj->filp = filp;
	}
	/* On failure the file stays, for the next try or the free callback. */
	ret = drm_gem_shmem_pin_locked(&bo->base);
	if (ret)
		return ret;
	WRITE_ONCE(bo->pinned, true);
	return 0;
}

static int vnpu_bo_pin(struct drm_gem_object *obj)
{
	return vnpu_bo_populate_locked(to_vnpu_bo(obj)) ?: drm_gem_shmem_object_pin(obj);
}

static int vnpu_bo_vmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	return vnpu_bo_populate_locked(to_vnpu_bo(obj)) ?: drm_gem_shmem_object_vmap(obj, map);
}

/**
 * vnpu_bo_vaddr - the kernel address of a buffer, for the jobs that use it
 * @obj: the buffer; the caller holds a reference
 *
 * The first call maps the buffer (populating it, vnpu_bo_vmap(); for an
 * import, the exporter's dma-buf vmap) and the mapping stays until the
 * buffer is freed: mapping and unmapping a whole buffer for every job costs
 * page-table work and TLB flushes in proportion to the buffer, not to the
 * bytes the job touches.
 *
 * Returns: the address, or an ERR_PTR.
 */
void *vnpu_bo_vaddr(struct drm_gem_object *obj)
{
	struct vnpu_bo *bo = to_vnpu_bo(obj);
	/* Pairs with the release below: a set address is a complete mapping. */
	void *vaddr = smp_load_acquire(&bo->vaddr);
	struct iosys_map map;
	int ret = 0;

	if (vaddr)
		return vaddr;
	drm_gem_lock(obj);
	vaddr = bo->vaddr;
	if (!vaddr) {
		/* Never I/O memory: shmem pages, or a vnpu exporter's. */
		ret = vnpu_bo_vmap(obj, &map);
		if (!ret) {
			bo->kmap = map;
			vaddr = map.vaddr;
			/* Publishes the mapping to the lockless readers above. */
			smp_store_release(&bo->vaddr, vaddr);
		}
	}
	drm_gem_unlock(obj);
	return ret ? ERR_PTR(ret) : vaddr;
}

static int vnpu_bo_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	struct vnpu_bo *bo = to_vnpu_bo(obj);
	int ret;

	/* The emulated BAR only exposes VRAM buffers created mappable. */
	if (!(bo->flags & (DRM_VNPU_BO_HOST | DRM_VNPU_BO_MAPPABLE)))
		return -EACCES;
	if (!obj->import_attach) {
		dma_resv_lock(obj->resv, NULL);
		ret = vnpu_bo_populate_locked(bo);
		dma_resv_unlock(obj->resv);
		if (ret)
			return ret;
	}
	return drm_gem_shmem_object_mmap(obj, vma);
}

static struct dma_buf *vnpu_bo_export(struct drm_gem_object *obj, int flags)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp_info);
	int ret = vnpu_fault_inject(to_vnpu_device(obj->dev), VNPU_FAULT_BO_EXPORT);

	if (ret)
		return ERR_PTR(ret);

	exp_info.exp_name = KBUILD_MODNAME;
	exp_info.owner = THIS_MODULE;
	exp_info.ops = &vnpu_dmabuf_ops;
	exp_info.size = obj->size;
	exp_info.flags = flags;
	exp_info.priv = obj;
	exp_info.resv = obj->resv;
	return drm_gem_dmabuf_export(obj->dev, &exp_info);
}

static const struct drm_gem_object_funcs vnpu_gem_funcs = {
	.free = vnpu_bo_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = vnpu_bo_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = vnpu_bo_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = vnpu_bo_mmap,
	.export = vnpu_bo_export,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

struct drm_gem_object *vnpu_gem_create_object(struct drm_device *drm, size_t size)
{
	struct vnpu_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.base.funcs = &vnpu_gem_funcs;
	return &bo->base.base;
}

/* Fault injection from debugfs; under mem_lock. */
static bool vnpu_alloc_should_fail_locked(struct vnpu_device *vdev, u64 size)
{
	lockdep_assert_held(&vdev->mem_lock);

	if (vdev->fail_alloc_above && size > vdev->fail_alloc_above)
		return true;
	return vdev->fail_alloc_nth && --vdev->fail_alloc_nth == 0;
}

/*
 * Reserves @bo's device addresses in @bo->region and charges the calling
 * process. -EMFILE (buffer count) and -EDQUOT are checked before -ENOSPC:
 * over a limit is the caller's problem whatever the device's state.
 */
static int vnpu_bo_reserve(struct vnpu_device *vdev, struct vnpu_bo *bo)
{
	u64 size = bo->base.base.size;
	bool host = bo->flags & DRM_VNPU_BO_HOST;
	u64 align = !host && size >= VNPU_BO_LARGE_ALIGN ? VNPU_BO_LARGE_ALIGN : PAGE_SIZE;
	struct vnpu_process *proc;
	int ret;

	mutex_lock(&vdev->mem_lock);
	if (vnpu_alloc_should_fail_locked(vdev, size)) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	proc = vnpu_process_get_locked(vdev, task_tgid(current));
	if (!proc) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	if (proc->buffers >= vdev->max_bos) {
		ret = -EMFILE;
		goto err_put_proc;
	}
	if (!host && size > proc->soft_limit - min(proc->used, proc->soft_limit)) {
		ret = -EDQUOT;
		goto err_put_proc;
	}
	ret = drm_mm_insert_node_in_range(&bo->region->mm, &bo->node, size, align, 0,
					  0, bo->region->size, DRM_MM_INSERT_BEST);
	if (ret) {
		ret = -ENOSPC;
		goto err_put_proc;
	}

	bo->region->used += size;
	bo->owner = proc;
	proc->buffers++;
	vdev->bo_count++;
	if (host) {
		proc->host_used += size;
	} else {
		proc->used += size;
		proc->peak = max(proc->peak, proc->used);
		proc->bo_count++;
		vdev->vram_peak = max(vdev->vram_peak, vdev->vram.used);
	}
	mutex_unlock(&vdev->mem_lock);
	return 0;

err_put_proc:
	vnpu_process_put_locked(vdev, proc);
out_unlock:
	mutex_unlock(&vdev->mem_lock);
	return ret;
}

static int vnpu_bo_create_check(struct vnpu_device *vdev, struct drm_vnpu_bo_create *args)
{
	struct vnpu_region *region;

	if (args->flags & ~DRM_VNPU_BO_FLAGS || args->handle || args->device_addr)
		return -EINVAL;
	if ((args->flags & DRM_VNPU_BO_HOST) && (args->flags & DRM_VNPU_BO_MAPPABLE))
		return -EINVAL;
	region = args->flags & DRM_VNPU_BO_HOST ? &vdev->host : &vdev->vram;
	/* Checked before rounding, so the rounding cannot overflow. */
	if (!args->size || args->size > region->size)
		return -EINVAL;
	return 0;
}

/*
 * A shmem GEM object without its shmem file yet: vnpu_bo_populate_locked()
 * adds the file and the pages on first use.
 */
static struct vnpu_bo *vnpu_bo_alloc(struct drm_device *drm, size_t size)
{
	struct drm_gem_object *obj = vnpu_gem_create_object(drm, size);

	if (IS_ERR(obj))
		return ERR_CAST(obj);
	drm_gem_private_object_init(drm, obj, size);
	INIT_LIST_HEAD(&to_drm_gem_shmem_obj(obj)->madv_list);
	return to_vnpu_bo(obj);
}

int vnpu_bo_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct vnpu_device *vdev = to_vnpu_device(drm);
	struct drm_vnpu_bo_create *args = data;
	struct drm_gem_object *obj;
	struct vnpu_bo *bo;
	u32 handle;
	int idx, ret;

	ret = vnpu_bo_create_check(vdev, args);
	if (ret)
		return ret;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	ret = vnpu_fault_inject(vdev, VNPU_FAULT_BO_SHMEM);
	if (ret)
		goto out_dev_exit;
	bo = vnpu_bo_alloc(drm, PAGE_ALIGN(args->size));
	if (IS_ERR(bo)) {
		ret = PTR_ERR(bo);
		goto out_dev_exit;
	}
	obj = &bo->base.base;
	bo->flags = args->flags;
	bo->region = args->flags & DRM_VNPU_BO_HOST ? &vdev->host : &vdev->vram;

	ret = vnpu_fault_inject(vdev, VNPU_FAULT_BO_RESERVE) ?: vnpu_bo_reserve(vdev, bo);
	if (ret)
		goto out_put;
	ret = vnpu_fault_inject(vdev, VNPU_FAULT_BO_MMAP_OFFSET) ?:
	      drm_gem_create_mmap_offset(obj);
	if (ret)
		goto out_put;
	ret = vnpu_fault_inject(vdev, VNPU_FAULT_BO_HANDLE) ?:
	      drm_gem_handle_create(file, obj, &handle);
	if (ret)
		goto out_put;

	args->handle = handle;
	args->device_addr = vnpu_bo_device_addr(bo);
out_put:
	/* On success the handle holds the buffer; on failure this frees it. */
	drm_gem_object_put(obj);
out_dev_exit:
	drm_dev_exit(idx);
	return ret;
}

int vnpu_bo_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_vnpu_bo_info *args = data;
	struct drm_gem_object *obj;
	struct vnpu_bo *bo;
	int ret;

	if (args->flags || args->pad)
		return -EINVAL;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_vnpu_bo(obj);

	ret = vnpu_fault_inject(to_vnpu_device(drm), VNPU_FAULT_BO_INFO) ?:
	      drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->size = obj->size;
		args->device_addr = vnpu_bo_device_addr(bo);
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
		args->bo_flags = bo->flags;
	}
	drm_gem_object_put(obj);
	return ret;
}

/* Gives an imported buffer an address in this device's host range. */
static int vnpu_bo_reserve_import(struct vnpu_device *vdev, struct vnpu_bo *bo)
{
	int ret;

	bo->flags = DRM_VNPU_BO_HOST | DRM_VNPU_BO_IMPORTED;
	bo->region = &vdev->host;

	mutex_lock(&vdev->mem_lock);
	ret = drm_mm_insert_node_in_range(&vdev->host.mm, &bo->node, bo->base.base.size,
					  PAGE_SIZE, 0, 0, vdev->host.size,
					  DRM_MM_INSERT_BEST);
	if (!ret)
		vdev->host.used += bo->base.base.size;
	mutex_unlock(&vdev->mem_lock);
	return ret ? -ENOSPC : 0;
}

struct drm_gem_object *vnpu_gem_prime_import(struct drm_device *drm, struct dma_buf *dma_buf)
{
	struct drm_gem_object *obj, *exported;
	struct vnpu_bo *bo;
	int ret;

	if (dma_buf->ops != &vnpu_dmabuf_ops)
		return ERR_PTR(-EOPNOTSUPP);

	obj = dma_buf->priv;
	if (obj->dev == drm) {
		/* Our own buffer: the importer shares it. */
		drm_gem_object_get(obj);
		return obj;
	}

	ret = vnpu_fault_inject(to_vnpu_device(drm), VNPU_FAULT_BO_IMPORT);
	if (ret)
		return ERR_PTR(ret);
	exported = obj;
	obj = drm_gem_prime_import_dev(drm, dma_buf, drm->dev);
	if (IS_ERR(obj))
		return obj;
	bo = to_vnpu_bo(obj);
	ret = vnpu_fault_inject(to_vnpu_device(drm), VNPU_FAULT_BO_IMPORT_RESERVE) ?:
	      vnpu_bo_reserve_import(to_vnpu_device(drm), bo);
	if (ret) {
		drm_gem_object_put(obj);
		return ERR_PTR(ret);
	}
	/* The dma-buf holds the exporter's object, whose flags never change. */
	if (!(to_vnpu_bo(exported)->flags & DRM_VNPU_BO_HOST)) {
		bo->peer_vram = true;
		bo->peer_index = to_vnpu_device(exported->dev)->index;
	}
	return obj;
}

void vnpu_gem_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct drm_memory_stats vram = {}, host = {};
	struct drm_gem_object *obj;
	u32 handles = 0;
	int id;

	/*
	 * table_lock is a spinlock: only read fields fixed at creation, and
	 * @pinned, which changes once, from false to true.
	 */
	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		struct drm_memory_stats *stats =
			to_vnpu_bo(obj)->flags & DRM_VNPU_BO_HOST ? &host : &vram;

		handles++;

		if (drm_gem_object_is_shared_for_memory_stats(obj))
			stats->shared += obj->size;
		else
			stats->private += obj->size;
		/* Populated buffers are pinned; imports are the exporter's pinned pages. */
		if (READ_ONCE(to_vnpu_bo(obj)->pinned) || obj->import_attach)
			stats->resident += obj->size;
	}
	spin_unlock(&file->table_lock);

	drm_print_memory_stats(p, &vram, DRM_GEM_OBJECT_RESIDENT, "vram");
	drm_print_memory_stats(p, &host, DRM_GEM_OBJECT_RESIDENT, "host");
	drm_printf(p, "vnpu-buffers:\t%u\n", handles);
}
