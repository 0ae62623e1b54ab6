/* What constant blinding does to a program's line info (struct
 * bpf_line_info, one entry per source line, each naming the instruction
 * the line starts at), as the kernel lays it out for a program of several
 * functions.
 *
 * The verifier's jit_subprogs() (kernel/bpf/verifier.c) gives every
 * function the whole program's line info: func[i]->aux->linfo is
 * prog->aux->linfo, with nr_linfo the program's count and linfo_idx the
 * function's first line, and insn_off counted from the program's first
 * instruction. The arch JIT then calls core.c's bpf_jit_blind_constants()
 * on each function, which patches the function's clone (it shares the
 * aux) and moves the line info with each rewrite (bpf_adj_linfo) by the
 * rewrite's offset in the function, not in the program.
 *
 * bpfdiff's compile (jit_subprogs.c) gives each function line info of its
 * own, for its localization; this file asks the tree's code what happens
 * to the verifier's layout instead (SHIMS.md, "Line info under blinding"). */
#include <linux/filter.h>

#include <stdio.h>
#include <stdlib.h>

#include "kernelsrc/bridge.h"
#include "kernelsrc/services.h"

/* One function as jit_subprogs() makes it before bpf_int_jit_compile(),
 * sharing `linfo`. */
static struct bpf_prog *function_sharing_line_info(const struct bpfdiff_kjit_program *program, uint32_t index,
						   struct bpf_line_info *linfo)
{
	struct bpf_prog *prog = bpfdiff_kjit_function_copy(program, index);

	if (!prog)
		return NULL;
	prog->aux->linfo = linfo;
	prog->aux->nr_linfo = program->length;
	prog->aux->linfo_idx = program->starts[index];
	return prog;
}

int bpfdiff_kjit_blind_line_info(const struct bpfdiff_kjit_world *world,
				 const struct bpfdiff_kjit_program *program, uint32_t *line_insn_off,
				 char *message, size_t message_size)
{
	struct bpfdiff_kjit_session session = { .world = world };
	struct bpf_line_info *linfo;
	int result = 0;
	uint32_t i;

	message[0] = '\0';
	if (program->count == 0 || program->starts[0] != 0) {
		snprintf(message, message_size, "a program starts with its main subprogram at slot 0");
		return -1;
	}
	linfo = calloc(program->length ? program->length : 1, sizeof(*linfo));
	if (!linfo) {
		snprintf(message, message_size, "out of host memory");
		return -1;
	}
	/* One line per instruction: each names itself. */
	for (i = 0; i < program->length; i++)
		linfo[i].insn_off = i;
	bpfdiff_kjit_enter(&session);
	bpf_jit_harden = world->jit_harden;
	if (setjmp(session.on_bug) != 0) {
		snprintf(message, message_size, "the kernel's code stopped: %s (%s)", session.log, session.warning);
		result = -1;
		goto out;
	}
	/* In the order jit_subprogs() compiles them; blinding is the first
	 * thing each bpf_int_jit_compile() does. */
	for (i = 0; i < program->count && result == 0; i++) {
		struct bpf_prog *prog = function_sharing_line_info(program, i, linfo);
		struct bpf_prog *blinded;

		if (!prog) {
			snprintf(message, message_size, "out of host memory");
			result = -1;
			break;
		}
		blinded = bpf_jit_blind_constants(prog);
		if (IS_ERR(blinded)) {
			snprintf(message, message_size, "bpf_jit_blind_constants() failed: %ld", PTR_ERR(blinded));
			blinded = prog;
			result = -1;
		} else if (blinded != prog) {
			/* As bpf_int_jit_compile() keeps the clone. */
			bpf_jit_prog_release_other(blinded, prog);
		}
		free(blinded->aux);
		bpfdiff_kjit_free_prog(blinded);
	}
	for (i = 0; i < program->length; i++)
		line_insn_off[i] = linfo[i].insn_off;
out:
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
	free(linfo);
	return result;
}
