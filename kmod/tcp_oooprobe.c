// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_oooprobe: how long do out-of-order TCP segments wait in the receive
 * side's out-of-order queue before the application can read them?
 *
 * Hooks. A kretprobe on tcp_data_queue() (a local symbol; tcp_data_queue_ofo()
 * and tcp_ofo_queue() are inlined in distribution kernels) sees every data
 * segment a socket queues. Its entry handler looks at the segment's seq
 * against rcv_nxt:
 * - beyond rcv_nxt: the segment is out of order. Unless it is empty,
 *   beyond the receive window (tcp_data_queue() drops it) or the socket no
 *   longer receives, its sequence range (less a FIN's sequence number) and
 *   arrival time are kept in the kretprobe instance. At return, only the
 *   parts of it the out-of-order queue now holds are recorded: the kernel
 *   may have dropped it (no receive memory, tcp_try_rmem_schedule()) or
 *   coalesced it into a neighbour, so the handler looks the range up in
 *   the queue's rbtree rather than trusting the skb it was handed.
 * - at or below rcv_nxt, the out-of-order queue empty: nothing is held,
 *   nothing to do (the fast path).
 * - at or below rcv_nxt, segments held: the segment may fill a hole. Its
 *   arrival time is kept in the kretprobe instance; at return, every
 *   recorded range at or below the new rcv_nxt has been released to the
 *   reader and is reported as a SEGMENT event, its time out being that
 *   arrival time.
 * Stale ranges. tcp_prune_ofo_queue() drops out-of-order data from the
 * highest sequence numbers down without telling anyone; it runs only inside
 * tcp_data_queue(). Whenever a handler looks at a flow it drops (counted as
 * discarded) the ranges the queue no longer holds: all of them when the
 * queue is empty (then no range can be held, whatever its sequence numbers
 * compare as after 2^31 bytes of in-order data), otherwise those at or
 * below rcv_nxt and, from the highest down, those no skb of the queue
 * overlaps any more (the pruned ones). A range is only ever released while the
 * queue is not empty, and the segment that made it non-empty went through
 * the out-of-order path first, which drops what was left from before: a
 * stale range is never reported.
 * When tcp_data_queue is not in kallsyms (or hook=rcv), the same handlers
 * run on tcp_rcv_established() + tcp_rcv_state_process().
 *
 * Ranges (ooo_ranges.h). A flow's recorded ranges are a sorted array of
 * disjoint sequence ranges. A segment adds only the parts not recorded yet,
 * one range per gap, so a retransmission of held data keeps the first
 * arrival time; adjacent ranges stay apart, one SEGMENT event each. Before
 * a segment is recorded, the ranges the reader already has are discarded
 * (the ofo queue was pruned, or the hole was filled on a path not probed).
 * Memory. A peer decides how many ranges a flow has (one per hole it keeps
 * open), so every byte of it is bounded three ways:
 * - per flow, by what its receive buffer could hold as separate skbs:
 *   sk_rcvbuf / SKB_TRUESIZE(1), the smallest charge of one queued skb
 *   (ooo_ranges_limit()), and by max_ranges;
 * - globally, by max_range_bytes: the bytes of every flow's array
 *   (STAT_RANGE_BYTES); a growth beyond it is refused and counted
 *   (STAT_RANGE_BUDGET_REFUSED);
 * - in time: an array is freed as soon as it empties (the hole filled).
 * The array doubles from 16 ranges (256 bytes) to 256 (one 4 KiB page),
 * each size from its own slab cache (oooprobe_ranges_N: never merged with
 * another cache, so /proc/slabinfo shows exactly the probe's arrays and a
 * leak is reported when the module unloads); only a max_ranges raised
 * above 256 asks kmalloc() for more than a page. Every allocation a peer
 * can cause is GFP_ATOMIC | __GFP_NOWARN: under memory pressure it fails
 * quietly and is counted. A segment that does not fit is recorded up to
 * the last gap that fit, counted as a range overflow, and the flow is
 * flagged RANGE_OVF.
 *
 * Flows. With flows=all the sock:inet_sock_set_state tracepoint opens a
 * flow at TCP_ESTABLISHED; with flows=ooo a flow is only created at its
 * first out-of-order segment the kernel queued (a clean flow costs nothing,
 * and its lifetime counts from there). The tracepoint closes a flow (FLOW
 * event, state freed) at TCP_CLOSE, which every full socket passes through
 * before it is destroyed. A
 * tracepoint, not a kprobe on tcp_set_state(): the kprobe layer skips a hit
 * that nests in another kprobe handler on the same CPU, and a skipped close
 * leaked its flow. At TCP_CLOSE the socket is already unhashed (local port
 * 0), so a flow keeps the local port it had when it was opened. A socket
 * with no flow yet with flows=all (e.g. established before the module was
 * loaded) gets one at its first out-of-order segment, flagged PARTIAL.
 * Ranges still held at close count as discarded. Flow structures come from
 * their own slab cache (oooprobe_flow), at most max_flows of them.
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
 * hash keyed by the socket pointer, sized from max_flows (two flows per
 * bucket when full); a writer locks only its bucket (a bit lock in the
 * bucket head, with interrupts off: handlers run in kprobe context, where
 * turning softirqs back on is not allowed). The counters are per CPU; the
 * flow count and the range bytes, which enforce limits, are atomics
 * touched only when a flow or an array is created or freed. The filter is
 * read under a seqlock and changed (module parameters, SET_FILTER) under
 * one mutex, each change a read-modify-write of the whole filter.
 *
 * Cost when no flow has out-of-order data: the entry handler reads the
 * segment's seq, rcv_nxt and the root of the ofo rbtree and returns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/list_bl.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rculist_bl.h>
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

/* ---- parameters and filter --------------------------------------------- */

struct ooo_filter {
	u16 ports[TCP_OOOPROBE_MAX_PORTS];	/* host byte order */
	u8 nports;
	u8 flows;		/* enum tcp_oooprobe_flows */
	u64 netns;		/* inode or cookie, 0 = any */
};

static DEFINE_SEQLOCK(ooo_filter_lock);
/* written under ooo_filter_mutex and ooo_filter_lock, read under either */
static struct ooo_filter ooo_filter_cur;
/* one writer at a time: each change reads, modifies and writes it whole */
static DEFINE_MUTEX(ooo_filter_mutex);

static unsigned int ooo_max_flows = 65536;
module_param_named(max_flows, ooo_max_flows, uint, 0444);
MODULE_PARM_DESC(max_flows, "maximum number of flows tracked at once (1..1048576)");

/*
 * 256 ranges of 16 bytes: one page per flow at most, from a slab cache.
 * Up to 65536 (1 MiB), but above 256 an array is a higher-order kmalloc().
 */
static unsigned int ooo_max_ranges = 256;
module_param_named(max_ranges, ooo_max_ranges, uint, 0444);
MODULE_PARM_DESC(max_ranges, "maximum out-of-order ranges recorded per flow (1..65536; above 256 an array is more than a page)");

/*
 * The bytes all flows' range arrays may take together: 32 MiB is 8192
 * flows each holding a full page of ranges. Lowering it at run time
 * refuses growth until enough arrays were freed; it shrinks none.
 */
static unsigned long ooo_max_range_bytes = 32UL << 20;
module_param_named(max_range_bytes, ooo_max_range_bytes, ulong, 0644);
MODULE_PARM_DESC(max_range_bytes, "bytes all flows' range arrays may take together (counted in GET_STATS)");

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

/* Caller holds ooo_filter_mutex from ooo_filter_begin() on. */
static void ooo_filter_write(const struct ooo_filter *in)
{
	unsigned long flags;

	lockdep_assert_held(&ooo_filter_mutex);
	write_seqlock_irqsave(&ooo_filter_lock, flags);
	ooo_filter_cur = *in;
	write_sequnlock_irqrestore(&ooo_filter_lock, flags);
}

/* Start a change of the filter: *@out is a copy to modify. */
static void ooo_filter_begin(struct ooo_filter *out)
{
	mutex_lock(&ooo_filter_mutex);
	*out = ooo_filter_cur;
}

static void ooo_filter_end(void)
{
	mutex_unlock(&ooo_filter_mutex);
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

	ooo_filter_begin(&f);
	err = ooo_parse_ports(val, &f);
	if (!err)
		ooo_filter_write(&f);
	ooo_filter_end();
	return err;
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
	ooo_filter_begin(&f);
	f.netns = v;
	ooo_filter_write(&f);
	ooo_filter_end();
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
	u8 flows;

	if (sysfs_streq(val, "all"))
		flows = TCP_OOOPROBE_FLOWS_ALL;
	else if (sysfs_streq(val, "ooo"))
		flows = TCP_OOOPROBE_FLOWS_OOO;
	else
		return -EINVAL;
	ooo_filter_begin(&f);
	f.flows = flows;
	ooo_filter_write(&f);
	ooo_filter_end();
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

/*
 * @lport: the flow's local port (the socket's is 0 once it is unhashed)
 * @f: the filter, as ooo_filter_read() gave it
 */
static bool ooo_filter_match(const struct sock *sk, u16 lport,
			     const struct ooo_filter *f)
{
	const struct net *net = sock_net(sk);
	u16 rport = ntohs(inet_sk(sk)->inet_dport);
	int i;

	if (f->netns && f->netns != net->ns.inum && f->netns != net->net_cookie)
		return false;
	if (!f->nports)
		return true;
	for (i = 0; i < f->nports; i++)
		if (f->ports[i] == lport || f->ports[i] == rport)
			return true;
	return false;
}

/* ---- statistics --------------------------------------------------------- */

/*
 * The GET_STATS counters (STAT_*, in the uapi header), per CPU: they count
 * on the segment path; GET_STATS sums them. Each is a count of events.
 */
struct ooo_pcpu_stats {
	u64 events_sent;
	u64 events_dropped;
	u64 events_unheard;
	u64 flow_overflows;
	u64 range_overflows;
	u64 ranges_recorded;
	u64 ranges_released;
	u64 ranges_duplicate;
	u64 ranges_discarded;
	u64 range_budget_refused;	/* growths max_range_bytes refused */
	u64 segs_not_queued;		/* out of order, but not queued */
};

static DEFINE_PER_CPU(struct ooo_pcpu_stats, ooo_pcpu_stats);

#define OOO_STAT_ADD(field, n)	this_cpu_add(ooo_pcpu_stats.field, (n))
#define OOO_STAT_INC(field)	this_cpu_inc(ooo_pcpu_stats.field)

static void ooo_stats_sum(struct ooo_pcpu_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct ooo_pcpu_stats *c = per_cpu_ptr(&ooo_pcpu_stats, cpu);

		sum->events_sent += READ_ONCE(c->events_sent);
		sum->events_dropped += READ_ONCE(c->events_dropped);
		sum->events_unheard += READ_ONCE(c->events_unheard);
		sum->flow_overflows += READ_ONCE(c->flow_overflows);
		sum->range_overflows += READ_ONCE(c->range_overflows);
		sum->ranges_recorded += READ_ONCE(c->ranges_recorded);
		sum->ranges_released += READ_ONCE(c->ranges_released);
		sum->ranges_duplicate += READ_ONCE(c->ranges_duplicate);
		sum->ranges_discarded += READ_ONCE(c->ranges_discarded);
		sum->range_budget_refused += READ_ONCE(c->range_budget_refused);
		sum->segs_not_queued += READ_ONCE(c->segs_not_queued);
	}
}

/* The last EVENT_SEQ handed out: one module-wide sequence. */
static atomic64_t ooo_event_seq;
/* Flows in the table: at most max_flows. */
static atomic_t ooo_nflows;
/* Bytes of all flows' range arrays: at most max_range_bytes. */
static atomic_long_t ooo_range_bytes;

/*
 * The kretprobes registered, set once at load: the array is filled before
 * the count is published (release), and read after it (acquire).
 */
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
	/* pairs with the release in ooo_register_hooks(): entries are set */
	unsigned int i, nr = smp_load_acquire(&ooo_n_active_rps);
	u64 n = 0;

	for (i = 0; i < nr; i++)
		n += ooo_active_rps[i]->kp.nmissed;
	return n;
}

