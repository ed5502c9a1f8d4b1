// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_oooprobe: how long do out-of-order TCP segments wait in the receive
 * side's out-of-order queue before the application can read them?
 *
 * Hooks. A kretprobe on tcp_data_queue() (a local symbol; tcp_data_queue_ofo()
 * and tcp_ofo_queue() are inlined in distribution kernels) sees every data
 * segment a socket queues. Its entry handler looks at the segment's seq
 * against rcv_nxt:
 * - beyond rcv_nxt: the segment is out of order. Its sequence range (less
 *   a FIN's sequence number) is recorded with its arrival time, unless it
 *   is empty, beyond the receive window (tcp_data_queue() drops it) or the
 *   socket no longer receives. rcv_nxt cannot move for such a segment, so
 *   the kretprobe instance is handed back at once.
 * - at or below rcv_nxt, the out-of-order queue empty: nothing is held,
 *   nothing to do (the fast path).
 * - at or below rcv_nxt, segments held: the segment may fill a hole. Its
 *   arrival time is kept in the kretprobe instance; at return, every
 *   recorded range at or below the new rcv_nxt has been released to the
 *   reader and is reported as a SEGMENT event, its time out being that
 *   arrival time.
 * When tcp_data_queue is not in kallsyms (or hook=rcv), the same handlers
 * run on tcp_rcv_established() + tcp_rcv_state_process().
 *
 * Ranges (ooo_ranges.h). A flow's recorded ranges are a sorted array of
 * disjoint sequence ranges. A segment adds only the parts not recorded yet,
 * one range per gap, so a retransmission of held data keeps the first
 * arrival time; adjacent ranges stay apart, one SEGMENT event each. Before
 * a segment is recorded, the ranges the reader already has are discarded
 * (the ofo queue was pruned, or the hole was filled on a path not probed).
 * The array grows by doubling up to max_ranges; a segment that does not fit
 * is recorded up to the last gap that fit, counted as a range overflow, and
 * the flow is flagged RANGE_OVF.
 *
 * Flows. The sock:inet_sock_set_state tracepoint opens a flow at
 * TCP_ESTABLISHED and closes it (FLOW event, state freed) at TCP_CLOSE,
 * which every full socket passes through before it is destroyed. A
 * tracepoint, not a kprobe on tcp_set_state(): the kprobe layer skips a hit
 * that nests in another kprobe handler on the same CPU, and a skipped close
 * leaked its flow. At TCP_CLOSE the socket is already unhashed (local port
 * 0), so a flow keeps the local port it had when it was opened. A socket
 * with no flow yet (e.g. established before the module was loaded) gets one
 * at its first out-of-order segment, flagged PARTIAL. Ranges still held at
 * close count as discarded.
 *
 * Times are CLOCK_MONOTONIC nanoseconds. With skb_time (the default) an
 * arrival time is the stack's receive stamp of the skb, so a segment that
 * waited in the socket backlog while the reader held the socket lock still
 * gets its arrival time. Without skb_time, or for an skb without a usable
 * stamp, it is the time TCP processed the segment.
 *
 * Events go to the "events" multicast group; while it has no subscriber an
 * event is only counted (unheard). Each event carries a module-wide number
 * (EVENT_SEQ); one lost on the way (no memory, a subscriber's full receive
 * buffer) keeps its number, so a reader sees the gap, and is counted as
 * dropped.
 *
 * Concurrency: all handlers for one socket run serialized by the socket
 * lock (softirq with the bh lock held, or the owner's backlog processing),
 * so a flow's ranges need no lock of their own. The flow table is an RCU
 * hash keyed by the socket pointer; writers take ooo_flow_lock.
 *
 * Cost when no flow has out-of-order data: the entry handler reads the
 * segment's seq, rcv_nxt and the root of the ofo rbtree and returns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rculist.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/version.h>
#include <net/genetlink.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/tcp.h>

#include "ooo_ranges.h"
#include "tcp_oooprobe.h"

/*
 * 2^14 buckets of the flow table (128 KiB of list heads): a few flows per
 * bucket at the default max_flows, one lookup per out-of-order segment.
 */
#define OOO_HASH_BITS	14

/* ---- parameters and filter --------------------------------------------- */

struct ooo_filter {
	u16 ports[TCP_OOOPROBE_MAX_PORTS];	/* host byte order */
	u8 nports;
	u8 flows;		/* enum tcp_oooprobe_flows */
	u64 netns;		/* inode or cookie, 0 = any */
};

static DEFINE_SEQLOCK(ooo_filter_lock);
static struct ooo_filter ooo_filter_cur;	/* guarded by ooo_filter_lock */

static unsigned int ooo_max_flows = 65536;
module_param_named(max_flows, ooo_max_flows, uint, 0444);
MODULE_PARM_DESC(max_flows, "maximum number of flows tracked at once (1..1048576)");

/* 65536 ranges of 16 bytes: at most 1 MiB per flow, one krealloc. */
static unsigned int ooo_max_ranges = 4096;
module_param_named(max_ranges, ooo_max_ranges, uint, 0444);
MODULE_PARM_DESC(max_ranges, "maximum out-of-order ranges recorded per flow (1..65536)");

static bool ooo_skb_time = true;
module_param_named(skb_time, ooo_skb_time, bool, 0444);
MODULE_PARM_DESC(skb_time, "times are the segments' arrival at the device (enables rx timestamps) instead of their processing by TCP");

static char ooo_hook[16] = "auto";
module_param_string(hook, ooo_hook, sizeof(ooo_hook), 0444);
MODULE_PARM_DESC(hook, "auto|data_queue|rcv: function(s) to probe");

static void ooo_filter_read(struct ooo_filter *out)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&ooo_filter_lock);
		*out = ooo_filter_cur;
	} while (read_seqretry(&ooo_filter_lock, seq));
}

