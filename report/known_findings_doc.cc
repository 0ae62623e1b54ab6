#include "report/known_findings_doc.h"

#include <algorithm>
#include <cctype>

namespace bpfdiff::report {
namespace {

constexpr std::string_view kSection = "\n## Findings in the kernel's code";

// The bullets of the section, each from its "- **" to the next.
std::vector<std::string_view> Bullets(std::string_view text) {
  std::vector<std::string_view> bullets;
  const size_t start = text.find(kSection);
  if (start == std::string_view::npos) return bullets;
  std::string_view section = text.substr(start + kSection.size());
  section = section.substr(0, section.find("\n## "));
  size_t at = section.find("\n- **");
  while (at != std::string_view::npos) {
    const size_t next = section.find("\n- **", at + 1);
    bullets.push_back(section.substr(at + 1, next == std::string_view::npos ? next : next - at - 1));
    at = next;
  }
  return bullets;
}

bool IsHex(char c) { return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f'); }

// Runs of exactly twelve lowercase hex digits with a letter among them or
// not, bounded by neither a hex digit nor a word character.
std::vector<std::string> CommitsIn(std::string_view bullet) {
  std::vector<std::string> commits;
  size_t i = 0;
  while (i < bullet.size()) {
    if (!IsHex(bullet[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < bullet.size() && IsHex(bullet[end])) ++end;
    const bool bounded_before = i == 0 || !std::isalnum(static_cast<unsigned char>(bullet[i - 1]));
    const bool bounded_after = end == bullet.size() || !std::isalnum(static_cast<unsigned char>(bullet[end]));
    if (end - i == 12 && bounded_before && bounded_after) {
      std::string commit(bullet.substr(i, 12));
      if (std::find(commits.begin(), commits.end(), commit) == commits.end()) commits.push_back(std::move(commit));
    }
    i = end;
  }
  return commits;
}

// The bullet's words with its line breaks and indentation as single spaces.
std::string OneLine(std::string_view words) {
  std::string line;
  for (char c : words) {
    if (c == '\n' || c == ' ') {
      if (!line.empty() && line.back() != ' ') line += ' ';
    } else {
      line += c;
    }
  }
  return line;
}

}  // namespace

std::optional<KnownFindingDoc> FindKnownFindingDoc(std::string_view shims_md, std::string_view name) {
  const std::string data_file = std::string(name) + ".data";
  for (std::string_view bullet : Bullets(shims_md)) {
    const size_t file = bullet.find("/" + data_file + "`");
    if (file == std::string_view::npos) continue;
    KnownFindingDoc doc;
    doc.name = name;
    const size_t path_start = bullet.rfind('`', file);
    if (path_start != std::string_view::npos) doc.reproducer = bullet.substr(path_start + 1, file + data_file.size() + 1 - path_start - 1);
    const size_t title_start = bullet.find("**");
    const size_t title_end = bullet.find("**", title_start + 2);
    if (title_start != std::string_view::npos && title_end != std::string_view::npos) {
      doc.title = OneLine(bullet.substr(title_start + 2, title_end - title_start - 2));
    }
    doc.commits = CommitsIn(bullet);
    return doc;
  }
  return std::nullopt;
}

}  // namespace bpfdiff::report
