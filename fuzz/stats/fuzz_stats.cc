#include "fuzz/stats/fuzz_stats.h"

#include <cctype>
#include <algorithm>
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "isa/insn.h"
#include "harness/diff/engines.h"
#include "kernelsrc/kernel_jit.h"
#include "kernelsrc/kernel_loader.h"

namespace bpfdiff::fuzz {

std::string ReasonCategory(const std::string& reason) {
  // A number is a run of decimal digits, or "0x" and hex digits; each
  // becomes one N. Letters after a decimal number stay ("4bytes").
  std::string out;
  bool in_number = false, in_hex = false;
  for (size_t i = 0; i < reason.size(); ++i) {
    const auto c = static_cast<unsigned char>(reason[i]);
    const bool starts_hex = in_number && !in_hex && c == 'x' && reason[i - 1] == '0' &&
                            (i < 2 || !std::isdigit(static_cast<unsigned char>(reason[i - 2])));
    if (std::isdigit(c) || starts_hex || (in_hex && std::isxdigit(c))) {
      if (!in_number) out += 'N';
      in_number = true;
      in_hex = in_hex || starts_hex;
      continue;
    }
    in_number = in_hex = false;
    out += static_cast<char>(c);
  }
  // Cut long reasons, visibly: "..." tells a reader the rest is missing.
  constexpr size_t kMaxLength = 100;
  return out.size() > kMaxLength ? out.substr(0, kMaxLength) + "..." : out;
}

namespace {

// What a refusal of a branch beyond its range reads as (harness/diff/
// kernel_refusals.h, KernelBranchOutOfRange).
constexpr std::string_view kBranchBeyondRange = "branch beyond its encoding's range";

// A conditional jump over 29,000 instructions or more, as the far-branch
// block's (fuzz/generator/far_branch.h, whose shortest filler is 29,100):
// no other construct jumps that far.
constexpr int32_t kFarJump = 29000;

bool HasFarConditionalJump(const CaseSource& source) {
  for (const auto& insns : source.programs) {
    if (insns.size() < static_cast<size_t>(kFarJump)) continue;
    for (const isa::Insn& insn : insns) {
      const uint8_t cls = isa::ClassOf(insn.opcode);
      const bool jump = cls == isa::kClassJmp || cls == isa::kClassJmp32;
      const bool conditional = jump && isa::OpOf(insn.opcode) != isa::kJmpJa && insn.opcode != isa::kOpCall &&
                               insn.opcode != isa::kOpExit;
      if (conditional && insn.offset >= kFarJump) return true;
    }
  }
  return false;
}

// Whether a program of `source` has a per-CPU move (mov64 with offset
// BPF_ADDR_PERCPU).
bool HasPerCpuMove(const CaseSource& source) {
  for (const auto& program : source.programs) {
    for (const isa::Insn& insn : program) {
      if (isa::IsPerCpuAddressMove(insn)) return true;
    }
  }
  return false;
}

}  // namespace

FuzzStats::FuzzStats(std::string target)
    : target_(std::move(target)),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_),
      generated_(isa::AllForms().size(), false),
      completed_(isa::AllForms().size(), false) {}

