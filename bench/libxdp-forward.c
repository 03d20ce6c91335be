// SPDX-License-Identifier: MIT
/*
 * The datapath benchmark's independent reference (scripts/bench-datapath.sh): a plain
 * AF_XDP L2 forwarder on libxdp's xsk API, in the shape of the kernel's xdpsock l2fwd
 * sample: copy mode, one UMEM shared by the two ports' sockets, batches of 64, and a loop
 * that polls the rings without a system call while there is work and sleeps in poll() only
 * when a round found none and no transmission is outstanding (xdpsock's -p), as pfcswitchd
 * does. A loop that never slept would
 * starve the receive work (veth's NAPI thread) when it shares the forwarder's CPU. Frames
 * received on one port leave on the other unchanged.
 *
 * With --learn it is a two-port learning bridge (libxdp-bridge in the benchmark): it reads
 * each frame's Ethernet header, as any L2 forwarder must and as xdpsock l2fwd does (it swaps
 * the addresses), learns the source's port and looks the destination up; a frame for a
 * station on its own port is filtered (its buffer goes back to the fill ring), any other
 * leaves on the other port unchanged. Its rate against the plain forwarder's says what
 * reading a frame's first cache line, written by another CPU, costs (or saves: on some hosts
 * the kernel's copy of the frame then misses less) on the machine.
 *
 * Each port gets the XDP program of libxdp's default in its simplest form,
 * bpf_redirect_map(xsks, rx_queue_index, XDP_PASS), attached and detached here: libxdp's own
 * loader keeps its users' count in bpffs, and without one (as under `ip netns exec`) it
 * sometimes left its program attached after exit.
 *
 * A port's fill ring is refilled only with frames whose transmission on the other port
 * completed, so when the output is the bottleneck the excess is dropped in the kernel
 * before it costs any work here.
 *
 *   libxdp-forward --port-a IFACE --port-b IFACE [--learn]
 *
 * Prints "ready" once both sockets are bound; SIGINT or SIGTERM stops it, and it detaches
 * its XDP programs on the way out, also after an error. On the way out it prints, per port,
 * the kernel's counts of the frames its socket refused (XDP_STATISTICS), so a benchmark can
 * say where the frames it did not forward died:
 *   statistics PORT rx_dropped N rx_ring_full N rx_fill_ring_empty_descs N
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#define FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE
#define RING_SIZE XSK_RING_CONS__DEFAULT_NUM_DESCS
#define FRAMES (4 * RING_SIZE)
#define BATCH 64

struct port {
	const char *name;
	unsigned char index;
	int ifindex; /* while its XDP program is attached */
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	unsigned int outstanding; /* frames on the TX ring or in flight, not yet completed */
};

static volatile sig_atomic_t stopping;
static struct port ports[2];
static void *area;

/* --learn: where each station was last seen, by a hash of its address (a collision evicts;
 * two ports need no more). */
#define STATIONS 256
struct station {
	unsigned char mac[6];
	unsigned char port;
	unsigned char used;
};
static int learning;
static struct station stations[STATIONS];

static struct station *station_of(const unsigned char *mac)
{
	unsigned int hash = (mac[3] ^ mac[4] * 7u ^ mac[5] * 31u) & (STATIONS - 1);

	return &stations[hash];
}

/* Learns the frame's source on `in`; returns whether its destination is on another port
 * (or unknown, so flooded to the other port). */
static int leaves(const unsigned char *frame, unsigned char in)
{
	struct station *source = station_of(frame + 6), *destination;

	if (!(frame[6] & 1)) {
		memcpy(source->mac, frame + 6, 6);
		source->port = in;
		source->used = 1;
	}
	destination = station_of(frame);
	return !(destination->used && !memcmp(destination->mac, frame, 6) && destination->port == in);
}

static void on_signal(int signal)
{
	(void)signal;
	stopping = 1;
}

static void detach_all(void)
{
	for (int i = 0; i < 2; i++)
		if (ports[i].ifindex)
			bpf_xdp_detach(ports[i].ifindex, XDP_FLAGS_DRV_MODE, NULL);
}

static void fail(const char *what, const char *iface, int err)
{
	fprintf(stderr, "libxdp-forward: %s%s%s: %s\n", what, iface ? " " : "", iface ? iface : "",
		strerror(err));
	exit(1);
}

