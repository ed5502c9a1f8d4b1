"""The planted suites use the VM suites' fixtures (tests/vm/conftest.py):
the per-suite and session kernel log checks are what they test."""
import importlib.util
import os
import sys
from pathlib import Path

_p = Path(__file__).resolve().parents[1] / "vm" / "conftest.py"
_spec = importlib.util.spec_from_file_location("vm_conftest", _p)
vm_conftest = importlib.util.module_from_spec(_spec)
sys.modules["vm_conftest"] = vm_conftest
_spec.loader.exec_module(vm_conftest)

# The planted modules: built here for the default kernel, or for the debug
# kernel in the directory dev/vm-kernel --debug names.
HERE = Path(os.environ.get("PLANTED_KMOD") or Path(__file__).resolve().parent)
sh = vm_conftest.sh
dmesg_clean = vm_conftest.dmesg_clean  # autouse fixtures, re-exported
kmsg_session = vm_conftest.kmsg_session
