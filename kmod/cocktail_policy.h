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
#define CP_U64_MAX		(~(u64)0)

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

/* RFC 7661's non-validated period (NVP), in seconds: its 5 minutes. */
#define CP_NVP_SECONDS		300U

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
 * ssthresh after the restart: ssr and decay remember the old window the
 * way the kernel's restart does; keep and pace leave it alone.
 */
static inline u32 cp_restart_ssthresh(enum cp_policy policy, u32 ssthresh,
				      u32 cwnd)
{
	if (policy == CP_SSR || policy == CP_DECAY)
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
 * queue: slow-start restart when the connection had built a queue before
 * the idle period, i.e. srtt (which the kernel does not update while idle)
 * is above @queue_pct % of the minimum RTT, else pace.  A standing queue
 * means the path was shared or the window was larger than the pipe, so
 * the remembered window is stale; without one the pre-idle rate is still
 * good and pacing it is safe.  No min RTT sample (0 or ~0U) is no evidence
 * of a queue: pace.  In 64 bits, so no product can overflow.
 */
static inline enum cp_policy cp_queue_policy(u32 srtt_us, u32 min_rtt_us,
					     u32 queue_pct)
{
	if (!cp_min_rtt_known(min_rtt_us))
		return CP_PACE;
	if ((u64)srtt_us * 100 > (u64)min_rtt_us * queue_pct)
		return CP_SSR;
	return CP_PACE;
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
	u64 cur;
	u64 prev;
	u32 start;	/* round at which the current bucket began */
};

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

	if (age >= win) {
		w->prev = age >= 2 * win ? 0 : w->cur;
		w->cur = 0;
		w->start = round;
	}
	if (sample > w->cur)
		w->cur = sample;
}

static inline u64 cp_maxwin_get(const struct cp_maxwin *w)
{
	return w->cur > w->prev ? w->cur : w->prev;
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

#endif /* _COCKTAIL_POLICY_H */
