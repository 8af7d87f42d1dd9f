// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Tensors in ONNX TensorProto files, the format of ONNX's test data sets
 * (test_data_set_N/input_K.pb, output_K.pb).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph.h"

static int read_all(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;

	if (!f)
		return graph_fail(VNPU_ERROR_INVALID_VALUE, "%s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return graph_fail(VNPU_ERROR_INVALID_VALUE, "%s: not a regular file", path);
	}
	*len = (size_t)st.st_size;
	*buf = malloc(*len ? *len : 1);
	if (!*buf) {
		fclose(f);
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	}
	if (fread(*buf, 1, *len, f) != *len) {
		free(*buf);
		fclose(f);
		return graph_fail(VNPU_ERROR_INVALID_VALUE, "%s: short read", path);
	}
	fclose(f);
	return VNPU_SUCCESS;
}

int vnpu_host_tensor_read_file(const char *path, struct vnpu_host_tensor *t)
{
	Onnx__TensorProto *tp;
	char why[160];
	uint8_t *buf = NULL;
	size_t len = 0;
	int dtype, status;

	if (!path || !t)
		return vnpu_set_status(graph_fail(VNPU_ERROR_INVALID_VALUE, "NULL argument"));
	status = read_all(path, &buf, &len);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	tp = onnx__tensor_proto__unpack(NULL, len, buf);
	free(buf);
	if (!tp)
		return vnpu_set_status(graph_fail(VNPU_ERROR_INVALID_MODEL,
						  "%s: not a TensorProto (truncated or corrupt)", path));
	memset(t, 0, sizeof(*t));
	status = gb_tensor_from_proto(tp, &dtype, &t->rank, t->dims, &t->data, why, sizeof(why));
	if (status == VNPU_SUCCESS) {
		t->dtype = (uint32_t)dtype;
		t->size = gb_dtype_size(dtype);
		for (uint32_t i = 0; i < t->rank; i++)
			t->size *= (uint64_t)t->dims[i];
		snprintf(t->name, sizeof(t->name), "%s", tp->name ? tp->name : "");
	} else {
		graph_fail(status, "%s: %s", path, why);
	}
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return vnpu_set_status(status);
}

int vnpu_host_tensor_write_file(const char *path, const struct vnpu_host_tensor *t)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
	uint64_t size;
	uint8_t *buf;
	size_t len;
	FILE *f;
	int status = VNPU_SUCCESS;

	if (!path || !t || t->rank > VNPU_HOST_TENSOR_MAX_RANK ||
	    !gb_dtype_size((int)t->dtype))
		return vnpu_set_status(graph_fail(VNPU_ERROR_INVALID_VALUE, "bad tensor"));
	size = gb_dtype_size((int)t->dtype);
	for (uint32_t i = 0; i < t->rank; i++) {
		if (t->dims[i] < 0)
			return vnpu_set_status(graph_fail(VNPU_ERROR_INVALID_VALUE, "bad dimension"));
		size *= (uint64_t)t->dims[i];
	}
	if (size != t->size || (size && !t->data))
		return vnpu_set_status(graph_fail(VNPU_ERROR_INVALID_VALUE,
						  "%llu bytes of data, the shape needs %llu",
						  (unsigned long long)t->size, (unsigned long long)size));
	tp.n_dims = t->rank;
	tp.dims = (int64_t *)t->dims;
	tp.has_data_type = 1;
	tp.data_type = (int32_t)t->dtype;
	tp.name = (char *)t->name;
	tp.has_raw_data = 1;
	tp.raw_data.len = size;
	tp.raw_data.data = t->data;
	len = onnx__tensor_proto__get_packed_size(&tp);
	buf = malloc(len ? len : 1);
	if (!buf)
		return vnpu_set_status(VNPU_ERROR_OUT_OF_HOST_MEMORY);
	onnx__tensor_proto__pack(&tp, buf);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len)
		status = graph_fail(VNPU_ERROR_INVALID_VALUE, "%s: %s", path, strerror(errno));
	if (f && fclose(f) && status == VNPU_SUCCESS)
		status = graph_fail(VNPU_ERROR_INVALID_VALUE, "%s: %s", path, strerror(errno));
	free(buf);
	return vnpu_set_status(status);
}

void vnpu_host_tensor_free(struct vnpu_host_tensor *t)
{
	if (!t)
		return;
	free(t->data);
	t->data = NULL;
}
