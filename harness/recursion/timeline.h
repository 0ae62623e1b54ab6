// The event timeline of a run as a readable table, and a run's summary.
#pragma once

#include <string>

#include "harness/recursion/runner.h"

namespace bpfdiff::recursion {

// One row per thing that happened: events applied or refused, calls fired,
// decisions, returns; with the program's active state and misses counter on
// that CPU and the CPU's preempt_count after it.
std::string FormatTimeline(const RunResult& result);

// Invocations (run / miss), findings and notes.
std::string FormatSummary(const RunResult& result);

// "[01 00 00 00]" for the byte policies, "1" for the int counter.
std::string FormatActive(Policy policy, uint32_t active);

}  // namespace bpfdiff::recursion
