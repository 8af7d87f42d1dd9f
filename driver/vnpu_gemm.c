// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The vnpu authors
 */

/**
 * DOC: vnpu GEMM
 *
 * GEMM and the batched matrix products of T_DOT (convolutions run as
 * IM2COL and a T_DOT) use a blocked, cache-aware kernel in the manner of
 * BLIS and OpenBLAS. Any operand layout is described by a row and a column
 * element step for A, B and C (&struct vnpu_gemm_desc), so transposes and
 * the strided tensors of T_DOT take the same path. The loops, outermost
 * first:
 *
 * - columns of C in blocks of %VNPU_GEMM_NC;
 * - the inner dimension in blocks of %VNPU_GEMM_KC: the block of B is
 *   packed into panels of nr columns (zero-padded), contiguous in the
 *   order the micro-kernel reads them;
 * - rows of C in blocks of %VNPU_GEMM_MC: the block of A is packed into
 *   panels of %VNPU_GEMM_MR rows (for SSE2, which cannot broadcast from
 *   memory, each element four times, so the kernel loads it as a vector);
 * - for each B panel (kept in L1) the A panels (kept in L2) go through
 *   the micro-kernel, an MR x nr tile of C held in vector registers over
 *   the whole block depth.
 *
 * Packing moves 32-bit words (fp16 operands of T_DOT converted to fp32
 * bits on the way, in integer code) and needs no FPU. The micro-kernels
 * (vnpu_simd_impl.h) are built twice, for SSE2 (nr 8) and for AVX2 + FMA
 * (nr 16); vnpu_gemm_init() picks AVX2 at module load when the CPU and the
 * kernel's extended state support it (the checks of lib/raid6 and the
 * crypto drivers) and its micro-kernel measures faster than the SSE2 one
 * (an emulated CPU may run the narrow instructions faster), or what the
 * ``simd`` module parameter asks for. Each
 * kernel_fpu_begin()/kernel_fpu_end() section runs at most about
 * %VNPU_GEMM_SECTION_MACS multiply-adds (at least one tile); between
 * sections the worker checks the job's abort flag and calls
 * cond_resched().
 *
 * Sums: the first depth block computes alpha * (A B) + beta * C, each
 * further block adds alpha times its products to C, so the fp32 sum of k
 * products is rounded at every multiply-add (once with FMA) and every
 * %VNPU_GEMM_KC products. Products too small to fill tiles (fewer than
 * %VNPU_GEMM_MIN_OUTPUTS outputs) and T_DOT layouts that are not matrix
 * products keep the scalar path.
 *
 * The packing buffers (about 900 KiB) come from a pool: an engine takes
 * one for the operator and puts it back, so a buffer is allocated only
 * when more engines compute at once than ever before; vnpu_gemm_fini()
 * frees them at module unload. Without memory the scalar path runs.
 */

#include <linux/fpu.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#ifdef CONFIG_X86
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#endif

#include <drm/vnpu_accel.h>

#include "vnpu_drv.h"
#include "vnpu_dtype.h"
#include "vnpu_engine.h"
#include "vnpu_ops.h"
#include "vnpu_simd.h"

/* Depth of a packed block. */
#define VNPU_GEMM_KC 256
/* Rows of a packed A block: 16 micro-tiles. */
#define VNPU_GEMM_MC (16 * VNPU_GEMM_MR)
/* Columns of a packed B block, a multiple of every nr. */
#define VNPU_GEMM_NC 512
/* Multiply-adds of one FPU section, rounded up to whole tiles. */
#define VNPU_GEMM_SECTION_MACS (64 * 1024)
/* Multiply-adds from which an operator is split across engines. */
#define VNPU_GEMM_SPLIT_MACS (4 * 1024 * 1024)
/* Outputs below which the scalar path is used. */
#define VNPU_GEMM_MIN_OUTPUTS 32
#define VNPU_FP32_THIRD 0x3eaaaaabu

static char *vnpu_simd_param = "auto";
module_param_named(simd, vnpu_simd_param, charp, 0444);
MODULE_PARM_DESC(simd,
		 "Vector kernels: auto (AVX2 and FMA where the CPU has them, else SSE2), avx2 or sse2 (default auto)");

