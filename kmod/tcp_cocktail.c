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
 * Window growth is a parameter (see "Growth" below): NewReno
 * (tcp_slow_start, tcp_cong_avoid_ai, tcp_reno_ssthresh,
 * tcp_reno_undo_cwnd) or CUBIC with HyStart++; loss recovery is the
 * kernel's PRR either way.  The module uses the classic hooks, not
 * .cong_control, because PRR (tcp_cwnd_reduction) is not exported.  On
 * top of the growth it sets the initial window, decides the restart after
 * idle, and validates the window while the application does not use it:
 * those work the same under both growths.
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
 *   measure the flight is sized from the path, paced, and checked on its
 *          first ACKs; see "Measured restart" below
 * In CA_CWR or CA_Recovery, ssr and decay leave ssthresh alone, as
 * tcp_current_ssthresh() does.  Every decision emits the
 * tcp_cocktail:cocktail_restart tracepoint and counts in the stats
 * parameter, once per policy applied and once in a histogram of the idle
 * time in RTOs (idle_rto_1 for [1, 2) RTOs ... idle_rto_32 for 32 or more).
 *
 * Measured restart
 * ----------------
 * The window a connection had before the idle period says little about
 * the path: after a warm-up on a shallow buffer Reno's cwnd sits well
 * below the bandwidth-delay product, after one on a deep buffer well
 * above it.  restart=measure sizes the first flight from the path and
 * then looks at what the path does with it:
 *
 *     restart (idle > RTO)
 *         |  rate = max(pace_rate estimate, ACK-train rate),
 *         |  BDP = rate * min RTT / mss;
 *         |  cwnd = max(BDP >> misses + 2, min(IW, cwnd)); no rate: ssr
 *         v
 *     FLIGHT: paced at rate; cwnd frozen (.cong_avoid does nothing)
 *         |  first ACK of the flight: the train starts (time, delivered),
 *         |  the check ends one round trip later (snd_nxt now)
 *         v
 *     CHECK: every ACK (.pkts_acked) ----- RTT > check_rtt_pct % min RTT
 *         |                           |--- ACKs deliver below
 *         |                           |    check_rate_pct % of rate
 *         |                           |    (after >= 16 segments)
 *         |                           '--- loss, RTO or ECN (.ssthresh)
 *         |  a round trip of ACKs, or             |
 *         |  nothing left in flight               v
 *         v                                  exit: rate' = the ACK rate
 *     full: cwnd = min(cwnd, in flight + 2)  (else rate * min RTT / RTT,
 *     misses - 1                             or rate / 2 after a loss);
 *         |                                  cwnd = ssthresh = rate' * min
 *         |                                  RTT / mss (after a loss: the
 *         |                                  ssthresh, min with Reno's);
 *         |                                  misses + 1
 *         v                                       v
 *                 pacing state restored, ACK-clocked sending
 *
 * The rate is the bottleneck's, not only what the connection achieved:
 * besides the pace_rate estimate (delivery or window rate, both at most
 * cwnd / RTT), the module times the ACK train of every round (see
 * cocktail_train_ack()), which shows the bottleneck's rate even when the
 * window filled a fraction of the round trip.
 * A flight at the bottleneck's rate builds no queue, so its RTTs stay at
 * the minimum and its ACKs come back as fast as it was sent, unless the
 * path changed during the idle period: a competitor's queue raises the
 * RTT, its share slows the ACKs, an overflowing buffer drops.  Then the
 * flight leaves the old rate within the round trip in which the first
 * ACKs arrive, for the rate the ACKs show, without waiting for a loss.
 * The check's full verdict keeps the window at what is in flight, so
 * ending the pacing releases no burst.  misses (0..3) is the connection's
 * memory: each failed check halves its next flight, each passed one
 * earns a halving back, so a connection whose path keeps changing bets
 * less and one on a quiet path bets the whole BDP.  The verdict emits
 * tcp_cocktail:cocktail_check and counts in check_full, check_rtt,
 * check_rate or check_loss.
 *
 * Pre-idle rate
 * -------------
 * The kernel saves a rate sample in tp->rate_delivered, rate_interval_us
 * and rate_app_limited, and keeps it until a new one replaces it (it
 * saves every sample that is not application-limited, and the others
 * only when they are higher).  .cong_avoid runs after tcp_rate_gen(), so
 * it sees a fresh sample first; in CWR and Recovery the kernel does not
 * call it, and .in_ack_event picks the sample up one ACK later.  A sample
 * feeds the max once (by a signature of delivered and interval), not
 * once per ACK, so an old rate ages out.  Samples feed a windowed
 * maximum over 10..20 round trips; an application-limited sample counts
 * only when it raises the maximum, as in BBR, because it only shows the
 * path can do at least that much.  Rounds advance when an ACK delivers
 * data past the round's end, not on time, so the maximum survives any
 * idle period.  pace_rate chooses the flight's rate:
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
 * Initial ssthresh
 * ----------------
 * ssthresh_est=1 replaces the kernel's "infinite" initial ssthresh with
 * Hoe's estimate of the path's BDP: the segments of a slow-start round
 * leave the bottleneck spaced by its rate and so do their ACKs, so the
 * segments delivered from the round's first ACK to the one that ends it,
 * over the time between them, give the rate, and that times the minimum
 * RTT the BDP.  Slow start then stops at the BDP instead of overshooting
 * it by up to a window and losing the excess.  A round whose ACK train
 * is shorter than 3 segments leaves the estimate to the next round; a
 * loss, or an ssthresh from the route, ends it.  A failed check of a
 * measured restart sets ssthresh the same way, from its ACK rate.
 *
 * Growth
 * ------
 * growth=reno (the default) is NewReno.  growth=cubic is CUBIC as RFC
 * 9438 specifies it, with HyStart++ (RFC 9406) in the initial slow start;
 * the arithmetic is in cocktail_policy.h (cp_cubic_*, cp_hystart_*),
 * host-tested against the RFCs' equations.  The parameter is read at
 * .init: a connection keeps the growth it started with.
 *
 *     initial slow start (HyStart++)              loss / ECN (.ssthresh)
 *       cwnd += min(acked, L = 8)                   W_max = cwnd, or
 *         |  a round's min RTT (>= 8 samples)       17/20 cwnd below the
 *         |  >= last round's + clamp(last / 8,      last W_max (fast
 *         |  4 ms, 16 ms)                           convergence);
 *         v                                         ssthresh = 7/10 cwnd
 *       CSS: cwnd += min(acked, 8) / 4                  |  PRR, recovery
 *         |  min RTT back below CSS's baseline:         v
 *         |  slow start again                   congestion avoidance:
 *         |  5 rounds in CSS: ssthresh = cwnd    an epoch starts on the
 *         v                                      first ACK, K = cbrt((W_max
 *     congestion avoidance  <--------------------  - cwnd) / 0.4) s
 *       W_cubic(t) = 0.4 (t - K)^3 + W_max (segments, t in s since the
 *       epoch began); target = W_cubic(t + srtt) within [cwnd, 1.5 cwnd];
 *       cwnd += (target - cwnd) / cwnd per segment ACKed
 *       (tcp_cong_avoid_ai()); W_est += 9/17 * acked / cwnd (1 once W_est
 *       reaches the window before the last reduction), and cwnd = W_est
 *       while W_cubic(t) < W_est (the Reno-friendly region)
 *
 * Without a W_max (no loss yet, after HyStart++ or Hoe's estimate ended
 * slow start, after an RTO) an epoch starts on the plateau: K = 0, W_max
 * = the window then (RFC 9438 sections 4.8, 4.10).  The constants are
 * the RFCs' (beta 0.7 and C 0.4 make CUBIC as fair to Reno as AIMD(9/17,
 * 0.7); the HyStart++ thresholds are explained in cocktail_policy.h).  An
 * undone reduction (.undo_cwnd) takes W_max back to the window before it.
 * Time the window is not in use earns no growth: an ACK that may not grow
 * the window (application-limited under cwv=1/2, a measured flight) ends
 * the epoch, a restart after idle ends it too (the next starts from the
 * window the restart policy set), and a pause shorter than the RTO moves
 * it forward by the pause.  HyStart++ runs in the initial slow start only
 * (RFC 9406): from .init until a congestion event, congestion avoidance
 * or its own exit; a restart during it starts its rounds over.
 *
 * Hoe's estimate (ssthresh_est, below) and HyStart++ answer the same
 * question, where slow start should stop, from different evidence: the
 * ACK spacing of the first round (the bottleneck's rate, before any
 * queue) and the RTT rise of later rounds (a queue building).  They
 * compose: both run in the initial slow start, each only ever lowers
 * ssthresh, and whichever lowers it first ends slow start there (Hoe's
 * ssthresh when cwnd reaches it; HyStart++'s exit sets ssthresh = cwnd,
 * below any ssthresh still ahead).  Hoe's estimate acts from the first
 * round, before HyStart++ has two rounds of RTTs to compare; HyStart++
 * catches a path whose rate the first train overestimated (a burst
 * through an idle queue) or that a competitor fills later.
 *
 * State: HyStart++'s round minima share their words with CUBIC's W_max
 * and epoch (struct cocktail, in cocktail_state.h): the one lives only
 * before the first congestion avoidance, the other only after.
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
 *      decays, and after nvp_s seconds in it (RFC 7661's 5 minutes by
 *      default) cwnd = max(cwnd / 2, min(IW, cwnd)), ssthresh =
 *      max(ssthresh, 3/4 cwnd), and a new period starts.  Loss response
 *      stays the growth's (Reno's or CUBIC's)
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
 * connection (iw, pace_iw, ssthresh_est, growth), the next restart (restart,
 * auto_rtt_us, queue_pct, pace_rate) or the next ACK (cwv, nvp_s,
 * check_rtt_pct, check_rate_pct).
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
#include "cocktail_state.h"

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

