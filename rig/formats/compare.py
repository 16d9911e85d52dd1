"""`rig compare --json`: one metric of two graded runs side by side, per task and per summary row, with B minus A and
a paired sign test over tasks (docs/grading.md, "Comparing runs")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

COMPARE_FORMAT = "sgr-rig/compare/1"
#: The paired test `rig compare` runs: the exact two-sided sign test over the tasks both runs hold.
SIGN_TEST = "sign_test"


class TaskDelta(BaseModel):
    """One task of one pair of rows: the metric in A and in B (over that task's trials), and B minus A."""

    task: str
    group: str = Field(description="the pair of summary rows (its name; `A vs B` when the names differ)")
    metric: str
    a: float | None = Field(description="null: the metric does not apply to the task's episodes in A")
    b: float | None
    delta: float | None = Field(description="b - a (null when either is)")
    episodes_a: int = 0
    episodes_b: int = 0
    revision_a: str | None = Field(default=None, description="the task revision A's episodes stand for (several: "
                                   "comma-separated)")
    revision_b: str | None = None


class GroupDelta(BaseModel):
    """One pair of summary rows: the metric over the tasks both hold, B minus A, and the sign test over those tasks."""

    group: str
    group_a: str = Field(description="A's row")
    group_b: str = Field(description="B's row")
    metric: str
    a: float | None = Field(description="the metric over A's episodes of the paired tasks, computed as summary.json "
                            "computes it (equal to summary.json's value when both runs hold the same tasks)")
    b: float | None
    delta: float | None
    p_value: float | None = Field(description="two-sided p-value of the paired test (null: no task has a value in both)")
    test: Literal["sign_test"] = SIGN_TEST
    tasks: int = Field(default=0, description="tasks with a value in both runs: the pairs the test takes")
    positive: int = Field(default=0, description="tasks where B is above A")
    negative: int = Field(default=0, description="tasks where B is below A")
    ties: int = Field(default=0, description="tasks where they are equal (left out of the test)")


class Comparison(BaseModel):
    """`rig compare RUNS_A RUNS_B --json`."""

    format: Literal["sgr-rig/compare/1"] = COMPARE_FORMAT
    runs_a: str
    runs_b: str
    metric: str
    tasks: list[TaskDelta] = Field(default_factory=list, description="per pair of rows and task both runs hold, "
                                   "most negative delta first")
    groups: list[GroupDelta] = Field(default_factory=list)
    only_in_a: list[str] = Field(default_factory=list, description="tasks run A holds and run B does not")
    only_in_b: list[str] = Field(default_factory=list, description="tasks run B holds and run A does not")
    unpaired_a: list[str] = Field(default_factory=list, description="rows of A paired with no row of B")
    unpaired_b: list[str] = Field(default_factory=list, description="rows of B paired with no row of A")
    revision_mismatch: list[str] = Field(default_factory=list, description="paired tasks whose revisions differ "
                                         "between the runs: their deltas compare different gold")
