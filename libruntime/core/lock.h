/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * A small mutex for the pool allocation fast path. Uncontended, taking it
 * is one compare-and-exchange and dropping it one exchange, both inline;
 * pthread_mutex_lock() and _unlock() cost two library calls and owner
 * bookkeeping, as much again as the pool's own work. Waiters sleep on a
 * futex (the third mutex of Drepper, "Futexes Are Tricky"). It is not
 * recursive and has no owner checks. Zeroed memory is an unlocked lock,
 * and there is nothing to destroy.
 */
#ifndef VNPU_LOCK_H
#define VNPU_LOCK_H

#include <stdatomic.h>

struct vnpu_lock {
	atomic_int state;	/* 0 free, 1 held, 2 held and maybe waited for */
};

/* The contended halves, lock.c. */
void vnpu_lock_wait(struct vnpu_lock *lock);
void vnpu_lock_wake(struct vnpu_lock *lock);

static inline void vnpu_lock(struct vnpu_lock *lock)
{
	int expected = 0;

	if (!atomic_compare_exchange_strong_explicit(&lock->state, &expected, 1,
						     memory_order_acquire, memory_order_relaxed))
		vnpu_lock_wait(lock);
}

/* Returns 1 if it took @lock, 0 if @lock was held. */
static inline int vnpu_trylock(struct vnpu_lock *lock)
{
	int expected = 0;

	return atomic_compare_exchange_strong_explicit(&lock->state, &expected, 1,
						       memory_order_acquire, memory_order_relaxed);
}

static inline void vnpu_unlock(struct vnpu_lock *lock)
{
	if (atomic_exchange_explicit(&lock->state, 0, memory_order_release) == 2)
		vnpu_lock_wake(lock);
}

#endif
