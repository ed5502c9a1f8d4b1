// SPDX-License-Identifier: GPL-2.0
/*
 * TCP cocktail: restart-after-idle policies for persistent connections.
 *
 * HTTP/1.1, HTTP/2 and gRPC keep one TCP connection open for many
 * responses with idle gaps between them.  After an idle period longer than
 * the RTO, Linux either slow-starts again from the initial window (with
 * net.ipv4.tcp_slow_start_after_idle=1, RFC 5681 section 4.1), or sends
 * the whole pre-idle window back to back.  Rate-based pacing on restart
 * (RBP: Visweswaraiah and Heidemann, "Improving Restart of Idle TCP
 * Connections", 1997) keeps the window but spreads the first flight over
 * one round trip at the pre-idle rate, then returns to ACK clocking.  Chan
 * ("Improving the Performance of HTTP Persistent Connections", 2001)
 * proposed a hybrid: slow-start restart on short paths, RBP on long ones.
 * This module implements each of them behind one parameter.
 *
 * Window growth is a parameter (see "Growth" below): NewReno
 * (tcp_slow_start, tcp_cong_avoid_ai, tcp_reno_ssthresh,
 * tcp_reno_undo_cwnd) or CUBIC with HyStart++; loss recovery is the
 * kernel's PRR either way.  The module uses the classic hooks, not
 * .cong_control, because PRR (tcp_cwnd_reduction) is not exported.  On
 * top of the growth it sets the initial window, decides the restart after
 * idle, and validates the window while the application does not use it:
 * those work the same under both growths.
 *
 * The code is in three layers, shared with the BPF build
 * (bpf/cocktail.bpf.c): the arithmetic in cocktail_policy.h (no kernel
 * headers, tested on the host), the per-socket logic in cocktail_core.h
 * (which fields each callback reads and writes), and this file, the
 * module's shell: parameters, counters, tracepoints, the initial window
 * from the route, and pacing through the socket's fields.
 *
 * Units: cwnd, ssthresh and initial windows in segments; rates in bytes
 * per second; idle time and RTO in jiffies; RTTs in microseconds.
 *
 * Initial window
 * --------------
 * .init sets cwnd to the iw parameter (1..64 segments or rfc3390 =
 * min(4 * MSS, max(2 * MSS, 4380 bytes))) unless the route has an
 * initcwnd metric, which wins.  tcp_init_transfer() sets cwnd from the
 * route (or to 10) when the handshake completes, so an active opener,
 * whose .init runs in SYN_SENT, applies iw at its first data segment
 * instead.  Nothing is changed once data has been sent: .init also runs
 * when an established socket switches to cocktail with
 * setsockopt(TCP_CONGESTION).  After SYN retransmissions the kernel's
 * window of 1 is left alone, as tcp_init_transfer() leaves it.
 *
 * Restart after idle
 * ------------------
 * A connection is idle when nothing is in flight; idle time runs from the
 * last data sent (tp->lsndtime).  The kernel reports two events around
 * the first transmit after idle, and the module decides at the second:
 *
 *                      ACK-clocked sending
 *                               |  everything acknowledged, nothing sent
 *                               v
 *                             IDLE
 *                               |  tcp_slow_start_after_idle=1 and
 *                               |  idle > RTO: the kernel's restart
 *                               |  reports CA_EVENT_CWND_RESTART before
 *                               |  it cuts cwnd: snapshot cwnd, ssthresh
 *                               v
 *           CA_EVENT_TX_START (inside the transmit of the first
 *           segment, before lsndtime moves): idle = now - lsndtime
 *                  |                                    |
 *            idle <= RTO                           idle > RTO
 *                  |                                    |
 *     snapshot taken: put the        policy = restart (auto and queue
 *     kernel's cut back              resolve to ssr or pace); cwnd and
 *     (counter short_idle)           ssthresh from the snapshot, or the
 *                  |                 current ones when the kernel did
 *                  |                 not restart (sysctl 0)
 *                  |                      |                    |
 *                  |              ssr, decay, keep            pace
 *                  |                      |                    |
 *                  |                      |                  PACED: the flight
 *                  |                      |                  leaves at the
 *                  |                      |                  pre-idle rate
 *                  |                      |                    |  first ACK for data
 *                  |                      |                    |  of the flight, an
 *                  |                      |                    |  RTO, a new restart,
 *                  |                      |                    |  or release: pacing
 *                  |                      |                    |  state restored
 *                  v                      v                    v
 *                             ACK-clocked sending
 *
 * Since the module starts from the window it snapshotted before the
 * kernel's cut, both settings of tcp_slow_start_after_idle give the same
 * result.  The window set at CA_EVENT_TX_START applies from the second
 * segment of the flight on: the first one already passed the cwnd test.
 * With packets still outstanding CA_EVENT_TX_START is the retransmission
 * after an RTO, not a restart: the window is left alone.
 *
 * The policies (IW is the route's initcwnd, else the iw parameter):
 *   ssr    cwnd = min(IW, cwnd), ssthresh = max(ssthresh, 3/4 cwnd)
 *   decay  cwnd halved once per full RTO of idle time (idle in
 *          (k RTO, (k+1) RTO] gives k halvings, the loop of
 *          tcp_cwnd_restart()), never below min(IW, cwnd) (RFC 2861);
 *          ssthresh as for ssr
 *   keep   cwnd and ssthresh as before the idle period
 *   pace   as keep, and the flight is paced at the pre-idle rate until
 *          the first ACK for data sent after the restart
 *   auto   ssr when the path's RTT < auto_rtt_us, else pace.  The path's
 *          RTT is the kernel's windowed minimum (tcp_min_rtt()), or srtt
 *          before the first RTT sample; not srtt, which includes the
 *          queue the connection built itself and would make a short path
 *          look long
 *   queue  ssr when srtt (not updated while idle) > queue_pct % of the
 *          path's minimum RTT, else pace; pace without a minimum RTT
 *          sample.  A standing queue before the idle period means the
 *          path was shared or the window was larger than the pipe, so
 *          the remembered window is stale; without one the pre-idle rate
 *          is still good to pace at
 *   measure the flight is sized from the path, paced, and checked on its
 *          first ACKs; see "Measured restart" below; ssthresh as for ssr
 *          (the flight may be less than the old window: a passed check
 *          slow-starts back to it)
 * In CA_CWR or CA_Recovery, ssr, decay and measure leave ssthresh alone, as
 * tcp_current_ssthresh() does.  Every decision emits the
 * tcp_cocktail:cocktail_restart tracepoint and counts in the stats
 * parameter, once per policy applied and once in a histogram of the idle
 * time in RTOs (idle_rto_1 for [1, 2) RTOs ... idle_rto_32 for 32 or more).
 *
 * Measured restart
 * ----------------
 * The window a connection had before the idle period says little about
 * the path: after a warm-up on a shallow buffer Reno's cwnd sits well
 * below the bandwidth-delay product, after one on a deep buffer well
 * above it.  restart=measure sizes the first flight from the path and
 * then looks at what the path does with it:
 *
 *     restart (idle > RTO)
 *         |  rate = max(pace_rate estimate, ACK-train rate),
 *         |  times probe_pct / 100 when the last check passed
 *         |  with its lowest RTT > queue_pct % min RTT, misses 0,
 *         |  at most snd_wnd / min RTT when the peer's window held
 *         |  data back since the last restart (wnd_cap),
 *         |  divided by k for the k-th restart toward the same
 *         |  destination, each within min RTT / 4 of the
 *         |  last, all within min RTT of the first (ensemble),
 *         |  BDP = rate * min RTT / mss;
 *         |  cwnd = max(BDP >> (misses + halve) + 2, min(IW, cwnd))
 *         |  (queued: RTT > queue_pct % min RTT, RTT the last round's
 *         |  lowest sample, else srtt; halve: queued and
 *         |  cwnd < 3/4 rate * RTT / mss; with shared_rtt, kept
 *         |  and no other restart toward the destination while
 *         |  idle, instead of halve, BDP = rate * srtt / mss);
 *         |  no rate: ssr;
 *         |  ssr_floor, not divided, another restart toward the
 *         |  destination while idle, none in the last RTT: ssr when
 *         |  min(IW, cwnd) at the flight's rate would take longer
 *         |  than min RTT;
 *         |  room = min(cwnd before - rate * min RTT / mss,
 *         |  rate * (srtt - min RTT) / mss) - min(IW, cwnd), when
 *         |  not halved, misses 0 and queue_room; room = cwnd
 *         |  behind a queue others kept with shared_burst, kept
 *         |  and no other restart toward the destination while idle
 *         v
 *     FLIGHT: paced at rate; until its first ACK at rate * cwnd /
 *         |  (cwnd - room) (room >= cwnd: unpaced), with pace_floor
 *         |  at least min(IW, cwnd) * mss / min RTT, after a check
 *         |  whose lowest RTT <= queue_pct % min RTT, misses 0, not
 *         |  queued, no other restart toward the peer while idle,
 *         |  at least rate * quiet_pct / 100 (neither when
 *         |  divided by the ensemble); cwnd frozen
 *         |  (.cong_avoid does nothing)
 *         |  first ACK of the flight: the train starts (time, delivered),
 *         |  the check ends one round trip later (snd_nxt now)
 *         v
 *     CHECK: every ACK (.pkts_acked) ----- the check's lowest RTT >
 *         |                           |    check_rtt_pct % of the base
 *         |                           |    and the base + 4 ms (after
 *         |                           |    >= 4 segments); base: min
 *         |                           |    RTT, or srtt if larger after
 *         |                           |    a queue before the idle
 *         |                           |    period
 *         |                           |--- ACKs deliver below
 *         |                           |    check_rate_pct % of the rate
 *         |                           |    the segments were sent at
 *         |                           |    (after >= 16 segments and
 *         |                           |    max(min RTT / 8, 40 ms))
 *         |                           '--- loss, RTO or ECN (.ssthresh)
 *         |  a round trip of ACKs, or             |
 *         |  nothing left in flight               v
 *         v                                  exit: rate' = the ACK rate
 *     full: cwnd = min(cwnd, in flight + 2)  (else rate * min RTT / the
 *     but not divided: at least min(IW,      check's lowest RTT, or
 *     cwnd), the restart window (cut         rate / 2 after a loss);
 *     below BDP: cwnd = min(cwnd + segs      (ACK rate: over the longer
 *     delivered, BDP), paced at rate one     of the ACK and send spans,
 *     more round trip, cwnd held); not       >= 16 segments, the same
 *     queued: ssthresh = max(ssthresh,       span as the verdict's);
 *     BDP + 2); misses - 1                   cwnd = rate' * RTT / mss
 *         |                                  (the check's lowest RTT
 *         |                                  with an ACK rate or after
 *         |                                  an RTT rise, else the min
 *         |                                  RTT); rtt, loss (rate with
 *         |                                  check_rate_miss): the train
 *         |                                  filter lowered to rate',
 *         |                                  misses + 1;
 *         |                                  ssthresh = max(cwnd, min(
 *         |                                  ssthresh, BDP)): slow start
 *         |                                  back up to the flight's BDP
 *         |                                  (after a loss: ssthresh =
 *         |                                  the growth's own, min(cwnd,
 *         |                                  it) with an ACK rate)
 *         v                                       v
 *                 pacing state restored, ACK-clocked sending;
 *                 every verdict: kept = queued and the check's lowest
 *                 RTT at least half the base's distance above min RTT
 *
 * The rate is the bottleneck's, not only what the connection achieved:
 * besides the pace_rate estimate (delivery or window rate, both at most
 * cwnd / RTT), the module times the ACK train of every round (see
 * ck_train_ack() in cocktail_core.h), which shows the bottleneck's rate
 * even when the window filled a fraction of the round trip.
 * A connection the peer's window held back cannot use that rate: it
 * delivers a window per round trip however fast the window leaves.  When
 * the kernel found the window the limit (tp->chrono_type
 * TCP_CHRONO_RWND_LIMITED at an ACK) since the last restart, the flight
 * is paced at most at snd_wnd per minimum RTT (wnd_cap, counted in
 * measure_wnd): paced at the path's rate a window would leave as a
 * train in a fraction of the round trip, which a link others took
 * during the idle period queues or drops before the first ACK is back,
 * while at the window's rate it gives up only the part of a round trip
 * in which the last window would have left sooner.  A window that held
 * nothing back says nothing of the next response, which may fit in it.
 * A connection whose own window kept a queue before the idle period (srtt
 * above the minimum RTT, a window above the BDP) showed that the
 * bottleneck's buffer holds that queue; it drained while the connection was
 * idle.  With queue_room=1 (counted in measure_room) the flight is paced
 * faster than the rate, by as much as would fill that room again by the time
 * its last segment arrives (a flight of cwnd segments at R' over a link that
 * drains R leaves cwnd * (1 - R / R') queued), and sent at once when the
 * room holds it all, less the restart window pace_burst already sends at
 * once.  The socket's pacing rate is raised above the flight's cap
 * (sk_max_pacing_rate stays the rate), so the first ACK, whose
 * tcp_update_pacing_rate() caps it again, ends the faster sending: what is
 * left of a flight longer than a round trip goes at the rate.  On a quiet
 * path it arrives no sooner, as the link drains at its rate anyway, unless
 * the rate estimate reads below the link's; behind a FIFO queue that traffic
 * arriving during the idle period shares, the flight's share of the link
 * grows with the rate it arrives at, and a burst the buffer holds goes ahead
 * of the traffic behind it, as the baselines' bursts do.  Not after a queue
 * others kept (their room), nor after a failed check.  The check still
 * judges the ACKs against the rate, not the faster sending.
 * Behind a queue others kept (a flight halved for it), shared_burst=1
 * (counted in measure_burst) sends the whole flight at once the same
 * way: paced at its last share of a FIFO queue another flow keeps full,
 * a flight gets that share again and the next restart's rate samples
 * cannot read above it, where a burst is served at the link's rate for
 * as long as it lasts, as the stale window of CUBIC without slow-start
 * restart is.  It may overflow the buffer the other flow fills; the
 * check sees the loss.  shared_rtt=1 (counted in measure_srtt) sizes
 * that flight as the rate times srtt instead of halving the minimum
 * RTT's BDP: the other flow's queue did not drain during the idle
 * period, so the flight meets an RTT of srtt, and a window of the rate
 * times the minimum RTT delivers only a fraction of the rate.  Neither
 * acts unless the connection's last check found the queue that stood
 * before its idle period still standing (kept: a flow that does not go
 * idle keeps it), nor when another connection restarted toward the
 * destination during this idle period (the ensemble table): a queue
 * that connections going idle together kept drains while they are idle,
 * and their flights, each sized for it and sent at once, would arrive
 * together.
 * A rate read while others shared the link is the share the connection
 * last got: paced at it, even the restart window a slow-start restart
 * sends at once can take several round trips on a link the others have
 * since left.  pace_floor=1 (counted in measure_floor) sends the flight,
 * until its first ACK, no slower than that window per minimum RTT; the
 * check still judges the ACKs against the rate.  Where the rate is the
 * link's own and its BDP is below the restart window, that window
 * builds a queue the paced flight does not, as a slow-start restart's
 * burst does; a flight the ensemble divided keeps its share.
 * The floor ends at the first ACK, and the check's round trip after it
 * holds the window and paces it at the flight's rate: still slower than
 * a slow-start restart, whose ACKs grow its window by a segment each.
 * ssr_floor=1 (counted in measure_ssr) makes such a restart a slow-start
 * restart instead, when its flight, not divided by the ensemble, would
 * take longer than the minimum RTT to send the restart window at the
 * rate it would leave at and another connection restarted toward the
 * destination during the idle period, none within the last RTT (that
 * one belongs with this restart, a response its server began a little
 * later than another's, and their bursts would arrive together): that
 * window at once, ACK-clocked, neither paced nor checked, no more than
 * Linux's default restart sends; its ACK train times the bottleneck for
 * the next restart's rate.  The
 * others toward the destination say the rate is a share of a path they
 * use too; a connection alone toward it keeps the paced flight, since
 * its rate is more likely the path's own.
 * On a quiet path the rate is the link's own, and a flight paced at it
 * is no faster than a burst: slower, wherever the pacing timer fires
 * late, since each late firing adds to the flight's time.  quiet_pct
 * above 100 (counted in measure_quiet) sends the flight, until its first
 * ACK, at that percentage of the rate once a check has found the path
 * quiet (its lowest RTT within queue_pct % of the minimum), while no
 * failed check is remembered and no queue stood before the idle period:
 * the bottleneck's queue takes up the lateness, as it takes a burst, and
 * holds at most 1 - 100 / quiet_pct of what leaves before the first ACK.
 * The check still judges the ACKs against the rate.  A check speaks for
 * the path as this connection left it: when another connection of the
 * host restarted toward the same destination during this one's idle
 * period (the ensemble table's last restart for it, cp_ensemble_recent()),
 * its flight may still be on the path, and the gain is withheld (counted
 * in measure_quiet_others).
 * Connections of one host to one destination that restart together (a
 * browser's parallel connections, responses pushed to every connection
 * of a client at once) each size their flight from a rate they measured
 * beside the others' traffic, and a windowed maximum holds each one's
 * best rounds, in which the others sent less: together the flights are
 * sized for several times the path, and no connection's own reading can
 * tell.  With ensemble=1 (counted in measure_ensemble) the k-th of a
 * quick run of restarts toward a destination, each within a quarter of
 * the minimum RTT of the last and all within one minimum RTT of the
 * first (one event, not independent connections meeting by chance),
 * paces and sizes its flight at 1/k of its rate, so n restarts that each
 * read the path's rate send about ln n times it rather than n times;
 * each passed check lets its connection slow-start back to its old
 * window.  The ensembles live in a fixed table of 256 slots keyed by
 * the destination and the network namespace (cocktail_policy.h,
 * cp_ensemble_join()); a restart toward a destination whose slot
 * another destination's ensemble still holds takes it over (counted in
 * ensemble_evict).
 * A flight at the bottleneck's rate builds no queue, so its RTTs stay at
 * the minimum and its ACKs come back as fast as it was sent, unless the
 * path changed during the idle period: a competitor's queue raises the
 * RTT, its share slows the ACKs, an overflowing buffer drops.  Then the
 * flight leaves the old rate within the round trip in which the first
 * ACKs arrive, for the rate the ACKs show, without waiting for a loss.
 * The check judges the RTT on its lowest sample and the ACK rate over a
 * stretch of the flight, so that one late ACK (a host's hiccup, which
 * raises one or two samples and stretches a short span) is not taken
 * for a path that changed.  It compares the ACKs' rate with the rate the
 * same segments were sent at (their send times, which the kernel's rate
 * code leaves in tp->first_tx_mstamp), capped at the pacing rate: a
 * sender that fell behind its pacing rate is no sign of the path.
 * The check's full verdict keeps the window at what is in flight, so ending
 * the pacing releases no burst, but not below the restart window min(IW,
 * cwnd) (counted in check_held): a rate read while the connection shared the
 * link (its window over an srtt that the others' queue raised) paces the
 * flight well below a link since emptied, whose ACKs then leave little in
 * flight, and cut to that the connection would restart slower than the
 * slow-start restart (a flight the ensemble divided is paced below the path
 * on purpose, and is cut).  A flight cut below the BDP grows instead by the
 * segments the check delivered (up to the BDP, as a slow-start restart would
 * have grown it in that round trip) and is paced at the flight's rate one
 * more round trip, so the rest of its window leaves without a burst.
 * Unless a queue stood before the idle period, the verdict lets slow start
 * go on up to the unhalved flight's window: a flight halved for past
 * misses (or at the slow-start restart's window) that the path took
 * would otherwise grow one segment a round trip when ssthresh sat below
 * it.  After a standing queue the
 * halving is a hedge against connections restarting together, whose
 * checks all pass while their unhalved windows together overflow the
 * link, and ssthresh stays.  misses (0..3) is the connection's
 * memory: each failed check halves its next flight, each passed one
 * earns a halving back, so a connection whose path keeps changing bets
 * less and one on a quiet path bets the whole BDP.  A check that left
 * on the ACKs' rate alone counts only with check_rate_miss: that rate
 * is also what a share of a FIFO queue another flow keeps full looks
 * like, and the share falls with the flight's rate, so remembered it
 * would shrink every next flight (cp_check_remembered()).  The same
 * share is what the rate estimate holds after such a restart: with
 * probe_pct above 100, a connection whose last check passed with its
 * lowest RTT above queue_pct % of the minimum (a queue its paced flight
 * did not build: another flow's) and which remembers no miss paces and
 * sizes its flight above the estimate, so that a path which delivers
 * more raises the next estimate and one which does not fails the check
 * on the ACKs' rate (cp_probe_rate()); a connection's first measured
 * restart does not probe, as connections that went idle together
 * restart together, and neither does one whose check saw the path
 * empty, where a flight above the path's rate only builds a queue.  A
 * queue that stood before the idle period (the lowest RTT sample of the
 * last round before it, or srtt without one, above queue_pct % of the
 * minimum RTT: srtt alone also holds the late samples of a receiver's
 * delayed ACKs; the ACK that leaves nothing in flight, which a receiver
 * may have delayed, neither counts nor starts a round of samples)
 * halves the flight once more, counted in measure_queued, unless the
 * connection's own window explains it (a window of 3/4 of rate x RTT or
 * more: its own queue, which drained while it was idle): the delivery
 * rate that sizes it may be more than its share of a shared link.  Such a
 * check judges an RTT rise against srtt, not the minimum RTT: a queue
 * someone else keeps raises every sample, and judged against the
 * minimum every restart behind it would fail and halve the next.  The
 * verdict emits tcp_cocktail:cocktail_check and counts in check_full,
 * check_rtt, check_rate or check_loss.
 *
 * Pre-idle rate
 * -------------
 * The kernel saves a rate sample in tp->rate_delivered, rate_interval_us
 * and rate_app_limited, and keeps it until a new one replaces it (it
 * saves every sample that is not application-limited, and the others
 * only when they are higher).  .cong_avoid runs after tcp_rate_gen(), so
 * it sees a fresh sample first; in CWR and Recovery the kernel does not
 * call it, and .in_ack_event picks the sample up one ACK later.  A sample
 * feeds the max once (by a signature of delivered and interval), not
 * once per ACK, so an old rate ages out.  Samples feed a windowed
 * maximum over 10..20 round trips; an application-limited sample counts
 * only when it raises the maximum, as in BBR, because it only shows the
 * path can do at least that much.  Rounds advance when an ACK delivers
 * data past the round's end, not on time, so the maximum survives any
 * idle period.  pace_rate chooses the flight's rate:
 *   delivery  the windowed maximum, or cwnd * mss / srtt without a sample
 *   window    cwnd * mss / srtt: the rate the window was clocked out at
 *             in a round trip where it was in use (Heidemann's estimate)
 *   max       the larger of the two (default)
 * A keep-alive connection whose responses fit in cwnd produces only
 * application-limited samples, whose maximum can sit below the path's
 * rate; a window that grew while application-limited (cwv=0) is larger
 * than what the path delivered, and one that losses kept small gives a
 * low window rate.  Taking the larger of two estimates that fail in
 * opposite directions covers both.  With no rate at all (no sample, no
 * srtt) pace acts as keep and counts pace_no_rate.
 *
 * Pacing: tcp_update_pacing_rate() rewrites sk_pacing_rate after every
 * ACK (a pipelined request or a duplicate ACK may arrive during the
 * flight), bounded by sk_max_pacing_rate.  So the flight lowers
 * sk_max_pacing_rate to its rate and sets sk_pacing_status to
 * SK_PACING_NEEDED (the kernel's internal pacing, or sch_fq's when fq is
 * the qdisc); at its end all three are put back, unless the application
 * changed SO_MAX_PACING_RATE meanwhile, whose value then wins (a
 * compare-and-exchange on the cap the flight set: the option is written
 * without the socket lock from 6.7 on).  Internal
 * pacing never paces a connection's first 10 data segments
 * (tcp_update_skb_after_send(): data_segs_out >= 10; sch_fq's
 * initial_quantum is its twin), which matters only for pace_iw.
 *
 * pace_burst=1 starts a paced restart flight with the restart window:
 * the module's .min_tso_segs, which tcp_write_xmit() asks once before
 * its first transmit, answers min(IW, cwnd) when that transmit is a
 * restart that will be paced, so the flight's first TSO packet carries
 * what a slow-start restart would send at once (RFC 5681's restart
 * window), and pacing, which starts at CA_EVENT_TX_START inside that
 * transmit, spaces what follows (tcp_cwnd_test() gives one packet at
 * most half of cwnd, so the burst is min(IW, cwnd / 2); a window the
 * kernel's own restart cut is put back first, as the paced restart keeps
 * it anyway).  A response of up to IW segments then
 * leaves as fast as after a slow-start restart instead of spread over
 * IW / cwnd of a round trip.  The packet's wait is the kernel's: half of
 * its length at the flight's rate (tcp_update_skb_after_send() gives
 * the idle time as credit).
 *
 * pace_iw=1 paces the initial window at IW * mss / srtt (srtt from the
 * handshake) and ends like a restart flight.  Because of the
 * first-10-segments rule it only spaces segments 11..IW: with iw <= 10 it
 * has no effect on the wire.  A congestion-control module cannot get
 * around that rule (it reads data_segs_out, a counter reported to user
 * space).
 *
 * Initial ssthresh
 * ----------------
 * ssthresh_est=1 replaces the kernel's "infinite" initial ssthresh with
 * Hoe's estimate of the path's BDP: the segments of a slow-start round
 * leave the bottleneck spaced by its rate and so do their ACKs, so the
 * segments delivered from the round's first ACK to the one that ends it,
 * over the time between them, give the rate, and that times the minimum
 * RTT the BDP.  Slow start then stops at the BDP instead of overshooting
 * it by up to a window and losing the excess.  A round whose ACK train
 * is shorter than 3 segments leaves the estimate to the next round; a
 * loss, or an ssthresh from the route, ends it.  A failed check of a
 * measured restart sets ssthresh the same way, from its ACK rate.
 *
 * Growth
 * ------
 * growth=reno (the default) is NewReno.  growth=cubic is CUBIC as RFC
 * 9438 specifies it, with HyStart++ (RFC 9406) in the initial slow start;
 * the arithmetic is in cocktail_policy.h (cp_cubic_*, cp_hystart_*),
 * host-tested against the RFCs' equations.  The parameter is read at
 * .init: a connection keeps the growth it started with.
 *
 *     initial slow start (HyStart++)              loss / ECN (.ssthresh)
 *       cwnd += min(acked, L = 8)                   W_max = cwnd, or
 *         |  a round's min RTT (>= 8 samples)       17/20 cwnd below the
 *         |  >= last round's + clamp(last / 8,      last W_max (fast
 *         |  4 ms, 16 ms)                           convergence);
 *         v                                         ssthresh = 7/10 cwnd
 *       CSS: cwnd += min(acked, 8) / 4                  |  PRR, recovery
 *         |  min RTT back below CSS's baseline:         v
 *         |  slow start again                   congestion avoidance:
 *         |  5 rounds in CSS: ssthresh = cwnd    an epoch starts on the
 *         v                                      first ACK, K = cbrt((W_max
 *     congestion avoidance  <--------------------  - cwnd) / 0.4) s
 *       W_cubic(t) = 0.4 (t - K)^3 + W_max (segments, t in s since the
 *       epoch began); target = W_cubic(t + srtt) within [cwnd, 1.5 cwnd];
 *       cwnd += (target - cwnd) / cwnd per segment ACKed
 *       (tcp_cong_avoid_ai()); W_est += 9/17 * acked / cwnd (1 once W_est
 *       reaches the window before the last reduction), and cwnd = W_est
 *       while W_cubic(t) < W_est (the Reno-friendly region)
 *
 * Without a W_max (no loss yet, after HyStart++ or Hoe's estimate ended
 * slow start, after an RTO) an epoch starts on the plateau: K = 0, W_max
 * = the window then (RFC 9438 sections 4.8, 4.10).  The constants are
 * the RFCs' (beta 0.7 and C 0.4 make CUBIC as fair to Reno as AIMD(9/17,
 * 0.7); the HyStart++ thresholds are explained in cocktail_policy.h).  An
 * undone reduction (.undo_cwnd) takes W_max back to the window before it.
 * Time the window is not in use earns no growth: an ACK that may not grow
 * the window (application-limited under cwv=1/2, a measured flight) ends
 * the epoch, a restart after idle ends it too (the next starts from the
 * window the restart policy set), and a pause shorter than the RTO moves
 * it forward by the pause.  HyStart++ runs in the initial slow start only
 * (RFC 9406): from .init until a congestion event, congestion avoidance
 * or its own exit; a restart during it starts its rounds over.
 *
 * Hoe's estimate (ssthresh_est, below) and HyStart++ answer the same
 * question, where slow start should stop, from different evidence: the
 * ACK spacing of the first round (the bottleneck's rate, before any
 * queue) and the RTT rise of later rounds (a queue building).  They
 * compose: both run in the initial slow start, each only ever lowers
 * ssthresh, and whichever lowers it first ends slow start there (Hoe's
 * ssthresh when cwnd reaches it; HyStart++'s exit sets ssthresh = cwnd,
 * below any ssthresh still ahead).  Hoe's estimate acts from the first
 * round, before HyStart++ has two rounds of RTTs to compare; HyStart++
 * catches a path whose rate the first train overestimated (a burst
 * through an idle queue) or that a competitor fills later.
 *
 * State: HyStart++'s round minima share their words with CUBIC's W_max
 * and epoch (struct cocktail, in cocktail_state.h): the one lives only
 * before the first congestion avoidance, the other only after.
 *
 * Congestion window validation
 * ----------------------------
 * cwv, evaluated on every ACK:
 *   0  cwnd grows on every ACK, application-limited or not
 *   1  RFC 2861: grow only while tcp_is_cwnd_limited(); at the first ACK
 *      one RTO or more after the window was last in use, cwnd =
 *      (cwnd + max(used, IW)) / 2 and ssthresh = max(ssthresh, 3/4 cwnd),
 *      as tcp_cwnd_application_limited() does
 *   2  RFC 7661, simplified: pipeACK is the larger of the segments
 *      delivered in the last two complete round trips.  While
 *      pipeACK >= cwnd / 2 (validated) growth is as for 1 and nothing
 *      decays; below that (non-validated period) cwnd neither grows nor
 *      decays, and after nvp_s seconds in it (RFC 7661's 5 minutes by
 *      default) cwnd = max(cwnd / 2, min(IW, cwnd)), ssthresh =
 *      max(ssthresh, 3/4 cwnd), and a new period starts.  Loss response
 *      stays the growth's (Reno's or CUBIC's)
 * Decays happen only in CA_Open and not while the send buffer is full
 * (then the sender, not the application, is the limit).  The kernel has
 * its own RFC 2861 decay in tcp_cwnd_validate(), which runs only when
 * tcp_slow_start_after_idle=1 and only for modules without .cong_control
 * such as this one.  Every ACK and every CA_EVENT_TX_START refresh
 * tp->snd_cwnd_stamp, which keeps that path from firing: the cwv
 * parameter alone decides, whatever the sysctl says.  Idle periods
 * (nothing in flight) belong to the restart policy, not to cwv.
 *
 * Parameters are read once per decision, so a change applies to the next
 * connection (iw, pace_iw, ssthresh_est, growth), the next restart
 * (restart, auto_rtt_us, queue_pct, pace_rate, pace_burst, probe_pct,
 * quiet_pct, ensemble) or
 * the next ACK (cwv, nvp_s, check_rtt_pct, check_rate_pct,
 * check_rate_miss).
 */
