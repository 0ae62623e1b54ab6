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

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/list.h>
#include <linux/rbtree_latch.h>
#include <linux/workqueue.h>
#include <linux/percpu.h>
#include <linux/atomic.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/bitmap.h>
#include <asm/set_memory.h>

#define SZ_128M 0x08000000
/* arm64's vmalloc area with 48-bit virtual addresses and 4 KiB pages
 * (asm/pgtable.h, asm/memory.h: VMALLOC_START is MODULES_END,
 * VMALLOC_END is VMEMMAP_START - SZ_8M), for bpf_jit_alloc_exec_limit(),
 * from which core.c's bpf_jit_charge_init() sets bpf_jit_limit. Only the
 * charge limit depends on it: where executable memory lies is bpfdiff's
 * guest pack regions (execmem_alloc, core_services.c). */
#define VMALLOC_START 0xffff800080000000UL
#define VMALLOC_END 0xfffffdffbf800000UL
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
	/* kernel/bpf/core.c's, host-side only (the guest's map objects hold
	 * zeros here): the program array's owner and the map's operations. */
	const struct bpf_map_ops *ops;           /* 32 */
	struct bpf_map_owner *owner;             /* 40 */
	atomic64_t sleepable_refcnt;             /* 48 */
	spinlock_t owner_lock;                   /* 56 */
};

struct bpf_array {
	struct bpf_map map;
	void *ptrs[];  /* 64: read by the tail call */
};

struct bpf_arena;
struct btf;
struct btf_type;
struct bpf_token;
struct bpf_trampoline;
struct bpf_kfunc_desc_tab;
struct bpf_line_info;
struct bpf_cgroup_storage { u64 cookie; };
struct bpf_prog_offload { struct bpf_prog *prog; };
struct sock_fprog_kern;
struct bpf_prog_stats;

struct bpf_prog_aux;
/* The operations of a map that core.c calls: a program array's tracking
 * of the programs that poke it. */
struct bpf_map_ops {
	int (*map_poke_track)(struct bpf_map *map, struct bpf_prog_aux *aux);
	void (*map_poke_untrack)(struct bpf_map *map, struct bpf_prog_aux *aux);
};
struct btf_mod_pair {
	struct btf *btf;
	struct module *module;
};
struct bpf_ksym {
	unsigned long start;
	unsigned long end;
	char name[KSYM_NAME_LEN];
	struct list_head lnode;
	struct latch_tree_node tnode;
	bool prog;
};
struct bpf_jit_poke_descriptor {
	void *tailcall_target;
	void *tailcall_bypass;
	void *bypass_addr;
	void *aux;
	union {
		struct {
			struct bpf_map *map;
			u32 key;
		} tail_call;
	};
	bool tailcall_target_stable;
	u8 adj_off;
	u16 reason;
	u32 insn_idx;
};
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
	/* Ours: the function's instructions as loaded, before any rewrite
	 * (the offsets are kept by them). */
	const struct bpf_insn *bpfdiff_insns;
	/* What kernel/bpf/core.c reads and writes of the rest (the kernel's
	 * names and types; bpfdiff sets what the verifier would). */
	u32 id;
	u32 func_info_cnt;
	bool verifier_zext;
	char name[BPF_OBJ_NAME_LEN];
	struct btf *btf;
	struct bpf_func_info *func_info;
	struct bpf_kfunc_btf_tab *kfunc_btf_tab;
	struct bpf_prog_offload *offload;
	u32 real_func_cnt;
	u32 used_map_cnt;
	u32 used_btf_cnt;
	u32 linfo_idx;
	u32 nr_linfo;
	u32 size_poke_tab;
	bool xdp_has_frags;
	struct bpf_prog *prog;
	struct bpf_map **used_maps;
	struct btf_mod_pair *used_btfs;
	struct bpf_line_info *linfo;
	void **jited_linfo;
	struct bpf_jit_poke_descriptor *poke_tab;
	struct bpf_kfunc_desc_tab *kfunc_tab;
	struct bpf_token *token;
	const struct btf_type *attach_func_proto;
	struct bpf_prog *dst_prog;
	struct bpf_trampoline *dst_trampoline;
	struct bpf_ksym ksym;
	struct bpf_cgroup_storage *cgroup_storage[2]; /* MAX_BPF_CGROUP_STORAGE_TYPE */
	struct mutex used_maps_mutex;
	struct mutex ext_mutex;
	struct mutex dst_mutex;
	struct work_struct work;
};

