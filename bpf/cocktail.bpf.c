// SPDX-License-Identifier: GPL-2.0
/*
 * cocktail as a BPF struct_ops congestion control, registered as
 * "cocktail_bpf": the same algorithm as kmod/tcp_cocktail.c (read its
 * header comment for the mechanism: initial window, restart after idle,
 * window validation), for hosts that load no unsigned module.  The
 * arithmetic is kmod/cocktail_policy.h and the per-socket logic
 * kmod/cocktail_core.h, both included as they are; this file is the
 * shell around them (the shell_* functions the core calls), as
 * tcp_cocktail.c is the module's.
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
 * - The table of restarts toward one destination (ensemble) is an array
 *   map with a lock in each slot, where the module has one lock for its
 *   table: a BPF program cannot take a lock in global data.  Its clock
 *   is bpf_ktime_get_ns() / 1000, the clock of the module's tcp_clock_us().
 * - Events go to a ring buffer (the tool prints them in the format of
 *   the module's tracepoints) instead of tracepoints; counters are
 *   global data instead of the stats parameter, with the module's names
 *   (kmod/cocktail_state.h); parameters are global data the tool writes.
 * - Everything else is the module's code: the state (struct cocktail,
 *   kmod/cocktail_state.h) and every callback's logic
 *   (kmod/cocktail_core.h): restart policies, restart=measure and its
 *   check, the ACK trains and Hoe's ssthresh estimate, window
 *   validation, growth=cubic with HyStart++.
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
__u32 restart = CP_MEASURE;
__u32 auto_rtt_us = 100000;
__u32 queue_pct = 120;
__u32 growth SEC(".data") = CP_GROWTH_RENO;
__u32 pace_rate = CP_RATE_MAX;
__u32 cwv = CP_CWV_2861;
__u32 nvp_s = CP_NVP_SECONDS;
__u32 pace_iw SEC(".data") = 0;
__u32 pace_burst = 1;
__u32 ssthresh_est = 1;
__u32 check_rtt_pct = 125;
__u32 check_rate_pct = 75;
__u32 check_rate_miss SEC(".data") = 0;
__u32 probe_pct = 100;
__u32 wnd_cap = 1;
__u32 queue_room SEC(".data") = 0;
__u32 shared_burst SEC(".data") = 0;
__u32 shared_rtt SEC(".data") = 0;
__u32 pace_floor SEC(".data") = 0;
__u32 ssr_floor SEC(".data") = 0;
__u32 quiet_pct = 125;
__u32 ensemble = 1;

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

static __always_inline struct cocktail *shell_ca(struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline struct tcp_sock *shell_tp(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *icsk_of(struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline __u32 shell_hz(void)
{
	return CONFIG_HZ ? CONFIG_HZ : 250;
}

static __always_inline __u32 shell_jiffies(void)
{
	return (__u32)bpf_jiffies64();
}

static __always_inline __u64 jiffies_to_us(__u64 j)
{
	return j * CP_USEC_PER_SEC / shell_hz();
}

static __always_inline __u32 shell_srtt_us(const struct tcp_sock *tp)
{
	return tp->srtt_us >> 3;
}

/* tcp_min_rtt(): ~0U without a sample. */
static __always_inline __u32 shell_min_rtt_us(const struct tcp_sock *tp)
{
	return tp->rtt_min.s[0].v;
}

static __always_inline void shell_count(__u32 c)
{
	/* Hide what the compiler knows of c, so the mask stays. */
	barrier_var(c);
	c &= COCKTAIL_COUNTER_SLOTS - 1;
	__sync_fetch_and_add(&counters[c], 1);
}

static __always_inline __u32 shell_cwnd(const struct tcp_sock *tp)
{
	return tp->snd_cwnd;
}

static __always_inline void shell_set_cwnd(struct tcp_sock *tp, __u32 cwnd)
{
	__u32 clamp = tp->snd_cwnd_clamp;

	if (cwnd > clamp)
		cwnd = clamp;
	tp->snd_cwnd = cwnd ? cwnd : 1;
}

static __always_inline __u8 shell_ca_state(struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD(icsk_of(sk), icsk_ca_state);
}

static __always_inline bool shell_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

static __always_inline bool shell_in_initial_slowstart(const struct tcp_sock *tp)
{
	return tp->snd_ssthresh >= COCKTAIL_INFINITE_SSTHRESH;
}

/* include/net/tcp.h tcp_packets_in_flight() */
static __always_inline __u32 shell_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) +
	       tp->retrans_out;
}

/* include/net/tcp.h tcp_is_cwnd_limited() */
static __always_inline bool shell_is_cwnd_limited(struct sock *sk)
{
	struct tcp_sock *tp = shell_tp(sk);

	if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return true;
	if (shell_in_slow_start(tp))
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
	return cp_iw_segs(iw, shell_tp(sk)->mss_cache);
}

static __always_inline __u32 shell_iw_now(struct sock *sk)
{
	bool route;

	return iw_segs(sk, &route);
}

