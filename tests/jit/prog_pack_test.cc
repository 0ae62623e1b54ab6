// harness_pack: the prog pack allocator on its own (jit/prog_pack.h), with
// a recording TextPatcher that performs each operation on host buffers and
// logs it. Expected layouts follow kernel/bpf/core.c
// (bpf_jit_binary_pack_alloc, bpf_prog_pack_alloc/free): slot =
// round_up(image + header + 16, 64); hole = min(slot - (image + header),
// 64 - header); a pack is 2 MiB of 64-byte chunks, pre-filled with
// AARCH64_BREAK_FAULT; larger requests get their own allocation.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "jit/prog_pack.h"
#include "jit/text_patching.h"

namespace bpfdiff {
namespace {

using jit::kBreakFault;
using jit::kChunkSize;
using jit::kChunksPerPack;
using jit::kPackSize;
using jit::PackAllocation;
using jit::ProgPack;
using jit::TextOrigin;

constexpr uint64_t kPacksBase = 0x1000'0000;
constexpr uint64_t kOversizeBase = 0x2000'0000;
constexpr uint64_t kOversizeBytes = 8 << 20;

constexpr uint64_t RoundUp(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }
// The slot the kernel reserves for an image of `bytes`.
constexpr uint64_t SlotBytes(uint64_t bytes) { return RoundUp(bytes + jit::kHeaderSize + 16, kChunkSize); }

struct Op {
  enum Kind : uint8_t { kCopy, kFill, kFlush };
  Kind kind;
  uint64_t begin;
  uint64_t end;
  uint32_t word = 0;  // kFill
  TextOrigin origin;

  friend bool operator==(const Op&, const Op&) = default;
};

std::ostream& operator<<(std::ostream& out, const Op& op) {
  static const char* const kinds[] = {"Copy", "Fill", "FlushIcache"};
  static const char* const origins[] = {"finalize", "free", "new pack", "trampoline"};
  out << fmt::format("{}[0x{:x}, 0x{:x})", kinds[op.kind], op.begin, op.end);
  if (op.kind == Op::kFill) out << fmt::format(" with 0x{:08x}", op.word);
  return out << " (" << origins[static_cast<int>(op.origin)] << ")";
}

Op Copy(uint64_t begin, uint64_t bytes, TextOrigin origin) { return {Op::kCopy, begin, begin + bytes, 0, origin}; }
Op Fill(uint64_t begin, uint64_t bytes, TextOrigin origin) {
  return {Op::kFill, begin, begin + bytes, kBreakFault, origin};
}
Op Flush(uint64_t begin, uint64_t bytes, TextOrigin origin) { return {Op::kFlush, begin, begin + bytes, 0, origin}; }

// Does what the harness's patcher does to memory, and logs every call.
class RecordingPatcher final : public jit::TextPatcher {
 public:
  RecordingPatcher(jit::TextMemory packs, jit::TextMemory oversize) : packs_(packs), oversize_(oversize) {}

  void Copy(uint64_t rx_address, std::span<const uint8_t> bytes, TextOrigin origin) override {
    ops.push_back({Op::kCopy, rx_address, rx_address + bytes.size(), 0, origin});
    last_copy.assign(bytes.begin(), bytes.end());
    if (uint8_t* host = Host(rx_address, bytes.size())) std::memcpy(host, bytes.data(), bytes.size());
  }
  void Fill(uint64_t rx_address, uint64_t length, uint32_t word, TextOrigin origin) override {
    ops.push_back({Op::kFill, rx_address, rx_address + length, word, origin});
    if (uint8_t* host = Host(rx_address, length)) {
      for (uint64_t i = 0; i + 4 <= length; i += 4) std::memcpy(host + i, &word, 4);
    }
  }
  void FlushIcache(uint64_t begin, uint64_t end, TextOrigin origin) override {
    ops.push_back({Op::kFlush, begin, end, 0, origin});
  }

  uint8_t* Host(uint64_t address, uint64_t length) {
    if (packs_.Contains(address, length)) return packs_.At(address);
    if (oversize_.Contains(address, length)) return oversize_.At(address);
    ADD_FAILURE() << fmt::format("an operation on [0x{:x}, 0x{:x}) outside the RX regions", address, address + length);
    return nullptr;
  }

  std::vector<Op> ops;
  std::vector<uint8_t> last_copy;

