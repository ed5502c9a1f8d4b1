/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * tcp_oooprobe: generic netlink interface of the out-of-order-queue delay
 * probe. Shared by the kernel module and the oooprobed daemon.
 *
 * Family TCP_OOOPROBE_GENL_NAME, version TCP_OOOPROBE_GENL_VERSION.
 * Events (TCP_OOOPROBE_CMD_SEGMENT, TCP_OOOPROBE_CMD_FLOW) are multicast on
 * group TCP_OOOPROBE_MCGRP_EVENTS; binding to it needs CAP_NET_ADMIN.
 * All integers are in host byte order; addresses are in network byte order
 * (4 bytes for AF_INET, 16 for AF_INET6).
 */
#ifndef _UAPI_TCP_OOOPROBE_H
#define _UAPI_TCP_OOOPROBE_H

#define TCP_OOOPROBE_GENL_NAME		"tcp_oooprobe"
#define TCP_OOOPROBE_GENL_VERSION	1
#define TCP_OOOPROBE_MCGRP_EVENTS	"events"

/* Maximum number of ports in a filter. */
#define TCP_OOOPROBE_MAX_PORTS		16

enum tcp_oooprobe_cmd {
	TCP_OOOPROBE_CMD_UNSPEC,
	/* every command needs CAP_NET_ADMIN */
	TCP_OOOPROBE_CMD_GET_STATS,	/* request; reply carries STAT_* */
	TCP_OOOPROBE_CMD_SET_FILTER,	/* FILTER_* attrs */
	TCP_OOOPROBE_CMD_GET_FILTER,	/* reply carries FILTER_* */
	TCP_OOOPROBE_CMD_SEGMENT,	/* event: one segment left the ofo queue */
	TCP_OOOPROBE_CMD_FLOW,		/* event: a tracked flow closed */
	__TCP_OOOPROBE_CMD_MAX,
};
#define TCP_OOOPROBE_CMD_MAX (__TCP_OOOPROBE_CMD_MAX - 1)

/* Values of TCP_OOOPROBE_A_FILTER_FLOWS (module parameter flows=all|ooo). */
enum tcp_oooprobe_flows {
	TCP_OOOPROBE_FLOWS_ALL = 0,	/* FLOW event for every tracked flow */
	TCP_OOOPROBE_FLOWS_OOO = 1,	/* only for flows that had ofo data */
};

/* Bits of TCP_OOOPROBE_A_FLOW_FLAGS. */
#define TCP_OOOPROBE_FLOW_F_PARTIAL	0x1 /* flows=all: seen first after
					     * establishment
					     */
#define TCP_OOOPROBE_FLOW_F_RANGE_OVF	0x2 /* per-flow range cap was hit */

enum tcp_oooprobe_attr {
	TCP_OOOPROBE_A_UNSPEC,
	TCP_OOOPROBE_A_EVENT_SEQ,	/* u64: per-module event number, 1.. */
	TCP_OOOPROBE_A_NETNS_COOKIE,	/* u64 */
	TCP_OOOPROBE_A_FAMILY,		/* u8: AF_INET or AF_INET6 */
	TCP_OOOPROBE_A_LOCAL_ADDR,	/* binary, 4 or 16 bytes */
	TCP_OOOPROBE_A_REMOTE_ADDR,	/* binary, 4 or 16 bytes */
	TCP_OOOPROBE_A_LOCAL_PORT,	/* u16 */
	TCP_OOOPROBE_A_REMOTE_PORT,	/* u16 */
	TCP_OOOPROBE_A_SEQ,		/* u32: first sequence number */
	TCP_OOOPROBE_A_LEN,		/* u32: payload bytes */
	TCP_OOOPROBE_A_TIME_IN,		/* u64: ns, CLOCK_MONOTONIC */
	TCP_OOOPROBE_A_TIME_OUT,	/* u64: ns, CLOCK_MONOTONIC */
	TCP_OOOPROBE_A_DATA_SEGS_IN,	/* u32: tcp_sock data_segs_in */
	TCP_OOOPROBE_A_OOO_SEGS,	/* u32: segments recorded out of order */
	TCP_OOOPROBE_A_BYTES_RECEIVED,	/* u64: payload bytes (FIN excluded) */
	TCP_OOOPROBE_A_LIFETIME_NS,	/* u64 */
	TCP_OOOPROBE_A_FLOW_FLAGS,	/* u32: TCP_OOOPROBE_FLOW_F_* */
	TCP_OOOPROBE_A_FILTER_PORTS,	/* binary: array of u16, <= MAX_PORTS */
	TCP_OOOPROBE_A_FILTER_NETNS,	/* u64: netns inode or cookie, 0 any */
	TCP_OOOPROBE_A_FILTER_FLOWS,	/* u8: enum tcp_oooprobe_flows */
	TCP_OOOPROBE_A_STAT_EVENTS_SENT,	/* u64 */
	TCP_OOOPROBE_A_STAT_EVENTS_DROPPED,	/* u64: numbered but not delivered:
						 * no memory, or no subscriber
						 * took it (receive buffer full),
						 * or a NETLINK_BROADCAST_ERROR
						 * subscriber missed it
						 */
	TCP_OOOPROBE_A_STAT_EVENTS_UNHEARD,	/* u64: no subscriber */
	TCP_OOOPROBE_A_STAT_FLOWS_TRACKED,	/* u32: current table size */
	TCP_OOOPROBE_A_STAT_FLOW_OVERFLOWS,	/* u64: flows not tracked, table full */
	TCP_OOOPROBE_A_STAT_RANGE_OVERFLOWS,	/* u64: segments not (fully)
						 * recorded: a flow's cap,
						 * the byte budget or no
						 * memory
						 */
	TCP_OOOPROBE_A_STAT_RANGES_RECORDED,	/* u64 */
	TCP_OOOPROBE_A_STAT_RANGES_RELEASED,	/* u64 */
	TCP_OOOPROBE_A_STAT_RANGES_DUPLICATE,	/* u64: fully covered already */
	TCP_OOOPROBE_A_STAT_RANGES_DISCARDED,	/* u64: pruned or left at close */
	TCP_OOOPROBE_A_STAT_HOOK,		/* string: hooked function */
	TCP_OOOPROBE_A_STAT_KPROBE_MISSED,	/* u64: kprobe nmissed total */
	TCP_OOOPROBE_A_PAD,
	/* the two parts of STAT_KPROBE_MISSED: */
	TCP_OOOPROBE_A_STAT_KPROBE_MISSED_NESTED,	/* u64: a probed function hit
							 * while a kprobe handler
							 * ran on the same CPU
							 */
	TCP_OOOPROBE_A_STAT_KPROBE_MISSED_NOINST,	/* u64: no free kretprobe
							 * instance (maxactive)
							 */
	TCP_OOOPROBE_A_STAT_RANGE_BYTES,	/* u64: bytes of range arrays
						 * allocated now
						 */
	TCP_OOOPROBE_A_STAT_MAX_RANGE_BYTES,	/* u64: their budget
						 * (max_range_bytes)
						 */
	TCP_OOOPROBE_A_STAT_RANGE_BUDGET_REFUSED, /* u64: array growths the
						   * budget refused
						   */
	TCP_OOOPROBE_A_STAT_SEGS_NOT_QUEUED,	/* u64: out-of-order segments
						 * the kernel did not queue
						 * (no receive memory):
						 * not recorded
						 */
	__TCP_OOOPROBE_A_MAX,
};
#define TCP_OOOPROBE_A_MAX (__TCP_OOOPROBE_A_MAX - 1)

#endif /* _UAPI_TCP_OOOPROBE_H */
