// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Handle table. A handle is (type << 56) | (generation << 32) | (slot + 1):
 * destroying an object bumps its slot's generation, so a stale handle, or
 * a handle of another type, is detected instead of reaching freed memory.
 * Slots are read under table_lock, except by the lock-free first tries of
 * vnpu_obj_lookup_locked() (the pool allocation fast path) and
 * vnpu_obj_lookup_stable() (streams).
 */
#include <stdbool.h>
#include <stdlib.h>

#include "runtime.h"

/*
 * A slot is read without table_lock by the lock-free lookups
 * (vnpu_obj_lookup_locked(), vnpu_obj_lookup_stable()), so @obj and
 * @handle are atomic: writers hold table_lock and store with release,
 * lock-free readers load with acquire.
 */
struct slot {
	_Atomic(struct vnpu_obj *) obj;
	_Atomic uint64_t handle;	/* the handle naming @obj, 0 while free */
	uint32_t generation;	/* under table_lock */
	uint32_t next_free;	/* slot index + 1 of the next free slot, 0 = end */
};

/*
 * The slots live in chunks that never move and are never freed (a
 * lock-free reader may hold a pointer into any of them): chunk k holds
 * CHUNK0_SLOTS << k slots, allocated when the table first needs it, so
 * NUM_CHUNKS chunks cover every 32-bit slot index.
 */
#define CHUNK0_SHIFT 6
#define CHUNK0_SLOTS (1u << CHUNK0_SHIFT)
#define NUM_CHUNKS 27
static struct slot *_Atomic chunks[NUM_CHUNKS];

/* Protects every field below and every slot update; held only for table updates and lookups. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t num_slots;	/* slots in the allocated chunks */
static uint32_t first_free;	/* slot index + 1, 0 = none */

#define HANDLE_SLOT(h) ((uint32_t)((h) & 0xffffffffu))
#define HANDLE_GEN(h) ((uint32_t)(((h) >> 32) & 0xffffffu))
#define HANDLE_TYPE(h) ((unsigned int)((h) >> 56))

static uint64_t make_handle(unsigned int type, uint32_t generation, uint32_t index)
{
	return ((uint64_t)type << 56) | ((uint64_t)(generation & 0xffffffu) << 32) |
	       (uint64_t)(index + 1);
}

/* Chunk k starts at slot index CHUNK0_SLOTS * (2^k - 1). */
static unsigned int chunk_of(uint32_t index, uint32_t *offset)
{
	uint64_t j = (uint64_t)index + CHUNK0_SLOTS;
	unsigned int k = 63u - (unsigned int)__builtin_clzll(j) - CHUNK0_SHIFT;

	*offset = (uint32_t)(j - ((uint64_t)CHUNK0_SLOTS << k));
	return k;
}

/* The slot at @index, or NULL if its chunk does not exist; safe without table_lock. */
static struct slot *slot_at(uint32_t index)
{
	uint32_t offset;
	unsigned int k = chunk_of(index, &offset);
	struct slot *chunk = atomic_load_explicit(&chunks[k], memory_order_acquire);

	return chunk ? &chunk[offset] : NULL;
}

/* Adds the next chunk of free slots; under table_lock. */
static int grow_locked(void)
{
	uint32_t offset;
	unsigned int k = num_slots ? chunk_of((uint32_t)num_slots, &offset) : 0;
	uint64_t count = (uint64_t)CHUNK0_SLOTS << k;
	struct slot *chunk;

	/* The last index stays unused: index + 1 must fit the handle's 32 bits. */
	if (k >= NUM_CHUNKS || num_slots + count > UINT32_MAX)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	chunk = calloc(count, sizeof(*chunk));
	if (!chunk)
		return VNPU_ERROR_OUT_OF_HOST_MEMORY;
	for (uint64_t i = 0; i < count; i++) {
		chunk[i].generation = 1;
		chunk[i].next_free = i + 1 < count ? (uint32_t)(num_slots + i + 2) : 0;
	}
	first_free = (uint32_t)num_slots + 1;
	num_slots += count;
	atomic_store_explicit(&chunks[k], chunk, memory_order_release);
	return VNPU_SUCCESS;
}

static const char *const type_names[] = {
	[VNPU_OBJ_CONTEXT] = "context", [VNPU_OBJ_STREAM] = "stream", [VNPU_OBJ_EVENT] = "event",
	[VNPU_OBJ_POOL] = "pool", [VNPU_OBJ_DATA_CACHE] = "data cache", [VNPU_OBJ_COMM] = "communicator",
	[VNPU_OBJ_GRAPH] = "graph",
};

static const char *type_name(unsigned int type)
{
	return type < sizeof(type_names) / sizeof(type_names[0]) && type_names[type] ?
	       type_names[type] : "object";
}