#define pr_fmt(fmt) "tcp_cocktail: " fmt

#include <linux/atomic.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <net/tcp.h>

#include "cocktail_policy.h"
#include "cocktail_state.h"

#define CREATE_TRACE_POINTS
#include "cocktail_trace.h"

/*
 * Kernel-version-sensitive accessors live here, so a compat shim for other
 * kernels has one place to go (tcp_snd_cwnd() appeared in 5.19).
 */
static inline u32 cocktail_cwnd(const struct tcp_sock *tp)
{
	return tcp_snd_cwnd(tp);
}

static inline void cocktail_set_cwnd(struct tcp_sock *tp, u32 cwnd)
{
	tcp_snd_cwnd_set(tp, clamp_t(u32, cwnd, 1, tp->snd_cwnd_clamp));
}

static inline u32 cocktail_srtt_us(const struct tcp_sock *tp)
{
	return tp->srtt_us >> 3;
}

static inline u64 cocktail_jiffies_to_us(u32 j)
{
	return div_u64((u64)j * USEC_PER_SEC, HZ);
}

/* ---- parameters ---------------------------------------------------- */

/* Segments: RFC 6928's initial window, the kernel's own TCP_INIT_CWND. */
static unsigned int cocktail_iw __read_mostly = 10;
/*
 * restart=auto's threshold on the path's minimum RTT, in microseconds.
 * Below it a slow-start restart costs a few short round trips and never
 * bursts a window the path may no longer hold; above it each round trip
 * of slow start costs more than the risk of pacing the old window.  Chan
 * left the threshold tunable; the crossover depends on the path's rate
 * and buffer, and docs/results.md has the measurements behind 100 ms.
 */