 private:
  jit::TextMemory packs_, oversize_;
};

// A pack allocator over `packs` packs and an 8 MiB oversize region.
class PackTest {
 public:
  explicit PackTest(int packs = 3, uint64_t seed = 1, jit::PackBugs bugs = {})
      : packs_memory_(static_cast<size_t>(packs) * kPackSize),
        oversize_memory_(kOversizeBytes),
        patcher_(jit::TextMemory{kPacksBase, packs_memory_.data(), packs_memory_.size()},
                 jit::TextMemory{kOversizeBase, oversize_memory_.data(), oversize_memory_.size()}) {
    jit::PackConfig config;
    config.packs = {kPacksBase, packs_memory_.data(), packs_memory_.size()};
    config.oversize = {kOversizeBase, oversize_memory_.data(), oversize_memory_.size()};
    config.seed = seed;
    config.bugs = bugs;
    pack_ = std::make_unique<ProgPack>(config, patcher_);
  }

  ProgPack& pack() { return *pack_; }
  std::vector<Op>& ops() { return patcher_.ops; }
  const std::vector<uint8_t>& last_copy() const { return patcher_.last_copy; }

  std::unique_ptr<PackAllocation> Alloc(uint64_t bytes) {
    auto allocation = pack_->Alloc(bytes);
    EXPECT_TRUE(allocation.ok()) << allocation.message();
    if (!allocation) return nullptr;
    return std::move(allocation).value();
  }
  std::unique_ptr<PackAllocation> AllocFinalized(uint64_t bytes) {
    auto allocation = Alloc(bytes);
    if (allocation) pack_->Finalize(*allocation);
    return allocation;
  }

  uint32_t RxWord(uint64_t address) {
    uint32_t word;
    std::memcpy(&word, patcher_.Host(address, 4), 4);
    return word;
  }
  // Whether every word of [begin, begin + bytes) in RX memory is BRK.
  bool AllBrk(uint64_t begin, uint64_t bytes) {
    for (uint64_t a = begin; a < begin + bytes; a += 4) {
      if (RxWord(a) != kBreakFault) return false;
    }
    return true;
  }

