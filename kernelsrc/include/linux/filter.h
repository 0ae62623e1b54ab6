/* The part of the kernel's include/linux/filter.h that the arm64 JIT uses,
 * declared by bpfdiff. */
#pragma once

#include <linux/bpf.h>
/* The tools filter.h: the instruction-building macros (BPF_ALU64_IMM, ...)
 * that kernel/bpf/core.c's blinding writes its rewrites with. */
#include_next <linux/filter.h>
#include <linux/u64_stats_sync.h>

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

#if !BPFDIFF_TREE_HAS_PROG_PACK
#include <linux/vmalloc.h> /* bpf_jit_alloc_exec(): vmalloc, kasan_reset_tag */
/* A JIT without the prog pack (6.1) writes its image in place: core.c's
 * allocator, over the arch's bpf_jit_alloc_exec() (in_place_images.c). */
struct bpf_binary_header *bpf_jit_binary_alloc(unsigned int proglen, u8 **image_ptr,
					       unsigned int alignment,
					       bpf_jit_fill_hole_t bpf_fill_ill_insns);
void bpf_jit_binary_free(struct bpf_binary_header *hdr);
void *bpf_jit_alloc_exec(unsigned long size);
void bpf_jit_free_exec(void *addr);
void bpfdiff_kjit_lock_ro(struct bpf_binary_header *hdr);
/* The kernel's (6.1): set_vm_flush_reset_perms, set_memory_ro and
 * set_memory_x over hdr->size. Here the moment the image is done. */
static inline void bpf_jit_binary_lock_ro(struct bpf_binary_header *hdr) { bpfdiff_kjit_lock_ro(hdr); }
#endif
struct bpf_binary_header *bpf_jit_binary_pack_alloc(unsigned int proglen, u8 **ro_image,
						    unsigned int alignment,
						    struct bpf_binary_header **rw_hdr, u8 **rw_image,
						    bpf_jit_fill_hole_t bpf_fill_ill_insns,
						    bool was_classic);
#if BPFDIFF_TREE_PACK_FINALIZE_PROG
int bpf_jit_binary_pack_finalize(struct bpf_prog *prog, struct bpf_binary_header *ro_header,
				 struct bpf_binary_header *rw_header);
#else
int bpf_jit_binary_pack_finalize(struct bpf_binary_header *ro_header,
				 struct bpf_binary_header *rw_header);
#endif
void bpf_jit_binary_pack_free(struct bpf_binary_header *ro_header,
			      struct bpf_binary_header *rw_header);
struct bpf_binary_header *bpf_jit_binary_pack_hdr(const struct bpf_prog *fp);
void *bpf_prog_pack_alloc(u32 size, bpf_jit_fill_hole_t bpf_fill_ill_insns, bool was_classic);
#if BPFDIFF_TREE_HAS_PROG_PACK
void bpf_prog_pack_free(void *ptr, u32 size);
#else
void bpf_prog_pack_free(struct bpf_binary_header *hdr);
#endif

int bpf_jit_get_func_addr(const struct bpf_prog *prog, const struct bpf_insn *insn,
			  bool extra_pass, u64 *func_addr, bool *func_addr_fixed);
struct bpf_prog *bpf_jit_blind_constants(struct bpf_prog *fp);
void bpf_jit_prog_release_other(struct bpf_prog *fp, struct bpf_prog *fp_other);
void bpf_prog_fill_jited_linfo(struct bpf_prog *prog, const u32 *insn_to_jit_off);
void bpf_jit_dump(unsigned int flen, unsigned int proglen, u32 pass, void *image);
void bpf_prog_unlock_free(struct bpf_prog *fp);
/* What the verifier uses of core.c to prepare a program for its
 * interpreter (kernelsrc/interpreter.c). */
void bpf_patch_call_args(struct bpf_insn *insn, u32 stack_depth);
bool bpf_opcode_in_insntable(u8 code);

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

/* ---- What kernel/bpf/core.c uses besides (the kernel's declarations). ---- */

