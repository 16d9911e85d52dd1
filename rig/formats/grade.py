"""`grade.json`: everything the grader concluded about one episode, with the verdict models it is made of
(table scores, gold-state reach, row provenance, drift, divergence, record checks, citation checks)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from rig import __version__
from rig.formats.episode import Status
from rig.formats.records import RECORD_METRICS, RecordVerdict, RollupScores
from rig.formats.task import FailureKind, HybridType, StateConstraint
from rig.formats.usage import Usage

GRADER_VERSION = "1.2.0"
#: The current shape of grade.json. Format 1 (grader versions before 1.2.0) lacks the per-step marks, the highlight
#: spans, the extra rows' cells and the task revision: `rig grade` regrades such files (their grader version is
#: older), and the report asks for that instead of showing less.
GRADE_FORMAT = "sgr-rig/grade/2"
#: Statuses that are never scored (not even as zero): the rig failed, or the episode never finished.
UNSCORED: tuple[str, ...] = ("infra_error", "incomplete")


Verdict = Literal["correct", "wrong", "missing"]


Reason = Literal["not_in_gold", "duplicate_key", "missing_key"]


class CellVerdict(BaseModel):
    """One gold field slot: `missing` when the aligned prediction has no such cell or no aligned row exists."""

    column: str
    gold: str
    pred: str | None
    verdict: Verdict


class RowVerdict(BaseModel):
    """One gold row and the predicted row aligned to it (if any)."""

    gold_index: int
    key: list[str]
    pred_index: int | None
    cells: list[CellVerdict]


class ExtraRow(BaseModel):
    """A predicted row aligned to no gold row."""

    pred_index: int
    key: list[str | None]
    reason: Reason
    cells: list[str | None] = Field(default_factory=list, description="the row's cells under the gold columns, as "
                                    "written (null: the row has no such column or cell)")


class TableScore(BaseModel):
    """Item-F1, Row-F1 and P.O.A. with the counts behind them and per-cell verdicts for reports."""

    item_f1: float
    row_f1: float
    poa: float
    c_item: int
    n_gold: int
    n_pred: int
    c_row: int
    rows_gold: int
    rows_pred: int
    shared_keys: int
    missing_columns: list[str]
    gold_rows: list[RowVerdict]
    extra_rows: list[ExtraRow]


class Violation(BaseModel):
    """A constraint of a gold state that does not hold at some step."""

    state: str
    key: str
    op: str
    expected: Any
    actual: Any = None
    tag: Literal["scope", "criterion", "view"]
    dependent: bool = Field(default=False, description="the constraint carries the task's dependency (declared, else inferred)")
    read_earlier: bool = Field(default=False, description="the wrong value shows with the gold one among an earlier "
                                                          "gold state's candidates: the dependency took the wrong row")

    def describe(self) -> str:
        """`dim.origin=LGA violates gold state `jfk_march` (scope)`."""
        shown = "(unset)" if self.actual in (None, "", []) else _show(self.actual)
        kind = self.tag + (", dependent" if self.dependent else "") + (", a wrong earlier reading" if self.read_earlier else "")
        return f"{self.key}={shown} violates gold state `{self.state}` ({kind}; expected {self.op} {_show(self.expected)})"


class StateReach(BaseModel):
    """Whether and where one gold state was reached (WebCanvas-style key-state completion), with the state's
    definition as the task gave it."""

    name: str
    description: str = ""
    constraints: list[StateConstraint] = Field(default_factory=list, description="the gold state's constraints, in the "
                                               "task's order (the order of `StepMarks.holds`)")
    reached: bool
    step: int | None = Field(default=None, description="first step where every constraint held")
    steps_held: int = Field(default=0, description="number of steps at which the state held")
    closest_step: int | None = Field(default=None, description="if never reached: the step satisfying most constraints")
    unmet: list[Violation] = Field(default_factory=list, description="constraints unmet at closest_step")


class StepMarks(BaseModel):
    """Which constraints of each gold state hold at one step."""

    step: int
    holds: dict[str, list[bool]] = Field(description="gold state -> for each of its constraints (in order), whether it "
                                         "holds in the step's state")


class Highlight(BaseModel):
    """Where an excerpt shows in the text captured at one step: character spans [start, end) of that text as the
    archive holds it (the report marks them)."""

    step: int
    spans: list[tuple[int, int]] = Field(default_factory=list, description="empty: the excerpt matched (after "
                                         "normalisation) but could not be placed character by character")


class RowProvenance(BaseModel):
    """Where one answer row's values were visible, and whether that state satisfies an answer state."""

    row: int
    key: list[str]
    steps: list[int] = Field(default_factory=list, description="steps whose page text contains the row's values")
    match: Literal["line", "page"] | None = Field(default=None,
                                                  description="all values on one line, or only somewhere on the page")
    step: int | None = Field(default=None, description="the step taken as the reading: first anchored step, else the closest")
    state_anchored: bool = False
    gold_state: str | None = None
    violations: list[Violation] = Field(default_factory=list)


