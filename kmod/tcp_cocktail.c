// SPDX-License-Identifier: GPL-2.0
/*
 * TCP cocktail: restart-after-idle policies for persistent connections.
 *
 * HTTP/1.1, HTTP/2 and gRPC keep one TCP connection open for many
 * responses with idle gaps between them.  After an idle period longer than
 * the RTO, Linux either slow-starts again from the initial window (with
 * net.ipv4.tcp_slow_start_after_idle=1, RFC 5681 section 4.1), or sends
 * the whole pre-idle window back to back.  Rate-based pacing on restart
 * (RBP: Visweswaraiah and Heidemann, "Improving Restart of Idle TCP
 * Connections", 1997) keeps the window but spreads the first flight over
 * one round trip at the pre-idle rate, then returns to ACK clocking.  Chan
 * ("Improving the Performance of HTTP Persistent Connections", 2001)
 * proposed a hybrid: slow-start restart on short paths, RBP on long ones.
 * This module implements each of them behind one parameter.
 *
 * Growth and loss recovery are NewReno (tcp_slow_start, tcp_cong_avoid_ai,
 * tcp_reno_ssthresh, tcp_reno_undo_cwnd, and the kernel's PRR).  The
 * module uses the classic hooks, not .cong_control, because PRR
 * (tcp_cwnd_reduction) is not exported.  On top of NewReno it sets the
 * initial window, decides the restart after idle, and validates the window
 * while the application does not use it.
 *
 * Units: cwnd, ssthresh and initial windows in segments; rates in bytes
 * per second; idle time and RTO in jiffies; RTTs in microseconds.
 *
 * Initial window
 * --------------
 * .init sets cwnd to the iw parameter (1..64 segments or rfc3390 =
 * min(4 * MSS, max(2 * MSS, 4380 bytes))) unless the route has an
 * initcwnd metric, which wins.  tcp_init_transfer() sets cwnd from the
 * route (or to 10) when the handshake completes, so an active opener,
 * whose .init runs in SYN_SENT, applies iw at its first data segment
 * instead.  Nothing is changed once data has been sent: .init also runs
 * when an established socket switches to cocktail with
 * setsockopt(TCP_CONGESTION).  After SYN retransmissions the kernel's
 * window of 1 is left alone, as tcp_init_transfer() leaves it.
 *
 * Restart after idle
 * ------------------
 * A connection is idle when nothing is in flight; idle time runs from the
 * last data sent (tp->lsndtime).  The kernel reports two events around
 * the first transmit after idle, and the module decides at the second:
 *
 *                      ACK-clocked sending
 *                               |  everything acknowledged, nothing sent
 *                               v
 *                             IDLE
 *                               |  tcp_slow_start_after_idle=1 and
 *                               |  idle > RTO: the kernel's restart
 *                               |  reports CA_EVENT_CWND_RESTART before
 *                               |  it cuts cwnd: snapshot cwnd, ssthresh
 *                               v
 *           CA_EVENT_TX_START (inside the transmit of the first
 *           segment, before lsndtime moves): idle = now - lsndtime
 *                  |                                    |
 *            idle <= RTO                           idle > RTO
 *                  |                                    |
 *     snapshot taken: put the        policy = restart (auto and queue
 *     kernel's cut back              resolve to ssr or pace); cwnd and
 *     (counter short_idle)           ssthresh from the snapshot, or the
 *                  |                 current ones when the kernel did
 *                  |                 not restart (sysctl 0)
 *                  |                      |                    |
 *                  |              ssr, decay, keep            pace
 *                  |                      |                    |
 *                  |                      |                  PACED: the flight
 *                  |                      |                  leaves at the
 *                  |                      |                  pre-idle rate
 *                  |                      |                    |  first ACK for data
 *                  |                      |                    |  of the flight, an
 *                  |                      |                    |  RTO, a new restart,
 *                  |                      |                    |  or release: pacing
 *                  |                      |                    |  state restored
 *                  v                      v                    v
 *                             ACK-clocked sending
 *
 * Since the module starts from the window it snapshotted before the
 * kernel's cut, both settings of tcp_slow_start_after_idle give the same
 * result.  The window set at CA_EVENT_TX_START applies from the second
 * segment of the flight on: the first one already passed the cwnd test.
 * With packets still outstanding CA_EVENT_TX_START is the retransmission
 * after an RTO, not a restart: the window is left alone.
 *
 * The policies (IW is the route's initcwnd, else the iw parameter):
 *   ssr    cwnd = min(IW, cwnd), ssthresh = max(ssthresh, 3/4 cwnd)
 *   decay  cwnd halved once per full RTO of idle time (idle in
 *          (k RTO, (k+1) RTO] gives k halvings, the loop of
 *          tcp_cwnd_restart()), never below min(IW, cwnd) (RFC 2861);
 *          ssthresh as for ssr
 *   keep   cwnd and ssthresh as before the idle period
 *   pace   as keep, and the flight is paced at the pre-idle rate until
 *          the first ACK for data sent after the restart
 *   auto   ssr when the path's RTT < auto_rtt_us, else pace.  The path's
 *          RTT is the kernel's windowed minimum (tcp_min_rtt()), or srtt
 *          before the first RTT sample; not srtt, which includes the
 *          queue the connection built itself and would make a short path
 *          look long
 *   queue  ssr when srtt (not updated while idle) > queue_pct % of the
 *          path's minimum RTT, else pace; pace without a minimum RTT
 *          sample.  A standing queue before the idle period means the
 *          path was shared or the window was larger than the pipe, so
 *          the remembered window is stale; without one the pre-idle rate
 *          is still good to pace at
 * In CA_CWR or CA_Recovery, ssr and decay leave ssthresh alone, as
 * tcp_current_ssthresh() does.  Every decision emits the
 * tcp_cocktail:cocktail_restart tracepoint and counts in the stats parameter.
 *
 * Pre-idle rate
 * -------------
 * The kernel saves one rate sample per ACK in tp->rate_delivered,
 * rate_interval_us and rate_app_limited; .cong_avoid runs after
 * tcp_rate_gen(), so it sees the fresh sample.  Samples feed a windowed
 * maximum over 10..20 round trips; an application-limited sample counts
 * only when it raises the maximum, as in BBR, because it only shows the
 * path can do at least that much.  Rounds advance on ACKs, not on time, so
 * the maximum survives any idle period.  pace_rate chooses the flight's
 * rate:
 *   delivery  the windowed maximum, or cwnd * mss / srtt without a sample
 *   window    cwnd * mss / srtt: the rate the window was clocked out at
 *             in a round trip where it was in use (Heidemann's estimate)
 *   max       the larger of the two (default)
 * A keep-alive connection whose responses fit in cwnd produces only
 * application-limited samples, whose maximum can sit below the path's
 * rate; a window that grew while application-limited (cwv=0) is larger
 * than what the path delivered, and one that losses kept small gives a
 * low window rate.  Taking the larger of two estimates that fail in
 * opposite directions covers both.  With no rate at all (no sample, no
 * srtt) pace acts as keep and counts pace_no_rate.
 *
 * Pacing: tcp_update_pacing_rate() rewrites sk_pacing_rate after every
 * ACK (a pipelined request or a duplicate ACK may arrive during the
 * flight), bounded by sk_max_pacing_rate.  So the flight lowers
 * sk_max_pacing_rate to its rate and sets sk_pacing_status to
 * SK_PACING_NEEDED (the kernel's internal pacing, or sch_fq's when fq is
 * the qdisc); at its end all three are put back, unless the application
 * changed SO_MAX_PACING_RATE meanwhile, whose value then wins (a
 * compare-and-exchange on the cap the flight set: the option is written
 * without the socket lock from 6.7 on).  Internal
 * pacing never paces a connection's first 10 data segments
 * (tcp_update_skb_after_send(): data_segs_out >= 10; sch_fq's
 * initial_quantum is its twin), which matters only for pace_iw.
 *
 * pace_iw=1 paces the initial window at IW * mss / srtt (srtt from the
 * handshake) and ends like a restart flight.  Because of the
 * first-10-segments rule it only spaces segments 11..IW: with iw <= 10 it
 * has no effect on the wire.  A congestion-control module cannot get
 * around that rule (it reads data_segs_out, a counter reported to user
 * space).
 *
 * Congestion window validation
 * ----------------------------
 * cwv, evaluated on every ACK:
 *   0  cwnd grows on every ACK, application-limited or not
 *   1  RFC 2861: grow only while tcp_is_cwnd_limited(); at the first ACK
 *      one RTO or more after the window was last in use, cwnd =
 *      (cwnd + max(used, IW)) / 2 and ssthresh = max(ssthresh, 3/4 cwnd),
 *      as tcp_cwnd_application_limited() does
 *   2  RFC 7661, simplified: pipeACK is the larger of the segments
 *      delivered in the last two complete round trips.  While
 *      pipeACK >= cwnd / 2 (validated) growth is as for 1 and nothing
 *      decays; below that (non-validated period) cwnd neither grows nor
 *      decays, and after 5 minutes in it cwnd = max(cwnd / 2,
 *      min(IW, cwnd)), ssthresh = max(ssthresh, 3/4 cwnd).  Loss response
 *      stays Reno
 * Decays happen only in CA_Open and not while the send buffer is full
 * (then the sender, not the application, is the limit).  The kernel has
 * its own RFC 2861 decay in tcp_cwnd_validate(), which runs only when
 * tcp_slow_start_after_idle=1 and only for modules without .cong_control
 * such as this one.  Every ACK and every CA_EVENT_TX_START refresh
 * tp->snd_cwnd_stamp, which keeps that path from firing: the cwv
 * parameter alone decides, whatever the sysctl says.  Idle periods
 * (nothing in flight) belong to the restart policy, not to cwv.
 *
 * Parameters are read once per decision, so a change applies to the next
 * connection (iw, pace_iw), the next restart (restart, auto_rtt_us,
 * queue_pct, pace_rate) or the next ACK (cwv).
 */
