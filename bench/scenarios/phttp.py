"""phttp: Heidemann (1997), table 1: retrievals of three
documents (6,651, 3,883 and 1,866 B) over a 10 Mbit/s link with under 1 ms
RTT and over a 90 ms RTT link; HTTP/1.0 (a connection per document) vs
persistent connections; server variants: headers written separately with
Nagle on (the short-initial-segment and odd-final-segment stalls),
headers with the body, headers separately with Nagle off, headers with
the body and Nagle off (the paper's "both fixes"); the same server writing
in 4 KB pieces as Apache 1.1 did (headers flushed separately, or with the
body); IW 1, 2, 4, 10 through the module.  Mean, standard deviation,
relative sd and 95% CI as the paper reports them, each of the paper's rows
beside the variants that reproduce it, and from a capture of one
retrieval per variant of the paper (Linux default) the server's waits
inside each response and the client ACK that ended each (`capture-LINK.txt`
lists the segments), with a sequence plot of the unfixed server (like the
paper's figures 1 and 3).

Socket buffers: the paper's second general problem, a send buffer
smaller than the path's bandwidth-delay product, with its own example (1
Mbit/s at 90 ms: "12KB or larger", against a common default of 4 KB), on
the link `wan1m`: the "both fixes" server (headers with the body, Nagle
off) writing 4 KB pieces as Apache did, with SO_SNDBUF 4, 12 and 16 KB
and with Linux's autotuning; and the same server writing each response
at once, autotuned and with 4 KB.  Each page is timed against the ideal
(per document one RTT plus its frames at the link's rate), the most
bytes in flight are read from a capture of one retrieval, and the
server's retransmissions counted over the cell (RetransSegs of its
namespace).  The paper's sizes are bytes of data; Linux doubles
SO_SNDBUF to leave room for its own bookkeeping (socket(7)) and counts
that against the buffer, so each server asks for half the paper's size
(4 KB: 2,048 bytes, which the kernel raises to its minimum of 4,608),
and the kernel's value is reported beside it.  Linux checks the buffer
before it queues a new packet buffer, not byte by byte: one write goes
into one buffer of up to half the peer's window whatever SO_SNDBUF says,
so only a server writing in pieces is held to it; the one-write pair
shows that.

Servers: the bench's own for the variants the paper describes (an
HTTP/1.x-shaped responder: a 198-byte header block, 226 bytes as
Apache's for the 4 KB writers; Content-Length, Connection: keep-alive),
and Debian's nginx as the modern reference rows
(bench/lib/nginx.py: keep-alive, the three documents as static files,
`sendfile on`, `tcp_nodelay on`, a foreground process in the server
namespace): persistent connections under linux-default and cocktail-auto,
and HTTP/1.0-style (Connection: close) under linux-default.  nginx's
connections take the namespace's default congestion control, which the
policy's tcp-tune profile sets (checked before each variant).  When nginx
is missing, table.md says so and the nginx rows are absent.
"""
import socket
import threading
import time

from bench.lib import nginx, plot, policies, published, stats, table
from cocktail_lab import proc, traffic
from cocktail_lab.capture import (ACK, FIN, PSH, RST, SYN, Capture,
                                   data_segments, max_in_flight, read_pcap)
from cocktail_lab.topo import Topo

DOCS = [6651, 3883, 1866]
PORT = 5004
NGINX_PORT = 8080
# a (link, server variant) cell with all its repetitions (one client
# thread fetches them in a row)
RESUME_KEY = ("link", "variant")
LINKS = {"lan": dict(rtt=0, rate="10mbit"), "wan90": dict(rtt=90,
                                                           rate="10mbit"),
         "wan1m": dict(rtt=90, rate="1mbit")}
