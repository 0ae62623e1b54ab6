#include "report/tree_fuzzing.h"

#include <algorithm>
#include <map>

namespace bpfdiff::report {

std::string TreeVersion(std::string_view tree_line) {
  constexpr std::string_view kLinux = "linux ";
  if (!tree_line.starts_with(kLinux)) return "";
  tree_line.remove_prefix(kLinux.size());
  return std::string(tree_line.substr(0, tree_line.find(' ')));
}

TreeFuzzing FuzzingOfTree(std::string_view version, bool own, std::span<const FuzzTarget> fuzz) {
  TreeFuzzing tree;
  const std::string compared_counter = std::string(fuzz::kComparedByTree) + std::string(version);
  const std::string suffix = "@" + std::string(version);
  const std::string on_tree = " on linux " + std::string(version);
  std::map<std::string, uint64_t> known;
  for (const FuzzTarget& target : fuzz) {
    if (target.stats) {
      for (const auto& [name, count] : target.stats->counters) {
        if (name == compared_counter) tree.compared += count;
        if (!name.starts_with(fuzz::kKnownFindingCounter)) continue;
        std::string finding = name.substr(fuzz::kKnownFindingCounter.size());
        const size_t at = finding.find('@');
        // The build's own tree's are named bare; another's with its version.
        if (at == std::string::npos ? own : finding.substr(at) == suffix) {
          known[finding.substr(0, at)] += static_cast<uint64_t>(count);
        }
      }
    }
    if (target.run && target.run->result == "finding" && !target.run->finding_kind.empty()) {
      const std::string& kind = target.run->finding_kind;
      const size_t on = kind.rfind(" on linux ");
      const bool of_this_tree = on == std::string::npos
                                    ? own && (target.target.ends_with(".kernel") || target.target.ends_with(".trees"))
                                    : kind.substr(on) == on_tree;
      if (of_this_tree) tree.findings.push_back(kind);
    }
  }
  tree.known.assign(known.begin(), known.end());
  std::stable_sort(tree.known.begin(), tree.known.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return tree;
}

}  // namespace bpfdiff::report
