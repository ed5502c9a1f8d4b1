/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cocktail_policy.h - the arithmetic of the cocktail congestion control.
 *
 * Pure functions of plain integers: no socket, no locking, no kernel
 * headers beyond the fixed-size types.  tcp_cocktail.c feeds them values
 * read from struct tcp_sock; tests/unit/test_policy.c runs them on the host.
 *
 * Units: windows in segments, rates in bytes per second, times in the unit
 * the caller chooses for both arguments (the module passes jiffies for idle
 * and RTO, microseconds for RTTs).  All "time" arguments that come from a
 * free-running 32-bit clock (jiffies, sequence numbers) are compared with
 * the wrap-safe helpers below.
 */
#ifndef _COCKTAIL_POLICY_H
#define _COCKTAIL_POLICY_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/math64.h>

static inline u64 cp_div_u64_rem(u64 a, u32 b, u32 *rem)
{
	return div_u64_rem(a, b, rem);
}
#else
#ifndef __VMLINUX_H__	/* the BPF build has them, and bool, from vmlinux.h */
#include <stdbool.h>

/* the kernel's fixed-size types, from the compiler's own definitions */
typedef __UINT8_TYPE__ u8;
typedef __UINT16_TYPE__ u16;
typedef __UINT32_TYPE__ u32;
typedef __INT32_TYPE__ s32;
typedef __UINT64_TYPE__ u64;
typedef __INT64_TYPE__ s64;
#endif

static inline u64 cp_div_u64_rem(u64 a, u32 b, u32 *rem)
{
	*rem = (u32)(a % b);
	return a / b;
}
#endif

#define CP_USEC_PER_SEC		1000000U
#define CP_USEC_PER_MSEC	1000U
#define CP_U64_MAX		(~(u64)0)

/*
 * *@res = @a * @b; false when the product does not fit 64 bits.  Done in
 * 32-bit halves: compilers turn the usual "a > U64_MAX / b" test into a
 * 128-bit multiply, which the BPF target does not have.
 */
static inline bool cp_mul_u64_u32(u64 a, u32 b, u64 *res)
{
	u64 hi = (a >> 32) * b, lo = (a & 0xffffffffULL) * b;

	if (hi >> 32)
		return false;
	hi <<= 32;
	if (lo > CP_U64_MAX - hi)
		return false;
	*res = hi + lo;
	return true;
}

/*
 * Initial window limits in segments: at least one segment, and at most 64,
 * six times RFC 6928's 10, so a mistyped value cannot send a first burst
 * of hundreds of segments into a path nothing has probed yet.  0 is free
 * to mark iw=rfc3390.
 */
#define CP_IW_MIN		1U
#define CP_IW_MAX		64U
#define CP_IW_RFC3390		0U	/* iw=rfc3390 is stored as 0 */
#define CP_RFC3390_BYTES	4380U	/* RFC 3390's byte bound */

/* Restart policies; the order is the order of the names in the module. */
enum cp_policy {
	CP_SSR,		/* slow-start restart: cwnd = min(IW, cwnd), RFC 5681 */
	CP_DECAY,	/* halve per RTO idle, floor min(IW, cwnd), RFC 2861 */
	CP_KEEP,	/* no change */
	CP_PACE,	/* keep cwnd, pace the first flight (RBP) */
	CP_AUTO,	/* ssr when min RTT < auto_rtt_us, else pace */
	CP_QUEUE,	/* ssr when srtt > queue_pct % of min RTT, else pace */
	CP_MEASURE,	/* flight of rate x min RTT, paced, checked on its ACKs */
	CP_NR_POLICIES
};

/* Rate of a paced restart flight (parameter pace_rate). */
enum cp_pace_rate {
	CP_RATE_DELIVERY,	/* windowed max delivery rate, else window */
	CP_RATE_WINDOW,		/* cwnd * mss / srtt (Heidemann's RBP) */
	CP_RATE_MAX,		/* the larger of the two */
	CP_NR_RATES
};

/* Congestion window validation modes (parameter cwv). */
enum cp_cwv {
	CP_CWV_OFF,	/* cwnd may grow while application-limited */
	CP_CWV_2861,	/* RFC 2861 */
	CP_CWV_7661,	/* RFC 7661, simplified (see tcp_cocktail.c) */
};

/*
 * RFC 7661's non-validated period (NVP), in seconds: its 5 minutes, the
 * default of nvp_s.  The largest nvp_s is an hour: in jiffies it fits u32
 * at any HZ, and cp_elapsed() is exact over it.
 */
#define CP_NVP_SECONDS		300U
#define CP_NVP_MAX_S		3600U

static inline u32 cp_min(u32 a, u32 b)
{
	return a < b ? a : b;
}

static inline u32 cp_max(u32 a, u32 b)
{
	return a > b ? a : b;
}

/* Wrap-safe comparisons of 32-bit sequence numbers or timestamps. */
static inline bool cp_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static inline bool cp_after(u32 a, u32 b)
{
	return cp_before(b, a);
}

/* Time elapsed from @then to @now on a free-running 32-bit clock. */
static inline u32 cp_elapsed(u32 now, u32 then)
{
	return now - then;
}

/* The restart rule of RFC 5681 and the kernel: idle for more than one RTO. */
static inline bool cp_idle_exceeds_rto(u32 idle, u32 rto)
{
	return idle > rto;
}

/*
 * Initial window in segments: @iw is 1..64 or CP_IW_RFC3390, for which
 * RFC 3390 gives min(4 * MSS, max(2 * MSS, 4380 bytes)), rounded down to
 * whole segments (3 for an MSS of 1448, 4 for 536, 2 for 9000).
 */
static inline u32 cp_iw_segs(u32 iw, u32 mss)
{
	u64 bytes;

	if (iw != CP_IW_RFC3390)
		return cp_max(CP_IW_MIN, cp_min(iw, CP_IW_MAX));
	if (!mss)
		return 1;
	bytes = (u64)2 * mss;
	if (bytes < CP_RFC3390_BYTES)
		bytes = CP_RFC3390_BYTES;
	if (bytes > (u64)4 * mss)
		bytes = (u64)4 * mss;
	return cp_max(1, (u32)(bytes / mss));
}

/* The kernel's tcp_current_ssthresh() for a connection in CA_Open. */
static inline u32 cp_current_ssthresh(u32 ssthresh, u32 cwnd)
{
	return cp_max(ssthresh, (cwnd >> 1) + (cwnd >> 2));
}

/* ssr: RFC 5681 section 4.1, restart window = min(IW, cwnd). */
static inline u32 cp_restart_ssr(u32 cwnd, u32 iw)
{
	return cp_max(1, cp_min(iw, cwnd));
}

/*
 * decay: halve cwnd once per full RTO of idle time, never below
 * min(IW, cwnd).  Same loop as the kernel's tcp_cwnd_restart(): with
 * idle in (k * rto, (k + 1) * rto] there are k halvings.
 */
static inline u32 cp_restart_decay(u32 cwnd, u32 iw, u32 idle, u32 rto)
{
	u32 floor = cp_restart_ssr(cwnd, iw);
	u32 halvings;

	if (!rto)		/* infinitely many RTOs: the floor */
		return floor;
	halvings = idle ? (idle - 1) / rto : 0;
	/*
	 * The loop stops at the floor, so k halvings give max(cwnd >> k,
	 * floor): in closed form, which the BPF verifier can follow (32
	 * halvings empty a 32-bit cwnd).
	 */
	if (halvings >= 32)
		return floor;
	return cp_max(cwnd >> halvings, floor);
}

/* The window after an idle period longer than the RTO, per policy. */
static inline u32 cp_restart_cwnd(enum cp_policy policy, u32 cwnd, u32 iw,
				  u32 idle, u32 rto)
{
	switch (policy) {
	case CP_SSR:
		return cp_restart_ssr(cwnd, iw);
	case CP_DECAY:
		return cp_restart_decay(cwnd, iw, idle, rto);
	default:
		return cwnd;
	}
}

/*
 * ssthresh after the restart: ssr, decay and measure remember the old
 * window the way the kernel's restart does (3/4 of it, or the old
 * ssthresh if higher); keep and pace, which send the old window, leave
 * it alone.  measure's flight is often less than the old window (halved
 * after a standing queue or failed checks): once its check passes, slow
 * start takes the connection back up to what it had, as after a
 * slow-start restart.  Without that memory each short response would
 * end with a smaller window than it began with, down to the flight.
 */
static inline u32 cp_restart_ssthresh(enum cp_policy policy, u32 ssthresh,
				      u32 cwnd)
{
	if (policy == CP_SSR || policy == CP_DECAY || policy == CP_MEASURE)
		return cp_current_ssthresh(ssthresh, cwnd);
	return ssthresh;
}

/* auto: slow-start restart on short paths, rate-based pacing on long ones. */
static inline enum cp_policy cp_auto_policy(u32 rtt_us, u32 auto_rtt_us)
{
	return rtt_us < auto_rtt_us ? CP_SSR : CP_PACE;
}

/* The kernel's min_rtt holds a sample: it is ~0U before the first one. */
static inline bool cp_min_rtt_known(u32 min_rtt_us)
{
	return min_rtt_us && min_rtt_us != ~0U;
}

/*
 * The RTT auto compares, in microseconds: the path's minimum RTT, which
 * the connection's own queue does not inflate (srtt includes the queue the
 * connection's own flights build at the bottleneck), else srtt when there
 * is no sample yet (the kernel's min_rtt is ~0U then).
 */
static inline u32 cp_path_rtt_us(u32 min_rtt_us, u32 srtt_us)
{
	if (cp_min_rtt_known(min_rtt_us))
		return min_rtt_us;
	return srtt_us;
}

/*
 * Did a queue stand before the idle period?  srtt (which the kernel does
 * not update while idle) above @queue_pct % of the minimum RTT.  No min
 * RTT sample (0 or ~0U) is no evidence of a queue.  In 64 bits, so no
 * product can overflow.
 */
static inline bool cp_queue_stood(u32 srtt_us, u32 min_rtt_us, u32 queue_pct)
{
	return cp_min_rtt_known(min_rtt_us) &&
	       (u64)srtt_us * 100 > (u64)min_rtt_us * queue_pct;
}

/*
 * queue: slow-start restart when the connection had built a queue before
 * the idle period (cp_queue_stood()), else pace.  A standing queue means
 * the path was shared or the window was larger than the pipe, so the
 * remembered window is stale; without one the pre-idle rate is still
 * good and pacing it is safe.
 */
static inline enum cp_policy cp_queue_policy(u32 srtt_us, u32 min_rtt_us,
					     u32 queue_pct)
{
	return cp_queue_stood(srtt_us, min_rtt_us, queue_pct) ? CP_SSR : CP_PACE;
}

/*
 * The policy a restart applies when the parameter says @policy: auto and
 * queue resolve to ssr or pace from srtt and the kernel's min_rtt as read
 * (~0U without a sample), every other policy is itself.
 */
static inline enum cp_policy cp_resolve_policy(enum cp_policy policy,
					       u32 srtt_us, u32 min_rtt_us,
					       u32 auto_rtt_us, u32 queue_pct)
{
	switch (policy) {
	case CP_AUTO:
		return cp_auto_policy(cp_path_rtt_us(min_rtt_us, srtt_us),
				      auto_rtt_us);
	case CP_QUEUE:
		return cp_queue_policy(srtt_us, min_rtt_us, queue_pct);
	default:
		return policy;
	}
}

