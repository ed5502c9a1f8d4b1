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
 * sequence numbers, tolerating the reordering of events built on different
 * CPUs (struct seqwin). Memory stays the same however long it runs: the
 * hold-time quantiles come from a fixed-size histogram (struct stats).
 *
 * Survives the module being unloaded and loaded again: nlctrl's
 * notifications say when the family goes and comes back. Those travel on
 * the same socket as the events, so an overrun can drop them; after every
 * overrun the family is resolved again and the group joined again, and a
 * module whose event numbering restarted is noticed through GET_STATS.
 * Only messages from the kernel are read; a malformed event is counted and
 * skipped.
 *
 * SIGTERM/SIGINT: final summary, flush, exit 0. SIGHUP: reopen files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
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
#include <sys/stat.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "event.h"
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
	struct seqwin win;		/* event numbers seen */
	uint64_t received;		/* events of the family read */
	uint64_t malformed;		/* ... skipped: bad attributes */
	uint64_t foreign;		/* messages not from the kernel */
	uint64_t overruns, reloads, resolves;
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

static uint64_t kernel_event_seq(void);

/*
 * Resolve tcp_oooprobe and join its event group. FIRST: at start; WHY: what
 * made us look again, for the message.
 */
static int attach(int first, const char *why)
{
	uint16_t id;
	uint32_t group;
	int err;

	err = genl_resolve(g.req, &g.seq, TCP_OOOPROBE_GENL_NAME,
			   TCP_OOOPROBE_MCGRP_EVENTS, &id, &group);
	if (err == -ENOENT && !first && g.family) {
		fprintf(stderr, "oooprobed: %s is gone (%s); waiting for it to come back\n",
			TCP_OOOPROBE_GENL_NAME, why);
		g.family = 0;
		seqwin_flush(&g.win);
	}
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
	if (!first && id == g.family && group == g.group) {
		/*
		 * The same family (joining again is harmless). Were it loaded
		 * again under the same id, its numbering started over: below
		 * what we saw.
		 */
		if (g.win.started && kernel_event_seq() < g.win.hi) {
			fprintf(stderr, "oooprobed: %s was loaded again (%s); numbering restarted\n",
				TCP_OOOPROBE_GENL_NAME, why);
			g.reloads++;
			seqwin_flush(&g.win);
		}
		return 0;
	}
	if (!first) {
		/* a new module: what was missing of the old one is lost */
		seqwin_flush(&g.win);
		g.reloads++;
	}
	g.family = id;
	g.group = group;
	if (!first)
		fprintf(stderr, "oooprobed: %s is back (family %u, %s); resubscribed\n",
			TCP_OOOPROBE_GENL_NAME, id, why);
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

/* The module's last event number; UINT64_MAX when it cannot be read. */
static uint64_t kernel_event_seq(void)
{
	struct kstats k;

	if (get_kstats(&k) || !k.ok)
		return UINT64_MAX;
	return k.v[TCP_OOOPROBE_A_EVENT_SEQ];
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
		g.win.lost, g.overruns);
	fprintf(f, "events received: %" PRIu64 "; out of order %" PRIu64 ", missing within the reordering window %" PRIu64 ", late %" PRIu64 ", duplicate %" PRIu64 ", malformed %" PRIu64 ", not from the kernel %" PRIu64 "; family re-resolved %" PRIu64 " times, module reloads %" PRIu64 "\n",
		g.received, g.win.reordered, seqwin_pending(&g.win),
		g.win.late, g.win.dups, g.malformed, g.foreign, g.resolves,
		g.reloads);
	if (!get_kstats(&k) && k.ok)
		fprintf(f, "kernel: events sent %" PRIu64 ", dropped %" PRIu64 ", flows tracked %" PRIu64 ", flow overflows %" PRIu64 ", range overflows %" PRIu64 ", ranges recorded %" PRIu64 " released %" PRIu64 ", probe hits missed %" PRIu64 "; range bytes %" PRIu64 " of %" PRIu64 ", refused by the budget %" PRIu64 ", segments not queued %" PRIu64 "\n",
			k.v[TCP_OOOPROBE_A_STAT_EVENTS_SENT],
			k.v[TCP_OOOPROBE_A_STAT_EVENTS_DROPPED],
			k.v[TCP_OOOPROBE_A_STAT_FLOWS_TRACKED],
			k.v[TCP_OOOPROBE_A_STAT_FLOW_OVERFLOWS],
			k.v[TCP_OOOPROBE_A_STAT_RANGE_OVERFLOWS],
			k.v[TCP_OOOPROBE_A_STAT_RANGES_RECORDED],
			k.v[TCP_OOOPROBE_A_STAT_RANGES_RELEASED],
			k.v[TCP_OOOPROBE_A_STAT_KPROBE_MISSED],
			k.v[TCP_OOOPROBE_A_STAT_RANGE_BYTES],
			k.v[TCP_OOOPROBE_A_STAT_MAX_RANGE_BYTES],
			k.v[TCP_OOOPROBE_A_STAT_RANGE_BUDGET_REFUSED],
			k.v[TCP_OOOPROBE_A_STAT_SEGS_NOT_QUEUED]);
	else
		fprintf(f, "kernel: %s not loaded\n", TCP_OOOPROBE_GENL_NAME);
	fflush(f);
}

