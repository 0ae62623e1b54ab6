/* The kernel services that arch/arm64/net/bpf_jit_comp.c and
 * arch/arm64/lib/insn.c link against, mapped onto bpfdiff's world through
 * the callbacks of the compile in progress (bridge.h). Where a service
 * differs from the kernel's, SHIMS.md says why. */
#include <linux/filter.h>
#include <linux/memory.h>
#include <linux/slab.h>
#include <asm/cacheflush.h>
#include <asm/cpufeature.h>
#include <asm/insn.h>
#include <asm/patching.h>
#include <asm/set_memory.h>
#include <linux/arm-smccc.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernelsrc/services.h"

static _Thread_local struct bpfdiff_kjit_session *session;

static _Thread_local uint64_t random_state;
void bpfdiff_kjit_enter(struct bpfdiff_kjit_session *s)
{
	session = s;
	/* xorshift needs a state other than 0. */
	random_state = s->world->random_seed ? s->world->random_seed : 0x9e3779b97f4a7c15ULL;
}
void bpfdiff_kjit_leave(void) { session = NULL; }
struct bpfdiff_kjit_session *bpfdiff_kjit_current(void) { return session; }

/* Diagnostics: the last message, and the first WARN, of this compile. */

void bpfdiff_kernel_log(const char *fmt, ...)
{
	va_list args;

	if (!session)
		return;
	va_start(args, fmt);
	vsnprintf(session->log, sizeof(session->log), fmt, args);
	va_end(args);
}

void bpfdiff_kernel_warn(const char *file, int line)
{
	const char *base;

	if (!session || session->warned)
		return;
	base = strrchr(file, '/');
	snprintf(session->warning, sizeof(session->warning), "%s:%d", base ? base + 1 : file, line);
	session->warned = 1;
}

void bpfdiff_kernel_bug(const char *file, int line)
{
	bpfdiff_kernel_warn(file, line);
	longjmp(session->on_bug, 1);
}

/* Failure injection: the services whose failure the kernel's code checks
 * (its allocations, the pack's, finalize, a callee's address in the extra
 * pass) are counted as it calls them, and the one the world names fails,
 * as it would under memory pressure or past bpf_jit_limit. */
int bpfdiff_kjit_inject_failure(const char *service)
{
	/* Counted with no failure asked for too (fail_call 0 is never
	 * reached), so that a clean compile says how many calls could fail. */
	if (!session || session->injected)
		return 0;
	if (++session->failable_calls != session->world->fail_call)
		return 0;
	session->injected = service;
	return 1;
}

/* Memory of the JIT itself (its offset table, jit_data): the host heap,
 * each block linked into the session with the service that allocated it,
 * so that what the kernel's code still holds when a compile ends is known
 * (the driver checks that a failed compile holds nothing) and then freed.
 * Nothing the kernel allocates outlives the compile. */

struct kernel_block {
	struct kernel_block *prev, *next;
	/* The list it is on: the session's, or core.c's pack's (pack_blocks). */
	struct kernel_block **list;
	uint64_t serial; /* allocation order, over the process */
	size_t size;
	const char *service;
} __attribute__((aligned(16))); /* the payload 16-byte aligned, as kmalloc's */

/* What core.c's prog pack allocated and keeps beyond the compile that
 * made it (a struct bpf_prog_pack lives as long as its pack): taken off
 * the session's list when the pack's entry point returns (adopt_pack_blocks),
 * freed by core.c when the pack goes. */
static struct kernel_block *pack_blocks;
static uint64_t block_serial;

static void *kernel_block_alloc(size_t size, int zero, const char *service)
{
	struct kernel_block *b;

	b = zero ? calloc(1, sizeof(*b) + size) : malloc(sizeof(*b) + size);
	if (!b)
		return NULL;
	b->size = size;
	b->service = service;
	b->serial = ++block_serial;
	b->list = &session->blocks;
	b->prev = NULL;
	b->next = session->blocks;
	if (session->blocks)
		session->blocks->prev = b;
	session->blocks = b;
	return b + 1;
}

static void block_unlink(struct kernel_block *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		*b->list = b->next;
	if (b->next)
		b->next->prev = b->prev;
}

static void *kernel_alloc(size_t size, int zero, const char *service)
{
	if (bpfdiff_kjit_inject_failure(service))
		return NULL;
	return kernel_block_alloc(size, zero, service);
}

/* Whether `b` is a block the kernel's code holds: on the session's list
 * or core.c's pack's. Walked, not read from the block, which may be gone. */
static int block_held(const struct kernel_block *b)
{
	const struct kernel_block *held;

	for (held = session ? session->blocks : NULL; held; held = held->next)
		if (held == b)
			return 1;
	for (held = pack_blocks; held; held = held->next)
		if (held == b)
			return 1;
	return 0;
}

int bpfdiff_kjit_holds(const void *p) { return p && block_held((const struct kernel_block *)p - 1); }

