// WriteFile and WriteFiles: a failed write leaves the previous file as it
// was and names the path. The failures are real ones that also happen to
// root (permissions would not stop it): a write past RLIMIT_FSIZE (EFBIG,
// as a full disk gives ENOSPC, in the middle of the data), a directory
// that is a regular file, a target that is a directory, /dev/full.
#include "support/files.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace bpfdiff {
namespace {

namespace fs = std::filesystem;

fs::path FreshDir(std::string_view name) {
  const fs::path dir = fs::path(testing::TempDir()) / fmt::format("bpfdiff-files-{}-{}", name, getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string Read(const fs::path& path) {
  auto text = ReadTextFile(path);
  return text ? *text : "<" + text.message() + ">";
}

// Everything in `dir` but the files named: a failed write must not leave
// its temporary behind.
std::vector<std::string> Leftovers(const fs::path& dir, std::initializer_list<std::string_view> expected) {
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (std::find(expected.begin(), expected.end(), name) == expected.end()) left.push_back(name);
  }
  return left;
}

// Files may not grow past `bytes` while this lives: a write beyond fails
// with EFBIG part-way through its data, as on a disk that fills. SIGXFSZ,
// which would kill the process, is ignored meanwhile.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ok_ = setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
  bool ok_ = false;
};

TEST(Files, AWriteReplacesTheFileAndLeavesNoTemporary) {
  const fs::path dir = FreshDir("replace");
  ASSERT_TRUE(WriteFile(dir / "a.txt", "first").ok());
  EXPECT_EQ(Read(dir / "a.txt"), "first");
  const Status second = WriteFile(dir / "a.txt", "second, longer");
  ASSERT_TRUE(second.ok()) << second.message();
  EXPECT_EQ(Read(dir / "a.txt"), "second, longer");
  ASSERT_TRUE(WriteFile(dir / "a.txt", "").ok());
  EXPECT_EQ(Read(dir / "a.txt"), "");
  EXPECT_TRUE(Leftovers(dir, {"a.txt"}).empty());
  fs::remove_all(dir);
}

TEST(Files, AWriteThatFailsPartWayLeavesThePreviousFile) {
  const fs::path dir = FreshDir("efbig");
  const fs::path path = dir / "crash-artifact.data";
  ASSERT_TRUE(WriteFile(path, "the previous file").ok());
  const std::string big(64 * 1024, 'x');
  Status status;
  {
    const FileSizeLimit limit(4096);
    ASSERT_TRUE(limit.ok());
    status = WriteFile(path, big);
  }
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(path.string()), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("File too large"), std::string::npos) << status.message();
  EXPECT_EQ(Read(path), "the previous file");
  EXPECT_TRUE(Leftovers(dir, {"crash-artifact.data"}).empty());
  // The same write succeeds once there is room.
  ASSERT_TRUE(WriteFile(path, big).ok());
  EXPECT_EQ(Read(path), big);
  fs::remove_all(dir);
}

TEST(Files, ADirectoryThatIsAFileIsNamed) {
  const fs::path dir = FreshDir("notdir");
  ASSERT_TRUE(WriteFile(dir / "plain", "a file, not a directory").ok());
  const Status status = WriteFile(dir / "plain" / "report.html", "<html>");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find((dir / "plain" / "report.html").string()), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("Not a directory"), std::string::npos) << status.message();
  EXPECT_EQ(Read(dir / "plain"), "a file, not a directory");
  fs::remove_all(dir);
}

TEST(Files, ATargetThatIsADirectoryIsNotReplaced) {
  const fs::path dir = FreshDir("isdir");
  fs::create_directories(dir / "history" / "kept");
  const Status status = WriteFile(dir / "history", "{}");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find((dir / "history").string()), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("is a directory"), std::string::npos) << status.message();
  EXPECT_TRUE(fs::is_directory(dir / "history" / "kept"));
  EXPECT_TRUE(Leftovers(dir, {"history"}).empty());
  fs::remove_all(dir);
}

TEST(Files, AFullDeviceIsNamed) {
  // A device is written in place (there is nothing to rename over); the
  // error still names it.
  const Status status = WriteFile("/dev/full", "bytes");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/dev/full"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("No space left on device"), std::string::npos) << status.message();
  struct stat st {};
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  ASSERT_TRUE(WriteFile("/dev/null", "bytes").ok());
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(Files, ASymlinkStaysAndItsFileIsReplaced) {
  const fs::path dir = FreshDir("symlink");
  ASSERT_TRUE(WriteFile(dir / "real.json", "old").ok());
  fs::create_symlink("real.json", dir / "link.json");
  ASSERT_TRUE(WriteFile(dir / "link.json", "new").ok());
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(Read(dir / "real.json"), "new");
  fs::remove_all(dir);
}

TEST(Files, AReplacedFileKeepsItsPermissions) {
  const fs::path dir = FreshDir("mode");
  ASSERT_TRUE(WriteFile(dir / "script.sh", "#!/bin/sh\n").ok());
  fs::permissions(dir / "script.sh", fs::perms::owner_all | fs::perms::group_read);
  ASSERT_TRUE(WriteFile(dir / "script.sh", "#!/bin/sh\ntrue\n").ok());
  EXPECT_EQ(fs::status(dir / "script.sh").permissions(), fs::perms::owner_all | fs::perms::group_read);
  fs::remove_all(dir);
}

TEST(Files, ASetOfFilesIsReplacedWholeOrNotAtAll) {
  const fs::path dir = FreshDir("set");
  const std::vector<FileContents> old_set = {
      {dir / "summary.txt", "old summary"}, {dir / "report.json", "old json"}, {dir / "report.html", "old html"}};
  ASSERT_TRUE(WriteFiles(old_set).ok());

  // The last file's data does not fit: none of the three is replaced.
  const std::vector<FileContents> new_set = {
      {dir / "summary.txt", "new summary"}, {dir / "report.json", "new json"},
      {dir / "report.html", std::string(64 * 1024, 'h')}};
  Status status;
  {
    const FileSizeLimit limit(4096);
    ASSERT_TRUE(limit.ok());
    status = WriteFiles(new_set);
  }
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find((dir / "report.html").string()), std::string::npos) << status.message();
  for (const auto& old : old_set) EXPECT_EQ(Read(old.path), old.text) << old.path;
  EXPECT_TRUE(Leftovers(dir, {"summary.txt", "report.json", "report.html"}).empty());

  // A directory where the second file should go: nothing replaced either.
  fs::remove(dir / "report.json");
  fs::create_directory(dir / "report.json");
  status = WriteFiles(new_set);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find((dir / "report.json").string()), std::string::npos) << status.message();
  EXPECT_EQ(Read(dir / "summary.txt"), "old summary");
  EXPECT_TRUE(Leftovers(dir, {"summary.txt", "report.json", "report.html"}).empty());

  fs::remove(dir / "report.json");
  ASSERT_TRUE(WriteFiles(new_set).ok());
  for (const auto& now : new_set) EXPECT_EQ(Read(now.path), now.text) << now.path;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace bpfdiff