static void ooo_filter_write(const struct ooo_filter *in)
{
	unsigned long flags;

	write_seqlock_irqsave(&ooo_filter_lock, flags);
	ooo_filter_cur = *in;
	write_sequnlock_irqrestore(&ooo_filter_lock, flags);
}

/* "80,443" -> ports; "" or "any" -> no port filter. */
static int ooo_parse_ports(const char *val, struct ooo_filter *f)
{
	char buf[128], *s, *tok;
	u16 port;

	if (strscpy(buf, val, sizeof(buf)) < 0)
		return -EINVAL;
	s = strim(buf);
	f->nports = 0;
	if (!*s || !strcmp(s, "any"))
		return 0;
	while ((tok = strsep(&s, ",")) != NULL) {
		if (f->nports == TCP_OOOPROBE_MAX_PORTS)
			return -EINVAL;
		if (kstrtou16(strim(tok), 10, &port) || !port)
			return -EINVAL;
		f->ports[f->nports++] = port;
	}
	return 0;
}

static int ooo_param_ports_set(const char *val, const struct kernel_param *kp)
{
	struct ooo_filter f;
	int err;

	ooo_filter_read(&f);
	err = ooo_parse_ports(val, &f);
	if (err)
		return err;
	ooo_filter_write(&f);
	return 0;
}

static int ooo_param_ports_get(char *buf, const struct kernel_param *kp)
{
	struct ooo_filter f;
	int i, n = 0;

	ooo_filter_read(&f);
	if (!f.nports)
		return sysfs_emit(buf, "any\n");
	for (i = 0; i < f.nports; i++)
		n += sysfs_emit_at(buf, n, "%s%u", i ? "," : "", f.ports[i]);
	return n + sysfs_emit_at(buf, n, "\n");
}

static const struct kernel_param_ops ooo_param_ports_ops = {
	.set = ooo_param_ports_set,
	.get = ooo_param_ports_get,
};
module_param_cb(ports, &ooo_param_ports_ops, NULL, 0644);
MODULE_PARM_DESC(ports, "report only flows with one of these local or remote ports, e.g. 80,443 (any: all)");

static int ooo_param_netns_set(const char *val, const struct kernel_param *kp)
{
	struct ooo_filter f;
	u64 v;

	if (kstrtou64(val, 0, &v))
		return -EINVAL;
	ooo_filter_read(&f);
	f.netns = v;
	ooo_filter_write(&f);
	return 0;
}

static int ooo_param_netns_get(char *buf, const struct kernel_param *kp)
{
	struct ooo_filter f;

	ooo_filter_read(&f);
	return sysfs_emit(buf, "%llu\n", f.netns);
}

static const struct kernel_param_ops ooo_param_netns_ops = {
	.set = ooo_param_netns_set,
	.get = ooo_param_netns_get,
};
module_param_cb(netns, &ooo_param_netns_ops, NULL, 0644);
MODULE_PARM_DESC(netns, "report only flows in this network namespace (inode or cookie; 0: all)");

static int ooo_param_flows_set(const char *val, const struct kernel_param *kp)
{
	struct ooo_filter f;

	ooo_filter_read(&f);
	if (sysfs_streq(val, "all"))
		f.flows = TCP_OOOPROBE_FLOWS_ALL;
	else if (sysfs_streq(val, "ooo"))
		f.flows = TCP_OOOPROBE_FLOWS_OOO;
	else
		return -EINVAL;
	ooo_filter_write(&f);
	return 0;
}

static int ooo_param_flows_get(char *buf, const struct kernel_param *kp)
{
	struct ooo_filter f;

	ooo_filter_read(&f);
	return sysfs_emit(buf, "%s\n",
			  f.flows == TCP_OOOPROBE_FLOWS_OOO ? "ooo" : "all");
}

static const struct kernel_param_ops ooo_param_flows_ops = {
	.set = ooo_param_flows_set,
	.get = ooo_param_flows_get,
};
module_param_cb(flows, &ooo_param_flows_ops, NULL, 0644);
MODULE_PARM_DESC(flows, "all: a FLOW event for every flow; ooo: only for flows with out-of-order data");

/* @lport: the flow's local port (the socket's is 0 once it is unhashed) */
static bool ooo_filter_match(const struct sock *sk, u16 lport)
{
	const struct net *net = sock_net(sk);
	u16 rport = ntohs(inet_sk(sk)->inet_dport);
	struct ooo_filter f;
	int i;

	ooo_filter_read(&f);
	if (f.netns && f.netns != net->ns.inum && f.netns != net->net_cookie)
		return false;
	if (!f.nports)
		return true;
	for (i = 0; i < f.nports; i++)
		if (f.ports[i] == lport || f.ports[i] == rport)
			return true;
	return false;
}

/* ---- statistics --------------------------------------------------------- */

/* The GET_STATS counters (STAT_*, in the uapi header), and the event number. */
static struct {
	atomic64_t events_sent;
	atomic64_t events_dropped;
	atomic64_t events_unheard;
	atomic64_t flow_overflows;
	atomic64_t range_overflows;
	atomic64_t ranges_recorded;
	atomic64_t ranges_released;
	atomic64_t ranges_duplicate;
	atomic64_t ranges_discarded;
	atomic64_t event_seq;	/* the last EVENT_SEQ handed out */
	atomic_t flows;		/* flows in the table */
} ooo_stats;

/* The kretprobes registered, set once at load. */
static struct kretprobe *ooo_active_rps[2];
static unsigned int ooo_n_active_rps;
/* a string from the start: GET_STATS may come before the hooks exist */
static const char *ooo_hook_name = "none";

