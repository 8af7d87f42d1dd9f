/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The uAPI header is self-contained in C: included first and alone, built
 * by host-checks.sh with -Wall -Wextra -Werror -pedantic in several
 * language standards.
 */
#include <drm/vnpu_accel.h>

int main(void)
{
	struct drm_vnpu_get_param args = { 0 };
	unsigned long nr = DRM_IOCTL_VNPU_GET_PARAM;

	args.param = DRM_VNPU_PARAM_UAPI_VERSION;
	return (int)args.flags + (nr == 0);
}
