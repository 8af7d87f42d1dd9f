// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-serve: a small inference service on every vnpu device (the main
 * demo, `make demo`), and the ONNX benchmarks (`--bench`, `make
 * bench-onnx`).
 *
 *   vnpu-serve [--models DIR] [--requests N] [--threads N] [--bench]
 *
 * The models (DIR/mlp.onnx, DIR/cnn.onnx, generated at build time by
 * tools/onnx/gen-models.py) are loaded on each device with one workspace
 * per serving thread. The threads take requests from a shared counter:
 * request i has a deterministic input batch, goes to device i % devices on
 * a stream of its own created at one of three priorities, is bracketed by
 * timing events and followed by a host callback that records its
 * completion. Every output is checked against a CPU reference computed
 * here from the same weights (read from the TensorProto files in DIR/NAME/weights): the check,
 * not the execution. At the end: per-model latency percentiles, device
 * time, the memory report of every graph, and a vnpu-smi snapshot of the
 * devices while the graphs are still loaded.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensor_compare.h"
#include "vnpu.h"

#define MAX_DEVICES 2
#define MAX_THREADS 16
#define BATCH 8

enum { MLP, CNN, NUM_MODELS };
static const char *const model_names[NUM_MODELS] = { "mlp", "cnn" };

struct weights {
	struct vnpu_host_tensor t[8];
	const char *names[8];
	int count;
};

struct model {
	int loaded;
	char why[512];			/* why it is not served */
	struct vnpu_graph graph[MAX_DEVICES];
	struct vnpu_host_tensor in_desc, out_desc;
	struct weights w;
	uint64_t *latency_ns;		/* per request of this model */
	int64_t *device_ns;
	atomic_int count;
	atomic_int mismatches;
};

static struct {
	const char *dir;
	int requests, threads, devices;
	struct vnpu_context ctx[MAX_DEVICES];
	struct model models[NUM_MODELS];
	atomic_int next;
	atomic_int callbacks;
	atomic_int failures;
	int served_models[NUM_MODELS], num_served;
} S = { .dir = "build/onnx", .requests = 96, .threads = 4 };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const float *W(const struct model *m, const char *name)
{
	for (int i = 0; i < m->w.count; i++)
		if (!strcmp(m->w.names[i], name))
			return m->w.t[i].data;
	return NULL;
}

/* --- CPU references --------------------------------------------------------------- */

static void cpu_dense(const float *x, const float *w, const float *b, float *y, int rows, int in,
		      int out, int relu)
{
	for (int r = 0; r < rows; r++)
		for (int o = 0; o < out; o++) {
			float acc = b[o];

			for (int i = 0; i < in; i++)
				acc += x[r * in + i] * w[i * out + o];
			y[r * out + o] = relu && acc < 0 ? 0 : acc;
		}
}

static void cpu_softmax(float *y, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		float max = y[r * cols], sum = 0;

		for (int c = 1; c < cols; c++)
			max = fmaxf(max, y[r * cols + c]);
		for (int c = 0; c < cols; c++)
			sum += (y[r * cols + c] = expf(y[r * cols + c] - max));
		for (int c = 0; c < cols; c++)
			y[r * cols + c] /= sum;
	}
}

static void cpu_mlp(const struct model *m, const float *x, float *y, int batch)
{
	static _Thread_local float h1[BATCH * 128], h2[BATCH * 64];

	cpu_dense(x, W(m, "W0"), W(m, "b0"), h1, batch, 64, 128, 1);
	cpu_dense(h1, W(m, "W1"), W(m, "b1"), h2, batch, 128, 64, 1);
	cpu_dense(h2, W(m, "W2"), W(m, "b2"), y, batch, 64, 10, 0);
	cpu_softmax(y, batch, 10);
}

