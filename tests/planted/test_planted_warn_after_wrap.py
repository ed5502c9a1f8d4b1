"""Planted: the kernel's log ring buffer wraps (far more than its size is
written to /dev/kmsg), then a module WARNs. The suite's kernel log check
must still see the warning, and say that records were overwritten
(verify.py expects both)."""
import os
from pathlib import Path

from conftest import HERE, sh


def log_buf_bytes():
    """The ring buffer's size: CONFIG_LOG_BUF_SHIFT from the kernel's
    config, or the log_buf_len= boot option."""
    cmdline = Path("/proc/cmdline").read_text()
    for word in cmdline.split():
        if word.startswith("log_buf_len="):
            v = word.split("=", 1)[1]
            mult = {"k": 1 << 10, "m": 1 << 20}.get(v[-1].lower(), 1)
            return int(v.rstrip("kKmM")) * mult
    cfg = Path("/boot/config-%s" % os.uname().release)
    for line in cfg.read_text().splitlines():
        if line.startswith("CONFIG_LOG_BUF_SHIFT="):
            return 1 << int(line.split("=")[1])
    return 1 << 20


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
