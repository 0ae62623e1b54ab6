/* The services kernel/bpf/core.c links against beyond those of the JIT
 * (services.c): the library routines it calls (lib/bitmap.c's __bitmap_clear,
 * bin2hex, strscpy), and, for what bpfdiff's world does not model, a trap.
 *
 * A trap is not a stub that pretends: core.c is compiled whole, but
 * bpfdiff drives only part of it (its blinding, the JIT's entry points),
 * and the rest calls services of a running kernel (BTF, kfunc tables,
 * kallsyms trees, module references, user copies). Should a change to the
 * tree or to bpfdiff reach one, the call fails the compile that made it
 * (as BUG() does, services.c) and names the service, rather than returning
 * a value that only looks right. SHIMS.md ("core.c") lists them. */
#include <linux/filter.h>
#include <linux/bitmap.h>
#include <linux/bpf_mem_alloc.h>
#include <linux/btf.h>
#include <linux/execmem.h>
#include <linux/extable.h>
#include <linux/random.h>
#include <linux/uaccess.h>
#include <asm/set_memory.h>
#include <linux/moduleloader.h>

#include "kernelsrc/services.h"

#include <pthread.h>

#if BPFDIFF_TREE_HAS_PROG_PACK
void core_c_bpf_prog_pack_free(void *ptr, u32 size);
#else
void core_c_bpf_prog_pack_free(struct bpf_binary_header *hdr);
#endif

void bpfdiff_core_unmodelled(const char *what)
{
	bpfdiff_kernel_log("kernel/bpf/core.c called %s, which bpfdiff's world does not model", what);
	bpfdiff_kernel_bug(__FILE__, __LINE__);
}

/* lib/bitmap.c's __bitmap_clear(), which the tools bitmap.h declares for
 * its bitmap_clear() (bitmap_set and the area search: linux/bitmap.h). */
void __bitmap_clear(unsigned long *map, unsigned int start, int len)
{
	for (unsigned int i = start; i < start + (unsigned int)len; i++)
		map[i / BITS_PER_LONG] &= ~(1UL << (i % BITS_PER_LONG));
}

char *bin2hex(char *dst, const void *src, size_t count)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *s = src;

	while (count--) {
		*dst++ = digits[*s >> 4];
		*dst++ = digits[*s++ & 0xf];
	}
	return dst;
}

ssize_t strscpy(char *dest, const char *src, size_t count)
{
	size_t n = 0;

	if (count == 0)
		return -E2BIG;
	while (n + 1 < count && src[n]) {
		dest[n] = src[n];
		n++;
	}
	dest[n] = '\0';
	return src[n] ? -E2BIG : (ssize_t)n;
}

/* What a running kernel would answer, and bpfdiff does not model. */

void bpf_free_kfunc_btf_tab(struct bpf_kfunc_btf_tab *tab)
{
	if (tab)
		bpfdiff_core_unmodelled("bpf_free_kfunc_btf_tab");
}
int bpf_get_kfunc_addr(const struct bpf_prog *prog, u32 func_id, u16 btf_fd_idx, u8 **func_addr)
{
	(void)prog, (void)func_id, (void)btf_fd_idx, (void)func_addr;
	bpfdiff_core_unmodelled("bpf_get_kfunc_addr");
	return -EINVAL;
}
bool bpf_prog_has_kfunc_call(const struct bpf_prog *prog)
{
	(void)prog;
	bpfdiff_core_unmodelled("bpf_prog_has_kfunc_call");
	return false;
}
void bpf_map_put(struct bpf_map *map) { (void)map; bpfdiff_core_unmodelled("bpf_map_put"); }
void bpf_prog_put(struct bpf_prog *prog) { (void)prog; bpfdiff_core_unmodelled("bpf_prog_put"); }
void bpf_token_put(struct bpf_token *token)
{
	if (token)
		bpfdiff_core_unmodelled("bpf_token_put");
}
void bpf_trampoline_put(struct bpf_trampoline *tr)
{
	if (tr)
		bpfdiff_core_unmodelled("bpf_trampoline_put");
}
int bpf_mem_alloc_init(struct bpf_mem_alloc *ma, int size, bool percpu)
{
	(void)ma, (void)size, (void)percpu;
	bpfdiff_core_unmodelled("bpf_mem_alloc_init");
	return -ENOMEM;
}
/* The interpreter's BPF_PROBE_MEM loads go through the hook an engine
 * sets (interpreter.c), in one jump: a frame of this function would lie on
 * the interpreter's stack where its next callee's BPF stack will be.
 * 6.12's interpreter calls bpf_probe_read_kernel_common(); 6.1's calls
 * bpf_probe_read_kernel(), whose __weak default in core.c reads nothing
 * (kernel/trace/bpf_trace.c has the kernel's): both names are the hook. */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl bpf_probe_read_kernel_common\n"
	".type bpf_probe_read_kernel_common, @function\n"
	".globl bpf_probe_read_kernel\n"
	".type bpf_probe_read_kernel, @function\n"
	"bpf_probe_read_kernel_common:\n"
	"bpf_probe_read_kernel:\n"
	"\tendbr64\n"
	"\tjmp *bpfdiff_kinterp_probe_hook(%rip)\n"
	".size bpf_probe_read_kernel_common, .-bpf_probe_read_kernel_common\n"
	".size bpf_probe_read_kernel, .-bpf_probe_read_kernel\n");
