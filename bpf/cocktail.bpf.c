// SPDX-License-Identifier: GPL-2.0
/*
 * cocktail as a BPF struct_ops congestion control, registered as
 * "cocktail_bpf": the same algorithm as kmod/tcp_cocktail.c (read its
 * header comment for the mechanism: initial window, restart after idle,
 * window validation), for hosts that load no unsigned module.  The
 * arithmetic is kmod/cocktail_policy.h, included as is; this file is the
 * shell around it, as tcp_cocktail.c is the module's.
 *
 * What differs from the module, and why:
 * - The kernel lets a BPF congestion control write only snd_cwnd,
 *   snd_cwnd_cnt, snd_ssthresh, ecn_flags, sk_pacing_rate,
 *   sk_pacing_status and its private area (bpf_tcp_ca_btf_struct_access()).
 *   The paced flight's cap on sk_max_pacing_rate is set with
 *   bpf_setsockopt(SO_MAX_PACING_RATE), which takes a 32-bit rate: a
 *   flight is paced at most at 2^32 - 2 B/s (about 34 Gbit/s).
 * - release() may not call bpf_setsockopt(), so a socket that leaves
 *   cocktail_bpf for another algorithm in the middle of a paced flight
 *   keeps the flight's cap on sk_max_pacing_rate; closing is unaffected.
 * - snd_cwnd_stamp and snd_cwnd_used are read-only here: with
 *   tcp_slow_start_after_idle=1 the kernel's own RFC 2861 decay in
 *   tcp_cwnd_validate() runs besides the cwv parameter, where the module
 *   keeps it out by refreshing the stamp; and after a cwv=1 decay
 *   snd_cwnd_used keeps the kernel's value, where the module clears it.
 * - The paced flight's cap is put back with a read and a write, not the
 *   module's compare-and-exchange (a BPF congestion control cannot
 *   cmpxchg a socket field); the socket is locked here, and only from 6.7
 *   on may the application write the cap without that lock.
 * - The NewReno steps are kfuncs (tcp_slow_start, tcp_cong_avoid_ai,
 *   tcp_reno_ssthresh, tcp_reno_undo_cwnd); PRR is the kernel's, as for
 *   the module, because neither uses .cong_control.
 * - Events go to a ring buffer (the tool prints them in the format of
 *   the module's tracepoints) instead of tracepoints; counters are
 *   global data instead of the stats parameter, with the module's names
 *   (kmod/cocktail_state.h); parameters are global data the tool writes.
 * - Everything else is the module's, function for function: the state
 *   (struct cocktail, kmod/cocktail_state.h), restart=measure and its
 *   check, the ACK trains and Hoe's ssthresh estimate, growth=cubic with
 *   HyStart++.
 *
 * Units: cwnd, ssthresh and initial windows in segments; rates in bytes
 * per second; idle time and RTO in jiffies; RTTs in microseconds.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "../kmod/cocktail_policy.h"
#include "../kmod/cocktail_state.h"
#include "cocktail_bpf.h"

char _license[] SEC("license") = "GPL";

/*
 * Round trips a rate sample stays in the windowed max: the module's
 * (tcp_cocktail.c says why).
 */
#define COCKTAIL_BW_ROUNDS	10
/* include/linux/net.h: the socket's send buffer is full. */
#define COCKTAIL_SOCK_NOSPACE	2
/* include/net/dst.h: low bits of dst_entry._metrics are flags. */
#define COCKTAIL_DST_METRICS_FLAGS	0x3UL
/* include/uapi/asm-generic/socket.h */
#define COCKTAIL_SOL_SOCKET		1
#define COCKTAIL_SO_MAX_PACING_RATE	47
/* The largest cap bpf_setsockopt() takes; ~0U means no cap. */
#define COCKTAIL_RATE_MAX_BPF	0xfffffffeULL
/* include/net/tcp.h: ssthresh before the first congestion event. */
#define COCKTAIL_INFINITE_SSTHRESH	0x7fffffffU
/* Saturated 32-bit rate in struct cocktail: reads back as "no cap". */
#define COCKTAIL_RATE32_MAX	0xffffffffU

extern unsigned int CONFIG_HZ __kconfig __weak;

extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

/*
 * Parameters, with the module's names, defaults and ranges; the tool
 * checks a value before it writes it, so the programs read only valid
 * ones.  Read once per decision, as in the module.
 */
__u32 iw = 10;
__u32 restart = CP_AUTO;
__u32 auto_rtt_us = 100000;
__u32 queue_pct = 120;
__u32 growth SEC(".data") = CP_GROWTH_RENO;
__u32 pace_rate = CP_RATE_MAX;
__u32 cwv = CP_CWV_2861;
__u32 nvp_s = CP_NVP_SECONDS;
__u32 pace_iw SEC(".data") = 0;
__u32 ssthresh_est = 1;
__u32 check_rtt_pct = 125;
__u32 check_rate_pct = 75;

