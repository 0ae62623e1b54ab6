// Schedules from a stream of choices: fuzz bytes (the fuzz target) or a
// seeded generator (the equivalence report). The generator never knows which
// policy will run its output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "harness/recursion/schedule.h"

namespace bpfdiff::recursion {

// Where choices come from. Exhausted fuzz input reads as zeros.
class ChoiceSource {
 public:
  virtual ~ChoiceSource() = default;
  virtual uint8_t Byte() = 0;
  virtual bool exhausted() const = 0;
  // A value in 0..n-1 (n >= 1).
  uint32_t Below(uint32_t n);
};

class BytesSource final : public ChoiceSource {
 public:
  explicit BytesSource(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint8_t Byte() override { return next_ < bytes_.size() ? bytes_[next_++] : 0; }
  bool exhausted() const override { return next_ >= bytes_.size(); }

 private:
  std::span<const uint8_t> bytes_;
  size_t next_ = 0;
};

class SeededSource final : public ChoiceSource {
 public:
  explicit SeededSource(uint64_t seed) : state_(seed * 0x9e3779b97f4a7c15ULL + 1) {}
  uint8_t Byte() override;
  bool exhausted() const override { return false; }

 private:
  uint64_t state_;
};

// Limits beyond what the format holds (schedule.h) are taken as the
// format's: whatever the options, the schedule is valid.
struct GeneratorOptions {
  int max_cpus = 2;
  int max_programs = 3;
  int max_loop = 8;
  size_t max_events = 12;
  bool preemption = true;   // task preemption and switch events
  bool raw_steps = true;    // `run C N` (positions counted in instructions)
  bool bh = true;           // tasks with bottom halves disabled
};

Schedule GenerateSchedule(ChoiceSource& source, const GeneratorOptions& options);

}  // namespace bpfdiff::recursion