static bool vnpu_compute_split = true;
module_param_named(compute_split, vnpu_compute_split, bool, 0644);
MODULE_PARM_DESC(compute_split,
		 "Split large matrix products across the idle compute engines of the device (default 1)");

const struct vnpu_simd *vnpu_simd_active = &vnpu_simd_sse2;

/**
 * struct vnpu_gemm_desc - one matrix product C = alpha A B + beta C
 * @m: rows of C
 * @n: columns of C
 * @k: the inner dimension
 * @a: A(i, p) is a[i * @rs_a + p * @cs_a]
 * @b: B(p, j) is b[p * @rs_b + j * @cs_b]
 * @c: C(i, j) is c[i * @rs_c + j * @cs_c]
 * @rs_a: row step of A, elements
 * @cs_a: column step of A
 * @rs_b: row step of B
 * @cs_b: column step of B
 * @rs_c: row step of C
 * @cs_c: column step of C
 * @alpha: fp32 bits
 * @beta: fp32 bits; 0: C is not read
 * @dt_a: element type of A, DRM_VNPU_DTYPE_F32 or F16 (T_DOT, uAPI 1.5)
 * @dt_b: element type of B
 *
 * Elements are handled as 32-bit words here (fp16 ones converted to fp32
 * bits as they are packed); only the micro-kernels see them as floats.
 * C is always fp32.
 */
struct vnpu_gemm_desc {
	u32 m, n, k;
	const void *a;
	const void *b;
	u32 *c;
	size_t rs_a, cs_a, rs_b, cs_b, rs_c, cs_c;
	u32 alpha, beta;
	u32 dt_a, dt_b;
};

/* Element @i of @p of type @dt, as fp32 bits. */
static inline u32 vnpu_gemm_ld(const void *p, u32 dt, size_t i)
{
	return dt == DRM_VNPU_DTYPE_F32 ? ((const u32 *)p)[i] : vnpu_dtype_load(p, dt, i);
}

/* The address of element @i of @p of type @dt. */
static inline const void *vnpu_gemm_at(const void *p, u32 dt, size_t i)
{
	return (const u8 *)p + i * vnpu_dtype_size(dt);
}

/**
 * struct vnpu_gemm_scratch - packing buffers of one running operator
 * @node: in vnpu_gemm_pool while unused
 * @pa: packed A block, %VNPU_GEMM_MC x %VNPU_GEMM_KC x a_lanes words
 * @pb: packed B block, %VNPU_GEMM_KC x %VNPU_GEMM_NC words
 */
struct vnpu_gemm_scratch {
	struct list_head node;
	u32 *pa;
	u32 *pb;
};

static LIST_HEAD(vnpu_gemm_pool);
static DEFINE_SPINLOCK(vnpu_gemm_pool_lock); /* Protects vnpu_gemm_pool */

#define VNPU_GEMM_A_WORDS (VNPU_GEMM_MC * VNPU_GEMM_KC * VNPU_A_LANES_MAX)
#define VNPU_GEMM_SCRATCH_WORDS (VNPU_GEMM_A_WORDS + VNPU_GEMM_KC * VNPU_GEMM_NC)

static struct vnpu_gemm_scratch *vnpu_gemm_scratch_get(void)
{
	struct vnpu_gemm_scratch *s;

	spin_lock(&vnpu_gemm_pool_lock);
	s = list_first_entry_or_null(&vnpu_gemm_pool, struct vnpu_gemm_scratch, node);
	if (s)
		list_del(&s->node);
	spin_unlock(&vnpu_gemm_pool_lock);
	if (s)
		return s;
	s = kmalloc(sizeof(*s), GFP_KERNEL | __GFP_NOWARN);
	if (!s)
		return NULL;
	s->pa = kvmalloc_array(VNPU_GEMM_SCRATCH_WORDS, sizeof(u32), GFP_KERNEL | __GFP_NOWARN);
	if (!s->pa) {
		kfree(s);
		return NULL;
	}
	s->pb = s->pa + VNPU_GEMM_A_WORDS;
	return s;
}

static void vnpu_gemm_scratch_put(struct vnpu_gemm_scratch *s)
{
	spin_lock(&vnpu_gemm_pool_lock);
	list_add(&s->node, &vnpu_gemm_pool);
	spin_unlock(&vnpu_gemm_pool_lock);
}

/*
 * Rows [i0, i0 + mc) x depth [p0, p0 + kc) of A into MR-row panels, each
 * element @lanes times.
 */
