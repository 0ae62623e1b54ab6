// The fuzz input format. Stable: the same bytes give the same case on every
// machine and every generator that claims their version, so corpora and
// reproducers keep working. Change anything here only with a new version
// number; the decoder keeps reading every version it ever wrote.
//
//   byte 0       format version, kOldestFormatVersion..kFormatVersion;
//                other values are not ours
//   byte 1       mode: 0xff = raw, anything else = structured
//
// Structured mode (a 16-byte header, then 8-byte records):
//   byte 2       extra subprograms of the main program (value % 4)
//   byte 3       maps: bit 0 an array map, bit 1 a hash map, bit 2 a second
//                (small) array map; bits 3..4 the value size (8, 16, 24, 64)
//   byte 4       tail-call target programs (value % 4); with any, a
//                prog_array map holds them
//   byte 5       input memory length (value % 129 bytes)
//   bytes 6..13  seed of the input memory and initial map values
//   byte 14      options: bit 0 inline kptr_xchg at load; version 6: bits
//                1..3 the far-branch filler; version 7: bits 4..7 the
//                callbacks (below)
//   byte 15      reserved (0) in versions 1 and 2; version 3: bit 0 the
//                operand-magnitude mode (below)
//   then records of 8 bytes: [construct, p0 .. p6]. Each record is one step
//   of the generator (an ALU operation, a memory access, the start or end of
//   a region, a call ...); record kind 0xff ends the current function. A
//   missing record reads as zeros.
//
// Raw mode: instruction bytes. Slots that do not decode are dropped, the
// rest is validated as it is (the decoder must reject what is invalid, with
// a message), so arbitrary bytes exercise the decoder.
//   version 1    bytes 2.. are the instructions; no input memory
//   version 2    bytes 2..3 the input memory length n (little endian,
//                value % (kMaxRawMemory + 1)), then n bytes of input memory
//                (fewer if the input ends first), then the instructions
//
// What version 2 changes in structured mode:
//  - before every exit, each function stores the registers r1..r9 it wrote
//    and may still read to the bottom of its stack frame, r1 at r10-512, r2
//    at r10-504, ... (kObservedRegisters), an area no other construct
//    touches. The stack is compared, so a wrong value a JIT leaves in any
//    register is seen, and named by its slot;
//  - record kind 245, a legacy packet access (ldabs/ldind) in version 1, is
//    an ALU operation: the JITs refuse those programs as the kernel's JIT
//    would (harness/diff/kernel_refusals.h), so none of them was ever compared.
//    Raw mode still writes them, for the decoder and the interpreter;
//  - untrusted pointers never hold 0x03100000, program 0's bpf_func (each
//    JIT's own entry: a run that read it was never comparable), but the
//    last doubleword of the program objects (interesting_values.h).
//
// What version 3 changes in structured mode:
//  - byte 2 counts up to 7 extra subprograms (value % 8): local calls as
//    deep as the kernel allows;
//  - a callx may name an id whose upper half is not zero (an error; a JIT
//    that truncates the id would call a helper), and a tail-call index may
//    hold any upper half (only the low 32 bits count);
//  - a tail-call target may call its own slot (tail-call record p2 bit 5),
//    a chain that runs to the limit of 33;
//  - byte 15 bit 0, the operand-magnitude mode: operands come from the
//    magnitude classes (magnitudes.h) instead of the tables of interesting
//    immediates. An ALU operation first loads dst with a class value
//    (record byte p5 the class, p6 its parameter), and its source, with an
//    X form, with a value related to dst (p3: equal, +1, -1, inverted, the
//    same register, or a class value of its own); a K form's immediate is
//    a 32-bit class value (p4 the class, p3 its parameter). A conditional
//    jump compares a class value with an immediate equal to its low word,
//    one above, one below, or a class value. Loads, stores and atomics put
//    their offset where the addressing forms change (0, +-1, +-size, +-256,
//    +-257, the scaled limit) when the area allows. mov and lddw load class
//    values. A cmpxchg's r0 holds a class value; an atomic with p0 bit 6
//    uses its address register as its operand too, at offset 0, on the
//    context or a map value. The class "raw" takes the record's bytes p3..p6 as they are,
//    little-endian, so that comparison-guided mutations land on them
//    (diff_fuzzer hands one mutation in eight to libFuzzer's own, and the
//    libFuzzer builds trace comparisons).
//
// What version 4 changes in structured mode (the bounds the JIT decides on,
// reached without a seed that points there):
//  - byte 15 bits 1, 2 and 6 all set, the tail-call chain: with tail-call
//    targets, the main entry and every target keep the context in r6
//    (copied first, never written); the main entry ends with a tail call
//    into slot 0 (after it stores the registers it observes), each target
//    starts with one into its own slot (byte 15 bit 4 clear) or the next
//    target's (set), so that its body runs once, after the last tail
//    call: a chain that always runs to MAX_TAIL_CALL_CNT (33); with byte
//    15 bit 5 each index of the chain carries 0x80000001 in its upper half
//    (only the low 32 bits count, so the chain still runs). Three bits,
//    so that a chain, which makes a case about a quarter dearer, is one
//    random header in ten or so (with two, diff_fuzzer compared some 10%
//    fewer cases a minute);
//  - byte 15 bit 3, the bounds mode (an upgraded older input has it
//    clear, and so keeps its case):
//    - a tail-call record's index (p1 % 8): a slot below max_entries (0..2,
//      slot p5 % max_entries), the last slot, max_entries, max_entries + 1,
//      0xffffffff, 0x80000000; one in four (p2 % 4 == 0) with garbage in
//      the upper half (the JIT compares the low 32 bits);
//    - a related operand (p3 % 9; 8 is new) may have the same upper half
//      and the complement of the low word; a JSET with a register source
//      always compares two values that meet only in their upper halves
//      (the first a class value, p5 and p6, with a bit of the upper half
//      set, p4, if it had none): with p4 bit 6 clear, the second has the
//      same upper half and the complement low word; set, both low words
//      are zero and the second's upper half has one bit more (p6), so the
//      operands differ only in their upper halves. A 32-bit JSET finds no
//      common bit, a 64-bit one does;
//    - with the operand-magnitude mode, a boundary access (p1 bit 6) with
//      p1 bit 5 set uses an offset from the classes the JIT tells apart that no
//      area is large enough for: +-4095 (the largest immediate of an
//      atomic's address), +-4096 and beyond (in a register), 4095 * size
//      (the largest scaled load/store offset) and 4096 * size, the field's
//      limits 32767 and -32768 (p3 chooses); the address register is a copy of the
//      area's pointer moved by the opposite amount (mov, add), so that
//      the access lands inside the area (p4..p5 where, p6 which register).
//
// What version 5 changes in structured mode:
//  - a pointer-setup record (kinds 146..155) picks among five kinds (p0 %
//    5, was % 4); the fifth, this CPU's per-CPU variable, is what the
//    verifier writes for this_cpu_ptr() on a JIT with per-CPU moves: a
//    register (p1 picks it) is set to an offset into the per-CPU page's
//    free 1 KiB (guest::kPerCpuScratchOffset + 8 * (p4 % 128)), then
//    `addr_percpu dst, src` makes it the address on the running CPU; with
//    p2 bit 0 src is another register (p3 + 1 picks it), left a scalar.
//    dst then points into the variable, for the loads, stores and atomics
//    that follow; the variable is zeroed before every run. With p2 bit 1
//    the move is applied to a scalar (p3 picks it) instead, so that the
//    sum's upper half counts;
//  - the sixth kind is an arena access (PROBE_MEM32 load or store, or
//    PROBE_ATOMIC atomic) through a register set to an offset into the
//    arena's page, past it, or with an upper half (function_builder.cc,
//    ArenaAccessBody, says which bytes choose what); with p5 bit 2 an
//    addr_space_cast to the user address follows.
//
// What version 6 changes in structured mode:
//  - header byte 15 bit 7, for one such input in 256 (FarBranchChosen:
//    the FNV-1a hash of the whole input), the far-branch mode: the main
//    entry starts with a conditional jump over a filler of cmpxchgs
//    (far_branch.h) whose code spans a conditional branch's range under
//    the LL/SC lowering; byte 14 bits 1..3 choose the filler's length.
//    Such a case costs some 50 ordinary ones (its 30,000 instructions
//    compiled by every JIT). By the hash, a mutant of a far-branch input
//    is one again only by chance, so that a corpus that keeps them (they
//    reach new code) does not make them common: in 60 s from an empty
//    corpus diff_fuzzer_kernel makes some tens of them. An upgraded older
//    input has byte 15 bit 7 clear, and keeps its case.
//
// What version 7 changes in structured mode (callbacks):
//  - header byte 14 bits 4..7: subprogram f (1..7) may be a callback of
//    bpf_loop when bit 4 + (f - 1) % 4 is set. Its signature keeps at most
//    two scalar arguments (the iteration and the context) and no pointer
//    to its caller's frame; it reads no r0 before setting it, and every
//    exit returns r0 & 1 (0 goes on, 1 stops), as the verifier wants of a
//    callback;
//  - a local-call record (kinds 223..229) whose callee may be a callback,
//    with p6 bit 0 set, calls it through bpf_loop instead:
//    `mov r3, <p2's scalar>; mov r1, n; mov r4, flags; lddw_func r2,
//    callee; call 181`, n = ((p6 >> 1) & 7) % 5 iterations and flags 0;
//    with p6 bits 4 and 5 set, an error bpf_loop answers without a call:
//    flags 1 (-EINVAL) with p6 bit 6 clear, else BPF_MAX_LOOPS + 1
//    iterations (-E2BIG). An upgraded older input has byte 14 bits 4..7
//    clear, and keeps its case;
//  - the far-branch block sets r2..r5 to 0 after its helper call, which
//    leaves them undefined: the main entry's code may read them (the
//    scalars it was entered with). Version 6 read them undefined there.
//
// What version 8 changes in structured mode (exceptions):
//  - an early-exit record (kinds 239..242) with p0 bit 1 set throws
//    instead, in any function but a callback of bpf_loop: `mov r1,
//    <cookie>; call kfunc 1` (bpf_throw), the cookie a scalar of ours (p2)
//    or, with p0 bit 2 set, the immediate p1 names. The function stores
//    what it observes first, as before an exit. The program returns the
//    cookie (the verifier's hidden exception callback). A function that
//    throws, or calls one that does, is never called by a callback, which
//    the verifier would refuse;
//  - header byte 2 bit 7 (with a subprogram): the last subprogram is the
//    program's exception callback, which runs when the program throws in
//    place of the verifier's hidden one: one scalar argument (the cookie),
//    no r0 read before it is set, nothing calls it, it neither throws nor
//    calls what does; its result is the program's.
//  An upgraded older input has p0 bit 1 of every early-exit record and byte
//  2 bit 7 clear, and keeps its case.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bpfdiff::fuzz {

