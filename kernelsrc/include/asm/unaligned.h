/* 6.1's core.c includes <asm/unaligned.h> (6.12's <linux/unaligned.h>,
 * which tools/include has): the tools' generic one. */
#pragma once
#include <asm-generic/unaligned.h>
