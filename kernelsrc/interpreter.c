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
 * the tree's files bpfdiff reads); the patching itself is the tree's
 * bpf_patch_insn_single(), which moves every jump and call over the
 * patchlet as it does for the verifier.
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

/* do_misc_fixups() and fixup_call_args() on `prog`, in that order. Returns
 * the program (bpf_patch_insn_single() may move it), or NULL with a
 * message. */
static struct bpf_prog *fix_up(const struct bpfdiff_kinterp_world *world, struct bpf_prog *prog,
			       u32 stack_depth, char *message, size_t message_size)
{
	const u64 base = (u64)(unsigned long)__bpf_call_base;
	u32 i;

	for (i = 0; i < prog->len; i++) {
		struct bpf_insn *insn = &prog->insnsi[i];
		struct bpf_insn patch[10];
		u32 n;

		if (is_div_or_mod(insn->code) && (n = division_patchlet(insn, patch)) != 0) {
			struct bpf_prog *patched = bpf_patch_insn_single(prog, i, patch, n);

			if (IS_ERR_OR_NULL(patched)) {
				snprintf(message, message_size, "bpf_patch_insn_single() failed at insn %u: %ld", i,
					 IS_ERR(patched) ? PTR_ERR(patched) : -ENOMEM);
				return NULL;
			}
			prog = patched;
			i += n - 1; /* past the patchlet, which holds the original */
			continue;
		}
		if (is_helper_call(insn)) {
			const u64 function = world->helper_function(world->owner, insn->imm);
			const s64 distance = (s64)(function - base);

			if (function == 0) {
				snprintf(message, message_size, "invalid func unknown#%d", insn->imm);
				return NULL;
			}
			if (distance != (s32)distance) {
				snprintf(message, message_size,
					 "helper %d lies 0x%llx bytes from __bpf_call_base, beyond an imm",
					 insn->imm, (unsigned long long)distance);
				return NULL;
			}
			insn->imm = (s32)distance;
		}
	}
	for (i = 0; i < prog->len; i++) {
		struct bpf_insn *insn = &prog->insnsi[i];
		s64 distance;

		if (!is_pseudo_call(insn))
			continue;
		bpf_patch_call_args(insn, stack_depth);
		if (!world->call_args_function)
			continue;
		distance = (s64)(world->call_args_function - base);
		if (distance != (s32)distance) {
			snprintf(message, message_size, "the call of a bpf-to-bpf callee lies beyond an imm");
			return NULL;
		}
		insn->imm = (s32)distance;
	}
	return prog;
}

void *bpfdiff_kinterp_load(const struct bpfdiff_kinterp_world *world, const struct bpfdiff_kjit_program *program,
			   char *message, size_t message_size)
{
	static const struct bpfdiff_kjit_world no_jit;
	struct bpfdiff_kjit_session session = { .world = &no_jit };
	struct bpf_prog *volatile prog = NULL;
	struct bpf_prog *fixed;
	struct bpf_prog *copy = NULL;

	message[0] = '\0';
	bpfdiff_kjit_enter(&session);
	if (setjmp(session.on_bug) != 0) {
		snprintf(message, message_size, "the kernel's code stopped: %s (%s)", session.log, session.warning);
		goto out;
	}
	prog = bpfdiff_kjit_alloc_prog(program->length);
	if (!prog) {
		snprintf(message, message_size, "out of host memory");
		goto out;
	}
	prog->aux = calloc(1, sizeof(*prog->aux));
	if (!prog->aux) {
		snprintf(message, message_size, "out of host memory");
		goto out;
	}
	prog->aux->prog = prog;
	prog->len = program->length;
	memcpy(prog->insnsi, program->insns, program->length * sizeof(struct bpf_insn));
	fixed = fix_up(world, prog, program->stack_depth, message, message_size);
	if (!fixed)
		goto out;
	prog = fixed;
	copy = calloc(1, bpf_prog_size(prog->len));
	if (!copy) {
		snprintf(message, message_size, "out of host memory");
		goto out;
	}
	copy->len = prog->len;
	memcpy(copy->insnsi, prog->insnsi, prog->len * sizeof(struct bpf_insn));
out:
	if (prog)
		free(prog->aux);
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
	return copy;
}

void bpfdiff_kinterp_free(void *prog) { free(prog); }

const struct bpfdiff_kjit_insn *bpfdiff_kinterp_insns(const void *prog)
{
	return (const struct bpfdiff_kjit_insn *)((const struct bpf_prog *)prog)->insnsi;
}

uint32_t bpfdiff_kinterp_length(const void *prog) { return ((const struct bpf_prog *)prog)->len; }

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

uint64_t bpfdiff_kinterp_call_base(void) { return (uint64_t)(unsigned long)__bpf_call_base; }

/* bpf_probe_read_kernel_common() until an engine says otherwise: a
 * service bpfdiff does not model (core_services.c). */
int bpfdiff_kinterp_probe_unmodelled(void *dst, u32 size, const void *unsafe_ptr);
void *bpfdiff_kinterp_probe_hook = (void *)bpfdiff_kinterp_probe_unmodelled;

void bpfdiff_kinterp_set_probe_hook(void *function)
{
	bpfdiff_kinterp_probe_hook = function ? function : (void *)bpfdiff_kinterp_probe_unmodelled;
}
