// The layering rule (layering.h) holds over the whole tree, and the check
// catches what it must: an upward include, a sibling include, a path that
// does not exist, a folder that belongs to no room.
#include "tests/layering/layering.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <string>

namespace bpfdiff::layering {
namespace {

namespace fs = std::filesystem;

TEST(Layering, EveryIncludeOfTheTreePointsDown) {
  const auto violations = CheckLayering(BPFDIFF_SOURCE_DIR, Rooms());
  for (const auto& v : violations) ADD_FAILURE() << v.Describe();
  EXPECT_TRUE(violations.empty());
}

// A small tree in a temporary folder, with the project's rooms.
class LayeringOfATree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fs::path("bpfdiff-layering-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    Write("support/result.h", "#pragma once\n");
    Write("isa/insn.h", "#include \"support/result.h\"\n");
    Write("oracle/outcome.h", "#include \"isa/insn.h\"\n");
    Write("jit/jit.h", "#include \"isa/insn.h\"\n");
    Write("harness/diff/compare.h", "#include \"oracle/outcome.h\"\n#include \"jit/jit.h\"\n");
    Write("cli/main.cc", "#include \"harness/diff/compare.h\"\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& file, const std::string& text) {
    fs::create_directories((root_ / file).parent_path());
    std::ofstream(root_ / file) << text;
  }
  std::vector<Violation> Check() const { return CheckLayering(root_, Rooms()); }
  fs::path root_;
};

TEST_F(LayeringOfATree, ATreeThatPointsDownPasses) { EXPECT_TRUE(Check().empty()); }

TEST_F(LayeringOfATree, AnUpwardIncludeFails) {
  Write("isa/insn.h", "#include \"support/result.h\"\n#include \"harness/diff/compare.h\"\n");
  const auto violations = Check();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].file, "isa/insn.h");
  EXPECT_EQ(violations[0].line, 2);
  EXPECT_NE(violations[0].why.find("runs up the order"), std::string::npos) << violations[0].Describe();
}

TEST_F(LayeringOfATree, ASiblingIncludeFails) {
  Write("jit/jit.h", "#include \"oracle/outcome.h\"\n");
  const auto violations = Check();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_NE(violations[0].why.find("siblings"), std::string::npos) << violations[0].Describe();
}

TEST_F(LayeringOfATree, AnIncludeOfAMissingFileFails) {
  Write("cli/main.cc", "#include \"harness/diff/gone.h\"\n");
  const auto violations = Check();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_NE(violations[0].why.find("no such file"), std::string::npos) << violations[0].Describe();
}

TEST_F(LayeringOfATree, AFolderWithoutARoomFails) {
  Write("misc/tool.cc", "#include \"support/result.h\"\n");
  const auto violations = Check();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_NE(violations[0].why.find("belongs to no room"), std::string::npos) << violations[0].Describe();
}

TEST(Layering, TheLongestPrefixNamesTheRoom) {
  EXPECT_EQ(RoomOf("harness/diff/compare.h", Rooms())->prefix, "harness/diff");
  EXPECT_EQ(RoomOf("jit/a64/disasm/a64_disassembler.h", Rooms())->prefix, "jit");
  EXPECT_EQ(RoomOf("cli/plugin/main.cc", Rooms())->prefix, "cli/plugin");
  EXPECT_EQ(RoomOf("cli/main.cc", Rooms())->prefix, "cli");
  EXPECT_EQ(RoomOf("clinic/x.h", Rooms()), nullptr);
}

}  // namespace
}  // namespace bpfdiff::layering
