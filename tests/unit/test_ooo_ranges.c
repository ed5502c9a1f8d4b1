// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of kmod/ooo_ranges.h, the probe's per-flow set of
 * out-of-order sequence ranges: fixed cases (sequence wrap, overlaps,
 * adjacency, duplicates, release below rcv_nxt, a full set), then random
 * operations checked against a model that keeps one owner per byte.
 * One line per failed check, then "N passed, N failed".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ooo_ranges.h"
#include "check.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The grow callback: the module's policy (ooo_ranges_next_cap() up to a
 * cap) on realloc(), with a switch that makes the allocation fail.
 */
static u32 grow_max = 4096;
static int grow_calls;
static int grow_nomem;

static bool grow(struct ooo_ranges *rs)
{
	u32 cap = ooo_ranges_next_cap(rs->cap, grow_max);
	struct ooo_range *r;

	grow_calls++;
	if (cap <= rs->cap || grow_nomem)
		return false;
	r = realloc(rs->r, cap * sizeof(*r));
	if (!r)
		abort();
	rs->r = r;
	rs->cap = cap;
	return true;
}

static void set_init(struct ooo_ranges *rs, u32 max)
{
	memset(rs, 0, sizeof(*rs));
	grow_max = max;
	grow_calls = 0;
	grow_nomem = 0;
}

static void set_free(struct ooo_ranges *rs)
{
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}

/* The set is exactly these n (seq, end, t_in) triples, in this order. */
#define CHECK_SET(rs, ...) do {						\
	const u64 want_[][3] = { __VA_ARGS__ };				\
	check_set((rs), want_, ARRAY_SIZE(want_), __FILE__, __LINE__);	\
} while (0)

static void check_set(const struct ooo_ranges *rs, const u64 (*want)[3],
		      u32 n, const char *file, int line)
{
	u32 i;

	if (rs->nr != n) {
		failed++;
		printf("FAIL %s:%d: %u ranges, want %u\n", file, line, rs->nr, n);
		return;
	}
	for (i = 0; i < n; i++) {
		if (rs->r[i].seq != (u32)want[i][0] ||
		    rs->r[i].end != (u32)want[i][1] ||
		    rs->r[i].t_in != want[i][2]) {
			failed++;
			printf("FAIL %s:%d: range %u = [%u, %u) t %" PRIu64
			       ", want [%u, %u) t %" PRIu64 "\n", file, line, i,
			       rs->r[i].seq, rs->r[i].end, rs->r[i].t_in,
			       (u32)want[i][0], (u32)want[i][1], want[i][2]);
			return;
		}
	}
	passed++;
}

static void test_order(void)
{
	CHECK(ooo_before(1, 2));
	CHECK(!ooo_before(2, 1));
	CHECK(!ooo_before(5, 5));
	CHECK(ooo_after(2, 1));
	CHECK(!ooo_after(5, 5));
	/* across the 32-bit wrap */
	CHECK(ooo_before(0xfffffff0u, 0x10));
	CHECK(ooo_after(0x10, 0xfffffff0u));
	CHECK(ooo_before(0xffffffffu, 0));
	CHECK(ooo_after(0, 0xffffffffu));
	CHECK(ooo_after(0x7fffffffu, 0));
	CHECK(ooo_before(0x80000001u, 0));	/* more than 2^31 ahead */
}

static void test_next_cap(void)
{
	CHECK_EQ(ooo_ranges_next_cap(0, 4096), OOO_RANGES_FIRST_CAP);
	CHECK_EQ(ooo_ranges_next_cap(16, 4096), 32);
	CHECK_EQ(ooo_ranges_next_cap(2048, 4096), 4096);
	CHECK_EQ(ooo_ranges_next_cap(4096, 4096), 4096);	/* full */
	CHECK_EQ(ooo_ranges_next_cap(0, 5), 5);	/* max below the first */
	CHECK_EQ(ooo_ranges_next_cap(5, 5), 5);
	CHECK_EQ(ooo_ranges_next_cap(0, 1), 1);
	CHECK_EQ(ooo_ranges_next_cap(16, 24), 24);
	CHECK_EQ(ooo_ranges_next_cap(32768, 65536), 65536);
	CHECK_EQ(ooo_ranges_next_cap(65536, 65536), 65536);
}

