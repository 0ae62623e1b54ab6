// The most frequent reasons a case was not comparable or was
// rejected, over conformance and every fuzz target: a morning's first
// question is "what are we not testing, and how much of it".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "report/report_model.h"

namespace bpfdiff::report {

enum class ReasonKind : uint8_t { kNotComparable, kRejected };

struct ReasonCount {
  std::string source;  // "conformance jit", "diff_fuzzer"
  std::string reason;
  int64_t count = 0;
};

struct TopReasons {
  std::vector<ReasonCount> top;  // most frequent first
  size_t distinct = 0;           // how many there were in all
  int64_t total = 0;             // cases over all of them
};

// Conformance contributes its engine runs that were not comparable (grouped by engine and
// reason); fuzz targets their stats' reasons.
TopReasons MostFrequentReasons(const ReportModel& model, ReasonKind kind, size_t keep);

}  // namespace bpfdiff::report
