// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Handle table. A handle is (type << 56) | (generation << 32) | (slot + 1):
 * destroying an object bumps its slot's generation, so a stale handle, or
 * a handle of another type, is detected instead of reaching freed memory.
 */
#include <stdlib.h>

#include "runtime.h"

struct slot {
	struct vnpu_obj *obj;
	uint32_t generation;
	uint32_t next_free;	/* slot index + 1 of the next free slot, 0 = end */
};

/* Protects every field below; held only for table updates and lookups. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;
static uint32_t num_slots;
static uint32_t first_free;	/* slot index + 1, 0 = none */

#define HANDLE_SLOT(h) ((uint32_t)((h) & 0xffffffffu))
#define HANDLE_GEN(h) ((uint32_t)(((h) >> 32) & 0xffffffu))
#define HANDLE_TYPE(h) ((unsigned int)((h) >> 56))

static uint64_t make_handle(unsigned int type, uint32_t generation, uint32_t index)
{
	return ((uint64_t)type << 56) | ((uint64_t)(generation & 0xffffffu) << 32) |
	       (uint64_t)(index + 1);
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
	uint32_t index;

	pthread_mutex_lock(&table_lock);
	if (!first_free) {
		uint32_t grown = num_slots ? num_slots * 2 : 64;
		struct slot *s = realloc(slots, grown * sizeof(*s));

		if (!s) {
			pthread_mutex_unlock(&table_lock);
			return VNPU_ERROR_OUT_OF_HOST_MEMORY;
		}
		for (uint32_t i = num_slots; i < grown; i++) {
			s[i].obj = NULL;
			s[i].generation = 1;
			s[i].next_free = i + 1 < grown ? i + 2 : 0;
		}
		first_free = num_slots + 1;
		slots = s;
		num_slots = grown;
	}
	index = first_free - 1;
	first_free = slots[index].next_free;
	slots[index].obj = obj;
	atomic_init(&obj->refs, 1);
	obj->type = type;
	obj->handle = make_handle(type, slots[index].generation, index);
	pthread_mutex_unlock(&table_lock);
	vnpu_log_site(obj->created_by, "create %s 0x%llx", type_name(type),
		      (unsigned long long)obj->handle);
	return VNPU_SUCCESS;
}

/* Finds the live slot of @handle; under table_lock. */
static struct slot *find_locked(uint64_t handle, unsigned int type)
{
	uint32_t index = HANDLE_SLOT(handle);

	if (!index || index > num_slots || HANDLE_TYPE(handle) != type)
		return NULL;
	if (!slots[index - 1].obj || (slots[index - 1].generation & 0xffffffu) != HANDLE_GEN(handle))
		return NULL;
	return &slots[index - 1];
}

struct vnpu_obj *vnpu_handle_get(uint64_t handle, unsigned int type)
{
	struct vnpu_obj *obj = NULL;
	struct slot *s;

	pthread_mutex_lock(&table_lock);
	s = find_locked(handle, type);
	if (s) {
		obj = s->obj;
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

int vnpu_obj_lookup_locked(uint64_t handle, unsigned int type, size_t lock_offset,
			   struct vnpu_obj **obj, int *ref)
{
	pthread_mutex_t *lock = NULL;
	struct slot *s;
	int status = vnpu_rt_enter();

	if (status != VNPU_SUCCESS)
		return status;
	pthread_mutex_lock(&table_lock);
	s = find_locked(handle, type);
	if (s) {
		*obj = s->obj;
		lock = (pthread_mutex_t *)((char *)s->obj + lock_offset);
		/* Never wait for it here: its holder may want table_lock. */
		*ref = pthread_mutex_trylock(lock) != 0;
		if (*ref)
			atomic_fetch_add(&s->obj->refs, 1);
	}
	pthread_mutex_unlock(&table_lock);
	if (!s)
		return VNPU_ERROR_INVALID_HANDLE;
	if (*ref)
		pthread_mutex_lock(lock);
	return VNPU_SUCCESS;
}

/* @caller: return address of the destroying API call, NULL if the runtime's own. */
struct vnpu_obj *vnpu_handle_remove(uint64_t handle, unsigned int type, void *caller)
{
	struct vnpu_obj *obj = NULL;
	struct slot *s;

	pthread_mutex_lock(&table_lock);
	s = find_locked(handle, type);
	if (s) {
		obj = s->obj;
		s->obj = NULL;
		s->generation++;
		s->next_free = first_free;
		first_free = (uint32_t)(s - slots) + 1;
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
		if (slots[i].obj && slots[i].obj->type == type) {
			if (fn)
				fn(slots[i].obj, arg);
			count++;
		}
	}
	pthread_mutex_unlock(&table_lock);
	return count;
}