# the paper's socket-buffer example path: 1 Mbit/s at 90 ms, a BDP of
# 11,250 bytes ("12KB or larger")
SNDBUF_LINK = "wan1m"
SNDBUF_RATE_BPS = 1e6
SNDBUF_RTT_S = 0.090
# the socket-buffer link's servers, all "both fixes" (headers with the
# body, Nagle off): (name, send buffer in bytes of data (the paper's
# common default, its recommendation for the example path, its suggested
# default; 0: autotuned), the autotuned server of the same writes it is
# compared with (None: it is one))
SNDBUF_SERVERS = [
    ("phttp-4k-nodelay", 0, None),
    ("phttp-4k-sndbuf-4k", 4096, "phttp-4k-nodelay"),
    ("phttp-4k-sndbuf-12k", 12288, "phttp-4k-nodelay"),
    ("phttp-4k-sndbuf-16k", 16384, "phttp-4k-nodelay"),
    ("phttp-together-nodelay", 0, None),
    ("phttp-sndbuf-4k", 4096, "phttp-together-nodelay"),
]
SNDBUF = {n: b for n, b, _ in SNDBUF_SERVERS if b}
SNDBUF_REF = {n: r for n, _, r in SNDBUF_SERVERS}
# the servers only the socket-buffer link runs
SNDBUF_ONLY = [n for n, _, _ in SNDBUF_SERVERS
               if n != "phttp-together-nodelay"]


def sndbuf_asked(size):
    """SO_SNDBUF for a buffer of SIZE bytes in the paper's sense: half,
    since Linux doubles the value and counts its overhead in it."""
    return size // 2
# a frame's bytes beyond its payload on the shaped link: Ethernet 14, IPv4
# 20, TCP 20 + 12 of timestamps
FRAME_OVERHEAD = 66
MSS = 1448
# (name, persistent, headers separate, nagle, policy, module params)
VARIANTS = [
    ("http1.0", False, False, True, "linux-default", None),
    ("phttp-split-nagle", True, True, True, "linux-default", None),
    ("phttp-together", True, False, True, "linux-default", None),
    ("phttp-split-nodelay", True, True, False, "linux-default", None),
    ("phttp-together-nodelay", True, False, False, "linux-default", None),
    ("phttp-4k-split-nagle", True, True, True, "linux-default", None),
    ("phttp-4k-together", True, False, True, "linux-default", None),
    ("phttp-together", True, False, True, "cubic-nossai", None),
    ("phttp-together", True, False, True, "bbr", None),
    ("phttp-together", True, False, True, "reno-ssr", None),
    ("phttp-together", True, False, True, "cocktail-auto", None),
] + [("phttp-split-nagle", True, True, True, "cocktail-auto", {"iw": iw})
     for iw in (1, 2, 4, 10)] + [
    ("nginx-keepalive", True, None, None, "linux-default", None),
    ("nginx-keepalive", True, None, None, "cocktail-auto", None),
    ("nginx-http1.0", False, None, None, "linux-default", None),
] + [(name, True, False, False, "linux-default", None)
     for name in SNDBUF_ONLY]
# servers that write a response in pieces of this many bytes, as Apache
# 1.1 flushed its 4 KB output buffer (the paper's odd/short-final-segment
# problem needs a short write behind unacknowledged data); the others
# write the body (or headers and body) in one call
CHUNKED = {"phttp-4k-split-nagle": 4096, "phttp-4k-together": 4096,
           "phttp-4k-nodelay": 4096, "phttp-4k-sndbuf-4k": 4096,
           "phttp-4k-sndbuf-12k": 4096, "phttp-4k-sndbuf-16k": 4096}
# those servers' header block: 226 bytes, Apache's in the paper's figure 2
# trace (segment 1:227); with 4 KB writes it leaves the 3,883-byte
# document a final write of 13 bytes, the paper's figure 4 (10772:10785)
APACHE_HEADER = 226
# the paper's table 1 rows and the variants (server, policy) that stand for
# each: the bench's server writing a response at once, then as Apache did
TABLE1 = [
    ("HTTP 1.1b4", ["http1.0 linux-default"]),
    ("P-HTTP 1.1b4", ["phttp-4k-split-nagle linux-default",
                      "phttp-split-nagle linux-default"]),
    ("P-HTTP 1.1b4 (w/first fix)", ["phttp-4k-together linux-default",
                                    "phttp-together linux-default"]),
    ("P-HTTP 1.1b4 (w/both fixes)", ["phttp-together-nodelay linux-default"]),
]
# the linux-default variants whose one retrieval is captured and analysed
CAPTURED = ("http1.0", "phttp-split-nagle", "phttp-together",
            "phttp-split-nodelay", "phttp-together-nodelay",
            "phttp-4k-split-nagle", "phttp-4k-together") + \
    tuple(SNDBUF_ONLY)