static unsigned int cocktail_auto_rtt_us __read_mostly = 100000;
/*
 * restart=queue: srtt more than 20% above the minimum RTT counts as a
 * standing queue.  A smaller margin reads a connection's own delayed ACKs
 * and the queue of its own last flight as a shared path; a larger one
 * misses the queue of a small bottleneck buffer.
 */
static unsigned int cocktail_queue_pct __read_mostly = 120;
/* RFC 2861: what the kernel itself does with tcp_slow_start_after_idle=1. */
static unsigned int cocktail_cwv_mode __read_mostly = CP_CWV_2861;
/* RFC 7661's non-validated period, in seconds. */
static unsigned int cocktail_nvp_s __read_mostly = CP_NVP_SECONDS;
/* Off: with iw <= 10 internal pacing leaves the initial window unpaced. */
static unsigned int cocktail_pace_iw __read_mostly;
/*
 * On: a paced restart then sends at once what a slow-start restart
 * would, so a response within the restart window is not slowed by
 * pacing; docs/results.md has the measurements behind it.
 */
static unsigned int cocktail_pace_burst __read_mostly = 1;
/*
 * restart=measure: an RTT 25% above the path's minimum is a queue of a
 * quarter of the path's RTT, more than the pacing quantum and a delayed
 * ACK add on any path from 20 ms on, and as much as a shallow buffer
 * holds.
 */
