// A64 disassembly through LLVM's MC disassembler (the llvm-c API of LLVM 14),
// printing instructions as llvm-objdump does ("mov x0, #1", "brk #0x100",
// "b #-8"), with whitespace normalised to single spaces.
//
// PC-relative targets are printed as LLVM's C API prints them: as the signed
// byte offset from the instruction ("b.ne #8"), not as absolute addresses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "support/result.h"

namespace bpfdiff {

class A64Disassembler {
 public:
  // The LLVM target features the disassembler decodes: Armv8.5-A (which
  // includes LSE atomics, RCpc loads, pointer authentication and BTI).
  static constexpr const char* kFeatures = "+v8.5a,+lse,+rcpc,+bti,+pauth";

  // Fails only if this LLVM was built without the AArch64 target.
  static Result<A64Disassembler> Create();

  A64Disassembler(A64Disassembler&& other) noexcept;
  A64Disassembler& operator=(A64Disassembler&& other) noexcept;
  A64Disassembler(const A64Disassembler&) = delete;
  A64Disassembler& operator=(const A64Disassembler&) = delete;
  ~A64Disassembler();

  // The text of one little-endian instruction word at `address`, or nullopt
  // if LLVM does not decode it (an unallocated encoding). Not thread-safe:
  // use one disassembler per thread.
  std::optional<std::string> Disassemble(uint32_t word, uint64_t address = 0) const;

 private:
  explicit A64Disassembler(void* context) : context_(context) {}

  void* context_ = nullptr;  // LLVMDisasmContextRef
};

}  // namespace bpfdiff