/*
 * The fewest segments the next TSO packet of a paced restart flight may
 * carry (.min_tso_segs): what is left of its burst of @total segments
 * (the restart window min(IW, cwnd): RFC 5681's, what a slow-start
 * restart sends at once) once @sent of the flight's segments have left,
 * and never fewer than @dflt, the kernel's tcp_min_tso_segs.  @sent is 0
 * for the flight's first packet; a response written in several writes
 * reaches tcp_write_xmit() again with some sent.
 */
static inline u32 cp_pace_burst_left(u32 total, u32 sent, u32 dflt)
{
	if (sent >= total || total - sent < dflt)
		return dflt;
	return total - sent;
}

/*
 * Rate in bytes per second of @segs segments of @mss bytes delivered in
 * @interval_us, at most @cap.  0 when any input is 0 (no sample).
 * segs * mss fits 48 bits; multiplying that by 10^6 could overflow, so the
 * quotient and the remainder are scaled separately.
 */
static inline u64 cp_rate(u32 segs, u32 mss, u32 interval_us, u64 cap)
{
	u64 bytes = (u64)segs * mss;
	u64 q, rate;
	u32 r;

	if (!segs || !mss || !interval_us)
		return 0;
	q = cp_div_u64_rem(bytes, interval_us, &r);
	if (q >= CP_U64_MAX / CP_USEC_PER_SEC)
		return cap;
	rate = q * CP_USEC_PER_SEC +
	       cp_div_u64_rem((u64)r * CP_USEC_PER_SEC, interval_us, &r);
	return rate < cap ? rate : cap;
}

/*
 * Windowed maximum over rounds (round trips counted by the caller), kept
 * in two buckets: the max of the current bucket of @win rounds and of the
 * one before it, so a sample is remembered for between @win and 2 * @win
 * rounds.  Rounds do not advance while a connection is idle, so the
 * pre-idle maximum survives any idle period.
 */
struct cp_maxwin {
	u32 cur;	/* max of the current bucket, in CP_MAXWIN_UNIT B/s */
	u32 prev;	/* max of the bucket before it, same unit */
	u32 start;	/* round at which the current bucket began */
};

/*
 * Rates are kept in 32 bits in units of 16 B/s (up to 68 GB/s, 550
 * Gbit/s; higher saturates): the socket's private area has no room for
 * two 64-bit filters.
 */
#define CP_MAXWIN_SHIFT	4

static inline void cp_maxwin_reset(struct cp_maxwin *w, u32 round)
{
	w->cur = 0;
	w->prev = 0;
	w->start = round;
}

static inline void cp_maxwin_update(struct cp_maxwin *w, u32 round, u32 win,
				    u64 sample)
{
	u32 age = round - w->start;
	u64 v = sample >> CP_MAXWIN_SHIFT;

	if (age >= win) {
		w->prev = age >= 2 * win ? 0 : w->cur;
		w->cur = 0;
		w->start = round;
	}
	if (v > ~0U)
		v = ~0U;
	if (v > w->cur)
		w->cur = (u32)v;
}

static inline u64 cp_maxwin_get(const struct cp_maxwin *w)
{
	return (u64)(w->cur > w->prev ? w->cur : w->prev) << CP_MAXWIN_SHIFT;
}

/*
 * Lower both buckets to at most @rate B/s: a measurement that showed the
 * path slower than the filter's max replaces what it disproved, without
 * raising anything or moving the window.
 */
static inline void cp_maxwin_lower(struct cp_maxwin *w, u64 rate)
{
	u64 v = rate >> CP_MAXWIN_SHIFT;

	if (v < w->cur)
		w->cur = (u32)v;
	if (v < w->prev)
		w->prev = (u32)v;
}

/*
 * A signature of the kernel's saved rate sample (segments delivered over
 * an interval in us), to tell a new sample from the one already seen: the
 * kernel keeps the last one until a new one replaces it.  Two different
 * samples with one signature cost one missed sample, nothing else; 11
 * bits make that one new sample in 2048 (the other 5 bits of the word
 * that keeps it hold flags).
 */
#define CP_SAMPLE_SIG_MASK	0x7ffU

static inline u16 cp_sample_sig(u32 delivered, u32 interval_us)
{
	u32 h = interval_us ^ (delivered * 2654435761U);

	return (u16)((h ^ (h >> 16)) & CP_SAMPLE_SIG_MASK);
}

/*
 * Rate of a paced restart flight in B/s, at most @cap, for pace_rate @mode:
 * - delivery: the windowed max delivery rate @bw_max (0 = no sample), or
 *   the window rate when there is none;
 * - window: cwnd * mss / srtt, the rate the window was clocked out at in
 *   the last round trip it was in use (Heidemann's RBP estimate);
 * - max: the larger of the two.  The delivery rate of a connection that
 *   was application-limited before the pause (keep-alive responses that
 *   fit in cwnd) is lower than what the path delivered; the window rate
 *   is low when losses kept cwnd small, and high when cwnd grew while
 *   application-limited (cwv=0).
 * 0 when neither can be computed.
 */
static inline u64 cp_pace_rate(u64 bw_max, u32 cwnd, u32 mss, u32 srtt_us,
			       u64 cap, enum cp_pace_rate mode)
{
	u64 win = cp_rate(cwnd, mss, srtt_us, cap);
	u64 bw = bw_max < cap ? bw_max : cap;

	switch (mode) {
	case CP_RATE_WINDOW:
		return win;
	case CP_RATE_MAX:
		return bw > win ? bw : win;
	default:
		return bw ? bw : win;
	}
}

/*
 * RFC 2861 application-limited decay: cwnd = (cwnd + w_used) / 2 where
 * w_used is the largest window used (at least IW).  No change when the
 * window in use is not smaller than cwnd.
 */
static inline u32 cp_cwv2861_decay(u32 cwnd, u32 used, u32 iw)
{
	used = cp_max(used, iw);
	if (used >= cwnd)
		return cwnd;
	return (u32)(((u64)cwnd + used) >> 1);
}

/*
 * RFC 7661: the window is validated while pipeACK >= cwnd / 2.  A pipeACK
 * of 0 means no measurement yet, which counts as validated.
 */
static inline bool cp_cwv7661_validated(u32 pipeack, u32 cwnd)
{
	return !pipeack || (u64)pipeack * 2 >= cwnd;
}

/* RFC 7661 end of the non-validated period: cwnd = max(cwnd / 2, IW). */
static inline u32 cp_cwv7661_nvp_cwnd(u32 cwnd, u32 iw)
{
	return cp_max(cwnd >> 1, cp_min(iw, cwnd));
}

/* ... and ssthresh = max(ssthresh, 3 / 4 cwnd), cwnd before the cut. */
static inline u32 cp_cwv7661_nvp_ssthresh(u32 ssthresh, u32 cwnd)
{
	return cp_current_ssthresh(ssthresh, cwnd);
}

/*
 * measure: the restart flight is sized from the path, not from the window
 * the connection happened to have: the pre-idle bottleneck rate times the
 * path's minimum RTT, its bandwidth-delay product (BDP).  It is paced at
 * that rate, and its first ACKs are checked against what the path did
 * before the idle period (cp_check_ack()).
 */

/*
 * Segments above the BDP in the flight's window: one for the segment a
 * delayed-ACK receiver holds back, one for the pacing quantum the kernel
 * may send at once.  Without them the window closes a little before the
 * first ACK arrives and the flight stalls for a moment every round trip.
 */
#define CP_MEASURE_EXTRA_SEGS	2U

/*
 * A connection whose restarts keep finding a changed path bets less: the
 * flight is BDP >> misses (one more halving after a queue, see
 * cp_measure_halvings()), misses counting up by one per failed check and
 * down by one per passed one.  Three halvings (an eighth of the BDP) are
 * still more than a slow-start restart's IW on any path worth pacing, and
 * one quiet restart less than three away from a full bet.
 */
#define CP_MEASURE_MAX_MISSES	3U

/*
 * The ACK rate is compared with the sending rate only over at least 16
 * segments delivered after the flight's first ACK (8 delayed ACKs) and
 * an eighth of the path's minimum RTT: over 8 segments a quiet path's
 * ACKs have been measured at 70% of the sending rate in the test VM,
 * one late ACK being a quarter of the span, and over 16-27 segments of
 * a 200 ms path (10-15 ms) still at half to 85%, a host's scheduling
 * hiccup of a few milliseconds being a third of the span.  An eighth of
 * the RTT is still inside the check's one round trip with room for the
 * verdict to act on most of the flight.
 */
#define CP_CHECK_MIN_SEGS	16U
#define CP_CHECK_RATE_SPAN_SHIFT	3U

/*
 * ... and over at least 40 ms of ACKs whatever the RTT: a host that holds
 * the receiver's ACKs for 10 ms (measured in the test VM with a few
 * connections side by side on two vCPUs, the lowest RTT sample of the
 * same check at the minimum) is a quarter of that span, and its ACKs
 * still read 80% of the rate, above the default check_rate_pct.  On a
 * path of less than 40 ms the flight's ACKs span less than that, and a
 * path delivering less than the flight sends is left to the RTT verdict:
 * the queue a slower bottleneck builds shows in every later sample.
 */
#define CP_CHECK_RATE_SPAN_FLOOR_US	40000U

/*
 * The RTT is judged on the lowest sample of the check so far, and only
 * from 4 segments delivered after the first ACK on (the first ACK and
 * two more delayed ones): a queue the flight meets raises every sample,
 * a host or link hiccup one or two.  A single late sample at the first
 * ACK would otherwise end the flight before any ACK rate is known, at a
 * rate guessed from that one RTT.  A queue the flight builds itself
 * raises only the later samples; the ACK rate shows it.
 */
#define CP_CHECK_RTT_SEGS	4U

/*
 * An RTT rise counts only above 4 ms as well as above rtt_pct % of the
 * minimum: RFC 9406's MIN_RTT_THRESH, the rise below which HyStart++
 * does not trust a queue to be there.  On a 1 ms path 25% is 250 us,
 * less than a host's timer and scheduling noise.
 */
#define CP_CHECK_RTT_FLOOR_US	4000U

/*
 * The check's lowest RTT sample is kept in 16 bits of 32 us (up to
 * 2.1 s; higher saturates, and CP_CHECK_RTT_NONE says no sample yet):
 * the socket's private area has no room for another 32-bit word, and
 * 32 us is below 1% of the 4 ms rise the check looks for.
 */
#define CP_CHECK_RTT_SHIFT	5U
#define CP_CHECK_RTT_NONE	0xffffU

/* An RTT sample in us as the check keeps it, rounded up, saturated. */
static inline u16 cp_check_rtt_pack(u32 rtt_us)
{
	u32 v = (u32)(((u64)rtt_us + (1U << CP_CHECK_RTT_SHIFT) - 1) >>
		      CP_CHECK_RTT_SHIFT);

	return v >= CP_CHECK_RTT_NONE ? CP_CHECK_RTT_NONE - 1 : (u16)v;
}

/* ... and back, in us; 0 for CP_CHECK_RTT_NONE (no sample). */
static inline u32 cp_check_rtt_us(u16 packed)
{
	if (packed == CP_CHECK_RTT_NONE)
		return 0;
	return (u32)packed << CP_CHECK_RTT_SHIFT;
}

/* The check's lowest sample after one more (@rtt_us <= 0: none). */
static inline u16 cp_check_rtt_min(u16 packed, s32 rtt_us)
{
	u16 v;

	if (rtt_us <= 0)
		return packed;
	v = cp_check_rtt_pack((u32)rtt_us);
	return v < packed ? v : packed;
}