static void test_empty(void)
{
	struct ooo_ranges rs;

	set_init(&rs, 4096);
	CHECK_EQ(ooo_ranges_below(&rs, 0), 0);
	CHECK_EQ(ooo_ranges_below(&rs, 0xffffffffu), 0);
	ooo_ranges_drop(&rs, 0);
	CHECK_EQ(rs.nr, 0);
	/* an empty or reversed range adds nothing and allocates nothing */
	CHECK_EQ(ooo_ranges_add(&rs, 100, 100, 1, grow), 0);
	CHECK_EQ(ooo_ranges_add(&rs, 100, 50, 1, grow), 0);
	CHECK_EQ(grow_calls, 0);
	CHECK(!rs.r);
	/* the first range allocates the first array */
	CHECK_EQ(ooo_ranges_add(&rs, 100, 200, 7, grow), 1);
	CHECK_EQ(grow_calls, 1);
	CHECK_EQ(rs.cap, OOO_RANGES_FIRST_CAP);
	CHECK_SET(&rs, { 100, 200, 7 });
	/* released: empty again, the array stays */
	CHECK_EQ(ooo_ranges_below(&rs, 200), 1);
	ooo_ranges_drop(&rs, 1);
	CHECK_EQ(rs.nr, 0);
	CHECK_EQ(rs.cap, OOO_RANGES_FIRST_CAP);
	CHECK_EQ(ooo_ranges_below(&rs, 1000), 0);
	set_free(&rs);
}

static void test_insert_order(void)
{
	struct ooo_ranges rs;

	set_init(&rs, 4096);
	/* append, then before everything, then between */
	CHECK_EQ(ooo_ranges_add(&rs, 300, 400, 1, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 500, 600, 2, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 100, 200, 3, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 420, 450, 4, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 250, 260, 5, grow), 1);
	CHECK_SET(&rs, { 100, 200, 3 }, { 250, 260, 5 }, { 300, 400, 1 },
		  { 420, 450, 4 }, { 500, 600, 2 });
	set_free(&rs);
}

static void test_adjacent(void)
{
	struct ooo_ranges rs;

	set_init(&rs, 4096);
	/* touching ranges stay apart: one event each, each its own time */
	CHECK_EQ(ooo_ranges_add(&rs, 100, 200, 1, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 200, 300, 2, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 50, 100, 3, grow), 1);
	CHECK_SET(&rs, { 50, 100, 3 }, { 100, 200, 1 }, { 200, 300, 2 });
	/* a segment that spans touching ranges exactly is a duplicate */
	CHECK_EQ(ooo_ranges_add(&rs, 50, 300, 4, grow), 0);
	CHECK_EQ(ooo_ranges_add(&rs, 150, 250, 4, grow), 0);
	/* one byte either side: two new one-byte ranges */
	CHECK_EQ(ooo_ranges_add(&rs, 49, 301, 5, grow), 2);
	CHECK_SET(&rs, { 49, 50, 5 }, { 50, 100, 3 }, { 100, 200, 1 },
		  { 200, 300, 2 }, { 300, 301, 5 });
	set_free(&rs);
}

static void test_overlap(void)
{
	struct ooo_ranges rs;

	set_init(&rs, 4096);
	CHECK_EQ(ooo_ranges_add(&rs, 100, 200, 1, grow), 1);
	/* overlapping the start: only the new head is added */
	CHECK_EQ(ooo_ranges_add(&rs, 50, 150, 2, grow), 1);
	/* overlapping the end: only the new tail */
	CHECK_EQ(ooo_ranges_add(&rs, 150, 260, 3, grow), 1);
	CHECK_SET(&rs, { 50, 100, 2 }, { 100, 200, 1 }, { 200, 260, 3 });
	/* around two holes: each hole, and the ends, once */
	CHECK_EQ(ooo_ranges_add(&rs, 400, 500, 4, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 600, 700, 5, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 0, 1000, 6, grow), 4);
	CHECK_SET(&rs, { 0, 50, 6 }, { 50, 100, 2 }, { 100, 200, 1 },
		  { 200, 260, 3 }, { 260, 400, 6 }, { 400, 500, 4 },
		  { 500, 600, 6 }, { 600, 700, 5 }, { 700, 1000, 6 });
	set_free(&rs);
}

