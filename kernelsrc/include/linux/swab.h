#pragma once
/* The kernel's byte swaps (uapi/linux/swab.h), for the interpreter's
 * BPF_END. */
#include <linux/types.h>
#define __swab16(x) ((__u16)__builtin_bswap16((__u16)(x)))
#define __swab32(x) ((__u32)__builtin_bswap32((__u32)(x)))
#define __swab64(x) ((__u64)__builtin_bswap64((__u64)(x)))