/* ---- parameters ---------------------------------------------------- */

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
/* RFC 7661's non-validated period, in seconds. */
static unsigned int cocktail_nvp_s __read_mostly = CP_NVP_SECONDS;
/* Off: with iw <= 10 internal pacing leaves the initial window unpaced. */
static unsigned int cocktail_pace_iw __read_mostly;
/*
 * restart=measure: an RTT 25% above the path's minimum is a queue of a
 * quarter of the path's RTT, more than the pacing quantum and a delayed
 * ACK add on any path from 20 ms on, and as much as a shallow buffer
 * holds.
 */
static unsigned int cocktail_check_rtt_pct __read_mostly = 125;
/*
 * restart=measure: ACKs at less than 75% of the sending rate mean a
 * competitor takes at least a quarter of the bottleneck; noise in the ACK
 * spacing over CP_CHECK_MIN_SEGS segments stays well inside that.
 */
static unsigned int cocktail_check_rate_pct __read_mostly = 75;
/* On: without it ssthresh starts at the kernel's "infinity". */
static unsigned int cocktail_ssthresh_est __read_mostly = 1;

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

/* NewReno, as before the parameter existed; cubic is opt-in for now. */
static struct cocktail_choice cocktail_growth __read_mostly = {
	.val = CP_GROWTH_RENO,
	.names = cocktail_growth_names,
	.n = CP_NR_GROWTHS,
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
MODULE_PARM_DESC(restart, "after idle > RTO: ssr | decay | keep | pace | auto | queue | measure (default auto)");

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

module_param_cb(growth, &cocktail_choice_ops, &cocktail_growth, 0644);
MODULE_PARM_DESC(growth, "window growth of new connections: reno (NewReno) | cubic (RFC 9438 with HyStart++, RFC 9406) (default reno)");

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

/*
 * At least a second: the period is checked on ACKs, coarser than that is
 * not meant.  At most CP_NVP_MAX_S: an hour, twelve times RFC 7661's.
 */
static int cocktail_nvp_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, CP_NVP_MAX_S);
}

