#include "support/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <system_error>
#include <utility>

namespace bpfdiff {
namespace {

Error IoError(const std::filesystem::path& path, std::string_view what, int error = errno) {
  return Fail("{}: cannot {}: {}", path.string(), what, std::strerror(error));
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

Status WriteAll(int fd, std::span<const uint8_t> bytes, const std::filesystem::path& requested) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError(requested, "write");
    done += static_cast<size_t>(n);
  }
  return {};
}

// One file being replaced: the bytes go to a temporary next to the target
// and Commit() renames it over the target. Until then the target is
// untouched, and a PendingFile that is dropped removes its temporary, so
// every early return of a failed write cleans up after itself.
class PendingFile {
 public:
  // Opens the temporary (or, for a target that is a device or a FIFO, the
  // target itself: see files.h). `requested` is the path errors name.
  static Result<PendingFile> Open(const std::filesystem::path& requested);

  PendingFile(PendingFile&& other) noexcept
      : requested_(std::move(other.requested_)),
        target_(std::move(other.target_)),
        temporary_(std::exchange(other.temporary_, {})),
        fd_(std::exchange(other.fd_, -1)) {}
  PendingFile& operator=(PendingFile&&) = delete;
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!temporary_.empty()) ::unlink(temporary_.c_str());
  }

  // Writes every byte, flushes them to the disk and closes the file: a
  // disk that fills, or a file system that reports errors only when data
  // reaches it (NFS, delayed allocation), fails here, before the rename.
  Status Write(std::span<const uint8_t> bytes);
  // Renames the temporary over the target (nothing to do in place).
  Status Commit();

 private:
  PendingFile(std::filesystem::path requested, std::filesystem::path target)
      : requested_(std::move(requested)), target_(std::move(target)) {}

  std::filesystem::path requested_;  // as the caller named it, for messages
  std::filesystem::path target_;     // the file that gets replaced (a symlink followed)
  std::filesystem::path temporary_;  // empty when writing in place, or once renamed
  int fd_ = -1;
};

// The file a write to `requested` replaces: a symbolic link is followed, so
// that the link survives and its file gets the new bytes.
std::filesystem::path TargetOf(const std::filesystem::path& requested) {
  std::error_code ec;
  if (!std::filesystem::is_symlink(std::filesystem::symlink_status(requested, ec))) return requested;
  auto resolved = std::filesystem::weakly_canonical(requested, ec);
  return ec ? requested : resolved;
}

Result<PendingFile> PendingFile::Open(const std::filesystem::path& requested) {
  PendingFile file(requested, TargetOf(requested));
  struct stat existing {};
  const bool exists = ::stat(file.target_.c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode)) return Fail("{}: cannot write: is a directory", requested.string());
  if (exists && !S_ISREG(existing.st_mode)) {
    // A device or a FIFO: nothing to replace, the bytes go to it.
    file.fd_ = ::open(file.target_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (file.fd_ < 0) return IoError(requested, "open");
    return file;
  }
  // Unique among processes (pid) and among writes of this one (counter);
  // O_EXCL so that a stray temporary of a killed process is never reused.
  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path dir = file.target_.parent_path();
  const std::string name = file.target_.filename().string();
  for (int attempt = 0; attempt < 100 && file.fd_ < 0; ++attempt) {
    file.temporary_ = dir / fmt::format(".{}.bpfdiff-tmp.{}.{}", name, ::getpid(), counter++);
    file.fd_ = ::open(file.temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (file.fd_ < 0 && errno != EEXIST) {
      const int error = errno;
      file.temporary_.clear();  // nothing was created
      return IoError(requested, fmt::format("create a temporary file in {}", dir.empty() ? "." : dir.string()), error);
    }
  }
  if (file.fd_ < 0) {
    file.temporary_.clear();
    return IoError(requested, "create a temporary file");
  }
  // The replacement keeps the permissions of the file it replaces.
  if (exists && ::fchmod(file.fd_, existing.st_mode & 07777) != 0) return IoError(requested, "set permissions of");
  return file;
}

Status PendingFile::Write(std::span<const uint8_t> bytes) {
  if (auto written = WriteAll(fd_, bytes, requested_); !written) return written;
  // fsync is for files on a disk; a device written in place may not have it.
  if (!temporary_.empty() && ::fsync(fd_) != 0) return IoError(requested_, "write");
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return IoError(requested_, "write");
  return {};
}

Status PendingFile::Commit() {
  if (temporary_.empty()) return {};
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) return IoError(requested_, "replace");
  temporary_.clear();
  // The directory is not fsynced: the threat is a failed write or a killed
  // process, which a rename already covers; a power cut right after a
  // report is not worth a second flush on every write.
  return {};
}

std::span<const uint8_t> BytesOf(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

}  // namespace

Result<std::string> ReadTextFile(const std::filesystem::path& path) {
  return ReadAll<std::string>(path);
}

Result<std::vector<uint8_t>> ReadBinaryFile(const std::filesystem::path& path) {
  return ReadAll<std::vector<uint8_t>>(path);
}

Status WriteFile(const std::filesystem::path& path, std::span<const uint8_t> bytes) {
  auto file = PendingFile::Open(path);
  if (!file) return file.error();
  if (auto written = file->Write(bytes); !written) return written;
  return file->Commit();
}

Status WriteFile(const std::filesystem::path& path, std::string_view text) {
  return WriteFile(path, BytesOf(text));
}

Status WriteFiles(std::span<const FileContents> files) {
  std::vector<PendingFile> pending;
  pending.reserve(files.size());
  for (const FileContents& contents : files) {
    auto file = PendingFile::Open(contents.path);
    if (!file) return file.error();
    if (auto written = file->Write(BytesOf(contents.text)); !written) return written;
    pending.push_back(std::move(file).value());
  }
  for (PendingFile& file : pending) {
    if (auto committed = file.Commit(); !committed) return committed;
  }
  return {};
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