static void vnpu_gemm_pack_a(const struct vnpu_gemm_desc *g, u32 *pa, u32 lanes, u32 i0,
			     u32 mc, u32 p0, u32 kc)
{
	u32 step = VNPU_GEMM_MR * lanes, ir, r, p, l;

	for (ir = 0; ir < mc; ir += VNPU_GEMM_MR, pa += step * kc) {
		for (r = 0; r < VNPU_GEMM_MR; r++) {
			const void *src = NULL;
			u32 *dst = pa + r * lanes;

			if (ir + r < mc)
				src = vnpu_gemm_at(g->a, g->dt_a, (size_t)(i0 + ir + r) * g->rs_a +
						   (size_t)p0 * g->cs_a);
			for (p = 0; p < kc; p++, dst += step) {
				u32 v = src ? vnpu_gemm_ld(src, g->dt_a, p * g->cs_a) : 0;

				for (l = 0; l < lanes; l++)
					dst[l] = v;
			}
		}
	}
}

/* Depth [p0, p0 + kc) x columns [j0, j0 + nc) of B into @nr-column panels. */
static void vnpu_gemm_pack_b(const struct vnpu_gemm_desc *g, u32 *pb, u32 nr, u32 p0, u32 kc,
			     u32 j0, u32 nc)
{
	u32 jr, p, j;

	for (jr = 0; jr < nc; jr += nr, pb += nr * kc) {
		u32 cols = min(nr, nc - jr);

		for (p = 0; p < kc; p++) {
			const void *src = vnpu_gemm_at(g->b, g->dt_b, (size_t)(p0 + p) * g->rs_b +
						       (size_t)(j0 + jr) * g->cs_b);
			u32 *dst = pb + p * nr;

			if (g->cs_b == 1 && g->dt_b == DRM_VNPU_DTYPE_F32) {
				memcpy(dst, src, cols * sizeof(u32));
			} else {
				for (j = 0; j < cols; j++)
					dst[j] = vnpu_gemm_ld(src, g->dt_b, j * g->cs_b);
			}
			for (j = cols; j < nr; j++)
				dst[j] = 0;
		}
	}
}

/* The micro-tiles of one packed A block against one packed B block. */
static bool vnpu_gemm_block(const struct vnpu_gemm_desc *g, const struct vnpu_simd *isa,
			    struct vnpu_gemm_strip *s, const u32 *pa, const u32 *pb, u32 i0,
			    u32 mc, u32 j0, u32 nc, const bool *aborted)
{
	u32 per = max_t(u32, 1, VNPU_GEMM_SECTION_MACS / (VNPU_GEMM_MR * isa->nr * s->kc));
	u32 jr, ir;

	for (jr = 0; jr < nc; jr += isa->nr) {
		s->pb = pb + (size_t)jr * s->kc;
		s->cols = min(isa->nr, nc - jr);
		for (ir = 0; ir < mc; ir += per * VNPU_GEMM_MR) {
			if (READ_ONCE(*aborted))
				return false;
			s->rows = min(mc - ir, per * VNPU_GEMM_MR);
			s->tiles = DIV_ROUND_UP(s->rows, VNPU_GEMM_MR);
			s->pa = pa + (size_t)ir * s->kc * isa->a_lanes;
			s->c = g->c + (size_t)(i0 + ir) * g->rs_c + (size_t)(j0 + jr) * g->cs_c;
			kernel_fpu_begin();
			isa->gemm_strip(s);
			kernel_fpu_end();
			cond_resched();
		}
	}
	return true;
}

