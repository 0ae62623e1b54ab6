/* The part of the kernel's include/linux/bpf.h that the arm64 JIT
 * (arch/arm64/net/bpf_jit_comp.c) uses, declared by bpfdiff. Layouts that
 * the JIT bakes into its code (offsetof in emit_bpf_tail_call) are fixed
 * here and checked against bpfdiff's guest layout at run time. */
#pragma once

#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/bitops.h>
#include <linux/err.h>
#include <linux/stddef.h>
#include <linux/bug.h>
#include <string.h>
#include <uapi/linux/bpf.h>
#include <asm/extable.h>
#include <asm/ptrace.h>
#include <asm/thread_info.h>

#define SZ_128M 0x08000000
/* For bpf_jit_alloc_exec_limit(), whose only caller (kernel/bpf/core.c) is
 * not built: bpfdiff's packs are its own guest regions. */
#define VMALLOC_START 0UL
#define VMALLOC_END 0UL
#define PAGE_SIZE 4096UL
#define PAGE_MASK (~(PAGE_SIZE - 1))
#define KSYM_NAME_LEN 512

#define MAX_TAIL_CALL_CNT 33
#define MAX_BPF_FUNC_ARGS 12
#define BPF_MAX_TRAMP_LINKS 38

struct bpf_map {
	u32 map_type;     /* guest offset 0 */
	u32 key_size;     /* 4 */
	u32 value_size;   /* 8 */
	u32 max_entries;  /* 12: read by the tail call */
	u64 values;       /* 16 */
	u64 reserved;     /* 24 */
};

struct bpf_array {
	struct bpf_map map;
	void *ptrs[];  /* 32: read by the tail call */
};

struct bpf_arena;
struct btf_func_model {
	u8 ret_size;
	u8 ret_flags;
	u8 nr_args;
	u8 arg_size[MAX_BPF_FUNC_ARGS];
	u8 arg_flags[MAX_BPF_FUNC_ARGS];
};
#define BTF_FMODEL_STRUCT_ARG 1

struct exception_table_entry;
struct bpf_prog;

struct bpf_prog_aux {
	u32 stack_depth;
	u32 func_idx;
	u32 func_cnt;
	u32 num_exentries;
	bool exception_cb;
	bool exception_boundary;
	bool tail_call_reachable;
	struct bpf_arena *arena;
	struct bpf_prog **func;
	void *jit_data;
	struct exception_table_entry *extable;  /* an RX guest address */
	/* Ours: where bpf_prog_fill_jited_linfo() keeps ctx->offset (in bytes,
	 * length + 1 entries) before the JIT frees it. */
	u32 *bpfdiff_offsets;
};

struct bpf_prog {
	/* An RX guest address held in a pointer. First: the guest's program
	 * objects keep it at offset 0, and the tail call reads it there. */
	void *bpf_func;
	u32 len;
	u16 jited:1, jit_requested:1, is_func:1, blinded:1;
	u32 jited_len;
	struct bpf_prog_aux *aux;
	/* Ours: the guest's __bpf_prog_enter*() and __bpf_prog_exit*() for
	 * this program, what bpf_trampoline_enter/exit() answer for it. */
	u64 bpfdiff_enter, bpfdiff_exit;
	/* BPF_PROG_TYPE_UNSPEC for a program converted from classic BPF
	 * (bpf_prog_was_classic); jit_subprogs.c sets it. */
	enum bpf_prog_type type;
	struct bpf_insn insnsi[];
};

enum bpf_link_type_shim { BPF_LINK_TYPE_SHIM_UNSPEC };
struct bpf_link {
	u32 type;
	struct bpf_prog *prog;
};
struct bpf_tramp_link {
	struct bpf_link link;
	u64 cookie;
};
struct bpf_tramp_links {
	struct bpf_tramp_link *links[BPF_MAX_TRAMP_LINKS];
	int nr_links;
};
struct bpf_tramp_image {
	void *image;
	int size;
	void *ip_after_call;
	void *ip_epilogue;
};
struct bpf_tramp_run_ctx {
	u64 bpf_cookie;
	u64 saved_run_ctx;
};
enum bpf_tramp_prog_type {
	BPF_TRAMP_FENTRY,
	BPF_TRAMP_FEXIT,
	BPF_TRAMP_MODIFY_RETURN,
	BPF_TRAMP_MAX,
	BPF_TRAMP_REPLACE,
};
#define BPF_TRAMP_F_RESTORE_REGS	BIT(0)
#define BPF_TRAMP_F_CALL_ORIG		BIT(1)
#define BPF_TRAMP_F_SKIP_FRAME		BIT(2)
#define BPF_TRAMP_F_IP_ARG		BIT(3)
#define BPF_TRAMP_F_RET_FENTRY_RET	BIT(4)
#define BPF_TRAMP_F_ORIG_STACK		BIT(5)
#define BPF_TRAMP_F_SHARE_IPMODIFY	BIT(6)
#define BPF_TRAMP_F_TAIL_CALL_CTX	BIT(7)
#define BPF_TRAMP_F_INDIRECT		BIT(8)

