#include "report/kernel_coverage.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "report/line_coverage.h"
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
  uint64_t end_line = 0;  // where its body ends
  bool ran = false;
};
using FunctionsByFile = std::map<std::string, std::map<std::string, FunctionRuns>>;

// The lines of a function's body: its first region's, since LLVM puts the
// body, in its own file, first.
struct BodyLines {
  uint64_t first = 0, last = 0;
};
Result<BodyLines> FunctionBody(const Json& function, std::string_view where) {
  const auto regions = function.find("regions");
  if (regions == function.end() || !regions->is_array() || regions->empty()) {
    return Fail("{}: no 'regions' array", where);
  }
  const Json& first = regions->front();
  if (!first.is_array() || first.size() < 3 || !first[0].is_number_unsigned() || !first[2].is_number_unsigned()) {
    return Fail("{}: regions[0] does not start with [line start, column start, line end]", where);
  }
  return BodyLines{first[0].get<uint64_t>(), first[2].get<uint64_t>()};
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
  auto body = FunctionBody(function, function_where);
  if (!body) return body.error();
  auto [it, first_record] =
      functions[*relative].try_emplace(std::string(PlainName(*name)), FunctionRuns{body->first, body->last, false});
  if (!first_record) {
    it->second.line = std::min(it->second.line, body->first);
    it->second.end_line = std::max(it->second.end_line, body->last);
  }
  it->second.ran = it->second.ran || *count > 0;
  return {};
}

bool LineFirst(const NeverRunFunction& a, const NeverRunFunction& b) {
  return a.line != b.line ? a.line < b.line : a.name < b.name;
}

// The function that runs whose body holds `line`, if any.
const std::string* RunningFunctionAt(const std::map<std::string, FunctionRuns>& functions, uint64_t line) {
  for (const auto& [name, runs] : functions) {
    if (runs.ran && runs.line <= line && line <= runs.end_line) return &name;
  }
  return nullptr;
}

// How many counted lines before a stretch are its guard: the condition
// and, before it, what computed it (`ret = add_exception_handler(...);
// if (ret)` before `return ret;`).
constexpr size_t kGuardLines = 2;

// The lines never run inside functions that run, as stretches: a line that
// ran, or another function, ends one.
std::vector<UncoveredStretch> Stretches(const std::vector<LineCount>& lines,
                                        const std::map<std::string, FunctionRuns>& functions) {
  std::vector<UncoveredStretch> stretches;
  bool open = false;
  uint64_t previous[kGuardLines] = {};  // the last lines counted, the latest first
  for (const LineCount& line : lines) {
    const uint64_t guard = previous[kGuardLines - 1];
    std::copy_backward(previous, previous + kGuardLines - 1, previous + kGuardLines);
    previous[0] = line.line;
    if (line.count > 0) {
      open = false;
      continue;
    }
    const std::string* function = RunningFunctionAt(functions, line.line);
    if (function == nullptr) {
      open = false;
      continue;
    }
    if (open && stretches.back().function == *function) {
      stretches.back().last_line = line.line;
      ++stretches.back().lines;
      continue;
    }
    stretches.push_back({*function, line.line, line.line, 1, guard, {}, {}});
    open = true;
  }
  return stretches;
}

// Each stretch's text, and its reason: the first of its function's whose
// fragment one of its lines holds; failing that, the first whose fragment
// its guard holds (the source from the second counted line before it: the
// condition of an error path such as `if (build_body(...)) {`, where the
// stretch is only `prog = orig_prog; goto out_off;`). `used` marks the
// reasons that matched.
void ExplainStretches(std::vector<UncoveredStretch>& stretches, const std::vector<std::string>& source,
                      const std::vector<LineReason>& reasons, std::vector<bool>& used) {
  const auto source_line = [&](uint64_t line) -> std::string_view {
    return line >= 1 && line <= source.size() ? std::string_view(source[line - 1]) : std::string_view();
  };
  const auto match = [&](UncoveredStretch& stretch, uint64_t from, uint64_t to) {
    for (size_t r = 0; r < reasons.size(); ++r) {
      if (reasons[r].function != stretch.function) continue;
      for (uint64_t line = from; line <= to; ++line) {
        if (source_line(line).find(reasons[r].fragment) == std::string_view::npos) continue;
        stretch.reason = reasons[r].reason;
        used[r] = true;
        return true;
      }
    }
    return false;
  };
  for (UncoveredStretch& stretch : stretches) {
    stretch.text = std::string(Trimmed(source_line(stretch.first_line)));
    if (!match(stretch, stretch.first_line, stretch.last_line) && stretch.guard_line != 0) {
      match(stretch, stretch.guard_line, stretch.first_line - 1);
    }
  }
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return lines;
}