/* A free of what the kernel's code does not hold (freed already, or never
 * allocated) is recorded as the compile's double free, and not made: the
 * kernel would corrupt its allocator there. */
static void kernel_free(const void *p, const char *service)
{
	struct kernel_block *b;

	if (!p)
		return;
	b = (struct kernel_block *)p - 1;
	if (!block_held(b)) {
		if (session && !session->double_free[0])
			snprintf(session->double_free, sizeof(session->double_free),
				 "%s(%p) of a block not held (freed twice?)", service, p);
		return;
	}
	block_unlink(b);
	free(b);
}

#if BPFDIFF_TREE_HAS_PROG_PACK
/* The blocks core.c's pack allocated since block `serial` and still
 * holds, but `handed_out` (the RW buffer it gives the JIT, which the JIT
 * frees through finalize or free): the pack's own, off the session. */
static void adopt_pack_blocks(uint64_t serial, const void *handed_out)
{
	struct kernel_block *b = session->blocks, *next;

	for (; b; b = next) {
		next = b->next;
		if (b->serial <= serial || (const void *)(b + 1) == handed_out)
			continue;
		block_unlink(b);
		b->list = &pack_blocks;
		b->prev = NULL;
		b->next = pack_blocks;
		if (pack_blocks)
			pack_blocks->prev = b;
		pack_blocks = b;
	}
}
#endif

const char *bpfdiff_kjit_held(const struct bpfdiff_kjit_session *s, uint32_t *blocks, size_t *bytes)
{
	const struct kernel_block *b;
	const char *first = NULL;

	*blocks = 0;
	*bytes = 0;
	for (b = s->blocks; b; b = b->next) {
		++*blocks;
		*bytes += b->size;
		first = b->service;
	}
	return first;
}

struct bpf_prog *bpfdiff_kjit_alloc_prog(uint32_t length)
{
	/* As bpf_prog_alloc_no_stats(): whole pages, zeroed, their count in
	 * fp->pages, which blinding's clone and bpf_prog_realloc() copy. */
	const size_t size = round_up(bpf_prog_size(length), PAGE_SIZE);
	struct bpf_prog *fp = kernel_block_alloc(size, 1, "bpf_prog_alloc");

	if (!fp)
		return NULL;
	fp->pages = size / PAGE_SIZE;
	/* Its recursion counter (per CPU), which blinding's clone shares
	 * with the program it copies, and hands over when it frees that
	 * one (bpf_prog_clone_free). */
	fp->active = kernel_block_alloc(sizeof(int), 1, "alloc_percpu");
	if (!fp->active) {
		kernel_free(fp, "vfree");
		return NULL;
	}
	return fp;
}

/* As __bpf_prog_free(): its per-CPU objects, then the program. */
void bpfdiff_kjit_free_prog(struct bpf_prog *fp)
{
	if (!fp)
		return;
	kernel_free(fp->stats, "free_percpu");
	kernel_free(fp->active, "free_percpu");
	kernel_free(fp, "vfree");
}

const char *bpfdiff_kjit_held_except(const struct bpfdiff_kjit_session *s, const void *const *keep, uint32_t kept,
				     uint32_t *blocks, size_t *bytes)
{
	const struct kernel_block *b;
	const char *first = NULL;

	*blocks = 0;
	*bytes = 0;
	for (b = s->blocks; b; b = b->next) {
		uint32_t i = 0;

		while (i < kept && keep[i] != (const void *)(b + 1))
			i++;
		if (i < kept)
			continue;
		++*blocks;
		*bytes += b->size;
		first = b->service;
	}
	return first;
}

uint32_t bpfdiff_kjit_held_from(const struct bpfdiff_kjit_session *s, const char *service)
{
	const struct kernel_block *b;
	uint32_t blocks = 0;

	for (b = s->blocks; b; b = b->next)
		blocks += strcmp(b->service, service) == 0;
	return blocks;
}

void bpfdiff_kjit_free_leftovers(struct bpfdiff_kjit_session *s)
{
	while (s->blocks) {
		struct kernel_block *b = s->blocks;

		s->blocks = b->next;
		free(b);
	}
}

void *kzalloc(size_t size, int flags) { (void)flags; return kernel_alloc(size, 1, "kzalloc"); }
void *kcalloc(size_t n, size_t size, int flags)
{
	(void)flags;
	return size && n > SIZE_MAX / size ? NULL : kernel_alloc(n * size, 1, "kcalloc");
}
void *kvcalloc(size_t n, size_t size, int flags)
{
	(void)flags;
	return size && n > SIZE_MAX / size ? NULL : kernel_alloc(n * size, 1, "kvcalloc");
}
void *kvmalloc(size_t size, int flags) { (void)flags; return kernel_alloc(size, 0, "kvmalloc"); }
void *kmalloc(size_t size, int flags) { (void)flags; return kernel_alloc(size, 0, "kmalloc"); }
void *kmalloc_array(size_t n, size_t size, int flags)
{
	(void)flags;
	return size && n > SIZE_MAX / size ? NULL : kernel_alloc(n * size, 0, "kmalloc_array");
}
void kfree(const void *p) { kernel_free(p, "kfree"); }
void kvfree(const void *p) { kernel_free(p, "kvfree"); }
/* kernel/bpf/core.c's allocations: programs (and blinding's clones of
 * them) from vmalloc, their per-CPU counters; tracked as kzalloc's. */
