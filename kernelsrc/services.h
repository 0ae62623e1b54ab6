/* The state of the compile in progress, shared by the driver
 * (jit_subprogs.c) and the kernel services (services.c). */
#ifndef BPFDIFF_KERNELSRC_SERVICES_H
#define BPFDIFF_KERNELSRC_SERVICES_H

#include <setjmp.h>
#include <stdint.h>

#include "kernelsrc/bridge.h"

struct bpf_prog;

struct bpfdiff_kjit_slot {
	uint64_t rx_header;
	uint8_t *rw_image; /* until finalize */
	uint32_t image_bytes;
	uint64_t rx_image; /* a trampoline's (bpf_prog_pack_alloc's answer) */
	int finalized;     /* bpf_jit_binary_pack_finalize ran on it */
	uint32_t slot_bytes; /* with core.c's pack: the size it was allocated with */
	/* A tree without the prog pack (in_place_images.c): the world was
	 * told the image is finalized. */
	int told_finalized;
};

struct bpfdiff_kjit_session {
	const struct bpfdiff_kjit_world *world;
	struct bpfdiff_kjit_slot *slots; /* one per subprogram */
	uint32_t slot_count, slot_capacity;
	char log[256];     /* the kernel's last message */
	char warning[128]; /* file:line of the first WARN or BUG */
	int warned;
	jmp_buf on_bug;    /* where BUG() leaves the kernel's code */
	struct kernel_block *blocks; /* what the kernel allocated and holds */
	/* The one BPF symbol kallsyms knows during a text poke: the poked
	 * program's image (__bpf_address_lookup). */
	uint64_t symbol_start;
	uint32_t symbol_bytes;
	/* Its whole image (the PLT's target follows the symbol): where a
	 * store of the kernel's code goes to guest memory (bpfdiff_kjit_store). */
	uint32_t image_bytes;
	/* Failure injection (bridge.h, fail_call): the failable service calls
	 * made so far, and the one made to fail (NULL: none yet). */
	uint32_t failable_calls;
	const char *injected;
	/* A free of a slot that was not allocated (a double free), if any. */
	char double_free[96];
	/* A PLT target a text poke could not rewrite atomically, if any. */
	char plt_misaligned[96];
	/* RW buffers (core.c kvmallocs one per image; finalize or a free
	 * given it frees it) whose slot was freed without them: leaked. */
	uint32_t rw_buffers_leaked;
};

/* The kernel's code reaches bpfdiff's world through the session of the
 * thread's compile in progress. */
void bpfdiff_kjit_enter(struct bpfdiff_kjit_session *session);
void bpfdiff_kjit_leave(void);
/* The session of the thread's compile in progress, or NULL. */
struct bpfdiff_kjit_session *bpfdiff_kjit_current(void);
/* Frees what the kernel's code allocated and did not free. */
void bpfdiff_kjit_free_leftovers(struct bpfdiff_kjit_session *session);
/* What the kernel's code holds of the host heap now: blocks and bytes,
 * and the service that allocated the oldest (NULL when it holds none). */
const char *bpfdiff_kjit_held(const struct bpfdiff_kjit_session *session, uint32_t *blocks, size_t *bytes);
/* bpfdiff_kjit_held(), but for the blocks at `keep` (the programs the
 * verifier still holds). */
const char *bpfdiff_kjit_held_except(const struct bpfdiff_kjit_session *session, const void *const *keep,
				     uint32_t kept, uint32_t *blocks, size_t *bytes);
/* A struct bpf_prog of `length` instructions as the verifier allocates it
 * (bpf_prog_alloc_no_stats: whole pages, zeroed, fp->pages set, its
 * per-CPU `active` counter), from the heap the kernel's code frees it to
 * (vfree, free_percpu: blinding frees the program it replaces). Not a
 * failable call: the verifier made it before the JIT. Freed, with what it
 * holds, by bpfdiff_kjit_free_prog (as __bpf_prog_free). */
struct bpf_prog *bpfdiff_kjit_alloc_prog(uint32_t length);
/* Function `index` of `program` as the verifier's jit_subprogs() copies it
 * out before the JIT: its instructions in a bpf_prog of its own, with an
 * aux (calloc'd) and the flags bpf_prog_alloc() and the verifier set; no
 * line info. NULL when out of host memory (jit_subprogs.c). */
struct bpf_prog *bpfdiff_kjit_function_copy(const struct bpfdiff_kjit_program *program, uint32_t index);
void bpfdiff_kjit_free_prog(struct bpf_prog *fp);
/* Whether `p` is a block the kernel's code still holds (not freed). */
int bpfdiff_kjit_holds(const void *p);
/* The blocks held now that `service` allocated. */
uint32_t bpfdiff_kjit_held_from(const struct bpfdiff_kjit_session *session, const char *service);
/* Whether the call of `service` about to be made is the one the world
 * asked to fail; counts it among the failable calls. */
int bpfdiff_kjit_inject_failure(const char *service);
/* Frees a slot the kernel's code left allocated, as its owner would:
 * through core.c's bpf_prog_pack_free() with world->kernel_pack, else
 * through bpfdiff's pack. */
void bpfdiff_kjit_free_slot(const struct bpfdiff_kjit_slot *slot);
/* kfree() and its kind, for a free that is not the JIT's executable
 * memory: `service` names it in a double free. */
void bpfdiff_kjit_heap_free(const void *p, const char *service);
/* The image's PLT, if it has one, branches to the guest's dummy_tramp
 * rather than the host's: `rw_image` holds the image of `image_bytes`
 * that runs at `rx_image`. A target not 8-byte aligned is recorded. */
void bpfdiff_kjit_point_plt_at_guest(uint8_t *rw_image, uint64_t rx_image, uint64_t image_bytes);
/* After each bpf_int_jit_compile() (jit_subprogs.c): in a tree without
 * the prog pack, tells the world where `prog`'s image starts in its
 * mapping, and that it is finalized once locked (in_place_images.c). */
#if BPFDIFF_TREE_HAS_PROG_PACK
static inline void bpfdiff_kjit_placed(struct bpf_prog *prog) { (void)prog; }
#else
void bpfdiff_kjit_placed(struct bpf_prog *prog);
/* The same for a trampoline of `size` bytes written at `image`, the start
 * of its page (trampoline.c). */
void bpfdiff_kjit_trampoline_placed(void *image, uint32_t size);
#endif
/* Before flush_icache_range(start, end): in a tree without the prog pack,
 * what the JIT wrote in place into a mapping not yet locked, told to the
 * world as the write that flush is for (in_place_images.c). */
#if BPFDIFF_TREE_HAS_PROG_PACK
static inline void bpfdiff_kjit_note_in_place_write(uint64_t start, uint64_t end) { (void)start, (void)end; }
#else
void bpfdiff_kjit_note_in_place_write(uint64_t start, uint64_t end);
#endif

#endif
