"""Host tests of bench/lib/order.py: the Williams design balances which
policy follows which."""

import pytest

from bench.lib import order


@pytest.mark.parametrize("n", range(1, 12))
def test_every_sequence_is_a_permutation(n):
    seqs = order.williams(n)
    assert len(seqs) == (n if n % 2 == 0 else 2 * n)
    for s in seqs:
        assert sorted(s) == list(range(n))


@pytest.mark.parametrize("n", range(2, 12))
def test_every_policy_follows_every_other_equally_often(n):
    pairs = order.carry_over(order.williams(n))
    want = 1 if n % 2 == 0 else 2
    assert set(pairs) == {(a, b) for a in range(n) for b in range(n)
                          if a != b}
    assert set(pairs.values()) == {want}


@pytest.mark.parametrize("n", range(2, 12))
def test_every_policy_starts_equally_often(n):
    seqs = order.williams(n)
    firsts = [s[0] for s in seqs]
    assert sorted(set(firsts)) == list(range(n))
    assert len(set(firsts.count(i) for i in range(n))) == 1


def test_rotation_did_not_balance_what_williams_does():
    # the old order: the list rotated by one per repetition
    pols = list(range(9))
    rot = [pols[k:] + pols[:k] for k in range(9)]
    assert max(order.carry_over(rot).values()) == 8   # 8 → 0 ... always
    assert len(order.carry_over(rot)) == 9


def test_for_rep_names_and_wraps():
    names = ["ssr", "decay", "keep", "pace", "auto"]
    seqs = [order.for_rep(names, r) for r in range(10)]
    assert seqs[0] == ["ssr", "decay", "auto", "keep", "pace"]
    assert order.for_rep(names, 10) == seqs[0]
    assert seqs[5] == list(reversed(seqs[0]))
    assert order.for_rep([], 3) == []
    with pytest.raises(ValueError):
        order.williams(0)