/*
 * Counters (enum cocktail_counter), read by the tool; a power of two of
 * slots so that masking an index proves it in bounds to the verifier.
 */
#define COCKTAIL_COUNTER_SLOTS	64
_Static_assert(CC_NR <= COCKTAIL_COUNTER_SLOTS, "counter slots");
__u64 counters[COCKTAIL_COUNTER_SLOTS];

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

_Static_assert(sizeof(struct cocktail) <= 104, "icsk_ca_priv is 104 bytes");

static __always_inline struct cocktail *ca_of(struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline struct tcp_sock *tp_of(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *icsk_of(struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline __u32 hz(void)
{
	return CONFIG_HZ ? CONFIG_HZ : 250;
}

static __always_inline __u32 jiffies32(void)
{
	return (__u32)bpf_jiffies64();
}

static __always_inline __u64 jiffies_to_us(__u64 j)
{
	return j * CP_USEC_PER_SEC / hz();
}

static __always_inline __u32 srtt_us(const struct tcp_sock *tp)
{
	return tp->srtt_us >> 3;
}

/* tcp_min_rtt(): ~0U without a sample. */
static __always_inline __u32 min_rtt_us(const struct tcp_sock *tp)
{
	return tp->rtt_min.s[0].v;
}

/* The path's minimum RTT in us: the kernel's windowed min, else srtt. */
static __always_inline __u32 path_rtt_us(const struct tcp_sock *tp)
{
	return cp_path_rtt_us(min_rtt_us(tp), srtt_us(tp));
}

static __always_inline void count(__u32 c)
{
	/* Hide what the compiler knows of c, so the mask stays. */
	barrier_var(c);
	c &= COCKTAIL_COUNTER_SLOTS - 1;
	__sync_fetch_and_add(&counters[c], 1);
}

static __always_inline void set_cwnd(struct tcp_sock *tp, __u32 cwnd)
{
	__u32 clamp = tp->snd_cwnd_clamp;

	if (cwnd > clamp)
		cwnd = clamp;
	tp->snd_cwnd = cwnd ? cwnd : 1;
}

static __always_inline __u8 ca_state(struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD(icsk_of(sk), icsk_ca_state);
}

static __always_inline bool in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

static __always_inline bool in_initial_slowstart(const struct tcp_sock *tp)
{
	return tp->snd_ssthresh >= COCKTAIL_INFINITE_SSTHRESH;
}

/* include/net/tcp.h tcp_packets_in_flight() */
static __always_inline __u32 packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) +
	       tp->retrans_out;
}

/* include/net/tcp.h tcp_is_cwnd_limited() */
static __always_inline bool is_cwnd_limited(struct sock *sk)
{
	struct tcp_sock *tp = tp_of(sk);

	if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return true;
	if (in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return false;
}

/* A ring buffer record of @type for @sk, zeroed; NULL when it is full. */
static __always_inline struct cocktail_event *
event_new(struct sock *sk, __u32 type)
{
	struct cocktail_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return NULL;
	__builtin_memset(e, 0, sizeof(*e));
	e->type = type;
	e->ts_ns = bpf_ktime_get_ns();
	e->sport = sk->__sk_common.skc_num;
	e->dport = bpf_ntohs(sk->__sk_common.skc_dport);
	return e;
}

/* ---- initial window ------------------------------------------------ */

/* The route's initcwnd metric (0: none), dst_metric(dst, RTAX_INITCWND). */
static __always_inline __u32 route_initcwnd(struct sock *sk)
{
	struct dst_entry *dst = BPF_CORE_READ(sk, sk_dst_cache);
	unsigned long m;
	__u32 v = 0;

	if (!dst)
		return 0;
	m = BPF_CORE_READ(dst, _metrics) & ~COCKTAIL_DST_METRICS_FLAGS;
	if (!m)
		return 0;
	bpf_probe_read_kernel(&v, sizeof(v),
			      (void *)(m + (RTAX_INITCWND - 1) * sizeof(__u32)));
	return v;
}

/* IW in segments: the route's initcwnd when set, else the iw parameter. */
static __always_inline __u32 iw_segs(struct sock *sk, bool *route)
{
	__u32 metric = route_initcwnd(sk);

	*route = metric != 0;
	if (metric)
		return metric;
	return cp_iw_segs(iw, tp_of(sk)->mss_cache);
}

static __always_inline __u32 iw_now(struct sock *sk)
{
	bool route;

	return iw_segs(sk, &route);
}

static __always_inline void set_iw(struct sock *sk)
{
	struct tcp_sock *tp = tp_of(sk);
	bool route;
	__u32 w = iw_segs(sk, &route);

	if (route) {
		count(CC_IW_ROUTE);
		return;
	}
	/* tcp_init_transfer() cut cwnd to 1 after SYN retransmissions. */
	if (tp->total_retrans > 1 && tp->undo_marker)
		return;
	set_cwnd(tp, w);
	count(CC_IW);
}

/* ---- growth: CUBIC and HyStart++ ----------------------------------- */

/* CUBIC's clock, ms: tcp_mstamp / 1000, low 32 bits (wrap-safe). */
static __always_inline __u32 now_ms(const struct tcp_sock *tp)
{
	return (__u32)(tp->tcp_mstamp / 1000);
}

/* The initial slow start is over: CUBIC takes the words over. */
static __always_inline void hystart_end(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);

	if (!ca->hystart)
		return;
	ca->hystart = 0;
	__builtin_memset(&ca->cu, 0, sizeof(ca->cu));
	ca->cu.cwnd_prior = tp_of(sk)->snd_cwnd;
}

/* A round ended during the initial slow start. */
static __always_inline void hystart_round(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);

	if (cp_hystart_round(&ca->hs) != CP_HS_EXIT)
		return;
	tp->snd_ssthresh = tp->snd_cwnd;
	count(CC_HYSTART_EXIT);
	hystart_end(sk);
}

