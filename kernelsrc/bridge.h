/* The C interface between the kernel's JIT, compiled from a Linux tree
 * under our shims (jit_subprogs.c, services.c), and bpfdiff's C++
 * (kernel_jit.cc). Plain C types only: the kernel's headers stay on the C
 * side, bpfdiff's on the C++ side. */
#ifndef BPFDIFF_KERNELSRC_BRIDGE_H
#define BPFDIFF_KERNELSRC_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* struct bpf_insn, as laid out in the uapi header. */
struct bpfdiff_kjit_insn {
	uint8_t code;
	uint8_t regs; /* dst in bits 0..3, src in bits 4..7 */
	int16_t off;
	int32_t imm;
};

/* What the kernel's services are in bpfdiff's world. Every address is a
 * guest address. */
struct bpfdiff_kjit_world {
	void *owner;
	/* bpf_jit_binary_pack_alloc: a slot for an image of `image_bytes`
	 * starting `alignment`-aligned, from bpfdiff's prog pack. Returns 0,
	 * or -1 with the pack's reason kept by the owner. */
	int (*pack_alloc)(void *owner, uint32_t image_bytes, uint32_t alignment, uint64_t *rx_header,
			  uint64_t *rx_image, uint8_t **rw_header, uint8_t **rw_image);
	/* bpf_jit_binary_pack_finalize: RW -> RX, flush, free the RW buffer. */
	void (*pack_finalize)(void *owner, uint64_t rx_header);
	/* bpf_jit_binary_pack_free, also of an unfinalized slot. */
	void (*pack_free)(void *owner, uint64_t rx_header);
	/* With kernel_pack set, none of the three above is called: the JIT's
	 * bpf_jit_binary_pack_*() and bpf_prog_pack_*() are kernel/bpf/core.c's
	 * own, and bpfdiff supplies only what lies below them:
	 *   exec_map      execmem_alloc(EXECMEM_BPF, bytes): a guest range,
	 *                 readable and writable at its guest address in this
	 *                 process (core.c fills a new pack there); 0 for none.
	 *   exec_unmap    execmem_free of such a range.
	 *   exec_protect  set_memory_rox: the range becomes text. 0, or -1.
	 * and is told what core.c hands out and takes back, to check it from
	 * outside:
	 *   slot_adopted    a slot of slot_bytes at rx_header, its image
	 *                   (image_bytes) at rx_image;
	 *   slot_finalized  the image, as the RW buffer holds it when
	 *                   bpf_jit_binary_pack_finalize() is called;
	 *   slot_released   the slot is being freed (told before core.c's
	 *                   free runs, which may unmap its pack).
	 * A problem (a slot outside the ranges mapped, overlapping another,
	 * a range unmapped while slots lie in it) is kept by the owner. */
	int kernel_pack;
	uint64_t (*exec_map)(void *owner, uint64_t bytes);
	void (*exec_unmap)(void *owner, uint64_t address);
	int (*exec_protect)(void *owner, uint64_t address, uint64_t bytes);
	void (*slot_adopted)(void *owner, uint64_t rx_header, uint64_t slot_bytes, uint64_t rx_image,
			     uint32_t image_bytes);
	void (*slot_finalized)(void *owner, uint64_t rx_header, const uint8_t *rw_image, uint32_t image_bytes);
	void (*slot_released)(void *owner, uint64_t rx_header);
	/* aarch64_insn_copy and aarch64_insn_set: writes to RX memory. */
	void (*text_copy)(void *owner, uint64_t rx, const void *bytes, size_t length);
	void (*text_set)(void *owner, uint64_t rx, uint32_t word, size_t length);
	/* flush_icache_range */
	void (*flush_icache)(void *owner, uint64_t begin, uint64_t end);
	/* aarch64_insn_read: the word at RX address `rx`. Returns 0, or -1
	 * when no text is there. */
	int (*text_read)(void *owner, uint64_t rx, uint32_t *word);
	/* Where helper `id` lives (what the verifier's fixup and
	 * bpf_jit_get_func_addr make of a helper's imm). */
	uint64_t (*helper_address)(void *owner, int32_t id);
	/* Where a call of kfunc `id` (bpfdiff's numbering) goes: the address
	 * the verifier's fixup_kfunc_call() puts in its imm. */
	uint64_t (*kfunc_address)(void *owner, int32_t id);
	/* The guest's stand-in for the kernel symbol dummy_tramp, the default
	 * target of every image's PLT. */
	uint64_t dummy_tramp;
	/* cpus_have_cap(ARM64_HAS_LSE_ATOMICS) */
	int lse_atomics;
	/* The arena's kernel and user mappings (bpf_arena_get_kern_vm_start,
	 * bpf_arena_get_user_vm_start) for a program that uses it. */
	uint64_t arena_kern_vm_start;
	uint64_t arena_user_vm_start;
	/* Who loads the program and what its CPU needs (kernel_loader.h),
	 * as build_bhb_mitigation() asks: ns_capable_noaudit(CAP_SYS_ADMIN),
	 * cpu_mitigations_off(), arm64_get_spectre_v2_state() ==
	 * SPECTRE_VULNERABLE, supports_clearbhb(), get_spectre_bhb_loop_value(),
	 * is_spectre_bhb_fw_mitigated() and arm_smccc_1_1_get_conduit()
	 * (0 none, 1 SMC, 2 HVC: enum arm_smccc_conduit). */
	int capable;
	int mitigations_off;
	int spectre_v2_vulnerable;
	int clearbhb;
	uint8_t bhb_loop_k;
	int bhb_firmware;
	int smccc_conduit;
	/* cpus_have_cap(ARM64_HAS_VIRT_HOST_EXTN): the kernel runs at EL2
	 * (VHE) and keeps the per-CPU offset in TPIDR_EL2. */
	int vhe;
	/* core.c's bpf_jit_harden (kernel_loader.h), and the seed of
	 * get_random_u32() for the compile: the constants blinding draws. */
	int jit_harden;
	uint64_t random_seed;
	/* A planted bug (kernel_jit.h, ShimBugs): a text poke not flushed. */
	int poke_without_flush;
	/* Failure injection: the fail_call-th call (from 1) of a service
	 * whose failure the kernel's JIT checks fails as it would in the
	 * kernel: kzalloc, kcalloc, kvcalloc, kvmalloc (NULL, as under
	 * memory pressure or failslab), bpf_jit_binary_pack_alloc (NULL, as
	 * past bpf_jit_limit), bpf_prog_pack_alloc (a trampoline's slot: NULL
	 * when no new pack can be had; with kernel_pack, core.c's pack asks
	 * execmem_alloc for a new pack, and that fails instead), and
	 * bpf_jit_get_func_addr of a
	 * subprogram in the extra pass (-EINVAL: the one way to fail an extra
	 * pass). 0: none fails. */
	uint32_t fail_call;
};

