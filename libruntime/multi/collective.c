// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Collectives over a ring of devices. Every data movement is a peer copy
 * (the receiving device's copy of the previous device's buffer, over the
 * link between them) and every sum is the receiving device's ADD operator;
 * the host only orders the work. Each rank's step waits for the previous
 * rank's step before it (a syncobj point carried across devices as a
 * sync_file), so the ring runs as a pipeline without host round trips.
 *
 * Ranks are placed on the ring by (topology node, board, device index):
 * the devices of a board are neighbours, then the boards of a node, so the
 * ring crosses each slower link class as few times as possible.
 *
 * Hazards: a step reads the previous rank's buffer, so before a rank
 * overwrites what its successor still has to read (the all-gather after
 * the reduce-scatter), it waits for the successor; and every collective
 * ends with each rank waiting for its successor, so once a rank's stream
 * reaches the end, nobody reads its buffers any more.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>

#include "core/runtime.h"
#include "multi.h"

#define VNPU_COMM_MAX_RANKS 64
/* Largest n of one ADD launch (the driver's dimension limit). */
#define ADD_MAX_ELEMS (1u << 24)

struct vnpu_comm_obj {
	struct vnpu_obj obj;
	uint32_t count;
	struct vnpu_stream_obj **streams;	/* by rank, referenced */
	uint32_t *ring;				/* ranks in ring order */
	uint32_t *pos;				/* ring position of each rank */
	/* Serializes the collectives of the communicator; protects the scratch below. */
	pthread_mutex_t lock;
	uint64_t *scratch;			/* by rank: device memory, 0 for none */
	uint64_t *scratch_size;
};

static void comm_release(struct vnpu_obj *obj)
{
	struct vnpu_comm_obj *c = (struct vnpu_comm_obj *)obj;

	for (uint32_t r = 0; r < c->count; r++) {
		if (!c->streams[r])
			continue;
		/* Queued work keeps its buffers: the driver holds them until done. */
		if (c->scratch[r])
			vnpu_ctx_free_device(c->streams[r]->ctx, c->scratch[r]);
		vnpu_obj_put(&c->streams[r]->obj);
	}
	pthread_mutex_destroy(&c->lock);
	free(c->streams);
	free(c->ring);
	free(c->pos);
	free(c->scratch);
	free(c->scratch_size);
	free(c);
}

struct ring_key {
	uint32_t rank;
	struct vnpu_device_location loc;
	uint32_t physical;
};

static int cmp_ring_key(const void *pa, const void *pb)
{
	const struct ring_key *a = pa, *b = pb;

	if (a->loc.topology_node != b->loc.topology_node)
		return a->loc.topology_node < b->loc.topology_node ? -1 : 1;
	if (a->loc.board != b->loc.board)
		return a->loc.board < b->loc.board ? -1 : 1;
	return (a->physical > b->physical) - (a->physical < b->physical);
}

/* Orders the ranks on the ring by where their devices sit. */
static int build_ring(struct vnpu_comm_obj *c)
{
	struct ring_key *keys = calloc(c->count, sizeof(*keys));
	int status = VNPU_SUCCESS;

	if (!keys)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (uint32_t r = 0; r < c->count && status == VNPU_SUCCESS; r++) {
		struct vnpu_rt_device dev;

		keys[r].rank = r;
		status = vnpu_device_get_location(c->streams[r]->ctx->device, &keys[r].loc);
		if (status == VNPU_SUCCESS)
			status = vnpu_rt_device(c->streams[r]->ctx->device, &dev);
		if (status == VNPU_SUCCESS)
			keys[r].physical = dev.physical_index;
	}
	if (status == VNPU_SUCCESS) {
		qsort(keys, c->count, sizeof(*keys), cmp_ring_key);
		for (uint32_t p = 0; p < c->count; p++) {
			c->ring[p] = keys[p].rank;
			c->pos[keys[p].rank] = p;
		}
	}
	free(keys);
	return status;
}