static unsigned int cocktail_check_rtt_pct __read_mostly = 125;
/*
 * restart=measure: ACKs at less than 75% of the rate their segments were
 * sent at mean a competitor takes at least a quarter of the bottleneck;
 * noise in the ACK spacing over CP_CHECK_MIN_SEGS segments and an eighth
 * of the RTT stays well inside that.
 */
static unsigned int cocktail_check_rate_pct __read_mostly = 75;
/*
 * restart=measure: off, a rate exit cuts only the flight it checked.  In
 * a FIFO queue that someone else keeps full the flight's share falls
 * with its own rate, so each remembered rate exit (a miss, the ACK-train
 * filter lowered, as after an RTT rise or a loss) would find less than
 * the one before; docs/results.md has the measurements behind it.
 */
static unsigned int cocktail_check_rate_miss __read_mostly;
/*
 * restart=measure: 100, a flight paced at the rate the connection had
 * before the idle period; above it, paced and sized above that rate
 * when the last check passed behind a queue others kept and while no
 * failed one is remembered (cp_probe_rate()).
 */
static unsigned int cocktail_probe_pct __read_mostly = 100;
/*
 * restart=measure: above 100, a flight leaves, until its first ACK, at
 * this percentage of its rate once the connection's last check found the
 * path quiet and no failed one is remembered (cp_quiet_rate()), unless
 * another connection restarted toward the destination during this one's
 * idle period (cp_ensemble_recent()).  125: the queue the gain builds
 * holds at most a fifth of what leaves before the first ACK, a quarter
 * of the BDP when the flight fills the round trip, which a buffer of a
 * quarter of the BDP takes without a loss; the value the bench ran
 * beside 100 on its grids (docs/results.md).
 */