/* Valid 3x3 convolution with bias and ReLU, N x C x H x W. */
static void cpu_conv_relu(const float *x, const float *w, const float *b, float *y, int n, int c,
			  int h, int wd, int k)
{
	int oh = h - 2, ow = wd - 2;

	for (int in = 0; in < n; in++)
		for (int ok = 0; ok < k; ok++)
			for (int i = 0; i < oh; i++)
				for (int j = 0; j < ow; j++) {
					float acc = b[ok];

					for (int ic = 0; ic < c; ic++)
						for (int r = 0; r < 3; r++)
							for (int s = 0; s < 3; s++)
								acc += x[((in * c + ic) * h + i + r) * wd + j + s] *
								       w[((ok * c + ic) * 3 + r) * 3 + s];
					y[((in * k + ok) * oh + i) * ow + j] = acc < 0 ? 0 : acc;
				}
}

static void cpu_cnn(const struct model *m, const float *x, float *y, int batch)
{
	static _Thread_local float c1[BATCH * 4 * 10 * 10], p1[BATCH * 4 * 5 * 5],
		c2[BATCH * 8 * 3 * 3], g[BATCH * 8];

	cpu_conv_relu(x, W(m, "c1w"), W(m, "c1b"), c1, batch, 1, 12, 12, 4);
	for (int i = 0; i < batch * 4; i++)
		for (int r = 0; r < 5; r++)
			for (int s = 0; s < 5; s++) {
				const float *p = &c1[i * 100 + r * 20 + s * 2];

				p1[i * 25 + r * 5 + s] = fmaxf(fmaxf(p[0], p[1]), fmaxf(p[10], p[11]));
			}
	cpu_conv_relu(p1, W(m, "c2w"), W(m, "c2b"), c2, batch, 4, 5, 5, 8);
	for (int i = 0; i < batch * 8; i++) {
		float sum = 0;

		for (int j = 0; j < 9; j++)
			sum += c2[i * 9 + j];
		g[i] = sum / 9;
	}
	cpu_dense(g, W(m, "fcw"), W(m, "fcb"), y, batch, 8, 10, 0);
	cpu_softmax(y, batch, 10);
}

static void cpu_reference(int model, const float *x, float *y, int batch)
{
	if (model == MLP)
		cpu_mlp(&S.models[model], x, y, batch);
	else
		cpu_cnn(&S.models[model], x, y, batch);
}

/* --- requests ----------------------------------------------------------------------- */

/* Deterministic input of request @id. */
static void make_input(uint32_t id, float *x, uint64_t count)
{
	uint32_t s = id * 2654435761u + 12345u;

	for (uint64_t i = 0; i < count; i++) {
		s = s * 1664525u + 1013904223u;
		x[i] = (float)((int32_t)(s >> 8) % 2000) / 1000.0f;
	}
}

static void request_done(void *user, int status)
{
	(void)user;
	if (status == VNPU_SUCCESS)
		atomic_fetch_add(&S.callbacks, 1);
}

static int serve_one(int id, float *x, float *y, float *ref)
{
	static const int prio[3] = { VNPU_PRIORITY_HIGH, VNPU_PRIORITY_NORMAL, VNPU_PRIORITY_LOW };
	int model = S.served_models[id % S.num_served], dev = (id / S.num_served) % S.devices;
	struct model *m = &S.models[model];
	struct vnpu_host_tensor in = m->in_desc, out = m->out_desc;
	struct vnpu_event start, end;
	struct vnpu_stream s;
	uint64_t t0, t1;
	int64_t dev_ns = 0;
	int slot, status;
	char why[256];

	make_input((uint32_t)id, x, m->in_desc.size / 4);
	in.data = x;
	out.data = y;
	t0 = now_ns();
	status = vnpu_stream_create(S.ctx[dev], prio[id % 3], 0, &s);
	if (status != VNPU_SUCCESS)
		return status;
	vnpu_event_create(S.ctx[dev], VNPU_EVENT_TIMING, &start);
	vnpu_event_create(S.ctx[dev], VNPU_EVENT_TIMING, &end);
	vnpu_event_record(start, s);
	status = vnpu_graph_run(m->graph[dev], &s, 1, &in, &out);
	if (status == VNPU_SUCCESS) {
		vnpu_event_record(end, s);
		vnpu_stream_add_callback(s, request_done, NULL);
		status = vnpu_stream_synchronize(s, VNPU_TIMEOUT_INFINITE);
	} else {
		fprintf(stderr, "vnpu-serve: request %d: %s\n", id, vnpu_graph_error_message());
	}
	t1 = now_ns();
	if (status == VNPU_SUCCESS)
		vnpu_event_elapsed_ns(start, end, &dev_ns);
	vnpu_event_destroy(start);
	vnpu_event_destroy(end);
	vnpu_stream_destroy(s, 0);
	if (status != VNPU_SUCCESS)
		return status;
	slot = atomic_fetch_add(&m->count, 1);
	m->latency_ns[slot] = t1 - t0;
	m->device_ns[slot] = dev_ns;
	cpu_reference(model, x, ref, BATCH);
	{
		struct vnpu_host_tensor want = out;

		want.data = ref;
		if (!vnpu_host_tensor_allclose(&out, &want, VNPU_CMP_RTOL, 1e-6, why, sizeof(why))) {
			fprintf(stderr, "vnpu-serve: request %d (%s, device %d): output differs from the CPU reference: %s\n",
				id, model_names[model], dev, why);
			atomic_fetch_add(&m->mismatches, 1);
		}
	}
	return VNPU_SUCCESS;
}

