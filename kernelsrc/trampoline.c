/* The sequence in which kernel/bpf/trampoline.c drives the arch code for
 * one trampoline, for programs the kernel's JIT compiled:
 *   - bpf_trampoline_update(): the links by kind, the size
 *     (arch_bpf_trampoline_size), the slot (arch_alloc_bpf_trampoline, from
 *     the prog pack), the code (arch_prepare_bpf_trampoline, which copies it
 *     to RX and flushes), the protection (arch_protect_bpf_trampoline);
 *   - register_fentry()/modify_fentry()/unregister_fentry() on a BPF
 *     program: bpf_arch_text_poke() at its entry (BPF_MOD_JUMP for an
 *     extension program, freplace);
 *   - a struct_ops trampoline: its one fentry link of type
 *     BPF_LINK_TYPE_STRUCT_OPS, as bpf_struct_ops_prepare_trampoline()
 *     builds it.
 * The request's flags are the caller's, as bpf_trampoline_update() would
 * set them. */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <asm/set_memory.h>

#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>

#include "kernelsrc/services.h"

/* The trampoline's code holds the addresses of two kinds of kernel object
 * as immediates: each attached program's struct bpf_prog (the argument of
 * its enter and exit calls) and the struct bpf_tramp_image (that of
 * __bpf_tramp_enter/exit). Their values reach only the guest's enter and
 * exit stubs, which ignore them, but they shape the code
 * (emit_a64_mov_i64 emits one to four words by value). Host heap
 * addresses change from run to run, so the objects live at one fixed host
 * address instead: the same case gives the same code every time. */
#define HOST_OBJECTS_ADDRESS 0x3b7000000000ul
#define HOST_OBJECTS_BYTES (256 * 1024ul)
#define PROG_STRIDE 128
#define MAX_LINKS 64

struct host_objects {
	struct bpf_tramp_image image;
	struct bpf_tramp_links links[BPF_TRAMP_MAX];
	struct bpf_tramp_link link[MAX_LINKS];
	struct bpf_prog_aux aux[MAX_LINKS];
	unsigned char progs[MAX_LINKS][PROG_STRIDE]; /* struct bpf_prog, no insns */
};

_Static_assert(sizeof(struct host_objects) <= HOST_OBJECTS_BYTES, "the objects fit their mapping");
_Static_assert(sizeof(struct bpf_prog) <= PROG_STRIDE, "a bpf_prog fits its slot");

static pthread_mutex_t objects_lock = PTHREAD_MUTEX_INITIALIZER;
static struct host_objects *objects;

/* Maps the objects' page at its fixed address, once. */
static struct host_objects *host_objects(char *message, size_t message_size)
{
	void *at;