#else
extern void *bpfdiff_kinterp_probe_hook;
int bpf_probe_read_kernel_common(void *dst, u32 size, const void *unsafe_ptr)
{
	return ((int (*)(void *, u32, const void *))bpfdiff_kinterp_probe_hook)(dst, size, unsafe_ptr);
}
u64 bpf_probe_read_kernel(void *dst, u32 size, const void *unsafe_ptr)
{
	return (u64)(s64)bpf_probe_read_kernel_common(dst, size, unsafe_ptr);
}
#endif
int bpfdiff_kinterp_probe_unmodelled(void *dst, u32 size, const void *unsafe_ptr)
{
	(void)dst, (void)size, (void)unsafe_ptr;
	bpfdiff_core_unmodelled("bpf_probe_read_kernel_common");
	return -EFAULT;
}
const struct btf_type *btf_type_by_id(const struct btf *btf, u32 type_id)
{
	(void)btf, (void)type_id;
	bpfdiff_core_unmodelled("btf_type_by_id");
	return NULL;
}
const char *btf_name_by_offset(const struct btf *btf, u32 offset)
{
	(void)btf, (void)offset;
	bpfdiff_core_unmodelled("btf_name_by_offset");
	return NULL;
}
void btf_put(struct btf *btf) { (void)btf; bpfdiff_core_unmodelled("btf_put"); }
void module_put(struct module *module) { (void)module; bpfdiff_core_unmodelled("module_put"); }
unsigned long copy_to_user(void *to, const void *from, unsigned long n)
{
	(void)to, (void)from;
	bpfdiff_core_unmodelled("copy_to_user");
	return n;
}
/* Below core.c's prog pack (SHIMS.md, "core.c's prog pack"): executable
 * memory is bpfdiff's guest pack regions. Outside a session with
 * world->kernel_pack nothing calls these (the JIT's pack is bpfdiff's). */
void *execmem_alloc(enum execmem_type type, size_t size)
{
	const struct bpfdiff_kjit_session *s = bpfdiff_kjit_current();

	(void)type;
	if (!s || !s->world->kernel_pack) {
		bpfdiff_core_unmodelled("execmem_alloc outside core.c's prog pack");
		return NULL;
	}
	/* vmalloc's failure, under memory pressure. */
	if (bpfdiff_kjit_inject_failure("execmem_alloc"))
		return NULL;
	return (void *)(uintptr_t)s->world->exec_map(s->world->owner, size);
}
void execmem_free(void *ptr)
{
	const struct bpfdiff_kjit_session *s = bpfdiff_kjit_current();

	if (!ptr)
		return; /* vfree(NULL), alloc_new_pack()'s error path */
	if (!s || !s->world->kernel_pack) {
		bpfdiff_core_unmodelled("execmem_free outside core.c's prog pack");
		return;
	}
	s->world->exec_unmap(s->world->owner, (uint64_t)(uintptr_t)ptr);
}
int set_memory_rox(unsigned long addr, int numpages)
{
	const struct bpfdiff_kjit_session *s = bpfdiff_kjit_current();

	if (!s || !s->world->kernel_pack) {
		bpfdiff_core_unmodelled("set_memory_rox outside core.c's prog pack");
		return -EINVAL;
	}
	return s->world->exec_protect(s->world->owner, addr, (uint64_t)numpages * PAGE_SIZE);
}
/* VM_FLUSH_RESET_PERMS: when the range is freed, its permissions go back
 * to RW and its TLB entries are flushed before the pages are reused;
 * exec_unmap stands for both. */
