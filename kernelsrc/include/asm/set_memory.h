#pragma once
int set_memory_ro(unsigned long addr, int numpages);
int set_memory_rw(unsigned long addr, int numpages);
int set_memory_rox(unsigned long addr, int numpages);
int set_memory_x(unsigned long addr, int numpages);
void set_vm_flush_reset_perms(void *addr);
