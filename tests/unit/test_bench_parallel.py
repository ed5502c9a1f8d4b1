"""bench/lib/parallel.py: building cells a few at a time and running a
function on all of them at once (host, no VM)."""
import threading

import pytest

from bench.lib import parallel


def test_build_keeps_order_and_closes_the_built_on_failure():
    assert parallel.build(lambda x: x * 10, [3, 1, 2], None) == [30, 10, 20]
    closed = []

    def make(x):
        if x == 2:
            raise ValueError("topology %d failed" % x)
        return x

    with pytest.raises(ValueError, match="topology 2"):
        parallel.build(make, [1, 2, 3], closed.append)
    assert sorted(closed) == [1, 3]


def test_side_by_side_runs_all_at_once_in_order():
    barrier = threading.Barrier(3, timeout=10)  # only passes if concurrent

    def fn(i, x):
        barrier.wait()
        return (i, x)

    out, busy = parallel.side_by_side(fn, ["a", "b", "c"])
    assert out == [(0, "a"), (1, "b"), (2, "c")]
    assert 0 <= busy <= 1


def test_side_by_side_reraises_after_all_finished():
    done = []

    def fn(i, x):
        if i == 0:
            raise RuntimeError("bug in cell 0")
        done.append(x)

    with pytest.raises(RuntimeError, match="bug in cell 0"):
        parallel.side_by_side(fn, ["a", "b"])
    assert done == ["b"]


def test_background_returns_the_value_or_raises_the_error():
    gate = threading.Event()

    def slow(x):
        gate.wait(5)
        return x * 2
    b = parallel.Background(slow, 21)
    assert b.is_alive()                 # started at once, runs beside
    with pytest.raises(TimeoutError):
        b.result(0.01)
    gate.set()
    assert b.result(5) == 42

    def bad():
        raise OSError("tc failed")
    with pytest.raises(OSError, match="tc failed"):
        parallel.Background(bad).result(5)
