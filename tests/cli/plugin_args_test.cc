// ParsePluginArgs on the argument lists the runner builds.
#include "cli/plugin/plugin_args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bpfdiff {
namespace {

Result<PluginArgs> Parse(std::vector<std::string> args) { return ParsePluginArgs(args); }

TEST(PluginArgs, NothingMeansNoMemoryAndTheDefaultEngine) {
  auto parsed = Parse({});
  ASSERT_TRUE(parsed) << parsed.message();
  EXPECT_EQ(parsed->memory_hex, "");
  EXPECT_EQ(parsed->engine, kPluginDefaultEngine);
}

TEST(PluginArgs, MemoryComesFirstThenOptions) {
  auto parsed = Parse({"01  02  ", "--engine", "jit-llsc"});
  ASSERT_TRUE(parsed) << parsed.message();
  EXPECT_EQ(parsed->memory_hex, "01  02  ");
  EXPECT_EQ(parsed->engine, "jit-llsc");
}

TEST(PluginArgs, EmptyArgumentsFromDoubledSpacesInPluginOptionsAreIgnored) {
  // --plugin_options "--engine  interp" reaches the plugin as three arguments.
  auto parsed = Parse({"", "--engine", "", "interp", ""});
  ASSERT_TRUE(parsed) << parsed.message();
  EXPECT_EQ(parsed->memory_hex, "");
  EXPECT_EQ(parsed->engine, "interp");
}

TEST(PluginArgs, UbpfPluginSpellingsSelectAnEngine) {
  EXPECT_EQ(Parse({"--interpret"})->engine, "interp");
  EXPECT_EQ(Parse({"00", "--jit"})->engine, "jit");
  EXPECT_EQ(Parse({"--engine=all"})->engine, "all");
}

TEST(PluginArgs, RejectsWhatItCannotHonour) {
  EXPECT_EQ(Parse({"00", "--elf"}).message(), "ELF input is not supported; run the runner without --elf");
  EXPECT_NE(Parse({"--frobnicate"}).message().find("unknown plugin option '--frobnicate'"), std::string::npos);
  EXPECT_NE(Parse({"--engine", "qemu"}).message().find("unknown engine 'qemu'"), std::string::npos);
  EXPECT_NE(Parse({"--engine"}).message().find("needs a value"), std::string::npos);
  EXPECT_NE(Parse({"00", "11"}).message().find("must be the first argument"), std::string::npos);
}

}  // namespace
}  // namespace bpfdiff