static u64 ooo_kprobe_missed_noinst(void)
{
	/* pairs with the release in ooo_register_hooks(): entries are set */
	unsigned int i, nr = smp_load_acquire(&ooo_n_active_rps);
	u64 n = 0;

	for (i = 0; i < nr; i++)
		n += ooo_active_rps[i]->nmissed;
	return n;
}

/* ---- flow table --------------------------------------------------------- */

struct ooo_flow {
	struct hlist_bl_node node;
	struct rcu_head rcu;
	const struct sock *sk;
	u64 t_start;		/* open, CLOCK_MONOTONIC ns */
	u16 lport;		/* local port at open, host byte order */
	u32 ooo_segs;		/* segments that added at least one range */
	u32 flags;		/* TCP_OOOPROBE_FLOW_F_* */
	u32 range_limit;	/* ranges it may hold: set before each add */
	struct ooo_ranges ranges;	/* recorded, not released yet */
};

static struct hlist_bl_head *ooo_flow_hash;	/* 1 << ooo_hash_bits heads */
static unsigned int ooo_hash_bits;
static bool ooo_active;		/* false from unload on: create no flow */

static struct kmem_cache *ooo_flow_cache;

/*
 * Range arrays of 16, 32, 64, 128 and 256 ranges (256 bytes to one 4 KiB
 * page), one slab cache each; larger arrays (max_ranges above 256) are
 * kmalloc()ed.
 */
