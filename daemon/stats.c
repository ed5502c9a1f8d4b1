// SPDX-License-Identifier: GPL-2.0
/* oooprobed statistics; see stats.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

#define US 1000ULL
#define MS 1000000ULL
#define S 1000000000ULL

const uint64_t stats_bucket_le_ns[STATS_NBUCKETS] = {
	100 * US, 200 * US, 500 * US,
	1 * MS, 2 * MS, 5 * MS,
	10 * MS, 20 * MS, 50 * MS,
	100 * MS, 200 * MS, 500 * MS,
	1 * S, 2 * S, 5 * S,
	10 * S, 20 * S, 50 * S,
	100 * S, 200 * S, 500 * S,
};

void stats_init(struct stats *s)
{
	memset(s, 0, sizeof(*s));
}

void stats_free(struct stats *s)
{
	stats_init(s);
}

void stats_add_flow(struct stats *s, uint64_t data_segs_in, uint64_t ooo_segs)
{
	s->flows++;
	s->data_pkts += data_segs_in;
	s->reordered_pkts += ooo_segs;
	if (ooo_segs) {
		s->flows_reordered++;
		s->data_pkts_reordered += data_segs_in;
	}
}

int stats_bucket(uint64_t hold_ns)
{
	int lo = 0, hi = STATS_NBUCKETS;

	/* first bound >= hold_ns */
	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (stats_bucket_le_ns[mid] >= hold_ns)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

unsigned int stats_sketch_index(uint64_t v)
{
	unsigned int e;

	if (v < STATS_SUB)
		return (unsigned int)v;
	e = 63 - (unsigned int)__builtin_clzll(v);	/* >= STATS_SUB_BITS */
	return (e - STATS_SUB_BITS + 1) * STATS_SUB +
	       (unsigned int)((v >> (e - STATS_SUB_BITS)) & (STATS_SUB - 1));
}

void stats_sketch_bounds(unsigned int i, uint64_t *lo, uint64_t *hi)
{
	unsigned int shift;

	if (i < STATS_SUB) {
		*lo = *hi = i;
		return;
	}
	shift = i / STATS_SUB - 1;
	*lo = (uint64_t)(STATS_SUB + i % STATS_SUB) << shift;
	*hi = *lo + ((1ULL << shift) - 1);
}

void stats_add_hold(struct stats *s, uint64_t hold_ns)
{
	if (!s->segments || hold_ns < s->hold_min_ns)
		s->hold_min_ns = hold_ns;
	if (!s->segments || hold_ns > s->hold_max_ns)
		s->hold_max_ns = hold_ns;
	if (s->segments < STATS_EXACT) {
		s->exact[s->segments] = hold_ns;
		s->sorted = 0;
	}
	s->segments++;
	s->hold_sum_ns += hold_ns;
	s->hist[stats_bucket(hold_ns)]++;
	s->sketch[stats_sketch_index(hold_ns)]++;
}

/*
 * In-place heapsort: no allocation (glibc's qsort mallocs a buffer the size
 * of the array, which would stay in the heap and grow the daemon's RSS).
 */
static void sift_down(uint64_t *a, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		uint64_t t;

		if (child >= n)
			return;
		if (child + 1 < n && a[child + 1] > a[child])
			child++;
		if (a[root] >= a[child])
			return;
		t = a[root];
		a[root] = a[child];
		a[child] = t;
		root = child;
	}
}

static void sort_u64(uint64_t *a, size_t n)
{
	size_t i;
	uint64_t t;

	for (i = n / 2; i-- > 0;)
		sift_down(a, i, n);
	for (i = n; i-- > 1;) {
		t = a[0];
		a[0] = a[i];
		a[i] = t;
		sift_down(a, 0, i);
	}
}

uint64_t stats_percentile(struct stats *s, double p)
{
	uint64_t rank, cum = 0, lo, hi, v;
	unsigned int i;

	if (!s->segments || !(p > 0) || p > 100)
		return 0;
	/* nearest rank: the smallest value with at least p% at or below */
	rank = (uint64_t)ceil(p / 100.0 * (double)s->segments - 1e-9);
	if (rank < 1)
		rank = 1;
	if (rank >= s->segments)
		return s->hold_max_ns;
	if (s->segments <= STATS_EXACT) {
		if (!s->sorted) {
			sort_u64(s->exact, s->segments);
			s->sorted = 1;
		}
		return s->exact[rank - 1];
	}
	for (i = 0; i < STATS_NSKETCH; i++) {
		cum += s->sketch[i];
		if (cum >= rank)
			break;
	}
	stats_sketch_bounds(i, &lo, &hi);
	v = lo + (hi - lo) / 2;
	if (v < s->hold_min_ns)
		v = s->hold_min_ns;
	if (v > s->hold_max_ns)
		v = s->hold_max_ns;
	return v;
}

void seqwin_init(struct seqwin *w)
{
	memset(w, 0, sizeof(*w));
}

