// Which lines of a file ran, from the segments of `llvm-cov export`: the
// same rule llvm-cov applies for its line counts and its line-by-line view
// (LineCoverageStats in LLVM's CoverageMapping.cpp), so that the lines a
// report names as never run are the ones llvm-cov counts as missed.
//
// A segment is [line, column, count, has count, is region entry, is gap
// region]. A line counts when a region that is not a gap starts on it, or
// when the region in effect as the line begins (the last segment before
// it) has a count, unless the line starts a skipped region (code the
// preprocessor removed). Its count is the largest of those regions'.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "support/json_fields.h"
#include "support/result.h"

namespace bpfdiff::report {

struct LineCount {
  uint64_t line = 0;
  uint64_t count = 0;
};

// The file's counted lines, ascending; `where` names the segments in errors.
Result<std::vector<LineCount>> LinesFromSegments(const Json& segments, std::string_view where);

}  // namespace bpfdiff::report