static const struct kernel_param_ops cocktail_nvp_ops = {
	.set = cocktail_nvp_set,
	.get = param_get_uint,
};

module_param_cb(nvp_s, &cocktail_nvp_ops, &cocktail_nvp_s, 0644);
MODULE_PARM_DESC(nvp_s, "cwv=2: seconds of a non-validated period before cwnd is halved (1..3600, default 300, RFC 7661)");

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

module_param_cb(ssthresh_est, &cocktail_bool_ops, &cocktail_ssthresh_est, 0644);
MODULE_PARM_DESC(ssthresh_est, "1: initial ssthresh from the spacing of the first ACKs (Hoe's estimate of the path's BDP), 0: the kernel's (default 1)");

/*
 * As queue_pct: at 100 % or less every RTT sample would fail the check;
 * 1000 % is a queue nine times the path's RTT.
 */
static const struct kernel_param_ops cocktail_check_rtt_ops = {
	.set = cocktail_queue_pct_set,
	.get = param_get_uint,
};

module_param_cb(check_rtt_pct, &cocktail_check_rtt_ops,
		&cocktail_check_rtt_pct, 0644);
MODULE_PARM_DESC(check_rtt_pct, "restart=measure leaves the paced flight when an ACK's RTT is above this percentage of the path's minimum RTT (101..1000, default 125)");

/* 0 % would never fail; 100 % or more would fail on every ACK. */
static int cocktail_check_rate_set(const char *val,
				   const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 99);
}

static const struct kernel_param_ops cocktail_check_rate_ops = {
	.set = cocktail_check_rate_set,
	.get = param_get_uint,
};

module_param_cb(check_rate_pct, &cocktail_check_rate_ops,
		&cocktail_check_rate_pct, 0644);
MODULE_PARM_DESC(check_rate_pct, "restart=measure leaves the paced flight when its ACKs deliver below this percentage of the sending rate (1..99, default 75)");

