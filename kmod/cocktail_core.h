/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cocktail_core.h - the cocktail congestion control's per-socket logic,
 * shared by its two shells: the module (tcp_cocktail.c) and the BPF
 * struct_ops build (bpf/cocktail.bpf.c).  tcp_cocktail.c's header comment
 * explains the mechanism; the arithmetic is cocktail_policy.h's and the
 * state cocktail_state.h's.  What is here is the order of things: which
 * socket fields each decision reads and writes, on which callback.
 *
 * A shell includes this file after its kernel headers and after defining
 * what the two differ in (each shell's comments say why it differs):
 *
 *   CK_FN                      storage class of the functions below
 *   shell_ca(sk), shell_tp(sk) struct cocktail *, struct tcp_sock *
 *   shell_cwnd(tp)             snd_cwnd, segments
 *   shell_set_cwnd(tp, cwnd)   snd_cwnd = cwnd, clamped to [1, clamp]
 *   shell_count(c)             counter c (enum cocktail_counter) += 1
 *   shell_param(name)          the parameter's current value
 *   shell_jiffies(), shell_hz() tcp_jiffies32 and HZ
 *   shell_jiffies_to_ms(j)     j jiffies in ms, u32
 *   shell_rto(sk)              icsk_rto, jiffies
 *   shell_srtt_us(tp)          smoothed RTT, us
 *   shell_min_rtt_us(tp)       tcp_min_rtt(): ~0U without a sample
 *   shell_ca_state(sk)         icsk_ca_state
 *   shell_in_slow_start(tp), shell_in_initial_slowstart(tp),
 *   shell_packets_in_flight(tp), shell_is_cwnd_limited(sk),
 *   shell_rate_app_limited(tp) as the kernel's tcp_* helpers and fields
 *   shell_rwnd_limited(tp)     the last transmit attempt stopped at the
 *                              peer's window (chrono_type)
 *   shell_max_pacing_rate(sk)  sk_max_pacing_rate as a cap, B/s
 *   shell_iw_now(sk)           the initial window now, segments
 *   shell_set_iw(sk)           apply it to a new connection
 *   shell_pace_start(sk, rate) pace what is sent from now at rate B/s
 *   shell_pace_boost(sk, rate) send faster, at rate B/s, until the next
 *                              ACK lowers the pacing rate to the flight's
 *   shell_pace_stop(sk, c, r)  end it; counter c, enum cocktail_pace_end r
 *   shell_app_limited_decay_ok(sk)  CA_Open and not send-buffer limited
 *   shell_measure_rate(m), shell_measure_flight(m)
 *                              cp_measure_rate(), cp_measure_flight()
 *   shell_ensemble(sk, span_us, window_us, &others, &near)
 *                              this restart's place in the ensemble toward
 *                              its destination, joining it (1: ensemble=0);
 *                              others: another restart toward it within
 *                              window_us before (cp_ensemble_recent());
 *                              near: within span_us before
 *   shell_stamp(sk)            snd_cwnd_stamp = now (keeps the kernel's
 *                              own RFC 2861 decay out, where it can)
 *   shell_clear_used(sk)       snd_cwnd_used = 0, where it can
 *   shell_emit_restart(sk, req, pol, idle, rto, srtt, path_rtt, before,
 *                      rate)   the restart event (tracepoint, ring buffer)
 *   shell_emit_check(sk, verdict, segs, send_us, rtt_us, ack_rate,
 *                    path_rtt) the measure check's event
 *
 * Units: cwnd, ssthresh and windows in segments; rates in bytes per
 * second; idle time and RTO in jiffies; RTTs in microseconds.
 */
#ifndef _COCKTAIL_CORE_H
#define _COCKTAIL_CORE_H

/*
 * Round trips a delivery-rate sample stays in the windowed max (between
 * one and two times this), as BBR's bandwidth filter: long enough to span
 * the application-limited rounds between keep-alive responses, short
 * enough to forget a rate from before the path changed.
 */
#define COCKTAIL_BW_ROUNDS	10

/* The path's minimum RTT in us: the kernel's windowed min, else srtt. */
CK_FN u32 ck_path_rtt_us(const struct tcp_sock *tp)
{
	return cp_path_rtt_us(shell_min_rtt_us(tp), shell_srtt_us(tp));
}

/* ---- growth: CUBIC and HyStart++ ---------------------------------- */

/* CUBIC's clock, ms: the low 32 bits of tcp_mstamp / 1000 (wrap-safe). */
CK_FN u32 ck_now_ms(const struct tcp_sock *tp)
{
	u32 rem;

	return (u32)cp_div_u64_rem(tp->tcp_mstamp, CP_USEC_PER_MSEC, &rem);
}

/*
 * The initial slow start is over (a congestion event, congestion
 * avoidance reached, HyStart++'s own exit): CUBIC takes the words over,
 * with no W_max yet (the first epoch starts on its plateau) and
 * cwnd_prior = cwnd, the window "upon exiting the first slow start"
 * (RFC 9438 section 4.10).
 */
CK_FN void ck_hystart_end(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);

	if (!ca->hystart)
		return;
	ca->hystart = 0;
	__builtin_memset(&ca->cu, 0, sizeof(ca->cu));
	ca->cu.cwnd_prior = shell_cwnd(shell_tp(sk));
}

/* A round ended during the initial slow start. */
CK_FN void ck_hystart_round(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);

	if (cp_hystart_round(&ca->hs) != CP_HS_EXIT)
		return;
	tp->snd_ssthresh = shell_cwnd(tp);
	shell_count(CC_HYSTART_EXIT);
	ck_hystart_end(sk);
}

