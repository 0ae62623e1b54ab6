// The text patching interface as the harness implements it: writes go into
// the host buffers behind the RX regions, and every cache maintenance
// operation drops Unicorn's translated blocks for exactly that range on
// every CPU, so flushed code never runs stale. Operations are counted by
// origin, and listeners (the pack lifecycle checks) see each one.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "harness/machine/machine.h"
#include "jit/text_patching.h"
#include "oracle/guest_memory.h"

namespace bpfdiff {

struct TextCounters {
  uint64_t copies = 0;
  uint64_t fills = 0;
  uint64_t flushes = 0;
  uint64_t bytes_copied = 0;
  uint64_t bytes_filled = 0;
  uint64_t nanos = 0;  // wall time spent in these operations (the cost model: harness/diff/run_cost.h)
};

class TextListener {
 public:
  virtual ~TextListener() = default;
  virtual void OnWrite(uint64_t begin, uint64_t end, jit::TextOrigin origin) = 0;
  virtual void OnFlush(uint64_t begin, uint64_t end, jit::TextOrigin origin) = 0;
};

class UnicornTextPatcher final : public jit::TextPatcher {
 public:
  explicit UnicornTextPatcher(GuestMemory& memory) : memory_(memory) {}

  void AddMachine(Machine* machine) { machines_.push_back(machine); }
  void set_listener(TextListener* listener) { listener_ = listener; }

  void Copy(uint64_t rx_address, std::span<const uint8_t> bytes, jit::TextOrigin origin) override;
  void Fill(uint64_t rx_address, uint64_t length, uint32_t word, jit::TextOrigin origin) override;
  void FlushIcache(uint64_t begin, uint64_t end, jit::TextOrigin origin) override;

  const TextCounters& counters(jit::TextOrigin origin) const {
    return counters_[static_cast<size_t>(origin)];
  }
  void ResetCounters() { counters_ = {}; }
  // Wall time of every operation since the patcher was made, whatever its
  // origin (ResetCounters leaves it): for callers that time around it.
  uint64_t busy_nanos() const { return busy_nanos_; }

 private:
  GuestMemory& memory_;
  std::vector<Machine*> machines_;
  TextListener* listener_ = nullptr;
  std::array<TextCounters, 4> counters_{};
  uint64_t busy_nanos_ = 0;
  // Adds the time since `start` to the origin's counters and busy_nanos_.
  void Charge(jit::TextOrigin origin, std::chrono::steady_clock::time_point start);
};

}  // namespace bpfdiff
