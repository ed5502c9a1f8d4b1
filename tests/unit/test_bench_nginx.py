"""Host tests of bench/lib/nginx.py's pieces that need no VM: the HTTP
response reader (over a socketpair), the request text and the nginx
configuration (`nginx -t` when nginx is installed; it only parses, binding
nothing it can keep). Its sock_diag decoding is cocktail_lab.tcpinfo's
(tests/unit/test_lab_tcpinfo.py)."""
import socket
import subprocess
import time
from pathlib import Path

import pytest

from bench.lib import nginx


def _serve(data):
    a, b = socket.socketpair()
    a.sendall(data)
    a.close()
    return b


def test_read_response_reads_exactly_the_body():
    body = b"x" * 70000
    c = _serve(b"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: "
               b"70000\r\n\r\n" + body)
    head, n, t = nginx.read_response(c, time.monotonic() + 5)
    assert n == 70000 and head.startswith(b"HTTP/1.1 200")
    assert t <= time.monotonic()


def test_read_response_errors():
    for data, err in ((b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
                       "404"),
                      (b"HTTP/1.1 200 OK\r\n\r\nabc", "Content-Length"),
                      (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
                       "closed after 0 of 7"),
                      (b"HTTP/1.1 200 OK\r\n", "headers")):
        with pytest.raises((ConnectionError, TimeoutError), match=err):
            nginx.read_response(_serve(data), time.monotonic() + 5)


def test_request_bytes():
    assert nginx.request_bytes("/0") == (b"GET /0 HTTP/1.1\r\nHost: bench\r\n"
                                         b"Connection: keep-alive\r\n\r\n")
    assert b"Connection: close" in nginx.request_bytes("/0", close=True)


@pytest.mark.skipif(not Path(nginx.BINARY).exists(),
                    reason="nginx not installed")
def test_config_parses(tmp_path):
    (tmp_path / "www").mkdir()
    conf = tmp_path / "nginx.conf"
    # a port of 0 is refused by nginx; an address nobody has cannot bind,
    # so -t checks the syntax and fails only at the bind
    conf.write_text(nginx.CONF.format(d=tmp_path, addr="198.18.255.254",
                                      port=8080))
    p = subprocess.run([nginx.BINARY, "-t", "-p", str(tmp_path), "-e",
                        str(tmp_path / "error.log"), "-c", str(conf)],
                       capture_output=True, text=True)
    assert "syntax is ok" in p.stderr, p.stderr