int vnpu_comm_create(uint32_t count, const struct vnpu_stream *streams, struct vnpu_comm *out)
{
	struct vnpu_comm_obj *c;
	int status;

	if (!streams || !out || !count || count > VNPU_COMM_MAX_RANKS)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = vnpu_rt_enter();
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	c = calloc(1, sizeof(*c));
	if (!c)
		return vnpu_set_status(VNPU_ERROR_OUT_OF_HOST_MEMORY);
	c->count = count;
	c->obj.release = comm_release;
	c->obj.created_by = __builtin_return_address(0);
	pthread_mutex_init(&c->lock, NULL);
	c->streams = calloc(count, sizeof(*c->streams));
	c->ring = calloc(count, sizeof(*c->ring));
	c->pos = calloc(count, sizeof(*c->pos));
	c->scratch = calloc(count, sizeof(*c->scratch));
	c->scratch_size = calloc(count, sizeof(*c->scratch_size));
	if (!c->streams || !c->ring || !c->pos || !c->scratch || !c->scratch_size) {
		comm_release(&c->obj);
		return vnpu_set_status(VNPU_ERROR_OUT_OF_HOST_MEMORY);
	}
	for (uint32_t r = 0; r < count && status == VNPU_SUCCESS; r++) {
		status = vnpu_stream_get(streams[r], &c->streams[r]);
		for (uint32_t q = 0; q < r && status == VNPU_SUCCESS; q++)
			if (c->streams[q]->ctx->device == c->streams[r]->ctx->device)
				status = VNPU_ERROR_INVALID_VALUE;
	}
	if (status == VNPU_SUCCESS)
		status = build_ring(c);
	if (status == VNPU_SUCCESS)
		status = vnpu_handle_alloc(&c->obj, VNPU_OBJ_COMM);
	if (status != VNPU_SUCCESS) {
		comm_release(&c->obj);
		return vnpu_set_status(status);
	}
	out->handle = c->obj.handle;
	return VNPU_SUCCESS;
}

static int comm_get(struct vnpu_comm handle, struct vnpu_comm_obj **c)
{
	struct vnpu_obj *obj;
	int status = vnpu_obj_lookup(handle.handle, VNPU_OBJ_COMM, &obj);

	if (status == VNPU_SUCCESS)
		*c = (struct vnpu_comm_obj *)obj;
	return status;
}

int vnpu_comm_destroy(struct vnpu_comm handle)
{
	int status = vnpu_rt_enter();
	struct vnpu_obj *obj;

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	obj = vnpu_handle_remove(handle.handle, VNPU_OBJ_COMM, __builtin_return_address(0));
	if (!obj)
		return vnpu_set_status(VNPU_ERROR_INVALID_HANDLE);
	vnpu_obj_put(obj);
	return VNPU_SUCCESS;
}

int vnpu_comm_get_ring(struct vnpu_comm handle, uint32_t count, uint32_t *ranks)
{
	struct vnpu_comm_obj *c;
	int status;

	if (!ranks)
		return vnpu_set_status(VNPU_ERROR_INVALID_VALUE);
	status = comm_get(handle, &c);
	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (count != c->count)
		status = VNPU_ERROR_INVALID_VALUE;
	else
		memcpy(ranks, c->ring, count * sizeof(*ranks));
	vnpu_obj_put(&c->obj);
	return vnpu_set_status(status);
}

/* --- one collective in flight ------------------------------------------------ */

/*
 * State of one call: @done[p] is the point of the stream at ring position
 * p after its last step, @next[p] after its current step.
 */
struct coll {
	struct vnpu_comm_obj *c;
	uint32_t n;
	uint64_t *done, *next;
	const char *op;
	uint64_t *peer_addr;	/* by position: the previous position's buffer, imported */
	uint32_t *peer_handle;	/* by position: that import, closed at the end */
};

static uint32_t mod(int64_t v, uint32_t n)
{
	return (uint32_t)(((v % n) + n) % n);
}

static struct vnpu_stream_obj *stream_at(struct coll *k, uint32_t p)
{
	return k->c->streams[k->c->ring[p % k->n]];
}

static struct vnpu_stream handle_at(struct coll *k, uint32_t p)
{
	return (struct vnpu_stream){ stream_at(k, p)->obj.handle };
}

