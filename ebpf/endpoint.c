// SPDX-License-Identifier: GPL-2.0 OR MIT
/* pfcswitch endpoint XDP program.
 *
 * Runs on a traffic endpoint's (host's) interface, loaded and attached by
 * daemon/src/host_port.rs. It hands the AF_XDP socket of the RX queue exactly the frames the
 * endpoint handles, untagged or behind one 802.1Q tag, and behind a CN-TAG (0x22E9, the
 * 802.1Qau flow id QCN data frames carry and CNMs carry back):
 *   - MAC control (0x8808: PAUSE/PFC, which the endpoint obeys),
 *   - CNM (0x22E7, 802.1Qau congestion notification),
 *   - minimal test frames (0x88B6, hosts/src/flow.rs),
 *   - the project's local experimental frames (0x88B5: FECN probes, wire/src/fecn.rs),
 *   - unfragmented IPv4 UDP to the traffic port (TRAFFIC_UDP_PORT, wire/src/traffic.rs), to
 *     RoCEv2's port 4791 (the endpoints' RoCEv2 framing, wire/src/roce/), or to INT's port
 *     4792 (either framing with in-band telemetry in front, wire/src/int.rs).
 * Everything else, malformed or truncated headers included, goes to the kernel stack
 * (XDP_PASS) so ARP, ping, neighbour discovery and iperf3 keep working on the interface. A
 * queue without a registered socket passes too (bpf_redirect_map's XDP_PASS fallback).
 *
 * Each frame handed over carries its arrival instant in front of it (struct
 * pfcs_endpoint_meta, bpf_xdp_adjust_meta): CLOCK_MONOTONIC when the interface received it,
 * as a NIC's receive timestamp would give it. The endpoint takes its RTT samples from it, so
 * they do not include the time the frame waited in the RX ring for the endpoint's thread to
 * wake (TIMELY and Swift measure with NIC timestamps for the same reason).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define ETH_P_8021Q_BE bpf_htons(0x8100)
#define ETH_P_IP_BE bpf_htons(0x0800)
#define ETH_P_MAC_CONTROL_BE bpf_htons(0x8808)
#define ETH_P_CNM_BE bpf_htons(0x22E7)
#define ETH_P_CN_TAG_BE bpf_htons(0x22E9)
#define ETH_P_MINIMAL_BE bpf_htons(0x88B6)
#define ETH_P_LOCAL_EXPERIMENTAL_BE bpf_htons(0x88B5)
#define TRAFFIC_UDP_PORT_BE bpf_htons(39000)
#define ROCEV2_UDP_PORT_BE bpf_htons(4791)
#define INT_UDP_PORT_BE bpf_htons(4792)
#define IP_MF_OFFSET_BE bpf_htons(0x3FFF) /* more-fragments flag and fragment offset */

/* RX queues with an XSKMAP slot (key = rx queue index); host_port.rs registers queue 0. */
#define PFCS_ENDPOINT_MAX_QUEUES 64

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, PFCS_ENDPOINT_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

/* In front of every frame redirected to the socket; daemon/src/host_port.rs mirrors it. */
struct pfcs_endpoint_meta {
	__u64 rx_ns;  /* bpf_ktime_get_ns() at arrival: CLOCK_MONOTONIC */
	__u32 pad;
	__u32 magic;  /* PFCS_ENDPOINT_META_MAGIC, just before the frame */
};
#define PFCS_ENDPOINT_META_MAGIC 0x50465354 /* "PFST" */

struct vlan_tag {
	__be16 tci;
	__be16 encapsulated_proto;
};

struct cn_tag {
	__be16 flow_id;
	__be16 encapsulated_proto;
};

/* Whether an IPv4 packet at l3 is a whole UDP datagram to the traffic, RoCEv2 or INT port. */
static __always_inline int is_traffic_udp(void *l3, void *data_end)
{
	struct iphdr *ip = l3;
	struct udphdr *udp;
	__u32 header_len;

	if ((void *)(ip + 1) > data_end)
		return 0;
	if (ip->version != 4 || ip->ihl < 5 || ip->protocol != IPPROTO_UDP)
		return 0;
	if (ip->frag_off & IP_MF_OFFSET_BE)
		return 0; /* fragments are the kernel's to reassemble */
	header_len = ip->ihl * 4;
	udp = l3 + header_len;
	if ((void *)(udp + 1) > data_end)
		return 0;
	return udp->dest == TRAFFIC_UDP_PORT_BE || udp->dest == ROCEV2_UDP_PORT_BE || udp->dest == INT_UDP_PORT_BE;
}

SEC("xdp")
int pfcswitch_endpoint(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__be16 proto;
	void *l3;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	proto = eth->h_proto;
	l3 = eth + 1;
	if (proto == ETH_P_8021Q_BE) {
		struct vlan_tag *tag = l3;

		if ((void *)(tag + 1) > data_end)
			return XDP_PASS;
		proto = tag->encapsulated_proto;
		l3 = tag + 1;
	}
	if (proto == ETH_P_CN_TAG_BE) {
		struct cn_tag *cn = l3;

		if ((void *)(cn + 1) > data_end)
			return XDP_PASS;
		proto = cn->encapsulated_proto;
		l3 = cn + 1;
	}
	if (proto != ETH_P_MAC_CONTROL_BE && proto != ETH_P_CNM_BE && proto != ETH_P_MINIMAL_BE &&
	    proto != ETH_P_LOCAL_EXPERIMENTAL_BE &&
	    !(proto == ETH_P_IP_BE && is_traffic_udp(l3, data_end)))
		return XDP_PASS;
	if (ctx->rx_queue_index >= PFCS_ENDPOINT_MAX_QUEUES)
		return XDP_PASS;
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct pfcs_endpoint_meta)) == 0) {
		struct pfcs_endpoint_meta *meta = (void *)(long)ctx->data_meta;

		if ((void *)(meta + 1) <= (void *)(long)ctx->data) {
			meta->rx_ns = bpf_ktime_get_ns();
			meta->pad = 0;
			meta->magic = PFCS_ENDPOINT_META_MAGIC;
		}
	}
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
