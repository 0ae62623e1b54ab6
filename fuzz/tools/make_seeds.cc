// make_diff_seeds OUT_DIR [CANDIDATES]: writes the seed corpus of the
// differential fuzz targets. Deterministic: it generates CANDIDATES random
// structured inputs from a fixed seed, runs each through the differential
// harness, and keeps a greedy set cover of the opcode-table forms they
// execute to completion on every engine. Run by hand when the generator
// changes; its output is committed in fuzz/corpus/ (build.sh only copies).
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fuzz/fuzz_case.h"
#include "fuzz/generator/fuzz_format.h"
#include "support/files.h"

int main(int argc, char** argv) {
  using namespace bpfdiff;
  if (argc < 2) {
    fmt::print(stderr, "usage: make_diff_seeds OUT_DIR [CANDIDATES]\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  const int candidates = argc > 2 ? std::atoi(argv[2]) : 20000;
  auto harness = fuzz::DiffHarness::Create({});
  if (!harness) {
    fmt::print(stderr, "{}\n", harness.message());
    return 1;
  }
  std::mt19937 random(20261129);
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<std::vector<bool>> covers;
  for (int i = 0; i < candidates; ++i) {
    std::vector<uint8_t> input(fuzz::kHeaderSize + fuzz::kRecordSize * (8 + random() % 56));
    for (auto& b : input) b = static_cast<uint8_t>(random());
    input[0] = fuzz::kFormatVersion;
    input[1] = 0;
    auto result = (*harness)->RunInput(input);
    if (result.source && result.run.FirstDivergence() != nullptr) {
      // Not a seed: a finding. Say so and keep it for `bpfdiff replay`.
      const auto path = std::filesystem::path(out).parent_path() / fmt::format("divergence-{}", i);
      (void)WriteFile(path, input);
      fmt::print(stderr, "candidate {} diverges (saved as {}):\n{}\n", i, path.string(),
                 fuzz::DescribeDivergence(*result.source, result.run));
    }
    if (!result.source || result.run.FirstDivergence() != nullptr) continue;
    fuzz::FuzzStats stats("seed");
    stats.Record(*result.source, result.run, (*harness)->executed());
    inputs.push_back(std::move(input));
    covers.push_back(stats.completed());
  }
  const size_t forms = isa::AllForms().size();
  std::vector<bool> covered(forms, false);
  std::vector<size_t> chosen;
  for (;;) {
    size_t best = 0, best_gain = 0;
    for (size_t i = 0; i < covers.size(); ++i) {
      size_t gain = 0;
      for (size_t f = 0; f < forms; ++f) gain += covers[i][f] && !covered[f];
      if (gain > best_gain) best = i, best_gain = gain;
    }
    if (best_gain == 0) break;
    chosen.push_back(best);
    for (size_t f = 0; f < forms; ++f) covered[f] = covered[f] || covers[best][f];
  }
  std::filesystem::create_directories(out);
  for (size_t n = 0; n < chosen.size(); ++n) {
    if (auto status = WriteFile(out / fmt::format("seed-{:03}", n), inputs[chosen[n]]); !status) {
      fmt::print(stderr, "{}\n", status.message());
      return 1;
    }
  }
  size_t count = 0;
  std::string missing;
  for (size_t f = 0; f < forms; ++f) {
    count += covered[f];
    if (!covered[f]) missing += fmt::format(" [{}]", isa::FormById(static_cast<isa::FormId>(f)).name);
  }
  fmt::print("{} seeds from {} candidates cover {}/{} forms; not covered:{}\n", chosen.size(), inputs.size(),
             count, forms, missing);
  return 0;
}
