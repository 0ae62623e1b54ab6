// SPDX-License-Identifier: GPL-2.0-only
/* The questions kernel/bpf/verifier.c asks the arch JIT before it runs
 * it, put to the tree's own answers (bpf_jit_comp.c's bpf_jit_supports_*()
 * and bpf_jit_inlines_helper_call()): bpfdiff has no verifier, and these
 * answers are what a tree's verifier would do with a program differently
 * from another tree's (a JIT without per-CPU moves, an inlined helper
 * more). bridge.h, bpfdiff_kjit_verifier_answers. */
#include <linux/bpf.h>
#include <linux/filter.h>

#include "kernelsrc/bridge.h"
#include "kernelsrc/services.h"

/* Questions a tree's verifier does not ask (6.1 asks only the first two):
 * the answer is the one core.c's __weak default gives where it does. */
#define BPFDIFF_NOT_ASKED(decl) __attribute__((weak)) decl { return false; }
BPFDIFF_NOT_ASKED(bool bpf_jit_supports_ptr_xchg(void))
BPFDIFF_NOT_ASKED(bool bpf_jit_supports_percpu_insn(void))
BPFDIFF_NOT_ASKED(bool bpf_jit_supports_exceptions(void))
BPFDIFF_NOT_ASKED(bool bpf_jit_supports_arena(void))
BPFDIFF_NOT_ASKED(bool bpf_jit_bypass_spec_v4(void))
BPFDIFF_NOT_ASKED(bool bpf_jit_inlines_helper_call(s32 imm))
__attribute__((weak)) bool bpf_jit_supports_insn(struct bpf_insn *insn, bool in_arena)
{
	(void)insn;
	return !in_arena;
}

void bpfdiff_kjit_verifier_answers(const struct bpfdiff_kjit_world *world,
				   struct bpfdiff_kjit_answers *answers)
{
	/* The answers may depend on the CPU's features (cpus_have_cap: LSE
	 * atomics for arena atomics), which are the world's. */
	struct bpfdiff_kjit_session session = { .world = world };
	struct bpf_insn atomic_w = { .code = BPF_STX | BPF_ATOMIC | BPF_W };
	struct bpf_insn atomic_dw = { .code = BPF_STX | BPF_ATOMIC | BPF_DW };
	int32_t id;

	memset(answers, 0, sizeof(*answers));
	bpfdiff_kjit_enter(&session);
	answers->kfunc_call = bpf_jit_supports_kfunc_call();
	answers->subprog_tailcalls = bpf_jit_supports_subprog_tailcalls();
	answers->ptr_xchg = bpf_jit_supports_ptr_xchg();
	answers->percpu_insn = bpf_jit_supports_percpu_insn();
	answers->exceptions = bpf_jit_supports_exceptions();
	answers->arena = bpf_jit_supports_arena();
	answers->arena_atomics = bpf_jit_supports_insn(&atomic_w, true) &&
				 bpf_jit_supports_insn(&atomic_dw, true);
	answers->bypass_spec_v4 = bpf_jit_bypass_spec_v4();
	/* Every helper id the uapi header knows: the verifier asks for the
	 * id of each call it keeps (do_misc_fixups). */
	for (id = 0; id < __BPF_FUNC_MAX_ID; id++) {
		if (!bpf_jit_inlines_helper_call(id))
			continue;
		/* Counted past the array too, so that the caller can refuse a
		 * tree that inlines more helpers than it can be told. */
		if (answers->inlined_count < BPFDIFF_KJIT_MAX_INLINED)
			answers->inlined[answers->inlined_count] = id;
		answers->inlined_count++;
	}
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
}