void set_vm_flush_reset_perms(void *addr) { (void)addr; }

void bpfdiff_kjit_pack_drain(const struct bpfdiff_kjit_world *world, const uint64_t *rx_headers,
			     const uint32_t *slot_bytes, uint32_t count)
{
	struct bpfdiff_kjit_session session = { .world = world };
	uint32_t i;

	bpfdiff_kjit_enter(&session);
	if (setjmp(session.on_bug) == 0) {
		for (i = 0; i < count; i++) {
			world->slot_released(world->owner, rx_headers[i]);
#if BPFDIFF_TREE_HAS_PROG_PACK
			core_c_bpf_prog_pack_free((void *)(uintptr_t)rx_headers[i], slot_bytes[i]);
#else
			/* A tree without the prog pack: the image's own mapping
			 * (in_place_images.c). */
			world->exec_unmap(world->owner, rx_headers[i]);
#endif
		}
	}
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
}

/* The tree's pure_initcall()s, gathered in a section of their own
 * (linux/kernel.h). */
extern bpfdiff_initcall_t const __start_bpfdiff_pure_initcalls[] __attribute__((weak));
extern bpfdiff_initcall_t const __stop_bpfdiff_pure_initcalls[] __attribute__((weak));

static void run_initcalls(void)
{
	const bpfdiff_initcall_t *call;

	for (call = __start_bpfdiff_pure_initcalls; call && call < __stop_bpfdiff_pure_initcalls; call++)
		(*call)();
}

long bpfdiff_kjit_run_initcalls(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, run_initcalls);
	return bpf_jit_limit;
}
void *krealloc_array(void *p, size_t new_n, size_t new_size, int flags)
{
	(void)p, (void)new_n, (void)new_size, (void)flags;
	bpfdiff_core_unmodelled("krealloc_array (bpf_jit_add_poke_descriptor)");
	return NULL;
}
const struct exception_table_entry *search_extable(const struct exception_table_entry *base, const size_t num,
						   unsigned long value)
{
	(void)base, (void)num, (void)value;
	bpfdiff_core_unmodelled("search_extable");
	return NULL;
}
void prandom_init_once(struct rnd_state *state) { (void)state; bpfdiff_core_unmodelled("prandom_init_once"); }
u32 prandom_u32_state(struct rnd_state *state)
{
	(void)state;
	bpfdiff_core_unmodelled("prandom_u32_state");
	return 0;
}
void sha1_init(__u32 *buf) { (void)buf; bpfdiff_core_unmodelled("sha1_init (bpf_prog_calc_tag)"); }
void sha1_transform(__u32 *digest, const char *data, __u32 *W)
{
	(void)digest, (void)data, (void)W;
	bpfdiff_core_unmodelled("sha1_transform (bpf_prog_calc_tag)");
}

/* 6.1's core.c: its prog pack (x86's) and bpf_jit_alloc_exec()'s weak
 * default allocate with module_alloc(); arm64's JIT of 6.1 uses neither. */
void *module_alloc(unsigned long size) { (void)size; bpfdiff_core_unmodelled("module_alloc"); return NULL; }
void module_memfree(void *module_region) { if (module_region) bpfdiff_core_unmodelled("module_memfree"); }
int set_memory_x(unsigned long addr, int numpages) { (void)addr, (void)numpages; return 0; }
void *krealloc(const void *p, size_t new_size, int flags)
{
	(void)p, (void)new_size, (void)flags;
	bpfdiff_core_unmodelled("krealloc (bpf_jit_add_poke_descriptor)");
	return NULL;
}

#if BPFDIFF_TREE_TOOLS_BITMAP_CLEAR_EXTERN
/* tools/lib/bitmap.c's, which 6.1's tools bitmap.h declares. */
void bitmap_clear(unsigned long *map, unsigned int start, int len) { __bitmap_clear(map, start, len); }
#endif
