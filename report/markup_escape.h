// Escaping text from the inputs (test names, reasons, paths) for XML and
// HTML. Every string a report writer did not write itself goes through here.
#pragma once

#include <string>
#include <string_view>

namespace bpfdiff::report {

// & < > " ' become entities; control characters that XML 1.0 does not allow
// (all below 0x20 except tab, newline, carriage return) become U+FFFD, so
// that a reason holding raw bytes still gives a well-formed document.
std::string EscapeMarkup(std::string_view text);

// One line of at most `max_chars` bytes (newlines become spaces; a cut
// ends with "..."), for summaries and table cells. Never cuts inside a
// UTF-8 sequence.
std::string OneLine(std::string_view text, size_t max_chars);

}  // namespace bpfdiff::report
