/* Force-included before each kernel file: what a configured arm64 kernel
 * build provides implicitly (its generated autoconf.h and the macros that
 * reach every file through the kernel's header tree). The configuration is
 * Debian's arm64 one for 6.12 where it changes the JIT's code. */
#pragma once
#define __KERNEL__ 1
#define CONFIG_64BIT 1
#define CONFIG_ARM64 1
#define CONFIG_ARM64_LSE_ATOMICS 1
#define CONFIG_ARM64_BTI_KERNEL 1
#define CONFIG_ARM64_PTR_AUTH_KERNEL 1
#define CONFIG_MITIGATE_SPECTRE_BRANCH_HISTORY 1
#define CONFIG_ARM64_SW_TTBR0_PAN 1
/* kernel/bpf/core.c: the JIT and the bpf() syscall built in, the JIT on by
 * default (Debian's choices). CONFIG_BPF_JIT_ALWAYS_ON is left out, as
 * upstream's lib/test_bpf.c and selftests configurations leave it: then
 * core.c builds its interpreter too, the other side of the comparison. */
#define CONFIG_BPF 1
#define CONFIG_BPF_JIT 1
#define CONFIG_HAVE_EBPF_JIT 1
#define CONFIG_BPF_SYSCALL 1
#define CONFIG_BPF_JIT_DEFAULT_ON 1
#include <linux/kconfig.h>
/* What this tree does where trees differ (generated: kernelsrc/CMakeLists.txt). */
#include <bpfdiff/tree_features.h>
/* bpf_jit_comp.c holds one file-scope asm() of arm64 code (dummy_tramp, the
 * PLT's default target); it cannot assemble on the host. glibc and the
 * tools headers write __asm__, so only that statement uses the bare
 * keyword. bpfdiff defines dummy_tramp itself (kernelsrc/services.c). */
#define asm(...)
