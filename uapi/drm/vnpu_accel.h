/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __UAPI_VNPU_ACCEL_H__
#define __UAPI_VNPU_ACCEL_H__

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: vnpu uAPI overview
 *
 * vnpu is a virtual NPU. Each device is a DRM accel device
 * (``/dev/accel/accelN``) whose DRM driver name is "vnpu". Userspace finds
 * its devices by opening every accel node and comparing the name returned by
 * DRM_IOCTL_VERSION.
 *
 * Every vnpu ioctl argument is a struct of naturally aligned __u32/__u64
 * members. Padding and reserved members must be zero. Structs grow only at
 * their end:
 *
 * - a struct shorter than the first version of its ioctl fails with -EINVAL;
 * - a struct longer than the kernel knows is accepted only when every byte
 *   past the kernel's size is zero, otherwise the ioctl fails with -E2BIG;
 * - an ioctl number inside the driver range that the kernel does not know
 *   fails with -ENOTTY.
 *
 * The version of this interface is DRM_VNPU_UAPI_MAJOR.DRM_VNPU_UAPI_MINOR
 * and is readable with %DRM_VNPU_PARAM_UAPI_VERSION. A minor bump adds
 * ioctls, params or struct members; a major bump would break userspace and
 * is not planned.
 */

/**
 * DOC: vnpu memory model
 *
 * Each device has two kinds of buffer, both GEM objects with a device
 * address:
 *
 * - VRAM buffers live in the device's emulated memory, whose size is the
 *   vram_size_mb module parameter. Their addresses lie in
 *   [%DRM_VNPU_VRAM_BASE, %DRM_VNPU_VRAM_BASE + VRAM size). A real allocator
 *   places them, so the memory fragments as on hardware. The host can map a
 *   VRAM buffer only if it was created with %DRM_VNPU_BO_MAPPABLE (the
 *   emulated BAR).
 * - Host-pinned buffers (%DRM_VNPU_BO_HOST) live in system memory, always
 *   mappable, with addresses in their own range starting at
 *   %DRM_VNPU_HOST_BASE. Buffers imported from another device through a
 *   dma-buf get addresses in this range too.
 *
 * Buffers are page-aligned; VRAM buffers of 64 KiB or more are 64 KiB
 * aligned. Backing pages are allocated when a buffer is created and freed
 * when its last user (handle, mapping, dma-buf) is gone.
 *
 * Each process (thread group) has a quota on VRAM per device, counted across
 * all its open files: a hard limit that only CAP_SYS_ADMIN may raise, and a
 * soft limit, the one enforced, that the process may move up to the hard
 * one. An allocation over the soft limit fails with -EDQUOT; one that does
 * not fit in the free VRAM fails with -ENOSPC.
 */

#define DRM_VNPU_UAPI_MAJOR 1
#define DRM_VNPU_UAPI_MINOR 7

/* Start of the VRAM device-address range. */
#define DRM_VNPU_VRAM_BASE 0x100000000ULL
/* Start of the host-pinned (and imported) device-address range. */
#define DRM_VNPU_HOST_BASE 0x100000000000ULL

#define DRM_VNPU_GET_PARAM 0x00
#define DRM_VNPU_BO_CREATE 0x01
#define DRM_VNPU_BO_INFO 0x02
#define DRM_VNPU_QUOTA_GET 0x03
#define DRM_VNPU_QUOTA_SET 0x04
#define DRM_VNPU_QUEUE_CREATE 0x05
#define DRM_VNPU_QUEUE_DESTROY 0x06
#define DRM_VNPU_SUBMIT 0x07
#define DRM_VNPU_QUEUE_INFO 0x08
#define DRM_VNPU_TOPOLOGY 0x09

#define DRM_IOCTL_VNPU_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_GET_PARAM, struct drm_vnpu_get_param)
#define DRM_IOCTL_VNPU_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_BO_CREATE, struct drm_vnpu_bo_create)
#define DRM_IOCTL_VNPU_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_BO_INFO, struct drm_vnpu_bo_info)
#define DRM_IOCTL_VNPU_QUOTA_GET \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_QUOTA_GET, struct drm_vnpu_quota)
#define DRM_IOCTL_VNPU_QUOTA_SET \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_QUOTA_SET, struct drm_vnpu_quota)
#define DRM_IOCTL_VNPU_QUEUE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_QUEUE_CREATE, struct drm_vnpu_queue_create)
#define DRM_IOCTL_VNPU_QUEUE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VNPU_QUEUE_DESTROY, struct drm_vnpu_queue_destroy)
#define DRM_IOCTL_VNPU_SUBMIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VNPU_SUBMIT, struct drm_vnpu_submit)
#define DRM_IOCTL_VNPU_QUEUE_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_QUEUE_INFO, struct drm_vnpu_queue_info)
#define DRM_IOCTL_VNPU_TOPOLOGY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VNPU_TOPOLOGY, struct drm_vnpu_topology)

/**
 * enum drm_vnpu_param - device facts readable with DRM_IOCTL_VNPU_GET_PARAM
 * @DRM_VNPU_PARAM_UAPI_VERSION: (major << 16) | minor of this header.
 * @DRM_VNPU_PARAM_DEVICE_INDEX: index of the device within the vnpu module
 *	(0..num_devices-1); stable for the life of the module, independent of
 *	the accel minor number.
 * @DRM_VNPU_PARAM_VRAM_SIZE: emulated device memory in bytes.
 * @DRM_VNPU_PARAM_NUM_COMPUTE_ENGINES: number of compute engines.
 * @DRM_VNPU_PARAM_NUM_COPY_ENGINES: number of copy engines.
 * @DRM_VNPU_PARAM_NUMA_NODE: host NUMA node the device is attached to, or
 *	%DRM_VNPU_NUMA_NODE_NONE.
 * @DRM_VNPU_PARAM_HEALTH: current &enum drm_vnpu_health.
 * @DRM_VNPU_PARAM_CAPABILITIES: bitmask of DRM_VNPU_CAP_* (none defined in
 *	version 1.1, so 0).
 * @DRM_VNPU_PARAM_VRAM_USED: VRAM bytes allocated by all processes.
 * @DRM_VNPU_PARAM_VRAM_LARGEST_FREE: largest contiguous free VRAM range in
 *	bytes, the largest buffer that can be created now (fragmentation).
 * @DRM_VNPU_PARAM_HOST_SIZE: size of the host-pinned address range in bytes.
 * @DRM_VNPU_PARAM_MAX_QUEUES_PER_PROCESS: queues one process may have on
 *	the device at a time, across all its open files (since 1.2).
 * @DRM_VNPU_PARAM_NUM_DEVICES: devices the module created, the length of a
 *	DRM_IOCTL_VNPU_TOPOLOGY row (since 1.4).
 * @DRM_VNPU_PARAM_TOPOLOGY_NODE: id of the node (group of boards) the
 *	device belongs to (since 1.4).
 * @DRM_VNPU_PARAM_TOPOLOGY_BOARD: id of the board (devices behind one
 *	switch) the device belongs to; unique across nodes (since 1.4).
 * @DRM_VNPU_PARAM_COUNT: number of params; not a param.
 */
enum drm_vnpu_param {
	DRM_VNPU_PARAM_UAPI_VERSION = 0,
	DRM_VNPU_PARAM_DEVICE_INDEX = 1,
	DRM_VNPU_PARAM_VRAM_SIZE = 2,
	DRM_VNPU_PARAM_NUM_COMPUTE_ENGINES = 3,
	DRM_VNPU_PARAM_NUM_COPY_ENGINES = 4,
	DRM_VNPU_PARAM_NUMA_NODE = 5,
	DRM_VNPU_PARAM_HEALTH = 6,
	DRM_VNPU_PARAM_CAPABILITIES = 7,
	DRM_VNPU_PARAM_VRAM_USED = 8,
	DRM_VNPU_PARAM_VRAM_LARGEST_FREE = 9,
	DRM_VNPU_PARAM_HOST_SIZE = 10,
	DRM_VNPU_PARAM_MAX_QUEUES_PER_PROCESS = 11,
	DRM_VNPU_PARAM_NUM_DEVICES = 12,
	DRM_VNPU_PARAM_TOPOLOGY_NODE = 13,
	DRM_VNPU_PARAM_TOPOLOGY_BOARD = 14,
	DRM_VNPU_PARAM_COUNT,
};

