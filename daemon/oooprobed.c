// SPDX-License-Identifier: GPL-2.0
/*
 * oooprobed: subscribe to the tcp_oooprobe generic netlink family and turn
 * its events into the statistics of Patrick McManus's "Long Out Of Order
 * Queueing Delays" (2010).
 *
 *   oooprobed [--json FILE|-] [--prom FILE] [--interval SEC]
 *             [--duration SEC] [--report] [--quiet] [--rcvbuf BYTES]
 *
 * Needs CAP_NET_ADMIN (the event group is restricted). Lost events are
 * counted from socket overruns (ENOBUFS) and from gaps in the events'
 * sequence numbers. Survives the module being unloaded and loaded again.
 * SIGTERM/SIGINT: final summary, flush, exit 0. SIGHUP: reopen files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "genl.h"
#include "stats.h"
#include "tcp_oooprobe.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

static volatile sig_atomic_t got_term, got_hup;

static struct {
	const char *json_path, *prom_path;
	double interval, duration;
	int report, quiet;
	int rcvbuf;
} opt = { .interval = 60, .rcvbuf = 8 << 20 };

static struct {
	struct mnl_socket *ev;		/* events + nlctrl notifications */
	struct mnl_socket *req;		/* GET_STATS requests */
	uint16_t family;		/* 0: not loaded */
	uint32_t group;
	unsigned int seq;
	uint64_t next_event_seq;	/* 0: unknown */
	uint64_t lost_gap, overruns, reloads;
	FILE *json;
	struct stats st;
} g;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else
		got_term = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- family resolution -------------------------------------------------- */

static int join(struct mnl_socket *nl, uint32_t group)
{
	return mnl_socket_setsockopt(nl, NETLINK_ADD_MEMBERSHIP, &group,
				     sizeof(group));
}

/* Resolve tcp_oooprobe and join its event group. */
static int attach(int first)
{
	uint16_t id;
	uint32_t group;
	int err;

	err = genl_resolve(g.req, &g.seq, TCP_OOOPROBE_GENL_NAME,
			   TCP_OOOPROBE_MCGRP_EVENTS, &id, &group);
	if (err)
		return err;
	if (!group) {
		fprintf(stderr, "oooprobed: family %s has no group %s\n",
			TCP_OOOPROBE_GENL_NAME, TCP_OOOPROBE_MCGRP_EVENTS);
		return -EPROTO;
	}
	if (join(g.ev, group) < 0) {
		err = -errno;
		if (err == -EPERM)
			fprintf(stderr, "oooprobed: subscribing to %s events needs CAP_NET_ADMIN (run as root)\n",
				TCP_OOOPROBE_GENL_NAME);
		else
			fprintf(stderr, "oooprobed: joining group %s: %s\n",
				TCP_OOOPROBE_MCGRP_EVENTS, strerror(-err));
		return err;
	}
	g.family = id;
	g.group = group;
	g.next_event_seq = 0;
	if (!first)
		fprintf(stderr, "oooprobed: %s is back (family %u); resubscribed\n",
			TCP_OOOPROBE_GENL_NAME, id);
	return 0;
}

/* ---- kernel statistics -------------------------------------------------- */

struct kstats {
	uint64_t v[TCP_OOOPROBE_A_MAX + 1];
	int ok;
};

static int kstats_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kstats *k = data;
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		int t = mnl_attr_get_type(a);

		if (t > TCP_OOOPROBE_A_MAX)
			continue;
		if (mnl_attr_get_payload_len(a) == 8)
			k->v[t] = mnl_attr_get_u64(a);
		else if (mnl_attr_get_payload_len(a) == 4)
			k->v[t] = mnl_attr_get_u32(a);
	}
	k->ok = 1;
	return MNL_CB_OK;
}

static int get_kstats(struct kstats *k)
{
	memset(k, 0, sizeof(*k));
	if (!g.family)
		return -ENOENT;
	return genl_request(g.req, &g.seq, g.family,
			    TCP_OOOPROBE_CMD_GET_STATS,
			    TCP_OOOPROBE_GENL_VERSION, 0, NULL, kstats_cb, k);
}

/* ---- outputs ------------------------------------------------------------ */

