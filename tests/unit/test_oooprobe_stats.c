// SPDX-License-Identifier: GPL-2.0
/* Host unit tests for daemon/stats.c: percentiles, histogram edges, empty
 * input, the published ratios (McManus). Prints one line per failed check
 * and ends with "N passed, N failed".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int passed, failed;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		passed++;						\
	} else {							\
		failed++;						\
		printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);	\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	}								\
} while (0)

#define CHECK_U64(a, b) CHECK((a) == (b), "%llu != %llu", \
			      (unsigned long long)(a), (unsigned long long)(b))
#define CHECK_DBL(a, b) CHECK(fabs((a) - (b)) < 1e-9, "%.12g != %.12g", \
			      (double)(a), (double)(b))

static void test_empty(void)
{
	struct stats s;
	struct stats_summary o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	stats_init(&s);
	stats_summarize(&s, &o);
	CHECK_U64(o.flows, 0);
	CHECK(!o.have_holds, "have_holds on empty input");
	CHECK_U64(o.hold_median_ns, 0);
	CHECK_U64(o.hold_max_ns, 0);
	CHECK_DBL(o.flows_reordered_permille, 0);
	CHECK_DBL(o.reordered_pkts_permille, 0);
	CHECK_DBL(o.mean_pkts_reordered_flow, 0);
	CHECK_DBL(o.mean_pkts_clean_flow, 0);
	CHECK_U64(stats_percentile(&s, 50), 0);
	f = open_memstream(&buf, &len);
	stats_print(&s, f);
	fclose(f);
	CHECK(strstr(buf, "no out-of-order segment") != NULL, "%s", buf);
	CHECK(strstr(buf, "nan") == NULL, "nan in empty summary: %s", buf);
	free(buf);
	stats_free(&s);
}

static void test_percentiles(void)
{
	struct stats s;
	struct stats_summary o;
	int i;

	stats_init(&s);
	/* 1..100 ms in shuffled order */
	for (i = 0; i < 100; i++)
		stats_add_hold(&s, (uint64_t)((i * 37) % 100 + 1) * 1000000);
	stats_summarize(&s, &o);
	CHECK_U64(o.hold_median_ns, 50000000ULL);
	CHECK_U64(o.hold_p80_ns, 80000000ULL);
	CHECK_U64(o.hold_p90_ns, 90000000ULL);
	CHECK_U64(o.hold_p97_ns, 97000000ULL);
	CHECK_U64(o.hold_max_ns, 100000000ULL);
	CHECK_U64(o.segments, 100);
	CHECK_U64(o.hold_sum_ns, 5050ULL * 1000000);
	stats_free(&s);

	/* one sample: every percentile is that sample */
	stats_init(&s);
	stats_add_hold(&s, 7);
	CHECK_U64(stats_percentile(&s, 50), 7);
	CHECK_U64(stats_percentile(&s, 97), 7);
	CHECK_U64(stats_percentile(&s, 100), 7);
	CHECK_U64(stats_percentile(&s, 0), 0);	/* out of range */
	CHECK_U64(stats_percentile(&s, 101), 0);
	stats_free(&s);

	/* two samples: nearest-rank median is the lower one */
	stats_init(&s);
	stats_add_hold(&s, 30);
	stats_add_hold(&s, 10);
	CHECK_U64(stats_percentile(&s, 50), 10);
	CHECK_U64(stats_percentile(&s, 51), 30);
	/* adding after a sort re-sorts */
	stats_add_hold(&s, 5);
	CHECK_U64(stats_percentile(&s, 34), 10);
	CHECK_U64(stats_percentile(&s, 33), 5);
	stats_free(&s);
}

