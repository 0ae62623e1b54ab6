/* 6.1's core.c: module_alloc() for its prog pack and bpf_jit_alloc_exec()'s
 * weak default. arm64's JIT of 6.1 does not use the pack and overrides
 * bpf_jit_alloc_exec(): these trap (core_services.c). */
#pragma once
#include <linux/types.h>
void *module_alloc(unsigned long size);
void module_memfree(void *module_region);