static int open_json(void)
{
	if (!opt.json_path)
		return 0;
	if (g.json && g.json != stdout)
		fclose(g.json);
	if (!strcmp(opt.json_path, "-")) {
		g.json = stdout;
		return 0;
	}
	g.json = fopen(opt.json_path, "a");
	if (!g.json) {
		fprintf(stderr, "oooprobed: %s: %s\n", opt.json_path,
			strerror(errno));
		return -1;
	}
	return 0;
}

static void print_summary(FILE *f, const char *what, double elapsed)
{
	struct kstats k;

	fprintf(f, "== oooprobed %s after %.0f s\n", what, elapsed);
	stats_print(&g.st, f);
	fprintf(f, "events lost: %" PRIu64 " (sequence gaps), socket overruns (ENOBUFS): %" PRIu64 "\n",
		g.lost_gap, g.overruns);
	if (!get_kstats(&k) && k.ok)
		fprintf(f, "kernel: events sent %" PRIu64 ", dropped %" PRIu64 ", flows tracked %" PRIu64 ", flow overflows %" PRIu64 ", range overflows %" PRIu64 ", ranges recorded %" PRIu64 " released %" PRIu64 ", probe hits missed %" PRIu64 "\n",
			k.v[TCP_OOOPROBE_A_STAT_EVENTS_SENT],
			k.v[TCP_OOOPROBE_A_STAT_EVENTS_DROPPED],
			k.v[TCP_OOOPROBE_A_STAT_FLOWS_TRACKED],
			k.v[TCP_OOOPROBE_A_STAT_FLOW_OVERFLOWS],
			k.v[TCP_OOOPROBE_A_STAT_RANGE_OVERFLOWS],
			k.v[TCP_OOOPROBE_A_STAT_RANGES_RECORDED],
			k.v[TCP_OOOPROBE_A_STAT_RANGES_RELEASED],
			k.v[TCP_OOOPROBE_A_STAT_KPROBE_MISSED]);
	else
		fprintf(f, "kernel: %s not loaded\n", TCP_OOOPROBE_GENL_NAME);
	fflush(f);
}

/* Write FILE.tmp, then rename over FILE: node_exporter never sees half. */
static void write_prom(void)
{
	char tmp[4096];
	struct kstats k;
	FILE *f;

	if (!opt.prom_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", opt.prom_path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "oooprobed: %s: %s\n", tmp, strerror(errno));
		return;
	}
	stats_print_prom(&g.st, f);
	fprintf(f, "# HELP oooprobe_events_lost_total Events the daemon missed (sequence gaps).\n# TYPE oooprobe_events_lost_total counter\noooprobe_events_lost_total %" PRIu64 "\n",
		g.lost_gap);
	fprintf(f, "# HELP oooprobe_socket_overruns_total ENOBUFS seen on the event socket.\n# TYPE oooprobe_socket_overruns_total counter\noooprobe_socket_overruns_total %" PRIu64 "\n",
		g.overruns);
	fprintf(f, "# HELP oooprobe_module_loaded 1 when the tcp_oooprobe family is present.\n# TYPE oooprobe_module_loaded gauge\noooprobe_module_loaded %d\n",
		g.family ? 1 : 0);
	if (!get_kstats(&k) && k.ok) {
		fprintf(f, "# HELP oooprobe_kernel_events_dropped_total Events the module could not send.\n# TYPE oooprobe_kernel_events_dropped_total counter\noooprobe_kernel_events_dropped_total %" PRIu64 "\n",
			k.v[TCP_OOOPROBE_A_STAT_EVENTS_DROPPED]);
		fprintf(f, "# HELP oooprobe_kernel_flows_tracked Flows in the module's table.\n# TYPE oooprobe_kernel_flows_tracked gauge\noooprobe_kernel_flows_tracked %" PRIu64 "\n",
			k.v[TCP_OOOPROBE_A_STAT_FLOWS_TRACKED]);
		fprintf(f, "# HELP oooprobe_kernel_overflows_total Flows or ranges not tracked because a limit was hit.\n# TYPE oooprobe_kernel_overflows_total counter\noooprobe_kernel_overflows_total{kind=\"flow\"} %" PRIu64 "\noooprobe_kernel_overflows_total{kind=\"range\"} %" PRIu64 "\n",
			k.v[TCP_OOOPROBE_A_STAT_FLOW_OVERFLOWS],
			k.v[TCP_OOOPROBE_A_STAT_RANGE_OVERFLOWS]);
		fprintf(f, "# HELP oooprobe_kernel_kprobe_missed_total Probe hits the kprobe layer dropped: nested in another probe handler on the same CPU, or no free kretprobe instance.\n# TYPE oooprobe_kernel_kprobe_missed_total counter\noooprobe_kernel_kprobe_missed_total{kind=\"nested\"} %" PRIu64 "\noooprobe_kernel_kprobe_missed_total{kind=\"no_instance\"} %" PRIu64 "\n",
			k.v[TCP_OOOPROBE_A_STAT_KPROBE_MISSED_NESTED],
			k.v[TCP_OOOPROBE_A_STAT_KPROBE_MISSED_NOINST]);
	}
	if (fclose(f) || rename(tmp, opt.prom_path)) {
		fprintf(stderr, "oooprobed: writing %s: %s\n", opt.prom_path,
			strerror(errno));
		unlink(tmp);
	}
}

