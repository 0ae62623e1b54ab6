#pragma once
/* arm64 runs little-endian here, as the host: tools/include/linux/kernel.h
 * already makes cpu_to_le32 and le32_to_cpu the identity. */
#include <linux/kernel.h>
