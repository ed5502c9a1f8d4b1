/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cocktail_state.h - what the two shells of the cocktail congestion
 * control share besides the arithmetic of cocktail_policy.h: the
 * per-connection state in icsk_ca_priv, the counters and the names the
 * parameters, counters and events are spelled with.
 *
 * tcp_cocktail.c (the module) and bpf/cocktail.bpf.c (the BPF struct_ops
 * build) keep one layout and one list of counters, so that the BPF
 * build's `cocktail-bpf stats` prints the module's stats parameter line
 * for line.  No kernel headers: the module includes it after <net/tcp.h>,
 * the BPF program after vmlinux.h, the tool (bpf/cocktail-bpf.c) after
 * cocktail_policy.h's own types.
 *
 * Units: windows in segments, rates in bytes per second, times as each
 * field says.
 */
#ifndef _COCKTAIL_STATE_H
#define _COCKTAIL_STATE_H

#include "cocktail_policy.h"

/* Where a measured restart is (restart=measure). */
enum cocktail_mstate {
	CM_NONE,	/* no measured restart in progress */
	CM_FLIGHT,	/* flight paced, waiting for its first ACK */
	CM_CHECK,	/* checking the ACKs for one round trip */
};

/* Where the ACK train of the current round is. */
enum cocktail_train {
	CT_WAIT,	/* no train: the next ACK starts one */
	CT_TRAIN,	/* timing a run of ACKs */
};

/*
 * Per-connection state, in icsk_ca_priv (104 bytes on 6.1 and 6.12: every
 * field counts, and the struct fills it).  Fields never live at the same
 * time share words:
 * - the snapshot of the kernel's restart and the ACK train: the snapshot
 *   lives from CA_EVENT_CWND_RESTART to the CA_EVENT_TX_START of the same
 *   transmit, with nothing in flight, and a train only while data is in
 *   flight (the snapshot ends a train that is still open);
 * - HyStart++ and CUBIC (growth=cubic): HyStart++ lives in the initial
 *   slow start only, before any congestion event and any congestion
 *   avoidance, CUBIC's W_max and epoch only from the end of it on (the
 *   end of HyStart++ hands the words over); the hystart bit says which
 *   one holds them;
 * - window validation's timer and a measured flight's check: validation
 *   waits while the flight is out (its window is the check's) and starts
 *   its timer again when the check ends.
 * Rates are kept in 32 bits of B/s, up to 4.29 GB/s (34 Gbit/s): a
 * paced flight never goes faster, and a pacing rate or cap above that
 * which a flight saves saturates and is put back as ~0UL (no cap).
 * pipeack saturates at COCKTAIL_PIPEACK_MAX segments a round, which counts as validated
 * (RFC 7661 is about windows the application does not use: a round that
 * delivered 65535 segments is not one).
 */
/* The largest pipeack, what its u16 holds. */
#define COCKTAIL_PIPEACK_MAX	65535U

/* Why a paced flight ended (the pace_end event's reason). */
enum cocktail_pace_end {
	CPE_ACK,	/* first ACK for data of the flight */
	CPE_LOSS,	/* RTO */
	CPE_RELEASE,	/* socket closed or switched to another algorithm */
	CPE_NEW,	/* a new restart */
	CPE_CHECK,	/* a measured flight's check: CPE_CHECK + enum cp_check */
};