void *__vmalloc(unsigned long size, gfp_t gfp_mask)
{
	return kernel_alloc(size, ((unsigned)gfp_mask & __GFP_ZERO) != 0, "vmalloc");
}
#if BPFDIFF_TREE_HAS_PROG_PACK
void *vmalloc(unsigned long size) { return kernel_alloc(size, 0, "vmalloc"); }
void vfree(const void *addr) { kernel_free(addr, "vfree"); }
#endif
/* (In a tree without the prog pack, vmalloc() is the JIT's executable
 * memory: in_place_images.c.) */
void bpfdiff_kjit_heap_free(const void *p, const char *service) { kernel_free(p, service); }
void *bpfdiff_alloc_percpu(size_t size) { return kernel_alloc(size, 1, "alloc_percpu"); }
void free_percpu(void *p) { kernel_free(p, "free_percpu"); }

/* The PLT's target is the kernel symbol dummy_tramp. Ours is a host
 * function nobody calls; in the image it becomes the guest's stand-in, so
 * that the image does not depend on where the host loaded bpfdiff. */
void dummy_tramp(void) {}

void bpfdiff_kjit_point_plt_at_guest(u8 *rw_image, uint64_t rx_image, uint64_t image_bytes)
{
	const uint64_t host = (uint64_t)(uintptr_t)&dummy_tramp;
	uint64_t at;

	if (!rw_image || image_bytes < 16)
		return;

	/* Every word, not every doubleword: a target the JIT failed to align
	 * is found too, and named. */
	for (at = (image_bytes - 8) & ~3ull; at >= 8; at -= 4) {
		uint64_t value;
		u32 ldr, br;

		memcpy(&value, rw_image + at, 8);
		if (value != host)
			continue;
		memcpy(&ldr, rw_image + at - 8, 4);
		memcpy(&br, rw_image + at - 4, 4);
		/* ldr x10, #8; br x10: build_plt() */
		if (ldr != 0x5800004a || br != 0xd61f0140)
			continue;
		/* bpf_arch_text_poke() rewrites the target with one 64-bit
		 * store while CPUs may branch through it: only an aligned one
		 * is single-copy atomic (build_plt() pads to align it). */
		if (((rx_image + at) & 7) && !session->plt_misaligned[0])
			snprintf(session->plt_misaligned, sizeof(session->plt_misaligned),
				 "the PLT target at 0x%llx (image + 0x%llx) is not 8-byte aligned",
				 (unsigned long long)(rx_image + at), (unsigned long long)at);
		value = session->world->dummy_tramp;
		memcpy(rw_image + at, &value, 8);
		return;
	}
}

#if BPFDIFF_TREE_HAS_PROG_PACK
/* The prog pack: bpfdiff's, in guest memory. Pointers to RX memory are
 * guest addresses; the JIT only computes with them and hands them back. */

static struct bpf_binary_header *model_pack_alloc(unsigned int proglen, u8 **ro_image, unsigned int alignment,
						  struct bpf_binary_header **rw_hdr, u8 **rw_image,
						  bpf_jit_fill_hole_t bpf_fill_ill_insns, bool was_classic)
{
	const struct bpfdiff_kjit_world *w = session->world;
	uint64_t rx_header, rx_image;
	u8 *rw_header, *rw;

	(void)was_classic;
	(void)bpf_fill_ill_insns; /* the pack fills its RW buffers with the same word */
	if (alignment > BPF_IMAGE_ALIGNMENT) {
		bpfdiff_kernel_log("bpfdiff's pack aligns images to %d bytes, the JIT asked for %u",
				   BPF_IMAGE_ALIGNMENT, alignment);
		return NULL;
	}
	if (w->pack_alloc(w->owner, proglen, alignment, &rx_header, &rx_image, &rw_header, &rw) != 0)
		return NULL;
	session->slots[session->slot_count++] =
		(struct bpfdiff_kjit_slot){ rx_header, rw, proglen, rx_image, 0, 0 };
	*rw_hdr = (struct bpf_binary_header *)rw_header;
	*rw_image = rw;
	*ro_image = (u8 *)(uintptr_t)rx_image;
	return (struct bpf_binary_header *)(uintptr_t)rx_header;
}

static void point_plt_at_guest(uint64_t rx_header)
{
	uint32_t i;

	for (i = 0; i < session->slot_count; i++) {
		if (session->slots[i].rx_header == rx_header)
			bpfdiff_kjit_point_plt_at_guest(session->slots[i].rw_image, session->slots[i].rx_image,
							session->slots[i].image_bytes);
	}
}

