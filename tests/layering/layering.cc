#include "tests/layering/layering.h"

#include <algorithm>
#include <fstream>
#include <regex>

#include <fmt/format.h>

namespace bpfdiff::layering {
namespace {

// support <- isa, kernel <- oracle, jit <- kernelsrc <- harness <- fuzz <- report <- cli <- bench
constexpr Room kRooms[] = {
    {"support", 0, 0},
    {"isa", 1, 0},
    {"kernel", 1, 0},
    {"oracle", 2, 0},
    {"jit", 2, 0},  // with jit/a64/ and jit/a64/disasm/
    // The kernel's own JIT from a Linux tree, under our shims: it writes the
    // model's artifacts (jit::CompiledProgram) into the model's pack.
    {"kernelsrc", 2, 1},
    // harness/: the registry and the machine, then engines and comparison,
    // then what runs on them.
    {"harness/planted", 3, 0},
    {"harness/machine", 3, 0},
    {"harness/diff", 3, 1},
    {"harness/conformance", 3, 2},
    {"harness/lifecycle", 3, 2},
    {"harness/recursion", 3, 2},
    {"harness/trampoline", 3, 2},
    {"harness/test_bpf", 3, 2},
    // fuzz/: generators, the stats file and the kinds of findings, then
    // what runs a fuzz input (triage keys a divergence by its kind), then
    // the targets and tools that wire them.
    {"fuzz/generator", 4, 0},
    {"fuzz/stats", 4, 0},
    {"fuzz/findings", 4, 0},
    {"fuzz/diff", 4, 1},
    {"fuzz/pack", 4, 1},
    {"fuzz/sweep", 4, 2},
    {"fuzz/targets", 4, 2},
    {"fuzz/tools", 4, 2},
    // The fuzz targets of parsers above fuzz/ live beside them
    // (fuzz/targets/parser_targets.cmake).
    {"report", 5, 0},
    {"report/fuzz", 5, 1},
    {"cli/listing", 6, 0},
    {"cli/plugin", 6, 0},
    {"cli/plugin/fuzz", 6, 1},
    {"cli", 6, 1},
    {"bench", 7, 0},
};

bool Below(const Room& a, const Room& b) {  // a may be included by b
  return a.major < b.major || (a.major == b.major && a.minor < b.minor);
}

bool UnderPrefix(std::string_view path, std::string_view prefix) {
  return path.size() > prefix.size() && path.starts_with(prefix) && path[prefix.size()] == '/';
}

}  // namespace

std::span<const Room> Rooms() { return kRooms; }

const Room* RoomOf(std::string_view path, std::span<const Room> rooms) {
  const Room* best = nullptr;
  for (const Room& room : rooms) {
    if (UnderPrefix(path, room.prefix) && (best == nullptr || room.prefix.size() > best->prefix.size())) best = &room;
  }
  return best;
}

std::string Violation::Describe() const {
  return fmt::format("{}:{}: #include \"{}\": {}", file, line, included, why);
}

std::vector<Violation> CheckLayering(const std::filesystem::path& root, std::span<const Room> rooms) {
  namespace fs = std::filesystem;
  std::vector<Violation> violations;
  static const std::regex kInclude(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<fs::path> files;
  for (const auto& top : fs::directory_iterator(root)) {
    const std::string name = top.path().filename().string();
    if (!top.is_directory() || name.starts_with(".") || name == "build" || name == "tests") continue;
    for (const auto& entry : fs::recursive_directory_iterator(top.path())) {
      const auto ext = entry.path().extension();
      if (entry.is_regular_file() && (ext == ".h" || ext == ".cc" || ext == ".c")) files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    const std::string relative = fs::relative(path, root).generic_string();
    const Room* from = RoomOf(relative, rooms);
    std::ifstream in(path);
    std::string text;
    int line_number = 0;
    while (std::getline(in, text)) {
      ++line_number;
      std::smatch match;
      if (!std::regex_search(text, match, kInclude)) continue;
      const std::string included = match[1];
      Violation v{relative, line_number, included, ""};
      const Room* to = RoomOf(included, rooms);
      if (from == nullptr) {
        v.why = "the file belongs to no room (add its folder to the rooms)";
      } else if (!fs::exists(root / included)) {
        v.why = "no such file under the source root";
      } else if (to == nullptr) {
        v.why = "it includes a file that belongs to no room";
      } else if (to != from && !Below(*to, *from)) {
        v.why = fmt::format("{} may not include {} ({})", from->prefix, to->prefix,
                            to->major == from->major && to->minor == from->minor ? "siblings" : "that runs up the order");
      } else {
        continue;
      }
      violations.push_back(std::move(v));
    }
  }
  return violations;
}

}  // namespace bpfdiff::layering