/* The point of @s after everything submitted so far (an open batch goes now). */
static int stream_point(struct vnpu_stream_obj *s, uint64_t *point)
{
	int status;

	pthread_mutex_lock(&s->lock);
	status = vnpu_stream_flush_locked(s);
	*point = s->seq;
	pthread_mutex_unlock(&s->lock);
	return status;
}

/* Makes the next job of @s wait for point @point of @t (another device). */
static int wait_for(struct vnpu_stream_obj *s, struct vnpu_stream_obj *t, uint64_t point)
{
	int sfd = s->ctx->fd, tfd = t->ctx->fd, sync_fd = -1, status = VNPU_SUCCESS;
	uint32_t handle, tmp;

	if (s == t || !point)
		return VNPU_SUCCESS;
	if (drmSyncobjCreate(sfd, 0, &handle))
		return vnpu_status_from_errno(errno);
	if (drmSyncobjCreate(tfd, 0, &tmp)) {
		drmSyncobjDestroy(sfd, handle);
		return vnpu_status_from_errno(errno);
	}
	if (drmSyncobjTransfer(tfd, tmp, 0, t->timeline, point, 0) ||
	    drmSyncobjExportSyncFile(tfd, tmp, &sync_fd) ||
	    drmSyncobjImportSyncFile(sfd, handle, sync_fd))
		status = vnpu_status_from_errno(errno);
	if (sync_fd >= 0)
		close(sync_fd);
	drmSyncobjDestroy(tfd, tmp);
	if (status == VNPU_SUCCESS) {
		pthread_mutex_lock(&s->lock);
		if (s->num_waits == DRM_VNPU_MAX_WAITS) {
			status = VNPU_ERROR_INVALID_VALUE;
		} else {
			s->waits[s->num_waits++] = (struct drm_vnpu_sync){ .handle = handle };
			handle = 0;
		}
		pthread_mutex_unlock(&s->lock);
	}
	if (handle)
		drmSyncobjDestroy(sfd, handle);
	return status;
}

/* Position @p waits for position @q's last finished step. */
static int step_wait(struct coll *k, uint32_t p, uint32_t q)
{
	return wait_for(stream_at(k, p), stream_at(k, q), k->done[q % k->n]);
}

/* Ends a step at position @p: records its point for the next step. */
static int step_end(struct coll *k, uint32_t p)
{
	return stream_point(stream_at(k, p), &k->next[p]);
}

/* Every position's step is done: the next step waits for these points. */
static void steps_done(struct coll *k)
{
	memcpy(k->done, k->next, k->n * sizeof(*k->done));
}

/* Scratch of @bytes on rank @r's device; under c->lock. */
static int scratch(struct vnpu_comm_obj *c, uint32_t r, uint64_t bytes, uint64_t *addr)
{
	struct vnpu_ctx *ctx = c->streams[r]->ctx;
	int status;

	if (c->scratch_size[r] < bytes) {
		if (c->scratch[r])
			vnpu_ctx_free_device(ctx, c->scratch[r]);
		c->scratch[r] = 0;
		c->scratch_size[r] = 0;
		status = vnpu_ctx_alloc_device(ctx, bytes, NULL, &c->scratch[r]);
		if (status != VNPU_SUCCESS)
			return status;
		c->scratch_size[r] = bytes;
	}
	*addr = c->scratch[r];
	return VNPU_SUCCESS;
}

/* @dst = @a + @b, @elems fp32 elements, on position @p's device. */
static int add_f32(struct coll *k, uint32_t p, uint64_t dst, uint64_t a, uint64_t b,
		   uint64_t elems)
{
	int status = VNPU_SUCCESS;

	for (uint64_t done = 0; done < elems && status == VNPU_SUCCESS;) {
		uint32_t n = elems - done > ADD_MAX_ELEMS ? ADD_MAX_ELEMS : (uint32_t)(elems - done);
		struct vnpu_kernel kernel = {
			.op = VNPU_OP_ADD, .m = 1, .n = n,
			.a = a + done * 4, .b = b + done * 4, .c = dst + done * 4,
		};

		status = vnpu_launch_kernel(handle_at(k, p), &kernel);
		done += n;
	}
	return status;
}