#define pr_fmt(fmt) "tcp_cocktail: " fmt

#include <linux/atomic.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <net/tcp.h>

#include "cocktail_policy.h"

#define CREATE_TRACE_POINTS
#include "cocktail_trace.h"

/*
 * Round trips a delivery-rate sample stays in the windowed max (between
 * one and two times this), as BBR's bandwidth filter: long enough to span
 * the application-limited rounds between keep-alive responses, short
 * enough to forget a rate from before the path changed.
 */
#define COCKTAIL_BW_ROUNDS	10

/*
 * Kernel-version-sensitive accessors live here, so a compat shim for other
 * kernels has one place to go (tcp_snd_cwnd() appeared in 5.19).
 */
static inline u32 cocktail_cwnd(const struct tcp_sock *tp)
{
	return tcp_snd_cwnd(tp);
}

static inline void cocktail_set_cwnd(struct tcp_sock *tp, u32 cwnd)
{
	tcp_snd_cwnd_set(tp, clamp_t(u32, cwnd, 1, tp->snd_cwnd_clamp));
}

static inline u32 cocktail_srtt_us(const struct tcp_sock *tp)
{
	return tp->srtt_us >> 3;
}

static inline u64 cocktail_jiffies_to_us(u32 j)
{
	return div_u64((u64)j * USEC_PER_SEC, HZ);
}