// The segments of every file of the tree that `files` holds, as lines.
Status TakeFileLines(const Json& export_data, size_t d, const std::filesystem::path& tree,
                     const std::set<std::string>& files, std::string_view where,
                     std::map<std::string, std::vector<LineCount>>& lines) {
  const Json& file_array = export_data.at("files");
  for (size_t f = 0; f < file_array.size(); ++f) {
    const Json& file = file_array[f];
    const auto relative = RelativePath(file.at("filename").get<std::string>(), tree);
    if (!relative || !files.contains(*relative)) continue;
    const std::string file_where = fmt::format("{}: data[{}].files[{}]", where, d, f);
    const auto segments = file.find("segments");
    if (segments == file.end()) {
      return Fail("{}: no 'segments': export it without -summary-only (ci/coverage.sh does)", file_where);
    }
    auto counted = LinesFromSegments(*segments, file_where);
    if (!counted) return counted.error();
    lines[*relative] = std::move(*counted);
  }
  return {};
}

}  // namespace

Result<UncoveredReasons> ParseUncoveredReasons(std::string_view text, std::string_view where) {
  UncoveredReasons reasons;
  std::map<std::string, size_t, std::less<>> given_on;  // key -> its line, for a second reason's message
  size_t line_number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = Trimmed(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    const auto mistake = [&] {
      return Fail("{}:{}: expected 'function-name: reason' or 'function-name \"fragment\": reason', got '{}'", where,
                  line_number, line);
    };
    // The name ends at the first space, quote or colon.
    const size_t name_end = std::min(line.find_first_of(" \t\":"), line.size());
    const std::string_view name = line.substr(0, name_end);
    std::string_view rest = Trimmed(line.substr(name_end));
    std::optional<std::string_view> fragment;
    if (!rest.empty() && rest.front() == '"') {
      const size_t close = rest.find('"', 1);
      if (close == std::string_view::npos || close == 1) return mistake();
      fragment = rest.substr(1, close - 1);
      rest = Trimmed(rest.substr(close + 1));
    }
    if (rest.empty() || rest.front() != ':') return mistake();
    const std::string_view reason = Trimmed(rest.substr(1));
    if (!IsFunctionName(name) || reason.empty()) return mistake();
    const std::string key = fragment ? fmt::format("{} \"{}\"", name, *fragment) : std::string(name);
    if (const auto earlier = given_on.find(key); earlier != given_on.end()) {
      return Fail("{}:{}: {} has a reason already (line {}): give each one reason", where, line_number, key,
                  earlier->second);
    }
    given_on.emplace(key, line_number);
    if (fragment) {
      reasons.lines.push_back({std::string(name), std::string(*fragment), std::string(reason)});
    } else {
      reasons.functions.emplace(name, reason);
    }
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
  std::map<std::string, std::vector<LineCount>> file_lines;
  for (size_t d = 0; d < data->get().size(); ++d) {
    const Json& export_data = data->get()[d];
    auto files = ExportedFilesUnder(export_data, d, tree, [](std::string_view) { return true; }, where);
    if (!files) return files.error();
    std::set<std::string> tree_files;
    for (ExportedFile& file : *files) {
      tree_files.insert(file.relative);
      KernelFileCoverage kernel_file;
      kernel_file.path = std::move(file.relative);
      kernel_file.counts = file.counts;
      coverage.files.push_back(std::move(kernel_file));
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
    if (auto taken = TakeFileLines(export_data, d, tree, tree_files, where, file_lines); !taken) return taken.error();
  }
  std::set<std::string, std::less<>> reasons_used;
  std::vector<bool> line_reasons_used(reasons.lines.size(), false);
  for (auto& file : coverage.files) {
    for (const auto& [name, runs] : functions[file.path]) {
      if (runs.ran) continue;
      const auto reason = reasons.functions.find(name);
      file.never_run.push_back({name, runs.line, reason == reasons.functions.end() ? "" : reason->second});
      if (reason != reasons.functions.end()) reasons_used.insert(name);
    }
    std::sort(file.never_run.begin(), file.never_run.end(), LineFirst);
    file.uncovered = Stretches(file_lines[file.path], functions[file.path]);
    if (file.uncovered.empty()) continue;
    auto source = ReadTextFile(tree / file.path);
    if (!source) {
      file.source_error = fmt::format("the tree's {} could not be read ({}): no text, no reasons for its lines "
                                      "never run",
                                      file.path, source.message());
      continue;
    }
    ExplainStretches(file.uncovered, SplitLines(*source), reasons.lines, line_reasons_used);
  }
  for (const auto& [name, reason] : reasons.functions) {
    if (!reasons_used.contains(name)) coverage.reasons_not_needed.push_back(name);
  }
  for (size_t r = 0; r < reasons.lines.size(); ++r) {
    if (!line_reasons_used[r]) {
      coverage.reasons_not_needed.push_back(fmt::format("{} \"{}\"", reasons.lines[r].function, reasons.lines[r].fragment));
    }
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

uint64_t KernelFileCoverage::UncoveredLines() const {
  uint64_t lines = 0;
  for (const auto& stretch : uncovered) lines += stretch.lines;
  return lines;
}

uint64_t KernelFileCoverage::UncoveredLinesExplained() const {
  uint64_t lines = 0;
  for (const auto& stretch : uncovered) {
    if (!stretch.reason.empty()) lines += stretch.lines;
  }
  return lines;
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
