"""Run order of the policies within a repetition.

Rotating the list by one per repetition makes every policy start a
repetition once, but each policy still always follows the same neighbour
(auto follows pace in every repetition), so a carry-over from one policy
to the next (a warm queue, a cached route metric, a CPU still busy) would
always land on the same policy.

A Williams design (E. J. Williams, 1949) balances first-order carry-over:
over its sequences every policy follows every other policy equally often.
For n items it has n sequences when n is even and 2n when n is odd (the n
sequences and their reverses). Repetition r uses sequence r mod that
length, so a full balance needs that many repetitions; fewer still vary
the neighbours.
"""


def williams(n):
    """The sequences of a Williams design for n items (lists of 0..n-1)."""
    if n < 1:
        raise ValueError("williams: need at least one item")
    # first row 0, 1, n-1, 2, n-2, 3, ...; row i adds i mod n
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2:
        rows += [list(reversed(r)) for r in rows]
    return rows


def for_rep(items, rep):
    """items in the order of repetition rep (0-based) of a Williams design."""
    items = list(items)
    if not items:
        return []
    seqs = williams(len(items))
    return [items[i] for i in seqs[rep % len(seqs)]]


def carry_over(sequences):
    """{(previous, next): count} over adjacent pairs inside each sequence."""
    pairs = {}
    for seq in sequences:
        for a, b in zip(seq, seq[1:]):
            pairs[(a, b)] = pairs.get((a, b), 0) + 1
    return pairs
