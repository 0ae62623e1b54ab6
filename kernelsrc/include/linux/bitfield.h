/* FIELD_GET/FIELD_PREP/FIELD_FIT for bpf_jit_comp.c's exception fixups.
 * A tree whose tools/include has linux/bitfield.h (6.12) gives its own;
 * an older one (6.1) gets these, the kernel's meaning without its
 * compile-time checks. */
#pragma once
#if __has_include_next(<linux/bitfield.h>)
#include_next <linux/bitfield.h>
#else
#include <linux/types.h>
#define __bf_shf(x) (__builtin_ffsll(x) - 1)
#define FIELD_MAX(_mask) ((typeof(_mask))((_mask) >> __bf_shf(_mask)))
#define FIELD_FIT(_mask, _val) (!((((typeof(_mask))(_val)) << __bf_shf(_mask)) & ~(_mask)))
#define FIELD_PREP(_mask, _val) ((((typeof(_mask))(_val)) << __bf_shf(_mask)) & (_mask))
#define FIELD_GET(_mask, _reg) ((typeof(_mask))(((_reg) & (_mask)) >> __bf_shf(_mask)))
#endif
