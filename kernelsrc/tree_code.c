/* The entry points of this tree's code, in one table (bridge.h,
 * struct bpfdiff_ktree_code): what the C++ side calls, whichever tree it
 * drives. */
#include <bpfdiff/tree_origin.h> /* generated: BPFDIFF_KERNEL_TREE, _VERSION */
#include "kernelsrc/bridge.h"
#include "kernelsrc/interpreter_bridge.h"

const struct bpfdiff_ktree_code bpfdiff_this_tree = {
	.path = BPFDIFF_KERNEL_TREE,
	.version = BPFDIFF_KERNEL_VERSION,
	.tree_features = bpfdiff_kjit_get_tree_features,
	.layout = bpfdiff_kjit_get_layout,
	.run_initcalls = bpfdiff_kjit_run_initcalls,
	.verifier_answers = bpfdiff_kjit_verifier_answers,
	.compile = bpfdiff_kjit_compile,
	.blind_line_info = bpfdiff_kjit_blind_line_info,
	.release = bpfdiff_kjit_release,
	.pack_drain = bpfdiff_kjit_pack_drain,
	.fixup = bpfdiff_kjit_fixup,
	.trampoline = bpfdiff_kjit_trampoline,
	.text_poke = bpfdiff_kjit_text_poke,
	.interp_load = bpfdiff_kinterp_load,
	.interp_free = bpfdiff_kinterp_free,
	.interp_insns = bpfdiff_kinterp_insns,
	.interp_entry_for = bpfdiff_kinterp_entry_for,
	.interp_begin = bpfdiff_kinterp_begin,
	.interp_end = bpfdiff_kinterp_end,
	.interp_opcode_known = bpfdiff_kinterp_opcode_known,
	.interp_set_probe_hook = bpfdiff_kinterp_set_probe_hook,
};
