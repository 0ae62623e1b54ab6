#pragma once
#include <linux/types.h>
/* arm64's thread_info with CONFIG_ARM64_SW_TTBR0_PAN and without the shadow
 * call stack: the inlined bpf_get_smp_processor_id() reads `cpu` at offset
 * 24 from SP_EL0 (current). */
struct thread_info {
	unsigned long flags;
	u64 ttbr0;
	u64 preempt_count;
	u32 cpu;
};
