/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ooo_ranges.h - the out-of-order probe's per-flow set of sequence ranges.
 *
 * tcp_oooprobe.c records, per flow, the sequence ranges that arrived beyond
 * rcv_nxt, each with its arrival time, until rcv_nxt passes them.  This
 * header holds the pure operations on that set: no socket, no locking, no
 * allocation (the caller passes the function that enlarges the array), no
 * kernel headers beyond the fixed-size types and memmove().
 * tests/unit/test_ooo_ranges.c runs them on the host.
 *
 * The set is an array sorted by sequence number whose ranges are disjoint.
 * Adding [seq, end) records only the parts no range covers yet, one new
 * range per gap, each stamped with the time given: a byte keeps the arrival
 * time of the first segment that carried it, and a retransmission of held
 * data adds nothing.  Adjacent ranges are not merged, because each range is
 * reported on its own (one SEGMENT event, with its own arrival time) when
 * the reader gets it.  The reader gets a range once rcv_nxt reaches its
 * end; a range rcv_nxt has only entered stays until rcv_nxt passes its end.
 *
 * Sequence numbers wrap at 2^32 and are compared as the kernel's before()
 * and after() compare them: a is before b when (s32)(a - b) < 0.  As for
 * TCP itself, the order holds while the numbers compared lie within 2^31 of
 * each other.
 */
#ifndef _OOO_RANGES_H
#define _OOO_RANGES_H

#ifdef __KERNEL__
#include <linux/string.h>
#include <linux/types.h>
#else
#include <stdbool.h>
#include <string.h>

/* the kernel's fixed-size types, from the compiler's own definitions */
typedef __UINT32_TYPE__ u32;
typedef __INT32_TYPE__ s32;
typedef __UINT64_TYPE__ u64;
#endif

/*
 * Capacity of a set's first array, in ranges: the segments held behind one
 * lost segment of a small window fit, and a flow that never reorders pays
 * for no array at all.  Each enlargement doubles it, up to the caller's cap.
 */
#define OOO_RANGES_FIRST_CAP	16U

struct ooo_range {
	u32 seq;	/* first sequence number */
	u32 end;	/* sequence number after the last one */
	u64 t_in;	/* arrival, ns, in the caller's clock */
};

struct ooo_ranges {
	struct ooo_range *r;	/* sorted by seq, disjoint; NULL while cap is 0 */
	u32 nr;			/* ranges in use */
	u32 cap;		/* ranges allocated */
};

/* Wrap-safe order of 32-bit sequence numbers, as before() and after(). */
static inline bool ooo_before(u32 seq1, u32 seq2)
{
	return (s32)(seq1 - seq2) < 0;
}

static inline bool ooo_after(u32 seq2, u32 seq1)
{
	return ooo_before(seq1, seq2);
}

/*
 * The capacity to enlarge a full array of @cap ranges to, at most @max.
 * Equal to @cap when @cap is already @max: the set is full.
 */
static inline u32 ooo_ranges_next_cap(u32 cap, u32 max)
{
	u32 want = cap ? cap * 2 : OOO_RANGES_FIRST_CAP;

	return want < max ? want : max;
}

/*
 * Record the parts of [@seq, @end) that no range covers yet, one range per
 * gap, each arriving at @t_in.  When the array is full, @grow is called to
 * enlarge it (rs->r and rs->cap); it returns false when it cannot.
 *
 * Returns the number of ranges added; 0 when every byte was covered already
 * (a duplicate, or an empty [@seq, @end)); -1 when @grow failed, in which
 * case the gaps before the one that did not fit stay recorded and the rest
 * of [@seq, @end) is not.
 */
static inline int ooo_ranges_add(struct ooo_ranges *rs, u32 seq, u32 end,
				 u64 t_in, bool (*grow)(struct ooo_ranges *rs))
{
	u32 lo = 0, hi = rs->nr, pos, cur = seq, gap_end;
	int added = 0;

	/* the first range that ends after seq */
	if (rs->nr && !ooo_after(rs->r[rs->nr - 1].end, seq)) {
		lo = rs->nr;	/* common case: beyond everything, append */
	} else {
		while (lo < hi) {
			u32 mid = (lo + hi) / 2;

			if (ooo_after(rs->r[mid].end, seq))
				hi = mid;
			else
				lo = mid + 1;
		}
	}
	pos = lo;
	while (ooo_before(cur, end)) {
		if (pos < rs->nr && !ooo_after(rs->r[pos].seq, cur)) {
			cur = rs->r[pos].end;	/* covered: skip over it */
			pos++;
			continue;
		}
		gap_end = end;
		if (pos < rs->nr && ooo_before(rs->r[pos].seq, end))
			gap_end = rs->r[pos].seq;
		if (rs->nr == rs->cap && !grow(rs))
			return -1;
		memmove(rs->r + pos + 1, rs->r + pos,
			(rs->nr - pos) * sizeof(*rs->r));
		rs->r[pos].seq = cur;
		rs->r[pos].end = gap_end;
		rs->r[pos].t_in = t_in;
		rs->nr++;
		pos++;
		added++;
		cur = gap_end;
	}
	return added;
}

/*
 * How many ranges, from the first, end at or before @rcv_nxt: the reader
 * has those.  A range that starts before @rcv_nxt and ends after it is not
 * counted, nor is any range after it.
 */
static inline u32 ooo_ranges_below(const struct ooo_ranges *rs, u32 rcv_nxt)
{
	u32 n = 0;

	while (n < rs->nr && !ooo_after(rs->r[n].end, rcv_nxt))
		n++;
	return n;
}

/*
 * How many ranges, from the first, no longer stand for data the kernel
 * holds out of order: with @ofo_empty (the out-of-order queue holds
 * nothing) every one of them, whatever its sequence numbers say (a range
 * left from before a long run of in-order data may compare as "after"
 * @rcv_nxt once 2^31 bytes went by); otherwise those at or below @rcv_nxt.
 */
static inline u32 ooo_ranges_stale(const struct ooo_ranges *rs, u32 rcv_nxt,
				   bool ofo_empty)
{
	return ofo_empty ? rs->nr : ooo_ranges_below(rs, rcv_nxt);
}

/*
 * The most ranges a flow may hold: what its receive buffer could hold as
 * separate skbs.  Every range was data the out-of-order queue held, every
 * skb there is charged at least @min_truesize to the socket's receive
 * memory, and the kernel keeps that under about @rcvbuf (it prunes the
 * queue beyond it); the result is at least 1 and at most @max.
 */
static inline u32 ooo_ranges_limit(u32 rcvbuf, u32 min_truesize, u32 max)
{
	u32 n = min_truesize ? rcvbuf / min_truesize : max;

	if (n < 1)
		n = 1;
	return n < max ? n : max;
}

/* Remove the last @n ranges (at most rs->nr); the array keeps its size. */
static inline void ooo_ranges_drop_tail(struct ooo_ranges *rs, u32 n)
{
	rs->nr -= n;
}

/* Remove the first @n ranges (at most rs->nr); the array keeps its size. */
static inline void ooo_ranges_drop(struct ooo_ranges *rs, u32 n)
{
	if (!n)
		return;
	rs->nr -= n;
	memmove(rs->r, rs->r + n, rs->nr * sizeof(*rs->r));
}

#endif /* _OOO_RANGES_H */