/* A program as the verifier leaves it for the JIT, before jit_subprogs()
 * splits it: subprogram i starts at starts[i] (starts[0] == 0), calls to
 * subprograms are `call pc-relative`, and every subprogram gets
 * `stack_depth` bytes of BPF stack. */
struct bpfdiff_kjit_program {
	const struct bpfdiff_kjit_insn *insns;
	uint32_t length;
	const uint32_t *starts;
	uint32_t count;
	uint32_t stack_depth;
	/* Converted from classic BPF (bpf_prog_was_classic(): the program's
	 * type is BPF_PROG_TYPE_UNSPEC). */
	int classic;
	/* The subprogram that is the program's exception callback, or 0: a
	 * program that calls bpf_throw has one. */
	uint32_t exception_callback;
	/* The program calls bpf_throw (the verifier's seen_exception): its
	 * main function is the exception boundary. */
	int throws;
};

/* What the JIT made of one subprogram. `offsets` (length + 1 entries,
 * provided by the caller) receives ctx->offset in bytes: the start of
 * each instruction's code, and at [length] the end of the body. */
struct bpfdiff_kjit_image {
	uint64_t rx_image;
	uint32_t jited_bytes; /* prologue, body, epilogue and the PLT */
	uint64_t rx_extable;
	uint32_t extable_entries;
	uint32_t *offsets;
};

/* What a compile's error paths did, beyond its answer. */
struct bpfdiff_kjit_error_path {
	/* The service made to fail (world->fail_call), or "" when the
	 * compile made fewer failable calls. */
	char injected[40];
	uint32_t failable_calls; /* the failable calls the compile made */
	/* A promise the kernel's code broke on the path it took, or "":
	 * a failed compile that, after bpf_jit_free() of every function as
	 * the verifier and bpf_prog_free() do, still holds heap blocks or
	 * pack slots or frees a slot twice; or a compile the verifier takes
	 * as JITed whose image is not allocated and finalized. `breach_kind`
	 * names its shape (KnownErrorPathBreaches in kernel_jit.h). */
	char breach[384];
	char breach_kind[48];
};