static void test_duplicates(void)
{
	struct ooo_ranges rs;

	set_init(&rs, 4096);
	CHECK_EQ(ooo_ranges_add(&rs, 1000, 2000, 1, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 1000, 2000, 2, grow), 0);	/* same */
	CHECK_EQ(ooo_ranges_add(&rs, 1200, 1300, 3, grow), 0);	/* inside */
	CHECK_EQ(ooo_ranges_add(&rs, 1000, 1001, 4, grow), 0);	/* first byte */
	CHECK_EQ(ooo_ranges_add(&rs, 1999, 2000, 5, grow), 0);	/* last byte */
	/* the first arrival time stays */
	CHECK_SET(&rs, { 1000, 2000, 1 });
	/* a range inside a range inside the segment: only the outer gaps */
	CHECK_EQ(ooo_ranges_add(&rs, 900, 2100, 6, grow), 2);
	CHECK_EQ(ooo_ranges_add(&rs, 900, 2100, 7, grow), 0);
	CHECK_SET(&rs, { 900, 1000, 6 }, { 1000, 2000, 1 }, { 2000, 2100, 6 });
	set_free(&rs);
}

static void test_wrap(void)
{
	struct ooo_ranges rs;

	set_init(&rs, 4096);
	/* one range across 2^32 */
	CHECK_EQ(ooo_ranges_add(&rs, 0xfffffff0u, 0x10, 1, grow), 1);
	/* after it, numerically smaller: appended */
	CHECK_EQ(ooo_ranges_add(&rs, 0x20, 0x30, 2, grow), 1);
	/* before it, numerically larger: inserted first */
	CHECK_EQ(ooo_ranges_add(&rs, 0xffffffd0u, 0xffffffe0u, 3, grow), 1);
	CHECK_SET(&rs, { 0xffffffd0u, 0xffffffe0u, 3 }, { 0xfffffff0u, 0x10, 1 },
		  { 0x20, 0x30, 2 });
	/* duplicates across the wrap */
	CHECK_EQ(ooo_ranges_add(&rs, 0xfffffff8u, 0x8, 4, grow), 0);
	CHECK_EQ(ooo_ranges_add(&rs, 0, 0x10, 4, grow), 0);
	/* a segment over all of them: the three gaps */
	CHECK_EQ(ooo_ranges_add(&rs, 0xffffffc0u, 0x40, 5, grow), 4);
	CHECK_SET(&rs, { 0xffffffc0u, 0xffffffd0u, 5 },
		  { 0xffffffd0u, 0xffffffe0u, 3 }, { 0xffffffe0u, 0xfffffff0u, 5 },
		  { 0xfffffff0u, 0x10, 1 }, { 0x10, 0x20, 5 }, { 0x20, 0x30, 2 },
		  { 0x30, 0x40, 5 });
	/* a range ending exactly at 2^32 (end 0) */
	set_free(&rs);
	set_init(&rs, 4096);
	CHECK_EQ(ooo_ranges_add(&rs, 0xffffff00u, 0, 1, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 0, 0x100, 2, grow), 1);
	CHECK_SET(&rs, { 0xffffff00u, 0, 1 }, { 0, 0x100, 2 });
	CHECK_EQ(ooo_ranges_below(&rs, 0xffffffffu), 0);
	CHECK_EQ(ooo_ranges_below(&rs, 0), 1);
	CHECK_EQ(ooo_ranges_below(&rs, 0x100), 2);
	/* rcv_nxt past the wrap while the ranges are before it */
	set_free(&rs);
	set_init(&rs, 4096);
	CHECK_EQ(ooo_ranges_add(&rs, 0xfffffe00u, 0xffffff00u, 1, grow), 1);
	CHECK_EQ(ooo_ranges_below(&rs, 0x10), 1);
	CHECK_EQ(ooo_ranges_below(&rs, 0xfffffeffu), 0);
	/* a binary search over many ranges across the wrap */
	set_free(&rs);
	set_init(&rs, 4096);
	{
		u32 base = 0xffffff00u, i;
		int ok = 1;

		for (i = 0; i < 64; i++)
			ok &= ooo_ranges_add(&rs, base + 8 * i, base + 8 * i + 4,
					     i, grow) == 1;
		CHECK(ok);
		/* fill every hole with one segment: 63 holes + the tail */
		CHECK_EQ(ooo_ranges_add(&rs, base, base + 8 * 64, 99, grow), 64);
		CHECK_EQ(rs.nr, 128);
		for (i = 0; i + 1 < rs.nr; i++)
			ok &= rs.r[i].end == rs.r[i + 1].seq;
		CHECK(ok);
		/* a segment inside the middle of the run */
		CHECK_EQ(ooo_ranges_add(&rs, base + 8 * 33 + 1,
					base + 8 * 33 + 3, 100, grow), 0);
	}
	set_free(&rs);
}

