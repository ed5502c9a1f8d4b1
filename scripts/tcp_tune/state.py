"""The saved state: the original value of everything tcp-tune changed in a
network namespace, one JSON file per namespace under the state directory,
written atomically; `revert` restores it.

The file format (version 2), keys sorted, indent 1:
  version        2
  netns          the namespace name, null for tcp-tune's own namespace
  identity       {"boot_id": ..., "netns_cookie": ...}: the boot and the
                 namespace the originals belong to
  saved_at       UTC time of the first change, "YYYY-MM-DDTHH:MM:SSZ"
  sysctl         {key: original value} in the namespace
  global_sysctl  {key: original value} in the initial namespace
  module_params  {module: {param: original value}}
  modules_loaded {module: .ko path for insmod, or null (modprobe)}
  routes         {route key: {"family": 4|6, "label": "...",
                 "metrics": {metric (ip -j name): original value, null when
                 the route did not have it}, "locked": [those of them that
                 were locked]}}: only the metrics tcp-tune changed, so that
                 revert sets back these and nothing else on the route as
                 it is then
Version 1 kept each route's whole `ip route` argument list ("args"); it is
read as the five metrics tcp-tune tunes, with their values in that list.

Everything read back is checked before anything is done with it: the
directory and the files must belong to the user tcp-tune runs as and not be
writable by group or others, symbolic links are refused, and every key,
module, parameter, metric and value must be one tcp-tune could have saved.
"""

import contextlib
import copy
import fcntl
import json
import os
import secrets
import stat
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .actions import ChangeRoute, LoadModule, SetParam, SetSysctl
from .errors import TuneError
from .metrics import ARG_METRIC, LOCKABLE, TUNABLE
from .settings import ALLOWED_KEY, MODULE_PARAMS, SYSCTLS
from .validate import CC_NAME_RE, MODULE_NAME_RE

VERSION = 2
READS = (1, 2)
DEFAULT_STATE_DIR = "/var/lib/tcp-cocktail"
# The metrics tcp-tune changes, by their `ip -j` names.
TUNED_METRICS = tuple(ARG_METRIC[a] for a in TUNABLE)
U32 = 2**32 - 1

@dataclass
class Identity:
    """What a saved state belongs to: this boot, and a namespace's
    SO_NETNS_COOKIE (unique for the life of the boot)."""
    boot_id: Optional[str] = None
    netns_cookie: Optional[str] = None

    def to_json(self):
        return {"boot_id": self.boot_id, "netns_cookie": self.netns_cookie}

    @classmethod
    def from_json(cls, d):
        d = d or {}
        return cls(boot_id=d.get("boot_id"), netns_cookie=d.get("netns_cookie"))


@dataclass
class SavedRoute:
    family: int
    label: str
    # metric (ip -j name) -> value before tcp-tune's first change of it
    # (None: the route did not have it)
    metrics: Dict[str, object] = field(default_factory=dict)
    locked: List[str] = field(default_factory=list)

    def to_json(self):
        return {"family": self.family, "label": self.label,
                "metrics": dict(self.metrics), "locked": sorted(self.locked)}

    @classmethod
    def from_json(cls, d):
        if "args" in d and "metrics" not in d:          # version 1
            metrics, locked = metrics_from_args(d["args"])
            return cls(family=d["family"], label=d["label"], metrics=metrics,
                       locked=locked)
        return cls(family=d["family"], label=d["label"],
                   metrics=dict(d.get("metrics") or {}),
                   locked=sorted(d.get("locked") or []))


def metrics_from_args(args):
    """The tuned metrics in a version 1 argument list ("initcwnd lock 10",
    "rto_min 50ms"); the ones it lacks are None (the route had none)."""
    out, locked = {m: None for m in TUNED_METRICS}, []
    i = 0
    while i < len(args) and args[i] != "nexthop":
        name = ARG_METRIC.get(args[i]) if args[i] in TUNABLE else None
        if name is None:
            i += 1
            continue
        j = i + 1
        if j < len(args) and args[j] == "lock":
            locked.append(name)
            j += 1
        if j >= len(args):
            raise TuneError("route metric %s has no value" % args[i])
        v = args[j]
        if name == "rto_min":
            v = v[:-2] if v.endswith("ms") else v
        if name != "congestion":
            try:
                v = int(v)
            except ValueError:
                raise TuneError("route metric %s: %r is not a number"
                                % (args[i], v)) from None
        out[name] = v
        i = j + 1
    return out, locked


