// What kernelsrc/SHIMS.md says of each known finding of the kernel's code,
// for the report's rows per tree: the section "Findings in the kernel's
// code" has one bullet per finding, its title in bold, the reproducer it
// names (a tests/ .data file) and the upstream commits it cites (twelve
// hex digits: the fix, the commit it fixes, the backport). A known finding
// of a tree (known.txt: "atomic-fetch-src-is-dst") is the bullet that
// names its reproducer, <name>.data.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bpfdiff::report {

struct KnownFindingDoc {
  std::string name;        // "atomic-fetch-src-is-dst"
  std::string title;       // the bullet's bold words
  std::string reproducer;  // "tests/conformance/atomic-fetch-src-is-dst.data"
  std::vector<std::string> commits;  // as cited, in order, each once
};

// The bullet of `shims_md` (SHIMS.md's text) for the known finding `name`,
// or nullopt when no bullet of that section names <name>.data.
std::optional<KnownFindingDoc> FindKnownFindingDoc(std::string_view shims_md, std::string_view name);

}  // namespace bpfdiff::report