 private:
  std::vector<uint8_t> packs_memory_;
  std::vector<uint8_t> oversize_memory_;
  RecordingPatcher patcher_;
  std::unique_ptr<ProgPack> pack_;
};

// The RW slot (header first) behind an unfinalized allocation.
const uint8_t* RwSlot(PackAllocation& allocation) {
  return allocation.rw_image() - (allocation.rx_image() - allocation.rx_slot());
}

uint64_t LargestRun(const std::vector<bool>& used) {
  uint64_t best = 0, run = 0;
  for (const bool u : used) {
    run = u ? 0 : run + 1;
    best = std::max(best, run);
  }
  return best;
}

TEST(harness_pack, SlotSizesRoundUpToChunksWithHeaderAndHole) {
  PackTest t;
  const uint64_t sizes[] = {4, 8, 36, 40, 44, 100, 1000, 4096, 65536 - 24, 65536, 100'000, 1'000'000};
  std::set<uint64_t> holes;
  for (int round = 0; round < 8; ++round) {
    for (const uint64_t bytes : sizes) {
      SCOPED_TRACE(fmt::format("image of {} bytes", bytes));
      auto a = t.Alloc(bytes);
      ASSERT_NE(a, nullptr);
      EXPECT_EQ(a->slot_bytes(), SlotBytes(bytes));
      EXPECT_EQ(a->image_bytes(), bytes);
      EXPECT_EQ(a->rx_slot() % kChunkSize, 0u);
      EXPECT_EQ(a->pack(), 0);
      EXPECT_FALSE(a->oversize());
      EXPECT_EQ(a->first_chunk(), (a->rx_slot() - kPacksBase) / kChunkSize);
      const uint64_t offset = a->rx_image() - a->rx_slot();
      const uint64_t hole = std::min(a->slot_bytes() - (bytes + jit::kHeaderSize), kChunkSize - jit::kHeaderSize);
      EXPECT_GE(offset, jit::kHeaderSize);
      EXPECT_LT(offset, jit::kHeaderSize + hole);
      EXPECT_EQ(a->rx_image() % 4, 0u);
      EXPECT_LE(a->rx_image() + bytes, a->rx_slot() + a->slot_bytes());
      holes.insert(offset - jit::kHeaderSize);
      t.pack().Free(std::move(a));
    }
  }
  // Random holes: many positions are used.
  EXPECT_GE(holes.size(), 8u);
  EXPECT_FALSE(t.pack().Alloc(0).ok());
  EXPECT_FALSE(t.pack().Alloc(6).ok());
  EXPECT_EQ(t.pack().Accounting().live_rw_buffers, 0);
}

TEST(harness_pack, HolesAreDeterministicForASeed) {
  auto holes = [](uint64_t seed) {
    PackTest t(1, seed);
    std::vector<uint64_t> offsets;
    std::vector<std::unique_ptr<PackAllocation>> live;
    for (int i = 0; i < 32; ++i) {
      live.push_back(t.AllocFinalized(100));
      offsets.push_back(live.back()->rx_image() - live.back()->rx_slot());
    }
    return offsets;
  };
  EXPECT_EQ(holes(7), holes(7));
  EXPECT_NE(holes(7), holes(8));
}

TEST(harness_pack, RwBufferStartsWithHeaderThenBrk) {
  PackTest t;
  for (const uint64_t bytes : {4u, 60u, 1000u}) {
    auto a = t.Alloc(bytes);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(a->rw_image(), nullptr);
    const uint8_t* rw = RwSlot(*a);
    uint32_t header, pad;
    std::memcpy(&header, rw, 4);
    std::memcpy(&pad, rw + 4, 4);
    EXPECT_EQ(header, a->slot_bytes());  // struct bpf_binary_header: u32 size
    // The padding to the image's 8-byte alignment keeps the fill, as in
    // core.c, which fills the whole RW buffer before it sets the size.
    EXPECT_EQ(pad, kBreakFault);
    for (uint64_t i = jit::kHeaderSize; i < a->slot_bytes(); i += 4) {
      uint32_t word;
      std::memcpy(&word, rw + i, 4);
      ASSERT_EQ(word, kBreakFault) << "RW byte " << i;
    }
    t.pack().Free(std::move(a));
  }
}

TEST(harness_pack, NewPackIsFilledWithBrkAndFlushed) {
  PackTest t;
  auto a = t.Alloc(100);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(t.ops(), (std::vector<Op>{Fill(kPacksBase, kPackSize, TextOrigin::kNewPack),
                                      Flush(kPacksBase, kPackSize, TextOrigin::kNewPack)}));
  EXPECT_TRUE(t.AllBrk(kPacksBase, kPackSize));
  EXPECT_EQ(t.pack().Accounting().packs_created, 1u);
  // A second allocation in the same pack touches no RX memory until finalize.
  t.ops().clear();
  auto b = t.Alloc(100);
  EXPECT_TRUE(t.ops().empty());
}

TEST(harness_pack, FinalizeCopiesOnceThenFlushesExactlyTheSlot) {
  PackTest t;
  auto keep = t.AllocFinalized(4);
  for (const uint64_t bytes : {4u, 100u, 5000u}) {
    auto a = t.Alloc(bytes);
    ASSERT_NE(a, nullptr);
    for (uint64_t i = 0; i < bytes; i += 4) {
      const auto word = static_cast<uint32_t>(0xd503201f);  // nop
      std::memcpy(a->rw_image() + i, &word, 4);
    }
    const std::vector<uint8_t> rw(RwSlot(*a), RwSlot(*a) + a->slot_bytes());
    t.ops().clear();
    t.pack().Finalize(*a);
    EXPECT_EQ(t.ops(), (std::vector<Op>{Copy(a->rx_slot(), a->slot_bytes(), TextOrigin::kFinalize),
                                        Flush(a->rx_slot(), a->slot_bytes(), TextOrigin::kFinalize)}));
    EXPECT_EQ(t.last_copy(), rw);
    EXPECT_TRUE(a->finalized());
    EXPECT_EQ(a->rw_image(), nullptr);
    EXPECT_EQ(t.RxWord(a->rx_image()), 0xd503201fu);
    EXPECT_EQ(t.RxWord(a->rx_image() + bytes - 4), 0xd503201fu);
    EXPECT_EQ(t.RxWord(a->rx_slot()), a->slot_bytes());  // the header, in RX
  }
}

TEST(harness_pack, FreeFillsTheSlotWithBrkOnceAndFlushesOnce) {
  PackTest t;
  auto keep = t.AllocFinalized(4);  // keeps the pack from being released
  for (const bool finalized : {true, false}) {
    SCOPED_TRACE(finalized ? "finalized" : "never finalized");
    auto a = finalized ? t.AllocFinalized(1000) : t.Alloc(1000);
    ASSERT_NE(a, nullptr);
    const uint64_t slot = a->rx_slot(), bytes = a->slot_bytes();
    t.ops().clear();
    const int live = t.pack().Accounting().live_rw_buffers;
    t.pack().Free(std::move(a));
    EXPECT_EQ(t.ops(), (std::vector<Op>{Fill(slot, bytes, TextOrigin::kFree), Flush(slot, bytes, TextOrigin::kFree)}));
    EXPECT_TRUE(t.AllBrk(slot, bytes));
    EXPECT_EQ(t.pack().Accounting().live_rw_buffers, finalized ? live : live - 1);
  }
}

TEST(harness_pack, EmptyPackIsReleasedAndANewOneRefilled) {
  PackTest t;
  auto a = t.AllocFinalized(100);
  auto b = t.AllocFinalized(3000);
  t.pack().Free(std::move(a));
  EXPECT_EQ(t.pack().Accounting().packs, 1);
  EXPECT_NE(t.pack().Bitmap(0), nullptr);
  t.ops().clear();
  t.pack().Free(std::move(b));
  jit::PackAccounting accounting = t.pack().Accounting();
  EXPECT_EQ(accounting.packs, 0);
  EXPECT_EQ(accounting.packs_released, 1u);
  EXPECT_EQ(accounting.chunks_used, 0u);
  EXPECT_EQ(accounting.chunks_free, 0u);
  EXPECT_EQ(t.pack().Bitmap(0), nullptr);
  // Releasing is not another invalidation: only b's own fill and flush.
  EXPECT_EQ(t.ops().size(), 2u);
  // The next allocation creates (fills and flushes) a pack again.
  t.ops().clear();
  auto c = t.Alloc(100);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->pack(), 0);
  EXPECT_EQ(t.ops(), (std::vector<Op>{Fill(kPacksBase, kPackSize, TextOrigin::kNewPack),
                                      Flush(kPacksBase, kPackSize, TextOrigin::kNewPack)}));
  accounting = t.pack().Accounting();
  EXPECT_EQ(accounting.packs_created, 2u);
  EXPECT_EQ(accounting.packs, 1);
}

TEST(harness_pack, HolesAreReusedFirstFit) {
  PackTest t;
  // Chunks: A 0, B 1..3, C 4, D 5..6 (an image of 64k - 24 bytes takes k chunks).
  auto a = t.AllocFinalized(40);
  auto b = t.AllocFinalized(3 * 64 - 24);
  auto c = t.AllocFinalized(40);
  auto d = t.AllocFinalized(2 * 64 - 24);
  ASSERT_EQ(b->first_chunk(), 1u);
  ASSERT_EQ(c->first_chunk(), 4u);
  ASSERT_EQ(d->first_chunk(), 5u);
  t.pack().Free(std::move(b));
  auto e = t.AllocFinalized(2 * 64 - 24);  // the first hole that fits: B's
  EXPECT_EQ(e->first_chunk(), 1u);
  auto f = t.AllocFinalized(2 * 64 - 24);  // 1 chunk left there: too small
  EXPECT_EQ(f->first_chunk(), 7u);
  auto g = t.AllocFinalized(40);  // B's last chunk
  EXPECT_EQ(g->first_chunk(), 3u);
  t.pack().Free(std::move(a));
  t.pack().Free(std::move(e));
  auto h = t.AllocFinalized(3 * 64 - 24);  // chunks 0..2 are free again
  EXPECT_EQ(h->first_chunk(), 0u);
  // A run across a 64-chunk bitmap word: fill up to chunk 60, leave 60..69 free.
  auto filler = t.AllocFinalized((60 - 9) * 64 - 24);  // chunks 9..59
  ASSERT_EQ(filler->first_chunk(), 9u);
  auto i = t.AllocFinalized(64 * 10 - 24);
  EXPECT_EQ(i->first_chunk(), 60u);
}

TEST(harness_pack, BitmapAndAccountingFollowLiveAllocations) {
  PackTest t(3, 42);
  std::mt19937_64 random(1234);
  std::vector<std::unique_ptr<PackAllocation>> live;
  int rw_buffers = 0;
  int most_packs = 0;
  for (int step = 0; step < 400; ++step) {
    const bool alloc = live.empty() || random() % 100 < 55;
    if (alloc) {
      const uint64_t sizes[] = {4, 40, 100, 1000, 5000, 40'000, 200'000};
      const uint64_t bytes = sizes[random() % std::size(sizes)] + 4 * (random() % 16);
      auto a = random() % 4 == 0 ? t.Alloc(bytes) : t.AllocFinalized(bytes);
      ASSERT_NE(a, nullptr);
      if (!a->finalized()) ++rw_buffers;
      live.push_back(std::move(a));
    } else {
      const size_t index = random() % live.size();
      if (!live[index]->finalized()) --rw_buffers;
      t.pack().Free(std::move(live[index]));
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(index));
    }
    // What the bitmaps must say.
    std::map<int, std::vector<bool>> used;
    uint64_t chunks = 0;
    for (const auto& a : live) {
      auto& bits = used[a->pack()];
      bits.resize(kChunksPerPack);
      for (uint64_t c = a->first_chunk(); c < a->first_chunk() + a->slot_bytes() / kChunkSize; ++c) {
        ASSERT_FALSE(bits[c]) << "two live allocations share chunk " << c << " of pack " << a->pack();
        bits[c] = true;
      }
      chunks += a->slot_bytes() / kChunkSize;
    }
    uint64_t largest = 0;
    for (int p = 0; p < 3; ++p) {
      const std::vector<uint64_t>* bitmap = t.pack().Bitmap(p);
      if (!used.contains(p)) {
        ASSERT_EQ(bitmap, nullptr) << "pack " << p << " holds nothing but was not released (step " << step << ")";
        continue;
      }
      ASSERT_NE(bitmap, nullptr);
      std::vector<uint64_t> expected(kChunksPerPack / 64, 0);
      for (uint64_t c = 0; c < kChunksPerPack; ++c) expected[c / 64] |= uint64_t{used[p][c]} << (c % 64);
      for (size_t w = 0; w < expected.size(); ++w) {
        ASSERT_EQ((*bitmap)[w], expected[w]) << fmt::format("pack {}, chunks {}..{}, step {}", p, 64 * w, 64 * w + 63, step);
      }
      largest = std::max(largest, LargestRun(used[p]));
    }
    const jit::PackAccounting accounting = t.pack().Accounting();
    ASSERT_EQ(accounting.packs, static_cast<int>(used.size()));
    ASSERT_EQ(accounting.chunks_used, chunks);
    ASSERT_EQ(accounting.chunks_free, used.size() * kChunksPerPack - chunks);
    ASSERT_EQ(accounting.largest_free_run, largest);
    ASSERT_EQ(accounting.live_rw_buffers, rw_buffers);
    most_packs = std::max(most_packs, accounting.packs);
  }
  // The sequence exercised more than one pack, and releasing packs.
  EXPECT_GE(most_packs, 2);
  EXPECT_GE(t.pack().Accounting().packs_released, 1u);
}

TEST(harness_pack, RequestsLargerThanAPackGoToTheOversizeRegion) {
  PackTest t;
  // Exactly a pack: a slot of 2 MiB, the whole of a (new) pack.
  auto whole = t.AllocFinalized(kPackSize - jit::kHeaderSize - 16);
  ASSERT_NE(whole, nullptr);
  EXPECT_FALSE(whole->oversize());
  EXPECT_EQ(whole->slot_bytes(), kPackSize);
  EXPECT_EQ(whole->first_chunk(), 0u);
  EXPECT_EQ(t.pack().Accounting().largest_free_run, 0u);
  // Four bytes more: its own allocation, 4 KiB granular, BRK-filled first.
  t.ops().clear();
  const uint64_t big = kPackSize - jit::kHeaderSize - 16 + 4;
  auto a = t.Alloc(big);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->oversize());
  EXPECT_EQ(a->pack(), -1);
  EXPECT_EQ(a->rx_slot(), kOversizeBase);
  EXPECT_EQ(a->slot_bytes(), RoundUp(SlotBytes(big), 4096));
  EXPECT_EQ(t.ops(), (std::vector<Op>{Fill(kOversizeBase, a->slot_bytes(), TextOrigin::kNewPack),
                                      Flush(kOversizeBase, a->slot_bytes(), TextOrigin::kNewPack)}));
  EXPECT_EQ(t.pack().Accounting().oversize_allocations, 1);
  EXPECT_EQ(t.pack().Accounting().packs, 1);  // no pack for it
  t.pack().Finalize(*a);
  auto b = t.AllocFinalized(3 << 20);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->rx_slot(), a->rx_slot() + a->slot_bytes());
  // Freed: invalidated like a pack slot; its room is reused first fit.
  const uint64_t a_slot = a->rx_slot(), a_bytes = a->slot_bytes();
  t.ops().clear();
  t.pack().Free(std::move(a));
  EXPECT_EQ(t.ops(), (std::vector<Op>{Fill(a_slot, a_bytes, TextOrigin::kFree), Flush(a_slot, a_bytes, TextOrigin::kFree)}));
  EXPECT_EQ(t.pack().Accounting().oversize_allocations, 1);
  auto c = t.AllocFinalized(kPackSize + 4);  // fits where a was
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->rx_slot(), kOversizeBase);
  // The region is 8 MiB: 2.1 + 3 MiB used, 2.9 MiB left in one piece.
  EXPECT_FALSE(t.pack().Alloc(3 << 20).ok());
  auto d = t.AllocFinalized(2'500'000);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->rx_slot(), b->rx_slot() + b->slot_bytes());
  EXPECT_EQ(t.pack().Accounting().live_rw_buffers, 0);
  EXPECT_EQ(t.pack().Accounting().oversize_allocations, 3);
}