/* ---- events ------------------------------------------------------------- */

struct event {
	uint64_t v[TCP_OOOPROBE_A_MAX + 1];
	int has[TCP_OOOPROBE_A_MAX + 1];
	char laddr[INET6_ADDRSTRLEN], raddr[INET6_ADDRSTRLEN];
};

static int event_attr_cb(const struct nlattr *a, void *data)
{
	struct event *e = data;
	int t = mnl_attr_get_type(a), len = mnl_attr_get_payload_len(a);

	if (t <= 0 || t > TCP_OOOPROBE_A_MAX)
		return MNL_CB_OK;	/* newer module: ignore */
	e->has[t] = 1;
	switch (t) {
	case TCP_OOOPROBE_A_LOCAL_ADDR:
	case TCP_OOOPROBE_A_REMOTE_ADDR:
		inet_ntop(len == 16 ? AF_INET6 : AF_INET, mnl_attr_get_payload(a),
			  t == TCP_OOOPROBE_A_LOCAL_ADDR ? e->laddr : e->raddr,
			  INET6_ADDRSTRLEN);
		break;
	default:
		if (len == 8)
			e->v[t] = mnl_attr_get_u64(a);
		else if (len == 4)
			e->v[t] = mnl_attr_get_u32(a);
		else if (len == 2)
			e->v[t] = mnl_attr_get_u16(a);
		else if (len == 1)
			e->v[t] = mnl_attr_get_u8(a);
	}
	return MNL_CB_OK;
}

static void json_tuple(const struct event *e)
{
	fprintf(g.json, "\"event_seq\":%" PRIu64 ",\"netns_cookie\":%" PRIu64 ",\"family\":%u,\"local\":\"%s\",\"local_port\":%u,\"remote\":\"%s\",\"remote_port\":%u",
		e->v[TCP_OOOPROBE_A_EVENT_SEQ],
		e->v[TCP_OOOPROBE_A_NETNS_COOKIE],
		e->v[TCP_OOOPROBE_A_FAMILY] == AF_INET6 ? 6 : 4, e->laddr,
		(unsigned int)e->v[TCP_OOOPROBE_A_LOCAL_PORT], e->raddr,
		(unsigned int)e->v[TCP_OOOPROBE_A_REMOTE_PORT]);
}

static void track_seq(const struct event *e)
{
	uint64_t s = e->v[TCP_OOOPROBE_A_EVENT_SEQ];

	if (!e->has[TCP_OOOPROBE_A_EVENT_SEQ])
		return;
	if (g.next_event_seq && s > g.next_event_seq)
		g.lost_gap += s - g.next_event_seq;
	if (!g.next_event_seq || s >= g.next_event_seq)
		g.next_event_seq = s + 1;
}

