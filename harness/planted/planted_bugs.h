// Planted bugs: known defects the JIT, the prog pack, the pack lifecycle or
// the trampoline can be told to have, so that bpfdiff can be shown to catch
// what it claims to catch (negative controls).
//
// This is the one registry: every planted bug is one row of the catalog,
// with its name, what it breaks, and the fuzz target that must catch it. A
// row switches its bug on through the part of PlantedBugs it belongs to;
// every consumer applies the parts it has (the JIT its JitBugs, the pack
// its PackBugs, the lifecycle world its LifecycleBugs, the trampoline
// emitter its TrampolineBugs), so a bug applies wherever its code runs.
//
// Library code never reads the environment: a `main` (of the tool or of a
// fuzz target) reads BPFDIFF_PLANTED_BUG, asks PlantedBugsNamed() for the
// bugs, prints PlantedBugBanner() and passes the bugs down.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "jit/jit.h"
#include "jit/prog_pack.h"
#include "jit/trampoline.h"
#include "kernelsrc/kernel_jit.h"
#include "support/result.h"

namespace bpfdiff {

// Bugs of the pack lifecycle around the allocator (harness/lifecycle).
struct LifecycleBugs {
  bool free_without_grace_period = false;  // the deferred free is skipped
  bool grace_period_for_entry_only = false;  // a free waits only for calls that began in the program
};

// Where a planted bug lives, for the catalog's grouping.
enum class BugArea : uint8_t {
  kAlu,           // ALU operations and their encodings
  kExtension,     // sign and zero extension
  kJump,          // jumps and branch encodings
  kMemory,        // loads and stores, their addressing forms
  kProbeMem,      // PROBE_MEM loads and the exception table
  kAtomic,        // atomics, LSE and LL/SC
  kCall,          // helper calls, local calls and tail calls
  kFrame,         // the stack frame, prologue and epilogue
  kPack,          // the prog pack allocator
  kIcache,        // instruction-cache maintenance
  kGracePeriod,   // freeing code some CPU may still run
  kRecursion,     // the trampoline's recursion counters
};
std::string_view BugAreaName(BugArea area);

// The bugs switched on for one run: none by default.
struct PlantedBugs {
  std::string name;  // the catalog row's name; empty: none
  jit::JitBugs jit;
  jit::PackBugs pack;
  LifecycleBugs lifecycle;
  jit::TrampolineBugs trampoline;
  kernelsrc::ShimBugs kernel_shims;  // the kernel's JIT's services (kernelsrc/)

  bool any() const { return !name.empty(); }
};

// One row of the catalog.
struct PlantedBugInfo {
  std::string_view name;
  BugArea area;
  std::string_view what;    // what the bug does, in one line
  std::string_view target;  // the fuzz target that must catch it
  // The upstream commit that fixed this class of bug in a shipped kernel
  // ("<12-hex id> <subject> (<arch>)"), or, for the few controls that never
  // shipped, where the class was caught ("review: ...").
  std::string_view fixed_by;
  // Whether the bug shows only for particular operand values (an immediate,
  // an offset, a bound, a register's upper half), rather than for any
  // program that runs the code.
  bool value_dependent;
  void (*plant)(PlantedBugs& bugs);
  // Only a build with the kernel's JIT has its code and its target.
  bool needs_kernel_jit = false;
};

// Whether `fixed_by` names a commit of a shipped kernel.
bool FixedUpstream(const PlantedBugInfo& bug);

// Every planted bug, in the catalog's order.
std::span<const PlantedBugInfo> PlantedBugCatalog();

// The row named `name`, if any.
const PlantedBugInfo* FindPlantedBug(std::string_view name);

// The bugs for `name` ("" for none); an unknown name is an error that
// lists the known ones.
Result<PlantedBugs> PlantedBugsNamed(std::string_view name);

// What a process that switched a bug on prints before anything else, so
// that nobody mistakes its divergences for findings. Empty for no bug.
std::string PlantedBugBanner(const PlantedBugs& bugs);

}  // namespace bpfdiff