inline constexpr uint8_t kFormatVersion = 8;        // what the mutator writes
inline constexpr uint8_t kOldestFormatVersion = 1;  // the oldest the decoder reads
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kRecordSize = 8;
inline constexpr uint8_t kEndOfFunction = 0xff;
inline constexpr uint8_t kModeRaw = 0xff;

inline constexpr bool IsFormatVersion(uint8_t version) {
  return version >= kOldestFormatVersion && version <= kFormatVersion;
}

// Raw mode: where the parts of an input of `size` bytes lie (version 2
// reads its memory length from bytes 2..3; a missing byte reads as zero).
inline constexpr size_t kMaxRawMemory = 4096;
struct RawLayout {
  size_t memory_begin = 2, memory_end = 2;  // the input memory
  size_t instructions_begin = 2;            // the instructions, to the end
};
inline RawLayout RawLayoutOf(const uint8_t* input, size_t size) {
  RawLayout layout;
  if (size < 2 || input[0] == 1) return layout;
  const size_t low = size > 2 ? input[2] : 0;
  const size_t high = size > 3 ? input[3] : 0;
  const size_t length = (low | high << 8) % (kMaxRawMemory + 1);
  layout.memory_begin = size < 4 ? size : 4;
  layout.memory_end = layout.memory_begin + length < size ? layout.memory_begin + length : size;
  layout.instructions_begin = layout.memory_end;
  return layout;
}