/*
 * Hits the kprobe layer dropped, in two kinds:
 * - nested: the probed function was hit while a kprobe handler ran on the
 *   same CPU (kprobe_running(): kprobe_ftrace_handler(), reenter_kprobe()
 *   and the optprobe callback count it in kp.nmissed and skip the
 *   handler). The handlers here call no probed function, so such a hit is
 *   an interrupt's softirq run at irq exit on top of a handler that runs in
 *   task context with softirqs enabled (tcp_data_queue() from the socket
 *   backlog in release_sock()).
 * - no instance: pre_handler_kretprobe() found no free kretprobe instance
 *   (all maxactive in use), counted in rp->nmissed.
 */
static u64 ooo_kprobe_missed_nested(void)
{
	u64 n = 0;
	unsigned int i;

	for (i = 0; i < ooo_n_active_rps; i++)
		n += ooo_active_rps[i]->kp.nmissed;
	return n;
}

static u64 ooo_kprobe_missed_noinst(void)
{
	u64 n = 0;
	unsigned int i;

	for (i = 0; i < ooo_n_active_rps; i++)
		n += ooo_active_rps[i]->nmissed;
	return n;
}

/* ---- flow table --------------------------------------------------------- */

struct ooo_flow {
	struct hlist_node node;
	struct rcu_head rcu;
	const struct sock *sk;
	u64 t_start;		/* open, CLOCK_MONOTONIC ns */
	u16 lport;		/* local port at open, host byte order */
	u32 ooo_segs;		/* segments that added at least one range */
	u32 flags;		/* TCP_OOOPROBE_FLOW_F_* */
	struct ooo_ranges ranges;	/* recorded, not released yet */
};

static struct hlist_head ooo_flow_hash[1 << OOO_HASH_BITS];
static DEFINE_SPINLOCK(ooo_flow_lock);
static bool ooo_active;		/* false from unload on: create no flow */

static struct hlist_head *ooo_flow_bucket(const struct sock *sk)
{
	return &ooo_flow_hash[hash_ptr(sk, OOO_HASH_BITS)];
}

static struct ooo_flow *ooo_flow_lookup(const struct sock *sk)
{
	struct ooo_flow *f;

	hlist_for_each_entry_rcu(f, ooo_flow_bucket(sk), node)
		if (f->sk == sk)
			return f;
	return NULL;
}

static void ooo_flow_free(struct ooo_flow *f)
{
	if (f->ranges.nr)
		atomic64_add(f->ranges.nr, &ooo_stats.ranges_discarded);
	kfree(f->ranges.r);
	kfree_rcu(f, rcu);
}

static void ooo_flow_unlink(struct ooo_flow *f)
{
	unsigned long flags;

	spin_lock_irqsave(&ooo_flow_lock, flags);
	hlist_del_rcu(&f->node);
	atomic_dec(&ooo_stats.flows);
	spin_unlock_irqrestore(&ooo_flow_lock, flags);
}

/* Caller runs serialized with every other handler of @sk. */
static struct ooo_flow *ooo_flow_create(const struct sock *sk, u64 now, u32 fl)
{
	struct ooo_flow *f, *old;
	unsigned long flags;

	old = ooo_flow_lookup(sk);	/* stale: same address, earlier socket */
	if (old) {
		ooo_flow_unlink(old);
		ooo_flow_free(old);
	}
	if (atomic_read(&ooo_stats.flows) >= ooo_max_flows) {
		atomic64_inc(&ooo_stats.flow_overflows);
		return NULL;
	}
	f = kzalloc(sizeof(*f), GFP_ATOMIC);
	if (!f) {
		atomic64_inc(&ooo_stats.flow_overflows);
		return NULL;
	}
	f->sk = sk;
	f->lport = inet_sk(sk)->inet_num;
	f->t_start = now;
	f->flags = fl;
	spin_lock_irqsave(&ooo_flow_lock, flags);
	if (!ooo_active) {
		spin_unlock_irqrestore(&ooo_flow_lock, flags);
		kfree(f);
		return NULL;
	}
	hlist_add_head_rcu(&f->node, ooo_flow_bucket(sk));
	atomic_inc(&ooo_stats.flows);
	spin_unlock_irqrestore(&ooo_flow_lock, flags);
	return f;
}

/* The array of a flow's ranges is full: enlarge it (ooo_ranges_add()). */
static bool ooo_ranges_grow(struct ooo_ranges *rs)
{
	u32 cap = ooo_ranges_next_cap(rs->cap, ooo_max_ranges);
	struct ooo_range *r;

	if (cap <= rs->cap)
		return false;
	r = krealloc_array(rs->r, cap, sizeof(*r), GFP_ATOMIC);
	if (!r)
		return false;
	rs->r = r;
	rs->cap = cap;
	return true;
}

/*
 * Drop recorded ranges the reader already has (ofo queue pruned, or the
 * hole was filled on a path we do not probe).
 */
static void ooo_ranges_discard_below(struct ooo_flow *f, u32 rcv_nxt)
{
	u32 n = ooo_ranges_below(&f->ranges, rcv_nxt);

	if (!n)
		return;
	atomic64_add(n, &ooo_stats.ranges_discarded);
	ooo_ranges_drop(&f->ranges, n);
}

/* ---- generic netlink ---------------------------------------------------- */

static struct genl_family ooo_family;

enum { OOO_MCGRP_EVENTS };

static const struct genl_multicast_group ooo_mcgrps[] = {
	[OOO_MCGRP_EVENTS] = {
		.name = TCP_OOOPROBE_MCGRP_EVENTS,
		.flags = GENL_MCAST_CAP_NET_ADMIN,
	},
};