/* An ACK train feeds the rate filter from 8 segments (4 delayed ACKs). */
#define CP_TRAIN_MIN_SEGS	8U

/* Hoe's estimate needs at least 3 segments of ACK train: 2 ACK gaps. */
#define CP_HOE_MIN_SEGS		3U

/*
 * An ACK ends a train when its gap per segment is more than 4 times the
 * train's mean: delayed ACKs (every second segment) and a late ACK or two
 * stay well inside that, the idle rest of a round trip does not.
 */
#define CP_TRAIN_BREAK		4U

/*
 * ACK trains are timed where the sender processes the ACKs, and a host
 * that holds the socket while ACKs queue in its backlog processes them
 * microseconds apart: such a train shows a rate the path never had.  A
 * train counts only when it spans at least 1/64 of the path's RTT (3 ms
 * at 200 ms: a packet's time at 4 Mbit/s; 16 us at 1 ms) and shows at
 * most 4 times the delivery rate the connection achieved: the most a
 * window a quarter of the BDP hides.
 */
#define CP_TRAIN_MIN_SPAN_SHIFT	6U
#define CP_TRAIN_MAX_GAIN	4U

/* Floor of an estimated ssthresh: Reno's own minimum, tcp_reno_ssthresh(). */
#define CP_SSTHRESH_MIN		2U
/*
 * Ceiling of a raised ssthresh: the kernel's TCP_INFINITE_SSTHRESH, "no
 * loss yet" to tcp_info and to the kernel's initial slow start.
 */
#define CP_SSTHRESH_INFINITE	0x7fffffffU

/* What the check of a measured restart found. */
enum cp_check {
	CP_CHECK_GOING,	/* no verdict yet */
	CP_CHECK_FULL,	/* path unchanged: the whole flight went as sized */
	CP_CHECK_RTT,	/* an RTT rose above rtt_pct % of the minimum */
	CP_CHECK_RATE,	/* ACKs delivered below rate_pct % of the sent rate */
	CP_CHECK_LOSS,	/* a loss or ECN reduction during the check */
	CP_NR_CHECKS
};

/*
 * The rate a measured restart sizes and paces its flight at, in B/s: the
 * larger of @est (the pace_rate estimate: delivery or window rate, what
 * the connection achieved) and @train (the bottleneck's rate from the
 * spacing of ACK trains, which a window smaller than the BDP does not
 * hide), at most @cap.  An overestimate is what the check is for.
 */
static inline u64 cp_path_rate(u64 est, u64 train, u64 cap)
{
	u64 r = train > est ? train : est;

	return r < cap ? r : cap;
}

/*
 * Bandwidth-delay product in segments of @mss bytes: @rate B/s times
 * @rtt_us, rounded up; 0 when any input is 0, ~0U when it does not fit.
 */
static inline u32 cp_bdp_segs(u64 rate, u32 rtt_us, u32 mss)
{
	u64 bytes, segs, prod;
	u32 r;

	if (!rate || !rtt_us || !mss)
		return 0;
	if (!cp_mul_u64_u32(rate, rtt_us, &prod))
		return ~0U;
	bytes = cp_div_u64_rem(prod, CP_USEC_PER_SEC, &r);
	if (r)
		bytes++;
	segs = cp_div_u64_rem(bytes, mss, &r);
	if (r)
		segs++;
	return segs > ~0U ? ~0U : (u32)segs;
}

/*
 * A window that fills the path at its rate for the whole RTT explains
 * the queue that RTT shows as its own: the window is 3/4 of rate x RTT
 * or more.  A connection alone whose window outgrew the BDP has a window
 * of rate x RTT (the queue is the window's excess), less what a late
 * sample (a receiver's delayed ACK) adds to the RTT; one of two that
 * share the bottleneck evenly has half of it, and less when its rate
 * estimate holds its best rounds.
 */
#define CP_QUEUE_OWN_NUM	3U
#define CP_QUEUE_OWN_DEN	4U

/*
 * Was the queue that stood before the idle period (cp_queue_stood() of
 * @rtt_us) the connection's own?  @cwnd segments of @mss bytes before
 * the idle period against the BDP of @rate B/s over @rtt_us
 * (CP_QUEUE_OWN_NUM / CP_QUEUE_OWN_DEN of it).  Its own queue drained
 * while it was idle and is no sign that others share the path; a queue
 * others keep is.  In 64 bits, so no product can overflow; no rate or
 * RTT: not known to be its own.
 */
static inline bool cp_queue_own(u32 cwnd, u64 rate, u32 rtt_us, u32 mss)
{
	u32 bdp = cp_bdp_segs(rate, rtt_us, mss);

	return bdp && (u64)cwnd * CP_QUEUE_OWN_DEN >=
		      (u64)bdp * CP_QUEUE_OWN_NUM;
}

/*
 * How many times a measured restart halves its flight's BDP: once per
 * recent miss, and once more when a queue others kept stood before the
 * idle period (@queued: cp_queue_stood() and not cp_queue_own()), at
 * most CP_MEASURE_MAX_MISSES in all.
 *
 * A standing queue that the connection's window does not explain means
 * others share the link.  Then the windowed max of the delivery rate,
 * which sizes the flight, holds the connection's best rounds rather
 * than its share: many connections that restart together would each bet
 * more than their share, their flights sum to more than the link and its
 * buffer hold, and the checks see it only once a round trip of ACKs is
 * back.  A connection alone behind its own queue (cp_queue_own()) bets
 * the full BDP: that queue drained during the idle period.
 */
static inline u32 cp_measure_halvings(u32 misses, bool queued)
{
	return cp_min(misses + queued, CP_MEASURE_MAX_MISSES);
}

/*
 * The RTT, in us, over which a measured flight's window is the path's
 * BDP: the path's minimum @min_rtt_us, or, behind a queue others kept
 * before the idle period (@shared: cp_queue_stood() and not
 * cp_queue_own()) when @on (shared_rtt), the RTT the check judges a
 * rise against, @base_rtt_us (cp_check_rtt_base(): srtt when above the
 * minimum).  The connection's own queue drains while it is idle;
 * another flow's does not, and the flight meets it: a window of the
 * rate times the minimum RTT then delivers only the rate times
 * min RTT / srtt, a fraction of the rate the check holds it to, and a
 * response that would fit in the rate's round trip takes several.
 * Sized over srtt, the window is not also halved for the queue
 * (cp_measure_halvings() with @shared false): the halving hedges the
 * same windowed max this sizing trusts.
 */
static inline u32 cp_flight_rtt(u32 min_rtt_us, u32 base_rtt_us, bool shared,
				bool on)
{
	return shared && on && base_rtt_us > min_rtt_us ? base_rtt_us :
							   min_rtt_us;
}

/*
 * The rate a measured restart sizes and paces its flight at, in B/s: the
 * path's @rate (cp_path_rate()) raised to @pct % of it when the
 * connection's last check passed with its lowest RTT showing a queue
 * (@queued: cp_queue_stood() of that RTT) and it remembers no failed
 * check (@misses 0), at most @cap; @pct 100 leaves it.  The first
 * segment of a paced flight finds no queue of the flight's own, so a
 * queue under a passed check's lowest RTT is one another flow kept.
 * Behind a FIFO queue another flow keeps full the estimate is what the
 * connection got there, its share, which falls and rises with the rate
 * it sends at: a flight paced at its last share gets that share again,
 * and a check it passes never raises the estimate.  Paced above it, a
 * flight that the path delivers at the higher rate leaves delivery-rate
 * samples that raise the next restart's estimate; one that it does not
 * fails the check on the ACKs' rate and is cut to it.  Without such a
 * queue the estimate is the path's, and a flight above it would only
 * build a queue (and overflow a shallow one).  A miss stops the probing
 * until a passed check earns it back, and a connection's first measured
 * restart does not probe: connections that went idle together after
 * sharing the link restart together, each with an estimate that already
 * holds its best rounds.
 */
static inline u64 cp_probe_rate(u64 rate, bool queued, u32 misses,
				u32 pct, u64 cap)
{
	u64 r = CP_U64_MAX;
	u32 rem;

	if (!queued || misses || pct <= 100 || rate >= cap)
		return rate;
	if (cp_mul_u64_u32(rate, pct, &r))
		r = cp_div_u64_rem(r, 100, &rem);
	return r < cap ? r : cap;
}

/*
 * The rate a measured restart paces at, in B/s: @rate, at most the peer's
 * window @wnd (bytes) per @rtt_us (the path's minimum RTT) when that
 * window held the connection's data back since its last restart
 * (@limited).  Such a flow cannot deliver more than a window per round
 * trip whatever the path's rate: each later window leaves as the ACKs of
 * the one before return.  Paced faster, a window only leaves sooner in
 * its round trip, as a train at the path's rate (the ACK-train rate,
 * cp_path_rate(), is the bottleneck's, not the window's), which a link
 * that others took during the idle period queues or drops before the
 * first ACK can show them; paced at the window's rate it spreads over
 * the round trip, and a quiet path gives up only the part of a round
 * trip in which the last window would have left sooner.  A window that
 * did not hold data back says nothing of the next response, which may
 * fit in one window: then pacing slower only delays it.  0 for @wnd or
 * @rtt_us: no cap.
 */
static inline u64 cp_wnd_rate(u64 rate, bool limited, u32 wnd, u32 rtt_us)
{
	u64 w = cp_rate(wnd, 1, rtt_us, CP_U64_MAX);

	return limited && w && w < rate ? w : rate;
}

/*
 * The room, in segments of @mss bytes, that the connection's own window
 * showed the bottleneck's buffer to have before the idle period: what
 * the window @cwnd held beyond the BDP of @rate B/s over the minimum RTT
 * @min_rtt_us, and at most what @rate drains in the excess of @rtt_us
 * (srtt before the idle period) over the minimum, both rounded down.
 * srtt, not the last round's lowest sample: a transfer's queue drains in
 * its last round, whose lowest sample then shows none, while srtt keeps
 * the queue its rounds held.  A receiver's delayed ACK that raised srtt
 * without a queue adds no room beyond the window's excess.  That queue
 * drained while the connection was idle; a buffer that held it then
 * holds as much again unless someone else filled it meanwhile, which the
 * check sees.  0 without a minimum RTT, a rate or a queue.  In 64 bits,
 * so no product can overflow.
 */
static inline u32 cp_queue_room(u32 cwnd, u64 rate, u32 rtt_us,
				u32 min_rtt_us, u32 mss)
{
	u64 prod, segs;
	u32 bdp, r;

	if (!cp_min_rtt_known(min_rtt_us) || rtt_us <= min_rtt_us || !mss)
		return 0;
	bdp = cp_bdp_segs(rate, min_rtt_us, mss);
	if (!bdp || cwnd <= bdp)
		return 0;
	if (!cp_mul_u64_u32(rate, rtt_us - min_rtt_us, &prod))
		return cwnd - bdp;
	segs = cp_div_u64_rem(cp_div_u64_rem(prod, CP_USEC_PER_SEC, &r),
			      mss, &r);
	return segs < cwnd - bdp ? (u32)segs : cwnd - bdp;
}