/* Runs @g; false if the job was aborted on the way. */
static bool vnpu_gemm_desc_run(const struct vnpu_gemm_desc *g, struct vnpu_gemm_scratch *scr,
			       const bool *aborted)
{
	const struct vnpu_simd *isa = vnpu_simd_active;
	struct vnpu_gemm_strip s = {
		.rs_c = g->rs_c, .cs_c = g->cs_c, .alpha = g->alpha,
	};
	u32 jc, pc, ic, nc, mc;

	for (jc = 0; jc < g->n; jc += nc) {
		nc = min_t(u32, VNPU_GEMM_NC, g->n - jc);
		for (pc = 0; pc < g->k; pc += s.kc) {
			s.kc = min_t(u32, VNPU_GEMM_KC, g->k - pc);
			s.beta = pc ? VNPU_FP32_ONE : g->beta;
			if (READ_ONCE(*aborted))
				return false;
			vnpu_gemm_pack_b(g, scr->pb, isa->nr, pc, s.kc, jc, nc);
			for (ic = 0; ic < g->m; ic += mc) {
				mc = min_t(u32, VNPU_GEMM_MC, g->m - ic);
				cond_resched();
				vnpu_gemm_pack_a(g, scr->pa, isa->a_lanes, ic, mc, pc, s.kc);
				if (!vnpu_gemm_block(g, isa, &s, scr->pa, scr->pb, ic, mc, jc, nc,
						     aborted))
					return false;
			}
		}
	}
	return true;
}

/**
 * struct vnpu_gemm_split - a matrix product split into parts
 * @g: the product; a part is a block of its rows or of its columns
 * @aborted: the job's abort flag
 * @next: the next part to claim
 * @parts: number of parts
 * @step: rows (or columns) of a part
 * @by_rows: parts are blocks of rows, else of columns
 *
 * Lives on the stack of the engine running the job, which takes parts
 * like its helpers and, before returning, cancels the helpers that have
 * not started and waits for the running ones (vnpu_gemm_run_split()).
 */
struct vnpu_gemm_split {
	const struct vnpu_gemm_desc *g;
	const bool *aborted;
	atomic_t next;
	u32 parts;
	u32 step;
	bool by_rows;
};

/**
 * struct vnpu_gemm_helper - a sibling engine's share of a split
 * @work: queued on the sibling's &vnpu_engine.exec_wq
 * @split: the split
 * @engine: the sibling; it stops taking parts once a job of its own was
 *	handed to it (&vnpu_engine.running not empty; read without the lock,
 *	a hint that is at most one part late)
 */
struct vnpu_gemm_helper {
	struct work_struct work;
	struct vnpu_gemm_split *split;
	struct vnpu_engine *engine;
};

/*
 * Runs parts of @sp until none is left, the job is aborted, or @helper's
 * engine has a job of its own. False if aborted.
 */
static bool vnpu_gemm_split_take(struct vnpu_gemm_split *sp, struct vnpu_gemm_scratch *scr,
				 struct vnpu_engine *helper)
{
	const struct vnpu_gemm_desc *g = sp->g;
	int p;

	while (!(helper && !list_empty(&helper->running)) &&
	       (p = atomic_fetch_inc(&sp->next)) < sp->parts) {
		struct vnpu_gemm_desc part = *g;
		u32 first = p * sp->step;

		if (sp->by_rows) {
			part.m = min(sp->step, g->m - first);
			part.a = vnpu_gemm_at(g->a, g->dt_a, first * g->rs_a);
			part.c += first * g->rs_c;
		} else {
			part.n = min(sp->step, g->n - first);
			part.b = vnpu_gemm_at(g->b, g->dt_b, first * g->cs_b);
			part.c += first * g->cs_c;
		}
		if (!vnpu_gemm_desc_run(&part, scr, sp->aborted))
			return false;
	}
	return true;
}

static void vnpu_gemm_helper_work(struct work_struct *work)
{
	struct vnpu_gemm_helper *h = container_of(work, struct vnpu_gemm_helper, work);
	struct vnpu_gemm_scratch *scr = vnpu_gemm_scratch_get();

	if (!scr)
		return;
	vnpu_gemm_split_take(h->split, scr, h->engine);
	vnpu_gemm_scratch_put(scr);
}

/*
 * Runs @g on @engine and, when it is large, on the idle engines of the
 * same class as well: the product is cut into blocks of
 * %VNPU_GEMM_MC rows (or %VNPU_GEMM_NC columns) that the engines take
 * one by one. Helpers are work items on the ordered exec workqueues of
 * the siblings that have no job (&vnpu_engine.running empty), so a
 * sibling helps only between its own jobs, and stops taking parts as soon
 * as one of its jobs is handed to it. False if aborted.
 */
