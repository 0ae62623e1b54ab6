#pragma once
/* lib/test_bpf.c includes it for the VLAN fields of its socket buffers,
 * which linux/skbuff.h declares. */
#include <linux/skbuff.h>