/*
 * Imports, for every position, the previous position's @buf (@bytes from
 * its start) once for the whole call, so each step is one COPY.
 */
static int import_previous(struct coll *k, const uint64_t *buf, uint64_t bytes)
{
	int status = VNPU_SUCCESS;

	for (uint32_t p = 0; p < k->n && status == VNPU_SUCCESS; p++) {
		uint32_t q = mod((int64_t)p - 1, k->n);

		status = vnpu_import_range(stream_at(k, p)->ctx, stream_at(k, q)->ctx,
					   buf[k->c->ring[q]], bytes, &k->peer_addr[p],
					   &k->peer_handle[p]);
	}
	return status;
}

/* Position @p copies @bytes at offset @off of the previous position's buffer to @dst. */
static int pull(struct coll *k, uint32_t p, uint64_t dst, uint64_t off, uint64_t bytes)
{
	struct drm_vnpu_cmd cmd = { .opcode = DRM_VNPU_CMD_COPY, .dst = dst,
				    .src = k->peer_addr[p] + off, .size = bytes };

	return vnpu_stream_submit_cmd(stream_at(k, p), &cmd, k->op);
}

/* Every position waits for its successor, so its buffers are free at its end. */
static int join(struct coll *k)
{
	int status = VNPU_SUCCESS;

	if (k->n == 1)
		return VNPU_SUCCESS;
	for (uint32_t p = 0; p < k->n && status == VNPU_SUCCESS; p++) {
		status = step_wait(k, p, p + 1);
		if (status == VNPU_SUCCESS)
			status = vnpu_launch_delay(handle_at(k, p), 1);
	}
	return status;
}

/* Chunk table: ring chunk i is elements [off[i], off[i] + len[i]). */
struct chunks {
	uint64_t *off, *len;
};

/*
 * Ring reduce-scatter on @buf (per rank): after it, position p holds the
 * sum of every rank's chunk p. Step s: p adds chunk p - s - 2 of p - 1.
 */
static int ring_reduce_scatter(struct coll *k, const uint64_t *buf, const struct chunks *ch)
{
	uint32_t n = k->n;
	int status = VNPU_SUCCESS;

	for (uint32_t s = 0; s + 1 < n && status == VNPU_SUCCESS; s++) {
		for (uint32_t p = 0; p < n && status == VNPU_SUCCESS; p++) {
			uint32_t i = mod((int64_t)p - s - 2, n), r = k->c->ring[p];
			uint64_t tmp = 0, at = ch->off[i] * 4;

			if (ch->len[i]) {
				status = scratch(k->c, r, ch->len[i] * 4, &tmp);
				if (status == VNPU_SUCCESS)
					status = step_wait(k, p, p + n - 1);
				if (status == VNPU_SUCCESS)
					status = pull(k, p, tmp, at, ch->len[i] * 4);
				if (status == VNPU_SUCCESS)
					status = add_f32(k, p, buf[r] + at, buf[r] + at, tmp, ch->len[i]);
			}
			if (status == VNPU_SUCCESS)
				status = step_end(k, p);
		}
		steps_done(k);
	}
	return status;
}

/*
 * Ring all-gather on @buf: position p starts with chunk p (of the chunk
 * table) and gets chunk p - 1 - s from p - 1 at step s. @after_rs: the
 * chunks were just reduced, so each position first waits for its
 * successor to have read them.
 */
static int ring_all_gather(struct coll *k, const uint64_t *buf, const struct chunks *ch,
			   int after_rs)
{
	uint32_t n = k->n;
	int status = VNPU_SUCCESS;

	for (uint32_t s = 0; s + 1 < n && status == VNPU_SUCCESS; s++) {
		for (uint32_t p = 0; p < n && status == VNPU_SUCCESS; p++) {
			uint32_t i = mod((int64_t)p - 1 - s, n), r = k->c->ring[p];
			uint64_t at = ch->off[i] * 4;

			if (ch->len[i]) {
				status = step_wait(k, p, p + n - 1);
				if (status == VNPU_SUCCESS && after_rs && s == 0)
					status = step_wait(k, p, p + 1);
				if (status == VNPU_SUCCESS)
					status = pull(k, p, buf[r] + at, at, ch->len[i] * 4);
			}
			if (status == VNPU_SUCCESS)
				status = step_end(k, p);
		}
		steps_done(k);
	}
	return status;
}