/* An ACK's RTT sample (us, <= 0: none) during the initial slow start. */
static __always_inline void hystart_rtt(struct sock *sk, __s32 rtt_us)
{
	struct cocktail *ca = ca_of(sk);

	if (rtt_us <= 0)
		return;
	switch (cp_hystart_rtt(&ca->hs, rtt_us)) {
	case CP_HS_CSS:
		count(CC_HYSTART_CSS);
		break;
	case CP_HS_RESUME:
		count(CC_HYSTART_RESUME);
		break;
	default:
		break;
	}
}

/* growth=cubic on an ACK that may grow the window. */
static __always_inline void cubic_grow(struct sock *sk, __u32 acked)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u32 cwnd, w, cnt;

	if (in_slow_start(tp)) {
		if (ca->hystart)
			acked = cp_hystart_grow(&ca->hs, acked);
		acked = acked ? tcp_slow_start(tp, acked) : 0;
		if (!acked)
			return;
	}
	hystart_end(sk);
	cwnd = tp->snd_cwnd;
	w = cp_cubic_ack(&ca->cu, cwnd, acked, now_ms(tp),
			 srtt_us(tp) / 1000, &cnt);
	if (w > cwnd)
		set_cwnd(tp, w);
	else if (cnt)
		tcp_cong_avoid_ai(tp, cnt, acked);
}

/* The window did not grow for this ACK: the epoch ends. */
static __always_inline void cubic_hold(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);

	if (ca->cubic && !ca->hystart)
		ca->cu.w_est = 0;
}

/* The first transmit after @idle jiffies: idle earns CUBIC no growth. */
static __always_inline void cubic_idle(struct sock *sk, __u32 idle,
				       bool restart)
{
	struct cocktail *ca = ca_of(sk);

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
		ca->cu.t0_ms += (__u32)((__u64)idle * 1000 / hz());
}

/* ---- pacing -------------------------------------------------------- */

/* A rate in B/s as kept in struct cocktail: saturated at 2^32 - 1. */
static __always_inline __u32 rate32(__u64 rate)
{
	return rate >= COCKTAIL_RATE32_MAX ? COCKTAIL_RATE32_MAX : rate;
}

/* ... and back: the saturated value is ~0, no cap. */
static __always_inline __u64 rate_ul(__u32 rate)
{
	return rate == COCKTAIL_RATE32_MAX ? ~0ULL : rate;
}

static __always_inline int set_max_pacing_rate(struct sock *sk, __u64 rate)
{
	int val = rate == ~0ULL ? -1 :
		  (int)(rate > COCKTAIL_RATE_MAX_BPF ? COCKTAIL_RATE_MAX_BPF : rate);

	return bpf_setsockopt(sk, COCKTAIL_SOL_SOCKET,
			      COCKTAIL_SO_MAX_PACING_RATE, &val, sizeof(val));
}

/*
 * End the paced flight.  @may_setsockopt is false in release(), where the
 * kernel refuses bpf_setsockopt(): the cap stays (see the header).
 */
static __always_inline void pace_stop(struct sock *sk, enum cocktail_counter why,
				      __u32 reason, bool may_setsockopt)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	struct cocktail_event *e;
	__u64 cur;

	if (!ca->pacing)
		return;
	ca->pacing = 0;
	count(why);
	e = event_new(sk, CEV_PACE_END);
	if (e) {
		e->reason = reason;
		e->segs = (__u16)(tp->data_segs_out - ca->pace_start_segs);
		e->duration_us = (__u32)tp->tcp_mstamp - ca->pace_start_us;
		e->pacing_rate = ca->pace_rate;
		bpf_ringbuf_submit(e, 0);
	}

	/*
	 * Put back the cap only if it is still the one the flight set: an
	 * application that set SO_MAX_PACING_RATE meanwhile wins, and if it
	 * set ~0 (no cap) it asked for no pacing, so the status goes back.
	 */
	cur = sk->sk_max_pacing_rate;
	if (cur == ca->pace_rate) {
		if (may_setsockopt)
			set_max_pacing_rate(sk, rate_ul(ca->pace_prev_max));
		sk->sk_pacing_rate = rate_ul(ca->pace_prev_rate);
	} else if (cur != ~0UL) {
		return;
	}
	if (ca->pace_prev_status == SK_PACING_NONE &&
	    sk->sk_pacing_status == SK_PACING_NEEDED)
		sk->sk_pacing_status = SK_PACING_NONE;
}

