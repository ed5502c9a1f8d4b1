"""The VM install suite reuses tests/vm/conftest.py (sh, the kernel log checks).
It lives outside tests/vm because `make install` runs depmod over the whole
/lib/modules/<kernel> tree (~400 MB read through 9p under TCG: minutes), too
slow for every `make vmcheck`; run it with `make vm-install-check`."""
import importlib.util
import sys
from pathlib import Path

_p = Path(__file__).resolve().parents[1] / "vm" / "conftest.py"
_spec = importlib.util.spec_from_file_location("vm_conftest", _p)
vm_conftest = importlib.util.module_from_spec(_spec)
sys.modules["vm_conftest"] = vm_conftest
_spec.loader.exec_module(vm_conftest)

REPO = vm_conftest.REPO
sh = vm_conftest.sh
dmesg_clean = vm_conftest.dmesg_clean  # autouse fixtures, re-exported
kmsg_session = vm_conftest.kmsg_session
