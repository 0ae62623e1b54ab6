#pragma once
/* Pages, as lib/test_bpf.c uses them: a fragment's memory for its socket
 * buffers. One page is a host allocation of PAGE_SIZE bytes. */
#include <linux/types.h>
struct page;
struct page *alloc_page(int gfp);
void __free_page(struct page *page);
void *page_address(const struct page *page);
/* 6.1's test_bpf.c maps the page to fill it: no high memory here. */
void *kmap(struct page *page);
void kunmap(struct page *page);
