#include "report/kernel_coverage.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "support/files.h"

namespace bpfdiff::report {
namespace {

std::string_view Trimmed(std::string_view text) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// A C identifier: what a function of the tree is called. Anything else on
// the left of the colon is a typo that would never match.
bool IsFunctionName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front())) != 0) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

// LLVM names a static function "<file as compiled>:<name>" when that file
// is not spelled as its coverage record's (a relative path, say); C names
// hold no colon, so the name is what follows the last one.
std::string_view PlainName(std::string_view name) {
  const size_t colon = name.rfind(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

// What one function of the tree was: where it starts, and whether any of
// its records ran (a function compiled into several binaries can appear
// once per binary).
struct FunctionRuns {
  uint64_t line = 0;
  bool ran = false;
};
using FunctionsByFile = std::map<std::string, std::map<std::string, FunctionRuns>>;

// The line a function's first region starts on: LLVM puts the function's
// body, in its own file, first.
Result<uint64_t> FirstLine(const Json& function, std::string_view where) {
  const auto regions = function.find("regions");
  if (regions == function.end() || !regions->is_array() || regions->empty()) {
    return Fail("{}: no 'regions' array", where);
  }
  const Json& first = regions->front();
  if (!first.is_array() || first.empty() || !first.front().is_number_unsigned()) {
    return Fail("{}: regions[0] does not start with a line number", where);
  }
  return first.front().get<uint64_t>();
}

// Adds one element of the "functions" array to `functions`, when it is a
// function of one of the tree's files (`files`: relative paths).
Status TakeFunction(const Json& function, const std::filesystem::path& tree, const std::set<std::string>& files,
                    std::string_view where, FunctionsByFile& functions) {
  if (!function.is_object()) return Fail("{}: expected an object", where);
  const auto filenames = function.find("filenames");
  if (filenames == function.end() || !filenames->is_array() || filenames->empty() ||
      !filenames->front().is_string()) {
    return Fail("{}: no 'filenames' array naming the function's file", where);
  }
  const auto relative = RelativePath(filenames->front().get<std::string>(), tree);
  if (!relative || !files.contains(*relative)) return {};
  auto name = RequiredString(function, "name", where);
  if (!name) return name.error();
  const std::string function_where = fmt::format("{} ({})", where, *name);
  auto count = RequiredCount(function, "count", function_where);
  if (!count) return count.error();
  if (*count < 0) return Fail("{}: count {} is not a count", function_where, *count);
  auto line = FirstLine(function, function_where);
  if (!line) return line.error();
  auto [it, first_record] = functions[*relative].try_emplace(std::string(PlainName(*name)), FunctionRuns{*line, false});
  if (!first_record) it->second.line = std::min(it->second.line, *line);
  it->second.ran = it->second.ran || *count > 0;
  return {};
}

bool LineFirst(const NeverRunFunction& a, const NeverRunFunction& b) {
  return a.line != b.line ? a.line < b.line : a.name < b.name;
}

}  // namespace

Result<UncoveredReasons> ParseUncoveredReasons(std::string_view text, std::string_view where) {
  UncoveredReasons reasons;
  std::map<std::string, size_t, std::less<>> given_on;  // name -> its line, for a second reason's message
  size_t line_number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = Trimmed(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    const size_t colon = line.find(':');
    const std::string_view name = Trimmed(line.substr(0, colon));
    const std::string_view reason = colon == std::string_view::npos ? "" : Trimmed(line.substr(colon + 1));
    if (!IsFunctionName(name) || reason.empty()) {
      return Fail("{}:{}: expected 'function-name: reason', got '{}'", where, line_number, line);
    }
    if (const auto earlier = given_on.find(name); earlier != given_on.end()) {
      return Fail("{}:{}: {} has a reason already (line {}): give each function one", where, line_number, name,
                  earlier->second);
    }
    given_on.emplace(name, line_number);
    reasons.emplace(name, reason);
  }
  return reasons;
}

Result<UncoveredReasons> LoadUncoveredReasons(const std::filesystem::path& path) {
  auto text = ReadTextFile(path);
  if (!text) return Fail("reasons for functions never run {}", text.message());
  return ParseUncoveredReasons(*text, path.string());
}

Result<KernelCoverage> KernelCoverageFromJson(const Json& json, const std::filesystem::path& tree,
                                              const UncoveredReasons& reasons, std::string_view where) {
  auto data = ExportData(json, where);
  if (!data) return data.error();
  KernelCoverage coverage;
  coverage.tree = tree;
  FunctionsByFile functions;
  for (size_t d = 0; d < data->get().size(); ++d) {
    const Json& export_data = data->get()[d];
    auto files = ExportedFilesUnder(export_data, d, tree, [](std::string_view) { return true; }, where);
    if (!files) return files.error();
    std::set<std::string> tree_files;
    for (ExportedFile& file : *files) {
      tree_files.insert(file.relative);
      coverage.files.push_back({std::move(file.relative), file.counts, {}});
    }
    if (tree_files.empty()) continue;
    const auto function_array = export_data.find("functions");
    if (function_array == export_data.end() || !function_array->is_array()) {
      return Fail("{}: data[{}] has no 'functions' array: export it without -summary-only (ci/coverage.sh does)",
                  where, d);
    }
    for (size_t i = 0; i < function_array->size(); ++i) {
      auto taken = TakeFunction((*function_array)[i], tree, tree_files,
                                fmt::format("{}: data[{}].functions[{}]", where, d, i), functions);
      if (!taken) return taken.error();
    }
  }
  std::set<std::string, std::less<>> reasons_used;
  for (auto& file : coverage.files) {
    for (const auto& [name, runs] : functions[file.path]) {
      if (runs.ran) continue;
      const auto reason = reasons.find(name);
      file.never_run.push_back({name, runs.line, reason == reasons.end() ? "" : reason->second});
      if (reason != reasons.end()) reasons_used.insert(name);
    }
    std::sort(file.never_run.begin(), file.never_run.end(), LineFirst);
  }
  for (const auto& [name, reason] : reasons) {
    if (!reasons_used.contains(name)) coverage.reasons_not_needed.push_back(name);
  }
  std::sort(coverage.files.begin(), coverage.files.end(), [](const KernelFileCoverage& a, const KernelFileCoverage& b) {
    if (LessCovered(a.counts, b.counts)) return true;
    if (LessCovered(b.counts, a.counts)) return false;
    return a.path < b.path;
  });
  return coverage;
}

Result<KernelCoverage> LoadKernelCoverage(const std::filesystem::path& path, const std::filesystem::path& tree,
                                          const UncoveredReasons& reasons) {
  if (tree.empty()) {
    return Fail("kernel coverage {}: no kernel tree given (--kernel-tree, the tree the coverage build compiled)",
                path.string());
  }
  auto json = ReadJsonFile(path);
  if (!json) return Fail("kernel coverage {}", json.message());
  auto coverage = KernelCoverageFromJson(*json, tree, reasons, fmt::format("kernel coverage {}", path.string()));
  if (!coverage) return coverage.error();
  if (coverage->files.empty()) {
    return Fail("kernel coverage {}: no file under the kernel tree {}: was it made by ci/coverage.sh from a build "
                "of that tree?",
                path.string(), tree.string());
  }
  return coverage;
}

std::string LineViewLink(std::string_view html_index, const std::filesystem::path& tree, std::string_view file,
                         std::optional<uint64_t> line) {
  constexpr std::string_view kIndex = "index.html";
  if (!html_index.ends_with(kIndex) || !tree.is_absolute()) return "";
  const std::string_view html_dir = html_index.substr(0, html_index.size() - kIndex.size());
  const std::string source = (tree / file).lexically_normal().generic_string();
  return fmt::format("{}coverage{}.html{}", html_dir, source, line ? fmt::format("#L{}", *line) : "");
}

}  // namespace bpfdiff::report
