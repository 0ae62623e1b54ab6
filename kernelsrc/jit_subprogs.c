/* The sequence in which the kernel's verifier (jit_subprogs() and
 * fixup_call_args() in kernel/bpf/verifier.c) drives the arch JIT, for a
 * program bpfdiff has loaded:
 *   - every `call pc-relative` gets the callee's subprogram index in off
 *     (and imm 1, "__bpf_call_base + 1"), before the program is split;
 *   - every subprogram becomes a bpf_prog of its own, with its exception-
 *     table entries counted (one per PROBE_MEM load) and its stack depth;
 *   - each is compiled once; with more than one, each is compiled again
 *     (the extra pass), now that bpf_jit_get_func_addr() knows where every
 *     callee is, and it must stay where it was.
 * A program of one subprogram is compiled once, as bpf_prog_select_runtime
 * does. */
#include <linux/filter.h>

#include <stdio.h>
#include <stdlib.h>

#include "kernelsrc/services.h"

static int is_pseudo_call(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_CALL;
}

/* A load the verifier marks as allowed to fault (BPF_PROBE_MEM*): each
 * gets an exception-table entry. bpfdiff has no arena, so no
 * PROBE_MEM32 stores or PROBE_ATOMIC. */
static int is_probe_load(const struct bpf_insn *insn)
{
	const u8 mode = BPF_MODE(insn->code);

	return BPF_CLASS(insn->code) == BPF_LDX &&
	       (mode == BPF_PROBE_MEM || mode == BPF_PROBE_MEMSX || mode == BPF_PROBE_MEM32);
}

static uint32_t subprogram_of(const struct bpfdiff_kjit_program *program, int64_t slot)
{
	uint32_t i = 0;

	while (i + 1 < program->count && (int64_t)program->starts[i + 1] <= slot)
		i++;
	return i;
}

static uint32_t end_of(const struct bpfdiff_kjit_program *program, uint32_t i)
{
	return i + 1 < program->count ? program->starts[i + 1] : program->length;
}

static struct bpf_prog *make_function(const struct bpfdiff_kjit_program *program, uint32_t index,
				      struct bpf_prog **all, uint32_t *offsets)
{
	const uint32_t first = program->starts[index];
	const uint32_t length = end_of(program, index) - first;
	struct bpf_prog *prog = calloc(1, sizeof(*prog) + length * sizeof(struct bpf_insn));
	struct bpf_prog_aux *aux = calloc(1, sizeof(*aux));
	uint32_t i;

	if (!prog || !aux) {
		free(prog);
		free(aux);
		return NULL;
	}
	memcpy(prog->insnsi, program->insns + first, length * sizeof(struct bpf_insn));
	prog->len = length;
	prog->jit_requested = 1;
	prog->is_func = program->count > 1;
	prog->aux = aux;
	aux->func_idx = index;
	aux->stack_depth = program->stack_depth;
	aux->bpfdiff_offsets = offsets;
	if (program->count > 1) {
		aux->func = all;
		aux->func_cnt = program->count;
	}
	for (i = 0; i < length; i++) {
		struct bpf_insn *insn = &prog->insnsi[i];

		if (is_probe_load(insn))
			aux->num_exentries++;
		if (is_pseudo_call(insn)) {
			insn->off = (s16)subprogram_of(program, (int64_t)first + i + insn->imm + 1);
			insn->imm = 1;
		}
	}
	return prog;
}

static void free_functions(struct bpf_prog **functions, uint32_t count)
{
	uint32_t i;

	for (i = 0; i < count; i++) {
		if (functions[i])
			free(functions[i]->aux);
		free(functions[i]);
	}
	free(functions);
}

static void fail(struct bpfdiff_kjit_session *session, char *message, size_t size,
		 const char *what, uint32_t index, uint32_t count)
{
	char where[32] = "";

	if (count > 1)
		snprintf(where, sizeof(where), "subprogram %u: ", index);
	if (session->warned && session->log[0])
		snprintf(message, size, "%s%s (the kernel warned at %s: %s)", where, what,
			 session->warning, session->log);
	else if (session->warned)
		snprintf(message, size, "%s%s (the kernel warned at %s)", where, what, session->warning);
	else if (session->log[0])
		snprintf(message, size, "%s%s: %s", where, what, session->log);
	else
		snprintf(message, size, "%s%s", where, what);
}

