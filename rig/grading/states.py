"""An episode's retrieval states against a task's gold states: reach, row provenance, drift and divergence.

A gold state is reached at the first step where all its constraints hold. The *answer states* are the
last gold state and every earlier one with the same scope and criterion constraints (e.g. page 1 and
page 2 of one result list): answer rows are state-anchored when they were visible in one of them.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote

from recorders.models import Step
from rig.formats.answer import Answer
from rig.formats.canonical import Canonicalizer
from rig.formats.grade import (
    Divergence,
    DriftEvent,
    RowProvenance,
    StateReach,
    StepMarks,
    Violation,
)
from rig.formats.task import GoldState, StateConstraint, Task
from rig.grading.evidence import CellForms, EpisodeTexts

_READ_ACTIONS = ("extract_table", "extract_text", "answer")


def _items(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def _compare(a: str, b: str) -> int:
    try:
        x, y = float(a), float(b)
    except ValueError:
        x, y = a, b  # type: ignore[assignment]
    return (x > y) - (x < y)


def holds(c: StateConstraint, state: dict[str, Any]) -> bool:
    """Whether one constraint holds in a step's state (a missing key satisfies only `ne`)."""
    actual = state.get(c.key)
    if actual is None:
        return c.op == "ne"
    want = c.value
    if c.op in ("eq", "ne"):
        same = (set(_items(actual)) == set(_items(want)) if isinstance(actual, list) or isinstance(want, list)
                else str(actual) == str(want))
        return same if c.op == "eq" else not same
    if c.op == "in":
        vals = _items(actual)
        return bool(vals) and all(v in set(_items(want)) for v in vals)
    if c.op == "contains":
        return all(w in (_items(actual) if isinstance(actual, list) else str(actual)) for w in _items(want))
    if c.op == "prefix":
        return any(str(actual).startswith(w) for w in _items(want))
    if isinstance(actual, list) or isinstance(want, list):
        return False
    order = _compare(str(actual), str(want))
    return order >= 0 if c.op == "gte" else order <= 0


def _core(state: GoldState) -> list[StateConstraint]:
    return [c for c in state.constraints if c.tag != "view"]


def answer_states(task: Task) -> list[str]:
    """The last gold state and earlier ones with the same scope and criterion constraints (none for a task without
    gold states: it is not annotated)."""
    def sig(s: GoldState) -> set[tuple[str, str, str]]:
        return {(c.key, c.op, json.dumps(c.value, sort_keys=True)) for c in _core(s)}

    if not task.gold_states:
        return []

    last = sig(task.gold_states[-1])
    return [s.name for s in task.gold_states if sig(s) == last]


def _tokens(value: Any) -> set[str]:
    """Atomic values of a state value: list items, the ends of ranges (`2014-03..2014-03`, `1977-2007`) and
    their parts (`2014`, `03`), and the last segment of a path (`/flights/plane/N57852` -> `N57852`)."""
    parts = {t.strip() for v in _items(value) for t in re.split(r"\.\.|[,;|]", v) if t.strip()}
    parts |= {unquote(p.rstrip("/").rsplit("/", 1)[-1]) for p in parts if p.startswith("/")}
    return (parts | {q for p in parts if not p.startswith("/") for q in re.split(r"[-:]", p)}) - {""}


