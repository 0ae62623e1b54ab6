#pragma once
/* One thread runs the kernel's code, and nothing preempts it. */
static inline void cond_resched(void) {}
static inline void migrate_disable(void) {}
static inline void migrate_enable(void) {}
/* The functions lib/test_bpf.c's tail-call runner calls programs through
 * (as helpers): of linux/topology.h, linux/timekeeping.h and
 * linux/jiffies.h, which the kernel's sched.h brings. bpfdiff's runner
 * relocates those calls itself (harness/test_bpf); these are only the
 * addresses the file takes. */
#include <linux/types.h>
int numa_node_id(void);
u64 ktime_get_ns(void);
u64 ktime_get_boot_fast_ns(void);
u64 ktime_get_coarse_ns(void);
u64 get_jiffies_64(void);
