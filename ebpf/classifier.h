/* Layouts shared by the XDP classifier and pfcswitchd (daemon/src/classifier.rs mirrors
 * them with #[repr(C)] structs; keep both in step). */
#ifndef PFCSWITCH_CLASSIFIER_H
#define PFCSWITCH_CLASSIFIER_H

#include <linux/types.h>

#define PFCS_MAX_PORTS 64
#define PFCS_PRIORITIES 8
#define PFCS_MAX_QUEUES 16 /* per port: XSKMAP key = port_index * PFCS_MAX_QUEUES + rx queue */

/* Written in front of every frame handed to userspace (bpf_xdp_adjust_meta). */
struct pfcs_meta {
	__u16 magic;    /* PFCS_META_MAGIC: lets userspace tell metadata from garbage */
	__u8 priority;  /* 0-7, as classified for this port */
	__u8 flags;     /* PFCS_FLAG_* */
};
#define PFCS_META_MAGIC 0x5046
#define PFCS_FLAG_TAGGED 0x01      /* priority came from an 802.1Q PCP */
#define PFCS_FLAG_DSCP 0x02        /* priority came from the DSCP map */
#define PFCS_FLAG_MAC_CONTROL 0x04 /* EtherType 0x8808 (PAUSE/PFC): never forwarded */
#define PFCS_FLAG_CNM 0x08         /* EtherType 0x22E7 (802.1Qau CNM) */

/* Per-port settings, keyed by ifindex in port_config. */
struct pfcs_port_config {
	__u32 port_index;       /* < PFCS_MAX_PORTS: row in the counter maps */
	__u8 default_priority;  /* for untagged frames when trust is pcp (or not IP) */
	__u8 trust_dscp;        /* 1: untagged IPv4/IPv6 take dscp_map[DSCP] */
	__u8 lossless;          /* bit p: priority p is lossless (never shed) */
	__u8 pad;
	__u8 dscp_map[64];
};

/* port_slots: a direct-mapped copy of port_config, slot ifindex % PFCS_PORT_SLOTS. */
#define PFCS_PORT_SLOTS 256
struct pfcs_port_slot {
	__u32 ifindex; /* whose configuration this slot holds; 0: none */
	struct pfcs_port_config config;
};

/* Per-CPU receive counters, index port_index * PFCS_PRIORITIES + priority. */
struct pfcs_rx_counter {
	__u64 frames;
	__u64 bytes;
};

/* shedding[port_index] != 0: pfcswitchd's receive ring for the port is backing up, so data
 * frames of its lossy priorities are dropped here (counted in shed_counters, index
 * port_index * PFCS_PRIORITIES + priority) to leave the ring to the lossless ones. */

/* Why the classifier dropped a frame; index port_index * PFCS_DROP_REASONS + reason. */
enum pfcs_drop_reason {
	PFCS_DROP_RUNT = 0,          /* shorter than an Ethernet header */
	PFCS_DROP_TRUNCATED_VLAN = 1, /* 0x8100 without a complete tag */
	PFCS_DROP_REASONS = 2,
};

#endif