static struct bpfdiff_kjit_slot *slot_at(uint64_t rx_header)
{
	uint32_t i;

	for (i = 0; i < session->slot_count; i++) {
		if (session->slots[i].rx_header == rx_header)
			return &session->slots[i];
	}
	return NULL;
}

static int model_pack_finalize(struct bpf_binary_header *ro_header)
{
	const struct bpfdiff_kjit_world *w = session->world;
	const uint64_t rx_header = (uint64_t)(uintptr_t)ro_header;
	struct bpfdiff_kjit_slot *slot = slot_at(rx_header);

	point_plt_at_guest(rx_header);
	w->pack_finalize(w->owner, rx_header);
	if (slot)
		slot->finalized = 1;
	return 0;
}

/* A free of a slot not among this compile's: freed already, or never
 * allocated. The kernel would free it again; here it is recorded and
 * skipped. */
static void note_double_free(const char *service, uint64_t rx_header)
{
	if (!session->double_free[0])
		snprintf(session->double_free, sizeof(session->double_free), "%s(0x%llx) of a slot not allocated",
			 service, (unsigned long long)rx_header);
}

static void model_pack_free(struct bpfdiff_kjit_slot *slot)
{
	const struct bpfdiff_kjit_world *w = session->world;
	const uint64_t rx_header = slot->rx_header;

	*slot = session->slots[--session->slot_count];
	w->pack_free(w->owner, rx_header);
}

/* Trampolines: bpf_prog_pack_alloc hands out RX memory of the pack, which
 * holds illegal instructions until arch_prepare_bpf_trampoline copies its
 * code in. Here that is a pack slot whose RW buffer (the same fill) goes
 * to RX at once. */
static void *model_prog_pack_alloc(u32 size)
{
	const struct bpfdiff_kjit_world *w = session->world;
	uint64_t rx_header, rx_image;
	u8 *rw_header, *rw;

	/* core.c's fails when no pack has room and a new one cannot be
	 * allocated (alloc_new_pack). */
	if (bpfdiff_kjit_inject_failure("bpf_prog_pack_alloc"))
		return NULL;
	if (w->pack_alloc(w->owner, size, 8, &rx_header, &rx_image, &rw_header, &rw) != 0)
		return NULL;
	session->slots[session->slot_count++] =
		(struct bpfdiff_kjit_slot){ rx_header, NULL, size, rx_image, 0, 0 };
	w->pack_finalize(w->owner, rx_header);
	return (void *)(uintptr_t)rx_image;
}

/* core.c's prog pack (world->kernel_pack): the JIT calls kernel/bpf/
 * core.c's own bpf_jit_binary_pack_*() and bpf_prog_pack_*() (compiled
 * under the names core_c_*, see CMakeLists.txt), which run on
 * execmem_alloc, set_memory_rox and the text patching below them
 * (core_services.c, and aarch64_insn_copy/set here). What they hand out
 * and take back is told to the world, which checks it from outside. */

struct bpf_binary_header *core_c_bpf_jit_binary_pack_alloc(unsigned int proglen, u8 **image_ptr,
							   unsigned int alignment,
							   struct bpf_binary_header **rw_header,
							   u8 **rw_image, bpf_jit_fill_hole_t bpf_fill_ill_insns,
							   bool was_classic);
int core_c_bpf_jit_binary_pack_finalize(struct bpf_binary_header *ro_header,
					struct bpf_binary_header *rw_header);
void core_c_bpf_jit_binary_pack_free(struct bpf_binary_header *ro_header, struct bpf_binary_header *rw_header);
struct bpf_binary_header *core_c_bpf_jit_binary_pack_hdr(const struct bpf_prog *fp);
void *core_c_bpf_prog_pack_alloc(u32 size, bpf_jit_fill_hole_t bpf_fill_ill_insns, bool was_classic);
void core_c_bpf_prog_pack_free(void *ptr, u32 size);

static int kernel_pack(void) { return session && session->world->kernel_pack; }

struct bpf_binary_header *bpf_jit_binary_pack_alloc(unsigned int proglen, u8 **ro_image,
						    unsigned int alignment,
						    struct bpf_binary_header **rw_hdr, u8 **rw_image,
						    bpf_jit_fill_hole_t bpf_fill_ill_insns,
						    bool was_classic)
{
	const struct bpfdiff_kjit_world *w = session->world;
	struct bpf_binary_header *ro_header;
	const uint64_t serial = block_serial;

	if (session->slot_count == session->slot_capacity) {
		bpfdiff_kernel_log("more allocations than subprograms");
		return NULL;
	}
	/* core.c's first step, bpf_jit_charge_modmem(), fails past
	 * bpf_jit_limit before anything is allocated: a failure here is
	 * that one. */
	if (bpfdiff_kjit_inject_failure("bpf_jit_binary_pack_alloc"))
		return NULL;
	if (!w->kernel_pack)
		return model_pack_alloc(proglen, ro_image, alignment, rw_hdr, rw_image, bpf_fill_ill_insns,
					was_classic);
	ro_header = core_c_bpf_jit_binary_pack_alloc(proglen, ro_image, alignment, rw_hdr, rw_image,
						     bpf_fill_ill_insns, was_classic);
	adopt_pack_blocks(serial, ro_header ? *rw_hdr : NULL);
	if (!ro_header)
		return NULL;
	session->slots[session->slot_count++] = (struct bpfdiff_kjit_slot){
		(uint64_t)(uintptr_t)ro_header, *rw_image, proglen, (uint64_t)(uintptr_t)*ro_image, 0, (*rw_hdr)->size
	};
	w->slot_adopted(w->owner, (uint64_t)(uintptr_t)ro_header, (*rw_hdr)->size, (uint64_t)(uintptr_t)*ro_image,
			proglen);
	return ro_header;
}

