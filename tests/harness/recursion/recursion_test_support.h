// Shared by the recursion tests: one sandbox for the whole test binary, and
// running a schedule written as text.
#pragma once

#include <string_view>

#include <gtest/gtest.h>

#include "harness/recursion/runner.h"

namespace bpfdiff::recursion {

// A sandbox with four CPUs, created once.
Sandbox& TestSandbox();

RunConfig MakeConfig(Policy policy, jit::AtomicLowering lowering = jit::AtomicLowering::kLse,
                     jit::TrampolineBugs bugs = {});

// Parses and runs `text`; a parse or setup error fails the test.
RunResult RunText(std::string_view text, const RunConfig& config);

// The decision of invocation `id`, "" when there is no such invocation.
std::string DecisionOf(const RunResult& run, std::string_view id);

// Whether a timeline row or a note mentions `text`.
bool Mentions(const RunResult& run, std::string_view text);

}  // namespace bpfdiff::recursion
