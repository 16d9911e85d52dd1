"""Pass@k and Avg@k over repeated trials (HybridDeepResearch §6.1; unbiased estimator of Chen et al. 2021), and
pass^k, the chance that all k trials succeed (τ-bench; unbiased C(c,k)/C(n,k))."""

from __future__ import annotations

from collections.abc import Sequence
from math import comb


def _check(n: int, c: int, k: int) -> None:
    if n < 1:
        raise ValueError(f"n must be at least 1 trial, got {n}")
    if not 0 <= c <= n:
        raise ValueError(f"c must be between 0 and n={n} successes, got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and n={n} (cannot estimate Pass@{k} from {n} trials), got {k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k trials drawn from n (c of them successes) succeeds: 1 - C(n-c,k)/C(n,k)."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def avg_at_k(n: int, c: int, k: int) -> float:
    """Expected success rate of k trials drawn from n with c successes: c/n (unbiased for any k <= n)."""
    _check(n, c, k)
    return c / n


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all k trials drawn from n (c of them successes) succeed: C(c,k)/C(n,k)."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def over_tasks(outcomes: Sequence[Sequence[bool]], k: int) -> dict[str, float]:
    """Pass@k and Avg@k averaged over tasks, each given as its list of trial outcomes."""
    if not outcomes:
        raise ValueError("no tasks to average over")
    counts = [(len(trials), sum(map(bool, trials))) for trials in outcomes]
    return {
        f"pass@{k}": sum(pass_at_k(n, c, k) for n, c in counts) / len(counts),
        f"avg@{k}": sum(avg_at_k(n, c, k) for n, c in counts) / len(counts),
    }
