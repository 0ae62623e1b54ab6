#pragma once
/* Randomness of kernel/bpf/core.c: the constants of blinding
 * (get_random_u32) come from the compile's seed, so that a replay blinds
 * with the same values (kernelsrc/services.c); the per-CPU state of
 * bpf_user_rnd_u32 is the kernel's type, its generator not modelled. */
#include <linux/types.h>
struct rnd_state { __u32 s1, s2, s3, s4; };
u32 get_random_u32(void);
void prandom_init_once(struct rnd_state *state);
u32 prandom_u32_state(struct rnd_state *state);
u32 get_random_u32_below(u32 ceil);
/* 6.1's core.c: prandom.h of 6.1.y defines it so. */
static inline u32 prandom_u32_max(u32 ep_ro) { return get_random_u32_below(ep_ro); }
/* lib/random32.c's seeding, as lib/test_bpf.c's classic fill helpers use it. */
void prandom_seed_state(struct rnd_state *state, u64 seed);