#define OOO_RANGE_CLASSES	5
#define OOO_RANGE_CLASS_MAX	(OOO_RANGES_FIRST_CAP << (OOO_RANGE_CLASSES - 1))

static struct kmem_cache *ooo_range_cache[OOO_RANGE_CLASSES];

/* The cache of an array of @cap ranges, or -1 for kmalloc(). */
static int ooo_range_class(u32 cap)
{
	if (cap > OOO_RANGE_CLASS_MAX)
		return -1;
	if (cap <= OOO_RANGES_FIRST_CAP)
		return 0;
	return order_base_2(cap) - ilog2(OOO_RANGES_FIRST_CAP);
}

/* Bytes an array of @cap ranges takes: its cache's object size. */
static unsigned long ooo_range_alloc_bytes(u32 cap)
{
	int c = ooo_range_class(cap);

	if (!cap)
		return 0;
	if (c < 0)
		return (unsigned long)cap * sizeof(struct ooo_range);
	return (unsigned long)(OOO_RANGES_FIRST_CAP << c) *
	       sizeof(struct ooo_range);
}

static struct ooo_range *ooo_range_alloc(u32 cap)
{
	int c = ooo_range_class(cap);

	if (c < 0)
		return kmalloc_array(cap, sizeof(struct ooo_range),
				     GFP_ATOMIC | __GFP_NOWARN);
	return kmem_cache_alloc(ooo_range_cache[c], GFP_ATOMIC | __GFP_NOWARN);
}

