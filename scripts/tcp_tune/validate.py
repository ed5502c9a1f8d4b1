"""Value validators: each takes (key, value text) and returns the value in
the form the kernel prints it, or raises TuneError naming the key."""

import re

from .errors import TuneError

CC_NAME_RE = re.compile(r"^[a-z0-9_]{1,15}$")      # TCP_CA_NAME_MAX 16
QDISC_NAME_RE = re.compile(r"^[a-z0-9_]{1,15}$")   # IFNAMSIZ 16
# The modules tcp-tune loads: congestion controls (tcp_NAME, what the
# kernel's autoload asks for) and qdiscs (sch_NAME); MODULE_NAME_LEN 56.
MODULE_NAME_RE = re.compile(r"^(tcp|sch)_[a-z0-9_]{1,51}$")


def int_in_range(text, lo, hi, what):
    try:
        v = int(text, 10)
    except (TypeError, ValueError):
        raise TuneError("%s: %r is not an integer" % (what, text)) from None
    if not lo <= v <= hi:
        raise TuneError("%s: %d is out of range %d..%d" % (what, v, lo, hi))
    return v


def v_bool(key, value):
    if value not in ("0", "1"):
        raise TuneError("%s: %r must be 0 or 1" % (key, value))
    return value


def v_range(lo, hi):
    def check(key, value):
        return str(int_in_range(value, lo, hi, key))
    return check


def v_triple(key, value):
    parts = value.split()
    if len(parts) != 3:
        raise TuneError("%s: %r must be three integers: min default max"
                        % (key, value))
    a, b, c = (int_in_range(p, 1, 2**31 - 1, key) for p in parts)
    if not a <= b <= c:
        raise TuneError("%s: %r must satisfy min <= default <= max"
                        % (key, value))
    return "%d %d %d" % (a, b, c)


def v_cc(key, value):
    if not CC_NAME_RE.match(value):
        raise TuneError("%s: %r is not a congestion control name" % (key, value))
    return value


def v_cclist(key, value):
    names = value.split()
    if not names:
        raise TuneError("%s: empty list" % key)
    for n in names:
        v_cc(key, n)
    return " ".join(names)


def v_qdisc(key, value):
    if not QDISC_NAME_RE.match(value):
        raise TuneError("%s: %r is not a qdisc name" % (key, value))
    return value


def v_iw_param(key, value):
    if value == "rfc3390":
        return value
    return str(int_in_range(value, 1, 64, key))


def v_choice(*choices):
    def check(key, value):
        if value not in choices:
            raise TuneError("%s: %r must be one of %s"
                            % (key, value, "|".join(choices)))
        return value
    return check


def norm(value):
    """A value as compared with what the kernel prints (whitespace runs
    become one space)."""
    return None if value is None else " ".join(str(value).split())


# A state file is named netns-NAME.json: NAME_MAX (255) less 11.
NETNS_NAME_MAX = 244


def v_netns(name):
    """A name `ip netns` accepts (not empty, no '/', not '.' or '..', a
    file name under /run/netns) that also fits the state file's name; no
    control characters (it is printed in messages)."""
    if not name:
        raise TuneError("--netns: empty namespace name")
    if "/" in name or name in (".", ".."):
        raise TuneError("--netns %r: not a namespace name (no '/', not '.' or "
                        "'..'; see ip netns list)" % name)
    if len(name.encode()) > NETNS_NAME_MAX:
        raise TuneError("--netns: namespace name longer than %d bytes"
                        % NETNS_NAME_MAX)
    if not name.isprintable():
        raise TuneError("--netns %r: control characters in the name" % name)
    return name
