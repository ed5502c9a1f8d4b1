"""keepalive's grid and its --only filters (host, no VM)."""

from bench.scenarios import keepalive

G = dict(rtts=[20, 200], sizes=[16, 64], thinks=[0.5, 1], compete=[0, 1],
         reqs=2, grpc=True)


def test_full_grid_has_every_web_cell_and_one_grpc_cell():
    cs = list(keepalive.cells(G))
    assert len([c for c in cs if c[4] == "web"]) == 2 * 2 * 2 * 2
    assert [c for c in cs if c[4] == "grpc"] == \
        [(200, 0, keepalive.GRPC_KB, 1, "grpc")]


def test_only_restricts_each_axis():
    only = {"compete": ["1"], "size_kb": ["64"], "think_s": ["1"],
            "kind": ["web"]}
    assert list(keepalive.cells(G, only)) == [(20, 1, 64, 1, "web"),
                                              (200, 1, 64, 1, "web")]
    assert list(keepalive.cells(G, {"kind": ["grpc"]})) == \
        [(200, 0, keepalive.GRPC_KB, 1, "grpc")]
    assert list(keepalive.cells(G, {"think_s": ["3"]})) == [
        (200, 0, keepalive.GRPC_KB, 1, "grpc")]
    assert list(keepalive.cells(G, {"size_kb": ["999"], "kind": ["web"]})) \
        == []


def test_lanes_group_one_bulk_setting_and_one_think_time():
    full = dict(G, rtts=[20, 100, 200], thinks=[0.5, 1, 3],
                sizes=[16, 64, 256])
    lanes = list(keepalive.lanes(full, jobs=10))
    # every cell once, in lanes of one (compete, think time)
    flat = [c for lane in lanes for c in lane]
    assert sorted(flat) == sorted(keepalive.cells(full))
    for lane in lanes:
        assert len({(c[1], c[3]) for c in lane}) == 1
        width = min(10, keepalive.BULK_JOBS) if lane[0][1] else 10
        assert 1 <= len(lane) <= width
    # the full grid in six lanes: the nine web cells of a think time at
    # once, the gRPC-like cell (think time 1 s) with its quiet lane
    assert len(lanes) == 6
    quiet_1s = [lane for lane in lanes if lane[0][1] == 0 and
                lane[0][3] == 1]
    assert [len(x) for x in quiet_1s] == [10]
    assert [c for c in quiet_1s[0] if c[4] == "grpc"]
    # three at a time: lanes of one RTT each, in RTT order
    for lane in keepalive.lanes(full, jobs=3):
        assert len(lane) in (1, 3) and len({c[0] for c in lane}) == 1
    # --only rtt_ms: the lanes hold only those RTTs
    only = {"rtt_ms": ["20", "100"], "think_s": ["3"], "kind": ["web"]}
    lanes = list(keepalive.lanes(full, only, jobs=9))
    assert [(lane[0][1], len(lane)) for lane in lanes] == [(0, 6), (1, 6)]


def test_lanes_of_one_job_are_single_cells_and_obey_only():
    lanes = list(keepalive.lanes(G, {"rtt_ms": ["20"]}, jobs=1))
    assert all(len(x) == 1 for x in lanes)
    assert {x[0][0] for x in lanes} == {20}
    assert len(lanes) == len([c for c in keepalive.cells(G) if c[0] == 20])


def test_by_rtt_table_takes_the_median_over_cells():
    rows = []
    for size, ratio in ((16, 1.0), (64, 2.0), (256, 4.0)):
        for req, rtx in enumerate((0, 1)):
            rows.append({"kind": "web", "rtt_ms": 20, "compete": 0,
                         "size_kb": size, "think_s": 1, "server": "bench",
                         "policy": "cocktail-keep", "req": req,
                         "seconds": 0.1 * ratio, "ideal_s": 0.1,
                         "retrans": rtx})
    md = "".join(keepalive._by_rtt_md(rows, ["linux-default",
                                             "cocktail-keep"]))
    # one line, three cells, median ratio 2, one retransmission a cell
    assert "| web | 20 | no | 3 | ×2.00, 3 rtx |" in md
    assert "linux-default" not in md     # a policy that never ran


def test_cwv_variants_are_known_but_not_run_by_default():
    from bench.lib import policies
    v = policies.BY_NAME["cocktail-auto-cwv0"]
    assert v.cocktail == {"restart": "auto", "cwv": 0}
    assert v not in policies.ALL and v in policies.KNOWN
    # every cocktail policy sets cwv, so a variant's setting is undone
    # (cocktail-default sets every parameter to its default)
    assert all("cwv" in p.cocktail for p in policies.KNOWN
               if p.cc == "cocktail" and not p.defaults)
    assert "tcp_cocktail.cwv = 2" in policies.profile_text(
        policies.BY_NAME["cocktail-keep-cwv2"])
    import pytest
    with pytest.raises(SystemExit, match="unknown policy cocktail-nope"):
        policies.available(["cocktail-nope"])


def test_queue_policy_is_known_but_not_run_by_default():
    from bench.lib import policies
    q = policies.BY_NAME["cocktail-queue"]
    assert q.cc == "cocktail" and q.ssai == 1
    assert q.cocktail == {"restart": "queue", "cwv": 1}
    assert q not in policies.ALL and q in policies.KNOWN
    assert "tcp_cocktail.restart = queue" in policies.profile_text(q)
