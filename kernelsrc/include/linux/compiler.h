/* The tools compiler.h, with WRITE_ONCE() as a store that can reach guest
 * memory. bpf_jit_comp.c makes one: bpf_arch_text_poke() writes the PLT's
 * target (WRITE_ONCE(plt->target, ...)) with a plain store to the image,
 * after set_memory_rw(). Here the image is guest memory, which a host
 * store cannot reach, so the store goes through bpfdiff_kjit_store()
 * (kernelsrc/services.c): into the image being poked through the world's
 * text_copy, anywhere else as the plain store it is. */
#pragma once
#include_next <linux/compiler.h>
#include <stddef.h>

void bpfdiff_kjit_store(volatile void *to, const void *value, size_t bytes);

#undef WRITE_ONCE
#define WRITE_ONCE(x, val)                                   \
	({                                                   \
		typeof(x) __bpfdiff_value = (val);           \
		bpfdiff_kjit_store(&(x), &__bpfdiff_value,   \
				   sizeof(__bpfdiff_value)); \
		__bpfdiff_value;                             \
	})