/* Per-connection state, in icsk_ca_priv. */
struct cocktail {
	struct cp_maxwin bw;		/* windowed max delivery rate, B/s */
	unsigned long pace_prev_rate;	/* B/s: sk_pacing_rate before pacing */
	unsigned long pace_prev_max;	/* B/s: sk_max_pacing_rate before */
	unsigned long pace_rate;	/* B/s: rate of the paced flight */
	u32 round;			/* round trips counted on ACKs */
	u32 round_end_seq;		/* seq: snd_nxt when this round began */
	u32 round_delivered;		/* segs: tp->delivered when it began */
	u32 pipeack[2];			/* segs delivered in the last 2 rounds */
	u32 snap_cwnd;			/* segs: cwnd at CA_EVENT_CWND_RESTART */
	u32 snap_ssthresh;		/* segs: ssthresh at the same moment */
	u32 pace_end_seq;		/* seq: pacing ends when snd_una passes */
	u32 pace_start_us;		/* us: low 32 bits of tcp_mstamp */
	u32 pace_start_segs;		/* segs: data_segs_out at the start */
	u32 cwv_stamp;			/* jiffies: last cwnd-limited or decay */
	u32 nvp_stamp;			/* jiffies: RFC 7661 NVP start */
	u8 snap_valid:1,		/* snap_* hold the kernel's pre-cut */
	   pacing:1,			/* a paced flight is in progress */
	   nvp:1,			/* cwv=2: in a non-validated period */
	   iw_pending:1;		/* apply iw at the first data segment */
	u8 pace_prev_status;		/* sk_pacing_status before pacing */
};

/* ---- parameters ---------------------------------------------------- */

static const char * const cocktail_policy_names[CP_NR_POLICIES] = {
	[CP_SSR] = "ssr",
	[CP_DECAY] = "decay",
	[CP_KEEP] = "keep",
	[CP_PACE] = "pace",
	[CP_AUTO] = "auto",
	[CP_QUEUE] = "queue",
};

/* Segments: RFC 6928's initial window, the kernel's own TCP_INIT_CWND. */
static unsigned int cocktail_iw __read_mostly = 10;
/*
 * restart=auto's threshold on the path's minimum RTT, in microseconds.
 * Below it a slow-start restart costs a few short round trips and never
 * bursts a window the path may no longer hold; above it each round trip
 * of slow start costs more than the risk of pacing the old window.  Chan
 * left the threshold tunable; the crossover depends on the path's rate
 * and buffer, and docs/results.md has the measurements behind 100 ms.
 */
static unsigned int cocktail_auto_rtt_us __read_mostly = 100000;
/*
 * restart=queue: srtt more than 20% above the minimum RTT counts as a
 * standing queue.  A smaller margin reads a connection's own delayed ACKs
 * and the queue of its own last flight as a shared path; a larger one
 * misses the queue of a small bottleneck buffer.
 */
static unsigned int cocktail_queue_pct __read_mostly = 120;
/* RFC 2861: what the kernel itself does with tcp_slow_start_after_idle=1. */
static unsigned int cocktail_cwv_mode __read_mostly = CP_CWV_2861;
/* Off: with iw <= 10 internal pacing leaves the initial window unpaced. */
static unsigned int cocktail_pace_iw __read_mostly;

static const char * const cocktail_rate_names[CP_NR_RATES] = {
	[CP_RATE_DELIVERY] = "delivery",
	[CP_RATE_WINDOW] = "window",
	[CP_RATE_MAX] = "max",
};

/* A parameter that takes one of a list of names; stored as its index. */
struct cocktail_choice {
	unsigned int val;
	const char * const *names;
	unsigned int n;
};

/* Chan's hybrid: slow-start restart on short paths, pacing on long ones. */
static struct cocktail_choice cocktail_restart __read_mostly = {
	.val = CP_AUTO,
	.names = cocktail_policy_names,
	.n = CP_NR_POLICIES,
};