@dataclass
class SavedState:
    netns: Optional[str]
    identity: Identity
    saved_at: Optional[str]
    version: int = VERSION
    sysctl: Dict[str, Optional[str]] = field(default_factory=dict)
    global_sysctl: Dict[str, Optional[str]] = field(default_factory=dict)
    module_params: Dict[str, Dict[str, Optional[str]]] = field(default_factory=dict)
    modules_loaded: Dict[str, Optional[str]] = field(default_factory=dict)
    routes: Dict[str, SavedRoute] = field(default_factory=dict)
    # keys of the file this version does not know: written back unchanged
    other: dict = field(default_factory=dict)

    SECTIONS = ("sysctl", "global_sysctl", "module_params", "modules_loaded")

    def to_json(self):
        d = copy.deepcopy(self.other)
        d.update({"version": self.version, "netns": self.netns,
                  "identity": self.identity.to_json(), "saved_at": self.saved_at,
                  "routes": {k: r.to_json() for k, r in self.routes.items()}})
        for s in self.SECTIONS:
            d[s] = copy.deepcopy(getattr(self, s))
        return d

    @classmethod
    def from_json(cls, d):
        known = {"version", "netns", "identity", "saved_at", "routes",
                 *cls.SECTIONS}
        return cls(version=VERSION, netns=d.get("netns"),
                   identity=Identity.from_json(d.get("identity")),
                   saved_at=d.get("saved_at"),
                   routes={k: SavedRoute.from_json(r)
                           for k, r in (d.get("routes") or {}).items()},
                   other={k: v for k, v in d.items() if k not in known},
                   **{s: d.get(s) or {} for s in cls.SECTIONS})

    def belongs_to(self, ident):
        """Saved in this boot, for the namespace that still exists?"""
        return self.identity == ident


