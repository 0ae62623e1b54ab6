#include "harness/planted/planted_bugs.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace bpfdiff {
namespace {

constexpr PlantedBugInfo kBugs[] = {
    {"alu32-add-no-zext", "JIT: a 32-bit add is done as a 64-bit add (no zero-extension)"},
    {"extable-against-rw", "JIT: exception-table offsets computed against the RW image"},
    {"llsc-address-overwritten", "JIT: LL/SC fetch atomics reuse dst as the address after loading src"},
    {"tail-call-limit-34", "JIT: the tail-call counter is checked against 34 instead of 33"},
    {"extra-pass-grows", "JIT: the extra pass emits one more word, so the JIT refuses programs with subprograms"},
    {"flush-before-copy", "pack: finalize flushes the caches before copying the image"},
    {"skip-invalidate-on-free", "pack: free leaves the old code in the slot"},
    {"per-word-invalidate", "pack: free fills and flushes one word at a time"},
    {"free-without-grace-period", "pack lifecycle: a program is freed while a CPU may still run it"},
    {"recursion-exit-wrong-context", "recursion: the exit path decrements another context's byte"},
    {"recursion-check-then-increment", "recursion: rawtp-style check, then increment, preemptible between"},
    {"recursion-rctx-wrong-bits", "recursion: rctx computed from the wrong preempt_count bits"},
};

}  // namespace

std::span<const PlantedBugInfo> KnownPlantedBugs() { return kBugs; }

Result<PlantedBugs> PlantedBugsNamed(std::string_view name) {
  PlantedBugs bugs;
  if (name.empty()) return bugs;
  bugs.name = std::string(name);
  if (name == "alu32-add-no-zext") {
    bugs.jit.alu32_add_no_zext = true;
  } else if (name == "extable-against-rw") {
    bugs.jit.extable_against_rw = true;
  } else if (name == "llsc-address-overwritten") {
    bugs.jit.llsc_address_overwritten = true;
  } else if (name == "tail-call-limit-34") {
    bugs.jit.tail_call_limit_34 = true;
  } else if (name == "extra-pass-grows") {
    bugs.jit.extra_pass_grows = true;
  } else if (name == "flush-before-copy") {
    bugs.pack.flush_before_copy = true;
  } else if (name == "skip-invalidate-on-free") {
    bugs.pack.skip_invalidate_on_free = true;
  } else if (name == "per-word-invalidate") {
    bugs.pack.per_word_invalidate = true;
  } else if (name == "free-without-grace-period") {
    bugs.free_without_grace_period = true;
  } else if (name.starts_with("recursion-")) {
    bool known = false;
    for (const auto& bug : kBugs) known |= bug.name == name;
    if (!known) return Fail("unknown planted bug '{}'", name);
    bugs.recursion = std::string(name);
  } else {
    std::string names;
    for (const auto& bug : kBugs) names += fmt::format("\n  {}: {}", bug.name, bug.what);
    return Fail("unknown planted bug '{}'; known:{}", name, names);
  }
  return bugs;
}

Result<PlantedBugs> PlantedBugsFromEnvironment() {
  const char* value = std::getenv("BPFDIFF_PLANTED_BUG");
  if (value == nullptr || *value == '\0') return PlantedBugs{};
  auto bugs = PlantedBugsNamed(value);
  if (bugs) {
    fmt::print(stderr,
               "******************************************************************\n"
               "* BPFDIFF_PLANTED_BUG={}: a known bug is switched on on purpose.\n"
               "* Divergences are expected; this is a negative control, not a test.\n"
               "******************************************************************\n",
               value);
  }
  return bugs;
}

}  // namespace bpfdiff