TEST(harness_pack, AllPacksFullIsAnError) {
  PackTest t(2);
  auto a = t.AllocFinalized(kPackSize - jit::kHeaderSize - 16);
  auto b = t.AllocFinalized(kPackSize - jit::kHeaderSize - 16);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->pack(), 1);
  auto c = t.pack().Alloc(4);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.message().find("full"), std::string::npos) << c.message();
  EXPECT_EQ(t.pack().Accounting().live_rw_buffers, 0);
  t.pack().Free(std::move(a));
  auto d = t.AllocFinalized(4);  // room again in the first pack slot
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->pack(), 0);
}

TEST(harness_pack, AccountingCountsChunksRunsAndRwBuffers) {
  PackTest t;
  jit::PackAccounting accounting = t.pack().Accounting();
  EXPECT_EQ(accounting.packs, 0);
  EXPECT_EQ(accounting.chunks_used + accounting.chunks_free + accounting.largest_free_run, 0u);
  auto a = t.Alloc(40);            // chunk 0
  auto b = t.Alloc(10 * 64 - 24);  // chunks 1..10
  auto c = t.Alloc(40);            // chunk 11
  accounting = t.pack().Accounting();
  EXPECT_EQ(accounting.packs, 1);
  EXPECT_EQ(accounting.chunks_used, 12u);
  EXPECT_EQ(accounting.chunks_free, kChunksPerPack - 12);
  EXPECT_EQ(accounting.largest_free_run, kChunksPerPack - 12);
  EXPECT_EQ(accounting.live_rw_buffers, 3);
  t.pack().Finalize(*a);
  t.pack().Finalize(*c);
  EXPECT_EQ(t.pack().Accounting().live_rw_buffers, 1);
  t.pack().Free(std::move(b));  // never finalized: its RW buffer goes too
  accounting = t.pack().Accounting();
  EXPECT_EQ(accounting.live_rw_buffers, 0);
  EXPECT_EQ(accounting.chunks_used, 2u);
  EXPECT_EQ(accounting.largest_free_run, kChunksPerPack - 12);
  t.pack().Free(std::move(c));
  EXPECT_EQ(t.pack().Accounting().largest_free_run, kChunksPerPack - 1);
  EXPECT_EQ(t.pack().Accounting().packs_created, 1u);
}

