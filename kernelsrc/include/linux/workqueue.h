#pragma once
/* kernel/bpf/core.c defers the free of a program to a workqueue
 * (bpf_prog_free -> bpf_prog_free_deferred). bpfdiff has no workqueue:
 * schedule_work() runs the work at once (SHIMS.md, "core.c"). */
struct work_struct;
typedef void (*work_func_t)(struct work_struct *work);
struct work_struct { work_func_t func; };
#define INIT_WORK(w, f) ((w)->func = (f))
static inline bool schedule_work(struct work_struct *w) { w->func(w); return true; }