/*
 * Write a new file next to FILE, then rename it over FILE: node_exporter
 * never sees half of it. The new file gets an unpredictable name, created
 * with O_EXCL (mkostemp), so nothing planted in the directory, a symlink
 * least of all, is followed; rename replaces a symlink at FILE itself
 * instead of writing through it. The name starts with a dot and does not
 * end in .prom, so the textfile collector never reads it.
 */
static FILE *prom_tmp(char *tmp, size_t n)
{
	char dir[4096], base[4096];
	FILE *f;
	int fd;

	snprintf(dir, sizeof(dir), "%s", opt.prom_path);
	snprintf(base, sizeof(base), "%s", opt.prom_path);
	if ((size_t)snprintf(tmp, n, "%s/.%s.XXXXXX", dirname(dir),
			     basename(base)) >= n) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* what fopen(w) gave under the usual umask: node_exporter reads it */
	if (fchmod(fd, 0644) || !(f = fdopen(fd, "w"))) {
		int err = errno;

		close(fd);
		unlink(tmp);
		errno = err;
		return NULL;
	}
	return f;
}

static void write_prom(void)
{
	char tmp[4096];
	struct kstats k;
	FILE *f;

	if (!opt.prom_path)
		return;
	f = prom_tmp(tmp, sizeof(tmp));
	if (!f) {
		fprintf(stderr, "oooprobed: temporary file for %s: %s\n",
			opt.prom_path, strerror(errno));
		return;
	}
	stats_print_prom(&g.st, f);
	fprintf(f, "# HELP oooprobe_events_lost_total Events the daemon missed (sequence gaps that left the reordering window).\n# TYPE oooprobe_events_lost_total counter\noooprobe_events_lost_total %" PRIu64 "\n",
		g.win.lost);
	fprintf(f, "# HELP oooprobe_events_received_total Events the daemon read.\n# TYPE oooprobe_events_received_total counter\noooprobe_events_received_total %" PRIu64 "\n",
		g.received);
	fprintf(f, "# HELP oooprobe_events_reordered_total Events that arrived after a later-numbered one.\n# TYPE oooprobe_events_reordered_total counter\noooprobe_events_reordered_total %" PRIu64 "\n",
		g.win.reordered);
	fprintf(f, "# HELP oooprobe_events_malformed_total Events skipped: bad attributes.\n# TYPE oooprobe_events_malformed_total counter\noooprobe_events_malformed_total %" PRIu64 "\n",
		g.malformed);
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
		fprintf(f, "# HELP oooprobe_kernel_range_bytes Bytes of out-of-order range arrays the module holds.\n# TYPE oooprobe_kernel_range_bytes gauge\noooprobe_kernel_range_bytes %" PRIu64 "\n",
			k.v[TCP_OOOPROBE_A_STAT_RANGE_BYTES]);
		fprintf(f, "# HELP oooprobe_kernel_range_bytes_budget The module's budget for them (max_range_bytes).\n# TYPE oooprobe_kernel_range_bytes_budget gauge\noooprobe_kernel_range_bytes_budget %" PRIu64 "\n",
			k.v[TCP_OOOPROBE_A_STAT_MAX_RANGE_BYTES]);
		fprintf(f, "# HELP oooprobe_kernel_range_budget_refused_total Range array growths refused by the budget.\n# TYPE oooprobe_kernel_range_budget_refused_total counter\noooprobe_kernel_range_budget_refused_total %" PRIu64 "\n",
			k.v[TCP_OOOPROBE_A_STAT_RANGE_BUDGET_REFUSED]);
		fprintf(f, "# HELP oooprobe_kernel_segs_not_queued_total Out-of-order segments the kernel did not queue (not recorded).\n# TYPE oooprobe_kernel_segs_not_queued_total counter\noooprobe_kernel_segs_not_queued_total %" PRIu64 "\n",
			k.v[TCP_OOOPROBE_A_STAT_SEGS_NOT_QUEUED]);
		fprintf(f, "# HELP oooprobe_kernel_kprobe_missed_total Probe hits the kprobe layer dropped: nested in another probe handler on the same CPU, or no free kretprobe instance.\n# TYPE oooprobe_kernel_kprobe_missed_total counter\noooprobe_kernel_kprobe_missed_total{kind=\"nested\"} %" PRIu64 "\noooprobe_kernel_kprobe_missed_total{kind=\"no_instance\"} %" PRIu64 "\n",
			k.v[TCP_OOOPROBE_A_STAT_KPROBE_MISSED_NESTED],
			k.v[TCP_OOOPROBE_A_STAT_KPROBE_MISSED_NOINST]);
	}
	if (fflush(f) || ferror(f) || fclose(f) || rename(tmp, opt.prom_path)) {
		fprintf(stderr, "oooprobed: writing %s: %s\n", opt.prom_path,
			strerror(errno));
		unlink(tmp);
	}
}

