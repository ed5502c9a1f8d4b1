// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the growth section of kmod/cocktail_policy.h: CUBIC
 * (RFC 9438) and HyStart++ (RFC 9406) in integers, against the RFCs'
 * equations computed in floating point by tests/unit/growth_ref.py
 * (growth_ref.h) and against properties of the equations themselves.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cocktail_policy.h"
#include "check.h"
#include "growth_ref.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* |got - want| <= tol, printed with the values when not */
#define CHECK_NEAR(got, want, tol) do {					\
	double g_ = (got), w_ = (want), t_ = (tol);			\
	if (fabs(g_ - w_) > t_)						\
		printf("near %s:%d: %s = %.4f, want %.4f +- %.4f\n",	\
		       __FILE__, __LINE__, #got, g_, w_, t_);		\
	CHECK(fabs(g_ - w_) <= t_);					\
} while (0)

static void test_cbrt(void)
{
	static const u64 xs[] = { 0, 1, 2, 7, 8, 9, 26, 27, 28, 63, 64, 999,
				  1000, 1001, 1ULL << 32, (1ULL << 63) - 1,
				  1ULL << 63, ~0ULL, 8000000000ULL,
				  9223358842721533951ULL /* 2097151^3 */ };
	unsigned int i;
	u64 x = 88172645463325252ULL;

	for (i = 0; i < N(xs); i++) {
		unsigned __int128 y = cp_cbrt(xs[i]);

		CHECK(y * y * y <= xs[i]);
		CHECK((y + 1) * (y + 1) * (y + 1) > xs[i]);
	}
	/* exact cubes and their neighbours */
	for (i = 1; i < 2642245; i += 9973) {
		u64 c = (u64)i * i * i;

		CHECK_EQ(cp_cbrt(c), i);
		CHECK_EQ(cp_cbrt(c - 1), i - 1);
		CHECK_EQ(cp_cbrt(c + 1), i);
	}
	/* pseudo-random (xorshift) over the whole range */
	for (i = 0; i < 20000; i++) {
		unsigned __int128 y;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		y = cp_cbrt(x >> (i % 64));
		CHECK(y * y * y <= (x >> (i % 64)));
		CHECK((y + 1) * (y + 1) * (y + 1) > (x >> (i % 64)));
	}
	CHECK_EQ(cp_cbrt(~0ULL), 2642245);
}

static void test_k(void)
{
	unsigned int i;

	for (i = 0; i < N(k_ref); i++)
		/* rounded down to whole ms */
		CHECK_NEAR(cp_cubic_k_ms(k_ref[i].w_max, k_ref[i].cwnd),
			   k_ref[i].k_ms - 0.5, 0.5 + 1e-6);
	/* the RFC's own example: W_max 100, cwnd_epoch 70: K = cbrt(75) s */
	CHECK_EQ(cp_cubic_k_ms(100, 70), 4217);
	CHECK_EQ(cp_cubic_k_ms(70, 70), 0);
	CHECK_EQ(cp_cubic_k_ms(70, 100), 0);
}

static void test_window(void)
{
	unsigned int i;
	s32 dt;

	for (i = 0; i < N(w_ref); i++)
		CHECK_NEAR(cp_cubic_w(w_ref[i].w_max, w_ref[i].dt_ms) /
			   (double)(1 << CP_CUBIC_SHIFT), w_ref[i].w, 0.002);
	/* W_cubic(K) = W_max; W_cubic(0) = cwnd_epoch within a segment */
	CHECK_EQ(cp_cubic_w(100, 0), 100 << CP_CUBIC_SHIFT);
	CHECK_NEAR(cp_cubic_w(100, -(s32)cp_cubic_k_ms(100, 70)) / 1024.0,
		   70.0, 0.01);
	/* odd symmetry around W_max, monotonic in t */
	for (dt = 1; dt < 100000; dt = dt * 3 + 1) {
		CHECK_EQ(cp_cubic_w(1000000, dt) - (1000000ULL << 10),
			 (1000000ULL << 10) - cp_cubic_w(1000000, -dt));
		CHECK(cp_cubic_w(1000, dt) >= cp_cubic_w(1000, dt - 1));
	}
	CHECK(cp_cubic_w(1000, 1000) > cp_cubic_w(1000, 990));
	/* bounded |t - K|: no overflow at the extremes */
	CHECK(cp_cubic_w(~0U, 0x7fffffff) > cp_cubic_w(~0U, 0));
	CHECK_EQ(cp_cubic_w(10, -0x7fffffff), 0);
	CHECK_EQ(cp_cubic_dt(5, 10), -5);
	CHECK_EQ(cp_cubic_dt(10, 0xfffffff0U), 26);	/* across the wrap */
	CHECK_EQ(cp_cubic_dt(0x7fffffffU, 0), CP_CUBIC_MAX_DT_MS);
}