/* An ACK's RTT sample (us, <= 0: none) during the initial slow start. */
CK_FN void ck_hystart_rtt(struct sock *sk, s32 rtt_us)
{
	struct cocktail *ca = shell_ca(sk);

	if (rtt_us <= 0)
		return;
	switch (cp_hystart_rtt(&ca->hs, rtt_us)) {
	case CP_HS_CSS:
		shell_count(CC_HYSTART_CSS);
		break;
	case CP_HS_RESUME:
		shell_count(CC_HYSTART_RESUME);
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
CK_FN void ck_cubic_grow(struct sock *sk, u32 acked)
{
	struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);
	u32 cwnd, w, cnt;

	if (shell_in_slow_start(tp)) {
		if (ca->hystart)
			acked = cp_hystart_grow(&ca->hs, acked);
		acked = acked ? tcp_slow_start(tp, acked) : 0;
		if (!acked)
			return;
	}
	ck_hystart_end(sk);
	cwnd = shell_cwnd(tp);
	w = cp_cubic_ack(&ca->cu, cwnd, acked, ck_now_ms(tp),
			 shell_srtt_us(tp) / CP_USEC_PER_MSEC, &cnt);
	if (w > cwnd)
		shell_set_cwnd(tp, w);
	else if (cnt)
		tcp_cong_avoid_ai(tp, cnt, acked);
}

/*
 * The window did not grow for this ACK (application-limited under cwv,
 * or a measured restart's frozen flight): the epoch ends, so that CUBIC's
 * t does not count the time the window was not in use (RFC 9438 section
 * 4.2); the next ACK that may grow starts a new one from the window then.
 */
CK_FN void ck_cubic_hold(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);

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
CK_FN void ck_cubic_idle(struct sock *sk, u32 idle, bool restart)
{
	struct cocktail *ca = shell_ca(sk);

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
		ca->cu.t0_ms += shell_jiffies_to_ms(idle);
}

/* ---- measured restart ---------------------------------------------- */

/*
 * The filters age when a sample arrives: before a restart reads them, an
 * empty sample at the current round drops buckets older than the window
 * (a flow whose samples stopped counting, or did not come).
 */
CK_FN void ck_age_filters(struct cocktail *ca)
{
	cp_maxwin_update(&ca->bw, ca->round, COCKTAIL_BW_ROUNDS, 0);
	cp_maxwin_update(&ca->cap, ca->round, COCKTAIL_BW_ROUNDS, 0);
}

/*
 * The pre-idle rate a restart paces at (pace_rate), in B/s, for a window
 * of @cwnd segments, with the filters aged first; 0 without any rate.
 */
CK_FN u64 ck_restart_rate(struct sock *sk, u32 cwnd)
{
	struct cocktail *ca = shell_ca(sk);
	const struct tcp_sock *tp = shell_tp(sk);

	ck_age_filters(ca);
	return cp_pace_rate(cp_maxwin_get(&ca->bw), cwnd, tp->mss_cache,
			    shell_srtt_us(tp), shell_max_pacing_rate(sk),
			    (enum cp_pace_rate)shell_param(pace_rate));
}

/*
 * Microseconds between the sending of the last segment the flight's
 * first ACK was for and that of the last one delivered now: at
 * .pkts_acked the kernel's rate code has just set tp->first_tx_mstamp to
 * the send time of the most recently sent segment this ACK delivered
 * (tcp_rate_skb_delivered()).
 */
CK_FN u32 ck_check_send_us(struct sock *sk)
{
	const struct cocktail *ca = shell_ca(sk);
	const struct tcp_sock *tp = shell_tp(sk);
	u32 us = (u32)tp->first_tx_mstamp - ca->check_sent_us;

	/* a segment sent before the first ACK's (SACKed late): no span */
	return (s32)us > 0 ? us : 0;
}

/*
 * The check of a measured restart reached @verdict.  A full flight keeps its
 * window but no more than is in flight (plus the extra segments), so that
 * ending the pacing does not release a burst, and, unless the ensemble
 * divided it, no less than the restart window (cp_check_hold(), counted in
 * check_held); a flight cut below its BDP grows instead by the segments the
 * check delivered, as slow start would have grown it (cp_check_grow()), and
 * its pacing at the flight's rate goes on for one more round trip, which
 * sends the rest of that window without a burst. Unless a queue stood before
 * the idle period, a full flight may slow-start on to the unhalved flight's
 * window (cp_pass_ssthresh()); a failed check drops to the window of the
 * rate the ACKs showed and slow-starts from there back towards the flight's
 * window (cp_exit_ssthresh()).  That window is the rate times the RTT the
 * ACKs showed (their lowest sample) when they showed a rate or an RTT rise,
 * and the minimum RTT after a loss with no ACK rate (cp_exit_rtt_us()).  The
 * ACK-train filter is lowered to the exit rate (unless the exit is one the
 * next restarts do not remember, cp_check_remembered()): it is the filter
 * that reads above the path when the host bunches ACKs, and its overestimate
 * should not raise the next flight above what this check found (the
 * delivery-rate estimate, which the kernel's samples keep from reading above
 * the path, still may).
 * After a loss the kernel's recovery (PRR) brings cwnd down to the
 * ssthresh ck_ssthresh() returns: the growth's own response, lower only
 * where the ACKs showed a rate (cp_loss_ssthresh()).  Returns the exit's
 * window, in segments; after a loss whose ACKs showed no rate, 0.
 */
CK_FN u32 ck_check_end(struct sock *sk, enum cp_check verdict)
{
	struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);
	u32 path_rtt = ck_path_rtt_us(tp);
	bool in_check = ca->mstate == CM_CHECK;
	u32 segs = in_check ? tp->delivered - ca->train_delivered : 0;
	u32 send_us = in_check ? ck_check_send_us(sk) : 0;
	u32 check_rtt = in_check ? cp_check_rtt_us(ca->low_rtt) : 0;
	/* the ACKs' rate, 0 outside a check (segs 0) or until it tells */
	u64 ack_rate = cp_check_rate(segs, tp->mss_cache,
				     (u32)tp->tcp_mstamp - ca->train_us,
				     send_us, path_rtt);
	/* the pre-idle rate's BDP: the flight's window before any halving */
	u32 flight_bdp = cp_bdp_segs(ca->pace_rate, path_rtt, tp->mss_cache);
	u64 rate;
	u32 cwnd = shell_cwnd(tp), rtt, room, grown;
	bool fill = false, stood;
	bool remember = cp_check_remembered(verdict,
					    shell_param(check_rate_miss));

	if (verdict == CP_CHECK_FULL) {
		room = shell_packets_in_flight(tp) + CP_MEASURE_EXTRA_SEGS;
		/* a cut flight grows: the rest of its window goes out paced */
		grown = cp_check_grow(cwnd, segs, flight_bdp);
		fill = tp->packets_out && ca->pacing && grown > cwnd &&
		       grown > room;
		if (fill) {
			cwnd = grown;
		} else if (tp->packets_out) {
			/* not below the restart window */
			cwnd = cp_check_hold(cwnd, room, shell_iw_now(sk),
					     ca->divided);
			if (cwnd > room)
				shell_count(CC_CHECK_HELD);
		}
		tp->snd_ssthresh = cp_pass_ssthresh(tp->snd_ssthresh,
						    flight_bdp, ca->queued);
	} else {
		rate = cp_exit_rate(verdict, ca->pace_rate, ack_rate,
				    check_rtt ? check_rtt : shell_srtt_us(tp),
				    path_rtt);
		if (remember)
			cp_maxwin_lower(&ca->cap, rate);
		if (verdict == CP_CHECK_LOSS && !ack_rate) {
			cwnd = 0;	/* no rate shown: the growth's response stands */
		} else {
			rtt = cp_exit_rtt_us(verdict, ack_rate, check_rtt,
					     path_rtt);
			cwnd = cp_max(cp_bdp_segs(rate, rtt, tp->mss_cache),
				      CP_SSTHRESH_MIN);
		}
		if (verdict != CP_CHECK_LOSS)
			tp->snd_ssthresh = cp_exit_ssthresh(cwnd,
							    tp->snd_ssthresh,
							    flight_bdp);
	}
	if (verdict != CP_CHECK_LOSS)
		shell_set_cwnd(tp, cwnd);
	ca->mstate = CM_NONE;
	/* the flight's window was in use: validation starts over */
	ca->cwv_stamp = shell_jiffies();
	if (remember)
		ca->misses = cp_measure_misses(ca->misses, verdict);
	/*
	 * A queue under a passed check: the next restart may probe; none
	 * under it: the next flight may leave a little faster.
	 */
	stood = cp_queue_stood(check_rtt, path_rtt, shell_param(queue_pct));
	ca->passed = verdict == CP_CHECK_FULL && stood;
	ca->quiet = verdict == CP_CHECK_FULL && check_rtt && !stood;
	/* the queue before the idle period still stood: not drained */
	ca->kept = cp_queue_outlived(check_rtt,
				     cp_check_rtt_base(ca->queued,
						       shell_srtt_us(tp),
						       path_rtt),
				     path_rtt);
	shell_count(cocktail_check_counter(verdict));
	shell_emit_check(sk, verdict, segs, send_us, check_rtt, ack_rate,
			 path_rtt);
	if (fill)
		ca->pace_end_seq = tp->snd_nxt;
	else
		shell_pace_stop(sk, verdict == CP_CHECK_LOSS ?
				CC_PACE_ENDED_LOSS : CC_PACE_ENDED,
				CPE_CHECK + verdict);
	return cwnd;
}

