#pragma once
#include <asm/brk-imm.h>
#include <asm/insn.h>