	if (objects)
		return objects;
	at = mmap((void *)HOST_OBJECTS_ADDRESS, HOST_OBJECTS_BYTES, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (at == MAP_FAILED || at != (void *)HOST_OBJECTS_ADDRESS) {
		if (at != MAP_FAILED)
			munmap(at, HOST_OBJECTS_BYTES);
		snprintf(message, message_size,
			 "cannot map the trampoline's kernel objects at host address 0x%lx: "
			 "something else is mapped there",
			 HOST_OBJECTS_ADDRESS);
		return NULL;
	}
	objects = at;
	return objects;
}

static int links_of(struct host_objects *o, const struct bpfdiff_kjit_tramp_request *request,
		    char *message, size_t message_size)
{
	/* The request's kinds, in the kernel's enum order. */
	static const int kinds[3] = { BPF_TRAMP_FENTRY, BPF_TRAMP_FEXIT, BPF_TRAMP_MODIFY_RETURN };
	uint32_t used = 0, k, i;

	memset(o, 0, sizeof(*o));
	for (k = 0; k < 3; k++) {
		struct bpf_tramp_links *links = &o->links[kinds[k]];

		if (request->counts[k] > BPF_MAX_TRAMP_LINKS ||
		    used + request->counts[k] > MAX_LINKS) {
			snprintf(message, message_size,
				 "more programs than a trampoline takes (BPF_MAX_TRAMP_LINKS is %d)",
				 BPF_MAX_TRAMP_LINKS);
			return -1;
		}
		for (i = 0; i < request->counts[k]; i++, used++) {
			const struct bpfdiff_kjit_tramp_link *in = &request->links[k][i];
			struct bpf_prog *prog = (struct bpf_prog *)o->progs[used];

			prog->bpf_func = (void *)(uintptr_t)in->rx_image;
			prog->jited = 1;
			prog->aux = &o->aux[used];
			prog->bpfdiff_enter = in->enter;
			prog->bpfdiff_exit = in->exit;
			o->link[used].link.prog = prog;
			if (request->struct_ops && kinds[k] == BPF_TRAMP_FENTRY)
				o->link[used].link.type = BPF_LINK_TYPE_STRUCT_OPS;
			o->link[used].cookie = in->cookie;
			links->links[links->nr_links++] = &o->link[used];
		}
	}
	return 0;
}

static void fail(struct bpfdiff_kjit_session *session, char *message, size_t size, const char *what,
		 int error)
{
	if (session->warned)
		snprintf(message, size, "%s: %d (the kernel warned at %s%s%s)", what, error,
			 session->warning, session->log[0] ? ": " : "", session->log);
	else if (session->log[0])
		snprintf(message, size, "%s: %d: %s", what, error, session->log);
	else
		snprintf(message, size, "%s: %d", what, error);
}

#if BPFDIFF_TREE_HAS_TRAMPOLINE_SIZE
/* kernel/bpf/trampoline.c's image, where the arch sizes its trampolines
 * (6.12): arch_bpf_trampoline_size(), arch_alloc_bpf_trampoline() (a slot
 * of the prog pack), and once written arch_protect_bpf_trampoline().
 * Returns the size, or -1 with the message written. */
static int image_alloc(struct bpfdiff_kjit_session *session, const struct btf_func_model *model,
		       const struct bpfdiff_kjit_tramp_request *request, struct host_objects *o, void *func_addr,
		       void **image, char *message, size_t message_size)
{
	const int size = arch_bpf_trampoline_size(model, request->flags, o->links, func_addr);

	if (size < 0) {
		fail(session, message, message_size, "arch_bpf_trampoline_size refused", size);
		return -1;
	}
	*image = arch_alloc_bpf_trampoline(size);
	if (!*image) {
		fail(session, message, message_size, "arch_alloc_bpf_trampoline failed", -ENOMEM);
		return -1;
	}
	return size;
}

static void image_free(void *image, int size) { arch_free_bpf_trampoline(image, size); }

static int image_done(struct bpfdiff_kjit_session *session, void *image, int size, char *message,
		      size_t message_size)
{
	const int protect = arch_protect_bpf_trampoline(image, size);

	if (protect != 0)
		fail(session, message, message_size, "arch_protect_bpf_trampoline refused", protect);
	return protect != 0 ? -1 : 0;
}
#else
/* kernel/bpf/trampoline.c of a tree whose arch does not size its
 * trampolines (6.1): bpf_tramp_image_alloc() takes a page from
 * bpf_jit_alloc_exec(), bpf_trampoline_update() lets the arch write the
 * trampoline into it in place (arch_prepare_bpf_trampoline() fills it and
 * flushes what it wrote), then makes it read-only and executable;
 * bpf_tramp_image_free() gives it back with bpf_jit_free_exec(). (Its
 * bpf_jit_charge_modmem() of the page is left out: nothing here charges
 * or frees by it.) */
static int image_alloc(struct bpfdiff_kjit_session *session, const struct btf_func_model *model,
		       const struct bpfdiff_kjit_tramp_request *request, struct host_objects *o, void *func_addr,
		       void **image, char *message, size_t message_size)
{
	(void)model, (void)request, (void)o, (void)func_addr;
	*image = bpf_jit_alloc_exec(PAGE_SIZE);
	if (!*image) {
		fail(session, message, message_size, "bpf_jit_alloc_exec failed", -ENOMEM);
		return -1;
	}
	return PAGE_SIZE;
}

static void image_free(void *image, int size)
{
	(void)size;
	bpf_jit_free_exec(image);
}

static int image_done(struct bpfdiff_kjit_session *session, void *image, int size, char *message,
		      size_t message_size)
{
	(void)session, (void)message, (void)message_size;
	set_memory_ro((unsigned long)image, 1);
	set_memory_x((unsigned long)image, 1);
	bpfdiff_kjit_trampoline_placed(image, (uint32_t)size);
	return 0;
}
#endif

static int build(struct bpfdiff_kjit_session *session, struct host_objects *o,
		 const struct bpfdiff_kjit_tramp_request *request,
		 struct bpfdiff_kjit_tramp_image *out, char *message, size_t message_size)
{
	struct btf_func_model model = { .ret_size = 8, .nr_args = request->nr_args };
	void *func_addr = (void *)(uintptr_t)request->func_addr;
	void *image;
	int size, ret, i;

