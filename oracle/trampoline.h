// What a BPF trampoline does around a traced BPF program: the fentry, fexit
// and fmod_ret programs attached to it, in the order and with the context
// that kernel/bpf/trampoline.c and arm64's arch_prepare_bpf_trampoline()
// give them. The oracle for trampolines the kernel's own arch code builds
// (kernelsrc/, harness/trampoline/): it runs every program through the
// interpreter and composes their results.
//
//   for each fentry program:           run it (ctx = the arguments)
//   if fmod_ret programs or fexit:     the original is called by the trampoline:
//     retval = 0
//     for each fmod_ret program:       retval = its r0; non-zero: skip the original
//     if none said so:                 retval = the traced program's r0
//     for each fexit program:          run it (ctx = the arguments, then retval)
//     the caller gets retval
//   else:                              the traced program runs as if called
//                                      directly; the caller gets its r0
//
// A struct_ops trampoline (bpf_struct_ops_prepare_trampoline) is called
// by the kernel through a function pointer, not from a traced program's
// entry: one fentry program, the struct_ops program, runs with the
// arguments as its context, and the caller gets its r0
// (BPF_TRAMP_F_RET_FENTRY_RET). Its enter never misses (6.12's
// bpf_prog_check_recur() is false for struct_ops).
//
// An extension program (freplace, BPF_TRAMP_REPLACE) takes no trampoline:
// the traced program's entry jumps to it (BPF_MOD_JUMP), and it runs in
// the traced program's place, with its arguments, from its caller's SP.
//
// Each attached program runs between its enter and exit call
// (__bpf_prog_enter*, __bpf_prog_exit*). An enter that answers 0 (a
// recursion miss) skips the program; its exit still runs. The guest's
// stubs (harness/trampoline/stubs.h) log each call in the per-CPU area
// (guest::kTrampLogOffset): an enter logs the link's cookie, an exit its
// complement, __bpf_tramp_enter/exit the two marks below.
//
// Context: the program sees a pointer to the saved argument registers, u64
// each; the retval slot follows them (fexit, fmod_ret), the argument count
// is at ctx - 8 and, with the traced function's address asked for
// (bpf_get_func_ip), that address at ctx - 16. Where that frame lies on the
// stack is arm64's (prepare_trampoline's comment); it is the one address a
// program could leak, so the oracle puts it where the kernel does.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "oracle/environment.h"
#include "oracle/load.h"
#include "oracle/outcome.h"

