#include "fuzz/pack/itlb_report.h"

#include <set>

#include <fmt/format.h>

#include "fuzz/generator/data_stream.h"
#include "fuzz/generator/generator.h"
#include "fuzz/pack/pack_script.h"
#include "harness/machine/jit_call.h"
#include "harness/machine/sandbox.h"
#include "oracle/load.h"

namespace bpfdiff::fuzz {
namespace {

constexpr unsigned kPage4k = 12;
constexpr unsigned kPage2m = 21;

struct PageSet {
  std::set<uint64_t> small, large;
  void Add(uint64_t begin, uint64_t end) {  // [begin, end), end > begin
    for (uint64_t p = begin >> kPage4k; p <= (end - 1) >> kPage4k; ++p) small.insert(p);
    for (uint64_t p = begin >> kPage2m; p <= (end - 1) >> kPage2m; ++p) large.insert(p);
  }
};

class FetchRecorder final : public ExecutionObserver {
 public:
  void OnBlock(int, uint64_t address, uint32_t size) override {
    if (size != 0) pages.Add(address, address + size);
  }
  PageSet pages;
};

// The programs both layouts load: generated, self-contained, of varied
// sizes, each one the JIT accepts (the generator can emit legacy packet
// loads, which it does not).
Result<std::vector<LoadedCase>> MakePrograms(const ItlbOptions& options) {
  std::vector<LoadedCase> cases;
  DataStream stream(options.seed);
  for (int attempt = 0; static_cast<int>(cases.size()) < options.loaded; ++attempt) {
    if (attempt > options.loaded * 20) return Fail("the generator made too few programs the JIT accepts");
    const std::vector<uint8_t> records = stream.Bytes(8 * (8 + stream.Next() % 72));
    // Sequenced draws: argument evaluation order is unspecified.
    const auto subprograms = static_cast<uint8_t>(stream.Next() % 3);
    const uint64_t seed = stream.Next();
    CaseSource source;
    // The programs of pack scripts (same records version): the report's
    // figures stay comparable across generator versions.
    source.programs.push_back(GenerateSelfContainedProgram(kPackScriptRecordsVersion, subprograms, records, seed));
    auto loaded = LoadCase(source);
    if (!loaded) continue;
    bool packet_access = false;
    for (const auto& insn : loaded->programs.front().program.insns) {
      packet_access |= isa::ClassOf(insn.opcode) == isa::kClassLd && insn.opcode != isa::kOpLddw;
    }
    if (!packet_access) cases.push_back(std::move(loaded).value());
  }
  return cases;
}

Result<ItlbLayout> Measure(const ItlbOptions& options, const std::vector<LoadedCase>& cases, bool packed,
                           uint64_t& calls) {
  SandboxOptions sandbox_options;
  sandbox_options.pack_images = packed;
  sandbox_options.resident_program = false;
  auto sandbox = Sandbox::Create(sandbox_options);
  if (!sandbox) return sandbox.error();
  GuestEnvironment& env = (*sandbox)->env();
  jit::Jit jit((*sandbox)->pack(), Sandbox::JitEnvironment(), jit::JitOptions{});

  ItlbLayout layout;
  layout.name = packed ? "packed (prog pack)" : "own pages (before packs)";
  layout.mapping = packed ? "2 MiB" : "4 KiB";
  std::vector<jit::CompiledProgram> compiled;
  PageSet loaded_pages;
  for (size_t i = 0; i < cases.size(); ++i) {
    auto program = jit.Compile(cases[i].programs.front().program);
    if (!program) return Fail("program {}: {}", i, program.message());
    for (const auto& sub : program->subprograms) {
      layout.code_bytes += 4ull * sub.code_words;
      loaded_pages.Add(sub.rx_image, sub.rx_image + 4ull * sub.code_words);
    }
    compiled.push_back(std::move(program).value());
  }
  layout.loaded_pages_4k = loaded_pages.small.size();
  layout.loaded_pages_2m = loaded_pages.large.size();

  Machine& machine = (*sandbox)->fast_machine() != nullptr ? *(*sandbox)->fast_machine() : (*sandbox)->machine(0);
  FetchRecorder recorder;
  calls = 0;
  for (int round = 0; round < options.rounds; ++round) {
    for (int i = 0; i < options.run && i < static_cast<int>(cases.size()); ++i) {
      env.Install(cases[static_cast<size_t>(i)]);
      env.Reset();
      CallPrograms programs{{&compiled[static_cast<size_t>(i)]}, {&cases[static_cast<size_t>(i)].programs.front().program}};
      JitCall call(env, machine, 0, std::move(programs));
      call.set_observer(&recorder);
      call.Start(0, {env.context_address(), env.context_length(), 0, 0, 0}, 10'000'000);
      (void)call.Step();
      ++calls;
    }
  }
  layout.fetched_pages_4k = recorder.pages.small.size();
  layout.fetched_pages_2m = recorder.pages.large.size();
  layout.itlb_entries = packed ? layout.fetched_pages_2m : layout.fetched_pages_4k;
  for (auto& program : compiled) jit.Release(program);
  return layout;
}

}  // namespace

Result<ItlbReport> MeasureItlb(const ItlbOptions& options) {
  if (options.loaded <= 0 || options.run <= 0 || options.run > options.loaded || options.rounds <= 0) {
    return Fail("need 0 < run ({}) <= loaded ({}) and rounds ({}) > 0", options.run, options.loaded,
                options.rounds);
  }
  auto cases = MakePrograms(options);
  if (!cases) return cases.error();
  ItlbReport report;
  report.options = options;
  for (bool packed : {true, false}) {
    auto layout = Measure(options, *cases, packed, report.calls);
    if (!layout) return layout.error();
    report.layouts.push_back(std::move(layout).value());
  }
  return report;
}

std::string ItlbReport::Format() const {
  std::string out = fmt::format(
      "Simulated iTLB: {} programs loaded, {} of them run in turn ({} calls per layout; seed {})\n\n",
      options.loaded, options.run, calls, options.seed);
  out += fmt::format("{:<26} {:>10} {:>18} {:>18} {:>9} {:>13}\n", "layout", "code", "loaded 4K / 2M",
                     "fetched 4K / 2M", "mapping", "iTLB entries");
  for (const auto& l : layouts) {
    out += fmt::format("{:<26} {:>8} B {:>11} / {:<4} {:>11} / {:<4} {:>9} {:>13}\n", l.name, l.code_bytes,
                       l.loaded_pages_4k, l.loaded_pages_2m, l.fetched_pages_4k, l.fetched_pages_2m, l.mapping,
                       l.itlb_entries);
  }
  out +=
      "\niTLB entries: distinct pages fetched from, at the page size the layout is mapped with\n"
      "(packs: 2 MiB; images of their own: 4 KiB, as module memory was).\n";
  return out;
}

}  // namespace bpfdiff::fuzz
