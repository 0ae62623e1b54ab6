// Spawning one of our executables the way bpf_conformance_runner spawns a
// plugin: the arguments as given, `stdin_text` written to its stdin and
// then stdin closed, stdout and stderr read to their ends, the exit status
// waited for.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/result.h"

namespace bpfdiff::test {

struct ProcessResult {
  int exit_code = 0;  // 128 + the signal number when killed by one
  std::string out;
  std::string err;
};

Result<ProcessResult> RunProcess(const std::string& path, const std::vector<std::string>& args,
                                             std::string_view stdin_text);

}  // namespace bpfdiff::test