int bpf_jit_binary_pack_finalize(struct bpf_binary_header *ro_header,
				 struct bpf_binary_header *rw_header)
{
	const struct bpfdiff_kjit_world *w = session->world;
	const uint64_t rx_header = (uint64_t)(uintptr_t)ro_header;
	struct bpfdiff_kjit_slot *slot = slot_at(rx_header);
	int err;

	if (!w->kernel_pack)
		return model_pack_finalize(ro_header);
	point_plt_at_guest(rx_header);
	if (slot && slot->rw_image)
		w->slot_finalized(w->owner, rx_header, slot->rw_image, slot->image_bytes);
	err = core_c_bpf_jit_binary_pack_finalize(ro_header, rw_header);
	if (!slot)
		return err;
	slot->rw_image = NULL; /* kvfree'd */
	if (err) {
		/* core.c freed the slot (bpf_prog_pack_free); only a
		 * misaligned destination makes aarch64_insn_copy() fail. */
		w->slot_released(w->owner, rx_header);
		*slot = session->slots[--session->slot_count];
		return err;
	}
	slot->finalized = 1;
	return 0;
}

void bpf_jit_binary_pack_free(struct bpf_binary_header *ro_header,
			      struct bpf_binary_header *rw_header)
{
	const struct bpfdiff_kjit_world *w = session->world;
	const uint64_t rx_header = (uint64_t)(uintptr_t)ro_header;
	struct bpfdiff_kjit_slot *slot = slot_at(rx_header);

	if (slot && !slot->finalized && !rw_header)
		session->rw_buffers_leaked++;
	if (!slot) {
		note_double_free("bpf_jit_binary_pack_free", rx_header);
		return;
	}
	if (!w->kernel_pack) {
		model_pack_free(slot);
		return;
	}
	/* Told first: core.c's free may unmap the pack the slot was in. */
	*slot = session->slots[--session->slot_count];
	w->slot_released(w->owner, rx_header);
	core_c_bpf_jit_binary_pack_free(ro_header, rw_header);
}

/* core.c: the header lies at the start of the 64-byte chunk
 * (BPF_PROG_CHUNK_SIZE) that holds the image's start, since the hole
 * before the image is shorter than a chunk. */
struct bpf_binary_header *bpf_jit_binary_pack_hdr(const struct bpf_prog *fp)
{
	const uintptr_t chunk_size = 64;

	if (kernel_pack())
		return core_c_bpf_jit_binary_pack_hdr(fp);
	return (struct bpf_binary_header *)((uintptr_t)fp->bpf_func & ~(chunk_size - 1));
}

void *bpf_prog_pack_alloc(u32 size, bpf_jit_fill_hole_t bpf_fill_ill_insns, bool was_classic)
{
	const struct bpfdiff_kjit_world *w = session->world;
	const uint64_t serial = block_serial;
	void *ptr;

	if (session->slot_count == session->slot_capacity) {
		bpfdiff_kernel_log("more allocations than the trampoline needs");
		return NULL;
	}
	if (!w->kernel_pack)
		return model_prog_pack_alloc(size);
	ptr = core_c_bpf_prog_pack_alloc(size, bpf_fill_ill_insns, was_classic);
	adopt_pack_blocks(serial, NULL);
	if (!ptr)
		return NULL;
	/* The slot core.c hands out is whole 64-byte chunks
	 * (BPF_PROG_CHUNK_SIZE), all of them the trampoline's. */
	session->slots[session->slot_count++] = (struct bpfdiff_kjit_slot){
		(uint64_t)(uintptr_t)ptr, NULL, size, (uint64_t)(uintptr_t)ptr, 1, size
	};
	w->slot_adopted(w->owner, (uint64_t)(uintptr_t)ptr, round_up(size, 64), (uint64_t)(uintptr_t)ptr, size);
	w->slot_finalized(w->owner, (uint64_t)(uintptr_t)ptr, NULL, 0);
	return ptr;
}