# a gap between two data segments of one response longer than this is a
# wait (the server's own pace between back-to-back segments is far below)
WAIT_S = 0.005
FULL = dict(links=["lan", "wan90", SNDBUF_LINK], n=100)
QUICK = dict(links=["lan", SNDBUF_LINK], n=10)


def on_link(link, variant):
    """Whether VARIANT runs on LINK: the socket-buffer link holds its
    servers (under Linux's defaults), the others every variant but the
    ones only it runs."""
    if link == SNDBUF_LINK:
        return variant[0] in SNDBUF_REF and variant[4] == "linux-default"
    return variant[0] not in SNDBUF_ONLY


def sndbuf_ideal_s():
    """The page's ideal time on the socket-buffer link: per document one
    round trip (its request out, its first byte back) plus its frames
    (header and body in MSS-sized segments) at the link's rate."""
    t = 0.0
    for n in DOCS:
        body = len(header(n)) + n
        frames = -(-body // MSS)
        t += SNDBUF_RTT_S + (body + frames * FRAME_OVERHEAD) * 8 / \
            SNDBUF_RATE_BPS
    return t


def header(n, size=None):
    """The response header for a body of N bytes; with SIZE, padded to
    exactly SIZE bytes (an X-Pad line)."""
    h = ("HTTP/1.1 200 OK\r\nDate: Sat, 01 Jun 1996 12:00:00 GMT\r\n"
         "Server: bench-phttp/1.0\r\nLast-Modified: Wed, 01 May 1996 "
         "12:00:00 GMT\r\nContent-Type: text/html\r\nConnection: "
         "keep-alive\r\nContent-Length: %d\r\n" % n)
    if size is not None:
        pad = size - len(h) - len("X-Pad: \r\n\r\n")
        if pad < 0:
            raise ValueError("header of %d bytes cannot be %d" % (
                len(h) + 2, size))
        h += "X-Pad: %s\r\n" % ("x" * pad)
    return (h + "\r\n").encode()


def _write(c, data, chunk):
    """DATA on C in one call, or in pieces of CHUNK bytes."""
    if not chunk:
        c.sendall(data)
        return
    for i in range(0, len(data), chunk):
        c.sendall(data[i:i + chunk])


def _handler(persistent, split, chunk=None, head=None):
    def handle(c):
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                b = c.recv(1024)
                if not b:
                    return
                buf += b
            req, buf = buf.split(b"\r\n\r\n", 1)
            n = DOCS[int(req.split()[1].lstrip(b"/"))]
            if split:
                c.sendall(header(n, head))
                _write(c, b"d" * n, chunk)
            else:
                _write(c, header(n, head) + b"d" * n, chunk)
            if not persistent:
                return
    return handle


def _retrieve(addr, persistent, n, port=PORT):
    """N retrievals of the three documents (HTTP/1.1 GETs, Connection:
    close when not PERSISTENT); list of seconds."""
    out = []
    c = None
    for _ in range(n):
        t0 = time.monotonic()
        for i in range(len(DOCS)):
            if c is None:
                c = socket.create_connection((addr, port), timeout=30)
            c.sendall(nginx.request_bytes("/%d" % i, close=not persistent))
            nginx.read_response(c, time.monotonic() + 30)
            if not persistent:
                c.close()
                c = None
        out.append(time.monotonic() - t0)
    if c is not None:
        c.close()
    return out


def run(ctx):
    g = QUICK if ctx.quick else FULL
    ctx.reps = ctx.reps or g["n"]
    ok, why = policies.cocktail_status()
    variants = [v for v in VARIANTS if ok or not v[4].startswith("cocktail")]
    if "policy" in ctx.only:
        variants = [v for v in variants if v[4] in ctx.only["policy"]]
    if "server" in ctx.only:
        variants = [v for v in variants if v[0] in ctx.only["server"]]
    if not ok:
        ctx.note("cocktail variants skipped: %s" % why)
    if any(v[0].startswith("nginx") for v in variants):
        nok, nwhy = nginx.available()
        if not nok:
            ctx.note("nginx reference rows NOT measured: %s" % nwhy)
            variants = [v for v in variants if not v[0].startswith("nginx")]
        else:
            ctx.extra["nginx"] = {"version": nginx.version(),
                                  "config": nginx.CONF.strip()}
    links = [ln for ln in g["links"]
             if "link" not in ctx.only or ln in ctx.only["link"]]
    rows = []
    ctx.grid(sum(on_link(ln, v) for ln in links for v in variants))
    for link in links:
        todo = [v for v in variants if on_link(link, v) and
                not ctx.skip(link=link, variant=_label(v))]
        if not todo:
            continue
        topo = Topo(limit=1000, **LINKS[link])
        topo.up()
        web = None
        try:
            proc.sysctl(topo.server, "net.ipv4.tcp_no_metrics_save", 1)
            ctx.tc.append({"link": link, "netem_topo": topo.args(),
                           "tc": topo.info["tc"]})
            lst = traffic.Listener(topo.server, topo.server_addr, PORT)
            if any(v[0].startswith("nginx") for v in todo):
                web = nginx.Nginx(topo.server, topo.server_addr, NGINX_PORT,
                                  {"%d" % i: n for i, n in enumerate(DOCS)}
                                  ).start(topo)
            for v in todo:
                rows += _variant(ctx, topo, lst, link, v)
                ctx.tick()
            lst.close()
            ctx.save(rows)
        finally:
            if web is not None:
                web.stop(topo)
            policies.revert([topo.server])
            topo.down()
    return rows


def _label(variant):
    """A server variant's name in runs.csv's `variant` column."""
    name, _, _, _, pname, params = variant
    return "%s %s" % (name, pname) + (" iw=%s" % params["iw"] if params
                                      else "")


def _variant(ctx, topo, lst, link, variant):
    """Rows of one server variant on LINK (or one error row)."""
    name, pers, split, nagle, pname, params = variant
    pol = policies.BY_NAME[pname]
    label = _label(variant)
    base = {"link": link, "variant": label, "server": name, "policy": pname}
    sndbuf = sndbuf_asked(SNDBUF.get(name, 0))
    if link == SNDBUF_LINK:
        base.update(sndbuf=sndbuf, sndbuf_kernel=_kernel_sndbuf(sndbuf))
    is_nginx = name.startswith("nginx")
    stop = threading.Event()
    srv = None
    try:
        applied = policies.apply(pol, [topo.server], params)
        if is_nginx:
            # nginx's sockets take the namespace's default algorithm
            cc = proc.sysctl_get(topo.server,
                                 "net.ipv4.tcp_congestion_control")
            if cc != pol.cc:
                raise RuntimeError("namespace default congestion control "
                                   "is %s, %s wants %s" % (cc, pname,
                                                           pol.cc))
        else:
            srv = threading.Thread(target=traffic.serve, args=(
                lst, pol.cc, _handler(pers, split, CHUNKED.get(name),
                                      APACHE_HEADER if name in CHUNKED
                                      else None), stop, nagle, sndbuf),
                daemon=True)
            srv.start()
        port = NGINX_PORT if is_nginx else PORT
        if name in CAPTURED and pname == "linux-default":
            # kept with the results: the report reads the waits from it
            pcap = ctx.outdir / ("capture-%s-%s.pcap" % (link, name))
            with Capture(topo.capture_ns, topo.capture_dev, pcap,
                         "tcp port %d" % PORT):
                t = proc.NsThread(topo.client, _retrieve, topo.server_addr,
                                  pers, 1)
                t.start()
                t.join_result(120)
            if name == "phttp-split-nagle":
                _seqplot(ctx, pcap, topo.server_addr, link)
        r0 = proc.tcp_snmp(topo.server)["RetransSegs"]
        t = proc.NsThread(topo.client, _retrieve, topo.server_addr, pers,
                          ctx.reps, port)
        t.start()
        times = t.join_result(120 + 10 * ctx.reps)
        # the server's retransmissions over the cell's timed retrievals
        # (its namespace holds only this server's connections)
        base["cell_retrans"] = proc.tcp_snmp(topo.server)["RetransSegs"] - r0
        ctx.log("%s %-40s mean %.1f ms" % (link, label,
                                           stats.mean(times) * 1000))
        return [dict(base, params=applied, rep=i, ms=round(s * 1000, 3))
                for i, s in enumerate(times)]
    except (OSError, RuntimeError, TimeoutError) as e:
        ctx.log("%s: %s" % (label, e))
        return [dict(base, error="%s: %s" % (type(e).__name__, e))]
    finally:
        stop.set()
        if srv is not None:
            srv.join(5)


def _kernel_sndbuf(asked):
    """The send buffer the kernel gives a socket asked for ASKED bytes
    (SO_SNDBUF read back); 0 when nothing is asked (autotuned)."""
    if not asked:
        return 0
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, asked)
        return s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)


