// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * The contended halves of struct vnpu_lock (lock.h).
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lock.h"

void vnpu_lock_wait(struct vnpu_lock *lock)
{
	/*
	 * Mark it waited for (2) before sleeping, so that its holder wakes
	 * someone; having set 2 ourselves, we may have taken it with a 2 that
	 * no one waits for: that costs one spurious wake, never a lost one.
	 */
	while (atomic_exchange_explicit(&lock->state, 2, memory_order_acquire) != 0)
		syscall(SYS_futex, &lock->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void vnpu_lock_wake(struct vnpu_lock *lock)
{
	syscall(SYS_futex, &lock->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
