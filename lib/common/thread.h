/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Threads the library starts for itself (completion threads, device engines, watchers,
 * pollers) take no asynchronous signals (internal). A signal sent to the process goes to one
 * of its threads that does not block it; had it gone to one of ours, the application's
 * handler would run there and the thread that waits for it (a FUSE session's loop in
 * sem_wait, a server in pause) would never wake: `unvme fuse` then ignored SIGTERM until the
 * next file system request. Faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL) still reach the thread
 * that caused them: the kernel delivers them whatever the mask.
 */
#ifndef UNVME_COMMON_THREAD_H
#define UNVME_COMMON_THREAD_H

#include <pthread.h>
#include <signal.h>

/* pthread_create with every signal blocked in the new thread (it inherits the mask of its
 * creator, whose own mask is restored at once). Returns pthread_create's result. */
static inline int unvme_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

#endif
