"""`rig tasks annotate`: gold states by demonstration. A recorded step's state becomes a gold state's constraints,
its URL an evidence requirement, and the episode's own actions the task's reference solution (docs/tasks.md,
"Gold states by demonstration")."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from recorders.models import Step
from recorders.redact import REDACTED
from replay.perform import local_part
from rig.episode_dir import EpisodeDir
from rig.errors import InputError, TaskError
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure
from rig.formats.episode import Episode
from rig.formats.task import Task
from rig.tasks.loader import load_task
from rig.tasks.task_files import write_task_file

#: Keys a gold state is written over when the step has no `dim.*` key (a task without a site adapter).
RAW_DEFAULT = ("url.path", "url.query.*", "url.fragment.*")
DEFAULT_TAG = "scope"


@dataclass(frozen=True)
class StateSpec:
    """One `--state NAME=STEP`: the gold state's name and the trajectory step it is read from."""

    name: str
    step: int


def parse_state(text: str) -> StateSpec:
    """`NAME=STEP` as a StateSpec; InputError naming `--state` otherwise."""
    name, sep, step = text.partition("=")
    name, step = name.strip(), step.strip()
    if not sep or not name or not step.isdigit():
        raise InputError("--state", text, "expected NAME=STEP: a gold-state name and a trajectory step number, "
                                          "e.g. results=12")
    return StateSpec(name, int(step))


@dataclass
class Annotation:
    """What `annotate_task` wrote: the task as it now is, the states written and what the author should look at."""

    task: Task
    states: list[tuple[str, int, int]] = field(default_factory=list)  # (name, step, number of constraints)
    solution_actions: int | None = None
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _value(v: Any) -> str | list[str]:
    if isinstance(v, (list, tuple)):
        return [str(x) for x in v]
    return "true" if v is True else "false" if v is False else str(v)


def state_keys(step: Step, keys: list[str] | None, notes: list[str]) -> list[str]:
    """The state keys a gold state is written over: those named (globs allowed, `url.query.*`), else the step's
    `dim.*` keys, else its address (url.path, url.query.*, url.fragment.*). InputError for a named key the step
    lacks."""
    state = step.state
    if keys:
        out: list[str] = []
        for k in keys:
            hits = [s for s in state if fnmatch.fnmatchcase(s, k)] if any(c in k for c in "*?[") else (
                [k] if k in state else [])
            if not hits:
                raise InputError("--keys", k, f"not in step {step.step}'s state; its keys are {sorted(state)}")
            out += [h for h in hits if h not in out]
        return out
    dims = [k for k in state if k.startswith("dim.")]
    if dims:
        return dims
    notes.append(f"step {step.step} has no dim.* keys (no site adapter): its state is written over its address "
                 f"({', '.join(RAW_DEFAULT)}); name other keys with --keys")
    return [k for k in state if any(fnmatch.fnmatchcase(k, p) for p in RAW_DEFAULT)]


def gold_state(spec: StateSpec, step: Step, keys: list[str] | None, source: str, notes: list[str]) -> dict[str, Any]:
    """The gold state of one `--state`: an `eq` constraint tagged `scope` per key with a value at that step."""
    constraints = []
    for k in state_keys(step, keys, notes):
        v = step.state.get(k)
        if v is None:
            notes.append(f"{spec.name}: {k} has no value at step {step.step}; left out")
            continue
        constraints.append({"key": k, "value": _value(v), "tag": DEFAULT_TAG})
    if not constraints:
        raise InputError("--state", f"{spec.name}={spec.step}", f"step {spec.step}'s state has none of the keys "
                                                               "to write; name them with --keys")
    return {"name": spec.name, "description": f"as demonstrated at step {spec.step} of {source}: {step.url}",
            "constraints": constraints}


def evidence(spec: StateSpec, step: Step, bundled: bool) -> dict[str, Any]:
    """An evidence requirement: the page of the step, under its gold state. `url_contains` is the page's path
    on a bundled site (whose port changes from run to run), else its host (and port) and path."""
    parts = urlsplit(step.url)
    where = parts.path if bundled else f"{parts.netloc}{parts.path}"
    return {"state": spec.name, "description": f"the page shown at step {spec.step} of the demonstration: {step.url}",
            **({"url_contains": where} if where else {})}


