#pragma once
/* The firmware interface the Spectre-BHB mitigation may call. */
#define ARM_SMCCC_ARCH_WORKAROUND_3 0x80003fff
enum arm_smccc_conduit { SMCCC_CONDUIT_NONE, SMCCC_CONDUIT_SMC, SMCCC_CONDUIT_HVC };
enum arm_smccc_conduit arm_smccc_1_1_get_conduit(void);