/* Runs the kernel's JIT over `program` as the verifier's jit_subprogs()
 * does: one bpf_int_jit_compile() per subprogram, then, for more than one,
 * the calls resolved and an extra pass each; on failure, bpf_jit_free() of
 * every function, as the verifier's out_free does. `images` has one entry
 * per subprogram. Returns 0, or -1 with a message (the kernel's own, where
 * it gave one) in `message`; what the error paths did goes to `path`
 * (which may be NULL). Whatever the kernel's code leaves, no slot stays
 * allocated and no heap block held once it returns. One compile at a time
 * per thread. */
int bpfdiff_kjit_compile(const struct bpfdiff_kjit_world *world,
			 const struct bpfdiff_kjit_program *program,
			 struct bpfdiff_kjit_image *images, char *message, size_t message_size,
			 struct bpfdiff_kjit_error_path *path);

/* What the tree's constant blinding does to the line info of `program`
 * laid out as the verifier's jit_subprogs() lays it out: one array for the
 * whole program, shared by every function (line_info.c). The program has
 * one line per instruction, line i at instruction i; each function goes
 * through bpf_jit_blind_constants() under world->jit_harden, in order.
 * Fills line_insn_off (program->length entries: where each line says it
 * starts afterwards). Returns 0, or -1 with a message. */
int bpfdiff_kjit_blind_line_info(const struct bpfdiff_kjit_world *world,
				 const struct bpfdiff_kjit_program *program, uint32_t *line_insn_off,
				 char *message, size_t message_size);

/* The free of a program the JIT compiled, as bpf_prog_free_deferred()
 * makes it: the kernel's bpf_jit_free() of each function, whose image
 * images[i] lies in the finalized slot at headers[i] (image_bytes[i]
 * long). Returns 0, or -1 with a message when the kernel's code freed
 * another slot than its own, a slot twice, or left one (then freed here,
 * so that nothing stays allocated). */
int bpfdiff_kjit_release(const struct bpfdiff_kjit_world *world, const uint64_t *images,
			 const uint64_t *headers, const uint32_t *image_bytes, const uint32_t *slot_bytes,
			 uint32_t count, char *message, size_t message_size);

/* With world->kernel_pack: frees `count` slots of core.c's pack (slot i
 * at rx_headers[i], slot_bytes[i] long) through bpf_prog_pack_free(), as
 * what owned them would, so that core.c's packs (one list per process)
 * hold nothing of a world about to go. */
void bpfdiff_kjit_pack_drain(const struct bpfdiff_kjit_world *world, const uint64_t *rx_headers,
			     const uint32_t *slot_bytes, uint32_t count);

/* Runs the pure_initcall()s of the files compiled from the tree, once per
 * process (core.c's bpf_jit_charge_init sets bpf_jit_limit), and returns
 * core.c's bpf_jit_limit afterwards: 0 means they did not run. */
long bpfdiff_kjit_run_initcalls(void);

/* ex_handler_bpf, the kernel's fixup of a faulting PROBE_MEM load, applied
 * to the entry at guest address `entry_address` whose 12 bytes are
 * `entry`: returns the pc to resume at and, in *cleared_register, the
 * register it zeroes (-1 for none). */
uint64_t bpfdiff_kjit_fixup(const uint8_t entry[12], uint64_t entry_address,
			    int *cleared_register);

/* One program a trampoline runs (struct bpf_tramp_link), compiled by the
 * kernel's JIT, and what the guest's __bpf_prog_enter*() and
 * __bpf_prog_exit*() for it are (bpf_trampoline_enter/exit). */
struct bpfdiff_kjit_tramp_link {
	uint64_t rx_image; /* its bpf_func */
	uint64_t cookie;
	uint64_t enter;
	uint64_t exit;
};

/* What bpf_trampoline_update() asks arch_prepare_bpf_trampoline() for.
 * links[k] holds counts[k] links of kind k, in BPF_TRAMP_FENTRY,
 * BPF_TRAMP_FEXIT, BPF_TRAMP_MODIFY_RETURN order. */
struct bpfdiff_kjit_tramp_request {
	const struct bpfdiff_kjit_tramp_link *links[3];
	uint32_t counts[3];
	uint8_t nr_args;    /* btf_func_model.nr_args */
	/* Bit i: argument i is a struct of 16 bytes passed by value
	 * (arg_size 16, BTF_FMODEL_STRUCT_ARG); the others are 8 bytes. */
	uint8_t struct_args;
	uint32_t flags;     /* BPF_TRAMP_F_* */
	/* The one fentry link is a struct_ops program's
	 * (BPF_LINK_TYPE_STRUCT_OPS, as bpf_struct_ops_prepare_trampoline
	 * gives it): the trampoline is called through a pointer. */
	int struct_ops;
	uint64_t func_addr; /* the traced function's entry */
	/* The guest's __bpf_tramp_enter and __bpf_tramp_exit. */
	uint64_t tramp_enter;
	uint64_t tramp_exit;
};

