/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the cocktail congestion control:
 *   tcp_cocktail:cocktail_restart   one per restart decision (idle >
 *                          RTO): the policy requested (the restart
 *                          parameter) and the one applied (what auto or
 *                          queue resolved to), and the inputs of the decision
 *   tcp_cocktail:cocktail_pace_end  when the paced restart (or initial)
 *                          flight ends: ack (first ACK for the flight),
 *                          loss (RTO), release (socket closed) or new (a
 *                          new restart); a measured flight ends with its
 *                          check's verdict (full, rtt, rate, loss)
 *   tcp_cocktail:cocktail_check  the verdict on a measured restart
 *                          (restart=measure): full (path unchanged, the
 *                          flight went as sized) or the reason it left
 *                          the flight (rtt, rate, loss), with the rates
 *                          sent and seen, the spans they were seen over
 *                          (elapsed_us between the ACKs, send_us between
 *                          the sending of their segments), the lowest
 *                          RTT of the check's ACKs (rtt_us, 0: none) and
 *                          the window it went on with
 *
 * The events carry the module's prefix because their trace_<name>()
 * functions and tracepoint symbols are global to the kernel.
 *
 * Units: cwnd and ssthresh in segments, times in microseconds, pacing_rate
 * in bytes per second (0: the restart did not pace; restart=measure: the
 * rate the flight is sized and checked at, which queue_room may send
 * faster).  path_rtt_us is the
 * RTT restart=auto compares with auto_rtt_us: the minimum RTT, or srtt
 * before the first RTT sample; restart=queue compares srtt_us with it.
 *
 * Strings are fixed-size arrays, not __string(), so the header builds the
 * same on kernels before and after the __assign_str() change of 6.10.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tcp_cocktail

#if !defined(_COCKTAIL_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _COCKTAIL_TRACE_H

#include <linux/tracepoint.h>
#include <linux/string.h>
#include <net/sock.h>

/* The longest name, "release", and its NUL. */
#define COCKTAIL_NAME_LEN	8

TRACE_EVENT(cocktail_restart,

	TP_PROTO(const struct sock *sk, const char *requested,
		 const char *policy, u64 idle_us, u32 rto_us, u32 srtt_us,
		 u32 path_rtt_us, u32 cwnd_before, u32 cwnd_after, u32 ssthresh,
		 u64 pacing_rate),

	TP_ARGS(sk, requested, policy, idle_us, rto_us, srtt_us, path_rtt_us,
		cwnd_before, cwnd_after, ssthresh, pacing_rate),

	TP_STRUCT__entry(
		__field(u16, sport)
		__field(u16, dport)
		__array(char, requested, COCKTAIL_NAME_LEN)
		__array(char, policy, COCKTAIL_NAME_LEN)
		__field(u64, idle_us)
		__field(u32, rto_us)
		__field(u32, srtt_us)
		__field(u32, path_rtt_us)
		__field(u32, cwnd_before)
		__field(u32, cwnd_after)
		__field(u32, ssthresh)
		__field(u64, pacing_rate)
	),

	TP_fast_assign(
		__entry->sport = sk->sk_num;
		__entry->dport = ntohs(sk->sk_dport);
		strscpy(__entry->requested, requested, COCKTAIL_NAME_LEN);
		strscpy(__entry->policy, policy, COCKTAIL_NAME_LEN);
		__entry->idle_us = idle_us;
		__entry->rto_us = rto_us;
		__entry->srtt_us = srtt_us;
		__entry->path_rtt_us = path_rtt_us;
		__entry->cwnd_before = cwnd_before;
		__entry->cwnd_after = cwnd_after;
		__entry->ssthresh = ssthresh;
		__entry->pacing_rate = pacing_rate;
	),

	TP_printk("sport=%u dport=%u requested=%s policy=%s idle_us=%llu rto_us=%u srtt_us=%u path_rtt_us=%u cwnd_before=%u cwnd_after=%u ssthresh=%u pacing_rate=%llu",
		  __entry->sport, __entry->dport, __entry->requested,
		  __entry->policy, __entry->idle_us, __entry->rto_us,
		  __entry->srtt_us, __entry->path_rtt_us, __entry->cwnd_before,
		  __entry->cwnd_after,
		  __entry->ssthresh, __entry->pacing_rate)
);