struct cocktail {
	struct cp_maxwin bw;		/* windowed max delivery rate, B/s */
	struct cp_maxwin cap;		/* windowed max ACK-train rate, B/s */
	u32 pace_prev_rate;		/* B/s: sk_pacing_rate before pacing */
	u32 pace_prev_max;		/* B/s: sk_max_pacing_rate before */
	u32 pace_rate;			/* B/s: rate of the paced flight */
	u32 round;			/* round trips counted on ACKs */
	u32 round_end_seq;		/* seq: snd_nxt when this round began */
	u32 round_delivered;		/* segs: tp->delivered when it began */
	union {
		struct {
			u32 snap_cwnd;		/* segs: cwnd at CWND_RESTART */
			u32 snap_ssthresh;	/* segs: ssthresh then */
		};
		struct {
			u32 train_us;		/* us: first ACK of the train */
			u32 train_delivered;	/* segs: tp->delivered then */
		};
	};
	u32 pace_end_seq;		/* seq: pacing (measure: the check)
					 * ends when snd_una passes it
					 */
	u32 pace_start_us;		/* us: low 32 bits of tcp_mstamp */
	union {
		u32 cwv_stamp;		/* jiffies: last cwnd-limited or decay
					 * (window validation waits while a
					 * measured flight is out)
					 */
		u32 check_sent_us;	/* measure, in CM_CHECK: send time of
					 * the last segment the flight's first
					 * ACK was for, low 32 bits of us
					 */
	};
	u32 nvp_stamp;			/* jiffies: RFC 7661 NVP start */
	u16 bw_sig:11,			/* hash of the last rate sample fed */
	    kept:1,			/* measure: the last check's lowest
					 * RTT still showed the queue that
					 * stood before its idle period
					 * (cp_queue_outlived(): shared_rtt
					 * and shared_burst apply)
					 */
	    divided:1,			/* measure: the ensemble divided the
					 * flight's rate (its k-th restart)
					 */
	    passed:1,			/* measure: the last check passed
					 * and its lowest RTT showed a queue
					 * (probe_pct applies)
					 */
	    quiet:1,			/* measure: the last check passed
					 * with its lowest RTT at the minimum
					 * (quiet_pct applies)
					 */
	    rwnd:1;			/* the peer's window held data back
					 * since the last restart (wnd_cap
					 * applies)
					 */
	u16 low_rtt;			/* lowest RTT sample of a measured
					 * restart's check (CM_CHECK), else
					 * of the round in progress (measure's
					 * queue test), cp_check_rtt_pack()
					 * units (32 us), CP_CHECK_RTT_NONE:
					 * none
					 */
	union {
		struct cp_cubic cu;	/* growth=cubic: W_max, epoch, W_est */
		struct cp_hystart hs;	/* growth=cubic: initial slow start */
	};
	u16 pipeack[2];			/* segs delivered in the last 2 rounds,
					 * 0..65535 (saturates)
					 */
	u16 pace_start_segs;		/* segs: low 16 bits of data_segs_out at
					 * the start (a flight's count for the
					 * trace, modulo 65536)
					 */
	u8 snap_valid:1,		/* snap_* hold the kernel's pre-cut */
	   pacing:1,			/* a paced flight is in progress */
	   nvp:1,			/* cwv=2: in a non-validated period */
	   iw_pending:1,		/* apply iw at the first data segment */
	   mstate:2,			/* enum cocktail_mstate */
	   misses:2;			/* recent failed checks, 0..3 */
	u8 pace_prev_status:2,		/* sk_pacing_status before pacing */
	   train:1,			/* enum cocktail_train */
	   hoe:1,			/* Hoe's ssthresh estimate pending */
	   cubic:1,			/* growth=cubic (fixed at .init) */
	   hystart:1,			/* hs (not cu) is live: HyStart++ */
	   burst:1,			/* the paced flight starts with the
					 * restart window (pace_burst)
					 */
	   queued:1;			/* measure: a queue stood before the
					 * idle period (the check judges an
					 * RTT rise against srtt)
					 */
};

