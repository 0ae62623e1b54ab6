#pragma once
/* kernel/bpf/core.c defines the BPF tracepoints' symbols last; bpfdiff
 * builds no tracepoints. */
#define EXPORT_TRACEPOINT_SYMBOL_GPL(name)
