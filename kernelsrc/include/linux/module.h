#pragma once
/* lib/test_bpf.c is a module. bpfdiff never loads it: its parameters are
 * plain variables (kernelsrc/test_bpf/file.c sets them for a selection), and
 * its init and exit functions stay referenced, never called. */
#include <linux/kernel.h>
#define module_param(name, type, perm)
#define module_param_string(name, string, len, perm)
#define module_param_array(name, type, nump, perm)
#define MODULE_PARM_DESC(name, text)
#define MODULE_DESCRIPTION(text)
#define MODULE_LICENSE(text)
#define module_init(fn) late_initcall(fn)
#define module_exit(fn) static void (*const bpfdiff_exitcall_##fn)(void) __attribute__((unused)) = fn
