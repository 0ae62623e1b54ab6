#pragma once
/* arm64's barrier_nospec() is a CSDB, which only an arm64 kernel can
 * issue. kernel/bpf/core.c runs on the host here, where the speculation
 * it stops is not what bpfdiff tests: a compiler barrier keeps the order
 * of the code around it. */
#define barrier_nospec() __asm__ __volatile__("" ::: "memory")
