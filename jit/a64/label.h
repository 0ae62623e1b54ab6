// Branch targets in code being emitted: the one label-and-fixup mechanism
// of the JIT's lowerings (jit/jump.cc) and the trampoline (jit/trampoline.cc).
//
// A branch to a label that is not bound yet is emitted as a placeholder of
// the branch's size (NOP) and recorded with its shape; binding the label
// patches every recorded branch. A branch to a bound label (a loop) is
// encoded at once. So sizes never depend on where a label lands, and the
// kernel's two passes (sizing, writing) emit the same number of words.
//
// A label holds at most kMaxForwardBranches pending branches. One more is
// emitted as kBreakFault instead of being recorded, in every build: the
// JIT's validation pass (and EmitTrampoline) rejects code that still holds
// that word, as it rejects any operand an encoder could not encode.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "jit/a64/aliases.h"
#include "jit/a64/encoder.h"
#include "jit/a64/operands.h"

namespace bpfdiff::a64 {

// What a branch tests: nothing (B), a condition (B.cond), or a register
// being zero or not (CBZ / CBNZ of `width`).
struct BranchShape {
  enum class Kind : uint8_t { kAlways, kCond, kIfZero, kIfNonZero };
  Kind kind = Kind::kAlways;
  Cond cond = Cond::kAl;
  Width width = Width::kX;
  Reg reg = Reg::kZr;
};

constexpr BranchShape BranchAlways() { return {}; }
constexpr BranchShape BranchIf(Cond cond) { return {BranchShape::Kind::kCond, cond, Width::kX, Reg::kZr}; }
constexpr BranchShape BranchIfZero(Width width, Reg reg) {
  return {BranchShape::Kind::kIfZero, Cond::kAl, width, reg};
}
constexpr BranchShape BranchIfNonZero(Width width, Reg reg) {
  return {BranchShape::Kind::kIfNonZero, Cond::kAl, width, reg};
}

// The branch word of `shape` over `byte_offset` (kBreakFault when the
// offset does not fit its immediate).
constexpr uint32_t EncodeBranch(const BranchShape& shape, int64_t byte_offset) {
  switch (shape.kind) {
    case BranchShape::Kind::kAlways: return B(byte_offset);
    case BranchShape::Kind::kCond: return ConditionalBranchImmediate(shape.cond, byte_offset);
    case BranchShape::Kind::kIfZero:
      return CompareAndBranchImmediate(CompareBranchOp::kCbz, shape.width, shape.reg, byte_offset);
    case BranchShape::Kind::kIfNonZero:
      return CompareAndBranchImmediate(CompareBranchOp::kCbnz, shape.width, shape.reg, byte_offset);
  }
  return kBreakFault;
}

class Label {
 public:
  static constexpr size_t kMaxForwardBranches = 4;

  bool bound() const { return target_ >= 0; }

  // The word to emit at word index `idx` for a branch of `shape` to this
  // label: the branch itself when the label is bound; otherwise a NOP that
  // Bind() patches, or kBreakFault when the label already holds
  // kMaxForwardBranches pending branches.
  uint32_t BranchFrom(uint32_t idx, const BranchShape& shape) {
    if (bound()) return EncodeBranch(shape, (target_ - int64_t{idx}) * 4);
    if (count_ == pending_.size()) return kBreakFault;
    pending_[count_++] = {idx, shape};
    return Nop();
  }

  // Binds the label to word index `target` and hands each pending branch's
  // word to `patch(idx, word)`. Labels are bound once.
  template <typename Patch>
  void Bind(uint32_t target, Patch&& patch) {
    target_ = target;
    for (size_t i = 0; i < count_; ++i) {
      const Pending& p = pending_[i];
      patch(p.idx, EncodeBranch(p.shape, (int64_t{target} - int64_t{p.idx}) * 4));
    }
    count_ = 0;
  }

 private:
  struct Pending {
    uint32_t idx = 0;
    BranchShape shape;
  };
  std::array<Pending, kMaxForwardBranches> pending_{};
  size_t count_ = 0;
  int64_t target_ = -1;
};

}  // namespace bpfdiff::a64
