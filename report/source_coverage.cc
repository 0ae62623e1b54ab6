#include "report/source_coverage.h"

#include <algorithm>

#include <fmt/format.h>

namespace bpfdiff::report {
namespace {

std::optional<double> Percent(uint64_t covered, uint64_t count) {
  if (count == 0) return std::nullopt;
  return 100.0 * static_cast<double>(covered) / static_cast<double>(count);
}

// {"count": N, "covered": N} of `kind` in a file's summary.
Result<std::pair<uint64_t, uint64_t>> CountAndCovered(const Json& summary, std::string_view kind,
                                                      std::string_view where) {
  const auto it = summary.find(kind);
  if (it == summary.end() || !it->is_object()) return Fail("{}: no '{}' object in the summary", where, kind);
  const std::string field_where = fmt::format("{} {}", where, kind);
  auto count = RequiredCount(*it, "count", field_where);
  if (!count) return count.error();
  auto covered = RequiredCount(*it, "covered", field_where);
  if (!covered) return covered.error();
  if (*count < 0 || *covered < 0 || *covered > *count) {
    return Fail("{}: covered {} of {} is not a count", field_where, *covered, *count);
  }
  return std::pair<uint64_t, uint64_t>(static_cast<uint64_t>(*count), static_cast<uint64_t>(*covered));
}

// A file's "summary" object of llvm-cov's export: its lines, branches and
// functions; `where` names the file in messages.
Result<CoverageCounts> CoverageCountsFromSummary(const Json& summary, std::string_view where) {
  CoverageCounts counts;
  auto lines = CountAndCovered(summary, "lines", where);
  if (!lines) return lines.error();
  std::tie(counts.lines, counts.lines_covered) = *lines;
  // Branch counts exist from LLVM 12 on; a file without branches has 0.
  auto branches = CountAndCovered(summary, "branches", where);
  if (!branches) return branches.error();
  std::tie(counts.branches, counts.branches_covered) = *branches;
  auto functions = CountAndCovered(summary, "functions", where);
  if (!functions) return functions.error();
  std::tie(counts.functions, counts.functions_covered) = *functions;
  return counts;
}

}  // namespace

std::optional<std::string> RelativePath(const std::string& filename, const std::filesystem::path& root) {
  const std::filesystem::path path = std::filesystem::path(filename).lexically_normal();
  const std::filesystem::path relative = path.lexically_relative(root.lexically_normal());
  if (relative.empty() || *relative.begin() == "..") return std::nullopt;
  return relative.generic_string();
}

bool LessCovered(const CoverageCounts& a, const CoverageCounts& b) {
  const double al = a.LinePercent().value_or(100), bl = b.LinePercent().value_or(100);
  if (al != bl) return al < bl;
  const double ab = a.BranchPercent().value_or(100), bb = b.BranchPercent().value_or(100);
  return ab < bb;
}

void CoverageCounts::Add(const CoverageCounts& other) {
  lines += other.lines;
  lines_covered += other.lines_covered;
  branches += other.branches;
  branches_covered += other.branches_covered;
  functions += other.functions;
  functions_covered += other.functions_covered;
}

std::optional<double> CoverageCounts::LinePercent() const { return Percent(lines_covered, lines); }
std::optional<double> CoverageCounts::BranchPercent() const { return Percent(branches_covered, branches); }

const std::vector<AreaCoverage>& Areas() {
  // The code under test; the harness around it (machine, generator, ...)
  // is not what the coverage is asked about.
  static const std::vector<AreaCoverage> areas = {
      {"jit", {"jit/"}, {}},
      {"oracle", {"oracle/"}, {}},
      {"pack", {"harness/lifecycle/", "fuzz/pack/"}, {}},
      {"recursion", {"harness/recursion/", "kernel/"}, {}},
  };
  return areas;
}

std::optional<std::string> AreaOf(std::string_view relative_path) {
  for (const auto& area : Areas()) {
    for (const auto& room : area.rooms) {
      if (relative_path.starts_with(room)) return area.area;
    }
  }
  return std::nullopt;
}

Result<std::reference_wrapper<const Json>> ExportData(const Json& json, std::string_view where) {
  const auto type = json.is_object() ? json.find("type") : json.end();
  if (type == json.end() || !type->is_string() || type->get<std::string>() != "llvm.coverage.json.export") {
    return Fail("{}: not llvm-cov export JSON (expected \"type\": \"llvm.coverage.json.export\")", where);
  }
  const auto data = json.find("data");
  if (data == json.end() || !data->is_array()) return Fail("{}: no 'data' array", where);
  return std::cref(*data);
}

Result<std::vector<ExportedFile>> ExportedFilesUnder(const Json& export_data, size_t d, const std::filesystem::path& root,
                                                     const std::function<bool(std::string_view)>& keep,
                                                     std::string_view where) {
  const auto files = export_data.is_object() ? export_data.find("files") : export_data.end();
  if (files == export_data.end() || !files->is_array()) return Fail("{}: data[{}] has no 'files' array", where, d);
  std::vector<ExportedFile> out;
  for (size_t f = 0; f < files->size(); ++f) {
    const Json& file = (*files)[f];
    const std::string file_where = fmt::format("{}: data[{}].files[{}]", where, d, f);
    if (!file.is_object()) return Fail("{}: expected an object", file_where);
    auto filename = RequiredString(file, "filename", file_where);
    if (!filename) return filename.error();
    const auto relative = RelativePath(*filename, root);
    if (!relative || !keep(*relative)) continue;
    const auto summary = file.find("summary");
    if (summary == file.end() || !summary->is_object()) return Fail("{}: no 'summary' object", file_where);
    auto counts = CoverageCountsFromSummary(*summary, fmt::format("{} ({})", file_where, *relative));
    if (!counts) return counts.error();
    out.push_back({*relative, *counts});
  }
  return out;
}

Result<SourceCoverage> SourceCoverageFromJson(const Json& json, const std::filesystem::path& checkout,
                                              std::string_view where) {
  auto data = ExportData(json, where);
  if (!data) return data.error();
  SourceCoverage coverage;
  coverage.areas = Areas();
  for (size_t d = 0; d < data->get().size(); ++d) {
    auto files = ExportedFilesUnder(data->get()[d], d, checkout,
                                    [](std::string_view relative) { return AreaOf(relative).has_value(); }, where);
    if (!files) return files.error();
    for (ExportedFile& file : *files) {
      const std::string area = *AreaOf(file.relative);
      coverage.files.push_back({std::move(file.relative), area, file.counts});
    }
  }
  for (const auto& file : coverage.files) {
    for (auto& area : coverage.areas) {
      if (area.area == file.area) area.counts.Add(file.counts);
    }
    coverage.total.Add(file.counts);
  }
  std::sort(coverage.files.begin(), coverage.files.end(), [](const FileCoverage& a, const FileCoverage& b) {
    if (LessCovered(a.counts, b.counts)) return true;
    if (LessCovered(b.counts, a.counts)) return false;
    return a.path < b.path;
  });
  return coverage;
}

Result<SourceCoverage> LoadSourceCoverage(const std::filesystem::path& path, const std::filesystem::path& checkout) {
  auto json = ReadJsonFile(path);
  if (!json) return json.error();
  auto coverage = SourceCoverageFromJson(*json, checkout, fmt::format("coverage {}", path.string()));
  if (!coverage) return coverage.error();
  if (coverage->files.empty()) {
    return Fail("coverage {}: no file under {} in the areas measured (jit/, oracle/, pack, recursion): was it made "
                "from this checkout's coverage build?",
                path.string(), checkout.string());
  }
  return coverage;
}

}  // namespace bpfdiff::report
