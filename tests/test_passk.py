"""Pass@k (unbiased estimator, 1 - C(n-c,k)/C(n,k)), Avg@k and pass^k (C(c,k)/C(n,k)), with their edge cases."""

from itertools import combinations
from math import comb

import pytest

from rig.grading.passk import avg_at_k, over_tasks, pass_at_k, pass_hat_k


def brute_force(n: int, c: int, k: int) -> float:
    """Share of all k-subsets of n trials (c successes) holding at least one success."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(combinations(outcomes, k))
    return sum(any(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n,c,k", [(8, 3, 1), (8, 3, 2), (8, 3, 5), (8, 3, 6), (5, 1, 5), (10, 4, 3)])
def test_pass_at_k_matches_brute_force(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(brute_force(n, c, k))


def test_pass_at_k_worked_value():
    # n=8, c=2, k=4: 1 - C(6,4)/C(8,4) = 1 - 15/70 = 11/14
    assert pass_at_k(8, 2, 4) == pytest.approx(11 / 14)


def test_pass_at_1_is_the_success_rate():
    assert pass_at_k(8, 3, 1) == pytest.approx(3 / 8)


@pytest.mark.parametrize("n,k", [(1, 1), (8, 1), (8, 8)])
def test_no_success_is_zero_and_all_successes_is_one(n, k):
    assert pass_at_k(n, 0, k) == 0.0
    assert pass_at_k(n, n, k) == 1.0


def test_fewer_failures_than_k_is_certain_success():
    assert pass_at_k(8, 5, 4) == 1.0  # only 3 failures: every draw of 4 holds a success


def test_large_n_is_exact():
    assert pass_at_k(1000, 1, 10) == pytest.approx(1 - comb(999, 10) / comb(1000, 10))
    assert pass_at_k(1000, 1, 10) == pytest.approx(10 / 1000)


def test_avg_at_k():
    assert avg_at_k(8, 3, 8) == 3 / 8
    assert avg_at_k(8, 0, 4) == 0.0
    assert avg_at_k(8, 8, 4) == 1.0


@pytest.mark.parametrize(
    "n,c,k,message",
    [
        (4, 1, 5, "k must be between 1 and n=4 (cannot estimate Pass@5 from 4 trials), got 5"),
        (4, 1, 0, "k must be between 1 and n=4 (cannot estimate Pass@0 from 4 trials), got 0"),
        (4, 5, 1, "c must be between 0 and n=4 successes, got 5"),
        (4, -1, 1, "c must be between 0 and n=4 successes, got -1"),
        (0, 0, 1, "n must be at least 1 trial, got 0"),
    ],
)
def test_invalid_arguments(n, c, k, message):
    for f in (pass_at_k, avg_at_k, pass_hat_k):
        with pytest.raises(ValueError) as info:
            f(n, c, k)
        assert str(info.value) == message


def test_over_tasks_averages_each_task_equally():
    # task 1: 2 of 4 -> pass@2 = 1 - C(2,2)/C(4,2) = 5/6, avg 1/2; task 2: 0 of 4 -> 0, 0
    got = over_tasks([[True, False, True, False], [False] * 4], 2)
    assert got == {"pass@2": pytest.approx(5 / 12), "avg@2": pytest.approx(1 / 4)}
    with pytest.raises(ValueError, match="no tasks"):
        over_tasks([], 1)


def brute_force_all(n: int, c: int, k: int) -> float:
    """Share of all k-subsets of n trials (c successes) that are all successes."""
    subsets = list(combinations([True] * c + [False] * (n - c), k))
    return sum(all(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n,c,k", [(8, 3, 1), (8, 3, 2), (8, 3, 3), (8, 3, 4), (5, 5, 5), (5, 4, 5), (10, 7, 3)])
def test_pass_hat_k_matches_brute_force(n, c, k):
    assert pass_hat_k(n, c, k) == pytest.approx(brute_force_all(n, c, k))


def test_pass_hat_k_worked_values():
    # n=4, c=3, k=2: C(3,2)/C(4,2) = 3/6; k = n: 1 only when every trial succeeded; k = 1: the success rate
    assert pass_hat_k(4, 3, 2) == pytest.approx(0.5)
    assert pass_hat_k(4, 3, 4) == 0.0 and pass_hat_k(4, 4, 4) == 1.0
    assert pass_hat_k(8, 3, 1) == pytest.approx(3 / 8) == pytest.approx(pass_at_k(8, 3, 1))
    assert pass_hat_k(4, 1, 2) == 0.0  # fewer successes than k
