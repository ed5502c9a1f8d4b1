/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cocktail_bpf.h - what bpf/cocktail.bpf.c and its control tool
 * bpf/cocktail-bpf.c share: the counters, in the module's order and with
 * its names, and the events on the ring buffer, with the fields of the
 * module's tracepoints (kmod/cocktail_trace.h).
 *
 * Units as in the module: cwnd and ssthresh in segments, times in
 * microseconds, rates in bytes per second.
 */
#ifndef _COCKTAIL_BPF_H
#define _COCKTAIL_BPF_H

/* The name the BPF build registers under, so the module can coexist. */
#define COCKTAIL_BPF_NAME	"cocktail_bpf"

enum cocktail_counter {
	/* one per applied policy, in enum cp_policy order */
	CC_SSR,
	CC_DECAY,
	CC_KEEP,
	CC_PACE,
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

/* Why a paced flight ended (the module's pace_end reasons). */
enum cocktail_pace_end {
	CPE_ACK,	/* first ACK for data of the flight */
	CPE_LOSS,	/* RTO */
	CPE_RELEASE,	/* socket closed or switched to another algorithm */
	CPE_NEW,	/* a new restart */
};

enum cocktail_event_type {
	CEV_RESTART = 1,	/* the module's cocktail_restart */
	CEV_PACE_END,		/* the module's cocktail_pace_end */
};

/* One ring buffer record; fields not used by the type are 0. */
struct cocktail_event {
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
	__u32 reason;		/* pace_end: enum cocktail_pace_end */
	__u32 segs;		/* pace_end: data segments sent while paced */
	__u32 duration_us;	/* pace_end: from the start of pacing */
	__u32 pad;
};

#endif /* _COCKTAIL_BPF_H */
