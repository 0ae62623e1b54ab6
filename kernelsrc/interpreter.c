/* What the kernel's verifier leaves of a program for core.c's interpreter,
 * and the interpreter's entry (interpreter_bridge.h).
 *
 * Without CONFIG_BPF_JIT_ALWAYS_ON, a program the JIT does not take runs on
 * ___bpf_prog_run(). The verifier prepares it for that in two steps of
 * bpf_check() (kernel/bpf/verifier.c, 6.12):
 *   - do_misc_fixups() guards divisions: the interpreter divides with C's
 *     `/` and `%`, which trap on x86 (and are undefined in C) for a divisor
 *     of 0, or -1 with the smallest dividend; so every division and modulo
 *     by a register is wrapped in a check, and a signed one by the constant
 *     -1 becomes a neg or a move of 0. Helper calls get their function's
 *     distance from __bpf_call_base in imm;
 *   - fixup_call_args() makes each bpf-to-bpf call a BPF_CALL_ARGS, whose
 *     imm selects the callee's interpreter by its stack depth.
 * The verifier's patches are written here after its own (they are not in
 * the tree's files bpfdiff reads), and so is their application, in one
 * pass (fix_up() says why); bpf_patch_call_args() is the tree's.
 *
 * Left out, with the reason: the PROBE_MEM guard against user addresses
 * (bpf_arch_uaddress_limit()): bpfdiff's guest memory lies where a kernel
 * has user space, so the guard would turn every probe load into a 0. */
#include <linux/filter.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernelsrc/interpreter_bridge.h"
#include "kernelsrc/services.h"

static int is_div_or_mod(u8 code)
{
	const u8 class = BPF_CLASS(code);

	return (class == BPF_ALU || class == BPF_ALU64) && (BPF_OP(code) == BPF_DIV || BPF_OP(code) == BPF_MOD);
}

/* The verifier's patchlet for `insn`, a division or modulo (do_misc_fixups:
 * "Make sdiv/smod divide-by-minus-one exceptions impossible" and "Make
 * divide-by-zero and divide-by-minus-one exceptions impossible"): its
 * length, 0 when the instruction is left as it is. */
static u32 division_patchlet(const struct bpf_insn *insn, struct bpf_insn *patch)
{
	const bool is64 = BPF_CLASS(insn->code) == BPF_ALU64;
	const bool isdiv = BPF_OP(insn->code) == BPF_DIV;
	const u8 alu = is64 ? BPF_ALU64 : BPF_ALU;
	const u8 jmp = is64 ? BPF_JMP : BPF_JMP32;
	const u8 dst = insn->dst_reg, src = insn->src_reg;
	u32 n = 0;

	if (BPF_SRC(insn->code) == BPF_K) {
		if (insn->off != 1 || insn->imm != -1)
			return 0;
		/* x sdiv -1 is -x (LLONG_MIN stays), x smod -1 is 0. */
		patch[n++] = isdiv ? BPF_RAW_INSN(alu | BPF_NEG | BPF_K, dst, 0, 0, 0) : BPF_MOV32_IMM(dst, 0);
		return n;
	}
	if (insn->off != 1 && isdiv) {
		/* x div 0 is 0 */
		patch[n++] = BPF_RAW_INSN(jmp | BPF_JNE | BPF_K, src, 0, 2, 0);
		patch[n++] = BPF_ALU32_REG(BPF_XOR, dst, dst);
		patch[n++] = BPF_JMP_IMM(BPF_JA, 0, 0, 1);
		patch[n++] = *insn;
		return n;
	}
	if (insn->off != 1) {
		/* x mod 0 is x (its low half, for the 32-bit form) */
		patch[n++] = BPF_RAW_INSN(jmp | BPF_JEQ | BPF_K, src, 0, 1 + (is64 ? 0 : 1), 0);
		patch[n++] = *insn;
		if (!is64) {
			patch[n++] = BPF_JMP_IMM(BPF_JA, 0, 0, 1);
			patch[n++] = BPF_MOV32_REG(dst, dst);
		}
		return n;
	}
	/* Signed: AX = src + 1 sorts the divisor into 0 (src -1), 1 (src 0)
	 * and the rest (unsigned above 1). */
	patch[n++] = BPF_MOV64_REG(BPF_REG_AX, src);
	patch[n++] = BPF_RAW_INSN(alu | BPF_ADD | BPF_K, BPF_REG_AX, 0, 0, 1);
	if (isdiv) {
		/* x sdiv 0 is 0, x sdiv -1 is -x */
		patch[n++] = BPF_RAW_INSN(jmp | BPF_JGT | BPF_K, BPF_REG_AX, 0, 4, 1);
		patch[n++] = BPF_RAW_INSN(jmp | BPF_JEQ | BPF_K, BPF_REG_AX, 0, 1, 0);
		patch[n++] = BPF_RAW_INSN(alu | BPF_MOV | BPF_K, dst, 0, 0, 0);
		patch[n++] = BPF_RAW_INSN(alu | BPF_NEG | BPF_K, dst, 0, 0, 0);
		patch[n++] = BPF_JMP_IMM(BPF_JA, 0, 0, 1);
		patch[n++] = *insn;
		return n;
	}
	/* x smod 0 is x, x smod -1 is 0 */
	patch[n++] = BPF_RAW_INSN(jmp | BPF_JGT | BPF_K, BPF_REG_AX, 0, 3, 1);
	patch[n++] = BPF_RAW_INSN(jmp | BPF_JEQ | BPF_K, BPF_REG_AX, 0, 3 + (is64 ? 0 : 1), 1);
	patch[n++] = BPF_MOV32_IMM(dst, 0);
	patch[n++] = BPF_JMP_IMM(BPF_JA, 0, 0, 1);
	patch[n++] = *insn;
	if (!is64) {
		patch[n++] = BPF_JMP_IMM(BPF_JA, 0, 0, 1);
		patch[n++] = BPF_MOV32_REG(dst, dst);
	}
	return n;
}

