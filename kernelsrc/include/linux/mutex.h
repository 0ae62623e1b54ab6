#pragma once
/* One thread runs the kernel's code at a time in bpfdiff: text_mutex and
 * core.c's mutexes have nothing to exclude. */
struct mutex { int unused; };
#define DEFINE_MUTEX(m) struct mutex m = { 0 }
static inline void mutex_init(struct mutex *m) { (void)m; }
static inline void mutex_destroy(struct mutex *m) { (void)m; }
static inline void mutex_lock(struct mutex *m) { (void)m; }
static inline void mutex_unlock(struct mutex *m) { (void)m; }