/* Value of %DRM_VNPU_PARAM_NUMA_NODE for a device bound to no NUMA node. */
#define DRM_VNPU_NUMA_NODE_NONE (~0ULL)

/**
 * enum drm_vnpu_health - device health
 * @DRM_VNPU_HEALTH_OK: the device runs work normally.
 * @DRM_VNPU_HEALTH_DEGRADED: the device runs work but recovered from
 *	repeated hangs recently.
 * @DRM_VNPU_HEALTH_NEEDS_RESET: the device refuses work until reset.
 */
enum drm_vnpu_health {
	DRM_VNPU_HEALTH_OK = 0,
	DRM_VNPU_HEALTH_DEGRADED = 1,
	DRM_VNPU_HEALTH_NEEDS_RESET = 2,
};

/**
 * struct drm_vnpu_get_param - read one device fact
 *
 * Errors: -EINVAL for an unknown @param or non-zero @flags; -ENODEV once the
 * device has been unplugged.
 */
struct drm_vnpu_get_param {
	/** @param: in, one of &enum drm_vnpu_param. */
	__u32 param;
	/** @flags: in, reserved, must be zero. */
	__u32 flags;
	/** @value: out, the value of @param. */
	__u64 value;
};

/**
 * DOC: vnpu topology
 *
 * The devices of the module sit in a described machine (module parameters
 * devices_per_board, boards_per_node, link_bandwidth_mbps,
 * link_latency_ns): devices on one board, boards in one node, nodes in the
 * system. The link between two devices is of the nearest class they share,
 * DRM_VNPU_LINK_*; nearer classes are never slower. A copy whose source or
 * destination is another device's VRAM (a buffer imported through a
 * dma-buf) takes at least the link's latency plus bytes / bandwidth.
 */

/* Link classes between two devices, nearest first. */
#define DRM_VNPU_LINK_SELF 0x0u
#define DRM_VNPU_LINK_BOARD 0x1u
#define DRM_VNPU_LINK_NODE 0x2u
#define DRM_VNPU_LINK_SYSTEM 0x3u

/**
 * struct drm_vnpu_link - the link from this device to one device (1.4)
 */
struct drm_vnpu_link {
	/** @link_class: DRM_VNPU_LINK_*. */
	__u32 link_class;
	/** @bandwidth_mbps: MB/s (10^6 bytes per second); 0 for self. */
	__u32 bandwidth_mbps;
	/** @latency_ns: latency of one transfer in ns; 0 for self. */
	__u32 latency_ns;
	/** @pad: zero. */
	__u32 pad;
};

/**
 * struct drm_vnpu_topology - the device's row of the link matrix (1.4)
 *
 * Writes the links from this device to devices 0 .. min(@count, N) - 1 of
 * the module, in device index order, to @links, and sets @count to N, the
 * number of devices (%DRM_VNPU_PARAM_NUM_DEVICES). @count 0 (with @links
 * 0) only asks for N.
 *
 * Errors: -EINVAL for non-zero @flags or @pad, or @links 0 with a non-zero
 * @count; -EFAULT when @links is not writable; -ENODEV once the device has
 * been unplugged.
 */
struct drm_vnpu_topology {
	/** @count: in, entries @links holds; out, devices of the module. */
	__u32 count;
	/** @flags: in, reserved, must be zero. */
	__u32 flags;
	/** @links: in, user pointer to @count &struct drm_vnpu_link. */
	__u64 links;
	/** @pad: must be zero. */
	__u64 pad;
};

/* The buffer lives in host-pinned system memory instead of VRAM. */
#define DRM_VNPU_BO_HOST 0x1u
/* A VRAM buffer the host may mmap (host-pinned buffers always are). */
#define DRM_VNPU_BO_MAPPABLE 0x2u
/* Flags accepted by DRM_IOCTL_VNPU_BO_CREATE. */
#define DRM_VNPU_BO_FLAGS (DRM_VNPU_BO_HOST | DRM_VNPU_BO_MAPPABLE)
/* Reported by DRM_IOCTL_VNPU_BO_INFO: the buffer was imported (dma-buf). */
#define DRM_VNPU_BO_IMPORTED 0x80000000u

/**
 * struct drm_vnpu_bo_create - create a buffer
 *
 * Errors: -EINVAL for @size 0, a size that overflows when rounded up to a
 * page, a size larger than the whole region, unknown @flags,
 * %DRM_VNPU_BO_MAPPABLE together with %DRM_VNPU_BO_HOST, or a non-zero
 * @handle or @device_addr on input; -ENOSPC when the region has no free
 * range large enough (full or fragmented); -EDQUOT when the buffer would
 * take the calling process over its VRAM soft limit; -EMFILE when the
 * calling process already holds the module's max_bos_per_process buffers
 * it created on the device; -ENOMEM when the host cannot allocate the
 * buffer object (or fault injection says so).
 *
 * The device addresses and the charge are taken here; the host pages behind
 * the buffer are allocated (zeroed) and pinned at its first use: the first
 * mmap, a job that names it, or a dma-buf attachment. That first use fails
 * with -ENOMEM if the host cannot provide them, and the buffer stays usable.
 */
struct drm_vnpu_bo_create {
	/** @size: in, bytes; rounded up to a whole page. */
	__u64 size;
	/** @flags: in, DRM_VNPU_BO_* creation flags. */
	__u32 flags;
	/** @handle: out, GEM handle of the new buffer; must be zero on input. */
	__u32 handle;
	/** @device_addr: out, device address; must be zero on input. */
	__u64 device_addr;
};

/**
 * struct drm_vnpu_bo_info - query a buffer
 *
 * Errors: -ENOENT for a handle the file does not hold; -EINVAL for non-zero
 * @flags or @pad.
 */
struct drm_vnpu_bo_info {
	/** @handle: in, GEM handle. */
	__u32 handle;
	/** @flags: in, reserved, must be zero. */
	__u32 flags;
	/** @size: out, size in bytes (after rounding). */
	__u64 size;
	/** @device_addr: out, device address. */
	__u64 device_addr;
	/**
	 * @mmap_offset: out, offset to pass to mmap() on the device fd. mmap
	 * of a VRAM buffer without %DRM_VNPU_BO_MAPPABLE fails with -EACCES;
	 * a mapping larger than the buffer fails with -EINVAL; the first
	 * mapping of a buffer fails with -ENOMEM if the host cannot back it.
	 */
	__u64 mmap_offset;
	/** @bo_flags: out, DRM_VNPU_BO_* flags of the buffer. */
	__u32 bo_flags;
	/** @pad: must be zero. */
	__u32 pad;
};

/* No limit: the value of a limit that is not set. */
#define DRM_VNPU_QUOTA_UNLIMITED (~0ULL)

/* DRM_IOCTL_VNPU_QUOTA_SET: change the soft limit. */
#define DRM_VNPU_QUOTA_SET_SOFT 0x1u
/* DRM_IOCTL_VNPU_QUOTA_SET: change the hard limit. */
#define DRM_VNPU_QUOTA_SET_HARD 0x2u
#define DRM_VNPU_QUOTA_SET_FLAGS (DRM_VNPU_QUOTA_SET_SOFT | DRM_VNPU_QUOTA_SET_HARD)

