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
 *   keeps it out by refreshing the stamp.
 * - The NewReno steps are kfuncs (tcp_slow_start, tcp_cong_avoid_ai,
 *   tcp_reno_ssthresh, tcp_reno_undo_cwnd); PRR is the kernel's, as for
 *   the module, because neither uses .cong_control.
 * - Events go to a ring buffer (the tool prints them) instead of the
 *   module's tracepoints; counters are global data instead of the stats
 *   parameter; parameters are global data the tool writes.
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
#include "cocktail_bpf.h"

char _license[] SEC("license") = "GPL";

/* Round trips a rate sample stays in the windowed max: the module's. */
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
__u32 cwv = CP_CWV_2861;
__u32 pace_iw SEC(".data") = 0;
__u32 pace_rate = CP_RATE_MAX;

/*
 * Counters (enum cocktail_counter), read by the tool; 32 slots so that
 * masking an index with 31 proves it in bounds to the verifier.
 */
#define COCKTAIL_COUNTER_SLOTS	32
_Static_assert(CC_NR <= COCKTAIL_COUNTER_SLOTS, "counter slots");
__u64 counters[COCKTAIL_COUNTER_SLOTS];

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* Per-connection state, in icsk_ca_priv (104 bytes on 6.1). */
struct cocktail {
	struct cp_maxwin bw;		/* windowed max delivery rate, B/s */
	__u64 pace_prev_rate;		/* B/s: sk_pacing_rate before pacing */
	__u64 pace_prev_max;		/* B/s: sk_max_pacing_rate before */
	__u64 pace_rate;		/* B/s: rate of the paced flight */
	__u32 round;			/* round trips counted on ACKs */
	__u32 round_end_seq;		/* seq: snd_nxt when this round began */
	__u32 round_delivered;		/* segs: tp->delivered when it began */
	__u32 pipeack[2];		/* segs delivered in the last 2 rounds */
	__u32 snap_cwnd;		/* segs: cwnd at CA_EVENT_CWND_RESTART */
	__u32 snap_ssthresh;		/* segs: ssthresh at the same moment */
	__u32 pace_end_seq;		/* seq: pacing ends when snd_una passes */
	__u32 pace_start_us;		/* us: low 32 bits of tcp_mstamp */
	__u32 pace_start_segs;		/* segs: data_segs_out at the start */
	__u32 cwv_stamp;		/* jiffies: last cwnd-limited or decay */
	__u32 nvp_stamp;		/* jiffies: RFC 7661 NVP start */
	__u8 snap_valid;		/* snap_* hold the kernel's pre-cut */
	__u8 pacing;			/* a paced flight is in progress */
	__u8 nvp;			/* cwv=2: in a non-validated period */
	__u8 iw_pending;		/* apply iw at the first data segment */
	__u8 pace_prev_status;		/* sk_pacing_status before pacing */
};

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

static __always_inline __u32 jiffies32(void)
{
	return (__u32)bpf_jiffies64();
}

static __always_inline __u64 jiffies_to_us(__u64 j)
{
	__u32 hz = CONFIG_HZ ? CONFIG_HZ : 250;

	return j * CP_USEC_PER_SEC / hz;
}

static __always_inline __u32 srtt_us(const struct tcp_sock *tp)
{
	return tp->srtt_us >> 3;
}

