#pragma once
/* The network device of lib/test_bpf.c's socket buffers (its ifindex and
 * type, which classic programs read), and the feature bits its
 * skb_segment() cases name. */
#include <linux/types.h>
struct net { int unused; };
extern struct net init_net;
struct net_device {
	int ifindex;
	unsigned short type;
	struct net *nd_net;
};
static inline void dev_net_set(struct net_device *dev, struct net *net) { dev->nd_net = net; }
typedef u64 netdev_features_t;
#define NETIF_F_SG (1ull << 0)
#define NETIF_F_IP_CSUM (1ull << 1)
#define NETIF_F_IPV6_CSUM (1ull << 2)
#define NETIF_F_FRAGLIST (1ull << 3)
#define NETIF_F_HW_VLAN_CTAG_TX (1ull << 4)
#define NETIF_F_HW_VLAN_STAG_TX (1ull << 5)
#define NETIF_F_GSO (1ull << 6)
#define NETIF_F_GSO_PARTIAL (1ull << 7)
#define NETIF_F_GRO (1ull << 8)
#define NETIF_F_RXCSUM (1ull << 9)
/* 6.1 (a netdev flag since 6.12) */
#define NETIF_F_LLTX (1ull << 10)
