"""Planted: a module writes one byte past a slab object and frees it. The
test VM boots with slub_debug=FZPU on the project's caches (this module's
among them), so SLUB finds the redzone overwritten
and the suite's kernel log check must fail it (verify.py expects that)."""
from pathlib import Path

from conftest import HERE, sh


def test_redzone():
    assert any(w.startswith("slub_debug=FZPU,") and "cocktail_planted_*" in w
               for w in Path("/proc/cmdline").read_text().split()), \
        "the VM was not booted with slub_debug=FZPU for the planted caches"
    sh("insmod %s" % (HERE / "planted_redzone.ko"))
    sh("rmmod planted_redzone")
