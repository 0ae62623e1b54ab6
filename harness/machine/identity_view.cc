#include "harness/machine/identity_view.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace bpfdiff {
namespace {

// The guest regions mapped at their guest addresses, shared by every VIXL
// CPU of the process: which memory they show, and each range mapped so
// far (ours to map again; anything else at a guest address is not).
struct IdentityView {
  uint64_t serial = 0;  // GuestMemory::serial of the memory shown; 0: none
  size_t regions = 0;   // how many of its regions
  struct Range {
    uint64_t base, size;
  };
  std::vector<Range> mapped;

  bool Ours(uint64_t base, uint64_t size) const {
    for (const Range& r : mapped) {
      if (r.base == base && r.size == size) return true;
    }
    return false;
  }
};

IdentityView& View() {
  static IdentityView view;
  return view;
}

}  // namespace

Status ShowAtGuestAddresses(GuestMemory& memory) {
  IdentityView& view = View();
  if (view.serial == memory.serial() && view.regions == memory.region_count()) return {};
  for (const auto& region : memory.regions()) {
    void* const at = reinterpret_cast<void*>(region->base);
    if (!view.Ours(region->base, region->size)) {
      // Claim the range first: MAP_FIXED_NOREPLACE fails where anything of
      // this process already is, which mremap's MREMAP_FIXED would unmap.
      void* claimed = mmap(at, region->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (claimed == MAP_FAILED || claimed != at) {
        const int error = errno;
        if (claimed != MAP_FAILED) munmap(claimed, region->size);  // a kernel without MAP_FIXED_NOREPLACE
        view.serial = 0;
        return Fail("guest region {} at 0x{:x} (+0x{:x}) cannot be mapped at its guest address in this process: {}",
                    region->name, region->base, region->size, std::strerror(error));
      }
      view.mapped.push_back({region->base, region->size});
    }
    // old_size 0: a second mapping of the same shared pages.
    void* alias = mremap(region->host, 0, region->size, MREMAP_MAYMOVE | MREMAP_FIXED, at);
    if (alias != at) {
      const int error = errno;
      view.serial = 0;
      return Fail("guest region {} at 0x{:x}: mapping its pages at the guest address failed: {}", region->name,
                  region->base, std::strerror(error));
    }
  }
  view.serial = memory.serial();
  view.regions = memory.region_count();
  return {};
}

}  // namespace bpfdiff
