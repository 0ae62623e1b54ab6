#pragma once
#include <linux/types.h>
/* arm64's relative exception-table entry (arch/arm64/include/asm/extable.h). */
struct exception_table_entry {
	int insn, fixup;
	short type, data;
};

struct pt_regs;
/* Defined in bpf_jit_comp.c: the fixup of a faulting PROBE_MEM load. */
bool ex_handler_bpf(const struct exception_table_entry *ex, struct pt_regs *regs);