struct bpf_prog {
	/* An RX guest address held in a pointer. First: the guest's program
	 * objects keep it at offset 0, and the tail call reads it there. */
	void *bpf_func;
	u32 len;
	u16 jited:1, jit_requested:1, is_func:1, blinded:1, blinding_requested:1, gpl_compatible:1,
	    cb_access:1, dst_needed:1, kprobe_override:1, has_callchain_buf:1,
	    enforce_expected_attach_type:1, call_get_stack:1, call_get_func_ip:1,
	    tstamp_type_access:1, sleepable:1;
	/* kernel/bpf/core.c's: pages of the allocation (bpf_prog_alloc,
	 * bpf_prog_realloc and the clone of blinding copy them whole), the
	 * per-CPU statistics and recursion counter, and the tag. */
	u16 pages;
	u8 tag[BPF_TAG_SIZE];
	struct bpf_prog_stats __percpu *stats;
	int __percpu *active;
	enum bpf_attach_type expected_attach_type;
	struct sock_fprog_kern *orig_prog;
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
#if BPFDIFF_TREE_ADDRESS_LOOKUP_INT
int __bpf_address_lookup(unsigned long addr, unsigned long *size, unsigned long *off, char *sym);
#else
const char *__bpf_address_lookup(unsigned long addr, unsigned long *size, unsigned long *off, char *sym);
#endif
bool bpf_prog_kallsyms_verify_off(const struct bpf_prog *fp);

/* ---- What kernel/bpf/core.c uses besides (the kernel's declarations). ---- */

enum bpf_cgroup_storage_type {
	BPF_CGROUP_STORAGE_SHARED,
	BPF_CGROUP_STORAGE_PERCPU,
	__BPF_CGROUP_STORAGE_MAX
};
#define MAX_BPF_CGROUP_STORAGE_TYPE __BPF_CGROUP_STORAGE_MAX
/* CONFIG_CGROUP_BPF is not built (prelude.h). */
#define for_each_cgroup_storage_type(stype) for (; false; )

struct bpf_map_owner {
	enum bpf_prog_type type;
	bool jited;
	bool xdp_has_frags;
	u64 storage_cookie[MAX_BPF_CGROUP_STORAGE_TYPE];
	const struct btf_type *attach_func_proto;
	enum bpf_attach_type expected_attach_type;
};
static inline struct bpf_map_owner *bpf_map_owner_alloc(struct bpf_map *map)
{
	(void)map;
	return kzalloc(sizeof(struct bpf_map_owner), GFP_ATOMIC);
}
static inline bool map_type_contains_progs(struct bpf_map *map)
{
	return map->map_type == BPF_MAP_TYPE_PROG_ARRAY || map->map_type == BPF_MAP_TYPE_DEVMAP ||
	       map->map_type == BPF_MAP_TYPE_CPUMAP;
}
static inline enum bpf_prog_type resolve_prog_type(const struct bpf_prog *prog)
{
	return (prog->type == BPF_PROG_TYPE_EXT && prog->aux->dst_prog) ? prog->aux->dst_prog->type : prog->type;
}
static inline bool bpf_prog_is_dev_bound(const struct bpf_prog_aux *aux) { (void)aux; return false; }
static inline bool bpf_prog_is_offloaded(const struct bpf_prog_aux *aux) { (void)aux; return false; }
static inline int bpf_prog_offload_compile(struct bpf_prog *prog) { (void)prog; return -EOPNOTSUPP; }
static inline void bpf_prog_dev_bound_destroy(struct bpf_prog *prog) { (void)prog; }
/* 6.1's name for it. */
static inline void bpf_prog_offload_destroy(struct bpf_prog *prog) { (void)prog; }
static inline gfp_t bpf_memcg_flags(gfp_t flags) { return flags; }
bool bpf_prog_has_kfunc_call(const struct bpf_prog *prog);

enum bpf_return_type { RET_INTEGER, RET_VOID };
enum bpf_arg_type { ARG_DONTCARE, ARG_CONST_MAP_PTR, ARG_PTR_TO_CTX, ARG_ANYTHING };
struct bpf_func_proto {
	u64 (*func)(u64 r1, u64 r2, u64 r3, u64 r4, u64 r5);
	bool gpl_only;
	bool pkt_access;
	bool might_sleep;
	bool allow_fastcall;
	enum bpf_return_type ret_type;
	union {
		struct {
			enum bpf_arg_type arg1_type;
			enum bpf_arg_type arg2_type;
			enum bpf_arg_type arg3_type;
			enum bpf_arg_type arg4_type;
			enum bpf_arg_type arg5_type;
		};
		enum bpf_arg_type arg_type[5];
	};
};
typedef unsigned long (*bpf_ctx_copy_t)(void *dst, const void *src, unsigned long off, unsigned long len);

struct bpf_prog_array_item {
	struct bpf_prog *prog;
	union {
		struct bpf_cgroup_storage *cgroup_storage[MAX_BPF_CGROUP_STORAGE_TYPE];
		u64 bpf_cookie;
	};
};
struct rcu_head { void *next; void (*func)(struct rcu_head *head); };
struct bpf_prog_array {
	struct rcu_head rcu;
	struct bpf_prog_array_item items[];
};
struct bpf_empty_prog_array {
	struct bpf_prog_array hdr;
	struct bpf_prog *null_prog;
};
#define BPF_PTR_POISON ((void *)(0xeB9FUL + 0))

void bpf_map_put(struct bpf_map *map);
void bpf_prog_put(struct bpf_prog *prog);
void bpf_token_put(struct bpf_token *token);
void bpf_trampoline_put(struct bpf_trampoline *tr);
void bpf_prog_array_delete_safe(struct bpf_prog_array *progs, struct bpf_prog *old_prog);
int bpf_prog_array_update_at(struct bpf_prog_array *array, int index, struct bpf_prog *prog);
void bpf_prog_kallsyms_del(struct bpf_prog *fp);
void bpf_prog_kallsyms_add(struct bpf_prog *fp);
void bpf_user_rnd_init_once(void);
u64 bpf_user_rnd_u32(u64 r1, u64 r2, u64 r3, u64 r4, u64 r5);
u64 bpf_get_raw_cpu_id(u64 r1, u64 r2, u64 r3, u64 r4, u64 r5);
void __bpf_free_used_maps(struct bpf_prog_aux *aux, struct bpf_map **used_maps, u32 len);
#if BPFDIFF_TREE_FREE_USED_BTFS_AUX
void __bpf_free_used_btfs(struct bpf_prog_aux *aux, struct btf_mod_pair *used_btfs, u32 len);
#else
void __bpf_free_used_btfs(struct btf_mod_pair *used_btfs, u32 len);
#endif
void bpf_prog_free(struct bpf_prog *fp);
struct bpf_prog *bpf_prog_alloc(unsigned int size, gfp_t gfp_extra_flags);
struct bpf_prog *bpf_prog_alloc_no_stats(unsigned int size, gfp_t gfp_extra_flags);
struct bpf_prog *bpf_prog_realloc(struct bpf_prog *fp_old, unsigned int size, gfp_t gfp_extra_flags);
void __bpf_prog_free(struct bpf_prog *fp);
int bpf_probe_read_kernel_common(void *dst, u32 size, const void *unsafe_ptr);
enum bpf_jit_poke_reason { BPF_POKE_REASON_TAIL_CALL };
bool bpf_capable(void);
int bpf_get_kfunc_addr(const struct bpf_prog *prog, u32 func_id, u16 btf_fd_idx, u8 **func_addr);
void bpf_free_kfunc_btf_tab(struct bpf_kfunc_btf_tab *tab);
void module_put(struct module *module);
bool bpf_jit_supports_far_kfunc_call(void);
void *bpf_jit_alloc_exec(unsigned long size);
void bpf_jit_free_exec(void *addr);