static void test_target(void)
{
	/* clamped to [cwnd, 1.5 cwnd] */
	CHECK_EQ(cp_cubic_target(50 << 10, 100), 100 << 10);
	CHECK_EQ(cp_cubic_target(120 << 10, 100), 120 << 10);
	CHECK_EQ(cp_cubic_target(1000 << 10, 100), 150 << 10);
	/* cwnd / (target - cwnd) ACKs per segment */
	CHECK_EQ(cp_cubic_cnt(100, 100 << 10), 0);
	CHECK_EQ(cp_cubic_cnt(100, 101 << 10), 100);
	CHECK_EQ(cp_cubic_cnt(100, 150 << 10), 2);
	CHECK_EQ(cp_cubic_cnt(100, 110 << 10), 10);
	CHECK_EQ(cp_cubic_cnt(100, (100 << 10) + 1), 102400);
	CHECK_EQ(cp_cubic_cnt(1, 1536), 2);
}

static void test_loss(void)
{
	struct cp_cubic c = { 0 };

	/* beta = 0.7, at least 2 */
	CHECK_EQ(cp_cubic_ssthresh(100), 70);
	CHECK_EQ(cp_cubic_ssthresh(10), 7);
	CHECK_EQ(cp_cubic_ssthresh(2), 2);
	CHECK_EQ(cp_cubic_ssthresh(1), 2);
	CHECK_EQ(cp_cubic_ssthresh(~0U), 3006477106U);
	/* first loss: W_max = cwnd, cwnd_prior = cwnd */
	CHECK_EQ(cp_cubic_loss(&c, 100), 70);
	CHECK_EQ(c.w_max, 100);
	CHECK_EQ(c.cwnd_prior, 100);
	CHECK_EQ(c.w_est, 0);
	/* a loss below the last W_max: fast convergence, (1 + beta) / 2 */
	CHECK_EQ(cp_cubic_loss(&c, 90), 63);
	CHECK_EQ(c.w_max, 76);		/* 90 * 0.85 = 76.5 */
	CHECK_EQ(c.cwnd_prior, 90);
	/* at or above: W_max = cwnd */
	CHECK_EQ(cp_cubic_loss(&c, 76), 53);
	CHECK_EQ(c.w_max, 76);
	CHECK_EQ(cp_cubic_wmax(200, 76), 200);
}

static void test_epoch_start(void)
{
	struct cp_cubic c = { 0 };
	u32 cnt, w;

	/* no W_max (no loss yet, HyStart++, an RTO): K = 0, W_max = cwnd */
	cp_cubic_epoch(&c, 40, 1000);
	CHECK_EQ(c.w_max, 40);
	CHECK_EQ(c.t0_ms, 1000);
	CHECK_EQ(c.w_est, 40);
	CHECK_EQ(c.cwnd_prior, 40);
	/* after a loss at 100: cwnd_epoch 70, K = 4217 ms */
	cp_cubic_loss(&c, 100);
	cp_cubic_epoch(&c, 70, 5000);
	CHECK_EQ(c.w_max, 100);
	CHECK_EQ(c.t0_ms, 5000 + 4217);
	/* the epoch starts on the ACK when there is none */
	c.w_est = 0;
	w = cp_cubic_ack(&c, 70, 1, 0xfffffff0U, 100, &cnt);
	CHECK_EQ(c.t0_ms, 0xfffffff0U + 4217);
	CHECK_EQ(w, 70);
	/* concave: W_cubic(t + RTT) above cwnd, the target gives a count */
	CHECK(cnt > 0);
	/* above W_max: a new plateau */
	cp_cubic_epoch(&c, 150, 7);
	CHECK_EQ(c.w_max, 150);
	CHECK_EQ(c.t0_ms, 7);
}