// Each planted bug changes the operation sequence as documented.
TEST(harness_pack, PlantedBugFlushBeforeCopy) {
  jit::PackBugs bugs;
  bugs.flush_before_copy = true;
  PackTest t(1, 1, bugs);
  auto a = t.Alloc(100);
  t.ops().clear();
  t.pack().Finalize(*a);
  EXPECT_EQ(t.ops(), (std::vector<Op>{Flush(a->rx_slot(), a->slot_bytes(), TextOrigin::kFinalize),
                                      Copy(a->rx_slot(), a->slot_bytes(), TextOrigin::kFinalize)}));
}

TEST(harness_pack, PlantedBugSkipInvalidateOnFree) {
  jit::PackBugs bugs;
  bugs.skip_invalidate_on_free = true;
  PackTest t(1, 1, bugs);
  auto keep = t.AllocFinalized(4);
  auto a = t.Alloc(100);
  const auto nop = static_cast<uint32_t>(0xd503201f);
  std::memcpy(a->rw_image(), &nop, 4);
  t.pack().Finalize(*a);
  const uint64_t image = a->rx_image();
  t.ops().clear();
  t.pack().Free(std::move(a));
  EXPECT_TRUE(t.ops().empty()) << t.ops().size() << " operations, the first " << t.ops().front();
  EXPECT_EQ(t.RxWord(image), nop);  // the old code is still there
}