static __always_inline __u32 min_rtt_us(const struct tcp_sock *tp)
{
	return tp->rtt_min.s[0].v;
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

/* ---- pacing -------------------------------------------------------- */

static __always_inline int set_max_pacing_rate(struct sock *sk, __u64 rate)
{
	int val = rate == ~0ULL ? -1 :
		  (int)(rate > COCKTAIL_RATE_MAX_BPF ? COCKTAIL_RATE_MAX_BPF : rate);

	return bpf_setsockopt(sk, COCKTAIL_SOL_SOCKET,
			      COCKTAIL_SO_MAX_PACING_RATE, &val, sizeof(val));
}

static __always_inline void pace_event(struct sock *sk, struct cocktail *ca,
				       __u32 reason)
{
	struct tcp_sock *tp = tp_of(sk);
	struct cocktail_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	e->type = CEV_PACE_END;
	e->sport = sk->__sk_common.skc_num;
	e->dport = bpf_ntohs(sk->__sk_common.skc_dport);
	e->reason = reason;
	e->segs = tp->data_segs_out - ca->pace_start_segs;
	e->duration_us = (__u32)tp->tcp_mstamp - ca->pace_start_us;
	e->pacing_rate = ca->pace_rate;
	bpf_ringbuf_submit(e, 0);
}

/*
 * End the paced flight.  @may_setsockopt is false in release(), where the
 * kernel refuses bpf_setsockopt(): the cap stays (see the header).
 */
static __always_inline void pace_stop(struct sock *sk, enum cocktail_counter why,
				      __u32 reason, bool may_setsockopt)
{
	struct cocktail *ca = ca_of(sk);
	__u64 cur;

	if (!ca->pacing)
		return;
	ca->pacing = 0;
	count(why);
	pace_event(sk, ca, reason);

	/*
	 * Put back the cap only if it is still the one the flight set: an
	 * application that set SO_MAX_PACING_RATE meanwhile wins, and if it
	 * set ~0 (no cap) it asked for no pacing, so the status goes back.
	 * The socket is locked here; bpf_setsockopt() writes under it too.
	 */
	cur = sk->sk_max_pacing_rate;
	if (cur == ca->pace_rate) {
		if (may_setsockopt)
			set_max_pacing_rate(sk, ca->pace_prev_max);
		sk->sk_pacing_rate = ca->pace_prev_rate;
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
	if (rate > COCKTAIL_RATE_MAX_BPF)
		rate = COCKTAIL_RATE_MAX_BPF;
	ca->pace_prev_status = sk->sk_pacing_status;
	ca->pace_prev_rate = sk->sk_pacing_rate;
	ca->pace_prev_max = sk->sk_max_pacing_rate;
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

/* ---- restart after idle -------------------------------------------- */

static __always_inline void snapshot(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);

	/* Keep the first snapshot: a second restart would see the cut cwnd. */
	if (ca->snap_valid)
		return;
	ca->snap_cwnd = tp->snd_cwnd;
	ca->snap_ssthresh = tp->snd_ssthresh;
	ca->snap_valid = 1;
}

static __always_inline __u64 pace_restart(struct sock *sk, __u32 cwnd)
{
	struct tcp_sock *tp = tp_of(sk);
	struct cocktail *ca = ca_of(sk);
	__u64 cap = sk->sk_max_pacing_rate;
	__u64 rate;

	if (cap > COCKTAIL_RATE_MAX_BPF)
		cap = COCKTAIL_RATE_MAX_BPF;
	rate = cp_pace_rate(cp_maxwin_get(&ca->bw), cwnd, tp->mss_cache,
			    srtt_us(tp), cap, (enum cp_pace_rate)pace_rate);
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
	__u32 min_rtt = min_rtt_us(tp);
	__u32 path_rtt = cp_path_rtt_us(min_rtt, srtt);
	enum cp_policy req = (enum cp_policy)restart;
	enum cp_policy pol;
	__u32 before, ssthresh, after;
	struct cocktail_event *e;
	__u64 rate = 0;

	pol = cp_resolve_policy(req, srtt, min_rtt, auto_rtt_us, queue_pct);
	before = ca->snap_valid ? ca->snap_cwnd : tp->snd_cwnd;
	ssthresh = ca->snap_valid ? ca->snap_ssthresh : tp->snd_ssthresh;

	after = cp_restart_cwnd(pol, before, iw_now(sk), idle, rto);
	/* tcp_current_ssthresh(): in CWR or Recovery ssthresh stays. */
	if ((1 << ca_state(sk)) & ((1 << TCP_CA_CWR) | (1 << TCP_CA_Recovery)))
		tp->snd_ssthresh = ssthresh;
	else
		tp->snd_ssthresh = cp_restart_ssthresh(pol, ssthresh, before);
	set_cwnd(tp, after);
	ca->cwv_stamp = jiffies32();
	if (pol == CP_PACE)
		rate = pace_restart(sk, before);

	count((enum cocktail_counter)pol);
	if (req == CP_AUTO)
		count(pol == CP_SSR ? CC_AUTO_SSR : CC_AUTO_PACE);
	else if (req == CP_QUEUE)
		count(pol == CP_SSR ? CC_QUEUE_SSR : CC_QUEUE_PACE);

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	e->type = CEV_RESTART;
	e->sport = sk->__sk_common.skc_num;
	e->dport = bpf_ntohs(sk->__sk_common.skc_dport);
	e->requested = req;
	e->policy = pol;
	e->idle_us = jiffies_to_us(idle);
	e->rto_us = jiffies_to_us(rto);
	e->srtt_us = srtt;
	e->path_rtt_us = path_rtt;
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

/* CA_EVENT_TX_START: first transmit with nothing in flight. */
static __always_inline void tx_start(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);

	if (!tp->data_segs_out) {
		first_flight(sk);
	} else if (!tp->packets_out) {
		__u32 idle = cp_elapsed(jiffies32(), tp->lsndtime);

		if (cp_idle_exceeds_rto(idle, icsk_of(sk)->icsk_rto))
			restart_apply(sk, idle);
		else if (ca->snap_valid)
			restart_undo(sk);
	}
	ca->snap_valid = 0;
}

/* ---- per-ACK bookkeeping ------------------------------------------- */

static __always_inline void update_round(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);

	if (!cp_after(tp->snd_una, ca->round_end_seq))
		return;
	ca->round++;
	ca->round_end_seq = tp->snd_nxt;
	ca->pipeack[1] = ca->pipeack[0];
	ca->pipeack[0] = tp->delivered - ca->round_delivered;
	ca->round_delivered = tp->delivered;
}

static __always_inline void sample_bw(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u64 bw;

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

static __always_inline void cwv_7661(struct sock *sk)
{
	struct cocktail *ca = ca_of(sk);
	struct tcp_sock *tp = tp_of(sk);
	__u32 pipeack = cp_max(ca->pipeack[0], ca->pipeack[1]);
	__u32 cwnd = tp->snd_cwnd;
	__u32 now = jiffies32();
	__u32 hz = CONFIG_HZ ? CONFIG_HZ : 250;

	if (cp_cwv7661_validated(pipeack, cwnd)) {
		ca->nvp = 0;
		return;
	}
	if (!ca->nvp) {
		ca->nvp = 1;
		ca->nvp_stamp = now;
		return;
	}
	if (cp_elapsed(now, ca->nvp_stamp) < CP_NVP_SECONDS * hz)
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

SEC("struct_ops/cocktail_ssthresh")
__u32 BPF_PROG(cocktail_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops/cocktail_undo_cwnd")
__u32 BPF_PROG(cocktail_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops/cocktail_cong_avoid")
void BPF_PROG(cocktail_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tp_of(sk);

	sample_bw(sk);
	if (!may_grow(sk))
		return;
	if (in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
}

SEC("struct_ops/cocktail_in_ack_event")
void BPF_PROG(cocktail_in_ack_event, struct sock *sk, __u32 flags)
{
	struct cocktail *ca = ca_of(sk);
	__u32 mode = cwv;

	/* The first ACK for the paced flight: back to ACK clocking. */
	if (ca->pacing && cp_after(tp_of(sk)->snd_una, ca->pace_end_seq))
		pace_stop(sk, CC_PACE_ENDED, CPE_ACK, true);
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
	.cwnd_event	= (void *)cocktail_cwnd_event,
	.in_ack_event	= (void *)cocktail_in_ack_event,
	.name		= COCKTAIL_BPF_NAME,
};
