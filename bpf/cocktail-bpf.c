// SPDX-License-Identifier: GPL-2.0
/*
 * cocktail-bpf: load, configure and watch the BPF build of cocktail.
 *
 *   cocktail-bpf load [--btf FILE] [--verifier-stats] [-v]
 *                                         register "cocktail_bpf"
 *   cocktail-bpf unload                   unregister it
 *   cocktail-bpf status                   registered or not
 *   cocktail-bpf get [NAME]               parameters ("name value" lines)
 *   cocktail-bpf set NAME=VALUE...        set parameters, all or none
 *   cocktail-bpf stats                    counters, as the module's stats
 *   cocktail-bpf events [-t SECONDS]      print restart / pace-end / check events
 *
 * The program outlives the tool: load registers the struct_ops map and
 * pins it, its global data (parameters, counters) and its ring buffer
 * under /sys/fs/bpf/cocktail_bpf, where the other commands find them;
 * unload deletes the map's element, which unregisters the algorithm, and
 * removes the pins.  Connections that use it keep it until they close,
 * as for every BPF congestion control.
 *
 * load --verifier-stats prints, for every program, the verifier's own
 * count of the instructions it processed against the kernel's limit (one
 * million): the restart path is long, and a change that brings it near
 * the limit on one kernel may be refused by another, whose verifier
 * explores more states.  It prints them whether the load succeeds or not.
 *
 * Parameters have the module's names, ranges and defaults; a set checks
 * every value first and writes nothing when one is invalid.  Events print
 * as the module's tracepoints do ("cocktail_restart: sport=... "), so one
 * parser reads both.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <zlib.h>

#include "../kmod/cocktail_policy.h"
#include "../kmod/cocktail_state.h"
#include "cocktail_bpf.h"
#include "cocktail.skel.h"

#define PIN_DIR		"/sys/fs/bpf/cocktail_bpf"
#define PIN_OPS		PIN_DIR "/ops"
#define PIN_DATA	PIN_DIR "/data"
#define PIN_BSS		PIN_DIR "/bss"
#define PIN_EVENTS	PIN_DIR "/events"
#define BPF_FS_MAGIC_	0xcafe4a11
#define KERNEL_BTF	"/sys/kernel/btf/vmlinux"

typedef struct cocktail_bpf__data params_t;
typedef struct cocktail_bpf__bss bss_t;

static bool verbose;

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("cocktail-bpf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* libbpf's messages (the verifier's log among them) only with -v. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (!verbose || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ---- parameters ---------------------------------------------------- */

enum param_kind { P_IW, P_CHOICE, P_UINT };

struct param {
	const char *name;
	enum param_kind kind;
	size_t off;			/* in params_t */
	unsigned int min, max;		/* P_UINT */
	const char *const *names;	/* P_CHOICE */
	unsigned int n;
	const char *help;		/* the module's description of it */
};

#define OFF(f) __builtin_offsetof(params_t, f)

