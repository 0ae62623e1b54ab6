// make_diff_seeds OUT_DIR VECTORS_DIR [CANDIDATES]: writes the seed corpus
// of the differential fuzz targets, deterministically. Run by hand when the
// generator or the vectors change; its output is committed in fuzz/corpus/
// (build.sh only copies):
//
//   build/dev/fuzz/make_diff_seeds fuzz/corpus/diff_fuzzer tests/conformance
//   cp fuzz/corpus/diff_fuzzer/seed-* fuzz/corpus/jit_determinism_fuzzer/
//
//  - seed-NNN: CANDIDATES random structured inputs (default 20000) from a
//    fixed seed, run through the differential harness; a greedy set cover
//    of the opcode-table forms they execute to completion on every engine,
//    in each operand mode (header byte 15: interesting immediates, or the
//    magnitude classes).
//  - seed-NAME: the named seeds below, records for behaviours that the set
//    cover of forms does not pick out.
//  - raw-NAME: every `.data` file of VECTORS_DIR that raw mode can carry
//    (fuzz/generator/generator.h, EncodeRawInput), with its input memory, so
//    that each runs to the end its file expects (tests/fuzz/seeds_test.cc
//    checks that).
//
// The old seeds of both kinds are removed first: a seed left from an older
// generator would keep testing what the generator no longer makes.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fuzz/diff/diff_harness.h"
#include "fuzz/generator/fuzz_format.h"
#include "fuzz/generator/generator.h"
#include "harness/conformance/case_file.h"
#include "support/files.h"

namespace {

using namespace bpfdiff;

// A structured input of the current version: the header's bytes 2..5 (see
// fuzz_format.h), a zero seed, then the records.
std::vector<uint8_t> Structured(std::vector<uint8_t> header_2_to_5, std::vector<std::vector<uint8_t>> records) {
  std::vector<uint8_t> input(fuzz::kHeaderSize, 0);
  input[0] = fuzz::kFormatVersion;
  std::copy(header_2_to_5.begin(), header_2_to_5.end(), input.begin() + 2);
  for (const auto& record : records) input.insert(input.end(), record.begin(), record.end());
  return input;
}

struct NamedSeed {
  const char* name;
  std::vector<uint8_t> input;
};

// Records of function_builder.cc's constructs, spelled out.
const std::vector<uint8_t> kTailCallSlot0 = {0xea, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00};  // tail_call, index 0
const std::vector<uint8_t> kEndOfFunction = {0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

std::vector<NamedSeed> NamedSeeds() {
  return {
      // One tail-call target (prog_array slot 0) that tail-calls slot 0,
      // itself, until MAX_TAIL_CALL_CNT: the only way a wrong limit shows,
      // and a random walk takes long to get there (33 s of a 60-second
      // planted-bug check before this seed).
      {"seed-tail-call-self", Structured({0, 0, 1, 0}, {kTailCallSlot0, kEndOfFunction, kTailCallSlot0})},
      // Subprogram 1 throws a scalar, and the last subprogram is the
      // program's own exception callback (header byte 2 bit 7), which
      // multiplies the cookie: a throw from a frame below the program's,
      // into a callback with a body of its own.
      {"seed-exception-own-callback",
       Structured({0x82, 0, 0, 0}, {{0x05, 0x02, 0x02, 0x03, 0x01, 0x00, 0x00, 0x00}, kEndOfFunction,
                                    {0x05, 0x03, 0x02, 0x03, 0x01, 0x00, 0x00, 0x00},
                                    {0xef, 0x02, 0x03, 0x03, 0x00, 0x00, 0x00, 0x00}, kEndOfFunction,
                                    kEndOfFunction})},
  };
}

// Removes the seeds this tool writes (seed-*, raw-*) from `dir`.
void RemoveOldSeeds(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir)) return;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("seed-") || name.starts_with("raw-")) std::filesystem::remove(entry.path());
  }
}

