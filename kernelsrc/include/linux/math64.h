#pragma once
/* The kernel's 64-bit division helpers (linux/math64.h, asm-generic/div64.h)
 * that kernel/bpf/core.c's interpreter uses for BPF_DIV and BPF_MOD, with
 * their kernel semantics: do_div() divides its u64 lvalue in place and
 * yields the u32 remainder. In place of the tools math64.h, whose x86 asm
 * the prelude's definition of `asm` would empty. */
#include <linux/types.h>
static inline u64 div64_u64_rem(u64 dividend, u64 divisor, u64 *remainder)
{
	*remainder = dividend % divisor;
	return dividend / divisor;
}
static inline u64 div64_u64(u64 dividend, u64 divisor) { return dividend / divisor; }
static inline s64 div64_s64(s64 dividend, s64 divisor) { return dividend / divisor; }
#define do_div(n, base)                                  \
	({                                               \
		u32 __base = (base);                     \
		u32 __rem = (u32)((u64)(n) % __base);    \
		(n) = (u64)(n) / __base;                 \
		__rem;                                   \
	})
