#include "tests/jit/llvm_mc.h"

#include <fmt/core.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>

namespace bpfdiff::a64::testing {
namespace {

constexpr std::string_view kArguments = "-triple=aarch64 -mattr=+lse,+v8.4a -show-encoding";

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// "<file>:12:5: error: message" -> {12, "message"} for the lines of `input`.
std::map<size_t, std::string> ParseErrors(const std::string& stderr_text,
                                          const std::string& input) {
  std::map<size_t, std::string> errors;
  std::istringstream stream(stderr_text);
  std::string line;
  const std::string prefix = input + ":";
  while (std::getline(stream, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    const size_t error_at = line.find(": error: ");
    if (error_at == std::string::npos) continue;
    const size_t line_number = std::strtoul(line.c_str() + prefix.size(), nullptr, 10);
    if (line_number == 0) continue;
    errors[line_number - 1] = line.substr(error_at + 9);
  }
  return errors;
}

// The words of every "encoding: [0x.., 0x.., 0x.., 0x..]" in llvm-mc's output,
// in order; nullopt for one that is not four plain bytes.
std::vector<std::optional<uint32_t>> ParseEncodings(const std::string& stdout_text) {
  std::vector<std::optional<uint32_t>> words;
  std::istringstream stream(stdout_text);
  std::string line;
  while (std::getline(stream, line)) {
    const size_t at = line.find("encoding: [");
    if (at == std::string::npos) continue;
    std::istringstream bytes(line.substr(at + 11));
    uint32_t word = 0;
    int count = 0;
    std::string byte;
    bool plain = true;
    while (std::getline(bytes, byte, ',')) {
      if (!byte.empty() && byte.back() == ']') byte.pop_back();
      char* end = nullptr;
      const unsigned long value = std::strtoul(byte.c_str(), &end, 16);
      if (byte.rfind("0x", 0) != 0 || *end != '\0' || value > 0xff) plain = false;
      word |= static_cast<uint32_t>(value & 0xff) << (8 * count);
      ++count;
    }
    words.push_back(plain && count == 4 ? std::optional<uint32_t>(word) : std::nullopt);
  }
  return words;
}

}  // namespace

std::string LlvmMcCommand() { return fmt::format("{} {}", BPFDIFF_LLVM_MC, kArguments); }

Result<std::vector<Assembled>> AssembleWithLlvmMc(std::span<const std::string> lines) {
  namespace fs = std::filesystem;
  std::string dir_template = (fs::temp_directory_path() / "bpfdiff_llvm_mc_XXXXXX").string();
  if (mkdtemp(dir_template.data()) == nullptr) {
    return Fail("cannot create a temporary directory {}", dir_template);
  }
  const fs::path dir = dir_template;
  const std::string input = (dir / "input.s").string();
  const std::string errors_path = (dir / "stderr.txt").string();
  {
    std::ofstream out(input);
    for (const std::string& line : lines) out << line << '\n';
    if (!out) return Fail("cannot write {}", input);
  }

  const std::string command =
      fmt::format("'{}' {} '{}' 2>'{}'", BPFDIFF_LLVM_MC, kArguments, input, errors_path);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return Fail("cannot run {}", command);
  std::string stdout_text;
  std::array<char, 1 << 16> buffer{};
  size_t read = 0;
  while ((read = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    stdout_text.append(buffer.data(), read);
  pclose(pipe);
  const std::string stderr_text = ReadFile(errors_path);
  std::error_code ignored;
  fs::remove_all(dir, ignored);

  const std::map<size_t, std::string> errors = ParseErrors(stderr_text, input);
  const std::vector<std::optional<uint32_t>> words = ParseEncodings(stdout_text);
  if (words.size() + errors.size() != lines.size()) {
    return Fail("{} printed {} encodings and {} errors for {} lines; stderr:\n{}", command,
                words.size(), errors.size(), lines.size(), stderr_text);
  }
  std::vector<Assembled> assembled(lines.size());
  size_t next_word = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (auto error = errors.find(i); error != errors.end()) {
      assembled[i].error = error->second;
    } else if (const auto& word = words[next_word++]; word) {
      assembled[i].word = *word;
    } else {
      assembled[i].error = "llvm-mc printed an encoding that is not four bytes";
    }
  }
  return assembled;
}

}  // namespace bpfdiff::a64::testing