static int is_helper_call(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == 0;
}

static int is_pseudo_call(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_CALL;
}

/* Whether `insn` is a jump or call whose target is relative: what
 * bpf_adj_branches() moves over a patchlet. Its distance is in imm for a
 * `gotol` and a bpf-to-bpf call, in off otherwise. */
static int is_relative(const struct bpf_insn *insn, int *in_imm)
{
	const u8 class = BPF_CLASS(insn->code);
	const u8 op = BPF_OP(insn->code);

	if (class != BPF_JMP && class != BPF_JMP32)
		return 0;
	if (op == BPF_EXIT || insn->code == (BPF_JMP | BPF_TAIL_CALL))
		return 0;
	if (op == BPF_CALL) {
		*in_imm = 1;
		return insn->src_reg == BPF_PSEUDO_CALL;
	}
	*in_imm = insn->code == (BPF_JMP32 | BPF_JA);
	return 1;
}

/* do_misc_fixups()'s patchlets and helper imms, then fixup_call_args(),
 * on `insns`: the program for the interpreter, from the host heap, or
 * NULL with a message.
 *
 * The verifier applies each patchlet with bpf_patch_insn_data(), which
 * moves every jump and call over it (bpf_adj_branches(): a target after
 * the patched instruction moves with it, one at it lands on the
 * patchlet's start). One patch at a time that is quadratic in the
 * program's length: test_bpf's "all register value magnitudes" cases, a
 * division per operand pair, took a minute. They are applied here in one
 * pass, to the same result: every old instruction's new place is known
 * first, and each relative target goes to the new place of its old one. */
