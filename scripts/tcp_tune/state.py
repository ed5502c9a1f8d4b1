"""The saved state: the original value of everything tcp-tune changed in a
network namespace, one JSON file per namespace under the state directory,
written atomically; `revert` restores it.

The file format (version 1), keys sorted, indent 1:
  version        1
  netns          the namespace name, null for tcp-tune's own namespace
  identity       {"boot_id": ..., "netns_cookie": ...}: the boot and the
                 namespace the originals belong to
  saved_at       UTC time of the first change, "YYYY-MM-DDTHH:MM:SSZ"
  sysctl         {key: original value} in the namespace
  global_sysctl  {key: original value} in the initial namespace
  module_params  {module: {param: original value}}
  modules_loaded {module: .ko path for insmod, or null (modprobe)}
  routes         {route key: {"family": 4|6, "args": [`ip route` arguments
                 of the original route], "label": "..."}}
"""

import contextlib
import copy
import fcntl
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .actions import ChangeRoute, LoadModule, SetParam, SetSysctl
from .errors import TuneError
from .settings import ALLOWED_KEY

VERSION = 1
DEFAULT_STATE_DIR = "/var/lib/tcp-cocktail"


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
    args: List[str]        # the original route, as `ip route change` arguments
    label: str

    def to_json(self):
        return {"family": self.family, "args": self.args, "label": self.label}

    @classmethod
    def from_json(cls, d):
        return cls(family=d["family"], args=d["args"], label=d["label"])


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
        return cls(version=d.get("version"), netns=d.get("netns"),
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
    and the directory's lock."""

    def __init__(self, state_dir, netns):
        self.dir = state_dir
        self.file = os.path.join(state_dir, "netns-%s.json" % netns
                                 if netns else "default.json")
        self._lock = None

    def lock(self):
        os.makedirs(self.dir, mode=0o755, exist_ok=True)
        self._lock = open(os.path.join(self.dir, ".lock"), "w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise TuneError("another tcp-tune is running (lock %s)"
                            % os.path.join(self.dir, ".lock")) from None

    def load(self):
        try:
            with open(self.file) as f:
                data = json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise TuneError("cannot read state file %s: %s" % (self.file, e)) from None
        if data.get("version") != VERSION:
            raise TuneError("state file %s has unknown version %r"
                            % (self.file, data.get("version")))
        return SavedState.from_json(data)

    def save(self, state):
        os.makedirs(self.dir, mode=0o755, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".state-", dir=self.dir)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(state.to_json(), f, indent=1, sort_keys=True)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.file)
            dfd = os.open(self.dir, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def remove(self):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.file)

    def others_using(self, mod):
        """The other state files (of other namespaces) that loaded module
        `mod` or saved its parameters."""
        users = []
        for f in sorted(os.listdir(self.dir)):
            p = os.path.join(self.dir, f)
            if p == self.file or not f.endswith(".json"):
                continue
            try:
                with open(p) as fh:
                    d = json.load(fh)
            except (OSError, ValueError):
                continue
            if mod in d.get("modules_loaded", {}) or mod in d.get("module_params", {}):
                users.append(f)
        return users


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
            state.routes.setdefault(a.key, SavedRoute(a.family, a.old_args,
                                                      a.label))
    return state
