// SPDX-License-Identifier: GPL-2.0 OR MIT
/* pfcswitch-bench sink: counts every frame that reaches the interface and drops it.
 *
 * Attached in native mode to the sink host's veth, it measures what a forwarder delivered
 * without a socket, a copy or a context switch, and independently of the forwarder.
 * `pfcswitch-bench sink` sums the per-CPU counter over a fixed window.
 *
 * Frames of the latency probe (pfcswitch-bench probe: the traffic header of flow
 * PROBE_FLOW_ID, stamped by ebpf/bench_generator.c's bench_probe as it left) are counted
 * apart, and while `probe_control.recording` is set each one's one-way latency, now minus
 * its stamp on the same CLOCK_MONOTONIC, goes into the next slot of `probe_latency_ns`.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define PROBE_FLOW_ID 2
#define PROBE_SLOTS 65536

struct bench_count {
	__u64 frames;
	__u64 bytes;
	__u64 probes;
};

struct probe_control {
	__u64 recording; /* set by userspace over the measured window */
	__u64 recorded;  /* slots taken, may pass PROBE_SLOTS */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_count);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_control);
} probe_control SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROBE_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} probe_latency_ns SEC(".maps");

/* 802.1Q + IPv4 (no options) + UDP + the traffic header (wire/src/traffic.rs); packed, as the
 * header's fields sit at offsets their types would not align to. */
struct probe_frame {
	struct ethhdr eth;
	__be16 tci;
	__be16 ethertype;
	__u8 ip[20];
	__u8 udp[8];
	__be16 magic;
	__u8 version;
	__u8 kind;
	__be32 flow_id;
	__u8 message[16];
	__be64 sent_ns;
} __attribute__((packed));

static __always_inline int is_probe(struct probe_frame *frame, void *data_end)
{
	return (void *)(frame + 1) <= data_end && frame->eth.h_proto == bpf_htons(ETH_P_8021Q) &&
	       frame->ethertype == bpf_htons(ETH_P_IP) && frame->magic == bpf_htons(0x5046) &&
	       frame->flow_id == bpf_htonl(PROBE_FLOW_ID);
}

static __always_inline void record_latency(struct probe_frame *frame)
{
	__u32 zero = 0;
	struct probe_control *control = bpf_map_lookup_elem(&probe_control, &zero);

	if (!control || !control->recording)
		return;
	__u32 slot = __sync_fetch_and_add(&control->recorded, 1);
	__u64 *latency = bpf_map_lookup_elem(&probe_latency_ns, &slot);

	if (latency)
		*latency = bpf_ktime_get_ns() - bpf_be64_to_cpu(frame->sent_ns);
}

SEC("xdp")
int bench_sink(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 key = 0;
	struct bench_count *count = bpf_map_lookup_elem(&counts, &key);

	if (!count)
		return XDP_DROP;
	if (is_probe(data, data_end)) {
		count->probes += 1;
		record_latency(data);
		return XDP_DROP;
	}
	count->frames += 1;
	count->bytes += data_end - data;
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
