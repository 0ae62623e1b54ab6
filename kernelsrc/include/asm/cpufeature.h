#pragma once
/* Which lowering the JIT picks is a run-time choice (cpus_have_cap), made
 * by bpfdiff per compile: LSE atomics for kernel-jit, LL/SC for
 * kernel-jit-llsc. */
#include <linux/types.h>
#include <asm/cpucap-defs.h>
bool cpus_have_cap(unsigned int num);
#define SCOPE_SYSTEM 1
/* Spectre-BHB: the JIT mitigates only for classic BPF programs, which
 * bpfdiff does not load; these answer "not mitigated here". */
enum mitigation_state { SPECTRE_UNAFFECTED, SPECTRE_MITIGATED, SPECTRE_VULNERABLE };
enum mitigation_state arm64_get_spectre_v2_state(void);
u8 get_spectre_bhb_loop_value(void);
bool is_spectre_bhb_fw_mitigated(void);
bool supports_clearbhb(int scope);
extern bool __nospectre_bhb;
bool cpu_mitigations_off(void);
struct user_namespace;
extern struct user_namespace init_user_ns;
#define CAP_SYS_ADMIN 21
bool ns_capable_noaudit(struct user_namespace *ns, int cap);