int vnpu_handle_alloc(struct vnpu_obj *obj, unsigned int type)
{
	struct slot *s;
	uint32_t index;

	pthread_mutex_lock(&table_lock);
	if (!first_free) {
		int status = grow_locked();

		if (status != VNPU_SUCCESS) {
			pthread_mutex_unlock(&table_lock);
			return status;
		}
	}
	index = first_free - 1;
	s = slot_at(index);
	first_free = s->next_free;
	/* A store, not an init: a stale vnpu_obj_lookup_stable() may read it. */
	atomic_store_explicit(&obj->refs, 1, memory_order_relaxed);
	obj->type = type;
	obj->handle = make_handle(type, s->generation, index);
	/* @obj first: a reader that sees the handle sees the object. */
	atomic_store_explicit(&s->obj, obj, memory_order_release);
	atomic_store_explicit(&s->handle, obj->handle, memory_order_release);
	pthread_mutex_unlock(&table_lock);
	vnpu_log_site(obj->created_by, "create %s 0x%llx", type_name(type),
		      (unsigned long long)obj->handle);
	return VNPU_SUCCESS;
}

/* Finds the live slot of @handle, an object of @type; under table_lock. */
static struct slot *find_locked(uint64_t handle, unsigned int type)
{
	uint32_t index = HANDLE_SLOT(handle);
	struct slot *s;

	if (!index || index > num_slots || HANDLE_TYPE(handle) != type)
		return NULL;
	s = slot_at(index - 1);
	/* The whole handle: slot, generation and type of the object there. */
	if (atomic_load_explicit(&s->handle, memory_order_relaxed) != handle)
		return NULL;
	return s;
}

struct vnpu_obj *vnpu_handle_get(uint64_t handle, unsigned int type)
{
	struct vnpu_obj *obj = NULL;
	struct slot *s;

	pthread_mutex_lock(&table_lock);
	s = find_locked(handle, type);
	if (s) {
		obj = atomic_load_explicit(&s->obj, memory_order_relaxed);
		atomic_fetch_add(&obj->refs, 1);
	}
	pthread_mutex_unlock(&table_lock);
	return obj;
}

/*
 * The live object @handle names, with a reference, or the runtime-state or
 * VNPU_ERROR_INVALID_HANDLE error: the one lookup every typed getter uses.
 */
int vnpu_obj_lookup(uint64_t handle, unsigned int type, struct vnpu_obj **obj)
{
	int status = vnpu_rt_enter();

	if (status != VNPU_SUCCESS)
		return status;
	*obj = vnpu_handle_get(handle, type);
	return *obj ? VNPU_SUCCESS : VNPU_ERROR_INVALID_HANDLE;
}

/*
 * Without table_lock: the slot @handle names, with the object in it in
 * @obj, or NULL if the slot does not hold @handle's live object now. The
 * handle is read again after the object: unchanged, @obj is the object it
 * names, so an object of @type, not one that took the slot since.
 */
static struct slot *peek_lock_free(uint64_t handle, unsigned int type, struct vnpu_obj **obj)
{
	uint32_t index = HANDLE_SLOT(handle);
	struct slot *s;

	if (!index || HANDLE_TYPE(handle) != type)
		return NULL;
	s = slot_at(index - 1);
	if (!s || atomic_load_explicit(&s->handle, memory_order_acquire) != handle)
		return NULL;
	*obj = atomic_load_explicit(&s->obj, memory_order_acquire);
	if (!*obj || atomic_load_explicit(&s->handle, memory_order_acquire) != handle)
		return NULL;
	return s;
}

/* Whether slot @s still holds @handle's object @obj (after a lock or ref). */
static bool still_names(struct slot *s, uint64_t handle, struct vnpu_obj *obj)
{
	return atomic_load_explicit(&s->handle, memory_order_acquire) == handle &&
	       atomic_load_explicit(&s->obj, memory_order_acquire) == obj;
}

/*
 * vnpu_obj_lookup_locked() without table_lock: the object @handle names,
 * with its lock held, or NULL (nothing held) if the handle is not live or
 * the slot changed meanwhile. Objects of @type are type-stable, so the
 * lock is valid memory even if the object is destroyed under us; holding
 * it, the slot is checked again: if it still names the object, its release
 * (which takes that lock first, after the handle is removed) has not run.
 */
static struct vnpu_obj *lookup_lock_free(uint64_t handle, unsigned int type,
					 size_t lock_offset)
{
	struct vnpu_lock *lock;
	struct vnpu_obj *obj;
	struct slot *s = peek_lock_free(handle, type, &obj);

	if (!s)
		return NULL;
	lock = (struct vnpu_lock *)((char *)obj + lock_offset);
	vnpu_lock(lock);
	if (still_names(s, handle, obj))
		return obj;
	vnpu_unlock(lock);
	return NULL;
}

/* vnpu_obj_lookup_locked() under table_lock, when the lock-free try failed. */
static __attribute__((noinline)) int lookup_locked_slow(uint64_t handle, unsigned int type,
							size_t lock_offset,
							struct vnpu_obj **obj, int *ref)
{
	struct vnpu_lock *lock = NULL;
	struct slot *s;

