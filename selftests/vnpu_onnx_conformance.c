// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: ONNX's backend node tests (Debian's libonnx-testdata) on a
 * vnpu device. Every test directory holds model.onnx and
 * test_data_set_N/{input,output}_K.pb. The model is loaded for each data
 * set with every input given at run (int64 indices too: Gather and
 * GatherElements read them on the device); if the loader refuses that,
 * with the set's int64 inputs (shapes and axes) given as constants
 * (vnpu_graph_options.constants), and all its inputs when the loader wants
 * an operator's parameter constant (Resize's scales or roi, which exporters
 * store as initializers). A model the graph loader rejects as not
 * supported (an operator, attribute or type the device cannot run) is
 * skipped with the loader's reason; every other model must load, run and
 * match each data set's outputs within ONNX's default tolerances (rtol
 * 1e-3, atol 1e-7). One TAP result per test.
 *
 *   vnpu_onnx_conformance [NODE_TEST_DIR] [NAME_FILTER]
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest.h"
#include "../tools/run/tensor_compare.h"
#include "vnpu.h"
#include "vnpu_rt_memory.h"

#define NODE_TESTS "/usr/share/libonnx-testdata/data/node"
#define MAX_IO 16

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int file_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

enum outcome { PASSED, FAILED, UNSUPPORTED };

/*
 * Loads and runs one data set of a test. Every input is given to the run;
 * if the loader refuses that and there are int64 inputs, those (shapes and
 * axes) are given to the loader as constants, the others to the run; if
 * the loader then wants an operator's parameter constant, every input is
 * given at load.
 */
static enum outcome run_set(struct vnpu_context ctx, struct vnpu_stream s, const char *dir,
			    int set, char *why, size_t whylen)
{
	struct vnpu_host_tensor in[MAX_IO] = { 0 }, want[MAX_IO] = { 0 }, got[MAX_IO] = { 0 };
	struct vnpu_host_tensor consts[MAX_IO], runs[MAX_IO];
	struct vnpu_graph_options opts = { 0 };
	struct vnpu_graph_info info;
	struct vnpu_graph g = { 0 };
	enum outcome rc = PASSED;
	uint32_t nin = 0, nconst = 0, nrun = 0;
	char path[4400];
	int status;

	for (; nin < MAX_IO; nin++) {
		snprintf(path, sizeof(path), "%s/test_data_set_%d/input_%u.pb", dir, set, nin);
		if (!file_exists(path))
			break;
		status = vnpu_host_tensor_read_file(path, &in[nin]);
		if (status != VNPU_SUCCESS) {
			/* Data the runner cannot read: a model the loader refuses is unsupported. */
			snprintf(why, whylen, "set %d input %u: %s", set, nin,
				 vnpu_graph_error_message());
			snprintf(path, sizeof(path), "%s/model.onnx", dir);
			status = vnpu_graph_load_file(ctx, path, NULL, &g);
			if (status == VNPU_ERROR_NOT_SUPPORTED)
				snprintf(why, whylen, "%s", vnpu_graph_error_message());
			rc = status == VNPU_ERROR_NOT_SUPPORTED ? UNSUPPORTED : FAILED;
			goto out;
		}
		if (in[nin].dtype == VNPU_DTYPE_INT64)
			consts[nconst++] = in[nin];
		runs[nrun++] = in[nin];
	}
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	status = vnpu_graph_load_file(ctx, path, &opts, &g);
	if (status == VNPU_ERROR_NOT_SUPPORTED && nconst) {
		/* int64 inputs the loader needs (shapes, axes): given at load. */
		nrun = 0;
		for (uint32_t i = 0; i < nin; i++)
			if (in[i].dtype != VNPU_DTYPE_INT64)
				runs[nrun++] = in[i];
		opts.constants = consts;
		opts.num_constants = nconst;
		status = vnpu_graph_load_file(ctx, path, &opts, &g);
	}
	if (status == VNPU_ERROR_NOT_SUPPORTED &&
	    strstr(vnpu_graph_error_message(), "must be a constant")) {
		/*
		 * An operator's parameter given as a graph input (Resize's
		 * scales or roi), which exporters store as initializers: the
		 * set again, every input given at load.
		 */
		memcpy(consts, in, nin * sizeof(*in));
		opts.constants = consts;
		opts.num_constants = nconst = nin;
		nrun = 0;
		status = vnpu_graph_load_file(ctx, path, &opts, &g);
	}
	if (status != VNPU_SUCCESS) {
		snprintf(why, whylen, "%s%s%s", status == VNPU_ERROR_NOT_SUPPORTED ? "" : "load: ",
			 status == VNPU_ERROR_NOT_SUPPORTED ? "" : vnpu_status_name(status),
			 vnpu_graph_error_message());
		rc = status == VNPU_ERROR_NOT_SUPPORTED ? UNSUPPORTED : FAILED;
		goto out;
	}
	vnpu_graph_get_info(g, &info);
	if (info.num_inputs != nrun || info.num_outputs > MAX_IO) {
		snprintf(why, whylen, "set %d: %u inputs given, the graph takes %u", set, nrun,
			 info.num_inputs);
		rc = FAILED;
		goto out;
	}
	for (uint32_t i = 0; i < info.num_outputs; i++) {
		snprintf(path, sizeof(path), "%s/test_data_set_%d/output_%u.pb", dir, set, i);
		status = vnpu_host_tensor_read_file(path, &want[i]);
		if (status != VNPU_SUCCESS) {
			snprintf(why, whylen, "set %d output %u: %s", set, i,
				 vnpu_graph_error_message());
			rc = FAILED;
			goto out;
		}
		vnpu_graph_output_desc(g, i, &got[i]);
		got[i].data = calloc(1, got[i].size ? got[i].size : 1);
		if (!got[i].data) {
			rc = FAILED;
			goto out;
		}
	}
	status = vnpu_graph_run(g, &s, 1, runs, got);
	if (status != VNPU_SUCCESS) {
		snprintf(why, whylen, "set %d: run: %s: %s", set, vnpu_status_name(status),
			 vnpu_graph_error_message());
		rc = FAILED;
		goto out;
	}
	for (uint32_t i = 0; i < info.num_outputs; i++) {
		char diff[256];

		if (!vnpu_host_tensor_allclose(&got[i], &want[i], VNPU_CMP_RTOL, VNPU_CMP_ATOL,
					      diff, sizeof(diff))) {
			snprintf(why, whylen, "set %d output %u: %s", set, i, diff);
			rc = FAILED;
			break;
		}
	}
out:
	if (g.handle)
		vnpu_graph_destroy(g);
	for (uint32_t i = 0; i < MAX_IO; i++) {
		vnpu_host_tensor_free(&in[i]);
		vnpu_host_tensor_free(&want[i]);
		free(got[i].data);
	}
	return rc;
}

