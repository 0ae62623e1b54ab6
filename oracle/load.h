// The load step: what the kernel does to a program between the bpf() syscall
// and the JIT, reduced to what bpfdiff models.
//
//  - validation (isa::MakeProgram) of every program of a case;
//  - verifier-lite: helper ids must exist, the call graph must be acyclic and
//    at most kMaxCallDepth deep, r10-relative accesses must stay inside the
//    512-byte frame, tail calls only from the main subprogram;
//  - rewrites, as the verifier does them: lddw map_fd / map_value become
//    plain lddw of the guest address, `call 12` becomes the tail_call
//    instruction, and (when enabled) `call kptr_xchg` is inlined as
//    `r0 = r2; r0 = xchg(*(u64 *)(r1 + 0), r0)`.
//
// It also finds reads of r1..r5 after a call clobbered them. Such a read is
// rejected by the kernel's verifier but not by ours, because the engines
// legitimately disagree on those values; the differential runner uses
// `clobbered_read` to mark such a case as not comparable.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "isa/insn.h"
#include "isa/program.h"
#include "support/result.h"

namespace bpfdiff {

struct LoadOptions {
  // Inline `call bpf_kptr_xchg` as `r0 = r2; r0 = xchg(*(u64 *)(r1 + 0), r0)`,
  // as the verifier does for JITs with bpf_jit_supports_ptr_xchg(). A
  // JIT-only rewrite: the kernel's interpreter calls the helper.
  bool inline_kptr_xchg = false;
  // The program runs with no context at all: r1 (and r2, its length) are
  // 0, as for a test_bpf case with FLAG_NO_DATA (bpf_prog_run(fp, NULL)).
  // Only for a case without input memory.
  bool null_context = false;

  bool HasJitOnlyRewrites() const { return inline_kptr_xchg; }
  // These options without the JIT-only rewrites: the interpreter's.
  LoadOptions WithoutJitOnlyRewrites() const {
    LoadOptions options = *this;
    options.inline_kptr_xchg = false;
    return options;
  }
  // The helpers whose calls the JIT-only rewrites replace: calls to them
  // appear in the interpreter's helper trace and not in a JIT's.
  std::span<const int32_t> JitInlinedHelpers() const;
};

// A case as a test file or a fuzz input describes it, before loading.
struct CaseSource {
  std::vector<std::vector<isa::Insn>> programs;  // [0] is the main program
  // Per program (absent or 0: none): the first slot of the subprogram its
  // loader names as its exception callback (the BTF decl tag
  // "exception_callback:"), which nothing calls. A program that throws and
  // names none gets the verifier's hidden one.
  std::vector<uint32_t> exception_callbacks;
  // Per program: the BPF stack its loader gives each of its functions
  // (prog->aux->stack_depth), as a test_bpf case names it; at most
  // isa::kStackSize, and enough for every access the program makes
  // through r10. A program it does not name gets VerifierStackDepths'.
  std::vector<uint32_t> stack_depths;
  std::vector<isa::MapSpec> maps;
  std::vector<uint8_t> memory;  // context / packet
  LoadOptions options;
};

struct LoadedProgram {
  isa::Program program;  // after rewrites
  // For each slot of `program`, the slot of the source program it came from.
  std::vector<uint32_t> source_slot;
  // The BPF stack of each of its functions (CaseSource::stack_depths).
  uint32_t stack_depth = static_cast<uint32_t>(isa::kStackSize);
};

struct LoadedCase {
  std::vector<LoadedProgram> programs;
  std::vector<isa::MapSpec> maps;
  std::vector<uint8_t> memory;
  LoadOptions options;
  // First "reads a clobbered register" finding, if any (see above).
  std::optional<std::string> clobbered_read;
  // First read, in a program a tail call enters, of r3 or r6..r9 before it
  // is written: the registers a JIT that restores them at a tail call (the
  // kernel's) holds otherwise than the interpreter, which keeps the tail
  // caller's. It matters only against such a JIT (CodeConventions).
  std::optional<std::string> read_at_tail_call_entry;
};

// Guest address of the values area of every map, in the case's declaration
// order (the GuestMap objects are at guest::MapObjectAddress(index)). Values
// areas are laid out one after another from kMapValuesBase, each 64-byte
// aligned.
std::vector<uint64_t> MapValueAddresses(const std::vector<isa::MapSpec>& maps);
uint64_t MapValuesBytes(const isa::MapSpec& map);

Result<LoadedCase> LoadCase(const CaseSource& source);
// The same with other load options than the source's.
Result<LoadedCase> LoadCase(const CaseSource& source, const LoadOptions& options);

// The stack depth of each program of a case, as the verifier would compute
// it (subprog_info's stack_depth: the deepest byte an access through r10
// itself reaches, 0 for none), where bpfdiff's frames can follow it: they
// lay a case out with one depth, so every program gets the deepest of the
// case's, and MAX_BPF_STACK (the most the verifier gives) when one reads
// r10 otherwise (a copy, a pointer handed on) or has calls.
std::vector<uint32_t> VerifierStackDepths(const std::vector<const isa::Program*>& programs);

// read_at_tail_call_entry for program `index` of a case, were a tail call to
// enter it: for programs that are both entered directly and by tail calls
// (the lifecycle world's), which LoadCase cannot know of.
std::optional<std::string> FindReadAtTailCallEntry(const isa::Program& program, size_t index);
// The first read of a register of `undefined` (a mask of RegisterBit(),
// oracle/register_use.h) that nothing wrote since the entry of program
// `index`, or one a call left undefined; `where` says where they are
// undefined ("at the entry of a test_bpf case"), for the finding's words.
std::optional<std::string> FindReadOfUndefinedAtEntry(const isa::Program& program, size_t index, uint16_t undefined,
                                                      std::string_view where);
// The first read, in a function a bpf-to-bpf call enters, of r0 or r6..r9
// before it writes them: what the kernel's verifier refuses ("R6
// !read_ok"). (A read of what a call left undefined is clobbered_read's.) Every JIT and bpfdiff's
// interpreter leave the caller's values there; the kernel's interpreter
// gives a callee registers of its own (__bpf_prog_run_args<N>).
std::optional<std::string> FindReadOfUndefinedAtCalleeEntry(const isa::Program& program, size_t index);

}  // namespace bpfdiff
