"""TCP_INFO and congestion control of a socket.  The struct tcp_info
parser is tests/vm/kaconn.py's (owned by the netem-topo engineer)."""
import socket
import sys
from pathlib import Path

# kaconn (and oooprobe_lib, for bench/lib/nginx.py) live in tests/vm
_VM = str(Path(__file__).resolve().parents[2] / "tests" / "vm")
if _VM not in sys.path:
    sys.path.insert(0, _VM)
import kaconn  # noqa: E402

TCP_CONGESTION = kaconn.TCP_CONGESTION
TCP_WINDOW_CLAMP = kaconn.TCP_WINDOW_CLAMP


def info(sock):
    return kaconn.tcp_info(sock)


def congestion(sock):
    return sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION,
                           16).split(b"\0")[0].decode()


def set_congestion(sock, name):
    sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, name.encode())