/**
 * struct drm_vnpu_quota - a process's VRAM quota and usage on this device
 *
 * DRM_IOCTL_VNPU_QUOTA_GET reads the limits and usage of @pid (@flags must
 * be zero). DRM_IOCTL_VNPU_QUOTA_SET changes the limits named in @flags and
 * then returns the same as GET. A process that never used the device has
 * the device's default limits (sysfs default_quota_bytes) and zero usage.
 *
 * Rules, as for setrlimit(): the soft limit may not exceed the hard limit;
 * any process may lower its own hard limit; raising a hard limit, or
 * changing the limits of another process, needs CAP_SYS_ADMIN. Limits
 * below the current usage are allowed and block further allocations only.
 *
 * Errors: -EINVAL for unknown @flags, non-zero @pad, a soft limit above the
 * hard limit; -EPERM for a change that needs CAP_SYS_ADMIN without it;
 * -ESRCH when @pid names no process; -EPERM for reading another process
 * without CAP_SYS_ADMIN.
 */
struct drm_vnpu_quota {
	/** @pid: in, a process id, or 0 for the calling process. */
	__s32 pid;
	/** @flags: in, DRM_VNPU_QUOTA_SET_* for SET, zero for GET. */
	__u32 flags;
	/** @soft_limit: in (SET) / out, bytes or %DRM_VNPU_QUOTA_UNLIMITED. */
	__u64 soft_limit;
	/** @hard_limit: in (SET) / out, bytes or %DRM_VNPU_QUOTA_UNLIMITED. */
	__u64 hard_limit;
	/** @used: out, VRAM bytes the process's buffers hold now. */
	__u64 used;
	/** @peak: out, highest @used since the process first used the device. */
	__u64 peak;
	/** @bo_count: out, VRAM buffers the process holds. */
	__u64 bo_count;
	/** @host_used: out, host-pinned bytes (not limited by the quota). */
	__u64 host_used;
	/** @pad: must be zero. */
	__u64 pad;
};

/**
 * DOC: vnpu execution
 *
 * Work runs on engines: each device has compute engines and copy engines.
 * A client creates queues with DRM_IOCTL_VNPU_QUEUE_CREATE, each bound to
 * one engine class and one priority, and submits jobs to them with
 * DRM_IOCTL_VNPU_SUBMIT. A job is a list of commands (&struct
 * drm_vnpu_cmd) run in order on one engine of the queue's class; jobs of one
 * queue run in submission order. Higher-priority queues are served first
 * when an engine has work from several queues.
 *
 * Every device address a command touches must lie inside one buffer the
 * submitting file holds a handle to (created or imported); this is checked
 * at submit. A job keeps its buffers alive until it is done.
 *
 * Completion is reported through syncobjs: a job can wait for syncobj
 * fences (binary, or a point on a timeline) and signal one syncobj (replace
 * its fence, or add a timeline point). A job that fails or times out
 * signals its fence with an error: -ETIMEDOUT when it ran longer than its
 * queue's timeout (the job_timeout_ms module parameter unless the queue sets
 * its own), -EIO when a root reset of the device (sysfs ``reset``) cancelled
 * it, -ECANCELED when it was queued behind a job of the same queue that
 * timed out, the error of a %DRM_VNPU_CMD_FAULT, -ESRCH when its queue was
 * destroyed by a killed process before it ran, -ENODEV when the device was
 * unplugged. DRM_IOCTL_VNPU_QUEUE_INFO reports which job and command of a
 * queue failed last and with which error.
 *
 * A job that times out makes its queue guilty: the queue refuses further
 * submits with -ECANCELED for the rest of its life (destroy it and create a
 * new one), and its jobs not yet started fail with -ECANCELED. Other queues
 * keep running. Each timeout also counts against the device health: two
 * timeouts within %DRM_VNPU_HEALTH_WINDOW_MS make it
 * %DRM_VNPU_HEALTH_DEGRADED, three make it %DRM_VNPU_HEALTH_NEEDS_RESET, in
 * which state every submit fails with -EIO until root writes 1 to the sysfs
 * ``reset`` attribute.
 */

/* Window in which timeouts count against the device health, in ms. */
#define DRM_VNPU_HEALTH_WINDOW_MS 60000
/* Timeouts within the window that make the device degraded. */
#define DRM_VNPU_HEALTH_DEGRADED_HANGS 2
/* Timeouts within the window after which the device needs a reset. */
#define DRM_VNPU_HEALTH_RESET_HANGS 3

/* Engine classes of DRM_IOCTL_VNPU_QUEUE_CREATE. */
#define DRM_VNPU_ENGINE_COMPUTE 0x0u
#define DRM_VNPU_ENGINE_COPY 0x1u

/* Queue priorities; %DRM_VNPU_PRIORITY_REALTIME needs CAP_SYS_NICE. */
#define DRM_VNPU_PRIORITY_LOW 0x0u
#define DRM_VNPU_PRIORITY_NORMAL 0x1u
#define DRM_VNPU_PRIORITY_HIGH 0x2u
#define DRM_VNPU_PRIORITY_REALTIME 0x3u

/**
 * struct drm_vnpu_queue_create - create a queue
 *
 * A queue belongs to the file that created it and is destroyed with it.
 * Queue ids are per file and never 0.
 *
 * @timeout_ms (since 1.3; older callers pass the 16-byte struct, which
 * means 0) is the time one job of the queue may execute before it is
 * stopped with -ETIMEDOUT; 0 means the job_timeout_ms module parameter.
 *
 * Errors: -EINVAL for an unknown @engine_class or @priority, non-zero
 * @flags or @pad, a non-zero @queue_id on input, @timeout_ms above
 * %DRM_VNPU_MAX_TIMEOUT_MS; -EPERM for
 * %DRM_VNPU_PRIORITY_REALTIME without CAP_SYS_NICE; -EMFILE when the calling
 * process already has %DRM_VNPU_PARAM_MAX_QUEUES_PER_PROCESS queues on the
 * device; -ENOMEM; -ENODEV once the device has been unplugged.
 */
struct drm_vnpu_queue_create {
	/** @engine_class: in, DRM_VNPU_ENGINE_*. */
	__u32 engine_class;
	/** @priority: in, DRM_VNPU_PRIORITY_*. */
	__u32 priority;
	/** @flags: in, reserved, must be zero. */
	__u32 flags;
	/** @queue_id: out, id of the new queue; must be zero on input. */
	__u32 queue_id;
	/** @timeout_ms: in, per-job timeout of the queue, 0 for the default. */
	__u32 timeout_ms;
	/** @pad: must be zero. */
	__u32 pad;
};

/* Largest per-queue timeout, in ms (one hour). */
#define DRM_VNPU_MAX_TIMEOUT_MS 3600000u

/* DRM_IOCTL_VNPU_QUEUE_INFO: set the queue's timeout to @timeout_ms first. */
#define DRM_VNPU_QUEUE_INFO_SET_TIMEOUT 0x1u
/* &drm_vnpu_queue_info.state: a job of the queue timed out. */
#define DRM_VNPU_QUEUE_STATE_GUILTY 0x1u
/* &drm_vnpu_queue_info.last_error_cmd when no command was at fault. */
#define DRM_VNPU_NO_CMD 0xffffffffu

/**
 * struct drm_vnpu_queue_info - counters and error state of a queue (1.3)
 *
 * Jobs are numbered per queue in submission order from 1 (the Nth
 * successful DRM_IOCTL_VNPU_SUBMIT on the queue is job N). A job counts as
 * completed or failed once the scheduler has released it, shortly after
 * its fence signalled; @submitted - @completed - @failed jobs are pending.
 *
 * With %DRM_VNPU_QUEUE_INFO_SET_TIMEOUT in @flags, @timeout_ms (1 to
 * %DRM_VNPU_MAX_TIMEOUT_MS, or 0 for the module default) becomes the
 * queue's timeout for jobs that start executing from now on.
 *
 * Errors: -EINVAL for unknown @flags, a non-zero @pad or, without
 * %DRM_VNPU_QUEUE_INFO_SET_TIMEOUT, a non-zero @timeout_ms, or a timeout
 * out of range; -ENOENT for a queue id the file does not have; -ENODEV once
 * the device has been unplugged.
 */