static bool vnpu_gemm_run_split(const struct vnpu_gemm_desc *g, struct vnpu_gemm_scratch *scr,
				struct vnpu_engine *engine, const bool *aborted)
{
	struct vnpu_gemm_helper h[VNPU_MAX_ENGINES];
	struct vnpu_gemm_split sp = { .g = g, .aborted = aborted };
	struct vnpu_device *vdev;
	u32 rows = DIV_ROUND_UP(g->m, VNPU_GEMM_MC), cols = DIV_ROUND_UP(g->n, VNPU_GEMM_NC);
	u32 first, last, i, nh = 0;
	bool ok;

	if (!READ_ONCE(vnpu_compute_split) || !engine ||
	    (u64)g->m * g->n * g->k < VNPU_GEMM_SPLIT_MACS || max(rows, cols) < 2)
		return vnpu_gemm_desc_run(g, scr, aborted);
	sp.by_rows = rows >= cols;
	sp.parts = sp.by_rows ? rows : cols;
	sp.step = sp.by_rows ? VNPU_GEMM_MC : VNPU_GEMM_NC;
	atomic_set(&sp.next, 0);

	vdev = engine->vdev;
	first = engine - vdev->engines < vdev->num_compute_engines ? 0 : vdev->num_compute_engines;
	last = first ? vdev->num_engines : vdev->num_compute_engines;
	for (i = first; i < last && nh + 1 < sp.parts && nh < ARRAY_SIZE(h); i++) {
		struct vnpu_engine *sib = &vdev->engines[i];

		if (sib == engine || !list_empty(&sib->running))
			continue;
		INIT_WORK_ONSTACK(&h[nh].work, vnpu_gemm_helper_work);
		h[nh].split = &sp;
		h[nh].engine = sib;
		queue_work(sib->exec_wq, &h[nh].work);
		nh++;
	}
	ok = vnpu_gemm_split_take(&sp, scr, NULL);
	for (i = 0; i < nh; i++) {
		cancel_work_sync(&h[i].work);
		destroy_work_on_stack(&h[i].work);
	}
	return ok && !READ_ONCE(*aborted);
}

/* Share of the computed tiles that are outputs, in 1/1024. */
static u64 vnpu_gemm_fill(u32 m, u32 n, u32 nr)
{
	u64 tiles = (u64)roundup(m, VNPU_GEMM_MR) * roundup(n, nr);

	return (u64)m * n * 1024 / tiles;
}

/* Computes C^T = B^T A^T instead when that fills the tiles much better. */
static void vnpu_gemm_orient(struct vnpu_gemm_desc *g)
{
	u32 nr = vnpu_simd_active->nr;
	const void *a = g->a;
	size_t rs_a = g->rs_a, cs_a = g->cs_a;

	/* Only for a clear gain: the given layout usually packs faster. */
	if (vnpu_gemm_fill(g->n, g->m, nr) * 9 <= vnpu_gemm_fill(g->m, g->n, nr) * 10)
		return;
	swap(g->m, g->n);
	g->a = g->b;
	g->rs_a = g->cs_b;
	g->cs_a = g->rs_b;
	g->b = a;
	g->rs_b = cs_a;
	g->cs_b = rs_a;
	swap(g->dt_a, g->dt_b);
	swap(g->rs_c, g->cs_c);
}

/**
 * vnpu_gemm_run - GEMM through the blocked kernels
 * @op: a DRM_VNPU_OP_GEMM operator
 * @engine: the engine running the job, or NULL: no split across engines
 * @aborted: checked between sections
 *
 * Return: false if the operator is left to the scalar path (too small,
 * or no packing memory); true if it ran or stopped at an abort.
 */
bool vnpu_gemm_run(const struct vnpu_kernel_op *op, struct vnpu_engine *engine,
		   const bool *aborted)
{
	bool ta = op->flags & DRM_VNPU_KERNEL_TRANS_A;
	bool tb = op->flags & DRM_VNPU_KERNEL_TRANS_B;
	struct vnpu_gemm_desc g = {
		.m = op->m, .n = op->n, .k = op->k, .a = op->a, .b = op->b, .c = op->c,
		.rs_a = ta ? 1 : op->lda, .cs_a = ta ? op->lda : 1,
		.rs_b = tb ? 1 : op->ldb, .cs_b = tb ? op->ldb : 1,
		.rs_c = op->ldc, .cs_c = 1, .alpha = op->alpha, .beta = op->beta,
	};
	struct vnpu_gemm_scratch *scr;

	if ((u64)g.m * g.n < VNPU_GEMM_MIN_OUTPUTS)
		return false;
	scr = vnpu_gemm_scratch_get();
	if (!scr)
		return false;
	vnpu_gemm_orient(&g);
	vnpu_gemm_run_split(&g, scr, engine, aborted);
	vnpu_gemm_scratch_put(scr);
	return true;
}