/* Pace everything sent from now until the first ACK for it at @rate B/s. */
static __always_inline void pace_start(struct sock *sk, __u64 rate)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);

	pace_stop(sk, CC_PACE_ENDED_OTHER, CPE_NEW, true);
	ca->pace_prev_status = sk->sk_pacing_status;
	ca->pace_prev_rate = rate32(sk->sk_pacing_rate);
	ca->pace_prev_max = rate32(sk->sk_max_pacing_rate);
	if (rate > COCKTAIL_RATE_MAX_BPF)
		rate = COCKTAIL_RATE_MAX_BPF;
	ca->pace_rate = rate;
	ca->pace_end_seq = tp->snd_nxt;
	ca->pace_start_us = (__u32)tp->tcp_mstamp;
	ca->pace_start_segs = tp->data_segs_out;
	/* Sets the cap, lowers sk_pacing_rate to it, and asks for pacing. */
	if (set_max_pacing_rate(sk, rate))
		return;
	ca->pacing = 1;
	sk->sk_pacing_rate = rate;
}

/* ---- measured restart ---------------------------------------------- */

/* The filters age when a sample arrives (tcp_cocktail.c says why). */
static __always_inline void age_filters(struct cocktail *ca)
{
	cp_maxwin_update(&ca->bw, ca->round, COCKTAIL_BW_ROUNDS, 0);
	cp_maxwin_update(&ca->cap, ca->round, COCKTAIL_BW_ROUNDS, 0);
}

/* The pre-idle rate a restart paces at, in B/s; 0 without any rate. */
static __always_inline __u64 restart_rate(struct sock *sk, __u32 cwnd)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u64 cap = sk->sk_max_pacing_rate;

	if (cap > COCKTAIL_RATE_MAX_BPF)
		cap = COCKTAIL_RATE_MAX_BPF;
	age_filters(ca);
	return cp_pace_rate(cp_maxwin_get(&ca->bw), cwnd, tp->mss_cache,
			    srtt_us(tp), cap, (enum cp_pace_rate)pace_rate);
}

/* The ACK train's rate in B/s, 0 while too few segments tell it. */
static __always_inline __u64 train_rate(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u32 segs = tp->delivered - ca->train_delivered;

	if (ca->mstate != CM_CHECK || segs < CP_CHECK_MIN_SEGS)
		return 0;
	return cp_rate(segs, tp->mss_cache,
		       (__u32)tp->tcp_mstamp - ca->train_us, CP_U64_MAX);
}

/* The check of a measured restart reached @verdict; returns the window. */
static __always_inline __u32 check_end(struct sock *sk, enum cp_check verdict)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u32 min_rtt = path_rtt_us(tp);
	__u64 ack_rate = train_rate(sk);
	__u32 segs = ca->mstate == CM_CHECK ?
		     tp->delivered - ca->train_delivered : 0;
	__u64 rate = ca->pace_rate;
	__u32 cwnd = tp->snd_cwnd;
	struct cocktail_event *e;
	__u32 bdp;

	if (verdict == CP_CHECK_FULL) {
		if (tp->packets_out)
			cwnd = cp_min(cwnd, packets_in_flight(tp) +
					    CP_MEASURE_EXTRA_SEGS);
	} else {
		rate = cp_exit_rate(verdict, ca->pace_rate, ack_rate,
				    srtt_us(tp), min_rtt);
		bdp = cp_bdp_segs(rate, min_rtt, tp->mss_cache);
		cwnd = cp_max(bdp, CP_SSTHRESH_MIN);
		if (verdict != CP_CHECK_LOSS)
			tp->snd_ssthresh = cwnd;
	}
	if (verdict != CP_CHECK_LOSS)
		set_cwnd(tp, cwnd);
	ca->mstate = CM_NONE;
	ca->misses = cp_measure_misses(ca->misses, verdict);
	count(cocktail_check_counter(verdict));
	e = event_new(sk, CEV_CHECK);
	if (e) {
		e->verdict = verdict;
		e->segs = segs;
		e->duration_us = (__u32)tp->tcp_mstamp - ca->train_us;
		e->pacing_rate = ca->pace_rate;
		e->ack_rate = ack_rate;
		e->srtt_us = srtt_us(tp);
		e->path_rtt_us = min_rtt;
		e->cwnd_after = tp->snd_cwnd;
		e->ssthresh = tp->snd_ssthresh;
		e->misses = ca->misses;
		bpf_ringbuf_submit(e, 0);
	}
	pace_stop(sk, verdict == CP_CHECK_LOSS ?
		  CC_PACE_ENDED_LOSS : CC_PACE_ENDED, CPE_CHECK + verdict, true);
	return cwnd;
}