void FuzzStats::Record(const CaseSource& source, const CaseRun& run,
                       const std::vector<std::vector<uint8_t>>& executed) {
  ++inputs_;
  if (run.load_error) {
    ++rejected_reasons_[ReasonCategory(*run.load_error)];
    return;
  }
  ++compared_;
  // The trees whose kernel engines ran the case and compared it (matched
  // or diverged): each once per case.
  std::set<std::string> trees;
  for (const auto& engine_run : run.runs) {
    if (!engine_run.engine.starts_with("kernel-") || engine_run.verdict.kind == Verdict::Kind::kNotComparable) continue;
    const EngineSpec* spec = FindEngine(engine_run.engine);
    const kernelsrc::KernelTree* tree = kernelsrc::TreeOrBuilt(spec != nullptr ? spec->tree : nullptr);
    if (tree != nullptr) trees.insert(tree->version);
  }
  for (const std::string& version : trees) ++compared_by_tree_[version];
  // Coverage is the interpreter's, of the case as it ran it.
  const LoadedCase& loaded = run.LoadedFor(false);
  // Forms as written in the source (it validated, so each slot has one); an
  // lddw's second slot is the lddw's.
  const auto form_of = [&](size_t p, size_t slot) {
    const auto& insns = source.programs[p];
    const bool second = slot > 0 && insns[slot - 1].opcode == isa::kOpLddw;
    return isa::Classify(second ? insns[slot - 1] : insns[slot]).value_or(0);
  };
  for (const auto& insns : source.programs) {
    for (size_t pc = 0; pc < insns.size(); ++pc) {
      if (pc > 0 && insns[pc - 1].opcode == isa::kOpLddw) continue;
      if (const auto form = isa::Classify(insns[pc])) generated_[*form] = true;
    }
  }
  // Each reason counts once per case, however many engines gave it.
  std::vector<std::string> reasons;
  bool all_match = true;
  size_t refused = 0;  // engines whose verifier refused the case
  for (const auto& engine_run : run.runs) {
    refused += engine_run.verifier_refused;
    if (engine_run.verdict.kind == Verdict::Kind::kNotComparable) {
      std::string reason = ReasonCategory(engine_run.verdict.detail);
      if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(std::move(reason));
      // An engine whose verifier refuses the case never runs it: the
      // others may still complete its forms.
      all_match = all_match && engine_run.verifier_refused;
    } else if (engine_run.verdict.kind == Verdict::Kind::kDivergence) {
      all_match = false;
    }
  }
  for (const auto& reason : reasons) ++not_comparable_reasons_[reason];
  for (const auto& engine_run : run.runs) {
    if (engine_run.loader == nullptr || !engine_run.outcome) continue;
    if (loader_states_.empty()) {
      for (const auto& loader : kernelsrc::ClassicLoaders()) loader_states_.emplace(loader.state, 0);
      for (const auto& loader : kernelsrc::HardenedLoaders()) loader_states_.emplace(loader.state, 0);
    }
    ++loader_states_[engine_run.loader->state];
    if (engine_run.loader->vhe && HasPerCpuMove(source)) ++per_cpu_move_at_el2_;
  }
  if (HasFarConditionalJump(source)) {
    const bool beyond = std::any_of(reasons.begin(), reasons.end(), [](const std::string& reason) {
      return reason.find(kBranchBeyondRange) != std::string::npos;
    });
    ++(beyond ? far_branch_beyond_range_ : far_branch_within_range_);
  }
  not_comparable_ += !reasons.empty();
  const Outcome* reference = run.runs.empty() || !run.runs.front().outcome ? nullptr : &*run.runs.front().outcome;
  if (reference != nullptr) ++ends_[std::string(EndKindName(reference->end))];
  if (reference != nullptr) tail_call_states_.Count(*reference);
  for (const auto& variant : run.variants) {
    if (!variant.empty() && variant.front().outcome) tail_call_states_.Count(*variant.front().outcome);
  }
  // With a refusal, some engine besides the reference must have run it.
  if (!all_match || reference == nullptr || (refused > 0 && run.runs.size() - refused < 2)) return;
  ++matched_;
  if (reference->end != EndKind::kExit && reference->end != EndKind::kUnwind) return;
  for (size_t p = 0; p < executed.size() && p < loaded.programs.size(); ++p) {
    const auto& source_slot = loaded.programs[p].source_slot;
    for (size_t pc = 0; pc < executed[p].size() && pc < source_slot.size(); ++pc) {
      if (executed[p][pc]) completed_[form_of(p, source_slot[pc])] = true;
    }
    CountThrow(loaded.programs[p].program, executed[p]);
  }
}

void FuzzStats::CountThrow(const isa::Program& program, const std::vector<uint8_t>& executed) {
  // Its exception callback ran: the program threw, from the bpf_throw that
  // ran (one, since it does not return).
  const uint32_t callback = program.exception_callback;
  if (callback == 0 || callback >= executed.size() || !executed[callback]) return;
  for (uint32_t pc = 0; pc < callback; ++pc) {
    if (!executed[pc] || program.slots[pc].second_slot ||
        isa::FormById(program.slots[pc].form).shape != isa::Shape::kCallKfunc) {
      continue;
    }
    ++(program.SubprogramOf(pc) == 0 ? thrown_by_the_program_ : thrown_by_a_subprogram_);
    return;
  }
}

