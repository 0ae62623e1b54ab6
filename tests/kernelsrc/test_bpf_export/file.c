/* The export check's lib/test_bpf.c: a copy of the tree's with the entries
 * `bpfdiff export --format test-bpf` wrote for bpfdiff's vectors added to
 * tests[] and tail_call_tests[] (splice.cmake), compiled as file.c
 * compiles the tree's, and read through accessors of its own. */

#define KBUILD_MODNAME "test_bpf"
/* The copy defines the helper the tree's file does (BPF_CALL_1 makes it
 * global), and both are linked into the check. */
#define bpf_test_func bpfdiff_export_copy_bpf_test_func
#include <lib/test_bpf.c>

#include "kernelsrc/test_bpf/file_accessors.h"

const struct bpfdiff_test_bpf_file *bpfdiff_test_bpf_exported_file(void);

const struct bpfdiff_test_bpf_file *bpfdiff_test_bpf_exported_file(void)
{
	return &file_accessors;
}