/*
 * The matrix product in a prepared T_DOT: the last dimension is the only
 * contracted one (k); before it a dimension A does not step along is n,
 * and before that one B does not step along is m; the others are batch
 * dimensions, @*batch_dims of them. False if there is no m nor n.
 */
static bool vnpu_gemm_dot_desc(const struct drm_vnpu_tensor_args *t, struct vnpu_gemm_desc *g,
			       u32 *batch_dims)
{
	int kd = (int)t->ndim - 1, d = kd - 1, dm = -1, dn = -1;

	/*
	 * The micro-kernels write fp32; an fp16 C takes the reduction path,
	 * and so do integer A and B, whose products sum exactly there.
	 */
	if (kd < 0 || t->axes != BIT(kd) || t->dtype_c != DRM_VNPU_DTYPE_F32 ||
	    (!vnpu_dtype_is_float(t->dtype_a) && !vnpu_dtype_is_float(t->dtype_b)))
		return false;
	if (d >= 0 && !t->stride_a[d])
		dn = d--;
	if (d >= 0 && !t->stride_b[d])
		dm = d--;
	if (dm < 0 && dn < 0)
		return false;
	*batch_dims = d + 1;
	g->k = t->shape[kd];
	g->cs_a = t->stride_a[kd];
	g->rs_b = t->stride_b[kd];
	g->m = dm < 0 ? 1 : t->shape[dm];
	g->rs_a = dm < 0 ? 0 : t->stride_a[dm];
	g->rs_c = dm < 0 ? 0 : t->stride_c[dm];
	g->n = dn < 0 ? 1 : t->shape[dn];
	g->cs_b = dn < 0 ? 0 : t->stride_b[dn];
	g->cs_c = dn < 0 ? 0 : t->stride_c[dn];
	g->alpha = VNPU_FP32_ONE;
	g->beta = VNPU_FP32_ZERO;
	g->dt_a = t->dtype_a;
	g->dt_b = t->dtype_b;
	return true;
}

/**
 * vnpu_gemm_dot_run - a T_DOT that is a (batched) matrix product
 * @op: a prepared DRM_VNPU_OP_T_DOT operator
 * @engine: the engine running the job, or NULL: no split across engines
 * @aborted: checked between sections
 *
 * Return: false if the operator is left to the reduction path; true if it
 * ran or stopped at an abort.
 */
bool vnpu_gemm_dot_run(const struct vnpu_kernel_op *op, struct vnpu_engine *engine,
		       const bool *aborted)
{
	const struct drm_vnpu_tensor_args *t = &op->t;
	struct vnpu_gemm_desc g;
	struct vnpu_gemm_scratch *scr;
	struct vnpu_iter it = {};
	u64 batches = 1;
	u32 nb, d;

	if (!vnpu_gemm_dot_desc(t, &g, &nb) || (u64)g.m * g.n < VNPU_GEMM_MIN_OUTPUTS)
		return false;
	scr = vnpu_gemm_scratch_get();
	if (!scr)
		return false;
	it.ndim = nb;
	for (d = 0; d < nb; d++) {
		it.shape[d] = t->shape[d];
		it.stride[0][d] = t->stride_a[d];
		it.stride[1][d] = t->stride_b[d];
		it.stride[2][d] = t->stride_c[d];
		batches *= t->shape[d];
	}
	for (; batches; batches--) {
		struct vnpu_gemm_desc one = g;

		one.a = vnpu_gemm_at(op->a, g.dt_a, it.off[0]);
		one.b = vnpu_gemm_at(op->b, g.dt_b, it.off[1]);
		one.c = (u32 *)op->c + it.off[2];
		vnpu_gemm_orient(&one);
		if (!vnpu_gemm_run_split(&one, scr, engine, aborted))
			break;
		vnpu_iter_advance(&it, 1);
	}
	vnpu_gemm_scratch_put(scr);
	return true;
}