def _sndbuf_md(rows, outdir):
    """Markdown: the socket-buffer cells against the autotuned server of
    the same writes and the ideal, with the most bytes in flight from
    each cell's capture, and the verdict on the paper's claim."""
    cells = {}
    for r in rows:
        if r["link"] == SNDBUF_LINK and r.get("ms") is not None:
            cells.setdefault(r["server"], []).append(r)
    if not cells:
        return []
    ideal = sndbuf_ideal_s() * 1000
    means = {n: stats.mean([float(r["ms"]) for r in rs])
             for n, rs in cells.items()}
    md = ["\n## Socket buffers (%s: 1 Mbit/s, 90 ms; the paper: 4 KB "
          "too small, 12 KB or larger for this path)\n\nThe \"both "
          "fixes\" server writing 4 KB pieces (Apache's) or each response "
          "at once, with a fixed send buffer or autotuned. Mean ms per "
          "page; against the autotuned server of the same writes; ideal "
          "%.0f ms (per document one RTT plus its frames at 1 Mbit/s); "
          "most bytes in flight from the capture of one retrieval; "
          "retransmissions of the server over the cell. The BDP is "
          "11,250 bytes.\n\n"
          "| server | writes | SO_SNDBUF asked | kernel's (doubled) | n | "
          "mean ms | vs autotuned | vs ideal | most in flight (B) | "
          "retrans |\n|---|---|---|---|---|---|---|---|---|---|\n" % (
              SNDBUF_LINK, ideal)]
    for name, _, ref in SNDBUF_SERVERS:
        rs = cells.get(name)
        if not rs:
            continue
        ms = means[name]
        pcap = outdir / ("capture-%s-%s.pcap" % (SNDBUF_LINK, name))
        fl = "not captured"
        if pcap.exists():
            pk = read_pcap(str(pcap))
            srv = [p.src for p in pk if p.sport == PORT]
            if srv:
                fl = "%d" % max_in_flight(pk, srv[0], PORT)
        asked = int(rs[0].get("sndbuf") or 0)
        md.append("| %s | %s | %s | %s | %d | %s | %s | %.2f | %s | %s |\n"
                  % (name, "4 KB" if name in CHUNKED else "one",
                     asked or "autotuned",
                     rs[0].get("sndbuf_kernel") if asked else "autotuned",
                     len(rs), table.fmt(ms),
                     "%.2f" % (ms / means[ref]) if ref in means else
                     "reference" if ref is None else "n/a",
                     ms / ideal, fl, rs[0].get("cell_retrans", "n/a")))
    verdict = sndbuf_verdict(means)
    if verdict:
        md.append("\nVerdict: %s\n" % verdict)
    return md