static int seqwin_test(const struct seqwin *w, uint64_t n)
{
	return (w->seen[(n % SEQWIN) / 64] >> (n % 64)) & 1;
}

static void seqwin_set(struct seqwin *w, uint64_t n, int on)
{
	uint64_t bit = 1ULL << (n % 64);

	if (on)
		w->seen[(n % SEQWIN) / 64] |= bit;
	else
		w->seen[(n % SEQWIN) / 64] &= ~bit;
}

uint64_t seqwin_pending(const struct seqwin *w)
{
	uint64_t seen = 0;
	unsigned int i;

	if (!w->started)
		return 0;
	for (i = 0; i < SEQWIN / 64; i++)
		seen += (uint64_t)__builtin_popcountll(w->seen[i]);
	return SEQWIN - seen;
}

void seqwin_add(struct seqwin *w, uint64_t n)
{
	int64_t d;
	uint64_t k;

	if (!w->started) {
		/* everything before the first number is not ours */
		memset(w->seen, 0xff, sizeof(w->seen));
		w->hi = w->base = n;
		w->started = 1;
		return;
	}
	d = (int64_t)(n - w->hi);
	if (d > 0) {
		if ((uint64_t)d >= SEQWIN) {
			/* the whole window falls out, and the numbers
			 * between it and the new one's window
			 */
			w->lost += seqwin_pending(w) + ((uint64_t)d - SEQWIN);
			memset(w->seen, 0, sizeof(w->seen));
		} else {
			/* slot hi + k holds hi + k - SEQWIN, leaving now */
			for (k = 1; k <= (uint64_t)d; k++) {
				if (!seqwin_test(w, w->hi + k))
					w->lost++;
				seqwin_set(w, w->hi + k, 0);
			}
		}
		w->hi = n;
		seqwin_set(w, n, 1);
		return;
	}
	if (d <= -(int64_t)SEQWIN) {
		/* counted lost when it left the window: credit it back */
		if (w->lost)
			w->lost--;
		w->late++;
		return;
	}
	if (w->hi - w->base < SEQWIN && (int64_t)(n - w->base) < 0) {
		/* before the first one seen, overtaken by it: on time */
		w->reordered++;
		return;
	}
	if (seqwin_test(w, n)) {
		w->dups++;
		return;
	}
	seqwin_set(w, n, 1);
	w->reordered++;
}

void seqwin_flush(struct seqwin *w)
{
	w->lost += seqwin_pending(w);
	w->started = 0;
}

void stats_summarize(struct stats *s, struct stats_summary *o)
{
	uint64_t clean_flows = s->flows - s->flows_reordered;

	memset(o, 0, sizeof(*o));
	o->flows = s->flows;
	o->flows_reordered = s->flows_reordered;
	o->data_pkts = s->data_pkts;
	o->reordered_pkts = s->reordered_pkts;
	o->segments = s->segments;
	if (s->flows)
		o->flows_reordered_permille =
			1000.0 * (double)s->flows_reordered / (double)s->flows;
	if (s->data_pkts)
		o->reordered_pkts_permille =
			1000.0 * (double)s->reordered_pkts / (double)s->data_pkts;
	if (s->flows_reordered)
		o->mean_pkts_reordered_flow = (double)s->data_pkts_reordered /
					      (double)s->flows_reordered;
	if (clean_flows)
		o->mean_pkts_clean_flow =
			(double)(s->data_pkts - s->data_pkts_reordered) /
			(double)clean_flows;
	o->have_holds = s->segments > 0;
	o->holds_exact = s->segments <= STATS_EXACT;
	o->hold_median_ns = stats_percentile(s, 50);
	o->hold_p80_ns = stats_percentile(s, 80);
	o->hold_p90_ns = stats_percentile(s, 90);
	o->hold_p97_ns = stats_percentile(s, 97);
	o->hold_max_ns = stats_percentile(s, 100);
	o->hold_sum_ns = s->hold_sum_ns;
}

static void fmt_le(char *buf, size_t n, uint64_t ns)
{
	if (ns < MS)
		snprintf(buf, n, "%llu us", (unsigned long long)(ns / US));
	else if (ns < S)
		snprintf(buf, n, "%llu ms", (unsigned long long)(ns / MS));
	else
		snprintf(buf, n, "%llu s", (unsigned long long)(ns / S));
}

