#include "fuzz/targets/target_settings.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace bpfdiff::fuzz {

TargetSettings ReadTargetSettings(std::string_view target) {
  TargetSettings settings;
  const char* bug = std::getenv("BPFDIFF_PLANTED_BUG");
  auto bugs = PlantedBugsNamed(bug == nullptr ? "" : bug);
  if (!bugs) {
    fmt::print(stderr, "{}: BPFDIFF_PLANTED_BUG: {}\n", target, bugs.message());
    std::exit(2);
  }
  settings.bugs = std::move(bugs).value();
  fmt::print(stderr, "{}", PlantedBugBanner(settings.bugs));
  const char* stats = std::getenv("BPFDIFF_FUZZ_STATS_JSON");
  if (stats != nullptr) settings.stats_path = stats;
  return settings;
}

void WriteStats(const TargetSettings& settings, const FuzzStatsFile& stats) {
  if (auto written = WriteFuzzStatsFile(settings.stats_path, stats); !written) {
    fmt::print(stderr, "{}: BPFDIFF_FUZZ_STATS_JSON: {}\n", stats.target, written.message());
  }
}

}  // namespace bpfdiff::fuzz