static void test_release(void)
{
	struct ooo_ranges rs;

	set_init(&rs, 4096);
	CHECK_EQ(ooo_ranges_add(&rs, 100, 200, 1, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 300, 400, 2, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 400, 500, 3, grow), 1);
	/* below the first range, at its start, one byte short of its end */
	CHECK_EQ(ooo_ranges_below(&rs, 50), 0);
	CHECK_EQ(ooo_ranges_below(&rs, 100), 0);
	CHECK_EQ(ooo_ranges_below(&rs, 199), 0);
	/* at its end, and in the hole after it */
	CHECK_EQ(ooo_ranges_below(&rs, 200), 1);
	CHECK_EQ(ooo_ranges_below(&rs, 250), 1);
	/* partial: rcv_nxt inside the next range leaves that range whole */
	CHECK_EQ(ooo_ranges_below(&rs, 350), 1);
	ooo_ranges_drop(&rs, ooo_ranges_below(&rs, 350));
	CHECK_SET(&rs, { 300, 400, 2 }, { 400, 500, 3 });
	/* a straddling range still blocks the ones after it */
	CHECK_EQ(ooo_ranges_add(&rs, 340, 360, 4, grow), 0);
	CHECK_EQ(ooo_ranges_below(&rs, 399), 0);
	/* exactly at the boundary between touching ranges */
	CHECK_EQ(ooo_ranges_below(&rs, 400), 1);
	ooo_ranges_drop(&rs, 1);
	CHECK_SET(&rs, { 400, 500, 3 });
	/* all of it at once, from far past the end */
	CHECK_EQ(ooo_ranges_add(&rs, 600, 700, 5, grow), 1);
	CHECK_EQ(ooo_ranges_below(&rs, 100000), 2);
	ooo_ranges_drop(&rs, 2);
	CHECK_EQ(rs.nr, 0);
	/* re-recorded after release: a new range with the new time */
	CHECK_EQ(ooo_ranges_add(&rs, 600, 700, 6, grow), 1);
	CHECK_SET(&rs, { 600, 700, 6 });
	set_free(&rs);
}

/*
 * Ranges the kernel no longer holds: pruned from the top of the
 * out-of-order queue (dropped from the tail), or everything once that
 * queue is empty, also when rcv_nxt has moved 2^31 bytes or more past them
 * (where a sequence comparison would call them ahead of rcv_nxt).
 */
static void test_stale(void)
{
	struct ooo_ranges rs;

	set_init(&rs, 4096);
	CHECK_EQ(ooo_ranges_add(&rs, 100, 101, 1, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 102, 103, 2, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 104, 105, 3, grow), 1);
	/* queue not empty: only what rcv_nxt passed */
	CHECK_EQ(ooo_ranges_stale(&rs, 101, false), 1);
	CHECK_EQ(ooo_ranges_stale(&rs, 99, false), 0);
	/* queue empty: all, wherever rcv_nxt is */
	CHECK_EQ(ooo_ranges_stale(&rs, 99, true), 3);
	/* rcv_nxt 2^31 + 10 bytes on: compares as before the ranges */
	CHECK_EQ(ooo_ranges_below(&rs, 100 + 0x80000000u + 10), 0);
	CHECK_EQ(ooo_ranges_stale(&rs, 100 + 0x80000000u + 10, false), 0);
	CHECK_EQ(ooo_ranges_stale(&rs, 100 + 0x80000000u + 10, true), 3);
	/* the range at 104 pruned from the top of the queue */
	ooo_ranges_drop_tail(&rs, 1);
	CHECK_SET(&rs, { 100, 101, 1 }, { 102, 103, 2 });
	ooo_ranges_drop(&rs, ooo_ranges_stale(&rs, 0, true));
	CHECK_EQ(rs.nr, 0);
	set_free(&rs);
	set_free(&rs);
}

/* A flow's cap from its receive buffer: at least 1, at most max. */
static void test_limit(void)
{
	CHECK_EQ(ooo_ranges_limit(131072, 640, 4096), 204);
	CHECK_EQ(ooo_ranges_limit(131072, 640, 100), 100);
	CHECK_EQ(ooo_ranges_limit(100, 640, 4096), 1);
	CHECK_EQ(ooo_ranges_limit(0, 640, 256), 1);
	CHECK_EQ(ooo_ranges_limit(0x7fffffff, 640, 65536), 65536);
	CHECK_EQ(ooo_ranges_limit(4096, 0, 256), 256);
}