/* Every ACK while a measured flight is out (.pkts_acked). */
static __always_inline void check_ack(struct sock *sk, __s32 rtt_us)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	enum cp_check verdict;

	if (ca->mstate == CM_FLIGHT) {
		ca->mstate = CM_CHECK;
		ca->train_us = (__u32)tp->tcp_mstamp;
		ca->train_delivered = tp->delivered;
		ca->pace_end_seq = tp->snd_nxt;
	}
	if (!tp->packets_out) {
		check_end(sk, CP_CHECK_FULL);
		return;
	}
	verdict = cp_check_ack(rtt_us > 0 ? rtt_us : 0, path_rtt_us(tp),
			       check_rtt_pct,
			       tp->delivered - ca->train_delivered,
			       (__u32)tp->tcp_mstamp - ca->train_us,
			       tp->mss_cache, ca->pace_rate, check_rate_pct);
	if (verdict == CP_CHECK_GOING && !cp_before(tp->snd_una,
						    ca->pace_end_seq))
		verdict = CP_CHECK_FULL;
	if (verdict != CP_CHECK_GOING)
		check_end(sk, verdict);
}

/* ACK trains and Hoe's estimate (tcp_cocktail.c says how). */
static __always_inline void train_ack(struct sock *sk, __u32 acked)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u32 now = (__u32)tp->tcp_mstamp, prev = (__u32)tp->delivered_mstamp;
	__u32 segs, span, est;
	__u64 rate;

	if (!acked)
		return;
	segs = tp->delivered - acked - ca->train_delivered;
	span = prev - ca->train_us;
	if (ca->train == CT_TRAIN &&
	    !cp_after(tp->snd_una, ca->round_end_seq) &&
	    !cp_train_breaks(segs, span, acked, now - prev))
		return;
	/* The train ended at the previous ACK; this one starts the next. */
	if (ca->train == CT_TRAIN && span) {
		rate = cp_rate(segs, tp->mss_cache, span, CP_U64_MAX);
		if (segs >= CP_TRAIN_MIN_SEGS &&
		    cp_train_plausible(rate, span, cp_maxwin_get(&ca->bw),
				       path_rtt_us(tp)))
			cp_maxwin_update(&ca->cap, ca->round,
					 COCKTAIL_BW_ROUNDS, rate);
		if (ca->hoe && segs >= CP_HOE_MIN_SEGS) {
			ca->hoe = 0;
			est = cp_hoe_ssthresh(segs, span, tp->mss_cache,
					      path_rtt_us(tp));
			if (est && in_initial_slowstart(tp) &&
			    ca_state(sk) == TCP_CA_Open) {
				tp->snd_ssthresh = cp_min(est,
							  tp->snd_cwnd_clamp);
				count(CC_SSTHRESH_EST);
			}
		}
	}
	ca->train = CT_TRAIN;
	ca->train_us = now;
	ca->train_delivered = tp->delivered;
}

/* restart=measure: size, pace and check the flight; 0: fell back to ssr. */
static __always_inline __u64 measure_restart(struct sock *sk, __u32 before,
					     __u32 *cwnd)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u32 floor = cp_restart_ssr(before, iw_now(sk));
	__u64 cap = sk->sk_max_pacing_rate;
	__u64 rate;
	__u32 bdp;

	if (cap > COCKTAIL_RATE_MAX_BPF)
		cap = COCKTAIL_RATE_MAX_BPF;
	rate = cp_path_rate(restart_rate(sk, before), cp_maxwin_get(&ca->cap),
			    cap);
	bdp = cp_bdp_segs(rate, path_rtt_us(tp), tp->mss_cache);
	if (!bdp) {
		count(CC_MEASURE_NO_RATE);
		*cwnd = floor;
		return 0;
	}
	*cwnd = cp_measure_cwnd(bdp, ca->misses, floor);
	pace_start(sk, rate);
	if (!ca->pacing) {
		count(CC_MEASURE_NO_RATE);
		*cwnd = floor;
		return 0;
	}
	ca->mstate = CM_FLIGHT;
	return rate;
}

/* ---- restart after idle -------------------------------------------- */

static __always_inline void snapshot(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);

	/* Keep the first snapshot: a second restart would see the cut cwnd. */
	if (ca->snap_valid)
		return;
	/* Nothing in flight: a train still open ends (its words are reused). */
	if (ca->mstate)
		check_end(sk, CP_CHECK_FULL);
	ca->train = CT_WAIT;
	ca->hoe = 0;
	ca->snap_cwnd = tp->snd_cwnd;
	ca->snap_ssthresh = tp->snd_ssthresh;
	ca->snap_valid = 1;
}