/* Checks that @addr[r] holds @bytes in rank r's context, for every rank. */
static int check_buffers(struct vnpu_comm_obj *c, const uint64_t *addr, uint64_t bytes)
{
	if (!addr)
		return VNPU_ERROR_INVALID_VALUE;
	for (uint32_t r = 0; r < c->count; r++)
		if (!vnpu_ctx_owns_range(c->streams[r]->ctx, addr[r], bytes))
			return VNPU_ERROR_INVALID_VALUE;
	return VNPU_SUCCESS;
}

/* Looks up the communicator and sets up a call; returns with c->lock held. */
static int coll_begin(struct vnpu_comm handle, const char *op, struct coll *k)
{
	int status = comm_get(handle, &k->c);

	if (status != VNPU_SUCCESS)
		return status;
	k->n = k->c->count;
	k->op = op;
	k->done = calloc(k->n, sizeof(*k->done));
	k->next = calloc(k->n, sizeof(*k->next));
	k->peer_addr = calloc(k->n, sizeof(*k->peer_addr));
	k->peer_handle = calloc(k->n, sizeof(*k->peer_handle));
	if (!k->done || !k->next || !k->peer_addr || !k->peer_handle) {
		free(k->done);
		free(k->next);
		free(k->peer_addr);
		free(k->peer_handle);
		vnpu_obj_put(&k->c->obj);
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	}
	pthread_mutex_lock(&k->c->lock);
	return VNPU_SUCCESS;
}

static int coll_end(struct coll *k, int status)
{
	/* The jobs hold the imported buffers; the handles go now. */
	for (uint32_t p = 0; p < k->n; p++)
		if (k->peer_handle[p])
			drmCloseBufferHandle(stream_at(k, p)->ctx->fd, k->peer_handle[p]);
	free(k->peer_addr);
	free(k->peer_handle);
	pthread_mutex_unlock(&k->c->lock);
	vnpu_log(status == VNPU_SUCCESS ? VNPU_LOG_DEBUG : VNPU_LOG_WARN, "%s over %u ranks: %s",
		 k->op, k->n, vnpu_status_name(status));
	free(k->done);
	free(k->next);
	vnpu_obj_put(&k->c->obj);
	return vnpu_set_status(status);
}

static int chunks_alloc(struct chunks *ch, uint32_t n)
{
	ch->off = calloc(n, sizeof(*ch->off));
	ch->len = calloc(n, sizeof(*ch->len));
	if (ch->off && ch->len)
		return VNPU_SUCCESS;
	free(ch->off);
	free(ch->len);
	return VNPU_ERROR_OUT_OF_HOST_MEMORY;
}

static void chunks_free(struct chunks *ch)
{
	free(ch->off);
	free(ch->len);
}

/* @total elements split into n chunks as even as can be, the first ones larger. */
static void chunks_even(struct chunks *ch, uint32_t n, uint64_t total)
{
	for (uint32_t i = 0; i < n; i++) {
		ch->len[i] = total / n + (i < total % n);
		ch->off[i] = i * (total / n) + (i < total % n ? i : total % n);
	}
}

/* Ring chunk i is rank ring[i]'s block of @count elements. */
static void chunks_by_rank(struct chunks *ch, const struct vnpu_comm_obj *c, uint64_t count)
{
	for (uint32_t i = 0; i < c->count; i++) {
		ch->off[i] = c->ring[i] * count;
		ch->len[i] = count;
	}
}