/* A trampoline in the pack: its RX image (bpf_prog_pack_alloc's), the
 * bytes allocated (arch_bpf_trampoline_size) and the bytes of code
 * (arch_prepare_bpf_trampoline's answer), and the two addresses the
 * kernel keeps in struct bpf_tramp_image (0 without BPF_TRAMP_F_CALL_ORIG). */
struct bpfdiff_kjit_tramp_image {
	uint64_t rx_header;
	uint64_t rx_image;
	uint32_t size;
	uint32_t code_bytes;
	uint64_t ip_after_call;
	uint64_t ip_epilogue;
	/* The struct bpf_tramp_image the code hands __bpf_tramp_enter/exit:
	 * a host address, which the guest sees only as a value. */
	uint64_t image_object;
};

/* Builds a trampoline as bpf_trampoline_update() does: its size, its
 * slot (arch_alloc_bpf_trampoline), its code (arch_prepare_bpf_trampoline,
 * which copies it to RX and flushes). Returns 0, or -1 with a message; on
 * failure no slot stays allocated. With world->fail_call, that failable
 * service call fails (kcalloc, kvmalloc, the pack's allocation). What the
 * error paths did goes to `path` (which may be NULL): the service made to
 * fail, and a promise broken on the way, whether the build failed or not:
 * a heap block the arch code still holds once it returned (its image's
 * RW buffer, its table of branches), or a slot left after a failure. */
int bpfdiff_kjit_trampoline(const struct bpfdiff_kjit_world *world,
			    const struct bpfdiff_kjit_tramp_request *request,
			    struct bpfdiff_kjit_tramp_image *image, char *message, size_t message_size,
			    struct bpfdiff_kjit_error_path *path);

/* bpf_arch_text_poke(ip, BPF_MOD_CALL or BPF_MOD_JUMP, old, new) on a
 * program whose kallsyms symbol (bpf_func, jited_len) is [image, image +
 * symbol_bytes), in an image of image_bytes (code, the PLT's target,
 * the exception table). 0 for old or new is a nop. A target more than
 * 128 MiB away goes through the PLT: the kernel's store of its target
 * reaches the image through text_copy. Returns the kernel's answer (0 or
 * -errno), with a message when it is not 0. */
int bpfdiff_kjit_text_poke(const struct bpfdiff_kjit_world *world, uint64_t image,
			   uint32_t symbol_bytes, uint32_t image_bytes, uint64_t ip, int jump,
			   uint64_t old_target, uint64_t new_target, char *message, size_t message_size);

/* The tree's JIT's answers to the verifier's questions
 * (verifier_questions.c): 1 where bpf_jit_supports_*() says yes, and the
 * helper ids bpf_jit_inlines_helper_call() takes, ascending. inlined_count
 * counts them all; past BPFDIFF_KJIT_MAX_INLINED the ids are not stored. */
#define BPFDIFF_KJIT_MAX_INLINED 16
struct bpfdiff_kjit_answers {
	int kfunc_call;        /* bpf_jit_supports_kfunc_call */
	int subprog_tailcalls; /* bpf_jit_supports_subprog_tailcalls */
	int ptr_xchg;          /* bpf_jit_supports_ptr_xchg: kptr_xchg inlined */
	int percpu_insn;       /* bpf_jit_supports_percpu_insn: BPF_ADDR_PERCPU */
	int exceptions;        /* bpf_jit_supports_exceptions: bpf_throw */
	int arena;             /* bpf_jit_supports_arena */
	int arena_atomics;     /* bpf_jit_supports_insn(atomic W and DW, in_arena) */
	int bypass_spec_v4;    /* bpf_jit_bypass_spec_v4 */
	int32_t inlined[BPFDIFF_KJIT_MAX_INLINED];
	uint32_t inlined_count;
};
void bpfdiff_kjit_verifier_answers(const struct bpfdiff_kjit_world *world,
				   struct bpfdiff_kjit_answers *answers);

/* What the tree's files do where trees differ (kernelsrc/CMakeLists.txt
 * probes them): its JIT writes into the prog pack, or in place into
 * memory of its own (in_place_images.c); its verifier and interpreter know
 * the cpu v4 instructions (sdiv/smod, movsx, ldxs*, bswap, gotol); its
 * arch sizes and allocates trampolines (arch_bpf_trampoline_size) or
 * writes them in place into a page. */
