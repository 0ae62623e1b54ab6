#include "oracle/frame_window.h"

#include <algorithm>

namespace bpfdiff {

FrameWindow::FrameWindow(uint64_t entry_sp, uint64_t bytes)
    : low_(entry_sp - bytes), lowest_frame_(entry_sp), state_(bytes, 0) {}

bool FrameWindow::Clip(uint64_t address, uint64_t size, size_t& first, size_t& end) const {
  if (address < low_ || address + size > low_ + state_.size() || address + size < address) return false;
  first = address - low_;
  end = first + size;
  return true;
}

void FrameWindow::Enter(uint64_t fp, uint64_t frame_bytes, uint64_t prologue_bytes) {
  size_t first = 0, end = 0;
  if (Clip(fp - frame_bytes, frame_bytes, first, end)) {
    for (size_t i = first; i < end; ++i) state_[i] |= kInFrame;
  }
  if (Clip(fp, prologue_bytes, first, end)) {
    for (size_t i = first; i < end; ++i) state_[i] |= kPrivate | kEverPrivate;
  }
  lowest_frame_ = std::min(lowest_frame_, fp - frame_bytes);
  live_.push_back({fp, fp + prologue_bytes});
}

void FrameWindow::Leave() {
  if (!live_.empty()) live_.pop_back();
}

bool FrameWindow::ReadIsPrivate(uint64_t address, uint64_t size) const {
  size_t first = 0, end = 0;
  if (!Clip(address, size, first, end)) return true;
  for (size_t i = first; i < end; ++i) {
    if ((state_[i] & (kInFrame | kPrivate)) != kInFrame) return true;
  }
  return false;
}

bool FrameWindow::WriteIsPrivate(uint64_t address, uint64_t size) const {
  size_t first = 0, end = 0;
  if (!Clip(address, size, first, end)) return true;
  for (size_t i = first; i < end; ++i) {
    if (!(state_[i] & kInFrame)) return true;
  }
  return std::any_of(live_.begin(), live_.end(),
                     [&](const Saved& saved) { return address < saved.high && address + size > saved.low; });
}

void FrameWindow::Written(uint64_t address, uint64_t size) {
  size_t first = 0, end = 0;
  if (!Clip(address, size, first, end)) return;
  for (size_t i = first; i < end; ++i) state_[i] &= static_cast<uint8_t>(~kPrivate);
}

StackWindow FrameWindow::Window() const {
  StackWindow window;
  window.low = std::max(lowest_frame_, low_);
  const size_t first = window.low - low_;
  window.keep.resize(state_.size() - first);
  window.stable.resize(state_.size() - first);
  for (size_t i = first; i < state_.size(); ++i) {
    const uint8_t s = state_[i];
    window.keep[i - first] = (s & (kInFrame | kPrivate)) == kInFrame;
    window.stable[i - first] = (s & (kInFrame | kEverPrivate)) == kInFrame;
  }
  return window;
}

}  // namespace bpfdiff