/* The addresses; *@family: AF_INET6, or AF_INET for v4 and v4-mapped. */
static int ooo_put_addrs(struct sk_buff *msg, const struct sock *sk,
			 u8 *family)
{
	const struct inet_sock *inet = inet_sk(sk);

#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 &&
	    !ipv6_addr_v4mapped(&sk->sk_v6_daddr)) {
		*family = AF_INET6;
		if (nla_put(msg, TCP_OOOPROBE_A_LOCAL_ADDR, 16,
			    &sk->sk_v6_rcv_saddr) ||
		    nla_put(msg, TCP_OOOPROBE_A_REMOTE_ADDR, 16,
			    &sk->sk_v6_daddr))
			return -EMSGSIZE;
		return 0;
	}
#endif
	*family = AF_INET;
	if (nla_put_in_addr(msg, TCP_OOOPROBE_A_LOCAL_ADDR,
			    inet->inet_rcv_saddr) ||
	    nla_put_in_addr(msg, TCP_OOOPROBE_A_REMOTE_ADDR,
			    inet->inet_daddr))
		return -EMSGSIZE;
	return 0;
}

/* What every event carries: the 4-tuple, netns, family and its number. */
static int ooo_put_tuple(struct sk_buff *msg, const struct sock *sk, u16 lport)
{
	const struct inet_sock *inet = inet_sk(sk);
	const struct net *net = sock_net(sk);
	u8 family;

	if (ooo_put_addrs(msg, sk, &family))
		return -EMSGSIZE;
	if (nla_put_u64_64bit(msg, TCP_OOOPROBE_A_EVENT_SEQ,
			      atomic64_inc_return(&ooo_stats.event_seq),
			      TCP_OOOPROBE_A_PAD) ||
	    nla_put_u64_64bit(msg, TCP_OOOPROBE_A_NETNS_COOKIE,
			      net->net_cookie, TCP_OOOPROBE_A_PAD) ||
	    nla_put_u8(msg, TCP_OOOPROBE_A_FAMILY, family) ||
	    nla_put_u16(msg, TCP_OOOPROBE_A_LOCAL_PORT, lport) ||
	    nla_put_u16(msg, TCP_OOOPROBE_A_REMOTE_PORT,
			ntohs(inet->inet_dport)))
		return -EMSGSIZE;
	return 0;
}

/*
 * Attribute room of an event message: the larger event, the FLOW of an IPv6
 * flow, takes 152 bytes of attributes even with an alignment pad before
 * every u64.
 */
#define OOO_EVENT_SIZE	256

static struct sk_buff *ooo_event_new(int cmd, void **hdr)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&ooo_family, &init_net, OOO_MCGRP_EVENTS)) {
		atomic64_inc(&ooo_stats.events_unheard);
		return NULL;
	}
	msg = genlmsg_new(OOO_EVENT_SIZE, GFP_ATOMIC);
	if (!msg)
		goto drop;
	*hdr = genlmsg_put(msg, 0, 0, &ooo_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		goto drop;
	}
	return msg;
drop:
	/* keep the event numbering dense: a reader sees the gap */
	atomic64_inc(&ooo_stats.event_seq);
	atomic64_inc(&ooo_stats.events_dropped);
	return NULL;
}

static void ooo_event_send(struct sk_buff *msg, void *hdr)
{
	int err;

	genlmsg_end(msg, hdr);
	/*
	 * ooo_event_new() saw a subscriber, so -ESRCH here means no subscriber
	 * took the event: netlink_broadcast() answers -ENOBUFS for a full
	 * receive buffer only to sockets with NETLINK_BROADCAST_ERROR set, and
	 * -ESRCH ("delivered to nobody") otherwise. Both are drops; counting
	 * -ESRCH as unheard hid every overrun of a plain subscriber.
	 */
	err = genlmsg_multicast(&ooo_family, msg, 0, OOO_MCGRP_EVENTS,
				GFP_ATOMIC);
	if (!err)
		atomic64_inc(&ooo_stats.events_sent);
	else
		atomic64_inc(&ooo_stats.events_dropped);
}

static void ooo_event_cancel(struct sk_buff *msg)
{
	nlmsg_free(msg);
	atomic64_inc(&ooo_stats.events_dropped);
}

/* @t_out: arrival of the segment that released @r, CLOCK_MONOTONIC ns */
static void ooo_emit_segment(const struct sock *sk, const struct ooo_flow *f,
			     const struct ooo_range *r, u64 t_out)
{
	struct sk_buff *msg;
	void *hdr;

	msg = ooo_event_new(TCP_OOOPROBE_CMD_SEGMENT, &hdr);
	if (!msg)
		return;
	if (ooo_put_tuple(msg, sk, f->lport) ||
	    nla_put_u32(msg, TCP_OOOPROBE_A_SEQ, r->seq) ||
	    nla_put_u32(msg, TCP_OOOPROBE_A_LEN, r->end - r->seq) ||
	    nla_put_u64_64bit(msg, TCP_OOOPROBE_A_TIME_IN, r->t_in,
			      TCP_OOOPROBE_A_PAD) ||
	    nla_put_u64_64bit(msg, TCP_OOOPROBE_A_TIME_OUT, t_out,
			      TCP_OOOPROBE_A_PAD)) {
		ooo_event_cancel(msg);
		return;
	}
	ooo_event_send(msg, hdr);
}

