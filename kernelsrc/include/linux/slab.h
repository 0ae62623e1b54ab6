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
/* The flags kernel/bpf/core.c passes; __GFP_ZERO is the one that changes
 * what the shims do. */
#define __GFP_ZERO 0x100u
#define __GFP_NOWARN 0x200u
#define __GFP_ACCOUNT 0x400u
#define GFP_USER 0
/* 6.1's core.c (6.12 writes bpf_memcg_flags(GFP_KERNEL)). */
#define GFP_KERNEL_ACCOUNT (GFP_KERNEL | __GFP_ACCOUNT)
void *krealloc(const void *p, size_t new_size, int flags);
#define kfree_rcu(ptr, field) kfree(ptr)
void *krealloc_array(void *p, size_t new_n, size_t new_size, int flags);
#include <linux/overflow.h> /* struct_size */
void *kmalloc(size_t size, int flags);
void *kmalloc_array(size_t n, size_t size, int flags);
