// The BPF-visible state of a run at every instruction boundary, recorded by
// any engine that can stop there (the interpreter before each instruction,
// a JIT where the offset table says an instruction's code starts), so that
// two runs of one case can be compared step by step and the first
// instruction after which they part can be named (harness/diff/localize.h).
//
// Recording is for divergent cases only: it costs a digest of the writable
// memory at every boundary, and a JIT run that stops at each one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "isa/program.h"
#include "oracle/environment.h"
#include "oracle/outcome.h"

namespace bpfdiff {

// Digests of what a program can write: each BPF stack frame, the input
// memory, the map values, the arena (the regions GuestEnvironment::Capture
// takes).
struct MemoryDigest {
  std::array<uint64_t, isa::kMaxCallDepth> stack_frames{};
  uint64_t context = 0;
  uint64_t map_values = 0;
  uint64_t arena = 0;

  friend bool operator==(const MemoryDigest&, const MemoryDigest&) = default;
};

// Where a run was and what it held, just before the instruction at `slot`
// of program `program` ran.
struct BoundaryState {
  uint32_t program = 0;       // 0 = main, k = tail-call target k
  uint32_t slot = 0;
  uint32_t helper_calls = 0;  // helper calls made so far
  HelperCall last_call;       // the last of them (earlier ones were compared at earlier boundaries)
  std::array<uint64_t, isa::kNumRegs> regs{};
  MemoryDigest memory;
};

class BoundaryTrace {
 public:
  // Records at most `limit` boundaries (a run that loops for its whole
  // budget would otherwise record millions).
  BoundaryTrace(const GuestEnvironment& env, int cpu, const StackGeometry& geometry, size_t limit)
      : env_(env), cpu_(cpu), geometry_(geometry), limit_(limit) {}
  // With per-function frames: the stack digested through `window` (its
  // stable bytes), which a run of the same path made (oracle/frame_window.h).
  BoundaryTrace(const GuestEnvironment& env, int cpu, const StackGeometry& geometry, StackWindow window,
                size_t limit)
      : env_(env), cpu_(cpu), geometry_(geometry), window_(std::move(window)), limit_(limit) {}

  // Calls of these helpers are left out of the count and the last call:
  // the engine compared with this run performs them inline in its code,
  // where no call is seen (the kernel's JIT and get_smp_processor_id).
  void set_uncounted_helpers(std::span<const int32_t> ids) { uncounted_.assign(ids.begin(), ids.end()); }

  // The run is about to execute `slot` of `program` with these registers;
  // `helper_calls` are the run's calls so far (it only ever grows).
  void Record(uint32_t program, uint32_t slot, const std::array<uint64_t, isa::kNumRegs>& regs,
              const std::vector<HelperCall>& helper_calls);

  const std::vector<BoundaryState>& states() const { return states_; }
  // It holds `limit` boundaries: the run may have gone on past them.
  bool full() const { return states_.size() >= limit_; }
  size_t limit() const { return limit_; }

 private:
  const GuestEnvironment& env_;
  int cpu_;
  StackGeometry geometry_;
  std::optional<StackWindow> window_;
  size_t limit_;
  std::vector<BoundaryState> states_;
  std::vector<int32_t> uncounted_;
  // How far Record has read the run's calls, and what it counted of them.
  size_t calls_read_ = 0;
  uint32_t calls_counted_ = 0;
  HelperCall last_counted_;
};

}  // namespace bpfdiff