	pthread_mutex_lock(&table_lock);
	s = find_locked(handle, type);
	if (s) {
		*obj = atomic_load_explicit(&s->obj, memory_order_relaxed);
		lock = (struct vnpu_lock *)((char *)*obj + lock_offset);
		/* Never wait for it here: its holder may want table_lock. */
		*ref = !vnpu_trylock(lock);
		if (*ref)
			atomic_fetch_add(&(*obj)->refs, 1);
	}
	pthread_mutex_unlock(&table_lock);
	if (!s)
		return VNPU_ERROR_INVALID_HANDLE;
	if (*ref)
		vnpu_lock(lock);
	return VNPU_SUCCESS;
}

int vnpu_obj_lookup_locked(uint64_t handle, unsigned int type, size_t lock_offset,
			   struct vnpu_obj **obj, int *ref)
{
	int status = vnpu_rt_enter();

	if (status != VNPU_SUCCESS)
		return status;
	*obj = lookup_lock_free(handle, type, lock_offset);
	if (__builtin_expect(*obj != NULL, 1)) {
		*ref = 0;
		return VNPU_SUCCESS;
	}
	/* Not live, or changing: decide under table_lock. */
	return lookup_locked_slow(handle, type, lock_offset, obj, ref);
}

/*
 * vnpu_obj_lookup_stable() without table_lock: @handle's object with a
 * reference, or NULL (no reference) if the slot does not name it or it is
 * going. The memory of an object of @type is never freed, so its @refs
 * may be read even if the object was destroyed, or reused, meanwhile: a
 * reference is taken only while @refs is not zero (a released object
 * stays at zero until it is reused), and the slot is checked again after,
 * so the object referenced is the one @handle names.
 */
static struct vnpu_obj *get_lock_free(uint64_t handle, unsigned int type)
{
	struct vnpu_obj *obj;
	struct slot *s = peek_lock_free(handle, type, &obj);
	unsigned int refs;

	if (!s)
		return NULL;
	refs = atomic_load_explicit(&obj->refs, memory_order_relaxed);
	do {
		if (!refs)
			return NULL;
	} while (!atomic_compare_exchange_weak_explicit(&obj->refs, &refs, refs + 1,
							memory_order_acquire,
							memory_order_relaxed));
	if (still_names(s, handle, obj))
		return obj;
	/* It took the slot after @handle's object went: not ours to keep. */
	vnpu_obj_put(obj);
	return NULL;
}

int vnpu_obj_lookup_stable(uint64_t handle, unsigned int type, struct vnpu_obj **obj)
{
	int status = vnpu_rt_enter();

	if (status != VNPU_SUCCESS)
		return status;
	*obj = get_lock_free(handle, type);
	if (__builtin_expect(*obj != NULL, 1))
		return VNPU_SUCCESS;
	/* Not live, or changing: decide under table_lock. */
	*obj = vnpu_handle_get(handle, type);
	return *obj ? VNPU_SUCCESS : VNPU_ERROR_INVALID_HANDLE;
}

/* @caller: return address of the destroying API call, NULL if the runtime's own. */
struct vnpu_obj *vnpu_handle_remove(uint64_t handle, unsigned int type, void *caller)
{
	struct vnpu_obj *obj = NULL;
	struct slot *s;

	pthread_mutex_lock(&table_lock);
	s = find_locked(handle, type);
	if (s) {
		obj = atomic_load_explicit(&s->obj, memory_order_relaxed);
		/* The handle first: a reader that sees the slot empty sees it gone. */
		atomic_store_explicit(&s->handle, 0, memory_order_release);
		atomic_store_explicit(&s->obj, NULL, memory_order_release);
		s->generation++;
		s->next_free = first_free;
		first_free = HANDLE_SLOT(handle);
	}
	pthread_mutex_unlock(&table_lock);
	if (obj)
		vnpu_log_site(caller, "destroy %s 0x%llx", type_name(type),
			      (unsigned long long)handle);
	return obj;
}

void vnpu_obj_put(struct vnpu_obj *obj)
{
	if (obj && atomic_fetch_sub(&obj->refs, 1) == 1)
		obj->release(obj);
}

unsigned int vnpu_handle_for_each(unsigned int type, void (*fn)(struct vnpu_obj *, void *),
				  void *arg)
{
	unsigned int count = 0;

	pthread_mutex_lock(&table_lock);
	for (uint32_t i = 0; i < num_slots; i++) {
		struct vnpu_obj *obj = atomic_load_explicit(&slot_at(i)->obj, memory_order_relaxed);

		if (obj && obj->type == type) {
			if (fn)
				fn(obj, arg);
			count++;
		}
	}
	pthread_mutex_unlock(&table_lock);
	return count;
}
