"""The task file format: pydantic models are its single source of truth (docs/schemas/task.schema.json).

Cross-field checks raise ``ValueError("<field>: <reason>")``; the loader reports that field.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from rig.errors import ScriptError
from rig.formats.actions import parse_actions
from rig.formats.canonical import DEFAULT_RULES, RuleError, check_rule_set, known_rules
from rig.formats.records import URL, KeyHierarchy

DimensionTag = Literal["scope", "criterion", "view"]
HybridType = Literal["search_to_sql", "sql_to_search", "parallel"]
Op = Literal["eq", "ne", "in", "contains", "gte", "lte", "prefix"]
#: A task id names its file (`<id>.yaml`) and a directory of every run: one portable file name, at most this long.
MAX_ID_LENGTH = 128
#: Names Windows reserves for devices, with any extension (`con.yaml`, `nul.x.yaml`): no file can carry them there.
RESERVED_NAMES = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
                            *(f"lpt{i}" for i in range(10))})
_ID = r"^[a-z0-9][a-z0-9_.-]*$"


def id_problem(task_id: str) -> str | None:
    """Why `task_id` cannot be a task id (it names the file `<id>.yaml` and a directory of every run), or None."""
    if len(task_id) > MAX_ID_LENGTH:
        return f"it is {len(task_id)} characters long; a task id has at most {MAX_ID_LENGTH}"
    if not re.fullmatch(_ID, task_id):
        return "a task id is lower-case letters, digits, '_', '.' and '-', starting with a letter or digit"
    if task_id.split(".")[0] in RESERVED_NAMES:
        return f"{task_id!r} is a device name Windows reserves: no file can be called {task_id}.yaml there"
    if task_id.endswith("."):
        return f"{task_id!r} ends with '.', which Windows drops from file names (two ids would name one file)"
    return None


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Prompts(_Model):
    """The same information need phrased two ways (SGR-Bench's paired variants)."""

    constraint: str = Field(description="explicit retrieval logic, step by step")
    goal: str = Field(description="the information need only; the retrieval logic is left implicit")


class OutputSchema(_Model):
    """The answer table's shape."""

    columns: list[str] = Field(min_length=1, description="ordered answer columns")
    key: list[str] = Field(min_length=1, description="row-key columns used to align rows")
    order: str = Field(description="the order rule, in words (e.g. 'Flights descending, then Carrier')")

    @model_validator(mode="after")
    def _key_in_columns(self) -> "OutputSchema":
        missing = [k for k in self.key if k not in self.columns]
        if missing:
            raise ValueError(f"key: key columns {missing} are not among columns {self.columns}")
        return self


class StateConstraint(_Model):
    """One constraint over a state dimension, e.g. `dim.origin == JFK`."""

    key: str = Field(description="a state key, usually `dim.<name>`")
    op: Op = "eq"
    value: str | list[str]
    tag: DimensionTag
    dependent: bool = Field(
        default=False, description="the value was read in an earlier state: the task's logical dependency"
    )


class GoldState(_Model):
    """A named retrieval state the solution must reach, as constraints over state dimensions."""

    name: str
    description: str = ""
    constraints: list[StateConstraint] = Field(min_length=1)


FailureKind = Literal[
    "scope_drift", "criterion_mismatch", "intent_rewriting", "page_misreading", "retrieval_dependency",
    "answer_composition",
]


class Perturbation(_Model):
    """One edit of the reference solution that injects a fault (for the `perturbed:KIND` agents)."""

    at: int = Field(ge=0, description="index of the reference-solution action to edit")
    set: dict[str, Any] | str | None = Field(
        default=None, description="new arguments, merged into the action's (a string replaces a string argument)"
    )
    drop: bool = Field(default=False, description="skip this action")


def apply_edits(script: list[dict[str, Any]], edits: list[Perturbation]) -> list[dict[str, Any]]:
    """A copy of `script` with perturbation edits applied (set arguments, drop actions)."""
    script = copy.deepcopy(script)
    dropped = {e.at for e in edits if e.drop}
    for e in edits:
        if e.set is None:
            continue
        verb = next(iter(script[e.at]))
        if isinstance(e.set, str) or not isinstance(script[e.at][verb], dict):
            script[e.at][verb] = e.set
        else:
            script[e.at][verb] = {**script[e.at][verb], **e.set}
    return [a for i, a in enumerate(script) if i not in dropped]


class EvidenceRequirement(_Model):
    """Which evidence must be visible, and under which gold state."""

    state: str = Field(description="name of the gold state under which the evidence is exposed")
    description: str
    url_contains: str | None = None


class GoldTable(_Model):
    """The gold answer table (rows in the gold order)."""

    rows: list[list[str]] = Field(max_length=10_000, description="data rows, no header (empty: the answer is NONE)")


class GoldRecord(_Model):
    """One expected record: its identifying item (axis -> value), its answer, and its branch (None: main)."""

    item: dict[str, str]
    answer: str = ""
    subtask: str | None = None


class RecordsSpec(_Model):
    """Evidence-backed records a task takes (WANDR): the key hierarchy and what each record must support."""

    hierarchy: KeyHierarchy = Field(description="levels of identifying keys with required counts, ending in url leaves")
    answer: str = Field(description="what a record's `answer` states, in words (e.g. 'the carrier's delayed flights')")
    answer_rules: list[Any] = Field(default_factory=lambda: list(DEFAULT_RULES),
                                    description="canonicalisation rules comparing answers (e.g. [number])")
    facts: list[str] | None = Field(
        default=None, description="the record values its excerpts or captured page must show: item axes and/or "
                                  "`answer` (null: every item axis and the answer)")
    gold: list[GoldRecord] | None = Field(
        default=None, description="the qualifying records: a record whose item or answer matches none of them is "
                                  "not supported (null: any item the page supports qualifies)")

    _known_rules = field_validator("answer_rules")(known_rules)

    @model_validator(mode="after")
    def _consistent(self) -> "RecordsSpec":
        branches = self.hierarchy.branch_axes()
        axes = {a for keys in branches.values() for a in keys}
        for i, fact in enumerate(self.facts or []):
            if fact != "answer" and fact not in axes:
                raise ValueError(f"facts[{i}]: {fact!r} is neither `answer` nor an item axis {sorted(axes)}")
        for i, rec in enumerate(self.gold or []):
            if rec.subtask not in branches:
                raise ValueError(f"gold[{i}].subtask: unknown subtask {rec.subtask!r}; the hierarchy declares "
                                 f"{sorted(n for n in branches if n is not None)}")
            missing = [a for a in branches[rec.subtask] if not rec.item.get(a, "").strip()]
            if missing:
                raise ValueError(f"gold[{i}].item: missing {missing}; this branch is identified by {branches[rec.subtask]}")
        for axis in self.hierarchy.axes:
            if axis != URL and axis not in axes:
                raise ValueError(f"hierarchy.axes.{axis}: not a key of any level")
        return self

    def required_facts(self, subtask: str | None) -> list[str]:
        """The facts a record of branch `subtask` must support."""
        axes = self.hierarchy.branch_axes().get(subtask, [])
        return [f for f in self.facts if f == "answer" or f in axes] if self.facts is not None else [*axes, "answer"]


#: A tool name's shape (which tools exist, and their arguments, is the tool registry's: rig.tools.registry).
_TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class ToolCall(_Model):
    """One call of a tool-call script (a reference solution for the tool server): the tool and its arguments."""

    tool: str = Field(description="a tool name (`web_search`, `run_sql`, ..., or a `browser_*` tool)")
    args: dict[str, Any] = Field(default_factory=dict, description="the call's arguments; a URL starting with `/` "
                                                                   "is on the sites server")

    @field_validator("tool")
    @classmethod
    def _known_tool(cls, v: str) -> str:
        if not _TOOL_NAME.match(v):
            raise ValueError(f"{v!r} is not a tool name (lower-case letters, digits and '_', e.g. run_sql)")
        return v


class Task(_Model):
    """One SGR task: prompts, output schema, gold answer, gold retrieval states and a reference solution."""

    id: str = Field(pattern=_ID, max_length=MAX_ID_LENGTH,
                    description="lower-case letters, digits, `_`, `.`, `-`; the task file's name without `.yaml`")
    family: str = Field(description="source family, e.g. 'official statistics'")
    site: str | None = Field(default=None, description="bundled site name, e.g. 'flights' (with `start_path`)")
    start_path: str | None = Field(default=None,
                                   description="where agents start on a bundled site: a path on the sites server, "
                                               "e.g. '/flights/'")
    start_url: str | None = Field(default=None, description="where agents start on any origin: an absolute http(s) "
                                                            "URL (instead of `site` + `start_path`)")
    origins: list[str] = Field(default_factory=list, description="host names the task's evidence lives on")
    adapter: str | None = Field(default=None, description="a site-adapter file mapping raw state keys to `dim.*`, "
                                                          "relative to the task file")
    start_hidden: bool = Field(default=False, description="agents start on a blank page and the prompt does not "
                                                          "name the start page: they must find the site (such a task "
                                                          "may name no start page at all)")
    prompts: Prompts
    output: OutputSchema | None = Field(default=None, description="the answer table's shape (null: a records-only task)")
    canonicalize: dict[str, Any] = Field(
        default_factory=lambda: {"default": ["nfkc", "trim", "collapse_ws"]},
        description="canonicalisation rules (docs/tasks.md)",
    )
    gold: GoldTable | None = Field(default=None, description="the gold answer table (with `output`)")
    records: RecordsSpec | None = Field(default=None, description="evidence-backed records the task takes (WANDR)")
    gold_states: list[GoldState] = Field(default_factory=list, description="in the order the solution needs them "
                                                                           "(empty: state metrics not annotated)")
    evidence: list[EvidenceRequirement] = Field(default_factory=list)
    dependency: str = Field(default="", description="the logical dependency: which value read in one state decides "
                                                    "the next")
    reference_solution: list[dict[str, Any]] = Field(default_factory=list,
                                                     description="an action script (empty: none is known)")
    data_version: str = Field(default="", description="the data package and version the gold comes from")
    revision: str | None = Field(default=None, description="the task's revision (e.g. `2`, a date): grades record the "
                                 "revision they were graded against and `rig grade` never mixes two in one summary row "
                                 "(null: a digest of the gold and grading rules stands for it, `grading_revision`)")
    perturbations: dict[FailureKind, list[Perturbation]] = Field(
        default_factory=dict,
        description="task-specific fault injections; kinds left out use the generic ones (rig.agents.perturbed)",
    )
    hybrid_type: HybridType | None = Field(default=None, description="a hybrid web+SQL task's type (HybridDeepResearch)")
    db: str | None = Field(default=None, description="the database a hybrid task's `run_sql` opens (a bundled name)")
    gold_sql: str | None = Field(default=None, description="the SQL whose result is a `search_to_sql` task's answer")
    reference_tools: list[ToolCall] = Field(default_factory=list,
                                            description="a tool-call script solving the task through the tool server "
                                                        "(`mcp` agent), ending in `final_answer` (empty: none is known)")
    meta: dict[str, Any] = Field(default_factory=dict, description="fields kept verbatim from an imported dataset")

    @field_validator("id")
    @classmethod
    def _portable_id(cls, v: str) -> str:
        problem = id_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("reference_solution")
    @classmethod
    def _valid_script(cls, v: list[dict[str, Any]]) -> list[dict[str, Any]]:
        try:
            parse_actions(v, "reference_solution")
        except ScriptError as exc:
            raise ValueError(f"{exc.field}: {exc.reason}") from None
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "Task":
        try:
            check_rule_set(self.canonicalize, self.output.columns if self.output else None)
        except RuleError as e:
            raise ValueError(f"canonicalize.{e}" if not str(e).startswith("a rule set") else f"canonicalize: {e}") from None
        if self.output is None and self.records is None:
            raise ValueError("output: a task needs an answer table (`output` and `gold`), `records`, or both")
        if (self.output is None) != (self.gold is None):
            missing = "gold" if self.gold is None else "output"
            raise ValueError(f"{missing}: an answer table needs both `output` and `gold`")
        width = len(self.output.columns) if self.output else 0
        for i, row in enumerate(self.gold.rows if self.gold else []):
            if len(row) != width:
                raise ValueError(f"gold.rows[{i}]: has {len(row)} cells, the output schema has {width} columns")
        self._check_start()
        self._check_tools()
        for kind, edits in self.perturbations.items():
            for j, edit in enumerate(edits):
                if edit.at >= len(self.reference_solution):
                    raise ValueError(f"perturbations.{kind}[{j}].at: {edit.at} is past the reference solution's "
                                     f"{len(self.reference_solution)} actions")
        names = {s.name for s in self.gold_states}
        for i, ev in enumerate(self.evidence):
            if ev.state not in names:
                raise ValueError(f"evidence[{i}].state: names state {ev.state!r}, not one of gold_states {sorted(names)}")
        return self

    def _check_tools(self) -> None:
        if self.hybrid_type is not None and not self.db:
            raise ValueError("db: a hybrid task names the database its `run_sql` opens")
        if self.hybrid_type == "search_to_sql" and not self.gold_sql:
            raise ValueError("gold_sql: a search_to_sql task is graded by execution match and needs its gold SQL")
        if self.reference_tools and self.reference_tools[-1].tool != "final_answer":
            raise ValueError(f"reference_tools[{len(self.reference_tools) - 1}]: a tool-call script ends with "
                             "`final_answer`")

    def _check_start(self) -> None:
        if self.start_url is not None:
            if self.site is not None or self.start_path is not None:
                raise ValueError("start_url: give either `start_url` or `site` + `start_path`, not both")
            scheme, _, rest = self.start_url.partition("://")
            if scheme.lower() not in ("http", "https") or not rest or rest.startswith("/"):
                raise ValueError(f"start_url: {self.start_url!r} is not an absolute http(s) URL")
            if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in self.start_url):
                raise ValueError(f"start_url: {self.start_url!r} holds white space or a control character")
            parts = urlsplit(self.start_url)
            try:
                parts.port
            except ValueError:
                raise ValueError(f"start_url: {self.start_url!r}: the port is not a number from 1 to 65535") from None
            if not parts.hostname or parts.port == 0:
                what = "names no host" if not parts.hostname else "has port 0"
                raise ValueError(f"start_url: {self.start_url!r} {what}")
            return
        if self.site is None and self.start_path is None and self.start_hidden:
            return  # agents start on a blank page and must find the site (a discovery or tool-only task)
        if self.site is None or self.start_path is None:
            missing = "site" if self.site is None else "start_path"
            raise ValueError(f"{missing}: a task starts at `start_url`, or at `site` + `start_path` on a bundled site")
        if not self.start_path.startswith(f"/{self.site}/"):
            raise ValueError(f"start_path: {self.start_path!r} must lie under the site's root /{self.site}/")

    @property
    def grading_revision(self) -> str:
        """`revision`, else `sha256:` and 16 hex digits of what grading compares against: the output's columns and key,
        the gold rows, the canonicalisation, gold states, evidence requirements, records, and a hybrid task's type,
        database and gold SQL (editing any of them makes another revision; the prompts do not count)."""
        if self.revision:
            return self.revision
        rules = self.model_dump(mode="json", include={"output": {"columns": True, "key": True}, "gold": True,
                                                      "canonicalize": True, "gold_states": True, "evidence": True,
                                                      "records": True, "hybrid_type": True, "db": True, "gold_sql": True})
        return "sha256:" + hashlib.sha256(json.dumps(rules, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def annotated(self) -> bool:
        """Whether the task has gold states (else its state metrics are not annotated: null, never 0)."""
        return bool(self.gold_states)

    def start_at(self, sites_url: str) -> str:
        """The absolute URL the task's start page has: `start_url`, `start_path` on the sites server, or about:blank
        for a hidden-start task that names no start page."""
        if self.start_url is not None:
            return self.start_url
        if self.start_path is None:
            return "about:blank"
        return sites_url.rstrip("/") + self.start_path

    #: The file the task was loaded from (not part of the format).
    _source: str | None = PrivateAttr(default=None)

    @property
    def source(self) -> str | None:
        """The file this task was loaded from, if any."""
        return self._source

    def prompt(self, variant: str) -> str:
        """The prompt of one variant (`constraint` or `goal`), with the output schema and record format appended."""
        text = getattr(self.prompts, variant)
        if self.output is not None:
            cols = ", ".join(self.output.columns)
            text += f"\n\nAnswer as a table with columns: {cols}. Order: {self.output.order}."
        if self.records is not None:
            branches = self.records.hierarchy.branch_axes()
            items = "; ".join(f"{'main' if b is None else b}: {', '.join(a)}" for b, a in branches.items())
            text += (f"\n\nAlso hand in evidence records, one per item: item ({items}), the URL of the page that "
                     f"shows it, verbatim excerpts of that page, and the answer ({self.records.answer}).")
        return text