static void test_west(void)
{
	struct cp_cubic c = { .w_max = 100, .cwnd_prior = 100 };
	unsigned int i;
	double f = 70;

	cp_cubic_epoch(&c, 70, 0);
	/* 17 RTTs of 70 single ACKs at alpha = 9/17: W_est + 9 exactly */
	for (i = 0; i < 17 * 70; i++)
		cp_cubic_west(&c, 1, 70);
	CHECK_EQ(c.w_est, 79);
	CHECK_EQ(c.w_est_acc, 0);
	CHECK_NEAR(9.0 / 17, alpha_ref, 1e-9);
	/* delayed ACKs (2 segments) and the switch to alpha = 1 at
	 * cwnd_prior, against the float equation */
	c.w_est = 70;
	c.w_est_acc = 0;
	for (i = 0; i < 5000; i++) {
		cp_cubic_west(&c, 2, 80);
		f += (f >= 100 ? 1.0 : alpha_ref) * 2 / 80;
	}
	CHECK_NEAR(c.w_est + c.w_est_acc / (17.0 * 80), f, 0.1);
	/* a huge ACK count at a huge window does not overflow */
	c.w_est = 1000;
	c.w_est_acc = 0;
	cp_cubic_west(&c, ~0U, 1);
	CHECK(c.w_est > 1000);
}

/* the kernel's tcp_cong_avoid_ai(), as the module calls it */
static u32 cong_avoid_ai(u32 cwnd, u32 w, u32 acked, u32 *cnt)
{
	if (*cnt >= w) {
		*cnt = 0;
		cwnd++;
	}
	*cnt += acked;
	if (*cnt >= w) {
		u32 delta = *cnt / w;

		*cnt -= delta * w;
		cwnd += delta;
	}
	return cwnd;
}

/*
 * Whole epochs, one ACK per segment spread over each RTT as the float
 * model does: the integer window stays within 1.5 segments + 2% of the
 * RFC's real-valued one, RTT after RTT (concave, plateau, convex, and the
 * Reno-friendly region of a 1 ms path).  The clock starts near the wrap.
 */
static void test_epochs(void)
{
	unsigned int e, r, i;

	for (e = 0; e < N(epoch_ref); e++) {
		const struct epoch_ref *x = &epoch_ref[e];
		struct cp_cubic c = { .w_max = x->w_max,
				      .cwnd_prior = x->prior };
		u32 base = 0xffff0000U, cwnd = x->cwnd, cnt = 0, n, w;
		u64 rtt_us = (u64)x->rtt_ms * 1000;
		u32 bad = 0;

		cp_cubic_epoch(&c, cwnd, base);
		for (r = 0; r < x->rtts; r++) {
			u32 acks = cwnd;

			for (i = 0; i < acks; i++) {
				u64 t_us = r * rtt_us +
					   (i + 1) * rtt_us / acks;
				u32 now = base + (u32)(t_us / 1000);

				w = cp_cubic_ack(&c, cwnd, 1, now, x->rtt_ms,
						 &n);
				if (w > cwnd)
					cwnd = w;
				else if (n)
					cwnd = cong_avoid_ai(cwnd, n, 1, &cnt);
			}
			if (fabs(cwnd - x->cwnd_at[r]) >
			    1.5 + 0.02 * x->cwnd_at[r] && !bad++)
				printf("epoch %u rtt %u: cwnd %u, RFC %.2f\n",
				       e, r, cwnd, x->cwnd_at[r]);
		}
		CHECK_EQ(bad, 0);
	}
}

/* concave then convex: growth per RTT falls toward W_max, then rises */
static void test_shape(void)
{
	struct cp_cubic c = { .w_max = 100, .cwnd_prior = 100 };
	u32 cwnd = 70, cnt = 0, n, w, r, i, prev = 70;
	u32 inc[80];

	cp_cubic_epoch(&c, cwnd, 0);
	for (r = 0; r < 80; r++) {
		u32 acks = cwnd;

		for (i = 0; i < acks; i++) {
			w = cp_cubic_ack(&c, cwnd, 1,
					 r * 100 + (i + 1) * 100 / acks, 100,
					 &n);
			if (w > cwnd)
				cwnd = w;
			else if (n)
				cwnd = cong_avoid_ai(cwnd, n, 1, &cnt);
		}
		inc[r] = cwnd - prev;
		prev = cwnd;
	}
	/* fast first (concave), near-flat around K = 4.2 s, fast again */
	CHECK(inc[0] + inc[1] + inc[2] > inc[38] + inc[39] + inc[40] + 2);
	CHECK(inc[77] + inc[78] + inc[79] > inc[38] + inc[39] + inc[40] + 2);
	CHECK(prev > 100);
}

