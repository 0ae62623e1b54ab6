#include "support/files.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

namespace bpfdiff {
namespace {

Error IoError(const std::filesystem::path& path, std::string_view what) {
  return Fail("{}: cannot {}: {}", path.string(), what, std::strerror(errno));
}

template <typename Container>
Result<Container> ReadAll(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Fail("{}: is a directory, expected a file", path.string());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path, "open");
  Container data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return IoError(path, "read");
  return data;
}

}  // namespace

Result<std::string> ReadTextFile(const std::filesystem::path& path) {
  return ReadAll<std::string>(path);
}

Result<std::vector<uint8_t>> ReadBinaryFile(const std::filesystem::path& path) {
  return ReadAll<std::vector<uint8_t>>(path);
}

Status WriteFile(const std::filesystem::path& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return IoError(path, "create");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) return IoError(path, "write");
  return {};
}

Status WriteFile(const std::filesystem::path& path, std::string_view text) {
  return WriteFile(path, std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

Result<std::vector<std::filesystem::path>> ListFiles(const std::filesystem::path& path,
                                                     std::string_view extension) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return Fail("{}: no such file or directory", path.string());
  }
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(status)) {
    files.push_back(path);
    return files;
  }
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    if (!extension.empty() && it->path().extension() != extension) continue;
    files.push_back(it->path());
  }
  if (ec) return Fail("{}: cannot list: {}", path.string(), ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace bpfdiff
