// history_fuzzer: the history loader (report/history.h) on a directory of
// hostile nights. The input is byte 0, how many nights to keep, then the
// files' contents separated by NUL bytes (which no JSON text holds); they
// are written as night-000.json, night-001.json, ... into a directory this
// process makes (TMPDIR, read here in the main) and removes at exit.
//
// ReadHistory must read the directory, and:
//  - account for every night it keeps: each is an entry or is named as
//    unreadable, and it keeps the last `keep` of them by name;
//  - name the file in every reason a night is unreadable;
//  - read entries that round-trip: written and read back, an entry writes
//    the same JSON again.
#include "fuzz/targets/libfuzzer_entry_points.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "report/fuzz/target_support.h"
#include "report/history.h"

namespace {

using namespace bpfdiff;
using namespace bpfdiff::report;
using fuzzing::Fatal;
using fuzzing::Found;

constexpr size_t kMaxNights = 64;  // enough to cross any `keep`; bounds the files written

std::filesystem::path* dir = nullptr;  // the nights, in the scratch directory

std::vector<std::string_view> SplitNights(std::string_view text) {
  std::vector<std::string_view> nights;
  while (nights.size() < kMaxNights) {
    const size_t nul = text.find('\0');
    nights.push_back(text.substr(0, nul));
    if (nul == std::string_view::npos) break;
    text.remove_prefix(nul + 1);
  }
  return nights;
}

// A fresh directory holding `nights`, in name order.
void WriteNights(const std::vector<std::string_view>& nights) {
  std::error_code ec;
  std::filesystem::remove_all(*dir, ec);
  std::filesystem::create_directories(*dir, ec);
  if (ec) Fatal(fmt::format("{}: {}", dir->string(), ec.message()));
  // Plain writes: WriteFile's fsync would cost more than the loader.
  for (size_t i = 0; i < nights.size(); ++i) {
    const auto path = *dir / fmt::format("night-{:03}.json", i);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(nights[i].data(), static_cast<std::streamsize>(nights[i].size()));
    out.close();
    if (!out) Fatal(fmt::format("cannot write {}", path.string()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  dir = new std::filesystem::path(fuzzing::MakeScratchDirectory("history_fuzzer") / "history");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t keep = data[0];
  const std::vector<std::string_view> nights = SplitNights({reinterpret_cast<const char*>(data) + 1, size - 1});
  WriteNights(nights);
  auto history = ReadHistory(*dir, keep);
  if (!history) Found("a directory of files does not read: " + history.message());
  const size_t kept = std::min(keep, nights.size());
  if (history->entries.size() + history->unreadable.size() != kept) {
    Found(fmt::format("{} of {} nights kept, {} read and {} unreadable", kept, nights.size(),
                      history->entries.size(), history->unreadable.size()));
  }
  // The unreadable ones are the last `kept` files' in name order: each
  // reason names one of them.
  for (const std::string& reason : history->unreadable) {
    bool named = false;
    for (size_t i = nights.size() - kept; i < nights.size() && !named; ++i) {
      named = reason.find(fmt::format("night-{:03}.json", i)) != std::string::npos;
    }
    if (!named) Found(fmt::format("the reason does not name a night it kept: '{}'", reason));
  }
  for (const HistoryEntry& entry : history->entries) fuzzing::CheckHistoryRoundTrip(entry);
  return 0;
}
