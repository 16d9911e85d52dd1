"""Uncertainty over tasks, as pure functions of numbers: the percentile bootstrap interval of a ratio of sums with
tasks resampled as whole clusters (a task's trials stay together), and the exact two-sided sign test of paired
differences. Deterministic: the bootstrap draws from a generator seeded with `SEED` (docs/grading.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

import numpy as np

#: Bootstrap resamples per interval.
RESAMPLES = 2000
#: The seed of every interval's generator (numpy's PCG64 `default_rng`): the same files give the same intervals.
SEED = 0
#: Coverage of the intervals: the 2.5th and 97.5th percentiles of the resampled values.
LEVEL = 0.95
#: Differences at most this far from zero are ties (values equal up to floating-point noise).
TIE = 1e-12


def bootstrap_ci(clusters: Sequence[tuple[float, float]], *, resamples: int = RESAMPLES, seed: int = SEED,
                 level: float = LEVEL) -> tuple[float, float] | None:
    """The percentile bootstrap interval of sum(numerators) / sum(denominators) over clusters (tasks), each given as
    its (numerator, denominator) and resampled with replacement as a whole. Clusters with a zero denominator hold no
    value and are left out; with fewer than two left there is no spread to resample: None."""
    pool = [(n, d) for n, d in clusters if d > 0]
    if len(pool) < 2:
        return None
    nums = np.array([n for n, _ in pool], dtype=float)
    dens = np.array([d for _, d in pool], dtype=float)
    draws = np.random.default_rng(seed).integers(0, len(pool), size=(resamples, len(pool)))
    values = nums[draws].sum(axis=1) / dens[draws].sum(axis=1)
    tail = (1.0 - level) / 2
    lo, hi = np.quantile(values, [tail, 1.0 - tail])  # linear interpolation between order statistics (numpy's default)
    return round(float(lo), 12), round(float(hi), 12)


@dataclass(frozen=True)
class SignTest:
    """The exact two-sided sign test of paired differences: how many are above, below and at zero, and the p-value."""

    p_value: float
    positive: int
    negative: int
    ties: int


def sign_test(differences: Sequence[float]) -> SignTest:
    """Exact two-sided sign test: under no difference each non-tied pair is positive with probability 1/2, so the
    p-value is twice the binomial tail of the rarer sign (at most 1). Ties are dropped; with no pair left it is 1."""
    pos = sum(d > TIE for d in differences)
    neg = sum(d < -TIE for d in differences)
    n = pos + neg
    tail = sum(comb(n, i) for i in range(min(pos, neg) + 1)) / 2 ** n if n else 0.5
    return SignTest(p_value=min(1.0, 2 * tail), positive=pos, negative=neg, ties=len(differences) - n)