/* ---- events ------------------------------------------------------------- */

static void json_tuple(const struct event *e)
{
	fprintf(g.json, "\"event_seq\":%" PRIu64 ",\"netns_cookie\":%" PRIu64 ",\"family\":%u,\"local\":\"%s\",\"local_port\":%u,\"remote\":\"%s\",\"remote_port\":%u",
		e->v[TCP_OOOPROBE_A_EVENT_SEQ],
		e->v[TCP_OOOPROBE_A_NETNS_COOKIE],
		e->v[TCP_OOOPROBE_A_FAMILY] == AF_INET6 ? 6 : 4, e->laddr,
		(unsigned int)e->v[TCP_OOOPROBE_A_LOCAL_PORT], e->raddr,
		(unsigned int)e->v[TCP_OOOPROBE_A_REMOTE_PORT]);
}

static int ev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct genlmsghdr *gh = mnl_nlmsg_get_payload(nlh);
	struct event e;

	(void)data;
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(*gh))
		return MNL_CB_OK;
	if (nlh->nlmsg_type == GENL_ID_CTRL) {
		struct nlattr *a;
		const char *name = NULL;

		mnl_attr_for_each(a, nlh, sizeof(*gh))
			if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_NAME &&
			    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
				name = mnl_attr_get_str(a);
		if (!name || strcmp(name, TCP_OOOPROBE_GENL_NAME))
			return MNL_CB_OK;
		if (gh->cmd == CTRL_CMD_DELFAMILY && g.family) {
			fprintf(stderr, "oooprobed: %s was unloaded; waiting for it to come back\n",
				TCP_OOOPROBE_GENL_NAME);
			g.family = 0;
			seqwin_flush(&g.win);
		} else if (gh->cmd == CTRL_CMD_NEWFAMILY) {
			/* also when the DELFAMILY before it was missed */
			attach(0, "nlctrl announced it");
		}
		return MNL_CB_OK;
	}
	if (!g.family || nlh->nlmsg_type != g.family)
		return MNL_CB_OK;
	if (gh->cmd != TCP_OOOPROBE_CMD_SEGMENT &&
	    gh->cmd != TCP_OOOPROBE_CMD_FLOW)
		return MNL_CB_OK;
	g.received++;
	if (event_parse(nlh, &e)) {
		/* its number, if it has one, still arrived */
		if (e.has[TCP_OOOPROBE_A_EVENT_SEQ])
			seqwin_add(&g.win, e.v[TCP_OOOPROBE_A_EVENT_SEQ]);
		if (!g.malformed++)
			fprintf(stderr, "oooprobed: malformed event skipped (counted in the summary)\n");
		return MNL_CB_OK;
	}
	if (e.has[TCP_OOOPROBE_A_EVENT_SEQ])
		seqwin_add(&g.win, e.v[TCP_OOOPROBE_A_EVENT_SEQ]);
	if (gh->cmd == TCP_OOOPROBE_CMD_SEGMENT) {
		uint64_t tin = e.v[TCP_OOOPROBE_A_TIME_IN];
		uint64_t tout = e.v[TCP_OOOPROBE_A_TIME_OUT];
		uint64_t hold = tout > tin ? tout - tin : 0;

		stats_add_hold(&g.st, hold);
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

/*
 * Messages read before going back to the main loop: under a stream faster
 * than we read, the timers (summary, textfile) and signals still run.
 */
#define READ_BUDGET 4096

/* Returns 1 when it stopped at READ_BUDGET (more may be waiting). */
static int read_events(void)
{
	static char buf[1 << 16];
	struct sockaddr_nl from;
	socklen_t fromlen;
	int n, overrun = 0, budget = READ_BUDGET;

	while (budget-- > 0) {
		fromlen = sizeof(from);
		n = recvfrom(mnl_socket_get_fd(g.ev), buf, sizeof(buf),
			     MSG_DONTWAIT, (struct sockaddr *)&from, &fromlen);
		if (n < 0) {
			if (errno == ENOBUFS) {
				/* the kernel dropped messages for us: events
				 * (the gap in event numbers tells how many),
				 * maybe nlctrl's word that the family changed
				 */
				g.overruns++;
				overrun = 1;
				continue;
			}
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				fprintf(stderr, "oooprobed: recv: %s\n",
					strerror(errno));
			break;
		}
		/* a process with CAP_NET_ADMIN can send to our port too */
		if (fromlen != sizeof(from) || from.nl_pid != 0) {
			g.foreign++;
			continue;
		}
		mnl_cb_run(buf, n, 0, 0, ev_cb, NULL);
	}
	if (overrun) {
		g.resolves++;
		attach(0, "after a socket overrun");
	}
	return budget < 0;
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
	seqwin_init(&g.win);
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
	err = attach(1, "start");
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
	/* what the socket holds (an 8 MiB buffer: a few batches), bounded
	 * in case the stream outruns us
	 */
	for (c = 0; c < 64 && read_events(); c++)
		;
	/* nothing more will come: what is still missing is lost */
	seqwin_flush(&g.win);
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
