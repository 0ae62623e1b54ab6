#pragma once
/* The tools bitmap.h, plus the two operations of the kernel's lib/bitmap.c
 * that kernel/bpf/core.c's prog pack uses, as the kernel defines them: set
 * `len` bits from `start`, and find `nr` clear bits in a row from `start`,
 * the first of them on a multiple of align_mask + 1 (a value past
 * size - nr when there is none; callers compare it with their limit).
 * Inline here, not link symbols: QEMU's bitmap code in the static Unicorn
 * library the fuzz targets link defines a bitmap_find_next_zero_area of
 * its own. */
#include_next <linux/bitmap.h>

static inline void bitmap_set(unsigned long *map, unsigned int start, unsigned int len)
{
	for (unsigned int i = start; i < start + len; i++)
		map[i / BITS_PER_LONG] |= 1UL << (i % BITS_PER_LONG);
}

static inline unsigned long bitmap_find_next_zero_area(unsigned long *map, unsigned long size,
						       unsigned long start, unsigned int nr,
						       unsigned long align_mask)
{
	unsigned long index = (start + align_mask) & ~align_mask;

	while (index + nr <= size) {
		unsigned long i = index;

		while (i < index + nr && !(map[i / BITS_PER_LONG] >> (i % BITS_PER_LONG) & 1))
			i++;
		if (i == index + nr)
			return index;
		index = (i + 1 + align_mask) & ~align_mask;
	}
	return index + nr;
}
