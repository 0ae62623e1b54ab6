/* The accessors bpfdiff's runner reads a compiled lib/test_bpf.c through
 * (bridge.h, struct bpfdiff_test_bpf_file): included once, right after the
 * file, by each wrapper that compiles one. file.c compiles the tree's; the
 * export check compiles a copy with exported entries added
 * (tests/kernelsrc/test_bpf_export). Its tables are the file's statics,
 * so each wrapper gets accessors of its own. */

#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "kernelsrc/services.h"
#include "kernelsrc/test_bpf/bridge.h"

_Static_assert(sizeof(struct bpf_insn) == sizeof(struct bpfdiff_kjit_insn), "struct bpf_insn is 8 bytes");
_Static_assert(MAX_SUBTESTS == BPFDIFF_TEST_BPF_MAX_SUBTESTS, "test_bpf's sub-test count");

/* The file's code runs in a session of the kernel services (its
 * allocations are the kernel's, and a BUG() leaves through on_bug). It
 * fails no service: no failure is injected. */
static const struct bpfdiff_kjit_world quiet_world;

static void get_constants(struct bpfdiff_test_bpf_constants *out)
{
	*out = (struct bpfdiff_test_bpf_constants){
		.max_testruns = MAX_TESTRUNS,
		.max_insns = MAX_INSNS,
		.flag_no_data = FLAG_NO_DATA,
		.flag_large_mem = FLAG_LARGE_MEM,
		.type_classic = CLASSIC,
		.type_internal = INTERNAL,
		.tail_flag_need_state = FLAG_NEED_STATE,
		.tail_flag_result_in_state = FLAG_RESULT_IN_STATE,
		.tail_call_marker = TAIL_CALL_MARKER,
		.tail_call_null = TAIL_CALL_NULL,
		.tail_call_invalid = TAIL_CALL_INVALID,
		.func_test_func = BPF_FUNC_test_func,
		.has_tail_call_field = BPFDIFF_TREE_TEST_BPF_HAS_TAIL_CALL_FIELD,
		.cpu_v4 = BPFDIFF_TREE_HAS_CPUV4,
	};
}

static int count(enum bpfdiff_test_bpf_suite suite)
{
	return suite == BPFDIFF_TEST_BPF_TAIL_CALLS ? (int)ARRAY_SIZE(tail_call_tests) : (int)ARRAY_SIZE(tests);
}

static void get_case(int index, struct bpfdiff_test_bpf_case *out)
{
	const struct bpf_test *test = &tests[index];
	int i;

	memset(out, 0, sizeof(*out));
	out->descr = test->descr;
	out->aux = test->aux;
	/* run_one()'s count: the first always runs; a zero {data_size,
	 * result} ends the list. */
	for (i = 0; i < MAX_SUBTESTS; i++) {
		if (i > 0 && test->test[i].data_size == 0 && test->test[i].result == 0)
			break;
		out->data_size[i] = test->test[i].data_size;
		out->result[i] = test->test[i].result;
		out->subtests++;
	}
	out->has_fill_helper = test->fill_helper != NULL;
}

static void get_tail_call(int index, struct bpfdiff_test_bpf_tail_call *out)
{
	const struct tail_call_test *test = &tail_call_tests[index];
	int len;

	/* prepare_tail_call_tests()'s count of the instructions. */
	for (len = 0; len < MAX_INSNS; len++) {
		const struct bpf_insn *insn = &test->insns[len];

		if (len < MAX_INSNS - 1 && insn->code == (BPF_LD | BPF_DW | BPF_IMM))
			len++;
		if (insn->code == 0)
			break;
	}
	*out = (struct bpfdiff_test_bpf_tail_call){
		.descr = test->descr,
		.insns = (const struct bpfdiff_kjit_insn *)test->insns,
		.length = (uint32_t)len,
		.flags = test->flags,
		.result = test->result,
#if BPFDIFF_TREE_TEST_BPF_HAS_TAIL_CALL_FIELD
		.has_tail_call = test->has_tail_call,
#endif
		.stack_depth = test->stack_depth,
	};
}

/* Runs `work` in a session of the kernel services: what the file's code
 * allocates is the kernel's and is freed after it, and a BUG() in that
 * code ends it with -1 and the kernel's last message. */
static int in_session(int (*work)(void *args), void *args, char *message, size_t message_size)
{
	struct bpfdiff_kjit_session session = { .world = &quiet_world };
	int err;

	message[0] = '\0';
	bpfdiff_kjit_enter(&session);
	if (setjmp(session.on_bug) != 0) {
		snprintf(message, message_size, "the kernel's code stopped: %s (%s)", session.log, session.warning);
		err = -1;
	} else {
		err = work(args);
	}
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
	return err;
}

