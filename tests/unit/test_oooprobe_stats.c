// SPDX-License-Identifier: GPL-2.0
/* Host unit tests for daemon/stats.c and daemon/event.c: percentiles
 * (exact, then from the log-linear histogram within its stated bound, in
 * memory that does not grow), histogram edges, empty input, the published
 * ratios (McManus), the event-number window (reordered, duplicated, lost,
 * wrapped numbers) and the event parser's checks. Prints one line per
 * failed check and ends with "N passed, N failed".
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include "event.h"
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

/* struct stats is large (the exact samples): tests share one, off the stack */
static struct stats s;

static void test_empty(void)
{
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


/* ---- quantiles past the exact samples ------------------------------------ */

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t xorshift(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* uniform in (0, 1) */
static double unif(void)
{
	return ((double)(xorshift() >> 11) + 0.5) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_sketch_buckets(void)
{
	uint64_t lo, hi, prev_hi = 0, v;
	unsigned int i;
	int k, bad = 0;

	/* the buckets tile 0..UINT64_MAX, each no wider than lo/128 */
	for (i = 0; i < STATS_NSKETCH; i++) {
		stats_sketch_bounds(i, &lo, &hi);
		if (i && lo != prev_hi + 1)
			bad++;
		if (lo >= STATS_SUB && (hi - lo + 1) * STATS_SUB > lo)
			bad++;
		if (stats_sketch_index(lo) != i || stats_sketch_index(hi) != i)
			bad++;
		prev_hi = hi;
	}
	CHECK(bad == 0, "%d bucket bounds wrong", bad);
	CHECK_U64(prev_hi, UINT64_MAX);
	CHECK_U64(stats_sketch_index(0), 0);
	CHECK_U64(stats_sketch_index(UINT64_MAX), STATS_NSKETCH - 1);
	for (k = 0; k < 100000; k++) {
		v = xorshift() >> (xorshift() % 64);
		i = stats_sketch_index(v);
		stats_sketch_bounds(i, &lo, &hi);
		if (i >= STATS_NSKETCH || v < lo || v > hi)
			bad++;
	}
	CHECK(bad == 0, "%d values outside their bucket", bad);
}

enum dist { D_UNIFORM, D_EXP, D_LOGNORMAL, D_BIMODAL, D_CONST, D_TINY,
	    D_HUGE, D_NDIST };
static const char *const dist_name[D_NDIST] = {
	"uniform 1ms-1s", "exponential mean 50ms", "lognormal", "bimodal",
	"constant", "below 128 ns", "up to 2^63",
};

static uint64_t draw(enum dist d)
{
	switch (d) {
	case D_UNIFORM:
		return 1000000 + (uint64_t)(unif() * 999e6);
	case D_EXP:
		return (uint64_t)(-log(unif()) * 50e6);
	case D_LOGNORMAL: {
		/* Box-Muller; median e^16 ns (~9 ms), sigma 2 */
		double z = sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());

		return (uint64_t)exp(16 + 2 * z);
	}
	case D_BIMODAL:
		return xorshift() % 2 ? 80000 + xorshift() % 40000 :
			2000000000ULL + xorshift() % 100000000;
	case D_CONST:
		return 293000000;
	case D_TINY:
		return xorshift() % 128;
	default:
		return xorshift() >> 1;
	}
}

/*
 * Every distribution, past the exact samples: each quantile is within 1/256
 * of the exact nearest-rank value computed from all the samples, and the
 * maximum is exact.
 */
static void test_sketch_error(void)
{
	static const double ps[] = { 0.1, 1, 10, 25, 50, 80, 90, 97, 99, 99.9,
				     99.99, 100 };
	const size_t n = 4 * STATS_EXACT + 12345;
	uint64_t *all = malloc(n * sizeof(*all));
	double worst = 0;
	size_t i, j;
	int d;

	for (d = 0; d < D_NDIST; d++) {
		stats_init(&s);
		for (i = 0; i < n; i++) {
			all[i] = draw(d);
			stats_add_hold(&s, all[i]);
		}
		qsort(all, n, sizeof(*all), cmp_u64);
		for (j = 0; j < sizeof(ps) / sizeof(ps[0]); j++) {
			size_t rank = (size_t)ceil(ps[j] / 100.0 * (double)n - 1e-9);
			uint64_t want = all[rank - 1];
			uint64_t got = stats_percentile(&s, ps[j]);
			uint64_t err = got > want ? got - want : want - got;

			if (want && (double)err / (double)want > worst)
				worst = (double)err / (double)want;
			/* err <= want / 256, in integers */
			CHECK(err <= want / 256, "%s p%g: %llu, exact %llu",
			      dist_name[d], ps[j], (unsigned long long)got,
			      (unsigned long long)want);
		}
		CHECK_U64(stats_percentile(&s, 100), all[n - 1]);
	}
	printf("sketch: worst relative quantile error %.5f (bound %.5f)\n",
	       worst, 1.0 / 256);
	free(all);
}

/* Exact up to STATS_EXACT samples, the bound from one more. */
static void test_exact_to_sketch(void)
{
	struct stats_summary o;
	uint64_t i;

	stats_init(&s);
	for (i = 1; i <= STATS_EXACT; i++)
		stats_add_hold(&s, 1000003 * i);
	stats_summarize(&s, &o);
	CHECK(o.holds_exact, "exact at %u samples", STATS_EXACT);
	CHECK_U64(o.hold_median_ns, 1000003ULL * (STATS_EXACT / 2));
	stats_add_hold(&s, 1000003 * i);
	stats_summarize(&s, &o);
	CHECK(!o.holds_exact, "sketch past %u samples", STATS_EXACT);
	/* nearest rank of 50% of STATS_EXACT + 1 samples */
	i = 1000003ULL * (STATS_EXACT / 2 + 1);
	CHECK(o.hold_median_ns >= i - i / 256 && o.hold_median_ns <= i + i / 256,
	      "median %llu, exact %llu", (unsigned long long)o.hold_median_ns,
	      (unsigned long long)i);
	CHECK_U64(o.hold_max_ns, 1000003ULL * (STATS_EXACT + 1));
}

/*
 * Memory does not grow with the samples: two million hold times and
 * quantiles taken along the way (also over all the exact samples, sorted
 * in place) allocate nothing.
 */
static void test_flat_memory(void)
{
	struct stats *h = malloc(sizeof(*h));
	struct mallinfo2 a, b;
	uint64_t i, q = 0;

	stats_init(h);
	a = mallinfo2();
	for (i = 0; i < 2000000; i++) {
		stats_add_hold(h, draw(D_LOGNORMAL));
		if (i % 500000 == 0 || i == STATS_EXACT - 1)
			q += stats_percentile(h, 90);
	}
	q += stats_percentile(h, 50);
	b = mallinfo2();
	CHECK(q > 0, "no quantile");
	CHECK_U64(b.uordblks, a.uordblks);
	CHECK_U64(b.hblkhd, a.hblkhd);
	CHECK_U64(h->segments, 2000000);
	free(h);
}

/* ---- event numbers -------------------------------------------------------- */

static struct seqwin w;

static void test_seqwin_basic(void)
{
	uint64_t n;

	/* in order, starting anywhere: nothing lost */
	seqwin_init(&w);
	for (n = 1000; n < 1000 + 3 * SEQWIN; n++)
		seqwin_add(&w, n);
	CHECK_U64(w.lost, 0);
	CHECK_U64(w.reordered, 0);
	CHECK_U64(seqwin_pending(&w), 0);

	/* two CPUs: pairs swapped, and a late one up to the window's edge */
	seqwin_init(&w);
	seqwin_add(&w, 1);
	seqwin_add(&w, 3);
	seqwin_add(&w, 2);
	CHECK_U64(w.reordered, 1);
	CHECK_U64(seqwin_pending(&w), 0);
	for (n = 5; n < 4 + SEQWIN; n++)
		seqwin_add(&w, n);
	CHECK_U64(seqwin_pending(&w), 1);	/* 4, not yet lost */
	CHECK_U64(w.lost, 0);
	seqwin_add(&w, 4);			/* SEQWIN - 1 behind: in time */
	CHECK_U64(w.lost, 0);
	CHECK_U64(w.reordered, 2);
	CHECK_U64(seqwin_pending(&w), 0);

	/* a real gap: lost once it leaves the window, credited if it comes */
	seqwin_init(&w);
	seqwin_add(&w, 1);
	for (n = 3; n <= 2 + SEQWIN; n++)
		seqwin_add(&w, n);
	CHECK_U64(w.lost, 1);			/* 2 left the window */
	CHECK_U64(seqwin_pending(&w), 0);
	seqwin_add(&w, 2);
	CHECK_U64(w.lost, 0);
	CHECK_U64(w.late, 1);

	/* duplicates inside the window: counted, nothing lost or reordered */
	seqwin_init(&w);
	for (n = 1; n <= 100; n++) {
		seqwin_add(&w, n);
		seqwin_add(&w, n);
		seqwin_add(&w, n > 10 ? n - 10 : n);
	}
	CHECK_U64(w.dups, 200);
	CHECK_U64(w.lost, 0);
	CHECK_U64(w.reordered, 0);

	/* a jump past the window: everything between is lost at once */
	seqwin_init(&w);
	seqwin_add(&w, 10);
	seqwin_add(&w, 12);			/* 11 missing */
	seqwin_add(&w, 12 + 5 * SEQWIN);
	/* 11 and 13..11 + 5 SEQWIN missing; the last SEQWIN - 1 still in */
	CHECK_U64(w.lost, 5 * SEQWIN - (SEQWIN - 1));
	CHECK_U64(seqwin_pending(&w), SEQWIN - 1);
	seqwin_add(&w, 10 + 5 * SEQWIN);	/* one of those, in time */
	CHECK_U64(seqwin_pending(&w), SEQWIN - 2);
	CHECK_U64(w.late, 0);

	/* started late: numbers before the first seen are on time */
	seqwin_init(&w);
	seqwin_add(&w, 500);
	seqwin_add(&w, 498);
	seqwin_add(&w, 501);
	seqwin_add(&w, 499);
	CHECK_U64(w.reordered, 2);
	CHECK_U64(w.dups, 0);
	CHECK_U64(seqwin_pending(&w), 0);

	/* the end: what is missing is lost; the next number starts afresh */
	seqwin_init(&w);
	seqwin_add(&w, 1);
	seqwin_add(&w, 4);
	CHECK_U64(seqwin_pending(&w), 2);
	seqwin_flush(&w);
	CHECK_U64(w.lost, 2);
	CHECK_U64(seqwin_pending(&w), 0);
	seqwin_add(&w, 1);			/* the module loaded again */
	seqwin_add(&w, 2);
	CHECK_U64(w.lost, 2);
	CHECK_U64(w.dups, 0);
}

/* Wrapping at 2^64 is no gap, in order or reordered across the wrap. */
static void test_seqwin_wrap(void)
{
	uint64_t n;

	seqwin_init(&w);
	for (n = UINT64_MAX - 100; n != 100; n++)
		seqwin_add(&w, n);
	CHECK_U64(w.lost, 0);
	CHECK_U64(w.reordered, 0);
	seqwin_init(&w);
	seqwin_add(&w, UINT64_MAX - 1);
	seqwin_add(&w, 1);
	seqwin_add(&w, UINT64_MAX);
	seqwin_add(&w, 0);
	CHECK_U64(w.reordered, 2);
	CHECK_U64(seqwin_pending(&w), 0);
	seqwin_add(&w, 3);			/* 2 missing across the wrap */
	for (n = 4; n < 4 + SEQWIN; n++)
		seqwin_add(&w, n);
	CHECK_U64(w.lost, 1);
}

/*
 * A million events from "several CPUs" (each block of up to 16 numbers
 * shuffled), some duplicated, 1 in 1000 really lost: after the end, lost
 * is exactly the number dropped, reordering never counts as loss.
 */
static void test_seqwin_shuffled(void)
{
	uint64_t blk[16], dropped = 0, dups = 0, n = 1;
	int i, k;

	seqwin_init(&w);
	while (n < 1000000) {
		k = 1 + (int)(xorshift() % 16);
		for (i = 0; i < k; i++)
			blk[i] = n++;
		for (i = k - 1; i > 0; i--) {
			int j = (int)(xorshift() % (uint64_t)(i + 1));
			uint64_t t = blk[i];

			blk[i] = blk[j];
			blk[j] = t;
		}
		for (i = 0; i < k; i++) {
			if (xorshift() % 1000 == 0) {
				dropped++;
				continue;
			}
			seqwin_add(&w, blk[i]);
			if (xorshift() % 5000 == 0) {
				seqwin_add(&w, blk[i]);
				dups++;
			}
		}
	}
	CHECK(w.reordered > 100000, "reordered %llu",
	      (unsigned long long)w.reordered);
	CHECK(w.lost <= dropped, "lost %llu > dropped %llu",
	      (unsigned long long)w.lost, (unsigned long long)dropped);
	seqwin_flush(&w);
	/* the last block's number may be the one dropped: not a gap then */
	CHECK(w.lost == dropped || w.lost + 1 == dropped,
	      "lost %llu, dropped %llu", (unsigned long long)w.lost,
	      (unsigned long long)dropped);
	CHECK_U64(w.dups, dups);
	CHECK_U64(w.late, 0);
}

/* ---- the event parser ------------------------------------------------------ */

static struct nlmsghdr *event_msg(char *buf, int cmd, int family,
				  int alen_local, int alen_remote)
{
	static const unsigned char a6[16] = {
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	static const unsigned char a4[4] = { 10, 0, 0, 1 };
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *gh;

	nlh->nlmsg_type = 0x20;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = cmd;
	gh->version = TCP_OOOPROBE_GENL_VERSION;
	mnl_attr_put_u64(nlh, TCP_OOOPROBE_A_EVENT_SEQ, 42);
	mnl_attr_put_u8(nlh, TCP_OOOPROBE_A_FAMILY, family);
	mnl_attr_put(nlh, TCP_OOOPROBE_A_LOCAL_ADDR, alen_local,
		     alen_local > 4 ? (const void *)a6 : (const void *)a4);
	mnl_attr_put(nlh, TCP_OOOPROBE_A_REMOTE_ADDR, alen_remote,
		     alen_remote > 4 ? (const void *)a6 : (const void *)a4);
	mnl_attr_put_u16(nlh, TCP_OOOPROBE_A_LOCAL_PORT, 5201);
	mnl_attr_put_u32(nlh, TCP_OOOPROBE_A_SEQ, 7);
	mnl_attr_put_u64(nlh, TCP_OOOPROBE_A_TIME_IN, 1000);
	mnl_attr_put_u64(nlh, TCP_OOOPROBE_A_TIME_OUT, 3000);
	return nlh;
}

static void test_event_parse(void)
{
	char buf[1024];
	struct nlmsghdr *nlh;
	struct event e;

	nlh = event_msg(buf, TCP_OOOPROBE_CMD_SEGMENT, AF_INET, 4, 4);
	CHECK(event_parse(nlh, &e) == 0, "valid IPv4 event");
	CHECK(!strcmp(e.laddr, "10.0.0.1"), "%s", e.laddr);
	CHECK_U64(e.v[TCP_OOOPROBE_A_EVENT_SEQ], 42);
	CHECK_U64(e.v[TCP_OOOPROBE_A_LOCAL_PORT], 5201);
	CHECK_U64(e.v[TCP_OOOPROBE_A_TIME_OUT], 3000);
	nlh = event_msg(buf, TCP_OOOPROBE_CMD_FLOW, AF_INET6, 16, 16);
	CHECK(event_parse(nlh, &e) == 0, "valid IPv6 event");
	CHECK(!strcmp(e.raddr, "2001:db8::1"), "%s", e.raddr);
	/* short, odd and mismatched addresses are refused */
	nlh = event_msg(buf, TCP_OOOPROBE_CMD_SEGMENT, AF_INET, 3, 4);
	CHECK(event_parse(nlh, &e) == -EINVAL, "3-byte local address");
	nlh = event_msg(buf, TCP_OOOPROBE_CMD_SEGMENT, AF_INET6, 16, 0);
	CHECK(event_parse(nlh, &e) == -EINVAL, "empty remote address");
	nlh = event_msg(buf, TCP_OOOPROBE_CMD_SEGMENT, AF_INET6, 16, 8);
	CHECK(event_parse(nlh, &e) == -EINVAL, "8-byte remote address");
	nlh = event_msg(buf, TCP_OOOPROBE_CMD_SEGMENT, AF_INET, 16, 16);
	CHECK(event_parse(nlh, &e) == -EINVAL, "IPv6 addresses, AF_INET");
	/* an integer of the wrong size */
	nlh = event_msg(buf, TCP_OOOPROBE_CMD_SEGMENT, AF_INET, 4, 4);
	mnl_attr_put_u32(nlh, TCP_OOOPROBE_A_TIME_IN, 5);
	CHECK(event_parse(nlh, &e) == -EINVAL, "4-byte TIME_IN");
	/* unknown attributes are skipped */
	nlh = event_msg(buf, TCP_OOOPROBE_CMD_SEGMENT, AF_INET, 4, 4);
	mnl_attr_put_u32(nlh, TCP_OOOPROBE_A_MAX + 1, 5);
	CHECK(event_parse(nlh, &e) == 0, "newer attribute");
	/* no room for the generic netlink header */
	nlh = mnl_nlmsg_put_header(buf);
	CHECK(event_parse(nlh, &e) == -EINVAL, "bare header");
}

int main(void)
{
	test_empty();
	test_percentiles();
	test_histogram_edges();
	test_published_ratios();
	test_prom();
	test_sketch_buckets();
	test_sketch_error();
	test_exact_to_sketch();
	test_flat_memory();
	test_seqwin_basic();
	test_seqwin_wrap();
	test_seqwin_shuffled();
	test_event_parse();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