struct bpfdiff_kjit_tree_features {
	int prog_pack;
	int cpu_v4;
	int arch_sizes_trampolines;
	int trampoline_struct_args; /* its trampolines take struct arguments */
	int arch_jit_free;          /* the arch has its own bpf_jit_free() */
	int tail_call_empty_slot_uncounted; /* the JIT counts populated slots only */
};
struct bpfdiff_kjit_tree_features bpfdiff_kjit_get_tree_features(void);

/* offsetof()s that the kernel's JIT bakes into the code it emits. */
struct bpfdiff_kjit_layout {
	uint32_t array_max_entries; /* struct bpf_array, map.max_entries */
	uint32_t array_ptrs;        /* struct bpf_array, ptrs */
	uint32_t prog_bpf_func;     /* struct bpf_prog, bpf_func */
	uint32_t thread_info_cpu;   /* struct thread_info, cpu */
	uint32_t extable_entry_size;
};
struct bpfdiff_kjit_layout bpfdiff_kjit_get_layout(void);

/* One tree's code, as the C++ side reaches it: every entry point above
 * and in interpreter_bridge.h, by pointer (tree_code.c). The build's own
 * tree defines bpfdiff_this_tree; a further tree linked into the same
 * executable is one relocatable object whose every other symbol is local
 * and whose table is renamed bpfdiff_this_tree_<version>
 * (kernelsrc/CMakeLists.txt, "Trees linked beside the build's"): two
 * trees' core.c, JIT and shims each keep their own globals, and no symbol
 * of one meets the other's. bpfdiff_linked_trees lists the tables an
 * executable holds, its own tree's first, NULL-terminated. */
struct bpfdiff_kinterp_world;
typedef uint64_t (*bpfdiff_kinterp_entry)(uint64_t r1, uint64_t r2, uint64_t r3, uint64_t r4, uint64_t r5,
					  const void *insn);
struct bpfdiff_ktree_code {
	const char *path;    /* the tree the build read */
	const char *version; /* from its Makefile: "6.1.192" */
	struct bpfdiff_kjit_tree_features (*tree_features)(void);
	struct bpfdiff_kjit_layout (*layout)(void);
	long (*run_initcalls)(void);
	void (*verifier_answers)(const struct bpfdiff_kjit_world *world, struct bpfdiff_kjit_answers *answers);
	int (*compile)(const struct bpfdiff_kjit_world *world, const struct bpfdiff_kjit_program *program,
		       struct bpfdiff_kjit_image *images, char *message, size_t message_size,
		       struct bpfdiff_kjit_error_path *path);
	int (*blind_line_info)(const struct bpfdiff_kjit_world *world, const struct bpfdiff_kjit_program *program,
			       uint32_t *line_insn_off, char *message, size_t message_size);
	int (*release)(const struct bpfdiff_kjit_world *world, const uint64_t *images, const uint64_t *headers,
		       const uint32_t *image_bytes, const uint32_t *slot_bytes, uint32_t count, char *message,
		       size_t message_size);
	void (*pack_drain)(const struct bpfdiff_kjit_world *world, const uint64_t *rx_headers,
			   const uint32_t *slot_bytes, uint32_t count);
	uint64_t (*fixup)(const uint8_t entry[12], uint64_t entry_address, int *cleared_register);
	int (*trampoline)(const struct bpfdiff_kjit_world *world, const struct bpfdiff_kjit_tramp_request *request,
			  struct bpfdiff_kjit_tramp_image *image, char *message, size_t message_size,
			  struct bpfdiff_kjit_error_path *path);
	int (*text_poke)(const struct bpfdiff_kjit_world *world, uint64_t image, uint32_t symbol_bytes,
			 uint32_t image_bytes, uint64_t ip, int jump, uint64_t old_target, uint64_t new_target,
			 char *message, size_t message_size);
	/* core.c's interpreter (interpreter_bridge.h). */
	void *(*interp_load)(const struct bpfdiff_kinterp_world *world, const struct bpfdiff_kjit_program *program,
			     char *message, size_t message_size);
	void (*interp_free)(void *prog);
	const struct bpfdiff_kjit_insn *(*interp_insns)(const void *prog);
	bpfdiff_kinterp_entry (*interp_entry_for)(uint32_t stack_depth);
	void *(*interp_begin)(void);
	void (*interp_end)(char *message, size_t message_size);
	int (*interp_opcode_known)(uint8_t code);
	void (*interp_set_probe_hook)(void *function);
};
extern const struct bpfdiff_ktree_code bpfdiff_this_tree;
extern const struct bpfdiff_ktree_code *const bpfdiff_linked_trees[];

#ifdef __cplusplus
}
#endif

#endif
