/* The C interface between kernel/bpf/core.c's interpreter, compiled from a
 * Linux tree (interpreter.c), and bpfdiff's C++ (kernel_interpreter.cc).
 * Plain C types only, as bridge.h. */
#ifndef BPFDIFF_KERNELSRC_INTERPRETER_BRIDGE_H
#define BPFDIFF_KERNELSRC_INTERPRETER_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "kernelsrc/bridge.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the verifier's fixups for the interpreter need of bpfdiff's world:
 * the host function each helper call reaches (fn->func of the helper's
 * proto), or 0 for an id bpfdiff has no helper for. */
struct bpfdiff_kinterp_world {
	void *owner;
	uint64_t (*helper_function)(void *owner, int32_t id);
};

/* Loads `program` (subprograms at program->starts, each with
 * program->stack_depth bytes of BPF stack) as the verifier leaves it for
 * core.c's interpreter: do_misc_fixups() guards every division and modulo
 * by a register against 0 and -1, and signed ones by the constant -1
 * (each jump moved over the patchlets as bpf_adj_branches() moves it);
 * each helper call's imm becomes
 * the helper's distance from __bpf_call_base; and fixup_call_args() makes
 * every `call pc-relative` a BPF_CALL_ARGS through the tree's
 * bpf_patch_call_args(). Returns a struct bpf_prog (its insnsi and len set,
 * nothing else) from the host heap, which bpfdiff_kinterp_free() frees, or
 * NULL with a message. */
void *bpfdiff_kinterp_load(const struct bpfdiff_kinterp_world *world, const struct bpfdiff_kjit_program *program,
			   char *message, size_t message_size);
void bpfdiff_kinterp_free(void *prog);
/* The instructions of a loaded program. */
const struct bpfdiff_kjit_insn *bpfdiff_kinterp_insns(const void *prog);

/* The tree's interpreter of a function with `stack_depth` bytes of BPF
 * stack, entered with r1..r5 set and r0 returned whole:
 * __bpf_prog_run_args<depth>, what a BPF_CALL_ARGS calls (core.c's
 * interpreters_args[], read through bpf_patch_call_args()). */
/* (bpfdiff_kinterp_entry is bridge.h's.) */
bpfdiff_kinterp_entry bpfdiff_kinterp_entry_for(uint32_t stack_depth);

/* A run of the interpreter is a session of the kernel's code, as a
 * compile is (services.h): BUG() in it longjmps to the jmp_buf that begin
 * returns, which the caller setjmp()s in a frame that outlives the run.
 * end leaves the session, and writes what the kernel's code said when it
 * stopped ("" when it did not). One run at a time per thread. */
void *bpfdiff_kinterp_begin(void);
void bpfdiff_kinterp_end(char *message, size_t message_size);

/* Whether core.c's bpf_opcode_in_insntable() knows `code` (what the
 * verifier's resolve_pseudo_ldimm64() accepts at all). */
int bpfdiff_kinterp_opcode_known(uint8_t code);

/* Where bpf_probe_read_kernel_common() goes: core_services.c's is one
 * jump through this pointer, so that the interpreter's stack gets no frame
 * of it (the engine's function leaves that stack at once). NULL: the trap
 * of a service bpfdiff does not model, as before any engine sets it. */
void bpfdiff_kinterp_set_probe_hook(void *function);

#ifdef __cplusplus
}
#endif

#endif