static void ooo_emit_flow(const struct sock *sk, const struct ooo_flow *f,
			  u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	/* bytes_received counts sequence space: the peer's FIN is one */
	u64 bytes = READ_ONCE(tp->bytes_received) -
		    (sock_flag(sk, SOCK_DONE) ? 1 : 0);
	struct sk_buff *msg;
	void *hdr;

	msg = ooo_event_new(TCP_OOOPROBE_CMD_FLOW, &hdr);
	if (!msg)
		return;
	if (ooo_put_tuple(msg, sk, f->lport) ||
	    nla_put_u32(msg, TCP_OOOPROBE_A_DATA_SEGS_IN,
			READ_ONCE(tp->data_segs_in)) ||
	    nla_put_u32(msg, TCP_OOOPROBE_A_OOO_SEGS, f->ooo_segs) ||
	    nla_put_u64_64bit(msg, TCP_OOOPROBE_A_BYTES_RECEIVED, bytes,
			      TCP_OOOPROBE_A_PAD) ||
	    nla_put_u64_64bit(msg, TCP_OOOPROBE_A_LIFETIME_NS,
			      now - f->t_start, TCP_OOOPROBE_A_PAD) ||
	    nla_put_u32(msg, TCP_OOOPROBE_A_FLOW_FLAGS, f->flags)) {
		ooo_event_cancel(msg);
		return;
	}
	ooo_event_send(msg, hdr);
}

static const struct nla_policy ooo_policy[TCP_OOOPROBE_A_MAX + 1] = {
	[TCP_OOOPROBE_A_EVENT_SEQ]		= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_NETNS_COOKIE]		= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_FAMILY]			= { .type = NLA_U8 },
	[TCP_OOOPROBE_A_LOCAL_ADDR]		= { .type = NLA_BINARY, .len = 16 },
	[TCP_OOOPROBE_A_REMOTE_ADDR]		= { .type = NLA_BINARY, .len = 16 },
	[TCP_OOOPROBE_A_LOCAL_PORT]		= { .type = NLA_U16 },
	[TCP_OOOPROBE_A_REMOTE_PORT]		= { .type = NLA_U16 },
	[TCP_OOOPROBE_A_SEQ]			= { .type = NLA_U32 },
	[TCP_OOOPROBE_A_LEN]			= { .type = NLA_U32 },
	[TCP_OOOPROBE_A_TIME_IN]		= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_TIME_OUT]		= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_DATA_SEGS_IN]		= { .type = NLA_U32 },
	[TCP_OOOPROBE_A_OOO_SEGS]		= { .type = NLA_U32 },
	[TCP_OOOPROBE_A_BYTES_RECEIVED]		= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_LIFETIME_NS]		= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_FLOW_FLAGS]		= { .type = NLA_U32 },
	/* length checked in doit: a .len here answers -ERANGE, not -EINVAL */
	[TCP_OOOPROBE_A_FILTER_PORTS]		= { .type = NLA_BINARY },
	[TCP_OOOPROBE_A_FILTER_NETNS]		= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_FILTER_FLOWS]		= { .type = NLA_U8 },	/* range: doit */
	[TCP_OOOPROBE_A_STAT_EVENTS_SENT]	= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_EVENTS_DROPPED]	= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_EVENTS_UNHEARD]	= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_FLOWS_TRACKED]	= { .type = NLA_U32 },
	[TCP_OOOPROBE_A_STAT_FLOW_OVERFLOWS]	= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_RANGE_OVERFLOWS]	= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_RANGES_RECORDED]	= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_RANGES_RELEASED]	= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_RANGES_DUPLICATE]	= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_RANGES_DISCARDED]	= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_HOOK]		= { .type = NLA_NUL_STRING, .len = 64 },
	[TCP_OOOPROBE_A_STAT_KPROBE_MISSED]	= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_KPROBE_MISSED_NESTED] = { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_KPROBE_MISSED_NOINST] = { .type = NLA_U64 },
};

static int ooo_put_u64(struct sk_buff *msg, int type, u64 v)
{
	return nla_put_u64_64bit(msg, type, v, TCP_OOOPROBE_A_PAD);
}

static int ooo_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	u64 nested = ooo_kprobe_missed_nested();
	u64 noinst = ooo_kprobe_missed_noinst();
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ooo_family, 0,
				TCP_OOOPROBE_CMD_GET_STATS);
	if (!hdr)
		goto nospace;
	if (ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_EVENTS_SENT,
			atomic64_read(&ooo_stats.events_sent)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_EVENTS_DROPPED,
			atomic64_read(&ooo_stats.events_dropped)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_EVENTS_UNHEARD,
			atomic64_read(&ooo_stats.events_unheard)) ||
	    nla_put_u32(msg, TCP_OOOPROBE_A_STAT_FLOWS_TRACKED,
			atomic_read(&ooo_stats.flows)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_FLOW_OVERFLOWS,
			atomic64_read(&ooo_stats.flow_overflows)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_RANGE_OVERFLOWS,
			atomic64_read(&ooo_stats.range_overflows)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_RANGES_RECORDED,
			atomic64_read(&ooo_stats.ranges_recorded)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_RANGES_RELEASED,
			atomic64_read(&ooo_stats.ranges_released)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_RANGES_DUPLICATE,
			atomic64_read(&ooo_stats.ranges_duplicate)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_RANGES_DISCARDED,
			atomic64_read(&ooo_stats.ranges_discarded)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_EVENT_SEQ,
			atomic64_read(&ooo_stats.event_seq)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_KPROBE_MISSED,
			nested + noinst) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_KPROBE_MISSED_NESTED,
			nested) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_KPROBE_MISSED_NOINST,
			noinst) ||
	    nla_put_string(msg, TCP_OOOPROBE_A_STAT_HOOK, ooo_hook_name))
		goto nospace;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static int ooo_get_filter(struct sk_buff *skb, struct genl_info *info)
{
	struct ooo_filter f;
	struct sk_buff *msg;
	void *hdr;

	ooo_filter_read(&f);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ooo_family, 0,
				TCP_OOOPROBE_CMD_GET_FILTER);
	if (!hdr ||
	    nla_put(msg, TCP_OOOPROBE_A_FILTER_PORTS,
		    f.nports * sizeof(u16), f.ports) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_FILTER_NETNS, f.netns) ||
	    nla_put_u8(msg, TCP_OOOPROBE_A_FILTER_FLOWS, f.flows)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/* Every attribute given is validated before any is applied. */