/* ---- counters ------------------------------------------------------ */

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
MODULE_PARM_DESC(stats, "read-only counters, one \"name value\" per line: restarts per applied policy (ssr decay keep pace measure), auto_ssr, auto_pace, queue_ssr, queue_pace, paced flights ended, iw applied, cwv decays, measured restarts' checks, ssthresh estimates, HyStart++ transitions, restarts by idle time in RTOs");

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

/* ---- growth: CUBIC and HyStart++ ---------------------------------- */

/* CUBIC's clock, ms: the low 32 bits of tcp_mstamp / 1000 (wrap-safe). */
static u32 cocktail_now_ms(const struct tcp_sock *tp)
{
	return (u32)div_u64(tp->tcp_mstamp, USEC_PER_MSEC);
}

/*
 * The initial slow start is over (a congestion event, congestion
 * avoidance reached, HyStart++'s own exit): CUBIC takes the words over,
 * with no W_max yet (the first epoch starts on its plateau) and
 * cwnd_prior = cwnd, the window "upon exiting the first slow start"
 * (RFC 9438 section 4.10).
 */
static void cocktail_hystart_end(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);

	if (!ca->hystart)
		return;
	ca->hystart = 0;
	memset(&ca->cu, 0, sizeof(ca->cu));
	ca->cu.cwnd_prior = cocktail_cwnd(tcp_sk(sk));
}

/* A round ended during the initial slow start. */
static void cocktail_hystart_round(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (cp_hystart_round(&ca->hs) != CP_HS_EXIT)
		return;
	tp->snd_ssthresh = cocktail_cwnd(tp);
	cocktail_count(CC_HYSTART_EXIT);
	cocktail_hystart_end(sk);
}

/* An ACK's RTT sample (us, <= 0: none) during the initial slow start. */
static void cocktail_hystart_rtt(struct sock *sk, s32 rtt_us)
{
	struct cocktail *ca = inet_csk_ca(sk);

	if (rtt_us <= 0)
		return;
	switch (cp_hystart_rtt(&ca->hs, rtt_us)) {
	case CP_HS_CSS:
		cocktail_count(CC_HYSTART_CSS);
		break;
	case CP_HS_RESUME:
		cocktail_count(CC_HYSTART_RESUME);
		break;
	default:
		break;
	}
}

/*
 * growth=cubic on an ACK that may grow the window: slow start (with
 * HyStart++'s L and CSS in the initial one), then CUBIC's window function
 * and Reno-friendly region in congestion avoidance.
 */
static void cocktail_cubic_grow(struct sock *sk, u32 acked)
{
	struct cocktail *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 cwnd, w, cnt;

	if (tcp_in_slow_start(tp)) {
		if (ca->hystart)
			acked = cp_hystart_grow(&ca->hs, acked);
		acked = acked ? tcp_slow_start(tp, acked) : 0;
		if (!acked)
			return;
	}
	cocktail_hystart_end(sk);
	cwnd = cocktail_cwnd(tp);
	w = cp_cubic_ack(&ca->cu, cwnd, acked, cocktail_now_ms(tp),
			 cocktail_srtt_us(tp) / USEC_PER_MSEC, &cnt);
	if (w > cwnd)
		cocktail_set_cwnd(tp, w);
	else if (cnt)
		tcp_cong_avoid_ai(tp, cnt, acked);
}

/*
 * The window did not grow for this ACK (application-limited under cwv,
 * or a measured restart's frozen flight): the epoch ends, so that CUBIC's
 * t does not count the time the window was not in use (RFC 9438 section
 * 4.2); the next ACK that may grow starts a new one from the window then.
 */
static void cocktail_cubic_hold(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);

	if (ca->cubic && !ca->hystart)
		ca->cu.w_est = 0;
}

/*
 * The first transmit after @idle jiffies with nothing in flight.  Idle
 * time earns CUBIC no growth: after a restart (idle > RTO, the policy has
 * set the window) the epoch ends and the next one starts from the window
 * the policy left; after a shorter pause the epoch is moved forward by
 * the pause, so t does not count it.  During the initial slow start,
 * HyStart++'s round minima from before the pause say nothing about the
 * queue after it: it starts over (back to slow start if it was in CSS).
 */
static void cocktail_cubic_idle(struct sock *sk, u32 idle, bool restart)
{
	struct cocktail *ca = inet_csk_ca(sk);

	if (!ca->cubic)
		return;
	if (ca->hystart) {
		if (restart)
			cp_hystart_init(&ca->hs);
		return;
	}
	if (restart)
		ca->cu.w_est = 0;
	else if (ca->cu.w_est)
		ca->cu.t0_ms += jiffies_to_msecs(idle);
}

/* ---- pacing -------------------------------------------------------- */

/* A rate in B/s as kept in struct cocktail: saturated at U32_MAX. */
static u32 cocktail_rate32(unsigned long rate)
{
	return rate >= U32_MAX ? U32_MAX : rate;
}