static __always_inline void shell_set_iw(struct sock *sk)
{
	struct tcp_sock *tp = shell_tp(sk);
	bool route;
	__u32 w = iw_segs(sk, &route);

	if (route) {
		shell_count(CC_IW_ROUTE);
		return;
	}
	/* tcp_init_transfer() cut cwnd to 1 after SYN retransmissions. */
	if (tp->total_retrans > 1 && tp->undo_marker)
		return;
	shell_set_cwnd(tp, w);
	shell_count(CC_IW);
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
	struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);
	struct cocktail_event *e;
	__u64 cur;

	if (!ca->pacing)
		return;
	ca->pacing = 0;
	shell_count(why);
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
static __always_inline void shell_pace_start(struct sock *sk, __u64 rate)
{
	struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);

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

/*
 * Faster than the flight's rate until the next ACK, whose
 * tcp_update_pacing_rate() caps sk_pacing_rate at the flight's
 * sk_max_pacing_rate again.
 */
static __always_inline void shell_pace_boost(struct sock *sk, __u64 rate)
{
	sk->sk_pacing_rate = rate;
}

static __always_inline bool shell_app_limited_decay_ok(struct sock *sk)
{
	struct socket *so;

	if (shell_ca_state(sk) != TCP_CA_Open)
		return false;
	so = sk->sk_socket;
	if (!so)
		return true;
	/* Limited by the send buffer, not by the application. */
	return !(BPF_CORE_READ(so, flags) & (1UL << COCKTAIL_SOCK_NOSPACE));
}

/* ---- restarts toward one destination (ensemble) ------------------- */

/*
 * The module's table of ensembles (cp_ensemble_join() in
 * cocktail_policy.h), one slot per array element with its own lock, as
 * a BPF program cannot take a lock in global data.
 */
struct ensemble_slot {
	struct bpf_spin_lock lock;
	struct cp_ensemble e;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CP_ENSEMBLE_SLOTS);
	__type(key, __u32);
	__type(value, struct ensemble_slot);
} ensembles SEC(".maps");

/* include/linux/socket.h */
#define COCKTAIL_AF_INET6	10

/*
 * The place of this restart in the ensemble toward its destination (1:
 * the first, or ensemble=0), joining it, and whether another restart
 * toward it came within @window_us before, and within @span_us; as
 * cocktail_ensemble_place() in the module, with the same key and clock
 * (CLOCK_MONOTONIC in us).
 */
static __always_inline __u32 shell_ensemble(struct sock *sk, __u32 span_us,
					    __u64 window_us, bool *others,
					    bool *near)
{
	struct sock_common *skc = &sk->__sk_common;
	__u32 addr[4] = {}, words = 1, key, slot, place, salt;
	__u64 now_us = bpf_ktime_get_ns() / 1000;
	struct ensemble_slot *s;
	bool evicted;

	if (!ensemble)
		return 1;
	salt = BPF_CORE_READ(skc, skc_net.net, hash_mix);
	addr[0] = skc->skc_daddr;
	if (skc->skc_family == COCKTAIL_AF_INET6) {
		__builtin_memcpy(addr, skc->skc_v6_daddr.in6_u.u6_addr32,
				 sizeof(addr));
		/* a v4-mapped peer is keyed as IPv4, as in the module */
		if (!addr[0] && !addr[1] && addr[2] == bpf_htonl(0xffff))
			addr[0] = addr[3];
		else
			words = 4;
	}
	key = cp_ensemble_key(addr, words, salt);
	slot = cp_ensemble_slot(key);
	s = bpf_map_lookup_elem(&ensembles, &slot);
	if (!s)
		return 1;
	bpf_spin_lock(&s->lock);
	*others = cp_ensemble_recent(&s->e, key, now_us, window_us);
	*near = cp_ensemble_recent(&s->e, key, now_us, span_us);
	place = cp_ensemble_join(&s->e, key, now_us, span_us, &evicted);
	bpf_spin_unlock(&s->lock);
	if (evicted)
		shell_count(CC_ENSEMBLE_EVICT);
	return place;
}

/* ---- the rest of the shell the core runs in (cocktail_core.h) ------ */

/*
 * A measured restart's plan (cp_measure_rate(), cp_measure_flight()) is
 * made in functions of their own, global and not inlined: the verifier
 * checks each once, with every input unknown, instead of once for each
 * path through cwnd_event that leads to it, a product that grows with
 * every rule of the plan and that later kernels' verifiers take further
 * (6.12's came near its limit of a million instructions processed).
 * Their argument may be NULL to the verifier.
 */
__noinline __u64 shell_measure_rate(struct cp_measure *m)
{
	return m ? cp_measure_rate(m) : 0;
}

__noinline __u32 shell_measure_flight(struct cp_measure *m)
{
	return m ? cp_measure_flight(m) : 0;
}

#define CK_FN static __always_inline
/* The parameters are the global data above, by the same names. */
#define shell_param(name)	(name)

static __always_inline __u32 shell_jiffies_to_ms(__u32 j)
{
	return (__u32)((__u64)j * 1000 / shell_hz());
}