void bpf_prog_pack_free(void *ptr, u32 size)
{
	const struct bpfdiff_kjit_world *w = session->world;
	const uint64_t rx = (uint64_t)(uintptr_t)ptr;
	uint32_t i;

	for (i = 0; i < session->slot_count && session->slots[i].rx_image != rx; i++)
		;
	if (i == session->slot_count) {
		note_double_free("bpf_prog_pack_free", rx);
		return;
	}
	if (!w->kernel_pack) {
		model_pack_free(&session->slots[i]);
		return;
	}
	session->slots[i] = session->slots[--session->slot_count];
	w->slot_released(w->owner, rx);
	core_c_bpf_prog_pack_free(ptr, size);
}


void bpfdiff_kjit_free_slot(const struct bpfdiff_kjit_slot *slot)
{
	const struct bpfdiff_kjit_world *w = session->world;

	if (!w->kernel_pack) {
		w->pack_free(w->owner, slot->rx_header);
		return;
	}
	w->slot_released(w->owner, slot->rx_header);
	core_c_bpf_prog_pack_free((void *)(uintptr_t)slot->rx_header, slot->slot_bytes);
}

#else
/* A tree without the prog pack: its images are mappings of their own
 * (in_place_images.c), which vfree() would have unmapped. */
void bpfdiff_kjit_free_slot(const struct bpfdiff_kjit_slot *slot)
{
	const struct bpfdiff_kjit_world *w = session->world;

	w->slot_released(w->owner, slot->rx_header);
	w->exec_unmap(w->owner, slot->rx_header);
}
#endif

/* Text patching and cache maintenance: bpfdiff's patcher, which the
 * lifecycle checks watch. */

/* arch/arm64/kernel/patching.c's __text_poke() ends with
 * flush_icache_range() of what it wrote. Under core.c's pack that is the
 * flush its finalize and free rely on; bpfdiff's pack flushes in its own
 * finalize and free (jit/prog_pack.h), which do not come here. */
static void flush_after_poke(void *dst, size_t len)
{
	const struct bpfdiff_kjit_world *w = session->world;

	if (w->kernel_pack)
		w->flush_icache(w->owner, (uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)dst + len);
}

void *aarch64_insn_copy(void *dst, void *src, size_t len)
{
	const struct bpfdiff_kjit_world *w = session->world;

	if ((uintptr_t)dst & 3)
		return NULL;
	w->text_copy(w->owner, (uint64_t)(uintptr_t)dst, src, len);
	flush_after_poke(dst, len);
	return dst;
}

void *aarch64_insn_set(void *dst, u32 insn, size_t len)
{
	const struct bpfdiff_kjit_world *w = session->world;

	if ((uintptr_t)dst & 3)
		return NULL;
	w->text_set(w->owner, (uint64_t)(uintptr_t)dst, insn, len);
	flush_after_poke(dst, len);
	return dst;
}

/* As arch/arm64/kernel/patching.c: one word written, then its cache
 * maintenance (caches_clean_inval_pou). */
int aarch64_insn_patch_text_nosync(void *addr, u32 insn)
{
	const struct bpfdiff_kjit_world *w = session->world;

	if (!aarch64_insn_set(addr, insn, AARCH64_INSN_SIZE))
		return -EINVAL;
	if (!w->poke_without_flush)
		w->flush_icache(w->owner, (uint64_t)(uintptr_t)addr,
			(uint64_t)(uintptr_t)addr + AARCH64_INSN_SIZE);
	return 0;
}

int aarch64_insn_read(void *addr, u32 *insnp)
{
	const struct bpfdiff_kjit_world *w = session->world;
	uint32_t word;

	if (w->text_read(w->owner, (uint64_t)(uintptr_t)addr, &word) != 0)
		return -EFAULT;
	*insnp = word;
	return 0;
}

void flush_icache_range(unsigned long start, unsigned long end)
{
	const struct bpfdiff_kjit_world *w = session->world;

	bpfdiff_kjit_note_in_place_write(start, end);
	w->flush_icache(w->owner, start, end);
}

int set_memory_ro(unsigned long addr, int numpages) { (void)addr; (void)numpages; return 0; }
int set_memory_rw(unsigned long addr, int numpages) { (void)addr; (void)numpages; return 0; }

/* WRITE_ONCE() (kernelsrc/include/linux/compiler.h). A store into the
 * image of the program being poked is bpf_arch_text_poke()'s store of the
 * PLT's target, made after set_memory_rw(): it reaches the guest's RX
 * memory as the plain store it is, with no cache maintenance (the PLT
 * loads its target as data). The host's dummy_tramp becomes the guest's
 * stand-in, as in an image the JIT wrote (point_plt_at_guest). */
