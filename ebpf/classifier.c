// SPDX-License-Identifier: GPL-2.0 OR MIT
/* pfcswitch XDP classifier.
 *
 * Runs on every switch port. Finds the frame's priority (802.1Q PCP; for untagged frames
 * the port's default priority, or the DSCP map for IPv4/IPv6 when the port trusts DSCP),
 * flags MAC control and CNM frames, counts per priority, prepends a pfcs_meta block and
 * redirects the frame to the AF_XDP socket of its port and RX queue. Every decision beyond
 * this (forwarding, PFC, malformed MAC control) is taken by pfcswitchd's core, so this
 * program stays small. One exception: while pfcswitchd says a port's receive ring backs up
 * (`shedding`), data frames of the port's lossy priorities are dropped here, before the
 * kernel copies them, and counted per priority, so the ring keeps room for lossless frames.
 * Frames of ports without a socket yet go to the kernel stack (XDP_PASS).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "classifier.h"

#define ETH_P_8021Q_BE bpf_htons(0x8100)
#define ETH_P_IP_BE bpf_htons(0x0800)
#define ETH_P_IPV6_BE bpf_htons(0x86DD)
#define ETH_P_MAC_CONTROL_BE bpf_htons(0x8808)
#define ETH_P_CNM_BE bpf_htons(0x22E7)
#define ETH_P_CN_TAG_BE bpf_htons(0x22E9)

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, PFCS_MAX_PORTS * PFCS_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PFCS_MAX_PORTS);
	__type(key, __u32); /* ifindex */
	__type(value, struct pfcs_port_config);
} port_config SEC(".maps");

/* The same configurations, in front of port_config: an array lookup, which the verifier
 * inlines, where the hash costs a jhash and a bucket walk on every frame (about 15 ns, a
 * few per cent of the receiving CPU at 1 Mpps). A slot holds one port; a port whose ifindex
 * lands on a slot already taken is found in the hash. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PFCS_PORT_SLOTS);
	__type(key, __u32);
	__type(value, struct pfcs_port_slot);
} port_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PFCS_MAX_PORTS * PFCS_PRIORITIES);
	__type(key, __u32);
	__type(value, struct pfcs_rx_counter);
} rx_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PFCS_MAX_PORTS * PFCS_DROP_REASONS);
	__type(key, __u32);
	__type(value, __u64);
} drop_counters SEC(".maps");

/* Mapped into pfcswitchd's memory: it flips a flag with a store, not a system call. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PFCS_MAX_PORTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u32);
} shedding SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PFCS_MAX_PORTS * PFCS_PRIORITIES);
	__type(key, __u32);
	__type(value, __u64);
} shed_counters SEC(".maps");

struct vlan_tag {
	__be16 tci;
	__be16 encapsulated_proto;
};

static __always_inline int drop(__u32 port_index, __u32 reason)
{
	__u32 key = port_index * PFCS_DROP_REASONS + reason;
	__u64 *count = bpf_map_lookup_elem(&drop_counters, &key);

	if (count)
		*count += 1;
	return XDP_DROP;
}

static __always_inline struct pfcs_port_config *port_of(__u32 ifindex)
{
	__u32 slot = ifindex % PFCS_PORT_SLOTS;
	struct pfcs_port_slot *cached = bpf_map_lookup_elem(&port_slots, &slot);

	if (cached && cached->ifindex == ifindex)
		return &cached->config;
	return bpf_map_lookup_elem(&port_config, &ifindex);
}

/* DSCP of an IPv4 or IPv6 header at l3, or -1 if it does not fit. */
static __always_inline int dscp_of(void *l3, void *data_end, __be16 proto)
{
	__u8 *bytes = l3;

	if ((void *)(bytes + 2) > data_end)
		return -1;
	if (proto == ETH_P_IP_BE && (bytes[0] >> 4) == 4)
		return bytes[1] >> 2;
	if (proto == ETH_P_IPV6_BE && (bytes[0] >> 4) == 6)
		return ((bytes[0] & 0x0F) << 2) | (bytes[1] >> 6);
	return -1;
}

SEC("xdp")
int pfcswitch_classify(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 ifindex = ctx->ingress_ifindex;
	struct pfcs_port_config *port = port_of(ifindex);
	struct ethhdr *eth = data;
	__u8 priority, flags = 0;
	__be16 proto;
	void *l3;

	if (!port || port->port_index >= PFCS_MAX_PORTS)
		return XDP_PASS; /* not a switch port (yet) */
	if ((void *)(eth + 1) > data_end)
		return drop(port->port_index, PFCS_DROP_RUNT);

	proto = eth->h_proto;
	l3 = eth + 1;
	priority = port->default_priority & 7;
	if (proto == ETH_P_8021Q_BE) {
		struct vlan_tag *tag = l3;

		if ((void *)(tag + 1) > data_end)
			return drop(port->port_index, PFCS_DROP_TRUNCATED_VLAN);
		priority = bpf_ntohs(tag->tci) >> 13;
		flags |= PFCS_FLAG_TAGGED;
		proto = tag->encapsulated_proto;
		l3 = tag + 1;
	} else if (port->trust_dscp) {
		int dscp = dscp_of(l3, data_end, proto);

		if (dscp >= 0) {
			priority = port->dscp_map[dscp & 63] & 7;
			flags |= PFCS_FLAG_DSCP;
		}
	}
	if (proto == ETH_P_CN_TAG_BE) {
		struct vlan_tag *cn_tag = l3; /* same shape: flow id, then EtherType */

		if ((void *)(cn_tag + 1) <= data_end)
			proto = cn_tag->encapsulated_proto;
	}
	if (eth->h_proto == ETH_P_MAC_CONTROL_BE)
		flags |= PFCS_FLAG_MAC_CONTROL;
	else if (proto == ETH_P_CNM_BE)
		flags |= PFCS_FLAG_CNM;

	__u32 key = port->port_index * PFCS_PRIORITIES + priority;
	struct pfcs_rx_counter *counter = bpf_map_lookup_elem(&rx_counters, &key);
	if (counter) {
		counter->frames += 1;
		counter->bytes += data_end - data;
	}
	if (!(flags & (PFCS_FLAG_MAC_CONTROL | PFCS_FLAG_CNM)) && !(port->lossless & (1 << priority))) {
		__u32 port_key = port->port_index;
		__u32 *shed = bpf_map_lookup_elem(&shedding, &port_key);

		if (shed && *shed) {
			__u64 *count = bpf_map_lookup_elem(&shed_counters, &key);

			if (count)
				*count += 1;
			return XDP_DROP;
		}
	}

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct pfcs_meta)) == 0) {
		struct pfcs_meta *meta = (void *)(long)ctx->data_meta;

		if ((void *)(meta + 1) <= (void *)(long)ctx->data) {
			meta->magic = PFCS_META_MAGIC;
			meta->priority = priority;
			meta->flags = flags;
		}
	}
	if (ctx->rx_queue_index >= PFCS_MAX_QUEUES)
		return XDP_PASS;
	return bpf_redirect_map(&xsks, port->port_index * PFCS_MAX_QUEUES + ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