static __always_inline __u32 shell_rto(struct sock *sk)
{
	return icsk_of(sk)->icsk_rto;
}

static __always_inline bool shell_rate_app_limited(const struct tcp_sock *tp)
{
	return BPF_CORE_READ_BITFIELD(tp, rate_app_limited);
}

static __always_inline bool shell_rwnd_limited(const struct tcp_sock *tp)
{
	return BPF_CORE_READ_BITFIELD(tp, chrono_type) ==
	       TCP_CHRONO_RWND_LIMITED;
}

/* sk_max_pacing_rate, at most what bpf_setsockopt() can set. */
static __always_inline __u64 shell_max_pacing_rate(struct sock *sk)
{
	__u64 cap = sk->sk_max_pacing_rate;

	return cap > COCKTAIL_RATE_MAX_BPF ? COCKTAIL_RATE_MAX_BPF : cap;
}

static __always_inline void shell_pace_stop(struct sock *sk,
					    enum cocktail_counter why,
					    __u32 reason)
{
	pace_stop(sk, why, reason, true);
}

/* snd_cwnd_stamp and snd_cwnd_used are read-only here (see the top). */
static __always_inline void shell_stamp(struct sock *sk)
{
}

static __always_inline void shell_clear_used(struct sock *sk)
{
}

static __always_inline void shell_emit_restart(struct sock *sk, __u32 req,
					       __u32 pol, __u32 idle,
					       __u32 rto, __u32 srtt,
					       __u32 path_rtt, __u32 before,
					       __u64 rate)
{
	struct tcp_sock *tp = shell_tp(sk);
	struct cocktail_event *e = event_new(sk, CEV_RESTART);

	if (!e)
		return;
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

static __always_inline void shell_emit_check(struct sock *sk, __u32 verdict,
					     __u32 segs, __u32 send_us,
					     __u32 rtt_us, __u64 ack_rate,
					     __u32 path_rtt)
{
	struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);
	struct cocktail_event *e = event_new(sk, CEV_CHECK);

	if (!e)
		return;
	e->verdict = verdict;
	e->segs = segs;
	e->duration_us = (__u32)tp->tcp_mstamp - ca->train_us;
	e->send_us = send_us;
	e->pacing_rate = ca->pace_rate;
	e->ack_rate = ack_rate;
	e->rtt_us = rtt_us;
	e->path_rtt_us = path_rtt;
	e->cwnd_after = tp->snd_cwnd;
	e->ssthresh = tp->snd_ssthresh;
	e->misses = ca->misses;
	bpf_ringbuf_submit(e, 0);
}

#include "../kmod/cocktail_core.h"

/* ---- tcp_congestion_ops -------------------------------------------- */

SEC("struct_ops/cocktail_init")
void BPF_PROG(cocktail_init, struct sock *sk)
{
	ck_init_state(sk);
	/* Switched to cocktail_bpf on a running connection: keep its window. */
	if (BPF_CORE_READ_BITFIELD(icsk_of(sk), icsk_ca_initialized))
		return;
	/* Before the handshake tcp_init_transfer() will reset cwnd later. */
	if (sk->__sk_common.skc_state == TCP_SYN_SENT)
		shell_ca(sk)->iw_pending = 1;
	else
		shell_set_iw(sk);
}

SEC("struct_ops/cocktail_release")
void BPF_PROG(cocktail_release, struct sock *sk)
{
	pace_stop(sk, CC_PACE_ENDED_OTHER, CPE_RELEASE, false);
}

SEC("struct_ops/cocktail_ssthresh")
__u32 BPF_PROG(cocktail_ssthresh, struct sock *sk)
{
	return ck_ssthresh(sk);
}

SEC("struct_ops/cocktail_undo_cwnd")
__u32 BPF_PROG(cocktail_undo_cwnd, struct sock *sk)
{
	return ck_undo_cwnd(sk);
}

SEC("struct_ops/cocktail_cong_avoid")
void BPF_PROG(cocktail_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	ck_cong_avoid(sk, ack, acked);
}

SEC("struct_ops/cocktail_pkts_acked")
void BPF_PROG(cocktail_pkts_acked, struct sock *sk,
	      const struct ack_sample *sample)
{
	ck_pkts_acked(sk, sample);
}

SEC("struct_ops/cocktail_in_ack_event")
void BPF_PROG(cocktail_in_ack_event, struct sock *sk, __u32 flags)
{
	ck_in_ack_event(sk, flags);
}

SEC("struct_ops/cocktail_cwnd_event")
void BPF_PROG(cocktail_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	ck_cwnd_event(sk, ev);
}

/* The kernel's tcp_min_tso_segs, read through the socket's namespace. */
SEC("struct_ops/cocktail_min_tso_segs")
__u32 BPF_PROG(cocktail_min_tso_segs, struct sock *sk)
{
	return ck_min_tso_segs(sk, sk->__sk_common.skc_net.net->ipv4
				   .sysctl_tcp_min_tso_segs);
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
	.min_tso_segs	= (void *)cocktail_min_tso_segs,
	.name		= COCKTAIL_BPF_NAME,
};
