"""Host access: the commands tcp-tune runs (in the target namespace or the
initial one), the reads a Snapshot is made of, and the identity (boot and
namespace) a saved state belongs to."""

import ctypes
import json
import os
import shlex
import socket
import subprocess

from .errors import StepError, TuneError
from .routes import dedupe, locks_from_text
from .settings import ALLOWED_KEY, GLOBAL_READ, MODULE_PARAMS, SHOW_SYSCTLS, SYSCTLS
from .snapshot import Snapshot
from .state import Identity
from .validate import norm

SO_NETNS_COOKIE = 71


class Host:
    """Reads and changes the real system (the given namespace)."""

    def __init__(self, netns=None, dry_run=False, verbose=False,
                 module_path=None):
        self.netns = netns
        self.dry_run = dry_run
        self.verbose = verbose
        self.module_path = module_path

    # -- commands --
    def ns_prefix(self, scope="ns"):
        if self.netns and scope == "ns":
            return ["ip", "netns", "exec", self.netns]
        return []

    def ip_prefix(self, family=None):
        p = ["ip"]
        if self.netns:
            p += ["-n", self.netns]
        if family:
            p.append("-%d" % family)
        return p

    def log(self, cmd):
        if self.dry_run or self.verbose:
            print(shlex.join(cmd), flush=True)

    def run(self, cmd):
        self.log(cmd)
        if self.dry_run:
            return
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise StepError("`%s` failed (exit %d): %s" % (
                shlex.join(cmd), p.returncode,
                (p.stderr or p.stdout).strip() or "no message"))
        return p

    def query(self, cmd, check=True):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise TuneError("`%s` failed: %s" % (shlex.join(cmd),
                                                 p.stderr.strip()))
        return p

    # -- reads --
    def read_sysctls(self, keys, scope="ns"):
        if not keys:
            return {}
        p = self.query(self.ns_prefix(scope) + ["sysctl", "-e"] + list(keys),
                       check=False)
        out = {k: None for k in keys}
        for line in p.stdout.splitlines():
            k, sep, v = line.partition(" = ")
            if sep and k in out:
                out[k] = norm(v)
            elif line.strip() in out:       # empty value prints "key = "
                out[line.strip()] = ""
        return out

    def routes(self, family):
        p = self.query(self.ip_prefix(family) + ["-d", "-j", "route", "show",
                                                  "table", "all"])
        routes = dedupe(json.loads(p.stdout or "[]"))
        t = self.query(self.ip_prefix(family) + ["route", "show", "table", "all"])
        return routes, locks_from_text(t.stdout, family)

    def module_params(self, mod):
        d = "/sys/module/%s/parameters" % mod
        out = {}
        if not os.path.isdir(d):
            return out
        for p in sorted(os.listdir(d)):
            try:
                with open(os.path.join(d, p)) as f:
                    out[p] = f.read().strip()
            except OSError:
                out[p] = None
        return out

    def module_file(self, mod):
        """Path for insmod (from --module-path), '' for modprobe, None if
        the module cannot be found."""
        if self.module_path:
            mp = self.module_path
            cand = mp if mp.endswith(".ko") else os.path.join(mp, mod + ".ko")
            if os.path.basename(cand) == mod + ".ko" and os.path.isfile(cand):
                return os.path.abspath(cand)
        p = subprocess.run(["modinfo", "-F", "filename", mod],
                           capture_output=True, text=True)
        if p.returncode == 0 and p.stdout.strip():
            return ""
        return None

    def module_param_names(self, mod, path):
        if os.path.isdir("/sys/module/%s/parameters" % mod):
            return set(os.listdir("/sys/module/%s/parameters" % mod))
        p = subprocess.run(["modinfo", "-F", "parm", path or mod],
                           capture_output=True, text=True)
        if p.returncode != 0:
            return None
        return {ln.split(":", 1)[0] for ln in p.stdout.splitlines() if ":" in ln}

    def netns_cookie(self):
        """SO_NETNS_COOKIE of the target namespace: unique for the life of
        the boot, never reused (unlike the nsfs inode number)."""
        def cookie():
            s = socket.socket()
            try:
                return int.from_bytes(
                    s.getsockopt(socket.SOL_SOCKET, SO_NETNS_COOKIE, 8), "little")
            finally:
                s.close()
        if not self.netns:
            try:
                return str(cookie())
            except OSError:
                return None
        # enter the namespace in a forked child (os.setns is Python 3.12+)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                fd = os.open(os.path.join("/run/netns", self.netns), os.O_RDONLY)
                libc = ctypes.CDLL(None, use_errno=True)
                if libc.setns(fd, 0x40000000) == 0:       # CLONE_NEWNET
                    os.write(w, str(cookie()).encode())
            except BaseException:
                pass
            finally:
                os._exit(0)
        os.close(w)
        with os.fdopen(r) as f:
            out = f.read().strip()
        os.waitpid(pid, 0)
        return out or None

    def target_is_self(self):
        """Is the target namespace the one this process runs in?"""
        if not self.netns:
            return True
        try:
            a = os.stat("/proc/self/ns/net")
            b = os.stat(os.path.join("/run/netns", self.netns))
        except OSError:
            return False
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)

    def identity(self):
        try:
            with open("/proc/sys/kernel/random/boot_id") as f:
                boot = f.read().strip()
        except OSError:
            boot = None
        return Identity(boot_id=boot, netns_cookie=self.netns_cookie())

    def check_netns(self):
        if self.netns and not os.path.exists(os.path.join("/run/netns", self.netns)):
            raise TuneError("network namespace %r does not exist (ip netns list)"
                            % self.netns)

    def snapshot(self, want_modules=()):
        """Read everything planning needs (see Snapshot); `want_modules`:
        modules to look up besides tcp-tune's own (profile.modules_wanted)."""
        self.check_netns()
        snap = Snapshot(netns=self.netns,
                        ns_label=" in namespace %s" % self.netns if self.netns else "")
        keys = sorted(set(SYSCTLS) | set(SHOW_SYSCTLS))
        ns_keys = [k for k in keys if k not in GLOBAL_READ]
        snap.sysctl = self.read_sysctls(ns_keys, "ns")
        gkeys = [k for k in keys if SYSCTLS.get(k, (0, "ns"))[1] == "global"
                 or k in GLOBAL_READ]
        snap.global_sysctl = self.read_sysctls(gkeys, "global")
        for k in GLOBAL_READ:
            snap.sysctl[k] = snap.global_sysctl.get(k)
        snap.available_cc = (snap.sysctl.get(
            "net.ipv4.tcp_available_congestion_control") or "").split()
        snap.allowed_cc = (snap.global_sysctl.get(ALLOWED_KEY) or "").split()
        self_is_init = os.path.exists("/proc/sys/net/core/default_qdisc")
        snap.can_write_global = self_is_init and os.access(
            "/proc/sys/net/ipv4/tcp_allowed_congestion_control", os.W_OK)
        snap.target_is_init = self_is_init and self.target_is_self()
        for fam in (4, 6):
            snap.routes[fam], snap.locks[fam] = self.routes(fam)
        for m in set(MODULE_PARAMS) | set(want_modules):
            if os.path.isdir("/sys/module/%s" % m) and (
                    os.path.exists("/sys/module/%s/initstate" % m) or
                    os.path.isdir("/sys/module/%s/parameters" % m)):
                snap.modules[m] = self.module_params(m)
        for m in want_modules:
            f = self.module_file(m)
            if f is not None:
                snap.module_files[m] = f or None
                if m in MODULE_PARAMS:
                    snap.module_param_names[m] = self.module_param_names(m, f)
        return snap


def host_label(host):
    """" in namespace NS" for messages about a host acting in NS, or ""."""
    return " in namespace %s" % host.netns if host.netns else ""
