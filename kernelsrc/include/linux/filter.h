/* The part of the kernel's include/linux/filter.h that the arm64 JIT uses,
 * declared by bpfdiff. */
#pragma once

#include <linux/bpf.h>

#define BPF_REG_0 0
#define BPF_REG_1 1
#define BPF_REG_2 2
#define BPF_REG_3 3
#define BPF_REG_4 4
#define BPF_REG_5 5
#define BPF_REG_6 6
#define BPF_REG_7 7
#define BPF_REG_8 8
#define BPF_REG_9 9
#define BPF_REG_10 10
#define BPF_REG_ARG1 BPF_REG_1
#define BPF_REG_FP BPF_REG_10
#define BPF_REG_AX MAX_BPF_REG
#define MAX_BPF_EXT_REG (MAX_BPF_REG + 1)
#define MAX_BPF_JIT_REG MAX_BPF_EXT_REG

/* Modes and opcodes the verifier writes for the JIT (kernel-internal). */
#define BPF_TAIL_CALL 0xf0
#define BPF_PROBE_MEM 0x20
#define BPF_PROBE_MEMSX 0x40
#define BPF_PROBE_MEM32 0xa0
#define BPF_PROBE_ATOMIC 0xe0
#define BPF_NOSPEC 0xc0
#define BPF_ADDR_SPACE_CAST 1
#define BPF_ADDR_PERCPU (-1)
#define BPF_CALL_IMM(x) ((void *)(x) - (void *)__bpf_call_base)

#define BPF_IMAGE_ALIGNMENT 8

struct bpf_binary_header {
	u32 size;
	u8 image[] __attribute__((aligned(BPF_IMAGE_ALIGNMENT)));
};

typedef void (*bpf_jit_fill_hole_t)(void *area, unsigned int size);

extern int bpf_jit_enable;
u64 __bpf_call_base(u64 r1, u64 r2, u64 r3, u64 r4, u64 r5);

struct bpf_binary_header *bpf_jit_binary_pack_alloc(unsigned int proglen, u8 **ro_image,
						    unsigned int alignment,
						    struct bpf_binary_header **rw_hdr, u8 **rw_image,
						    bpf_jit_fill_hole_t bpf_fill_ill_insns,
						    bool was_classic);
int bpf_jit_binary_pack_finalize(struct bpf_binary_header *ro_header,
				 struct bpf_binary_header *rw_header);
void bpf_jit_binary_pack_free(struct bpf_binary_header *ro_header,
			      struct bpf_binary_header *rw_header);
struct bpf_binary_header *bpf_jit_binary_pack_hdr(const struct bpf_prog *fp);
void *bpf_prog_pack_alloc(u32 size, bpf_jit_fill_hole_t bpf_fill_ill_insns, bool was_classic);
void bpf_prog_pack_free(void *ptr, u32 size);

int bpf_jit_get_func_addr(const struct bpf_prog *prog, const struct bpf_insn *insn,
			  bool extra_pass, u64 *func_addr, bool *func_addr_fixed);
struct bpf_prog *bpf_jit_blind_constants(struct bpf_prog *fp);
void bpf_jit_prog_release_other(struct bpf_prog *fp, struct bpf_prog *fp_other);
void bpf_prog_fill_jited_linfo(struct bpf_prog *prog, const u32 *insn_to_jit_off);
void bpf_jit_dump(unsigned int flen, unsigned int proglen, u32 pass, void *image);
void bpf_prog_unlock_free(struct bpf_prog *fp);

static inline bool insn_is_zext(const struct bpf_insn *insn)
{
	return insn->code == (BPF_ALU | BPF_MOV | BPF_X) && insn->imm == 1;
}
static inline bool insn_is_cast_user(const struct bpf_insn *insn)
{
	return insn->code == (BPF_ALU64 | BPF_MOV | BPF_X) && insn->off == BPF_ADDR_SPACE_CAST &&
	       insn->imm == 1U << 16;
}
static inline bool insn_is_mov_percpu_addr(const struct bpf_insn *insn)
{
	return insn->code == (BPF_ALU64 | BPF_MOV | BPF_X) && insn->off == BPF_ADDR_PERCPU;
}
static inline bool bpf_pseudo_func(const struct bpf_insn *insn)
{
	return insn->code == (BPF_LD | BPF_IMM | BPF_DW) && insn->src_reg == BPF_PSEUDO_FUNC;
}
