"""cocktail_lab.topo on the host: option parsing and the derived sizes of
`netem-topo up` (building needs root and the VM: tests/vm/test_netem_topo.py),
and modparams' counter parsing."""
import pytest

from cocktail_lab import modparams, topo


def test_defaults_and_keyword_options():
    o = topo.parse_up([])
    assert (o["rtt"], o["rate"], o["limit"], o["mtu"], o["senders"]) == \
        ("100", "10mbit", "100", "1500", "1")
    assert not o["red"] and not o["dumbbell"] and o["loss"] == ""
    argv = topo.kwargs_argv(dict(rtt=40, red=True, dumbbell=False,
                                 loss_dir="rev", loss=None, rate="20MBit"))
    assert argv == ["--rtt", "40", "--red", "--loss-dir", "rev",
                    "--rate", "20MBit"]
    o = topo.parse_up(argv)
    assert o["rtt"] == "40" and o["red"] and o["rate"] == "20mbit"


@pytest.mark.parametrize("args, msg", [
    (["--rate", "fast"], "--rate: 'fast' is not a rate"),
    (["--rtt", "-5"], "--rtt: '-5' is not a delay"),
    (["--limit", "0"], "--limit: '0' is not a packet count"),
    (["--loss", "0"], "--loss: '0' is not a percentage"),
    (["--senders", "33"], "--senders: '33' must be 1..32"),
    (["--bogus"], "unknown option '--bogus'"),
    (["--loss_dir", "fwd"], "unknown option '--loss_dir'"),
    (["--rtt"], "option --rtt needs a value"),
    (["--id", "Bad!"], "--id: 'Bad!' must match"),
    (["--loss-dir", "up"], "--loss-dir: 'up' must be fwd, rev or both"),
    (["--reorder", "5", "--rtt", "0"], "--reorder needs a delay"),
    (["--mtu", "100"], "--mtu: '100' must be 576..9000"),
    (["--reorder-gap", "3"], "--reorder-gap needs --reorder"),
])
def test_bad_options(args, msg):
    with pytest.raises(topo.TopoError) as e:
        topo.parse_up(args)
    assert str(e.value).startswith(msg) and e.value.usage


def test_rates_and_sizes():
    assert topo.rate_bps("10mbit") == 10000000
    assert topo.rate_bps("1.5Gbit") == 1500000000
    assert topo.rate_bps("500kbps") is None
    sz = topo._sizes(topo.parse_up(["--rtt", "0.5", "--limit", "15",
                                    "--rate", "20mbit"]))
    assert sz["half_us"] == 250 and sz["frame"] == 1514
    assert sz["limit_bytes"] == 15 * 1514
    # tbf bucket: one jiffy at HZ=100 plus a frame, at least two frames
    assert sz["tbf_burst"] == 20000000 // 8 // 100 + 1514
    assert sz["red_max"] == 15 * 1514 // 2
    assert sz["red_min"] == sz["red_max"] // 3
    # too small a queue for RED: the thresholds collide
    small = topo._sizes(topo.parse_up(["--limit", "2"]))
    assert small["limit_bytes"] <= small["red_max"]


def test_impairment_words_per_direction():
    o = topo.parse_up(["--rtt", "40", "--loss", "1.5", "--reorder", "10",
                       "--reorder-corr", "25", "--reorder-dir", "rev",
                       "--reorder-gap", "5"])
    assert topo._impair(o, "fwd") == ["loss", "1.5%"]
    assert topo._impair(o, "rev") == ["reorder", "10%", "25%", "gap", "5"]


def test_counter_parsing():
    text = "ssr 3\ndecay 0\nkeep -1\n"
    assert modparams.parse_counters(text) == {"ssr": 3, "decay": 0,
                                              "keep": -1}
    assert modparams.parse_counters(text + "junk\n") == \
        modparams.parse_counters(text)
    with pytest.raises(ValueError):
        modparams.parse_counters(text + "junk\n", strict=True)
    assert modparams.counter_delta({"ssr": 1, "keep": 2},
                                   {"ssr": 4, "keep": 2, "new": 1}) == \
        {"ssr": 3, "new": 1}