struct program_args {
	int index;
	void (*take)(void *owner, const struct bpfdiff_kjit_insn *insns, uint32_t length, uint32_t stack_depth);
	void *owner;
	char *message;
	size_t message_size;
};

/* As test_bpf(): fill, take the filter, free what the fill made. */
static int build_program(void *args)
{
	const struct program_args *a = args;
	struct bpf_test *test = &tests[a->index];

	if (test->fill_helper) {
		int err = test->fill_helper(test);

		if (err < 0) {
			snprintf(a->message, a->message_size, "FAIL to prog_fill: %d", err);
			return err;
		}
	}
	/* generate_filter() reads the depth after the fill, which may set it
	 * (__bpf_fill_stxdw: 40). */
	a->take(a->owner, filter_pointer(a->index), (uint32_t)filter_length(a->index), (uint32_t)test->stack_depth);
	if (test->fill_helper)
		kfree(test->u.ptr.insns);
	return 0;
}

static int program(int index,
		   void (*take)(void *owner, const struct bpfdiff_kjit_insn *insns, uint32_t length, uint32_t stack_depth),
		   void *owner, char *message, size_t message_size)
{
	struct program_args args = { index, take, owner, message, message_size };
	int err = in_session(build_program, &args, message, message_size);

	/* Freed by build_program or, after a BUG, with the session. */
	if (tests[index].fill_helper)
		tests[index].u.ptr.insns = NULL;
	return err;
}

/* populate_skb()'s socket buffer as a context's bytes: the structure the
 * program's r1 points to, with its pointers (to the head, the device, the
 * shared info) cleared, as they mean nothing in the guest and differ from
 * run to run in the host. */
static size_t skb_bytes(const struct sk_buff *skb, uint8_t *bytes, size_t capacity)
{
	struct sk_buff copy = *skb;

	copy.head = NULL;
	copy.data = NULL;
	copy.dev = NULL;
	copy.shinfo = NULL;
	memcpy(bytes, &copy, min(capacity, sizeof(copy)));
	return sizeof(copy);
}

struct context_args {
	int index, sub;
	uint8_t *bytes;
	size_t capacity, *size;
	char *message;
	size_t message_size;
};

/* As run_one(): generate_test_data(), then release_test_data(). */
static int build_context(void *args)
{
	const struct context_args *a = args;
	struct bpf_test *test = &tests[a->index];
	void *data = generate_test_data(test, a->sub);

	if (!data) {
		if (test->aux & FLAG_NO_DATA)
			return 0;
		snprintf(a->message, a->message_size, "data generation failed");
		return -1;
	}
	if (test->aux & FLAG_LARGE_MEM) {
		*a->size = test->test[a->sub].data_size;
		memset(a->bytes, 0, min(a->capacity, *a->size));
	} else {
		*a->size = skb_bytes(data, a->bytes, a->capacity);
	}
	release_test_data(test, data);
	return 0;
}

static int context(int index, int sub, uint8_t *bytes, size_t capacity, size_t *size, char *message,
		   size_t message_size)
{
	struct context_args args = { index, sub, bytes, capacity, size, message, message_size };

	*size = 0;
	return in_session(build_context, &args, message, message_size);
}

static int select_range(enum bpfdiff_test_bpf_suite suite, const char *name, int id, int first, int last,
			int *range_first, int *range_last, char *message, size_t message_size)
{
	struct bpfdiff_kjit_session session = { .world = &quiet_world };
	int err;

	bpfdiff_kjit_enter(&session);
	/* The module's parameters, as insmod would set them. */
	strscpy(test_suite, suite == BPFDIFF_TEST_BPF_TAIL_CALLS ? "test_tail_calls" : "test_bpf",
		sizeof(test_suite));
	strscpy(test_name, name ? name : "", sizeof(test_name));
	test_id = id;
	test_range[0] = first;
	test_range[1] = last;
	err = prepare_test_range();
	snprintf(message, message_size, "%s", err ? session.log : "");
	*range_first = test_range[0];
	*range_last = test_range[1];
	bpfdiff_kjit_leave();
	return err ? -1 : 0;
}

static const struct bpfdiff_test_bpf_file file_accessors = {
	.get_constants = get_constants,
	.count = count,
	.get_case = get_case,
	.get_tail_call = get_tail_call,
	.program = program,
	.context = context,
	.select = select_range,
};
