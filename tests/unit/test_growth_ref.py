"""tests/unit/growth_ref.h is what tests/unit/growth_ref.py computes from
the RFCs' equations: the table test_growth.c checks the module's integer
CUBIC and HyStart++ against cannot drift from the equations."""
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_growth_table_is_generated():
    out = subprocess.run([sys.executable, str(HERE / "growth_ref.py")],
                         check=True, capture_output=True, text=True).stdout
    assert (HERE / "growth_ref.h").read_text() == out, \
        "regenerate: python3 tests/unit/growth_ref.py > tests/unit/growth_ref.h"


def test_reference_is_the_rfc():
    sys.path.insert(0, str(HERE))
    import growth_ref as g
    # RFC 9438: alpha_cubic = 3(1 - 0.7)/(1 + 0.7); K for W_max 100 after
    # a reduction to 70 is cbrt(30 / 0.4) s
    assert abs(g.ALPHA - 0.5294117647) < 1e-9
    assert abs(g.k_s(100, 70) - 75 ** (1 / 3)) < 1e-12
    assert g.w_cubic(100, 0) == 100
    # the epoch starts at cwnd_epoch, concave below W_max, past it later
    e = g.epoch(100, 70, 100, 60, 100)
    assert 70 < e[0] < e[20] < 100 < e[-1]
    # RFC 9406: RttThresh clamps lastRoundMinRTT / 8 into [4, 16] ms
    assert g.rtt_thresh(10000) == 4000 and g.rtt_thresh(80000) == 10000
    assert g.rtt_thresh(10 ** 6) == 16000