// Structured mode, version 2: the area at the bottom of each frame where a
// function leaves r1..r9 before it exits; constructs use the frame above it.
inline constexpr int kObservedRegisters = 9;
inline constexpr int32_t kObservedRegistersBytes = 8 * kObservedRegisters;

// The record kinds of a pointer setup (function_builder.cc, Construct).
inline constexpr uint8_t kPointerSetupFirst = 146;
inline constexpr uint8_t kPointerSetupLast = 155;
// The record kinds of an early exit (function_builder.cc, Construct), and
// the bit of its p0 that makes it a throw (version 8).
inline constexpr uint8_t kEarlyExitFirst = 239;
inline constexpr uint8_t kEarlyExitLast = 242;
inline constexpr uint8_t kEarlyExitThrows = 0x02;
// Version 8: header byte 2 bit 7, the last subprogram is the program's
// exception callback.
inline constexpr uint8_t kExceptionCallbackBit = 0x80;

// Structured mode, version 3: the options of header byte 15.
inline constexpr uint8_t kOptionMagnitudes = 1;
// Version 4, header byte 15: the tail-call chain (all three bits), its
// step, the upper half of its indexes, and the bounds mode.
inline constexpr uint8_t kOptionTailCallChain = 0x46;
inline constexpr uint8_t kOptionBounds = 0x08;
inline constexpr uint8_t kOptionChainToNext = 0x10;
inline constexpr uint8_t kOptionChainUpperGarbage = 0x20;
// Version 6: the far-branch mode (byte 15), the share of its inputs the
// hash chooses, and where in byte 14 its filler's length is chosen.
inline constexpr uint8_t kOptionFarBranch = 0x80;
inline constexpr uint32_t kFarBranchOneIn = 256;
inline constexpr int kFarBranchFillerShift = 1;

// Version 7: header byte 14 bits 4..7, which subprograms may be callbacks.
inline constexpr int kCallbackMaskShift = 4;

// FNV-1a (32 bits) of the input: what chooses the far-branch inputs.
inline constexpr uint32_t InputHash(const uint8_t* input, size_t size) {
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ input[i]) * 16777619u;
  return hash;
}

}  // namespace bpfdiff::fuzz
