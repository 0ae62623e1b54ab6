// jit_determinism_fuzzer: the JIT is a function of the program. The same
// program compiled twice gives the same code; compiled into slots at
// different pack offsets it gives the same code except the words that
// encode the addresses of other slots (calls to subprograms, which the JIT
// lists in address_words), and its exception table decodes to the same
// targets relative to the image. A finding aborts from the stack frames of
// what broke (fuzz/findings/determinism_frames.h), so that ClusterFuzz
// files one bug per kind; when Unicorn fails, the target says so once and
// exits with status 2 (fuzz/targets/target_settings.h).
#include "fuzz/targets/libfuzzer_entry_points.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "fuzz/findings/culprit_form.h"
#include "fuzz/findings/determinism_frames.h"
#include "fuzz/generator/generator.h"
#include "fuzz/generator/mutator.h"
#include "fuzz/targets/target_settings.h"
#include "harness/machine/sandbox.h"
#include "jit/jit.h"
#include "oracle/load.h"

namespace {

std::unique_ptr<bpfdiff::Sandbox> sandbox;
bpfdiff::fuzz::TargetSettings* settings = nullptr;

// For BPFDIFF_FUZZ_STATS_JSON (the nightly report): what the inputs made.
struct Totals {
  uint64_t inputs = 0, cases = 0, programs_compared = 0, programs_refused = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};
Totals* totals = nullptr;

void ReportTotals() {
  if (totals == nullptr) return;
  bpfdiff::fuzz::FuzzStatsFile file;
  file.target = "jit_determinism_fuzzer";
  file.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - totals->start).count();
  file.inputs = totals->inputs;
  file.counters = {{"cases", totals->cases},
                   {"programs_compared", totals->programs_compared},
                   {"programs_refused", totals->programs_refused}};
  bpfdiff::fuzz::WriteStats(*settings, file);
}

struct Image {
  std::vector<uint32_t> words;        // address words zeroed
  std::vector<int64_t> extable;       // (target - image) of each entry
};

std::vector<Image> Snapshot(const bpfdiff::jit::CompiledProgram& program) {
  std::vector<Image> images;
  for (const auto& sub : program.subprograms) {
    Image image;
    image.words = sub.words;
    for (uint32_t w : sub.address_words) {
      if (w < image.words.size()) image.words[w] = 0;
    }
    constexpr uint64_t kEntry = bpfdiff::jit::kExtableEntrySize;
    const uint8_t* table = sandbox->env().memory().HostPointer(sub.rx_extable, sub.extable_entries * kEntry);
    for (uint32_t e = 0; e < sub.extable_entries; ++e) {
      const auto entry = bpfdiff::jit::DecodeExtableEntry(table + e * kEntry, sub.rx_extable + e * kEntry);
      image.extable.push_back(static_cast<int64_t>(entry.target - sub.rx_image));
    }
    images.push_back(std::move(image));
  }
  return images;
}

// The report's first line names what broke, as it always has. Never
// inlined: it is a frame of the crash state, whatever the optimiser does.
[[noreturn, gnu::noinline]] void ReportFinding(bpfdiff::fuzz::DeterminismBreak what, const std::string& message,
                                               std::string_view culprit = {}) {
  std::fprintf(stderr, "jit_determinism_fuzzer: %s\n", message.c_str());
  if (!culprit.empty()) std::fprintf(stderr, "finding kind: culprit %.*s\n", static_cast<int>(culprit.size()), culprit.data());
  ReportTotals();
  bpfdiff::fuzz::EndInDeterminismFrames(what, std::abort, culprit);
  std::abort();  // not reached: the frames end in std::abort
}

