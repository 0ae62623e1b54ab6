#include "report/line_coverage.h"

#include <algorithm>
#include <span>

#include <fmt/format.h>

namespace bpfdiff::report {
namespace {

struct Segment {
  uint64_t line = 0;
  uint64_t count = 0;
  bool has_count = false;
  bool region_entry = false;
  bool gap = false;

  // Where a region with code, not a gap, begins.
  bool StartsRegion() const { return has_count && region_entry && !gap; }
};

Result<Segment> SegmentFromJson(const Json& json, std::string_view where) {
  if (!json.is_array() || json.size() < 6 || !json[0].is_number_unsigned() || !json[2].is_number_unsigned() ||
      !json[3].is_boolean() || !json[4].is_boolean() || !json[5].is_boolean()) {
    return Fail("{}: expected [line, column, count, has count, is region entry, is gap region]", where);
  }
  return Segment{json[0].get<uint64_t>(), json[2].get<uint64_t>(), json[3].get<bool>(), json[4].get<bool>(),
                 json[5].get<bool>()};
}

}  // namespace

Result<std::vector<LineCount>> LinesFromSegments(const Json& segments, std::string_view where) {
  if (!segments.is_array()) return Fail("{}: 'segments' is not an array", where);
  std::vector<Segment> all;
  all.reserve(segments.size());
  for (size_t i = 0; i < segments.size(); ++i) {
    auto segment = SegmentFromJson(segments[i], fmt::format("{}.segments[{}]", where, i));
    if (!segment) return segment.error();
    if (!all.empty() && segment->line < all.back().line) {
      return Fail("{}.segments[{}]: line {} after line {}: llvm-cov sorts segments", where, i, segment->line,
                  all.back().line);
    }
    all.push_back(*segment);
  }
  std::vector<LineCount> lines;
  if (all.empty()) return lines;
  const Segment* wrapped = nullptr;  // the segment in effect as the line begins
  size_t next = 0;
  for (uint64_t line = all.front().line; line <= all.back().line; ++line) {
    const size_t first = next;
    while (next < all.size() && all[next].line == line) ++next;
    const auto on_line = std::span<const Segment>(all).subspan(first, next - first);
    const bool starts_skipped = !on_line.empty() && !on_line.front().has_count && on_line.front().region_entry;
    const bool starts_region = std::any_of(on_line.begin(), on_line.end(), [](const Segment& s) { return s.StartsRegion(); });
    if (!starts_skipped && ((wrapped != nullptr && wrapped->has_count) || starts_region)) {
      uint64_t count = wrapped != nullptr ? wrapped->count : 0;
      for (const Segment& s : on_line) {
        if (s.StartsRegion()) count = std::max(count, s.count);
      }
      lines.push_back({line, count});
    }
    if (!on_line.empty()) wrapped = &on_line.back();
  }
  return lines;
}

}  // namespace bpfdiff::report