static int compile_functions(struct bpfdiff_kjit_session *session,
			     const struct bpfdiff_kjit_program *program, struct bpf_prog **functions,
			     char *message, size_t message_size)
{
	const uint32_t count = program->count;
	uint32_t i;

	for (i = 0; i < count; i++) {
		struct bpf_prog *prog = bpf_int_jit_compile(functions[i]);

		if (prog != functions[i] || !prog->jited || session->warned) {
			fail(session, message, message_size, "the kernel's JIT refused the program", i,
			     count);
			return -1;
		}
	}
	if (count == 1)
		return 0;
	for (i = 0; i < count; i++) {
		void *before = functions[i]->bpf_func;
		struct bpf_prog *prog = bpf_int_jit_compile(functions[i]);

		if (prog != functions[i] || functions[i]->bpf_func != before || session->warned) {
			fail(session, message, message_size,
			     "the kernel's JIT failed the extra pass (\"JIT doesn't support bpf-to-bpf calls\")",
			     i, count);
			return -1;
		}
	}
	return 0;
}

int bpfdiff_kjit_compile(const struct bpfdiff_kjit_world *world,
			 const struct bpfdiff_kjit_program *program,
			 struct bpfdiff_kjit_image *images, char *message, size_t message_size)
{
	struct bpfdiff_kjit_session session = { .world = world };
	struct bpf_prog **functions;
	volatile int result = -1;
	uint32_t i;

	message[0] = '\0';
	if (program->count == 0 || program->starts[0] != 0) {
		snprintf(message, message_size, "a program starts with its main subprogram at slot 0");
		return -1;
	}
	functions = calloc(program->count, sizeof(*functions));
	session.slots = calloc(program->count, sizeof(*session.slots));
	session.slot_capacity = program->count;
	if (!functions || !session.slots) {
		free(functions);
		free(session.slots);
		snprintf(message, message_size, "out of host memory");
		return -1;
	}
	for (i = 0; i < program->count; i++) {
		functions[i] = make_function(program, i, functions, images[i].offsets);
		if (!functions[i]) {
			free_functions(functions, program->count);
			free(session.slots);
			snprintf(message, message_size, "out of host memory");
			return -1;
		}
	}

	bpfdiff_kjit_enter(&session);
	if (setjmp(session.on_bug) == 0) {
		result = compile_functions(&session, program, functions, message, message_size);
	} else {
		fail(&session, message, message_size, "the kernel's code hit BUG()", 0, 1);
	}
	if (result == 0) {
		for (i = 0; i < program->count; i++) {
			const struct bpf_prog *prog = functions[i];

			images[i].rx_image = (uint64_t)(uintptr_t)prog->bpf_func;
			images[i].jited_bytes = prog->jited_len;
			images[i].rx_extable = (uint64_t)(uintptr_t)prog->aux->extable;
			images[i].extable_entries = prog->aux->num_exentries;
		}
	} else {
		/* As the verifier's out_free: what was allocated goes. */
		for (i = 0; i < session.slot_count; i++)
			world->pack_free(world->owner, session.slots[i].rx_header);
		session.slot_count = 0;
	}
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
	free_functions(functions, program->count);
	free(session.slots);
	return result;
}

uint64_t bpfdiff_kjit_fixup(const uint8_t entry[12], uint64_t entry_address, int *cleared_register)
{
	/* ex_handler_bpf() uses the entry's address only to compute with:
	 * run it on a host copy, then move its answer to the guest address. */
	struct exception_table_entry copy;
	struct pt_regs regs;
	int i;

	memcpy(&copy, entry, sizeof(copy));
	for (i = 0; i < 31; i++)
		regs.regs[i] = 1;
	regs.pc = 0;
	ex_handler_bpf(&copy, &regs);
	*cleared_register = -1;
	for (i = 0; i < 31; i++) {
		if (regs.regs[i] == 0)
			*cleared_register = i;
	}
	return regs.pc - (uint64_t)(uintptr_t)&copy + entry_address;
}