/* The larger of two estimates that fail in opposite directions. */
static struct cocktail_choice cocktail_pace_rate __read_mostly = {
	.val = CP_RATE_MAX,
	.names = cocktail_rate_names,
	.n = CP_NR_RATES,
};

static int cocktail_iw_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;

	if (sysfs_streq(val, "rfc3390"))
		n = CP_IW_RFC3390;
	else if (kstrtouint(val, 10, &n) || n < CP_IW_MIN || n > CP_IW_MAX)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static int cocktail_iw_get(char *buf, const struct kernel_param *kp)
{
	unsigned int n = READ_ONCE(*(unsigned int *)kp->arg);

	if (n == CP_IW_RFC3390)
		return scnprintf(buf, PAGE_SIZE, "rfc3390\n");
	return scnprintf(buf, PAGE_SIZE, "%u\n", n);
}

static const struct kernel_param_ops cocktail_iw_ops = {
	.set = cocktail_iw_set,
	.get = cocktail_iw_get,
};

module_param_cb(iw, &cocktail_iw_ops, &cocktail_iw, 0644);
MODULE_PARM_DESC(iw, "initial window: 1..64 segments or rfc3390 (default 10); a route's initcwnd wins");

static int cocktail_choice_set(const char *val, const struct kernel_param *kp)
{
	struct cocktail_choice *c = kp->arg;
	int i = __sysfs_match_string(c->names, c->n, val);

	if (i < 0)
		return -EINVAL;
	WRITE_ONCE(c->val, i);
	return 0;
}

static int cocktail_choice_get(char *buf, const struct kernel_param *kp)
{
	const struct cocktail_choice *c = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%s\n", c->names[READ_ONCE(c->val)]);
}

static const struct kernel_param_ops cocktail_choice_ops = {
	.set = cocktail_choice_set,
	.get = cocktail_choice_get,
};

module_param_cb(restart, &cocktail_choice_ops, &cocktail_restart, 0644);
MODULE_PARM_DESC(restart, "after idle > RTO: ssr | decay | keep | pace | auto | queue (default auto)");

/*
 * 1 us makes every restart pace, 10 s (above any path's RTT) every restart
 * a slow-start restart.
 */
static int cocktail_auto_rtt_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 10 * USEC_PER_SEC);
}

static const struct kernel_param_ops cocktail_auto_rtt_ops = {
	.set = cocktail_auto_rtt_set,
	.get = param_get_uint,
};

module_param_cb(auto_rtt_us, &cocktail_auto_rtt_ops, &cocktail_auto_rtt_us, 0644);
MODULE_PARM_DESC(auto_rtt_us, "restart=auto uses ssr when the path's minimum RTT is below this many microseconds, else pace (1..10000000, default 100000)");

/*
 * srtt averages RTT samples, none below the minimum RTT, so 100 % or less
 * would call every path queued; 1000 % is a queue nine times the path's
 * RTT.
 */
static int cocktail_queue_pct_set(const char *val,
				  const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 101, 1000);
}

static const struct kernel_param_ops cocktail_queue_pct_ops = {
	.set = cocktail_queue_pct_set,
	.get = param_get_uint,
};

module_param_cb(queue_pct, &cocktail_queue_pct_ops, &cocktail_queue_pct, 0644);
MODULE_PARM_DESC(queue_pct, "restart=queue uses ssr when the pre-idle srtt is above this percentage of the path's minimum RTT (a queue had built up), else pace (101..1000, default 120)");

module_param_cb(pace_rate, &cocktail_choice_ops, &cocktail_pace_rate, 0644);
MODULE_PARM_DESC(pace_rate, "rate of a paced restart flight: delivery (windowed max delivery rate) | window (cwnd/srtt) | max of both (default max)");

static int cocktail_cwv_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, CP_CWV_OFF, CP_CWV_7661);
}

static const struct kernel_param_ops cocktail_cwv_ops = {
	.set = cocktail_cwv_set,
	.get = param_get_uint,
};

module_param_cb(cwv, &cocktail_cwv_ops, &cocktail_cwv_mode, 0644);
MODULE_PARM_DESC(cwv, "congestion window validation: 0 off, 1 RFC 2861, 2 RFC 7661 (default 1)");

static int cocktail_bool_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, 1);
}

static const struct kernel_param_ops cocktail_bool_ops = {
	.set = cocktail_bool_set,
	.get = param_get_uint,
};

module_param_cb(pace_iw, &cocktail_bool_ops, &cocktail_pace_iw, 0644);
MODULE_PARM_DESC(pace_iw, "1: pace the initial window over the handshake RTT (segments 11 on only, see source) (default 0)");

/* ---- counters ------------------------------------------------------ */