static int ooo_set_filter(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct ooo_filter f;
	int i, len;

	ooo_filter_read(&f);
	if (a[TCP_OOOPROBE_A_FILTER_PORTS]) {
		const u16 *p = nla_data(a[TCP_OOOPROBE_A_FILTER_PORTS]);

		len = nla_len(a[TCP_OOOPROBE_A_FILTER_PORTS]);
		if (len > 2 * TCP_OOOPROBE_MAX_PORTS) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    a[TCP_OOOPROBE_A_FILTER_PORTS],
					    "ports: too many");
			return -EINVAL;
		}
		if (len % sizeof(u16)) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    a[TCP_OOOPROBE_A_FILTER_PORTS],
					    "ports: array of u16 expected");
			return -EINVAL;
		}
		for (i = 0; i < len / sizeof(u16); i++) {
			if (!p[i]) {
				NL_SET_ERR_MSG_ATTR(info->extack,
						    a[TCP_OOOPROBE_A_FILTER_PORTS],
						    "port 0 is not a port");
				return -EINVAL;
			}
			f.ports[i] = p[i];
		}
		f.nports = len / sizeof(u16);
	}
	if (a[TCP_OOOPROBE_A_FILTER_NETNS])
		f.netns = nla_get_u64(a[TCP_OOOPROBE_A_FILTER_NETNS]);
	if (a[TCP_OOOPROBE_A_FILTER_FLOWS]) {
		/* checked here, not by NLA_POLICY_MAX: that answers -ERANGE */
		if (nla_get_u8(a[TCP_OOOPROBE_A_FILTER_FLOWS]) >
		    TCP_OOOPROBE_FLOWS_OOO) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    a[TCP_OOOPROBE_A_FILTER_FLOWS],
					    "flows: 0 (all) or 1 (ooo)");
			return -EINVAL;
		}
		f.flows = nla_get_u8(a[TCP_OOOPROBE_A_FILTER_FLOWS]);
	}
	ooo_filter_write(&f);
	return 0;
}

/*
 * Every command needs CAP_NET_ADMIN in the caller's user namespace: the
 * counters and the filter reveal which ports and namespaces are watched.
 */
