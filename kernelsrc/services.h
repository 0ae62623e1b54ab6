/* The state of the compile in progress, shared by the driver
 * (jit_subprogs.c) and the kernel services (services.c). */
#ifndef BPFDIFF_KERNELSRC_SERVICES_H
#define BPFDIFF_KERNELSRC_SERVICES_H

#include <setjmp.h>
#include <stdint.h>

#include "kernelsrc/bridge.h"

struct bpfdiff_kjit_slot {
	uint64_t rx_header;
	uint8_t *rw_image; /* until finalize */
	uint32_t image_bytes;
	uint64_t rx_image; /* a trampoline's (bpf_prog_pack_alloc's answer) */
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
};

/* The kernel's code reaches bpfdiff's world through the session of the
 * thread's compile in progress. */
void bpfdiff_kjit_enter(struct bpfdiff_kjit_session *session);
void bpfdiff_kjit_leave(void);
/* Frees what the kernel's code allocated and did not free. */
void bpfdiff_kjit_free_leftovers(struct bpfdiff_kjit_session *session);

#endif
