/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_FPU_H__
#define __VNPU_FPU_H__

/*
 * fp32 values cross the boundary of the FPU files as u32 bit patterns.
 * Include only from files built with the FPU flags (see Kbuild).
 */

#include <linux/types.h>

union vnpu_f32 {
	u32 u;
	float f;
};

static inline float vnpu_bits_to_f32(u32 u)
{
	union vnpu_f32 v = { .u = u };

	return v.f;
}

static inline u32 vnpu_f32_to_bits(float f)
{
	union vnpu_f32 v = { .f = f };

	return v.u;
}

#endif /* __VNPU_FPU_H__ */
