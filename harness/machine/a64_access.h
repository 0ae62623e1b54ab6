// The memory access of an arm64 instruction word: the byte range it reads
// or writes given the register values before it runs, and how. The fast
// machine uses it to find which instruction of a translated block faulted
// (Unicorn reports only the block), without a per-instruction hook; a
// stepped machine to check an access before the CPU makes it.
#pragma once

#include <cstdint>
#include <optional>

namespace bpfdiff {

struct AccessRange {
  uint64_t begin;
  uint64_t end;  // exclusive
  bool reads = true;
  bool writes = false;
  // Single-copy atomic: an exclusive, ordered, compare-and-swap or LSE
  // access, which raises an alignment fault unless naturally aligned (the
  // whole range for a pair).
  bool atomic = false;
  bool Contains(uint64_t address) const { return address - begin < end - begin; }
};

// Reads X0..X30, and SP for register number 31 in an address field.
class RegisterReader {
 public:
  virtual ~RegisterReader() = default;
  virtual uint64_t X(int reg) const = 0;
  virtual uint64_t Sp() const = 0;
};

// nullopt: not a load or store of general registers (or not one the JIT
// emits): loads/stores with unsigned, unscaled, pre/post-indexed or
// register offsets, pairs, load/store exclusive, ordered, compare-and-swap,
// LSE atomics, and PC-relative literal loads.
std::optional<AccessRange> MemoryAccessOf(uint32_t word, uint64_t pc, const RegisterReader& regs);

}  // namespace bpfdiff
