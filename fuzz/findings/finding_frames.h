// The stack frames a fuzz target ends in when it has a finding.
//
// ClusterFuzz files one bug per crash state: the crash type (an abort under
// ASan is "Abrt") and the top three frames of the stack, leaving out libc,
// the sanitizers and libFuzzer, each name cut at its first '(' or '['. A
// target that aborted from one place for every finding would file all of
// them as one bug. So a target ends its process inside a few frames named
// after the finding's kind (divergence_frames.h, pack_frames.h,
// recursion_frames.h, determinism_frames.h): the innermost names what broke,
// the next ones where. tests/fuzz/crash_states.py computes the states
// from the real abort output and checks that kinds get states of their own.
//
// The frames are plain functions with plain names (no templates, whose
// arguments would be cut at a '(' or merged), never inlined, and never
// left by a tail call: fuzz/CMakeLists.txt compiles this room with
// -fno-optimize-sibling-calls, or a frame would jump to the next and vanish
// from the stack.
//
// This library never ends the process itself: the innermost frame calls
// `end`, which the target passes (std::abort, after printing its report).
// When `end` returns, as a test's does, every frame returns too.
#pragma once

#include <string_view>
#include <vector>

namespace bpfdiff::fuzz {

using FindingEnd = void (*)();

// The frames the last finding went through, outermost first, as each noted
// its own name on entry: what a test (or a debugger looking at a core) can
// read without a symbolizer.
std::vector<std::string_view> FindingFrameTrail();

// For the frames: starts a new trail, adds a frame to it.
void StartFindingFrameTrail();
void NoteFindingFrame(std::string_view name);

}  // namespace bpfdiff::fuzz
