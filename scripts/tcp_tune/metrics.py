"""Route metrics: the names `ip -j` and `ip route` use for them, and the
validation of the ones tcp-tune tunes (initcwnd, initrwnd, quickack,
congctl, rto_min)."""

import re

from .errors import TuneError
from .validate import int_in_range, v_cc

# JSON name (ip -j) -> `ip route` argument name, in iproute2's print order.
METRIC_ARG = {
    "mtu": "mtu", "window": "window", "rtt": "rtt", "rttvar": "rttvar",
    "ssthresh": "ssthresh", "cwnd": "cwnd", "advmss": "advmss",
    "reordering": "reordering", "hoplimit": "hoplimit",
    "initcwnd": "initcwnd", "ecn": "features", "rto_min": "rto_min",
    "initrwnd": "initrwnd", "quickack": "quickack", "congestion": "congctl",
    "fastopen_no_cookie": "fastopen_no_cookie",
}
ARG_METRIC = {v: k for k, v in METRIC_ARG.items()}
TIME_METRICS = ("rtt", "rttvar", "rto_min")      # JSON value in ms
# Metrics iproute2 accepts "lock" for on input.  rto_min is printed as
# "rto_min lock 50ms" but takes no lock keyword: iproute2 always locks it.
LOCKABLE = {"mtu", "window", "rtt", "rttvar", "ssthresh", "cwnd", "advmss",
            "reordering", "hoplimit", "initcwnd", "initrwnd", "congestion"}
TUNABLE = ("initcwnd", "initrwnd", "quickack", "congctl", "rto_min")
RTO_MIN_MS = (1, 120000)                           # up to TCP_RTO_MAX


def parse_ms(text, what):
    m = re.match(r"^(\d+)(ms|msec|s|sec)?$", text or "")
    if not m:
        raise TuneError("%s: %r is not a time in milliseconds (e.g. 200, 200ms, 1s)"
                        % (what, text))
    v = int(m.group(1))
    if m.group(2) in ("s", "sec"):
        v *= 1000
    return v


def validate_metric(name, value):
    """Validate one tunable route metric. Returns the JSON-side value to set,
    or None to remove the metric ('none')."""
    if name not in TUNABLE:
        raise TuneError("unknown route metric %r (known: %s)"
                        % (name, ", ".join(TUNABLE)))
    if value is None:
        raise TuneError("route metric %s needs a value" % name)
    if value == "none":
        return None
    if name in ("initcwnd", "initrwnd"):
        return int_in_range(value, 1, 1024, name)
    if name == "quickack":
        if value not in ("0", "1"):
            raise TuneError("quickack: %r must be 0 or 1" % value)
        return None if value == "0" else 1      # the kernel drops zero metrics
    if name == "congctl":
        return v_cc("congctl", value)
    if name == "rto_min":
        v = parse_ms(value, "rto_min")
        if not RTO_MIN_MS[0] <= v <= RTO_MIN_MS[1]:
            raise TuneError("rto_min: %dms is out of range %d..%dms"
                            % (v, RTO_MIN_MS[0], RTO_MIN_MS[1]))
        return v
    raise AssertionError(name)


def parse_metric_args(tokens, where=""):
    """['initcwnd', '10', 'quickack', '1'] -> {'initcwnd': 10, 'quickack': 1}"""
    out = {}
    if not tokens:
        raise TuneError("%sno route metrics given (known: %s)"
                        % (where, ", ".join(TUNABLE)))
    i = 0
    while i < len(tokens):
        name = tokens[i]
        value = tokens[i + 1] if i + 1 < len(tokens) else None
        try:
            if name in out:
                raise TuneError("route metric %s given twice" % name)
            out[name] = validate_metric(name, value)
        except TuneError as e:
            raise TuneError("%s%s" % (where, e)) from None
        i += 2
    return out
