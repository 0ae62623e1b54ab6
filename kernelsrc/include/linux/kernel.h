#pragma once
/* The tools kernel.h, plus what the kernel's linux/kernel.h brings to
 * every file that the tools one does not: linux/align.h, the limits of
 * linux/limits.h, the 64-bit division helpers, the byte swaps, printk and
 * KMSAN's annotations (none: bpfdiff does not build with KMSAN). */
#include_next <linux/kernel.h>
#include <linux/align.h>
#include <linux/math64.h>
#include <linux/swab.h>
#include <linux/printk.h>
#include <linux/export.h>
#ifndef S16_MAX
#define S16_MAX ((s16)(U16_MAX >> 1))
#define S16_MIN ((s16)(-S16_MAX - 1))
#endif
#ifndef S32_MAX
#define S32_MAX ((s32)(0xffffffffU >> 1))
#define S32_MIN ((s32)(-S32_MAX - 1))
#endif
#ifndef U16_MAX
#define U16_MAX ((u16)~0U)
#endif
/* linux/wordpart.h's halves of a number (older trees' lib/insn.c uses them). */
#ifndef upper_32_bits
#define upper_32_bits(n) ((u32)(((n) >> 16) >> 16))
#define lower_32_bits(n) ((u32)((n) & 0xffffffff))
#endif
#define kmsan_unpoison_memory(address, size) ((void)(address), (void)(size))
/* linux/math.h's abs(): |x| in x's own type, undefined for its minimum.
 * Trees before c77b30bd1dcb ("bpf: Fix undefined behavior in interpreter
 * sdiv/smod for INT_MIN") divide with it. glibc's stdlib.h declares a
 * function of the name: it comes first, so that the macro only takes
 * the calls. */
#include <stdlib.h>
#undef abs
#define abs(x) ({ __typeof__(+(x)) __abs_x = (x); __abs_x < 0 ? -__abs_x : __abs_x; })
#ifndef __cacheline_aligned
#define __cacheline_aligned __attribute__((aligned(64)))
#endif
/* Boot-time initcalls. bpfdiff never boots: the pure ones (core.c's
 * bpf_jit_charge_init, which sets bpf_jit_limit from the arch's
 * executable memory) are gathered in a section that
 * bpfdiff_kjit_run_initcalls() runs once; the later ones (module init,
 * core.c's bpf_global_ma_init) need a running kernel and stay referenced
 * only. */
#include <linux/init.h>
typedef int (*bpfdiff_initcall_t)(void);
#define pure_initcall(fn)                                                          \
	static bpfdiff_initcall_t const bpfdiff_initcall_##fn                       \
		__attribute__((used, section("bpfdiff_pure_initcalls"))) = fn
#define late_initcall(fn) static bpfdiff_initcall_t const bpfdiff_initcall_##fn __attribute__((unused)) = fn
#define WARN_ONCE(condition, ...) WARN_ON(condition)
char *bin2hex(char *dst, const void *src, size_t count);
ssize_t strscpy(char *dest, const char *src, size_t count);
#define num_possible_nodes() 1
#define SZ_2M 0x00200000
#define PMD_SIZE SZ_2M
#ifndef U32_MAX
#define U32_MAX ((u32)~0U)
#endif
#ifndef S64_MAX
#define S64_MAX ((s64)(~0ULL >> 1))
#define S64_MIN ((s64)(-S64_MAX - 1))
#endif
/* The byte order: the kernel's byteorder headers define only the name of
 * the build's (__LITTLE_ENDIAN on arm64 here), and code tests it with
 * #ifdef __BIG_ENDIAN (lib/test_bpf.c's expected values). glibc's endian.h,
 * which the tools headers bring, defines both names as constants: included
 * here first, its __BIG_ENDIAN is taken away again. */
#include <endian.h>
#undef __BIG_ENDIAN
/* Network byte order (linux/byteorder/generic.h); the host is
 * little-endian. The compiler's swaps, not glibc's bswap_16 that the tools
 * kernel.h names: the kernel's are constants in a static initializer. */
#undef cpu_to_be16
#undef cpu_to_be32
#undef cpu_to_be64
#define cpu_to_be16(x) ((__be16)__builtin_bswap16(x))
#define cpu_to_be32(x) ((__be32)__builtin_bswap32(x))
#define cpu_to_be64(x) ((__be64)__builtin_bswap64(x))
#define htons(x) ((__be16)__builtin_bswap16((u16)(x)))