static void ooo_range_free(struct ooo_range *r, u32 cap)
{
	int c = ooo_range_class(cap);

	if (!r)
		return;
	if (c < 0)
		kfree(r);
	else
		kmem_cache_free(ooo_range_cache[c], r);
}

/* An empty set gives its array back. */
static void ooo_ranges_trim(struct ooo_ranges *rs)
{
	if (rs->nr || !rs->cap)
		return;
	ooo_range_free(rs->r, rs->cap);
	atomic_long_sub(ooo_range_alloc_bytes(rs->cap), &ooo_range_bytes);
	rs->r = NULL;
	rs->cap = 0;
}

/*
 * The array of a flow's ranges is full: enlarge it (ooo_ranges_add()), if
 * the flow's limit and the global budget allow.
 */
static bool ooo_ranges_grow(struct ooo_ranges *rs)
{
	struct ooo_flow *f = container_of(rs, struct ooo_flow, ranges);
	u32 cap = ooo_ranges_next_cap(rs->cap, f->range_limit);
	long delta;
	struct ooo_range *r;

	if (cap <= rs->cap)
		return false;
	delta = ooo_range_alloc_bytes(cap) - ooo_range_alloc_bytes(rs->cap);
	if (atomic_long_add_return(delta, &ooo_range_bytes) >
	    READ_ONCE(ooo_max_range_bytes)) {
		atomic_long_sub(delta, &ooo_range_bytes);
		OOO_STAT_INC(range_budget_refused);
		return false;
	}
	r = ooo_range_alloc(cap);
	if (!r) {
		atomic_long_sub(delta, &ooo_range_bytes);
		return false;
	}
	if (rs->nr)
		memcpy(r, rs->r, rs->nr * sizeof(*r));
	ooo_range_free(rs->r, rs->cap);
	rs->r = r;
	rs->cap = cap;
	return true;
}

static struct hlist_bl_head *ooo_flow_bucket(const struct sock *sk)
{
	return &ooo_flow_hash[hash_ptr(sk, ooo_hash_bits)];
}

/*
 * A bucket's lock is a bit in its head; interrupts go off with it, as
 * handlers run in kprobe context (see "Concurrency" above).
 */
static void ooo_bucket_lock(struct hlist_bl_head *b, unsigned long *flags)
{
	local_irq_save(*flags);
	hlist_bl_lock(b);
}

static void ooo_bucket_unlock(struct hlist_bl_head *b, unsigned long flags)
{
	hlist_bl_unlock(b);
	local_irq_restore(flags);
}

/* Caller holds rcu_read_lock(). */
static struct ooo_flow *ooo_flow_lookup(const struct sock *sk)
{
	struct hlist_bl_node *pos;
	struct ooo_flow *f;

	hlist_bl_for_each_entry_rcu(f, pos, ooo_flow_bucket(sk), node)
		if (f->sk == sk)
			return f;
	return NULL;
}

static void ooo_flow_free_rcu(struct rcu_head *head)
{
	kmem_cache_free(ooo_flow_cache, container_of(head, struct ooo_flow, rcu));
}

/* @f is unlinked; its ranges go at once, the flow after a grace period. */
static void ooo_flow_free(struct ooo_flow *f)
{
	if (f->ranges.nr)
		OOO_STAT_ADD(ranges_discarded, f->ranges.nr);
	f->ranges.nr = 0;
	ooo_ranges_trim(&f->ranges);
	atomic_dec(&ooo_nflows);
	call_rcu(&f->rcu, ooo_flow_free_rcu);
}

static void ooo_flow_unlink(struct ooo_flow *f)
{
	struct hlist_bl_head *b = ooo_flow_bucket(f->sk);
	unsigned long flags;

	ooo_bucket_lock(b, &flags);
	hlist_bl_del_rcu(&f->node);
	ooo_bucket_unlock(b, flags);
}

/* Caller runs serialized with every other handler of @sk, in an RCU section. */
static struct ooo_flow *ooo_flow_create(const struct sock *sk, u64 now, u32 fl)
{
	struct hlist_bl_head *b = ooo_flow_bucket(sk);
	struct ooo_flow *f, *old;
	unsigned long flags;

	old = ooo_flow_lookup(sk);	/* stale: same address, earlier socket */
	if (old) {
		ooo_flow_unlink(old);
		ooo_flow_free(old);
	}
	if (atomic_inc_return(&ooo_nflows) > ooo_max_flows) {
		atomic_dec(&ooo_nflows);
		OOO_STAT_INC(flow_overflows);
		return NULL;
	}
	f = kmem_cache_alloc(ooo_flow_cache, GFP_ATOMIC | __GFP_NOWARN);
	if (!f) {
		atomic_dec(&ooo_nflows);
		OOO_STAT_INC(flow_overflows);
		return NULL;
	}
	memset(f, 0, sizeof(*f));
	f->sk = sk;
	f->lport = inet_sk(sk)->inet_num;
	f->t_start = now;
	f->flags = fl;
	ooo_bucket_lock(b, &flags);
	if (!ooo_active) {
		ooo_bucket_unlock(b, flags);
		kmem_cache_free(ooo_flow_cache, f);
		atomic_dec(&ooo_nflows);
		return NULL;
	}
	hlist_bl_add_head_rcu(&f->node, b);
	ooo_bucket_unlock(b, flags);
	return f;
}

