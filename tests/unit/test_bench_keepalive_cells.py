"""keepalive's grid and its --only filters (host, no VM)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.scenarios import keepalive  # noqa: E402

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
