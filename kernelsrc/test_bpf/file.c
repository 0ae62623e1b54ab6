/* lib/test_bpf.c of the tree, compiled whole and as it is: the test
 * suite the BPF JIT maintainers load as test_bpf.ko. Its tables and the
 * functions that build a case's program and data are static, so this file
 * includes the tree's and adds, after it, the accessors bpfdiff's runner
 * reads them through (bridge.h). The module is never initialised: its
 * drivers (test_bpf(), test_tail_calls()) print and time rather than
 * return what they saw, so bpfdiff's runner (harness/test_bpf) runs each
 * case as they do, on its engines, with the file's own data, selection and
 * verdict inputs. SHIMS.md, "test_bpf.c", says what is left out and why. */

/* Kbuild's definition for a module's objects (pr_fmt uses it). The file
 * is found in the tree, searched last (-idirafter). */
#define KBUILD_MODNAME "test_bpf"
#include <lib/test_bpf.c>

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

void bpfdiff_test_bpf_get_constants(struct bpfdiff_test_bpf_constants *out)
{
	*out = (struct bpfdiff_test_bpf_constants){
		.max_testruns = MAX_TESTRUNS,
		.flag_no_data = FLAG_NO_DATA,
		.flag_expected_fail = FLAG_EXPECTED_FAIL,
		.flag_skb_frag = FLAG_SKB_FRAG,
		.flag_verifier_zext = FLAG_VERIFIER_ZEXT,
		.flag_large_mem = FLAG_LARGE_MEM,
		.type_classic = CLASSIC,
		.type_internal = INTERNAL,
		.tail_flag_need_state = FLAG_NEED_STATE,
		.tail_flag_result_in_state = FLAG_RESULT_IN_STATE,
		.tail_call_marker = TAIL_CALL_MARKER,
		.tail_call_null = TAIL_CALL_NULL,
		.tail_call_invalid = TAIL_CALL_INVALID,
		.func_test_func = BPF_FUNC_test_func,
	};
}

int bpfdiff_test_bpf_count(enum bpfdiff_test_bpf_suite suite)
{
	return suite == BPFDIFF_TEST_BPF_TAIL_CALLS ? (int)ARRAY_SIZE(tail_call_tests) : (int)ARRAY_SIZE(tests);
}

void bpfdiff_test_bpf_get_case(int index, struct bpfdiff_test_bpf_case *out)
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
	out->expected_errcode = test->expected_errcode;
	out->stack_depth = test->stack_depth;
	out->nr_testruns = test->nr_testruns ? min(test->nr_testruns, MAX_TESTRUNS) : MAX_TESTRUNS;
	out->has_fill_helper = test->fill_helper != NULL;
}

void bpfdiff_test_bpf_get_tail_call(int index, struct bpfdiff_test_bpf_tail_call *out)
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
		.stack_depth = test->stack_depth,
		.has_tail_call = test->has_tail_call,
	};
}

static void stopped(const struct bpfdiff_kjit_session *session, char *message, size_t message_size)
{
	snprintf(message, message_size, "the kernel's code stopped: %s (%s)", session->log, session->warning);
}

int bpfdiff_test_bpf_program(int index, void (*take)(void *owner, const struct bpfdiff_kjit_insn *insns,
						     uint32_t length),
			     void *owner, char *message, size_t message_size)
{
	struct bpfdiff_kjit_session session = { .world = &quiet_world };
	struct bpf_test *test = &tests[index];
	int err = 0;

	message[0] = '\0';
	bpfdiff_kjit_enter(&session);
	if (setjmp(session.on_bug) != 0) {
		stopped(&session, message, message_size);
		err = -1;
		goto out;
	}
	/* As test_bpf(): fill, take the filter, free what the fill made. */
	if (test->fill_helper) {
		err = test->fill_helper(test);
		if (err < 0) {
			snprintf(message, message_size, "FAIL to prog_fill: %d", err);
			goto out;
		}
	}
	take(owner, filter_pointer(index), (uint32_t)filter_length(index));
out:
	if (test->fill_helper) {
		kfree(test->u.ptr.insns);
		test->u.ptr.insns = NULL;
	}
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
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

int bpfdiff_test_bpf_context(int index, int sub, uint8_t *bytes, size_t capacity, size_t *size, char *message,
			     size_t message_size)
{
	struct bpfdiff_kjit_session session = { .world = &quiet_world };
	struct bpf_test *test = &tests[index];
	void *data = NULL;
	int err = 0;

	message[0] = '\0';
	*size = 0;
	bpfdiff_kjit_enter(&session);
	if (setjmp(session.on_bug) != 0) {
		stopped(&session, message, message_size);
		err = -1;
		goto out;
	}
	data = generate_test_data(test, sub);
	if (!data) {
		if (!(test->aux & FLAG_NO_DATA)) {
			snprintf(message, message_size, "data generation failed");
			err = -1;
		}
		goto out;
	}
	if (test->aux & FLAG_LARGE_MEM) {
		*size = test->test[sub].data_size;
		memset(bytes, 0, min(capacity, *size));
	} else {
		*size = skb_bytes(data, bytes, capacity);
	}
	release_test_data(test, data);
out:
	bpfdiff_kjit_free_leftovers(&session);
	bpfdiff_kjit_leave();
	return err;
}

int bpfdiff_test_bpf_select(enum bpfdiff_test_bpf_suite suite, const char *name, int id, int first, int last,
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