static unsigned int cocktail_quiet_pct __read_mostly = 125;
/*
 * restart=measure: on, a connection whose data the peer's window held
 * back paces its flight at most at that window per minimum RTT
 * (cp_wnd_rate()): faster gains it less than a round trip and makes the
 * window a train at the path's rate.
 */
static unsigned int cocktail_wnd_cap __read_mostly = 1;
/*
 * restart=measure: on, a connection whose own window kept a queue before
 * the idle period paces its flight faster than the rate by as much as
 * that queue's room would hold (cp_room_rate()): behind a FIFO queue
 * that traffic arriving during the idle period shares, a flight's share
 * grows with the rate it arrives at.  Off by default: the flight it
 * speeds up is sized by the BDP, not by the response, and the bench saw
 * no gain from it.
 */
static unsigned int cocktail_queue_room __read_mostly;
/*
 * restart=measure: on, a connection that found a queue others kept
 * before the idle period sends its flight at once rather than paced
 * (cp_flight_room()): paced at its last share of a FIFO queue another
 * flow keeps, it gets that share again.  Off by default until the
 * bench's grids say what it costs where the buffer is shallow.
 */
static unsigned int cocktail_shared_burst __read_mostly;
/*
 * restart=measure: on, a connection that found a queue others kept
 * before the idle period sizes its flight over srtt, the RTT it will
 * meet, instead of halving the minimum RTT's BDP (cp_flight_rtt()).
 * Off by default until the bench's grids say what it costs.
 */
static unsigned int cocktail_shared_rtt __read_mostly;
/*
 * restart=measure: on, a flight leaves, until its first ACK, no slower
 * than the restart window min(IW, cwnd) per minimum RTT
 * (cp_floor_rate()), unless the ensemble divided it: a rate read while
 * others shared the link paces even the window a slow-start restart
 * sends at once over several round trips.  Off by default: on a path
 * whose rate is truly that low the window builds a queue the paced
 * flight does not.
 */
static unsigned int cocktail_pace_floor __read_mostly;
/*
 * restart=measure: on, a flight that, not divided by the ensemble, would
 * take longer than a minimum RTT to send the restart window min(IW, cwnd)
 * at its rate, when another connection restarted toward the destination
 * during the idle period and none within the last RTT, is a slow-start
 * restart instead (cp_measure_ssr()): that window at once, ACK-clocked,
 * neither paced nor checked.  Paced at such a rate (a share read while
 * others used the link) the window and the check's round trip after it
 * each take longer than the slow-start restart it replaces.  Off by
 * default until the bench's grids say what it costs.
 */
static unsigned int cocktail_ssr_floor __read_mostly;
/*
 * restart=measure: on, the k-th of a quick run of restarts toward one
 * destination (each within a quarter of the RTT of the last, all within
 * one RTT) paces and sizes its flight at 1/k of its rate
 * (cp_ensemble_rate()): flights each sized from a rate measured beside
 * the others' traffic overflow the path together.  A connection that
 * restarts alone is not affected.
 */
static unsigned int cocktail_ensemble __read_mostly = 1;
/* On: without it ssthresh starts at the kernel's "infinity". */
static unsigned int cocktail_ssthresh_est __read_mostly = 1;

/* A parameter that takes one of a list of names; stored as its index. */
struct cocktail_choice {
	unsigned int val;
	const char * const *names;
	unsigned int n;
};

/*
 * The path's BDP, paced and checked within a round trip: scored beside
 * auto on the restart and keep-alive grids it lost no more cells to the
 * baselines, won more and did less harm (docs/results.md).
 */
static struct cocktail_choice cocktail_restart __read_mostly = {
	.val = CP_MEASURE,
	.names = cocktail_policy_names,
	.n = CP_NR_POLICIES,
};

/* NewReno, as before the parameter existed; cubic is opt-in for now. */
static struct cocktail_choice cocktail_growth __read_mostly = {
	.val = CP_GROWTH_RENO,
	.names = cocktail_growth_names,
	.n = CP_NR_GROWTHS,
};

/* The larger of two estimates that fail in opposite directions. */
static struct cocktail_choice cocktail_pace_rate __read_mostly = {
	.val = CP_RATE_MAX,
	.names = cocktail_rate_names,
	.n = CP_NR_RATES,
};

static int cocktail_iw_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;

	if (sysfs_streq(val, "rfc3390"))
		n = CP_IW_RFC3390;
	else if (kstrtouint(val, 10, &n) || n < CP_IW_MIN || n > CP_IW_MAX)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static int cocktail_iw_get(char *buf, const struct kernel_param *kp)
{
	unsigned int n = READ_ONCE(*(unsigned int *)kp->arg);

	if (n == CP_IW_RFC3390)
		return scnprintf(buf, PAGE_SIZE, "rfc3390\n");
	return scnprintf(buf, PAGE_SIZE, "%u\n", n);
}

static const struct kernel_param_ops cocktail_iw_ops = {
	.set = cocktail_iw_set,
	.get = cocktail_iw_get,
};

module_param_cb(iw, &cocktail_iw_ops, &cocktail_iw, 0644);
MODULE_PARM_DESC(iw, "initial window: 1..64 segments or rfc3390 (default 10); a route's initcwnd wins");

static int cocktail_choice_set(const char *val, const struct kernel_param *kp)
{
	struct cocktail_choice *c = kp->arg;
	int i = __sysfs_match_string(c->names, c->n, val);

	if (i < 0)
		return -EINVAL;
	WRITE_ONCE(c->val, i);
	return 0;
}

static int cocktail_choice_get(char *buf, const struct kernel_param *kp)
{
	const struct cocktail_choice *c = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%s\n", c->names[READ_ONCE(c->val)]);
}

static const struct kernel_param_ops cocktail_choice_ops = {
	.set = cocktail_choice_set,
	.get = cocktail_choice_get,
};

module_param_cb(restart, &cocktail_choice_ops, &cocktail_restart, 0644);
MODULE_PARM_DESC(restart, "after idle > RTO: ssr | decay | keep | pace | auto | queue | measure (default measure)");

/*
 * 1 us makes every restart pace, 10 s (above any path's RTT) every restart
 * a slow-start restart.
 */
static int cocktail_auto_rtt_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 10 * USEC_PER_SEC);
}

static const struct kernel_param_ops cocktail_auto_rtt_ops = {
	.set = cocktail_auto_rtt_set,
	.get = param_get_uint,
};

module_param_cb(auto_rtt_us, &cocktail_auto_rtt_ops, &cocktail_auto_rtt_us, 0644);
MODULE_PARM_DESC(auto_rtt_us, "restart=auto uses ssr when the path's minimum RTT is below this many microseconds, else pace (1..10000000, default 100000)");

/*
 * srtt averages RTT samples, none below the minimum RTT, so 100 % or less
 * would call every path queued; 1000 % is a queue nine times the path's
 * RTT.
 */