/* Drop @n of a flow's ranges the reader will never get from the queue. */
static void ooo_ranges_discard(struct ooo_flow *f, u32 n, bool tail)
{
	if (!n)
		return;
	OOO_STAT_ADD(ranges_discarded, n);
	if (tail)
		ooo_ranges_drop_tail(&f->ranges, n);
	else
		ooo_ranges_drop(&f->ranges, n);
}

/*
 * Drop the ranges the out-of-order queue no longer holds (see "Stale
 * ranges" above). @ofo_empty: the queue is empty, every range is stale.
 * Otherwise those at or below rcv_nxt, and, from the highest down to the
 * first one an skb of the queue still overlaps, those the kernel pruned
 * (it prunes whole skbs from the top): one step when nothing was pruned.
 * Caller has not added the ranges of the segment being queued yet.
 */
static void ooo_ranges_discard_stale(struct ooo_flow *f,
				     const struct tcp_sock *tp, bool ofo_empty)
{
	struct ooo_ranges *rs = &f->ranges;
	const struct sk_buff *skb;
	u32 n = 0;

	if (!rs->nr)
		return;
	ooo_ranges_discard(f, ooo_ranges_stale(rs, READ_ONCE(tp->rcv_nxt),
					       ofo_empty), false);
	skb = skb_rb_last(&tp->out_of_order_queue);
	while (n < rs->nr) {
		const struct ooo_range *r = &rs->r[rs->nr - 1 - n];

		while (skb && !before(TCP_SKB_CB(skb)->seq, r->end))
			skb = skb_rb_prev(skb);
		if (skb && after(TCP_SKB_CB(skb)->end_seq, r->seq))
			break;		/* held, at least in part */
		n++;
	}
	ooo_ranges_discard(f, n, true);
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
			      atomic64_inc_return(&ooo_event_seq),
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
		OOO_STAT_INC(events_unheard);
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
	atomic64_inc(&ooo_event_seq);
	OOO_STAT_INC(events_dropped);
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
		OOO_STAT_INC(events_sent);
	else
		OOO_STAT_INC(events_dropped);
}

static void ooo_event_cancel(struct sk_buff *msg)
{
	nlmsg_free(msg);
	OOO_STAT_INC(events_dropped);
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
	[TCP_OOOPROBE_A_STAT_RANGE_BYTES]	= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_MAX_RANGE_BYTES]	= { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_RANGE_BUDGET_REFUSED] = { .type = NLA_U64 },
	[TCP_OOOPROBE_A_STAT_SEGS_NOT_QUEUED]	= { .type = NLA_U64 },
};

static int ooo_put_u64(struct sk_buff *msg, int type, u64 v)
{
	return nla_put_u64_64bit(msg, type, v, TCP_OOOPROBE_A_PAD);
}

static int ooo_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	u64 nested = ooo_kprobe_missed_nested();
	u64 noinst = ooo_kprobe_missed_noinst();
	struct ooo_pcpu_stats st;
	struct sk_buff *msg;
	void *hdr;

	ooo_stats_sum(&st);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ooo_family, 0,
				TCP_OOOPROBE_CMD_GET_STATS);
	if (!hdr)
		goto nospace;
	if (ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_EVENTS_SENT, st.events_sent) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_EVENTS_DROPPED,
			st.events_dropped) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_EVENTS_UNHEARD,
			st.events_unheard) ||
	    nla_put_u32(msg, TCP_OOOPROBE_A_STAT_FLOWS_TRACKED,
			atomic_read(&ooo_nflows)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_FLOW_OVERFLOWS,
			st.flow_overflows) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_RANGE_OVERFLOWS,
			st.range_overflows) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_RANGES_RECORDED,
			st.ranges_recorded) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_RANGES_RELEASED,
			st.ranges_released) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_RANGES_DUPLICATE,
			st.ranges_duplicate) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_RANGES_DISCARDED,
			st.ranges_discarded) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_EVENT_SEQ,
			atomic64_read(&ooo_event_seq)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_KPROBE_MISSED,
			nested + noinst) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_KPROBE_MISSED_NESTED,
			nested) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_KPROBE_MISSED_NOINST,
			noinst) ||
	    nla_put_string(msg, TCP_OOOPROBE_A_STAT_HOOK, ooo_hook_name) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_RANGE_BYTES,
			atomic_long_read(&ooo_range_bytes)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_MAX_RANGE_BYTES,
			READ_ONCE(ooo_max_range_bytes)) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_RANGE_BUDGET_REFUSED,
			st.range_budget_refused) ||
	    ooo_put_u64(msg, TCP_OOOPROBE_A_STAT_SEGS_NOT_QUEUED,
			st.segs_not_queued))
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