class DriftEvent(BaseModel):
    """A gold state reached, then left on a scope or criterion dimension before its evidence was read."""

    state: str
    reached_step: int
    step: int = Field(description="the step at which the state was left")
    dimensions: list[str]
    changes: dict[str, list[Any]] = Field(description="key -> [gold-state value, new value]")
    recovered: bool = Field(description="the state was reached again and read later")


class Divergence(BaseModel):
    """The first retrieval state (dim.* keys, consecutive repeats collapsed) that differs from the reference run."""

    step: int | None = Field(description="episode step where the differing state appears (null: the episode ended first)")
    reference_step: int | None
    keys: list[str]
    episode_state: dict[str, Any] | None
    reference_state: dict[str, Any] | None


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list) else str(value)


class ExcerptCheck(BaseModel):
    """One excerpt of a record: how it was found in the captured page text."""

    excerpt: str
    faithful: bool
    match: str | None = Field(description="exact or normalised (faithful); casefold or fuzzy (a near miss); null: absent")
    ratio: float | None = Field(default=None, description="rapidfuzz partial ratio of a fuzzy near miss")
    step: int | None = Field(default=None, description="a step whose captured text holds the excerpt (null: a response body)")
    highlight: Highlight | None = Field(default=None, description="where the excerpt shows in that step's text")


class RecordCheck(BaseModel):
    """The verdict on one submitted record, with what each check found."""

    index: int
    item: dict[str, str]
    url: str
    answer: str
    subtask: str | None = None
    well_formed: bool = Field(default=True, description="false: unknown subtask or a missing item axis; left out of the rollup")
    captured: bool
    steps: list[int] = Field(default_factory=list, description="steps that displayed the record's URL")
    excerpts: list[ExcerptCheck] = Field(default_factory=list)
    facts: dict[str, bool] = Field(default_factory=dict, description="required fact -> shown in a faithful excerpt or the page")
    gold_match: bool | None = Field(default=None, description="matches a gold record (null: the task lists none)")
    verdict: RecordVerdict
    soft: float = Field(description="leaf score: faithful share of the excerpts when retrieval holds")
    hard: float = Field(description="1 when captured, every excerpt faithful and the facts supported")
    reason: str


class CitationCheck(BaseModel):
    """The verdict on one citation (the `rig verify --json` item, with extra detail)."""

    index: int
    url: str
    verified: bool
    step: int | None = Field(description="the first step at which the excerpt was visible (in an anchored state if any)")
    state: dict[str, Any] | None = Field(description="the trajectory state at that step")
    reason: str
    row: int | None = None
    match: Literal["exact", "normalised", "casefold"] | None = None
    steps: list[int] = Field(default_factory=list, description="every step whose text for this URL holds the excerpt")
    gold_state: str | None = Field(default=None, description="the gold state satisfied at `step` (task episodes)")
    state_anchored: bool | None = Field(default=None, description="whether `step` satisfies an answer state (whole-answer "
                                                                  "citations: any gold state); null without a task")
    supports_row: bool | None = Field(default=None, description="whether the excerpt holds every value of the cited row")
    highlight: Highlight | None = Field(default=None, description="where the excerpt shows in the text of `step`")