void bpfdiff_kjit_store(volatile void *to, const void *value, size_t bytes)
{
	const uint64_t at = (uint64_t)(uintptr_t)to;

	if (session && session->image_bytes && at >= session->symbol_start &&
	    at - session->symbol_start < session->image_bytes &&
	    bytes <= session->image_bytes - (at - session->symbol_start)) {
		const struct bpfdiff_kjit_world *w = session->world;
		uint64_t target;

		if (bytes == sizeof(target)) {
			memcpy(&target, value, sizeof(target));
			if (target == (uint64_t)(uintptr_t)&dummy_tramp)
				target = w->dummy_tramp;
			w->text_copy(w->owner, at, &target, sizeof(target));
			return;
		}
		w->text_copy(w->owner, at, value, bytes);
		return;
	}
	memcpy((void *)(uintptr_t)to, value, bytes);
}

struct mutex text_mutex;

/* What the verifier and kernel/bpf/core.c give the JIT. */

/* bpf_jit_enable and __bpf_call_base are kernel/bpf/core.c's. */

int bpf_jit_get_func_addr(const struct bpf_prog *prog, const struct bpf_insn *insn,
			  bool extra_pass, u64 *func_addr, bool *func_addr_fixed)
{
	const struct bpfdiff_kjit_world *w = session->world;

	if (insn->src_reg == BPF_PSEUDO_CALL) {
		/* As core.c: unknown until the extra pass, then the callee's image. */
		*func_addr_fixed = false;
		if (!extra_pass) {
			*func_addr = 0;
			return 0;
		}
		if (bpfdiff_kjit_inject_failure("bpf_jit_get_func_addr"))
			return -EINVAL;
		if (!prog->aux->func || (u32)insn->off >= prog->aux->func_cnt)
			return -EINVAL;
		*func_addr = (u64)(uintptr_t)prog->aux->func[insn->off]->bpf_func;
		return 0;
	}
	if (insn->src_reg == BPF_PSEUDO_KFUNC_CALL) {
		/* As core.c, after fixup_kfunc_call() made imm the function's
		 * distance from __bpf_call_base: a fixed address. */
		*func_addr_fixed = true;
		*func_addr = w->kfunc_address(w->owner, insn->imm);
		return 0;
	}
	if (insn->src_reg != 0) {
		bpfdiff_kernel_log("a call with src_reg %u is not one bpfdiff's world knows", insn->src_reg);
		return -EINVAL;
	}
	*func_addr_fixed = true;
	*func_addr = w->helper_address(w->owner, insn->imm);
	return 0;
}

/* bpf_jit_blind_constants() and bpf_jit_prog_release_other() are
 * kernel/bpf/core.c's. */

void bpf_prog_fill_jited_linfo(struct bpf_prog *prog, const u32 *insn_to_jit_off)
{
	/* The JIT passes ctx->offset + 1; the entry before is the first
	 * instruction's start, which bpfdiff's localization needs too. The
	 * offsets are kept by the instruction as loaded: a program whose
	 * constants were blinded has more instructions than that, and the line
	 * info (one entry per instruction loaded, which core.c's patching moves
	 * with the instructions, bpf_adj_linfo) says where each one's rewrite
	 * starts. */
	const u32 *starts = insn_to_jit_off - 1;
	const struct bpf_prog_aux *aux = prog->aux;
	u32 i;

	if (!aux->bpfdiff_offsets)
		return;
	if (!aux->linfo) {
		memcpy(aux->bpfdiff_offsets, starts, (prog->len + 1) * sizeof(u32));
		return;
	}
	for (i = 0; i < aux->nr_linfo; i++)
		aux->bpfdiff_offsets[i] = starts[aux->linfo[i].insn_off];
	aux->bpfdiff_offsets[aux->nr_linfo] = starts[prog->len];
	/* The second slot of a 64-bit load has no code of its own, as the
	 * JIT records it unblinded (ctx->offset of the next slot): blinding
	 * rewrites each half apart, and the state between them (the upper
	 * half loaded, the lower not yet) is no instruction boundary. */
	for (i = 0; aux->bpfdiff_insns && i + 1 < aux->nr_linfo; i++) {
		if (aux->bpfdiff_insns[i].code == (BPF_LD | BPF_IMM | BPF_DW)) {
			aux->bpfdiff_offsets[i + 1] = aux->bpfdiff_offsets[i + 2];
			i++;
		}
	}
}

void bpf_jit_dump(unsigned int flen, unsigned int proglen, u32 pass, void *image)
{
	(void)flen, (void)proglen, (void)pass, (void)image;
}

void bpf_prog_unlock_free(struct bpf_prog *fp) { (void)fp; }
bool bpf_prog_kallsyms_verify_off(const struct bpf_prog *fp) { (void)fp; return true; }
/* kallsyms knows the poked program's image, as bpf_prog_kallsyms_add()
 * made its symbol: [bpf_func, bpf_func + jited_len). */
#if BPFDIFF_TREE_ADDRESS_LOOKUP_INT
int
#else
const char *
#endif
__bpf_address_lookup(unsigned long addr, unsigned long *size, unsigned long *off, char *sym)
{
	if (!session || addr < session->symbol_start ||
	    addr - session->symbol_start >= session->symbol_bytes)
		return 0;
	*size = session->symbol_bytes;
	*off = addr - session->symbol_start;
	strcpy(sym, "bpf_prog");
#if BPFDIFF_TREE_ADDRESS_LOOKUP_INT
	return 1;
#else
	return sym;
#endif
}