static int cocktail_queue_pct_set(const char *val,
				  const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 101, 1000);
}

static const struct kernel_param_ops cocktail_queue_pct_ops = {
	.set = cocktail_queue_pct_set,
	.get = param_get_uint,
};

module_param_cb(queue_pct, &cocktail_queue_pct_ops, &cocktail_queue_pct, 0644);
MODULE_PARM_DESC(queue_pct, "a queue had built up before the idle period when the pre-idle srtt is above this percentage of the path's minimum RTT: restart=queue then uses ssr (else pace), restart=measure halves its flight when the last round's lowest RTT shows it and the window does not explain it (101..1000, default 120)");

module_param_cb(growth, &cocktail_choice_ops, &cocktail_growth, 0644);
MODULE_PARM_DESC(growth, "window growth of new connections: reno (NewReno) | cubic (RFC 9438 with HyStart++, RFC 9406) (default reno)");

module_param_cb(pace_rate, &cocktail_choice_ops, &cocktail_pace_rate, 0644);
MODULE_PARM_DESC(pace_rate, "rate of a paced restart flight: delivery (windowed max delivery rate) | window (cwnd/srtt) | max of both (default max)");

static int cocktail_cwv_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, CP_CWV_OFF, CP_CWV_7661);
}

static const struct kernel_param_ops cocktail_cwv_ops = {
	.set = cocktail_cwv_set,
	.get = param_get_uint,
};

module_param_cb(cwv, &cocktail_cwv_ops, &cocktail_cwv_mode, 0644);
MODULE_PARM_DESC(cwv, "congestion window validation: 0 off, 1 RFC 2861, 2 RFC 7661 (default 1)");

/*
 * At least a second: the period is checked on ACKs, coarser than that is
 * not meant.  At most CP_NVP_MAX_S: an hour, twelve times RFC 7661's.
 */
static int cocktail_nvp_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, CP_NVP_MAX_S);
}

static const struct kernel_param_ops cocktail_nvp_ops = {
	.set = cocktail_nvp_set,
	.get = param_get_uint,
};

module_param_cb(nvp_s, &cocktail_nvp_ops, &cocktail_nvp_s, 0644);
MODULE_PARM_DESC(nvp_s, "cwv=2 (RFC 7661): seconds of a non-validated period before cwnd is halved (1..3600, default 300)");

static int cocktail_bool_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, 1);
}

static const struct kernel_param_ops cocktail_bool_ops = {
	.set = cocktail_bool_set,
	.get = param_get_uint,
};

module_param_cb(pace_iw, &cocktail_bool_ops, &cocktail_pace_iw, 0644);
MODULE_PARM_DESC(pace_iw, "1: pace the initial window over the handshake RTT (segments 11 on only, see source) (default 0)");

module_param_cb(pace_burst, &cocktail_bool_ops, &cocktail_pace_burst, 0644);
MODULE_PARM_DESC(pace_burst, "1: a paced restart sends the restart window min(IW, cwnd) at once and paces what follows, 0: paced from its first segment (default 1)");

module_param_cb(ssthresh_est, &cocktail_bool_ops, &cocktail_ssthresh_est, 0644);
MODULE_PARM_DESC(ssthresh_est, "1: initial ssthresh from the spacing of the first ACKs (Hoe's estimate of the path's BDP), 0: the kernel's (default 1)");

/*
 * As queue_pct: at 100 % or less every RTT sample would fail the check;
 * 1000 % is a queue nine times the path's RTT.
 */
static const struct kernel_param_ops cocktail_check_rtt_ops = {
	.set = cocktail_queue_pct_set,
	.get = param_get_uint,
};

module_param_cb(check_rtt_pct, &cocktail_check_rtt_ops,
		&cocktail_check_rtt_pct, 0644);
MODULE_PARM_DESC(check_rtt_pct, "restart=measure leaves the paced flight when the lowest RTT of its ACKs is above this percentage of the path's minimum RTT (of srtt, if larger, after a queue before the idle period), and 4 ms above it (101..1000, default 125)");

/* 0 % would never fail; 100 % or more would fail on every ACK. */
static int cocktail_check_rate_set(const char *val,
				   const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 99);
}

static const struct kernel_param_ops cocktail_check_rate_ops = {
	.set = cocktail_check_rate_set,
	.get = param_get_uint,
};

module_param_cb(check_rate_pct, &cocktail_check_rate_ops,
		&cocktail_check_rate_pct, 0644);
MODULE_PARM_DESC(check_rate_pct, "restart=measure leaves the paced flight when its ACKs deliver below this percentage of the rate their segments were sent at (1..99, default 75)");

module_param_cb(check_rate_miss, &cocktail_bool_ops,
		&cocktail_check_rate_miss, 0644);
MODULE_PARM_DESC(check_rate_miss, "1: a restart=measure check that left on the ACKs' rate counts a miss and lowers the ACK-train rate for the next restarts, as an RTT or loss exit does; 0: it cuts only the flight it checked (default 0)");

/*
 * 100 % paces at the estimate; 400 % is four times it, a flight that on
 * a quiet path would need a buffer of three BDPs.
 */
static int cocktail_probe_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 100, 400);
}

static const struct kernel_param_ops cocktail_probe_ops = {
	.set = cocktail_probe_set,
	.get = param_get_uint,
};

module_param_cb(probe_pct, &cocktail_probe_ops, &cocktail_probe_pct, 0644);
MODULE_PARM_DESC(probe_pct, "restart=measure paces and sizes its flight at this percentage of the pre-idle rate when the connection's last check passed with its lowest RTT above queue_pct % of the minimum (a queue others kept) and while it remembers no failed one (100..400, default 100)");

/*
 * 100 % paces at the rate; 200 % sends the part of the flight that
 * leaves before its first ACK in half the time, a queue of half of it.
 */
static int cocktail_quiet_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 100, 200);
}

static const struct kernel_param_ops cocktail_quiet_ops = {
	.set = cocktail_quiet_set,
	.get = param_get_uint,
};

module_param_cb(quiet_pct, &cocktail_quiet_ops, &cocktail_quiet_pct, 0644);
MODULE_PARM_DESC(quiet_pct, "restart=measure sends its flight, until its first ACK, at this percentage of its rate when the connection's last check passed with its lowest RTT within queue_pct % of the minimum, no failed one is remembered, no queue stood before the idle period and no other connection restarted toward the destination during it (100..200, default 125)");

module_param_cb(wnd_cap, &cocktail_bool_ops, &cocktail_wnd_cap, 0644);
MODULE_PARM_DESC(wnd_cap, "1: restart=measure paces a connection whose data the peer's window held back since its last restart at most at that window per minimum RTT; 0: at the path's rate (default 1)");

module_param_cb(queue_room, &cocktail_bool_ops, &cocktail_queue_room, 0644);
MODULE_PARM_DESC(queue_room, "1: restart=measure paces its flight faster than the path's rate by as much as the queue the connection's own window kept before the idle period would hold; 0: at the rate (default 0)");

module_param_cb(shared_burst, &cocktail_bool_ops, &cocktail_shared_burst, 0644);
MODULE_PARM_DESC(shared_burst, "1: restart=measure sends its flight at once when a queue others kept stood before the idle period, the last check found that queue outliving its idle period, and no other connection restarted toward the destination during this one; 0: paced at the rate (default 0)");

module_param_cb(shared_rtt, &cocktail_bool_ops, &cocktail_shared_rtt, 0644);
MODULE_PARM_DESC(shared_rtt, "1: restart=measure sizes its flight as the rate times srtt when a queue others kept stood before the idle period, the last check found that queue outliving its idle period, and no other connection restarted toward the destination during this one; 0: the rate times the minimum RTT, halved (default 0)");

module_param_cb(pace_floor, &cocktail_bool_ops, &cocktail_pace_floor, 0644);
MODULE_PARM_DESC(pace_floor, "1: restart=measure sends its flight, until its first ACK, no slower than the restart window per minimum RTT; 0: at the rate (default 0)");

module_param_cb(ssr_floor, &cocktail_bool_ops, &cocktail_ssr_floor, 0644);
MODULE_PARM_DESC(ssr_floor, "1: restart=measure restarts as ssr when its flight would take longer than a minimum RTT to send the restart window and another connection restarted toward the destination while it was idle, none within the last RTT; 0: paced at the rate (default 0)");

module_param_cb(ensemble, &cocktail_bool_ops, &cocktail_ensemble, 0644);
MODULE_PARM_DESC(ensemble, "1: restart=measure paces and sizes the k-th of the restarts toward one destination in a quick run (each within RTT/4 of the last, all within one RTT) at 1/k of its rate; 0: each at its own rate (default 1)");

/* ---- counters ------------------------------------------------------ */

static atomic_long_t cocktail_counters[CC_NR];