/* The AVX2 kernels if the CPU and the saved extended state have AVX2 and FMA. */
static const struct vnpu_simd *vnpu_simd_avx2_usable(void)
{
#ifdef CONFIG_X86
	if (boot_cpu_has(X86_FEATURE_AVX2) && boot_cpu_has(X86_FEATURE_FMA) &&
	    cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM, NULL))
		return &vnpu_simd_avx2;
#endif
	return NULL;
}

/* Micro-tiles of full depth per measurement of vnpu_simd_probe(). */
#define VNPU_SIMD_PROBE_TILES 16

/*
 * Picoseconds per multiply-add of @isa's micro-kernel, the best of five
 * runs of %VNPU_SIMD_PROBE_TILES tiles over the packed operands in @buf.
 * An emulated CPU may run the narrower instructions faster than the wider
 * ones, so the choice is measured, as lib/raid6 measures its algorithms.
 */
static u64 vnpu_simd_probe(const struct vnpu_simd *isa, u32 *buf)
{
	struct vnpu_gemm_strip s = {
		.pa = buf, .pb = buf + VNPU_GEMM_MR * VNPU_A_LANES_MAX * VNPU_GEMM_KC,
		.c = buf + (VNPU_GEMM_MR * VNPU_A_LANES_MAX + VNPU_GEMM_NR_MAX) * VNPU_GEMM_KC,
		.rs_c = VNPU_GEMM_NR_MAX, .cs_c = 1, .kc = VNPU_GEMM_KC, .tiles = 1,
		.rows = VNPU_GEMM_MR, .cols = isa->nr, .alpha = VNPU_FP32_ONE,
	};
	u64 best = U64_MAX, t;
	int run, i;

	for (run = 0; run < 5; run++) {
		t = ktime_get_ns();
		kernel_fpu_begin();
		for (i = 0; i < VNPU_SIMD_PROBE_TILES; i++)
			isa->gemm_strip(&s);
		kernel_fpu_end();
		best = min(best, ktime_get_ns() - t);
		cond_resched();
	}
	return div_u64(best * 1000, VNPU_SIMD_PROBE_TILES * VNPU_GEMM_MR * isa->nr *
		       VNPU_GEMM_KC);
}

/* The faster of SSE2 and (where usable) AVX2; SSE2 without memory to try. */
static const struct vnpu_simd *vnpu_simd_fastest(const struct vnpu_simd *avx2)
{
	size_t words = (VNPU_GEMM_MR * VNPU_A_LANES_MAX + VNPU_GEMM_NR_MAX) * VNPU_GEMM_KC +
		       VNPU_GEMM_MR * VNPU_GEMM_NR_MAX;
	u64 ps_sse2, ps_avx2;
	u32 *buf;

	if (!avx2)
		return &vnpu_simd_sse2;
	buf = kmalloc_array(words, sizeof(u32), GFP_KERNEL);
	if (!buf)
		return &vnpu_simd_sse2;
	/*
	 * Operands whose products round, as real data does: an emulator may
	 * take a slow path until the first inexact result (QEMU's softfloat).
	 */
	memset32(buf, VNPU_FP32_THIRD, words);
	ps_sse2 = vnpu_simd_probe(&vnpu_simd_sse2, buf);
	ps_avx2 = vnpu_simd_probe(avx2, buf);
	kfree(buf);
	pr_info("vnpu: GEMM micro-kernels: sse2 %llu ps, avx2 %llu ps a multiply-add\n",
		ps_sse2, ps_avx2);
	return ps_avx2 <= ps_sse2 ? avx2 : &vnpu_simd_sse2;
}

/* Bytes of one FPU section of vnpu_copy_bytes(). */
#define VNPU_COPY_SECTION SZ_256K
/* Bytes of each copy vnpu_copy_probe() times. */
#define VNPU_COPY_PROBE_BYTES SZ_64K

/* Whether vnpu_copy_bytes() moves whole blocks with the vector kernel. */
static bool vnpu_copy_vector;

/**
 * vnpu_copy_bytes - the copy engine's data mover
 * @dst: destination
 * @src: source; the ranges may overlap
 * @n: bytes
 *
 * Ranges that do not overlap move in the vector kernel's blocks when
 * vnpu_copy_probe() measured it faster than memmove() (which is the
 * byte-wide string move on CPUs with ERMS, and an emulator may run that a
 * byte an iteration), in FPU sections of at most %VNPU_COPY_SECTION bytes
 * with cond_resched() between them; the rest with memmove().
 */