#define BPF_CALL_ARGS 0xe0
#define __bpf_call_base_args \
	((u64 (*)(u64, u64, u64, u64, u64, const struct bpf_insn *))(void *)__bpf_call_base)

struct sock_filter;
struct sock_fprog_kern {
	u16 len;
	struct sock_filter *filter;
};
struct bpf_prog_stats {
	u64_stats_t cnt;
	u64_stats_t nsecs;
	u64_stats_t misses;
	struct u64_stats_sync syncp;
} __attribute__((aligned(2 * sizeof(u64))));

extern int bpf_jit_harden;
extern int bpf_jit_kallsyms;
extern long bpf_jit_limit;
extern long bpf_jit_limit_max;

/* The loader's capability, as bpf_token_capable(token, CAP_BPF) answers
 * it: the compile's loader (kernelsrc/kernel_loader.h). */
bool bpf_token_capable(const struct bpf_token *token, int cap);
#define CAP_BPF 39

static inline bool bpf_jit_is_ebpf(void) { return true; } /* CONFIG_HAVE_EBPF_JIT */
static inline bool ebpf_jit_enabled(void) { return bpf_jit_enable && bpf_jit_is_ebpf(); }
static inline bool bpf_jit_blinding_enabled(struct bpf_prog *prog)
{
	if (!bpf_jit_is_ebpf())
		return false;
	if (!prog->jit_requested)
		return false;
	if (!bpf_jit_harden)
		return false;
	if (bpf_jit_harden == 1 && bpf_token_capable(prog->aux->token, CAP_BPF))
		return false;
	return true;
}
static inline bool bpf_jit_kallsyms_enabled(void)
{
	if (bpf_jit_harden)
		return false;
	if (!bpf_jit_kallsyms)
		return false;
	if (bpf_jit_kallsyms == 1)
		return true;
	return false;
}
static inline u32 bpf_prog_insn_size(const struct bpf_prog *prog) { return prog->len * sizeof(struct bpf_insn); }
#define SHA1_BLOCK_SIZE 64
#define SHA1_DIGEST_WORDS 5
#define SHA1_WORKSPACE_WORDS 16
static inline u32 bpf_prog_tag_scratch_size(const struct bpf_prog *prog)
{
	return round_up(bpf_prog_insn_size(prog) + sizeof(__be64) + 1, SHA1_BLOCK_SIZE);
}
static inline unsigned int bpf_prog_size(unsigned int proglen)
{
	return max(sizeof(struct bpf_prog), offsetof(struct bpf_prog, insnsi[proglen]));
}
void sha1_init(__u32 *buf);
void sha1_transform(__u32 *digest, const char *data, __u32 *W);
static inline int bpf_prog_lock_ro(struct bpf_prog *fp) { (void)fp; return 0; }
bool bpf_jit_needs_zext(void);
void bpf_jit_compile(struct bpf_prog *prog);
/* A helper of kernel/bpf/core.c with no argument (the kernel's BPF_CALL_0,
 * written for the one arity core.c defines). */
#define BPF_CALL_0(name)                                           \
	static inline u64 ____##name(void);                        \
	u64 name(u64 r1, u64 r2, u64 r3, u64 r4, u64 r5)           \
	{                                                          \
		(void)r1, (void)r2, (void)r3, (void)r4, (void)r5;  \
		return ____##name();                               \
	}                                                          \
	static inline u64 ____##name(void)
/* The three instruction builders of the kernel's filter.h that the tools
 * one lacks: an ALU operation with an offset (signed division and modulo,
 * BPF_MOVSX), and the verifier's zero-extension (a mov32 with imm 1). */
#define BPF_ALU64_REG_OFF(OP, DST, SRC, OFF) \
	((struct bpf_insn){ .code = BPF_ALU64 | BPF_OP(OP) | BPF_X, .dst_reg = DST, .src_reg = SRC, .off = OFF, .imm = 0 })