static void cocktail_count(enum cocktail_counter c)
{
	atomic_long_inc(&cocktail_counters[c]);
}

static int cocktail_stats_set(const char *val, const struct kernel_param *kp)
{
	return -EINVAL;		/* read-only */
}

static int cocktail_stats_get(char *buf, const struct kernel_param *kp)
{
	int i, len = 0;

	for (i = 0; i < CC_NR; i++)
		len += scnprintf(buf + len, PAGE_SIZE - len, "%s %ld\n",
				 cocktail_counter_names[i],
				 atomic_long_read(&cocktail_counters[i]));
	return len;
}

static const struct kernel_param_ops cocktail_stats_ops = {
	.set = cocktail_stats_set,
	.get = cocktail_stats_get,
};

module_param_cb(stats, &cocktail_stats_ops, NULL, 0444);
MODULE_PARM_DESC(stats, "read-only counters, one \"name value\" per line: restarts per applied policy (ssr decay keep pace measure), auto_ssr, auto_pace, queue_ssr, queue_pace, paced flights ended, iw applied, cwv decays, measured restarts' checks, ssthresh estimates, HyStart++ transitions, restarts by idle time in RTOs");

/* ---- initial window ------------------------------------------------ */

/* IW in segments: the route's initcwnd when set, else the iw parameter. */
static u32 cocktail_iw_segs(struct sock *sk, bool *route)
{
	const struct dst_entry *dst = __sk_dst_get(sk);
	u32 metric = dst ? dst_metric(dst, RTAX_INITCWND) : 0;

	*route = metric != 0;
	if (metric)
		return metric;
	return cp_iw_segs(READ_ONCE(cocktail_iw), tcp_sk(sk)->mss_cache);
}

static u32 cocktail_iw_now(struct sock *sk)
{
	bool route;

	return cocktail_iw_segs(sk, &route);
}

static void cocktail_set_iw(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	bool route;
	u32 iw = cocktail_iw_segs(sk, &route);

	if (route) {
		cocktail_count(CC_IW_ROUTE);
		return;
	}
	/* tcp_init_transfer() cut cwnd to 1 after SYN retransmissions. */
	if (tp->total_retrans > 1 && tp->undo_marker)
		return;
	cocktail_set_cwnd(tp, iw);
	cocktail_count(CC_IW);
}

/* ---- pacing -------------------------------------------------------- */

/* A rate in B/s as kept in struct cocktail: saturated at U32_MAX. */
static u32 cocktail_rate32(unsigned long rate)
{
	return rate >= U32_MAX ? U32_MAX : rate;
}

/* ... and back: the saturated value is ~0UL, no cap. */
static unsigned long cocktail_rate_ul(u32 rate)
{
	return rate == U32_MAX ? ~0UL : rate;
}

static const char *cocktail_pace_end_name(enum cocktail_pace_end reason)
{
	if (reason >= CPE_CHECK)
		return cocktail_check_names[reason - CPE_CHECK];
	return cocktail_pace_end_names[reason];
}

static void cocktail_pace_stop(struct sock *sk, enum cocktail_counter why,
			       enum cocktail_pace_end reason)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	unsigned long prev;

	if (!ca->pacing)
		return;
	ca->pacing = 0;
	cocktail_count(why);
	trace_cocktail_pace_end(sk, cocktail_pace_end_name(reason),
				(u16)(tp->data_segs_out - ca->pace_start_segs),
				(u32)tp->tcp_mstamp - ca->pace_start_us,
				ca->pace_rate);

	/*
	 * Put back the cap only if it is still the one the flight set: from
	 * 6.7 on SO_MAX_PACING_RATE is written without the socket lock, so a
	 * read-compare-write could overwrite a value the application has just
	 * set.  If the application set a cap meanwhile, its value wins and
	 * so does the pacing it asked for.  If it set ~0 (no cap), it asked
	 * for no pacing: sock_setsockopt() leaves sk_pacing_status alone for
	 * ~0, so the status the flight set is taken back here.
	 */
	prev = cmpxchg(&sk->sk_max_pacing_rate, (unsigned long)ca->pace_rate,
		       cocktail_rate_ul(ca->pace_prev_max));
	if (prev == ca->pace_rate)
		WRITE_ONCE(sk->sk_pacing_rate,
			   cocktail_rate_ul(ca->pace_prev_rate));
	else if (prev != ~0UL)
		return;
	if (ca->pace_prev_status == SK_PACING_NONE)
		cmpxchg(&sk->sk_pacing_status, SK_PACING_NEEDED,
			SK_PACING_NONE);
}

/*
 * Pace everything sent from now until the first ACK for it at @rate B/s,
 * with the kernel's internal pacing (or sch_fq's, if it already paces).
 */
static void cocktail_pace_start(struct sock *sk, unsigned long rate)
{
	struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	cocktail_pace_stop(sk, CC_PACE_ENDED_OTHER, CPE_NEW);
	ca->pace_prev_status = READ_ONCE(sk->sk_pacing_status);
	ca->pace_prev_rate = cocktail_rate32(READ_ONCE(sk->sk_pacing_rate));
	ca->pace_prev_max = cocktail_rate32(READ_ONCE(sk->sk_max_pacing_rate));
	/* never the saturated value, which reads back as "no cap" */
	rate = min_t(unsigned long, rate, U32_MAX - 1);
	ca->pace_rate = rate;
	ca->pace_end_seq = tp->snd_nxt;
	ca->pace_start_us = (u32)tp->tcp_mstamp;
	ca->pace_start_segs = tp->data_segs_out;
	ca->pacing = 1;
	WRITE_ONCE(sk->sk_max_pacing_rate, rate);
	WRITE_ONCE(sk->sk_pacing_rate, rate);
	cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
}

/*
 * A paced flight's segments leave at @rate B/s, above its cap, until
 * the next ACK: tcp_update_pacing_rate() then sets sk_pacing_rate again,
 * at most sk_max_pacing_rate, the flight's rate, which pace_stop()
 * recognises as the one it set.  ~0 leaves them unpaced
 * (tcp_update_skb_after_send()).
 */
static void cocktail_pace_boost(struct sock *sk, u64 rate)
{
	WRITE_ONCE(sk->sk_pacing_rate,
		   (unsigned long)min_t(u64, rate, ~0UL));
}

/* Application-limited, not send-buffer-limited, in CA_Open. */
static bool cocktail_app_limited_decay_ok(const struct sock *sk)
{
	if (inet_csk(sk)->icsk_ca_state != TCP_CA_Open)
		return false;
	/* Limited by the send buffer, not by the application. */
	return !sk->sk_socket ||
	       !test_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
}

/* ---- restarts toward one destination (ensemble) ------------------- */

/*
 * The ensembles of restarts in progress, cp_ensemble_join() in a fixed
 * table (cocktail_policy.h explains the mechanism and the bound).  A
 * restart is once per idle period per connection, so one lock for the
 * table costs nothing; _bh because restarts run in process context
 * (sendmsg) and in softirq (a transmit from an incoming ACK).
 */
static struct cp_ensemble cocktail_ens[CP_ENSEMBLE_SLOTS];
static DEFINE_SPINLOCK(cocktail_ens_lock);

/*
 * The place of this restart in the ensemble toward its destination (1:
 * the first, or ensemble=0), joining it; @span_us is the path's RTT.
 * *@others says whether the table held another restart toward the
 * destination within @window_us before this one, *@near whether within
 * @span_us (both false with ensemble=0).
 * The key mixes in the network namespace's random hash_mix: namespaces
 * (the bench's hosts, containers) do not share ensembles, and a peer
 * cannot aim its addresses at one slot without knowing that salt.
 */
static u32 cocktail_ensemble_place(struct sock *sk, u32 span_us,
				   u64 window_us, bool *others, bool *near)
{
	u32 salt = net_hash_mix(sock_net(sk)), key, place;
	struct cp_ensemble *e;
	u64 now_us;
	bool evicted;

	if (!READ_ONCE(cocktail_ensemble))
		return 1;
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 &&
	    !ipv6_addr_v4mapped(&sk->sk_v6_daddr))
		key = cp_ensemble_key((const u32 *)sk->sk_v6_daddr.s6_addr32,
				      4, salt);
	else
#endif
		key = cp_ensemble_key((const u32 *)&sk->sk_daddr, 1, salt);
	e = &cocktail_ens[cp_ensemble_slot(key)];
	now_us = tcp_clock_us();
	spin_lock_bh(&cocktail_ens_lock);
	*others = cp_ensemble_recent(e, key, now_us, window_us);
	*near = cp_ensemble_recent(e, key, now_us, span_us);
	place = cp_ensemble_join(e, key, now_us, span_us, &evicted);
	spin_unlock_bh(&cocktail_ens_lock);
	if (evicted)
		cocktail_count(CC_ENSEMBLE_EVICT);
	return place;
}