struct drm_vnpu_queue_info {
	/** @queue_id: in, the queue. */
	__u32 queue_id;
	/** @flags: in, DRM_VNPU_QUEUE_INFO_* flags. */
	__u32 flags;
	/** @timeout_ms: in (with SET_TIMEOUT) / out, the queue's job timeout. */
	__u32 timeout_ms;
	/** @state: out, DRM_VNPU_QUEUE_STATE_* bits. */
	__u32 state;
	/** @submitted: out, jobs submitted to the queue. */
	__u64 submitted;
	/** @completed: out, jobs that finished without error. */
	__u64 completed;
	/** @failed: out, jobs whose fence signalled an error. */
	__u64 failed;
	/** @last_error_seqno: out, number of the last failed job, 0 for none. */
	__u64 last_error_seqno;
	/**
	 * @last_error_cmd: out, index of the command that failed in that job,
	 * or %DRM_VNPU_NO_CMD when the job failed before or between commands.
	 */
	__u32 last_error_cmd;
	/** @last_error: out, the negative errno of that job, 0 for none. */
	__s32 last_error;
	/** @pad: must be zero. */
	__u64 pad;
};

/**
 * struct drm_vnpu_queue_destroy - destroy a queue
 *
 * Jobs already submitted to the queue still run (or are cancelled, if the
 * process is exiting) and signal their fences; their buffers are released
 * when they are done.
 *
 * Errors: -EINVAL for non-zero @flags; -ENOENT for a queue id the file does
 * not have; -ENODEV once the device has been unplugged (the queue is then
 * destroyed when the file is closed).
 */
struct drm_vnpu_queue_destroy {
	/** @queue_id: in, the queue. */
	__u32 queue_id;
	/** @flags: in, reserved, must be zero. */
	__u32 flags;
};

/* Command opcodes of &struct drm_vnpu_cmd. */
/* Copy @size bytes from @src to @dst (the ranges may overlap). */
#define DRM_VNPU_CMD_COPY 0x1u
/* Fill @size bytes at @dst with the 32-bit @pattern; 4-byte aligned. */
#define DRM_VNPU_CMD_FILL 0x2u
/* Write the device clock in ns (a __u64, 8-byte aligned) at @dst. */
#define DRM_VNPU_CMD_TIMESTAMP 0x3u
/* Keep the engine busy for @size nanoseconds. */
#define DRM_VNPU_CMD_DELAY 0x4u
/* Run a built-in operator; @src: &struct drm_vnpu_kernel_args (1.3). */
#define DRM_VNPU_CMD_KERNEL 0x5u
/* Never finish (until timeout or reset); needs debugfs allow_hang (1.3). */
#define DRM_VNPU_CMD_HANG 0x6u
/* Fail the job with error -@pattern when executed (1.3). */
#define DRM_VNPU_CMD_FAULT 0x7u

/* Most commands in one job. */
#define DRM_VNPU_MAX_CMDS 1024
/* Most wait syncobjs in one job. */
#define DRM_VNPU_MAX_WAITS 64
/* Longest DRM_VNPU_CMD_DELAY, in nanoseconds (10 s). */
#define DRM_VNPU_MAX_DELAY_NS 10000000000ULL

/**
 * struct drm_vnpu_cmd - one command of a job
 *
 * Members a command does not use must be zero.
 *
 * ============================  =======  =======  ============  =========
 * opcode                        @dst     @src     @size         @pattern
 * ============================  =======  =======  ============  =========
 * %DRM_VNPU_CMD_COPY            address  address  bytes > 0     0
 * %DRM_VNPU_CMD_FILL            address  0        bytes > 0     pattern
 * %DRM_VNPU_CMD_TIMESTAMP       address  0        0             0
 * %DRM_VNPU_CMD_DELAY           0        0        ns, 1..max    0
 * %DRM_VNPU_CMD_KERNEL          0        args     args size     0
 * %DRM_VNPU_CMD_HANG            0        0        0             0
 * %DRM_VNPU_CMD_FAULT           0        0        0             errno
 * ============================  =======  =======  ============  =========
 *
 * FILL needs @dst and @size 4-byte aligned, TIMESTAMP needs @dst 8-byte
 * aligned. The device clock is CLOCK_MONOTONIC of the host in ns.
 *
 * KERNEL: @src is the 8-byte aligned device address of the operator's
 * arguments in a buffer of the file and @size is their size, a multiple of
 * 8 of at most %DRM_VNPU_KERNEL_ARGS_MAX_SIZE. The first member, the
 * operator, selects the layout: operators 0x1 to 0x10 take a &struct
 * drm_vnpu_kernel_args (@size exactly 72), operators from 0x11 (1.4) a
 * &struct drm_vnpu_tensor_args (see there for its sizes). The arguments
 * are read and checked when the job is submitted; changing them afterwards
 * does not affect the job.
 *
 * HANG keeps the engine busy until the job times out or the device is
 * reset; a submit containing it fails with -EPERM unless root wrote 1 to
 * the device's debugfs ``allow_hang``.
 *
 * FAULT stops the job when reached: its fence signals with -@pattern
 * (@pattern 1..4095, an errno), the commands before it have run.
 */
struct drm_vnpu_cmd {
	/** @opcode: DRM_VNPU_CMD_*. */
	__u32 opcode;
	/** @pattern: FILL: the 32-bit value written; else 0. */
	__u32 pattern;
	/** @dst: destination device address. */
	__u64 dst;
	/** @src: COPY: source device address; else 0. */
	__u64 src;
	/** @size: COPY, FILL: bytes; DELAY: nanoseconds; else 0. */
	__u64 size;
};

/* Operators of %DRM_VNPU_CMD_KERNEL (&drm_vnpu_kernel_args.op). */
#define DRM_VNPU_OP_ADD 0x1u
#define DRM_VNPU_OP_SUB 0x2u
#define DRM_VNPU_OP_MUL 0x3u
#define DRM_VNPU_OP_DIV 0x4u
#define DRM_VNPU_OP_MAX 0x5u
#define DRM_VNPU_OP_MIN 0x6u
#define DRM_VNPU_OP_AXPY 0x7u
#define DRM_VNPU_OP_RELU 0x8u
#define DRM_VNPU_OP_GELU 0x9u
#define DRM_VNPU_OP_EXP 0xau
#define DRM_VNPU_OP_SOFTMAX 0xbu
#define DRM_VNPU_OP_REDUCE_SUM 0xcu
#define DRM_VNPU_OP_REDUCE_MAX 0xdu
#define DRM_VNPU_OP_GEMM 0xeu
#define DRM_VNPU_OP_GEMM_I8 0xfu
#define DRM_VNPU_OP_BIAS_ADD 0x10u

/* GEMM flags: A is stored transposed (k rows of m), B (n rows of k). */
#define DRM_VNPU_KERNEL_TRANS_A 0x1u
#define DRM_VNPU_KERNEL_TRANS_B 0x2u

/*
 * Operators of the N-d tensor layout, &struct drm_vnpu_tensor_args (1.4).
 * Elementwise over the iteration shape, with broadcasting by stride 0:
 */