/*
 * The rate, in B/s, at which a measured flight of @flight segments is
 * paced so that, on a path that still delivers @rate, it queues at most
 * @room segments at the bottleneck (cp_queue_room()): sent at R' over a
 * link that drains R, a flight of F segments leaves F * (1 - R / R')
 * behind when its last segment arrives, so R' = R * F / (F - room).  A
 * room of the whole flight sends it at @cap, as fast as the socket may.
 * Behind a FIFO queue that traffic arriving during the idle period
 * shares, a flight's share of the link is proportional to the rate it
 * arrives at: a flight paced at the path's rate gets a fraction of it
 * where a burst the buffer holds goes first.  No room, no rate, or a
 * rate at @cap already: @rate.
 */
static inline u64 cp_room_rate(u64 rate, u32 flight, u32 room, u64 cap)
{
	u64 prod, r;
	u32 rem;

	if (!room || !rate || rate >= cap)
		return rate;
	if (room >= flight)
		return cap;
	if (!cp_mul_u64_u32(rate, flight, &prod))
		return cap;
	r = cp_div_u64_rem(prod, flight - room, &rem);
	return r < cap ? r : cap;
}

/*
 * The rate, in B/s, at which a measured flight leaves until its first
 * ACK with pace_floor: no slower than the restart window @floor
 * (min(IW, cwnd) segments of @mss bytes) per minimum RTT @rtt_us, so
 * that what a slow-start restart would send at once is out within one
 * round trip.  A rate read while others shared the link (the last
 * share the connection got) paces even that window over several round
 * trips on a link since emptied.  At most @cap (the socket's cap);
 * @rate when it is faster already, or without an RTT.
 */
static inline u64 cp_floor_rate(u64 rate, u32 floor, u32 mss, u32 rtt_us,
				u64 cap)
{
	u64 f;
	u32 rem;

	if (!floor || !mss || !rtt_us)
		return rate;
	/* floor <= 64 (IW) and mss < 2^16: the product fits in 64 bits */
	f = cp_div_u64_rem((u64)floor * mss * CP_USEC_PER_SEC, rtt_us, &rem);
	if (f > cap)
		f = cap;
	return f > rate ? f : rate;
}

/*
 * Whether a measured restart is a slow-start restart instead, with
 * ssr_floor (@on): its flight, leaving at @sent B/s, would take longer
 * than the minimum RTT @rtt_us to send the restart window @floor
 * (min(IW, cwnd) segments of @mss bytes) that a slow-start restart sends
 * at once, another connection restarted toward the destination during
 * the idle period but none within the last path RTT (@others,
 * cp_ensemble_recent() of both windows) and the ensemble did not divide
 * this one's rate (@divided: that flight keeps its share on purpose).
 * Such a rate is a share read while others used the link: the others
 * toward the same destination show that the connection shares the
 * path.  A restart within an RTT of another toward the destination
 * belongs with it: requests a client sent together whose responses
 * their server began a little apart, each after the ensemble's run
 * closed; their bursts would arrive together.  Paced at it, the window
 * takes more than a round trip, and the check's round trip after the
 * first ACK is paced at the same rate with the window held, where a
 * slow-start restart's burst leaves at once and its ACKs grow the
 * window by a segment each; a burst's ACKs also time the bottleneck for
 * the next restart's ACK-train rate.  It sends no more
 * than Linux's default restart does.  A connection alone toward its
 * destination stays paced: there such a rate is more likely the path's
 * own, a BDP below the restart window, which a burst only queues.  No
 * RTT or MSS: not decided here.
 */
static inline bool cp_measure_ssr(u64 sent, u32 floor, u32 mss, u32 rtt_us,
				  bool divided, bool others, bool on)
{
	if (!on || divided || !others || !sent)
		return false;
	return cp_floor_rate(sent, floor, mss, rtt_us, CP_U64_MAX) > sent;
}

/*
 * The rate, in B/s, at which a measured flight leaves until its first
 * ACK with quiet_pct: @pct % of its @rate when the connection's last
 * check passed with its lowest RTT at the path's minimum (@quiet: no
 * queue under it) and it remembers no failed check (@misses 0), at most
 * @cap (cp_probe_rate()'s arithmetic); never below @sent, what the other
 * rules chose.  Paced at the link's own rate a flight is no faster than
 * a burst, and slower wherever the pacing timer fires late: each late
 * firing adds to the flight's time.  A little above the rate the
 * bottleneck's queue takes up the lateness, as it takes a burst, and the
 * link stays busy; the queue it builds is at most 1 - 100 / @pct of what
 * leaves before the first ACK.  A connection's first measured restart,
 * and one after a miss, leave at @sent.
 */
static inline u64 cp_quiet_rate(u64 sent, u64 rate, bool quiet, u32 misses,
				u32 pct, u64 cap)
{
	u64 q = cp_probe_rate(rate, quiet, misses, pct, cap);

	return q > sent ? q : sent;
}

/*
 * Did the queue that stood before a measured restart's idle period
 * outlive it?  The check's lowest RTT sample @low_us still stood at
 * least half as far above the path's minimum @min_us as the RTT the
 * check judged rises against, @base_us (cp_check_rtt_base(): srtt when
 * a queue stood, else the minimum, which is no queue).  The flight's
 * first segments meet only what others left in the queue: connections
 * that went idle together left none, and their own flights, which arrive
 * together, build one from nothing, so the first ACKs come back near
 * the minimum; a flow that did not go idle kept its queue, and every
 * sample stays near srtt.  Half: a loss-driven flow's queue swings
 * between its sawtooth's ends.  0 (no sample): no.
 */
static inline bool cp_queue_outlived(u32 low_us, u32 base_us, u32 min_us)
{
	if (!low_us || base_us <= min_us || low_us <= min_us)
		return false;
	return (u64)(low_us - min_us) * 2 >= base_us - min_us;
}

/*
 * Whether a queue others kept before the idle period (@shared:
 * cp_queue_stood() and not cp_queue_own()) is one that shared_rtt and
 * shared_burst answer: the connection's last check found the queue it
 * met outliving that check's idle period (@kept, cp_queue_outlived()),
 * and no other connection restarted toward the destination during this
 * idle period (@others, from the ensemble table).  A bulk flow that never
 * goes idle keeps its queue through every idle period, and a flight
 * sized over srtt and sent at once competes with it as a stale window
 * does.  Connections that went idle together (page loads, a push to
 * every client) kept the queue together; it drained while they were
 * idle, and their flights, each sized for it and sent at once, would
 * arrive together and overflow the buffer.  The ensemble table sees
 * them only when they share a host and a destination; the memory sees
 * the drained queue on any host, from the restart before.
 */
static inline bool cp_shared_kept(bool shared, bool others, bool kept)
{
	return shared && kept && !others;
}

/*
 * The room, in segments, into which a measured flight of @flight
 * segments is sent faster than its rate (cp_room_rate()): @room (what
 * the connection's own queue showed, cp_queue_room()), or the whole
 * flight, sent at once, when a queue others kept stood before the idle
 * period (@shared: cp_queue_stood() and not cp_queue_own()) and
 * @burst (shared_burst) allows it.  Behind a FIFO queue another flow
 * keeps, a flight paced at the connection's last share gets that share
 * again (cp_probe_rate()), and the delivery-rate samples the next
 * restart is sized from cannot read above it; a burst the buffer takes
 * is served ahead of what arrives behind it, at the link's rate, as a
 * stale window sent at once (CUBIC without slow-start restart) is.  It
 * still may overflow a buffer the other flow keeps full, which the
 * check sees as a loss.  Off, or without such a queue: @room.
 */
static inline u32 cp_flight_room(u32 room, u32 flight, bool shared,
				 bool burst)
{
	return shared && burst ? flight : room;
}

/*
 * The window of a measured restart's flight: the BDP halved @halvings
 * times (cp_measure_halvings()), plus CP_MEASURE_EXTRA_SEGS, never below
 * @floor (the window a slow-start restart would have, min(IW, cwnd)).
 */
static inline u32 cp_measure_cwnd(u32 bdp, u32 halvings, u32 floor)
{
	u32 w;

	if (halvings > CP_MEASURE_MAX_MISSES)
		halvings = CP_MEASURE_MAX_MISSES;
	w = bdp >> halvings;
	w = w > ~0U - CP_MEASURE_EXTRA_SEGS ? ~0U : w + CP_MEASURE_EXTRA_SEGS;
	return cp_max(w, floor);
}

/*
 * The window a measured flight's full verdict leaves, for @acked segments
 * the check delivered: a flight cut below the path's BDP @bdp (halved by
 * cp_measure_halvings(), or the slow-start restart's window) grows by
 * one segment per segment ACKed, as a slow-start restart would have, up
 * to @bdp whatever ssthresh says; a flight at the BDP or above keeps its
 * window.  Kept at the cut flight, a restart behind a queue others keep
 * would lose a round trip to the slow-start restart it hedges against
 * (and, with ssthresh below it, grow one segment a round trip from
 * there).  The window grows at the verdict rather than on each ACK, so
 * that the check's ACKs are timed with no more sending than the flight's
 * own ACK clock.
 */
static inline u32 cp_check_grow(u32 cwnd, u32 acked, u32 bdp)
{
	if (cwnd >= bdp)
		return cwnd;
	return bdp - cwnd > acked ? cwnd + acked : bdp;
}

/*
 * The window a full verdict leaves when the flight does not grow
 * (cp_check_grow()): what is in flight plus CP_MEASURE_EXTRA_SEGS
 * (@room), so that ending the pacing releases no burst, but never less
 * than the restart window RFC 5681 allows after idle, min(@iw, @cwnd).
 * A flight paced below the rate the path delivers at (a rate read while
 * the connection shared the link, on a link since emptied) has far less
 * in flight than its window when its check passes; cut to that, it would
 * restart slower than the slow-start restart, which sends that window at
 * once.  A flight paced at the path's rate has its window in flight and
 * keeps it either way.  A flight the ensemble @divided (cp_ensemble_join())
 * is paced below the path on purpose, as one of several restarting toward
 * the destination at once, and is cut to what is in flight: held at the
 * restart window, the ensemble's flights together would send that window
 * each, as many slow-start restarts at once do.
 */
static inline u32 cp_check_hold(u32 cwnd, u32 room, u32 iw, bool divided)
{
	if (divided)
		return cp_min(cwnd, room);
	return cp_max(cp_min(cwnd, room), cp_min(iw, cwnd));
}

/* The per-connection bet after a check: a pass earns one back, a miss costs. */
static inline u32 cp_measure_misses(u32 misses, enum cp_check verdict)
{
	if (verdict == CP_CHECK_FULL)
		return misses ? misses - 1 : 0;
	return cp_min(misses + 1, CP_MEASURE_MAX_MISSES);
}

/*
 * Whether the next restarts remember a check's @verdict (a miss counted
 * by cp_measure_misses(), the ACK-train filter lowered to the exit
 * rate): a pass, an RTT rise and a loss always; an exit on the ACKs'
 * rate only with @rate_miss.  A rate below the sent rate, with the
 * check's lowest RTT at its base and nothing lost, is what a slower path
 * shows, and also what a flight's share of a FIFO queue shows when
 * another flow keeps it full: that flow feeds the link at about its
 * rate C, so a flight paced at R is delivered at about R * C / (R + C),
 * a share that falls with R.  Remembered, each next flight would go at
 * the last one's share and find a smaller one.
 */
static inline bool cp_check_remembered(enum cp_check verdict,
				       bool rate_miss)
{
	return verdict != CP_CHECK_RATE || rate_miss;
}

/*
 * The least span of ACKs, in us, a check judges a rate over: an eighth
 * of the path's minimum RTT @min_rtt_us (when known) and
 * CP_CHECK_RATE_SPAN_FLOOR_US.
 */