static struct bpf_prog *fix_up(const struct bpfdiff_kinterp_world *world, const struct bpfdiff_kjit_program *program,
			       char *message, size_t message_size)
{
	const struct bpf_insn *old = (const struct bpf_insn *)program->insns;
	const u32 old_len = program->length;
	const u64 base = (u64)(unsigned long)__bpf_call_base;
	struct bpf_insn patch[10];
	struct bpf_prog *prog = NULL;
	u32 *start = calloc(old_len + 1, sizeof(*start));
	u32 i, at = 0;

	if (!start) {
		snprintf(message, message_size, "out of host memory");
		return NULL;
	}
	for (i = 0; i < old_len; i++) {
		const u32 n = is_div_or_mod(old[i].code) ? division_patchlet(&old[i], patch) : 0;

		start[i] = at;
		at += n ? n : 1;
	}
	start[old_len] = at;
	prog = calloc(1, bpf_prog_size(at));
	if (!prog) {
		snprintf(message, message_size, "out of host memory");
		goto fail;
	}
	prog->len = at;
	for (i = 0; i < old_len; i++) {
		struct bpf_insn *insn = &prog->insnsi[start[i]];
		const u32 n = is_div_or_mod(old[i].code) ? division_patchlet(&old[i], patch) : 0;
		int in_imm = 0;
		s64 target, moved;

		if (n) {
			memcpy(insn, patch, n * sizeof(*patch)); /* its jumps stay within it */
			continue;
		}
		*insn = old[i];
		if (!is_relative(insn, &in_imm))
			continue;
		target = (s64)i + 1 + (in_imm ? insn->imm : insn->off);
		if (target < 0 || target > old_len) {
			snprintf(message, message_size, "insn %u jumps out of the program", i);
			goto fail;
		}
		moved = (s64)start[target] - start[i] - 1;
		if (in_imm) {
			insn->imm = (s32)moved;
		} else if (moved != (s16)moved) {
			/* bpf_adj_branches()' probing pass: -ERANGE */
			snprintf(message, message_size, "the verifier's patches put insn %u's target out of reach", i);
			goto fail;
		} else {
			insn->off = (s16)moved;
		}
	}
	for (i = 0; i < prog->len; i++) {
		struct bpf_insn *insn = &prog->insnsi[i];
		u64 function;
		s64 distance;

		if (is_helper_call(insn)) {
			function = world->helper_function(world->owner, insn->imm);
			if (function == 0) {
				snprintf(message, message_size, "invalid func unknown#%d", insn->imm);
				goto fail;
			}
		} else {
			if (is_pseudo_call(insn))
				bpf_patch_call_args(insn, program->stack_depth);
			continue;
		}
		distance = (s64)(function - base);
		if (distance != (s32)distance) {
			snprintf(message, message_size, "insn %u calls a function 0x%llx bytes from __bpf_call_base, beyond an imm",
				 i, (unsigned long long)distance);
			goto fail;
		}
		insn->imm = (s32)distance;
	}
	free(start);
	return prog;
fail:
	free(start);
	free(prog);
	return NULL;
}

void *bpfdiff_kinterp_load(const struct bpfdiff_kinterp_world *world, const struct bpfdiff_kjit_program *program,
			   char *message, size_t message_size)
{
	static const struct bpfdiff_kjit_world no_jit;
	struct bpfdiff_kjit_session session = { .world = &no_jit };
	struct bpf_prog *volatile prog = NULL;

	message[0] = '\0';
	bpfdiff_kjit_enter(&session);
	if (setjmp(session.on_bug) != 0) {
		snprintf(message, message_size, "the kernel's code stopped: %s (%s)", session.log, session.warning);
		free(prog);
		prog = NULL;
	} else {
		prog = fix_up(world, program, message, message_size);
	}
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
	return prog;
}

void bpfdiff_kinterp_free(void *prog) { free(prog); }

const struct bpfdiff_kjit_insn *bpfdiff_kinterp_insns(const void *prog)
{
	return (const struct bpfdiff_kjit_insn *)((const struct bpf_prog *)prog)->insnsi;
}


bpfdiff_kinterp_entry bpfdiff_kinterp_entry_for(uint32_t stack_depth)
{
	struct bpf_insn call = BPF_RAW_INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 0);

	bpf_patch_call_args(&call, stack_depth);
	return (bpfdiff_kinterp_entry)(void *)((char *)__bpf_call_base + call.imm);
}

static const struct bpfdiff_kjit_world no_jit;
static _Thread_local struct bpfdiff_kjit_session run_session;

void *bpfdiff_kinterp_begin(void)
{
	memset(&run_session, 0, sizeof(run_session));
	run_session.world = &no_jit;
	bpfdiff_kjit_enter(&run_session);
	return &run_session.on_bug;
}

void bpfdiff_kinterp_end(char *message, size_t message_size)
{
	message[0] = '\0';
	if (run_session.warned || run_session.log[0])
		snprintf(message, message_size, "the kernel's interpreter stopped: %s (%s)", run_session.log,
			 run_session.warning);
	bpfdiff_kjit_free_leftovers(&run_session);
	bpfdiff_kjit_leave();
}

int bpfdiff_kinterp_opcode_known(uint8_t code) { return bpf_opcode_in_insntable(code); }


/* bpf_probe_read_kernel_common() until an engine says otherwise: a
 * service bpfdiff does not model (core_services.c). */
int bpfdiff_kinterp_probe_unmodelled(void *dst, u32 size, const void *unsafe_ptr);
void *bpfdiff_kinterp_probe_hook = (void *)bpfdiff_kinterp_probe_unmodelled;

void bpfdiff_kinterp_set_probe_hook(void *function)
{
	bpfdiff_kinterp_probe_hook = function ? function : (void *)bpfdiff_kinterp_probe_unmodelled;
}