static int ev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct genlmsghdr *gh = mnl_nlmsg_get_payload(nlh);
	struct event e;

	(void)data;
	if (nlh->nlmsg_type == GENL_ID_CTRL) {
		struct nlattr *a;
		const char *name = NULL;

		mnl_attr_for_each(a, nlh, sizeof(*gh))
			if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_NAME)
				name = mnl_attr_get_str(a);
		if (!name || strcmp(name, TCP_OOOPROBE_GENL_NAME))
			return MNL_CB_OK;
		if (gh->cmd == CTRL_CMD_DELFAMILY && g.family) {
			fprintf(stderr, "oooprobed: %s was unloaded; waiting for it to come back\n",
				TCP_OOOPROBE_GENL_NAME);
			g.family = 0;
		} else if (gh->cmd == CTRL_CMD_NEWFAMILY && !g.family) {
			g.reloads++;
			attach(0);
		}
		return MNL_CB_OK;
	}
	if (!g.family || nlh->nlmsg_type != g.family)
		return MNL_CB_OK;
	memset(&e, 0, sizeof(e));
	mnl_attr_parse(nlh, sizeof(*gh), event_attr_cb, &e);
	track_seq(&e);
	if (gh->cmd == TCP_OOOPROBE_CMD_SEGMENT) {
		uint64_t tin = e.v[TCP_OOOPROBE_A_TIME_IN];
		uint64_t tout = e.v[TCP_OOOPROBE_A_TIME_OUT];
		uint64_t hold = tout > tin ? tout - tin : 0;

		if (stats_add_hold(&g.st, hold))
			fprintf(stderr, "oooprobed: out of memory for hold times\n");
		if (g.json) {
			fputs("{\"type\":\"segment\",", g.json);
			json_tuple(&e);
			fprintf(g.json, ",\"seq\":%" PRIu64 ",\"len\":%" PRIu64 ",\"time_in_ns\":%" PRIu64 ",\"time_out_ns\":%" PRIu64 ",\"hold_ns\":%" PRIu64 "}\n",
				e.v[TCP_OOOPROBE_A_SEQ], e.v[TCP_OOOPROBE_A_LEN],
				tin, tout, hold);
		}
	} else if (gh->cmd == TCP_OOOPROBE_CMD_FLOW) {
		stats_add_flow(&g.st, e.v[TCP_OOOPROBE_A_DATA_SEGS_IN],
			       e.v[TCP_OOOPROBE_A_OOO_SEGS]);
		if (g.json) {
			fputs("{\"type\":\"flow\",", g.json);
			json_tuple(&e);
			fprintf(g.json, ",\"data_segs_in\":%" PRIu64 ",\"ooo_segs\":%" PRIu64 ",\"bytes_received\":%" PRIu64 ",\"lifetime_ns\":%" PRIu64 ",\"flags\":%" PRIu64 "}\n",
				e.v[TCP_OOOPROBE_A_DATA_SEGS_IN],
				e.v[TCP_OOOPROBE_A_OOO_SEGS],
				e.v[TCP_OOOPROBE_A_BYTES_RECEIVED],
				e.v[TCP_OOOPROBE_A_LIFETIME_NS],
				e.v[TCP_OOOPROBE_A_FLOW_FLAGS]);
		}
	}
	return MNL_CB_OK;
}

static void read_events(void)
{
	static char buf[1 << 16];
	int n;

	for (;;) {
		n = recv(mnl_socket_get_fd(g.ev), buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == ENOBUFS) {
				/* the kernel dropped events for us; the gap in
				 * event numbers tells how many
				 */
				g.overruns++;
				continue;
			}
			if (errno == EAGAIN || errno == EINTR)
				return;
			fprintf(stderr, "oooprobed: recv: %s\n", strerror(errno));
			return;
		}
		mnl_cb_run(buf, n, 0, 0, ev_cb, NULL);
	}
}