void vnpu_copy_bytes(void *dst, const void *src, size_t n)
{
	size_t done = 0, len;

	if (vnpu_copy_vector && (dst + n <= src || src + n <= dst)) {
		while (n - done >= VNPU_SIMD_COPY_BLOCK) {
			len = min_t(size_t, n - done, VNPU_COPY_SECTION);
			kernel_fpu_begin();
			done += vnpu_simd_active->copy(dst + done, src + done, len);
			kernel_fpu_end();
			cond_resched();
		}
	}
	memmove(dst + done, src + done, n - done);
}

/* Nanoseconds of the best of five copies of @n bytes by @vector or memmove(). */
static u64 vnpu_copy_time(void *dst, const void *src, size_t n, bool vector)
{
	u64 best = U64_MAX, t;
	int run;

	for (run = 0; run < 5; run++) {
		t = ktime_get_ns();
		if (vector) {
			kernel_fpu_begin();
			vnpu_simd_active->copy(dst, src, n);
			kernel_fpu_end();
		} else {
			memmove(dst, src, n);
		}
		best = min(best, ktime_get_ns() - t);
		cond_resched();
	}
	return best;
}

/*
 * Whether the chosen vector kernels copy faster than memmove(): measured,
 * as the GEMM micro-kernels are, since which one wins depends on the CPU
 * (and on an emulator). memmove() without memory to try.
 */
static bool vnpu_copy_probe(void)
{
	u8 *buf = kmalloc(2 * VNPU_COPY_PROBE_BYTES, GFP_KERNEL);
	u64 ns_memmove, ns_vector;

	if (!buf)
		return false;
	memset(buf, 0x5a, 2 * VNPU_COPY_PROBE_BYTES);
	ns_memmove = vnpu_copy_time(buf, buf + VNPU_COPY_PROBE_BYTES,
				    VNPU_COPY_PROBE_BYTES, false);
	ns_vector = vnpu_copy_time(buf, buf + VNPU_COPY_PROBE_BYTES,
				   VNPU_COPY_PROBE_BYTES, true);
	kfree(buf);
	pr_info("vnpu: copies of %u KiB: memmove %llu ns, %s %llu ns\n",
		VNPU_COPY_PROBE_BYTES / SZ_1K, ns_memmove, vnpu_simd_active->name, ns_vector);
	return ns_vector < ns_memmove;
}

/**
 * vnpu_gemm_init - choose the vector kernels
 *
 * ``simd=auto`` takes AVX2 and FMA where the CPU supports them (the
 * feature checks of lib/raid6 and the crypto drivers) and they measure
 * faster than SSE2, else SSE2. The copy engine then uses the chosen
 * kernels' copy where it measures faster than memmove() (vnpu_copy_bytes()).
 *
 * Return: 0, or -EINVAL for a bad ``simd`` parameter or ``avx2`` on a CPU
 * without AVX2 and FMA.
 */
int vnpu_gemm_init(void)
{
	const struct vnpu_simd *avx2 = vnpu_simd_avx2_usable();

	if (!strcmp(vnpu_simd_param, "sse2")) {
		vnpu_simd_active = &vnpu_simd_sse2;
	} else if (!strcmp(vnpu_simd_param, "auto")) {
		vnpu_simd_active = vnpu_simd_fastest(avx2);
	} else if (!strcmp(vnpu_simd_param, "avx2")) {
		if (!avx2) {
			pr_err("vnpu: simd=avx2 but the CPU lacks AVX2 or FMA\n");
			return -EINVAL;
		}
		vnpu_simd_active = avx2;
	} else {
		pr_err("vnpu: simd=%s: auto, avx2 or sse2 expected\n", vnpu_simd_param);
		return -EINVAL;
	}
	pr_info("vnpu: %s compute kernels\n", vnpu_simd_active->name);
	vnpu_copy_vector = vnpu_copy_probe();
	return 0;
}

/**
 * vnpu_gemm_fini - free the packing buffers; no operator may be running
 */
void vnpu_gemm_fini(void)
{
	struct vnpu_gemm_scratch *s, *tmp;

	list_for_each_entry_safe(s, tmp, &vnpu_gemm_pool, node) {
		kvfree(s->pa);
		kfree(s);
	}
	INIT_LIST_HEAD(&vnpu_gemm_pool);
}
