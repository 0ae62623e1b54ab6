// The innermost frames of a finding whose culprit instruction is known
// (see finding_frames.h): one frame per culprit form (culprit_form.h),
// named after it: CulpritIsJset32, CulpritIsLockFetchAdd32,
// CulpritIsProbeLdxs, CulpritIsPrologue. Each notes its name and calls the
// end. diff_fuzzer's divergences and jit_determinism_fuzzer's code and
// exception-table differences end in them, so that ClusterFuzz files one
// bug per culprit form, whatever program found it.
#pragma once

#include <string_view>

#include "fuzz/findings/finding_frames.h"

namespace bpfdiff::fuzz {

using CulpritFrame = void (*)(FindingEnd end);

// The frame of culprit form `form`; nullptr for a form with none
// (tests/fuzz/finding_frames_test.cc checks that every form of the opcode
// table has one). The caller calls it: a frame between would be one more
// in the crash state.
CulpritFrame CulpritFrameOf(std::string_view form);

}  // namespace bpfdiff::fuzz