/* r2 = ctx->rx_queue_index; r1 = xsks; r3 = XDP_PASS; return bpf_redirect_map(r1, r2, r3). */
static void attach_redirect(struct port *port, struct xsk_socket *xsk)
{
	int map = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "xsks", sizeof(int), sizeof(int), 1, NULL);
	struct bpf_insn insns[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1,
		  .off = offsetof(struct xdp_md, rx_queue_index) },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1, .src_reg = BPF_PSEUDO_MAP_FD, .imm = map },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_redirect_map },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int prog, ifindex = if_nametoindex(port->name);

	if (map < 0)
		fail("cannot create the XSKMAP for", port->name, errno);
	prog = bpf_prog_load(BPF_PROG_TYPE_XDP, "xsk_redirect", "GPL", insns, sizeof(insns) / sizeof(insns[0]), NULL);
	if (prog < 0)
		fail("cannot load the XDP program for", port->name, errno);
	if (xsk_socket__update_xskmap(xsk, map))
		fail("cannot insert the socket into the XSKMAP of", port->name, errno);
	if (!ifindex)
		fail("no interface", port->name, errno);
	if (bpf_xdp_attach(ifindex, prog, XDP_FLAGS_DRV_MODE, NULL))
		fail("cannot attach XDP to", port->name, errno);
	port->ifindex = ifindex;
}