def new_state(identity, netns):
    return SavedState(netns=netns, identity=identity,
                      saved_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


class State:
    """The state file of one network namespace under the state directory,
    and the directory's lock.  The directory is opened once (O_NOFOLLOW),
    checked, and every file in it is reached through that descriptor."""

    def __init__(self, state_dir, netns):
        self.dir = state_dir
        self.name = "netns-%s.json" % netns if netns else "default.json"
        self.file = os.path.join(state_dir, self.name)
        self.netns = netns
        self._dfd = None
        self._lock = None

    # -- the directory --
    def _open_dir(self, create):
        """The checked directory's descriptor; None when it does not exist
        and `create` is false."""
        if self._dfd is not None:
            return self._dfd
        if create:
            parent = os.path.dirname(os.path.abspath(self.dir))
            if not os.path.isdir(parent):
                os.makedirs(parent, mode=0o755, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.mkdir(self.dir, 0o755)
        try:
            fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW |
                         os.O_CLOEXEC)
        except FileNotFoundError:
            if create:
                raise
            return None
        except OSError as e:
            if os.path.islink(self.dir):
                raise TuneError("state directory %s is a symbolic link; refusing "
                                "to use it (it must be a directory owned by uid "
                                "%d, not writable by group or others)"
                                % (self.dir, os.geteuid())) from None
            raise TuneError("cannot open state directory %s: %s"
                            % (self.dir, e.strerror)) from None
        try:
            check_owner(os.fstat(fd), "state directory %s" % self.dir)
        except TuneError:
            os.close(fd)
            raise
        self._dfd = fd
        return fd

    def check(self):
        """Refuse a state directory tcp-tune must not trust (TuneError)."""
        self._open_dir(create=False)

    def lock(self):
        dfd = self._open_dir(create=True)
        try:
            fd = os.open(".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW |
                         os.O_CLOEXEC, 0o600, dir_fd=dfd)
        except OSError as e:
            raise TuneError("cannot open the lock %s: %s (a symbolic link?)"
                            % (os.path.join(self.dir, ".lock"), e.strerror)) from None
        self._lock = os.fdopen(fd, "w")
        try:
            check_owner(os.fstat(fd), "lock file %s" % os.path.join(self.dir, ".lock"))
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise TuneError("another tcp-tune is running (lock %s)"
                            % os.path.join(self.dir, ".lock")) from None

    def _read(self, name, dfd):
        """JSON of file `name` in the directory (None: no such file)."""
        path = os.path.join(self.dir, name)
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=dfd)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise TuneError("cannot read state file %s: %s (a symbolic link?)"
                            % (path, e.strerror)) from None
        with os.fdopen(fd) as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise TuneError("state file %s is not a regular file" % path)
            check_owner(st, "state file %s" % path)
            try:
                return json.load(f)
            except (OSError, ValueError) as e:
                raise TuneError("cannot read state file %s: %s" % (path, e)) from None

    # -- the state file --
    def load(self):
        dfd = self._open_dir(create=False)
        if dfd is None:
            return None
        data = self._read(self.name, dfd)
        if data is None:
            return None
        if not isinstance(data, dict) or data.get("version") not in READS:
            raise TuneError("state file %s has unknown version %r"
                            % (self.file, data.get("version")
                               if isinstance(data, dict) else None))
        problems = check_state(data, self.netns)
        if problems:
            raise TuneError("state file %s is not one tcp-tune wrote; refusing "
                            "to act on it:\n  %s" % (self.file, "\n  ".join(problems)))
        try:
            return SavedState.from_json(data)
        except TuneError as e:
            raise TuneError("state file %s: %s" % (self.file, e)) from None

    def save(self, state):
        dfd = self._open_dir(create=True)
        tmp = ".state-%s" % secrets.token_hex(8)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW |
                     os.O_CLOEXEC, 0o644, dir_fd=dfd)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(state.to_json(), f, indent=1, sort_keys=True)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.name, src_dir_fd=dfd, dst_dir_fd=dfd)
            os.fsync(dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise

    def remove(self):
        dfd = self._open_dir(create=False)
        if dfd is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.name, dir_fd=dfd)

    def others_using(self, mod):
        """The other state files (of other namespaces) that loaded module
        `mod` or saved its parameters."""
        dfd = self._open_dir(create=False)
        users = []
        for f in sorted(os.listdir(dfd)) if dfd is not None else ():
            if f == self.name or not f.endswith(".json"):
                continue
            try:
                d = self._read(f, dfd)
            except TuneError:
                continue
            if not isinstance(d, dict):
                continue
            if mod in (d.get("modules_loaded") or {}) or \
                    mod in (d.get("module_params") or {}):
                users.append(f)
        return users


def check_owner(st, what):
    """A directory or file tcp-tune trusts: owned by the user it runs as
    (root), not writable by group or others."""
    if st.st_uid != os.geteuid():
        raise TuneError("%s is owned by uid %d, not by uid %d (root); refusing "
                        "to use it" % (what, st.st_uid, os.geteuid()))
    if st.st_mode & 0o022:
        raise TuneError("%s is writable by group or others (mode %04o); refusing "
                        "to use it (chmod go-w)" % (what, stat.S_IMODE(st.st_mode)))


def _check_value(validator, key, value):
    if value is None:
        return None
    if not isinstance(value, str):
        return "%s: value %r is not a string" % (key, value)
    try:
        validator(key, value)
    except TuneError as e:
        return str(e)
    return None


def _check_metric(name, value):
    if value is None:
        return None
    if name == "congestion":
        ok = isinstance(value, str) and CC_NAME_RE.match(value)
    else:
        ok = isinstance(value, int) and not isinstance(value, bool) and \
            0 <= value <= U32
    return None if ok else "route metric %s: bad value %r" % (name, value)


