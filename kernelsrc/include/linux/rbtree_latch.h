#pragma once
/* The latched red-black tree of kernel/bpf/core.c's kallsyms. bpfdiff
 * answers address lookups itself (kernelsrc/services.c,
 * __bpf_address_lookup) and never calls bpf_prog_kallsyms_add(); core.c's
 * tree code is compiled, and these trap if it is ever reached. */
#include <linux/rbtree.h>
struct latch_tree_node { struct rb_node node[2]; };
struct latch_tree_root { int seq; struct rb_root tree[2]; };
struct latch_tree_ops {
	bool (*less)(struct latch_tree_node *a, struct latch_tree_node *b);
	int (*comp)(void *key, struct latch_tree_node *b);
};
void bpfdiff_core_unmodelled(const char *what);
static inline void latch_tree_insert(struct latch_tree_node *node, struct latch_tree_root *root,
				     const struct latch_tree_ops *ops)
{ (void)node, (void)root, (void)ops; bpfdiff_core_unmodelled("latch_tree_insert"); }
static inline void latch_tree_erase(struct latch_tree_node *node, struct latch_tree_root *root,
				    const struct latch_tree_ops *ops)
{ (void)node, (void)root, (void)ops; bpfdiff_core_unmodelled("latch_tree_erase"); }
static inline struct latch_tree_node *latch_tree_find(void *key, struct latch_tree_root *root,
						      const struct latch_tree_ops *ops)
{ (void)key, (void)root, (void)ops; bpfdiff_core_unmodelled("latch_tree_find"); return NULL; }