/* The counters, in the order the stats print them. */
enum cocktail_counter {
	/* one per applied policy */
	CC_SSR,
	CC_DECAY,
	CC_KEEP,
	CC_PACE,
	CC_MEASURE,
	CC_AUTO_SSR,		/* restart=auto resolved to ssr */
	CC_AUTO_PACE,		/* restart=auto resolved to pace */
	CC_QUEUE_SSR,		/* restart=queue resolved to ssr */
	CC_QUEUE_PACE,		/* restart=queue resolved to pace */
	CC_PACE_NO_RATE,	/* pace without any rate: acted as keep */
	CC_PACE_ENDED,		/* paced flight ended by its first ACK */
	CC_PACE_ENDED_LOSS,	/* ... by an RTO or a check's loss */
	CC_PACE_ENDED_OTHER,	/* ... by release or a new flight */
	CC_SHORT_IDLE,		/* kernel restart undone: idle <= RTO */
	CC_IW,			/* iw parameter applied at init */
	CC_IW_ROUTE,		/* route initcwnd kept */
	CC_PACE_IW,		/* initial window paced */
	CC_CWV_DECAY,		/* RFC 2861 application-limited decay */
	CC_CWV_NVP_END,		/* RFC 7661 non-validated period ended */
	CC_MEASURE_NO_RATE,	/* measure without a rate: acted as ssr */
	CC_MEASURE_QUEUED,	/* measure: flight halved, a queue stood */
	CC_MEASURE_PROBED,	/* measure: flight above the rate, probe_pct */
	CC_MEASURE_WND,		/* measure: flight at the peer's window rate */
	CC_MEASURE_ROOM,	/* measure: flight faster into its own room */
	CC_MEASURE_BURST,	/* measure: flight at once behind others' queue */
	CC_MEASURE_SRTT,	/* measure: flight sized over srtt, others' queue */
	CC_MEASURE_FLOOR,	/* measure: restart window within one min RTT */
	CC_MEASURE_SSR,		/* measure: window slower than a round trip: ssr */
	CC_MEASURE_QUIET,	/* measure: flight above its rate, quiet path */
	CC_MEASURE_QUIET_OTHERS, /* ... not: others restarted toward its peer */
	CC_MEASURE_ENSEMBLE,	/* measure: flight at 1/k, k-th toward its peer */
	CC_ENSEMBLE_EVICT,	/* ensemble table: a live slot taken over */
	CC_CHECK_FULL,		/* measure: path unchanged, flight as sized */
	CC_CHECK_RTT,		/* ... left the flight: RTT rose */
	CC_CHECK_RATE,		/* ... ACKs slower than the flight */
	CC_CHECK_LOSS,		/* ... loss or ECN during the check */
	CC_CHECK_HELD,		/* ... full, kept the restart window */
	CC_SSTHRESH_EST,	/* ssthresh set from Hoe's estimate */
	CC_HYSTART_CSS,		/* HyStart++: RTT rose, slow start -> CSS */
	CC_HYSTART_RESUME,	/* ... RTT fell back, CSS -> slow start */
	CC_HYSTART_EXIT,	/* ... CSS rounds done: ssthresh = cwnd */
	CC_IDLE_RTO_1,		/* restarts after [1, 2) RTOs of idle */
	CC_IDLE_RTO_2,		/* [2, 4) */
	CC_IDLE_RTO_4,		/* [4, 8) */
	CC_IDLE_RTO_8,		/* [8, 16) */
	CC_IDLE_RTO_16,		/* [16, 32) */
	CC_IDLE_RTO_32,		/* 32 or more */
	CC_NR
};

/* The counter of an applied policy (auto and queue resolve to another). */
static inline enum cocktail_counter cocktail_policy_counter(enum cp_policy p)
{
	switch (p) {
	case CP_DECAY:
		return CC_DECAY;
	case CP_KEEP:
		return CC_KEEP;
	case CP_PACE:
		return CC_PACE;
	case CP_MEASURE:
		return CC_MEASURE;
	default:
		return CC_SSR;
	}
}

/* The counter of a measured restart's verdict. */
static inline enum cocktail_counter cocktail_check_counter(enum cp_check v)
{
	switch (v) {
	case CP_CHECK_RTT:
		return CC_CHECK_RTT;
	case CP_CHECK_RATE:
		return CC_CHECK_RATE;
	case CP_CHECK_LOSS:
		return CC_CHECK_LOSS;
	default:
		return CC_CHECK_FULL;
	}
}

