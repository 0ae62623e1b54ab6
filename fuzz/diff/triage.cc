#include "fuzz/diff/triage.h"

#include <optional>

#include <fmt/format.h>

#include "fuzz/findings/divergence_kind.h"
#include "fuzz/generator/fuzz_format.h"
#include "fuzz/generator/generator.h"
#include "harness/conformance/case_file.h"
#include "isa/opcode_table.h"
#include "support/files.h"

namespace bpfdiff::fuzz {
namespace {

// The branch shape of `insn`, if it is a branch (a jump or a local call).
std::optional<isa::Shape> BranchShape(const isa::Insn& insn) {
  const auto id = isa::Classify(insn);
  if (!id || !isa::IsBranchShape(isa::FormById(*id).shape)) return std::nullopt;
  return isa::FormById(*id).shape;
}

// Removes slots [from, from + count), retargeting every branch: a target in
// the removed range moves to the slot after it.
std::vector<isa::Insn> RemoveSlots(const std::vector<isa::Insn>& insns, size_t from, size_t count) {
  auto new_index = [&](size_t old) { return old < from ? old : old < from + count ? from : old - count; };
  std::vector<isa::Insn> out;
  for (size_t i = 0; i < insns.size(); ++i) {
    if (i >= from && i < from + count) continue;
    isa::Insn insn = insns[i];
    const bool second = i > 0 && insns[i - 1].opcode == isa::kOpLddw;
    if (const auto shape = second ? std::nullopt : BranchShape(insn)) {
      const int64_t target = isa::BranchTarget(insn, *shape, i);
      if (target >= 0 && static_cast<size_t>(target) <= insns.size()) {
        const int64_t moved = static_cast<int64_t>(new_index(static_cast<size_t>(target))) -
                              static_cast<int64_t>(new_index(i)) - 1;
        if (isa::DistanceInImm(*shape)) {
          insn.imm = static_cast<int32_t>(moved);
        } else {
          insn.offset = static_cast<int16_t>(moved);
        }
      }
    }
    out.push_back(insn);
  }
  return out;
}

}  // namespace

size_t CountSlots(const CaseSource& source) {
  size_t n = 0;
  for (const auto& program : source.programs) n += program.size();
  return n;
}

Result<CaseSource> LoadArtifact(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".data" || ext == ".s" || ext == ".asm" || ext == ".bpf") {
    auto file = ReadCaseFile(path);
    if (!file) return file.error();
    return std::move(file->source);
  }
  auto bytes = ReadBinaryFile(path);
  if (!bytes) return bytes.error();
  auto source = DecodeFuzzInput(*bytes);
  if (!source) {
    return Fail("{}: not a fuzz input of format versions {} to {} (and not a .data or assembly file)",
                path.string(), static_cast<int>(kOldestFormatVersion), static_cast<int>(kFormatVersion));
  }
  return std::move(source).value();
}

std::optional<DivergenceSignature> SignatureOf(DiffHarness& harness, const CaseSource& source, const CaseRun& run) {
  const EngineRun* diverged = run.FirstDivergence();
  if (diverged == nullptr) return std::nullopt;
  const Localization localization = harness.Localize(run);
  const auto kind = KindOfFirstDivergence(source, run, &localization);
  return DivergenceSignature{diverged->engine, DescribeKind(*kind)};
}

namespace {

// Shrinks a case in passes, keeping each change only while the case still
// loads and diverges with the same signature.
class Minimizer {
 public:
  Minimizer(DiffHarness& harness, CaseSource source, DivergenceSignature target, int& runs)
      : harness_(harness), best_(std::move(source)), target_(std::move(target)), runs_(runs) {}

  CaseSource Run() {
    for (bool changed = true; changed;) {
      changed = DropLaterPrograms();
      changed |= DropSlots();
      changed |= DropMaps();
      changed |= SimplifyImmediates();
    }
    ShrinkMemory();
    return std::move(best_);
  }