/* SET_FILTER's attributes onto *@f, or an error and *@f half changed. */
static int ooo_set_filter_apply(struct genl_info *info, struct ooo_filter *f)
{
	struct nlattr **a = info->attrs;
	int i, len;

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
			f->ports[i] = p[i];
		}
		f->nports = len / sizeof(u16);
	}
	if (a[TCP_OOOPROBE_A_FILTER_NETNS])
		f->netns = nla_get_u64(a[TCP_OOOPROBE_A_FILTER_NETNS]);
	if (a[TCP_OOOPROBE_A_FILTER_FLOWS]) {
		/* checked here, not by NLA_POLICY_MAX: that answers -ERANGE */
		if (nla_get_u8(a[TCP_OOOPROBE_A_FILTER_FLOWS]) >
		    TCP_OOOPROBE_FLOWS_OOO) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    a[TCP_OOOPROBE_A_FILTER_FLOWS],
					    "flows: 0 (all) or 1 (ooo)");
			return -EINVAL;
		}
		f->flows = nla_get_u8(a[TCP_OOOPROBE_A_FILTER_FLOWS]);
	}
	return 0;
}

/* Every attribute given is validated before any is applied. */
static int ooo_set_filter(struct sk_buff *skb, struct genl_info *info)
{
	struct ooo_filter f;
	int err;

	ooo_filter_begin(&f);
	err = ooo_set_filter_apply(info, &f);
	if (!err)
		ooo_filter_write(&f);
	ooo_filter_end();
	return err;
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

/*
 * The first skb of the out-of-order queue that ends after @seq: the queue
 * is an rbtree by seq whose skbs do not nest, so their ends grow with it.
 */
static struct sk_buff *ooo_ofo_find(const struct tcp_sock *tp, u32 seq)
{
	struct rb_node *p = tp->out_of_order_queue.rb_node;
	struct sk_buff *skb, *found = NULL;

	while (p) {
		skb = rb_to_skb(p);
		if (after(TCP_SKB_CB(skb)->end_seq, seq)) {
			found = skb;
			p = p->rb_left;
		} else {
			p = p->rb_right;
		}
	}
	return found;
}

/* Kept in the kretprobe instance from entry to return. */
struct ooo_dq_data {
	struct sock *sk;
	u64 t_arrival;		/* CLOCK_MONOTONIC ns */
	u32 seq;		/* out of order: the segment's range ... */
	u32 end;		/* ... less a FIN, to look up at return */
	bool ooo;		/* beyond rcv_nxt at entry */
	bool ofo_was_empty;	/* the out-of-order queue, at entry */
};

/*
 * An out-of-order segment went through tcp_data_queue(): record the parts
 * of [d->seq, d->end) the out-of-order queue now holds.
 */
static void ooo_record(const struct ooo_dq_data *d)
{
	struct sock *sk = d->sk;
	const struct tcp_sock *tp = tcp_sk(sk);
	struct sk_buff *skb = ooo_ofo_find(tp, d->seq);
	struct ooo_filter flt;
	struct ooo_flow *f;
	bool queued, ovf = false;
	int added = 0, n;

	queued = skb && before(TCP_SKB_CB(skb)->seq, d->end);
	if (!queued)
		OOO_STAT_INC(segs_not_queued);

	rcu_read_lock();
	f = ooo_flow_lookup(sk);
	if (!f) {
		if (!queued)
			goto out;
		ooo_filter_read(&flt);
		if (!ooo_filter_match(sk, inet_sk(sk)->inet_num, &flt))
			goto out;
		/* flows=ooo creates flows here; with flows=all it was missed */
		f = ooo_flow_create(sk, d->t_arrival,
				    flt.flows == TCP_OOOPROBE_FLOWS_OOO ?
				    0 : TCP_OOOPROBE_FLOW_F_PARTIAL);
		if (!f)
			goto out;
	}
	ooo_ranges_discard_stale(f, tp, d->ofo_was_empty);
	f->range_limit = ooo_ranges_limit(READ_ONCE(sk->sk_rcvbuf),
					  SKB_TRUESIZE(1), ooo_max_ranges);
	for (; queued && skb && before(TCP_SKB_CB(skb)->seq, d->end);
	     skb = skb_rb_next(skb)) {
		u32 s = TCP_SKB_CB(skb)->seq, e = TCP_SKB_CB(skb)->end_seq;

		if (before(s, d->seq))
			s = d->seq;
		if (after(e, d->end))
			e = d->end;
		n = ooo_ranges_add(&f->ranges, s, e, d->t_arrival,
				   ooo_ranges_grow);
		if (n < 0) {
			ovf = true;
			break;
		}
		added += n;
	}
	if (added > 0) {
		f->ooo_segs++;
		OOO_STAT_ADD(ranges_recorded, added);
	} else if (queued && !ovf) {
		OOO_STAT_INC(ranges_duplicate);
	}
	if (ovf) {
		/* the flow's limit, the byte budget, or no memory */
		OOO_STAT_INC(range_overflows);
		f->flags |= TCP_OOOPROBE_FLOW_F_RANGE_OVF;
	}
	ooo_ranges_trim(&f->ranges);
out:
	rcu_read_unlock();
}

/*
 * rcv_nxt may have moved: report every range the reader can now have.
 * @now: arrival time of the segment that moved it.
 */
static void ooo_release(struct sock *sk, u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ooo_filter flt;
	struct ooo_flow *f;
	u32 n, i;

	rcu_read_lock();
	f = ooo_flow_lookup(sk);	/* gone if the socket closed meanwhile */
	if (!f || !f->ranges.nr)
		goto out;
	n = ooo_ranges_below(&f->ranges, READ_ONCE(tp->rcv_nxt));
	if (n) {
		ooo_filter_read(&flt);
		if (ooo_filter_match(sk, f->lport, &flt))
			for (i = 0; i < n; i++)
				ooo_emit_segment(sk, f, &f->ranges.r[i], now);
		OOO_STAT_ADD(ranges_released, n);
		ooo_ranges_drop(&f->ranges, n);
	}
	/* what is left and the queue does not hold was pruned */
	ooo_ranges_discard_stale(f, tp,
				 RB_EMPTY_ROOT(&tp->out_of_order_queue));
	ooo_ranges_trim(&f->ranges);
out:
	rcu_read_unlock();
}

static int ooo_dq_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sock *sk = (struct sock *)regs_get_kernel_argument(regs, 0);
	struct sk_buff *skb = (struct sk_buff *)regs_get_kernel_argument(regs, 1);
	const struct tcp_skb_cb *cb = TCP_SKB_CB(skb);
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ooo_dq_data *d = (struct ooo_dq_data *)ri->data;
	u32 rcv_nxt = READ_ONCE(tp->rcv_nxt), end = cb->end_seq;

	/* The fast path: in order and nothing held. */
	if (!after(cb->seq, rcv_nxt)) {
		if (RB_EMPTY_ROOT(&tp->out_of_order_queue))
			return 1;
		d->sk = sk;
		d->ooo = false;
		d->t_arrival = ooo_skb_arrival_ns(skb);
		return 0;	/* may fill a hole: look at the return */
	}
	if (cb->tcp_flags & TCPHDR_FIN)
		end--;
	if (!after(end, cb->seq) || !ooo_rcv_state(sk))
		return 1;
	/* beyond the window: tcp_data_queue() drops it */
	if (!before(cb->seq, rcv_nxt + tcp_receive_window(tp)))
		return 1;
	d->sk = sk;
	d->ooo = true;
	d->seq = cb->seq;
	d->end = end;
	d->ofo_was_empty = RB_EMPTY_ROOT(&tp->out_of_order_queue);
	d->t_arrival = ooo_skb_arrival_ns(skb);
	return 0;		/* queued or not: look at the return */
}

