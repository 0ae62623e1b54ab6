#include "jit/prog_pack.h"

#include <algorithm>
#include <bit>
#include <cstring>

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
    std::sort(oversize_used_.begin(), oversize_used_.end(),
              [](const OversizeBlock& a, const OversizeBlock& b) { return a.offset < b.offset; });
    uint64_t offset = 0;
    for (const auto& block : oversize_used_) {
      if (block.offset - offset >= bytes) break;
      offset = block.offset + block.bytes;
    }
    if (offset + bytes > config_.oversize.size) {
      return Fail("no room for an oversize image of {} bytes", bytes);
    }
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
      if (packs_[i] && (first = FindFreeRun(*packs_[i], chunks))) pack_index = static_cast<int>(i);
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
  const auto header = static_cast<uint32_t>(allocation->slot_bytes_);
  std::memcpy(allocation->rw_.data(), &header, 4);
  std::memset(allocation->rw_.data() + 4, 0, kHeaderSize - 4);
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
    if (!pack) continue;
    ++a.packs;
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
  if (pack < 0 || static_cast<size_t>(pack) >= packs_.size() || !packs_[static_cast<size_t>(pack)]) {
    return nullptr;
  }
  return &packs_[static_cast<size_t>(pack)]->bitmap;
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
