// SPDX-License-Identifier: GPL-2.0 OR MIT
/* pfcswitch-bench sink: counts every frame that reaches the interface and drops it.
 *
 * Attached in native mode to the sink host's veth, it measures what a forwarder delivered
 * without a socket, a copy or a context switch, and independently of the forwarder.
 * `pfcswitch-bench sink` sums the per-CPU counter over a fixed window.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct bench_count {
	__u64 frames;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_count);
} counts SEC(".maps");

SEC("xdp")
int bench_sink(struct xdp_md *ctx)
{
	__u32 key = 0;
	struct bench_count *count = bpf_map_lookup_elem(&counts, &key);

	if (count) {
		count->frames += 1;
		count->bytes += ctx->data_end - ctx->data;
	}
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