class _Solution:
    """Turns an episode's agent actions back into an action script."""

    def __init__(self, episode: Episode, answer: Answer | None, bundled: bool) -> None:
        self.episode, self.answer, self.bundled = episode, answer, bundled
        self.actions: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.tables: list[tuple[str, str]] = []  # (name, url of the page it was read from)
        self.texts = 0
        self.skipped: dict[str, int] = {}
        self.origin = urlsplit(episode.start_url or "").netloc

    def url(self, url: str) -> str:
        """A goto target: relative to the sites server on a bundled site, else as recorded."""
        if self.bundled and self.origin and urlsplit(url).netloc == self.origin:
            return local_part(url) or "/"
        return url

    def add(self, step: Step) -> None:
        """The action of one step, when it is the agent's and the script format has it."""
        a = step.action
        if a.source != "agent":
            return
        kind, target, value = a.type, a.target, a.value
        if kind == "goto":
            url = str(value or target or "")
            if step.step == 0 and url == self.episode.start_url:
                return  # the runner opening the task's start page
            self.actions.append({"goto": self.url(url)})
        elif kind == "answer":
            self.compose()
        elif not target:
            self.skip(kind)
        elif kind == "select" and value is not None:
            self.actions.append({"select": {"selector": target, "value": _value(value)}})
        elif kind in ("check", "uncheck", "click"):
            self.actions.append({kind: target})
        elif kind == "fill":
            if value == REDACTED:
                self.notes.append(f"step {step.step}: the value filled into {target} was redacted; write it in")
            self.actions.append({"fill": {"selector": target, "value": "" if value is None else str(value)}})
        elif kind == "press" and value:
            self.actions.append({"press": {"selector": target, "key": str(value)}})
        elif kind == "wait_for":
            state = value if value in ("attached", "detached", "hidden") else None
            self.actions.append({"wait_for": {"selector": target, "state": state} if state else target})
        elif kind == "extract_table":
            name = f"table{len(self.tables) + 1}"
            self.tables.append((name, step.url))
            self.actions.append({"extract_table": {"selector": target, "as": name}})
        elif kind == "extract_text":
            self.texts += 1
            self.actions.append({"extract_text": {"selector": target, "as": f"text{self.texts}"}})
        else:
            self.skip(kind)

    def skip(self, kind: str) -> None:
        """Count an action the script format cannot say."""
        self.skipped[kind] = self.skipped.get(kind, 0) + 1

    def compose(self) -> None:
        """The answer action: the episode's answer columns, from the tables read on the pages its rows cite (else
        the last table read)."""
        if self.answer is None or not self.answer.columns:
            self.notes.append("the episode has no answer table: the reference solution has no `answer` action")
            return
        if not self.tables:
            self.notes.append("the answer was not composed from extracted tables: add the `answer` action by hand")
            return
        cited = {c.url for c in self.answer.citations if c.row is not None}
        names = [n for n, url in self.tables if url in cited] or [self.tables[-1][0]]
        self.actions.append({"answer": {"from": names[0] if len(names) == 1 else names,
                                        "columns": list(self.answer.columns)}})
        self.notes.append("the reference solution's answer takes every row of " + ", ".join(names) +
                          " in page order: add where/sort_by/limit if the demonstration's answer picked rows")

    def finish(self) -> list[dict[str, Any]]:
        """The script, with a note for each kind of action left out."""
        for kind, n in sorted(self.skipped.items()):
            self.notes.append(f"{n} {kind} action(s) have no action-script form and were left out")
        return self.actions


def _answer(ed: EpisodeDir) -> Answer | None:
    if not ed.answer_file.exists():
        return None
    try:
        return ed.read_answer()
    except (ParseFailure, InputError):
        return None