static void *server(void *arg)
{
	float *x = calloc(BATCH * 144, sizeof(float)), *y = calloc(BATCH * 10, sizeof(float));
	float *ref = calloc(BATCH * 10, sizeof(float));

	(void)arg;
	for (int id; x && y && ref && (id = atomic_fetch_add(&S.next, 1)) < S.requests;)
		if (serve_one(id, x, y, ref) != VNPU_SUCCESS)
			atomic_fetch_add(&S.failures, 1);
	free(x);
	free(y);
	free(ref);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(uint64_t *v, int n, double p)
{
	int i = (int)ceil(p / 100.0 * n) - 1;

	return v[i < 0 ? 0 : i] / 1e6;
}

/* --- setup ------------------------------------------------------------------------ */

static int load_weights(struct model *m, const char *name)
{
	static const char *const mlp_w[] = { "W0", "b0", "W1", "b1", "W2", "b2", NULL };
	static const char *const cnn_w[] = { "c1w", "c1b", "c2w", "c2b", "fcw", "fcb", NULL };
	const char *const *list = !strcmp(name, "mlp") ? mlp_w : cnn_w;

	for (int i = 0; list[i]; i++) {
		char path[512];
		int status;

		snprintf(path, sizeof(path), "%s/%s/weights/%s.pb", S.dir, name, list[i]);
		status = vnpu_host_tensor_read_file(path, &m->w.t[i]);
		if (status != VNPU_SUCCESS) {
			fprintf(stderr, "vnpu-serve: %s: %s\n", path, vnpu_graph_error_message());
			return status;
		}
		m->w.names[i] = list[i];
		m->w.count = i + 1;
	}
	return VNPU_SUCCESS;
}

static void load_models(void)
{
	for (int k = 0; k < NUM_MODELS; k++) {
		struct model *m = &S.models[k];
		struct vnpu_graph_options opts = { .workspaces = (uint32_t)S.threads,
						   .plan_strategy = VNPU_PLAN_BEST };
		char path[512];
		int status = VNPU_SUCCESS;

		snprintf(path, sizeof(path), "%s/%s.onnx", S.dir, model_names[k]);
		for (int d = 0; d < S.devices && status == VNPU_SUCCESS; d++) {
			status = vnpu_graph_load_file(S.ctx[d], path, &opts, &m->graph[d]);
			if (status != VNPU_SUCCESS)
				snprintf(m->why, sizeof(m->why), "%s: %s", vnpu_status_name(status),
					 vnpu_graph_error_message());
		}
		if (status == VNPU_SUCCESS)
			status = load_weights(m, model_names[k]);
		if (status != VNPU_SUCCESS) {
			printf("model %-4s not served: %s\n", model_names[k], m->why);
			continue;
		}
		vnpu_graph_input_desc(m->graph[0], 0, &m->in_desc);
		vnpu_graph_output_desc(m->graph[0], 0, &m->out_desc);
		m->latency_ns = calloc((size_t)S.requests, sizeof(*m->latency_ns));
		m->device_ns = calloc((size_t)S.requests, sizeof(*m->device_ns));
		m->loaded = 1;
		S.served_models[S.num_served++] = k;
		printf("model %-4s loaded on %d device(s), %d workspaces each\n", model_names[k],
		       S.devices, S.threads);
	}
}

static void memory_report(void)
{
	for (int k = 0; k < NUM_MODELS; k++) {
		struct vnpu_graph_memory mem;

		if (!S.models[k].loaded || vnpu_graph_memory_report(S.models[k].graph[0], &mem))
			continue;
		printf("memory %-4s (per device): static %llu B exact (weights %llu, I/O %llu x %d workspaces), "
		       "dynamic arena %llu B x %d (naive %llu, lower bound %llu), total allocated %llu B; "
		       "load %.2f ms, plan %.2f ms\n",
		       model_names[k], (unsigned long long)mem.static_bytes,
		       (unsigned long long)mem.weights_bytes, (unsigned long long)mem.io_bytes,
		       S.threads, (unsigned long long)mem.arena_bytes, S.threads,
		       (unsigned long long)mem.naive_bytes, (unsigned long long)mem.lower_bound,
		       (unsigned long long)mem.total_allocated, mem.load_ns / 1e6, mem.plan_ns / 1e6);
	}
	for (int d = 0; d < S.devices; d++) {
		struct vnpu_mem_info info;

		if (vnpu_mem_get_info(S.ctx[d], &info) == VNPU_SUCCESS)
			printf("device %d: this process uses %llu B (peak %llu B), VRAM used %llu of %llu B\n",
			       d, (unsigned long long)info.process_used,
			       (unsigned long long)info.process_peak,
			       (unsigned long long)(info.total - info.free),
			       (unsigned long long)info.total);
	}
}

/* --- benchmarks ------------------------------------------------------------------ */

static double run_ms(struct vnpu_graph g, struct vnpu_stream *s, uint32_t ns,
		     struct vnpu_host_tensor *in, struct vnpu_host_tensor *out, int iters)
{
	uint64_t t0;

	vnpu_graph_run(g, s, ns, in, out);	/* warm */
	t0 = now_ns();
	for (int i = 0; i < iters; i++)
		if (vnpu_graph_run(g, s, ns, in, out) != VNPU_SUCCESS)
			return -1;
	return (now_ns() - t0) / 1e6 / iters;
}

struct split_arg {
	struct vnpu_graph g;
	struct vnpu_stream s;
	struct vnpu_host_tensor in, out;
	int iters;
};

static void *split_thread(void *arg)
{
	struct split_arg *a = arg;

	for (int i = 0; i < a->iters; i++)
		vnpu_graph_run(a->g, &a->s, 1, &a->in, &a->out);
	return NULL;
}

static void bench_model(const char *name, int iters)
{
	struct vnpu_graph_options one = { .plan_strategy = VNPU_PLAN_BEST };
	struct vnpu_graph_options two = { .streams = 2, .plan_strategy = VNPU_PLAN_BEST };
	struct vnpu_host_tensor in, out, half_in[2], half_out[2];
	struct vnpu_graph g1, g2, gh[MAX_DEVICES];
	struct vnpu_stream s[2], sd[MAX_DEVICES];
	struct vnpu_graph_memory mem;
	double ms1, ms2, msd = -1, cpu = -1;
	char path[512];
	int model = !strcmp(name, "mlp") ? MLP : !strcmp(name, "cnn") ? CNN : -1;

	snprintf(path, sizeof(path), "%s/%s.onnx", S.dir, name);
	if (vnpu_graph_load_file(S.ctx[0], path, &one, &g1) != VNPU_SUCCESS) {
		printf("| %-8s | not supported: %s |\n", name, vnpu_graph_error_message());
		return;
	}
	vnpu_graph_load_file(S.ctx[0], path, &two, &g2);
	vnpu_graph_memory_report(g1, &mem);
	vnpu_stream_create(S.ctx[0], VNPU_PRIORITY_NORMAL, 0, &s[0]);
	vnpu_stream_create(S.ctx[0], VNPU_PRIORITY_NORMAL, 0, &s[1]);
	vnpu_graph_input_desc(g1, 0, &in);
	vnpu_graph_output_desc(g1, 0, &out);
	in.data = calloc(1, in.size);
	out.data = calloc(1, out.size);
	make_input(7, in.data, in.size / 4);
	ms1 = run_ms(g1, s, 1, &in, &out, iters);
	ms2 = run_ms(g2, s, 2, &in, &out, iters);
	if (S.devices > 1) {
		struct split_arg a[MAX_DEVICES];
		pthread_t t[MAX_DEVICES];
		struct vnpu_graph_options half = { .batch = in.dims[0] / 2,
						   .plan_strategy = VNPU_PLAN_BEST };
		uint64_t t0;

		for (int d = 0; d < 2; d++) {
			vnpu_graph_load_file(S.ctx[d], path, &half, &gh[d]);
			vnpu_stream_create(S.ctx[d], VNPU_PRIORITY_NORMAL, 0, &sd[d]);
			half_in[d] = in;
			half_in[d].dims[0] /= 2;
			half_in[d].size /= 2;
			half_in[d].data = (char *)in.data + half_in[d].size * d;
			vnpu_graph_output_desc(gh[d], 0, &half_out[d]);
			half_out[d].data = (char *)out.data + half_out[d].size * d;
			a[d] = (struct split_arg){ gh[d], sd[d], half_in[d], half_out[d], 1 };
			split_thread(&a[d]);	/* warm */
			a[d].iters = iters;
		}
		t0 = now_ns();
		for (int d = 0; d < 2; d++)
			pthread_create(&t[d], NULL, split_thread, &a[d]);
		for (int d = 0; d < 2; d++)
			pthread_join(t[d], NULL);
		msd = (now_ns() - t0) / 1e6 / iters;
		for (int d = 0; d < 2; d++) {
			vnpu_graph_destroy(gh[d]);
			vnpu_stream_destroy(sd[d], 0);
		}
	}
	if (model >= 0 && S.models[model].loaded) {
		float *y = calloc(1, out.size);
		uint64_t t0 = now_ns();

		for (int i = 0; i < iters; i++)
			cpu_reference(model, in.data, y, (int)in.dims[0]);
		cpu = (now_ns() - t0) / 1e6 / iters;
		free(y);
	}
	printf("| %-8s | %7.2f | %6.2f | %6llu | %6llu | %6llu | %7.3f | %7.3f | %7.3f | %7.3f |\n",
	       name, mem.load_ns / 1e6, mem.plan_ns / 1e6, (unsigned long long)mem.arena_bytes,
	       (unsigned long long)mem.naive_bytes, (unsigned long long)mem.lower_bound, ms1, ms2,
	       msd, cpu);
	vnpu_graph_destroy(g1);
	vnpu_graph_destroy(g2);
	vnpu_stream_destroy(s[0], 0);
	vnpu_stream_destroy(s[1], 0);
	free(in.data);
	free(out.data);
}

static void bench(void)
{
	printf("| model    | load ms | plan ms | arena B | naive B | LB B   | 1 stream ms | 2 streams ms | 2 devices ms | CPU ref ms |\n");
	bench_model("mlp", 20);
	bench_model("cnn", 20);
	bench_model("branches", 20);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "models", required_argument, NULL, 'm' },
		{ "requests", required_argument, NULL, 'r' },
		{ "threads", required_argument, NULL, 't' },
		{ "bench", no_argument, NULL, 'b' },
		{ 0 }
	};
	pthread_t threads[MAX_THREADS];
	int do_bench = 0, opt, rc = 0, status;
	uint32_t count = 0;
	uint64_t t0, elapsed;

	while ((opt = getopt_long(argc, argv, "m:r:t:b", longopts, NULL)) != -1) {
		switch (opt) {
		case 'm': S.dir = optarg; break;
		case 'r': S.requests = atoi(optarg); break;
		case 't': S.threads = atoi(optarg); break;
		case 'b': do_bench = 1; break;
		default:
			fprintf(stderr, "usage: vnpu-serve [--models DIR] [--requests N] [--threads N] [--bench]\n");
			return 2;
		}
	}
	if (S.requests < 1 || S.threads < 1 || S.threads > MAX_THREADS) {
		fprintf(stderr, "vnpu-serve: bad --requests or --threads\n");
		return 2;
	}
	status = vnpu_init(0);
	if (status == VNPU_SUCCESS)
		status = vnpu_device_count(&count);
	if (status != VNPU_SUCCESS || !count) {
		fprintf(stderr, "vnpu-serve: no device: %s\n", vnpu_status_name(status));
		return 1;
	}
	S.devices = count < MAX_DEVICES ? (int)count : MAX_DEVICES;
	for (int d = 0; d < S.devices; d++)
		if (vnpu_ctx_create((uint32_t)d, 0, &S.ctx[d]) != VNPU_SUCCESS)
			return fprintf(stderr, "vnpu-serve: context on device %d failed\n", d), 1;
	load_models();
	if (do_bench) {
		bench();
		goto out;
	}
	if (!S.num_served) {
		fprintf(stderr, "vnpu-serve: no model can be served\n");
		rc = 1;
		goto out;
	}
	printf("serving %d requests (batch %d) from %d threads on %d device(s), per-request streams at high/normal/low priority\n",
	       S.requests, BATCH, S.threads, S.devices);
	t0 = now_ns();
	for (int i = 0; i < S.threads; i++)
		pthread_create(&threads[i], NULL, server, NULL);
	for (int i = 0; i < S.threads; i++)
		pthread_join(threads[i], NULL);
	elapsed = now_ns() - t0;
	printf("served in %.1f ms: %d failed, %d callbacks ran\n", elapsed / 1e6,
	       atomic_load(&S.failures), atomic_load(&S.callbacks));
	for (int j = 0; j < S.num_served; j++) {
		struct model *m = &S.models[S.served_models[j]];
		int n = atomic_load(&m->count);
		double dev = 0;

		if (!n)
			continue;
		for (int i = 0; i < n; i++)
			dev += m->device_ns[i] / 1e6;
		qsort(m->latency_ns, (size_t)n, sizeof(*m->latency_ns), cmp_u64);
		printf("latency %-4s: %d requests, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms; device time mean %.2f ms; outputs vs CPU reference: %d of %d match\n",
		       model_names[S.served_models[j]], n, pct(m->latency_ns, n, 50),
		       pct(m->latency_ns, n, 90), pct(m->latency_ns, n, 99),
		       pct(m->latency_ns, n, 100), dev / n, n - atomic_load(&m->mismatches), n);
		if (atomic_load(&m->mismatches))
			rc = 1;
	}
	if (atomic_load(&S.failures) || atomic_load(&S.callbacks) != S.requests)
		rc = 1;
	memory_report();
	fflush(stdout);
	/* The devices as the kernel reports them, with this process's graphs loaded. */
	if (system("build/bin/vnpu-smi") != 0)
		printf("vnpu-smi failed\n");
	printf("demo %s\n", rc ? "FAILED" : "passed: every output matched the CPU reference");
out:
	for (int k = 0; k < NUM_MODELS; k++) {
		struct model *m = &S.models[k];

		for (int d = 0; d < S.devices && m->loaded; d++)
			vnpu_graph_destroy(m->graph[d]);
		for (int i = 0; i < m->w.count; i++)
			vnpu_host_tensor_free(&m->w.t[i]);
		free(m->latency_ns);
		free(m->device_ns);
	}
	for (int d = 0; d < S.devices; d++)
		vnpu_ctx_destroy(S.ctx[d], 0);
	vnpu_finalize();
	return rc;
}
