// Guest memory: page-aligned regions backed by host buffers.
//
// The interpreter reads and writes guest memory only through Translate(),
// which checks the region and its permissions; the Unicorn machine maps the
// very same host buffers with uc_mem_map_ptr, so both engines see one memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "support/result.h"

namespace bpfdiff {

enum Permission : uint8_t { kPermRead = 1, kPermWrite = 2, kPermExec = 4 };

// kMisaligned: an atomic access that is not naturally aligned (arm64 raises an
// alignment fault for it; the kernel's verifier rejects it statically).
enum class AccessKind : uint8_t { kRead, kWrite, kExec, kMisaligned };
std::string_view AccessKindName(AccessKind kind);

struct Region {
  std::string name;
  uint64_t base = 0;
  uint64_t size = 0;
  uint8_t permissions = 0;
  uint8_t* host = nullptr;  // page aligned, `size` bytes
  // The region holds bytes that differ between engines by design (JIT code,
  // program objects that point at it): a program reading it is not
  // comparable. See GuestMemory::private_read().
  bool engine_private = false;
  // The offsets written through GuestMemory::Translate (the interpreter's
  // stores, the helpers' writes) since ZeroWritten: [written_begin,
  // written_end), empty when begin >= end.
  uint64_t written_begin = ~uint64_t{0};
  uint64_t written_end = 0;
  // The offsets [held_begin, held_end) hold bytes that one engine holds
  // otherwise by design (a program array's slots, which kernel-interp
  // points at its own programs); empty when begin >= end. See
  // GuestMemory::held_read().
  uint64_t held_begin = ~uint64_t{0};
  uint64_t held_end = 0;

  bool Contains(uint64_t address, uint64_t length) const {
    return address >= base && length <= size && address - base <= size - length;
  }
};

class GuestMemory {
 public:
  GuestMemory();
  ~GuestMemory();
  GuestMemory(const GuestMemory&) = delete;
  GuestMemory& operator=(const GuestMemory&) = delete;

  // Maps a zero-filled region. Base and size must be page multiples and the
  // region must not overlap another.
  Result<Region*> Map(std::string name, uint64_t base, uint64_t size, uint8_t permissions);

  // Host pointer for [address, address + length) if it lies inside one
  // region that allows `kind`; nullptr otherwise (a fault).
  uint8_t* Translate(uint64_t address, uint64_t length, AccessKind kind) {
    Region* region = last_;
    if (region == nullptr || !region->Contains(address, length)) {
      region = Find(address, length);
      if (region == nullptr) return nullptr;
      last_ = region;
    }
    if (!(region->permissions & PermissionFor(kind))) return nullptr;
    private_read_ |= region->engine_private;
    const uint64_t offset = address - region->base;
    held_read_ |= offset < region->held_end && offset + length > region->held_begin;
    if (kind == AccessKind::kWrite) {
      region->written_begin = std::min(region->written_begin, offset);
      region->written_end = std::max(region->written_end, offset + length);
    }
    return region->host + offset;
  }

  // Zeroes what was written to `region` through Translate since the last
  // call, so that nothing a case wrote outside what a reset restores (a
  // helper's write deep in the stacks, a store past a map's values) is
  // there for a later case to read: an outcome must not depend on what ran
  // before it.
  static void ZeroWritten(Region& region) {
    if (region.written_begin < region.written_end) {
      std::memset(region.host + region.written_begin, 0, region.written_end - region.written_begin);
    }
    region.written_begin = ~uint64_t{0};
    region.written_end = 0;
  }

  // Translate() for the interpreter's own bookkeeping (the index a tail
  // call reads from the program object it jumps to): the same checks, but
  // not counted as the program reading engine-private bytes. It is how the
  // interpreter finds the program, not something the program does; the
  // JIT's tail call reads the object's bpf_func, its own entry, instead,
  // and the program sees neither.
  const uint8_t* Inspect(uint64_t address, uint64_t length, AccessKind kind) {
    const bool was_private = private_read_;
    const bool was_held = held_read_;
    const uint8_t* p = Translate(address, length, kind);
    private_read_ = was_private;
    held_read_ = was_held;
    return p;
  }

  // Whether anything was read from an engine-private region since the last
  // ClearPrivateRead() (Translate() of any kind counts).
  bool private_read() const { return private_read_; }
  void ClearPrivateRead() { private_read_ = false; }
  // Whether anything was read from a region's held bytes (Region::
  // held_begin) since the last ClearHeldRead().
  bool held_read() const { return held_read_; }
  void ClearHeldRead() { held_read_ = false; }
  // The region the last successful Translate() hit.
  const Region* last_region() const { return last_; }

  // The region containing the whole range, or nullptr.
  Region* Find(uint64_t address, uint64_t length = 1);
  const Region* Find(uint64_t address, uint64_t length = 1) const;
  Region* FindByName(std::string_view name);

  // The first byte of [address, address + length) that does not allow
  // `kind`: the address a CPU reports for the fault. `address` itself when
  // the whole range is inaccessible or the range is not inaccessible at all.
  uint64_t FirstInaccessible(uint64_t address, uint64_t length, AccessKind kind) {
    for (uint64_t i = 0; i < length; ++i) {
      if (Translate(address + i, 1, kind) == nullptr) return address + i;
    }
    return address;
  }

  // Whether [address, address + length) is mapped with `kind` allowed.
  bool Accessible(uint64_t address, uint64_t length, AccessKind kind) {
    return Translate(address, length, kind) != nullptr;
  }

  std::span<const std::unique_ptr<Region>> regions() const { return regions_; }
  // Regions are added, never removed; a memory made later in the process
  // has a greater serial number, even at the same host address.
  size_t region_count() const { return regions_.size(); }
  uint64_t serial() const { return serial_; }

  // Raw host access for setting up state; bypasses permissions (the loader
  // writes read-only objects this way). Returns nullptr if unmapped.
  uint8_t* HostPointer(uint64_t address, uint64_t length) {
    Region* region = Find(address, length);
    return region ? region->host + (address - region->base) : nullptr;
  }
  const uint8_t* HostPointer(uint64_t address, uint64_t length) const {
    const Region* region = Find(address, length);
    return region ? region->host + (address - region->base) : nullptr;
  }

  template <typename T>
  bool Store(uint64_t address, T value) {
    uint8_t* p = HostPointer(address, sizeof(T));
    if (p == nullptr) return false;
    std::memcpy(p, &value, sizeof(T));
    return true;
  }

 private:
  static uint8_t PermissionFor(AccessKind kind) {
    switch (kind) {
      case AccessKind::kRead: return kPermRead;
      case AccessKind::kWrite: return kPermWrite;
      case AccessKind::kExec: return kPermExec;
      case AccessKind::kMisaligned: return 0;
    }
    return 0;
  }

  uint64_t serial_;
  std::vector<std::unique_ptr<Region>> regions_;
  Region* last_ = nullptr;
  mutable size_t find_hint_ = 0;  // the index of the region Find() found last
  bool private_read_ = false;
  bool held_read_ = false;
};

}  // namespace bpfdiff