/* Every data set of one test: the first failure or unsupported set decides. */
static enum outcome run_test(struct vnpu_context ctx, struct vnpu_stream s, const char *dir,
			     char *why, size_t whylen)
{
	char path[4400];
	int set;

	for (set = 0;; set++) {
		enum outcome rc;

		snprintf(path, sizeof(path), "%s/test_data_set_%d", dir, set);
		if (!file_exists(path))
			break;
		rc = run_set(ctx, s, dir, set, why, whylen);
		if (rc != PASSED)
			return rc;
	}
	if (!set) {
		snprintf(why, whylen, "no test data set");
		return FAILED;
	}
	return PASSED;
}

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : NODE_TESTS;
	const char *filter = argc > 2 ? argv[2] : NULL;
	uint64_t baseline, now;
	struct vnpu_context ctx;
	struct vnpu_stream s;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	DIR *d;
	int status;

	ksft_print_header();
	d = opendir(root);
	if (!d)
		ksft_exit_skip("no ONNX node tests at %s (install libonnx-testdata)\n", root);
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "test_", 5) || (filter && !strstr(de->d_name, filter)))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				ksft_exit_fail_msg("out of memory\n");
		}
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	/* One result per test, and one for the device memory coming back. */
	ksft_set_plan((unsigned int)n + 1);

	status = vnpu_init(0);
	if (status != VNPU_SUCCESS)
		ksft_exit_fail_msg("vnpu_init: %s\n", vnpu_status_name(status));
	if (vnpu_ctx_create(0, 0, &ctx) || vnpu_stream_create(ctx, VNPU_PRIORITY_NORMAL, 0, &s))
		ksft_exit_fail_msg("context or stream: %s\n", vnpu_status_name(vnpu_get_last_error()));
	baseline = used_settled(ctx, UINT64_MAX);

	for (size_t i = 0; i < n; i++) {
		char dir[4096], why[600];

		snprintf(dir, sizeof(dir), "%s/%s", root, names[i]);
		switch (run_test(ctx, s, dir, why, sizeof(why))) {
		case PASSED:
			ksft_test_result_pass("%s\n", names[i]);
			break;
		case UNSUPPORTED:
			ksft_test_result_skip("%s unsupported: %s\n", names[i], why);
			break;
		default:
			ksft_test_result_fail("%s %s\n", names[i], why);
		}
		free(names[i]);
	}
	free(names);
	/* Every graph freed all of its device memory. */
	vnpu_stream_synchronize(s, -1);
	now = used_settled(ctx, baseline);
	ksft_test_result(now == baseline,
			 "device memory back to %llu bytes after every graph (now %llu)\n",
			 (unsigned long long)baseline, (unsigned long long)now);
	vnpu_stream_destroy(s, 0);
	vnpu_ctx_destroy(ctx, 0);
	vnpu_finalize();
	ksft_finished();
}
