#pragma once
/* The tools bitmap.h, plus the two operations of the kernel's lib/bitmap.c
 * that kernel/bpf/core.c's prog pack uses (kernelsrc/core_services.c). */
#include_next <linux/bitmap.h>
void bitmap_set(unsigned long *map, unsigned int start, unsigned int nbits);
unsigned long bitmap_find_next_zero_area(unsigned long *map, unsigned long size, unsigned long start,
					 unsigned int nr, unsigned long align_mask);
