#pragma once
#include <linux/types.h>
/* What ex_handler_bpf writes: the general registers and the pc. */
struct pt_regs {
	u64 regs[31];
	u64 sp;
	u64 pc;
	u64 pstate;
};
