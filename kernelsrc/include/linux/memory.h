#pragma once
/* text_mutex serialises text patching; bpfdiff runs one JIT at a time. */
#include <linux/mutex.h>
extern struct mutex text_mutex;
