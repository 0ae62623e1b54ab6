/* The sequence in which the kernel's verifier (jit_subprogs() and
 * fixup_call_args() in kernel/bpf/verifier.c) drives the arch JIT, for a
 * program bpfdiff has loaded:
 *   - every `call pc-relative` gets the callee's subprogram index in off
 *     (and imm 1, "__bpf_call_base + 1"), before the program is split;
 *     so does every ld_imm64 of a callback's address (BPF_PSEUDO_FUNC),
 *     whose imm64 is MODULES_VADDR until the extra pass, which gets the
 *     callback's image;
 *   - every subprogram becomes a bpf_prog of its own, with its exception-
 *     table entries counted (one per PROBE_MEM load) and its stack depth;
 *   - each is compiled once; with more than one, each is compiled again
 *     (the extra pass), now that bpf_jit_get_func_addr() knows where every
 *     callee is, and it must stay where it was.
 * A program of one subprogram is compiled once, as bpf_prog_select_runtime
 * does. When the verifier would give up on the program, every function
 * goes through the kernel's bpf_jit_free(), as the verifier's out_free and
 * bpf_prog_free() do; then what the kernel promised after its error paths
 * is checked (SHIMS.md, "Error paths"). */
#include <linux/filter.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernelsrc/services.h"

static int is_pseudo_call(const struct bpf_insn *insn)
{
	return insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_CALL;
}

/* What jit_subprogs() loads a callback's address with until the extra
 * pass knows it: MODULES_VADDR, "close enough to possible prog address"
 * (arm64's, _PAGE_END(VA_BITS_MIN) with 48 bits). */
#define BPFDIFF_MODULES_VADDR 0xffff800000000000ull

/* An access through the arena: the verifier's PROBE_MEM32 loads and
 * stores and PROBE_ATOMIC atomics. */
static int is_arena_access(const struct bpf_insn *insn)
{
	const u8 class = BPF_CLASS(insn->code);
	const u8 mode = BPF_MODE(insn->code);

	return ((class == BPF_LDX || class == BPF_ST || class == BPF_STX) && mode == BPF_PROBE_MEM32) ||
	       (class == BPF_STX && mode == BPF_PROBE_ATOMIC);
}

/* An access the verifier marks as allowed to fault: each gets an
 * exception-table entry (the verifier's count, prog->aux->num_exentries). */
static int may_fault(const struct bpf_insn *insn)
{
	const u8 mode = BPF_MODE(insn->code);

	return (BPF_CLASS(insn->code) == BPF_LDX && (mode == BPF_PROBE_MEM || mode == BPF_PROBE_MEMSX)) ||
	       is_arena_access(insn);
}

/* The struct bpf_arena of a program that uses the arena: only its
 * address counts (bpf_arena_get_kern_vm_start answers the world's). */
static char the_arena;