def sndbuf_verdict(means):
    """The paper's claim against MEANS ({server: mean ms}), for the server
    writing 4 KB pieces: confirmed when its 4 KB buffer is over 10%
    slower than autotuning and 12 and 16 KB are within 5% of it;
    otherwise refuted, with the ratios; and, when measured, what a 4 KB
    buffer does to the server writing each response at once. None
    without the 4 KB writer's four cells."""
    four = [n for n, _, _ in SNDBUF_SERVERS[:4]]
    if any(n not in means for n in four):
        return None
    r = {n: means[n] / means[SNDBUF_REF[n] or n] for n in means
         if n in SNDBUF_REF and (SNDBUF_REF[n] or n) in means}
    ok = r["phttp-4k-sndbuf-4k"] > 1.10 and \
        r["phttp-4k-sndbuf-12k"] <= 1.05 and r["phttp-4k-sndbuf-16k"] <= 1.05
    out = "%s for a server writing 4 KB pieces: a 4 KB buffer %.2fx the " \
        "autotuned server's time, 12 KB %.2fx, 16 KB %.2fx (confirmed " \
        "means 4 KB over 1.10x, 12 and 16 KB within 1.05x)" % (
            "confirmed" if ok else "refuted", r["phttp-4k-sndbuf-4k"],
            r["phttp-4k-sndbuf-12k"], r["phttp-4k-sndbuf-16k"])
    if "phttp-sndbuf-4k" in r:
        out += "; writing each response at once, a 4 KB buffer %.2fx" % \
            r["phttp-sndbuf-4k"]
    return out + "."


