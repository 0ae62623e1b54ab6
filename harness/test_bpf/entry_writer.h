// BPF instructions written as lib/test_bpf.c writes its cases: one macro of
// the kernel's include/linux/filter.h per instruction (BPF_ALU64_IMM,
// BPF_LDX_MEM, BPF_JMP_REG, ...), registers by test_bpf's names (R0..R10),
// and its TAIL_CALL() markers where an instruction holds TAIL_CALL_MARKER.
// Only macros that 6.12's filter.h defines are used, so that an entry
// compiles in the file upstream as well as in bpfdiff's build.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "isa/insn.h"
#include "kernelsrc/test_bpf/suite.h"
#include "support/result.h"

namespace bpfdiff {

// One line per instruction (an lddw's two slots, and a TAIL_CALL()'s four,
// are one line), without indentation or the trailing comma. Fails naming
// the first instruction test_bpf.c's cases cannot hold: kernel-internal
// forms the verifier makes (PROBE_MEM, arena, per-CPU), and what needs a
// verifier or a map (BPF-to-BPF calls, helper and kfunc calls, map loads,
// legacy packet access).
Result<std::vector<std::string>> TestBpfMacros(std::span<const isa::Insn> insns,
                                               const kernelsrc::TestBpfMarkers& markers);

// The same instructions for a fill helper: one `{ <insn>, <count> }` line
// per run of one instruction repeated, each slot its own (an lddw as two
// BPF_RAW_INSN()s). Tail-call markers are refused: a fill helper builds a
// case of tests[], which makes no tail calls.
Result<std::vector<std::string>> TestBpfRuns(std::span<const isa::Insn> insns,
                                             const kernelsrc::TestBpfMarkers& markers);

// An immediate as test_bpf.c writes one: small ones in decimal, others as
// the hexadecimal of their 32 bits.
std::string TestBpfImmediate(int32_t imm);

}  // namespace bpfdiff
