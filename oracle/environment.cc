#include "oracle/environment.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "oracle/boundary_trace.h"

namespace bpfdiff {
namespace {

constexpr uint32_t kA64Ret = 0xd65f03c0;       // ret
constexpr uint32_t kA64BranchSelf = 0x14000000;  // b .

struct RegionSpec {
  const char* name;
  uint64_t base;
  uint64_t size;
  uint8_t permissions;
  bool engine_private = false;
};

constexpr RegionSpec kRegions[] = {
    {"helpers", guest::kHelperBase, guest::kHelperRegionSize, kPermRead | kPermExec},
    {"stop", guest::kStopBase, guest::kStopRegionSize, kPermRead | kPermExec},
    {"context", guest::kContextBase, guest::kContextSize, kPermRead | kPermWrite},
    {"map values", guest::kMapValuesBase, guest::kMapValuesSize, kPermRead | kPermWrite},
    {"map objects", guest::kMapObjectsBase, guest::kMapObjectsSize, kPermRead},
    {"program objects", guest::kProgObjectsBase, guest::kProgObjectsSize, kPermRead, true},
    {"stacks", guest::kStackBase, guest::kStackStride * guest::kMaxCpus, kPermRead | kPermWrite},
    {"per-cpu", guest::kPerCpuBase, guest::kPerCpuStride * guest::kMaxCpus, kPermRead | kPermWrite},
    {"thread info", guest::kThreadInfoBase, guest::kPageSize, kPermRead, true},
    {"packs", guest::kPackBase, guest::kPackSize * guest::kMaxPacks, kPermRead | kPermExec, true},
    {"oversize", guest::kOversizeBase, guest::kOversizeSize, kPermRead | kPermExec, true},
    {"arena", guest::kArenaKernStart, guest::kArenaMappedBytes, kPermRead | kPermWrite},
};

}  // namespace

Result<std::unique_ptr<GuestEnvironment>> GuestEnvironment::Create() {
  std::unique_ptr<GuestEnvironment> env(new GuestEnvironment());
  for (const auto& spec : kRegions) {
    auto region = env->memory_.Map(spec.name, spec.base, spec.size, spec.permissions);
    if (!region) return region.error();
    (*region)->engine_private = spec.engine_private;
  }
  // Helper stubs: each helper's entry is a RET (the machine performs the
  // helper in a hook before it executes); the stop page spins on itself.
  for (uint64_t a = guest::kHelperBase; a < guest::kHelperBase + guest::kHelperRegionSize; a += 4) {
    env->memory_.Store<uint32_t>(a, kA64Ret);
  }
  env->memory_.Store<uint32_t>(guest::kStopAddress, kA64BranchSelf);
  // dummy_tramp as arch/arm64/net/bpf_jit_comp.c writes it (with BTI): back
  // to the traced function, whose return address the fentry site saved in x9.
  const uint32_t dummy_tramp[] = {
      0xd503249f,  // bti j
      0xaa1e03ea,  // mov x10, x30
      0xaa0903fe,  // mov x30, x9
      0xd65f0140,  // ret x10
  };
  for (size_t i = 0; i < std::size(dummy_tramp); ++i) {
    env->memory_.Store<uint32_t>(guest::kDummyTrampAddress + 4 * i, dummy_tramp[i]);
  }
  for (int cpu = 0; cpu < guest::kMaxCpus; ++cpu) {
    env->memory_.Store<uint32_t>(guest::ThreadInfo(cpu) + guest::kThreadInfoCpuOffset, static_cast<uint32_t>(cpu));
  }
  env->context_address_ = guest::kContextBase + guest::kContextSize;
  return env;
}

void GuestEnvironment::Install(const LoadedCase& loaded) {
  // What earlier cases wrote beyond what the resets below restore: a case
  // starts from the same state whatever ran before it.
  for (const char* name : {"stacks", "map values"}) {
    if (Region* region = memory_.FindByName(name)) GuestMemory::ZeroWritten(*region);
  }
  // Map objects (read-only for programs; written here through the host).
  std::memset(memory_.HostPointer(guest::kMapObjectsBase, guest::kMapObjectsSize), 0,
              guest::kMapObjectsSize);
  std::memset(memory_.HostPointer(guest::kProgObjectsBase, guest::kProgObjectsSize), 0,
              guest::kProgObjectsSize);
  const auto value_addresses = MapValueAddresses(loaded.maps);
  // The program arrays' slots, which kernel-interp points at its own
  // programs for its runs: a read of them is noted (GuestMemory::held_read).
  if (Region* objects = memory_.FindByName("map objects")) {
    objects->held_begin = ~uint64_t{0};
    objects->held_end = 0;
    for (size_t i = 0; i < loaded.maps.size(); ++i) {
      if (loaded.maps[i].type != isa::MapType::kProgArray) continue;
      const uint64_t slots = guest::MapObjectAddress(i) + guest::kMapPtrsOffset - objects->base;
      objects->held_begin = std::min(objects->held_begin, slots);
      objects->held_end = std::max(objects->held_end, slots + 8 * uint64_t{loaded.maps[i].max_entries});
    }
  }
  for (size_t i = 0; i < loaded.maps.size(); ++i) {
    const isa::MapSpec& map = loaded.maps[i];
    const uint64_t object = guest::MapObjectAddress(i);
    memory_.Store<uint32_t>(object + guest::kMapTypeOffset, static_cast<uint32_t>(map.type));
    memory_.Store<uint32_t>(object + guest::kMapKeySizeOffset, map.key_size);
    memory_.Store<uint32_t>(object + guest::kMapValueSizeOffset, map.value_size);
    memory_.Store<uint32_t>(object + guest::kMapMaxEntriesOffset, map.max_entries);
    memory_.Store<uint64_t>(object + guest::kMapValuesOffset, value_addresses[i]);
    for (size_t e = 0; e < map.programs.size(); ++e) {
      const int32_t target = map.programs[e];
      memory_.Store<uint64_t>(object + guest::kMapPtrsOffset + 8 * e,
                              target < 0 ? 0 : guest::ProgObjectAddress(static_cast<uint64_t>(target)));
    }
  }
  for (size_t p = 0; p < loaded.programs.size(); ++p) {
    memory_.Store<uint32_t>(guest::ProgObjectAddress(p) + guest::kProgIndexOffset,
                            static_cast<uint32_t>(p));
  }
  // Initial images of the writable regions a run may change.
  // Values areas follow one another in declaration order.
  values_bytes_ = 0;
  for (size_t i = 0; i < loaded.maps.size(); ++i) {
    if (const uint64_t bytes = MapValuesBytes(loaded.maps[i]); bytes != 0) {
      values_bytes_ = value_addresses[i] + bytes - guest::kMapValuesBase;
    }
  }
  values_high_water_ = std::max(values_high_water_, values_bytes_);
  std::memset(memory_.HostPointer(guest::kMapValuesBase, values_high_water_), 0, values_high_water_);
  initial_values_.assign(values_bytes_, 0);
  for (size_t i = 0; i < loaded.maps.size(); ++i) {
    const isa::MapSpec& map = loaded.maps[i];
    if (MapValuesBytes(map) == 0) continue;
    // The initial bytes list the values one after another; in memory each
    // value starts at a multiple of round_up(value_size, 8), as in the
    // kernel's array map (hash maps get theirs through map_update_elem).
    uint8_t* values = initial_values_.data() + (value_addresses[i] - guest::kMapValuesBase);
    const uint64_t stride = guest::ArrayValueStride(map.value_size);
    if (map.type == isa::MapType::kArray) {
      for (size_t b = 0; b < map.initial_values.size(); ++b) {
        values[b / map.value_size * stride + b % map.value_size] = map.initial_values[b];
      }
    }
  }
  context_length_ = loaded.memory.size();
  // The input ends 8-byte aligned at the end of the context region, so that
  // reading past its (rounded-up) end faults on every engine.
  context_address_ = guest::kContextBase + guest::kContextSize - ((context_length_ + 7) & ~uint64_t{7});
  if (loaded.options.null_context && context_length_ == 0) context_address_ = 0;
  initial_context_ = loaded.memory;
  std::memset(memory_.HostPointer(guest::kContextBase, guest::kContextSize), 0, guest::kContextSize);
  Reset();
}

void GuestEnvironment::ReplaceContext(const std::vector<uint8_t>& memory) {
  if (memory.size() == initial_context_.size()) initial_context_ = memory;
}

void GuestEnvironment::SetProgramEntry(size_t index, uint64_t rx_address) {
  memory_.Store<uint64_t>(guest::ProgObjectAddress(index) + guest::kProgBpfFuncOffset, rx_address);
}

void GuestEnvironment::Reset() {
  ResetShared();
  for (int cpu = 0; cpu < guest::kMaxCpus; ++cpu) ResetCpu(cpu);
}

void GuestEnvironment::ResetShared() {
  std::memset(memory_.HostPointer(guest::kArenaKernStart, guest::kArenaMappedBytes), 0, guest::kArenaMappedBytes);
  if (!initial_context_.empty()) {
    std::memcpy(memory_.HostPointer(context_address_, initial_context_.size()),
                initial_context_.data(), initial_context_.size());
  }
  if (values_bytes_ != 0) {
    std::memcpy(memory_.HostPointer(guest::kMapValuesBase, values_bytes_), initial_values_.data(),
                values_bytes_);
  }
}

void GuestEnvironment::ResetForRun(int cpu) {
  ResetShared();
  ResetCpu(cpu);
}

void GuestEnvironment::ResetCpu(int cpu, uint64_t stack_top) {
  std::memset(memory_.HostPointer(stack_top - kResetStackBytes, kResetStackBytes), 0, kResetStackBytes);
  std::memset(memory_.HostPointer(guest::PerCpuArea(cpu) + guest::kPerCpuScratchOffset, guest::kPerCpuScratchSize),
              0, guest::kPerCpuScratchSize);
  helper_state_[cpu] = HelperState{};
  helper_state_[cpu].cpu = cpu;
}

MemorySnapshot GuestEnvironment::Capture(int cpu, const StackGeometry& geometry) const {
  MemorySnapshot snapshot;
  if (!geometry.per_function()) {
    // Each frame's slot holds its 512 bytes below r10; of those, the
    // bytes below the stack the frame owns are left 0.
    snapshot.stack.resize(static_cast<size_t>(isa::kStackSize) * isa::kMaxCallDepth);
    const uint64_t own = geometry.OwnStackBytes();
    for (int depth = 0; own != 0 && depth < isa::kMaxCallDepth; ++depth) {
      const uint64_t fp = geometry.FramePointer(cpu, depth);
      const uint8_t* frame = memory_.HostPointer(fp - own, own);
      std::memcpy(snapshot.stack.data() + static_cast<size_t>(depth + 1) * isa::kStackSize - own, frame, own);
    }
  }
  CaptureShared(snapshot);
  return snapshot;
}

MemorySnapshot GuestEnvironment::Capture(const StackWindow& window) const {
  MemorySnapshot snapshot;
  snapshot.window = window;
  if (!window.keep.empty()) {
    const uint8_t* bytes = memory_.HostPointer(window.low, window.keep.size());
    snapshot.stack.resize(window.keep.size());
    for (size_t i = 0; i < window.keep.size(); ++i) snapshot.stack[i] = window.keep[i] ? bytes[i] : 0;
  }
  CaptureShared(snapshot);
  return snapshot;
}

void GuestEnvironment::CaptureShared(MemorySnapshot& snapshot) const {
  if (context_length_ != 0) {
    const uint8_t* context = memory_.HostPointer(context_address_, context_length_);
    snapshot.context.assign(context, context + context_length_);
  }
  if (values_bytes_ != 0) {
    const uint8_t* values = memory_.HostPointer(guest::kMapValuesBase, values_bytes_);
    snapshot.map_values.assign(values, values + values_bytes_);
  }
  const uint8_t* arena = memory_.HostPointer(guest::kArenaKernStart, guest::kArenaMappedBytes);
  snapshot.arena.assign(arena, arena + guest::kArenaMappedBytes);
}

namespace {

// A 64-bit digest of `length` bytes: equal bytes give equal digests; two
// different regions collide with a chance of about 2^-64.
uint64_t DigestBytes(const uint8_t* bytes, size_t length) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ length;
  size_t i = 0;
  for (; i + 8 <= length; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    h = (h ^ word) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  for (; i < length; ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

}  // namespace

MemoryDigest GuestEnvironment::Digest(int cpu, const StackGeometry& geometry) const {
  MemoryDigest digest;
  if (!geometry.per_function()) {
    const uint64_t own = geometry.OwnStackBytes();
    for (int depth = 0; depth < isa::kMaxCallDepth; ++depth) {
      const uint64_t fp = geometry.FramePointer(cpu, depth);
      digest.stack_frames[static_cast<size_t>(depth)] =
          own == 0 ? DigestBytes(nullptr, 0) : DigestBytes(memory_.HostPointer(fp - own, own), own);
    }
  }
  DigestShared(digest);
  return digest;
}

MemoryDigest GuestEnvironment::Digest(const StackWindow& window) const {
  MemoryDigest digest;
  if (!window.stable.empty()) {
    // Mid-run, bytes that held a saved register at any point differ by
    // design: only the stable ones are digested (one digest, frame 0's).
    const uint8_t* bytes = memory_.HostPointer(window.low, window.stable.size());
    std::vector<uint8_t> stable(window.stable.size());
    for (size_t i = 0; i < stable.size(); ++i) stable[i] = window.stable[i] ? bytes[i] : 0;
    digest.stack_frames[0] = DigestBytes(stable.data(), stable.size());
  }
  DigestShared(digest);
  return digest;
}

void GuestEnvironment::DigestShared(MemoryDigest& digest) const {
  if (context_length_ != 0) {
    digest.context = DigestBytes(memory_.HostPointer(context_address_, context_length_), context_length_);
  }
  if (values_bytes_ != 0) {
    digest.map_values = DigestBytes(memory_.HostPointer(guest::kMapValuesBase, values_bytes_), values_bytes_);
  }
  digest.arena = DigestBytes(memory_.HostPointer(guest::kArenaKernStart, guest::kArenaMappedBytes),
                             guest::kArenaMappedBytes);
}

}  // namespace bpfdiff