static void test_hystart(void)
{
	struct cp_hystart h;
	unsigned int i, r;

	for (i = 0; i < N(thresh_ref); i++)
		CHECK_NEAR(cp_hystart_thresh_us(thresh_ref[i].last_us),
			   thresh_ref[i].thresh_us, 0.5);

	cp_hystart_init(&h);
	/* the first round has no previous one: no exit however high */
	for (i = 0; i < 20; i++)
		CHECK_EQ(cp_hystart_rtt(&h, 100000 + i * 5000), CP_HS_NONE);
	CHECK_EQ(h.cur_min_us, 100000);
	CHECK_EQ(cp_hystart_round(&h), CP_HS_NONE);
	CHECK_EQ(h.last_min_us, 100000);
	/* a rise of 12 ms (< 100 / 8 = 12.5 ms) is not enough */
	for (i = 0; i < 10; i++)
		CHECK_EQ(cp_hystart_rtt(&h, 112000), CP_HS_NONE);
	cp_hystart_round(&h);
	/* from 112: a rise of 14 ms (threshold 14 ms) at the 8th sample */
	for (i = 0; i < 7; i++)
		CHECK_EQ(cp_hystart_rtt(&h, 126000), CP_HS_NONE);
	CHECK_EQ(cp_hystart_rtt(&h, 126000), CP_HS_CSS);
	CHECK(h.css);
	CHECK_EQ(h.css_base_us, 126000);
	/* CSS grows a quarter of min(acked, L) */
	CHECK_EQ(cp_hystart_grow(&h, 1), 0);
	CHECK_EQ(cp_hystart_grow(&h, 1), 0);
	CHECK_EQ(cp_hystart_grow(&h, 1), 0);
	CHECK_EQ(cp_hystart_grow(&h, 1), 1);
	CHECK_EQ(cp_hystart_grow(&h, 2), 0);
	CHECK_EQ(cp_hystart_grow(&h, 20), 2);	/* min(20, 8) + 2 = 10 */
	CHECK_EQ(h.css_acc, 2);
	/* the minimum falls below the baseline: back to slow start */
	cp_hystart_round(&h);
	for (i = 0; i < 7; i++)
		CHECK_EQ(cp_hystart_rtt(&h, 120000), CP_HS_NONE);
	CHECK_EQ(cp_hystart_rtt(&h, 120000), CP_HS_RESUME);
	CHECK(!h.css);
	CHECK_EQ(cp_hystart_grow(&h, 3), 3);
	CHECK_EQ(cp_hystart_grow(&h, 100), CP_HS_L);
	/* the RTT rises for good: CSS, then CSS_ROUNDS round ends leave */
	cp_hystart_round(&h);
	for (i = 0; i < 8; i++)
		cp_hystart_rtt(&h, 150000);
	CHECK(h.css);
	for (r = 1; r < CP_HS_CSS_ROUNDS; r++) {
		CHECK_EQ(cp_hystart_round(&h), CP_HS_NONE);
		for (i = 0; i < 8; i++)
			CHECK_EQ(cp_hystart_rtt(&h, 160000), CP_HS_NONE);
	}
	CHECK_EQ(cp_hystart_round(&h), CP_HS_EXIT);
	CHECK(!h.css);
	/* short paths: the 4 ms floor; long ones: the 16 ms ceiling */
	cp_hystart_init(&h);
	for (i = 0; i < 8; i++)
		cp_hystart_rtt(&h, 1000);
	cp_hystart_round(&h);
	for (i = 0; i < 8; i++)
		CHECK_EQ(cp_hystart_rtt(&h, 4999), CP_HS_NONE);
	cp_hystart_init(&h);
	for (i = 0; i < 8; i++)
		cp_hystart_rtt(&h, 400000);
	cp_hystart_round(&h);
	for (i = 0; i < 7; i++)
		cp_hystart_rtt(&h, 416000);
	CHECK_EQ(cp_hystart_rtt(&h, 416000), CP_HS_CSS);
	/* fewer than N_RTT_SAMPLE samples decide nothing; 0 is no sample */
	cp_hystart_init(&h);
	for (i = 0; i < 8; i++)
		cp_hystart_rtt(&h, 10000);
	cp_hystart_round(&h);
	for (i = 0; i < 7; i++)
		CHECK_EQ(cp_hystart_rtt(&h, 50000), CP_HS_NONE);
	CHECK_EQ(cp_hystart_rtt(&h, 0), CP_HS_NONE);
	CHECK_EQ(h.samples, 7);
}

int main(void)
{
	test_cbrt();
	test_k();
	test_window();
	test_target();
	test_loss();
	test_epoch_start();
	test_west();
	test_epochs();
	test_shape();
	test_hystart();
	return CHECK_SUMMARY();
}
