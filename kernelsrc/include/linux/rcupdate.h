#pragma once
/* RCU in kernel/bpf/core.c: one thread runs the kernel's code in bpfdiff,
 * so a grace period has nothing to wait for. call_rcu_tasks_trace() and
 * the other deferrals run their callback at once (SHIMS.md, "core.c"). */
#include <linux/list.h>
#include <linux/bpf.h>
#define INIT_LIST_HEAD_RCU(list) INIT_LIST_HEAD(list)
#define rcu_dereference_protected(p, c) (p)
#define rcu_dereference_check(p, c) (p)
#define rcu_dereference(p) (p)
#define rcu_access_pointer(p) (p)
#define RCU_INIT_POINTER(p, v) ((p) = (v))
#define rcu_read_lock() ((void)0)
#define rcu_read_unlock() ((void)0)
static inline void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head)) { func(head); }
static inline void call_rcu_tasks_trace(struct rcu_head *head, void (*func)(struct rcu_head *head)) { func(head); }
static inline bool rcu_trace_implies_rcu_gp(void) { return true; }
static inline int rcu_read_lock_held(void) { return 1; }
#define list_add_tail_rcu(new_entry, head) list_add_tail(new_entry, head)
#define list_del_rcu(entry) list_del(entry)
#define list_for_each_entry_rcu(pos, head, member) list_for_each_entry(pos, head, member)