TEST(harness_pack, PlantedBugPerWordInvalidate) {
  jit::PackBugs bugs;
  bugs.per_word_invalidate = true;
  PackTest t(1, 1, bugs);
  auto keep = t.AllocFinalized(4);
  auto a = t.AllocFinalized(100);
  const uint64_t slot = a->rx_slot(), bytes = a->slot_bytes();
  t.ops().clear();
  t.pack().Free(std::move(a));
  std::vector<Op> expected;
  for (uint64_t at = slot; at < slot + bytes; at += 4) {
    expected.push_back(Fill(at, 4, TextOrigin::kFree));
    expected.push_back(Flush(at, 4, TextOrigin::kFree));
  }
  EXPECT_EQ(t.ops(), expected);
  EXPECT_TRUE(t.AllBrk(slot, bytes));
}

// One-chunk slots A B C D, A and C freed: a three-chunk request must go
// past D (to chunk 4), not over B, which is live between the two holes.
// The planted bug sees free chunks at both ends of 0..2 and takes them.
uint64_t ThreeChunksPastALiveOne(jit::PackBugs bugs) {
  PackTest t(1, 1, bugs);
  std::vector<std::unique_ptr<PackAllocation>> live;
  for (int i = 0; i < 4; ++i) live.push_back(t.AllocFinalized(40));
  t.pack().Free(std::move(live[0]));
  t.pack().Free(std::move(live[2]));
  auto three = t.AllocFinalized(3 * 64 - 24);
  return three == nullptr ? ~uint64_t{0} : three->first_chunk();
}