static const struct genl_small_ops ooo_ops[] = {
	{
		.cmd = TCP_OOOPROBE_CMD_GET_STATS,
		.doit = ooo_get_stats,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TCP_OOOPROBE_CMD_SET_FILTER,
		.doit = ooo_set_filter,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = TCP_OOOPROBE_CMD_GET_FILTER,
		.doit = ooo_get_filter,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family ooo_family = {
	.name = TCP_OOOPROBE_GENL_NAME,
	.version = TCP_OOOPROBE_GENL_VERSION,
	.maxattr = TCP_OOOPROBE_A_MAX,
	.policy = ooo_policy,
	.netnsok = false,
	.module = THIS_MODULE,
	.small_ops = ooo_ops,
	.n_small_ops = ARRAY_SIZE(ooo_ops),
	.mcgrps = ooo_mcgrps,
	.n_mcgrps = ARRAY_SIZE(ooo_mcgrps),
};

/* ---- probe handlers ----------------------------------------------------- */

/* The states in which a socket still takes data from its peer. */
static bool ooo_rcv_state(const struct sock *sk)
{
	return (1 << READ_ONCE(sk->sk_state)) &
	       (TCPF_ESTABLISHED | TCPF_FIN_WAIT1 | TCPF_FIN_WAIT2);
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define ooo_skb_tstamp_is_real(skb)	((skb)->tstamp_type == SKB_CLOCK_REALTIME)
#else
#define ooo_skb_tstamp_is_real(skb)	(!(skb)->mono_delivery_time)
#endif

/*
 * A stamp older than this, or ahead of now, is not the segment's arrival
 * (the stamp is stale, or the realtime clock was set in between): use the
 * processing time instead. A segment waits in the socket backlog only
 * while the reader holds the socket lock, far less than this.
 */
#define OOO_STAMP_MAX_AGE_NS	(10 * (s64)NSEC_PER_SEC)

/*
 * When the segment reached the device (CLOCK_MONOTONIC ns). With
 * skb_time the stack stamps every received skb (net_enable_timestamp(),
 * CLOCK_REALTIME), so a segment that waited in the socket backlog while the
 * reader held the socket lock still gets its arrival time.
 */
static u64 ooo_skb_arrival_ns(const struct sk_buff *skb)
{
	u64 now = ktime_get_ns();
	s64 t = ktime_to_ns(skb->tstamp), age;

	if (!ooo_skb_time || !t || !ooo_skb_tstamp_is_real(skb))
		return now;
	/*
	 * realtime - monotonic from one consistent snapshot of the offset:
	 * two separate clock reads would shift the result by any stall (an
	 * interrupt, a descheduled vCPU) between them.
	 */
	t -= ktime_to_ns(ktime_mono_to_real(0));
	age = now - t;
	if (age < 0 || age > OOO_STAMP_MAX_AGE_NS)
		return now;
	return t;
}

/* A data segment beyond rcv_nxt arrived: record what it adds. */
static void ooo_record(struct sock *sk, const struct sk_buff *skb)
{
	const struct tcp_skb_cb *cb = TCP_SKB_CB(skb);
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 rcv_nxt = tp->rcv_nxt, seq = cb->seq, end = cb->end_seq;
	u64 now = ooo_skb_arrival_ns(skb);
	struct ooo_flow *f;
	int added;

	if (cb->tcp_flags & TCPHDR_FIN)
		end--;
	if (!after(end, seq) || !ooo_rcv_state(sk))
		return;
	/* beyond the window: tcp_data_queue() drops it */
	if (!before(seq, rcv_nxt + tcp_receive_window(tp)))
		return;

	rcu_read_lock();
	f = ooo_flow_lookup(sk);
	if (!f) {
		if (!ooo_filter_match(sk, inet_sk(sk)->inet_num))
			goto out;
		f = ooo_flow_create(sk, now, TCP_OOOPROBE_FLOW_F_PARTIAL);
		if (!f)
			goto out;
	}
	ooo_ranges_discard_below(f, rcv_nxt);
	added = ooo_ranges_add(&f->ranges, seq, end, now, ooo_ranges_grow);
	if (added > 0) {
		f->ooo_segs++;
		atomic64_add(added, &ooo_stats.ranges_recorded);
	} else if (!added) {
		atomic64_inc(&ooo_stats.ranges_duplicate);
	} else {
		/* max_ranges reached, or no memory */
		atomic64_inc(&ooo_stats.range_overflows);
		f->flags |= TCP_OOOPROBE_FLOW_F_RANGE_OVF;
	}
out:
	rcu_read_unlock();
}

/*
 * rcv_nxt may have moved: report every range the reader can now have.
 * @now: arrival time of the segment that moved it.
 */
static void ooo_release(struct sock *sk, u64 now)
{
	struct ooo_flow *f;
	u32 n, i;

	rcu_read_lock();
	f = ooo_flow_lookup(sk);	/* gone if the socket closed meanwhile */
	if (!f || !f->ranges.nr)
		goto out;
	n = ooo_ranges_below(&f->ranges, tcp_sk(sk)->rcv_nxt);
	if (!n)
		goto out;
	if (ooo_filter_match(sk, f->lport))
		for (i = 0; i < n; i++)
			ooo_emit_segment(sk, f, &f->ranges.r[i], now);
	atomic64_add(n, &ooo_stats.ranges_released);
	ooo_ranges_drop(&f->ranges, n);
out:
	rcu_read_unlock();
}

/* Kept in the kretprobe instance from entry to return. */
struct ooo_dq_data {
	struct sock *sk;
	u64 t_arrival;		/* CLOCK_MONOTONIC ns */
};

static int ooo_dq_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sock *sk = (struct sock *)regs_get_kernel_argument(regs, 0);
	struct sk_buff *skb = (struct sk_buff *)regs_get_kernel_argument(regs, 1);
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ooo_dq_data *d = (struct ooo_dq_data *)ri->data;

	/* The fast path: in order and nothing held. */
	if (!after(TCP_SKB_CB(skb)->seq, READ_ONCE(tp->rcv_nxt))) {
		if (RB_EMPTY_ROOT(&tp->out_of_order_queue))
			return 1;
		d->sk = sk;
		d->t_arrival = ooo_skb_arrival_ns(skb);
		return 0;	/* may fill a hole: look at the return */
	}
	ooo_record(sk, skb);
	return 1;		/* rcv_nxt cannot move for this segment */
}

static int ooo_dq_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct ooo_dq_data *d = (struct ooo_dq_data *)ri->data;

	ooo_release(d->sk, d->t_arrival);
	return 0;
}

/*
 * sock:inet_sock_set_state, called just before sk_state changes: open a
 * flow at ESTABLISHED, close it at CLOSE. Fires for every inet protocol.
 */
static void ooo_set_state_tp(void *data, const struct sock *sk, const int old,
			     const int state)
{
	struct ooo_flow *f;
	u64 now;

	if (sk->sk_protocol != IPPROTO_TCP || sk->sk_type != SOCK_STREAM ||
	    state == old || (state != TCP_ESTABLISHED && state != TCP_CLOSE))
		return;
	now = ktime_get_ns();
	rcu_read_lock();
	if (state == TCP_ESTABLISHED) {
		if (ooo_filter_match(sk, inet_sk(sk)->inet_num))
			ooo_flow_create(sk, now, 0);
		goto out;
	}
	f = ooo_flow_lookup(sk);
	if (!f)
		goto out;
	ooo_flow_unlink(f);
	if (ooo_filter_match(sk, f->lport)) {
		struct ooo_filter flt;

		ooo_filter_read(&flt);
		if (flt.flows == TCP_OOOPROBE_FLOWS_ALL || f->ooo_segs)
			ooo_emit_flow(sk, f, now);
	}
	ooo_flow_free(f);
out:
	rcu_read_unlock();
}

/* ---- hooks -------------------------------------------------------------- */

/*
 * kretprobe instances per probed function. One is held from entry to
 * return only while an in-order segment meets a non-empty out-of-order
 * queue: per CPU, one per nesting level (task, softirq), with room to
 * spare. NR_CPUS is the build's maximum, not the machine's, hence the cap.
 */
#define OOO_DQ_MAXACTIVE	(4 * NR_CPUS > 256 ? 256 : 4 * NR_CPUS + 16)

static struct kretprobe ooo_dq_probes[] = {
	{
		.kp.symbol_name = "tcp_data_queue",
		.entry_handler = ooo_dq_entry,
		.handler = ooo_dq_return,
		.data_size = sizeof(struct ooo_dq_data),
	},
	{
		.kp.symbol_name = "tcp_rcv_established",
		.entry_handler = ooo_dq_entry,
		.handler = ooo_dq_return,
		.data_size = sizeof(struct ooo_dq_data),
	},
	{
		.kp.symbol_name = "tcp_rcv_state_process",
		.entry_handler = ooo_dq_entry,
		.handler = ooo_dq_return,
		.data_size = sizeof(struct ooo_dq_data),
	},
};

static struct tracepoint *ooo_state_tp;

/* The tracepoint is not exported to modules: look it up by name. */
static void ooo_state_tp_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "inet_sock_set_state"))
		*(struct tracepoint **)priv = tp;
}