static int ooo_dq_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct ooo_dq_data *d = (struct ooo_dq_data *)ri->data;

	if (d->ooo)
		ooo_record(d);
	else
		ooo_release(d->sk, d->t_arrival);
	return 0;
}

/*
 * sock:inet_sock_set_state, called just before sk_state changes: open a
 * flow at ESTABLISHED (flows=all), close it at CLOSE. Fires for every inet
 * protocol.
 */
static void ooo_set_state_tp(void *data, const struct sock *sk, const int old,
			     const int state)
{
	struct ooo_filter flt;
	struct ooo_flow *f;
	u64 now;

	if (sk->sk_protocol != IPPROTO_TCP || sk->sk_type != SOCK_STREAM ||
	    state == old || (state != TCP_ESTABLISHED && state != TCP_CLOSE))
		return;
	ooo_filter_read(&flt);
	if (state == TCP_ESTABLISHED) {
		/* flows=ooo: created at the first out-of-order segment */
		if (flt.flows == TCP_OOOPROBE_FLOWS_OOO ||
		    !ooo_filter_match(sk, inet_sk(sk)->inet_num, &flt))
			return;
		rcu_read_lock();
		ooo_flow_create(sk, ktime_get_ns(), 0);
		rcu_read_unlock();
		return;
	}
	rcu_read_lock();
	f = ooo_flow_lookup(sk);
	if (!f)
		goto out;
	now = ktime_get_ns();
	ooo_flow_unlink(f);
	if (ooo_filter_match(sk, f->lport, &flt) &&
	    (flt.flows == TCP_OOOPROBE_FLOWS_ALL || f->ooo_segs))
		ooo_emit_flow(sk, f, now);
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
			ooo_hook_name = "tcp_data_queue";
			/* GET_STATS reads the entries after the count */
			smp_store_release(&ooo_n_active_rps, 1);
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
	ooo_hook_name = "tcp_rcv_established+tcp_rcv_state_process";
	/* GET_STATS reads the entries after the count */
	smp_store_release(&ooo_n_active_rps, 2);
	return 0;
fail:
	pr_err("cannot probe tcp_data_queue nor tcp_rcv_established/tcp_rcv_state_process (%d): kernel without CONFIG_KPROBES or symbols blacklisted\n",
	       err);
	return err;
}

