/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oooprobed statistics: the numbers of Patrick McManus's "Long Out Of Order
 * Queueing Delays" (2010), computed from tcp_oooprobe FLOW and SEGMENT
 * events. No netlink here, so the host unit tests can drive it directly.
 */
#ifndef OOOPROBED_STATS_H
#define OOOPROBED_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Log-scale (1-2-5) histogram of hold times; upper bounds in ns, a value
 * goes to the first bucket whose bound is >= it (Prometheus "le"), values
 * above the last bound to the +Inf bucket (index STATS_NBUCKETS).
 */
#define STATS_NBUCKETS 21
extern const uint64_t stats_bucket_le_ns[STATS_NBUCKETS];

/*
 * Hold-time quantiles in bounded memory. Up to STATS_EXACT samples are kept
 * as they are and the quantiles are exact. From then on they come from a
 * log-linear histogram: values below 2^STATS_SUB_BITS ns have a bucket each,
 * above that every power of two is split into 2^STATS_SUB_BITS equal
 * buckets, so a bucket's width is at most 1/2^STATS_SUB_BITS of its lower
 * bound. The quantile reported is the midpoint of the bucket holding the
 * nearest-rank sample (clamped to the smallest and largest sample seen):
 * less than 1/2^(STATS_SUB_BITS + 1) = 1/256 of the exact value away from
 * it. The maximum is always exact. The histogram is always kept, so the
 * switch needs no pass over the samples; both live inside struct stats,
 * whose size never changes.
 */
#define STATS_SUB_BITS	7	/* 128 buckets per power of two: 1/256 error */
#define STATS_SUB	(1u << STATS_SUB_BITS)
/* bucket count: the exact values below STATS_SUB, then powers 7..63 */
#define STATS_NSKETCH	((64 - STATS_SUB_BITS + 1) * STATS_SUB)
/* samples kept exactly: 512 KiB; a bench run of a few minutes fits */
#define STATS_EXACT	65536

struct stats {
	uint64_t flows;			/* FLOW events */
	uint64_t flows_reordered;	/* ... with ooo_segs > 0 */
	uint64_t data_pkts;		/* sum of data_segs_in */
	uint64_t data_pkts_reordered;	/* ... of flows with reordering */
	uint64_t reordered_pkts;	/* sum of ooo_segs */
	uint64_t segments;		/* SEGMENT events (hold samples) */
	uint64_t hold_sum_ns;
	uint64_t hold_min_ns, hold_max_ns;	/* valid when segments > 0 */
	uint64_t hist[STATS_NBUCKETS + 1];
	uint64_t sketch[STATS_NSKETCH];	/* log-linear histogram, counts */
	uint64_t exact[STATS_EXACT];	/* the first STATS_EXACT hold times */
	int sorted;			/* exact[0..segments) is sorted */
};

struct stats_summary {
	uint64_t flows, flows_reordered, data_pkts, reordered_pkts, segments;
	double flows_reordered_permille;	/* 0 when no flows */
	double reordered_pkts_permille;		/* 0 when no data packets */
	double mean_pkts_reordered_flow;	/* 0 when no such flow */
	double mean_pkts_clean_flow;
	int have_holds;				/* 0: the hold fields are 0 */
	int holds_exact;			/* 1: quantiles are exact */
	uint64_t hold_median_ns, hold_p80_ns, hold_p90_ns, hold_p97_ns;
	uint64_t hold_max_ns, hold_sum_ns;
};

/* stats_init touches all of *s, so its memory is resident from the start. */
void stats_init(struct stats *s);
void stats_free(struct stats *s);
void stats_add_flow(struct stats *s, uint64_t data_segs_in, uint64_t ooo_segs);
void stats_add_hold(struct stats *s, uint64_t hold_ns);
int stats_bucket(uint64_t hold_ns);
/* Log-linear bucket of a hold time and the bounds of a bucket. */
unsigned int stats_sketch_index(uint64_t v);
void stats_sketch_bounds(unsigned int i, uint64_t *lo, uint64_t *hi);
/*
 * Nearest-rank percentile (0 < p <= 100) of the hold times; 0 if none.
 * Exact for the first STATS_EXACT samples, then within 1/256 (see above).
 */
uint64_t stats_percentile(struct stats *s, double p);
void stats_summarize(struct stats *s, struct stats_summary *out);
/*
 * Event numbers (EVENT_SEQ, 1 per event, module-wide) arrive almost in
 * order: the module numbers an event when it builds it and sends it after,
 * so an event built on one CPU can overtake one built just before on
 * another. A number becomes lost only when it falls SEQWIN numbers behind
 * the highest one seen without having arrived; until then it is missing
 * (pending). A number arriving below the highest is counted reordered, one
 * seen again inside the window a duplicate; one arriving after it was
 * counted lost is credited back (late). Numbers compare as serial numbers
 * (mod 2^64), so wrapping is no gap. Numbers before the first one seen are
 * not ours to miss; one that arrives anyway, within the window, counts as
 * reordered.
 */
#define SEQWIN 4096	/* numbers; far more than CPUs can interleave */

struct seqwin {
	uint64_t hi;			/* highest number seen */
	uint64_t base;			/* first number seen */
	int started;			/* 0: no number seen yet */
	uint64_t lost;			/* fell out of the window unseen */
	uint64_t late;			/* arrived after being counted lost */
	uint64_t reordered;		/* arrived after a higher one */
	uint64_t dups;			/* seen twice within the window */
	/* bit n % SEQWIN: n arrived, for n in (hi - SEQWIN, hi] */
	uint64_t seen[SEQWIN / 64];
};

void seqwin_init(struct seqwin *w);
void seqwin_add(struct seqwin *w, uint64_t n);
/* Numbers missing inside the window (not yet lost). */
uint64_t seqwin_pending(const struct seqwin *w);
/* The numbering ends (module gone, daemon exits): what is missing is lost;
 * the next number seen starts a new window. The counters stay.
 */
void seqwin_flush(struct seqwin *w);

/* Human summary, with the statistics of that post. */
void stats_print(struct stats *s, FILE *f);
/* Prometheus text format (metrics prefixed "oooprobe_"). */
void stats_print_prom(struct stats *s, FILE *f);

#endif