 private:
  bool StillDiverges(const CaseSource& candidate) {
    ++runs_;
    const CaseRun run = harness_.RunCase(candidate);
    if (run.load_error || run.FirstDivergence() == nullptr) return false;
    const auto signature = SignatureOf(harness_, candidate, run);
    return signature && *signature == target_;
  }
  bool Keep(CaseSource candidate) {
    if (!StillDiverges(candidate)) return false;
    best_ = std::move(candidate);
    return true;
  }

  // Later programs (tail-call targets), and their prog_array entries.
  bool DropLaterPrograms() {
    bool changed = false;
    for (size_t p = best_.programs.size(); p-- > 1;) {
      CaseSource candidate = best_;
      candidate.programs.resize(p);
      for (auto& map : candidate.maps) {
        for (auto& entry : map.programs) entry = entry >= static_cast<int32_t>(p) ? -1 : entry;
      }
      changed |= Keep(std::move(candidate));
    }
    return changed;
  }

  // Instructions, in chunks that halve down to one slot (jumps and calls
  // across a removed chunk are retargeted).
  bool DropSlots() {
    bool changed = false;
    for (size_t p = 0; p < best_.programs.size(); ++p) {
      for (size_t chunk = std::max<size_t>(best_.programs[p].size() / 2, 1);; chunk /= 2) {
        for (size_t from = 0; from + chunk <= best_.programs[p].size();) {
          CaseSource candidate = best_;
          candidate.programs[p] = RemoveSlots(best_.programs[p], from, chunk);
          if (!candidate.programs[p].empty() && Keep(std::move(candidate))) {
            changed = true;
          } else {
            from += chunk;
          }
        }
        if (chunk == 1) break;
      }
    }
    return changed;
  }

  // Maps no instruction needs any more.
  bool DropMaps() {
    bool changed = false;
    for (size_t m = best_.maps.size(); m-- > 0;) {
      CaseSource candidate = best_;
      candidate.maps.erase(candidate.maps.begin() + static_cast<ptrdiff_t>(m));
      changed |= Keep(std::move(candidate));
    }
    return changed;
  }

  // Simpler immediates: 0, then 1 (not for branches, whose imm is a
  // distance, nor an lddw's second slot).
  bool SimplifyImmediates() {
    bool changed = false;
    for (size_t p = 0; p < best_.programs.size(); ++p) {
      for (size_t i = 0; i < best_.programs[p].size(); ++i) {
        const bool second = i > 0 && best_.programs[p][i - 1].opcode == isa::kOpLddw;
        if (second || BranchShape(best_.programs[p][i]) || best_.programs[p][i].imm == 0) continue;
        for (int32_t simpler : {0, 1}) {
          if (best_.programs[p][i].imm == simpler) break;
          CaseSource candidate = best_;
          candidate.programs[p][i].imm = simpler;
          if (Keep(std::move(candidate))) {
            changed = true;
            break;
          }
        }
      }
    }
    return changed;
  }

  // Less input memory, halving while the divergence stays.
  void ShrinkMemory() {
    while (!best_.memory.empty()) {
      CaseSource candidate = best_;
      candidate.memory.resize(best_.memory.size() / 2);
      if (!Keep(std::move(candidate))) break;
    }
  }

  DiffHarness& harness_;
  CaseSource best_;
  DivergenceSignature target_;
  int& runs_;
};

}  // namespace

Result<MinimizeResult> Minimize(DiffHarness& harness, const CaseSource& source) {
  MinimizeResult result;
  result.slots_before = CountSlots(source);
  const auto target = SignatureOf(harness, source, harness.RunCase(source));
  ++result.runs;
  if (!target) return Fail("the case does not diverge; there is nothing to minimize");
  result.source = Minimizer(harness, source, *target, result.runs).Run();
  result.slots_after = CountSlots(result.source);
  return result;
}

}  // namespace bpfdiff::fuzz
