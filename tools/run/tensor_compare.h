/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Comparing a computed tensor with an expected one the way ONNX's backend
 * tests do (numpy.testing.assert_allclose): |got - want| <= atol + rtol *
 * |want| for every element, NaN matching NaN; integer and bool tensors
 * exactly. Shared by vnpu-run, the
 * conformance runner and the demo.
 */
#ifndef VNPU_TENSOR_COMPARE_H
#define VNPU_TENSOR_COMPARE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vnpu.h"

/* ONNX backend test defaults. */
#define VNPU_CMP_RTOL 1e-3
#define VNPU_CMP_ATOL 1e-7

/* Element @i of the float or float16 tensor @t. */
static inline double vnpu_host_tensor_value(const struct vnpu_host_tensor *t, uint64_t i)
{
	if (t->dtype == VNPU_DTYPE_FLOAT16)
		return (double)((const _Float16 *)t->data)[i];
	return ((const float *)t->data)[i];
}

/*
 * Returns 1 when @got matches @want in type, shape and values (float16
 * values compared as the numbers they are); otherwise 0
 * with the first difference described in @why.
 */
static inline int vnpu_host_tensor_allclose(const struct vnpu_host_tensor *got, const struct vnpu_host_tensor *want,
				       double rtol, double atol, char *why, size_t whylen)
{
	uint64_t count = 1;

	if (got->dtype != want->dtype || got->rank != want->rank) {
		snprintf(why, whylen, "type %u rank %u, expected type %u rank %u", got->dtype,
			 got->rank, want->dtype, want->rank);
		return 0;
	}
	for (uint32_t i = 0; i < got->rank; i++) {
		if (got->dims[i] != want->dims[i]) {
			snprintf(why, whylen, "dimension %u is %lld, expected %lld", i,
				 (long long)got->dims[i], (long long)want->dims[i]);
			return 0;
		}
		count *= (uint64_t)want->dims[i];
	}
	/* Integer and bool tensors: the bytes, exactly. */
	if (want->dtype != VNPU_DTYPE_FLOAT && want->dtype != VNPU_DTYPE_FLOAT16) {
		if (got->size < want->size || memcmp(got->data, want->data, want->size)) {
			snprintf(why, whylen, "integer values differ");
			return 0;
		}
		return 1;
	}
	for (uint64_t i = 0; i < count; i++) {
		double g = vnpu_host_tensor_value(got, i), w = vnpu_host_tensor_value(want, i);

		if (isnan(w) && isnan(g))
			continue;
		if (isinf(w) && g == w)
			continue;
		if (!(fabs(g - w) <= atol + rtol * fabs(w))) {
			snprintf(why, whylen, "element %llu is %.9g, expected %.9g (rtol %g, atol %g)",
				 (unsigned long long)i, g, w, rtol, atol);
			return 0;
		}
	}
	return 1;
}

#endif