u64 bpf_arena_get_kern_vm_start(struct bpf_arena *arena)
{
	return arena && session ? session->world->arena_kern_vm_start : 0;
}

u64 bpf_arena_get_user_vm_start(struct bpf_arena *arena)
{
	return arena && session ? session->world->arena_user_vm_start : 0;
}

/* What a trampoline calls (kernel/bpf/trampoline.c): guest code, at the
 * addresses the trampoline's request names. */
void (*bpfdiff_tramp_enter)(struct bpf_tramp_image *tr);
void (*bpfdiff_tramp_exit)(struct bpf_tramp_image *tr);
bpf_trampoline_enter_t bpf_trampoline_enter(const struct bpf_prog *prog)
{
	return (bpf_trampoline_enter_t)(uintptr_t)prog->bpfdiff_enter;
}
bpf_trampoline_exit_t bpf_trampoline_exit(const struct bpf_prog *prog)
{
	return (bpf_trampoline_exit_t)(uintptr_t)prog->bpfdiff_exit;
}
void bpf_tramp_image_put(struct bpf_tramp_image *im) { (void)im; }

/* The CPU bpfdiff models. */

bool cpus_have_cap(unsigned int num)
{
	if (!session)
		return false;
	if (num == ARM64_HAS_LSE_ATOMICS)
		return session->world->lse_atomics;
	if (num == ARM64_HAS_VIRT_HOST_EXTN)
		return session->world->vhe;
	return false;
}

/* The Spectre-BHB answers of arch/arm64/kernel/proton-pack.c and
 * kernel/cpu.c for the CPU and loader of the compile in progress
 * (kernel_loader.h); outside a compile, an unaffected CPU. */
enum mitigation_state arm64_get_spectre_v2_state(void)
{
	return session && session->world->spectre_v2_vulnerable ? SPECTRE_VULNERABLE : SPECTRE_UNAFFECTED;
}
u8 get_spectre_bhb_loop_value(void) { return session ? session->world->bhb_loop_k : 0; }
bool is_spectre_bhb_fw_mitigated(void) { return session && session->world->bhb_firmware; }
bool supports_clearbhb(int scope)
{
	(void)scope;
	return session && session->world->clearbhb;
}
/* The nospectre_bhb command-line switch; cpu_mitigations_off() stands
 * for both (mitigations=off). */
bool __nospectre_bhb;
bool cpu_mitigations_off(void) { return session && session->world->mitigations_off; }
struct user_namespace { int unused; } init_user_ns;
/* The loader's capability, as the verifier and core.c's blinding
 * (bpf_jit_blinding_enabled with bpf_jit_harden 1) ask it. */
bool bpf_capable(void) { return !session || session->world->capable; }
bool bpf_token_capable(const struct bpf_token *token, int cap)
{
	(void)token, (void)cap;
	return bpf_capable();
}

/* Randomness of core.c (the constants of blinding, a pack slot's start):
 * a generator restarted by every compile, so that a replay draws the same
 * values. */
u32 get_random_u32(void)
{
	/* xorshift64*, seeded per compile (bpfdiff_kjit_enter). */
	random_state ^= random_state >> 12;
	random_state ^= random_state << 25;
	random_state ^= random_state >> 27;
	return (u32)((random_state * 0x2545F4914F6CDD1DULL) >> 32);
}
u32 get_random_u32_below(u32 ceil) { return ceil ? get_random_u32() % ceil : 0; }

bool ns_capable_noaudit(struct user_namespace *ns, int cap)
{
	(void)ns, (void)cap;
	return !session || session->world->capable;
}
enum arm_smccc_conduit arm_smccc_1_1_get_conduit(void)
{
	if (!session)
		return SMCCC_CONDUIT_NONE;
	switch (session->world->smccc_conduit) {
	case 1:
		return SMCCC_CONDUIT_SMC;
	case 2:
		return SMCCC_CONDUIT_HVC;
	default:
		return SMCCC_CONDUIT_NONE;
	}
}

/* tools/include/linux/bitops.h declares it; tools/lib has the body. */
unsigned long __sw_hweight64(__u64 w) { return (unsigned long)__builtin_popcountll(w); }

struct bpfdiff_kjit_layout bpfdiff_kjit_get_layout(void)
{
	struct bpfdiff_kjit_layout layout = {
		.array_max_entries = offsetof(struct bpf_array, map.max_entries),
		.array_ptrs = offsetof(struct bpf_array, ptrs),
		.prog_bpf_func = offsetof(struct bpf_prog, bpf_func),
		.thread_info_cpu = offsetof(struct thread_info, cpu),
		.extable_entry_size = sizeof(struct exception_table_entry),
	};
	return layout;
}