static __always_inline __u32 restart_ssthresh(struct sock *sk,
					      enum cp_policy policy,
					      __u32 ssthresh, __u32 cwnd)
{
	/* tcp_current_ssthresh(): in CWR or Recovery ssthresh stays. */
	if ((1 << ca_state(sk)) & ((1 << TCP_CA_CWR) | (1 << TCP_CA_Recovery)))
		return ssthresh;
	return cp_restart_ssthresh(policy, ssthresh, cwnd);
}

static __always_inline __u64 pace_restart(struct sock *sk, __u32 cwnd)
{
	struct cocktail *ca = ca_of(sk);
	__u64 rate = restart_rate(sk, cwnd);

	if (!rate) {
		count(CC_PACE_NO_RATE);
		return 0;
	}
	pace_start(sk, rate);
	return ca->pacing ? rate : 0;
}

static __always_inline void restart_apply(struct sock *sk, __u32 idle)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u32 rto = icsk_of(sk)->icsk_rto;
	__u32 srtt = srtt_us(tp);
	enum cp_policy req = (enum cp_policy)restart;
	struct cocktail_event *e;
	__u32 before, ssthresh, after;
	enum cp_policy pol;
	__u64 rate = 0;

	/* queue needs the raw min RTT: ~0U says there is no sample. */
	pol = cp_resolve_policy(req, srtt, min_rtt_us(tp), auto_rtt_us,
				queue_pct);
	before = ca->snap_valid ? ca->snap_cwnd : tp->snd_cwnd;
	ssthresh = ca->snap_valid ? ca->snap_ssthresh : tp->snd_ssthresh;

	after = cp_restart_cwnd(pol, before, iw_now(sk), idle, rto);
	if (pol == CP_MEASURE) {
		rate = measure_restart(sk, before, &after);
		/* Without a rate measure acted as ssr: so does ssthresh. */
		if (!rate)
			ssthresh = restart_ssthresh(sk, CP_SSR, ssthresh,
						    before);
	} else {
		ssthresh = restart_ssthresh(sk, pol, ssthresh, before);
	}
	tp->snd_ssthresh = ssthresh;
	set_cwnd(tp, after);
	ca->cwv_stamp = jiffies32();
	if (pol == CP_PACE)
		rate = pace_restart(sk, before);

	count(cocktail_policy_counter(pol));
	count(CC_IDLE_RTO_1 + cp_idle_bucket(idle, rto));
	if (req == CP_AUTO)
		count(pol == CP_SSR ? CC_AUTO_SSR : CC_AUTO_PACE);
	else if (req == CP_QUEUE)
		count(pol == CP_SSR ? CC_QUEUE_SSR : CC_QUEUE_PACE);

	e = event_new(sk, CEV_RESTART);
	if (!e)
		return;
	e->requested = req;
	e->policy = pol;
	e->idle_us = jiffies_to_us(idle);
	e->rto_us = jiffies_to_us(rto);
	e->srtt_us = srtt;
	e->path_rtt_us = path_rtt_us(tp);
	e->cwnd_before = before;
	e->cwnd_after = tp->snd_cwnd;
	e->ssthresh = tp->snd_ssthresh;
	e->pacing_rate = rate;
	bpf_ringbuf_submit(e, 0);
}

/* The kernel restarted although idle <= RTO: put the window back. */
static __always_inline void restart_undo(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);

	set_cwnd(tp, ca->snap_cwnd);
	tp->snd_ssthresh = ca->snap_ssthresh;
	count(CC_SHORT_IDLE);
}

/* First data segment of the connection. */
static __always_inline void first_flight(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u64 cap = sk->sk_max_pacing_rate;
	__u64 rate;

	if (ca->iw_pending) {
		ca->iw_pending = 0;
		set_iw(sk);
	}
	if (ssthresh_est && in_initial_slowstart(tp))
		ca->hoe = 1;
	if (!pace_iw)
		return;
	if (cap > COCKTAIL_RATE_MAX_BPF)
		cap = COCKTAIL_RATE_MAX_BPF;
	rate = cp_rate(tp->snd_cwnd, tp->mss_cache, srtt_us(tp), cap);
	if (!rate)
		return;
	pace_start(sk, rate);
	if (ca->pacing)
		count(CC_PACE_IW);
}

/* First transmit after the connection was idle (nothing outstanding). */
static __always_inline void idle_restart(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u32 idle = cp_elapsed(jiffies32(), tp->lsndtime);
	bool restart = cp_idle_exceeds_rto(idle, icsk_of(sk)->icsk_rto);

	if (restart)
		restart_apply(sk, idle);
	else if (ca->snap_valid)
		restart_undo(sk);
	cubic_idle(sk, idle, restart);
}

