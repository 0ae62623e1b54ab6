#include "harness/diff/compare.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "isa/program.h"
#include "oracle/helpers.h"

namespace bpfdiff {
namespace {

struct Namer {
  std::string_view a, b;

  template <typename T>
  Verdict Differ(std::string field, const T& x, const T& y) const {
    return {Verdict::Kind::kDivergence, std::move(field), fmt::format("{} {}, {} {}", a, x, b, y)};
  }
};

std::string Hex(uint64_t v) { return fmt::format("0x{:x}", v); }

// The first differing byte of two equally long memory images.
// frame_size != 0: x and y are BPF frames of that size, frame 0 first;
// address != 0: they are the bytes from that guest address on.
Verdict CompareBytes(const Namer& n, std::string_view what, const std::vector<uint8_t>& x,
                     const std::vector<uint8_t>& y, size_t frame_size, uint64_t address = 0) {
  if (x.size() != y.size()) {
    return n.Differ(fmt::format("{} size", what), x.size(), y.size());
  }
  if (x.empty() || std::memcmp(x.data(), y.data(), x.size()) == 0) return {};
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == y[i]) continue;
    std::string where;
    if (frame_size != 0) {
      // Stack: frame d, offset from that frame's r10.
      const size_t frame = i / frame_size;
      const auto from_fp = static_cast<int64_t>(i % frame_size) - static_cast<int64_t>(frame_size);
      where = fmt::format("{} frame {} at r10{:+}", what, frame, from_fp);
    } else if (address != 0) {
      where = fmt::format("{} at 0x{:x}", what, address + i);
    } else {
      where = fmt::format("{} byte {}", what, i);
    }
    return n.Differ(where, Hex(x[i]), Hex(y[i]));
  }
  return {};
}

}  // namespace

std::string Verdict::Describe() const {
  switch (kind) {
    case Kind::kMatch: return "match";
    case Kind::kDivergence: return fmt::format("divergence in {}: {}", field, detail);
    case Kind::kNotComparable: return fmt::format("not comparable: {}", detail);
  }
  return "?";
}

Verdict Compare(const Outcome& reference, const Outcome& candidate, std::string_view reference_name,
                std::string_view candidate_name) {
  const Namer n{reference_name, candidate_name};
  auto not_comparable = [](std::string why) { return Verdict{Verdict::Kind::kNotComparable, "", std::move(why)}; };

  // Cases that cannot be compared at all.
  if (reference.end == EndKind::kHarnessError) {
    return not_comparable(fmt::format("{} failed: {}", reference_name, reference.message));
  }
  if (candidate.end == EndKind::kHarnessError) {
    return not_comparable(fmt::format("{} failed: {}", candidate_name, candidate.message));
  }
  if (reference.end == EndKind::kBudget) {
    return not_comparable(fmt::format("{} ran out of its instruction budget", reference_name));
  }

  // How the run ended.
  if (reference.end != candidate.end) {
    return n.Differ("end", reference.Summary(), candidate.Summary());
  }
  if (reference.end == EndKind::kFault && reference.fault && candidate.fault) {
    const FaultInfo& x = *reference.fault;
    const FaultInfo& y = *candidate.fault;
    if (x.program != y.program) return n.Differ("fault program", x.program, y.program);
    if (x.insn != y.insn) return n.Differ("fault instruction", x.insn, y.insn);
    if (x.kind != y.kind) return n.Differ("fault access", AccessKindName(x.kind), AccessKindName(y.kind));
    if (x.address != y.address) return n.Differ("fault address", Hex(x.address), Hex(y.address));
  }
  if ((reference.end == EndKind::kTrap || reference.end == EndKind::kHelperError) &&
      reference.message != candidate.message) {
    return n.Differ("message", reference.message, candidate.message);
  }
  if ((reference.end == EndKind::kExit || reference.end == EndKind::kUnwind) &&
      reference.r0 != candidate.r0) {
    return n.Differ("r0", Hex(reference.r0), Hex(candidate.r0));
  }

  // What the run did on the way.
  const auto& xs = reference.helper_calls;
  const auto& ys = candidate.helper_calls;
  for (size_t i = 0; i < std::min(xs.size(), ys.size()); ++i) {
    if (xs[i].id != ys[i].id) return n.Differ(fmt::format("helper call #{} id", i), xs[i].id, ys[i].id);
    for (size_t a = 0; a < 5; ++a) {
      if (xs[i].args[a] != ys[i].args[a]) {
        return n.Differ(fmt::format("helper call #{} ({}) argument r{}", i, xs[i].id, a + 1),
                        Hex(xs[i].args[a]), Hex(ys[i].args[a]));
      }
    }
    if (xs[i].ret != ys[i].ret) {
      return n.Differ(fmt::format("helper call #{} ({}) result", i, xs[i].id), Hex(xs[i].ret), Hex(ys[i].ret));
    }
  }
  if (xs.size() != ys.size()) return n.Differ("helper call count", xs.size(), ys.size());
  if (reference.tail_calls != candidate.tail_calls) {
    return n.Differ("tail calls", fmt::format("{}", fmt::join(reference.tail_calls, ",")),
                    fmt::format("{}", fmt::join(candidate.tail_calls, ",")));
  }

  // What the run left in memory.
  if (reference.end == EndKind::kFault && reference.fault && reference.fault->partial &&
      reference.fault->kind == AccessKind::kWrite) {
    return not_comparable("a store faulted part way into unmapped memory; the bytes it wrote are unknown");
  }
  // With per-function frames the stack is a window of guest addresses.
  const bool window = !reference.memory.window.keep.empty();
  if (auto v = CompareBytes(n, "stack", reference.memory.stack, candidate.memory.stack,
                            window ? 0 : isa::kStackSize, window ? reference.memory.window.low : 0);
      !v.match()) {
    return v;
  }
  if (auto v = CompareBytes(n, "context", reference.memory.context, candidate.memory.context, 0); !v.match()) {
    return v;
  }
  if (auto v = CompareBytes(n, "map values", reference.memory.map_values, candidate.memory.map_values, 0);
      !v.match()) {
    return v;
  }
  if (auto v = CompareBytes(n, "arena", reference.memory.arena, candidate.memory.arena, 0); !v.match()) return v;
  return {};
}

Verdict CompareHelperWithInlined(const Outcome& reference, const Outcome& candidate,
                                 std::string_view reference_name, std::string_view candidate_name,
                                 std::span<const int32_t> inlined_helpers) {
  auto inlined = [&](int32_t id) {
    return std::find(inlined_helpers.begin(), inlined_helpers.end(), id) != inlined_helpers.end();
  };
  for (const Outcome* outcome : {&reference, &candidate}) {
    const std::optional<int32_t> refused = outcome->refusing_helper;
    if (outcome->end == EndKind::kHelperError && refused && inlined(*refused)) {
      const HelperInfo* helper = FindHelper(*refused);
      return {Verdict::Kind::kNotComparable, "",
              fmt::format("{} refused its arguments, which its inline rewrite does not check",
                          helper != nullptr ? helper->name : "the helper")};
    }
  }
  auto without_inlined = [&](const Outcome& outcome) {
    Outcome copy = outcome;
    std::erase_if(copy.helper_calls, [&](const HelperCall& call) { return inlined(call.id); });
    return copy;
  };
  return Compare(without_inlined(reference), without_inlined(candidate), reference_name, candidate_name);
}

}  // namespace bpfdiff