/*
 * Every ACK while a measured flight is out (.pkts_acked, before the
 * kernel grows or cuts cwnd for this ACK).  The first ACK starts the
 * train; from then on the check's lowest RTT sample and the train's
 * rate (against the rate its segments were sent at) are checked, until
 * the ACKs of one round trip have come back (snd_una passes what was
 * sent at the first ACK) or nothing is left in flight.
 * The ACK that leaves nothing in flight is not checked: the receiver may
 * have delayed it, and there is nothing left to slow down.
 */
CK_FN void ck_check_ack(struct sock *sk, s32 rtt_us)
{
	struct cocktail *ca = shell_ca(sk);
	const struct tcp_sock *tp = shell_tp(sk);
	enum cp_check verdict;
	u32 path_rtt;

	if (ca->mstate == CM_FLIGHT) {
		ca->mstate = CM_CHECK;
		ca->train_us = (u32)tp->tcp_mstamp;
		ca->train_delivered = tp->delivered;
		ca->pace_end_seq = tp->snd_nxt;
		ca->low_rtt = CP_CHECK_RTT_NONE;
		ca->check_sent_us = (u32)tp->first_tx_mstamp;
	}
	if (!tp->packets_out) {
		ck_check_end(sk, CP_CHECK_FULL);
		return;
	}
	ca->low_rtt = cp_check_rtt_min(ca->low_rtt, rtt_us);
	path_rtt = ck_path_rtt_us(tp);
	verdict = cp_check_ack(cp_check_rtt_us(ca->low_rtt), path_rtt,
			       cp_check_rtt_base(ca->queued, shell_srtt_us(tp),
						 path_rtt),
			       shell_param(check_rtt_pct),
			       tp->delivered - ca->train_delivered,
			       (u32)tp->tcp_mstamp - ca->train_us,
			       ck_check_send_us(sk), tp->mss_cache,
			       ca->pace_rate, shell_param(check_rate_pct));
	if (verdict == CP_CHECK_GOING && !cp_before(tp->snd_una,
						    ca->pace_end_seq))
		verdict = CP_CHECK_FULL;
	if (verdict != CP_CHECK_GOING)
		ck_check_end(sk, verdict);
}

