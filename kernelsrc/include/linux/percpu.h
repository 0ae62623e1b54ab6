#pragma once
/* Per-CPU data of kernel/bpf/core.c (a program's statistics and recursion
 * counter, the interpreter's random state): bpfdiff runs the kernel's
 * host-side code on one CPU, so a per-CPU object is one object of the host
 * heap (kernelsrc/services.c). */
#include <linux/types.h>
#define __percpu
void *bpfdiff_alloc_percpu(size_t size);
void free_percpu(void *p);
#define alloc_percpu_gfp(type, gfp) ((type __percpu *)bpfdiff_alloc_percpu(sizeof(type)))
#define alloc_percpu(type) alloc_percpu_gfp(type, 0)
#define per_cpu_ptr(p, cpu) ((void)(cpu), (p))
#define this_cpu_ptr(p) (p)
#define DEFINE_PER_CPU(type, name) type name
#define get_cpu_var(var) (var)
#define put_cpu_var(var) ((void)0)
#define for_each_possible_cpu(cpu) for ((cpu) = 0; (cpu) < 1; (cpu)++)
static inline int raw_smp_processor_id(void) { return 0; }
