#include "jit/prog_pack.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

namespace bpfdiff::jit {
namespace {

constexpr uint64_t kWords = kChunksPerPack / 64;
constexpr uint64_t kOversizeGranule = 4096;
constexpr uint64_t kPageSize = 4096;

constexpr uint64_t RoundUp(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

void FillWords(uint8_t* p, uint64_t bytes, uint32_t word) {
  for (uint64_t i = 0; i + 4 <= bytes; i += 4) std::memcpy(p + i, &word, 4);
}

void SetBits(std::vector<uint64_t>& bits, uint64_t first, uint64_t count, bool value) {
  for (uint64_t i = first; i < first + count; ++i) {
    if (value) {
      bits[i / 64] |= uint64_t{1} << (i % 64);
    } else {
      bits[i / 64] &= ~(uint64_t{1} << (i % 64));
    }
  }
}

}  // namespace

struct ProgPack::Pack {
  std::vector<uint64_t> bitmap = std::vector<uint64_t>(kWords, 0);
  uint64_t used = 0;
  bool external = false;  // another allocator's (MapExternal): Alloc does not use it
  bool unmapped = false;  // UnmapExternal came while slots still lay in it
};

ProgPack::ProgPack(const PackConfig& config, TextPatcher& patcher)
    : config_(config), patcher_(patcher), random_state_(config.seed | 1) {
  packs_.resize(config_.packs.size / kPackSize);
}

ProgPack::~ProgPack() = default;

std::optional<uint64_t> ProgPack::FindFreeRun(const Pack& pack, uint64_t chunks) const {
  if (config_.bugs.first_fit_checks_ends) {
    // A planted bug looks only at a candidate's first and last chunks: in
    // a fragmented pack it hands out a run with live chunks inside.
    const auto used = [&](uint64_t c) { return ((pack.bitmap[c / 64] >> (c % 64)) & 1) != 0; };
    for (uint64_t c = 0; c + chunks <= kChunksPerPack; ++c) {
      if (!used(c) && !used(c + chunks - 1)) return c;
    }
    return std::nullopt;
  }
  // First fit, skipping whole words that are full.
  uint64_t run_start = 0, run_length = 0;
  for (uint64_t w = 0; w < kWords; ++w) {
    const uint64_t word = pack.bitmap[w];
    if (word == ~uint64_t{0}) {
      run_length = 0;
      continue;
    }
    if (word == 0) {
      if (run_length == 0) run_start = w * 64;
      run_length += 64;
      if (run_length >= chunks) return run_start;
      continue;
    }
    for (uint64_t b = 0; b < 64; ++b) {
      if ((word >> b) & 1) {
        run_length = 0;
        continue;
      }
      if (run_length == 0) run_start = w * 64 + b;
      if (++run_length >= chunks) return run_start;
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> ProgPack::FindOversizeRoom(uint64_t bytes) {
  std::sort(oversize_used_.begin(), oversize_used_.end(),
            [](const OversizeBlock& a, const OversizeBlock& b) { return a.offset < b.offset; });
  uint64_t offset = 0;
  for (const auto& block : oversize_used_) {
    if (block.offset - offset >= bytes) break;
    offset = block.offset + block.bytes;
  }
  if (offset + bytes > config_.oversize.size) return std::nullopt;
  return offset;
}

Result<int> ProgPack::NewPack() {
  for (size_t i = 0; i < packs_.size(); ++i) {
    if (packs_[i]) continue;
    packs_[i] = std::make_unique<Pack>();
    const uint64_t rx = config_.packs.guest_base + i * kPackSize;
    // A new pack holds nothing but illegal instructions (a planted bug
    // leaves whatever the memory held).
    if (!config_.bugs.new_pack_unfilled) {
      patcher_.Fill(rx, kPackSize, kBreakFault, TextOrigin::kNewPack);
      patcher_.FlushIcache(rx, rx + kPackSize, TextOrigin::kNewPack);
    }
    ++packs_created_;
    return static_cast<int>(i);
  }
  return Fail("all {} prog packs are full", packs_.size());
}

Result<std::unique_ptr<PackAllocation>> ProgPack::Alloc(uint64_t image_bytes, uint64_t alignment,
                                                        Placement placement) {
  if (image_bytes == 0 || image_bytes % 4 != 0) {
    return Fail("image size {} is not a positive multiple of 4", image_bytes);
  }
  if (alignment != 4 && alignment != 8) {
    return Fail("image alignment {}: the pack aligns images to 4 or 8 bytes (the header's size)", alignment);
  }
  // Room for the header and at least 16 bytes of random hole.
  const uint64_t size = RoundUp(image_bytes + kHeaderSize + 16, kChunkSize);
  auto allocation = std::make_unique<PackAllocation>();

  if (size > kPackSize || !config_.pack_images || placement == Placement::kFar) {
    // Larger than a pack (or packing off, or far from the packs): an
    // allocation of its own, first fit.
    const uint64_t bytes = RoundUp(size, kOversizeGranule);
    const std::optional<uint64_t> room = FindOversizeRoom(bytes);
    if (!room) return Fail("no room for an oversize image of {} bytes", bytes);
    const uint64_t offset = *room;
    oversize_used_.push_back({offset, bytes});
    allocation->rx_slot_ = config_.oversize.guest_base + offset;
    allocation->slot_bytes_ = bytes;
    allocation->pack_ = -1;
    patcher_.Fill(allocation->rx_slot_, bytes, kBreakFault, TextOrigin::kNewPack);
    patcher_.FlushIcache(allocation->rx_slot_, allocation->rx_slot_ + bytes, TextOrigin::kNewPack);
  } else {
    const uint64_t chunks = size / kChunkSize;
    int pack_index = -1;
    std::optional<uint64_t> first;
    for (size_t i = 0; i < packs_.size() && !first; ++i) {
      if (packs_[i] && !packs_[i]->external && (first = FindFreeRun(*packs_[i], chunks))) {
        pack_index = static_cast<int>(i);
      }
    }
    if (!first) {
      auto created = NewPack();
      if (!created) return created.error();
      pack_index = *created;
      first = 0;
    }
    Pack& pack = *packs_[static_cast<size_t>(pack_index)];
    SetBits(pack.bitmap, *first, chunks, true);
    pack.used += chunks;
    allocation->rx_slot_ = config_.packs.guest_base + static_cast<uint64_t>(pack_index) * kPackSize +
                           *first * kChunkSize;
    allocation->slot_bytes_ = size;
    allocation->pack_ = pack_index;
    allocation->first_chunk_ = *first;
  }

  // The hole before the image: random, `alignment`-aligned, at most one chunk.
  const uint64_t hole = std::min<uint64_t>(size - (image_bytes + kHeaderSize), kChunkSize - kHeaderSize);
  random_state_ ^= random_state_ << 13;
  random_state_ ^= random_state_ >> 7;
  random_state_ ^= random_state_ << 17;
  const uint64_t start = (random_state_ % hole) & ~(alignment - 1);
  allocation->image_offset_ = kHeaderSize + start;
  allocation->image_bytes_ = image_bytes;
  allocation->rw_.resize(allocation->slot_bytes_);
  FillWords(allocation->rw_.data(), allocation->rw_.size(), kBreakFault);
  // struct bpf_binary_header: the size, then padding up to the image's
  // 8-byte alignment, which keeps the fill (core.c fills the whole RW
  // buffer, then sets the size).
  const auto header = static_cast<uint32_t>(allocation->slot_bytes_);
  std::memcpy(allocation->rw_.data(), &header, 4);
  ++live_rw_buffers_;
  return allocation;
}

void ProgPack::Finalize(PackAllocation& allocation) {
  const uint64_t begin = allocation.rx_slot_;
  const uint64_t end = begin + allocation.slot_bytes_;
  if (config_.bugs.flush_before_copy) {
    patcher_.FlushIcache(begin, end, TextOrigin::kFinalize);
    patcher_.Copy(begin, allocation.rw_, TextOrigin::kFinalize);
  } else if (config_.bugs.copy_stops_at_page_end) {
    // A planted bug maps only the first page of the range, as a text poke
    // that handles one page does: the bytes past it are never written.
    const uint64_t first_page_bytes = std::min<uint64_t>(allocation.slot_bytes_, kPageSize - begin % kPageSize);
    patcher_.Copy(begin, std::span<const uint8_t>(allocation.rw_).first(first_page_bytes), TextOrigin::kFinalize);
    patcher_.FlushIcache(begin, end, TextOrigin::kFinalize);
  } else {
    patcher_.Copy(begin, allocation.rw_, TextOrigin::kFinalize);
    // A planted bug gets the range in the wrong unit: a quarter of it.
    patcher_.FlushIcache(begin, config_.bugs.flush_quarter_range ? begin + (end - begin) / 4 : end,
                         TextOrigin::kFinalize);
  }
  allocation.rw_ = {};
  allocation.finalized_ = true;
  --live_rw_buffers_;
}

void ProgPack::Invalidate(uint64_t rx, uint64_t bytes) {
  if (config_.bugs.skip_invalidate_on_free) return;
  if (config_.bugs.per_word_invalidate) {
    for (uint64_t a = rx; a < rx + bytes; a += 4) {
      patcher_.Fill(a, 4, kBreakFault, TextOrigin::kFree);
      patcher_.FlushIcache(a, a + 4, TextOrigin::kFree);
    }
    return;
  }
  patcher_.Fill(rx, bytes, kBreakFault, TextOrigin::kFree);
  patcher_.FlushIcache(rx, rx + bytes, TextOrigin::kFree);
}

void ProgPack::Free(std::unique_ptr<PackAllocation> allocation) {
  if (!allocation) return;
  // Another allocator's slot is its to invalidate: only the record goes.
  if (allocation->adopted_) {
    Disown(std::move(allocation));
    return;
  }
  if (!allocation->finalized_) --live_rw_buffers_;
  Invalidate(allocation->rx_slot_, allocation->slot_bytes_);
  if (allocation->oversize()) {
    const uint64_t offset = allocation->rx_slot_ - config_.oversize.guest_base;
    std::erase_if(oversize_used_, [&](const OversizeBlock& b) { return b.offset == offset; });
    return;
  }
  Pack& pack = *packs_[static_cast<size_t>(allocation->pack_)];
  const uint64_t chunks = allocation->slot_bytes_ / kChunkSize;
  SetBits(pack.bitmap, allocation->first_chunk_, chunks, false);
  pack.used -= chunks;
  if (pack.used == 0) {
    packs_[static_cast<size_t>(allocation->pack_)].reset();
    ++packs_released_;
  }
}

PackAccounting ProgPack::Accounting() const {
  PackAccounting a;
  for (const auto& pack : packs_) {
    if (!pack || pack->unmapped) continue;
    ++a.packs;
    a.external_packs += pack->external ? 1 : 0;
    a.chunks_used += pack->used;
    a.chunks_free += kChunksPerPack - pack->used;
    // A word at a time: all free, all used, or bit by bit.
    uint64_t run = 0;
    for (const uint64_t word : pack->bitmap) {
      if (word == 0) {
        run += 64;
      } else if (word == ~uint64_t{0}) {
        run = 0;
      } else {
        for (unsigned b = 0; b < 64; ++b) {
          run = ((word >> b) & 1) != 0 ? 0 : run + 1;
          a.largest_free_run = std::max(a.largest_free_run, run);
        }
      }
      a.largest_free_run = std::max(a.largest_free_run, run);
    }
  }
  a.oversize_allocations = static_cast<int>(oversize_used_.size());
  a.live_rw_buffers = live_rw_buffers_;
  a.packs_created = packs_created_;
  a.packs_released = packs_released_;
  return a;
}

const std::vector<uint64_t>* ProgPack::Bitmap(int pack) const {
  if (pack < 0 || static_cast<size_t>(pack) >= packs_.size() || !packs_[static_cast<size_t>(pack)] ||
      packs_[static_cast<size_t>(pack)]->unmapped) {
    return nullptr;
  }
  return &packs_[static_cast<size_t>(pack)]->bitmap;
}

Result<uint64_t> ProgPack::MapExternal(uint64_t bytes) {
  if (bytes == 0) return Fail("execmem_alloc of 0 bytes");
  if (bytes == kPackSize && config_.pack_images) {
    for (size_t i = 0; i < packs_.size(); ++i) {
      if (packs_[i]) continue;
      packs_[i] = std::make_unique<Pack>();
      packs_[i]->external = true;
      ++packs_created_;
      return config_.packs.guest_base + i * kPackSize;
    }
    return Fail("all {} prog pack regions are in use", packs_.size());
  }
  // Anything else (an image larger than a pack) where oversize images go.
  const uint64_t rounded = RoundUp(bytes, kPageSize);
  const std::optional<uint64_t> room = FindOversizeRoom(rounded);
  if (!room) return Fail("no room for {} bytes of executable memory", rounded);
  oversize_used_.push_back({*room, rounded, true});
  return config_.oversize.guest_base + *room;
}

uint64_t ProgPack::ExternalBytes(uint64_t address) const {
  if (config_.packs.Contains(address, 1) && (address - config_.packs.guest_base) % kPackSize == 0) {
    const auto& pack = packs_[static_cast<size_t>((address - config_.packs.guest_base) / kPackSize)];
    return pack && pack->external && !pack->unmapped ? kPackSize : 0;
  }
  for (const OversizeBlock& b : oversize_used_) {
    if (b.external && config_.oversize.guest_base + b.offset == address) return b.bytes;
  }
  return 0;
}

std::string ProgPack::UnmapExternal(uint64_t address) {
  if (config_.packs.Contains(address, 1) && (address - config_.packs.guest_base) % kPackSize == 0) {
    const auto index = static_cast<size_t>((address - config_.packs.guest_base) / kPackSize);
    std::unique_ptr<Pack>& pack = packs_[index];
    if (!pack || !pack->external || pack->unmapped) {
      return fmt::format("execmem_free(0x{:x}) of a pack not mapped for it", address);
    }
    ++packs_released_;
    if (pack->used != 0) {
      pack->unmapped = true;
      return fmt::format("execmem_free(0x{:x}) of a pack where {} chunks are in live slots", address, pack->used);
    }
    pack.reset();
    return "";
  }
  if (config_.oversize.Contains(address, 1)) {
    const uint64_t offset = address - config_.oversize.guest_base;
    const auto erased = std::erase_if(oversize_used_, [&](const OversizeBlock& b) {
      return b.external && b.offset == offset;
    });
    if (erased == 1) return "";
  }
  return fmt::format("execmem_free(0x{:x}) of memory not mapped for it", address);
}

std::unique_ptr<PackAllocation> ProgPack::Adopt(uint64_t rx_slot, uint64_t slot_bytes, uint64_t rx_image,
                                                uint64_t image_bytes, std::string* problem) {
  auto allocation = std::make_unique<PackAllocation>();
  allocation->rx_slot_ = rx_slot;
  allocation->slot_bytes_ = slot_bytes;
  allocation->image_offset_ = rx_image - rx_slot;
  allocation->image_bytes_ = image_bytes;
  allocation->adopted_ = true;
  ++live_rw_buffers_;
  const auto report = [&](std::string what) {
    if (problem != nullptr && problem->empty()) *problem = std::move(what);
  };
  if (rx_image < rx_slot || rx_image + image_bytes > rx_slot + slot_bytes) {
    report(fmt::format("the image at 0x{:x} (+0x{:x}) is not inside its slot at 0x{:x} (+0x{:x})", rx_image,
                       image_bytes, rx_slot, slot_bytes));
  }
  if (config_.packs.Contains(rx_slot, slot_bytes)) {
    const uint64_t offset = rx_slot - config_.packs.guest_base;
    const auto index = static_cast<size_t>(offset / kPackSize);
    Pack* pack = packs_[index].get();
    if (pack == nullptr || !pack->external || pack->unmapped) {
      report(fmt::format("the slot at 0x{:x} lies in no pack mapped for the allocator", rx_slot));
      return allocation;  // a record outside any pack: Disown leaves the packs alone
    }
    if (offset % kChunkSize != 0 || slot_bytes % kChunkSize != 0 || offset % kPackSize + slot_bytes > kPackSize) {
      report(fmt::format("the slot at 0x{:x} (+0x{:x}) is not whole chunks of one pack", rx_slot, slot_bytes));
      return allocation;
    }
    allocation->pack_ = static_cast<int>(index);
    allocation->first_chunk_ = offset % kPackSize / kChunkSize;
    const uint64_t chunks = slot_bytes / kChunkSize;
    for (uint64_t c = allocation->first_chunk_; c < allocation->first_chunk_ + chunks; ++c) {
      if (((pack->bitmap[c / 64] >> (c % 64)) & 1) != 0) {
        report(fmt::format("the slot at 0x{:x} (+0x{:x}) overlaps a live slot at chunk {} of pack {}", rx_slot,
                           slot_bytes, c, index));
        allocation->pack_ = -2;  // not in the bitmap: Disown leaves it alone
        return allocation;
      }
    }
    SetBits(pack->bitmap, allocation->first_chunk_, chunks, true);
    pack->used += chunks;
    return allocation;
  }
  const bool mapped = std::any_of(oversize_used_.begin(), oversize_used_.end(), [&](const OversizeBlock& b) {
    return b.external && config_.oversize.guest_base + b.offset == rx_slot && b.bytes >= slot_bytes;
  });
  if (!mapped) report(fmt::format("the slot at 0x{:x} (+0x{:x}) lies in no range mapped for the allocator", rx_slot,
                                  slot_bytes));
  return allocation;
}

void ProgPack::MarkFinalized(PackAllocation& allocation) {
  if (allocation.finalized_) return;
  allocation.finalized_ = true;
  --live_rw_buffers_;
}

void ProgPack::Disown(std::unique_ptr<PackAllocation> allocation) {
  if (!allocation) return;
  if (!allocation->finalized_) --live_rw_buffers_;
  if (allocation->pack_ < 0) return;
  std::unique_ptr<Pack>& pack = packs_[static_cast<size_t>(allocation->pack_)];
  if (!pack) return;
  const uint64_t chunks = allocation->slot_bytes_ / kChunkSize;
  SetBits(pack->bitmap, allocation->first_chunk_, chunks, false);
  pack->used -= chunks;
  if (pack->unmapped && pack->used == 0) pack.reset();
}

std::optional<uint32_t> ProgPack::ReadWord(uint64_t rx) const {
  if (rx % 4 != 0) return std::nullopt;
  for (const TextMemory* memory : {&config_.packs, &config_.oversize}) {
    if (!memory->Contains(rx, 4)) continue;
    uint32_t word;
    std::memcpy(&word, memory->At(rx), 4);
    return word;
  }
  return std::nullopt;
}

}  // namespace bpfdiff::jit
