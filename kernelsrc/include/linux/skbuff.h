/* The part of the kernel's include/linux/skbuff.h that kernel/bpf/core.c
 * uses: bpf_internal_load_pointer_neg_helper() reads a packet's headers.
 * bpfdiff's programs are eBPF with a flat context, so no socket buffer
 * reaches it (SHIMS.md, "core.c"). */
#pragma once
#include <linux/types.h>
#include <uapi/linux/filter.h> /* SKF_NET_OFF, SKF_LL_OFF */

struct sk_buff {
	unsigned char *head;
	unsigned char *data;
	unsigned int len;
	u16 mac_header;
	u16 network_header;
	unsigned int tail;
};
static inline unsigned char *skb_network_header(const struct sk_buff *skb) { return skb->head + skb->network_header; }
static inline bool skb_mac_header_was_set(const struct sk_buff *skb) { return skb->mac_header != (u16)~0U; }
static inline unsigned char *skb_mac_header(const struct sk_buff *skb) { return skb->head + skb->mac_header; }
static inline unsigned char *skb_tail_pointer(const struct sk_buff *skb) { return skb->head + skb->tail; }
