#include "harness/planted/planted_bugs.h"

#include <fmt/format.h>

namespace bpfdiff {
namespace {

constexpr PlantedBugInfo kCatalog[] = {
    {"alu32-add-no-zext", BugArea::kExtension, "JIT: a 32-bit add is done as a 64-bit add (no zero-extension)",
     "diff_fuzzer", [](PlantedBugs& b) { b.jit.alu32_add_no_zext = true; }},
    {"llsc-address-overwritten", BugArea::kAtomic,
     "JIT: LL/SC fetch atomics reuse dst as the address after loading src", "diff_fuzzer",
     [](PlantedBugs& b) { b.jit.llsc_address_overwritten = true; }},
    {"tail-call-limit-34", BugArea::kCall, "JIT: the tail-call counter is checked against 34 instead of 33",
     "diff_fuzzer", [](PlantedBugs& b) { b.jit.tail_call_limit_34 = true; }},
    {"extra-pass-grows", BugArea::kJump,
     "JIT: the extra pass emits one more word, so the JIT refuses programs with subprograms", "diff_fuzzer",
     [](PlantedBugs& b) { b.jit.extra_pass_grows = true; }},
    {"extable-against-rw", BugArea::kProbeMem, "JIT: exception-table offsets computed against the RW image",
     "pack_fuzzer", [](PlantedBugs& b) { b.jit.extable_against_rw = true; }},
    {"flush-before-copy", BugArea::kIcache, "pack: finalize flushes the caches before copying the image",
     "pack_fuzzer", [](PlantedBugs& b) { b.pack.flush_before_copy = true; }},
    {"skip-invalidate-on-free", BugArea::kPack, "pack: free leaves the old code in the slot", "pack_fuzzer",
     [](PlantedBugs& b) { b.pack.skip_invalidate_on_free = true; }},
    {"per-word-invalidate", BugArea::kIcache, "pack: free fills and flushes one word at a time", "pack_fuzzer",
     [](PlantedBugs& b) { b.pack.per_word_invalidate = true; }},
    {"free-without-grace-period", BugArea::kGracePeriod,
     "pack lifecycle: a program is freed while a CPU may still run it", "pack_fuzzer",
     [](PlantedBugs& b) { b.lifecycle.free_without_grace_period = true; }},
    {"recursion-exit-wrong-context", BugArea::kRecursion,
     "trampoline: the exit path decrements active[rctx ^ 1] instead of active[rctx] (percontext, landed)",
     "recursion_fuzzer", [](PlantedBugs& b) { b.trampoline.exit_wrong_context = true; }},
    {"recursion-check-then-increment", BugArea::kRecursion,
     "trampoline: rawtp-style check, then increment, preemptible between (two tasks pass)", "recursion_fuzzer",
     [](PlantedBugs& b) { b.trampoline.check_then_increment = true; }},
    {"recursion-rctx-wrong-bits", BugArea::kRecursion,
     "trampoline: rctx tests SOFTIRQ_MASK instead of SOFTIRQ_OFFSET (a bh-disabled task counts as softirq)",
     "recursion_fuzzer", [](PlantedBugs& b) { b.trampoline.rctx_wrong_bits = true; }},
};

}  // namespace

std::string_view BugAreaName(BugArea area) {
  switch (area) {
    case BugArea::kAlu: return "ALU and encodings";
    case BugArea::kExtension: return "sign and zero extension";
    case BugArea::kJump: return "jumps";
    case BugArea::kMemory: return "loads and stores";
    case BugArea::kProbeMem: return "PROBE_MEM and the exception table";
    case BugArea::kAtomic: return "atomics";
    case BugArea::kCall: return "calls and tail calls";
    case BugArea::kFrame: return "the frame";
    case BugArea::kPack: return "the prog pack";
    case BugArea::kIcache: return "i-cache maintenance";
    case BugArea::kGracePeriod: return "grace periods";
    case BugArea::kRecursion: return "recursion";
  }
  return "?";
}

std::span<const PlantedBugInfo> PlantedBugCatalog() { return kCatalog; }

const PlantedBugInfo* FindPlantedBug(std::string_view name) {
  for (const auto& bug : kCatalog) {
    if (bug.name == name) return &bug;
  }
  return nullptr;
}

Result<PlantedBugs> PlantedBugsNamed(std::string_view name) {
  PlantedBugs bugs;
  if (name.empty()) return bugs;
  const PlantedBugInfo* bug = FindPlantedBug(name);
  if (bug == nullptr) {
    std::string names;
    for (const auto& known : kCatalog) names += fmt::format("\n  {}: {}", known.name, known.what);
    return Fail("unknown planted bug '{}'; known:{}", name, names);
  }
  bugs.name = std::string(name);
  bug->plant(bugs);
  return bugs;
}

std::string PlantedBugBanner(const PlantedBugs& bugs) {
  const PlantedBugInfo* bug = FindPlantedBug(bugs.name);
  if (bug == nullptr) return "";
  return fmt::format(
      "******************************************************************\n"
      "* BPFDIFF_PLANTED_BUG={}: a known bug is switched on on purpose.\n"
      "* {}\n"
      "* Divergences are expected; this is a negative control, not a test.\n"
      "******************************************************************\n",
      bug->name, bug->what);
}

}  // namespace bpfdiff
