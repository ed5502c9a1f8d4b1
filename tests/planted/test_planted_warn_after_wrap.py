"""Planted: the kernel's log ring buffer wraps (far more than its size is
written to /dev/kmsg), then a module WARNs. The suite's kernel log check
must still see the warning, and say that records were overwritten
(verify.py expects both)."""
import ctypes
import os
from pathlib import Path

from conftest import HERE, sh

SYSLOG_ACTION_SIZE_BUFFER = 10   # syslog(2): the ring buffer's size


def log_buf_bytes():
    """The ring buffer's size, from the kernel itself: syslog(2)'s
    SYSLOG_ACTION_SIZE_BUFFER (whatever the config or log_buf_len= made
    it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    size = libc.klogctl(SYSLOG_ACTION_SIZE_BUFFER, None, 0)
    assert size > 0, os.strerror(ctypes.get_errno())
    return size


def test_warn_after_wrap():
    # writes to /dev/kmsg are rate-limited unless printk_devkmsg is on
    knob = Path("/proc/sys/kernel/printk_devkmsg")
    old = knob.read_text().strip()
    knob.write_text("on\n")
    filler = b"planted filler " + b"x" * 400 + b"\n"
    fd = os.open("/dev/kmsg", os.O_WRONLY)
    try:
        for _ in range(3 * log_buf_bytes() // len(filler)):
            os.write(fd, filler)
    finally:
        os.close(fd)
        knob.write_text(old + "\n")
    sh("insmod %s" % (HERE / "planted_warn.ko"))
    sh("rmmod planted_warn")
