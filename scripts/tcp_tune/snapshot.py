"""The snapshot: what the planning functions know of the system, read once
by Host.snapshot() before anything is planned.  Planning is pure: it works
on a Snapshot only, so the tests build one from captured `ip` output."""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set


@dataclass
class Snapshot:
    netns: Optional[str] = None
    # " in namespace NS" (or ""), appended to "no such route" messages
    ns_label: str = ""
    # sysctl key -> value as the kernel prints it (None: no such key).
    # `sysctl` is read in the target namespace (plus GLOBAL_READ keys),
    # `global_sysctl` in the initial one.
    sysctl: Dict[str, Optional[str]] = field(default_factory=dict)
    global_sysctl: Dict[str, Optional[str]] = field(default_factory=dict)
    available_cc: List[str] = field(default_factory=list)
    allowed_cc: List[str] = field(default_factory=list)
    # this process may write host-global settings (it runs in the initial
    # namespace, as root)
    can_write_global: bool = False
    # the target namespace is the initial one
    target_is_init: bool = False
    # family (4, 6) -> routes as `ip -j -d route show table all` lists them
    routes: Dict[int, List[dict]] = field(default_factory=dict)
    # family -> route key -> JSON names of the locked metrics
    locks: Dict[int, Dict[str, Set[str]]] = field(default_factory=dict)
    # loaded module -> its parameters (name -> value, None: unreadable)
    modules: Dict[str, Dict[str, Optional[str]]] = field(default_factory=dict)
    # module found -> its .ko path for insmod (None: modprobe finds it)
    module_files: Dict[str, Optional[str]] = field(default_factory=dict)
    # module -> names of its parameters (None: unknown)
    module_param_names: Dict[str, Optional[Set[str]]] = field(default_factory=dict)

    def module_available(self, module):
        """Loaded, or loadable (by insmod from --module-path or modprobe)."""
        return module in self.module_files or module in self.modules
