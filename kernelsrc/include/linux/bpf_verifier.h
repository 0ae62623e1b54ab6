#pragma once
/* kernel/bpf/core.c includes the kernel's linux/bpf_verifier.h, but nothing it
 * uses comes from there in this configuration (prelude.h): what it does
 * use is declared by the other shim headers. */
