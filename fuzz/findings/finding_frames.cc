#include "fuzz/findings/finding_frames.h"

#include <array>
#include <cstddef>

namespace bpfdiff::fuzz {
namespace {

// No allocation on the way to an abort: a few names, in static storage
// (each frame's __func__).
constexpr size_t kMaxFrames = 8;
std::array<std::string_view, kMaxFrames> trail;
size_t trail_size = 0;

}  // namespace

std::vector<std::string_view> FindingFrameTrail() {
  return {trail.begin(), trail.begin() + static_cast<std::ptrdiff_t>(trail_size)};
}

void StartFindingFrameTrail() { trail_size = 0; }

void NoteFindingFrame(std::string_view name) {
  if (trail_size < kMaxFrames) trail[trail_size++] = name;
}

}  // namespace bpfdiff::fuzz