#define BPF_ALU32_REG_OFF(OP, DST, SRC, OFF) \
	((struct bpf_insn){ .code = BPF_ALU | BPF_OP(OP) | BPF_X, .dst_reg = DST, .src_reg = SRC, .off = OFF, .imm = 0 })
#define BPF_ZEXT_REG(DST) \
	((struct bpf_insn){ .code = BPF_ALU | BPF_MOV | BPF_X, .dst_reg = DST, .src_reg = DST, .off = 0, .imm = 1 })
static inline bool bpf_prog_ebpf_jited(const struct bpf_prog *fp) { return fp->jited && bpf_jit_is_ebpf(); }
#define BPF_SYM_ELF_TYPE 't'

/* ---- What lib/test_bpf.c uses besides: the kernel's builders of the
 * instructions the tools filter.h lacks, classic blocks for direct
 * assignment, a helper of one argument, and the run of a program. ---- */

#define BPF_ALU64_IMM_OFF(OP, DST, IMM, OFF) \
	((struct bpf_insn){ .code = BPF_ALU64 | BPF_OP(OP) | BPF_K, .dst_reg = DST, .src_reg = 0, .off = OFF, .imm = IMM })
#define BPF_ALU32_IMM_OFF(OP, DST, IMM, OFF) \
	((struct bpf_insn){ .code = BPF_ALU | BPF_OP(OP) | BPF_K, .dst_reg = DST, .src_reg = 0, .off = OFF, .imm = IMM })
/* bswap16/32/64: BPF_END in the ALU64 class, whatever the source bit says */
#define BPF_BSWAP(DST, LEN) \
	((struct bpf_insn){ .code = BPF_ALU64 | BPF_END | BPF_SRC(BPF_TO_LE), .dst_reg = DST, .src_reg = 0, .off = 0, .imm = LEN })
#define BPF_LDX_MEMSX(SIZE, DST, SRC, OFF) \
	((struct bpf_insn){ .code = BPF_LDX | BPF_SIZE(SIZE) | BPF_MEMSX, .dst_reg = DST, .src_reg = SRC, .off = OFF, .imm = 0 })
/* gotol: the long jump, its distance in imm (entries bpfdiff exports use it) */
#define BPF_JMP32_A(IMM) \
	((struct bpf_insn){ .code = BPF_JMP32 | BPF_JA, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = IMM })
#define __BPF_STMT(CODE, K) ((struct sock_filter)BPF_STMT(CODE, K))
#define __BPF_JUMP(CODE, K, JT, JF) ((struct sock_filter)BPF_JUMP(CODE, K, JT, JF))
/* A helper of one argument (the kernel's BPF_CALL_1, for the one
 * argument type it is used with: u64). */
#define BPF_CALL_1(name, type1, arg1)                              \
	static inline u64 ____##name(type1 arg1);                  \
	u64 name(u64 r1, u64 r2, u64 r3, u64 r4, u64 r5)           \
	{                                                          \
		(void)r2, (void)r3, (void)r4, (void)r5;            \
		return ____##name((type1)r1);                      \
	}                                                          \
	static inline u64 ____##name(type1 arg1)
/* net/core/filter.c's classic loader, which bpfdiff does not compile:
 * classic cases are left out of bpfdiff's runs (SHIMS.md, "test_bpf.c"). */
int bpf_prog_create(struct bpf_prog **pfp, struct sock_fprog_kern *fprog);
void bpf_prog_destroy(struct bpf_prog *fp);
struct bpf_prog *bpf_prog_select_runtime(struct bpf_prog *fp, int *err);
/* bpf_prog_run() without statistics or a dispatcher: the program's entry
 * with its context and instructions, as __bpf_prog_run() calls it. */
static inline u32 bpf_prog_run(const struct bpf_prog *prog, const void *ctx)
{
	unsigned int (*bpf_func)(const void *, const struct bpf_insn *) = prog->bpf_func;

	return bpf_func(ctx, prog->insnsi);
}