static void test_full(void)
{
	struct ooo_ranges rs;

	/* max 3: the fourth gap does not fit */
	set_init(&rs, 3);
	CHECK_EQ(ooo_ranges_add(&rs, 100, 110, 1, grow), 1);
	CHECK_EQ(rs.cap, 3);
	CHECK_EQ(ooo_ranges_add(&rs, 200, 210, 2, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 300, 310, 3, grow), 1);
	CHECK_EQ(grow_calls, 1);
	CHECK_EQ(ooo_ranges_add(&rs, 400, 410, 4, grow), -1);
	CHECK_EQ(grow_calls, 2);
	CHECK_SET(&rs, { 100, 110, 1 }, { 200, 210, 2 }, { 300, 310, 3 });
	/* a duplicate needs no room: still 0, no growth asked */
	CHECK_EQ(ooo_ranges_add(&rs, 100, 110, 5, grow), 0);
	CHECK_EQ(ooo_ranges_add(&rs, 200, 310, 5, grow), -1);
	CHECK_EQ(grow_calls, 3);
	/* room again once the reader has the first one */
	ooo_ranges_drop(&rs, ooo_ranges_below(&rs, 110));
	CHECK_EQ(ooo_ranges_add(&rs, 400, 410, 6, grow), 1);
	CHECK_SET(&rs, { 200, 210, 2 }, { 300, 310, 3 }, { 400, 410, 6 });
	set_free(&rs);

	/* full in the middle of a segment: the gaps before stay recorded */
	set_init(&rs, 4);
	CHECK_EQ(ooo_ranges_add(&rs, 110, 120, 1, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 130, 140, 2, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 100, 200, 3, grow), -1);
	CHECK_SET(&rs, { 100, 110, 3 }, { 110, 120, 1 }, { 120, 130, 3 },
		  { 130, 140, 2 });
	set_free(&rs);

	/* max 1 */
	set_init(&rs, 1);
	CHECK_EQ(ooo_ranges_add(&rs, 0xfffffff0u, 0x10, 1, grow), 1);
	CHECK_EQ(ooo_ranges_add(&rs, 0x10, 0x20, 2, grow), -1);
	CHECK_EQ(ooo_ranges_add(&rs, 0xffffffe0u, 0x20, 3, grow), -1);
	CHECK_SET(&rs, { 0xfffffff0u, 0x10, 1 });
	set_free(&rs);

	/* growth through the sizes up to the cap, contents kept */
	set_init(&rs, 40);
	{
		u32 i;
		int ok = 1;

		for (i = 0; i < 40; i++)
			ok &= ooo_ranges_add(&rs, 1000 - 10 * i, 1005 - 10 * i,
					     i, grow) == 1;
		CHECK(ok);
		CHECK_EQ(rs.cap, 40);
		CHECK_EQ(grow_calls, 3);	/* 16, 32, 40 */
		CHECK_EQ(ooo_ranges_add(&rs, 2000, 2001, 40, grow), -1);
		for (i = 0; i < 40; i++)
			ok &= rs.r[i].seq == 1000 - 10 * (39 - i) &&
			      rs.r[i].t_in == 39 - i;
		CHECK(ok);
	}
	set_free(&rs);

	/* no memory: same answer as full, and the set unchanged */
	set_init(&rs, 4096);
	CHECK_EQ(ooo_ranges_add(&rs, 100, 110, 1, grow), 1);
	grow_nomem = 1;
	{
		u32 i;
		int ok = 1;

		for (i = 1; i < OOO_RANGES_FIRST_CAP; i++)
			ok &= ooo_ranges_add(&rs, 100 + 20 * i, 110 + 20 * i,
					     1, grow) == 1;
		CHECK(ok);
	}
	CHECK_EQ(ooo_ranges_add(&rs, 5000, 5010, 2, grow), -1);
	CHECK_EQ(rs.nr, OOO_RANGES_FIRST_CAP);
	grow_nomem = 0;
	CHECK_EQ(ooo_ranges_add(&rs, 5000, 5010, 2, grow), 1);
	CHECK_EQ(rs.cap, 2 * OOO_RANGES_FIRST_CAP);
	set_free(&rs);
}