static const struct param params[] = {
	{ "iw", P_IW, OFF(iw), CP_IW_MIN, CP_IW_MAX, NULL, 0,
	  "1..64 segments or rfc3390" },
	{ "restart", P_CHOICE, OFF(restart), 0, 0, cocktail_policy_names,
	  CP_NR_POLICIES, "ssr | decay | keep | pace | auto | queue | measure" },
	{ "auto_rtt_us", P_UINT, OFF(auto_rtt_us), 1, 10000000, NULL, 0,
	  "1..10000000" },
	{ "queue_pct", P_UINT, OFF(queue_pct), 101, 1000, NULL, 0,
	  "101..1000" },
	{ "growth", P_CHOICE, OFF(growth), 0, 0, cocktail_growth_names,
	  CP_NR_GROWTHS, "reno | cubic" },
	{ "pace_rate", P_CHOICE, OFF(pace_rate), 0, 0, cocktail_rate_names,
	  CP_NR_RATES, "delivery | window | max" },
	{ "cwv", P_UINT, OFF(cwv), CP_CWV_OFF, CP_CWV_7661, NULL, 0,
	  "0 off, 1 RFC 2861, 2 RFC 7661" },
	{ "nvp_s", P_UINT, OFF(nvp_s), 1, CP_NVP_MAX_S, NULL, 0, "1..3600" },
	{ "pace_iw", P_UINT, OFF(pace_iw), 0, 1, NULL, 0, "0 or 1" },
	{ "pace_burst", P_UINT, OFF(pace_burst), 0, 1, NULL, 0, "0 or 1" },
	{ "ssthresh_est", P_UINT, OFF(ssthresh_est), 0, 1, NULL, 0, "0 or 1" },
	{ "check_rtt_pct", P_UINT, OFF(check_rtt_pct), 101, 1000, NULL, 0,
	  "101..1000" },
	{ "check_rate_pct", P_UINT, OFF(check_rate_pct), 1, 99, NULL, 0,
	  "1..99" },
	{ "check_rate_miss", P_UINT, OFF(check_rate_miss), 0, 1, NULL, 0,
	  "0 or 1" },
	{ "probe_pct", P_UINT, OFF(probe_pct), 100, 400, NULL, 0,
	  "100..400" },
	{ "wnd_cap", P_UINT, OFF(wnd_cap), 0, 1, NULL, 0, "0 or 1" },
	{ "queue_room", P_UINT, OFF(queue_room), 0, 1, NULL, 0, "0 or 1" },
	{ "shared_burst", P_UINT, OFF(shared_burst), 0, 1, NULL, 0,
	  "0 or 1" },
	{ "shared_rtt", P_UINT, OFF(shared_rtt), 0, 1, NULL, 0, "0 or 1" },
	{ "pace_floor", P_UINT, OFF(pace_floor), 0, 1, NULL, 0, "0 or 1" },
	{ "ssr_floor", P_UINT, OFF(ssr_floor), 0, 1, NULL, 0, "0 or 1" },
	{ "quiet_pct", P_UINT, OFF(quiet_pct), 100, 200, NULL, 0,
	  "100..200" },
	{ "ensemble", P_UINT, OFF(ensemble), 0, 1, NULL, 0, "0 or 1" },
};

#define NPARAMS (sizeof(params) / sizeof(params[0]))

static const struct param *find_param(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NPARAMS; i++)
		if (strlen(params[i].name) == len &&
		    !strncmp(params[i].name, name, len))
			return &params[i];
	return NULL;
}

/* sysfs_streq(): equal, ignoring one trailing newline on either side. */
static bool streq_nl(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la && a[la - 1] == '\n')
		la--;
	if (lb && b[lb - 1] == '\n')
		lb--;
	return la == lb && !strncmp(a, b, la);
}

/* kstrtouint(s, 10): digits (an optional '+'), one trailing newline. */
static bool parse_uint(const char *s, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (*s == '+')
		s++;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || v > UINT_MAX)
		return false;
	if (*end == '\n')
		end++;
	if (*end)
		return false;
	*out = (unsigned int)v;
	return true;
}

/* The module's parser for @p: false (EINVAL) when it would refuse @val. */
static bool parse_param(const struct param *p, const char *val,
			unsigned int *out)
{
	unsigned int i, n;

	switch (p->kind) {
	case P_IW:
		if (streq_nl(val, "rfc3390")) {
			*out = CP_IW_RFC3390;
			return true;
		}
		/* fallthrough */
	case P_UINT:
		if (!parse_uint(val, &n) || n < p->min || n > p->max)
			return false;
		*out = n;
		return true;
	case P_CHOICE:
		for (i = 0; i < p->n; i++)
			if (streq_nl(val, p->names[i])) {
				*out = i;
				return true;
			}
		return false;
	}
	return false;
}