def listing(pkts, port):
    """A capture as text, one line per segment (tcpdump-like): ms since
    the first packet, who sent it (the server is the side on PORT; the
    client's port names the connection), flags, sequence numbers and ACK
    relative to each side's SYN."""
    if not pkts:
        return "(no packets)\n"
    t0 = pkts[0].ts
    base = {}
    out = []
    for p in pkts:
        srv = p.sport == port
        conn = p.dport if srv else p.sport
        b = base.setdefault((conn, srv), p.seq)
        bo = base.get((conn, not srv))
        flags = "".join(c for c, f in (("S", SYN), ("F", FIN), ("R", RST),
                                       ("P", PSH)) if p.flags & f) or "."
        seq = (p.seq - b) & 0xFFFFFFFF
        ack = (" ack %d" % ((p.ack - bo) & 0xFFFFFFFF)
               if p.flags & ACK and bo is not None else "")
        out.append("%10.3f ms  %s %5d  %-3s %d:%d(%d)%s" % (
            (p.ts - t0) * 1000, "server>" if srv else "client>", conn,
            flags, seq, seq + p.plen, p.plen, ack))
    return "\n".join(out) + "\n"


def waits(pkts, port, wait_s=WAIT_S):
    """The server's waits inside each response of a capture: a list, one
    dict per response (the server's data between a request and the
    next), with doc (0, 1, 2, the order of DOCS), ms (request seen to the
    response's last segment), segs, and for its longest gap between two
    data segments when above WAIT_S: wait_ms, held (bytes of the segment
    that waited) and ack_ms, how long after the data it acknowledged the
    client's ACK that came just before the held segment was sent (None
    when no ACK came: not an ACK that released it)."""
    reqs = [i for i, p in enumerate(pkts) if p.dport == port and p.plen]
    out = []
    for n, i in enumerate(reqs):
        end = reqs[n + 1] if n + 1 < len(reqs) else len(pkts)
        conn = pkts[i].sport
        mine = [p for p in pkts[i:end] if conn in (p.sport, p.dport)]
        data = [p for p in mine if p.sport == port and p.plen]
        r = {"doc": n % len(DOCS), "segs": len(data), "ms": None,
             "wait_ms": None, "held": None, "ack_ms": None}
        out.append(r)
        if not data:
            continue
        r["ms"] = (data[-1].ts - pkts[i].ts) * 1000
        gaps = [(b.ts - a.ts, a, b) for a, b in zip(data, data[1:])]
        if not gaps or max(g[0] for g in gaps) <= wait_s:
            continue
        gap, a, b = max(gaps, key=lambda g: g[0])
        r["wait_ms"], r["held"] = gap * 1000, b.plen
        acks = [p for p in mine if p.dport == port and p.flags & ACK
                and not p.plen and a.ts <= p.ts <= b.ts]
        if acks:
            ack = acks[-1]
            # the data segment this ACK acknowledges last (its end)
            sent = [p for p in pkts[:pkts.index(ack)]
                    if p.sport == port and p.dport == conn and p.plen
                    and p.end == ack.ack]
            if sent:
                r["ack_ms"] = (ack.ts - sent[-1].ts) * 1000
    return out


