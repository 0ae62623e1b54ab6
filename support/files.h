// Reading and writing whole files, with errors as values.
//
// Every file bpfdiff writes (crash artifacts and regression tests, the
// report's files, the history, fuzz stats, seeds) goes through WriteFile or
// WriteFiles. They never truncate the target in place: the bytes go to a
// temporary file in the target's directory, which is flushed to disk and
// then renamed over the target. A rename within one file system replaces
// the name atomically, so a full disk, a failed write or a process killed
// half-way leaves the previous file as it was (and at worst a stray
// temporary, named `.NAME.bpfdiff-tmp.*`, which the next write does not
// mind). Errors name the path the caller asked for.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.h"

namespace bpfdiff {

Result<std::string> ReadTextFile(const std::filesystem::path& path);
Result<std::vector<uint8_t>> ReadBinaryFile(const std::filesystem::path& path);

// Replaces `path` with `bytes` as described above. A target that exists and
// is not a regular file (a character device such as /dev/null or
// /dev/stdout, a FIFO) is written in place, since renaming over it would
// replace the device node instead of writing to it. A symbolic link is
// followed: the file it names is replaced, the link stays. An existing
// file keeps its permission bits.
Status WriteFile(const std::filesystem::path& path, std::span<const uint8_t> bytes);
Status WriteFile(const std::filesystem::path& path, std::string_view text);

struct FileContents {
  std::filesystem::path path;
  std::string text;
};
// Several files that belong together (a report's summary, JUnit, JSON and
// HTML): every one is written to its temporary first, and only when all of
// them are on disk are they renamed over their targets, so that a failed
// write leaves the whole previous set intact rather than a mix of old and
// new files. (The renames themselves are one at a time; a rename fails
// only on a target that changed under us, such as a directory put there.)
Status WriteFiles(std::span<const FileContents> files);

// Regular files below `path` (or `path` itself when it is a file), sorted by
// name so that every run visits them in the same order.
Result<std::vector<std::filesystem::path>> ListFiles(const std::filesystem::path& path,
                                                     std::string_view extension = "");

}  // namespace bpfdiff