def annotate_task(task_file: Path, episode_dir: Path, states: list[StateSpec], keys: list[str] | None = None, *,
                  keep_solution: bool = False, allow_unfinished: bool = False, force: bool = False) -> Annotation:
    """Write `states` (each read from its step of the episode) into the task file as gold states with evidence
    requirements, and the episode's actions as its reference solution (unless `keep_solution`); the rest of the
    file is kept. The result is validated as `rig tasks validate` does before it replaces the file, and the file as
    it was is kept beside it as `TASK_FILE.bak`.

    Refused (InputError, TaskError for the task file; the task file is then unchanged): an episode that did not end
    `ok` (unless `allow_unfinished`), a reference solution without an `answer` action, and, unless `force`,
    replacing a gold state of the same name or a reference solution the task already has."""
    if not states:
        raise InputError("--state", None, "give at least one NAME=STEP")
    dup = next((s.name for i, s in enumerate(states) if s.name in [t.name for t in states[:i]]), None)
    if dup:
        raise InputError("--state", dup, "the same gold-state name is given twice")
    task = load_task(task_file)
    data = yaml.safe_load(Path(task_file).read_text(encoding="utf-8"))
    ed = EpisodeDir(episode_dir)
    episode = ed.read_episode()
    result = Annotation(task=task)
    if episode.status != "ok":
        if not allow_unfinished:
            raise InputError(str(ed.episode_file), "status", f"the episode ended {episode.status!r}, not 'ok'"
                             f"{f' ({episode.error})' if episode.error else ''}: its steps may stop short of the "
                             "task; record it again, or pass --allow-unfinished to annotate from it anyway")
        result.warnings.append(f"the episode ended {episode.status!r}, not 'ok' (--allow-unfinished): check that "
                               "its steps are the states you mean")
    steps = ed.steps()
    if not steps:
        raise InputError(str(ed.trajectory_file), None, "the episode has no recorded steps")
    by_number = {s.step: s for s in steps}
    if episode.task_id and episode.task_id != task.id:
        result.notes.append(f"the episode was recorded for task {episode.task_id!r}, not {task.id!r}")
    bundled = task.site is not None
    taken = sorted({s.name for s in states} & {s.name for s in task.gold_states})
    if taken and not force:
        raise TaskError(str(task_file), "gold_states", f"the task already has gold state(s) {', '.join(taken)}: "
                                                       "--force replaces them (the old file is kept as .bak)")
    new_states, new_evidence = [], []
    for spec in sorted(states, key=lambda s: s.step):
        step = by_number.get(spec.step)
        if step is None:
            span = f"{steps[0].step} to {steps[-1].step}"
            raise InputError("--state", f"{spec.name}={spec.step}", f"the episode has no step {spec.step} (its "
                                                                   f"steps are {span})")
        gs = gold_state(spec, step, keys, str(episode_dir), result.notes)
        new_states.append(gs)
        new_evidence.append(evidence(spec, step, bundled))
        result.states.append((spec.name, spec.step, len(gs["constraints"])))
    names = {s["name"] for s in new_states}
    old = list(data.get("gold_states") or [])
    replaced = {s.get("name"): s for s in new_states}
    merged = [replaced.pop(s.get("name")) if s.get("name") in replaced else s for s in old]
    data["gold_states"] = merged + [s for s in new_states if s["name"] in replaced]
    data["evidence"] = [e for e in data.get("evidence") or [] if e.get("state") not in names] + new_evidence
    if not keep_solution:
        _solve(data, ed, episode, steps, result, bundled, force=force, task_file=task_file)
    result.task = write_task_file(Path(task_file), data, backup=True)
    return result


def _solve(data: dict[str, Any], ed: EpisodeDir, episode: Episode, steps: list[Step], result: Annotation,
           bundled: bool, *, force: bool, task_file: Path) -> None:
    """Put the episode's actions into `data` as the reference solution; TaskError when they hold no `answer` action
    or would replace the task's own solution without `force`."""
    solution = _Solution(episode, _answer(ed), bundled)
    for step in steps:
        solution.add(step)
    script = solution.finish()
    result.notes += solution.notes
    if not script:
        result.notes.append("the episode holds no agent action the script format has: reference solution kept")
        return
    if not any("answer" in a for a in script):
        raise TaskError(str(task_file), "reference_solution", f"the episode's {len(script)} actions hold no `answer` "
                        "action (it handed in no answer table composed from extracted tables), so they cannot be "
                        "the task's reference solution: pass --keep-solution to write only the gold states")
    current = data.get("reference_solution") or []
    if current and current != script and not force:
        raise TaskError(str(task_file), "reference_solution", f"the task already has a reference solution "
                        f"({len(current)} actions): --force replaces it with the episode's {len(script)} (the old "
                        "file is kept as .bak), --keep-solution keeps it")
    if data.get("perturbations") and script != current:
        data.pop("perturbations")
        result.notes.append("perturbations removed: they indexed the old reference solution")
    data["reference_solution"] = script
    result.solution_actions = len(script)