/* ... and back: the saturated value is ~0UL, no cap. */
static unsigned long cocktail_rate_ul(u32 rate)
{
	return rate == U32_MAX ? ~0UL : rate;
}

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
				(u16)(tp->data_segs_out - ca->pace_start_segs),
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
	prev = cmpxchg(&sk->sk_max_pacing_rate, (unsigned long)ca->pace_rate,
		       cocktail_rate_ul(ca->pace_prev_max));
	if (prev == ca->pace_rate)
		WRITE_ONCE(sk->sk_pacing_rate,
			   cocktail_rate_ul(ca->pace_prev_rate));
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
	ca->pace_prev_rate = cocktail_rate32(READ_ONCE(sk->sk_pacing_rate));
	ca->pace_prev_max = cocktail_rate32(READ_ONCE(sk->sk_max_pacing_rate));
	/* never the saturated value, which reads back as "no cap" */
	rate = min_t(unsigned long, rate, U32_MAX - 1);
	ca->pace_rate = rate;
	ca->pace_end_seq = tp->snd_nxt;
	ca->pace_start_us = (u32)tp->tcp_mstamp;
	ca->pace_start_segs = tp->data_segs_out;
	ca->pacing = 1;
	WRITE_ONCE(sk->sk_max_pacing_rate, rate);
	WRITE_ONCE(sk->sk_pacing_rate, rate);
	cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
}

/* ---- measured restart ---------------------------------------------- */

/*
 * The filters age when a sample arrives: before a restart reads them, an
 * empty sample at the current round drops buckets older than the window
 * (a flow whose samples stopped counting, or did not come).
 */
static void cocktail_age_filters(struct cocktail *ca)
{
	cp_maxwin_update(&ca->bw, ca->round, COCKTAIL_BW_ROUNDS, 0);
	cp_maxwin_update(&ca->cap, ca->round, COCKTAIL_BW_ROUNDS, 0);
}

/*
 * The pre-idle rate a restart paces at (pace_rate), in B/s, for a window
 * of @cwnd segments, with the filters aged first; 0 without any rate.
 */
static unsigned long cocktail_restart_rate(struct sock *sk, u32 cwnd)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	cocktail_age_filters(ca);
	return cp_pace_rate(cp_maxwin_get(&ca->bw), cwnd, tp->mss_cache,
			    cocktail_srtt_us(tp),
			    READ_ONCE(sk->sk_max_pacing_rate),
			    READ_ONCE(cocktail_pace_rate.val));
}

/* The path's minimum RTT in us: the kernel's windowed min, else srtt. */
static u32 cocktail_path_rtt_us(const struct tcp_sock *tp)
{
	return cp_path_rtt_us(tcp_min_rtt(tp), cocktail_srtt_us(tp));
}

/* The ACK train's rate in B/s, 0 while too few segments tell it. */
static u64 cocktail_train_rate(const struct sock *sk)
{
	const struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 segs = tp->delivered - ca->train_delivered;

	if (ca->mstate != CM_CHECK || segs < CP_CHECK_MIN_SEGS)
		return 0;
	return cp_rate(segs, tp->mss_cache,
		       (u32)tp->tcp_mstamp - ca->train_us, CP_U64_MAX);
}

/*
 * The check of a measured restart reached @verdict.  A full flight keeps
 * its window but no more than is in flight (plus the extra segments), so
 * that ending the pacing does not release a burst; a failed check drops
 * to the window of the rate the ACKs showed and makes it ssthresh, so
 * the connection goes on in congestion avoidance from there.  After a
 * loss the kernel's recovery (PRR) brings cwnd down to the ssthresh
 * cocktail_ssthresh() returns.  Returns that window, in segments.
 */