class EvidenceCheck(BaseModel):
    """One evidence requirement of the task: whether a page rendered under its gold state was shown on a matching URL."""

    state: str
    description: str
    url_contains: str | None = None
    met: bool
    step: int | None = None


class SqlMatch(BaseModel):
    """Execution match of a `search_to_sql` task: the agent's SQL and the gold SQL run read-only on the task's
    database, their result tables compared after column alignment, case folding and numeric rounding."""

    source: Literal["answer", "final_answer", "trajectory"] | None = Field(
        description="where the agent's SQL came from: answer.json's `sql`, a ```sql block of the final_answer call, "
                    "or its last successful run_sql step (null: none found)")
    step: int | None = Field(default=None, description="the trajectory step the SQL came from")
    sql: str | None = None
    matched: bool
    reason: str
    gold_rows: int | None = None
    pred_rows: int | None = None
    columns: list[int | None] = Field(default_factory=list, description="for each gold column, the index of the "
                                                                        "agent's result column aligned to it")


class JudgeVerdict(BaseModel):
    """An LLM judge's verdict on a free-text answer against the gold answer (BrowseComp style)."""

    model: str
    correct: bool
    extracted_answer: str = ""
    rationale: str = ""
    usage: Usage | None = Field(default=None, description="the judge's own LLM call (tokens, cost): kept apart from the "
                                "agent's usage, never added to it (null: not reported)")


class HybridCheck(BaseModel):
    """How a hybrid web+SQL task was decided: execution match (`search_to_sql`), else the answer table, or the judge."""

    type: HybridType
    db: str
    passed: bool
    decided_by: Literal["execution_match", "answer_table", "judge"]
    execution: SqlMatch | None = None
    judge: JudgeVerdict | None = None