/*
 * The model: byte offsets 0..MODEL_BYTES-1 from a base sequence number;
 * each byte has the id of the range that holds it (0: none). A range is a
 * maximal run of one id; its arrival time is kept by id.
 */
#define MODEL_BYTES	(1 << 18)

static u32 model_id[MODEL_BYTES];
static u64 model_t[MODEL_BYTES * 2];	/* by id */
static u32 model_next_id;
static u32 model_live;			/* ranges held */

static u64 rng_state;

static u32 rnd(u32 n)
{
	/* xorshift64*: a fixed sequence, so a failure repeats */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (u32)((rng_state * 0x2545f4914f6cdd1dull) >> 32) % n;
}

/* Add bytes [s, e) to the model: one new id per uncovered run. */
static int model_add(u32 s, u32 e, u64 t, u32 max)
{
	int added = 0;
	u32 i = s;

	while (i < e) {
		if (model_id[i]) {
			i++;
			continue;
		}
		if (model_live == max)
			return -1;
		model_next_id++;
		model_t[model_next_id] = t;
		model_live++;
		added++;
		while (i < e && !model_id[i])
			model_id[i++] = model_next_id;
	}
	return added;
}

/* Ranges of the model within [lo, hi), as offsets; returns how many. */
static u32 model_ranges(u32 lo, u32 hi, u32 (*out)[2], u32 max_out)
{
	u32 n = 0, i = lo;

	while (i < hi) {
		u32 id = model_id[i], s = i;

		if (!id) {
			i++;
			continue;
		}
		while (i < hi && model_id[i] == id)
			i++;
		if (n < max_out) {
			out[n][0] = s;
			out[n][1] = i;
		}
		n++;
	}
	return n;
}

/* Ranges entirely at or below offset r, from the first: the reader's. */
static u32 model_below(u32 lo, u32 hi, u32 r)
{
	static u32 rg[MODEL_BYTES / 2][2];
	u32 n = model_ranges(lo, hi, rg, MODEL_BYTES / 2), k = 0;

	while (k < n && rg[k][1] <= r)
		k++;
	return k;
}

static void model_drop(u32 lo, u32 hi, u32 n)
{
	u32 i = lo;

	while (n && i < hi) {
		u32 id = model_id[i];

		if (!id) {
			i++;
			continue;
		}
		while (i < hi && model_id[i] == id)
			model_id[i++] = 0;
		model_live--;
		n--;
	}
}

/* Does the set hold exactly the model's ranges within [lo, hi)? */
static int model_matches(const struct ooo_ranges *rs, u32 base, u32 lo,
			 u32 hi)
{
	static u32 rg[MODEL_BYTES / 2][2];
	u32 n = model_ranges(lo, hi, rg, MODEL_BYTES / 2), i;

	if (n != rs->nr || n != model_live)
		return 0;
	for (i = 0; i < n; i++)
		if (rs->r[i].seq != base + rg[i][0] ||
		    rs->r[i].end != base + rg[i][1] ||
		    rs->r[i].t_in != model_t[model_id[rg[i][0]]])
			return 0;
	return 1;
}

/* Where segments start (bytes beyond rcv_nxt) and how long they are. */
struct random_shape {
	u32 window;
	u32 seg_max;
};

struct random_totals {
	u32 ops, added, dup, full, released, partial;
	u32 most;	/* ranges held at once */
};

/*
 * @ops random operations on a set whose byte 0 is sequence number @base, as
 * the module does them: record a segment beyond rcv_nxt (after discarding
 * what is below rcv_nxt), or move rcv_nxt and release. Now and then a
 * segment straddles rcv_nxt, so a range rcv_nxt enters is seen.
 */
