#include "report/fuzz/target_support.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "support/json_fields.h"

namespace bpfdiff::report::fuzzing {
namespace {

std::string* target_name = nullptr;
std::filesystem::path* scratch = nullptr;

void RemoveScratch() {
  if (scratch == nullptr) return;
  std::error_code ec;
  std::filesystem::remove_all(*scratch, ec);
}

}  // namespace

const std::filesystem::path& MakeScratchDirectory(std::string_view target) {
  target_name = new std::string(target);
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  std::string name = ((ec ? std::filesystem::path("/tmp") : base) / fmt::format("{}.XXXXXX", target)).string();
  if (mkdtemp(name.data()) == nullptr) Fatal(fmt::format("cannot make a directory {}", name));
  scratch = new std::filesystem::path(name);
  std::atexit(RemoveScratch);
  return *scratch;
}

void Found(std::string_view what) {
  fmt::print(stderr, "\n==== {} finding ====\n{}\n", target_name ? *target_name : "", what);
  std::fflush(stderr);
  RemoveScratch();
  std::abort();
}

void Fatal(std::string_view what) {
  fmt::print(stderr, "{}: {}\n", target_name ? *target_name : "", what);
  RemoveScratch();
  std::exit(2);
}

void CheckHistoryRoundTrip(const HistoryEntry& entry) {
  const Json written = HistoryEntryToJson(entry);
  auto again = HistoryEntryFromJson(written, "written");
  if (!again) Found("history: what the writer wrote does not read: " + again.message() + "\n" + DumpJson(written));
  if (DumpJson(HistoryEntryToJson(*again)) != DumpJson(written)) {
    Found("history: read back, the entry writes differently:\n" + DumpJson(written));
  }
}

}  // namespace bpfdiff::report::fuzzing