static u32 cocktail_check_end(struct sock *sk, enum cp_check verdict)
{
	struct cocktail *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 min_rtt_us = cocktail_path_rtt_us(tp);
	u64 ack_rate = cocktail_train_rate(sk);
	u32 segs = ca->mstate == CM_CHECK ?
		   tp->delivered - ca->train_delivered : 0;
	u64 rate = ca->pace_rate;
	u32 cwnd = cocktail_cwnd(tp);

	if (verdict == CP_CHECK_FULL) {
		if (tp->packets_out)
			cwnd = min(cwnd, tcp_packets_in_flight(tp) +
					 CP_MEASURE_EXTRA_SEGS);
	} else {
		rate = cp_exit_rate(verdict, ca->pace_rate, ack_rate,
				    cocktail_srtt_us(tp), min_rtt_us);
		cwnd = max(cp_bdp_segs(rate, min_rtt_us, tp->mss_cache),
			   CP_SSTHRESH_MIN);
		if (verdict != CP_CHECK_LOSS)
			tp->snd_ssthresh = cwnd;
	}
	if (verdict != CP_CHECK_LOSS)
		cocktail_set_cwnd(tp, cwnd);
	ca->mstate = CM_NONE;
	ca->misses = cp_measure_misses(ca->misses, verdict);
	cocktail_count(cocktail_check_counter(verdict));
	trace_cocktail_check(sk, cocktail_check_names[verdict], segs,
			     (u32)tp->tcp_mstamp - ca->train_us, ca->pace_rate,
			     ack_rate, cocktail_srtt_us(tp), min_rtt_us,
			     cocktail_cwnd(tp), tp->snd_ssthresh, ca->misses);
	cocktail_pace_stop(sk, verdict == CP_CHECK_LOSS ?
			   CC_PACE_ENDED_LOSS : CC_PACE_ENDED,
			   cocktail_check_names[verdict]);
	return cwnd;
}

/*
 * Every ACK while a measured flight is out (.pkts_acked, before the
 * kernel grows or cuts cwnd for this ACK).  The first ACK starts the
 * train; from then on each ACK's RTT sample and the train's rate are
 * checked, until the ACKs of one round trip have come back (snd_una
 * passes what was sent at the first ACK) or nothing is left in flight.
 * The ACK that leaves nothing in flight is not checked: the receiver may
 * have delayed it, and there is nothing left to slow down.
 */
static void cocktail_check_ack(struct sock *sk, s32 rtt_us)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	enum cp_check verdict;

	if (ca->mstate == CM_FLIGHT) {
		ca->mstate = CM_CHECK;
		ca->train_us = (u32)tp->tcp_mstamp;
		ca->train_delivered = tp->delivered;
		ca->pace_end_seq = tp->snd_nxt;
	}
	if (!tp->packets_out) {
		cocktail_check_end(sk, CP_CHECK_FULL);
		return;
	}
	verdict = cp_check_ack(rtt_us > 0 ? rtt_us : 0,
			       cocktail_path_rtt_us(tp),
			       READ_ONCE(cocktail_check_rtt_pct),
			       tp->delivered - ca->train_delivered,
			       (u32)tp->tcp_mstamp - ca->train_us,
			       tp->mss_cache, ca->pace_rate,
			       READ_ONCE(cocktail_check_rate_pct));
	if (verdict == CP_CHECK_GOING && !cp_before(tp->snd_una,
						    ca->pace_end_seq))
		verdict = CP_CHECK_FULL;
	if (verdict != CP_CHECK_GOING)
		cocktail_check_end(sk, verdict);
}

/*
 * ACK trains (whenever no measured flight is being checked): segments
 * sent in a burst, or ACK-clocked behind one, leave the bottleneck spaced
 * by its rate, and so do their ACKs.  A train is a run of ACKs without a
 * pause: it ends at an ACK whose gap per segment delivered is more than
 * CP_TRAIN_BREAK times the train's mean so far (the idle part of a round
 * trip whose window did not fill it, a delayed ACK), or with its round.  The segments it
 * delivered over its duration are the bottleneck's rate, whatever part of
 * the round trip the window filled: the delivery rate is the window over
 * the round trip, what the connection achieved, not what the path can
 * do.  Trains of at least CP_TRAIN_MIN_SEGS segments feed the windowed
 * max cap, unless cp_train_plausible() says its ACKs were bunched by the
 * receiving host (a socket backlog processed in one go times them
 * microseconds apart); the first of at least CP_HOE_MIN_SEGS gives Hoe's
 * ssthresh estimate.  The previous ACK's time is tp->delivered_mstamp, which the
 * kernel moves only after .pkts_acked.
 */