/* ---- module ------------------------------------------------------------- */

static void ooo_flows_free_all(void)
{
	struct hlist_bl_node *pos, *tmp;
	struct hlist_bl_head *b;
	struct ooo_flow *f;
	unsigned long flags;
	unsigned int i;

	WRITE_ONCE(ooo_active, false);
	for (i = 0; i < (1U << ooo_hash_bits); i++) {
		b = &ooo_flow_hash[i];
		ooo_bucket_lock(b, &flags);
		hlist_bl_for_each_entry_safe(f, pos, tmp, b, node) {
			hlist_bl_del_rcu(&f->node);
			ooo_flow_free(f);
		}
		ooo_bucket_unlock(b, flags);
	}
}

/*
 * A constructor keeps SLUB from merging a cache with another of the same
 * size: /proc/slabinfo then counts the probe's objects alone, and one
 * still allocated when the module unloads is reported by
 * kmem_cache_destroy(). Objects are initialized when allocated.
 */
static void ooo_cache_ctor(void *obj)
{
}

static void ooo_caches_destroy(void)
{
	unsigned int i;

	for (i = 0; i < OOO_RANGE_CLASSES; i++) {
		kmem_cache_destroy(ooo_range_cache[i]);
		ooo_range_cache[i] = NULL;
	}
	kmem_cache_destroy(ooo_flow_cache);
	ooo_flow_cache = NULL;
}

static int ooo_caches_create(void)
{
	char name[32];
	unsigned int i, n;

	ooo_flow_cache = kmem_cache_create("oooprobe_flow",
					   sizeof(struct ooo_flow), 0, 0,
					   ooo_cache_ctor);
	if (!ooo_flow_cache)
		return -ENOMEM;
	for (i = 0; i < OOO_RANGE_CLASSES; i++) {
		n = OOO_RANGES_FIRST_CAP << i;
		snprintf(name, sizeof(name), "oooprobe_ranges_%u", n);
		ooo_range_cache[i] = kmem_cache_create(name,
						       n * sizeof(struct ooo_range),
						       0, 0, ooo_cache_ctor);
		if (!ooo_range_cache[i]) {
			ooo_caches_destroy();
			return -ENOMEM;
		}
	}
	return 0;
}

/* Every flow, its ranges, and the table and caches they came from. */
static void ooo_state_free(void)
{
	ooo_flows_free_all();
	rcu_barrier();	/* call_rcu() callbacks free into the caches */
	ooo_caches_destroy();
	kvfree(ooo_flow_hash);
	ooo_flow_hash = NULL;
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
	/*
	 * One bucket per two flows of max_flows (a chain of two when the
	 * table is full), at least 256: 8 bytes each, 256 KiB at the default.
	 */
	ooo_hash_bits = max(order_base_2(ooo_max_flows) - 1, 8);
	ooo_flow_hash = kvmalloc_array(1U << ooo_hash_bits,
				       sizeof(*ooo_flow_hash), GFP_KERNEL);
	if (!ooo_flow_hash)
		return -ENOMEM;
	for (i = 0; i < (1U << ooo_hash_bits); i++)
		INIT_HLIST_BL_HEAD(&ooo_flow_hash[i]);
	err = ooo_caches_create();
	if (err) {
		kvfree(ooo_flow_hash);
		return err;
	}
	ooo_active = true;

	err = genl_register_family(&ooo_family);
	if (err) {
		pr_err("cannot register generic netlink family %s (%d)\n",
		       TCP_OOOPROBE_GENL_NAME, err);
		goto out_state;
	}
	err = ooo_register_state_hook();
	if (err)
		goto out_family;
	if (ooo_skb_time)
		net_enable_timestamp();
	err = ooo_register_hooks();
	if (err)
		goto out_tstamp;
	pr_info("probing %s; max_flows=%u max_ranges=%u max_range_bytes=%lu\n",
		ooo_hook_name, ooo_max_flows, ooo_max_ranges,
		READ_ONCE(ooo_max_range_bytes));
	return 0;

out_tstamp:
	if (ooo_skb_time)
		net_disable_timestamp();
	/* flows the state hook opened in the meantime go with the state */
	ooo_unregister_state_hook();
out_family:
	genl_unregister_family(&ooo_family);
out_state:
	ooo_state_free();
	return err;
}

static void __exit ooo_exit(void)
{
	/* pairs with the release in ooo_register_hooks() */
	unsigned int i, nr = smp_load_acquire(&ooo_n_active_rps);

	unregister_kretprobes(ooo_active_rps, nr);
	ooo_unregister_state_hook();
	/* no handler runs any more (unregister waits for them) */
	if (ooo_skb_time)
		net_disable_timestamp();
	genl_unregister_family(&ooo_family);
	ooo_state_free();
	for (i = 0; i < nr; i++)
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
