#pragma once
/* Static keys and calls of kernel/bpf/core.c: a static key is a plain
 * boolean here. */
struct static_key_false { int enabled; };
#define DEFINE_STATIC_KEY_FALSE(name) struct static_key_false name = { 0 }
static inline bool bpfdiff_static_key_enabled(const struct static_key_false *key) { return key->enabled; }
#define static_branch_unlikely(key) bpfdiff_static_key_enabled(key)
/* A static call that may be NULL: a function pointer, a no-op while NULL. */
static inline void bpfdiff_static_call_nop(void) {}
#define DEFINE_STATIC_CALL_NULL(name, func) void (*bpfdiff_static_call_##name)(void) = NULL
#define static_call_cond(name) \
	(bpfdiff_static_call_##name ? bpfdiff_static_call_##name : bpfdiff_static_call_nop)