enum bpf_text_poke_type { BPF_MOD_CALL, BPF_MOD_JUMP };

typedef u64 (*bpf_trampoline_enter_t)(struct bpf_prog *prog, struct bpf_tramp_run_ctx *run_ctx);
typedef void (*bpf_trampoline_exit_t)(struct bpf_prog *prog, u64 start, struct bpf_tramp_run_ctx *run_ctx);
bpf_trampoline_enter_t bpf_trampoline_enter(const struct bpf_prog *prog);
bpf_trampoline_exit_t bpf_trampoline_exit(const struct bpf_prog *prog);
/* The trampoline calls these two by their address
 * (emit_call((const u64)__bpf_tramp_enter, ctx)), and they must be the
 * guest's: the names stand for variables that hold the guest addresses
 * (kernelsrc/trampoline.c sets them). */
extern void (*bpfdiff_tramp_enter)(struct bpf_tramp_image *tr);
extern void (*bpfdiff_tramp_exit)(struct bpf_tramp_image *tr);
#define __bpf_tramp_enter bpfdiff_tramp_enter
#define __bpf_tramp_exit bpfdiff_tramp_exit
u64 __bpf_prog_enter(struct bpf_prog *prog, struct bpf_tramp_run_ctx *run_ctx);

static inline bool bpf_is_subprog(const struct bpf_prog *prog) { return prog->aux->func_idx != 0; }
static inline bool bpf_prog_was_classic(const struct bpf_prog *prog) { return prog->type == BPF_PROG_TYPE_UNSPEC; }
static inline int btf_func_model_nregs_shim(void) { return 0; }

u64 bpf_arena_get_kern_vm_start(struct bpf_arena *arena);
u64 bpf_arena_get_user_vm_start(struct bpf_arena *arena);

bool bpf_jit_supports_kfunc_call(void);
bool bpf_jit_supports_subprog_tailcalls(void);
bool bpf_jit_supports_ptr_xchg(void);
bool bpf_jit_supports_percpu_insn(void);
bool bpf_jit_supports_exceptions(void);
bool bpf_jit_supports_arena(void);
bool bpf_jit_supports_insn(struct bpf_insn *insn, bool in_arena);
bool bpf_jit_inlines_helper_call(s32 imm);
bool bpf_jit_bypass_spec_v4(void);
u64 bpf_jit_alloc_exec_limit(void);

int arch_prepare_bpf_trampoline(struct bpf_tramp_image *im, void *ro_image, void *ro_image_end,
				const struct btf_func_model *m, u32 flags,
				struct bpf_tramp_links *tlinks, void *func_addr);
int arch_bpf_trampoline_size(const struct btf_func_model *m, u32 flags,
			     struct bpf_tramp_links *tlinks, void *func_addr);
void *arch_alloc_bpf_trampoline(unsigned int size);
void arch_free_bpf_trampoline(void *image, unsigned int size);
int arch_protect_bpf_trampoline(void *image, unsigned int size);
int bpf_arch_text_poke(void *ip, enum bpf_text_poke_type poke_type, void *old_addr, void *new_addr);
void *bpf_arch_text_copy(void *dst, void *src, size_t len);
int bpf_arch_text_invalidate(void *dst, size_t len);
void bpf_jit_free(struct bpf_prog *prog);
struct bpf_prog *bpf_int_jit_compile(struct bpf_prog *prog);
void bpf_tramp_image_put(struct bpf_tramp_image *im);
bool is_struct_ops_tramp_shim(void);
int __bpf_address_lookup(unsigned long addr, unsigned long *size, unsigned long *off, char *sym);
bool bpf_prog_kallsyms_verify_off(const struct bpf_prog *fp);
