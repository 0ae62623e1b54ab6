#include "harness/machine/text_patcher.h"

#include <cstring>

namespace bpfdiff {

void UnicornTextPatcher::Copy(uint64_t rx_address, std::span<const uint8_t> bytes,
                              jit::TextOrigin origin) {
  const auto start = std::chrono::steady_clock::now();
  uint8_t* host = memory_.HostPointer(rx_address, bytes.size());
  if (host == nullptr) return;  // the pack only hands out mapped RX ranges
  std::memcpy(host, bytes.data(), bytes.size());
  auto& c = counters_[static_cast<size_t>(origin)];
  ++c.copies;
  c.bytes_copied += bytes.size();
  Charge(origin, start);
  if (listener_ != nullptr) listener_->OnWrite(rx_address, rx_address + bytes.size(), origin);
}

void UnicornTextPatcher::Fill(uint64_t rx_address, uint64_t length, uint32_t word,
                              jit::TextOrigin origin) {
  const auto start = std::chrono::steady_clock::now();
  uint8_t* host = memory_.HostPointer(rx_address, length);
  if (host == nullptr) return;
  for (uint64_t i = 0; i + 4 <= length; i += 4) std::memcpy(host + i, &word, 4);
  auto& c = counters_[static_cast<size_t>(origin)];
  ++c.fills;
  c.bytes_filled += length;
  Charge(origin, start);
  if (listener_ != nullptr) listener_->OnWrite(rx_address, rx_address + length, origin);
}

void UnicornTextPatcher::FlushIcache(uint64_t begin, uint64_t end, jit::TextOrigin origin) {
  const auto start = std::chrono::steady_clock::now();
  for (Machine* machine : machines_) machine->RemoveCache(begin, end);
  ++counters_[static_cast<size_t>(origin)].flushes;
  Charge(origin, start);
  if (listener_ != nullptr) listener_->OnFlush(begin, end, origin);
}

void UnicornTextPatcher::Charge(jit::TextOrigin origin, std::chrono::steady_clock::time_point start) {
  const auto ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  counters_[static_cast<size_t>(origin)].nanos += ns;
  busy_nanos_ += ns;
}

}  // namespace bpfdiff
