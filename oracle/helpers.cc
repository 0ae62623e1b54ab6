#include "oracle/helpers.h"

#include <cstring>

#include <fmt/format.h>

#include "isa/program.h"
#include "oracle/frame_window.h"
#include "oracle/guest_layout.h"

namespace bpfdiff {
namespace {

using Kind = HelperResult::Kind;

HelperResult Return(uint64_t value) { return {Kind::kReturn, value, {}}; }
HelperResult Errno(int64_t error) { return Return(static_cast<uint64_t>(-error)); }
HelperResult Refuse(std::string message) { return {Kind::kError, 0, std::move(message)}; }

// The map a helper was handed, read from its GuestMap object.
struct MapView {
  isa::MapType type;
  uint32_t key_size, value_size, max_entries;
  uint64_t values;
};

std::optional<MapView> ReadMap(GuestMemory& memory, uint64_t address) {
  if (address < guest::kMapObjectsBase ||
      address >= guest::kMapObjectsBase + guest::kMapObjectsSize ||
      (address - guest::kMapObjectsBase) % guest::kMapObjectStride != 0) {
    return std::nullopt;
  }
  const uint8_t* object = memory.Translate(address, guest::kMapPtrsOffset, AccessKind::kRead);
  if (object == nullptr) return std::nullopt;
  uint32_t fields[4];
  std::memcpy(fields, object, sizeof fields);
  if (fields[3] == 0) return std::nullopt;  // an unused object slot
  MapView view{static_cast<isa::MapType>(fields[0]), fields[1], fields[2], fields[3], 0};
  std::memcpy(&view.values, object + guest::kMapValuesOffset, 8);
  return view;
}


// Hash map slots: u64 in_use; key (rounded up to 8); value (rounded up to 8).
uint64_t HashSlotSize(const MapView& map) {
  return guest::HashSlotSize(map.key_size, map.value_size);
}

std::optional<uint64_t> HashFind(GuestMemory& memory, const MapView& map, const uint8_t* key) {
  const uint64_t slot_size = HashSlotSize(map);
  for (uint64_t i = 0; i < map.max_entries; ++i) {
    const uint64_t slot = map.values + i * slot_size;
    const uint8_t* p = memory.HostPointer(slot, slot_size);
    if (p == nullptr) return std::nullopt;
    uint64_t in_use;
    std::memcpy(&in_use, p, 8);
    if (in_use && std::memcmp(p + 8, key, map.key_size) == 0) return slot;
  }
  return std::nullopt;
}

// A helper's access of [address, address + size), already translated: on
// the stack, with per-function frames, it is noted as the program's own
// accesses are (HelperContext::frames).
void NoteStackAccess(HelperContext& ctx, uint64_t address, uint64_t size, AccessKind kind) {
  if (ctx.frames == nullptr || size == 0) return;
  const Region* region = ctx.memory.last_region();
  if (region == nullptr || region->base != guest::kStackBase) return;
  if (kind == AccessKind::kWrite) {
    ctx.touched_private |= ctx.frames->WriteIsPrivate(address, size);
    ctx.frames->Written(address, size);
  } else {
    ctx.touched_private |= ctx.frames->ReadIsPrivate(address, size);
  }
}

const uint8_t* ReadArg(HelperContext& ctx, uint64_t address, uint64_t size) {
  const uint8_t* p = ctx.memory.Translate(address, size, AccessKind::kRead);
  if (p != nullptr) NoteStackAccess(ctx, address, size, AccessKind::kRead);
  return p;
}

HelperResult MapLookupElem(HelperContext& ctx, const HelperArgs& a) {
  auto map = ReadMap(ctx.memory, a[0]);
  if (!map || map->type == isa::MapType::kProgArray) {
    return Refuse(fmt::format("map_lookup_elem: 0x{:x} is not a map with values", a[0]));
  }
  const uint8_t* key = ReadArg(ctx, a[1], map->key_size);
  if (key == nullptr) return Refuse(fmt::format("map_lookup_elem: key 0x{:x} is not readable", a[1]));
  if (map->type == isa::MapType::kArray) {
    uint32_t index;
    std::memcpy(&index, key, 4);
    if (index >= map->max_entries) return Return(0);
    return Return(map->values + uint64_t{index} * guest::ArrayValueStride(map->value_size));
  }
  auto slot = HashFind(ctx.memory, *map, key);
  return Return(slot ? *slot + guest::HashValueOffset(map->key_size) : 0);
}

HelperResult MapUpdateElem(HelperContext& ctx, const HelperArgs& a) {
  auto map = ReadMap(ctx.memory, a[0]);
  if (!map || map->type == isa::MapType::kProgArray) {
    return Refuse(fmt::format("map_update_elem: 0x{:x} is not a map with values", a[0]));
  }
  const uint8_t* key = ReadArg(ctx, a[1], map->key_size);
  if (key == nullptr) return Refuse(fmt::format("map_update_elem: key 0x{:x} is not readable", a[1]));
  const uint8_t* value = ReadArg(ctx, a[2], map->value_size);
  if (value == nullptr) {
    return Refuse(fmt::format("map_update_elem: value 0x{:x} is not readable", a[2]));
  }
  const uint64_t flags = a[3];
  constexpr uint64_t kNoExist = 1, kExist = 2;  // BPF_NOEXIST, BPF_EXIST (0: BPF_ANY)
  if (flags > kExist) return Errno(kEINVAL);
  uint64_t target;
  if (map->type == isa::MapType::kArray) {
    uint32_t index;
    std::memcpy(&index, key, 4);
    if (index >= map->max_entries) return Errno(kE2BIG);
    if (flags == kNoExist) return Errno(kEEXIST);
    target = map->values + uint64_t{index} * guest::ArrayValueStride(map->value_size);
  } else {
    auto slot = HashFind(ctx.memory, *map, key);
    if (slot && flags == kNoExist) return Errno(kEEXIST);
    if (!slot && flags == kExist) return Errno(kENOENT);
    if (!slot) {
      const uint64_t slot_size = HashSlotSize(*map);
      for (uint64_t i = 0; i < map->max_entries && !slot; ++i) {
        uint64_t in_use;
        std::memcpy(&in_use, ctx.memory.HostPointer(map->values + i * slot_size, 8), 8);
        if (!in_use) slot = map->values + i * slot_size;
      }
      if (!slot) return Errno(kE2BIG);
      const uint64_t one = 1;
      std::memcpy(ctx.memory.HostPointer(*slot, 8), &one, 8);
      std::memmove(ctx.memory.HostPointer(*slot + 8, map->key_size), key, map->key_size);
    }
    target = *slot + guest::HashValueOffset(map->key_size);
  }
  std::memmove(ctx.memory.HostPointer(target, map->value_size), value, map->value_size);
  return Return(0);
}

HelperResult MapDeleteElem(HelperContext& ctx, const HelperArgs& a) {
  auto map = ReadMap(ctx.memory, a[0]);
  if (!map || map->type == isa::MapType::kProgArray) {
    return Refuse(fmt::format("map_delete_elem: 0x{:x} is not a map with values", a[0]));
  }
  const uint8_t* key = ReadArg(ctx, a[1], map->key_size);
  if (key == nullptr) return Refuse(fmt::format("map_delete_elem: key 0x{:x} is not readable", a[1]));
  if (map->type == isa::MapType::kArray) return Errno(kEINVAL);
  auto slot = HashFind(ctx.memory, *map, key);
  if (!slot) return Errno(kENOENT);
  std::memset(ctx.memory.HostPointer(*slot, HashSlotSize(*map)), 0, HashSlotSize(*map));
  return Return(0);
}

// probe_read(dst, size, unsafe_src): copies, or zero-fills dst and returns
// -EFAULT when the source is not readable.
HelperResult ProbeRead(HelperContext& ctx, const HelperArgs& a) {
  const uint64_t size = a[1];
  if (size > 4096) return Refuse(fmt::format("probe_read: size {} is larger than 4096", size));
  uint8_t* dst = ctx.memory.Translate(a[0], size, AccessKind::kWrite);
  if (dst == nullptr && size != 0) {
    return Refuse(fmt::format("probe_read: destination 0x{:x} is not writable", a[0]));
  }
  if (size == 0) return Return(0);
  const uint8_t* src = ctx.memory.Translate(a[2], size, AccessKind::kRead);
  if (src == nullptr) {
    std::memset(dst, 0, size);
    return Errno(kEFAULT);
  }
  NoteStackAccess(ctx, a[2], size, AccessKind::kRead);
  // Translated again for the note: last_region() is the source's now.
  ctx.memory.Translate(a[0], size, AccessKind::kWrite);
  NoteStackAccess(ctx, a[0], size, AccessKind::kWrite);
  std::memmove(dst, src, size);
  return Return(0);
}

// bpf_conformance's helper 5: returns r1; a zero return stops the program.
HelperResult Unwind(HelperContext&, const HelperArgs& a) {
  if (a[0] == 0) return {Kind::kUnwind, 0, {}};
  return Return(a[0]);
}

HelperResult GetPrandomU32(HelperContext& ctx, const HelperArgs&) {
  uint64_t x = ctx.state.prandom;  // xorshift64
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  ctx.state.prandom = x;
  return Return(x & 0xffffffff);
}

HelperResult GetSmpProcessorId(HelperContext& ctx, const HelperArgs&) {
  return Return(static_cast<uint64_t>(ctx.state.cpu));
}

// bpf_get_current_task() and its _btf sibling: `current`, the running
// task. On arm64 that is SP_EL0, and thread_info is the task's first member
// (THREAD_INFO_IN_TASK), so it is the guest's thread_info of the CPU, which
// the machine points SP_EL0 at. The kernel's JIT reads SP_EL0 inline.
HelperResult GetCurrentTask(HelperContext& ctx, const HelperArgs&) {
  return Return(guest::ThreadInfo(ctx.state.cpu));
}

HelperResult GetCurrentPidTgid(HelperContext&, const HelperArgs&) {
  return Return(uint64_t{0x1234} << 32 | 0x5678);
}

// kptr_xchg(dst, ptr): returns the old *(u64 *)dst and stores ptr.
HelperResult KptrXchg(HelperContext& ctx, const HelperArgs& a) {
  uint8_t* p = ctx.memory.Translate(a[0], 8, AccessKind::kWrite);
  if (p == nullptr) return Refuse(fmt::format("kptr_xchg: 0x{:x} is not writable", a[0]));
  NoteStackAccess(ctx, a[0], 8, AccessKind::kRead);
  NoteStackAccess(ctx, a[0], 8, AccessKind::kWrite);
  uint64_t old;
  std::memcpy(&old, p, 8);
  std::memcpy(p, &a[1], 8);
  return Return(old);
}

// bpf_loop reached through a helper stub: by callx (a direct call goes to
// the engine's own bpf_loop, which calls BPF code). The kernel has no
// callx; its verifier would want r2 to be a function, which a callx's
// caller cannot show.
HelperResult LoopThroughCallx(HelperContext&, const HelperArgs&) {
  return Refuse("bpf_loop calls BPF code: only a direct call reaches it, not callx");
}

constexpr HelperInfo kHelpers[] = {
    {kHelperMapLookupElem, "map_lookup_elem", 2, MapLookupElem},
    {kHelperMapUpdateElem, "map_update_elem", 4, MapUpdateElem},
    {kHelperMapDeleteElem, "map_delete_elem", 2, MapDeleteElem},
    {kHelperProbeRead, "probe_read", 3, ProbeRead},
    {kHelperUnwind, "unwind", 1, Unwind},
    {kHelperGetPrandomU32, "get_prandom_u32", 0, GetPrandomU32},
    {kHelperGetSmpProcessorId, "get_smp_processor_id", 0, GetSmpProcessorId},
    {kHelperGetCurrentPidTgid, "get_current_pid_tgid", 0, GetCurrentPidTgid},
    {kHelperGetCurrentTask, "get_current_task", 0, GetCurrentTask},
    {kHelperGetCurrentTaskBtf, "get_current_task_btf", 0, GetCurrentTask},
    {kHelperKptrXchg, "kptr_xchg", 2, KptrXchg},
    {kHelperLoop, "loop", 4, LoopThroughCallx},
};

}  // namespace

const HelperInfo* FindHelper(int64_t id) {
  for (const auto& helper : kHelpers) {
    if (helper.id == id) return &helper;
  }
  return nullptr;
}

HelperResult CallHelper(int64_t id, HelperContext& context, const HelperArgs& args) {
  const HelperInfo* helper = FindHelper(id);
  if (helper == nullptr) return Refuse(fmt::format("call to unknown helper {}", id));
  return helper->fn(context, args);
}

HelperResult InvokeHelper(int64_t id, HelperContext& context, const HelperArgs& args,
                          std::vector<HelperCall>& trace) {
  const HelperInfo* helper = FindHelper(id);
  HelperResult result =
      helper != nullptr ? helper->fn(context, args) : Refuse(fmt::format("call to unknown helper {}", id));
  // The trace holds the arguments the helper takes; the other argument
  // registers hold whatever the caller left there, which is undefined.
  HelperArgs used{};
  for (int i = 0; helper != nullptr && i < helper->num_args; ++i) {
    used[static_cast<size_t>(i)] = args[static_cast<size_t>(i)];
  }
  trace.push_back(HelperCall{static_cast<int32_t>(id), used, result.kind == Kind::kReturn ? result.value : 0});
  return result;
}

std::string BadCallxMessage() { return "callx target is not a helper id"; }

}  // namespace bpfdiff