static int uses_arena(const struct bpfdiff_kjit_program *program)
{
	uint32_t i;

	for (i = 0; i < program->length; i++) {
		const struct bpf_insn *insn = (const struct bpf_insn *)&program->insns[i];

		if (is_arena_access(insn) || insn_is_cast_user(insn))
			return 1;
	}
	return 0;
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

struct bpf_prog *bpfdiff_kjit_function_copy(const struct bpfdiff_kjit_program *program, uint32_t index)
{
	const uint32_t first = program->starts[index];
	const uint32_t length = end_of(program, index) - first;
	struct bpf_prog *prog = bpfdiff_kjit_alloc_prog(length);
	struct bpf_prog_aux *aux = calloc(1, sizeof(*aux));

	if (!prog || !aux) {
		bpfdiff_kjit_free_prog(prog);
		free(aux);
		return NULL;
	}
	memcpy(prog->insnsi, program->insns + first, length * sizeof(struct bpf_insn));
	prog->len = length;
	prog->aux = aux;
	aux->prog = prog;
	/* As bpf_prog_alloc_no_stats() (the verifier's copies of the
	 * functions inherit both, jit_subprogs()). */
	prog->jit_requested = ebpf_jit_enabled();
	prog->blinding_requested = bpf_jit_blinding_enabled(prog);
	/* bpf_convert_filter() leaves a classic program's type unset. An
	 * eBPF program has one; which does not matter to the JIT. */
	prog->type = program->classic ? BPF_PROG_TYPE_UNSPEC : BPF_PROG_TYPE_SOCKET_FILTER;
	prog->is_func = program->count > 1;
	aux->func_idx = index;
	aux->stack_depth = program->stack_depth;
	/* As jit_subprogs(): the main function of a program that throws is
	 * the exception boundary, and the callback knows it is one. */
	aux->exception_boundary = index == 0 && program->throws;
	aux->exception_cb = program->exception_callback != 0 && index == program->exception_callback;
	return prog;
}

static struct bpf_prog *make_function(const struct bpfdiff_kjit_program *program, uint32_t index,
				      struct bpf_prog **all, uint32_t *offsets)
{
	const uint32_t first = program->starts[index];
	const uint32_t length = end_of(program, index) - first;
	struct bpf_prog *prog = bpfdiff_kjit_function_copy(program, index);
	struct bpf_line_info *linfo = calloc(length ? length : 1, sizeof(*linfo));
	struct bpf_prog_aux *aux;
	uint32_t i;

	if (!prog || !linfo) {
		if (prog)
			free(prog->aux);
		bpfdiff_kjit_free_prog(prog);
		free(linfo);
		return NULL;
	}
	aux = prog->aux;
	/* One line of line info per instruction: core.c's blinding moves
	 * them with the instructions it rewrites (bpf_adj_linfo), which maps
	 * the JIT's offsets back to the program as loaded
	 * (bpf_prog_fill_jited_linfo, services.c). */
	for (i = 0; i < length; i++)
		linfo[i].insn_off = i;
	aux->linfo = linfo;
	aux->nr_linfo = length;
	aux->bpfdiff_offsets = offsets;
	aux->bpfdiff_insns = (const struct bpf_insn *)(program->insns + first);
	/* The verifier gives every function the program's arena
	 * (jit_subprogs: func[i]->aux->arena = prog->aux->arena). */
	if (uses_arena(program))
		aux->arena = (struct bpf_arena *)&the_arena;
	if (program->count > 1) {
		aux->func = all;
		aux->func_cnt = program->count;
	}
	for (i = 0; i < length; i++) {
		struct bpf_insn *insn = &prog->insnsi[i];

		if (may_fault(insn))
			aux->num_exentries++;
		if (is_pseudo_call(insn)) {
			insn->off = (s16)subprogram_of(program, (int64_t)first + i + insn->imm + 1);
			insn->imm = 1;
		}
		if (bpf_pseudo_func(insn) && i + 1 < length) {
			insn->off = (s16)subprogram_of(program, (int64_t)first + i + insn->imm + 1);
			insn[0].imm = (s32)(u32)BPFDIFF_MODULES_VADDR;
			insn[1].imm = (s32)(u32)(BPFDIFF_MODULES_VADDR >> 32);
		}
	}
	return prog;
}

static void free_functions(struct bpf_prog **functions, uint32_t count)
{
	uint32_t i;

	for (i = 0; i < count; i++) {
		if (functions[i] && functions[i]->aux) {
			free(functions[i]->aux->linfo);
			free(functions[i]->aux);
		}
		bpfdiff_kjit_free_prog(functions[i]);
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

/* The verifier's criteria: a function is JITed when its first compile
 * leaves prog->jited set; its extra pass succeeds when it returns the
 * same prog with the same bpf_func (jit_subprogs()). A single function is
 * JITed when bpf_prog_select_runtime() finds prog->jited. Returns 0 when
 * the kernel would go on with the program. */
static int compile_functions(struct bpfdiff_kjit_session *session,
			     const struct bpfdiff_kjit_program *program, struct bpf_prog **functions,
			     char *message, size_t message_size)
{
	const uint32_t count = program->count;
	uint32_t i;

	for (i = 0; i < count; i++) {
		/* As jit_subprogs() (and bpf_prog_select_runtime() for one
		 * function): the program the JIT returns replaces the one it
		 * was given, a clone when it blinded the constants, the
		 * original (the clone freed) when it gave up. */
		functions[i] = bpf_int_jit_compile(functions[i]);
		bpfdiff_kjit_placed(functions[i]);
		if (!functions[i]->jited) {
			fail(session, message, message_size, "the kernel's JIT refused the program", i,
			     count);
			return -1;
		}
	}
	if (count == 1)
		return 0;
	/* As jit_subprogs(): every callback's address, now that each function
	 * has its image (the program the first compile returned, blinded or
	 * not, is what the extra pass compiles). */
	for (i = 0; i < count; i++) {
		struct bpf_insn *insn = functions[i]->insnsi;
		uint32_t j;

		for (j = 0; j + 1 < functions[i]->len; j++) {
			u64 address;

			if (!bpf_pseudo_func(&insn[j]))
				continue;
			address = (u64)(uintptr_t)functions[(u16)insn[j].off]->bpf_func;
			insn[j].imm = (s32)(u32)address;
			insn[j + 1].imm = (s32)(u32)(address >> 32);
		}
	}
	for (i = 0; i < count; i++) {
		void *before = functions[i]->bpf_func;
		struct bpf_prog *prog = bpf_int_jit_compile(functions[i]);

		bpfdiff_kjit_placed(prog);
		if (prog != functions[i] || functions[i]->bpf_func != before) {
			fail(session, message, message_size,
			     "the kernel's JIT failed the extra pass (\"JIT doesn't support bpf-to-bpf calls\")",
			     i, count);
			return -1;
		}
	}
	return 0;
}

static void breach(struct bpfdiff_kjit_error_path *path, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void breach(struct bpfdiff_kjit_error_path *path, const char *kind, const char *fmt, ...)
{
	va_list args;

	if (path->breach[0])
		return; /* the first one the path broke */
	snprintf(path->breach_kind, sizeof(path->breach_kind), "%s", kind);
	va_start(args, fmt);
	vsnprintf(path->breach, sizeof(path->breach), fmt, args);
	va_end(args);
}

/* A compile the verifier takes as JITed: every function's image must be
 * a slot of this compile, allocated and finalized, or the program would
 * run memory the allocator may hand to another. */
static void check_accepted(const struct bpfdiff_kjit_session *session, uint32_t count,
			   struct bpf_prog **functions, struct bpfdiff_kjit_error_path *path)
{
	uint32_t i, s;

	/* (Which service was made to fail, the callers say.) */
	for (i = 0; i < count; i++) {
		const uint64_t image = (uint64_t)(uintptr_t)functions[i]->bpf_func;
		const struct bpfdiff_kjit_slot *held = NULL;

		for (s = 0; s < session->slot_count; s++) {
			const struct bpfdiff_kjit_slot *slot = &session->slots[s];

			/* Exactly the slot's image: slots are 64-byte chunks,
			 * so an image just past a neighbour's end is still
			 * within its chunk, and a looser test would take a
			 * freed image for the neighbour's. */
			if (image >= slot->rx_image && image - slot->rx_image < slot->image_bytes)
				held = slot;
		}
		if (held && !held->finalized)
			breach(path, "unfinalized-image-reported-jited",
			       "subprogram %u: its image at 0x%llx was never finalized (RX holds no code), yet "
			       "jit_subprogs() takes the program as JITed",
			       i, (unsigned long long)image);
		if (!held)
			breach(path, "freed-image-reported-jited",
			       "subprogram %u: its image at 0x%llx is not an allocated, finalized slot, yet "
			       "prog->jited is %d and bpf_func unchanged, so jit_subprogs() takes the program as JITed",
			       i, (unsigned long long)image, functions[i]->jited);
		/* What the program the JIT returns owns must outlive the JIT:
		 * its free (__bpf_prog_free) frees it. Blinding hands the
		 * original's to its clone (bpf_prog_clone_free()). */
		if (functions[i]->active && !bpfdiff_kjit_holds(functions[i]->active))
			breach(path, "program-counter-freed",
			       "subprogram %u: the program the JIT returned points at a per-CPU counter "
			       "(prog->active) that was freed during the compile; its own free frees it again",
			       i);
	}
	if (session->plt_misaligned[0])
		breach(path, "plt-target-misaligned",
		       "%s: bpf_arch_text_poke()'s store of a new target is not single-copy atomic",
		       session->plt_misaligned);
}

/* After a compile (and, when it failed, bpf_jit_free() of every
 * function): no heap block held, no slot left but the `images` of a
 * program that loaded, nothing freed twice. `pending` functions still had
 * their jit_data (first pass done, extra pass not) when freed. */
static void check_released(const struct bpfdiff_kjit_session *session, struct bpf_prog *const *functions,
			   uint32_t count, uint32_t pending, uint32_t images, struct bpfdiff_kjit_error_path *path)
{
	uint32_t blocks, kept = 0, i;
	size_t bytes;
	/* The functions themselves, and their per-CPU counters, are the
	 * verifier's, freed after. */
	const void **keep = calloc(2 * (size_t)count + 1, sizeof(*keep));
	const char *service;

	for (i = 0; keep && i < count; i++) {
		if (!functions[i])
			continue;
		keep[kept++] = functions[i];
		if (functions[i]->active)
			keep[kept++] = functions[i]->active;
	}
	service = bpfdiff_kjit_held_except(session, keep, kept, &blocks, &bytes);
	free(keep);

	if (session->double_free[0])
		breach(path, "double-free", "%s", session->double_free);
	if (session->rw_buffers_leaked)
		breach(path, "rw-buffer-leaked",
		       "%u slots never finalized were freed without their RW buffer "
		       "(bpf_jit_binary_pack_free(ro_header, NULL)), which nothing frees then",
		       session->rw_buffers_leaked);
	if (blocks != 0) {
		/* bpf_jit_free() frees jit_data, not the offset table it
		 * holds (ctx.offset, the JIT's one kvcalloc). */
		const int offsets_only = pending != 0 && blocks == pending &&
					 bpfdiff_kjit_held_from(session, "kvcalloc") == blocks;
		/* A bpf_jit_free() that frees no jit_data (core.c's __weak
		 * one, where the arch has none): jit_data and its table. */
		const int jit_data = pending != 0 && blocks == 2 * pending &&
				     bpfdiff_kjit_held_from(session, "kvcalloc") == pending &&
				     bpfdiff_kjit_held_from(session, "kzalloc") == pending;

		breach(path, offsets_only ? "jit-free-leaks-offset-table" : jit_data ? "jit-free-leaks-jit-data" : "leak",
		       "%u heap blocks (%zu bytes, the oldest from %s) still held after bpf_jit_free() of every "
		       "function%s",
		       blocks, bytes, service,
		       offsets_only ? ": each function whose extra pass never came keeps its offset table "
				      "(jit_data->ctx.offset)"
		       : jit_data ? ": each function whose extra pass never came keeps its jit_data and offset table"
				  : "");
	}
	if (session->slot_count != images)
		breach(path, "slot-left-allocated",
		       "%u pack slots (the first at 0x%llx) still allocated %s, where %u should be",
		       session->slot_count, (unsigned long long)session->slots[0].rx_header,
		       images ? "after a compile the verifier takes as JITed" : "after bpf_jit_free() of every function",
		       images);
}

int bpfdiff_kjit_compile(const struct bpfdiff_kjit_world *world,
			 const struct bpfdiff_kjit_program *program,
			 struct bpfdiff_kjit_image *images, char *message, size_t message_size,
			 struct bpfdiff_kjit_error_path *path_out)
{
	struct bpfdiff_kjit_session session = { .world = world };
	struct bpfdiff_kjit_error_path path = { .injected = "" };
	struct bpf_prog **functions;
	volatile int accepted = 0;
	int result;
	uint32_t i, pending = 0;

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
	bpfdiff_kjit_enter(&session);
	bpf_jit_harden = world->jit_harden;
	for (i = 0; i < program->count; i++) {
		functions[i] = make_function(program, i, functions, images[i].offsets);
		if (!functions[i]) {
			free_functions(functions, program->count);
			bpfdiff_kjit_free_leftovers(&session);
			bpfdiff_kjit_leave();
			free(session.slots);
			snprintf(message, message_size, "out of host memory");
			return -1;
		}
	}

	if (setjmp(session.on_bug) == 0) {
		accepted = compile_functions(&session, program, functions, message, message_size) == 0;
	} else {
		fail(&session, message, message_size, "the kernel's code hit BUG()", 0, 1);
	}
	if (session.injected)
		snprintf(path.injected, sizeof(path.injected), "%s", session.injected);
	path.failable_calls = session.failable_calls;
	if (accepted)
		check_accepted(&session, program->count, functions, &path);
	/* A WARN is a refusal of ours, as is a broken promise; the kernel
	 * would have gone on. */
	result = accepted && !session.warned && !path.breach[0] ? 0 : -1;
	if (result == 0) {
		/* Everything but the images is freed by now. */
		check_released(&session, functions, program->count, 0, program->count, &path);
		if (path.breach[0])
			result = -1;
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
		if (accepted && !path.breach[0])
			fail(&session, message, message_size, "the kernel's JIT warned", 0, 1);
		/* As the verifier's out_free and bpf_prog_free(): bpf_jit_free()
		 * of every function, which must free what it holds. */
		for (i = 0; i < program->count; i++)
			pending += functions[i]->aux->jit_data != NULL;
		if (setjmp(session.on_bug) == 0) {
			for (i = 0; i < program->count; i++)
				bpf_jit_free(functions[i]);
		}
		check_released(&session, functions, program->count, pending, 0, &path);
		if (path.breach[0]) {
			const size_t used = strlen(message);

			snprintf(message + used, message_size - used, "%sthe kernel's JIT broke a promise: %s",
				 used ? "; then " : "", path.breach);
		}
		/* Whatever it left goes, so that the next compile starts clean. */
		for (i = 0; i < session.slot_count; i++)
			bpfdiff_kjit_free_slot(&session.slots[i]);
		session.slot_count = 0;
	}
	free_functions(functions, program->count);
	/* The programs' own free (the verifier's, or bpf_prog_free() at
	 * unload) may free what the kernel's code freed already. */
	if (session.double_free[0] && !path.breach[0])
		breach(&path, "double-free", "when the programs were freed: %s", session.double_free);
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
	free(session.slots);
	if (path_out)
		*path_out = path;
	return result;
}

int bpfdiff_kjit_release(const struct bpfdiff_kjit_world *world, const uint64_t *images,
			 const uint64_t *headers, const uint32_t *image_bytes, const uint32_t *slot_bytes,
			 uint32_t count, char *message, size_t message_size)
{
	struct bpfdiff_kjit_session session = { .world = world };
	struct bpf_prog prog;
	struct bpf_prog_aux aux;
	volatile int bugged = 0;
	uint32_t i;

	message[0] = '\0';
	session.slots = calloc(count ? count : 1, sizeof(*session.slots));
	if (!session.slots) {
		snprintf(message, message_size, "out of host memory");
		return -1;
	}
	session.slot_capacity = count;
	for (i = 0; i < count; i++)
		session.slots[session.slot_count++] =
			(struct bpfdiff_kjit_slot){ headers[i], NULL, image_bytes[i], images[i], 1, slot_bytes[i] };
	bpfdiff_kjit_enter(&session);
	if (setjmp(session.on_bug) == 0) {
		for (i = 0; i < count; i++) {
			/* What bpf_jit_free() reads of a program that loaded:
			 * jited, its image, no jit_data left. */
			memset(&prog, 0, sizeof(prog));
			memset(&aux, 0, sizeof(aux));
			prog.aux = &aux;
			prog.jited = 1;
			prog.bpf_func = (void *)(uintptr_t)images[i];
			bpf_jit_free(&prog);
		}
	} else {
		bugged = 1;
	}
	if (bugged)
		fail(&session, message, message_size, "bpf_jit_free() hit BUG()", 0, 1);
	else if (session.double_free[0])
		snprintf(message, message_size, "bpf_jit_free(): %s", session.double_free);
	else if (session.slot_count != 0)
		snprintf(message, message_size,
			 "bpf_jit_free() left %u of the program's %u slots allocated (the first at 0x%llx)",
			 session.slot_count, count, (unsigned long long)session.slots[0].rx_header);
	for (i = 0; i < session.slot_count; i++)
		bpfdiff_kjit_free_slot(&session.slots[i]);
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
	free(session.slots);
	return message[0] ? -1 : 0;
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