/* Position p's @dst = @src (same device), for every position where they differ. */
static int local_copies(struct coll *k, const uint64_t *dst, uint64_t dst_off,
			const uint64_t *src, uint64_t bytes)
{
	int status = VNPU_SUCCESS;

	for (uint32_t p = 0; p < k->n && status == VNPU_SUCCESS; p++) {
		uint32_t r = k->c->ring[p];
		uint64_t to = dst[r] + (dst_off ? r * dst_off : 0);

		if (to != src[r])
			status = vnpu_memcpy_dtod_async(handle_at(k, p), to, src[r], bytes);
		if (status == VNPU_SUCCESS)
			status = step_end(k, p);
	}
	steps_done(k);
	return status;
}

static int elems_ok(size_t count, uint32_t n, enum vnpu_dtype dtype)
{
	return count && dtype == VNPU_DTYPE_F32 && count <= SIZE_MAX / 4 / n;
}

int vnpu_all_reduce(struct vnpu_comm comm, const uint64_t *send, const uint64_t *recv,
		    size_t count, enum vnpu_dtype dtype, enum vnpu_reduce_op op)
{
	struct chunks ch = { 0 };
	struct coll k;
	int status = coll_begin(comm, "vnpu_all_reduce", &k);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (!elems_ok(count, 1, dtype) || op != VNPU_REDUCE_SUM)
		status = VNPU_ERROR_INVALID_VALUE;
	if (status == VNPU_SUCCESS)
		status = check_buffers(k.c, send, count * 4);
	if (status == VNPU_SUCCESS)
		status = check_buffers(k.c, recv, count * 4);
	if (status == VNPU_SUCCESS)
		status = chunks_alloc(&ch, k.n);
	if (status != VNPU_SUCCESS)
		return coll_end(&k, status);
	chunks_even(&ch, k.n, count);
	status = import_previous(&k, recv, count * 4);
	if (status == VNPU_SUCCESS)
		status = local_copies(&k, recv, 0, send, count * 4);
	if (status == VNPU_SUCCESS)
		status = ring_reduce_scatter(&k, recv, &ch);
	if (status == VNPU_SUCCESS)
		status = ring_all_gather(&k, recv, &ch, 1);
	if (status == VNPU_SUCCESS)
		status = join(&k);
	chunks_free(&ch);
	return coll_end(&k, status);
}

int vnpu_reduce_scatter(struct vnpu_comm comm, const uint64_t *send, const uint64_t *recv,
			size_t count, enum vnpu_dtype dtype, enum vnpu_reduce_op op)
{
	struct chunks ch = { 0 };
	uint64_t *work = NULL;
	struct coll k;
	int status = coll_begin(comm, "vnpu_reduce_scatter", &k);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (!elems_ok(count, k.n, dtype) || op != VNPU_REDUCE_SUM)
		status = VNPU_ERROR_INVALID_VALUE;
	if (status == VNPU_SUCCESS)
		status = check_buffers(k.c, send, count * 4 * k.n);
	if (status == VNPU_SUCCESS)
		status = check_buffers(k.c, recv, count * 4);
	if (status == VNPU_SUCCESS)
		status = chunks_alloc(&ch, k.n);
	if (status == VNPU_SUCCESS && !(work = calloc(k.n, sizeof(*work))))
		status = VNPU_ERROR_OUT_OF_HOST_MEMORY;
	/* The sums build up in a copy of the input, which is left unchanged. */
	for (uint32_t r = 0; r < k.n && status == VNPU_SUCCESS; r++)
		status = vnpu_ctx_alloc_device(k.c->streams[r]->ctx, count * 4 * k.n, NULL,
					       &work[r]);
	if (status == VNPU_SUCCESS) {
		chunks_by_rank(&ch, k.c, count);
		status = import_previous(&k, work, count * 4 * k.n);
	}
	if (status == VNPU_SUCCESS)
		status = local_copies(&k, work, 0, send, count * 4 * k.n);
	if (status == VNPU_SUCCESS)
		status = ring_reduce_scatter(&k, work, &ch);
	for (uint32_t p = 0; p < k.n && status == VNPU_SUCCESS; p++) {
		uint32_t r = k.c->ring[p];

		status = vnpu_memcpy_dtod_async(handle_at(&k, p), recv[r], work[r] + r * count * 4,
						count * 4);
	}
	if (status == VNPU_SUCCESS)
		status = join(&k);
	/* Freed now, returned to the device when the queued work is done. */
	for (uint32_t r = 0; work && r < k.n; r++)
		if (work[r])
			vnpu_ctx_free_device(k.c->streams[r]->ctx, work[r]);
	free(work);
	chunks_free(&ch);
	return coll_end(&k, status);
}

