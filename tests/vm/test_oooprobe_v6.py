"""tcp_oooprobe over IPv6: the truth-from-packets check of test_oooprobe.py
(the probe's SEGMENT events against a tcpdump capture at the receiver: the
same set of segments, each hold time within 2 ms) and the FLOW event
(family AF_INET6, addresses, ports, data_segs_in and out-of-order segments
equal to the capture's) on an IPv6 connection (cocktail_lab.topo.Pair's
fd00:cc:100::1 and ::2, nodad): one chosen segment dropped once (the
deterministic case), and pure reordering."""
import socket

import pytest

from cocktail_lab.genl import CMD
from test_oooprobe import probe, truth_case  # noqa: F401 (fixture)


def flow_event(events, srv, cli):
    flows = [e for e in events if e["cmd"] == CMD["FLOW"] and
             e["LOCAL_PORT"] == cli[1] and e["REMOTE_PORT"] == srv[1]]
    assert len(flows) == 1, flows
    f = flows[0]
    assert f["FAMILY"] == socket.AF_INET6
    assert f["LOCAL_ADDR"] == cli[0] and f["REMOTE_ADDR"] == srv[0], f
    return f


@pytest.mark.parametrize("case", ["drop", "reorder"])
def test_v6_truth_from_packets(probe, tmp_path, case):
    if case == "drop":
        # segment 30 dropped once: repaired by fast retransmit
        events, pkts, srv, cli, link, held, data_segs, ooo_segs, worst = \
            truth_case(tmp_path, "v6d", 400_000, drop_index=30, v6=True)
    else:
        # every 10th segment sent ahead of the nine before it
        events, pkts, srv, cli, link, held, data_segs, ooo_segs, worst = \
            truth_case(tmp_path, "v6r", 1_000_000, v6=True,
                       srv_netem="reorder 100% gap 10")
    assert ":" in srv[0] and srv[0].startswith("fd00:cc:"), srv
    assert all(p.ipver == 6 for p in pkts), "IPv4 packets in the capture"
    holds = sorted(h["t_out"] - h["t_in"] for h in held)
    if case == "drop":
        assert len(held) >= 3, "fast retransmit needs >= 3 held segments"
        assert 0.5 * link.rtt * 1e6 <= holds[-1] <= 4 * link.rtt * 1e6, holds
    else:
        assert len(held) >= data_segs // 20, (len(held), data_segs)
    f = flow_event(events, srv, cli)
    sizes = sorted({p.plen for p in pkts if p.plen > 0})
    assert f["DATA_SEGS_IN"] == data_segs, \
        "capture: %d segments, data lengths %s, tcpdump dropped %d" % (
            data_segs, sizes[-5:], link.cap_dropped)
    assert f["OOO_SEGS"] == ooo_segs
    if case == "drop":
        assert ooo_segs == len(held)
    assert f["BYTES_RECEIVED"] == (400_000 if case == "drop" else 1_000_000)
    assert f["FLOW_FLAGS"] == 0
    # the server end is reported too, with nothing out of order
    back = [e for e in events if e["cmd"] == CMD["FLOW"] and
            e["LOCAL_PORT"] == srv[1] and e["REMOTE_PORT"] == cli[1]]
    assert len(back) == 1 and back[0]["FAMILY"] == socket.AF_INET6
    assert back[0]["LOCAL_ADDR"] == srv[0] and back[0]["OOO_SEGS"] == 0
    print("IPv6 %s: %d data segments, %d held, hold %.1f..%.1f ms, worst "
          "diff %.3f ms" % (case, data_segs, len(held), holds[0] / 1e6,
                            holds[-1] / 1e6, worst / 1e6))