static inline u32 cp_check_rate_span_us(u32 min_rtt_us)
{
	if (!cp_min_rtt_known(min_rtt_us))
		return CP_CHECK_RATE_SPAN_FLOOR_US;
	return cp_max(min_rtt_us >> CP_CHECK_RATE_SPAN_SHIFT,
		      CP_CHECK_RATE_SPAN_FLOOR_US);
}

/*
 * The rate the ACKs of a check show, in B/s: @segs delivered after the
 * flight's first ACK, over the longer of the @ack_us between that ACK
 * and this one and the @send_us between the sending of the segments the
 * two ACKs were for, as the kernel's rate samples do (tcp_rate_gen()):
 * ACKs that a host or link bunched read no faster than the segments
 * were sent.  0 (no rate to tell) below CP_CHECK_MIN_SEGS, without a
 * span, or when the ACKs span less than cp_check_rate_span_us() of
 * @min_rtt_us: the rate verdict's own gates (cp_check_ack()), since over
 * a shorter span one late ACK is a large part of it, and an exit after
 * a loss would take that noise for the path's rate.
 */
static inline u64 cp_check_rate(u32 segs, u32 mss, u32 ack_us, u32 send_us,
				u32 min_rtt_us)
{
	u32 span = cp_max(ack_us, send_us);

	if (segs < CP_CHECK_MIN_SEGS || !span ||
	    ack_us < cp_check_rate_span_us(min_rtt_us))
		return 0;
	return cp_rate(segs, mss, span, CP_U64_MAX);
}

/*
 * The RTT, in us, a check judges a rise against: the path's minimum
 * @min_rtt_us, or, when a queue stood before the idle period (@queued,
 * cp_queue_stood()), the larger of it and the connection's srtt
 * @srtt_us as the check's ACKs update it.  A queue that someone else
 * keeps (a bulk flow that was there before the idle period and still
 * is) raises every sample of the check above the minimum, so judged
 * against the minimum every restart behind it would fail its check;
 * judged against srtt, which starts at the pre-idle value (the kernel
 * does not update it while idle) and moves an eighth of the way to each
 * new sample, only a rise beyond the queue the connection already lived
 * with counts.  A queue that drained during the idle period leaves the
 * samples at the minimum, below either base.
 */
static inline u32 cp_check_rtt_base(bool queued, u32 srtt_us,
				    u32 min_rtt_us)
{
	if (queued && srtt_us > min_rtt_us)
		return srtt_us;
	return min_rtt_us;
}

/*
 * One ACK of a measured restart's check.  @rtt_us is the lowest RTT
 * sample of the check so far (0: none), @min_rtt_us the path's minimum
 * from before the idle period, @base_rtt_us the RTT a rise is judged
 * against (cp_check_rtt_base(), at least the minimum); @segs were
 * delivered in @ack_us since the flight's first ACK, and were sent over
 * @send_us (from the last segment the first ACK was for to the last one
 * this ACK is for) by a flight paced at @sent_rate B/s.  An RTT above
 * @rtt_pct % of the base (and more than CP_CHECK_RTT_FLOOR_US above it)
 * on every sample from the first ACK on means a queue is building:
 * someone else now uses the path, or the rate was too high.  ACKs
 * slower than @rate_pct % of the rate the segments were sent at (the
 * pacing rate, or less when the sender fell behind it) over
 * CP_CHECK_MIN_SEGS segments and cp_check_rate_span_us() mean the
 * path delivers less than the flight sends (a competitor's share, a
 * slower link).  A sender that fell behind its pacing rate is no sign
 * of the path.
 */
static inline enum cp_check cp_check_ack(u32 rtt_us, u32 min_rtt_us,
					 u32 base_rtt_us, u32 rtt_pct,
					 u32 segs, u32 ack_us, u32 send_us,
					 u32 mss, u64 sent_rate, u32 rate_pct)
{
	bool known = cp_min_rtt_known(min_rtt_us);
	u32 base = cp_max(min_rtt_us, base_rtt_us);
	u64 ack_rate, send_rate;

	if (rtt_us && known && segs >= CP_CHECK_RTT_SEGS &&
	    (u64)rtt_us * 100 > (u64)base * rtt_pct &&
	    rtt_us > base &&
	    rtt_us - base > CP_CHECK_RTT_FLOOR_US)
		return CP_CHECK_RTT;
	if (segs < CP_CHECK_MIN_SEGS || !ack_us ||
	    ack_us < cp_check_rate_span_us(min_rtt_us))
		return CP_CHECK_GOING;
	ack_rate = cp_rate(segs, mss, ack_us, CP_U64_MAX);
	if (send_us) {
		send_rate = cp_rate(segs, mss, send_us, CP_U64_MAX);
		if (send_rate < sent_rate)
			sent_rate = send_rate;
	}
	if (sent_rate <= CP_U64_MAX / 100 &&
	    ack_rate <= CP_U64_MAX / 100 &&
	    ack_rate * 100 < sent_rate * rate_pct)
		return CP_CHECK_RATE;
	return CP_CHECK_GOING;
}

/*
 * The rate a failed check drops to, in B/s: what the ACKs delivered
 * (@ack_rate, 0 when too few segments were delivered to tell), never
 * above the rate sent; without an ACK rate, an RTT rise scales the sent
 * rate by min RTT / RTT (the share that would not grow the queue), and a
 * loss halves it, as Reno would.
 */
static inline u64 cp_exit_rate(enum cp_check verdict, u64 sent_rate,
			       u64 ack_rate, u32 rtt_us, u32 min_rtt_us)
{
	u64 prod;
	u32 r;

	if (ack_rate)
		return ack_rate < sent_rate ? ack_rate : sent_rate;
	if (verdict == CP_CHECK_RTT && rtt_us > min_rtt_us &&
	    cp_min_rtt_known(min_rtt_us) &&
	    cp_mul_u64_u32(sent_rate, min_rtt_us, &prod))
		return cp_div_u64_rem(prod, rtt_us, &r);
	return sent_rate >> 1;
}

/*
 * The RTT, in us, at which a failed check's window is taken: the exit's
 * window is its rate (cp_exit_rate()) times this RTT.  With an ACK rate
 * (@has_ack_rate) or an RTT rise, the check's lowest RTT sample
 * @check_rtt_us, at least the minimum @min_rtt_us: a queue that was
 * there during the check, kept by someone else, stays, and a window
 * taken at the minimum RTT would leave the connection a fraction of what
 * the ACKs showed.  An RTT rise's rate is already the sent rate x
 * min RTT / RTT, so its window is the flight's own (the sent rate x min
 * RTT), ACK-clocked at that rate; taking it at the minimum RTT would
 * count min RTT / RTT twice.  A loss without ACK rate has no RTT to
 * trust (the queue just overflowed): the minimum RTT, as Reno's halving.
 */
static inline u32 cp_exit_rtt_us(enum cp_check verdict, bool has_ack_rate,
				 u32 check_rtt_us, u32 min_rtt_us)
{
	if (has_ack_rate || verdict == CP_CHECK_RTT)
		return cp_max(check_rtt_us, min_rtt_us);
	return min_rtt_us;
}

/*
 * ssthresh after a loss while a measured flight's check was under way:
 * @base is the growth's own response to the loss (NewReno's half of the
 * window in flight, CUBIC's 0.7), @ack_cwnd the window of the rate the
 * check's ACKs showed before it (cp_exit_rate() times
 * cp_exit_rtt_us()), 0 when they were too few to show a rate.  The ACKs'
 * rate, where they showed one, may take the window lower than the
 * growth would: it is what the path delivered to the flight.  Without
 * it the loss says only that the flight met a full queue, which is what
 * the growth's response answers; halving the flight's rate at the
 * minimum RTT instead would cut the window below half of what was in
 * flight whenever that window held more than the rate's BDP (a restart
 * window above a short path's BDP, a queue the connection lived with).
 */
static inline u32 cp_loss_ssthresh(u32 base, u32 ack_cwnd)
{
	if (ack_cwnd && ack_cwnd < base)
		base = ack_cwnd;
	return cp_max(base, CP_SSTHRESH_MIN);
}

/*
 * ssthresh after a failed check (rtt or rate verdict): the exit's window
 * @exit_cwnd is the share the ACKs showed, usually below what the path
 * held before the idle period; slow start takes the connection from
 * there back up to the flight's window @flight_bdp (the pre-idle rate's
 * BDP), at most to the pre-idle @ssthresh, and congestion avoidance goes
 * on from there.  Setting ssthresh at the exit's window instead would
 * leave a connection that met a short queue (an RTT rise) to grow one
 * segment a round trip from a fraction of its share.  If the competitor
 * keeps its share, the slow start's overshoot is one round trip's
 * doubling above the share, and the loss response takes it back.
 */
static inline u32 cp_exit_ssthresh(u32 exit_cwnd, u32 ssthresh,
				   u32 flight_bdp)
{
	return cp_max(exit_cwnd, cp_min(ssthresh, flight_bdp));
}

/*
 * ssthresh after a passed check (full verdict): the flight was the
 * pre-idle rate's BDP @flight_bdp, halved after recent misses
 * (cp_measure_halvings()) or kept at the slow-start restart's window, and
 * its ACKs showed the path taking it without a queue rising.  Slow start
 * goes on up to the window the unhalved flight would have had before
 * congestion avoidance takes over, never below @ssthresh.  Without this a
 * connection whose ssthresh sat below its BDP would grow one segment a
 * round trip from the flight: the halving, meant for one round trip,
 * would last the whole response.
 *
 * After a standing queue (@queued) ssthresh stays.  That halving hedges
 * against many connections restarting together, each on a rate that was
 * partly the others' share: each of their checks can pass while their
 * unhalved windows together would overflow the link.  The kernel's
 * "infinite" ssthresh is the ceiling.
 */
static inline u32 cp_pass_ssthresh(u32 ssthresh, u32 flight_bdp,
				   bool queued)
{
	if (queued)
		return ssthresh;
	return cp_max(ssthresh, cp_min(cp_measure_cwnd(flight_bdp, 0, 0),
				       CP_SSTHRESH_INFINITE));
}

/*
 * Initial ssthresh from Hoe's estimate ("Improving the Start-up Behavior
 * of a Congestion Control Scheme for TCP", 1996): segments sent back to
 * back leave the bottleneck spaced by its rate, and so do their ACKs;
 * @segs delivered over the @interval_us between the first ACK of a round
 * and a later one give that rate, times the path's RTT its BDP.  0 (no
 * estimate) below CP_HOE_MIN_SEGS or without an interval or RTT.
 */
static inline u32 cp_hoe_ssthresh(u32 segs, u32 interval_us, u32 mss,
				  u32 rtt_us)
{
	u64 rate;

	if (segs < CP_HOE_MIN_SEGS || !interval_us)
		return 0;
	rate = cp_rate(segs, mss, interval_us, CP_U64_MAX);
	if (!rate || !rtt_us)
		return 0;
	return cp_max(cp_bdp_segs(rate, rtt_us, mss), CP_SSTHRESH_MIN);
}

/*
 * Does an ACK that delivered @acked segments @gap_us after the previous
 * one end a train that delivered @segs over @span_us before it?  Only a
 * train of two segments or more has a mean to compare with.
 */
static inline bool cp_train_breaks(u32 segs, u32 span_us, u32 acked,
				   u32 gap_us)
{
	if (segs < 2)
		return false;
	/* acked * span fits 64 bits, CP_TRAIN_BREAK times it may not */
	return (u64)gap_us * segs / CP_TRAIN_BREAK > (u64)acked * span_us;
}