// The first index at which the three lists differ (they differ somewhere).
template <typename T>
size_t FirstDifference(const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>& c) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && i < c.size() && a[i] == b[i] && a[i] == c[i]) ++i;
  return i;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  settings = new bpfdiff::fuzz::TargetSettings(bpfdiff::fuzz::ReadTargetSettings("jit_determinism_fuzzer"));
  bpfdiff::SandboxOptions options;
  options.fast_machine = false;
  options.pack_bugs = settings->bugs.pack;
  options.unicorn_fault = settings->unicorn_fault;
  auto created = bpfdiff::Sandbox::Create(options);
  if (!created) bpfdiff::fuzz::ExitOnHarnessFailure("jit_determinism_fuzzer", created.message());
  sandbox = std::move(created).value();
  totals = new Totals;
  std::atexit(ReportTotals);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ++totals->inputs;
  auto source = bpfdiff::fuzz::DecodeFuzzInput({data, size});
  if (!source) return 0;
  auto loaded = bpfdiff::LoadCase(*source);
  if (!loaded) return 0;
  ++totals->cases;
  bpfdiff::jit::JitOptions options;
  options.bugs = settings->bugs.jit;
  options.atomics = size > 2 && (data[2] & 0x80) ? bpfdiff::jit::AtomicLowering::kLlSc
                                                  : bpfdiff::jit::AtomicLowering::kLse;
  bpfdiff::jit::Jit jit(sandbox->pack(), bpfdiff::Sandbox::JitEnvironment(), options);
  // A filler allocation, sized from the input, moves the second compile to
  // another pack offset.
  const uint64_t filler_bytes = 4 * (1 + (size > 3 ? data[3] : 0) * 7);
  for (const auto& program : loaded->programs) {
    auto first = jit.Compile(program.program);
    if (!first) {  // e.g. legacy packet loads: nothing to compare
      ++totals->programs_refused;
      return 0;
    }
    const auto a = Snapshot(*first);
    auto again = jit.Compile(program.program);
    if (!again) {
      ReportFinding(bpfdiff::fuzz::DeterminismBreak::kSecondCompileFails,
           fmt::format("a second compile failed: {}", again.message()));
    }
    auto filler = sandbox->pack().Alloc(filler_bytes);
    auto moved = jit.Compile(program.program);
    if (!moved) {
      ReportFinding(bpfdiff::fuzz::DeterminismBreak::kCompileAtOtherOffsetFails,
           fmt::format("a compile at another offset failed: {}", moved.message()));
    }
    const auto b = Snapshot(*again);
    const auto c = Snapshot(*moved);
    for (size_t s = 0; s < a.size(); ++s) {
      const auto& sub = first->subprograms[s];
      if (a[s].words != b[s].words || a[s].words != c[s].words) {
        const size_t word = FirstDifference(a[s].words, b[s].words, c[s].words);
        const auto culprit = bpfdiff::fuzz::CulpritFormAtWord(program.program, sub, word);
        ReportFinding(bpfdiff::fuzz::DeterminismBreak::kCodeDiffers,
                      fmt::format("subprogram {}: the code differs between compiles ({} words), first at word {} ({})",
                                  s, a[s].words.size(), word, culprit),
                      culprit);
      }
      if (a[s].extable != b[s].extable || a[s].extable != c[s].extable) {
        const size_t entry = FirstDifference(a[s].extable, b[s].extable, c[s].extable);
        const auto culprit =
            entry < a[s].extable.size()
                ? bpfdiff::fuzz::CulpritFormAtWord(program.program, sub, static_cast<uint64_t>(a[s].extable[entry]) / 4)
                : std::string_view{};
        ReportFinding(bpfdiff::fuzz::DeterminismBreak::kExtableDiffers,
                      fmt::format("subprogram {}: the exception table's targets differ between compiles, first at "
                                  "entry {}",
                                  s, entry),
                      culprit);
      }
    }
    ++totals->programs_compared;
    jit.Release(*first);
    jit.Release(*again);
    jit.Release(*moved);
    if (filler) sandbox->pack().Free(std::move(filler).value());
  }
  if (auto failure = sandbox->UnicornFailure()) {
    ReportTotals();
    bpfdiff::fuzz::ExitOnHarnessFailure("jit_determinism_fuzzer", *failure);
  }
  return 0;
}

// The same inputs as diff_fuzzer, so the same structure-aware mutator.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  return bpfdiff::fuzz::MutateInput(data, size, max_size, seed);
}
