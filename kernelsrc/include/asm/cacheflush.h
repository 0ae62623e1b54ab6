#pragma once
void flush_icache_range(unsigned long start, unsigned long end);