def check_state(d, netns):
    """Everything wrong with a state file's contents (JSON `d`) for the
    namespace `netns`: [] when every key, module, parameter, metric and
    value is one tcp-tune could have saved."""
    bad = []

    def section(name):
        v = d.get(name)
        if v is None:
            return {}
        if not isinstance(v, dict):
            bad.append("%s: not an object" % name)
            return {}
        return v

    if d.get("netns") != netns:
        bad.append("netns: %r, but this is the state of %r" % (d.get("netns"), netns))
    ident = d.get("identity")
    if not isinstance(ident, dict) or not all(
            isinstance(ident.get(k), (str, type(None)))
            for k in ("boot_id", "netns_cookie")):
        bad.append("identity: %r" % (ident,))
    for name, scope in (("sysctl", "ns"), ("global_sysctl", "global")):
        for key, value in section(name).items():
            if key not in SYSCTLS or SYSCTLS[key][1] != scope:
                bad.append("%s: unknown key %r" % (name, key))
                continue
            err = _check_value(SYSCTLS[key][0], key, value)
            if err:
                bad.append("%s: %s" % (name, err))
    for mod, path in section("modules_loaded").items():
        if not MODULE_NAME_RE.match(mod):
            bad.append("modules_loaded: module %r is not one tcp-tune loads" % mod)
        elif path is not None and not (
                isinstance(path, str) and path.startswith("/") and
                os.path.basename(path) == mod + ".ko" and
                path.isprintable()):
            bad.append("modules_loaded: %s: bad path %r" % (mod, path))
    for mod, params in section("module_params").items():
        if mod not in MODULE_PARAMS or not isinstance(params, dict):
            bad.append("module_params: unknown module %r" % mod)
            continue
        for param, value in params.items():
            validator = MODULE_PARAMS[mod].get(param)
            if validator is None:
                bad.append("module_params: %s has no writable parameter %r"
                           % (mod, param))
                continue
            err = _check_value(validator, "%s.%s" % (mod, param), value)
            if err:
                bad.append("module_params: %s" % err)
    for key, r in section("routes").items():
        if not isinstance(r, dict) or r.get("family") not in (4, 6) or \
                not isinstance(key, str) or key.split("|")[0] != str(r["family"]) \
                or len(key.split("|")) != 7 or not isinstance(r.get("label"), str):
            bad.append("routes: bad entry %r" % key)
            continue
        if "args" in r and "metrics" not in r:
            if d.get("version") != 1 or not isinstance(r["args"], list) or \
                    not all(isinstance(a, str) for a in r["args"]):
                bad.append("routes: %s: bad args" % key)
                continue
            try:
                metrics, locked = metrics_from_args(r["args"])
            except TuneError as e:
                bad.append("routes: %s: %s" % (key, e))
                continue
        else:
            metrics, locked = r.get("metrics"), r.get("locked") or []
        if not isinstance(metrics, dict) or not isinstance(locked, list):
            bad.append("routes: %s: bad metrics" % key)
            continue
        for name, value in metrics.items():
            if name not in TUNED_METRICS:
                bad.append("routes: %s: metric %r is not one tcp-tune changes"
                           % (key, name))
                continue
            err = _check_metric(name, value)
            if err:
                bad.append("routes: %s: %s" % (key, err))
        for name in locked:
            if name not in metrics or name not in LOCKABLE:
                bad.append("routes: %s: bad lock %r" % (key, name))
    return bad


def record_originals(state, actions, snap):
    """Add the original value of everything `actions` change to `state`,
    keeping originals already saved (the first change wins)."""
    for a in actions:
        if isinstance(a, SetSysctl):
            d = state.global_sysctl if a.scope == "global" else state.sysctl
            d.setdefault(a.key, a.old)
            if a.key == "net.ipv4.tcp_congestion_control":
                # setting the default also marks it allowed (host-global)
                state.global_sysctl.setdefault(
                    ALLOWED_KEY, snap.global_sysctl.get(ALLOWED_KEY))
        elif isinstance(a, LoadModule):
            state.modules_loaded.setdefault(a.module, a.path)
        elif isinstance(a, SetParam):
            if a.fresh_module or a.module in state.modules_loaded:
                continue     # revert unloads the module
            state.module_params.setdefault(a.module, {}).setdefault(
                a.param, a.old)
        elif isinstance(a, ChangeRoute):
            saved = state.routes.setdefault(a.key, SavedRoute(a.family, a.label))
            for name, old in a.old_metrics.items():
                if name not in saved.metrics:       # the first original wins
                    saved.metrics[name] = old
                    if name in a.old_locked:
                        saved.locked = sorted(set(saved.locked) | {name})
    return state