	for (i = 0; i < request->nr_args && i < MAX_BPF_FUNC_ARGS; i++) {
		const int is_struct = i < 8 && (request->struct_args >> i) & 1;

		model.arg_size[i] = is_struct ? 16 : 8;
		model.arg_flags[i] = is_struct ? BTF_FMODEL_STRUCT_ARG : 0;
	}
	size = image_alloc(session, &model, request, o, func_addr, &image, message, message_size);
	if (size < 0)
		return -1;
	o->image.image = image;
	o->image.size = size;
	ret = arch_prepare_bpf_trampoline(&o->image, image, (char *)image + size, &model,
					  request->flags, o->links, func_addr);
	if (ret < 0 || session->warned) {
		fail(session, message, message_size, "arch_prepare_bpf_trampoline refused", ret);
		image_free(image, size);
		return -1;
	}
	if (image_done(session, image, size, message, message_size) != 0) {
		image_free(image, size);
		return -1;
	}
	out->rx_header = session->slots[0].rx_header;
	out->rx_image = (uint64_t)(uintptr_t)image;
	out->size = (uint32_t)size;
	out->code_bytes = (uint32_t)ret;
	out->ip_after_call = (uint64_t)(uintptr_t)o->image.ip_after_call;
	out->ip_epilogue = (uint64_t)(uintptr_t)o->image.ip_epilogue;
	out->image_object = (uint64_t)(uintptr_t)&o->image;
	return 0;
}

/* What the build's error paths did: the service made to fail, and a
 * promise broken, checked before anything is cleaned up behind the
 * kernel's code. */
static void check_build(const struct bpfdiff_kjit_session *session, int failed,
			struct bpfdiff_kjit_error_path *path)
{
	uint32_t blocks = 0;
	size_t bytes = 0;
	const char *service = bpfdiff_kjit_held(session, &blocks, &bytes);

	if (!path)
		return;
	memset(path, 0, sizeof(*path));
	snprintf(path->injected, sizeof(path->injected), "%s", session->injected ? session->injected : "");
	path->failable_calls = session->failable_calls;
	if (service) {
		snprintf(path->breach_kind, sizeof(path->breach_kind), "leak");
		snprintf(path->breach, sizeof(path->breach),
			 "%u heap blocks (%zu bytes, the oldest from %s) still held once "
			 "arch_prepare_bpf_trampoline() %s: the arch code frees its RW image and its "
			 "table of branches on every path",
			 blocks, bytes, service, failed ? "failed" : "returned");
	} else if (failed && session->slot_count > 0) {
		snprintf(path->breach_kind, sizeof(path->breach_kind), "leak");
		snprintf(path->breach, sizeof(path->breach),
			 "the trampoline's slot at 0x%llx is still allocated after the build failed "
			 "(arch_free_bpf_trampoline)",
			 (unsigned long long)session->slots[0].rx_header);
	}
}

int bpfdiff_kjit_trampoline(const struct bpfdiff_kjit_world *world,
			    const struct bpfdiff_kjit_tramp_request *request,
			    struct bpfdiff_kjit_tramp_image *image, char *message, size_t message_size,
			    struct bpfdiff_kjit_error_path *path)
{
	struct bpfdiff_kjit_slot slot;
	struct bpfdiff_kjit_session session = { .world = world, .slots = &slot, .slot_capacity = 1 };
	struct host_objects *o;
	volatile int result = -1;

	message[0] = '\0';
	memset(image, 0, sizeof(*image));
	pthread_mutex_lock(&objects_lock);
	o = host_objects(message, message_size);
	if (!o || links_of(o, request, message, message_size) != 0) {
		pthread_mutex_unlock(&objects_lock);
		return -1;
	}
	bpfdiff_tramp_enter = (void (*)(struct bpf_tramp_image *))(uintptr_t)request->tramp_enter;
	bpfdiff_tramp_exit = (void (*)(struct bpf_tramp_image *))(uintptr_t)request->tramp_exit;

	bpfdiff_kjit_enter(&session);
	if (setjmp(session.on_bug) == 0)
		result = build(&session, o, request, image, message, message_size);
	else
		fail(&session, message, message_size, "the kernel's code hit BUG()", -EFAULT);
	check_build(&session, result != 0, path);
	if (result != 0) {
		while (session.slot_count > 0)
			bpfdiff_kjit_free_slot(&session.slots[--session.slot_count]);
	}
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
	pthread_mutex_unlock(&objects_lock);
	return result;
}

int bpfdiff_kjit_text_poke(const struct bpfdiff_kjit_world *world, uint64_t image,
			   uint32_t symbol_bytes, uint32_t image_bytes, uint64_t ip, int jump,
			   uint64_t old_target, uint64_t new_target, char *message, size_t message_size)
{
	struct bpfdiff_kjit_session session = { .world = world };
	volatile int result = -EFAULT;

	message[0] = '\0';
	session.symbol_start = image;
	session.symbol_bytes = symbol_bytes;
	session.image_bytes = image_bytes;
	bpfdiff_kjit_enter(&session);
	if (setjmp(session.on_bug) == 0)
		result = bpf_arch_text_poke((void *)(uintptr_t)ip, jump ? BPF_MOD_JUMP : BPF_MOD_CALL,
					    (void *)(uintptr_t)old_target,
					    (void *)(uintptr_t)new_target);
	if (result != 0)
		fail(&session, message, message_size, "bpf_arch_text_poke refused", result);
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
	return result;
}
