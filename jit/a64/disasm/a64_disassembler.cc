#include "jit/a64/disasm/a64_disassembler.h"

#include <llvm-c/Disassembler.h>
#include <llvm-c/Target.h>

#include <array>
#include <mutex>
#include <utility>

namespace bpfdiff {
namespace {

constexpr const char* kTriple = "aarch64-unknown-linux-gnu";

LLVMDisasmContextRef Context(void* context) { return static_cast<LLVMDisasmContextRef>(context); }

void InitializeLlvmAArch64() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64Disassembler();
  });
}

// "\tmov\tx0, #1" -> "mov x0, #1": tabs and runs of blanks become one space,
// leading and trailing blanks go.
std::string Normalise(const char* text) {
  std::string out;
  bool pending_space = false;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p == ' ' || *p == '\t' || *p == '\n') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(*p);
  }
  return out;
}

}  // namespace

Result<A64Disassembler> A64Disassembler::Create() {
  InitializeLlvmAArch64();
  LLVMDisasmContextRef context =
      LLVMCreateDisasmCPUFeatures(kTriple, "generic", kFeatures, nullptr, 0, nullptr, nullptr);
  if (context == nullptr) {
    return Fail("LLVM could not create an {} disassembler (is the AArch64 target built in?)",
                kTriple);
  }
  return A64Disassembler(context);
}

A64Disassembler::A64Disassembler(A64Disassembler&& other) noexcept
    : context_(std::exchange(other.context_, nullptr)) {}

A64Disassembler& A64Disassembler::operator=(A64Disassembler&& other) noexcept {
  if (this != &other) {
    if (context_ != nullptr) LLVMDisasmDispose(Context(context_));
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

A64Disassembler::~A64Disassembler() {
  if (context_ != nullptr) LLVMDisasmDispose(Context(context_));
}

std::optional<std::string> A64Disassembler::Disassemble(uint32_t word, uint64_t address) const {
  if (context_ == nullptr) return std::nullopt;  // moved from
  std::array<uint8_t, 4> bytes = {static_cast<uint8_t>(word), static_cast<uint8_t>(word >> 8),
                                  static_cast<uint8_t>(word >> 16),
                                  static_cast<uint8_t>(word >> 24)};
  std::array<char, 128> text{};
  const size_t size = LLVMDisasmInstruction(Context(context_), bytes.data(), bytes.size(), address,
                                            text.data(), text.size());
  if (size != bytes.size()) return std::nullopt;
  return Normalise(text.data());
}

}  // namespace bpfdiff