static void format_param(const struct param *p, const params_t *v,
			 char *buf, size_t len)
{
	unsigned int x;

	memcpy(&x, (const char *)v + p->off, sizeof(x));
	if (p->kind == P_IW && x == CP_IW_RFC3390)
		snprintf(buf, len, "rfc3390");
	else if (p->kind == P_CHOICE)
		snprintf(buf, len, "%s", x < p->n ? p->names[x] : "?");
	else
		snprintf(buf, len, "%u", x);
}

/* ---- pinned maps --------------------------------------------------- */

static int pinned(const char *path)
{
	int fd = bpf_obj_get(path);

	if (fd < 0) {
		if (errno == ENOENT)
			die("%s is not loaded (cocktail-bpf load)",
			    COCKTAIL_BPF_NAME);
		die("cannot open %s: %s", path, strerror(errno));
	}
	return fd;
}

static void read_value(const char *path, void *val)
{
	int fd = pinned(path);
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, val))
		die("cannot read %s: %s", path, strerror(errno));
	close(fd);
}

static bool registered(void)
{
	char buf[4096], *tok, *save;
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_available_congestion_control",
			"r");
	bool found = false;

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f))
		for (tok = strtok_r(buf, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save))
			if (!strcmp(tok, COCKTAIL_BPF_NAME))
				found = true;
	fclose(f);
	return found;
}

/* ---- load ---------------------------------------------------------- */

/*
 * What the kernel must offer, checked before libbpf runs so that a
 * kernel without it gets one sentence instead of a loader log.
 */
static void check_kernel(const char *btf_path)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;
	struct btf *btf;

	if (access(btf_path, R_OK))
		die("this kernel has no BTF (%s: %s); the BPF build needs a kernel built with CONFIG_DEBUG_INFO_BTF=y, use the module tcp_cocktail instead",
		    btf_path, strerror(errno));
	btf = btf__parse(btf_path, NULL);
	if (!btf)
		die("this kernel has no usable BTF (%s: %s); the BPF build needs a kernel built with CONFIG_DEBUG_INFO_BTF=y, use the module tcp_cocktail instead",
		    btf_path, strerror(errno));
	if (btf__find_by_name_kind(btf, "bpf_struct_ops_tcp_congestion_ops",
				   BTF_KIND_STRUCT) < 0 ||
	    btf__find_by_name_kind(btf, "tcp_slow_start", BTF_KIND_FUNC) < 0) {
		btf__free(btf);
		die("this kernel cannot take a congestion control from BPF (no struct_ops for tcp_congestion_ops in its BTF); use the module tcp_cocktail instead");
	}
	btf__free(btf);
	/* BPF congestion controls may set the pacing rate from 6.0 on. */
	if (!uname(&u) && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
	    (major < 6))
		die("Linux %s is too old: the BPF build sets the pacing rate, which BPF congestion controls may do from 6.0 on; use the module tcp_cocktail instead",
		    u.release);
}

static void ensure_bpffs(void)
{
	struct statfs st;

	if (!statfs("/sys/fs/bpf", &st) && st.f_type == BPF_FS_MAGIC_)
		return;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL))
		die("cannot mount the BPF file system on /sys/fs/bpf: %s",
		    strerror(errno));
}

static void load_error(const char *what, int err)
{
	if ((err == EPERM || err == EACCES) && geteuid())
		die("%s: %s; loading needs root (CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON)",
		    what, strerror(err));
	if (err == EACCES)
		die("%s: the verifier refused it (cocktail-bpf -v load shows its log)",
		    what);
	if (err == EEXIST)
		die("%s: an algorithm named %s is already registered",
		    what, COCKTAIL_BPF_NAME);
	die("%s: %s (cocktail-bpf -v load shows the kernel's log)", what,
	    strerror(err));
}