/* CA_EVENT_TX_START: first transmit with nothing in flight. */
static __always_inline void tx_start(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);

	if (!tp->data_segs_out)
		first_flight(sk);
	else if (!tp->packets_out)
		idle_restart(sk);
	ca->snap_valid = 0;
}

/* ---- per-ACK bookkeeping ------------------------------------------- */

/* A round ends when snd_una passes the snd_nxt of the round's start. */
static __always_inline void update_round(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u32 d;

	if (!cp_after(tp->snd_una, ca->round_end_seq) ||
	    tp->delivered == ca->round_delivered)
		return;
	ca->round++;
	ca->round_end_seq = tp->snd_nxt;
	ca->pipeack[1] = ca->pipeack[0];
	d = tp->delivered - ca->round_delivered;
	ca->pipeack[0] = d > 0xffff ? 0xffff : d;
	ca->round_delivered = tp->delivered;
	if (ca->hystart)
		hystart_round(sk);
}

/* Feed the kernel's saved rate sample, once, into the windowed max. */
static __always_inline void sample_bw(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u32 sig = cp_sample_sig(tp->rate_delivered, tp->rate_interval_us);
	__u64 bw;

	if (sig == ca->bw_sig)
		return;
	ca->bw_sig = sig;
	bw = cp_rate(tp->rate_delivered, tp->mss_cache, tp->rate_interval_us,
		     CP_U64_MAX);
	if (!bw || (BPF_CORE_READ_BITFIELD(tp, rate_app_limited) &&
		    bw < cp_maxwin_get(&ca->bw)))
		return;
	cp_maxwin_update(&ca->bw, ca->round, COCKTAIL_BW_ROUNDS, bw);
}

static __always_inline bool app_limited_decay_ok(struct sock *sk)
{
	struct socket *so;

	if (ca_state(sk) != TCP_CA_Open)
		return false;
	so = sk->sk_socket;
	if (!so)
		return true;
	/* Limited by the send buffer, not by the application. */
	return !(BPF_CORE_READ(so, flags) & (1UL << COCKTAIL_SOCK_NOSPACE));
}

/* cwv=1: RFC 2861 decay after one RTO of application-limited sending. */
static __always_inline void cwv_2861(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u32 now = jiffies32();
	__u32 cwnd, used;

	if (is_cwnd_limited(sk)) {
		ca->cwv_stamp = now;
		return;
	}
	if (cp_elapsed(now, ca->cwv_stamp) < icsk_of(sk)->icsk_rto)
		return;
	ca->cwv_stamp = now;
	if (!app_limited_decay_ok(sk))
		return;
	cwnd = tp->snd_cwnd;
	used = cp_cwv2861_decay(cwnd, tp->snd_cwnd_used, iw_now(sk));
	if (used < cwnd) {
		tp->snd_ssthresh = cp_current_ssthresh(tp->snd_ssthresh, cwnd);
		set_cwnd(tp, used);
		count(CC_CWV_DECAY);
	}
}

/* cwv=2: RFC 7661 validated / non-validated period. */
static __always_inline void cwv_7661(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u32 pipeack = cp_max(ca->pipeack[0], ca->pipeack[1]);
	__u32 cwnd = tp->snd_cwnd;
	__u32 now = jiffies32();

	if (pipeack == 0xffff || cp_cwv7661_validated(pipeack, cwnd)) {
		ca->nvp = 0;
		return;
	}
	if (!ca->nvp) {
		ca->nvp = 1;
		ca->nvp_stamp = now;
		return;
	}
	if (cp_elapsed(now, ca->nvp_stamp) < nvp_s * hz())
		return;
	ca->nvp_stamp = now;
	if (!app_limited_decay_ok(sk))
		return;
	tp->snd_ssthresh = cp_cwv7661_nvp_ssthresh(tp->snd_ssthresh, cwnd);
	set_cwnd(tp, cp_cwv7661_nvp_cwnd(cwnd, iw_now(sk)));
	count(CC_CWV_NVP_END);
}

static __always_inline bool may_grow(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	__u32 mode = cwv;

	if (mode == CP_CWV_OFF)
		return true;
	if (mode == CP_CWV_7661 && ca->nvp)
		return false;
	return is_cwnd_limited(sk);
}

/* ---- tcp_congestion_ops -------------------------------------------- */

