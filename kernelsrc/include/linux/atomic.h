#pragma once
/* The kernel's atomic_t and atomic64_t, as kernel/bpf/core.c uses them:
 * its interpreter's BPF_ATOMIC instructions and its counters. The
 * compiler's __atomic builtins, sequentially consistent where the
 * kernel's value-returning operations are fully ordered and relaxed where
 * its void ones are (Documentation/atomic_t.txt). */
#include <linux/types.h>

/* atomic_t is the tools linux/types.h one. */
typedef struct { s64 counter; } atomic64_t;
#define ATOMIC_INIT(i) { (i) }
#define ATOMIC64_INIT(i) { (i) }

#define BPFDIFF_ATOMIC_OPS(prefix, vtype, ctype)                                                         \
	static inline vtype prefix##_read(const ctype *v) { return __atomic_load_n(&v->counter, __ATOMIC_RELAXED); } \
	static inline void prefix##_set(ctype *v, vtype i) { __atomic_store_n(&v->counter, i, __ATOMIC_RELAXED); } \
	static inline void prefix##_add(vtype i, ctype *v) { __atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED); } \
	static inline void prefix##_and(vtype i, ctype *v) { __atomic_fetch_and(&v->counter, i, __ATOMIC_RELAXED); } \
	static inline void prefix##_or(vtype i, ctype *v) { __atomic_fetch_or(&v->counter, i, __ATOMIC_RELAXED); } \
	static inline void prefix##_xor(vtype i, ctype *v) { __atomic_fetch_xor(&v->counter, i, __ATOMIC_RELAXED); } \
	static inline void prefix##_inc(ctype *v) { prefix##_add(1, v); }                                     \
	static inline void prefix##_dec(ctype *v) { prefix##_add(-1, v); }                                    \
	static inline vtype prefix##_fetch_add(vtype i, ctype *v) { return __atomic_fetch_add(&v->counter, i, __ATOMIC_SEQ_CST); } \
	static inline vtype prefix##_fetch_and(vtype i, ctype *v) { return __atomic_fetch_and(&v->counter, i, __ATOMIC_SEQ_CST); } \
	static inline vtype prefix##_fetch_or(vtype i, ctype *v) { return __atomic_fetch_or(&v->counter, i, __ATOMIC_SEQ_CST); } \
	static inline vtype prefix##_fetch_xor(vtype i, ctype *v) { return __atomic_fetch_xor(&v->counter, i, __ATOMIC_SEQ_CST); } \
	static inline vtype prefix##_xchg(ctype *v, vtype i) { return __atomic_exchange_n(&v->counter, i, __ATOMIC_SEQ_CST); } \
	static inline vtype prefix##_cmpxchg(ctype *v, vtype old, vtype new_value)                           \
	{                                                                                                  \
		__atomic_compare_exchange_n(&v->counter, &old, new_value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
		return old;                                                                                \
	}                                                                                                  \
	static inline vtype prefix##_inc_return(ctype *v) { return __atomic_add_fetch(&v->counter, 1, __ATOMIC_SEQ_CST); } \
	static inline vtype prefix##_dec_return(ctype *v) { return __atomic_sub_fetch(&v->counter, 1, __ATOMIC_SEQ_CST); } \
	static inline bool prefix##_dec_and_test(ctype *v) { return prefix##_dec_return(v) == 0; }
BPFDIFF_ATOMIC_OPS(atomic, int, atomic_t)
BPFDIFF_ATOMIC_OPS(atomic64, s64, atomic64_t)
#undef BPFDIFF_ATOMIC_OPS
/* atomic_long_t is the tools linux/types.h one (a long counter). */
static inline long atomic_long_add_return(long i, atomic_long_t *v) { return __atomic_add_fetch(&v->counter, i, __ATOMIC_SEQ_CST); }
static inline void atomic_long_sub(long i, atomic_long_t *v) { __atomic_fetch_sub(&v->counter, i, __ATOMIC_RELAXED); }
