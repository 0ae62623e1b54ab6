/* Images written in place, for a tree whose arm64 JIT has no prog pack
 * (BPFDIFF_TREE_HAS_PROG_PACK 0: Linux 6.1, and every tree before 6.2's
 * "bpf, arm64: use bpf_prog_pack for memory management").
 *
 * Such a JIT calls kernel/bpf/core.c's bpf_jit_binary_alloc(), which takes
 * whole pages from the arch's bpf_jit_alloc_exec() (arm64's: vmalloc()),
 * fills them with illegal instructions and picks a random hole before the
 * image. The JIT writes its code into those pages through the pointer it
 * got, flushes the instruction cache (bpf_flush_icache()), and makes the
 * pages read-only and executable (bpf_jit_binary_lock_ro()). Its free is
 * core.c's __weak bpf_jit_free(): the header is bpf_func's page, and
 * bpf_jit_binary_free() hands it back to bpf_jit_free_exec() (vfree()).
 *
 * All of that is the tree's code. Ours is only what lies below it:
 *  - vmalloc() maps guest memory (bridge.h, exec_map), which the world
 *    shows at its guest addresses in this process (KernelPack), so that
 *    core.c fills it and the JIT writes its code where the guest will run
 *    it, as the kernel does. In these files only bpf_jit_alloc_exec()
 *    calls vmalloc() (core.c's programs come from __vmalloc(), the host
 *    heap: services.c; bpf_prog_calc_tag()'s buffer is not reached).
 *  - vfree() of such memory unmaps it (exec_unmap: filled with BRK and
 *    flushed, as a new mapping); of anything else, the heap's free.
 *  - bpf_jit_binary_lock_ro() (6.1's filter.h: set_memory_ro, set_memory_x)
 *    is where the image is done: the slot is marked finalized, and the
 *    PLT's target (the host's dummy_tramp) becomes the guest's. It flushes
 *    nothing: the tree's own bpf_flush_icache() must have.
 *  - The world learns where the image starts (it is not in the header)
 *    once the JIT returns, from bpf_func: bpfdiff_kjit_placed(), called by
 *    jit_subprogs.c after each bpf_int_jit_compile(). The slot is the
 *    mapping; the image runs from bpf_func to its end (code, the PLT's
 *    target, the exception table, the fill after them).
 */
#include <linux/filter.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernelsrc/services.h"

#if !BPFDIFF_TREE_HAS_PROG_PACK

static struct bpfdiff_kjit_slot *mapping_at(struct bpfdiff_kjit_session *s, uint64_t address)
{
	uint32_t i;

	for (i = 0; i < s->slot_count; i++) {
		if (s->slots[i].rx_header == address)
			return &s->slots[i];
	}
	return NULL;
}

void *vmalloc(unsigned long size)
{
	struct bpfdiff_kjit_session *s = bpfdiff_kjit_current();
	uint64_t address;

	if (!s) {
		bpfdiff_core_unmodelled("vmalloc outside a compile");
		return NULL;
	}
	if (s->slot_count == s->slot_capacity) {
		bpfdiff_kernel_log("more executable mappings than functions");
		return NULL;
	}
	/* vmalloc's failure, under memory pressure. */
	if (bpfdiff_kjit_inject_failure("vmalloc"))
		return NULL;
	address = s->world->exec_map(s->world->owner, size);
	if (!address)
		return NULL;
	s->slots[s->slot_count++] = (struct bpfdiff_kjit_slot){
		.rx_header = address,
		.slot_bytes = (uint32_t)round_up(size, PAGE_SIZE),
	};
	return (void *)(uintptr_t)address;
}

/* The mapping goes: the world is told first (it disowns the image), then
 * the range is unmapped. */
static void unmap(struct bpfdiff_kjit_session *s, struct bpfdiff_kjit_slot *slot)
{
	const uint64_t address = slot->rx_header;

	*slot = s->slots[--s->slot_count];
	s->world->slot_released(s->world->owner, address);
	s->world->exec_unmap(s->world->owner, address);
}

void vfree(const void *addr)
{
	struct bpfdiff_kjit_session *s = bpfdiff_kjit_current();
	struct bpfdiff_kjit_slot *slot;

	if (!addr)
		return;
	slot = s ? mapping_at(s, (uint64_t)(uintptr_t)addr) : NULL;
	if (slot) {
		unmap(s, slot);
		return;
	}
	bpfdiff_kjit_heap_free(addr, "vfree");
}

