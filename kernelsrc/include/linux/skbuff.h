/* The part of the kernel's include/linux/skbuff.h that kernel/bpf/core.c
 * and lib/test_bpf.c use. core.c's bpf_internal_load_pointer_neg_helper()
 * reads a packet's headers; bpfdiff's programs are eBPF with a flat
 * context, so no socket buffer reaches it (SHIMS.md, "core.c"). test_bpf
 * builds one for every case that takes data (populate_skb), with the
 * fields below; its eBPF cases get it as their context (SHIMS.md,
 * "test_bpf.c"). */
#pragma once
#include <linux/types.h>
#include <uapi/linux/filter.h> /* SKF_NET_OFF, SKF_LL_OFF */

struct net_device;
struct page;
struct sk_buff {
	unsigned char *head;
	unsigned char *data;
	unsigned int len;
	unsigned int data_len;
	u16 mac_header;
	u16 network_header;
	unsigned int tail;
	unsigned int end;
	unsigned int truesize;
	__be16 protocol;
	__be16 vlan_proto;
	u16 vlan_tci;
	u16 queue_mapping;
	u8 pkt_type;
	u8 head_frag;
#if BPFDIFF_TREE_SKB_VLAN_PRESENT
	u8 vlan_present; /* 6.1 (removed in 6.2) */
#endif
	u32 mark;
	u32 hash;
	struct net_device *dev;
	struct skb_shared_info *shinfo; /* the kernel's lies at head + end */
};
struct skb_shared_hwtstamps {
	u64 hwtstamp;
};
typedef struct {
	struct page *page;
	unsigned int offset, size;
} skb_frag_t;
#define MAX_SKB_FRAGS 17
struct skb_shared_info {
	u8 nr_frags;
	unsigned short gso_size;
	unsigned short gso_segs;
	unsigned int gso_type;
	struct sk_buff *frag_list;
	struct skb_shared_hwtstamps hwtstamps;
	skb_frag_t frags[MAX_SKB_FRAGS];
};
#define SKB_GSO_TCPV4 (1 << 0)
#define SKB_GSO_DODGY (1 << 1)
#define SKB_GSO_TCPV6 (1 << 4)
#define ETH_HLEN 14
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define NET_SKB_PAD 64
#define NET_IP_ALIGN 0
static inline struct skb_shared_info *skb_shinfo(const struct sk_buff *skb) { return skb->shinfo; }
static inline unsigned int skb_headlen(const struct sk_buff *skb) { return skb->len - skb->data_len; }
static inline void skb_reset_mac_header(struct sk_buff *skb) { skb->mac_header = skb->data - skb->head; }
static inline void skb_set_mac_header(struct sk_buff *skb, int offset)
{
	skb_reset_mac_header(skb);
	skb->mac_header += offset;
}
static inline void skb_reset_network_header(struct sk_buff *skb) { skb->network_header = skb->data - skb->head; }
static inline void skb_set_network_header(struct sk_buff *skb, int offset)
{
	skb_reset_network_header(skb);
	skb->network_header += offset;
}
static inline void skb_reserve(struct sk_buff *skb, int len)
{
	skb->data += len;
	skb->tail += len;
}
/* Allocations, the buffers' growth and their fragments (kernelsrc/test_bpf/services.c). */
struct sk_buff *alloc_skb(unsigned int size, int gfp);
struct sk_buff *dev_alloc_skb(unsigned int length);
void kfree_skb(struct sk_buff *skb);
void kfree_skb_list(struct sk_buff *segs);
void *skb_put(struct sk_buff *skb, unsigned int len);
void *__skb_put_data(struct sk_buff *skb, const void *data, unsigned int len);
void *__skb_pull(struct sk_buff *skb, unsigned int len);
void skb_add_rx_frag(struct sk_buff *skb, int i, struct page *page, int off, int size, unsigned int truesize);
/* net/core/skbuff.c's segmentation, which bpfdiff does not compile: its
 * caller (test_bpf's test_skb_segment, not a JIT test) is never run. */
struct sk_buff *skb_segment(struct sk_buff *head_skb, u64 features);
static inline unsigned char *skb_network_header(const struct sk_buff *skb) { return skb->head + skb->network_header; }
static inline bool skb_mac_header_was_set(const struct sk_buff *skb) { return skb->mac_header != (u16)~0U; }
static inline unsigned char *skb_mac_header(const struct sk_buff *skb) { return skb->head + skb->mac_header; }
static inline unsigned char *skb_tail_pointer(const struct sk_buff *skb) { return skb->head + skb->tail; }
