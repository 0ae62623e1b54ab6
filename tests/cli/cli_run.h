// Running our executables from a test: a scratch directory removed with
// the test, and environment variables set for one run only.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/cli/process.h"

namespace bpfdiff::test {

inline const std::string kBpfdiff = BPFDIFF_CLI_PATH;
inline const std::string kBpfdiffPlugin = BPFDIFF_PLUGIN_PATH;

// A fresh directory under the test's temporary directory, removed (with
// everything in it) when the object goes.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view name);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Writes `text` to path()/name (creating directories) and returns its path.
  std::string File(const std::string& name, std::string_view text) const;

 private:
  std::filesystem::path path_;
};

using Environment = std::vector<std::pair<std::string, std::string>>;

// Runs `program` with `args` and `stdin_text`, `env` added to this
// process's environment for that one run. A process that could not be
// spawned fails the test and returns exit code -1.
ProcessResult RunTool(const std::string& program, const std::vector<std::string>& args, const Environment& env = {},
                  std::string_view stdin_text = "");

// Whole file, or "<missing>" when it cannot be read.
std::string ReadWhole(const std::filesystem::path& path);

}  // namespace bpfdiff::test
