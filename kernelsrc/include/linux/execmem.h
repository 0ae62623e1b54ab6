#pragma once
/* The executable-memory allocator under kernel/bpf/core.c's prog pack
 * (bpf_jit_alloc_exec -> execmem_alloc): bpfdiff's guest regions
 * (kernelsrc/core_services.c). */
#include <linux/types.h>
enum execmem_type { EXECMEM_DEFAULT, EXECMEM_MODULE_TEXT = EXECMEM_DEFAULT, EXECMEM_KPROBES, EXECMEM_FTRACE, EXECMEM_BPF };
void *execmem_alloc(enum execmem_type type, size_t size);
void execmem_free(void *ptr);