size_t FuzzStats::forms_generated() const {
  return static_cast<size_t>(std::count(generated_.begin(), generated_.end(), true));
}
size_t FuzzStats::forms_completed() const {
  return static_cast<size_t>(std::count(completed_.begin(), completed_.end(), true));
}

std::vector<std::string> FuzzStats::MissingForms() const {
  std::vector<std::string> missing;
  for (const auto& form : isa::AllForms()) {
    if (!completed_[form.id]) missing.push_back(form.name);
  }
  return missing;
}

void FuzzStats::MaybePrint(std::chrono::seconds interval) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_print_ < interval) return;
  last_print_ = now;
  Print();
}

double FuzzStats::Seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

FuzzStatsFile FuzzStats::ToFile() const {
  FuzzStatsFile file;
  file.target = target_;
  file.seconds = Seconds();
  file.inputs = inputs_ + not_ours_;
  file.counters = {{"compared", compared_},      {"agreed", matched_}, {"not_comparable", not_comparable_},
                   {"extra_runs", extra_runs_}, {"not_ours", not_ours_}, {"new_inputs", new_inputs_}};
  for (const auto& [name, cases] : known_findings_) file.counters.emplace_back("known finding " + name, cases);
  for (const auto& [version, cases] : compared_by_tree_) {
    file.counters.emplace_back(std::string(kComparedByTree) + version, cases);
  }
  if (executor_ != "unicorn") file.counters.emplace_back("checked on unicorn (" + executor_ + " ran)", emulator_checks_);
  file.not_comparable = MostFrequentFirst({not_comparable_reasons_.begin(), not_comparable_reasons_.end()});
  file.rejected = MostFrequentFirst({rejected_reasons_.begin(), rejected_reasons_.end()});
  file.forms = FormCoverage{forms_total(), forms_generated(), forms_completed(), MissingForms()};
  file.states_reached = tail_call_states_.Reached();
  file.states_reached.emplace_back("far_branch_within_range", far_branch_within_range_);
  file.states_reached.emplace_back("far_branch_beyond_range_refused", far_branch_beyond_range_);
  for (const auto& [state, runs] : loader_states_) file.states_reached.emplace_back(std::string(state), runs);
  if (!loader_states_.empty()) file.states_reached.emplace_back("per_cpu_move_at_el2", per_cpu_move_at_el2_);
  file.states_reached.emplace_back("exception_thrown_by_the_program", thrown_by_the_program_);
  file.states_reached.emplace_back("exception_thrown_by_a_subprogram", thrown_by_a_subprogram_);
  file.states_largest = tail_call_states_.Largest();
  return file;
}

namespace {

// "  not comparable (3 reasons, 57 cases): 51 interp ran out of ...; ..."
// with at most `shown` reasons, most frequent first, one per line.
std::string ReasonLines(std::string_view what, const std::map<std::string, uint64_t>& reasons, size_t shown) {
  uint64_t cases = 0;
  for (const auto& [reason, count] : reasons) cases += count;
  std::string out = fmt::format("  {}: {} reasons, {} cases{}\n", what, reasons.size(), cases,
                                reasons.size() > shown ? fmt::format(" (the {} most frequent below)", shown) : "");
  const NamedCounts sorted = MostFrequentFirst({reasons.begin(), reasons.end()});
  for (size_t i = 0; i < sorted.size() && i < shown; ++i) {
    out += fmt::format("  {:>10}  {}\n", sorted[i].second, sorted[i].first);
  }
  return out;
}

}  // namespace