enum cocktail_counter {
	/* one per applied policy, in enum cp_policy order */
	CC_SSR = CP_SSR,
	CC_DECAY = CP_DECAY,
	CC_KEEP = CP_KEEP,
	CC_PACE = CP_PACE,
	CC_AUTO_SSR,		/* restart=auto resolved to ssr */
	CC_AUTO_PACE,		/* restart=auto resolved to pace */
	CC_QUEUE_SSR,		/* restart=queue resolved to ssr */
	CC_QUEUE_PACE,		/* restart=queue resolved to pace */
	CC_PACE_NO_RATE,	/* pace without any rate: acted as keep */
	CC_PACE_ENDED,		/* paced flight ended by its first ACK */
	CC_PACE_ENDED_LOSS,	/* ... by an RTO */
	CC_PACE_ENDED_OTHER,	/* ... by release or a new flight */
	CC_SHORT_IDLE,		/* kernel restart undone: idle <= RTO */
	CC_IW,			/* iw parameter applied at init */
	CC_IW_ROUTE,		/* route initcwnd kept */
	CC_PACE_IW,		/* initial window paced */
	CC_CWV_DECAY,		/* RFC 2861 application-limited decay */
	CC_CWV_NVP_END,		/* RFC 7661 non-validated period ended */
	CC_NR
};

static const char * const cocktail_counter_names[CC_NR] = {
	[CC_SSR] = "ssr",
	[CC_DECAY] = "decay",
	[CC_KEEP] = "keep",
	[CC_PACE] = "pace",
	[CC_AUTO_SSR] = "auto_ssr",
	[CC_AUTO_PACE] = "auto_pace",
	[CC_QUEUE_SSR] = "queue_ssr",
	[CC_QUEUE_PACE] = "queue_pace",
	[CC_PACE_NO_RATE] = "pace_no_rate",
	[CC_PACE_ENDED] = "pace_ended",
	[CC_PACE_ENDED_LOSS] = "pace_ended_loss",
	[CC_PACE_ENDED_OTHER] = "pace_ended_other",
	[CC_SHORT_IDLE] = "short_idle",
	[CC_IW] = "iw",
	[CC_IW_ROUTE] = "iw_route",
	[CC_PACE_IW] = "pace_iw",
	[CC_CWV_DECAY] = "cwv_decay",
	[CC_CWV_NVP_END] = "cwv_nvp_end",
};

static atomic_long_t cocktail_counters[CC_NR];

static void cocktail_count(enum cocktail_counter c)
{
	atomic_long_inc(&cocktail_counters[c]);
}

static int cocktail_stats_set(const char *val, const struct kernel_param *kp)
{
	return -EINVAL;		/* read-only */
}

static int cocktail_stats_get(char *buf, const struct kernel_param *kp)
{
	int i, len = 0;

	for (i = 0; i < CC_NR; i++)
		len += scnprintf(buf + len, PAGE_SIZE - len, "%s %ld\n",
				 cocktail_counter_names[i],
				 atomic_long_read(&cocktail_counters[i]));
	return len;
}

static const struct kernel_param_ops cocktail_stats_ops = {
	.set = cocktail_stats_set,
	.get = cocktail_stats_get,
};

module_param_cb(stats, &cocktail_stats_ops, NULL, 0444);
MODULE_PARM_DESC(stats, "read-only counters, one \"name value\" per line: restarts per applied policy (ssr decay keep pace), auto_ssr, auto_pace, queue_ssr, queue_pace, paced flights ended, iw applied, cwv decays");

/* ---- initial window ------------------------------------------------ */

/* IW in segments: the route's initcwnd when set, else the iw parameter. */
static u32 cocktail_iw_segs(struct sock *sk, bool *route)
{
	const struct dst_entry *dst = __sk_dst_get(sk);
	u32 metric = dst ? dst_metric(dst, RTAX_INITCWND) : 0;

	*route = metric != 0;
	if (metric)
		return metric;
	return cp_iw_segs(READ_ONCE(cocktail_iw), tcp_sk(sk)->mss_cache);
}

static u32 cocktail_iw_now(struct sock *sk)
{
	bool route;

	return cocktail_iw_segs(sk, &route);
}

static void cocktail_set_iw(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	bool route;
	u32 iw = cocktail_iw_segs(sk, &route);

	if (route) {
		cocktail_count(CC_IW_ROUTE);
		return;
	}
	/* tcp_init_transfer() cut cwnd to 1 after SYN retransmissions. */
	if (tp->total_retrans > 1 && tp->undo_marker)
		return;
	cocktail_set_cwnd(tp, iw);
	cocktail_count(CC_IW);
}

/* ---- pacing -------------------------------------------------------- */

static void cocktail_pace_stop(struct sock *sk, enum cocktail_counter why,
			       const char *reason)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	unsigned long prev;

	if (!ca->pacing)
		return;
	ca->pacing = 0;
	cocktail_count(why);
	trace_cocktail_pace_end(sk, reason,
				tp->data_segs_out - ca->pace_start_segs,
				(u32)tp->tcp_mstamp - ca->pace_start_us,
				ca->pace_rate);

	/*
	 * Put back the cap only if it is still the one the flight set: from
	 * 6.7 on SO_MAX_PACING_RATE is written without the socket lock, so a
	 * read-compare-write could overwrite a value the application has just
	 * set.  If the application set a cap meanwhile, its value wins and
	 * so does the pacing it asked for.  If it set ~0 (no cap), it asked
	 * for no pacing: sock_setsockopt() leaves sk_pacing_status alone for
	 * ~0, so the status the flight set is taken back here.
	 */
	prev = cmpxchg(&sk->sk_max_pacing_rate, ca->pace_rate,
		       ca->pace_prev_max);
	if (prev == ca->pace_rate)
		WRITE_ONCE(sk->sk_pacing_rate, ca->pace_prev_rate);
	else if (prev != ~0UL)
		return;
	if (ca->pace_prev_status == SK_PACING_NONE)
		cmpxchg(&sk->sk_pacing_status, SK_PACING_NEEDED,
			SK_PACING_NONE);
}

