"""Summary statistics for repeated benchmark runs (stdlib only).

Every function accepts an iterable of numbers; None and NaN are ignored
(a run that failed to produce a value is not a zero).  An empty input gives
None for every statistic instead of raising, so a table cell can say "n/a".
"""
import collections
import itertools
import math

# Two-sided 95% Student t quantiles for df = 1..30; above that 1.96 is used.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
        2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
        2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
        2.048, 2.045, 2.042]


def clean(values):
    out = []
    for v in values:
        if v is None:
            continue
        v = float(v)
        if math.isnan(v):
            continue
        out.append(v)
    return out


def median(values):
    v = sorted(clean(values))
    n = len(v)
    if n == 0:
        return None
    mid = n // 2
    return v[mid] if n % 2 else (v[mid - 1] + v[mid]) / 2.0


def mean(values):
    v = clean(values)
    return sum(v) / len(v) if v else None


def sd(values):
    """Sample standard deviation (n-1); 0.0 for a single value."""
    v = clean(values)
    if not v:
        return None
    if len(v) == 1:
        return 0.0
    m = sum(v) / len(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))


def t95(df):
    if df < 1:
        return None
    return _T95[df - 1] if df <= len(_T95) else 1.96


def ci95(values):
    """Half-width of the 95% confidence interval of the mean (Student t).
    None with fewer than two values: one sample has no interval."""
    v = clean(values)
    if len(v) < 2:
        return None
    return t95(len(v) - 1) * sd(v) / math.sqrt(len(v))


def percentile(values, p):
    """Linear-interpolated percentile, p in [0, 100]."""
    if not 0 <= p <= 100:
        raise ValueError("percentile must be in [0, 100], got %r" % (p,))
    v = sorted(clean(values))
    if not v:
        return None
    k = (len(v) - 1) * p / 100.0
    lo = math.floor(k)
    hi = math.ceil(k)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def summarize(values):
    v = clean(values)
    return {
        "n": len(v),
        "median": median(v),
        "min": min(v) if v else None,
        "max": max(v) if v else None,
        "mean": mean(v),
        "sd": sd(v),
        "ci95": ci95(v),
    }


# exact enumeration up to this many ways to split the pooled values
# (5 + 5 repetitions: 252; 10 + 10: 184756); above it, the normal
# approximation
_EXACT_SPLITS = 200000


def _u_less(a, b):
    """Pairs (x in A, y in B) with x < y, a tie counting one half."""
    return sum(1.0 if x < y else 0.5 if x == y else 0.0
               for x in a for y in b)


def mann_whitney_less(a, b):
    """One-sided Mann-Whitney test that the values of A tend to be
    smaller than those of B: (U, p), U the pairs (x in A, y in B) with
    x < y (ties count one half) out of len(A) x len(B), p the chance of
    a U at least that large if A and B came from one distribution.
    Exact, by enumerating every split of the pooled values, when there
    are at most _EXACT_SPLITS of them; else the normal approximation
    with the tie correction.  (None, None) when either side is empty."""
    a, b = clean(a), clean(b)
    if not a or not b:
        return None, None
    u = _u_less(a, b)
    n, m = len(a), len(b)
    pooled = a + b
    if math.comb(n + m, n) <= _EXACT_SPLITS:
        idx = range(n + m)
        hits = total = 0
        for pick in itertools.combinations(idx, n):
            chosen = set(pick)
            xa = [pooled[i] for i in pick]
            xb = [pooled[i] for i in idx if i not in chosen]
            total += 1
            hits += _u_less(xa, xb) >= u - 1e-9
        return u, hits / total
    # normal approximation, with the tie correction
    ties = collections.Counter(pooled)
    nn = n + m
    var = n * m / 12.0 * ((nn + 1) - sum(t ** 3 - t for t in ties.values())
                          / (nn * (nn - 1)))
    if var <= 0:
        return u, 1.0
    z = (u - n * m / 2.0 - 0.5) / math.sqrt(var)
    return u, 0.5 * math.erfc(z / math.sqrt(2))