static void cocktail_train_ack(struct sock *sk, u32 acked)
{
	struct cocktail *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 now = (u32)tp->tcp_mstamp, prev = (u32)tp->delivered_mstamp;
	u32 segs, span, est;
	u64 rate;

	if (!acked)
		return;
	segs = tp->delivered - acked - ca->train_delivered;
	span = prev - ca->train_us;
	/*
	 * A flow that never pauses (a standing queue) would make one train
	 * of the whole transfer: a train also ends with its round, at the
	 * ACK that starts the next (cocktail_update_round() runs after).
	 */
	if (ca->train == CT_TRAIN &&
	    !cp_after(tp->snd_una, ca->round_end_seq) &&
	    !cp_train_breaks(segs, span, acked, now - prev))
		return;
	/* The train ended at the previous ACK; this one starts the next. */
	if (ca->train == CT_TRAIN && span) {
		rate = cp_rate(segs, tp->mss_cache, span, CP_U64_MAX);
		if (segs >= CP_TRAIN_MIN_SEGS &&
		    cp_train_plausible(rate, span, cp_maxwin_get(&ca->bw),
				       cocktail_path_rtt_us(tp)))
			cp_maxwin_update(&ca->cap, ca->round,
					 COCKTAIL_BW_ROUNDS, rate);
		if (ca->hoe && segs >= CP_HOE_MIN_SEGS) {
			ca->hoe = 0;
			est = cp_hoe_ssthresh(segs, span, tp->mss_cache,
					      cocktail_path_rtt_us(tp));
			if (est && tcp_in_initial_slowstart(tp) &&
			    inet_csk(sk)->icsk_ca_state == TCP_CA_Open) {
				tp->snd_ssthresh = min(est, tp->snd_cwnd_clamp);
				cocktail_count(CC_SSTHRESH_EST);
			}
		}
	}
	ca->train = CT_TRAIN;
	ca->train_us = now;
	ca->train_delivered = tp->delivered;
}

static void cocktail_pkts_acked(struct sock *sk,
				const struct ack_sample *sample)
{
	struct cocktail *ca = inet_csk_ca(sk);

	if (ca->hystart)
		cocktail_hystart_rtt(sk, sample->rtt_us);
	if (ca->mstate)
		cocktail_check_ack(sk, sample->rtt_us);
	else
		cocktail_train_ack(sk, sample->pkts_acked);
}

/*
 * Loss, RTO or ECN: the kernel asks for ssthresh before it reduces cwnd:
 * Reno's half, or CUBIC's beta_cubic with W_max and fast convergence
 * (a congestion event also ends the initial slow start's HyStart++).
 * During a measured restart's check this is the check's verdict: the
 * window drops to the rate the ACKs showed, at most the growth's own.
 */
static u32 cocktail_ssthresh(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	u32 base;

	ca->hoe = 0;
	if (ca->cubic) {
		cocktail_hystart_end(sk);
		base = cp_cubic_loss(&ca->cu, cocktail_cwnd(tcp_sk(sk)));
	} else {
		base = tcp_reno_ssthresh(sk);
	}
	if (!ca->mstate)
		return base;
	return max(min(base, cocktail_check_end(sk, CP_CHECK_LOSS)),
		   CP_SSTHRESH_MIN);
}

/*
 * The kernel found the last reduction spurious (DSACK, timestamps, F-RTO)
 * and puts cwnd back (tcp_reno_undo_cwnd(): the larger of cwnd and the
 * window before the reduction).  CUBIC takes back the reduction's W_max
 * too, the window before it (RFC 9438 section 4.9), and starts a new
 * epoch from the restored window.
 */
static u32 cocktail_undo_cwnd(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);

	if (ca->cubic && !ca->hystart) {
		ca->cu.w_max = max(ca->cu.w_max, ca->cu.cwnd_prior);
		ca->cu.w_est = 0;
	}
	return tcp_reno_undo_cwnd(sk);
}

/*
 * restart=measure: the flight's window is the BDP of the pre-idle rate
 * (the pace_rate estimate) and the path's minimum RTT, less after recent
 * failed checks, at least what a slow-start restart would allow; it is
 * paced at that rate and checked on its ACKs.  No rate at all: ssr.
 * Returns the pacing rate (0: fell back to ssr); sets *cwnd.
 */
static unsigned long cocktail_measure_restart(struct sock *sk, u32 before,
					      u32 *cwnd)
{
	struct cocktail *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 floor = cp_restart_ssr(before, cocktail_iw_now(sk));
	unsigned long rate;
	u32 bdp;

	rate = cp_path_rate(cocktail_restart_rate(sk, before),
			    cp_maxwin_get(&ca->cap),
			    READ_ONCE(sk->sk_max_pacing_rate));
	bdp = cp_bdp_segs(rate, cocktail_path_rtt_us(tp), tp->mss_cache);
	if (!bdp) {
		cocktail_count(CC_MEASURE_NO_RATE);
		*cwnd = floor;
		return 0;
	}
	*cwnd = cp_measure_cwnd(bdp, ca->misses, floor);
	cocktail_pace_start(sk, rate);
	ca->mstate = CM_FLIGHT;
	return rate;
}

/* ---- restart after idle -------------------------------------------- */