/*
 * ACK trains (whenever no measured flight is being checked): segments
 * sent in a burst, or ACK-clocked behind one, leave the bottleneck spaced
 * by its rate, and so do their ACKs.  A train is a run of ACKs without a
 * pause: it ends at an ACK whose gap per segment delivered is more than
 * CP_TRAIN_BREAK times the train's mean so far (the idle part of a round
 * trip whose window did not fill it, a delayed ACK), or with its round.
 * The segments it delivered over its duration are the bottleneck's rate,
 * whatever part of the round trip the window filled: the delivery rate
 * is the window over the round trip, what the connection achieved, not
 * what the path can do.  Trains of at least CP_TRAIN_MIN_SEGS segments
 * feed the windowed max cap, unless cp_train_plausible() says its ACKs
 * were bunched by the receiving host (a socket backlog processed in one
 * go times them microseconds apart); the first of at least
 * CP_HOE_MIN_SEGS gives Hoe's ssthresh estimate.  The previous ACK's time
 * is tp->delivered_mstamp, which the kernel moves only after .pkts_acked.
 */
CK_FN void ck_train_ack(struct sock *sk, u32 acked)
{
	struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);
	u32 now = (u32)tp->tcp_mstamp, prev = (u32)tp->delivered_mstamp;
	u32 segs, span, est;
	u64 rate;

	if (!acked)
		return;
	segs = tp->delivered - acked - ca->train_delivered;
	span = prev - ca->train_us;
	/*
	 * In loss recovery an ACK can cover segments a SACK had delivered
	 * before the train began (tp->delivered counted them then): the
	 * train's count went below zero and says nothing; the next starts.
	 */
	if ((s32)segs < 0)
		goto next;
	/*
	 * A flow that never pauses (a standing queue) would make one train
	 * of the whole transfer: a train also ends with its round, at the
	 * ACK that starts the next (ck_update_round() runs after).
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
				       ck_path_rtt_us(tp)))
			cp_maxwin_update(&ca->cap, ca->round,
					 COCKTAIL_BW_ROUNDS, rate);
		if (ca->hoe && segs >= CP_HOE_MIN_SEGS) {
			ca->hoe = 0;
			est = cp_hoe_ssthresh(segs, span, tp->mss_cache,
					      ck_path_rtt_us(tp));
			if (est && shell_in_initial_slowstart(tp) &&
			    shell_ca_state(sk) == TCP_CA_Open) {
				tp->snd_ssthresh = cp_min(est,
							  tp->snd_cwnd_clamp);
				shell_count(CC_SSTHRESH_EST);
			}
		}
	}
next:
	ca->train = CT_TRAIN;
	ca->train_us = now;
	ca->train_delivered = tp->delivered;
}

/*
 * restart=measure: the flight's window is the BDP of the pre-idle rate
 * (the pace_rate estimate, raised by probe_pct after a passed check
 * whose lowest RTT showed a queue, cp_probe_rate(); at most the peer's
 * window per minimum RTT when that window held data back since the last
 * restart and wnd_cap is on, cp_wnd_rate()) and the path's minimum
 * RTT, less after recent failed checks or a queue before the idle
 * period that the window @before (segments) does not explain, at least
 * what a slow-start restart would allow; it is paced at that rate, or
 * faster by as much as the room the connection's own queue showed
 * before the idle period would hold (queue_room, cp_room_rate()), or
 * sent at once behind a queue others kept (shared_burst,
 * cp_flight_room(), cp_shared_kept()), and until its first ACK no slower
 * than the restart window per minimum RTT (pace_floor, cp_floor_rate())
 * and, after a check that found the path quiet and with no queue before
 * this idle period, at quiet_pct % of the rate (cp_quiet_rate()) unless
 * another connection restarted toward the destination during that
 * period (cp_ensemble_recent()), neither when the ensemble divided it,
 * and checked on its ACKs against that rate.  Behind such a queue, with
 * shared_rtt, the BDP is over srtt instead of the minimum RTT, not
 * halved (cp_flight_rtt()); neither shared_* acts unless the last check
 * found the queue outliving its idle period (cp_queue_outlived(), kept),
 * nor when another connection restarted toward the destination
 * meanwhile.  The k-th of restarts toward
 * one destination in a quick run (ensemble, cp_ensemble_join()) sizes
 * and paces its flight at 1/k of the rate (cp_ensemble_rate()).  No
 * rate at all, no pacing, or, with ssr_floor, a flight not divided that
 * would take longer than a minimum RTT to send the restart window when
 * another connection restarted toward the destination during the idle
 * period, none within the last RTT (cp_measure_ssr()): ssr.  The
 * arithmetic is cp_measure_rate()'s and cp_measure_flight()'s
 * (shell_measure_rate(), _flight()); here the socket's values go in,
 * the ensemble's place between the two, and pacing and counters come
 * out.  Returns the rate the flight is sized and checked at (0: fell
 * back to ssr); sets *cwnd.
 */
