"""Planted: a module leaks an object of its own slab cache. The suite's
kernel log check must fail it (verify.py expects that failure)."""
from conftest import HERE, sh


def test_leak():
    sh("insmod %s" % (HERE / "planted_leak.ko"))
    sh("rmmod planted_leak")
