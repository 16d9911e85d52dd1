"""The leaderboard file (`rig export RUNS_DIR --leaderboard OUT.json|OUT.csv`): one row per summary row (agent, model,
variant) with its headline metrics, their 95 % intervals over tasks, cost and the versions it ran with. The CSV has the
same columns, each `<metric>_ci95` split into `<metric>_ci95_lo` and `<metric>_ci95_hi`, nulls as empty cells."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from rig.formats.summary import Intervals

LEADERBOARD_FORMAT = "sgr-rig/leaderboard/1"
Interval = tuple[float, float] | None


def _ci(what: str) -> Any:
    return Field(default=None, description=f"95 % bootstrap interval [lo, hi] of {what} over tasks (null: none)")


class LeaderboardRow(BaseModel):
    """One agent (with its model) on one prompt variant. Shares are fractions in [0, 1]; null: does not apply or is
    not known (never 0)."""

    agent: str = Field(description="the agent as the summary names it (with the model in parentheses, if any)")
    model: str | None = Field(description="the model the agent drove")
    variant: str | None = Field(description="the prompt variant (constraint or goal)")
    tasks: int
    episodes: int
    scored: int
    infra: int = Field(description="episodes not scored: infrastructure failures")
    infra_rate: float | None
    item_f1: float | None
    item_f1_ci95: Interval = _ci("item_f1")
    row_f1: float | None
    row_f1_ci95: Interval = _ci("row_f1")
    poa: float | None
    poa_ci95: Interval = _ci("poa")
    pass_at_1: float | None = Field(description="Pass@1: the share of passed episodes, mean over tasks")
    pass_at_1_ci95: Interval = _ci("pass_at_1")
    k: int | None = Field(description="the trials per task Pass@k, Avg@k and pass^k take")
    pass_at_k: float | None = Field(description="Pass@k (unbiased), mean over tasks (null: one trial per task)")
    pass_at_k_ci95: Interval = _ci("pass_at_k")
    avg_at_k: float | None = Field(description="Avg@k, mean over tasks (null: one trial per task)")
    avg_at_k_ci95: Interval = _ci("avg_at_k")
    pass_hat_k: float | None = Field(description="pass^k: all k trials of a task succeed, mean over tasks")
    pass_hat_k_ci95: Interval = _ci("pass_hat_k")
    record_soft_f1: float | None
    record_soft_f1_ci95: Interval = _ci("record_soft_f1")
    record_hard_f1: float | None
    record_hard_f1_ci95: Interval = _ci("record_hard_f1")
    gold_state_reach: float | None
    gold_state_reach_ci95: Interval = _ci("gold_state_reach")
    answer_state_reach: float | None
    answer_state_reach_ci95: Interval = _ci("answer_state_reach")
    state_anchored_rows: float | None
    state_anchored_rows_ci95: Interval = _ci("state_anchored_rows")
    cost_usd: float | None = Field(description="total cost in US dollars (null unless every episode records it)")
    cost_usd_per_episode: float | None = Field(description="cost_usd / episodes")
    tokens_in: int | None
    tokens_out: int | None
    rig_version: str | None = Field(description="the versions the episodes ran with (episode.json; several: "
                                    "comma-separated)")
    grader_version: str
    python_version: str | None
    playwright_version: str | None
    chromium_version: str | None
    browser_use_version: str | None


class Leaderboard(BaseModel):
    """`OUT.json` of `rig export --leaderboard`."""

    format: Literal["sgr-rig/leaderboard/1"] = LEADERBOARD_FORMAT
    runs_dir: str
    intervals: Intervals | None = Field(description="how the intervals were drawn")
    rows: list[LeaderboardRow]