/*
 * The program converts between jiffies and microseconds with CONFIG_HZ, a
 * __kconfig extern.  libbpf reads such externs from
 * /boot/config-$(uname -r) or /proc/config.gz and refuses to load the
 * object (EINVAL) when it can open neither, as on a kernel built without
 * CONFIG_IKCONFIG_PROC whose config file was not installed.  So the tool
 * reads the two files itself and, when neither names CONFIG_HZ, counts the
 * jiffies /proc/timer_list shows over HZ_SAMPLE_NS; the value reaches
 * libbpf as its kconfig option, and libbpf then reads no file.
 */
#define HZ_SAMPLE_NS	500000000ULL	/* 50 jiffies at 100 Hz: within 4 % */

/* CONFIG_HZ of PATH (plain or gzip, gzopen reads both); 0 if not there. */
static unsigned int hz_from_file(const char *path)
{
	unsigned int hz = 0;
	char line[256];
	gzFile f;

	f = gzopen(path, "re");
	if (!f)
		return 0;
	while (gzgets(f, line, sizeof(line)))
		if (sscanf(line, "CONFIG_HZ=%u", &hz) == 1)
			break;
	gzclose(f);
	return hz;
}

/* The clock and the jiffies counter as /proc/timer_list shows them. */
static bool read_timer_list(unsigned long long *now_ns,
			    unsigned long long *jiffies)
{
	bool have_now = false, have_jiffies = false;
	char line[256];
	FILE *f;

	f = fopen("/proc/timer_list", "re");
	if (!f)
		return false;
	while ((!have_now || !have_jiffies) && fgets(line, sizeof(line), f)) {
		if (!have_now && sscanf(line, "now at %llu nsecs", now_ns) == 1)
			have_now = true;
		else if (!have_jiffies &&
			 sscanf(line, "jiffies: %llu", jiffies) == 1)
			have_jiffies = true;
	}
	fclose(f);
	return have_now && have_jiffies;
}

/*
 * HZ from the jiffies that pass in HZ_SAMPLE_NS: the tick rates x86
 * kernels are built with (CONFIG_HZ_100 .. CONFIG_HZ_1000), the nearest
 * within 10 %; 0 if none is.
 */
static unsigned int hz_measured(void)
{
	static const unsigned int rates[] = { 100, 250, 300, 1000 };
	unsigned long long t0, j0, t1, j1;
	struct timespec ts = { 0, HZ_SAMPLE_NS };
	double hz;
	size_t i;

	if (!read_timer_list(&t0, &j0))
		return 0;
	nanosleep(&ts, NULL);
	if (!read_timer_list(&t1, &j1) || t1 <= t0)
		return 0;
	hz = (double)(j1 - j0) * 1e9 / (double)(t1 - t0);
	for (i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (hz > rates[i] * 0.9 && hz < rates[i] * 1.1)
			return rates[i];
	return 0;
}

/* "CONFIG_HZ=N\n" for libbpf's kconfig option; dies without one. */
static const char *kernel_hz(void)
{
	static char kconfig[32];
	const char *from = "";
	char path[PATH_MAX];
	struct utsname u = {};
	unsigned int hz = 0;

	if (!uname(&u)) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		hz = hz_from_file(path);
		from = path;
	}
	if (!hz) {
		hz = hz_from_file("/proc/config.gz");
		from = "/proc/config.gz";
	}
	if (!hz) {
		hz = hz_measured();
		from = "the jiffies in /proc/timer_list";
	}
	if (!hz)
		die("cannot tell this kernel's CONFIG_HZ: no /boot/config-%s or /proc/config.gz names it, and /proc/timer_list is unreadable or its jiffies run at no known rate",
		    u.release);
	if (verbose)
		fprintf(stderr, "cocktail-bpf: CONFIG_HZ=%u, from %s\n", hz,
			from);
	snprintf(kconfig, sizeof(kconfig), "CONFIG_HZ=%u\n", hz);
	return kconfig;
}

/* The verifier's log level that holds only its statistics. */
#define VERIFIER_LOG_STATS	4
/* Room for the statistics' few lines, per program. */
#define VERIFIER_STATS_LEN	1024