SEC("struct_ops/cocktail_init")
void BPF_PROG(cocktail_init, struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	ca->round_end_seq = tp->snd_nxt;
	ca->round_delivered = tp->delivered;
	ca->cwv_stamp = jiffies32();
	ca->pace_prev_status = SK_PACING_NONE;
	cp_maxwin_reset(&ca->bw, 0);
	cp_maxwin_reset(&ca->cap, 0);
	if (growth == CP_GROWTH_CUBIC) {
		ca->cubic = 1;
		/* HyStart++ is for the initial slow start only (RFC 9406) */
		ca->hystart = in_initial_slowstart(tp);
		if (ca->hystart)
			cp_hystart_init(&ca->hs);
	}

	/* Switched to cocktail_bpf on a running connection: keep its window. */
	if (BPF_CORE_READ_BITFIELD(icsk_of(sk), icsk_ca_initialized))
		return;
	/* Before the handshake tcp_init_transfer() will reset cwnd later. */
	if (sk->__sk_common.skc_state == TCP_SYN_SENT)
		ca->iw_pending = 1;
	else
		set_iw(sk);
}

SEC("struct_ops/cocktail_release")
void BPF_PROG(cocktail_release, struct sock *sk)
{
	pace_stop(sk, CC_PACE_ENDED_OTHER, CPE_RELEASE, false);
}

/* Loss, RTO or ECN: Reno's or CUBIC's ssthresh, or the check's verdict. */
SEC("struct_ops/cocktail_ssthresh")
__u32 BPF_PROG(cocktail_ssthresh, struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	__u32 base;

	ca->hoe = 0;
	if (ca->cubic) {
		hystart_end(sk);
		base = cp_cubic_loss(&ca->cu, tp_of(sk)->snd_cwnd);
	} else {
		base = tcp_reno_ssthresh(sk);
	}
	if (!ca->mstate)
		return base;
	return cp_max(cp_min(base, check_end(sk, CP_CHECK_LOSS)),
		      CP_SSTHRESH_MIN);
}

/* A spurious reduction undone: CUBIC takes back its W_max too. */
SEC("struct_ops/cocktail_undo_cwnd")
__u32 BPF_PROG(cocktail_undo_cwnd, struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);

	if (ca->cubic && !ca->hystart) {
		ca->cu.w_max = cp_max(ca->cu.w_max, ca->cu.cwnd_prior);
		ca->cu.w_est = 0;
	}
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops/cocktail_cong_avoid")
void BPF_PROG(cocktail_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);

	sample_bw(sk);
	/* A measured flight's window is the check's to set. */
	if (ca->mstate || !may_grow(sk)) {
		cubic_hold(sk);
		return;
	}
	if (ca->cubic) {
		cubic_grow(sk, acked);
		return;
	}
	if (in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
}

SEC("struct_ops/cocktail_pkts_acked")
void BPF_PROG(cocktail_pkts_acked, struct sock *sk,
	      const struct ack_sample *sample)
{
	struct cocktail *ca = ca_of(sk);
	__s32 rtt_us = sample->rtt_us;

	if (ca->hystart)
		hystart_rtt(sk, rtt_us);
	if (ca->mstate)
		check_ack(sk, rtt_us);
	else
		train_ack(sk, sample->pkts_acked);
}

SEC("struct_ops/cocktail_in_ack_event")
void BPF_PROG(cocktail_in_ack_event, struct sock *sk, __u32 flags)
{
	struct cocktail *ca = ca_of(sk);
	__u32 mode = cwv;

	/* The first ACK for the paced flight: back to ACK clocking. */
	if (ca->pacing && !ca->mstate &&
	    cp_after(tp_of(sk)->snd_una, ca->pace_end_seq))
		pace_stop(sk, CC_PACE_ENDED, CPE_ACK, true);
	/* .cong_avoid is not called in CWR or Recovery: catch those here. */
	sample_bw(sk);
	update_round(sk);
	if (mode == CP_CWV_2861)
		cwv_2861(sk);
	else if (mode == CP_CWV_7661)
		cwv_7661(sk);
}

SEC("struct_ops/cocktail_cwnd_event")
void BPF_PROG(cocktail_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct cocktail *ca = ca_of(sk);

	switch (ev) {
	case CA_EVENT_CWND_RESTART:
		snapshot(sk);
		break;
	case CA_EVENT_TX_START:
		tx_start(sk);
		break;
	case CA_EVENT_LOSS:
		/* RTO: the first epoch after it starts on its plateau. */
		if (ca->cubic && !ca->hystart)
			ca->cu.w_max = 0;
		ca->snap_valid = 0;
		pace_stop(sk, CC_PACE_ENDED_LOSS, CPE_LOSS, true);
		break;
	default:
		break;
	}
}

SEC(".struct_ops")
struct tcp_congestion_ops cocktail_bpf = {
	.init		= (void *)cocktail_init,
	.release	= (void *)cocktail_release,
	.ssthresh	= (void *)cocktail_ssthresh,
	.undo_cwnd	= (void *)cocktail_undo_cwnd,
	.cong_avoid	= (void *)cocktail_cong_avoid,
	.pkts_acked	= (void *)cocktail_pkts_acked,
	.cwnd_event	= (void *)cocktail_cwnd_event,
	.in_ack_event	= (void *)cocktail_in_ack_event,
	.name		= COCKTAIL_BPF_NAME,
};