#define DRM_VNPU_OP_T_COPY 0x11u
#define DRM_VNPU_OP_T_ADD 0x12u
#define DRM_VNPU_OP_T_SUB 0x13u
#define DRM_VNPU_OP_T_MUL 0x14u
#define DRM_VNPU_OP_T_DIV 0x15u
#define DRM_VNPU_OP_T_MAX 0x16u
#define DRM_VNPU_OP_T_MIN 0x17u
#define DRM_VNPU_OP_T_RELU 0x18u
#define DRM_VNPU_OP_T_SIGMOID 0x19u
#define DRM_VNPU_OP_T_TANH 0x1au
#define DRM_VNPU_OP_T_EXP 0x1bu
/* Over the axes in &drm_vnpu_tensor_args.axes: */
#define DRM_VNPU_OP_T_REDUCE_SUM 0x1cu
#define DRM_VNPU_OP_T_REDUCE_MEAN 0x1du
#define DRM_VNPU_OP_T_REDUCE_MAX 0x1eu
#define DRM_VNPU_OP_T_SOFTMAX 0x1fu
#define DRM_VNPU_OP_T_DOT 0x20u
/* 2-D windows over N x C x H x W, &drm_vnpu_tensor_args.window: */
#define DRM_VNPU_OP_T_IM2COL 0x21u
#define DRM_VNPU_OP_T_MAXPOOL 0x22u
#define DRM_VNPU_OP_T_AVGPOOL 0x23u
/* Per-channel normalization, &drm_vnpu_tensor_args.norm: */
#define DRM_VNPU_OP_T_BATCHNORM 0x24u
/* Elementwise, A only (1.5): */
#define DRM_VNPU_OP_T_LOG 0x25u
#define DRM_VNPU_OP_T_FLOOR 0x26u
#define DRM_VNPU_OP_T_CEIL 0x27u
#define DRM_VNPU_OP_T_ROUND 0x28u
#define DRM_VNPU_OP_T_SIN 0x29u
#define DRM_VNPU_OP_T_COS 0x2au
#define DRM_VNPU_OP_T_TAN 0x2bu
#define DRM_VNPU_OP_T_ASIN 0x2cu
#define DRM_VNPU_OP_T_ACOS 0x2du
#define DRM_VNPU_OP_T_ATAN 0x2eu
#define DRM_VNPU_OP_T_SINH 0x2fu
#define DRM_VNPU_OP_T_COSH 0x30u
#define DRM_VNPU_OP_T_ASINH 0x31u
#define DRM_VNPU_OP_T_ACOSH 0x32u
#define DRM_VNPU_OP_T_ATANH 0x33u
/* Over the axes, C an int32 index (1.5): */
#define DRM_VNPU_OP_T_ARGMAX 0x34u
#define DRM_VNPU_OP_T_ARGMIN 0x35u
/* Over the axes (1.5): */
#define DRM_VNPU_OP_T_REDUCE_PROD 0x36u
/* Elementwise, A and B, C 1 or 0 (1.6): */
#define DRM_VNPU_OP_T_EQUAL 0x37u
#define DRM_VNPU_OP_T_LESS 0x38u
#define DRM_VNPU_OP_T_LESS_EQUAL 0x39u
/* Elementwise, A where B is non-zero, C kept elsewhere (1.6): */
#define DRM_VNPU_OP_T_WHERE 0x3au
/* A at indices read from B along one axis (1.7): */
#define DRM_VNPU_OP_T_GATHER 0x3bu
/* The k largest or smallest along one axis, C and their indices D (1.7): */
#define DRM_VNPU_OP_T_TOPK 0x3cu

/* Largest @m, @n or @k of an operator, and largest tensor dimension. */
#define DRM_VNPU_KERNEL_MAX_DIM 0x1000000u
/* Largest @size of a KERNEL command (1.4). */
#define DRM_VNPU_KERNEL_ARGS_MAX_SIZE 4096u

/**
 * struct drm_vnpu_kernel_args - arguments of a %DRM_VNPU_CMD_KERNEL
 *
 * Matrices are row-major; a matrix of R rows and C columns with leading
 * dimension L (elements between the starts of two rows, L >= C) occupies
 * ((R - 1) * L + C) elements from its address. Elements are fp32 (IEEE
 * single) except for GEMM_I8, whose A and B are int8 and C int32. @alpha and
 * @beta are fp32 bit patterns (int32 values for GEMM_I8). Members an
 * operator does not use must be zero. fp32 and int32 arrays must be 4-byte
 * aligned. Every array must lie inside one buffer of the file.
 *
 * ============  ================================  =========  ===========  =====
 * op            computes (i < m, j < n)           A          B            C
 * ============  ================================  =========  ===========  =====
 * ADD .. MIN    C[i][j] = A[i][j] op B[i][j]      m x n      m x n        m x n
 * AXPY          C = alpha * A + B                 m x n      m x n        m x n
 * RELU          C = max(A, 0)                     m x n      -            m x n
 * GELU          C = GELU(A), tanh approximation   m x n      -            m x n
 * EXP           C = exp(A)                        m x n      -            m x n
 * SOFTMAX       C[i] = softmax(A[i]) per row      m x n      -            m x n
 * REDUCE_SUM    C[i] = sum over j of A[i][j]      m x n      -            m (1)
 * REDUCE_MAX    C[i] = max over j of A[i][j]      m x n      -            m (1)
 * BIAS_ADD      C[i][j] = A[i][j] + B[j]          m x n      n (1)        m x n
 * GEMM          C = alpha op(A) op(B) + beta C    m x k (2)  k x n (2)    m x n
 * GEMM_I8       same, int8 in, int32 C (3)        m x k (2)  k x n (2)    m x n
 * ============  ================================  =========  ===========  =====
 *
 * (1) a vector: its leading dimension must be 0. (2) with
 * %DRM_VNPU_KERNEL_TRANS_A, A is stored k x m and op(A) is its transpose;
 * likewise B is stored n x k with %DRM_VNPU_KERNEL_TRANS_B. GEMM needs
 * @k >= 1; every other operator @k == 0 and @flags == 0. With @beta == 0, C
 * is not read. C may not overlap A or B for GEMM; the elementwise operators
 * may work in place (C == A or C == B). (3) GEMM_I8 accumulates in int32
 * and computes alpha * (A B) + beta * C with int32 wrap-around.
 *
 * MAX and MIN return B when the comparison is false (NaN in A gives B).
 * SOFTMAX subtracts the row maximum before exponentiation. Reductions add
 * in column order in fp32.
 *
 * Errors at submit: -EINVAL for a misaligned or wrong-sized @src, an
 * unknown @op or @flags, a zero or too large dimension, a non-zero member
 * the operator does not use, a leading dimension below the row length, a
 * size that overflows, a misaligned array, or a GEMM output overlapping an
 * input; -EACCES for an array (or the arguments) outside the file's
 * buffers.
 */
struct drm_vnpu_kernel_args {
	/** @op: DRM_VNPU_OP_*. */
	__u32 op;
	/** @flags: DRM_VNPU_KERNEL_TRANS_* for GEMM, else 0. */
	__u32 flags;
	/** @m: rows of the output (rows of the input for reductions). */
	__u32 m;
	/** @n: columns of the output (and of the elementwise inputs). */
	__u32 n;
	/** @k: GEMM inner dimension; 0 for other operators. */
	__u32 k;
	/** @alpha: AXPY, GEMM: scale of the product (fp32 bits). */
	__u32 alpha;
	/** @beta: GEMM: scale of the old C (fp32 bits). */
	__u32 beta;
	/** @pad: must be zero. */
	__u32 pad;
	/** @a: device address of A. */
	__u64 a;
	/** @b: device address of B, 0 when unused. */
	__u64 b;
	/** @c: device address of C, the output. */
	__u64 c;
	/** @lda: leading dimension of A, in elements. */
	__u32 lda;
	/** @ldb: leading dimension of B, in elements; 0 when unused. */
	__u32 ldb;
	/** @ldc: leading dimension of C, in elements. */
	__u32 ldc;
	/** @pad2: must be zero. */
	__u32 pad2;
};

/* Most dimensions of a tensor operator. */
#define DRM_VNPU_TENSOR_MAX_DIMS 6
/* Most points of the iteration space of one tensor operator (2^40). */
#define DRM_VNPU_TENSOR_MAX_POINTS 0x10000000000ULL
/* &drm_vnpu_tensor_args.flags of AVGPOOL: padding counts in the divisor. */
#define DRM_VNPU_TENSOR_COUNT_INCLUDE_PAD 0x1u
/* &drm_vnpu_tensor_args.flags of ARGMAX and ARGMIN: the last extremum (1.5). */
#define DRM_VNPU_TENSOR_SELECT_LAST 0x2u
/* &drm_vnpu_tensor_args.flags of ARGMAX and ARGMIN: fp32 indices (1.5). */
#define DRM_VNPU_TENSOR_INDEX_FP32 0x4u
/* &drm_vnpu_tensor_args.flags of TOPK: the k smallest, not the largest (1.7). */
#define DRM_VNPU_TENSOR_SMALLEST 0x8u
/* Most points of the axis of a TOPK (1.7). */
#define DRM_VNPU_TOPK_MAX_AXIS 65536u
/* Size of the first version of &struct drm_vnpu_tensor_args (1.4). */
#define DRM_VNPU_TENSOR_ARGS_SIZE_V1 224u
/* Size of &struct drm_vnpu_tensor_args with the element types (1.5). */
#define DRM_VNPU_TENSOR_ARGS_SIZE_V2 232u
/* Size of &struct drm_vnpu_tensor_args with D and @k (1.7). */
#define DRM_VNPU_TENSOR_ARGS_SIZE_V3 272u

