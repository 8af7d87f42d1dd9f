// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/**
 * DOC: vnpu debugfs
 *
 * Fault injection for testing error paths, in
 * /sys/kernel/debug/accel/vnpu.N/ (N: the device index), root only (0600):
 *
 * - fail_alloc_nth: write N > 0 and the Nth next buffer creation on the
 *   device fails with -ENOMEM; the knob then reads 0 again. 0 turns it off.
 * - fail_alloc_above: write a byte count and every buffer creation larger
 *   than it fails with -ENOMEM until 0 is written.
 * - allow_hang: 1 lets submits contain DRM_VNPU_CMD_HANG (otherwise they
 *   fail with -EPERM); 0, the default, refuses them again.
 * - fail_nth: write N > 0 and the Nth next fallible step of any ioctl or
 *   open on the device fails (see "vnpu fault injection"); reads the steps
 *   still to go, 0 once the failure was injected. 0 turns it off.
 * - fail_sites: read-only; one line per fallible step, "NAME COUNT", with
 *   the failures fail_nth injected there since the device was bound.
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "vnpu_debugfs.h"

static int vnpu_fail_alloc_nth_get(void *data, u64 *val)
{
	struct vnpu_device *vdev = data;

	mutex_lock(&vdev->mem_lock);
	*val = vdev->fail_alloc_nth;
	mutex_unlock(&vdev->mem_lock);
	return 0;
}

static int vnpu_fail_alloc_nth_set(void *data, u64 val)
{
	struct vnpu_device *vdev = data;

	if (val > U32_MAX)
		return -EINVAL;
	mutex_lock(&vdev->mem_lock);
	vdev->fail_alloc_nth = val;
	mutex_unlock(&vdev->mem_lock);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(vnpu_fail_alloc_nth_fops, vnpu_fail_alloc_nth_get,
			 vnpu_fail_alloc_nth_set, "%llu\n");

static int vnpu_fail_alloc_above_get(void *data, u64 *val)
{
	struct vnpu_device *vdev = data;

	mutex_lock(&vdev->mem_lock);
	*val = vdev->fail_alloc_above;
	mutex_unlock(&vdev->mem_lock);
	return 0;
}

static int vnpu_fail_alloc_above_set(void *data, u64 val)
{
	struct vnpu_device *vdev = data;

	mutex_lock(&vdev->mem_lock);
	vdev->fail_alloc_above = val;
	mutex_unlock(&vdev->mem_lock);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(vnpu_fail_alloc_above_fops, vnpu_fail_alloc_above_get,
			 vnpu_fail_alloc_above_set, "%llu\n");

static int vnpu_allow_hang_get(void *data, u64 *val)
{
	struct vnpu_device *vdev = data;

	*val = READ_ONCE(vdev->allow_hang);
	return 0;
}

static int vnpu_allow_hang_set(void *data, u64 val)
{
	struct vnpu_device *vdev = data;

	if (val > 1)
		return -EINVAL;
	/* A lone flag read once per submit: no lock needed. */
	WRITE_ONCE(vdev->allow_hang, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(vnpu_allow_hang_fops, vnpu_allow_hang_get, vnpu_allow_hang_set,
			 "%llu\n");

static int vnpu_fail_nth_get(void *data, u64 *val)
{
	struct vnpu_device *vdev = data;

	*val = max(atomic_read(&vdev->fail_nth), 0);
	return 0;
}

static int vnpu_fail_nth_set(void *data, u64 val)
{
	struct vnpu_device *vdev = data;

	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(&vdev->fail_nth, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(vnpu_fail_nth_fops, vnpu_fail_nth_get, vnpu_fail_nth_set, "%llu\n");

static int vnpu_fail_sites_show(struct seq_file *m, void *unused)
{
	struct vnpu_device *vdev = m->private;
	unsigned int site;

	for (site = 0; site < VNPU_FAULT_SITES; site++)
		seq_printf(m, "%s %d\n", vnpu_fault_site_name(site),
			   atomic_read(&vdev->fail_hits[site]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vnpu_fail_sites);

void vnpu_debugfs_init(struct vnpu_device *vdev)
{
	struct dentry *root = vdev->drm.debugfs_root;

	debugfs_create_file_unsafe("fail_alloc_nth", 0600, root, vdev,
				   &vnpu_fail_alloc_nth_fops);
	debugfs_create_file_unsafe("fail_alloc_above", 0600, root, vdev,
				   &vnpu_fail_alloc_above_fops);
	debugfs_create_file_unsafe("allow_hang", 0600, root, vdev, &vnpu_allow_hang_fops);
	debugfs_create_file_unsafe("fail_nth", 0600, root, vdev, &vnpu_fail_nth_fops);
	debugfs_create_file("fail_sites", 0400, root, vdev, &vnpu_fail_sites_fops);
}
