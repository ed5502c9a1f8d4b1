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

struct stats {
	uint64_t flows;			/* FLOW events */
	uint64_t flows_reordered;	/* ... with ooo_segs > 0 */
	uint64_t data_pkts;		/* sum of data_segs_in */
	uint64_t data_pkts_reordered;	/* ... of flows with reordering */
	uint64_t reordered_pkts;	/* sum of ooo_segs */
	uint64_t segments;		/* SEGMENT events (hold samples) */
	uint64_t hold_sum_ns;
	uint64_t hist[STATS_NBUCKETS + 1];
	uint64_t *holds;		/* every hold time, for percentiles */
	size_t nholds, cap;
	int sorted;
};

struct stats_summary {
	uint64_t flows, flows_reordered, data_pkts, reordered_pkts, segments;
	double flows_reordered_permille;	/* 0 when no flows */
	double reordered_pkts_permille;		/* 0 when no data packets */
	double mean_pkts_reordered_flow;	/* 0 when no such flow */
	double mean_pkts_clean_flow;
	int have_holds;				/* 0: the hold fields are 0 */
	uint64_t hold_median_ns, hold_p80_ns, hold_p90_ns, hold_p97_ns;
	uint64_t hold_max_ns, hold_sum_ns;
};

void stats_init(struct stats *s);
void stats_free(struct stats *s);
void stats_add_flow(struct stats *s, uint64_t data_segs_in, uint64_t ooo_segs);
/* Returns -1 when out of memory (the sample still counts in the histogram). */
int stats_add_hold(struct stats *s, uint64_t hold_ns);
int stats_bucket(uint64_t hold_ns);
/* Nearest-rank percentile (0 < p <= 100) of the hold times; 0 if none. */
uint64_t stats_percentile(struct stats *s, double p);
void stats_summarize(struct stats *s, struct stats_summary *out);
/* Human summary, with the statistics of that post. */
void stats_print(struct stats *s, FILE *f);
/* Prometheus text format (metrics prefixed "oooprobe_"). */
void stats_print_prom(struct stats *s, FILE *f);

#endif
