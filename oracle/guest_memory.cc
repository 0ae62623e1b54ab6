#include "oracle/guest_memory.h"

#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <utility>

#include "oracle/guest_layout.h"

namespace bpfdiff {

std::string_view AccessKindName(AccessKind kind) {
  switch (kind) {
    case AccessKind::kRead: return "read";
    case AccessKind::kWrite: return "write";
    case AccessKind::kExec: return "exec";
    case AccessKind::kMisaligned: return "misaligned atomic access";
  }
  return "?";
}

namespace {
std::atomic<uint64_t> next_serial{1};
}  // namespace

GuestMemory::GuestMemory() : serial_(next_serial.fetch_add(1)) {}

GuestMemory::~GuestMemory() {
  for (auto& region : regions_) munmap(region->host, region->size);
}

Result<Region*> GuestMemory::Map(std::string name, uint64_t base, uint64_t size,
                                 uint8_t permissions) {
  if (base % guest::kPageSize != 0 || size % guest::kPageSize != 0 || size == 0) {
    return Fail("region {} at 0x{:x} (+0x{:x}) is not page aligned", name, base, size);
  }
  for (const auto& other : regions_) {
    if (base < other->base + other->size && other->base < base + size) {
      return Fail("region {} at 0x{:x} overlaps region {}", name, base, other->name);
    }
  }
  // Shared, so that a stepped executor can map the same pages a second time
  // at their guest addresses (harness/machine/vixl_cpu.h).
  void* host = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (host == MAP_FAILED) return Fail("cannot allocate {} bytes for region {}", size, name);
  auto region = std::make_unique<Region>(
      Region{std::move(name), base, size, permissions, static_cast<uint8_t*>(host)});
  regions_.push_back(std::move(region));
  return regions_.back().get();
}

Region* GuestMemory::Find(uint64_t address, uint64_t length) {
  return const_cast<Region*>(std::as_const(*this).Find(address, length));
}

const Region* GuestMemory::Find(uint64_t address, uint64_t length) const {
  // Regions never overlap (Map), so the one found last, when it holds the
  // range, is the answer: the JIT's checks ask about the same region
  // instruction after instruction.
  if (find_hint_ < regions_.size() && regions_[find_hint_]->Contains(address, length)) {
    return regions_[find_hint_].get();
  }
  for (size_t i = 0; i < regions_.size(); ++i) {
    if (regions_[i]->Contains(address, length)) {
      find_hint_ = i;
      return regions_[i].get();
    }
  }
  return nullptr;
}

Region* GuestMemory::FindByName(std::string_view name) {
  for (auto& region : regions_) {
    if (region->name == name) return region.get();
  }
  return nullptr;
}

}  // namespace bpfdiff
