#pragma once
/* The BPF memory allocator: kernel/bpf/core.c only defines the global one
 * and sets it up at boot (bpf_global_ma_init, an initcall bpfdiff never
 * runs). */
struct bpf_mem_cache;
struct bpf_mem_caches;
struct bpf_mem_alloc {
	struct bpf_mem_caches *caches;
	struct bpf_mem_cache *cache;
	void *objcg;
	bool percpu;
};
int bpf_mem_alloc_init(struct bpf_mem_alloc *ma, int size, bool percpu);