def _waits_md(outdir):
    """Markdown: the waits of every capture kept in OUTDIR, and the
    listing of each capture in capture-LINK.txt beside it."""
    pcaps = sorted(outdir.glob("capture-*.pcap"))
    if not pcaps:
        return []
    md = ["\n## Waits inside a response, from the capture of one retrieval "
          "(Linux default)\n\nPer document (6,651 / 3,883 / 1,866 B): ms "
          "from the request to the response's last segment, seen at the "
          "router beside the server; then the longest gap between two of "
          "the server's data segments if above %d ms: its length, the "
          "bytes of the segment that waited, and how long after the data "
          "it acknowledged the client sent the ACK that came just before "
          "(one RTT plus the client's ACK delay; `none`: no ACK came). "
          "Every segment: `capture-LINK.txt`.\n\n| link | variant | doc 1 "
          "| doc 2 | doc 3 |\n|---|---|---|---|---|\n" % (WAIT_S * 1000)]
    listings = {}
    for pcap in pcaps:
        link, name = pcap.stem[len("capture-"):].split("-", 1)
        pkts = read_pcap(str(pcap))
        listings.setdefault(link, []).append(
            "## %s linux-default (%s)\n%s" % (name, link,
                                              listing(pkts, PORT)))
        cols = []
        for r in waits(pkts, PORT):
            if r["ms"] is None:
                cols.append("no data")
                continue
            c = "%.1f ms" % r["ms"]
            if r["wait_ms"] is not None:
                c += ", wait %.1f ms (%d B held), ACK %s" % (
                    r["wait_ms"], r["held"], "none" if r["ack_ms"] is None
                    else "%.1f ms after its data" % r["ack_ms"])
            cols.append(c)
        md.append("| %s | %s | %s |\n" % (link, name, " | ".join(cols)))
    for link, parts in listings.items():
        (outdir / ("capture-%s.txt" % link)).write_text(
            "# one retrieval per variant, seen at the router beside the "
            "server; ms since the first packet\n\n" + "\n".join(parts))
    return md


def _table1_md(groups):
    """Markdown: each row of the paper's table 1 beside the variants that
    stand for it, per link (GROUPS: {link: {variant: [ms]}})."""
    pub = {p["server"]: p for p in published.load(
        "heidemann1997_table1.csv")}
    links = [ln for ln in groups if ln != SNDBUF_LINK]
    if not links:
        return []
    md = ["\n## The paper's table 1 against the variants\n\nThe "
          "paper's rows (SunOS 4.1.3, Apache 1.1b4, LAN) beside the "
          "variants that stand for them: the bench's server writing a "
          "response at once and, where the paper's problem depends on it, "
          "writing 4 KB pieces as Apache did. Mean ms per retrieval.\n\n"
          "| paper's row | published ms | variant | %s |\n|---|---|---|%s\n"
          % (" | ".join(links), "---|" * len(links))]
    for row, variants in TABLE1:
        p = pub.get(row)
        for v in variants:
            means = [groups[ln].get(v) for ln in links]
            md.append("| %s | %s | %s | %s |\n" % (
                row, p["mean_ms"] if p else "n/a", v, " | ".join(
                    table.fmt(stats.mean(m)) if m else "not measured"
                    for m in means)))
    return md


