// What a fuzz target's main reads from its environment, once, in
// LLVMFuzzerInitialize (library code reads none):
//
//   BPFDIFF_PLANTED_BUG=<name>        a planted bug to switch on (a negative
//                                     control; the banner says so on stderr)
//   BPFDIFF_FUZZ_STATS_JSON=<path>    where to write the target's counters
//                                     for the nightly report; every `%p` in
//                                     it becomes the process id, so that
//                                     the workers of libFuzzer's -fork=N,
//                                     each a process of its own, write a
//                                     file each (DIR/diff_fuzzer.%p.json)
//                                     instead of overwriting one
//   BPFDIFF_ENGINES=all|kernel|trees diff_fuzzer's engines: the interpreter
//                                     and bpfdiff's JIT (all, the default)
//                                     or the kernel's own JIT (kernel: a
//                                     build that read a Linux tree), of
//                                     one tree linked beside it
//                                     (kernel@6.1.192), or of every tree
//                                     it links (trees: JIT against JIT
//                                     across trees, harness/diff/engines.h);
//                                     pack_fuzzer's JIT: bpfdiff's (all) or
//                                     the kernel's, LSE atomics (kernel).
//                                     diff_fuzzer_kernel and
//                                     pack_fuzzer_kernel default to kernel
//   BPFDIFF_EXECUTOR=vixl|unicorn     diff_fuzzer's arm64 emulator: VIXL's
//                                     simulator runs every input and
//                                     Unicorn checks it (the default where
//                                     the build has VIXL), or Unicorn
//                                     alone (the default elsewhere: a
//                                     fuzz-targets-only build not given
//                                     VIXL's source has none)
//   BPFDIFF_UNICORN_FAULT=CALL[:SKIP] a Unicorn call made to fail on purpose
//                                     (open, map or start; after SKIP such
//                                     calls succeeded), to show what the
//                                     target does when Unicorn fails
//
// An unknown bug name or a malformed fault ends the process with status 2
// and says why: a control that silently ran without its bug would prove
// nothing.
//
// When Unicorn fails, the target has no finding to report: the input is
// not at fault, and nothing after the failure can be trusted. It says so
// once, on stderr, naming the call and uc_strerror's text, writes its
// stats file, and exits with status 2 (kHarnessFailureExit), as every
// bpfdiff command does when it cannot do its job: not libFuzzer's crash
// status (77) or ASan's (1), no crash artifact, nothing for ClusterFuzz to
// file, and not again for every later input. It exits with _Exit, past
// libFuzzer's exit hook, which would otherwise file the exit as a crash of
// the input ("fuzz target exited").
#pragma once

#include <string>
#include <string_view>

#include "fuzz/stats/stats_file.h"
#include "harness/machine/machine.h"
#include "harness/planted/planted_bugs.h"

namespace bpfdiff::fuzz {

inline constexpr int kHarnessFailureExit = 2;

struct TargetSettings {
  PlantedBugs bugs;
  std::string stats_path;     // empty: no stats file; `%p` already replaced
  UnicornFault unicorn_fault;  // none by default
  std::string engines = "all";  // harness/diff/engines.h: all, kernel, kernel@<version> or trees
  std::string executor;         // vixl or unicorn; empty: the target's default
};

// `engines`: the target's engines unless BPFDIFF_ENGINES names others (a
// target built for the kernel's JIT, bpfdiff_kernel_fuzz_target, passes
// "kernel").
TargetSettings ReadTargetSettings(std::string_view target, std::string_view engines = "all");

// `pattern` with every `%p` replaced by `pid`.
std::string ExpandStatsPath(std::string_view pattern, long pid);

// Writes the stats file the settings name (if any); says on stderr why when
// it cannot, and goes on.
void WriteStats(const TargetSettings& settings, const FuzzStatsFile& stats);

// Reports a harness failure (see above) and ends the process with
// kHarnessFailureExit. The caller writes its stats first.
[[noreturn]] void ExitOnHarnessFailure(std::string_view target, std::string_view failure);

}  // namespace bpfdiff::fuzz
