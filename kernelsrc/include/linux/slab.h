#pragma once
/* Kernel allocations of the JIT (its offset table and private data) come
 * from the host heap. */
#include <linux/types.h>
#define GFP_KERNEL 0
void *kzalloc(size_t size, int flags);
void *kcalloc(size_t n, size_t size, int flags);
void *kvcalloc(size_t n, size_t size, int flags);
void *kvmalloc(size_t size, int flags);
void kfree(const void *p);
void kvfree(const void *p);