void FuzzStats::Print() const {
  const double seconds = Seconds();
  std::string ends;
  for (const auto& [end, count] : ends_) ends += fmt::format(" {}={}", end, count);
  fmt::print(stderr,
             "#{} stats: {:.0f}s, {} inputs ({} new), {} compared ({:.0f}/s), {} agreed, {} not comparable, {} extra runs "
             "({:.0f}/s); forms generated {}/{}, completed on every engine {}/{} ({:.1f}%); ends:{}\n{}{}",
             target_, seconds, inputs_ + not_ours_, new_inputs_, compared_, compared_ / std::max(seconds, 1e-9), matched_,
             not_comparable_, extra_runs_, extra_runs_ / std::max(seconds, 1e-9), forms_generated(), forms_total(),
             forms_completed(), forms_total(),
             100.0 * static_cast<double>(forms_completed()) / static_cast<double>(forms_total()), ends,
             ReasonLines("not comparable", not_comparable_reasons_, kReasonsShown),
             ReasonLines("rejected", rejected_reasons_, kReasonsShown));
  if (!known_findings_.empty()) {
    fmt::print(stderr, "{}", ReasonLines("known findings of the kernel's JIT, not reported (kernelsrc/SHIMS.md)",
                                         known_findings_, kReasonsShown));
  }
  if (executor_ != "unicorn") {
    fmt::print(stderr,
               "  executor: {}; {} runs checked on unicorn (every divergence but the known findings, a sample of "
               "agreements)\n",
               executor_, emulator_checks_);
  }
  fmt::print(stderr, "{}", StateLines(tail_call_states_));
}

std::string StateLines(const TailCallStates& states) {
  std::string reached, not_reached;
  for (const auto& [state, runs] : states.Reached()) {
    if (runs == 0) {
      not_reached += fmt::format("{}{}", not_reached.empty() ? "" : ", ", state);
    } else {
      reached += fmt::format("{}{} {}", reached.empty() ? "" : ", ", state, runs);
    }
  }
  return fmt::format("  tail calls: runs that reached {}; longest chain {}\n  tail calls NOT reached: {}\n",
                     reached.empty() ? "none" : reached, states.longest_chain,
                     not_reached.empty() ? "none" : not_reached);
}

void FuzzStats::PrintFinal() const {
  Print();
  if (cost_ == nullptr) return;
  fmt::print(stderr, "#{} {}", target_, DescribeCost(*cost_, compared_, Seconds(), target_nanos_, mutation_nanos_));
}

std::string DescribeCost(const RunCost& cost, uint64_t compared, double wall_seconds, const TargetNanos& target_nanos,
                         uint64_t mutation_nanos) {
  const double wall_ns = std::max(wall_seconds * 1e9, 1.0);
  const double per = static_cast<double>(std::max<uint64_t>(compared, 1));
  std::string out = fmt::format("cost: {:.1f} s for {} compared programs, {:.1f} µs each\n", wall_seconds, compared,
                                wall_ns / per / 1e3);
  out += fmt::format("  {:<44} {:>6}  {:>11}\n", "phase", "share", "µs/compared");
  auto row = [&](std::string_view name, double ns) {
    out += fmt::format("  {:<44} {:>5.1f}%  {:>11.1f}\n", name, 100.0 * ns / wall_ns, ns / per / 1e3);
  };
  const double translation = static_cast<double>(cost.EstimatedTranslationNanos());
  for (size_t p = 0; p < static_cast<size_t>(RunPhase::kCount); ++p) {
    const auto phase = static_cast<RunPhase>(p);
    const double ns = static_cast<double>(cost.Nanos(phase));
    if (phase == RunPhase::kEmulatorFirst) {
      row("emulator translation (estimated)", translation);
      row("emulator execution, first runs", ns - translation);
      continue;
    }
    row(PhaseName(phase), ns);
  }
  const double runner = static_cast<double>(cost.TotalNanos());
  const double target = static_cast<double>(target_nanos.total);
  const double localization = static_cast<double>(target_nanos.localization);
  const double emulator_check = static_cast<double>(target_nanos.emulator_check);
  row("the target: locating culprits", localization);
  row("the target: the second emulator's runs", emulator_check);
  row("the target, elsewhere (stats, findings)", std::max(target - runner - localization - emulator_check, 0.0));
  row("our mutators", static_cast<double>(mutation_nanos));
  row("libFuzzer's own (rest of the wall time)",
      std::max(wall_ns - std::max(target, runner) - static_cast<double>(mutation_nanos), 0.0));
  out += fmt::format("  guest instructions per compared program: {:.0f} executed, {:.0f} translated\n",
                     static_cast<double>(cost.guest_executed) / per, static_cast<double>(cost.guest_translated) / per);
  return out;
}

}  // namespace bpfdiff::fuzz