static void test_histogram_edges(void)
{
	struct stats s;
	int i;

	CHECK(stats_bucket(0) == 0, "0 -> %d", stats_bucket(0));
	CHECK(stats_bucket(100000) == 0, "100us -> %d", stats_bucket(100000));
	CHECK(stats_bucket(100001) == 1, "100us+1 -> %d", stats_bucket(100001));
	CHECK(stats_bucket(1000000) == 3, "1ms -> %d", stats_bucket(1000000));
	CHECK(stats_bucket(500000000000ULL) == STATS_NBUCKETS - 1,
	      "500s -> %d", stats_bucket(500000000000ULL));
	CHECK(stats_bucket(500000000001ULL) == STATS_NBUCKETS,
	      "500s+1 -> %d", stats_bucket(500000000001ULL));
	CHECK(stats_bucket(UINT64_MAX) == STATS_NBUCKETS, "max -> inf");
	for (i = 1; i < STATS_NBUCKETS; i++)
		CHECK(stats_bucket_le_ns[i] > stats_bucket_le_ns[i - 1],
		      "bounds not increasing at %d", i);
	/* each bound lands in its own bucket, bound+1 in the next */
	for (i = 0; i < STATS_NBUCKETS; i++) {
		CHECK(stats_bucket(stats_bucket_le_ns[i]) == i, "edge %d", i);
		CHECK(stats_bucket(stats_bucket_le_ns[i] + 1) == i + 1,
		      "edge %d + 1", i);
	}
	stats_init(&s);
	stats_add_hold(&s, 293000000);	/* 293 ms -> le 500 ms */
	stats_add_hold(&s, 150000000000ULL);	/* 2.5 min -> le 200 s */
	stats_add_hold(&s, 1000000000000ULL);	/* 1000 s -> +Inf */
	CHECK_U64(s.hist[11], 1);
	CHECK_U64(s.hist[19], 1);
	CHECK_U64(s.hist[STATS_NBUCKETS], 1);
	stats_free(&s);
}

static void test_published_ratios(void)
{
	struct stats s;
	struct stats_summary o;
	int i;

	/* 3 clean flows of 10, 20, 30 packets; 1 flow of 1000 with 50 ooo */
	stats_init(&s);
	stats_add_flow(&s, 10, 0);
	stats_add_flow(&s, 20, 0);
	stats_add_flow(&s, 30, 0);
	stats_add_flow(&s, 1000, 50);
	stats_summarize(&s, &o);
	CHECK_U64(o.flows, 4);
	CHECK_U64(o.flows_reordered, 1);
	CHECK_DBL(o.flows_reordered_permille, 250.0);
	CHECK_U64(o.data_pkts, 1060);
	CHECK_U64(o.reordered_pkts, 50);
	CHECK_DBL(o.reordered_pkts_permille, 1000.0 * 50 / 1060);
	CHECK_DBL(o.mean_pkts_reordered_flow, 1000.0);
	CHECK_DBL(o.mean_pkts_clean_flow, 20.0);
	stats_free(&s);

	/* only reordered flows: clean mean is 0, not NaN */
	stats_init(&s);
	for (i = 0; i < 3; i++)
		stats_add_flow(&s, 100, 1);
	stats_summarize(&s, &o);
	CHECK_DBL(o.mean_pkts_clean_flow, 0.0);
	CHECK_DBL(o.flows_reordered_permille, 1000.0);
	stats_free(&s);
}

static void test_prom(void)
{
	struct stats s;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	stats_init(&s);
	stats_add_hold(&s, 1000000);	/* 1 ms */
	stats_add_hold(&s, 3000000);	/* 3 ms */
	f = open_memstream(&buf, &len);
	stats_print_prom(&s, f);
	fclose(f);
	CHECK(strstr(buf, "oooprobe_hold_seconds_bucket{le=\"0.001\"} 1\n") != NULL, "%s", buf);
	CHECK(strstr(buf, "oooprobe_hold_seconds_bucket{le=\"0.002\"} 1\n") != NULL, "le 2ms");
	CHECK(strstr(buf, "oooprobe_hold_seconds_bucket{le=\"0.005\"} 2\n") != NULL, "le 5ms cumulative");
	CHECK(strstr(buf, "oooprobe_hold_seconds_bucket{le=\"+Inf\"} 2\n") != NULL, "+Inf");
	CHECK(strstr(buf, "oooprobe_hold_seconds_count 2\n") != NULL, "count");
	CHECK(strstr(buf, "oooprobe_hold_seconds_sum 0.004000000\n") != NULL, "sum");
	free(buf);
	stats_free(&s);
}

int main(void)
{
	test_empty();
	test_percentiles();
	test_histogram_edges();
	test_published_ratios();
	test_prom();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