int WriteStructuredSeeds(fuzz::DiffHarness& harness, const std::filesystem::path& out, int candidates) {
  std::mt19937 random(20261129);
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<std::vector<bool>> covers;
  for (int i = 0; i < candidates; ++i) {
    std::vector<uint8_t> input(fuzz::kHeaderSize + fuzz::kRecordSize * (8 + random() % 56));
    for (auto& b : input) b = static_cast<uint8_t>(random());
    input[0] = fuzz::kFormatVersion;
    input[1] = 0;
    auto result = harness.RunInput(input);
    if (result.source && result.run.FirstDivergence() != nullptr) {
      // Not a seed: a finding. Say so and keep it for `bpfdiff replay`.
      const auto path = out.parent_path() / fmt::format("divergence-{}", i);
      (void)WriteFile(path, input);
      fmt::print(stderr, "candidate {} diverges (saved as {}):\n{}\n", i, path.string(),
                 fuzz::DescribeDivergence(*result.source, result.run));
    }
    if (!result.source || result.run.FirstDivergence() != nullptr) continue;
    fuzz::FuzzStats stats("seed");
    stats.Record(*result.source, result.run, harness.executed());
    // Forms in each operand mode count apart: the seeds start the fuzzer
    // from both the interesting immediates and the magnitude classes.
    const bool magnitudes = (input[15] & fuzz::kOptionMagnitudes) != 0;
    std::vector<bool> cover(2 * stats.completed().size(), false);
    std::copy(stats.completed().begin(), stats.completed().end(),
              cover.begin() + (magnitudes ? static_cast<ptrdiff_t>(stats.completed().size()) : 0));
    inputs.push_back(std::move(input));
    covers.push_back(std::move(cover));
  }
  const size_t forms = isa::AllForms().size();
  const size_t goals = 2 * forms;  // (form, operand mode)
  std::vector<bool> covered(goals, false);
  std::vector<size_t> chosen;
  for (;;) {
    size_t best = 0, best_gain = 0;
    for (size_t i = 0; i < covers.size(); ++i) {
      size_t gain = 0;
      for (size_t f = 0; f < goals; ++f) gain += covers[i][f] && !covered[f];
      if (gain > best_gain) best = i, best_gain = gain;
    }
    if (best_gain == 0) break;
    chosen.push_back(best);
    for (size_t f = 0; f < goals; ++f) covered[f] = covered[f] || covers[best][f];
  }
  for (size_t n = 0; n < chosen.size(); ++n) {
    if (auto status = WriteFile(out / fmt::format("seed-{:03}", n), inputs[chosen[n]]); !status) {
      fmt::print(stderr, "{}\n", status.message());
      return 1;
    }
  }
  size_t count = 0;
  std::string missing;
  for (size_t f = 0; f < forms; ++f) {
    const bool either = covered[f] || covered[forms + f];
    count += either;
    if (!either) missing += fmt::format(" [{}]", isa::FormById(static_cast<isa::FormId>(f)).name);
  }
  const auto in_magnitude_mode = std::count(covered.begin() + static_cast<ptrdiff_t>(forms), covered.end(), true);
  fmt::print("{} structured seeds from {} candidates cover {}/{} forms ({} in operand-magnitude mode); not covered:{}\n",
             chosen.size(), inputs.size(), count, forms, in_magnitude_mode, missing);
  return 0;
}

int WriteRawSeeds(const std::filesystem::path& out, const std::filesystem::path& vectors) {
  auto files = ListFiles(vectors, ".data");
  if (!files) {
    fmt::print(stderr, "{}\n", files.message());
    return 1;
  }
  int written = 0;
  std::string skipped;
  for (const auto& path : *files) {
    auto file = ReadCaseFile(path);
    if (!file) {
      fmt::print(stderr, "{}\n", file.message());
      return 1;
    }
    auto input = fuzz::EncodeRawInput(file->source);
    const std::string stem = path.stem().string();
    if (!input) {
      skipped += fmt::format("\n  {}: {}", stem, input.message());
      continue;
    }
    if (auto status = WriteFile(out / ("raw-" + stem), *input); !status) {
      fmt::print(stderr, "{}\n", status.message());
      return 1;
    }
    ++written;
  }
  fmt::print("{} raw seeds from {} vectors; left out:{}\n", written, files->size(), skipped);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: make_diff_seeds OUT_DIR VECTORS_DIR [CANDIDATES]\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  const std::filesystem::path vectors = argv[2];
  const int candidates = argc > 3 ? std::atoi(argv[3]) : 20000;
  auto harness = fuzz::DiffHarness::Create({});
  if (!harness) {
    fmt::print(stderr, "{}\n", harness.message());
    return 1;
  }
  RemoveOldSeeds(out);
  std::filesystem::create_directories(out);
  if (const int status = WriteStructuredSeeds(**harness, out, candidates); status != 0) return status;
  for (const NamedSeed& seed : NamedSeeds()) {
    if (auto status = WriteFile(out / seed.name, seed.input); !status) {
      fmt::print(stderr, "{}\n", status.message());
      return 1;
    }
  }
  return WriteRawSeeds(out, vectors);
}
