"""Host tests for bpf/vmlinux-btf, which finds the BTF inside a compressed
kernel image for the BPF build's vmlinux.h."""
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
TOOL = TOP / "bpf" / "vmlinux-btf"


def kver():
    return subprocess.run([TOP / "dev" / "kver"], text=True, check=True,
                          capture_output=True,
                          env={**os.environ, "PATH": "/usr/bin:/bin"},
                          cwd=TOP).stdout.strip()


def run(args, locale):
    # The environment a CI runner or a non-root user gives: a UTF-8 locale,
    # the admin directories only where make adds them.
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
           "HOME": os.environ.get("HOME", "/root"),
           "LANG": locale, "LC_ALL": locale}
    return subprocess.run([TOOL, *args], text=True, capture_output=True,
                          env=env)


@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
def test_finds_btf_in_the_module_kernels_image(locale):
    img = Path("/boot/vmlinuz-" + kver())
    p = run([str(img)], locale)
    assert p.returncode == 0, p.stderr
    assert "struct tcp_congestion_ops {" in p.stdout
    assert "struct tcp_sock {" in p.stdout


def test_image_without_btf_is_one_clear_error(tmp_path):
    img = tmp_path / "not-a-kernel"
    img.write_bytes(b"\xfd7zXZ\x00garbage" * 100)
    p = run([str(img)], "C.UTF-8")
    assert p.returncode == 1
    assert p.stdout == ""
    assert p.stderr.strip() == "vmlinux-btf: no vmlinux with BTF found in %s" % img


def test_concurrent_extractions_all_succeed():
    """On a loaded machine (make -j, a CI runner) every run still finds the
    BTF: no step may depend on how the processes of a pipeline interleave."""
    img = "/boot/vmlinuz-" + kver()
    with ThreadPoolExecutor(6) as pool:
        runs = list(pool.map(lambda _: run([img], "C.UTF-8"), range(6)))
    assert [p.returncode for p in runs] == [0] * 6, [p.stderr for p in runs]
