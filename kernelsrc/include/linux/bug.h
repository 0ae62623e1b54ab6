#pragma once
/* A WARN or BUG in the kernel's code is a finding, not a log line or an
 * abort: bpfdiff counts it, and the compile that raised it fails with
 * where (kernelsrc/services.c). The tools headers' BUG_ON would assert. */
#include <linux/kernel.h>
#include <linux/build_bug.h>
void bpfdiff_kernel_warn(const char *file, int line);
/* BUG() stops the kernel thread: here it leaves the kernel code for the
 * bpfdiff call that entered it, which fails with where. */
__attribute__((noreturn)) void bpfdiff_kernel_bug(const char *file, int line);
#undef BUG_ON
#undef BUG
#define WARN_ON(condition) ({ int __ret = !!(condition); if (__ret) bpfdiff_kernel_warn(__FILE__, __LINE__); __ret; })
#define WARN_ON_ONCE(condition) WARN_ON(condition)
#define BUG() bpfdiff_kernel_bug(__FILE__, __LINE__)
#define BUG_ON(condition) do { if (condition) BUG(); } while (0)
