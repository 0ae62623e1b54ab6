#include "report/markup_escape.h"

#include <algorithm>

namespace bpfdiff::report {

std::string EscapeMarkup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\t':
      case '\n':
      case '\r': out += c; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += "\xEF\xBF\xBD";  // U+FFFD
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string OneLine(std::string_view text, size_t max_chars) {
  std::string line;
  line.reserve(std::min(text.size(), max_chars));
  for (const char c : text) line += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  if (line.size() <= max_chars) return line;
  size_t cut = max_chars >= 3 ? max_chars - 3 : 0;
  // Back up to the start of a UTF-8 sequence (continuation bytes are 10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  line.resize(cut);
  return line + "...";
}

}  // namespace bpfdiff::report
