// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-run: run an ONNX model on vnpu devices.
 *
 *   vnpu-run MODEL.onnx [--input FILE ...] [--output-dir DIR]
 *            [--memory-report] [--check-outputs FILE ...] [--streams N]
 *            [--devices N] [--batch N] [--dim NAME=SIZE ...] [--repeat N] [--warmup N]
 *
 * Inputs are TensorProto files (.pb, the format of ONNX's test data) or raw
 * little-endian files of the input's element type (float32, float16, int8,
 * uint8, int32, int64, bool as one byte) and exactly its size, in the
 * order of the model's inputs. int64 inputs (token ids, indices) are given
 * to the run; if the loader refuses the model so (an int64 input that is
 * a shape or axes, which it needs at load), the int64 TensorProto inputs
 * are given to the loader as constants of the graph instead. With
 * --devices N the batch (the first dimension of
 * every input) is split in N equal parts, each run by its own thread on its
 * own device, and the outputs are joined again. See Documentation/onnx.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensor_compare.h"
#include "vnpu.h"

#define MAX_IO 64
#define MAX_DEVICES 16

struct dev_run {
	struct vnpu_context ctx;
	struct vnpu_graph graph;
	struct vnpu_stream streams[16];
	uint32_t num_streams;
	struct vnpu_host_tensor in[MAX_IO], out[MAX_IO];
	struct vnpu_mem_info before, after_load, after_run;
	int status;
	uint64_t ns;
	unsigned int runs;
};

static const char *prog = "vnpu-run";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s MODEL.onnx [--input FILE ...] [--output-dir DIR] [--memory-report]\n"
		"       [--check-outputs FILE ...] [--rtol R] [--atol A] [--streams N] [--devices N]\n"
		"       [--batch N] [--dim NAME=SIZE ...] [--repeat N] [--warmup N]\n"
		"Runs an ONNX model on vnpu devices. Inputs and expected outputs are\n"
		"TensorProto .pb files or raw files of the input's type; see Documentation/onnx.rst.\n",
		prog);
}

static int fail(const char *what, int status)
{
	fprintf(stderr, "%s: %s: %s: %s\n", prog, what, vnpu_status_name(status),
		vnpu_graph_error_message()[0] ? vnpu_graph_error_message() : vnpu_status_string(status));
	return 1;
}

/* A count option: a decimal number from min to 1000000, else a usage error. */
static int parse_count(const char *opt, const char *s, unsigned int min, unsigned int *v)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (end == s || *end || *s == '-' || errno || n < min || n > 1000000) {
		fprintf(stderr, "%s: bad %s '%s' (want a whole number from %u to 1000000)\n",
			prog, opt, s, min);
		return 1;
	}
	*v = (unsigned int)n;
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* A raw file: exactly the bytes the graph's input needs. */
static int read_raw(const char *path, const struct vnpu_host_tensor *desc, struct vnpu_host_tensor *t)
{
	FILE *f = fopen(path, "rb");
	long size;

	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return 1;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	if (size < 0 || (uint64_t)size != desc->size) {
		fprintf(stderr, "%s: %s: %ld bytes, input '%s' needs %llu\n", prog, path, size,
			desc->name, (unsigned long long)desc->size);
		fclose(f);
		return 1;
	}
	*t = *desc;
	t->data = malloc(desc->size);
	if (!t->data || fread(t->data, 1, desc->size, f) != desc->size) {
		fprintf(stderr, "%s: %s: read failed\n", prog, path);
		fclose(f);
		return 1;
	}
	fclose(f);
	return 0;
}

/* d->runs runs of the graph: the warm-up runs, or the timed ones. */
static void *run_thread(void *arg)
{
	struct dev_run *d = arg;
	uint64_t start = now_ns();

	for (unsigned int i = 0; i < d->runs && d->status == VNPU_SUCCESS; i++)
		d->status = vnpu_graph_run(d->graph, d->streams, d->num_streams, d->in, d->out);
	d->ns = now_ns() - start;
	if (d->status != VNPU_SUCCESS)
		fprintf(stderr, "%s: run: %s: %s\n", prog, vnpu_status_name(d->status),
			vnpu_graph_error_message());
	vnpu_mem_get_info(d->ctx, &d->after_run);
	return NULL;
}

