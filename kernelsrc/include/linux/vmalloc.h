/* vmalloc and vfree for kernel/bpf/core.c (its programs and their
 * clones): the host heap, tracked by compile as kzalloc is
 * (kernelsrc/services.c). */
#pragma once
#include <linux/types.h>
#include <linux/slab.h>
void *__vmalloc(unsigned long size, gfp_t gfp_mask);
void *vmalloc(unsigned long size);
void vfree(const void *addr);
/* 6.1's bpf_jit_alloc_exec(): no KASAN tags here. */
#define kasan_reset_tag(addr) ((void *)(addr))
