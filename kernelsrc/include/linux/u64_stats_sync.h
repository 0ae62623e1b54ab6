#pragma once
/* A program's run statistics (struct bpf_prog_stats): plain counters, one
 * CPU and one thread in bpfdiff. */
#include <linux/types.h>
typedef struct { u64 v; } u64_stats_t;
struct u64_stats_sync { int unused; };
static inline void u64_stats_init(struct u64_stats_sync *syncp) { (void)syncp; }