CK_FN u64 ck_measure_restart(struct sock *sk, u32 before, u32 idle,
			     u32 *cwnd)
{
	struct cocktail *ca = shell_ca(sk);
	const struct tcp_sock *tp = shell_tp(sk);
	struct cp_measure m = {};
	u32 bdp;

	m.est = ck_restart_rate(sk, before);
	m.train = cp_maxwin_get(&ca->cap);
	m.cap = shell_max_pacing_rate(sk);
	m.before = before;
	m.floor = cp_restart_ssr(before, shell_iw_now(sk));
	m.mss = tp->mss_cache;
	m.srtt_us = shell_srtt_us(tp);
	m.min_rtt_us = shell_min_rtt_us(tp);
	m.path_rtt_us = ck_path_rtt_us(tp);
	m.low_rtt_us = cp_check_rtt_us(ca->low_rtt);
	m.snd_wnd = tp->snd_wnd;
	m.misses = ca->misses;
	m.passed = ca->passed;
	m.kept = ca->kept;
	m.quiet = ca->quiet;
	m.rwnd = ca->rwnd;
	m.queue_pct = shell_param(queue_pct);
	m.probe_pct = shell_param(probe_pct);
	m.quiet_pct = shell_param(quiet_pct);
	m.wnd_cap = shell_param(wnd_cap);
	m.queue_room = shell_param(queue_room);
	m.pace_burst = shell_param(pace_burst);
	m.shared_burst = shell_param(shared_burst);
	m.shared_rtt = shell_param(shared_rtt);
	m.pace_floor = shell_param(pace_floor);
	m.ssr_floor = shell_param(ssr_floor);
	/*
	 * the k-th restart toward this destination in a quick run: 1/k;
	 * and whether another restarted toward it during this idle period
	 */
	m.place = 1;
	if (shell_measure_rate(&m) && m.path_rtt_us)
		m.place = shell_ensemble(sk, m.path_rtt_us,
					 cp_recent_window_us(idle,
							     shell_hz()),
					 &m.others, &m.near);
	if (m.flags & CP_MF_PROBED)
		shell_count(CC_MEASURE_PROBED);
	if (m.flags & CP_MF_WND)
		shell_count(CC_MEASURE_WND);
	ca->divided = m.place > 1;
	if (ca->divided)
		shell_count(CC_MEASURE_ENSEMBLE);
	bdp = shell_measure_flight(&m);
	/* the restart window would take longer than a round trip: ssr */
	if (m.flags & CP_MF_SSR) {
		shell_count(CC_MEASURE_SSR);
		*cwnd = m.floor;
		return 0;
	}
	if (bdp)
		shell_pace_start(sk, m.rate);
	if (!bdp || !ca->pacing) {
		shell_count(CC_MEASURE_NO_RATE);
		*cwnd = m.floor;
		return 0;
	}
	*cwnd = m.cwnd;
	/* until the first ACK; the check judges the path against the rate */
	if (m.quick > m.rate)
		shell_pace_boost(sk, m.quick);
	if (m.flags & CP_MF_BURST)
		shell_count(CC_MEASURE_BURST);
	if (m.flags & CP_MF_ROOM)
		shell_count(CC_MEASURE_ROOM);
	if (m.flags & CP_MF_FLOOR)
		shell_count(CC_MEASURE_FLOOR);
	if (m.flags & CP_MF_QUIET)
		shell_count(CC_MEASURE_QUIET);
	if (m.flags & CP_MF_QUIET_OTHERS)
		shell_count(CC_MEASURE_QUIET_OTHERS);
	if (m.flags & CP_MF_QUEUED)
		shell_count(CC_MEASURE_QUEUED);
	if (m.flags & CP_MF_SRTT)
		shell_count(CC_MEASURE_SRTT);
	ca->queued = m.queued;
	ca->mstate = CM_FLIGHT;
	return m.rate;
}

/* ---- restart after idle -------------------------------------------- */

/* CA_EVENT_CWND_RESTART: the kernel is about to restart the window. */
CK_FN void ck_snapshot(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);
	const struct tcp_sock *tp = shell_tp(sk);

	/* Keep the first snapshot: a second restart would see the cut cwnd. */
	if (ca->snap_valid)
		return;
	/* Nothing in flight: a train still open ends (its words are reused). */
	if (ca->mstate)
		ck_check_end(sk, CP_CHECK_FULL);
	ca->train = CT_WAIT;
	ca->hoe = 0;
	ca->snap_cwnd = shell_cwnd(tp);
	ca->snap_ssthresh = tp->snd_ssthresh;
	ca->snap_valid = 1;
}

CK_FN u32 ck_restart_ssthresh(struct sock *sk, enum cp_policy policy,
			      u32 ssthresh, u32 cwnd)
{
	/* tcp_current_ssthresh(): in CWR or Recovery ssthresh stays. */
	if ((1 << shell_ca_state(sk)) &
	    ((1 << TCP_CA_CWR) | (1 << TCP_CA_Recovery)))
		return ssthresh;
	return cp_restart_ssthresh(policy, ssthresh, cwnd);
}

/* restart=pace: the flight at the pre-idle rate; 0: no rate, not paced. */
CK_FN u64 ck_pace_restart(struct sock *sk, u32 cwnd)
{
	u64 rate = ck_restart_rate(sk, cwnd);

	if (!rate) {
		shell_count(CC_PACE_NO_RATE);
		return 0;
	}
	shell_pace_start(sk, rate);
	return shell_ca(sk)->pacing ? rate : 0;
}