/* Copy mode transmits only inside sendto; a full device queue asks to be kicked again. */
static void kick_tx(struct port *port)
{
	if (sendto(xsk_socket__fd(port->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return;
	if (errno != EAGAIN && errno != EBUSY && errno != ENOBUFS && errno != ENETDOWN)
		fail("sendto", port->name, errno);
}

static void wake_rx(struct port *port)
{
	if (xsk_ring_prod__needs_wakeup(&port->fill))
		recvfrom(xsk_socket__fd(port->xsk), NULL, 0, MSG_DONTWAIT, NULL, NULL);
}

/* Frames whose transmission on `out` completed go back to `in`'s fill ring. */
static void complete(struct port *out, struct port *in)
{
	__u32 at_comp, at_fill;
	unsigned int n = xsk_ring_cons__peek(&out->comp, RING_SIZE, &at_comp);

	if (!n)
		return;
	/* The fill ring has room for twice the frames `in` owns, so there always is. */
	if (xsk_ring_prod__reserve(&in->fill, n, &at_fill) != n)
		fail("fill ring overflow on", in->name, ENOSPC);
	for (unsigned int i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&in->fill, at_fill + i) = *xsk_ring_cons__comp_addr(&out->comp, at_comp + i);
	xsk_ring_prod__submit(&in->fill, n);
	xsk_ring_cons__release(&out->comp, n);
	out->outstanding -= n;
}

/* Reserves `n` slots of `out`'s TX ring, kicking and reaping until there are; returns
 * false if told to stop meanwhile. */
static int reserve_tx(struct port *in, struct port *out, unsigned int n, __u32 *at_tx)
{
	while (xsk_ring_prod__reserve(&out->tx, n, at_tx) != n) {
		kick_tx(out);
		complete(out, in);
		if (stopping)
			return 0;
	}
	return 1;
}

/* --learn: the `n` frames peeked at `at_rx` in `in`'s RX ring, each header read; frames
 * for a station on `in` go straight back to its fill ring, the others onto `out`'s TX ring. */
static unsigned int bridge(struct port *in, struct port *out, unsigned int n, __u32 at_rx)
{
	struct xdp_desc passing[BATCH];
	__u64 filtered[BATCH];
	unsigned int m = 0, dropped = 0;
	__u32 at_tx, at_fill;

	for (unsigned int i = 0; i < n; i++) {
		const struct xdp_desc *rx = xsk_ring_cons__rx_desc(&in->rx, at_rx + i);

		if (leaves(xsk_umem__get_data(area, rx->addr), in->index))
			passing[m++] = *rx;
		else
			filtered[dropped++] = rx->addr;
	}
	xsk_ring_cons__release(&in->rx, n);
	if (dropped) {
		if (xsk_ring_prod__reserve(&in->fill, dropped, &at_fill) != dropped)
			fail("fill ring overflow on", in->name, ENOSPC);
		for (unsigned int i = 0; i < dropped; i++)
			*xsk_ring_prod__fill_addr(&in->fill, at_fill + i) = filtered[i];
		xsk_ring_prod__submit(&in->fill, dropped);
	}
	if (!m || !reserve_tx(in, out, m, &at_tx))
		return n;
	for (unsigned int i = 0; i < m; i++)
		*xsk_ring_prod__tx_desc(&out->tx, at_tx + i) = passing[i];
	xsk_ring_prod__submit(&out->tx, m);
	out->outstanding += m;
	kick_tx(out);
	return n;
}

/* Up to a batch from `in`'s RX ring onto `out`'s TX ring; returns how many. */
static unsigned int forward(struct port *in, struct port *out)
{
	__u32 at_rx, at_tx;
	unsigned int n;

	complete(out, in);
	/* As xdpsock's complete_tx_l2fwd: kick while transmissions are outstanding, since
	 * copy mode sends at most 32 frames per sendto. */
	if (out->outstanding)
		kick_tx(out);
	n = xsk_ring_cons__peek(&in->rx, BATCH, &at_rx);
	if (!n) {
		wake_rx(in);
		return 0;
	}
	if (learning)
		return bridge(in, out, n, at_rx);
	if (!reserve_tx(in, out, n, &at_tx))
		return 0;
	for (unsigned int i = 0; i < n; i++) {
		const struct xdp_desc *rx = xsk_ring_cons__rx_desc(&in->rx, at_rx + i);
		struct xdp_desc *tx = xsk_ring_prod__tx_desc(&out->tx, at_tx + i);

		tx->addr = rx->addr;
		tx->len = rx->len;
	}
	xsk_ring_prod__submit(&out->tx, n);
	xsk_ring_cons__release(&in->rx, n);
	out->outstanding += n;
	kick_tx(out);
	return n;
}

static void open_port(struct port *port, struct xsk_umem *umem)
{
	const struct xsk_socket_config config = {
		.rx_size = RING_SIZE,
		.tx_size = RING_SIZE,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP,
	};
	int err = xsk_socket__create_shared(&port->xsk, port->name, 0, umem, &port->rx, &port->tx, &port->fill,
					    &port->comp, &config);

	if (err)
		fail("cannot open an AF_XDP socket on", port->name, -err);
	attach_redirect(port, port->xsk);
}

/* Half the UMEM's frames wait in each port's fill ring. */
static void give_frames(struct port *port, __u64 first)
{
	__u32 at;

	if (xsk_ring_prod__reserve(&port->fill, FRAMES / 2, &at) != FRAMES / 2)
		fail("cannot fill the fill ring of", port->name, ENOSPC);
	for (__u64 i = 0; i < FRAMES / 2; i++)
		*xsk_ring_prod__fill_addr(&port->fill, at + i) = (first + i) * FRAME_SIZE;
	xsk_ring_prod__submit(&port->fill, FRAMES / 2);
}

/* The kernel's count of the frames the port's socket refused: rx_dropped (no fill
 * buffer), rx_ring_full, and how often the fill ring was found empty. */
static void print_statistics(const struct port *port)
{
	struct xdp_statistics stats = { 0 };
	socklen_t len = sizeof(stats);

	if (getsockopt(xsk_socket__fd(port->xsk), SOL_XDP, XDP_STATISTICS, &stats, &len))
		fail("cannot read XDP_STATISTICS of", port->name, errno);
	printf("statistics %s rx_dropped %llu rx_ring_full %llu rx_fill_ring_empty_descs %llu\n", port->name,
	       (unsigned long long)stats.rx_dropped, (unsigned long long)stats.rx_ring_full,
	       (unsigned long long)stats.rx_fill_ring_empty_descs);
}

int main(int argc, char **argv)
{
	/* Each fill ring has room for every frame of the UMEM, twice what its port owns, as
	 * xdpsock sizes its own: the kernel publishes its consumption of fill entries lazily,
	 * and a ring of exactly the port's frames overflowed under load (seen on 6.18 in rounds
	 * right after pfcswitchd had the port). */
	const struct xsk_umem_config umem_config = {
		.fill_size = FRAMES,
		.comp_size = RING_SIZE,
		.frame_size = FRAME_SIZE,
	};
	struct xsk_umem *umem;
	int err, options = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--learn"))
			learning = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--port-a"))
			ports[0].name = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--port-b"))
			ports[1].name = argv[++i];
		else
			options = -1;
	}
	ports[1].index = 1;
	if (!ports[0].name || !ports[1].name || options) {
		fprintf(stderr, "usage: libxdp-forward --port-a IFACE --port-b IFACE [--learn]\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	atexit(detach_all);
	area = mmap(NULL, (size_t)FRAMES * FRAME_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		fail("cannot map the UMEM", NULL, errno);
	err = xsk_umem__create(&umem, area, (__u64)FRAMES * FRAME_SIZE, &ports[0].fill, &ports[0].comp, &umem_config);
	if (err)
		fail("cannot register the UMEM", NULL, -err);
	open_port(&ports[0], umem);
	open_port(&ports[1], umem);
	give_frames(&ports[0], 0);
	give_frames(&ports[1], FRAMES / 2);
	printf("ready\n");
	fflush(stdout);
	struct pollfd fds[2] = { { .fd = xsk_socket__fd(ports[0].xsk), .events = POLLIN },
				 { .fd = xsk_socket__fd(ports[1].xsk), .events = POLLIN } };

	while (!stopping) {
		unsigned int moved = forward(&ports[0], &ports[1]);

		moved += forward(&ports[1], &ports[0]);
		/* Sleep only when idle: frames in flight come back through a completion ring,
		 * which wakes no poll(), and their input's fill ring may be empty until then. */
		if (!moved && !ports[0].outstanding && !ports[1].outstanding)
			poll(fds, 2, 100);
	}
	detach_all();
	ports[0].ifindex = ports[1].ifindex = 0;
	print_statistics(&ports[0]);
	print_statistics(&ports[1]);
	xsk_socket__delete(ports[0].xsk);
	xsk_socket__delete(ports[1].xsk);
	xsk_umem__delete(umem);
	return 0;
}
