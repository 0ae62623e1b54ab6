#pragma once
/* A copy to user space (bpf_prog_array_copy_to_user, which bpfdiff never
 * calls): there is no user space; it traps if reached (kernelsrc/
 * core_services.c). */
unsigned long copy_to_user(void *to, const void *from, unsigned long n);
