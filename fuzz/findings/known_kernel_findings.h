// Divergences of the kernel's own JIT that bpfdiff has found and explained
// (kernelsrc/SHIMS.md, "Findings in the kernel's code"; named as in
// kernelsrc/known_findings.txt), recognized by what makes them rather than
// by a file name, so that a fuzzer on the kernel's engines counts them and
// goes on looking for new ones: a campaign from an empty corpus meets the
// ones below within seconds, and would otherwise stop (or, under -fork,
// file dozens of artifacts) for what is known.
//
// Each test is as narrow as the finding: a new bug of the same instruction
// in another shape (an offset, another register) is not taken for it.
#pragma once

#include <optional>
#include <string_view>

#include "harness/diff/differential.h"
#include "harness/diff/localize.h"

namespace bpfdiff::fuzz {

// The known finding `diverged` (a run of `run`) is, if any:
//  - "atomic-fetch-src-is-dst": the kernel's LL/SC lowering, and the
//    culprit (when one is located; else the instruction the run faulted
//    at) is a fetching atomic other than cmpxchg whose src is its dst, at
//    offset 0;
//  - "tailcall-count-rules": a kernel engine, where the interpreter's run
//    (on the same input memory) counted a tail call to an empty slot and
//    then refused one at the limit, which the kernel's JIT, not counting
//    the empty slot, takes;
//  - "arena-st-offsets": a kernel engine, and the located culprit is an
//    arena store of an immediate whose offset the store's immediate form
//    cannot hold.
std::optional<std::string_view> KnownKernelFinding(const CaseRun& run, const EngineRun& diverged,
                                                   const Localization* localization);

// The known finding `diverged` is, where that is certain without locating
// the culprit (which steps both engines again, a few milliseconds a case):
//  - "tailcall-count-rules": its test reads the interpreter's tail calls
//    only;
//  - "atomic-fetch-src-is-dst": the LL/SC lowering diverged, the LSE
//    lowering of the same tree matched on the same input memory, and every
//    atomic of the case has the finding's shape. The two lowerings differ
//    in their atomics alone (bpf_jit_comp.c asks cpus_have_cap() for LSE in
//    build_insn's atomics and in bpf_jit_supports_insn, whose refusal is
//    not a divergence), so one of those atomics made the difference.
// Otherwise nullopt: localize, then ask KnownKernelFinding.
std::optional<std::string_view> CertainKnownKernelFinding(const CaseRun& run, const EngineRun& diverged);

// The known finding `diverged` (a run of `run`, the case `source` run by
// `runner`) is, where the finding's own semantics explain the engine's
// outcome: the interpreter, run again by `runner` alone with the diverged
// engine's frames on the case with the finding's effect applied, gives
// exactly that outcome. One interpreter run, where locating the culprit
// steps both engines again:
//  - "arena-st-offsets": each arena store of an immediate at an offset the
//    store's immediate form cannot hold made `ja +0` (6.12's store faults,
//    and its exception-table entry skips it). A kernel engine whose
//    outcome needs anything more is left to the culprit's search.
// The runner's engines are left as they were; the sandbox's environment
// holds the changed case afterwards (a localization installs its own).
std::optional<std::string_view> KnownKernelFindingBySemantics(DifferentialRunner& runner, const CaseSource& source,
                                                              const CaseRun& run, const EngineRun& diverged);

}  // namespace bpfdiff::fuzz