/*
 * Pace everything sent from now until the first ACK for it at @rate B/s,
 * with the kernel's internal pacing (or sch_fq's, if it already paces).
 */
static void cocktail_pace_start(struct sock *sk, unsigned long rate)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	cocktail_pace_stop(sk, CC_PACE_ENDED_OTHER, "new");
	ca->pace_prev_status = READ_ONCE(sk->sk_pacing_status);
	ca->pace_prev_rate = READ_ONCE(sk->sk_pacing_rate);
	ca->pace_prev_max = READ_ONCE(sk->sk_max_pacing_rate);
	ca->pace_rate = rate;
	ca->pace_end_seq = tp->snd_nxt;
	ca->pace_start_us = (u32)tp->tcp_mstamp;
	ca->pace_start_segs = tp->data_segs_out;
	ca->pacing = 1;
	WRITE_ONCE(sk->sk_max_pacing_rate, rate);
	WRITE_ONCE(sk->sk_pacing_rate, rate);
	cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
}

/* ---- restart after idle -------------------------------------------- */

static void cocktail_snapshot(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	/* Keep the first snapshot: a second restart would see the cut cwnd. */
	if (ca->snap_valid)
		return;
	ca->snap_cwnd = cocktail_cwnd(tp);
	ca->snap_ssthresh = tp->snd_ssthresh;
	ca->snap_valid = 1;
}

static u32 cocktail_restart_ssthresh(const struct sock *sk,
				     enum cp_policy policy, u32 ssthresh,
				     u32 cwnd)
{
	/* tcp_current_ssthresh(): in CWR or Recovery ssthresh stays. */
	if ((1 << inet_csk(sk)->icsk_ca_state) &
	    (TCPF_CA_CWR | TCPF_CA_Recovery))
		return ssthresh;
	return cp_restart_ssthresh(policy, ssthresh, cwnd);
}

static unsigned long cocktail_pace_restart(struct sock *sk, u32 cwnd)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct cocktail *ca = inet_csk_ca(sk);
	unsigned long rate;

	rate = cp_pace_rate(cp_maxwin_get(&ca->bw), cwnd, tp->mss_cache,
			    cocktail_srtt_us(tp),
			    READ_ONCE(sk->sk_max_pacing_rate),
			    READ_ONCE(cocktail_pace_rate.val));
	if (!rate) {
		cocktail_count(CC_PACE_NO_RATE);
		return 0;
	}
	cocktail_pace_start(sk, rate);
	return rate;
}

static void cocktail_restart_apply(struct sock *sk, u32 idle)
{
	struct cocktail *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 rto = inet_csk(sk)->icsk_rto;
	u32 srtt_us = cocktail_srtt_us(tp);
	u32 min_rtt_us = tcp_min_rtt(tp);
	u32 path_rtt_us = cp_path_rtt_us(min_rtt_us, srtt_us);
	enum cp_policy req = READ_ONCE(cocktail_restart.val);
	enum cp_policy pol;
	u32 before, ssthresh, after;
	unsigned long rate = 0;

	/* queue needs the raw min RTT: ~0U says there is no sample. */
	pol = cp_resolve_policy(req, srtt_us, min_rtt_us,
				READ_ONCE(cocktail_auto_rtt_us),
				READ_ONCE(cocktail_queue_pct));
	before = ca->snap_valid ? ca->snap_cwnd : cocktail_cwnd(tp);
	ssthresh = ca->snap_valid ? ca->snap_ssthresh : tp->snd_ssthresh;

	after = cp_restart_cwnd(pol, before, cocktail_iw_now(sk), idle, rto);
	tp->snd_ssthresh = cocktail_restart_ssthresh(sk, pol, ssthresh, before);
	cocktail_set_cwnd(tp, after);
	tp->snd_cwnd_stamp = tcp_jiffies32;
	tp->snd_cwnd_used = 0;
	ca->cwv_stamp = tcp_jiffies32;
	if (pol == CP_PACE)
		rate = cocktail_pace_restart(sk, before);

	cocktail_count((enum cocktail_counter)pol);
	if (req == CP_AUTO)
		cocktail_count(pol == CP_SSR ? CC_AUTO_SSR : CC_AUTO_PACE);
	else if (req == CP_QUEUE)
		cocktail_count(pol == CP_SSR ? CC_QUEUE_SSR : CC_QUEUE_PACE);
	trace_cocktail_restart(sk, cocktail_policy_names[req],
			       cocktail_policy_names[pol],
			       cocktail_jiffies_to_us(idle), jiffies_to_usecs(rto),
			       srtt_us, path_rtt_us, before, cocktail_cwnd(tp),
			       tp->snd_ssthresh, rate);
}