/*
 * Element types of the tensors of an operator (1.5),
 * &drm_vnpu_tensor_args.dtype_a, dtype_b and dtype_c:
 */
/* IEEE single, 4 bytes; the default, so callers of 1.4 keep their meaning. */
#define DRM_VNPU_DTYPE_F32 0x0u
/* IEEE half (binary16), 2 bytes. */
#define DRM_VNPU_DTYPE_F16 0x1u
/* Signed 8-bit integer. */
#define DRM_VNPU_DTYPE_I8 0x2u
/* Unsigned 8-bit integer. */
#define DRM_VNPU_DTYPE_U8 0x3u
/* Signed 32-bit integer. */
#define DRM_VNPU_DTYPE_I32 0x4u
/*
 * Signed 64-bit integer (1.7), taken only by T_GATHER (its indices B, and
 * A and C moved bit exactly) and by T_COPY from int64 to int64.
 */
#define DRM_VNPU_DTYPE_I64 0x5u

/**
 * struct drm_vnpu_tensor_window - window of IM2COL, MAXPOOL and AVGPOOL
 *
 * Output element (oh, ow) looks at the input rows
 * ``oh * stride_h - pad_top + i * dilation_h`` for i < @kernel_h, and the
 * columns likewise; positions outside the input are padding. The caller
 * chooses @out_h and @out_w (floor or ceil mode alike). A window without
 * input elements gives -inf for MAXPOOL and 0 / 0 = NaN for AVGPOOL
 * without %DRM_VNPU_TENSOR_COUNT_INCLUDE_PAD.
 */
struct drm_vnpu_tensor_window {
	/** @kernel_h: window height, 1..%DRM_VNPU_KERNEL_MAX_DIM. */
	__u32 kernel_h;
	/** @kernel_w: window width. */
	__u32 kernel_w;
	/** @stride_h: vertical step between windows, >= 1. */
	__u32 stride_h;
	/** @stride_w: horizontal step between windows, >= 1. */
	__u32 stride_w;
	/** @dilation_h: step between the rows of a window, >= 1. */
	__u32 dilation_h;
	/** @dilation_w: step between the columns of a window, >= 1. */
	__u32 dilation_w;
	/** @pad_top: padding rows before the input. */
	__u32 pad_top;
	/** @pad_left: padding columns before the input. */
	__u32 pad_left;
	/** @pad_bottom: padding rows after the input (AVGPOOL divisor only). */
	__u32 pad_bottom;
	/** @pad_right: padding columns after the input (AVGPOOL divisor only). */
	__u32 pad_right;
	/** @out_h: output rows, >= 1. */
	__u32 out_h;
	/** @out_w: output columns, >= 1. */
	__u32 out_w;
};

/**
 * struct drm_vnpu_tensor_norm - per-channel arrays of BATCHNORM
 *
 * Each array holds shape[@axis] contiguous fp32 values, 4-byte aligned,
 * inside one buffer of the file.
 */
struct drm_vnpu_tensor_norm {
	/** @scale: device address of the per-channel scale. */
	__u64 scale;
	/** @bias: device address of the per-channel bias. */
	__u64 bias;
	/** @mean: device address of the per-channel mean. */
	__u64 mean;
	/** @var: device address of the per-channel variance. */
	__u64 var;
	/** @epsilon: fp32 bits, added to the variance. */
	__u32 epsilon;
	/** @axis: the channel dimension, < ndim. */
	__u32 axis;
};

