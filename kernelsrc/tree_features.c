/* What the tree's files do where trees differ, as kernelsrc/CMakeLists.txt
 * probed them (bpfdiff/tree_features.h), for the C++ side. */
#include "kernelsrc/bridge.h"

struct bpfdiff_kjit_tree_features bpfdiff_kjit_get_tree_features(void)
{
	return (struct bpfdiff_kjit_tree_features){
		.prog_pack = BPFDIFF_TREE_HAS_PROG_PACK,
		.cpu_v4 = BPFDIFF_TREE_HAS_CPUV4,
		.arch_sizes_trampolines = BPFDIFF_TREE_HAS_TRAMPOLINE_SIZE,
		.trampoline_struct_args = !BPFDIFF_TREE_TRAMPOLINE_REFUSES_STRUCT_ARGS,
		.arch_jit_free = BPFDIFF_TREE_ARCH_JIT_FREE,
		.tail_call_empty_slot_uncounted = BPFDIFF_TREE_TAIL_CALL_EMPTY_SLOT_UNCOUNTED,
	};
}
