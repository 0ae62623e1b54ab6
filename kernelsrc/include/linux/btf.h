#pragma once
/* BTF, as kernel/bpf/core.c reads it: the name of a program's function for
 * its kallsyms entry, and the release of the BTF objects a program holds.
 * bpfdiff's programs carry no BTF (aux->btf is NULL), so these trap if
 * reached (kernelsrc/core_services.c). */
#include <linux/types.h>
#include <uapi/linux/btf.h>
struct btf;
const struct btf_type *btf_type_by_id(const struct btf *btf, u32 type_id);
const char *btf_name_by_offset(const struct btf *btf, u32 offset);
void btf_put(struct btf *btf);