/**
 * struct drm_vnpu_tensor_args - arguments of an N-d tensor operator (1.4; types 1.5; D 1.7)
 *
 * The KERNEL command's @size is the size of this struct as the caller
 * knows it: at least %DRM_VNPU_TENSOR_ARGS_SIZE_V1 (-EINVAL otherwise); a
 * larger size is accepted when every byte past the kernel's struct is zero
 * (-E2BIG otherwise), so the struct can grow at its end. Members past the
 * caller's size read as zero: T_TOPK, which needs @d and @k, takes
 * %DRM_VNPU_TENSOR_ARGS_SIZE_V3.
 *
 * **Tensors.** The operator runs over an iteration space of @ndim
 * dimensions (1..%DRM_VNPU_TENSOR_MAX_DIMS) of sizes @shape[0..ndim), each
 * 1..%DRM_VNPU_KERNEL_MAX_DIM, the last one varying fastest. Each tensor
 * X of A, B and C has a device address and an element stride per dimension
 * (@stride_a, @stride_b, @stride_c): element x[i0]..[i5] is at
 * ``addr + 4 * (i0 * stride[0] + ... + i5 * stride[5])``. A stride of 0
 * repeats (broadcasts) the tensor along that dimension; strides let an
 * operator read or write any dense or permuted layout. A tensor spans
 * ``1 + sum((shape[d] - 1) * stride[d])`` elements from its address, which
 * must lie inside one buffer of the file. Elements are fp32 unless
 * @dtype_a, @dtype_b or @dtype_c say otherwise (see **Element types**; the
 * 4 above is then the element size of the tensor's type), and arrays are
 * aligned to their element size. Members past @ndim, members the
 * operator does not use (B, the strides of an unused tensor, @axes,
 * @window, @norm) and @flags unless the operator defines one must be
 * zero. The product of the iteration
 * shape (times the window area for the window operators) is at most
 * %DRM_VNPU_TENSOR_MAX_POINTS.
 *
 * **Output.** C must have a non-zero stride on every dimension of size
 * above 1 that it is not reduced over, and stride 0 on the reduced axes.
 * C may be A or B in place (same address and the same strides on every
 * dimension of size above 1) for the elementwise operators, SOFTMAX and
 * BATCHNORM; otherwise C may not overlap the span of A or of B. C may not
 * overlap the BATCHNORM arrays.
 *
 * ==============  ================================================  =====
 * op              computes, for every index i                       B
 * ==============  ================================================  =====
 * T_COPY          C[i] = A[i] (any 4-byte elements, bit exact)      --
 * T_ADD .. T_MIN  C[i] = A[i] op B[i] (2)                           yes
 * T_RELU          C[i] = max(A[i], 0)                               --
 * T_SIGMOID       C[i] = 1 / (1 + exp(-A[i]))                       --
 * T_TANH          C[i] = tanh(A[i])                                 --
 * T_EXP           C[i] = exp(A[i])                                  --
 * T_REDUCE_SUM    C[o] = sum of A[i] over the axes in @axes (1)     --
 * T_REDUCE_MEAN   the sum divided by the number of summed elements  --
 * T_REDUCE_MAX    C[o] = max of A[i] over the axes in @axes         --
 * T_SOFTMAX       C[i] = exp(A[i] - max) / sum of exp over @axes    --
 * T_DOT           C[o] = sum of A[i] * B[i] over the axes in @axes  yes
 * T_LOG           C[i] = log(A[i]) (3)                              --
 * T_FLOOR         C[i] = floor(A[i])                                --
 * T_CEIL          C[i] = ceil(A[i])                                 --
 * T_ROUND         C[i] = A[i] rounded to the nearest integer, ties  --
 *                 to even
 * T_SIN .. T_TAN  C[i] = sin, cos, tan of A[i] (3)                  --
 * T_ASIN ..       C[i] = asin, acos, atan of A[i] (3)               --
 * T_ATAN
 * T_SINH ..       C[i] = sinh, cosh, asinh, acosh, atanh of A[i]    --
 * T_ATANH         (3)
 * T_ARGMAX        C[o] = the index of the maximum of A over the     --
 *                 axes in @axes (1) (4)
 * T_ARGMIN        C[o] = the index of the minimum (1) (4)           --
 * T_REDUCE_PROD   C[o] = product of A[i] over the axes (1) (3)      --
 * T_EQUAL         C[i] = A[i] == B[i] ? 1 : 0 (5)                   yes
 * T_LESS          C[i] = A[i] < B[i] ? 1 : 0 (5)                    yes
 * T_LESS_EQUAL    C[i] = A[i] <= B[i] ? 1 : 0 (5)                   yes
 * T_WHERE         C[i] = A[i] where B[i] != 0; C[i] unchanged       yes
 *                 where B[i] == 0 (6)
 * T_GATHER        C[i] = A[i with i[d] replaced by B[i]], d the     yes
 *                 axis in @axes (7)
 * T_TOPK          C, D = the @k largest (or smallest) of A along    --
 *                 the axis in @axes and their indices (8)
 * ==============  ================================================  =====
 *
 * (1) o is i with the axes in @axes removed: C has stride 0 on them, so
 * ``keepdims`` is only a matter of the shape the caller gives C. @axes is
 * a bitmask of dimensions (bit d: dimension d), non-zero and below
 * ``1 << ndim`` for the eight operators over axes, 0 for the others.
 * Reductions and the DOT add in fp32 in row-major order of the reduced
 * axes, starting from 0 (MAX from -inf; REDUCE_PROD multiplies, from 1),
 * except a DOT of integer A and B (since 1.6), which sums exactly in 64
 * bits (saturating) and stores the sum saturated into an integer C or
 * rounded once into a float C;
 * SOFTMAX subtracts the maximum over the axes before exponentiation.
 * T_DOT is a batched matrix product: with dimensions (batch..., m, n, k),
 * A strided (..., lda, 0, 1), B (..., 0, 1, ldb) and C (..., ldc, 1, 0),
 * @axes selecting k. (2) ADD,
 * SUB, MUL, DIV, MAX and MIN; MAX is A > B ? A : B and MIN A < B ? A : B
 * (NaN in A gives B). (3) Since 1.5. Computed in double and rounded to
 * fp32: within one fp32 ulp of the exact value, NaN outside the domain
 * (log of a negative number, asin and acos outside [-1, 1], acosh below 1,
 * atanh outside [-1, 1]), log(0) = -inf, atanh(+-1) = +-inf. SIN, COS and
 * TAN reduce the argument by pi / 2 to 99 bits: exact to |A| of about
 * 2^20, and their error grows with |A| beyond (the result stays within
 * [-1, 1] for SIN and COS). FLOOR, CEIL and ROUND keep the sign of zero.
 * (4) Since 1.5. C holds int32 indices (bit patterns, not fp32 values), or
 * with %DRM_VNPU_TENSOR_INDEX_FP32 in @flags the same indices as fp32
 * values (exact below 2^24): the row-major position of the extremum among
 * the reduced points, the first one, or the last with
 * %DRM_VNPU_TENSOR_SELECT_LAST in @flags. NaN
 * is above every number for ARGMAX and below for ARGMIN (numpy's argmax
 * and argmin). The reduced axes hold at most 2^31 - 1 points; A may be of
 * any element type, C's must be fp32 (@dtype_c 0).
 * (5) Since 1.6. A and B, of any element types, are compared as the
 * numbers they are, exactly (int32 too, without a conversion to fp32);
 * NaN is unequal to everything and unordered (every comparison with a
 * NaN is false, so C is 0). C, of any type, holds 1 or 0 (1.0 or 0.0 for
 * fp32 and fp16); B and A may be swapped for greater-than comparisons.
 * (6) Since 1.6. A select: A's elements are moved bit exactly, so A and
 * C must be of one type; B, the condition, may be of any type (a float
 * is non-zero unless +0 or -0, so NaN selects A). C's elements where B is
 * 0 are not written: write the other choice into C first.
 * (7) Since 1.7. The iteration space is C's shape; @axes has one bit, d.
 * B, the indices, int32 or int64 (@dtype_b), is read at every point i
 * with @stride_b; A is read at ``i[e] * stride_a[e]`` over the other
 * dimensions e and at ``B[i] * stride_a[d]`` along d, whose length in A
 * is @k (1..%DRM_VNPU_KERNEL_MAX_DIM; A spans @k on d, not @shape[d]).
 * An index below 0 counts from the end (B[i] + @k). ONNX's Gather of
 * indices of any shape is (outer, indices, inner) with the indices
 * flattened into dimension d (@stride_b 0 on the others, @stride_a[d]
 * the inner size); its GatherElements is B of C's shape, @stride_a the
 * data's strides. A's elements are moved bit exactly: A and C are of one
 * type, any type including %DRM_VNPU_DTYPE_I64. C may not overlap A or
 * B. An index outside -@k..@k - 1 is not read: the job stops there, its
 * fence signals -ERANGE (like FAULT; the commands before it have run,
 * and C's elements before the bad index may have been written).
 * (8) Since 1.7. @shape is A's; @axes has one bit, d, along which A has
 * at most %DRM_VNPU_TOPK_MAX_AXIS points. C (of A's type, @stride_c) and D
 * (int32, @dtype_d %DRM_VNPU_DTYPE_I32, @stride_d, address @d) have @k
 * (1..@shape[d]) elements along d and A's shape elsewhere: for each row
 * of A along d, C holds its @k largest elements in descending order, or
 * with %DRM_VNPU_TENSOR_SMALLEST in @flags its @k smallest in ascending
 * order, moved bit exactly, and D their indices along d. Equal elements
 * (-0 and +0 are equal) come in the order of their indices, the lower
 * first; NaN is above every number (first among the largest, last among
 * the smallest; NaNs in the order of their indices), as numpy's sort.
 * A, C and D may not overlap.
 *
 * **Windows.** IM2COL, MAXPOOL and AVGPOOL take @ndim 4, @shape the input
 * N x C x H x W, A strided over those four dimensions, and @window. MAXPOOL
 * and AVGPOOL write C of N x C x out_h x out_w (@stride_c[0..3]): the
 * maximum, or the mean, of the input elements in each window; AVGPOOL
 * divides by the number of input elements in the window, or with
 * %DRM_VNPU_TENSOR_COUNT_INCLUDE_PAD in @flags by the number of window
 * positions inside the padded input (the windows of ceil mode that hang
 * past @pad_bottom or @pad_right count only the part inside). IM2COL
 * writes C of N x C x kernel_h x kernel_w x out_h x out_w
 * (@stride_c[0..5]), the input element each window position looks at, 0
 * for padding; with dense C, image n is the (C kernel_h kernel_w) x
 * (out_h out_w) matrix a convolution multiplies its weights with.
 *
 * **BATCHNORM** (inference): C[i] = (A[i] - mean[c]) / sqrt(var[c] +
 * epsilon) * scale[c] + bias[c], c the index of dimension @norm.axis,
 * computed in double and rounded to fp32.
 *
 * **Element types** (1.5). @dtype_a, @dtype_b and @dtype_c give the
 * element type of A, B and C, a DRM_VNPU_DTYPE_* (0, fp32, for callers of
 * 1.4 and for an unused B). Every operator but T_COPY, T_IM2COL, the
 * comparisons and T_WHERE is a float operator: A and B may be of any
 * type, in any mix; it converts each element it reads to fp32 (exactly;
 * int32 beyond 2^24 to nearest even), computes as with fp32 tensors
 * (sums and products accumulate in fp32) and rounds each result it writes
 * to C's type: to nearest, ties to even, for fp16 (overflow gives
 * infinity) and for the integer types, which are also saturated to their
 * range (NaN gives 0). C is fp32 or fp16, or of an integer type for the
 * elementwise operators (T_ADD .. T_EXP): quantisation is a T_DIV to
 * int32 and a T_ADD of the zero point, dequantisation a T_SUB of it and a
 * T_MUL. With an fp16 C, SOFTMAX rounds exp(A[i] - max) to fp16 before
 * the division.
 * The comparisons (1.6) take any types and write any C, exactly (see
 * (5)); T_WHERE moves A bit exactly into C of the same type (see (6)).
 * T_COPY and T_IM2COL move elements: of one type to the same type bit
 * exactly (any type), or converted to a float C (fp32 or fp16) from fp32,
 * fp16, int8, uint8 or int32 (rounded to nearest even where C cannot hold
 * the value). A float element is never converted to an integer type (the
 * rounding of quantisation is not a copy's). In place (C is A or B) needs
 * the same type for both. The BATCHNORM arrays are always fp32.
 *
 * Errors at submit: -EINVAL for a @size below
 * %DRM_VNPU_TENSOR_ARGS_SIZE_V1, above %DRM_VNPU_KERNEL_ARGS_MAX_SIZE or
 * not a multiple of 8, an unknown @op or @flags, a GATHER or TOPK
 * without exactly one bit in @axes, a @k out of range, a TOPK axis
 * above %DRM_VNPU_TOPK_MAX_AXIS, @d, @stride_d, @k or @dtype_d non-zero
 * for an operator that does not take them, an unknown element
 * type, a type combination the operator does not take (an integer C of a
 * float operator that is not elementwise nor a DOT of integer A and B, a
 * copy to an integer type from
 * another type, int64 anywhere but where %DRM_VNPU_DTYPE_I64 says, a
 * GATHER or TOPK whose A and C differ in type, GATHER indices that
 * are not int32 or int64, a TOPK D that is not int32,
 * a T_WHERE whose A and C differ in type, @dtype_b
 * non-zero without B), non-zero @pad, @ndim 0 or
 * above the maximum, a zero or too large dimension or window member, too many
 * points, bad @axes, a non-zero member the operator does not use, a stride
 * of C (or D) that breaks the output rules, a misaligned array, or C
 * (or D) overlapping an input or each other; -E2BIG for a non-zero byte
 * past the kernel's struct; -EACCES for an array (or the arguments)
 * outside the file's buffers.
 */
