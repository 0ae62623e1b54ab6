#include "report/markup_escape.h"

#include <gtest/gtest.h>

namespace bpfdiff::report {
namespace {

TEST(EscapeMarkup, EscapesEveryMarkupCharacter) {
  EXPECT_EQ(EscapeMarkup(R"(<a href="x">'&'</a>)"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(EscapeMarkup, ReplacesControlCharactersXmlForbids) {
  EXPECT_EQ(EscapeMarkup(std::string("a\x01" "b\tc\n", 6)), "a\xEF\xBF\xBD" "b\tc\n");
}

TEST(OneLine, JoinsLinesAndCutsLongText) {
  EXPECT_EQ(OneLine("a\nb", 10), "a b");
  const std::string cut = OneLine(std::string(5000, 'x'), 20);
  EXPECT_EQ(cut.size(), 20u);
  EXPECT_EQ(cut.substr(17), "...");
}

TEST(OneLine, NeverCutsInsideAUtf8Sequence) {
  const std::string text = "ab\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";  // ab + 4 x e-acute
  EXPECT_EQ(OneLine(text, 6), "ab...");       // a cut after 3 bytes would split the first
  EXPECT_EQ(OneLine(text, 7), "ab\xC3\xA9...");  // a cut after 4 bytes does not
}

}  // namespace
}  // namespace bpfdiff::report
