"""`summary.json`: per agent and prompt variant, the means, rates, Pass@k and failure counts of a runs directory."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rig.formats.grade import GRADER_VERSION

RECORD_METRICS = ("soft_precision", "soft_recall", "soft_f1", "hard_precision", "hard_recall", "hard_f1")


class Metrics(BaseModel):
    """Means over scored episodes (null when none was scored); record metrics over scored episodes of record tasks."""

    episodes: int
    scored: int
    table_episodes: int = Field(default=0, description="scored episodes with a graded answer table: Item-F1, Row-F1 "
                                "and P.O.A. are means over these")
    item_f1: float | None = None
    row_f1: float | None = None
    poa: float | None = None
    record_episodes: int = Field(default=0, description="scored episodes of tasks that take records")
    record_soft_precision: float | None = None
    record_soft_recall: float | None = None
    record_soft_f1: float | None = None
    record_hard_precision: float | None = None
    record_hard_recall: float | None = None
    record_hard_f1: float | None = None


class HybridSummary(BaseModel):
    """One agent and variant on the hybrid tasks of one type (HybridDeepResearch's per-type Pass@k and Avg@k)."""

    episodes: int
    scored: int
    passed: int
    passk: dict[str, float] = Field(default_factory=dict, description="pass@k and avg@k for k = 1 and k = trials (> 1)")


class GroupSummary(Metrics):
    """One agent on one prompt variant."""

    agent: str = Field(description="the agent's name, and in parentheses the model it drove, if any")
    variant: str | None
    infra: int = Field(description="infra_error or incomplete episodes: not scored")
    infra_rate: float | None = Field(default=None, description="infra / episodes: the share of this agent's episodes "
                                     "its scores leave out (an agent that crashes its own browser is not scored)")
    ungraded: int = Field(default=0, description="episodes the grader could not grade (see the summary's problems)")
    incomplete_evidence: int = Field(default=0, description="episodes missing their trajectory or archive (never passed)")
    statuses: dict[str, int]
    gold_state_reach: float | None = Field(default=None, description="mean share of gold states reached")
    answer_state_reach: float | None = Field(default=None, description="share of episodes reaching an answer state")
    state_anchored_rows: float | None = Field(default=None, description="answer rows visible in an answer state / answer rows")
    passk: dict[str, float] = Field(default_factory=dict, description="pass@k and avg@k for k = 1 and k = trials (> 1)")
    failures: dict[str, int] = Field(description="failure-category counts of the labelled episodes")
    families: dict[str, Metrics] = Field(default_factory=dict, description="per source family")
    hybrid: dict[str, HybridSummary] = Field(default_factory=dict, description="per hybrid type (search_to_sql, "
                                             "sql_to_search, parallel): episodes, passes, Pass@k and Avg@k")
    hidden_start: int = Field(default=0, description="scored episodes of hidden-start (discovery and hybrid) tasks")
    site_found: float | None = Field(default=None, description="share of those episodes that reached the task's site")
    site_found_step: float | None = Field(default=None, description="mean first step on the site, over the episodes "
                                          "that found it")


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


class Summary(BaseModel):
    """`summary.json`."""

    format: Literal["sgr-rig/summary/1"] = "sgr-rig/summary/1"
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
    groups: list[GroupSummary]
    label_agreement: dict[str, float] | None = Field(
        default=None, description="share of perturbed episodes (status ok) whose automatic label equals the injected fault")
    label_agreement_detail: dict[str, AgreementCount] | None = None
