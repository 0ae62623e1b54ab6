#pragma once
/* The kernel's messages go to the compile that is running: a refusal
 * reaches bpfdiff with the JIT's own words (kernelsrc/services.c). */
#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif
__attribute__((format(printf, 1, 2))) void bpfdiff_kernel_log(const char *fmt, ...);
#define pr_err(fmt, ...) bpfdiff_kernel_log(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...) bpfdiff_kernel_log(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_info(fmt, ...) bpfdiff_kernel_log(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_debug(fmt, ...) bpfdiff_kernel_log(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_err_once(fmt, ...) pr_err(fmt, ##__VA_ARGS__)
#define pr_info_once(fmt, ...) pr_info(fmt, ##__VA_ARGS__)
#define pr_warn_once(fmt, ...) pr_warn(fmt, ##__VA_ARGS__)
/* A message's continuation: lib/test_bpf.c builds each case's line with it. */
#define pr_cont(fmt, ...) bpfdiff_kernel_log(fmt, ##__VA_ARGS__)