/* The kernel restarted although idle <= RTO: put the window back. */
static void cocktail_restart_undo(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	cocktail_set_cwnd(tp, ca->snap_cwnd);
	tp->snd_ssthresh = ca->snap_ssthresh;
	cocktail_count(CC_SHORT_IDLE);
}

/* First data segment of the connection. */
static void cocktail_first_flight(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	unsigned long rate;

	if (ca->iw_pending) {
		ca->iw_pending = 0;
		cocktail_set_iw(sk);
	}
	if (!READ_ONCE(cocktail_pace_iw))
		return;
	rate = cp_rate(cocktail_cwnd(tp), tp->mss_cache, cocktail_srtt_us(tp),
		       READ_ONCE(sk->sk_max_pacing_rate));
	if (!rate)
		return;
	cocktail_pace_start(sk, rate);
	cocktail_count(CC_PACE_IW);
}

/* First transmit after the connection was idle (nothing outstanding). */
static void cocktail_idle_restart(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 idle = cp_elapsed(tcp_jiffies32, tp->lsndtime);

	if (cp_idle_exceeds_rto(idle, inet_csk(sk)->icsk_rto))
		cocktail_restart_apply(sk, idle);
	else if (ca->snap_valid)
		cocktail_restart_undo(sk);
}

/*
 * CA_EVENT_TX_START: first transmit with nothing in flight.  With packets
 * still outstanding it is a retransmission after an RTO, not a restart.
 */
static void cocktail_tx_start(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	if (!tp->data_segs_out)
		cocktail_first_flight(sk);
	else if (!tp->packets_out)
		cocktail_idle_restart(sk);
	ca->snap_valid = 0;
	/*
	 * A request that carries no new ACK takes the fast path of
	 * tcp_rcv_established() without tcp_ack(), so .in_ack_event did not
	 * refresh the stamp: it is as old as the last ACK before the pause.
	 * Refresh it here too, or tcp_cwnd_validate() (ssai=1) could halve
	 * cwnd in the middle of a flight that followed a pause just below the
	 * RTO, if the sender stalls while the flight is being written.
	 */
	tcp_sk(sk)->snd_cwnd_stamp = tcp_jiffies32;
}

/* ---- per-ACK bookkeeping ------------------------------------------- */

/* A round ends when snd_una passes the snd_nxt of the round's start. */
static void cocktail_update_round(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	if (!cp_after(tp->snd_una, ca->round_end_seq))
		return;
	ca->round++;
	ca->round_end_seq = tp->snd_nxt;
	ca->pipeack[1] = ca->pipeack[0];
	ca->pipeack[0] = tp->delivered - ca->round_delivered;
	ca->round_delivered = tp->delivered;
}

/*
 * Feed the kernel's saved rate sample into the windowed max.  An
 * application-limited sample only says the path can do at least that
 * much, so (as in BBR) it counts only when it raises the max.
 */
static void cocktail_sample_bw(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 bw;

	bw = cp_rate(tp->rate_delivered, tp->mss_cache, tp->rate_interval_us,
		     CP_U64_MAX);
	if (!bw || (tp->rate_app_limited && bw < cp_maxwin_get(&ca->bw)))
		return;
	cp_maxwin_update(&ca->bw, ca->round, COCKTAIL_BW_ROUNDS, bw);
}

static bool cocktail_app_limited_decay_ok(const struct sock *sk)
{
	if (inet_csk(sk)->icsk_ca_state != TCP_CA_Open)
		return false;
	/* Limited by the send buffer, not by the application. */
	return !sk->sk_socket ||
	       !test_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
}

/* cwv=1: RFC 2861 decay after one RTO of application-limited sending. */
static void cocktail_cwv_2861(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 now = tcp_jiffies32;
	u32 cwnd, used;

	if (tcp_is_cwnd_limited(sk)) {
		ca->cwv_stamp = now;
		return;
	}
	if (cp_elapsed(now, ca->cwv_stamp) < inet_csk(sk)->icsk_rto)
		return;
	ca->cwv_stamp = now;
	if (!cocktail_app_limited_decay_ok(sk))
		return;
	cwnd = cocktail_cwnd(tp);
	used = cp_cwv2861_decay(cwnd, tp->snd_cwnd_used, cocktail_iw_now(sk));
	if (used < cwnd) {
		tp->snd_ssthresh = tcp_current_ssthresh(sk);
		cocktail_set_cwnd(tp, used);
		cocktail_count(CC_CWV_DECAY);
	}
	tp->snd_cwnd_used = 0;
}

/* cwv=2: RFC 7661 validated / non-validated period. */
static void cocktail_cwv_7661(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 pipeack = max(ca->pipeack[0], ca->pipeack[1]);
	u32 cwnd = cocktail_cwnd(tp);
	u32 now = tcp_jiffies32;

	if (cp_cwv7661_validated(pipeack, cwnd)) {
		ca->nvp = 0;
		return;
	}
	if (!ca->nvp) {
		ca->nvp = 1;
		ca->nvp_stamp = now;
		return;
	}
	if (cp_elapsed(now, ca->nvp_stamp) < CP_NVP_SECONDS * HZ)
		return;
	ca->nvp_stamp = now;
	if (!cocktail_app_limited_decay_ok(sk))
		return;
	tp->snd_ssthresh = cp_cwv7661_nvp_ssthresh(tp->snd_ssthresh, cwnd);
	cocktail_set_cwnd(tp, cp_cwv7661_nvp_cwnd(cwnd, cocktail_iw_now(sk)));
	cocktail_count(CC_CWV_NVP_END);
}

