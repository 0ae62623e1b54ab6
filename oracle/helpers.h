// Helper functions: one deterministic implementation per helper id, shared by
// every engine. The interpreter calls them directly; the Unicorn machine traps
// calls to the helper entry points (guest_layout.h) into the same functions,
// so a helper can never be a source of divergence, only a witness of it.
//
// Helpers see guest memory only, like the programs: a map is the GuestMap
// object that lddw map_fd loads, and its values live in guest memory.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/guest_memory.h"
#include "oracle/outcome.h"

namespace bpfdiff {

// Kernel numbering where a kernel helper exists. Helper 5 follows the
// bpf_conformance convention ("unwind"), not the kernel's ktime_get_ns.
enum HelperId : int32_t {
  kHelperMapLookupElem = 1,
  kHelperMapUpdateElem = 2,
  kHelperMapDeleteElem = 3,
  kHelperProbeRead = 4,
  kHelperUnwind = 5,
  kHelperGetPrandomU32 = 7,
  kHelperGetSmpProcessorId = 8,
  kHelperTailCall = 12,  // rewritten to the tail_call instruction at load
  kHelperGetCurrentPidTgid = 14,
  kHelperGetCurrentTask = 35,
  kHelperGetCurrentTaskBtf = 158,
  kHelperLoop = 181,  // the engines run it: it calls BPF code (guest_layout.h, kLoopHelperAddress)
  kHelperKptrXchg = 194,
};

// The kernel functions a program may call (`call kfunc`, BPF_PSEUDO_KFUNC_CALL):
// bpfdiff's own numbering, where the kernel's is a BTF id of its build.
enum KfuncId : int32_t {
  // bpf_throw(u64 cookie) (kernel/bpf/helpers.c): unwinds every BPF frame
  // to the program's and runs its exception callback with the cookie, whose
  // result the program returns. The engines run it as guest code
  // (guest_layout.h, kThrowKfuncAddress).
  kKfuncThrow = 1,
};

// Per-run state a helper may read or change. Reset before every run so that
// both engines start from the same state.
struct HelperState {
  uint64_t prandom = 0x2545f4914f6cdd1dULL;
  int cpu = 0;
};

class FrameWindow;

struct HelperContext {
  HelperContext(GuestMemory& memory_in, HelperState& state_in) : memory(memory_in), state(state_in) {}

  GuestMemory& memory;
  HelperState& state;
  // The interpreter's run with per-function frames (oracle/frame_window.h):
  // a helper's reads and writes of the stack are noted there as the
  // program's own are, and `touched_private` says one read or wrote bytes
  // the engines hold differently by design.
  FrameWindow* frames = nullptr;
  bool touched_private = false;
};

struct HelperResult {
  enum class Kind : uint8_t { kReturn, kUnwind, kError } kind = Kind::kReturn;
  uint64_t value = 0;
  std::string error;  // for kError
};

using HelperArgs = std::array<uint64_t, 5>;
using HelperFn = HelperResult (*)(HelperContext&, const HelperArgs&);

struct HelperInfo {
  int32_t id;
  std::string_view name;
  int num_args;
  HelperFn fn;
};

// nullptr when no helper has this id.
const HelperInfo* FindHelper(int64_t id);

// Calls helper `id`; an unknown id is a kError result.
HelperResult CallHelper(int64_t id, HelperContext& context, const HelperArgs& args);

// Calls helper `id` as every engine must: the call is appended to `trace`
// with the arguments the helper takes (the rest 0: those registers hold
// whatever the caller left, which is undefined) and the value it returned
// (0 when it stopped or failed).
HelperResult InvokeHelper(int64_t id, HelperContext& context, const HelperArgs& args,
                          std::vector<HelperCall>& trace);

// The error of a callx whose register names no helper id at all.
std::string BadCallxMessage();

// errno values helpers return (negated), as the kernel's.
inline constexpr int64_t kENOENT = 2;
inline constexpr int64_t kEFAULT = 14;
inline constexpr int64_t kEEXIST = 17;
inline constexpr int64_t kEINVAL = 22;
inline constexpr int64_t kE2BIG = 7;

}  // namespace bpfdiff
