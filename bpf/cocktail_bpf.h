/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cocktail_bpf.h - what bpf/cocktail.bpf.c and its control tool
 * bpf/cocktail-bpf.c share besides kmod/cocktail_state.h (the counters
 * and the names, the module's): the events on the ring buffer, with the
 * fields of the module's tracepoints (kmod/cocktail_trace.h).
 *
 * Units as in the module: cwnd and ssthresh in segments, times in
 * microseconds, rates in bytes per second.
 */
#ifndef _COCKTAIL_BPF_H
#define _COCKTAIL_BPF_H

/* The name the BPF build registers under, so the module can coexist. */
#define COCKTAIL_BPF_NAME	"cocktail_bpf"

enum cocktail_event_type {
	CEV_RESTART = 1,	/* the module's cocktail_restart */
	CEV_PACE_END,		/* the module's cocktail_pace_end */
	CEV_CHECK,		/* the module's cocktail_check */
};

/*
 * One ring buffer record; fields not used by the type are 0.  A check
 * (CEV_CHECK) uses segs, duration_us (elapsed since the flight's first
 * ACK), send_us, pacing_rate (the flight's, sent_rate), ack_rate,
 * rtt_us, path_rtt_us (min_rtt_us), cwnd_after (cwnd), ssthresh,
 * verdict and misses.
 */
struct cocktail_event {
	__u64 ts_ns;		/* CLOCK_MONOTONIC, as the trace clock */
	__u32 type;		/* enum cocktail_event_type */
	__u16 sport;
	__u16 dport;
	__u32 requested;	/* restart: enum cp_policy of the parameter */
	__u32 policy;		/* restart: enum cp_policy applied */
	__u64 idle_us;
	__u32 rto_us;
	__u32 srtt_us;
	__u32 path_rtt_us;
	__u32 cwnd_before;
	__u32 cwnd_after;
	__u32 ssthresh;
	__u64 pacing_rate;	/* B/s; 0: the restart did not pace */
	__u64 ack_rate;		/* check: B/s, 0: too few segments to tell */
	__u32 reason;		/* pace_end: enum cocktail_pace_end */
	__u32 segs;		/* pace_end: data segments sent while paced */
	__u32 duration_us;	/* pace_end: from the start of pacing */
	__u32 verdict;		/* check: enum cp_check */
	__u32 misses;		/* check: recent failed checks */
	__u32 send_us;		/* check: between the segments' sending */
	__u32 rtt_us;		/* check: the ACKs' lowest RTT, 0: none */
	__u32 pad;
};

#endif /* _COCKTAIL_BPF_H */
