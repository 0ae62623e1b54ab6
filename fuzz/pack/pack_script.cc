#include "fuzz/pack/pack_script.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fuzz/generator/fuzz_format.h"
#include "fuzz/generator/generator.h"
#include "fuzz/generator/kernel_forms.h"
#include "harness/diff/engines.h"
#include "isa/disassembler.h"

namespace bpfdiff::fuzz {
namespace {

using lifecycle::World;

class ByteStream {
 public:
  explicit ByteStream(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool done() const { return next_ >= bytes_.size(); }
  uint8_t Next() { return next_ < bytes_.size() ? bytes_[next_++] : 0; }
  std::span<const uint8_t> Take(size_t n) {
    const size_t begin = std::min(next_, bytes_.size());
    const size_t end = std::min(begin + n, bytes_.size());
    next_ = begin + n;
    return bytes_.subspan(begin, end - begin);
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t next_ = 0;
};

using Op = PackOpKind;

uint64_t PadSlots(uint8_t pad) {
  if (pad < 128) return 0;
  if (pad < 254) return uint64_t{pad - 127u} * 64;
  return pad == 254 ? 262'144 : 393'216;
}

uint64_t StepCount(uint8_t n) { return n == 255 ? 4'096 : 1 + uint64_t{n}; }

int Pick(const std::vector<int>& ids, uint8_t which) {
  return ids.empty() ? -1 : ids[which % ids.size()];
}

std::vector<int> Freeable(const World& world) {
  std::vector<int> ids = world.LivePrograms();
  std::erase_if(ids, [](int id) { return id < World::kTailEntries; });
  return ids;
}

class ScriptRunner {
 public:
  ScriptRunner(World& world, const PackScriptOptions& options, PackScriptResult& result)
      : world_(world), options_(options), result_(result), states_(world, result.states) {}

  void Run(const PackScript& script) {
    for (const PackOp& op : script.ops) {
      Apply(op, script.seed + result_.operations);
      ++result_.operations;
      // After a failed Unicorn call nothing the world reports is the JIT's.
      if (world_.UnicornFailure()) return;
      if (options_.stop_at_violation && !world_.violations().empty()) return;
    }
    Trace("free everything");
    world_.FreeAll();
  }

 private:
  template <typename... Args>
  void Trace(fmt::format_string<Args...> format, Args&&... args) {
    if (options_.trace) result_.trace.push_back(fmt::format(format, std::forward<Args>(args)...));
  }

  void Load(std::vector<isa::Insn> insns, uint64_t pad, const char* what) {
    // The kernel's JIT gets the forms its verifier accepts, as diff_fuzzer
    // gives them (a program they cannot be made for stays as it is, and
    // the world refuses it).
    if (const EngineSpec* spec = FindEngine(options_.jit_engine); spec != nullptr && spec->source == JitSource::kKernel) {
      CaseSource source;
      source.programs.push_back(insns);
      if (ToKernelVerifierForms(source)) insns = std::move(source.programs.front());
    }
    auto id = world_.Load(insns, pad);
    if (!id) {
      ++result_.loads_rejected;
      Trace("{} of {} slots (+{} padding): rejected: {}", what, insns.size(), pad, id.message());
      return;
    }
    ++result_.loads;
    states_.AfterLoad(*id);
    if (!options_.trace) return;  // what follows only describes the load
    const auto probes = std::count_if(insns.begin(), insns.end(), [](const isa::Insn& insn) {
      const uint8_t mode = isa::ModeOf(insn.opcode);
      return isa::ClassOf(insn.opcode) == isa::kClassLdx &&
             (mode == isa::kModeProbeMem || mode == isa::kModeProbeMemSx);
    });
    Trace("{} of {} slots (+{} padding, {} PROBE_MEM loads): {}{}", what, insns.size(), pad, probes,
          world_.SlotName(*id), options_.trace_programs ? "\n" + isa::DisassembleForDisplay(insns) : "");
  }

  void StepCpu(uint8_t cpu_byte, int id, uint8_t n) {
    const int cpu = cpu_byte % world_.cpus();
    const bool was_busy = world_.busy(cpu);
    if (!was_busy && id < 0) return;
    world_.Step(cpu, id, StepCount(n));
    if (!options_.trace) return;
    Trace("cpu {} {} {} instructions{}", cpu, was_busy ? "continues by" : fmt::format("starts program {}, runs", id),
          StepCount(n), world_.busy(cpu) ? "" : " and returns");
  }

  void Apply(const PackOp& op, uint64_t seed) {
    const auto& a = op.args;
    switch (op.kind) {
      case Op::kLoad:
        Load(GenerateSelfContainedProgram(kPackScriptRecordsVersion, a[0], op.records, seed), PadSlots(a[1]),
             "load");
        return;
      case Op::kReload: {
        const int id = Pick(Freeable(world_), a[0]);
        if (id < 0) return;
        const std::vector<isa::Insn> insns = *world_.Source(id);
        Load(insns, PadSlots(a[1]), "reload");
        return;
      }
      case Op::kFailingReload: {
        const int id = Pick(Freeable(world_), a[0]);
        if (id < 0) return;
        const std::vector<isa::Insn> insns = *world_.Source(id);
        const lifecycle::World::FailingLoad load = world_.LoadFailing(insns, FailCallOf(a[1]));
        states_.AfterFailingLoad(load);
        if (!load.injected.empty()) ++result_.failing_reloads;
        if (load.id) {
          ++result_.loads;
        } else {
          ++result_.loads_rejected;
        }
        Trace("failing reload of {} slots, call {} failing ({}): {}{}", insns.size(), FailCallOf(a[1]),
              load.injected.empty() ? "none made" : load.injected,
              load.id ? world_.SlotName(*load.id) : "rejected: " + load.id.message(),
              load.known_breach.empty() ? "" : "; known finding " + load.known_breach);
        return;
      }
      case Op::kFree: {
        const int id = Pick(Freeable(world_), a[0]);
        if (id < 0) return;
        // The slot's name must be read before the free.
        const std::string name = options_.trace ? world_.SlotName(id) : std::string();
        const PackStateObserver::FreeContext context = states_.BeforeFree(id);
        world_.Free(id);
        states_.AfterFree(context);
        ++result_.frees;
        if (!options_.trace) return;
        const std::vector<int> waiting = world_.WaitingFor(id);
        if (waiting.empty()) {
          Trace("free {}", name);
        } else {
          std::vector<std::string> inside;
          for (const World::CpuInside& cpu : context.inside) {
            inside.push_back(fmt::format("cpu {} is inside{}{}{}", cpu.cpu, cpu.by_tail_call ? " by a tail call" : "",
                                         cpu.in_subprogram ? " in a subprogram" : "",
                                         cpu.nested_in_interrupt ? " with an interrupt" : ""));
          }
          Trace("free {}: deferred until CPUs {} pass a quiescent point{}{}", name, fmt::join(waiting, ", "),
                inside.empty() ? "" : "; ", fmt::join(inside, ", "));
        }
        return;
      }
      case Op::kStep:
        StepCpu(a[0], Pick(world_.LivePrograms(), a[1]), a[2]);
        return;
      case Op::kTailCall:
        StepCpu(a[0], a[1] % World::kTailEntries, a[2]);
        return;
      case Op::kFinish: {
        const int cpu = a[0] % world_.cpus();
        if (!world_.busy(cpu)) return;
        Trace("cpu {} runs to the end of its call", cpu);
        world_.RunToCompletion(cpu);
        return;
      }
      case Op::kCallStale: {
        const int cpu = a[0] % world_.cpus();
        if (world_.CallStale(cpu)) {
          ++result_.stale_calls;
          Trace("cpu {} calls a freed entry point", cpu);
        }
        return;
      }
      case Op::kTailTarget: {
        const int entry = a[0] % World::kTailEntries;
        const int id = a[1] == 255 ? -1 : Pick(Freeable(world_), a[1]);
        world_.SetTailTarget(entry, id);
        if (options_.trace) Trace("prog_array[{}] = {}", entry, id < 0 ? "empty" : world_.SlotName(id));
        return;
      }
      case Op::kSynchronize:
        Trace("synchronize");
        world_.Synchronize();
        return;
      case Op::kInterrupt: {
        const int cpu = a[0] % world_.cpus();
        const int id = Pick(world_.LivePrograms(), a[1]);
        if (!world_.Interrupt(cpu, id, StepCount(a[2]))) return;
        ++result_.interrupts;
        Trace("cpu {} interrupted: program {} runs {} instructions in the interrupt{}", cpu, id, StepCount(a[2]),
              world_.in_interrupt(cpu) ? "" : " and returns");
        return;
      }
    }
  }

  World& world_;
  const PackScriptOptions& options_;
  PackScriptResult& result_;
  PackStateObserver states_;
};

}  // namespace

size_t PackOpArgumentCount(PackOpKind kind) {
  switch (kind) {
    case Op::kLoad: return 3;        // subprograms, pad, n
    case Op::kFree: return 1;        // which
    case Op::kStep: return 3;        // cpu, which, n
    case Op::kFinish: return 1;      // cpu
    case Op::kCallStale: return 1;   // cpu
    case Op::kTailTarget: return 2;  // entry, which
    case Op::kSynchronize: return 0;
    case Op::kTailCall: return 3;    // cpu, entry, n
    case Op::kReload: return 2;      // which, pad
    case Op::kInterrupt: return 3;   // cpu, which, n
    case Op::kFailingReload: return 3;  // which, fail, unused
  }
  return 0;
}

std::optional<PackScript> DecodePackScript(std::span<const uint8_t> input) {
  if (input.empty() || !IsPackScriptVersion(input[0])) return std::nullopt;
  PackScript script;
  ByteStream header(input.first(std::min(input.size(), kPackScriptHeaderSize)));
  script.version = header.Next();
  const uint8_t kinds = PackOpKindsIn(script.version);
  script.cpus = 1 + header.Next() % 4;
  for (int i = 0; i < 8; ++i) script.seed |= uint64_t{header.Next()} << (8 * i);
  ByteStream ops(input.size() > kPackScriptHeaderSize ? input.subspan(kPackScriptHeaderSize)
                                                      : std::span<const uint8_t>{});
  while (!ops.done()) {
    PackOp op;
    op.kind = static_cast<PackOpKind>(ops.Next() % kinds);
    for (size_t i = 0; i < PackOpArgumentCount(op.kind); ++i) op.args[i] = ops.Next();
    if (op.kind == Op::kLoad) {
      const auto bytes = ops.Take(size_t{op.args[2]} % kPackScriptMaxRecords * kRecordSize);
      op.records.assign(bytes.begin(), bytes.end());
    }
    script.ops.push_back(std::move(op));
  }
  return script;
}

Result<std::vector<uint8_t>> EncodePackScript(const PackScript& script) {
  if (!IsPackScriptVersion(script.version)) {
    return Fail("pack script: version {}, not {}..{}", script.version, kPackScriptOldestVersion, kPackScriptVersion);
  }
  if (script.cpus < 1 || script.cpus > 4) return Fail("pack script: {} CPUs, not 1..4", script.cpus);
  std::vector<uint8_t> bytes = {script.version, static_cast<uint8_t>(script.cpus - 1)};
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(script.seed >> (8 * i)));
  for (size_t i = 0; i < script.ops.size(); ++i) {
    const PackOp& op = script.ops[i];
    if (static_cast<uint8_t>(op.kind) >= PackOpKindsIn(script.version)) {
      return Fail("pack script: operation {}: no such kind in version {}", i, script.version);
    }
    const size_t arguments = PackOpArgumentCount(op.kind);
    for (size_t a = arguments; a < op.args.size(); ++a) {
      if (op.args[a] != 0) return Fail("pack script: operation {} takes {} argument bytes", i, arguments);
    }
    const size_t record_bytes = op.kind == Op::kLoad ? size_t{op.args[2]} % kPackScriptMaxRecords * kRecordSize : 0;
    const bool last = i + 1 == script.ops.size();
    if (op.records.size() > record_bytes || (!last && op.records.size() != record_bytes)) {
      return Fail("pack script: operation {} holds {} record bytes where its count says {}{}", i, op.records.size(),
                  record_bytes, last ? "" : " (fewer only on the last operation)");
    }
    bytes.push_back(static_cast<uint8_t>(op.kind));
    bytes.insert(bytes.end(), op.args.begin(), op.args.begin() + static_cast<std::ptrdiff_t>(arguments));
    bytes.insert(bytes.end(), op.records.begin(), op.records.end());
  }
  return bytes;
}

Result<PackScriptResult> RunPackScript(std::span<const uint8_t> input, const PackScriptOptions& options) {
  PackScriptResult result;
  const std::optional<PackScript> script = DecodePackScript(input);
  if (!script) return result;
  result.is_script = true;
  result.cpus = script->cpus;

  lifecycle::WorldOptions world_options;
  world_options.cpus = script->cpus;
  world_options.pack_seed = script->seed;
  world_options.bugs = options.bugs;
  world_options.unicorn_fault = options.unicorn_fault;
  world_options.jit_engine = options.jit_engine;
  world_options.kernel_pack = options.kernel_pack;
  std::vector<lifecycle::Violation> setup_violations;
  auto world = World::Create(world_options, &setup_violations);
  if (!world && !setup_violations.empty()) {
    // The world's own programs broke an invariant as they loaded: that is
    // what this script found.
    result.violations = std::move(setup_violations);
    return result;
  }
  if (!world) return world.error();
  ScriptRunner(**world, options, result).Run(*script);
  if (auto failure = (*world)->UnicornFailure()) return Error{*failure};
  result.violations = (*world)->violations();
  result.calls_compared = (*world)->calls_compared();
  result.calls_not_comparable = (*world)->calls_not_comparable();
  result.not_comparable_reasons = (*world)->not_comparable_reasons();
  result.calls_replayed = (*world)->calls_replayed();
  return result;
}

}  // namespace bpfdiff::fuzz