class EpisodeStates:
    """Everything the grader derives from one episode's steps and page texts for one task."""

    def __init__(self, task: Task, steps: list[Step], texts: EpisodeTexts, answer: Answer | None) -> None:
        self.task, self.steps, self.texts = task, steps, texts
        self.answer = answer
        self.forms = CellForms(Canonicalizer(task.canonicalize))
        self.states = {s.name: s for s in task.gold_states}
        self.order = [s.name for s in task.gold_states]
        self.answer_names = answer_states(task)
        self._explicit = any(c.dependent for s in task.gold_states for c in s.constraints)
        self._dependent: dict[tuple[int, str, str], bool] = {}
        self.held = {s.name: [all(holds(c, st.state) for c in s.constraints) for st in steps] for s in task.gold_states}
        self.core_held = {s.name: [all(holds(c, st.state) for c in _core(s)) for st in steps] for s in task.gold_states}

    # --- gold-state reach -------------------------------------------------------------------------

    def reach(self) -> list[StateReach]:
        """Per gold state: reached or not, first step, and where it came closest when not reached."""
        out = []
        for s in self.task.gold_states:
            held = self.held[s.name]
            first = next((self.steps[i].step for i, h in enumerate(held) if h), None)
            r = StateReach(name=s.name, description=s.description, constraints=s.constraints, reached=first is not None,
                           step=first, steps_held=sum(held))
            if first is None and self.steps:
                i = self.closest(s.name)
                r.closest_step, r.unmet = self.steps[i].step, self.violations(s.name, i)
            out.append(r)
        return out

    def marks(self) -> list[StepMarks]:
        """Per step, whether each constraint of each gold state holds there (in the task's order)."""
        return [StepMarks(step=st.step, holds={s.name: [holds(c, st.state) for c in s.constraints]
                                               for s in self.task.gold_states}) for st in self.steps]

    def closest(self, name: str, among: list[int] | None = None) -> int:
        """Index of the step satisfying most of a state's scope constraints, then criterion ones, then any;
        latest wins ties (the right slice first: it locates the agent's attempt at this state)."""
        s = self.states[name]
        idx = among if among is not None else list(range(len(self.steps)))

        def score(i: int) -> tuple[int, int, int, int]:
            st = self.steps[i].state
            ok = [(c.tag, holds(c, st)) for c in s.constraints]
            return (sum(h for t, h in ok if t == "scope"), sum(h for t, h in ok if t == "criterion"), sum(h for _, h in ok), i)

        return max(idx, key=score)

    def violations(self, name: str, i: int) -> list[Violation]:
        """The constraints of gold state `name` unmet at step index `i`."""
        state = self.steps[i].state
        pos = self.order.index(name)
        out = []
        for c in self.states[name].constraints:
            if not holds(c, state):
                dependent, read = self.dependent(pos, c, state.get(c.key))
                out.append(Violation(state=name, key=c.key, op=c.op, expected=c.value, actual=state.get(c.key), tag=c.tag,
                                     dependent=dependent, read_earlier=read))
        return out

    # --- the task's dependency --------------------------------------------------------------------

    def dependent(self, pos: int, c: StateConstraint, actual: Any) -> tuple[bool, bool]:
        """Whether a violated constraint carries the task's dependency, and whether its wrong value was read
        in an earlier gold state: it shows in one table column there with the gold value (the candidates the
        dependency chooses from), i.e. the wrong row was taken. A task that declares no `dependent: true`
        constraint has its dependency inferred from the second test alone."""
        key = (pos, c.key, json.dumps(actual, sort_keys=True, default=str))
        if key not in self._dependent:
            self._dependent[key] = pos > 0 and (c.dependent or not self._explicit) and self._read_earlier(pos, c, actual)
        read = self._dependent[key]
        return (c.dependent if self._explicit else read), read

    def _read_earlier(self, pos: int, c: StateConstraint, actual: Any) -> bool:
        gold, got = _tokens(c.value), _tokens(actual)
        kept = {t for s in self.order[:pos] for e in self.states[s].constraints if e.key == c.key for t in _tokens(e.value)}
        wrong, right = got - gold - kept, gold - got  # an earlier state's own value was kept, not read
        if not wrong or not right:
            return False
        earlier = {i for s in self.order[:pos] for i, h in enumerate(self.held[s]) if h} or \
            {i for s in self.order[:pos] for i, h in enumerate(self.core_held[s]) if h}  # reached on scope/criterion only
        pages = {id(p): p for p in (self.texts.at(self.steps[i].step) for i in earlier)}.values()
        return any(p.same_column(w, r) for p in pages for w in wrong for r in right)

    # --- rows -------------------------------------------------------------------------------------

    def row_steps(self, row: list[str], columns: list[str]) -> tuple[list[int], str | None]:
        """Indices of steps whose text shows the row (one line if anywhere possible, else the page), and how."""
        cells = list(zip(columns, row))
        pages = [self.texts.at(st.step) for st in self.steps]
        for how in ("line", "page"):
            seen: dict[int, bool] = {}  # steps with identical text share one PageText
            found = []
            for i, p in enumerate(pages):
                if id(p) not in seen:
                    seen[id(p)] = p.row_on_line(cells, self.forms) if how == "line" else p.row_on_page(cells, self.forms)
                if seen[id(p)]:
                    found.append(i)
            if found:
                return found, how
        return [], None

    def provenance(self) -> list[RowProvenance]:
        """Per answer row: where its values were visible and whether one of those states is an answer state."""
        if self.answer is None or self.task.output is None:
            return []
        key_idx = [self.answer.columns.index(k) for k in self.task.output.key if k in self.answer.columns]
        out = []
        for r, row in enumerate(self.answer.rows):
            idx, how = self.row_steps(row, self.answer.columns)
            p = RowProvenance(row=r, key=[row[k] for k in key_idx if k < len(row)],
                              steps=[self.steps[i].step for i in idx], match=how)
            anchored = [(i, n) for i in idx for n in self.answer_names if self.held[n][i]]
            if anchored:
                i, p.gold_state = anchored[0]
                p.step, p.state_anchored = self.steps[i].step, True
            elif idx and not self.answer_names:  # not annotated: where the row was read, judged against no state
                p.step = self.steps[idx[0]].step
            elif idx:
                i, name = self.closest_answer(idx)
                p.step, p.violations = self.steps[i].step, self.violations(name, i)
            out.append(p)
        return out

    def closest_answer(self, idx: list[int]) -> tuple[int, str]:
        """Among step indices, the earliest one closest to an answer state (fewest unmet scope constraints,
        then criterion ones, then any), and that state."""
        def cost(i: int, n: str) -> tuple[int, int, int, int]:
            vs = self.violations(n, i)
            return (sum(v.tag == "scope" for v in vs), sum(v.tag == "criterion" for v in vs), len(vs), i)

        return min(((i, n) for i in idx for n in self.answer_names), key=lambda c: cost(*c))

    def displayed(self, name: str) -> list[int]:
        """Step indices where gold state `name` held and the page showed content rendered under it (the text
        changed since the state was entered), i.e. where its evidence was on screen."""
        out, before = [], None
        for i, h in enumerate(self.held[name]):
            if not h:
                continue
            if i == 0 or not self.held[name][i - 1]:
                before = self.steps[i - 1].text_hash if i > 0 else None
            if self.steps[i].text_hash != before:
                out.append(i)
        return out

    def first_held(self, name: str) -> int | None:
        """The step number at which gold state `name` first held, or None."""
        return next((s.step for s, h in zip(self.steps, self.held[name]) if h), None)

    def earlier_state_at(self, i: int) -> str | None:
        """The gold state before the answer states that holds at step index `i`, if any."""
        return next((n for n in self.order if n not in self.answer_names and self.held[n][i]), None)

    # --- drift and divergence -----------------------------------------------------------------------

    def drift(self, read_steps: set[int]) -> list[DriftEvent]:
        """Gold states left on a scope/criterion dimension before anything was read or displayed under them.

        `read_steps` are step indices where the agent read (answer rows visible); extract/answer actions
        and a change of the displayed text while the state held also count as reading it.
        """
        events = []
        for s in self.task.gold_states:
            held, i, shown = self.held[s.name], 0, set(self.displayed(s.name))
            while i < len(held):
                if not held[i]:
                    i += 1
                    continue
                start = i
                while i < len(held) and held[i]:
                    i += 1
                if i == len(held) or self._read_between(start, i, read_steps, shown):
                    continue
                st = self.steps[i].state
                broken = [c for c in _core(s) if not holds(c, st)]
                if not broken:
                    continue  # left on a view dimension only
                later = [j for j in range(i, len(held)) if j in read_steps or self.steps[j].action.type in _READ_ACTIONS]
                if not later or held[later[0]]:
                    continue
                events.append(DriftEvent(
                    state=s.name, reached_step=self.steps[start].step, step=self.steps[i].step,
                    dimensions=[c.key for c in broken],
                    changes={c.key: [self.steps[i - 1].state.get(c.key), st.get(c.key)] for c in broken},
                    recovered=any(held[j] for j in later)))
        return events

    def _read_between(self, start: int, end: int, read_steps: set[int], shown: set[int]) -> bool:
        return any(j in read_steps or j in shown or self.steps[j].action.type in _READ_ACTIONS for j in range(start, end))


def _dims(step: Step) -> dict[str, Any]:
    return {k: v for k, v in step.state.items() if k.startswith("dim.")}


def _collapsed(steps: list[Step]) -> list[tuple[int, dict[str, Any]]]:
    out: list[tuple[int, dict[str, Any]]] = []
    for s in steps:
        d = _dims(s)
        if not out or out[-1][1] != d:
            out.append((s.step, d))
    return out


def first_divergence(steps: list[Step], reference: list[Step]) -> Divergence | None:
    """The first dim.* state where the episode departs from the reference trajectory; None if it never does."""
    mine, ref = _collapsed(steps), _collapsed(reference)
    for (a_step, a), (b_step, b) in zip(mine, ref):
        if a != b:
            keys = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
            return Divergence(step=a_step, reference_step=b_step, keys=keys, episode_state=a, reference_state=b)
    if len(mine) == len(ref):
        return None
    if len(mine) > len(ref):
        step, state = mine[len(ref)]
        return Divergence(step=step, reference_step=None, keys=sorted(state), episode_state=state, reference_state=None)
    step, state = ref[len(mine)]
    return Divergence(step=None, reference_step=step, keys=sorted(state), episode_state=None, reference_state=state)
