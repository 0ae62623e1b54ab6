#pragma once
/* Pages, as lib/test_bpf.c uses them: a fragment's memory for its socket
 * buffers. One page is a host allocation of PAGE_SIZE bytes. */
#include <linux/types.h>
struct page;
struct page *alloc_page(int gfp);
void __free_page(struct page *page);
void *page_address(const struct page *page);