def _seqplot(ctx, pcap, server, link):
    pkts = read_pcap(str(pcap))
    segs = data_segments(pkts, server, PORT)
    if not segs:
        return
    t0 = segs[0].ts
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    base = {}
    xs, ys = [], []
    for p in segs:
        b = base.setdefault(p.dport, p.seq)
        xs.append(p.ts - t0)
        ys.append(((p.end - b) & 0xFFFFFFFF))
    ax.plot(xs, ys, "o", ms=3)
    ax.set_xlabel("seconds")
    ax.set_ylabel("sequence (end of segment, bytes)")
    ax.set_title("P-HTTP, headers written separately, Nagle on (%s)" % link,
                 fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(ctx.outdir / ("seq-%s.png" % link))
    plt.close(fig)


def report(ctx, rows):
    rows = [r for r in rows if r.get("variant")]
    md = ["# phttp: retrieval time of three documents (Heidemann 1997, "
          "table 1)\n\n",
          "Measured inside the test VM, 10 Mbit/s (`lan`: under 1 ms, "
          "`wan90`: 90 ms; `wan1m`, the socket-buffer section's path: 1 "
          "Mbit/s, 90 ms); the paper's variants "
          "with the bench's own HTTP-shaped server, `nginx-*` rows with "
          "Debian's nginx (keep-alive, sendfile on, tcp_nodelay on) as the "
          "modern reference. "
          "Per retrieval (6,651 + 3,883 + 1,866 B): mean (sd, relative sd, "
          "95% CI) in ms, as the paper reports; published rows in "
          "bench/published/heidemann1997_table1.csv (HTTP 43 ms; P-HTTP "
          "605 ms; with both fixes 26 ms).\n\n"]
    md += ["- %s\n" % n for n in table.notes(ctx)]
    md.append("\n| link | variant | n | mean ms (sd, rsd, 95% CI) | median "
              "(min–max) |\n|---|---|---|---|---|\n")
    keys = []
    for r in rows:
        if (r["link"], r["variant"]) not in keys:
            keys.append((r["link"], r["variant"]))
    groups = {}
    for link, v in keys:
        ms = [r["ms"] for r in rows if (r["link"], r["variant"]) == (link, v)
              and r.get("ms") is not None]
        s = stats.summarize(ms)
        if not s["n"]:
            md.append("| %s | %s | 0 | failed | |\n" % (link, v))
            continue
        md.append("| %s | %s | %d | %s (%s, %.0f%%, %s) | %s |\n" % (
            link, v, s["n"], table.fmt(s["mean"]), table.fmt(s["sd"]),
            100 * s["sd"] / s["mean"] if s["mean"] else 0,
            table.fmt(s["ci95"]), table.fmt_range(s)))
        groups.setdefault(link, {})[v] = ms
    md.append("\nPublished (Heidemann 1997, table 1: 10 Mb/s Ethernet, RTT "
              "< 1 ms, 100 samples; Apache 1.1b4 on SunOS):\n\n"
              "| server | mean ms (sd, rsd, 95% CI) |\n|---|---|\n")
    md += ["| %s | %s (%s, %s%%, %s) |\n" % (
        p["server"], p["mean_ms"], p["sd_ms"], p["rsd_percent"],
        p["ci95_ms"]) for p in published.load("heidemann1997_table1.csv")]
    errs = [r for r in rows if r.get("error")]
    if errs:
        md.append("\nFailed runs:\n\n")
        md += ["- %s %s: %s\n" % (r["link"], r["variant"], r["error"])
               for r in errs]
    md += _table1_md(groups)
    md += _sndbuf_md(rows, ctx.outdir)
    md += _waits_md(ctx.outdir)
    (ctx.outdir / "table.md").write_text("".join(md))
    for link, g in groups.items():
        plot.bars(ctx.outdir / ("phttp-%s.png" % link),
                  "retrieval time, %s" % link, "ms", {link: g})
