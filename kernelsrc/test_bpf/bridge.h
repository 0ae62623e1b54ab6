/* The C interface to lib/test_bpf.c of the tree (file.c): its cases as
 * plain data, for bpfdiff's runner (suite.h). Plain C types only. */
#ifndef BPFDIFF_KERNELSRC_TEST_BPF_BRIDGE_H
#define BPFDIFF_KERNELSRC_TEST_BPF_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "kernelsrc/bridge.h"

#ifdef __cplusplus
extern "C" {
#endif

/* test_bpf's suites, as its test_suite parameter names them. */
enum bpfdiff_test_bpf_suite {
	BPFDIFF_TEST_BPF_CASES,      /* "test_bpf": tests[] */
	BPFDIFF_TEST_BPF_TAIL_CALLS, /* "test_tail_calls": tail_call_tests[] */
};

#define BPFDIFF_TEST_BPF_MAX_SUBTESTS 3

/* One entry of tests[] (struct bpf_test), less its program. */
struct bpfdiff_test_bpf_case {
	const char *descr;
	uint8_t aux; /* the type (CLASSIC, INTERNAL) and FLAG_* bits */
	int subtests; /* as run_one() counts them */
	int data_size[BPFDIFF_TEST_BPF_MAX_SUBTESTS];
	uint32_t result[BPFDIFF_TEST_BPF_MAX_SUBTESTS];
	int has_fill_helper;
};

/* One entry of tail_call_tests[], with its instructions as written (the
 * markers unrelocated: TAIL_CALL() and BPF_CALL_REL of a helper id). */
struct bpfdiff_test_bpf_tail_call {
	const char *descr;
	const struct bpfdiff_kjit_insn *insns;
	uint32_t length; /* as prepare_tail_call_tests() counts it */
	int flags;       /* FLAG_NEED_STATE, FLAG_RESULT_IN_STATE */
	int result;
	int has_tail_call;
	int stack_depth; /* fp->aux->stack_depth */
};

/* test_bpf's constants the runner needs (its flags and markers). */
struct bpfdiff_test_bpf_constants {
	int max_testruns;
	int max_insns; /* MAX_INSNS: an entry's instructions */
	uint8_t flag_no_data, flag_large_mem;
	uint8_t type_classic, type_internal;
	int tail_flag_need_state, tail_flag_result_in_state;
	int32_t tail_call_marker;
	int16_t tail_call_null, tail_call_invalid;
	int32_t func_test_func; /* BPF_FUNC_test_func */
	/* What the file's tree has: tail_call_tests[] entries say whether
	 * they make one (has_tail_call, 6.12; 6.1 has no such field), and its
	 * filter.h writes the cpu v4 instructions (BPF_MOVSX*, ...). */
	int has_tail_call_field;
	int cpu_v4;
};

/* A compiled lib/test_bpf.c, read through its accessors
 * (file_accessors.h). */
struct bpfdiff_test_bpf_file {
	void (*get_constants)(struct bpfdiff_test_bpf_constants *out);
	int (*count)(enum bpfdiff_test_bpf_suite suite);
	void (*get_case)(int index, struct bpfdiff_test_bpf_case *out);
	void (*get_tail_call)(int index, struct bpfdiff_test_bpf_tail_call *out);

	/* Case `index`'s program, as test_bpf() gets it (the fill helper run if
	 * it has one, filter_pointer() and filter_length()), handed to `take`
	 * and freed again. Returns 0, or the fill helper's error (test_bpf's
	 * "FAIL to prog_fill"), or -1 when the kernel's code stopped (the message
	 * in `message`). */
	int (*program)(int index,
		       void (*take)(void *owner, const struct bpfdiff_kjit_insn *insns, uint32_t length,
				    uint32_t stack_depth),
		       void *owner, char *message, size_t message_size);

	/* The context subtest `sub` of case `index` runs with, as
	 * generate_test_data() builds it: nothing (FLAG_NO_DATA), data_size
	 * bytes (FLAG_LARGE_MEM, kmalloc's: bpfdiff's are zero), or the bytes of
	 * the struct sk_buff populate_skb() fills, its host pointers cleared.
	 * Writes at most `capacity` bytes to `bytes` and the size to `*size`.
	 * Returns 0, or -1 when the file could not generate it (test_bpf's "data
	 * generation failed"), with the reason in `message`. */
	int (*context)(int index, int sub, uint8_t *bytes, size_t capacity, size_t *size, char *message,
		       size_t message_size);

	/* The selection of test_bpf's module parameters (test_suite, test_name,
	 * test_id, test_range), decided by its own prepare_test_range(): the
	 * range of indices of `suite` it runs. `name` NULL or "": none; `id` -1:
	 * none; `first`/`last` 0 and INT_MAX: the whole suite. Returns 0, or -1
	 * with test_bpf's own message. */
	int (*select)(enum bpfdiff_test_bpf_suite suite, const char *name, int id, int first, int last,
		      int *range_first, int *range_last, char *message, size_t message_size);
};

/* The tree's lib/test_bpf.c (file.c). */
const struct bpfdiff_test_bpf_file *bpfdiff_test_bpf_tree_file(void);

#ifdef __cplusplus
}
#endif

#endif