void stats_print(struct stats *s, FILE *f)
{
	struct stats_summary o;
	uint64_t maxc = 0;
	int i;

	stats_summarize(s, &o);
	fprintf(f, "flows: %llu\n", (unsigned long long)o.flows);
	fprintf(f, "flows with reordering: %llu (%.1f per thousand)\n",
		(unsigned long long)o.flows_reordered,
		o.flows_reordered_permille);
	fprintf(f, "data packets: %llu\n", (unsigned long long)o.data_pkts);
	fprintf(f, "reordered packets: %llu (%.1f per thousand)\n",
		(unsigned long long)o.reordered_pkts,
		o.reordered_pkts_permille);
	fprintf(f, "mean data packets per flow: %.1f with reordering, %.1f without\n",
		o.mean_pkts_reordered_flow, o.mean_pkts_clean_flow);
	if (!o.have_holds) {
		fprintf(f, "hold time: no out-of-order segment released yet\n");
		return;
	}
	fprintf(f, "hold time (%llu segments): median %.3f ms, p80 %.3f ms, p90 %.3f ms, p97 %.3f ms, max %.3f ms\n",
		(unsigned long long)o.segments, o.hold_median_ns / 1e6,
		o.hold_p80_ns / 1e6, o.hold_p90_ns / 1e6, o.hold_p97_ns / 1e6,
		o.hold_max_ns / 1e6);
	if (!o.holds_exact)
		fprintf(f, "  (quantiles from the log-linear histogram past %u samples: within 1/256 of the exact value; max exact)\n",
			STATS_EXACT);
	for (i = 0; i <= STATS_NBUCKETS; i++)
		if (s->hist[i] > maxc)
			maxc = s->hist[i];
	fprintf(f, "hold time histogram (upper bound: segments):\n");
	for (i = 0; i <= STATS_NBUCKETS; i++) {
		char le[32];
		int bar;

		if (!s->hist[i])
			continue;
		if (i < STATS_NBUCKETS)
			fmt_le(le, sizeof(le), stats_bucket_le_ns[i]);
		else
			snprintf(le, sizeof(le), "inf");
		bar = (int)(40.0 * (double)s->hist[i] / (double)maxc + 0.5);
		fprintf(f, "  <= %-7s %10llu %.*s\n", le,
			(unsigned long long)s->hist[i], bar,
			"########################################");
	}
}

void stats_print_prom(struct stats *s, FILE *f)
{
	struct stats_summary o;
	uint64_t cum = 0;
	int i;

	stats_summarize(s, &o);
#define PROM(name, type, help, fmt, val) \
	fprintf(f, "# HELP oooprobe_" name " " help "\n# TYPE oooprobe_" \
		name " " type "\noooprobe_" name " " fmt "\n", val)
	PROM("flows_total", "counter", "Closed TCP flows reported.",
	     "%llu", (unsigned long long)o.flows);
	PROM("flows_reordered_total", "counter",
	     "Closed flows that had out-of-order data.", "%llu",
	     (unsigned long long)o.flows_reordered);
	PROM("data_packets_total", "counter",
	     "Data segments received by closed flows.", "%llu",
	     (unsigned long long)o.data_pkts);
	PROM("reordered_packets_total", "counter",
	     "Segments of closed flows that arrived out of order.", "%llu",
	     (unsigned long long)o.reordered_pkts);
	fprintf(f, "# HELP oooprobe_hold_seconds Time out-of-order segments waited for the hole before them to fill.\n");
	fprintf(f, "# TYPE oooprobe_hold_seconds histogram\n");
	for (i = 0; i < STATS_NBUCKETS; i++) {
		cum += s->hist[i];
		fprintf(f, "oooprobe_hold_seconds_bucket{le=\"%g\"} %llu\n",
			stats_bucket_le_ns[i] / 1e9, (unsigned long long)cum);
	}
	cum += s->hist[STATS_NBUCKETS];
	fprintf(f, "oooprobe_hold_seconds_bucket{le=\"+Inf\"} %llu\n",
		(unsigned long long)cum);
	fprintf(f, "oooprobe_hold_seconds_sum %.9f\n", s->hold_sum_ns / 1e9);
	fprintf(f, "oooprobe_hold_seconds_count %llu\n",
		(unsigned long long)s->segments);
	fprintf(f, "# HELP oooprobe_hold_quantile_seconds Hold time quantiles since start (nearest rank; exact up to %u samples, then within 1/256).\n",
		STATS_EXACT);
	fprintf(f, "# TYPE oooprobe_hold_quantile_seconds gauge\n");
	if (o.have_holds) {
		fprintf(f, "oooprobe_hold_quantile_seconds{quantile=\"0.5\"} %.9f\n", o.hold_median_ns / 1e9);
		fprintf(f, "oooprobe_hold_quantile_seconds{quantile=\"0.8\"} %.9f\n", o.hold_p80_ns / 1e9);
		fprintf(f, "oooprobe_hold_quantile_seconds{quantile=\"0.9\"} %.9f\n", o.hold_p90_ns / 1e9);
		fprintf(f, "oooprobe_hold_quantile_seconds{quantile=\"0.97\"} %.9f\n", o.hold_p97_ns / 1e9);
		fprintf(f, "oooprobe_hold_quantile_seconds{quantile=\"1\"} %.9f\n", o.hold_max_ns / 1e9);
	}
#undef PROM
}
