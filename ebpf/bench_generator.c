// SPDX-License-Identifier: GPL-2.0 OR MIT
/* pfcswitch-bench overload: a generator inside the kernel, and the PFC it obeys.
 *
 * bench_generate is not attached: `pfcswitch-bench overload` runs it with BPF_PROG_RUN and
 * BPF_F_TEST_XDP_LIVE_FRAMES on the generator's veth, where XDP_TX sends each run's frame
 * to the peer (the kernel turns it into a redirect to the same interface). No socket, no
 * copy and no system call per frame: far more frames than any AF_XDP forwarder takes. Two
 * threads call it on one CPU, so that one's call keeps it in the kernel's XDP dispatcher
 * while the other's starts and ends.
 *
 * bench_pfc_listener is attached to the same veth, as its NIC's MAC would be: it reads the
 * PFC frames the switch sends back and sets, per priority, until when the generator holds
 * its frames (quanta x 512 bit times at the configured speed; quanta 0 resumes). A frame
 * held is not sent: it is counted as held, not as offered.
 *
 * bench_probe is the latency probe's sender, run the same way one frame at a time: it
 * writes CLOCK_MONOTONIC into the frame's traffic header as the frame leaves, so that
 * ebpf/bench_sink.c measures one-way latency between two XDP hooks on one clock, free of
 * the sending process's scheduling.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

struct generator_config {
	__u32 priority;         /* of the frames sent */
	__u32 obey_pfc;         /* 1: hold frames while their priority is paused */
	__u64 picos_per_quantum; /* 512 bit times at the link's speed, in picoseconds */
};

enum generator_count {
	GEN_SENT = 0,    /* XDP_TX: offered to the switch */
	GEN_HELD = 1,    /* not sent: the priority was paused */
	GEN_PFC_RX = 2,  /* PFC frames the listener obeyed */
	GEN_OTHER_RX = 3, /* other frames that reached the generator's veth */
	GEN_COUNTS = 4,
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct generator_config);
} config SEC(".maps");

/* Per priority: CLOCK_MONOTONIC nanoseconds until which it is paused (0: not paused). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} paused_until SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GEN_COUNTS);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

/* Atomic: the generator's two callers share one CPU and may preempt each other between
 * a count's load and its store, where an add would lose one. */
static __always_inline void count(__u32 what)
{
	__u64 *value = bpf_map_lookup_elem(&counts, &what);

	if (value)
		__sync_fetch_and_add(value, 1);
}

SEC("xdp")
int bench_generate(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct generator_config *cfg = bpf_map_lookup_elem(&config, &zero);

	if (!cfg)
		return XDP_ABORTED;
	if (cfg->obey_pfc) {
		__u32 priority = cfg->priority & 7;
		__u64 *until = bpf_map_lookup_elem(&paused_until, &priority);

		/* The clock is read only while a pause is in force. */
		if (until && *until && bpf_ktime_get_ns() < *until) {
			count(GEN_HELD);
			return XDP_DROP;
		}
	}
	count(GEN_SENT);
	return XDP_TX;
}

/* The traffic header's send timestamp (wire/src/traffic.rs, bytes 24-31) in a frame tagged
 * 802.1Q + IPv4 + UDP: 18 + 20 + 8 + 24. */
#define PROBE_TIMESTAMP_OFFSET 70

SEC("xdp")
int bench_probe(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 *stamp = data + PROBE_TIMESTAMP_OFFSET;

	if ((void *)(stamp + 1) > data_end)
		return XDP_ABORTED;
	*stamp = bpf_cpu_to_be64(bpf_ktime_get_ns());
	count(GEN_SENT);
	return XDP_TX;
}

#define ETH_P_MAC_CONTROL_BE bpf_htons(0x8808)
#define PFC_OPCODE_BE bpf_htons(0x0101)

struct pfc_frame {
	struct ethhdr eth;
	__be16 opcode;
	__be16 class_enable;
	__be16 quanta[8];
};

SEC("xdp")
int bench_pfc_listener(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pfc_frame *pfc = data;
	__u32 zero = 0;
	struct generator_config *cfg = bpf_map_lookup_elem(&config, &zero);

	if (!cfg || (void *)(pfc + 1) > data_end || pfc->eth.h_proto != ETH_P_MAC_CONTROL_BE ||
	    pfc->opcode != PFC_OPCODE_BE) {
		count(GEN_OTHER_RX);
		return XDP_DROP;
	}
	__u16 enable = bpf_ntohs(pfc->class_enable);
	__u64 now = bpf_ktime_get_ns();
#pragma unroll
	for (__u32 priority = 0; priority < 8; priority++) {
		if (!(enable & (1 << priority)))
			continue;
		__u32 key = priority;
		__u64 *until = bpf_map_lookup_elem(&paused_until, &key);
		__u64 quanta = bpf_ntohs(pfc->quanta[priority]);

		if (until)
			*until = quanta ? now + quanta * cfg->picos_per_quantum / 1000 : 0;
	}
	count(GEN_PFC_RX);
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