/*
 * Is a train's @rate (B/s over @span_us) believable next to the delivery
 * rate @bw (0: none yet) on a path of @rtt_us?  See CP_TRAIN_MAX_GAIN.
 */
static inline bool cp_train_plausible(u64 rate, u32 span_us, u64 bw,
				      u32 rtt_us)
{
	if (!rate || (u64)span_us << CP_TRAIN_MIN_SPAN_SHIFT < rtt_us)
		return false;
	return !bw || bw > CP_U64_MAX / CP_TRAIN_MAX_GAIN ||
	       rate <= bw * CP_TRAIN_MAX_GAIN;
}

/*
 * ---- Growth: CUBIC (RFC 9438) with HyStart++ (RFC 9406) ------------
 *
 * growth=cubic replaces NewReno's window growth and loss response.  All
 * of CUBIC's arithmetic is here in integers: windows in segments (W
 * values in fixed point, 2^-CP_CUBIC_SHIFT segment), times in
 * milliseconds (the caller's clock, a free-running 32-bit count), RTTs
 * in microseconds.
 */
enum cp_growth {
	CP_GROWTH_RENO,		/* NewReno: the kernel's Reno helpers */
	CP_GROWTH_CUBIC,	/* RFC 9438 + HyStart++ (RFC 9406) */
	CP_NR_GROWTHS
};

/*
 * RFC 9438's constants, as exact fractions.  beta_cubic = 0.7 is the
 * window kept on a congestion event; alpha_cubic = 3(1 - beta)/(1 + beta)
 * = 0.9/1.7 = 9/17 exactly is the Reno-friendly additive increase per
 * RTT that gives CUBIC's AIMD(alpha, beta) Reno's (1, 0.5) average rate;
 * fast convergence releases bandwidth with W_max = cwnd (1 + beta) / 2 =
 * 17/20 cwnd.  C = 0.4 segments/s^3 is the RFC's aggressiveness; with t
 * in ms, C t^3 = t^3 * 2 / (5 * 10^9), and in 2^-10 segments that is
 * t^3 * 4 / 5^10 (5 * 10^9 = 5^10 * 2^9).
 */
#define CP_CUBIC_BETA_NUM	7U
#define CP_CUBIC_BETA_DEN	10U
#define CP_CUBIC_ALPHA_NUM	9U
#define CP_CUBIC_ALPHA_DEN	17U
#define CP_CUBIC_FC_NUM		17U
#define CP_CUBIC_FC_DEN		20U
#define CP_CUBIC_SHIFT		10
#define CP_CUBIC_C_FP_NUM	4U
#define CP_CUBIC_C_FP_DEN	9765625U	/* 5^10 */
/* K = cbrt((W_max - cwnd_epoch) / C) s = cbrt(diff * 2.5 * 10^9) ms */
#define CP_CUBIC_K_SCALE	2500000000ULL
/*
 * |t - K| is bounded to 2^21 ms (35 minutes) so that its cube fits 64
 * bits; C (2^21 ms)^3 is 3.7 * 10^9 segments, beyond any window, so the
 * bound changes no target (targets are clamped to 1.5 cwnd anyway).
 */
#define CP_CUBIC_MAX_DT_MS	2097152	/* 2^21 */

/*
 * Integer cube root, rounded down: one result bit per 3 bits of @x from
 * the top, the digit-by-digit method (22 steps, no division).  Without a
 * branch: a BPF verifier would follow both ways of each step, 2^22 paths.
 * (x >> s) and b stay below 2^63 (the remainder is below 3 y^2 + 3 y + 1
 * of the digits so far, shifted), so bit 63 of their difference is the
 * comparison.
 */
static inline u32 cp_cbrt(u64 x)
{
	u64 y = 0, b, ge;
	int s;

	for (s = 63; s >= 0; s -= 3) {
		y <<= 1;
		b = 3 * y * (y + 1) + 1;
		ge = (((x >> s) - b) >> 63) ^ 1;	/* (x >> s) >= b */
		x -= (b << s) & (0 - ge);
		y += ge;
	}
	return (u32)y;
}

/*
 * K in ms: the time the window function takes from @cwnd_epoch back to
 * @w_max, cbrt((W_max - cwnd_epoch) / C) (RFC 9438 figure 2); 0 when the
 * epoch starts at or above W_max.  diff * 2.5e9 < 2^32 * 2.5e9 fits 64
 * bits.
 */
static inline u32 cp_cubic_k_ms(u32 w_max, u32 cwnd_epoch)
{
	if (cwnd_epoch >= w_max)
		return 0;
	return cp_cbrt((u64)(w_max - cwnd_epoch) * CP_CUBIC_K_SCALE);
}

/*
 * W_cubic(t) = C (t - K)^3 + W_max (RFC 9438 figure 1) in 2^-10
 * segments, for @dt_ms = t - K (negative in the concave region); 0 when
 * the curve is below zero.
 */
static inline u64 cp_cubic_w(u32 w_max, s32 dt_ms)
{
	u64 d = dt_ms < 0 ? -(s64)dt_ms : dt_ms;
	u64 cube, delta, base = (u64)w_max << CP_CUBIC_SHIFT;
	u32 r;

	if (d > CP_CUBIC_MAX_DT_MS)
		d = CP_CUBIC_MAX_DT_MS;
	cube = d * d * d;
	delta = cp_div_u64_rem(cube, CP_CUBIC_C_FP_DEN, &r) * CP_CUBIC_C_FP_NUM;
	delta += (u64)r * CP_CUBIC_C_FP_NUM / CP_CUBIC_C_FP_DEN;
	if (dt_ms >= 0)
		return base + delta;
	return delta < base ? base - delta : 0;
}

/* RFC 9438 section 4.2: the target is W_cubic(t + RTT) within [cwnd, 1.5 cwnd]. */
static inline u64 cp_cubic_target(u64 w_fp, u32 cwnd)
{
	u64 lo = (u64)cwnd << CP_CUBIC_SHIFT;
	u64 hi = lo + (lo >> 1);

	return w_fp < lo ? lo : w_fp > hi ? hi : w_fp;
}

/*
 * cwnd grows by (target - cwnd) / cwnd per segment ACKed: one segment
 * per cwnd / (target - cwnd) segments ACKed, the count the kernel's
 * tcp_cong_avoid_ai() takes.  0: no growth (target = cwnd).  At least 2,
 * since the target is at most 1.5 cwnd.
 */
static inline u32 cp_cubic_cnt(u32 cwnd, u64 target_fp)
{
	u64 w = (u64)cwnd << CP_CUBIC_SHIFT;
	u64 cnt;

	if (target_fp <= w)
		return 0;
	cnt = w / (target_fp - w);
	if (cnt > ~0U)
		return ~0U;
	return cnt ? (u32)cnt : 1;
}

/* ssthresh after a congestion event: beta_cubic cwnd, at least 2 segments. */
static inline u32 cp_cubic_ssthresh(u32 cwnd)
{
	u64 s = (u64)cwnd * CP_CUBIC_BETA_NUM / CP_CUBIC_BETA_DEN;

	return s < CP_SSTHRESH_MIN ? CP_SSTHRESH_MIN : (u32)s;
}

/*
 * W_max after a congestion event at @cwnd (RFC 9438 section 4.7): fast
 * convergence lowers it to cwnd (1 + beta) / 2 when the window did not
 * get back to the last W_max, a sign that a new flow takes a share.
 */
static inline u32 cp_cubic_wmax(u32 cwnd, u32 w_max)
{
	if (cwnd < w_max)
		return (u32)((u64)cwnd * CP_CUBIC_FC_NUM / CP_CUBIC_FC_DEN);
	return cwnd;
}

/*
 * Per-connection CUBIC state.  The Reno-friendly estimate W_est grows by
 * alpha * acked / cwnd per ACK (RFC 9438 section 4.3); w_est_acc keeps
 * the fraction exactly, in 1/17 segment-ACKs: alpha = 9/17 adds 9 per
 * segment ACKed, alpha = 1 adds 17, and every 17 * cwnd of it is one
 * segment (exact while cwnd < 2^32 / 17, 252 million segments; the send
 * buffer's 2 GB bound keeps cwnd far below).
 */
struct cp_cubic {
	u32 w_max;	/* segs: W_max, 0 = undefined (no loss yet, or RTO) */
	u32 cwnd_prior;	/* segs: cwnd when ssthresh was last set */
	u32 t0_ms;	/* ms: epoch start + K, when W_cubic reaches W_max */
	u32 w_est;	/* segs: W_est; 0 = no epoch (one starts on next ACK) */
	u32 w_est_acc;	/* 1/17 segment-ACKs toward W_est's next segment */
};

/* A congestion event (loss or ECN) at @cwnd: RFC 9438 sections 4.6, 4.7. */
static inline u32 cp_cubic_loss(struct cp_cubic *c, u32 cwnd)
{
	c->w_max = cp_cubic_wmax(cwnd, c->w_max);
	c->cwnd_prior = cwnd;
	c->w_est = 0;
	return cp_cubic_ssthresh(cwnd);
}

/*
 * A congestion-avoidance epoch begins at @now_ms with @cwnd (cwnd_epoch).
 * Without a W_max (no loss yet, after an RTO, after HyStart++) or from a
 * window at or above it, K = 0 and W_max = cwnd_epoch (RFC 9438 sections
 * 4.8 and 4.10): the curve starts on its plateau.
 */
static inline void cp_cubic_epoch(struct cp_cubic *c, u32 cwnd, u32 now_ms)
{
	if (!cwnd)
		cwnd = 1;
	if (!c->w_max || cwnd >= c->w_max)
		c->w_max = cwnd;
	if (!c->cwnd_prior)
		c->cwnd_prior = cwnd;
	c->t0_ms = now_ms + cp_cubic_k_ms(c->w_max, cwnd);
	c->w_est = cwnd;
	c->w_est_acc = 0;
}

/* W_est += alpha * acked / cwnd, alpha = 1 once W_est >= cwnd_prior. */
static inline void cp_cubic_west(struct cp_cubic *c, u32 acked, u32 cwnd)
{
	u32 a = c->w_est >= c->cwnd_prior ? CP_CUBIC_ALPHA_DEN :
					     CP_CUBIC_ALPHA_NUM;
	u64 per = (u64)CP_CUBIC_ALPHA_DEN * (cwnd ? cwnd : 1);
	u64 acc = c->w_est_acc + (u64)a * acked;
	u32 r;
	u64 inc = cp_div_u64_rem(acc, (u32)(per > ~0U ? ~0U : per), &r);

	c->w_est_acc = r;
	inc += c->w_est;
	c->w_est = inc > ~0U ? ~0U : (u32)inc;
}

/* Wrap-safe t - K in ms from the epoch's t0, bounded to the window's range. */
static inline s32 cp_cubic_dt(u32 now_ms, u32 t0_ms)
{
	s32 dt = (s32)(now_ms - t0_ms);

	if (dt > CP_CUBIC_MAX_DT_MS)
		return CP_CUBIC_MAX_DT_MS;
	if (dt < -CP_CUBIC_MAX_DT_MS)
		return -CP_CUBIC_MAX_DT_MS;
	return dt;
}