/* ---- the shell the core runs in (cocktail_core.h) ------------------ */

#define CK_FN static

/* shell_param(name): the parameter's current value, read once. */
#define shell_param(name)	READ_ONCE(COCKTAIL_PARAM_##name)
#define COCKTAIL_PARAM_restart		cocktail_restart.val
#define COCKTAIL_PARAM_auto_rtt_us	cocktail_auto_rtt_us
#define COCKTAIL_PARAM_queue_pct	cocktail_queue_pct
#define COCKTAIL_PARAM_pace_rate	cocktail_pace_rate.val
#define COCKTAIL_PARAM_growth		cocktail_growth.val
#define COCKTAIL_PARAM_cwv		cocktail_cwv_mode
#define COCKTAIL_PARAM_nvp_s		cocktail_nvp_s
#define COCKTAIL_PARAM_pace_iw		cocktail_pace_iw
#define COCKTAIL_PARAM_pace_burst	cocktail_pace_burst
#define COCKTAIL_PARAM_ssthresh_est	cocktail_ssthresh_est
#define COCKTAIL_PARAM_check_rtt_pct	cocktail_check_rtt_pct
#define COCKTAIL_PARAM_check_rate_pct	cocktail_check_rate_pct
#define COCKTAIL_PARAM_check_rate_miss	cocktail_check_rate_miss
#define COCKTAIL_PARAM_probe_pct	cocktail_probe_pct
#define COCKTAIL_PARAM_wnd_cap		cocktail_wnd_cap
#define COCKTAIL_PARAM_queue_room	cocktail_queue_room
#define COCKTAIL_PARAM_shared_burst	cocktail_shared_burst
#define COCKTAIL_PARAM_shared_rtt	cocktail_shared_rtt
#define COCKTAIL_PARAM_pace_floor	cocktail_pace_floor
#define COCKTAIL_PARAM_ssr_floor	cocktail_ssr_floor
#define COCKTAIL_PARAM_quiet_pct	cocktail_quiet_pct
#define COCKTAIL_PARAM_ensemble		cocktail_ensemble

/*
 * The core's names for the socket, mapped onto the kernel's helpers and
 * this file's accessors; the ones below with a body of their own are
 * where the module differs from the BPF build.
 */
#define shell_ca(sk)			((struct cocktail *)inet_csk_ca(sk))
#define shell_tp(sk)			tcp_sk(sk)
#define shell_cwnd(tp)			cocktail_cwnd(tp)
#define shell_set_cwnd(tp, cwnd)	cocktail_set_cwnd(tp, cwnd)
#define shell_count(c)			cocktail_count(c)
#define shell_measure_rate(m)		cp_measure_rate(m)
#define shell_measure_flight(m)		cp_measure_flight(m)
#define shell_jiffies()			tcp_jiffies32
#define shell_hz()			HZ
#define shell_jiffies_to_ms(j)		jiffies_to_msecs(j)
#define shell_rto(sk)			inet_csk(sk)->icsk_rto
#define shell_srtt_us(tp)		cocktail_srtt_us(tp)
#define shell_min_rtt_us(tp)		tcp_min_rtt(tp)
#define shell_ca_state(sk)		inet_csk(sk)->icsk_ca_state
#define shell_in_slow_start(tp)		tcp_in_slow_start(tp)
#define shell_in_initial_slowstart(tp)	tcp_in_initial_slowstart(tp)
#define shell_packets_in_flight(tp)	tcp_packets_in_flight(tp)
#define shell_is_cwnd_limited(sk)	tcp_is_cwnd_limited(sk)
#define shell_rate_app_limited(tp)	((tp)->rate_app_limited)
#define shell_rwnd_limited(tp)		\
	((tp)->chrono_type == TCP_CHRONO_RWND_LIMITED)
#define shell_max_pacing_rate(sk)	READ_ONCE((sk)->sk_max_pacing_rate)
#define shell_iw_now(sk)		cocktail_iw_now(sk)
#define shell_set_iw(sk)		cocktail_set_iw(sk)
#define shell_pace_start(sk, rate)	cocktail_pace_start(sk, rate)
#define shell_pace_boost(sk, rate)	cocktail_pace_boost(sk, rate)
#define shell_pace_stop(sk, why, r)	cocktail_pace_stop(sk, why, r)
#define shell_app_limited_decay_ok(sk)	cocktail_app_limited_decay_ok(sk)
#define shell_ensemble(sk, span_us, window_us, others, near)	\
	cocktail_ensemble_place(sk, span_us, window_us, others, near)

/*
 * snd_cwnd_stamp = now on every ACK and transmit start keeps the
 * kernel's own RFC 2861 decay (tcp_cwnd_validate()) out: cwv decides.
 */
static inline void shell_stamp(struct sock *sk)
{
	tcp_sk(sk)->snd_cwnd_stamp = tcp_jiffies32;
}

static inline void shell_clear_used(struct sock *sk)
{
	tcp_sk(sk)->snd_cwnd_used = 0;
}

static inline void shell_emit_restart(struct sock *sk, enum cp_policy req,
				      enum cp_policy pol, u32 idle, u32 rto,
				      u32 srtt_us, u32 path_rtt_us,
				      u32 before, u64 rate)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	trace_cocktail_restart(sk, cocktail_policy_names[req],
			       cocktail_policy_names[pol],
			       cocktail_jiffies_to_us(idle),
			       jiffies_to_usecs(rto), srtt_us, path_rtt_us,
			       before, cocktail_cwnd(tp), tp->snd_ssthresh,
			       rate);
}

static inline void shell_emit_check(struct sock *sk, enum cp_check verdict,
				    u32 segs, u32 send_us, u32 rtt_us,
				    u64 ack_rate, u32 path_rtt_us)
{
	const struct cocktail *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	trace_cocktail_check(sk, cocktail_check_names[verdict], segs,
			     (u32)tp->tcp_mstamp - ca->train_us, send_us,
			     ca->pace_rate, ack_rate, rtt_us, path_rtt_us,
			     cocktail_cwnd(tp), tp->snd_ssthresh, ca->misses);
}

#include "cocktail_core.h"

/* ---- tcp_congestion_ops -------------------------------------------- */

static void cocktail_init(struct sock *sk)
{
	struct cocktail *ca = inet_csk_ca(sk);

	ck_init_state(sk);
	/*
	 * Switched to cocktail on a connection that another algorithm already
	 * ran (setsockopt(TCP_CONGESTION) after the handshake): keep its
	 * window.  icsk_ca_initialized says so; data_segs_out does not, since
	 * a TCP Fast Open client has sent data in its SYN before the first
	 * .init.
	 */
	if (inet_csk(sk)->icsk_ca_initialized)
		return;
	/* Before the handshake tcp_init_transfer() will reset cwnd later. */
	if (sk->sk_state == TCP_SYN_SENT)
		ca->iw_pending = 1;
	else
		cocktail_set_iw(sk);
}

static void cocktail_release(struct sock *sk)
{
	cocktail_pace_stop(sk, CC_PACE_ENDED_OTHER, CPE_RELEASE);
}

static u32 cocktail_min_tso_segs(struct sock *sk)
{
	return ck_min_tso_segs(sk, READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_min_tso_segs));
}

static struct tcp_congestion_ops cocktail __read_mostly = {
	.init		= cocktail_init,
	.release	= cocktail_release,
	.ssthresh	= ck_ssthresh,
	.undo_cwnd	= ck_undo_cwnd,
	.cong_avoid	= ck_cong_avoid,
	.pkts_acked	= ck_pkts_acked,
	.cwnd_event	= ck_cwnd_event,
	.in_ack_event	= ck_in_ack_event,
	.min_tso_segs	= cocktail_min_tso_segs,
	.owner		= THIS_MODULE,
	.name		= "cocktail",
};

static int __init cocktail_register(void)
{
	BUILD_BUG_ON(sizeof(struct cocktail) > ICSK_CA_PRIV_SIZE);
	BUILD_BUG_ON(ARRAY_SIZE(cocktail_counter_names) != CC_NR);
	return tcp_register_congestion_control(&cocktail);
}

static void __exit cocktail_unregister(void)
{
	tcp_unregister_congestion_control(&cocktail);
}

module_init(cocktail_register);
module_exit(cocktail_unregister);

/*
 * tcp_ca_find_autoload() calls request_module("tcp_%s", name), which finds
 * this module by its file name; the alias spells it out for modules.alias.
 */
MODULE_ALIAS("tcp-cocktail");
MODULE_AUTHOR("tcp-cocktail project");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("TCP cocktail: NewReno or CUBIC growth with initial-window, restart-after-idle (ssr/decay/keep/pace/auto/queue/measure) and window-validation policies");