CK_FN void ck_restart_apply(struct sock *sk, u32 idle)
{
	struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);
	u32 rto = shell_rto(sk);
	u32 srtt = shell_srtt_us(tp);
	enum cp_policy req = (enum cp_policy)shell_param(restart);
	enum cp_policy pol;
	u32 before, ssthresh, after;
	u64 rate = 0;

	/* queue needs the raw min RTT: ~0U says there is no sample. */
	pol = cp_resolve_policy(req, srtt, shell_min_rtt_us(tp),
				shell_param(auto_rtt_us),
				shell_param(queue_pct));
	before = ca->snap_valid ? ca->snap_cwnd : shell_cwnd(tp);
	ssthresh = ca->snap_valid ? ca->snap_ssthresh : tp->snd_ssthresh;

	after = cp_restart_cwnd(pol, before, shell_iw_now(sk), idle, rto);
	if (pol == CP_MEASURE)
		rate = ck_measure_restart(sk, before, idle, &after);
	/* the next restart's window cap is for what this one's held back */
	ca->rwnd = 0;
	ssthresh = ck_restart_ssthresh(sk, pol, ssthresh, before);
	tp->snd_ssthresh = ssthresh;
	shell_set_cwnd(tp, after);
	shell_stamp(sk);
	shell_clear_used(sk);
	ca->cwv_stamp = shell_jiffies();
	/* ck_min_tso_segs() sent the first packet as a burst, or did not */
	ca->burst = pol == CP_PACE && ca->burst;
	if (pol == CP_PACE)
		rate = ck_pace_restart(sk, before);

	shell_count(cocktail_policy_counter(pol));
	shell_count(CC_IDLE_RTO_1 + cp_idle_bucket(idle, rto));
	if (req == CP_AUTO)
		shell_count(pol == CP_SSR ? CC_AUTO_SSR : CC_AUTO_PACE);
	else if (req == CP_QUEUE)
		shell_count(pol == CP_SSR ? CC_QUEUE_SSR : CC_QUEUE_PACE);
	shell_emit_restart(sk, req, pol, idle, rto, srtt, ck_path_rtt_us(tp),
			   before, rate);
}

/* The kernel restarted although idle <= RTO: put the window back. */
CK_FN void ck_restart_undo(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);

	shell_set_cwnd(tp, ca->snap_cwnd);
	tp->snd_ssthresh = ca->snap_ssthresh;
	shell_count(CC_SHORT_IDLE);
}

/* First data segment of the connection. */
CK_FN void ck_first_flight(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);
	const struct tcp_sock *tp = shell_tp(sk);
	u64 rate;

	if (ca->iw_pending) {
		ca->iw_pending = 0;
		shell_set_iw(sk);
	}
	if (shell_param(ssthresh_est) && shell_in_initial_slowstart(tp))
		ca->hoe = 1;
	if (!shell_param(pace_iw))
		return;
	rate = cp_rate(shell_cwnd(tp), tp->mss_cache, shell_srtt_us(tp),
		       shell_max_pacing_rate(sk));
	if (!rate)
		return;
	shell_pace_start(sk, rate);
	if (ca->pacing)
		shell_count(CC_PACE_IW);
}

/* First transmit after the connection was idle (nothing outstanding). */
CK_FN void ck_idle_restart(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);
	const struct tcp_sock *tp = shell_tp(sk);
	u32 idle = cp_elapsed(shell_jiffies(), tp->lsndtime);
	bool restart = cp_idle_exceeds_rto(idle, shell_rto(sk));

	if (restart)
		ck_restart_apply(sk, idle);
	else if (ca->snap_valid)
		ck_restart_undo(sk);
	ck_cubic_idle(sk, idle, restart);
}

/*
 * .min_tso_segs: tcp_write_xmit() asks once per call, before its first
 * transmit, for the fewest segments a TSO packet may carry; @dflt is the
 * kernel's tcp_min_tso_segs.  When that first transmit is a restart after
 * idle (nothing in flight, data sent before, idle longer than the RTO)
 * that will be paced, pace_burst lets its packet carry the restart
 * window (cp_pace_burst_left()); ck_tx_start() then paces the rest.  The
 * policy is resolved here as ck_restart_apply() will resolve it a moment
 * later, from the same srtt and min RTT.  tcp_cwnd_test() lets one packet
 * carry at most half of cwnd, so a window the kernel's own restart cut
 * (tcp_slow_start_after_idle=1) goes back to the snapshot now, as the
 * paced restart will keep it anyway.  A response written in several
 * writes (headers, then the body) reaches tcp_write_xmit() again while
 * the flight is out: its first packet gets what is left of the burst.
 */
CK_FN u32 ck_min_tso_segs(struct sock *sk, u32 dflt)
{
	struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);
	enum cp_policy pol;
	u32 idle;

	if (!shell_param(pace_burst) || !tp->data_segs_out)
		return dflt;
	if (tp->packets_out) {
		if (!ca->pacing || !ca->burst)
			return dflt;
		return cp_pace_burst_left(cp_min(shell_iw_now(sk),
						 shell_cwnd(tp)),
					  (u16)(tp->data_segs_out -
						ca->pace_start_segs), dflt);
	}
	ca->burst = 0;
	idle = cp_elapsed(shell_jiffies(), tp->lsndtime);
	if (!cp_idle_exceeds_rto(idle, shell_rto(sk)))
		return dflt;
	pol = cp_resolve_policy((enum cp_policy)shell_param(restart),
				shell_srtt_us(tp), shell_min_rtt_us(tp),
				shell_param(auto_rtt_us), shell_param(queue_pct));
	if (pol != CP_PACE)
		return dflt;
	if (ca->snap_valid)
		shell_set_cwnd(tp, ca->snap_cwnd);
	ca->burst = 1;
	return cp_pace_burst_left(cp_min(shell_iw_now(sk), shell_cwnd(tp)), 0,
				  dflt);
}

/*
 * CA_EVENT_TX_START: first transmit with nothing in flight.  With packets
 * still outstanding it is a retransmission after an RTO, not a restart.
 */