class Grade(BaseModel):
    """`grade.json`: everything the grader concluded about one episode."""

    format: Literal["sgr-rig/grade/1", "sgr-rig/grade/2"] = GRADE_FORMAT
    grader_version: str = GRADER_VERSION
    rig_version: str = __version__
    episode: str = Field(description="the episode directory as given to the grader")
    task_id: str | None = None
    task_sha256: str | None = Field(default=None, description="SHA-256 of the task file the episode was graded against")
    task_revision: str | None = Field(default=None, description="the task's revision it was graded against: its "
                                      "`revision`, else a digest of its gold and grading rules")
    run_revision: str | None = Field(default=None, description="the task revision episode.json recorded at run time "
                                     "(null: not recorded)")
    family: str | None = None
    site: str | None = None
    variant: str | None = None
    agent: str
    model: str | None = None
    trial: int = 0
    injected_fault: str | None = Field(default=None, description="copied from episode.json (perturbed agents)")
    versions: dict[str, str | None] = Field(default_factory=dict, description="copied from episode.json: the software "
                                            "the episode ran with")
    usage: dict[str, Any] | None = Field(default=None, description="copied from episode.json when it records one: "
                                         "tokens, cost, calls (unknown: null, never 0)")
    status: Status
    scored: bool = Field(description="false for infra_error/incomplete episodes and episodes without a task: "
                                     "never scored as zero, excluded from means")
    error: str | None = None
    grading_error: str | None = Field(default=None, description="why the grader could not grade this episode (an "
                                      "unreadable file, a task that cannot be loaded): counted in the summary, not scored")
    incomplete_evidence: list[str] = Field(default_factory=list, description="evidence the episode should hold and "
                                           "does not (no or an empty trajectory or archive): such an episode never passes")
    passed: bool | None = Field(default=None, description="Row-F1 = 1 and P.O.A. = 1 (or a single gold row) for an "
                                                        "answer table, and hard record F1 = 1 for records")
    scores: TableScore | None = Field(default=None, description="answer-table scores (null: a records-only task)")
    records: list[RecordCheck] = Field(default_factory=list, description="per-record verdicts (tasks with `records`)")
    record_scores: RollupScores | None = Field(default=None, description="soft and hard record P/R/F1 (tasks with `records`)")
    annotated: bool = Field(default=True, description="the task has gold states; false: its state metrics (gold-state "
                                                      "reach, answer states, state-anchored rows, evidence) are not "
                                                      "annotated: null, never 0")
    gold_states: list[StateReach] = Field(default_factory=list)
    step_marks: list[StepMarks] = Field(default_factory=list, description="per step, which constraints of each gold "
                                        "state hold there")
    answer_states: list[str] = Field(default_factory=list)
    evidence: list[EvidenceCheck] = Field(default_factory=list)
    rows: list[RowProvenance] = Field(default_factory=list, description="provenance of each answer row")
    state_anchored_rows: float | None = Field(default=None, description="share of answer rows visible in an answer state "
                                                                        "(null: no rows, or the task is not annotated)")
    drift: list[DriftEvent] = Field(default_factory=list)
    reference_episode: str | None = Field(default=None, description="the reference run compared against (null: none found)")
    first_divergence: Divergence | None = Field(default=None, description="null with a reference_episode: no divergence")
    citations: list[CitationCheck] = Field(default_factory=list)
    missing_text_steps: list[int] = Field(default_factory=list, description="steps with no text record in the WARC")
    label: FailureKind | None = None
    rationale: str | None = None
    label_step: int | None = None
    hybrid_type: HybridType | None = Field(default=None, description="the task's hybrid type (hybrid web+SQL tasks)")
    hybrid: HybridCheck | None = Field(default=None, description="how a hybrid task was decided (null: not hybrid)")
    site_found: bool | None = Field(default=None, description="hidden-start tasks: whether the agent reached the "
                                    "task's site (a step on it), e.g. through web_search (null: the start was shown)")
    site_found_step: int | None = Field(default=None, description="the first step on the task's site")
    inputs: dict[str, int] = Field(default_factory=dict, description="the files this grade was computed from, by path "
                                   "relative to the episode directory (the reference episode's too), with their sizes "
                                   "in bytes: `rig grade` keeps a grade.json newer than each of them while this set, "
                                   "the task file's digest and the grader version are unchanged (empty: regraded)")

    @property
    def agent_label(self) -> str:
        """The agent as a summary tells agents apart: its name, and the model it drove (`browser-use (gpt-4.1)`)."""
        return f"{self.agent} ({self.model})" if self.model else self.agent

    @property
    def revision(self) -> str | None:
        """The task revision this episode stands for: the one it ran against when episode.json says, else the one it
        was graded against."""
        return self.run_revision or self.task_revision

    @property
    def outdated(self) -> bool:
        """Whether this grade.json is of an older format, lacking what the report shows (regrade it)."""
        return self.format != GRADE_FORMAT

    def metric_values(self) -> dict[str, tuple[float, float]]:
        """What this episode adds to each mean a summary takes: metric -> (numerator, denominator). `infra_rate` counts
        for every episode; the rest only for a scored one, and only where they apply (no answer table: no Item-F1;
        no gold states: no state metrics, never 0)."""
        out = {"infra_rate": (float(self.status in UNSCORED), 1.0)}
        if not self.scored:
            return out
        out["passed"] = (float(bool(self.passed)), 1.0)
        if self.scores is not None:
            out |= {m: (getattr(self.scores, m), 1.0) for m in ("item_f1", "row_f1", "poa")}
        if self.record_scores is not None:
            out |= {f"record_{m}": (getattr(self.record_scores, m), 1.0) for m in RECORD_METRICS}
        if self.gold_states:
            out["gold_state_reach"] = (sum(r.reached for r in self.gold_states) / len(self.gold_states), 1.0)
            out["answer_state_reach"] = (float(any(r.reached for r in self.gold_states if r.name in self.answer_states)),
                                         1.0)
            out["unrecovered_drift"] = (float(any(not d.recovered for d in self.drift)), 1.0)
        if self.annotated and self.rows:  # rows of tasks without gold states anchor nothing
            out["state_anchored_rows"] = (float(sum(p.state_anchored for p in self.rows)), float(len(self.rows)))
        if self.site_found is not None:
            out["site_found"] = (float(self.site_found), 1.0)
            if self.site_found and self.site_found_step is not None:
                out["site_found_step"] = (float(self.site_found_step), 1.0)
        return out