static int ooo_register_state_hook(void)
{
	int err;

	for_each_kernel_tracepoint(ooo_state_tp_find, &ooo_state_tp);
	if (!ooo_state_tp) {
		pr_err("no tracepoint sock:inet_sock_set_state in this kernel\n");
		return -ENOENT;
	}
	err = tracepoint_probe_register(ooo_state_tp, ooo_set_state_tp, NULL);
	if (err)
		pr_err("cannot attach to sock:inet_sock_set_state (%d)\n", err);
	return err;
}

static void ooo_unregister_state_hook(void)
{
	tracepoint_probe_unregister(ooo_state_tp, ooo_set_state_tp, NULL);
	tracepoint_synchronize_unregister();
}

static int ooo_register_hooks(void)
{
	bool want_dq = strcmp(ooo_hook, "rcv");
	bool want_rcv = strcmp(ooo_hook, "data_queue");
	int err = -ENOENT, err2, i;

	if (strcmp(ooo_hook, "auto") && want_dq == want_rcv) {
		pr_err("hook=%s: use auto, data_queue or rcv\n", ooo_hook);
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(ooo_dq_probes); i++)
		ooo_dq_probes[i].maxactive = OOO_DQ_MAXACTIVE;

	if (want_dq) {
		err = register_kretprobe(&ooo_dq_probes[0]);
		if (!err) {
			ooo_active_rps[0] = &ooo_dq_probes[0];
			ooo_n_active_rps = 1;
			ooo_hook_name = "tcp_data_queue";
			return 0;
		}
		if (want_rcv)
			pr_info("cannot probe tcp_data_queue (%d), falling back to tcp_rcv_established + tcp_rcv_state_process\n",
				err);
		else
			pr_info("cannot probe tcp_data_queue (%d)\n", err);
	}
	if (!want_rcv)
		goto fail;
	err = register_kretprobe(&ooo_dq_probes[1]);
	if (err)
		goto fail;
	err2 = register_kretprobe(&ooo_dq_probes[2]);
	if (err2) {
		unregister_kretprobe(&ooo_dq_probes[1]);
		err = err2;
		goto fail;
	}
	ooo_active_rps[0] = &ooo_dq_probes[1];
	ooo_active_rps[1] = &ooo_dq_probes[2];
	ooo_n_active_rps = 2;
	ooo_hook_name = "tcp_rcv_established+tcp_rcv_state_process";
	return 0;
fail:
	pr_err("cannot probe tcp_data_queue nor tcp_rcv_established/tcp_rcv_state_process (%d): kernel without CONFIG_KPROBES or symbols blacklisted\n",
	       err);
	return err;
}

/* ---- module ------------------------------------------------------------- */

static void ooo_flows_free_all(void)
{
	struct ooo_flow *f;
	struct hlist_node *tmp;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&ooo_flow_lock, flags);
	ooo_active = false;
	for (i = 0; i < ARRAY_SIZE(ooo_flow_hash); i++) {
		hlist_for_each_entry_safe(f, tmp, &ooo_flow_hash[i], node) {
			hlist_del_rcu(&f->node);
			atomic_dec(&ooo_stats.flows);
			ooo_flow_free(f);
		}
	}
	spin_unlock_irqrestore(&ooo_flow_lock, flags);
}

static int __init ooo_init(void)
{
	unsigned int i;
	int err;

	if (!ooo_max_flows || ooo_max_flows > (1U << 20)) {
		pr_err("max_flows=%u: must be 1..1048576\n", ooo_max_flows);
		return -EINVAL;
	}
	if (!ooo_max_ranges || ooo_max_ranges > 65536) {
		pr_err("max_ranges=%u: must be 1..65536\n", ooo_max_ranges);
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(ooo_flow_hash); i++)
		INIT_HLIST_HEAD(&ooo_flow_hash[i]);
	ooo_active = true;

	err = genl_register_family(&ooo_family);
	if (err) {
		pr_err("cannot register generic netlink family %s (%d)\n",
		       TCP_OOOPROBE_GENL_NAME, err);
		return err;
	}
	err = ooo_register_state_hook();
	if (err)
		goto out_family;
	if (ooo_skb_time)
		net_enable_timestamp();
	err = ooo_register_hooks();
	if (err)
		goto out_tstamp;
	pr_info("probing %s; max_flows=%u max_ranges=%u\n", ooo_hook_name,
		ooo_max_flows, ooo_max_ranges);
	return 0;

out_tstamp:
	if (ooo_skb_time)
		net_disable_timestamp();
	ooo_unregister_state_hook();
out_family:
	genl_unregister_family(&ooo_family);
	return err;
}

static void __exit ooo_exit(void)
{
	unsigned int i;

	unregister_kretprobes(ooo_active_rps, ooo_n_active_rps);
	ooo_unregister_state_hook();
	/* no handler runs any more (unregister waits for them) */
	ooo_flows_free_all();
	if (ooo_skb_time)
		net_disable_timestamp();
	genl_unregister_family(&ooo_family);
	rcu_barrier();	/* kfree_rcu() callbacks */
	for (i = 0; i < ooo_n_active_rps; i++)
		if (ooo_active_rps[i]->nmissed || ooo_active_rps[i]->kp.nmissed)
			pr_info("%s: %lu hits missed nested in another probe handler, %d for want of a kretprobe instance (maxactive %d)\n",
				ooo_active_rps[i]->kp.symbol_name,
				ooo_active_rps[i]->kp.nmissed,
				ooo_active_rps[i]->nmissed,
				ooo_active_rps[i]->maxactive);
}

module_init(ooo_init);
module_exit(ooo_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("TCP out-of-order queue delay probe (generic netlink "
		   TCP_OOOPROBE_GENL_NAME ")");