/*
 * Names, for the module's parameters and stats and for the BPF build's
 * tool (a BPF program has no use for strings: they stay out of it).
 */
#ifndef __bpf__
static const char * const cocktail_counter_names[CC_NR] = {
	[CC_SSR] = "ssr",
	[CC_DECAY] = "decay",
	[CC_KEEP] = "keep",
	[CC_PACE] = "pace",
	[CC_MEASURE] = "measure",
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
	[CC_MEASURE_NO_RATE] = "measure_no_rate",
	[CC_MEASURE_QUEUED] = "measure_queued",
	[CC_MEASURE_PROBED] = "measure_probed",
	[CC_MEASURE_WND] = "measure_wnd",
	[CC_MEASURE_ROOM] = "measure_room",
	[CC_MEASURE_BURST] = "measure_burst",
	[CC_MEASURE_SRTT] = "measure_srtt",
	[CC_MEASURE_FLOOR] = "measure_floor",
	[CC_MEASURE_SSR] = "measure_ssr",
	[CC_MEASURE_QUIET] = "measure_quiet",
	[CC_MEASURE_QUIET_OTHERS] = "measure_quiet_others",
	[CC_MEASURE_ENSEMBLE] = "measure_ensemble",
	[CC_ENSEMBLE_EVICT] = "ensemble_evict",
	[CC_CHECK_FULL] = "check_full",
	[CC_CHECK_RTT] = "check_rtt",
	[CC_CHECK_RATE] = "check_rate",
	[CC_CHECK_LOSS] = "check_loss",
	[CC_CHECK_HELD] = "check_held",
	[CC_SSTHRESH_EST] = "ssthresh_est",
	[CC_HYSTART_CSS] = "hystart_css",
	[CC_HYSTART_RESUME] = "hystart_resume",
	[CC_HYSTART_EXIT] = "hystart_exit",
	[CC_IDLE_RTO_1] = "idle_rto_1",
	[CC_IDLE_RTO_2] = "idle_rto_2",
	[CC_IDLE_RTO_4] = "idle_rto_4",
	[CC_IDLE_RTO_8] = "idle_rto_8",
	[CC_IDLE_RTO_16] = "idle_rto_16",
	[CC_IDLE_RTO_32] = "idle_rto_32",
};

static const char * const cocktail_policy_names[CP_NR_POLICIES] = {
	[CP_SSR] = "ssr",
	[CP_DECAY] = "decay",
	[CP_KEEP] = "keep",
	[CP_PACE] = "pace",
	[CP_AUTO] = "auto",
	[CP_QUEUE] = "queue",
	[CP_MEASURE] = "measure",
};

static const char * const cocktail_check_names[CP_NR_CHECKS] = {
	[CP_CHECK_GOING] = "going",
	[CP_CHECK_FULL] = "full",
	[CP_CHECK_RTT] = "rtt",
	[CP_CHECK_RATE] = "rate",
	[CP_CHECK_LOSS] = "loss",
};

/* Below CPE_CHECK; from it on the reason is cocktail_check_names[r - it]. */
static const char * const cocktail_pace_end_names[CPE_CHECK] = {
	[CPE_ACK] = "ack",
	[CPE_LOSS] = "loss",
	[CPE_RELEASE] = "release",
	[CPE_NEW] = "new",
};

static const char * const cocktail_growth_names[CP_NR_GROWTHS] = {
	[CP_GROWTH_RENO] = "reno",
	[CP_GROWTH_CUBIC] = "cubic",
};

static const char * const cocktail_rate_names[CP_NR_RATES] = {
	[CP_RATE_DELIVERY] = "delivery",
	[CP_RATE_WINDOW] = "window",
	[CP_RATE_MAX] = "max",
};
#endif /* !__bpf__ */

#endif /* _COCKTAIL_STATE_H */
