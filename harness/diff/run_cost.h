// Where a differential run's time goes: the cost model of issue 22, kept by
// every DifferentialRunner and printed by diff_fuzzer with its final stats.
//
// Time is wall clock (steady_clock), summed by phase over every case the
// runner ran; about 50 clock reads a case, some 1 µs against the hundreds a
// case costs, so it is always on. The emulator's time is split by run, not
// by what Unicorn does inside: a case's first run of freshly written code
// pays for translating it, the runs of the same code on the other input
// memories (RunOptions::input_variants) mostly do not, so translation is
// estimated as the first runs' time less as many later runs' mean time.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string_view>

namespace bpfdiff {

enum class RunPhase : uint8_t {
  kDecode,          // input bytes to a case: the generator (DiffHarness::RunInput)
  kLoad,            // the load step (LoadCase) and installing the case's objects
  kInterpreter,     // the reference interpreter's runs
  kJitCompile,      // the JITs' compile (Engine::Prepare, less its text writes)
  kPackText,        // writing, filling and flushing RX text: finalize and free
  kEmulatorFirst,   // a JIT's first run of a case: translation and execution
  kEmulatorLater,   // its runs on the other input memories: mostly execution
  kCompare,         // comparing each outcome with the reference's
  kRelease,         // freeing the compiled programs (less their text writes)
  kCount
};

std::string_view PhaseName(RunPhase phase);

struct RunCost {
  std::array<uint64_t, static_cast<size_t>(RunPhase::kCount)> nanos{};
  uint64_t first_runs = 0;  // runs counted in kEmulatorFirst
  uint64_t later_runs = 0;  // runs counted in kEmulatorLater
  // Guest (arm64) instructions the JITs' runs executed, and those Unicorn
  // had to translate first (a block counts as translated when its code was
  // new to the engine: Machine::instructions_translated).
  uint64_t guest_executed = 0;
  uint64_t guest_translated = 0;

  void Add(RunPhase phase, uint64_t ns) { nanos[static_cast<size_t>(phase)] += ns; }
  uint64_t Nanos(RunPhase phase) const { return nanos[static_cast<size_t>(phase)]; }
  uint64_t TotalNanos() const;
  // The first runs' time less `first_runs` later runs at their mean: what
  // translation cost, estimated (0 without later runs to compare with).
  uint64_t EstimatedTranslationNanos() const;
};

// Nanoseconds on the steady clock, for differences.
inline uint64_t SteadyNanos() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

}  // namespace bpfdiff
