/* The services lib/test_bpf.c links against beyond the JIT's and core.c's:
 * socket buffers and pages for the data of its cases, the functions its
 * tail-call runner takes the addresses of, and the classic loader and
 * segmentation of net/, which bpfdiff does not compile. Memory is the
 * kernel session's (kernelsrc/services.c), freed with it. */
#include <linux/filter.h>
#include <linux/highmem.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include <string.h>

void bpfdiff_core_unmodelled(const char *what);

struct net init_net;

/* A page: PAGE_SIZE bytes of the host heap, its own address. */
struct page *alloc_page(int gfp)
{
	return kzalloc(PAGE_SIZE, gfp);
}
void __free_page(struct page *page) { kfree(page); }
void *page_address(const struct page *page) { return (void *)page; }
void *kmap(struct page *page) { return page_address(page); }
void kunmap(struct page *page) { (void)page; }

/* A socket buffer with `size` bytes of head room for data and its shared
 * info, as __alloc_skb() lays them out (data = head, nothing put yet). */
struct sk_buff *alloc_skb(unsigned int size, int gfp)
{
	struct sk_buff *skb = kzalloc(sizeof(*skb), gfp);

	if (!skb)
		return NULL;
	skb->head = kzalloc(size, gfp);
	skb->shinfo = kzalloc(sizeof(*skb->shinfo), gfp);
	if (!skb->head || !skb->shinfo) {
		kfree(skb->head);
		kfree(skb->shinfo);
		kfree(skb);
		return NULL;
	}
	skb->data = skb->head;
	skb->end = size;
	skb->truesize = size + sizeof(*skb);
	skb->mac_header = (u16)~0U;
	return skb;
}

struct sk_buff *dev_alloc_skb(unsigned int length)
{
	struct sk_buff *skb = alloc_skb(length + NET_SKB_PAD, GFP_KERNEL);

	if (skb) {
		skb_reserve(skb, NET_SKB_PAD);
		skb->head_frag = 1;
	}
	return skb;
}

void kfree_skb(struct sk_buff *skb)
{
	int i;

	if (!skb)
		return;
	for (i = 0; i < skb->shinfo->nr_frags; i++)
		__free_page(skb->shinfo->frags[i].page);
	kfree_skb_list(skb->shinfo->frag_list);
	kfree(skb->shinfo);
	kfree(skb->head);
	kfree(skb);
}

void kfree_skb_list(struct sk_buff *segs)
{
	/* A list through frag_list here (bpfdiff's buffers have no next). */
	kfree_skb(segs);
}

void *skb_put(struct sk_buff *skb, unsigned int len)
{
	void *tail = skb->head + skb->tail;

	if (skb->tail + len > skb->end)
		BUG();
	skb->tail += len;
	skb->len += len;
	return tail;
}

void *__skb_put_data(struct sk_buff *skb, const void *data, unsigned int len)
{
	void *tail = skb_put(skb, len);

	memcpy(tail, data, len);
	return tail;
}

void *__skb_pull(struct sk_buff *skb, unsigned int len)
{
	skb->len -= len;
	return skb->data += len;
}

void skb_add_rx_frag(struct sk_buff *skb, int i, struct page *page, int off, int size, unsigned int truesize)
{
	if (i >= MAX_SKB_FRAGS)
		BUG();
	skb->shinfo->frags[i] = (skb_frag_t){ page, (unsigned int)off, (unsigned int)size };
	skb->shinfo->nr_frags = i + 1;
	skb->len += size;
	skb->data_len += size;
	skb->truesize += truesize;
}

struct sk_buff *skb_segment(struct sk_buff *head_skb, u64 features)
{
	(void)head_skb, (void)features;
	bpfdiff_core_unmodelled("skb_segment");
	return NULL;
}

int bpf_prog_create(struct bpf_prog **pfp, struct sock_fprog_kern *fprog)
{
	(void)pfp, (void)fprog;
	bpfdiff_core_unmodelled("bpf_prog_create");
	return -EINVAL;
}

void bpf_prog_destroy(struct bpf_prog *fp)
{
	(void)fp;
	bpfdiff_core_unmodelled("bpf_prog_destroy");
}

/* lib/random32.c's seeding (prandom_seed_state() and its __seed()). */
static u32 seed_word(u32 x, u32 m) { return x < m ? x + m : x; }
void prandom_seed_state(struct rnd_state *state, u64 seed)
{
	u32 i = ((seed >> 32) ^ (seed << 10) ^ seed) & 0xffffffffUL;

	state->s1 = seed_word(i, 2U);
	state->s2 = seed_word(i, 8U);
	state->s3 = seed_word(i, 16U);
	state->s4 = seed_word(i, 128U);
}

/* Taken by address only: bpfdiff's runner calls none of them. */
int numa_node_id(void) { return 0; }
u64 ktime_get_ns(void) { return 0; }
u64 ktime_get_boot_fast_ns(void) { return 0; }
u64 ktime_get_coarse_ns(void) { return 0; }
u64 get_jiffies_64(void) { return 0; }