static void print_memory(struct dev_run *runs, uint32_t ndev)
{
	for (uint32_t i = 0; i < ndev; i++) {
		struct vnpu_graph_memory m;
		struct dev_run *d = &runs[i];

		if (vnpu_graph_memory_report(d->graph, &m) != VNPU_SUCCESS)
			continue;
		printf("memory report, device %u:\n", i);
		printf("  static:  %llu bytes exact (weights %llu, inputs+outputs %llu), %llu allocated\n",
		       (unsigned long long)m.static_bytes, (unsigned long long)m.weights_bytes,
		       (unsigned long long)m.io_bytes, (unsigned long long)m.static_allocated);
		printf("  dynamic: arena %llu bytes for %llu intermediates (naive sum %llu, lower bound %llu)\n",
		       (unsigned long long)m.arena_bytes, (unsigned long long)m.intermediates,
		       (unsigned long long)m.naive_bytes, (unsigned long long)m.lower_bound);
		printf("  total:   %llu bytes allocated\n", (unsigned long long)m.total_allocated);
		printf("  device:  this process used %llu bytes before load, %llu after load, peak %llu during the run; VRAM used on the device %llu of %llu\n",
		       (unsigned long long)d->before.process_used,
		       (unsigned long long)d->after_load.process_used,
		       (unsigned long long)d->after_run.process_peak,
		       (unsigned long long)(d->after_run.total - d->after_run.free),
		       (unsigned long long)d->after_run.total);
		printf("  timing:  load %.3f ms, plan %.3f ms\n", m.load_ns / 1e6, m.plan_ns / 1e6);
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output-dir", required_argument, NULL, 'o' },
		{ "memory-report", no_argument, NULL, 'm' },
		{ "check-outputs", required_argument, NULL, 'c' },
		{ "rtol", required_argument, NULL, 'R' },
		{ "atol", required_argument, NULL, 'A' },
		{ "streams", required_argument, NULL, 's' },
		{ "devices", required_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'b' },
		{ "dim", required_argument, NULL, 'D' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *inputs[MAX_IO], *checks[MAX_IO], *outdir = NULL, *model;
	unsigned int ninputs = 0, nchecks = 0, nstreams = 1, ndev = 1, repeat = 1;
	unsigned int warmup = 0;
	unsigned long long batch = 0;
	double rtol = VNPU_CMP_RTOL, atol = VNPU_CMP_ATOL;
	struct vnpu_host_tensor full_in[MAX_IO] = { 0 }, full_out[MAX_IO] = { 0 };
	struct vnpu_host_tensor consts[MAX_IO] = { 0 };
	uint32_t nconst = 0, ndims = 0;
	int has_i64 = 0, i64_const = 0;
	uint64_t batch_given;
	struct vnpu_graph_dim dims[MAX_IO];
	static struct dev_run runs[MAX_DEVICES];
	pthread_t threads[MAX_DEVICES];
	struct vnpu_graph_info info;
	int memory_report = 0, rc = 0, status, opt;
	uint32_t count;

	while ((opt = getopt_long(argc, argv, "i:o:mc:R:A:s:d:b:D:r:w:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (ninputs == MAX_IO)
				return fprintf(stderr, "%s: too many inputs\n", prog), 2;
			inputs[ninputs++] = optarg;
			break;
		case 'c':
			if (nchecks == MAX_IO)
				return fprintf(stderr, "%s: too many outputs\n", prog), 2;
			checks[nchecks++] = optarg;
			break;
		case 'R':
		case 'A': {
			char *end;
			double v = strtod(optarg, &end);

			/* !(v >= 0) also refuses NaN. */
			if (end == optarg || *end || !(v >= 0) || v == HUGE_VAL)
				return fprintf(stderr, "%s: bad tolerance '%s' (want a number >= 0)\n",
					       prog, optarg), 2;
			*(opt == 'R' ? &rtol : &atol) = v;
			break;
		}
		case 'o': outdir = optarg; break;
		case 'm': memory_report = 1; break;
		case 's': nstreams = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'd': ndev = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'b': batch = strtoull(optarg, NULL, 0); break;
		case 'D': {
			char *eq = strchr(optarg, '='), *end;
			unsigned long long v = eq ? strtoull(eq + 1, &end, 0) : 0;

			if (!eq || eq == optarg || !eq[1] || *end || !v || v > INT64_MAX ||
			    ndims == MAX_IO)
				return fprintf(stderr, "%s: bad --dim '%s' (want NAME=SIZE, SIZE >= 1)\n",
					       prog, optarg), 2;
			*eq = 0;
			dims[ndims++] = (struct vnpu_graph_dim){ .name = optarg, .size = v };
			break;
		}
		case 'r':
			if (parse_count("--repeat", optarg, 1, &repeat))
				return 2;
			break;
		case 'w':
			if (parse_count("--warmup", optarg, 0, &warmup))
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	/* Further arguments after the model are more --check-outputs files or inputs. */
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	model = argv[optind++];
	while (optind < argc && nchecks && nchecks < MAX_IO)
		checks[nchecks++] = argv[optind++];
	if (optind < argc || !(rtol >= 0) || !(atol >= 0) || !nstreams || nstreams > 16 || !ndev || ndev > MAX_DEVICES || !repeat) {
		usage(stderr);
		return 2;
	}

	status = vnpu_init(0);
	if (status != VNPU_SUCCESS)
		return fail("init", status);
	status = vnpu_device_count(&count);
	if (status == VNPU_SUCCESS && count < ndev) {
		fprintf(stderr, "%s: %u devices asked for, %u present\n", prog, ndev, count);
		vnpu_finalize();
		return 1;
	}

	/* Inputs first: their batch decides the share of each device. */
	for (unsigned int i = 0; i < ninputs; i++) {
		if (ends_with(inputs[i], ".pb")) {
			status = vnpu_host_tensor_read_file(inputs[i], &full_in[i]);
			if (status != VNPU_SUCCESS) {
				rc = fail(inputs[i], status);
				goto out;
			}
		}
	}
	/*
	 * int64 inputs go to the run; when the loader wants them at load
	 * (shapes, axes), the load is retried with them as constants.
	 */
	for (unsigned int i = 0; i < ninputs; i++)
		has_i64 |= full_in[i].data && full_in[i].dtype == VNPU_DTYPE_INT64;
	batch_given = batch;
retry_i64:
	batch = batch_given;
	if (i64_const) {
		unsigned int kept = 0;

		for (unsigned int i = 0; i < ninputs; i++) {
			if (full_in[i].data && full_in[i].dtype == VNPU_DTYPE_INT64) {
				consts[nconst++] = full_in[i];
				continue;
			}
			inputs[kept] = inputs[i];
			full_in[kept++] = full_in[i];
		}
		for (unsigned int i = kept; i < ninputs; i++)
			memset(&full_in[i], 0, sizeof(full_in[i]));
		ninputs = kept;
	}
	if (ndev > 1) {
		uint64_t b = 0;

		for (unsigned int i = 0; i < ninputs; i++)
			if (full_in[i].data && full_in[i].rank)
				b = (uint64_t)full_in[i].dims[0];
		if (!b && batch)
			b = batch;
		if (!b || b % ndev) {
			fprintf(stderr, "%s: a batch of %llu does not split over %u devices\n", prog,
				(unsigned long long)b, ndev);
			rc = 1;
			goto out;
		}
		batch = b / ndev;
	}

	for (uint32_t dv = 0; dv < ndev; dv++) {
		struct dev_run *d = &runs[dv];
		struct vnpu_graph_options opts = { .streams = nstreams, .batch = batch,
						   .constants = consts, .num_constants = nconst,
						   .flags = VNPU_GRAPH_LOAD_DIMS, .dims = dims,
						   .num_dims = ndims };

		status = vnpu_ctx_create(dv, 0, &d->ctx);
		if (status != VNPU_SUCCESS) {
			rc = fail("context", status);
			goto out;
		}
		vnpu_mem_get_info(d->ctx, &d->before);
		status = vnpu_graph_load_file(d->ctx, model, &opts, &d->graph);
		if (status == VNPU_ERROR_NOT_SUPPORTED && has_i64 && !i64_const && dv == 0) {
			/* The first device's load: nothing else to undo. */
			fprintf(stderr, "%s: int64 inputs given at load instead (%s)\n", prog,
				vnpu_graph_error_message());
			vnpu_ctx_destroy(d->ctx, 0);
			d->ctx = (struct vnpu_context){ 0 };
			i64_const = 1;
			goto retry_i64;
		}
		if (status != VNPU_SUCCESS) {
			rc = fail(model, status);
			goto out;
		}
		vnpu_mem_get_info(d->ctx, &d->after_load);
		for (uint32_t s = 0; s < nstreams && status == VNPU_SUCCESS; s++)
			status = vnpu_stream_create(d->ctx, VNPU_PRIORITY_NORMAL, 0, &d->streams[s]);
		if (status != VNPU_SUCCESS) {
			rc = fail("stream", status);
			goto out;
		}
		d->num_streams = nstreams;
	}
	vnpu_graph_get_info(runs[0].graph, &info);
	if (ninputs != info.num_inputs || info.num_outputs > MAX_IO ||
	    (nchecks && nchecks != info.num_outputs)) {
		fprintf(stderr, "%s: the model takes %u inputs and gives %u outputs; %u inputs and %u expected outputs given\n",
			prog, info.num_inputs, info.num_outputs, ninputs, nchecks);
		rc = 1;
		goto out;
	}
	/* Each device's share of the inputs, and room for its outputs. */
	for (uint32_t dv = 0; dv < ndev; dv++) {
		struct dev_run *d = &runs[dv];

		for (uint32_t i = 0; i < info.num_inputs; i++) {
			struct vnpu_host_tensor desc;

			vnpu_graph_input_desc(d->graph, i, &desc);
			if (!full_in[i].data) {
				if (read_raw(inputs[i], &desc, &full_in[i])) {
					rc = 1;
					goto out;
				}
				if (ndev > 1) {
					full_in[i].dims[0] *= ndev;
					full_in[i].size *= ndev;
					fprintf(stderr, "%s: raw inputs cannot be split; use .pb files\n", prog);
					rc = 1;
					goto out;
				}
			}
			d->in[i] = full_in[i];
			if (ndev > 1 && full_in[i].rank) {
				d->in[i].dims[0] = full_in[i].dims[0] / ndev;
				d->in[i].size = full_in[i].size / ndev;
				d->in[i].data = (char *)full_in[i].data + d->in[i].size * dv;
			}
		}
		for (uint32_t i = 0; i < info.num_outputs; i++) {
			struct vnpu_host_tensor desc;

			vnpu_graph_output_desc(d->graph, i, &desc);
			if (!full_out[i].data) {
				full_out[i] = desc;
				if (ndev > 1) {
					full_out[i].dims[0] *= ndev;
					full_out[i].size *= ndev;
				}
				full_out[i].data = calloc(1, full_out[i].size ? full_out[i].size : 1);
				if (!full_out[i].data) {
					rc = 1;
					goto out;
				}
			}
			d->out[i] = desc;
			d->out[i].data = (char *)full_out[i].data + desc.size * dv;
		}
	}
	/* The untimed warm-up runs on every device, then the timed runs. */
	for (int phase = warmup ? 0 : 1; phase < 2; phase++) {
		uint64_t start = now_ns();

		for (uint32_t dv = 0; dv < ndev; dv++) {
			runs[dv].runs = phase ? repeat : warmup;
			pthread_create(&threads[dv], NULL, run_thread, &runs[dv]);
		}
		for (uint32_t dv = 0; dv < ndev; dv++)
			pthread_join(threads[dv], NULL);
		for (uint32_t dv = 0; dv < ndev; dv++)
			if (runs[dv].status != VNPU_SUCCESS)
				rc = 1;
		if (rc)
			goto out;
		if (phase)
			printf("ran %s: %u inputs, %u outputs, %u nodes, %u device operations per run, %u stream(s), %u device(s), %u run(s) after %u warm-up run(s): %.3f ms per run\n",
			       model, info.num_inputs, info.num_outputs, info.num_nodes,
			       info.num_launches, nstreams, ndev, repeat, warmup,
			       (now_ns() - start) / 1e6 / repeat);
	}
	if (memory_report)
		print_memory(runs, ndev);
	for (uint32_t i = 0; i < info.num_outputs; i++) {
		if (outdir) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/output_%u.pb", outdir, i);
			status = vnpu_host_tensor_write_file(path, &full_out[i]);
			if (status != VNPU_SUCCESS)
				rc = fail(path, status);
		}
		if (i < nchecks) {
			struct vnpu_host_tensor want;
			char why[256];

			status = vnpu_host_tensor_read_file(checks[i], &want);
			if (status != VNPU_SUCCESS) {
				rc = fail(checks[i], status);
				continue;
			}
			if (vnpu_host_tensor_allclose(&full_out[i], &want, rtol, atol,
						 why, sizeof(why))) {
				printf("output %u ('%s'): matches %s\n", i, full_out[i].name, checks[i]);
			} else {
				printf("output %u ('%s'): MISMATCH with %s: %s\n", i, full_out[i].name,
				       checks[i], why);
				rc = 1;
			}
			vnpu_host_tensor_free(&want);
		}
	}
out:
	for (uint32_t dv = 0; dv < ndev; dv++) {
		if (runs[dv].graph.handle)
			vnpu_graph_destroy(runs[dv].graph);
		for (uint32_t s = 0; s < runs[dv].num_streams; s++)
			vnpu_stream_destroy(runs[dv].streams[s], 0);
		if (runs[dv].ctx.handle)
			vnpu_ctx_destroy(runs[dv].ctx, 0);
	}
	for (uint32_t i = 0; i < MAX_IO; i++) {
		vnpu_host_tensor_free(&full_in[i]);
		vnpu_host_tensor_free(&consts[i]);
		free(full_out[i].data);
	}
	vnpu_finalize();
	return rc;
}
