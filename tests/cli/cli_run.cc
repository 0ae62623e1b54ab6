#include "tests/cli/cli_run.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <optional>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace bpfdiff::test {

ScratchDir::ScratchDir(std::string_view name)
    : path_(std::filesystem::path(testing::TempDir()) / fmt::format("bpfdiff-{}-{}", name, getpid())) {
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ScratchDir::File(const std::string& name, std::string_view text) const {
  const auto file = path_ / name;
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
  return file.string();
}

ProcessResult RunTool(const std::string& program, const std::vector<std::string>& args, const Environment& env,
                  std::string_view stdin_text) {
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  for (const auto& [name, value] : env) {
    const char* old = getenv(name.c_str());
    saved.emplace_back(name, old == nullptr ? std::nullopt : std::optional<std::string>(old));
    setenv(name.c_str(), value.c_str(), 1);
  }
  auto result = RunProcess(program, args, stdin_text);
  for (const auto& [name, old] : saved) {
    if (old) {
      setenv(name.c_str(), old->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  EXPECT_TRUE(result) << result.message();
  return result ? *result : ProcessResult{-1, "", ""};
}

std::string ReadWhole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "<missing>";
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace bpfdiff::test
