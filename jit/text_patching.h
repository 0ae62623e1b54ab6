// The text patching interface: the only way bytes reach executable memory.
//
// As in the kernel (bpf_arch_text_copy, bpf_arch_text_invalidate, and the
// cache maintenance they end with), code is never written into RX memory
// directly. Routing every write through this interface lets the harness see,
// count and check each one: drop Unicorn's translated blocks for exactly the
// flushed range, model each CPU's instruction cache, and count operations
// per finalize and per free.
#pragma once

#include <cstdint>
#include <span>

#include "jit/a64/encoder.h"

namespace bpfdiff::jit {

// AARCH64_BREAK_FAULT: BRK #0x100, what an unused or freed slot holds.
using a64::kBreakFault;

// Why an operation happens, so that checks and counters can tell a
// program's finalize from its free from a new pack's initial fill.
enum class TextOrigin : uint8_t { kFinalize, kFree, kNewPack, kTrampoline };

class TextPatcher {
 public:
  virtual ~TextPatcher() = default;

  // Copies `bytes` to RX memory at `rx_address` (bpf_arch_text_copy).
  virtual void Copy(uint64_t rx_address, std::span<const uint8_t> bytes, TextOrigin origin) = 0;

  // Fills [rx_address, rx_address + length) with `word` (length is a
  // multiple of 4): bpf_arch_text_invalidate when `word` is kBreakFault.
  virtual void Fill(uint64_t rx_address, uint64_t length, uint32_t word, TextOrigin origin) = 0;

  // Cleans the data cache and invalidates the instruction cache for
  // [begin, end) on every CPU (caches_clean_inval_pou + IPI).
  virtual void FlushIcache(uint64_t begin, uint64_t end, TextOrigin origin) = 0;
};

// Host memory behind a range of guest RX addresses.
struct TextMemory {
  uint64_t guest_base = 0;
  uint8_t* host = nullptr;
  uint64_t size = 0;

  bool Contains(uint64_t address, uint64_t length) const {
    return address >= guest_base && length <= size && address - guest_base <= size - length;
  }
  uint8_t* At(uint64_t address) const { return host + (address - guest_base); }
};

}  // namespace bpfdiff::jit
