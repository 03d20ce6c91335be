// SPDX-License-Identifier: GPL-2.0 OR MIT
/* pfcswitch-bench kernel forwarder: every frame received on port A leaves on port B and
 * every frame received on port B leaves on port A, by XDP_REDIRECT through a DEVMAP.
 *
 * The reference point for the userspace datapaths: the same two veth ports, no switching
 * logic, no copy to userspace. `pfcswitch-bench xdp-redirect` sets port_a_ifindex before
 * loading and fills the map: entry 0 is port B (out of A), entry 1 is port A (out of B).
 * A veth only accepts redirected frames when its peer runs XDP (or has GRO on): the sink's
 * counting program on the far end satisfies that.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

volatile const __u32 port_a_ifindex = 0;

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} out_port SEC(".maps");

SEC("xdp")
int bench_redirect(struct xdp_md *ctx)
{
	__u32 key = ctx->ingress_ifindex == port_a_ifindex ? 0 : 1;

	return bpf_redirect_map(&out_port, key, XDP_DROP);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
