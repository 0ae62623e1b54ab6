#include "fuzz/targets/target_settings.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace bpfdiff::fuzz {

TargetSettings ReadTargetSettings(std::string_view target, std::string_view engines) {
  TargetSettings settings;
  settings.engines = engines;
  const char* bug = std::getenv("BPFDIFF_PLANTED_BUG");
  auto bugs = PlantedBugsNamed(bug == nullptr ? "" : bug);
  if (!bugs) {
    fmt::print(stderr, "{}: BPFDIFF_PLANTED_BUG: {}\n", target, bugs.message());
    std::exit(2);
  }
  settings.bugs = std::move(bugs).value();
  fmt::print(stderr, "{}", PlantedBugBanner(settings.bugs));
  if (const char* stats = std::getenv("BPFDIFF_FUZZ_STATS_JSON"); stats != nullptr) {
    settings.stats_path = ExpandStatsPath(stats, static_cast<long>(getpid()));
  }
  if (const char* named = std::getenv("BPFDIFF_ENGINES"); named != nullptr && *named != '\0') {
    const std::string_view choice(named);
    if (choice != "all" && choice != "kernel" && choice != "trees" && !choice.starts_with("kernel@")) {
      fmt::print(stderr, "{}: BPFDIFF_ENGINES is '{}': all, kernel, kernel@<version> or trees\n", target, named);
      std::exit(2);
    }
    settings.engines = named;
  }
  if (settings.engines != "all") fmt::print(stderr, "{}: engines: {}\n", target, settings.engines);
  if (const char* executor = std::getenv("BPFDIFF_EXECUTOR"); executor != nullptr && *executor != '\0') {
    if (std::string_view(executor) != "vixl" && std::string_view(executor) != "unicorn") {
      fmt::print(stderr, "{}: BPFDIFF_EXECUTOR is '{}': vixl or unicorn\n", target, executor);
      std::exit(2);
    }
    settings.executor = executor;
  }
  if (const char* fault = std::getenv("BPFDIFF_UNICORN_FAULT"); fault != nullptr && *fault != '\0') {
    auto parsed = ParseUnicornFault(fault);
    if (!parsed) {
      fmt::print(stderr, "{}: BPFDIFF_UNICORN_FAULT: {}\n", target, parsed.message());
      std::exit(2);
    }
    settings.unicorn_fault = *parsed;
    fmt::print(stderr, "{}: BPFDIFF_UNICORN_FAULT={}: a Unicorn call will fail on purpose\n", target, fault);
  }
  return settings;
}

std::string ExpandStatsPath(std::string_view pattern, long pid) {
  std::string path;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern.substr(i, 2) == "%p") {
      path += std::to_string(pid);
      ++i;
    } else {
      path += pattern[i];
    }
  }
  return path;
}

void WriteStats(const TargetSettings& settings, const FuzzStatsFile& stats) {
  if (auto written = WriteFuzzStatsFile(settings.stats_path, stats); !written) {
    fmt::print(stderr, "{}: BPFDIFF_FUZZ_STATS_JSON: {}\n", stats.target, written.message());
  }
}

void ExitOnHarnessFailure(std::string_view target, std::string_view failure) {
  fmt::print(stderr,
             "{0}: harness failure, not a finding: {1}\n"
             "{0}: nothing can run after it; exiting with status {2}\n",
             target, failure, kHarnessFailureExit);
  std::fflush(stderr);
  std::_Exit(kHarnessFailureExit);
}

}  // namespace bpfdiff::fuzz
