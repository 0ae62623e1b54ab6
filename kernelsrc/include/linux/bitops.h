#pragma once
/* The tools bitops, plus __ffs64 of the kernel's linux/bitops.h. */
#include_next <linux/bitops.h>
#include <strings.h>  /* ffs */
static inline unsigned int __ffs64(u64 word) { return (unsigned int)__builtin_ctzll(word); }