/*
 * One ACK of @acked segments in congestion avoidance at @now_ms, with the
 * smoothed RTT @rtt_ms (RFC 9438 section 4.2 uses t + RTT for the
 * target).  Starts an epoch when there is none.  Returns the window the
 * ACK sets at once: W_est in the Reno-friendly region (W_cubic(t) <
 * W_est, section 4.3), else @cwnd, with *cnt the segments ACKed per
 * segment of growth toward the target (0: none; for
 * tcp_cong_avoid_ai()).
 */
static inline u32 cp_cubic_ack(struct cp_cubic *c, u32 cwnd, u32 acked,
			       u32 now_ms, u32 rtt_ms, u32 *cnt)
{
	u64 w_t, target;

	*cnt = 0;
	if (!c->w_est)
		cp_cubic_epoch(c, cwnd, now_ms);
	cp_cubic_west(c, acked, cwnd);
	w_t = cp_cubic_w(c->w_max, cp_cubic_dt(now_ms, c->t0_ms));
	if (w_t < (u64)c->w_est << CP_CUBIC_SHIFT)
		return c->w_est > cwnd ? c->w_est : cwnd;
	target = cp_cubic_target(cp_cubic_w(c->w_max,
					    cp_cubic_dt(now_ms + rtt_ms,
							c->t0_ms)), cwnd);
	*cnt = cp_cubic_cnt(cwnd, target);
	return cwnd;
}

/*
 * HyStart++ (RFC 9406) ends the initial slow start when the RTT rises:
 * each round's minimum RTT (of at least N_RTT_SAMPLE samples) is compared
 * with the previous round's; a rise of RttThresh = clamp(last / 8, 4 ms,
 * 16 ms) enters Conservative Slow Start (CSS: growth / 4), a minimum back
 * below CSS's baseline returns to slow start (the rise was a burst, not a
 * queue), and CSS_ROUNDS rounds of CSS end slow start with ssthresh =
 * cwnd.  Constants are the RFC's section 4.3 values: 4 ms is more than
 * the jitter of a LAN or a delayed ACK, 16 ms bounds the queue a long
 * path must build before it counts, 1/8 of the RTT in between; 8 samples
 * make a round's minimum; CSS grows at a quarter of slow start's rate for
 * 5 rounds, long enough to see whether the rise was transient.
 */
#define CP_HS_MIN_RTT_THRESH_US	4000U
#define CP_HS_MAX_RTT_THRESH_US	16000U
#define CP_HS_MIN_RTT_DIVISOR	8U
#define CP_HS_N_RTT_SAMPLE	8U
#define CP_HS_CSS_GROWTH_DIVISOR 4U
#define CP_HS_CSS_ROUNDS	5U
/*
 * L: at most 8 segments of growth per ACK, the RFC's value for a sender
 * that does not pace (this module paces only restart flights and, with
 * pace_iw, the initial window: slow start itself is ACK-clocked), so an
 * ACK that covers many segments (a stretch ACK, the end of a SACK
 * recovery) cannot release a burst.
 */
#define CP_HS_L			8U
#define CP_RTT_NONE		(~0U)	/* no RTT sample: the RFC's infinity */

/* What an ACK did to HyStart++. */
enum cp_hs_event {
	CP_HS_NONE,	/* nothing changed */
	CP_HS_CSS,	/* the RTT rose: slow start -> CSS */
	CP_HS_RESUME,	/* the RTT fell back: CSS -> slow start */
	CP_HS_EXIT,	/* CSS_ROUNDS rounds of CSS: ssthresh = cwnd */
};

struct cp_hystart {
	u32 cur_min_us;		/* us: this round's min RTT, CP_RTT_NONE */
	u32 last_min_us;	/* us: the previous round's */
	u32 css_base_us;	/* us: cssBaselineMinRtt, CP_RTT_NONE */
	u8 samples;		/* RTT samples this round, 0..N_RTT_SAMPLE */
	u8 css;			/* 1: in CSS */
	u8 css_rounds;		/* rounds ended in CSS, 0..CSS_ROUNDS */
	u8 css_acc;		/* segs ACKed in CSS not yet grown, 0..3 */
};

static inline void cp_hystart_init(struct cp_hystart *h)
{
	h->cur_min_us = CP_RTT_NONE;
	h->last_min_us = CP_RTT_NONE;
	h->css_base_us = CP_RTT_NONE;
	h->samples = 0;
	h->css = 0;
	h->css_rounds = 0;
	h->css_acc = 0;
}

/* RttThresh = max(4 ms, min(lastRoundMinRTT / 8, 16 ms)). */
static inline u32 cp_hystart_thresh_us(u32 last_min_us)
{
	u32 t = last_min_us / CP_HS_MIN_RTT_DIVISOR;

	return cp_max(CP_HS_MIN_RTT_THRESH_US,
		      cp_min(t, CP_HS_MAX_RTT_THRESH_US));
}

/*
 * A round ended (the caller counts rounds: an ACK past the snd_nxt of the
 * round's start).  The round that entered CSS is the first of its
 * CSS_ROUNDS: the fifth round end after entering leaves slow start.
 */
static inline enum cp_hs_event cp_hystart_round(struct cp_hystart *h)
{
	h->last_min_us = h->cur_min_us;
	h->cur_min_us = CP_RTT_NONE;
	h->samples = 0;
	if (!h->css)
		return CP_HS_NONE;
	if (++h->css_rounds < CP_HS_CSS_ROUNDS)
		return CP_HS_NONE;
	h->css = 0;
	return CP_HS_EXIT;
}

/* One RTT sample (@rtt_us > 0) of an ACK during the initial slow start. */
static inline enum cp_hs_event cp_hystart_rtt(struct cp_hystart *h,
					      u32 rtt_us)
{
	if (!rtt_us)
		return CP_HS_NONE;
	if (rtt_us < h->cur_min_us)
		h->cur_min_us = rtt_us;
	if (h->samples < CP_HS_N_RTT_SAMPLE)
		h->samples++;
	if (h->samples < CP_HS_N_RTT_SAMPLE)
		return CP_HS_NONE;
	if (h->css) {
		if (h->cur_min_us >= h->css_base_us)
			return CP_HS_NONE;
		h->css = 0;
		h->css_base_us = CP_RTT_NONE;
		return CP_HS_RESUME;
	}
	if (h->last_min_us == CP_RTT_NONE || h->cur_min_us == CP_RTT_NONE)
		return CP_HS_NONE;
	if ((u64)h->cur_min_us < (u64)h->last_min_us +
				 cp_hystart_thresh_us(h->last_min_us))
		return CP_HS_NONE;
	h->css = 1;
	h->css_base_us = h->cur_min_us;
	h->css_rounds = 0;
	h->css_acc = 0;
	return CP_HS_CSS;
}

/*
 * Segments of growth for an ACK of @acked segments in the initial slow
 * start: min(acked, L), divided by CSS_GROWTH_DIVISOR in CSS (the
 * remainder carried to the next ACK, so four single-segment ACKs grow
 * one segment).
 */
static inline u32 cp_hystart_grow(struct cp_hystart *h, u32 acked)
{
	u32 n = cp_min(acked, CP_HS_L) + (h->css ? h->css_acc : 0);

	if (!h->css)
		return n;
	h->css_acc = n % CP_HS_CSS_GROWTH_DIVISOR;
	return n / CP_HS_CSS_GROWTH_DIVISOR;
}

/*
 * Restarts that share a destination (an ensemble, as RFC 9040 shares
 * TCP control block state among connections to one host): connections
 * of one host to one destination that restart in a quick run, each
 * within a quarter of the path's RTT of the last (CP_ENSEMBLE_GAP_SHIFT)
 * and all within one RTT of the first, meet at the same bottleneck with
 * flights each sized from its own rate estimate.  Those estimates were
 * each measured beside the others' traffic, and a windowed maximum keeps
 * each connection's best rounds, in which the others happened to send
 * less, so together the flights are sized for several times the path.
 * The k-th restart of an ensemble paces and sizes its flight at 1/k of
 * its rate: the flights of n restarts that each read the path's rate R
 * sum to R (1 + 1/2 + ... + 1/n), about R ln n, instead of n R; the
 * first, alone or not, keeps its whole rate, and each check lets its
 * connection slow-start back to its old window when the path takes the
 * flight.  A connection restarting alone is never slowed.
 *
 * The table is fixed: CP_ENSEMBLE_SLOTS slots indexed by a hash of the
 * destination and the network namespace's random hash_mix, so a remote
 * peer can neither grow it nor aim at a slot.  A restart toward another
 * destination that hashes to a slot whose ensemble is still live takes
 * the slot over (counted): that ensemble's later restarts start a new
 * one and go unslowed, as without the table.  256 slots
 * keep a host with a hundred destinations restarting within one RTT
 * mostly apart, in 6 KB.
 */
#define CP_ENSEMBLE_SLOTS	256U
/*
 * Beyond 64 restarts in one RTT toward one destination, 1/k of the rate
 * is below the slow-start restart's window for any path this module is
 * tuned for, and that window is the flight's floor anyway.
 */
#define CP_ENSEMBLE_MAX		64U
/*
 * An ensemble's restarts follow one another by less than a quarter of
 * the first one's path RTT (a restart later than that after the last
 * one starts a new ensemble), all within one RTT of the first.  One
 * event (a page load, a push to every client) restarts a host's
 * connections toward a destination in a quick run, spread by the
 * hosts' scheduling rather than by the path, so each follows the last
 * closely; their flights, each paced over about one RTT, arrive at the
 * bottleneck as one.  Connections idling independently meet by chance:
 * a restart that finds the last one a quarter of an RTT or more behind
 * finds most of that flight through, and dividing it costs time the
 * path did not ask for (in the bench's fleet with idle periods ending
 * at random, undivided flights lost nothing and divided ones lengthened
 * the tail); an independent restart follows another within the gap a
 * quarter as often as within one RTT.
 */
#define CP_ENSEMBLE_GAP_SHIFT	2U
/* 2^32 / golden ratio: the multiplicative hash's constant (Knuth). */
#define CP_ENSEMBLE_HASH_MUL	0x9e3779b1U

struct cp_ensemble {
	u64 start_us;	/* us: the ensemble's first restart */
	u32 span_us;	/* us: that restart's path RTT */
	u32 last_us;	/* us: its last restart, after start_us */
	u32 key;	/* cp_ensemble_key() of its destination */
	u32 n;		/* restarts in it so far (0: slot unused) */
};

/*
 * The key of a destination: @words 32-bit words of its address (1 for
 * IPv4, 4 for IPv6) mixed with @salt (the network namespace's hash_mix).
 * Never 0, so a key of 0 marks nothing.
 */
static inline u32 cp_ensemble_key(const u32 *addr, u32 words, u32 salt)
{
	u32 i, h = salt;

	for (i = 0; i < 4 && i < words; i++) {
		h ^= addr[i];
		h *= CP_ENSEMBLE_HASH_MUL;
		h ^= h >> 16;
	}
	return h ? h : 1;
}

static inline u32 cp_ensemble_slot(u32 key)
{
	return key % CP_ENSEMBLE_SLOTS;
}

/*
 * A restart toward @key at @now_us (us) whose path RTT is @span_us joins
 * the ensemble in slot @e: returns its place in it (1: the first), and
 * sets *@evicted when the slot held another destination's ensemble that
 * was still live.  An ensemble is live for a restart within its span of
 * its first and within the gap (CP_ENSEMBLE_GAP_SHIFT) of its last; a
 * restart that finds the slot's ensemble no longer live starts a new
 * one.
 */