/*
 * Ask the kernel for every program's verifier statistics; returns the
 * buffers, one per program in the object's order.
 */
static char *verifier_stats_ask(struct bpf_object *obj)
{
	struct bpf_program *prog;
	size_t n = 0, i = 0;
	char *bufs;

	bpf_object__for_each_program(prog, obj)
		n++;
	bufs = calloc(n ? n : 1, VERIFIER_STATS_LEN);
	if (!bufs)
		die("out of memory");
	bpf_object__for_each_program(prog, obj) {
		if (bpf_program__set_log_level(prog, VERIFIER_LOG_STATS) ||
		    bpf_program__set_log_buf(prog, bufs + i * VERIFIER_STATS_LEN,
					     VERIFIER_STATS_LEN))
			die("cannot ask for the verifier's statistics");
		i++;
	}
	return bufs;
}

/*
 * "PROGRAM: processed N insns (limit L) ..." for every program the
 * kernel verified, one line each, on stdout.
 */
static void verifier_stats_print(struct bpf_object *obj, const char *bufs)
{
	struct bpf_program *prog;
	size_t i = 0;

	bpf_object__for_each_program(prog, obj) {
		const char *b = bufs + i++ * VERIFIER_STATS_LEN;
		const char *line = strstr(b, "processed ");
		int len;

		if (!line)
			continue;
		len = (int)strcspn(line, "\n");
		printf("%s: %.*s\n", bpf_program__name(prog), len, line);
	}
	fflush(stdout);
}

