/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vnpu authors
 */
#ifndef __VNPU_DTYPE_H__
#define __VNPU_DTYPE_H__

/*
 * Element types of the tensor operators (DRM_VNPU_DTYPE_*, uAPI 1.5):
 * sizes, and the conversions of elements to and from fp32 bit patterns.
 * Integer arithmetic only, so both the FPU and the non-FPU files use them
 * (COPY and IM2COL convert without kernel_fpu_begin()).
 */

#include <linux/bitops.h>
#include <linux/types.h>

#include <drm/vnpu_accel.h>

/* Bytes of one element of type @dt (a checked DRM_VNPU_DTYPE_*). */
static inline u32 vnpu_dtype_size(u32 dt)
{
	switch (dt) {
	case DRM_VNPU_DTYPE_F16:
		return 2;
	case DRM_VNPU_DTYPE_I8:
	case DRM_VNPU_DTYPE_U8:
		return 1;
	case DRM_VNPU_DTYPE_I64:
		return 8;
	default:
		return 4;
	}
}

static inline bool vnpu_dtype_is_float(u32 dt)
{
	return dt == DRM_VNPU_DTYPE_F32 || dt == DRM_VNPU_DTYPE_F16;
}

/* fp16 bits to fp32 bits, exactly (subnormals normalized, NaN kept quiet). */
static inline u32 vnpu_f16_to_f32(u16 h)
{
	u32 sign = (u32)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	int shift;

	if (exp == 0x1f)
		return sign | 0x7f800000 | man << 13 | (man ? 0x400000 : 0);
	if (exp)
		return sign | (exp + 112) << 23 | man << 13;
	if (!man)
		return sign;
	/* Subnormal: 0.man * 2^-14, normalized; the leading bit becomes implicit. */
	shift = 10 - __fls(man);
	return sign | (u32)(113 - shift) << 23 | ((man << shift) & 0x3ff) << 13;
}

/*
 * fp32 bits to fp16 bits, rounded to nearest, ties to even; above the
 * fp16 range gives infinity, NaN stays a (quiet) NaN.
 */
static inline u16 vnpu_f32_to_f16(u32 f)
{
	u32 sign = (f >> 16) & 0x8000, exp = (f >> 23) & 0xff, man = f & 0x7fffff;
	u32 shift, half, rest, v;

	if (exp == 0xff)
		return sign | 0x7c00 | (man ? 0x200 | man >> 13 : 0);
	if (exp > 142)			/* 2^16 and above: infinity */
		return sign | 0x7c00;
	if (exp >= 113) {		/* normal fp16 */
		v = (exp - 112) << 10 | man >> 13;
		rest = man & 0x1fff;
		if (rest > 0x1000 || (rest == 0x1000 && (v & 1)))
			v++;		/* a carry into the exponent is right, to inf too */
		return sign | v;
	}
	if (exp < 102)			/* below half the smallest subnormal */
		return sign;
	/* Subnormal fp16: the 24-bit significand shifted right. */
	man |= 0x800000;
	shift = 126 - exp;		/* 14..24 */
	v = man >> shift;
	half = 1u << (shift - 1);
	rest = man & ((1u << shift) - 1);
	if (rest > half || (rest == half && (v & 1)))
		v++;
	return sign | v;
}

/* A signed integer to fp32 bits, rounded to nearest even (|v| > 2^24). */
static inline u32 vnpu_i32_to_f32(s32 v)
{
	u32 sign = v < 0 ? 0x80000000 : 0, mag = v < 0 ? -(u32)v : (u32)v;
	u32 top, shift, rest, half, man;

	if (!mag)
		return 0;
	top = __fls(mag);
	if (top <= 23)
		return sign | (top + 127) << 23 | ((mag << (23 - top)) & 0x7fffff);
	shift = top - 23;
	man = mag >> shift;
	rest = mag & ((1u << shift) - 1);
	half = 1u << (shift - 1);
	if (rest > half || (rest == half && (man & 1)))
		man++;
	/* A carry to 2^24 moves the exponent; the mantissa bits become 0. */
	if (man >> 24)
		return sign | (top + 1 + 127) << 23;
	return sign | (top + 127) << 23 | (man & 0x7fffff);
}

/* Element @i of the array of type @dt at @base, as fp32 bits. */
static inline u32 vnpu_dtype_load(const void *base, u32 dt, size_t i)
{
	switch (dt) {
	case DRM_VNPU_DTYPE_F16:
		return vnpu_f16_to_f32(((const u16 *)base)[i]);
	case DRM_VNPU_DTYPE_I8:
		return vnpu_i32_to_f32(((const s8 *)base)[i]);
	case DRM_VNPU_DTYPE_U8:
		return vnpu_i32_to_f32(((const u8 *)base)[i]);
	case DRM_VNPU_DTYPE_I32:
		return vnpu_i32_to_f32(((const s32 *)base)[i]);
	default:
		return ((const u32 *)base)[i];
	}
}

/* Element @i of the integer array of type @dt (I8, U8, I32 or I64) at @base. */
static inline s64 vnpu_dtype_load_int(const void *base, u32 dt, size_t i)
{
	switch (dt) {
	case DRM_VNPU_DTYPE_I8:
		return ((const s8 *)base)[i];
	case DRM_VNPU_DTYPE_U8:
		return ((const u8 *)base)[i];
	case DRM_VNPU_DTYPE_I64:
		return ((const s64 *)base)[i];
	default:
		return ((const s32 *)base)[i];
	}
}

/* Stores fp32 bits @v as element @i of the float array of type @dt. */
static inline void vnpu_dtype_store(void *base, u32 dt, size_t i, u32 v)
{
	if (dt == DRM_VNPU_DTYPE_F16)
		((u16 *)base)[i] = vnpu_f32_to_f16(v);
	else
		((u32 *)base)[i] = v;
}

/* Copies element @j of @src to element @i of @dst, both of type @dt. */
static inline void vnpu_dtype_move(void *dst, size_t i, const void *src, size_t j, u32 dt)
{
	switch (vnpu_dtype_size(dt)) {
	case 1:
		((u8 *)dst)[i] = ((const u8 *)src)[j];
		break;
	case 2:
		((u16 *)dst)[i] = ((const u16 *)src)[j];
		break;
	case 8:
		((u64 *)dst)[i] = ((const u64 *)src)[j];
		break;
	default:
		((u32 *)dst)[i] = ((const u32 *)src)[j];
		break;
	}
}

#endif /* __VNPU_DTYPE_H__ */
