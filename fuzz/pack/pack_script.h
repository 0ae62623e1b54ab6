// Pack scripts: fuzz bytes -> a sequence of operations on a lifecycle World
// (loads, frees, interleaved steps on several CPUs, interrupts, stale
// calls, prog_array updates), with every invariant checked after each
// operation.
//
// Format, versions 1 to 3 (stable; change only with a new version number):
//
//   byte 0       version: 3 (kPackScriptVersion), 2 or 1; other versions
//                are not ours
//   byte 1       CPUs: 1 + value % 4
//   bytes 2..9   pack seed (where the random holes at the start of each
//                pack's slots fall)
//   then operations, each a kind byte (value % 11; in version 2, which has
//   no failing reloads, value % 10; in version 1, which has no interrupts
//   either, value % 9) and its arguments; a missing argument byte reads as
//   zero:
//
//   0 load        [subprograms] [pad] [n] then n % 48 generator records of
//                 8 bytes (fuzz_format.h; no maps, no input memory). pad < 128:
//                 none; < 254: (pad - 127) * 64 slots jumped over; 254 and
//                 255: 262,144 and 393,216 slots, an oversize image
//   1 free        [which live program]
//   2 step        [cpu] [which live program, if the CPU is idle] [n]: run
//                 1 + n instructions (n = 255: 4,096)
//   3 finish      [cpu]: run the CPU's call to its end
//   4 call stale  [cpu]: call a freed program's old entry point
//   5 tail target [entry] [which live program; 255 = empty]
//   6 synchronize
//   7 tail call   [cpu] [entry] [n]: step a tail caller as in "step"
//   8 reload      [which live program] [pad]: load its instructions again
//   9 interrupt   [cpu] [which live program] [n]: interrupt the CPU's call
//                 and run the program in the interrupt, 1 + n instructions
//                 as in "step" (then steps and finish go on with it; the
//                 interrupted call resumes when it returns). Nothing when
//                 the CPU is idle, calls a freed entry, or is in an
//                 interrupt already (version 2 on)
//   10 failing reload [which live program] [fail] [unused]: load its
//                 instructions again with the compile's (1 + fail % 32)th
//                 call of a kernel service the JIT checks for failure made
//                 to fail (World::LoadFailing; a plain reload on bpfdiff's
//                 model, which calls no such service) (version 3 on)
//
// "which live program" picks among the live programs in id order, modulo
// their number; tail callers (ids 0..3) are never freed.
//
// What a byte means never depends on the world (a "which" byte is resolved
// when its operation runs), so a script decodes without running it:
// DecodePackScript, and EncodePackScript its inverse.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fuzz/pack/pack_states.h"
#include "harness/lifecycle/world.h"
#include "harness/planted/planted_bugs.h"
#include "support/result.h"

