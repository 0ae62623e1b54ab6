#pragma once
/* One thread runs the kernel's code at a time in bpfdiff: a spinlock has
 * nothing to exclude. Small, so that struct bpf_map keeps its guest
 * layout (linux/bpf.h). */
typedef struct { int unused; } spinlock_t;
#define DEFINE_SPINLOCK(x) spinlock_t x = { 0 }
#define spin_lock_init(l) ((void)(l))
static inline void spin_lock(spinlock_t *l) { (void)l; }
static inline void spin_unlock(spinlock_t *l) { (void)l; }
#define spin_lock_bh(l) spin_lock(l)
#define spin_unlock_bh(l) spin_unlock(l)
#define spin_lock_irqsave(l, flags) do { (void)(flags); spin_lock(l); } while (0)
#define spin_unlock_irqrestore(l, flags) do { (void)(flags); spin_unlock(l); } while (0)
