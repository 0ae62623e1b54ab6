/* lib/test_bpf.c of the tree, compiled whole and as it is: the test
 * suite the BPF JIT maintainers load as test_bpf.ko. Its tables and the
 * functions that build a case's program and data are static, so this file
 * includes the tree's and adds, after it, the accessors bpfdiff's runner
 * reads them through (file_accessors.h, bridge.h). The module is never
 * initialised: its drivers (test_bpf(), test_tail_calls()) print and time
 * rather than return what they saw, so bpfdiff's runner (harness/test_bpf)
 * runs each case as they do, on its engines, with the file's own data,
 * selection and verdict inputs. SHIMS.md, "test_bpf.c", says what is left out and why. */

/* Kbuild's definition for a module's objects (pr_fmt uses it). The file
 * is found in the tree, searched last (-idirafter). */
#define KBUILD_MODNAME "test_bpf"
#include <lib/test_bpf.c>

#include "kernelsrc/test_bpf/file_accessors.h"

const struct bpfdiff_test_bpf_file *bpfdiff_test_bpf_tree_file(void)
{
	return &file_accessors;
}