struct drm_vnpu_tensor_args {
	/** @op: DRM_VNPU_OP_T_*. */
	__u32 op;
	/**
	 * @flags: %DRM_VNPU_TENSOR_COUNT_INCLUDE_PAD for AVGPOOL,
	 * %DRM_VNPU_TENSOR_SELECT_LAST and %DRM_VNPU_TENSOR_INDEX_FP32 for
	 * ARGMAX and ARGMIN, %DRM_VNPU_TENSOR_SMALLEST for TOPK, else 0.
	 */
	__u32 flags;
	/** @ndim: dimensions of the iteration space. */
	__u32 ndim;
	/** @axes: reduced, normalized or contracted dimensions (bit mask). */
	__u32 axes;
	/** @shape: sizes of the iteration space (input of window operators). */
	__u32 shape[DRM_VNPU_TENSOR_MAX_DIMS];
	/** @a: device address of A. */
	__u64 a;
	/** @b: device address of B, 0 when unused. */
	__u64 b;
	/** @c: device address of C, the output. */
	__u64 c;
	/** @stride_a: element strides of A. */
	__u32 stride_a[DRM_VNPU_TENSOR_MAX_DIMS];
	/** @stride_b: element strides of B. */
	__u32 stride_b[DRM_VNPU_TENSOR_MAX_DIMS];
	/** @stride_c: element strides of C. */
	__u32 stride_c[DRM_VNPU_TENSOR_MAX_DIMS];
	/** @window: IM2COL, MAXPOOL, AVGPOOL: the window. */
	struct drm_vnpu_tensor_window window;
	/** @norm: BATCHNORM: the per-channel arrays. */
	struct drm_vnpu_tensor_norm norm;
	/** @dtype_a: element type of A, DRM_VNPU_DTYPE_* (1.5). */
	__u8 dtype_a;
	/** @dtype_b: element type of B; 0 when B is unused (1.5). */
	__u8 dtype_b;
	/** @dtype_c: element type of C (1.5). */
	__u8 dtype_c;
	/** @pad: must be zero. */
	__u8 pad[5];
	/** @d: TOPK: device address of D, the indices; else 0 (1.7). */
	__u64 d;
	/** @stride_d: TOPK: element strides of D; else 0 (1.7). */
	__u32 stride_d[DRM_VNPU_TENSOR_MAX_DIMS];
	/**
	 * @k: TOPK: elements selected; GATHER: the length of A's gathered
	 * axis; else 0 (1.7).
	 */
	__u32 k;
	/** @dtype_d: element type of D, %DRM_VNPU_DTYPE_I32 for TOPK; else 0 (1.7). */
	__u8 dtype_d;
	/** @pad2: must be zero. */
	__u8 pad2[3];
};

/**
 * struct drm_vnpu_sync - a syncobj and a point on it
 */
struct drm_vnpu_sync {
	/** @handle: syncobj handle. */
	__u32 handle;
	/** @flags: reserved, must be zero. */
	__u32 flags;
	/** @point: timeline point, or 0 for a binary syncobj's fence. */
	__u64 point;
};

/**
 * struct drm_vnpu_submit - submit a job to a queue
 *
 * The commands and waits are copied in at submit; the arrays may be reused
 * as soon as the ioctl returns. The job starts once every wait fence has
 * signalled. When it is done its fence replaces the fence of @signal's
 * syncobj (@signal.point 0) or is added to it as timeline point
 * @signal.point. @signal.handle 0 means no signal syncobj.
 *
 * Errors (a failed submit changes nothing):
 *
 * - -EINVAL: non-zero @flags, @pad, &drm_vnpu_sync.flags or unused
 *   command members; @cmd_count 0 or above %DRM_VNPU_MAX_CMDS; @wait_count
 *   above %DRM_VNPU_MAX_WAITS; an unknown opcode; a zero or misaligned size
 *   or address; a range that wraps past the end of the address space; a
 *   delay above %DRM_VNPU_MAX_DELAY_NS; a wait syncobj without a fence at
 *   the requested point (never submitted); bad KERNEL arguments (see
 *   &struct drm_vnpu_kernel_args and &struct drm_vnpu_tensor_args); a
 *   FAULT error outside 1..4095;
 * - -E2BIG: tensor operator arguments longer than the kernel's struct with
 *   a non-zero byte past it;
 * - -EPERM: a HANG command while debugfs allow_hang is off;
 * - -ECANCELED: the queue is guilty (a job of it timed out);
 * - -EIO: the device health is %DRM_VNPU_HEALTH_NEEDS_RESET;
 * - -EFAULT: @cmds or @waits is not readable;
 * - -ENOENT: @queue_id names no queue of this file, or a syncobj handle is
 *   not valid;
 * - -EACCES: a command range does not lie inside one buffer the file holds;
 * - -ENOMEM, also when a buffer used for the first time cannot be backed;
 *   -ENODEV once the device has been unplugged.
 */
struct drm_vnpu_submit {
	/** @queue_id: in, the queue. */
	__u32 queue_id;
	/** @flags: in, reserved, must be zero. */
	__u32 flags;
	/** @cmds: in, user pointer to @cmd_count &struct drm_vnpu_cmd. */
	__u64 cmds;
	/** @waits: in, user pointer to @wait_count &struct drm_vnpu_sync. */
	__u64 waits;
	/** @cmd_count: in, commands in the job. */
	__u32 cmd_count;
	/** @wait_count: in, syncobjs to wait for. */
	__u32 wait_count;
	/** @signal: in, syncobj to signal; handle 0 for none. */
	struct drm_vnpu_sync signal;
	/** @pad: must be zero. */
	__u64 pad;
};

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_VNPU_ACCEL_H__ */
