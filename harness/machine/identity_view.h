// Guest memory at its own addresses in this process.
//
// What runs guest memory as host memory needs it there: VIXL's simulator,
// whose loads and stores are host accesses at the guest's addresses, and
// the kernel's interpreter (harness/diff/kernel_interp_engine.h), which
// dereferences the guest's pointers. Each region's pages are mapped a
// second time at the region's base, so that both views share the bytes;
// the view is the process's, shared by every user.
#pragma once

#include "oracle/guest_memory.h"
#include "support/result.h"

namespace bpfdiff {

// Shows every region of `memory` at its guest address, once per memory
// and region list (the last memory shown is the one at those addresses).
// Fails, naming the region, when something else of this process is
// already there.
Status ShowAtGuestAddresses(GuestMemory& memory);

}  // namespace bpfdiff