void bpfdiff_kjit_lock_ro(struct bpf_binary_header *hdr)
{
	struct bpfdiff_kjit_session *s = bpfdiff_kjit_current();
	struct bpfdiff_kjit_slot *slot = mapping_at(s, (uint64_t)(uintptr_t)hdr);

	if (!slot) {
		bpfdiff_kernel_log("bpf_jit_binary_lock_ro(%p) of memory not from bpf_jit_alloc_exec()", (void *)hdr);
		BUG();
	}
	if (slot->finalized) {
		bpfdiff_kernel_log("bpf_jit_binary_lock_ro(%p) twice", (void *)hdr);
		BUG();
	}
	/* The PLT is looked for over the whole mapping: where the image
	 * starts is known only when the JIT returns. */
	bpfdiff_kjit_point_plt_at_guest((u8 *)hdr, slot->rx_header, slot->slot_bytes);
	slot->finalized = 1;
	slot->told_finalized = 0;
}

void bpfdiff_kjit_placed(struct bpf_prog *prog)
{
	struct bpfdiff_kjit_session *s = bpfdiff_kjit_current();
	const uint64_t image = (uint64_t)(uintptr_t)prog->bpf_func;
	const struct bpfdiff_kjit_world *w = s->world;
	uint32_t i;

	if (!prog->jited || !image)
		return;
	for (i = 0; i < s->slot_count; i++) {
		struct bpfdiff_kjit_slot *slot = &s->slots[i];

		if (image < slot->rx_header || image - slot->rx_header >= slot->slot_bytes)
			continue;
		if (!slot->rx_image) {
			slot->rx_image = image;
			slot->image_bytes = (uint32_t)(slot->rx_header + slot->slot_bytes - image);
			w->slot_adopted(w->owner, slot->rx_header, slot->slot_bytes, slot->rx_image,
					slot->image_bytes);
		}
		if (slot->finalized && !slot->told_finalized) {
			/* The bytes as the JIT left them at lock_ro: nothing
			 * wrote to them since. */
			w->slot_finalized(w->owner, slot->rx_header, (const u8 *)(uintptr_t)slot->rx_image,
					  slot->image_bytes);
			slot->told_finalized = 1;
		}
		return;
	}
}

/* A trampoline (trampoline.c): the page is its image, from its start,
 * and done once made executable. */
void bpfdiff_kjit_trampoline_placed(void *image, uint32_t size)
{
	struct bpfdiff_kjit_session *s = bpfdiff_kjit_current();
	struct bpfdiff_kjit_slot *slot = mapping_at(s, (uint64_t)(uintptr_t)image);
	const struct bpfdiff_kjit_world *w = s->world;

	if (!slot) {
		bpfdiff_kernel_log("the trampoline at %p is not memory from bpf_jit_alloc_exec()", image);
		BUG();
	}
	slot->rx_image = slot->rx_header;
	slot->image_bytes = size;
	slot->finalized = 1;
	slot->told_finalized = 1;
	w->slot_adopted(w->owner, slot->rx_header, slot->slot_bytes, slot->rx_image, size);
	w->slot_finalized(w->owner, slot->rx_header, NULL, 0);
}

/* The JIT writes its image through plain stores, which the world does not
 * see; the flush it then asks for (bpf_flush_icache(header, end of code),
 * after each pass) covers what it wrote. That range is told to the world
 * as written (a copy of the bytes onto themselves, so that the text
 * patcher knows what the flush is for) just before the flush. A write the
 * JIT never flushes is never told either: the count of writes and
 * flushes per image (the lifecycle world's one-cache-op-per-range) is what
 * shows it. */
void bpfdiff_kjit_note_in_place_write(uint64_t start, uint64_t end)
{
	struct bpfdiff_kjit_session *s = bpfdiff_kjit_current();
	uint8_t *bytes;
	uint32_t i;

	if (!s || end <= start)
		return;
	for (i = 0; i < s->slot_count; i++) {
		const struct bpfdiff_kjit_slot *slot = &s->slots[i];

		if (slot->finalized || start < slot->rx_header || end > slot->rx_header + slot->slot_bytes)
			continue;
		bytes = malloc(end - start);
		if (!bytes)
			return;
		memcpy(bytes, (const void *)(uintptr_t)start, end - start);
		s->world->text_copy(s->world->owner, start, bytes, end - start);
		free(bytes);
		return;
	}
}

#endif