static void random_run(const struct random_shape *sh, u32 base, u32 max,
		       u32 ops, u64 seed, struct random_totals *tot)
{
	struct ooo_ranges rs;
	u32 rcv = 2 * sh->seg_max, op, lo, hi;
	int ok = 1;

	memset(model_id, 0, sizeof(model_id));
	model_next_id = 0;
	model_live = 0;
	rng_state = seed;
	set_init(&rs, max);
	for (op = 0; op < ops && ok; op++) {
		u32 kind = rnd(10), s, e, n;
		u64 t = (1ull << 40) + op;
		int got, want;

		/*
		 * Every range lies within [lo, hi): one recorded beyond
		 * rcv_nxt starts less than a segment before the end rcv_nxt
		 * has not reached, one straddling rcv_nxt half a segment more.
		 */
		lo = rcv - 2 * sh->seg_max;
		hi = rcv + sh->window + 2 * sh->seg_max;
		if (hi > MODEL_BYTES ||
		    model_next_id + sh->seg_max >= ARRAY_SIZE(model_t))
			break;
		if (kind < 6) {
			/* out of order: seq beyond rcv_nxt */
			s = rcv + 1 + rnd(sh->window);
			e = s + 1 + rnd(sh->seg_max);
			n = ooo_ranges_below(&rs, base + rcv);
			ok &= n == model_below(lo, hi, rcv);
			ooo_ranges_drop(&rs, n);
			model_drop(lo, hi, n);
			got = ooo_ranges_add(&rs, base + s, base + e, t, grow);
			want = model_add(s, e, t, max);
		} else if (kind < 7) {
			/* straddling rcv_nxt, no discard first */
			s = rcv - rnd(sh->seg_max / 2);
			e = rcv + 1 + rnd(sh->seg_max);
			got = ooo_ranges_add(&rs, base + s, base + e, t, grow);
			want = model_add(s, e, t, max);
		} else {
			/* rcv_nxt moves (or not); release what it passed */
			rcv += rnd(4) ? rnd(sh->seg_max) : 0;
			n = ooo_ranges_below(&rs, base + rcv);
			got = (int)n;
			want = (int)model_below(lo, hi, rcv);
			/* a range rcv_nxt has entered stays */
			if (n < rs.nr && ooo_before(rs.r[n].seq, base + rcv))
				tot->partial++;
			ooo_ranges_drop(&rs, n);
			model_drop(lo, hi, n);
			tot->released += n;
		}
		if (got != want) {
			printf("FAIL op %u (base %#x, max %u): got %d, want %d\n",
			       op, base, max, got, want);
			ok = 0;
		}
		if (kind < 7) {
			if (got > 0)
				tot->added += got;
			else if (!got)
				tot->dup++;
			else
				tot->full++;
		}
		if (ok && !model_matches(&rs, base, lo, hi)) {
			printf("FAIL op %u (base %#x, max %u): set and model differ\n",
			       op, base, max);
			ok = 0;
		}
		if (rs.nr > tot->most)
			tot->most = rs.nr;
		tot->ops++;
	}
	CHECK(ok);
	set_free(&rs);
}

static void test_random(void)
{
	static const u32 bases[] = {
		0,				/* no wrap */
		0xffffffffu - MODEL_BYTES / 3,	/* wraps a third of the way */
		0x7fffffffu - MODEL_BYTES / 2,	/* crosses 2^31 */
		0xfffff000u,			/* wraps early */
	};
	/* segments of a few bytes far apart: sets of hundreds of ranges */
	static const struct random_shape wide = { 700, 160 }, many = { 4000, 12 };
	static const u32 maxes[] = { 1, 3, 16, 17, 40, 4096 };
	struct random_totals tot = { 0 }, small = { 0 };
	u32 b, m, seed = 0;

	for (b = 0; b < ARRAY_SIZE(bases); b++) {
		for (m = 0; m < ARRAY_SIZE(maxes); m++)
			random_run(&wide, bases[b], maxes[m], 3000,
				   0x9e3779b97f4a7c15ull * ++seed,
				   maxes[m] < 16 ? &small : &tot);
		random_run(&many, bases[b], 100, 3000,
			   0x9e3779b97f4a7c15ull * ++seed, &tot);
		random_run(&many, bases[b], 4096, 3000,
			   0x9e3779b97f4a7c15ull * ++seed, &tot);
	}
	/* the runs went through every case, so a broken one is seen */
	CHECK_EQ(tot.ops + small.ops, 4 * 8 * 3000);
	CHECK(tot.added > 10000);
	CHECK(tot.dup > 100);
	CHECK(tot.released > 10000);
	CHECK(tot.partial > 10);
	CHECK(small.full > 100);
	CHECK(tot.full > 0);
	CHECK(tot.most > 200);
}

int main(void)
{
	test_order();
	test_next_cap();
	test_empty();
	test_insert_order();
	test_adjacent();
	test_overlap();
	test_duplicates();
	test_wrap();
	test_release();
	test_stale();
	test_limit();
	test_full();
	test_random();
	return CHECK_SUMMARY();
}
