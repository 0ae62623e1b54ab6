// Arm's VIXL AArch64 simulator as the second executor of a Machine
// (SteppedCpu): an interpreter of arm64, independent of Unicorn's QEMU
// front end, so that a verdict need not rest on one emulator alone.
//
// VIXL reads code and data through host pointers: the simulated address is
// the host address. So each guest region is mapped a second time in this
// process at its guest address (the guest layout is below 1 GiB, where a
// PIE process has nothing), sharing the pages of the region's host buffer
// (GuestMemory maps them shared): the interpreter, the JIT's writes and
// both executors see one memory. One guest memory holds that view at a
// time; a CPU of another memory takes it over when it next runs
// (SteppedCpu::Activate). A range of guest addresses that this process
// already uses for something else is an error, never overwritten. That
// view is the process's: one thread at a time runs VIXL machines.
// Unicorn's machines need no such view and may run anywhere.
//
// Kept out of bpfdiff_machine: a build may have no VIXL (the fuzz targets'
// static build, unless it is given VIXL's source: cmake/dependencies.cmake).
// The CLI, the tests and diff_fuzzer link it; they choose it with
// SandboxOptions::machine_factory.
#pragma once

#include <memory>

#include "harness/machine/machine.h"
#include "harness/machine/sandbox.h"
#include "oracle/guest_memory.h"
#include "support/result.h"

namespace bpfdiff {

// A VIXL CPU over `memory`, whose regions must all be mapped already.
Result<std::unique_ptr<SteppedCpu>> MakeVixlCpu(GuestMemory& memory);

// Machine::CreateStepped with a VIXL CPU: the factory a Sandbox takes.
Result<std::unique_ptr<Machine>> CreateVixlMachine(GuestMemory& memory, int cpu);

}  // namespace bpfdiff
