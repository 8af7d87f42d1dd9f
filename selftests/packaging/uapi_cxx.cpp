// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The public headers are self-contained and usable from C++: each is
 * included first, alone, and its types and ioctl numbers are used in
 * constant expressions. Built by host-checks.sh with -Wall -Wextra -Werror
 * -pedantic against the installed headers.
 */
#include <drm/vnpu_accel.h>
#include <vnpu.h>

static_assert(sizeof(struct drm_vnpu_get_param) == 16, "drm_vnpu_get_param layout");
static_assert(sizeof(struct drm_vnpu_bo_create) % 8 == 0, "drm_vnpu_bo_create padding");
static_assert(DRM_IOCTL_VNPU_GET_PARAM != 0, "ioctl number");
static_assert(DRM_VNPU_UAPI_MAJOR >= 1, "uAPI major");
static_assert(VNPU_SUCCESS == 0, "status");

int main()
{
	struct drm_vnpu_get_param args = {};
	struct vnpu_device_properties props = {};

	args.param = DRM_VNPU_PARAM_UAPI_VERSION;
	props.health = VNPU_HEALTH_OK;
	return static_cast<int>(args.flags) + static_cast<int>(props.health);
}