CK_FN void ck_tx_start(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);
	const struct tcp_sock *tp = shell_tp(sk);

	if (!tp->data_segs_out)
		ck_first_flight(sk);
	else if (!tp->packets_out)
		ck_idle_restart(sk);
	ca->snap_valid = 0;
	/*
	 * A request that carries no new ACK takes the fast path of
	 * tcp_rcv_established() without tcp_ack(), so .in_ack_event did not
	 * refresh the stamp: it is as old as the last ACK before the pause.
	 * Refresh it here too, or tcp_cwnd_validate() (ssai=1) could halve
	 * cwnd in the middle of a flight that followed a pause just below the
	 * RTO, if the sender stalls while the flight is being written.
	 */
	shell_stamp(sk);
}

/* ---- per-ACK bookkeeping ------------------------------------------- */

/* A round ends when snd_una passes the snd_nxt of the round's start. */
CK_FN void ck_update_round(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);
	const struct tcp_sock *tp = shell_tp(sk);

	if (!cp_after(tp->snd_una, ca->round_end_seq) ||
	    tp->delivered == ca->round_delivered)
		return;
	ca->round++;
	ca->round_end_seq = tp->snd_nxt;
	ca->pipeack[1] = ca->pipeack[0];
	ca->pipeack[0] = cp_min(tp->delivered - ca->round_delivered,
				COCKTAIL_PIPEACK_MAX);
	ca->round_delivered = tp->delivered;
	/*
	 * Outside a check, low_rtt is the lowest sample of the round; an ACK
	 * that leaves nothing in flight starts no round of samples (this
	 * runs before the kernel takes the ACKed segments off packets_out).
	 */
	if (!ca->mstate && cp_before(tp->snd_una, tp->snd_nxt))
		ca->low_rtt = CP_CHECK_RTT_NONE;
	if (ca->hystart)
		ck_hystart_round(sk);
}

/*
 * Feed the kernel's saved rate sample into the windowed max.  An
 * application-limited sample only says the path can do at least that
 * much, so (as in BBR) it counts only when it raises the max.
 */
CK_FN void ck_sample_bw(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);
	const struct tcp_sock *tp = shell_tp(sk);
	u16 sig = cp_sample_sig(tp->rate_delivered, tp->rate_interval_us);
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
	if (!bw || (shell_rate_app_limited(tp) &&
		    bw < cp_maxwin_get(&ca->bw)))
		return;
	cp_maxwin_update(&ca->bw, ca->round, COCKTAIL_BW_ROUNDS, bw);
}

/* cwv=1: RFC 2861 decay after one RTO of application-limited sending. */
CK_FN void ck_cwv_2861(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);
	u32 now = shell_jiffies();
	u32 cwnd, used;

	if (shell_is_cwnd_limited(sk)) {
		ca->cwv_stamp = now;
		return;
	}
	if (cp_elapsed(now, ca->cwv_stamp) < shell_rto(sk))
		return;
	ca->cwv_stamp = now;
	if (!shell_app_limited_decay_ok(sk))
		return;
	cwnd = shell_cwnd(tp);
	used = cp_cwv2861_decay(cwnd, tp->snd_cwnd_used, shell_iw_now(sk));
	if (used < cwnd) {
		/* tcp_current_ssthresh() in CA_Open */
		tp->snd_ssthresh = cp_current_ssthresh(tp->snd_ssthresh, cwnd);
		shell_set_cwnd(tp, used);
		shell_count(CC_CWV_DECAY);
	}
	shell_clear_used(sk);
}

/* cwv=2: RFC 7661 validated / non-validated period. */
CK_FN void ck_cwv_7661(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);
	u32 pipeack = cp_max(ca->pipeack[0], ca->pipeack[1]);
	u32 cwnd = shell_cwnd(tp);
	u32 now = shell_jiffies();

	if (pipeack == COCKTAIL_PIPEACK_MAX ||
	    cp_cwv7661_validated(pipeack, cwnd)) {
		ca->nvp = 0;
		return;
	}
	if (!ca->nvp) {
		ca->nvp = 1;
		ca->nvp_stamp = now;
		return;
	}
	if (cp_elapsed(now, ca->nvp_stamp) <
	    shell_param(nvp_s) * shell_hz())
		return;
	ca->nvp_stamp = now;
	if (!shell_app_limited_decay_ok(sk))
		return;
	tp->snd_ssthresh = cp_cwv7661_nvp_ssthresh(tp->snd_ssthresh, cwnd);
	shell_set_cwnd(tp, cp_cwv7661_nvp_cwnd(cwnd, shell_iw_now(sk)));
	shell_count(CC_CWV_NVP_END);
}

CK_FN bool ck_may_grow(struct sock *sk)
{
	const struct cocktail *ca = shell_ca(sk);
	u32 mode = shell_param(cwv);

	if (mode == CP_CWV_OFF)
		return true;
	if (mode == CP_CWV_7661 && ca->nvp)
		return false;
	return shell_is_cwnd_limited(sk);
}

/* ---- tcp_congestion_ops -------------------------------------------- */

/*
 * .init's part that does not depend on the shell: the state, and the
 * growth and HyStart++ of new connections.
 */
CK_FN void ck_init_state(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);
	const struct tcp_sock *tp = shell_tp(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	ca->round_end_seq = tp->snd_nxt;
	ca->round_delivered = tp->delivered;
	ca->cwv_stamp = shell_jiffies();
	ca->low_rtt = CP_CHECK_RTT_NONE;
	ca->pace_prev_status = SK_PACING_NONE;
	cp_maxwin_reset(&ca->bw, 0);
	cp_maxwin_reset(&ca->cap, 0);
	if (shell_param(growth) == CP_GROWTH_CUBIC) {
		ca->cubic = 1;
		/* HyStart++ is for the initial slow start only (RFC 9406) */
		ca->hystart = shell_in_initial_slowstart(tp);
		if (ca->hystart)
			cp_hystart_init(&ca->hs);
	}
}