static void cocktail_snapshot(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	/* Keep the first snapshot: a second restart would see the cut cwnd. */
	if (ca->snap_valid)
		return;
	/* Nothing in flight: a train still open ends (its words are reused). */
	if (ca->mstate)
		cocktail_check_end(sk, CP_CHECK_FULL);
	ca->train = CT_WAIT;
	ca->hoe = 0;
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
	unsigned long rate = cocktail_restart_rate(sk, cwnd);

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
	u32 path_rtt_us = cocktail_path_rtt_us(tp);
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
	if (pol == CP_MEASURE) {
		rate = cocktail_measure_restart(sk, before, &after);
		/* Without a rate measure acted as ssr: so does ssthresh. */
		if (!rate)
			ssthresh = cocktail_restart_ssthresh(sk, CP_SSR,
							     ssthresh, before);
	} else {
		ssthresh = cocktail_restart_ssthresh(sk, pol, ssthresh, before);
	}
	tp->snd_ssthresh = ssthresh;
	cocktail_set_cwnd(tp, after);
	tp->snd_cwnd_stamp = tcp_jiffies32;
	tp->snd_cwnd_used = 0;
	ca->cwv_stamp = tcp_jiffies32;
	if (pol == CP_PACE)
		rate = cocktail_pace_restart(sk, before);

	cocktail_count(cocktail_policy_counter(pol));
	cocktail_count(CC_IDLE_RTO_1 + cp_idle_bucket(idle, rto));
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
	if (READ_ONCE(cocktail_ssthresh_est) && tcp_in_initial_slowstart(tp))
		ca->hoe = 1;
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
	bool restart = cp_idle_exceeds_rto(idle, inet_csk(sk)->icsk_rto);

	if (restart)
		cocktail_restart_apply(sk, idle);
	else if (ca->snap_valid)
		cocktail_restart_undo(sk);
	cocktail_cubic_idle(sk, idle, restart);
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

	if (!cp_after(tp->snd_una, ca->round_end_seq) ||
	    tp->delivered == ca->round_delivered)
		return;
	ca->round++;
	ca->round_end_seq = tp->snd_nxt;
	ca->pipeack[1] = ca->pipeack[0];
	ca->pipeack[0] = min_t(u32, tp->delivered - ca->round_delivered,
			       U16_MAX);
	ca->round_delivered = tp->delivered;
	if (ca->hystart)
		cocktail_hystart_round(sk);
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
	u32 sig = cp_sample_sig(tp->rate_delivered, tp->rate_interval_us);
	u64 bw;

	/*
	 * The kernel keeps its last saved sample until a new one replaces
	 * it; fed again on every ACK it would stay in the max forever.
	 */
	if (sig == ca->bw_sig)
		return;
	ca->bw_sig = sig;
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

	if (pipeack == U16_MAX || cp_cwv7661_validated(pipeack, cwnd)) {
		ca->nvp = 0;
		return;
	}
	if (!ca->nvp) {
		ca->nvp = 1;
		ca->nvp_stamp = now;
		return;
	}
	if (cp_elapsed(now, ca->nvp_stamp) < READ_ONCE(cocktail_nvp_s) * HZ)
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
	cp_maxwin_reset(&ca->cap, 0);
	if (READ_ONCE(cocktail_growth.val) == CP_GROWTH_CUBIC) {
		ca->cubic = 1;
		/* HyStart++ is for the initial slow start only (RFC 9406) */
		ca->hystart = tcp_in_initial_slowstart(tp);
		if (ca->hystart)
			cp_hystart_init(&ca->hs);
	}

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
	const struct cocktail *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	cocktail_sample_bw(sk);
	/* A measured flight's window is the check's to set. */
	if (ca->mstate || !cocktail_may_grow(sk)) {
		cocktail_cubic_hold(sk);
		return;
	}
	if (ca->cubic) {
		cocktail_cubic_grow(sk, acked);
		return;
	}
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

	/*
	 * The first ACK for the paced flight: back to ACK clocking (a
	 * measured flight's check decides when its pacing ends).
	 */
	if (ca->pacing && !ca->mstate &&
	    cp_after(tcp_sk(sk)->snd_una, ca->pace_end_seq))
		cocktail_pace_stop(sk, CC_PACE_ENDED, "ack");
	/*
	 * .cong_avoid sees each sample first, but the kernel does not call
	 * it in CWR or Recovery: this catches those samples one ACK late.
	 */
	cocktail_sample_bw(sk);
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
		/*
		 * RTO: the first epoch after it starts on its plateau, K = 0
		 * and W_max = cwnd then (RFC 9438 section 4.8).
		 */
		if (ca->cubic && !ca->hystart)
			ca->cu.w_max = 0;
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
	.ssthresh	= cocktail_ssthresh,
	.undo_cwnd	= cocktail_undo_cwnd,
	.cong_avoid	= cocktail_cong_avoid,
	.pkts_acked	= cocktail_pkts_acked,
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
MODULE_DESCRIPTION("TCP cocktail: NewReno or CUBIC growth with initial-window, restart-after-idle (ssr/decay/keep/pace/auto/queue/measure) and window-validation policies");