int vnpu_all_gather(struct vnpu_comm comm, const uint64_t *send, const uint64_t *recv,
		    size_t count, enum vnpu_dtype dtype)
{
	struct chunks ch = { 0 };
	struct coll k;
	int status = coll_begin(comm, "vnpu_all_gather", &k);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (!elems_ok(count, k.n, dtype))
		status = VNPU_ERROR_INVALID_VALUE;
	if (status == VNPU_SUCCESS)
		status = check_buffers(k.c, send, count * 4);
	if (status == VNPU_SUCCESS)
		status = check_buffers(k.c, recv, count * 4 * k.n);
	if (status == VNPU_SUCCESS)
		status = chunks_alloc(&ch, k.n);
	if (status != VNPU_SUCCESS)
		return coll_end(&k, status);
	chunks_by_rank(&ch, k.c, count);
	status = import_previous(&k, recv, count * 4 * k.n);
	if (status == VNPU_SUCCESS)
		status = local_copies(&k, recv, count * 4, send, count * 4);
	if (status == VNPU_SUCCESS)
		status = ring_all_gather(&k, recv, &ch, 0);
	if (status == VNPU_SUCCESS)
		status = join(&k);
	chunks_free(&ch);
	return coll_end(&k, status);
}

int vnpu_broadcast(struct vnpu_comm comm, uint32_t root, uint64_t send, const uint64_t *recv,
		   size_t count, enum vnpu_dtype dtype)
{
	struct chunks ch = { 0 };
	struct coll k;
	uint32_t rp;
	int status = coll_begin(comm, "vnpu_broadcast", &k);

	if (status != VNPU_SUCCESS)
		return vnpu_set_status(status);
	if (!elems_ok(count, 1, dtype) || root >= k.n)
		status = VNPU_ERROR_INVALID_VALUE;
	if (status == VNPU_SUCCESS)
		status = check_buffers(k.c, recv, count * 4);
	if (status == VNPU_SUCCESS &&
	    !vnpu_ctx_owns_range(k.c->streams[root]->ctx, send, count * 4))
		status = VNPU_ERROR_INVALID_VALUE;
	if (status == VNPU_SUCCESS)
		status = chunks_alloc(&ch, k.n);
	if (status != VNPU_SUCCESS)
		return coll_end(&k, status);
	rp = k.c->pos[root];
	status = import_previous(&k, recv, count * 4);
	if (status == VNPU_SUCCESS && send != recv[root])
		status = vnpu_memcpy_dtod_async(handle_at(&k, rp), recv[root], send, count * 4);
	/* In n pieces down the ring from the root, so the hops overlap. */
	chunks_even(&ch, k.n, count);
	for (uint32_t i = 0; i < k.n && status == VNPU_SUCCESS; i++) {
		if (!ch.len[i])
			continue;
		status = step_end(&k, rp);
		k.done[rp] = k.next[rp];
		for (uint32_t h = 1; h < k.n && status == VNPU_SUCCESS; h++) {
			uint32_t p = (rp + h) % k.n, q = (rp + h - 1) % k.n;
			uint64_t at = ch.off[i] * 4;

			status = step_wait(&k, p, q);
			if (status == VNPU_SUCCESS)
				status = pull(&k, p, recv[k.c->ring[p]] + at, at, ch.len[i] * 4);
			if (status == VNPU_SUCCESS)
				status = step_end(&k, p);
			k.done[p] = k.next[p];
		}
	}
	for (uint32_t p = 0; p < k.n && status == VNPU_SUCCESS; p++)
		status = step_end(&k, p);
	steps_done(&k);
	if (status == VNPU_SUCCESS)
		status = join(&k);
	chunks_free(&ch);
	return coll_end(&k, status);
}
