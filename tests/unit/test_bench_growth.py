"""Host tests of the growth scenario's loss-epoch cell: where a traced
bulk transfer's loss events and epochs are (loss_epochs), which one the
report shows, and the report's table and plot from samples files."""
import types

from bench.lib import table
from bench.scenarios import growth

OPEN, DISORDER, CWR, RECOVERY = 0, 1, 2, 3
PNG = b"\x89PNG\r\n\x1a\n"


class Trace:
    """A synthetic tcp_info trace, one sample every 0.1 s."""

    def __init__(self):
        self.samples = []
        self.retrans = 0

    def add(self, cwnd, state=OPEN, lost=0):
        self.retrans += lost
        self.samples.append(dict(t_s=round(len(self.samples) * 0.1, 1),
                                 cwnd=cwnd, ssthresh=0,
                                 retrans=self.retrans, ca_state=state))

    def grow(self, start, stop, step):
        for w in range(start, stop, step):
            self.add(w)

    def loss(self, cwnd, after, samples=3):
        """A loss at CWND: recovery for SAMPLES samples (one more
        retransmission inside it), back in Open at AFTER."""
        self.add(cwnd, RECOVERY, lost=2)
        for i in range(samples - 1):
            self.add(after, RECOVERY, lost=1 if i == 0 else 0)
        self.add(after)


def three_losses():
    t = Trace()
    t.grow(10, 200, 40)           # slow start: 10 50 90 130 170
    t.loss(170, 119)              # loss 1 at sample 5
    t.grow(120, 171, 10)          # 120 .. 170
    t.loss(170, 119)              # loss 2
    t.grow(120, 181, 20)          # 120 140 160 180
    t.loss(180, 126)              # loss 3
    t.grow(127, 140, 5)           # an epoch without an end
    return t


def test_epochs_between_losses():
    t = three_losses()
    eps = growth.loss_epochs(t.samples)
    # three loss events, two complete epochs (the last has no next loss)
    assert len(eps) == 2
    s = t.samples
    first = eps[0]
    # it starts at the first sample back in Open after loss 1 ...
    assert s[first["first"]]["ca_state"] == OPEN
    assert s[first["first"] - 1]["ca_state"] == RECOVERY
    assert first["w_max"] == 170 and first["w_start"] == 119
    assert first["beta"] == 0.7
    # ... and ends at the last sample before loss 2
    assert s[first["last"] + 1]["retrans"] > s[first["last"]]["retrans"]
    assert s[first["last"]]["cwnd"] == 170
    # the retransmission inside recovery did not start an event
    second = eps[1]
    assert second["first"] > first["last"]
    assert second["w_max"] == 170 and second["w_start"] == 119
    # 119 120 140 160 180: 180 >= 170 four samples after the start
    assert second["regain_s"] == 0.4
    assert second["end_s"] == s[second["last"]]["t_s"]
    assert growth.shown_epoch(eps) is second


def test_no_epoch_without_two_loss_events():
    t = Trace()
    t.grow(10, 100, 10)
    assert growth.loss_epochs(t.samples) == []
    t.loss(90, 45)
    t.grow(46, 60, 1)
    assert growth.loss_epochs(t.samples) == []
    assert growth.shown_epoch([]) is None


def test_retransmissions_in_cwr_or_recovery_are_one_event():
    t = Trace()
    t.grow(10, 50, 10)
    t.add(40, CWR, lost=1)        # an ECN-like reduction's retransmission
    t.add(40, RECOVERY, lost=1)   # still the same event
    t.add(20)
    t.grow(21, 30, 1)
    t.add(29, DISORDER)
    t.add(29, RECOVERY, lost=1)   # from Disorder: a new event
    t.add(15)
    eps = growth.loss_epochs(t.samples)
    assert len(eps) == 1
    assert eps[0]["w_max"] == 40 and eps[0]["w_start"] == 20
    assert eps[0]["beta"] == 0.5
    assert eps[0]["regain_s"] is None     # never back at 40


def test_recovery_that_never_ends_has_no_epoch():
    t = Trace()
    t.grow(10, 50, 10)
    t.add(40, RECOVERY, lost=1)
    t.add(20, RECOVERY)
    t.add(20, RECOVERY)
    t.add(20, OPEN, lost=0)
    t.add(20, OPEN, lost=1)
    # the first event recovered at sample 7, the second opened at 8: an
    # epoch of one sample
    eps = growth.loss_epochs(t.samples)
    assert [(e["first"], e["last"]) for e in eps] == [(7, 7)]


def test_report_writes_the_table_and_the_plot(tmp_path):
    t = three_losses()
    eps = growth.loss_epochs(t.samples)
    shown = growth.shown_epoch(eps)
    rows = []
    for rep, v in enumerate(growth.VARIANTS):
        name = "epoch-%s-0.csv" % v
        table.write_csv(tmp_path / name, t.samples, growth.SAMPLE_FIELDS)
        rows.append(dict(cell=growth.EPOCH, variant=v, rep=0, mbit_s=9.5,
                         retrans=t.retrans, samples=name, epochs=len(eps),
                         **{k: shown[k] for k in ("start_s", "end_s", "w_max",
                                                  "w_start", "beta",
                                                  "regain_s")}))
    ctx = types.SimpleNamespace(outdir=tmp_path, notes=[])
    md = "".join(growth.report_epoch(ctx, table.read_csv(
        _roundtrip(tmp_path, rows))))
    lines = [x for x in md.splitlines() if x.startswith("| cocktail-cubic")]
    assert lines == ["| cocktail-cubic | 0 | 9.50 | %d | 2 | 170 | 119 | "
                     "0.7 | 0.4 | 0.4 |" % t.retrans]
    assert (tmp_path / "epoch.png").read_bytes()[:8] == PNG


def _roundtrip(path, rows):
    """ROWS through runs.csv, as --report-only reads them."""
    table.write_csv(path / "runs.csv", rows)
    return path / "runs.csv"


def test_epoch_is_a_cell_of_the_grid():
    ctx = types.SimpleNamespace(only={"cell": ["epoch"]}, quick=True)
    names, _ = growth.chosen(ctx)
    assert names == ["epoch"]
    ctx = types.SimpleNamespace(only={}, quick=True)
    assert growth.chosen(ctx)[0] == ["100ms-10mbit-1bdp", "fair", "epoch"]


def test_report_of_the_epoch_cell_alone(tmp_path):
    """--only cell=epoch: the loss-epoch table and plot, without an empty
    throughput table or bar plot."""
    t = three_losses()
    table.write_csv(tmp_path / "epoch-cubic-0.csv", t.samples,
                    growth.SAMPLE_FIELDS)
    rows = [dict(cell=growth.EPOCH, variant="cubic", rep=0, mbit_s=9.5,
                 retrans=t.retrans, samples="epoch-cubic-0.csv", epochs=2,
                 start_s=1.0, end_s=1.4, w_max=170, w_start=119, beta=0.7,
                 regain_s=0.4)]
    growth.report(types.SimpleNamespace(outdir=tmp_path, notes=[]), rows)
    md = (tmp_path / "table.md").read_text()
    assert "| cell | variant |" not in md
    assert "| cubic | 0 | 9.50 |" in md
    assert not (tmp_path / "growth.png").exists()
    assert (tmp_path / "epoch.png").read_bytes()[:8] == PNG
