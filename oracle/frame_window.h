// Which stack bytes of one run both engines hold alike, when a JIT's
// frames differ from function to function (StackGeometry::per_function).
//
// With bpfdiff's model every call depth has its frame at a fixed place, and
// the registers the JIT saves lie between frames, never in one. The
// kernel's JIT pushes only the registers each function uses, so the frames
// of two calls at one depth can be at different places: the registers one
// call saved can lie in the frame of the next, and the interpreter, which
// saves nothing in guest memory, holds other bytes there. This records, on
// the interpreter's path, the frames the run entered and the bytes a
// prologue saved registers in, so that a run is compared only where the
// engines agree by design, and a read of the others is known for what it is.
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/outcome.h"

namespace bpfdiff {

class FrameWindow {
 public:
  // Tracks the `bytes` below `entry_sp`, the SP the program is entered with.
  FrameWindow(uint64_t entry_sp, uint64_t bytes);

  // A function entered with r10 = `fp`: its BPF frame is the `frame_bytes`
  // below fp, and its prologue saved registers in the `prologue_bytes` above.
  void Enter(uint64_t fp, uint64_t frame_bytes, uint64_t prologue_bytes);
  // The innermost function returned, or left by a tail call: its saved
  // registers are restored, though the bytes still hold them.
  void Leave();

  // Whether reading [address, address + size) may see bytes the engines
  // hold differently: outside every frame the run entered, or a register a
  // prologue saved that the program has not written over since.
  bool ReadIsPrivate(uint64_t address, uint64_t size) const;
  // Whether writing there makes the engines differ: outside every frame
  // entered, or over a register that a function still running saved.
  bool WriteIsPrivate(uint64_t address, uint64_t size) const;
  // The program wrote [address, address + size): both engines now hold
  // what it wrote there.
  void Written(uint64_t address, uint64_t size);

  // The frames entered so far, without the bytes that hold a saved
  // register now (keep) or ever did (stable).
  StackWindow Window() const;

 private:
  enum : uint8_t { kInFrame = 1, kPrivate = 2, kEverPrivate = 4 };
  // [address, address + size) within the window, or false.
  bool Clip(uint64_t address, uint64_t size, size_t& first, size_t& end) const;

  uint64_t low_;
  uint64_t lowest_frame_;
  std::vector<uint8_t> state_;  // per byte from low_
  struct Saved {
    uint64_t low, high;
  };
  std::vector<Saved> live_;  // the saved registers of the functions still running, outermost first
};

}  // namespace bpfdiff