TEST(harness_pack, FirstFitLooksAtEveryChunkOfARun) { EXPECT_EQ(ThreeChunksPastALiveOne({}), 4u); }

TEST(harness_pack, PlantedBugFirstFitChecksEnds) {
  jit::PackBugs bugs;
  bugs.first_fit_checks_ends = true;
  EXPECT_EQ(ThreeChunksPastALiveOne(bugs), 0u);
}

// A slot that crosses a 4 KiB page: finalize copies all of it, or (the
// planted bug) only up to the end of its first page.
TEST(harness_pack, FinalizeCopiesASlotAcrossAPage) {
  for (const bool planted : {false, true}) {
    SCOPED_TRACE(planted ? "copy-stops-at-page-end" : "no bug");
    jit::PackBugs bugs;
    bugs.copy_stops_at_page_end = planted;
    PackTest t(1, 1, bugs);
    auto filler = t.AllocFinalized(60 * 64 - 24);  // chunks 0..59: the next slot crosses 4096
    auto a = t.Alloc(1000);
    ASSERT_NE(a, nullptr);
    ASSERT_EQ(a->rx_slot(), kPacksBase + 60 * 64);
    const auto nop = static_cast<uint32_t>(0xd503201f);
    for (uint64_t i = 0; i < 1000; i += 4) std::memcpy(a->rw_image() + i, &nop, 4);
    const uint64_t last_word = a->rx_image() + 1000 - 4;
    ASSERT_GE(last_word, kPacksBase + 4096);
    t.ops().clear();
    t.pack().Finalize(*a);
    const uint64_t copied = planted ? 4096 - 60 * 64 : a->slot_bytes();
    EXPECT_EQ(t.ops(), (std::vector<Op>{Copy(a->rx_slot(), copied, TextOrigin::kFinalize),
                                        Flush(a->rx_slot(), a->slot_bytes(), TextOrigin::kFinalize)}));
    EXPECT_EQ(t.RxWord(last_word), planted ? kBreakFault : nop);
  }
}

}  // namespace
}  // namespace bpfdiff