static inline u32 cp_ensemble_join(struct cp_ensemble *e, u32 key,
				   u64 now_us, u32 span_us, bool *evicted)
{
	u64 since = now_us - e->start_us;
	bool live = e->n && now_us >= e->start_us && since < e->span_us &&
		    since - e->last_us < e->span_us >> CP_ENSEMBLE_GAP_SHIFT;

	*evicted = live && e->key != key;
	if (!live || e->key != key) {
		e->start_us = now_us;
		e->span_us = span_us;
		e->key = key;
		e->n = 0;
		since = 0;
	}
	e->last_us = since;
	if (e->n < CP_ENSEMBLE_MAX)
		e->n++;
	return e->n;
}

/*
 * Whether slot @e holds a restart toward @key less than @window_us before
 * @now_us (us): asked before this restart joins, with the connection's
 * idle period as the window, it says whether another connection
 * restarted toward the destination while this one was idle.  The
 * connection's own last restart joined as its flight began, before the
 * last segment that started the idle period; with the window
 * cp_recent_window_us() gives (the idle period read in whole jiffies,
 * less one) it falls outside and never counts.  The table only forgets
 * (a slot another destination took over, ensemble=0): it answers "none"
 * then, never "some" for a restart that was not.
 */
static inline bool cp_ensemble_recent(const struct cp_ensemble *e, u32 key,
				      u64 now_us, u64 window_us)
{
	u64 last;

	if (!e->n || e->key != key)
		return false;
	last = e->start_us + e->last_us;
	return now_us >= last && now_us - last < window_us;
}

/*
 * The window, in us, that cp_ensemble_recent() looks back over for an
 * idle period of @idle jiffies at @hz: one jiffy less.  The idle period
 * counts whole jiffies, so it may read up to a jiffy longer than it was,
 * and the connection's own last restart, which joined as its flight
 * began, falls within a jiffy of the period's start when that flight
 * left at once (a response of a few segments).
 */
static inline u64 cp_recent_window_us(u32 idle, u32 hz)
{
	u32 r;

	if (idle <= 1 || !hz)
		return 0;
	return cp_div_u64_rem((u64)(idle - 1) * CP_USEC_PER_SEC, hz, &r);
}

/* The k-th restart's (@place) share of its @rate, B/s. */
static inline u64 cp_ensemble_rate(u64 rate, u32 place)
{
	u32 r;

	if (place <= 1)
		return rate;
	return cp_div_u64_rem(rate, place, &r);
}

/* What a measured restart's plan found (struct cp_measure's flags). */
enum cp_measure_flag {
	CP_MF_PROBED = 1U << 0,		/* rate raised, cp_probe_rate() */
	CP_MF_WND = 1U << 1,		/* rate held to the peer's window */
	CP_MF_ROOM = 1U << 2,		/* paced faster into its own room */
	CP_MF_BURST = 1U << 3,		/* at once behind others' queue */
	CP_MF_FLOOR = 1U << 4,		/* raised to the restart window's */
	CP_MF_QUIET = 1U << 5,		/* above its rate, quiet path */
	CP_MF_QUIET_OTHERS = 1U << 6,	/* not: others restarted meanwhile */
	CP_MF_QUEUED = 1U << 7,		/* halved for others' queue */
	CP_MF_SRTT = 1U << 8,		/* sized over srtt, others' queue */
	CP_MF_SSR = 1U << 9,		/* a slow-start restart instead */
};

/*
 * A measured restart's plan: what the socket showed before the idle
 * period and the parameters, in; the flight's rates and window, out.
 * Made in two steps around the restart's place in the ensemble toward
 * its destination, which is asked only when there is a rate:
 * cp_measure_rate(), then cp_measure_flight().
 */
struct cp_measure {
	/* in */
	u64 est;		/* pace_rate's estimate, B/s */
	u64 train;		/* the ACK trains' windowed max, B/s */
	u64 cap;		/* the socket's pacing cap, B/s */
	u32 before;		/* cwnd before the idle period, segments */
	u32 floor;		/* a slow-start restart's window, segments */
	u32 mss;		/* bytes */
	u32 srtt_us;		/* srtt before the idle period, us */
	u32 min_rtt_us;		/* the path's minimum, us; ~0U: no sample */
	u32 path_rtt_us;	/* cp_path_rtt_us(), us */
	u32 low_rtt_us;		/* the last round's lowest sample, us; 0 */
	u32 snd_wnd;		/* the peer's window, bytes */
	u32 misses;		/* failed checks remembered, 0..3 */
	u32 place;		/* k-th restart of an ensemble; 1: alone */
	u32 queue_pct;		/* parameters of the same names */
	u32 probe_pct;
	u32 quiet_pct;
	bool passed;		/* last check passed with a queue under it */
	bool quiet;		/* last check passed with none under it */
	bool rwnd;		/* the peer's window held data back */
	bool others;		/* another restarted toward the destination */
	bool near;		/* ... within one path RTT before this one */
	bool kept;		/* the last check found the queue that stood
				 * before its idle period still standing
				 */
	bool wnd_cap, queue_room, pace_burst, shared_burst, shared_rtt,
	     pace_floor, ssr_floor;	/* parameters of the same names */
	/* out */
	bool queued;		/* a queue stood before the idle period */
	bool shared;		/* ... that the window does not explain */
	u32 flags;		/* CP_MF_* */
	u32 bdp;		/* the flight's BDP, segments; 0: no rate */
	u32 cwnd;		/* the flight's window, segments */
	u64 rate;		/* sized and checked at, B/s */
	u64 quick;		/* paced at until the first ACK, B/s */
};

/*
 * The first step: the rate a measured restart sizes its flight at
 * (cp_path_rate(), cp_probe_rate(), cp_wnd_rate()), and whether a queue,
 * and one others kept, stood before the idle period (cp_queue_stood() of
 * the last round's lowest RTT sample, else srtt; cp_queue_own()).
 * Returns the rate, B/s; 0: none.
 */
static inline u64 cp_measure_rate(struct cp_measure *m)
{
	u64 path, probed;
	u32 rtt;

	path = cp_path_rate(m->est, m->train, m->cap);
	rtt = m->low_rtt_us ? m->low_rtt_us : m->srtt_us;
	m->queued = cp_queue_stood(rtt, m->min_rtt_us, m->queue_pct);
	/* a queue others kept: the window does not explain it */
	m->shared = m->queued && !cp_queue_own(m->before, path, rtt, m->mss);
	probed = cp_probe_rate(path, m->passed, m->misses, m->probe_pct,
			       m->cap);
	m->rate = cp_wnd_rate(probed, m->wnd_cap && m->rwnd, m->snd_wnd,
			      m->path_rtt_us);
	m->flags = 0;
	if (probed > path)
		m->flags |= CP_MF_PROBED;
	if (m->rate < probed)
		m->flags |= CP_MF_WND;
	return m->rate;
}

/*
 * The second step, with @m->place: the k-th restart of an ensemble sizes
 * and paces at 1/k of the rate (cp_ensemble_rate()); the flight's window
 * is the BDP over the RTT it meets (cp_flight_rtt(), cp_bdp_segs()),
 * halved (cp_measure_halvings(), cp_measure_cwnd()); until its first ACK
 * it leaves faster into the room its own queue showed (queue_room,
 * cp_queue_room(), less the restart window that pace_burst sends at
 * once), at once behind a queue others kept (shared_burst,
 * cp_flight_room(); it and shared_rtt only when the last check found
 * such a queue outliving its idle period and no other connection
 * restarted toward the destination during this one, cp_shared_kept()),
 * no slower than the restart window per minimum RTT (pace_floor,
 * cp_floor_rate()) and, on a path the last check found
 * quiet, at quiet_pct % of the rate (cp_quiet_rate()) unless another
 * connection restarted toward the destination during the idle period;
 * neither of the last two when the ensemble divided the rate.  With
 * ssr_floor, a flight that would take longer than the minimum RTT to
 * send the restart window, another connection having restarted toward
 * the destination meanwhile but none within the last path RTT, is a
 * slow-start restart (CP_MF_SSR, cp_measure_ssr()) and none of the rates
 * apply.  Returns the BDP, segments; 0: no rate.
 */
static inline u32 cp_measure_flight(struct cp_measure *m)
{
	bool divided, over_srtt, bulk;
	u64 sent, floored;
	u32 frtt, halvings, room = 0;

	divided = m->place > 1;
	/*
	 * shared_rtt and shared_burst answer a queue that a flow which did
	 * not go idle keeps (cp_shared_kept()): the last check found it
	 * still standing, and no others toward the destination restarted,
	 * whose flights and this one would arrive together.
	 */
	bulk = cp_shared_kept(m->shared, m->others, m->kept);
	m->rate = cp_ensemble_rate(m->rate, m->place);
	frtt = cp_flight_rtt(m->path_rtt_us,
			     cp_check_rtt_base(m->queued, m->srtt_us,
					       m->path_rtt_us),
			     bulk, m->shared_rtt);
	over_srtt = frtt > m->path_rtt_us;
	m->bdp = cp_bdp_segs(m->rate, frtt, m->mss);
	halvings = cp_measure_halvings(m->misses, m->shared && !over_srtt);
	m->cwnd = cp_measure_cwnd(m->bdp, halvings, m->floor);
	if (m->queue_room && !m->shared && !m->misses)
		room = cp_queue_room(m->before, m->rate, m->srtt_us,
				     m->min_rtt_us, m->mss);
	if (m->pace_burst)
		room -= cp_min(room, m->floor);
	room = cp_flight_room(room, m->cwnd, bulk, m->shared_burst);
	sent = cp_room_rate(m->rate, m->cwnd, room, m->cap);
	if (cp_measure_ssr(sent, m->floor, m->mss, m->path_rtt_us, divided,
			   m->others && !m->near, m->ssr_floor)) {
		m->flags |= CP_MF_SSR;
		return m->bdp;
	}
	floored = sent;
	if (m->pace_floor && !divided)
		floored = cp_floor_rate(sent, m->floor, m->mss, m->path_rtt_us,
					m->cap);
	m->quick = floored;
	if (!m->queued && !divided)
		m->quick = cp_quiet_rate(floored, m->rate, m->quiet, m->misses,
					 m->quiet_pct, m->cap);
	if (m->quick > floored && m->others) {
		m->flags |= CP_MF_QUIET_OTHERS;
		m->quick = floored;
	}
	if (sent > m->rate)
		m->flags |= bulk && m->shared_burst ? CP_MF_BURST :
						     CP_MF_ROOM;
	if (floored > sent)
		m->flags |= CP_MF_FLOOR;
	if (m->quick > floored)
		m->flags |= CP_MF_QUIET;
	if (halvings > m->misses)
		m->flags |= CP_MF_QUEUED;
	if (over_srtt)
		m->flags |= CP_MF_SRTT;
	return m->bdp;
}

/*
 * Idle periods are counted in a coarse histogram of whole RTOs, buckets
 * [1, 2), [2, 4), [4, 8), [8, 16), [16, 32) and [32, inf) RTOs: whether
 * restarts follow a pause just past the RTO (pipelined requests, a slow
 * client) or long ones (keep-alive between page views).
 */
#define CP_IDLE_BUCKETS		6U

static inline u32 cp_idle_bucket(u32 idle, u32 rto)
{
	u32 n, b = 0;

	if (!rto)
		return CP_IDLE_BUCKETS - 1;
	n = idle / rto;
	while (n > 1 && b < CP_IDLE_BUCKETS - 1) {
		n >>= 1;
		b++;
	}
	return b;
}

#endif /* _COCKTAIL_POLICY_H */