namespace bpfdiff::fuzz {

// The version that scripts are written in; version 1 and 2 scripts (the
// seeds of before interrupts and failing reloads) still decode and keep
// their meaning.
inline constexpr uint8_t kPackScriptVersion = 3;
inline constexpr uint8_t kPackScriptOldestVersion = 1;
// Whether byte 0 of an input names a version of this format.
inline constexpr bool IsPackScriptVersion(uint8_t byte) {
  return byte >= kPackScriptOldestVersion && byte <= kPackScriptVersion;
}
// The generator format version (fuzz_format.h) of a load's records: pinned,
// so that a script means the same programs whatever the generator's
// current version.
inline constexpr uint8_t kPackScriptRecordsVersion = 1;
inline constexpr size_t kPackScriptHeaderSize = 10;

enum class PackOpKind : uint8_t {
  kLoad,
  kFree,
  kStep,
  kFinish,
  kCallStale,
  kTailTarget,
  kSynchronize,
  kTailCall,
  kReload,
  kInterrupt,      // version 2
  kFailingReload,  // version 3
};
// Operation kinds in the current version.
inline constexpr uint8_t kPackOpKinds = 11;
// The kinds a script of `version` has (kind bytes are taken modulo it).
inline constexpr uint8_t PackOpKindsIn(uint8_t version) {
  return version == 1 ? 9 : version == 2 ? 10 : kPackOpKinds;
}
// The failable call a failing reload's `fail` byte names (from 1): past a
// small program's calls a quarter of the time, where nothing fails.
inline constexpr uint32_t FailCallOf(uint8_t fail) { return 1 + fail % 32u; }
inline constexpr uint8_t kPackScriptMaxRecords = 48;  // a load's records: n % 48

// How many argument bytes follow an operation's kind byte (a load's records
// not counted).
size_t PackOpArgumentCount(PackOpKind kind);

struct PackOp {
  PackOpKind kind = PackOpKind::kSynchronize;
  // The argument bytes in the format's order, PackOpArgumentCount(kind) of
  // them (missing ones read as zero); the others are zero.
  std::array<uint8_t, 3> args{};
  // kLoad: the generator records' bytes, args[2] % 48 records of them, or
  // fewer where the input ended (the generator sees where records end, so
  // a short tail is kept short, not padded).
  std::vector<uint8_t> records;
  friend bool operator==(const PackOp&, const PackOp&) = default;
};

struct PackScript {
  uint8_t version = kPackScriptVersion;
  int cpus = 1;       // 1..4
  uint64_t seed = 0;  // the pack seed
  std::vector<PackOp> ops;
  friend bool operator==(const PackScript&, const PackScript&) = default;
};

// The script in `input`, or nullopt when the input is not of this format
// version. Linear in the input; every byte of it is consumed.
std::optional<PackScript> DecodePackScript(std::span<const uint8_t> input);

// The canonical bytes of `script` (kinds as their numbers, every argument
// written), which decode to `script`. Error when they cannot: a version
// not of this format, an operation its version does not have, a CPU count
// outside 1..4, argument bytes an operation does not take, or records other than
// the count says (fewer are allowed on the last operation only, where the
// input ended).
Result<std::vector<uint8_t>> EncodePackScript(const PackScript& script);

struct PackScriptOptions {
  PlantedBugs bugs;
  bool trace = false;  // record a line per operation
  // With trace: each load's instructions too, as they were loaded (what a
  // triage reads a divergent call's program from).
  bool trace_programs = false;
  // Stop at the first operation that breaks an invariant.
  bool stop_at_violation = true;
  UnicornFault unicorn_fault;  // a Unicorn call made to fail (tests of the failure path)
  // Whose JIT compiles the script's programs (lifecycle::WorldOptions).
  std::string jit_engine = "jit";
  // A kernel engine's pack: kernel/bpf/core.c's own, or bpfdiff's model
  // (lifecycle::WorldOptions::kernel_pack).
  bool kernel_pack = true;
};

struct PackScriptResult {
  bool is_script = false;  // the input was of this format version
  int cpus = 0;
  uint64_t operations = 0;
  uint64_t loads = 0, loads_rejected = 0, frees = 0, stale_calls = 0, interrupts = 0;
  uint64_t failing_reloads = 0;  // made to fail a service, loaded or not
  uint64_t calls_compared = 0, calls_not_comparable = 0;
  // Why calls were not comparable: reason (harness/lifecycle/
  // not_comparable.h) -> calls; the counts add up to calls_not_comparable.
  std::map<std::string, uint64_t> not_comparable_reasons;
  // Calls compared with an interpreter run that followed prog_array
  // entries updated while they ran, as their tail calls read them.
  uint64_t calls_replayed = 0;
  PackStates states;  // what the script reached (pack_states.h)
  std::vector<lifecycle::Violation> violations;
  std::vector<std::string> trace;
};

// Runs the script in `input` on a fresh World. An error is the harness's
// own failure (a Unicorn engine that would not start), never the script's.
Result<PackScriptResult> RunPackScript(std::span<const uint8_t> input, const PackScriptOptions& options);

}  // namespace bpfdiff::fuzz
