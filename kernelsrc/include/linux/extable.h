#pragma once
/* The kernel's sorted exception-table search (lib/extable.c), which
 * core.c's search_bpf_extables() calls; bpfdiff's machine finds a faulting
 * load's entry itself (SHIMS.md), so this one is core_services.c's. */
#include <linux/types.h>
struct exception_table_entry;
const struct exception_table_entry *search_extable(const struct exception_table_entry *base, const size_t num,
						   unsigned long value);
