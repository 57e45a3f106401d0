"""The statistics of a report: bootstrap intervals, pass@k, best-of-k and the paired test of a comparison.

The 95% interval of a mean is the percentile bootstrap: the 2.5% and 97.5%
quantiles of the mean of a resample drawn with replacement, where the q
quantile is the smallest resample mean m with P(mean <= m) >= q. Up to
:data:`EXACT_UP_TO` values, every resample is weighed exactly (each multiset
with its multinomial probability, in integers), so small groups, where it
matters most, get the exact interval with no randomness. Larger groups draw
:data:`RESAMPLES` resamples from a fixed seed: the same input gives the same
interval on every run.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations_with_replacement

import numpy as np

EXACT_UP_TO = 8  # C(15, 8) = 6435 multisets
RESAMPLES = 10_000
SEED = 0
CONFIDENCE = Fraction(95, 100)


def bootstrap_ci(values: list[float], confidence: Fraction = CONFIDENCE) -> tuple[float, float] | None:
    """(low, high) percentile-bootstrap interval of the mean of ``values``; None when there are none."""
    n = len(values)
    if n == 0:
        return None
    tail = (1 - Fraction(confidence)) / 2
    if n <= EXACT_UP_TO:
        means, weights = _exact_resamples(values)
    else:
        means, weights = _drawn_resamples(values)
    order = sorted(range(len(means)), key=means.__getitem__)
    total = sum(weights)
    return _quantile(means, weights, order, total, tail), _quantile(means, weights, order, total, 1 - tail)


def _exact_resamples(values: list[float]) -> tuple[list[float], list[int]]:
    """Every multiset of n draws from n values, with its count of orderings (multinomial coefficient)."""
    n = len(values)
    means, weights = [], []
    for pick in combinations_with_replacement(range(n), n):
        counts: dict[int, int] = {}
        for i in pick:
            counts[i] = counts.get(i, 0) + 1
        orderings = math.factorial(n)
        for c in counts.values():
            orderings //= math.factorial(c)
        means.append(math.fsum(values[i] for i in pick) / n)
        weights.append(orderings)
    return means, weights


def _drawn_resamples(values: list[float]) -> tuple[list[float], list[int]]:
    x = np.asarray(values, dtype=float)
    rng = np.random.default_rng(SEED)
    means = []
    for start in range(0, RESAMPLES, 1000):  # bounded memory for large groups
        rows = min(1000, RESAMPLES - start)
        means.extend(x[rng.integers(0, len(x), size=(rows, len(x)))].mean(axis=1).tolist())
    return means, [1] * len(means)


def _quantile(means: list[float], weights: list[int], order: list[int], total: int, q: Fraction) -> float:
    """Smallest mean whose cumulative weight reaches ``q`` of ``total`` (exact, in integers)."""
    cumulative = 0
    for i in order:
        cumulative += weights[i]
        if cumulative * q.denominator >= q.numerator * total:
            return means[i]
    return means[order[-1]]


def k_values(fewest: int) -> list[int]:
    """The k of pass@k and best-of-k: 1, then the powers of two and multiples of five up to ``fewest``
    (the fewest trials any task has), as Harbor's job summary does."""
    return sorted({1, *(2**e for e in range(1, 32) if 2**e <= fewest), *range(5, fewest + 1, 5)})


def pass_at_k(successes_by_task: dict[str, list[bool]]) -> dict[int, float]:
    """Unbiased pass@k (1 - C(n-c, k) / C(n, k), averaged over tasks) for each of :func:`k_values`."""
    if not successes_by_task:
        return {}
    fewest = min(len(s) for s in successes_by_task.values())
    out = {}
    for k in k_values(fewest):
        per_task = []
        for s in successes_by_task.values():
            n, c = len(s), sum(s)
            per_task.append(1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k))
        out[k] = math.fsum(per_task) / len(per_task)
    return out


def expected_best_of_k(rewards: list[float], k: int) -> float:
    """The expected best reward of ``k`` of ``rewards`` drawn without replacement: an unbiased estimate, from n
    trials, of the best of k fresh tries (pass@k's analogue for a continuous reward).

    With the rewards sorted ascending, r_(1) <= ... <= r_(n), the i-th is the best of a k-subset in
    C(i-1, k-1) of the C(n, k) subsets, so the mean over all subsets is sum_i r_(i) C(i-1, k-1) / C(n, k)
    (k = 1: the mean; k = n: the maximum). The weights are ratios of exact integers, rounded once.
    """
    n = len(rewards)
    if not 1 <= k <= n:
        raise ValueError(f"best of k needs 1 <= k <= n, got k={k} with n={n}")
    total = math.comb(n, k)
    ordered = sorted(rewards)
    return math.fsum(r * (math.comb(i, k - 1) / total) for i, r in enumerate(ordered) if i >= k - 1)


def best_of_k(rewards_by_task: dict[str, list[float]]) -> dict[int, float]:
    """:func:`expected_best_of_k` averaged over tasks, for each of :func:`k_values`."""
    if not rewards_by_task:
        return {}
    fewest = min(len(r) for r in rewards_by_task.values())
    return {
        k: math.fsum(expected_best_of_k(r, k) for r in rewards_by_task.values()) / len(rewards_by_task)
        for k in k_values(fewest)
    }


def paired_test(differences: list[float]) -> float | None:
    """Two-sided p-value of the Wilcoxon signed-rank test that the paired differences centre on zero.

    None with no pairs; 1.0 when every difference is zero (nothing to tell apart).
    """
    if not differences:
        return None
    if all(d == 0 for d in differences):
        return 1.0
    from scipy.stats import wilcoxon

    try:
        p = float(wilcoxon(differences, zero_method="wilcox").pvalue)
    except ValueError:  # too few non-zero differences for the test
        return None
    return p if math.isfinite(p) else None