static int cmd_load(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	const char *btf_path = KERNEL_BTF;
	struct cocktail_bpf *skel;
	struct bpf_link *link;
	char *stats = NULL;
	bool want_stats = false;
	int c, err;

	static const struct option lopts[] = {
		{ "btf", required_argument, NULL, 'b' },
		{ "verifier-stats", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	while ((c = getopt_long(argc, argv, "b:", lopts, NULL)) != -1) {
		if (c == 's') {
			want_stats = true;
			continue;
		}
		if (c != 'b')
			return 2;
		btf_path = optarg;
	}
	check_kernel(btf_path);
	if (registered())
		die("%s is already registered (cocktail-bpf unload first)",
		    COCKTAIL_BPF_NAME);
	if (strcmp(btf_path, KERNEL_BTF))
		opts.btf_custom_path = btf_path;
	opts.kconfig = kernel_hz();

	skel = cocktail_bpf__open_opts(&opts);
	if (!skel)
		load_error("cannot open the BPF object", errno);
	if (want_stats)
		stats = verifier_stats_ask(skel->obj);
	err = cocktail_bpf__load(skel);
	if (stats) {
		verifier_stats_print(skel->obj, stats);
		free(stats);
	}
	if (err)
		load_error("the kernel refused the BPF program", -err);
	ensure_bpffs();
	if (mkdir(PIN_DIR, 0700) && errno != EEXIST)
		die("cannot create %s: %s", PIN_DIR, strerror(errno));
	link = bpf_map__attach_struct_ops(skel->maps.cocktail_bpf);
	if (!link)
		load_error("cannot register " COCKTAIL_BPF_NAME, errno);
	/* Registered until unload, not until this process exits. */
	bpf_link__disconnect(link);
	bpf_link__destroy(link);
	if (bpf_map__pin(skel->maps.cocktail_bpf, PIN_OPS) ||
	    bpf_map__pin(skel->maps.data, PIN_DATA) ||
	    bpf_map__pin(skel->maps.bss, PIN_BSS) ||
	    bpf_map__pin(skel->maps.events, PIN_EVENTS)) {
		__u32 zero = 0;

		err = errno;
		bpf_map_delete_elem(bpf_map__fd(skel->maps.cocktail_bpf),
				    &zero);
		unlink(PIN_OPS);
		unlink(PIN_DATA);
		unlink(PIN_BSS);
		unlink(PIN_EVENTS);
		rmdir(PIN_DIR);
		die("cannot pin the maps under %s: %s", PIN_DIR,
		    strerror(err));
	}
	cocktail_bpf__destroy(skel);
	printf("%s registered\n", COCKTAIL_BPF_NAME);
	return 0;
}

static int cmd_unload(void)
{
	int fd = pinned(PIN_OPS);
	__u32 zero = 0;

	if (bpf_map_delete_elem(fd, &zero) && errno != ENOENT)
		die("cannot unregister %s: %s", COCKTAIL_BPF_NAME,
		    strerror(errno));
	close(fd);
	unlink(PIN_OPS);
	unlink(PIN_DATA);
	unlink(PIN_BSS);
	unlink(PIN_EVENTS);
	rmdir(PIN_DIR);
	printf("%s unregistered\n", COCKTAIL_BPF_NAME);
	return 0;
}

static int cmd_status(void)
{
	bool reg = registered();

	printf("%s %s\n", COCKTAIL_BPF_NAME,
	       reg ? "registered" : "not registered");
	return reg ? 0 : 3;
}

/* ---- parameters and counters --------------------------------------- */

static int cmd_get(int argc, char **argv)
{
	params_t v;
	char buf[32];
	size_t i;

	read_value(PIN_DATA, &v);
	if (argc > 1) {
		const struct param *p = find_param(argv[1], strlen(argv[1]));

		if (!p)
			die("no parameter %s", argv[1]);
		format_param(p, &v, buf, sizeof(buf));
		printf("%s\n", buf);
		return 0;
	}
	for (i = 0; i < NPARAMS; i++) {
		format_param(&params[i], &v, buf, sizeof(buf));
		printf("%s %s\n", params[i].name, buf);
	}
	return 0;
}

static int cmd_set(int argc, char **argv)
{
	params_t v;
	__u32 zero = 0;
	int i, fd;

	if (argc < 2)
		die("usage: cocktail-bpf set NAME=VALUE...");
	fd = pinned(PIN_DATA);
	if (bpf_map_lookup_elem(fd, &zero, &v))
		die("cannot read %s: %s", PIN_DATA, strerror(errno));
	/* Every value is checked before anything is written. */
	for (i = 1; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		const struct param *p;
		unsigned int x;

		if (!eq)
			die("%s: expected NAME=VALUE", argv[i]);
		p = find_param(argv[i], eq - argv[i]);
		if (!p)
			die("no parameter %.*s", (int)(eq - argv[i]), argv[i]);
		if (!parse_param(p, eq + 1, &x))
			die("%s: invalid value \"%s\": %s (%s); nothing changed",
			    p->name, eq + 1, strerror(EINVAL), p->help);
		memcpy((char *)&v + p->off, &x, sizeof(x));
	}
	if (bpf_map_update_elem(fd, &zero, &v, BPF_ANY))
		die("cannot write %s: %s", PIN_DATA, strerror(errno));
	close(fd);
	return 0;
}

static int cmd_stats(void)
{
	bss_t b;
	int i;

	read_value(PIN_BSS, &b);
	for (i = 0; i < CC_NR; i++)
		printf("%s %llu\n", cocktail_counter_names[i],
		       (unsigned long long)b.counters[i]);
	return 0;
}

/* ---- events -------------------------------------------------------- */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const char *name_of(const char *const *names, unsigned int n,
			   unsigned int i)
{
	return i < n ? names[i] : "?";
}

/*
 * One event as the module's tracepoint prints it, after the trace clock's
 * "SECONDS.MICROSECONDS: " (CLOCK_MONOTONIC here).
 */
static int on_event(void *ctx, void *data, size_t len)
{
	const struct cocktail_event *e = data;

	(void)ctx;
	if (len < sizeof(*e))
		return 0;
	printf("%llu.%06llu: ", (unsigned long long)(e->ts_ns / 1000000000),
	       (unsigned long long)(e->ts_ns % 1000000000 / 1000));
	if (e->type == CEV_RESTART)
		printf("cocktail_restart: sport=%u dport=%u requested=%s policy=%s idle_us=%llu rto_us=%u srtt_us=%u path_rtt_us=%u cwnd_before=%u cwnd_after=%u ssthresh=%u pacing_rate=%llu\n",
		       e->sport, e->dport,
		       name_of(cocktail_policy_names, CP_NR_POLICIES,
			       e->requested),
		       name_of(cocktail_policy_names, CP_NR_POLICIES,
			       e->policy),
		       (unsigned long long)e->idle_us, e->rto_us, e->srtt_us,
		       e->path_rtt_us, e->cwnd_before, e->cwnd_after,
		       e->ssthresh, (unsigned long long)e->pacing_rate);
	else if (e->type == CEV_PACE_END)
		printf("cocktail_pace_end: sport=%u dport=%u reason=%s segs=%u duration_us=%u pacing_rate=%llu\n",
		       e->sport, e->dport,
		       e->reason >= CPE_CHECK ?
		       name_of(cocktail_check_names, CP_NR_CHECKS,
			       e->reason - CPE_CHECK) :
		       name_of(cocktail_pace_end_names, CPE_CHECK,
			       e->reason),
		       e->segs, e->duration_us,
		       (unsigned long long)e->pacing_rate);
	else if (e->type == CEV_CHECK)
		printf("cocktail_check: sport=%u dport=%u verdict=%s segs=%u elapsed_us=%u send_us=%u sent_rate=%llu ack_rate=%llu rtt_us=%u min_rtt_us=%u cwnd=%u ssthresh=%u misses=%u\n",
		       e->sport, e->dport,
		       name_of(cocktail_check_names, CP_NR_CHECKS, e->verdict),
		       e->segs, e->duration_us, e->send_us,
		       (unsigned long long)e->pacing_rate,
		       (unsigned long long)e->ack_rate, e->rtt_us,
		       e->path_rtt_us, e->cwnd_after, e->ssthresh, e->misses);
	fflush(stdout);
	return 0;
}

static int cmd_events(int argc, char **argv)
{
	struct ring_buffer *rb;
	double timeout = 0;
	struct timespec t0, t;
	int c, fd, err;

	while ((c = getopt(argc, argv, "t:")) != -1) {
		if (c != 't')
			return 2;
		timeout = atof(optarg);
	}
	fd = pinned(PIN_EVENTS);
	rb = ring_buffer__new(fd, on_event, NULL, NULL);
	if (!rb)
		die("cannot open the event ring buffer: %s", strerror(errno));
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		err = ring_buffer__poll(rb, 100);
		if (err < 0 && err != -EINTR)
			die("reading events: %s", strerror(-err));
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (timeout > 0 && (t.tv_sec - t0.tv_sec) +
		    (t.tv_nsec - t0.tv_nsec) / 1e9 >= timeout)
			break;
	}
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: cocktail-bpf [-v] load [--btf FILE] [--verifier-stats] | unload | status |\n"
	      "                         get [NAME] | set NAME=VALUE... | stats |\n"
	      "                         events [-t SECONDS]\n",
	      f);
}

int main(int argc, char **argv)
{
	const char *cmd;

	while (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose = true;
		argv++;
		argc--;
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	libbpf_set_print(libbpf_print);
	cmd = argv[1];
	argv++;
	argc--;
	if (!strcmp(cmd, "load"))
		return cmd_load(argc, argv);
	if (!strcmp(cmd, "unload"))
		return cmd_unload();
	if (!strcmp(cmd, "status"))
		return cmd_status();
	if (!strcmp(cmd, "get"))
		return cmd_get(argc, argv);
	if (!strcmp(cmd, "set"))
		return cmd_set(argc, argv);
	if (!strcmp(cmd, "stats"))
		return cmd_stats();
	if (!strcmp(cmd, "events"))
		return cmd_events(argc, argv);
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
