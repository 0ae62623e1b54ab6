#include "fuzz/pack/pack_script.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fuzz/generator/fuzz_format.h"
#include "fuzz/generator/generator.h"

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

enum class Op : uint8_t {
  kLoad,
  kFree,
  kStep,
  kFinish,
  kCallStale,
  kTailTarget,
  kSynchronize,
  kTailCall,
  kReload,
};
constexpr uint8_t kOpCount = 9;
constexpr uint64_t kMaxRecords = 48;

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
      : world_(world), options_(options), result_(result) {}

  void Run(ByteStream& ops, uint64_t seed) {
    while (!ops.done()) {
      const auto op = static_cast<Op>(ops.Next() % kOpCount);
      Apply(op, ops, seed + result_.operations);
      ++result_.operations;
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

  void Load(const std::vector<isa::Insn>& insns, uint64_t pad, const char* what) {
    auto id = world_.Load(insns, pad);
    if (!id) {
      ++result_.loads_rejected;
      Trace("{} of {} slots (+{} padding): rejected: {}", what, insns.size(), pad, id.message());
      return;
    }
    ++result_.loads;
    if (!options_.trace) return;  // what follows only describes the load
    const auto probes = std::count_if(insns.begin(), insns.end(), [](const isa::Insn& insn) {
      const uint8_t mode = isa::ModeOf(insn.opcode);
      return isa::ClassOf(insn.opcode) == isa::kClassLdx &&
             (mode == isa::kModeProbeMem || mode == isa::kModeProbeMemSx);
    });
    Trace("{} of {} slots (+{} padding, {} PROBE_MEM loads): {}", what, insns.size(), pad, probes,
          world_.SlotName(*id));
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

  void Apply(Op op, ByteStream& ops, uint64_t seed) {
    switch (op) {
      case Op::kLoad: {
        const uint8_t subprograms = ops.Next();
        const uint8_t pad = ops.Next();
        const uint64_t records = ops.Next() % kMaxRecords;
        const auto bytes = ops.Take(records * kRecordSize);
        Load(GenerateSelfContainedProgram(kPackScriptRecordsVersion, subprograms, bytes, seed), PadSlots(pad),
             "load");
        return;
      }
      case Op::kReload: {
        const int id = Pick(Freeable(world_), ops.Next());
        const uint8_t pad = ops.Next();
        if (id < 0) return;
        const std::vector<isa::Insn> insns = *world_.Source(id);
        Load(insns, PadSlots(pad), "reload");
        return;
      }
      case Op::kFree: {
        const int id = Pick(Freeable(world_), ops.Next());
        if (id < 0) return;
        // The slot's name must be read before the free.
        const std::string name = options_.trace ? world_.SlotName(id) : std::string();
        world_.Free(id);
        ++result_.frees;
        if (!options_.trace) return;
        const std::vector<int> waiting = world_.WaitingFor(id);
        if (waiting.empty()) {
          Trace("free {}", name);
        } else {
          Trace("free {}: deferred until CPUs {} pass a quiescent point", name, fmt::join(waiting, ", "));
        }
        return;
      }
      case Op::kStep: {
        const uint8_t cpu = ops.Next();
        const int id = Pick(world_.LivePrograms(), ops.Next());
        StepCpu(cpu, id, ops.Next());
        return;
      }
      case Op::kTailCall: {
        const uint8_t cpu = ops.Next();
        const int entry = ops.Next() % World::kTailEntries;
        StepCpu(cpu, entry, ops.Next());
        return;
      }
      case Op::kFinish: {
        const int cpu = ops.Next() % world_.cpus();
        if (!world_.busy(cpu)) return;
        Trace("cpu {} runs to the end of its call", cpu);
        world_.RunToCompletion(cpu);
        return;
      }
      case Op::kCallStale: {
        const int cpu = ops.Next() % world_.cpus();
        if (world_.CallStale(cpu)) {
          ++result_.stale_calls;
          Trace("cpu {} calls a freed entry point", cpu);
        }
        return;
      }
      case Op::kTailTarget: {
        const int entry = ops.Next() % World::kTailEntries;
        const uint8_t which = ops.Next();
        const int id = which == 255 ? -1 : Pick(Freeable(world_), which);
        world_.SetTailTarget(entry, id);
        if (options_.trace) Trace("prog_array[{}] = {}", entry, id < 0 ? "empty" : world_.SlotName(id));
        return;
      }
      case Op::kSynchronize:
        Trace("synchronize");
        world_.Synchronize();
        return;
    }
  }

  World& world_;
  const PackScriptOptions& options_;
  PackScriptResult& result_;
};

}  // namespace

Result<PackScriptResult> RunPackScript(std::span<const uint8_t> input, const PackScriptOptions& options) {
  PackScriptResult result;
  if (input.empty() || input[0] != kPackScriptVersion) return result;
  result.is_script = true;
  ByteStream header(input.first(std::min(input.size(), kPackScriptHeaderSize)));
  header.Next();  // version
  result.cpus = 1 + header.Next() % 4;
  uint64_t seed = 0;
  for (int i = 0; i < 8; ++i) seed |= uint64_t{header.Next()} << (8 * i);

  lifecycle::WorldOptions world_options;
  world_options.cpus = result.cpus;
  world_options.pack_seed = seed;
  world_options.bugs = options.bugs;
  auto world = World::Create(world_options);
  if (!world) return world.error();
  ByteStream ops(input.size() > kPackScriptHeaderSize ? input.subspan(kPackScriptHeaderSize)
                                                      : std::span<const uint8_t>{});
  ScriptRunner(**world, options, result).Run(ops, seed);
  result.violations = (*world)->violations();
  result.calls_compared = (*world)->calls_compared();
  result.calls_not_comparable = (*world)->calls_not_comparable();
  return result;
}

}  // namespace bpfdiff::fuzz