CK_FN void ck_pkts_acked(struct sock *sk, const struct ack_sample *sample)
{
	struct cocktail *ca = shell_ca(sk);
	s32 rtt_us = sample->rtt_us;

	if (ca->hystart)
		ck_hystart_rtt(sk, rtt_us);
	if (ca->mstate) {
		ck_check_ack(sk, rtt_us);
	} else {
		/* not the ACK that leaves nothing in flight: maybe delayed */
		if (shell_tp(sk)->packets_out)
			ca->low_rtt = cp_check_rtt_min(ca->low_rtt, rtt_us);
		ck_train_ack(sk, sample->pkts_acked);
	}
}

/*
 * Loss, RTO or ECN: the kernel asks for ssthresh before it reduces cwnd:
 * Reno's half, or CUBIC's beta_cubic with W_max and fast convergence
 * (a congestion event also ends the initial slow start's HyStart++).
 * During a measured restart's check this is the check's verdict: the
 * growth's own response, or the window of the rate the ACKs showed if
 * they showed one below it (cp_loss_ssthresh()).
 */
CK_FN u32 ck_ssthresh(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);
	u32 base;

	ca->hoe = 0;
	if (ca->cubic) {
		ck_hystart_end(sk);
		base = cp_cubic_loss(&ca->cu, shell_cwnd(shell_tp(sk)));
	} else {
		base = tcp_reno_ssthresh(sk);
	}
	if (!ca->mstate)
		return base;
	return cp_loss_ssthresh(base, ck_check_end(sk, CP_CHECK_LOSS));
}

/*
 * The kernel found the last reduction spurious (DSACK, timestamps, F-RTO)
 * and puts cwnd back (tcp_reno_undo_cwnd(): the larger of cwnd and the
 * window before the reduction).  CUBIC takes back the reduction's W_max
 * too, the window before it (RFC 9438 section 4.9), and starts a new
 * epoch from the restored window.
 */
CK_FN u32 ck_undo_cwnd(struct sock *sk)
{
	struct cocktail *ca = shell_ca(sk);

	if (ca->cubic && !ca->hystart) {
		ca->cu.w_max = cp_max(ca->cu.w_max, ca->cu.cwnd_prior);
		ca->cu.w_est = 0;
	}
	return tcp_reno_undo_cwnd(sk);
}

CK_FN void ck_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	const struct cocktail *ca = shell_ca(sk);
	struct tcp_sock *tp = shell_tp(sk);

	ck_sample_bw(sk);
	/*
	 * A measured flight's window is the check's to set, and so is the
	 * window a full verdict let a cut flight grow to while it is paced
	 * out (pacing on, mstate CM_NONE: a restart's or initial window's
	 * pacing ends at the ACK before its .cong_avoid): held, so that no
	 * burst follows the pacing.
	 */
	if (ca->mstate || ca->pacing || !ck_may_grow(sk)) {
		ck_cubic_hold(sk);
		return;
	}
	if (ca->cubic) {
		ck_cubic_grow(sk, acked);
		return;
	}
	if (shell_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, shell_cwnd(tp), acked);
}

CK_FN void ck_in_ack_event(struct sock *sk, u32 flags)
{
	struct cocktail *ca = shell_ca(sk);

	/*
	 * The first ACK for the paced flight: back to ACK clocking (a
	 * measured flight's check decides when its pacing ends).
	 */
	if (ca->pacing && !ca->mstate &&
	    cp_after(shell_tp(sk)->snd_una, ca->pace_end_seq))
		shell_pace_stop(sk, CC_PACE_ENDED, CPE_ACK);
	/*
	 * .cong_avoid sees each sample first, but the kernel does not call
	 * it in CWR or Recovery: this catches those samples one ACK late.
	 */
	ck_sample_bw(sk);
	ck_update_round(sk);
	/* the peer's window held back what the last transmit attempt had */
	if (shell_rwnd_limited(shell_tp(sk)))
		ca->rwnd = 1;
	/* A measured flight's window is the check's (its timer shares a word). */
	if (ca->mstate) {
		shell_stamp(sk);
		return;
	}
	switch (shell_param(cwv)) {
	case CP_CWV_2861:
		ck_cwv_2861(sk);
		break;
	case CP_CWV_7661:
		ck_cwv_7661(sk);
		break;
	}
	/* Window validation is ours: keep tcp_cwnd_validate() out of it. */
	shell_stamp(sk);
}

CK_FN void ck_cwnd_event(struct sock *sk, enum tcp_ca_event ev)
{
	struct cocktail *ca = shell_ca(sk);

	switch (ev) {
	case CA_EVENT_CWND_RESTART:
		ck_snapshot(sk);
		break;
	case CA_EVENT_TX_START:
		ck_tx_start(sk);
		break;
	case CA_EVENT_LOSS:
		/*
		 * RTO: the first epoch after it starts on its plateau, K = 0
		 * and W_max = cwnd then (RFC 9438 section 4.8).
		 */
		if (ca->cubic && !ca->hystart)
			ca->cu.w_max = 0;
		ca->snap_valid = 0;
		shell_pace_stop(sk, CC_PACE_ENDED_LOSS, CPE_LOSS);
		break;
	default:
		break;
	}
}

#endif /* _COCKTAIL_CORE_H */