static void cocktail_cwv(struct sock *sk)
{
	switch (READ_ONCE(cocktail_cwv_mode)) {
	case CP_CWV_2861:
		cocktail_cwv_2861(sk);
		break;
	case CP_CWV_7661:
		cocktail_cwv_7661(sk);
		break;
	}
	/* Window validation is ours: keep tcp_cwnd_validate() out of it. */
	tcp_sk(sk)->snd_cwnd_stamp = tcp_jiffies32;
}

static bool cocktail_may_grow(struct sock *sk)
{
	const struct cocktail *ca = inet_csk_ca(sk);

	switch (READ_ONCE(cocktail_cwv_mode)) {
	case CP_CWV_OFF:
		return true;
	case CP_CWV_7661:
		if (ca->nvp)
			return false;
		fallthrough;
	default:
		return tcp_is_cwnd_limited(sk);
	}
}

/* ---- tcp_congestion_ops -------------------------------------------- */

static void cocktail_init(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	memset(ca, 0, sizeof(*ca));
	ca->round_end_seq = tp->snd_nxt;
	ca->round_delivered = tp->delivered;
	ca->cwv_stamp = tcp_jiffies32;
	ca->pace_prev_status = SK_PACING_NONE;
	cp_maxwin_reset(&ca->bw, 0);

	/*
	 * Switched to cocktail on a connection that another algorithm already
	 * ran (setsockopt(TCP_CONGESTION) after the handshake): keep its
	 * window.  icsk_ca_initialized says so; data_segs_out does not, since
	 * a TCP Fast Open client has sent data in its SYN before the first
	 * .init.
	 */
	if (inet_csk(sk)->icsk_ca_initialized)
		return;
	/* Before the handshake tcp_init_transfer() will reset cwnd later. */
	if (sk->sk_state == TCP_SYN_SENT)
		ca->iw_pending = 1;
	else
		cocktail_set_iw(sk);
}

static void cocktail_release(struct sock *sk)
{
	cocktail_pace_stop(sk, CC_PACE_ENDED_OTHER, "release");
}

static void cocktail_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	cocktail_sample_bw(sk);
	if (!cocktail_may_grow(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, cocktail_cwnd(tp), acked);
}

static void cocktail_in_ack_event(struct sock *sk, u32 flags)
{
	struct cocktail *ca = inet_csk_ca(sk);

	/* The first ACK for the paced flight: back to ACK clocking. */
	if (ca->pacing && cp_after(tcp_sk(sk)->snd_una, ca->pace_end_seq))
		cocktail_pace_stop(sk, CC_PACE_ENDED, "ack");
	cocktail_update_round(sk);
	cocktail_cwv(sk);
}

static void cocktail_cwnd_event(struct sock *sk, enum tcp_ca_event ev)
{
	struct cocktail *ca = inet_csk_ca(sk);

	switch (ev) {
	case CA_EVENT_CWND_RESTART:
		cocktail_snapshot(sk);
		break;
	case CA_EVENT_TX_START:
		cocktail_tx_start(sk);
		break;
	case CA_EVENT_LOSS:
		ca->snap_valid = 0;
		cocktail_pace_stop(sk, CC_PACE_ENDED_LOSS, "loss");
		break;
	default:
		break;
	}
}

static struct tcp_congestion_ops cocktail __read_mostly = {
	.init		= cocktail_init,
	.release	= cocktail_release,
	.ssthresh	= tcp_reno_ssthresh,
	.undo_cwnd	= tcp_reno_undo_cwnd,
	.cong_avoid	= cocktail_cong_avoid,
	.cwnd_event	= cocktail_cwnd_event,
	.in_ack_event	= cocktail_in_ack_event,
	.owner		= THIS_MODULE,
	.name		= "cocktail",
};

static int __init cocktail_register(void)
{
	BUILD_BUG_ON(sizeof(struct cocktail) > ICSK_CA_PRIV_SIZE);
	BUILD_BUG_ON(ARRAY_SIZE(cocktail_counter_names) != CC_NR);
	return tcp_register_congestion_control(&cocktail);
}

static void __exit cocktail_unregister(void)
{
	tcp_unregister_congestion_control(&cocktail);
}

module_init(cocktail_register);
module_exit(cocktail_unregister);

/*
 * tcp_ca_find_autoload() calls request_module("tcp_%s", name), which finds
 * this module by its file name; the alias spells it out for modules.alias.
 */
MODULE_ALIAS("tcp-cocktail");
MODULE_AUTHOR("tcp-cocktail project");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("TCP cocktail: NewReno with initial-window, restart-after-idle (ssr/decay/keep/pace/auto/queue) and window-validation policies");