namespace bpfdiff::trampoline {

// BPF_TRAMP_F_* (include/linux/bpf.h).
inline constexpr uint32_t kRestoreRegs = 1u << 0;
inline constexpr uint32_t kCallOrig = 1u << 1;
inline constexpr uint32_t kSkipFrame = 1u << 2;
inline constexpr uint32_t kIpArg = 1u << 3;
inline constexpr uint32_t kRetFentryRet = 1u << 4;
inline constexpr uint32_t kIndirect = 1u << 8;

// The most argument registers arm64's trampoline saves (x0..x7).
inline constexpr uint8_t kMaxArgs = 8;

// Logged by the guest's __bpf_tramp_enter and __bpf_tramp_exit.
inline constexpr uint64_t kImageEnterMark = 0x7472'616d'7065'6e01;
inline constexpr uint64_t kImageExitMark = 0x7472'616d'7065'7802;

// What the guest's stubs leave in a register they clobber: x0..x17, as
// AAPCS64 lets any callee, except x7 (BPF r0 in the kernel's JIT, which a
// program may read before it writes it) and their return value. A
// trampoline that keeps a value in such a register across a call loses it.
constexpr uint64_t StubClobber(int reg) { return 0xba00'0000ull + (static_cast<uint64_t>(reg) << 16); }
constexpr bool StubClobbers(int reg) { return reg >= 0 && reg <= 17 && reg != 7; }

struct Link {
  size_t program = 0;  // its index in the case
  uint64_t cookie = 0;
  bool runs = true;    // false: its enter reports a recursion miss
};

struct Attachment {
  size_t traced = 0;  // the traced program, by index in the case
  std::vector<Link> fentry, fexit, fmod_ret;
  uint8_t nr_args = 1;  // 1..kMaxArgs arguments (btf_func_model.nr_args)
  // Bit i: argument i is a struct of 9 to 16 bytes passed by value, in two
  // registers (BTF_FMODEL_STRUCT_ARG); the others are u64, one register
  // each. More than kMaxArgs registers in all, and arm64's trampoline is
  // refused (-ENOTSUPP).
  uint8_t struct_args = 0;
  bool ip_arg = false;  // BPF_TRAMP_F_IP_ARG (an attached program calls bpf_get_func_ip)
  // A struct_ops trampoline: fentry holds the one struct_ops program, and
  // the call goes to the trampoline itself; `traced` is not called.
  bool struct_ops = false;
  // An extension program that replaces the traced one (freplace); no
  // fentry, fexit or fmod_ret program then.
  std::optional<size_t> freplace;
};

// A case: the programs, how they are attached, and the call.
struct TrampolineCase {
  CaseSource source;  // the traced program and every attached one
  Attachment attachment;
  std::array<uint64_t, 5> args{};  // x0..x4 of the call
  // Attach a first trampoline of the same links, then move the entry to
  // the case's with one poke (modify_fentry), and free the first.
  bool replace = false;
  // Where the trampoline (or the extension program) lies: more than 128 MiB
  // from the traced program, beyond a `bl`, so that the kernel attaches it
  // through the traced image's PLT. `first_far` for the first trampoline
  // of a replace. Where code lies changes no outcome.
  bool far = false;
  bool first_far = false;
  // Before the trampoline is built, a build of it whose fail_call-th
  // failable service call fails (kernelsrc::TrampolineRequest): refused,
  // with nothing left behind. 0: none.
  uint32_t fail_call = 0;
};

// The flags bpf_trampoline_update() builds the trampoline with.
uint32_t Flags(const Attachment& attachment);

// The argument registers the traced function takes (btf_func_model_nregs):
// one per argument, two per struct argument.
uint32_t ArgumentRegisters(const Attachment& attachment);

// arm64's trampoline frame (prepare_trampoline), offsets from the SP the
// attached programs are called with, which is the traced program's entry
// SP (the caller's, for struct_ops) less pushed_bytes less stack_size.
struct Frame {
  uint32_t pushed_bytes = 32;  // two frame records; one for struct_ops (no parent frame)
  uint32_t run_ctx_off = 0;
  uint32_t ip_off = 0;
  uint32_t nregs_off = 0;
  uint32_t args_off = 0;
  uint32_t retval_off = 0;
  uint32_t stack_size = 0;
};
Frame FrameOf(const Attachment& attachment);

// Where the traced program's entry is (for ctx - 16) and how the run goes.
struct RunSpec {
  int cpu = 0;
  uint64_t traced_entry = 0;    // guest address
  std::array<uint64_t, 5> args{};  // x0..x4 at the call; x5..x7 are 0
  uint64_t budget = 1'000'000;  // per program
  // r10 of each program's frames: the kernel JIT's prologues
  // (StackGeometry::functions); entry_below_top is set per call here.
  StackGeometry geometry;
};

struct AttachedRun {
  Outcome outcome;  // memory: input memory and map values only
  std::vector<uint64_t> log;  // the stubs' events, in order
};

// Runs the traced program of `loaded` through the trampoline `attachment`
// describes, on the environment as it is (the caller resets it first).
AttachedRun RunAttached(GuestEnvironment& env, const LoadedCase& loaded, const Attachment& attachment, const RunSpec& spec);

// The stubs' log in `cpu`'s per-CPU area, and its reset (count 0).
std::vector<uint64_t> ReadLog(const GuestMemory& memory, int cpu);
void ResetLog(GuestMemory& memory, int cpu);

}  // namespace bpfdiff::trampoline
