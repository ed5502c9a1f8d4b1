"""What tcp-tune knows how to set: the sysctls (with their scope and kind)
and the module parameters, each with its validator."""

from .validate import (v_bool, v_cc, v_cclist, v_choice, v_iw_param, v_qdisc,
                       v_range, v_triple)

# key -> (validator, scope, kind). scope: "ns" (per network namespace) or
# "global" (host-wide; only writable from the initial namespace).
SYSCTLS = {
    "net.ipv4.tcp_congestion_control": (v_cc, "ns", "cc"),
    "net.ipv4.tcp_allowed_congestion_control": (v_cclist, "global", "cclist"),
    "net.ipv4.tcp_slow_start_after_idle": (v_bool, "ns", None),
    "net.ipv4.tcp_no_metrics_save": (v_bool, "ns", None),
    "net.ipv4.tcp_notsent_lowat": (v_range(1, 2**32 - 1), "ns", None),
    "net.ipv4.tcp_wmem": (v_triple, "ns", "triple"),
    "net.ipv4.tcp_rmem": (v_triple, "ns", "triple"),
    "net.core.default_qdisc": (v_qdisc, "global", "qdisc"),
    "net.ipv4.tcp_autocorking": (v_bool, "ns", None),
    "net.ipv4.tcp_mtu_probing": (v_range(0, 2), "ns", None),
    "net.ipv4.tcp_ecn": (v_range(0, 2), "ns", None),
    "net.ipv4.tcp_sack": (v_bool, "ns", None),
    "net.ipv4.tcp_timestamps": (v_range(0, 2), "ns", None),
    "net.ipv4.tcp_window_scaling": (v_bool, "ns", None),
    "net.ipv4.tcp_moderate_rcvbuf": (v_bool, "ns", None),
    "net.ipv4.tcp_pacing_ss_ratio": (v_range(0, 1000), "ns", None),
    "net.ipv4.tcp_pacing_ca_ratio": (v_range(0, 1000), "ns", None),
    "net.ipv4.tcp_min_tso_segs": (v_range(1, 255), "ns", None),
    "net.ipv4.tcp_limit_output_bytes": (v_range(1, 2**31 - 1), "ns", None),
    "net.ipv4.tcp_thin_linear_timeouts": (v_bool, "ns", None),
    "net.ipv4.tcp_early_retrans": (v_range(0, 4), "ns", None),
    "net.ipv4.tcp_frto": (v_range(0, 2), "ns", None),
}

# What `show` reports (in this order), besides congestion control.
SHOW_SYSCTLS = (
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_available_congestion_control",
    "net.ipv4.tcp_allowed_congestion_control",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.tcp_notsent_lowat",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_rmem",
    "net.core.default_qdisc",
)
GLOBAL_READ = {"net.core.default_qdisc"}
ALLOWED_KEY = "net.ipv4.tcp_allowed_congestion_control"

# module -> param -> validator (None: read-only).
MODULE_PARAMS = {
    "tcp_cocktail": {
        "iw": v_iw_param,
        "restart": v_choice("ssr", "decay", "keep", "pace", "auto", "queue",
                            "measure"),
        "auto_rtt_us": v_range(1, 10 * 1000 * 1000),
        "queue_pct": v_range(101, 1000),
        "pace_rate": v_choice("delivery", "window", "max"),
        "cwv": v_choice("0", "1", "2"),
        "pace_iw": v_bool,
        "pace_burst": v_bool,
        "ssthresh_est": v_bool,
        "growth": v_choice("reno", "cubic"),
        "check_rtt_pct": v_range(101, 1000),
        "check_rate_pct": v_range(1, 99),
        "check_rate_miss": v_bool,
        "probe_pct": v_range(100, 400),
        "wnd_cap": v_bool,
        "queue_room": v_bool,
        "shared_burst": v_bool,
        "shared_rtt": v_bool,
        "pace_floor": v_bool,
        "ssr_floor": v_bool,
        "quiet_pct": v_range(100, 200),
        "ensemble": v_bool,
        "nvp_s": v_range(1, 3600),
        "stats": None,
    },
}