TRACE_EVENT(cocktail_pace_end,

	TP_PROTO(const struct sock *sk, const char *reason, u32 segs,
		 u64 duration_us, u64 pacing_rate),

	TP_ARGS(sk, reason, segs, duration_us, pacing_rate),

	TP_STRUCT__entry(
		__field(u16, sport)
		__field(u16, dport)
		__array(char, reason, COCKTAIL_NAME_LEN)
		__field(u32, segs)
		__field(u64, duration_us)
		__field(u64, pacing_rate)
	),

	TP_fast_assign(
		__entry->sport = sk->sk_num;
		__entry->dport = ntohs(sk->sk_dport);
		strscpy(__entry->reason, reason, COCKTAIL_NAME_LEN);
		__entry->segs = segs;
		__entry->duration_us = duration_us;
		__entry->pacing_rate = pacing_rate;
	),

	TP_printk("sport=%u dport=%u reason=%s segs=%u duration_us=%llu pacing_rate=%llu",
		  __entry->sport, __entry->dport, __entry->reason,
		  __entry->segs, __entry->duration_us, __entry->pacing_rate)
);

/*
 * segs: delivered since the flight's first ACK; elapsed_us: since that
 * ACK; sent_rate and ack_rate in B/s (ack_rate 0: too few segments to
 * tell); srtt_us and min_rtt_us at the verdict; cwnd and ssthresh in
 * segments after it; misses: the connection's recent failed checks, by
 * which its next flight is halved.
 */
TRACE_EVENT(cocktail_check,

	TP_PROTO(const struct sock *sk, const char *verdict, u32 segs,
		 u32 elapsed_us, u32 send_us, u64 sent_rate, u64 ack_rate,
		 u32 rtt_us, u32 min_rtt_us, u32 cwnd, u32 ssthresh,
		 u32 misses),

	TP_ARGS(sk, verdict, segs, elapsed_us, send_us, sent_rate, ack_rate,
		rtt_us, min_rtt_us, cwnd, ssthresh, misses),

	TP_STRUCT__entry(
		__field(u16, sport)
		__field(u16, dport)
		__array(char, verdict, COCKTAIL_NAME_LEN)
		__field(u32, segs)
		__field(u32, elapsed_us)
		__field(u32, send_us)
		__field(u64, sent_rate)
		__field(u64, ack_rate)
		__field(u32, rtt_us)
		__field(u32, min_rtt_us)
		__field(u32, cwnd)
		__field(u32, ssthresh)
		__field(u32, misses)
	),

	TP_fast_assign(
		__entry->sport = sk->sk_num;
		__entry->dport = ntohs(sk->sk_dport);
		strscpy(__entry->verdict, verdict, COCKTAIL_NAME_LEN);
		__entry->segs = segs;
		__entry->elapsed_us = elapsed_us;
		__entry->send_us = send_us;
		__entry->sent_rate = sent_rate;
		__entry->ack_rate = ack_rate;
		__entry->rtt_us = rtt_us;
		__entry->min_rtt_us = min_rtt_us;
		__entry->cwnd = cwnd;
		__entry->ssthresh = ssthresh;
		__entry->misses = misses;
	),

	TP_printk("sport=%u dport=%u verdict=%s segs=%u elapsed_us=%u send_us=%u sent_rate=%llu ack_rate=%llu rtt_us=%u min_rtt_us=%u cwnd=%u ssthresh=%u misses=%u",
		  __entry->sport, __entry->dport, __entry->verdict,
		  __entry->segs, __entry->elapsed_us, __entry->send_us,
		  __entry->sent_rate, __entry->ack_rate, __entry->rtt_us,
		  __entry->min_rtt_us, __entry->cwnd, __entry->ssthresh,
		  __entry->misses)
);

#endif /* _COCKTAIL_TRACE_H */

/* This part must be outside protection */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE cocktail_trace
#include <trace/define_trace.h>