/* ---- main --------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: oooprobed [--json FILE|-] [--prom FILE] [--interval SEC]\n"
		"                 [--duration SEC] [--report] [--quiet] [--rcvbuf BYTES]\n"
		"  --json FILE|-   one JSON object per event (append; - is stdout)\n"
		"  --prom FILE     Prometheus textfile, rewritten atomically every interval\n"
		"  --interval SEC  periodic summary on stdout (default 60, 0: none)\n"
		"  --duration SEC  exit after SEC seconds\n"
		"  --report        no periodic summary; print the final one and exit\n"
		"                  after --duration (default 10 s)\n"
		"  --quiet         no periodic summary (the final one is still printed)\n"
		"  --rcvbuf BYTES  event socket buffer (default 8 MiB)\n"
		"Signals: TERM/INT flush and exit 0, HUP reopens the output files.\n");
}

static int parse_num(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || *out < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "prom", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "report", no_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "rcvbuf", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa;
	uint16_t ctrl_id;
	uint32_t ctrl_group;
	double t0, next_tick, d;
	int c, err;

	while ((c = getopt_long(argc, argv, "j:p:i:d:rqb:h", lo, NULL)) != -1) {
		switch (c) {
		case 'j':
			opt.json_path = optarg;
			break;
		case 'p':
			opt.prom_path = optarg;
			break;
		case 'i':
			if (parse_num(optarg, &opt.interval))
				goto bad;
			break;
		case 'd':
			if (parse_num(optarg, &opt.duration) || !opt.duration)
				goto bad;
			break;
		case 'r':
			opt.report = 1;
			break;
		case 'q':
			opt.quiet = 1;
			break;
		case 'b':
			if (parse_num(optarg, &d) || d < 4096 || d > (1 << 30))
				goto bad;
			opt.rcvbuf = (int)d;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
bad:
		fprintf(stderr, "oooprobed: bad argument %s\n",
			optind < argc ? argv[optind] : (optarg ? optarg : ""));
		usage(stderr);
		return 2;
	}
	if (opt.report && !opt.duration)
		opt.duration = 10;

	stats_init(&g.st);
	g.ev = mnl_socket_open(NETLINK_GENERIC);
	g.req = mnl_socket_open(NETLINK_GENERIC);
	if (!g.ev || !g.req || mnl_socket_bind(g.ev, 0, MNL_SOCKET_AUTOPID) ||
	    mnl_socket_bind(g.req, 0, MNL_SOCKET_AUTOPID)) {
		fprintf(stderr, "oooprobed: netlink socket: %s\n", strerror(errno));
		return 1;
	}
	/* SO_RCVBUFFORCE needs CAP_NET_ADMIN, which we need anyway */
	if (setsockopt(mnl_socket_get_fd(g.ev), SOL_SOCKET, SO_RCVBUFFORCE,
		       &opt.rcvbuf, sizeof(opt.rcvbuf)))
		setsockopt(mnl_socket_get_fd(g.ev), SOL_SOCKET, SO_RCVBUF,
			   &opt.rcvbuf, sizeof(opt.rcvbuf));
	/* nlctrl notifications: the family going away and coming back */
	if (!genl_resolve(g.req, &g.seq, "nlctrl", "notify", &ctrl_id,
			  &ctrl_group) && ctrl_group)
		join(g.ev, ctrl_group);
	err = attach(1);
	if (err == -ENOENT) {
		fprintf(stderr, "oooprobed: generic netlink family %s not found: load the module (modprobe tcp_oooprobe, or insmod kmod/tcp_oooprobe.ko)\n",
			TCP_OOOPROBE_GENL_NAME);
		return 1;
	}
	if (err)
		return 1;
	if (open_json())
		return 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	t0 = now_s();
	next_tick = opt.interval > 0 ? t0 + opt.interval : 0;
	if (!opt.report && !opt.quiet)
		fprintf(stderr, "oooprobed: listening to %s events\n",
			TCP_OOOPROBE_GENL_NAME);
	while (!got_term) {
		struct pollfd pfd = { .fd = mnl_socket_get_fd(g.ev),
				      .events = POLLIN };
		double now = now_s(), wait = 1.0;

		if (opt.duration && now - t0 >= opt.duration)
			break;
		if (next_tick && now >= next_tick) {
			if (!opt.report && !opt.quiet)
				print_summary(stdout, "summary", now - t0);
			write_prom();
			if (g.json)
				fflush(g.json);
			next_tick += opt.interval;
		}
		if (next_tick && next_tick - now < wait)
			wait = next_tick - now;
		if (opt.duration && t0 + opt.duration - now < wait)
			wait = t0 + opt.duration - now;
		if (wait < 0)
			wait = 0;
		if (poll(&pfd, 1, (int)(wait * 1000) + 1) > 0)
			read_events();
		if (got_hup) {
			got_hup = 0;
			open_json();
			fprintf(stderr, "oooprobed: SIGHUP: output files reopened\n");
		}
	}
	read_events();
	print_summary(stdout, "final summary", now_s() - t0);
	write_prom();
	if (g.json && g.json != stdout)
		fclose(g.json);
	else if (g.json)
		fflush(g.json);
	stats_free(&g.st);
	mnl_socket_close(g.ev);
	mnl_socket_close(g.req);
	return 0;
}
