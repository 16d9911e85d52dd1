"""`summary.json`: per agent and prompt variant (and within each, per source family and per hybrid type), the means,
rates, Pass@k, pass^k and failure counts of a runs directory, each mean with its 95 % bootstrap interval over tasks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from rig.formats.grade import GRADER_VERSION
from rig.formats.records import RECORD_METRICS

__all__ = ["CI_METRICS", "RECORD_METRICS", "SUMMARY_FORMAT", "AgreementCount", "EpisodeProblem", "GroupSummary",
           "HybridSummary", "Intervals", "Metrics", "RevisionMix", "Summary", "agent_infra", "infra_warnings", "pct",
           "pooled", "row_name", "with_ci"]

SUMMARY_FORMAT = "sgr-rig/summary/2"
#: The means of a summary row that carry a `<metric>_ci95` interval (the Pass@k family has `passk_ci95` and
#: `pass_hat_k_ci95`).
CI_METRICS: tuple[str, ...] = ("item_f1", "row_f1", "poa", *(f"record_{m}" for m in RECORD_METRICS), "gold_state_reach",
                               "answer_state_reach", "state_anchored_rows", "unrecovered_drift", "site_found",
                               "site_found_step", "infra_rate")

Interval = tuple[float, float] | None


def _ci(what: str) -> Any:
    return Field(default=None, description=f"95 % bootstrap interval [lo, hi] of {what} over tasks (null: the metric is "
                                           "null, or fewer than two tasks hold it)")


class Metrics(BaseModel):
    """One summary row's numbers over a set of episodes: means over the scored episodes they apply to (null when none
    does: never 0), each with its 95 % bootstrap interval over tasks; Pass@k, Avg@k and pass^k over each task's trials;
    counts of statuses and failure labels. Groups, families and hybrid types all have these."""

    episodes: int
    scored: int
    tasks: int = Field(default=0, description="tasks with an episode in this row: the units the intervals resample")
    infra: int = Field(default=0, description="infra_error or incomplete episodes: not scored")
    infra_rate: float | None = Field(default=None, description="infra / episodes: the share of episodes the scores "
                                     "leave out (an agent that crashes its own browser is not scored)")
    infra_rate_ci95: Interval = _ci("infra_rate")
    statuses: dict[str, int] = Field(default_factory=dict)
    table_episodes: int = Field(default=0, description="scored episodes with a graded answer table: Item-F1, Row-F1 "
                                "and P.O.A. are means over these")
    item_f1: float | None = None
    item_f1_ci95: Interval = _ci("item_f1")
    row_f1: float | None = None
    row_f1_ci95: Interval = _ci("row_f1")
    poa: float | None = None
    poa_ci95: Interval = _ci("poa")
    record_episodes: int = Field(default=0, description="scored episodes of tasks that take records")
    record_soft_precision: float | None = None
    record_soft_precision_ci95: Interval = _ci("record_soft_precision")
    record_soft_recall: float | None = None
    record_soft_recall_ci95: Interval = _ci("record_soft_recall")
    record_soft_f1: float | None = None
    record_soft_f1_ci95: Interval = _ci("record_soft_f1")
    record_hard_precision: float | None = None
    record_hard_precision_ci95: Interval = _ci("record_hard_precision")
    record_hard_recall: float | None = None
    record_hard_recall_ci95: Interval = _ci("record_hard_recall")
    record_hard_f1: float | None = None
    record_hard_f1_ci95: Interval = _ci("record_hard_f1")
    gold_state_reach: float | None = Field(default=None, description="mean share of gold states reached")
    gold_state_reach_ci95: Interval = _ci("gold_state_reach")
    answer_state_reach: float | None = Field(default=None, description="share of episodes reaching an answer state")
    answer_state_reach_ci95: Interval = _ci("answer_state_reach")
    state_anchored_rows: float | None = Field(default=None, description="answer rows visible in an answer state / "
                                              "answer rows")
    state_anchored_rows_ci95: Interval = _ci("state_anchored_rows")
    unrecovered_drift: float | None = Field(default=None, description="share of episodes (of tasks with gold states) "
                                            "that left a reached gold state on a scope or criterion dimension before "
                                            "reading its evidence and never came back")
    unrecovered_drift_ci95: Interval = _ci("unrecovered_drift")
    passk: dict[str, float] = Field(default_factory=dict, description="pass@k and avg@k for k = 1 and k = trials (> 1)")
    passk_ci95: dict[str, Interval] = Field(default_factory=dict, description="95 % bootstrap interval over tasks of "
                                            "each passk entry")
    k: int | None = Field(default=None, description="the trials per task that Pass@k, Avg@k and pass^k take (the fewest "
                          "scored trials of any task; null: nothing scored)")
    pass_hat_k: float | None = Field(default=None, description="pass^k: the chance that all k trials of a task succeed "
                                     "(unbiased C(c,k)/C(n,k) per task), the mean over tasks")
    pass_hat_k_ci95: Interval = _ci("pass_hat_k")
    failures: dict[str, int] = Field(default_factory=dict, description="failure-category counts of the labelled "
                                     "episodes")
    hidden_start: int = Field(default=0, description="scored episodes of hidden-start (discovery and hybrid) tasks")
    site_found: float | None = Field(default=None, description="share of those episodes that reached the task's site")
    site_found_ci95: Interval = _ci("site_found")
    site_found_step: float | None = Field(default=None, description="mean first step on the site, over the episodes "
                                          "that found it")
    site_found_step_ci95: Interval = _ci("site_found_step")
    cost_usd: float | None = Field(default=None, description="total cost of the episodes as episode.json's `usage` "
                                   "records it (the attempt each episode.json stands for; null unless every episode "
                                   "records it: unknown, never 0)")
    tokens_in: int | None = Field(default=None, description="total input tokens (null unless every episode records them)")
    tokens_out: int | None = Field(default=None, description="total output tokens (null unless every episode records "
                                   "them)")
    judge_cost_usd: float | None = Field(default=None, description="total cost of the LLM judge's calls on these "
                                         "episodes (grade.json's hybrid.judge.usage), kept apart from cost_usd (null: "
                                         "no judge ran, or a call's cost is unknown)")


class HybridSummary(Metrics):
    """The hybrid tasks of one type (HybridDeepResearch's per-type Pass@k and Avg@k) within one group."""

    passed: int


class RevisionMix(BaseModel):
    """A task whose episodes in one summary row stand for more than one revision of it."""

    task: str
    revisions: dict[str, int] = Field(description="revision -> episodes")


class GroupSummary(Metrics):
    """One agent (and the model it drove) on one prompt variant."""

    agent: str = Field(description="the agent's name, and in parentheses the model it drove, if any")
    model: str | None = Field(default=None, description="the model the agent drove (null: none, or not recorded)")
    variant: str | None
    ungraded: int = Field(default=0, description="episodes the grader could not grade (see the summary's problems)")
    incomplete_evidence: int = Field(default=0, description="episodes missing their trajectory or archive (never passed)")
    families: dict[str, Metrics] = Field(default_factory=dict, description="per source family")
    hybrid: dict[str, HybridSummary] = Field(default_factory=dict, description="per hybrid type (search_to_sql, "
                                             "sql_to_search, parallel)")
    versions: dict[str, str | None] = Field(default_factory=dict, description="software -> the version the episodes "
                                            "ran with (several, comma-separated, when they differ; null: not recorded)")
    mixed_revisions: list[RevisionMix] = Field(default_factory=list, description="tasks graded here at more than one "
                                               "revision (only with `rig grade --mix-revisions`)")

    @property
    def name(self) -> str:
        """The row's name: the agent (with its model), then the variant (`reference / constraint`)."""
        return row_name(self.agent, self.variant)


class AgreementCount(BaseModel):
    """Automatic labels against the injected faults of one category."""

    episodes: int
    agree: int
    labels: dict[str, int] = Field(description="automatic label (or `none`) -> count")


ProblemKind = Literal["ungraded", "incomplete_evidence", "not_an_episode"]


class EpisodeProblem(BaseModel):
    """An episode (or a directory that should be one) whose numbers are missing or not to be trusted, and why."""

    episode: str = Field(description="the directory")
    agent: str | None = None
    kind: ProblemKind = Field(description="ungraded: the grader failed on it; incomplete_evidence: its trajectory or "
                              "archive is missing or empty; not_an_episode: a trial directory without episode.json")
    reason: str


class Intervals(BaseModel):
    """How the summary's intervals were drawn (docs/grading.md)."""

    method: Literal["percentile bootstrap over tasks"] = "percentile bootstrap over tasks"
    level: float
    resamples: int
    seed: int


class Summary(BaseModel):
    """`summary.json`."""

    format: Literal["sgr-rig/summary/1", "sgr-rig/summary/2"] = SUMMARY_FORMAT
    grader_version: str = GRADER_VERSION
    runs_dir: str
    episodes: int
    scored: int
    infra: int
    infra_rate: float | None = Field(default=None, description="infra / episodes over the whole run")
    ungraded: int = Field(default=0, description="episodes (and trial directories) the grader could not grade")
    incomplete_evidence: int = Field(default=0, description="episodes missing their trajectory or archive")
    problems: list[EpisodeProblem] = Field(default_factory=list, description="every ungraded episode, episode with "
                                           "incomplete evidence and trial directory without episode.json, with the reason")
    intervals: Intervals | None = Field(default=None, description="how the intervals were drawn (null: format 1)")
    groups: list[GroupSummary]
    label_agreement: dict[str, float] | None = Field(
        default=None, description="share of perturbed episodes (status ok) whose automatic label equals the injected fault")
    label_agreement_detail: dict[str, AgreementCount] | None = None

    @property
    def outdated(self) -> bool:
        """Whether this summary.json is of an older format, lacking intervals and per-family rows (regrade)."""
        return self.format != SUMMARY_FORMAT


def pooled(groups: Iterable[Metrics], attr: str) -> float | None:
    """An answer-table metric (`item_f1`, `row_f1`, `poa`) over several groups: their means weighted by the
    episodes each was taken over."""
    vals = [(v, g.table_episodes) for g in groups if (v := getattr(g, attr)) is not None and g.table_episodes]
    n = sum(w for _, w in vals)
    return sum(v * w for v, w in vals) / n if n else None


def row_name(agent: str, variant: str | None) -> str:
    """A summary row's name from its agent and variant (`reference / constraint`; the agent alone without a variant)."""
    return f"{agent} / {variant}" if variant else agent


def with_ci(x: float | None, ci: tuple[float, float] | None) -> str:
    """A share and its interval as percentages with one decimal, `61.7 [48.2, 74.0]` (`[n/a]`: no interval)."""
    if x is None:
        return "–"
    return f"{100 * x:.1f} " + (f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci is not None else "[n/a]")


def pct(x: float | None) -> str:
    """A share as a percentage with two decimals (a dash for null), as summary.md writes it."""
    return "–" if x is None else f"{100 * x:.2f}"


def agent_infra(summary: Summary) -> dict[str, tuple[int, int]]:
    """Per agent over its variants: (infrastructure failures, episodes)."""
    out: dict[str, tuple[int, int]] = {}
    for g in summary.groups:
        infra, episodes = out.get(g.agent, (0, 0))
        out[g.agent] = (infra + g.infra, episodes + g.episodes)
    return out


def infra_warnings(summary: Summary) -> list[str]:
    """One sentence per agent whose episodes include infrastructure failures: its scores leave those out."""
    return [f"{agent}: {infra} of {n} episodes were infrastructure failures ({pct(infra / n)} %), not scored; "
            "its scores are over the rest" for agent, (infra, n) in agent_infra(summary).items() if infra]
