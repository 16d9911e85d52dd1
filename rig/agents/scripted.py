"""The action-script runner: runs a script (docs/tasks.md, "Action scripts") on a Playwright page.

`rig record`, the `reference`, `scripted:FILE` and `perturbed:KIND` agents all run scripts through here; each
page action is performed by `replay.perform` (the one executor, shared with re-driving recorded episodes).
A recorder (or anything else) can watch each action through an `ActionHook`.
"""

from __future__ import annotations

import re
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from playwright.async_api import TimeoutError as PlaywrightTimeout
from pydantic import BaseModel

from replay.perform import perform
from rig.errors import AgentError, BrowserCrashed
from rig.formats.actions import VARIABLE, verb_of
from rig.formats.answer import Answer, Citation
from rig.formats.records import SubmittedRecord

#: Verbs the runner does itself (reading the page, composing the answer); every other verb is a trajectory action
#: performed by `replay.perform`, the executor re-driving uses too.
_OWN = ("extract_table", "extract_text", "answer")

_TABLE_JS = """t => {
  const text = c => (c.innerText || '').replace(/\\s+/g, ' ').trim();
  let head = t.querySelectorAll('thead tr th, thead tr td');
  let bodyRows = Array.from(t.querySelectorAll('tbody tr'));
  if (!head.length) {
    const all = Array.from(t.querySelectorAll('tr'));
    head = all.length ? all[0].querySelectorAll('th, td') : [];
    bodyRows = all.slice(1);
  }
  return {columns: Array.from(head).map(text),
          rows: bodyRows.map(r => Array.from(r.querySelectorAll('th, td')).map(text))};
}"""


class ActionHook(Protocol):
    """Told about each action as it runs (a recorder writes one step per action)."""

    def action(self, info: dict[str, Any]) -> AbstractAsyncContextManager[Any]: ...


@dataclass
class Table:
    """An extracted table: its rows and, per row, the URL it was read from and the row's text on that page."""

    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def column(self, name: str) -> int:
        """Index of a column by header text."""
        try:
            return self.columns.index(name)
        except ValueError:
            raise AgentError(f"table has no column {name!r}; columns are {self.columns}") from None


@dataclass
class ScriptResult:
    """What a script produced: its answer (if it gave one) and the values it extracted."""

    answer: Answer | None
    variables: dict[str, Any]


class ScriptRunner:
    """Runs action scripts on one page, keeping extracted variables between actions."""

    def __init__(self, page: Page, base_url: str, hook: ActionHook | None = None, timeout_s: float = 15.0) -> None:
        self.page, self.base_url, self.hook, self.timeout_ms = page, base_url, hook, timeout_s * 1000
        self.variables: dict[str, Any] = {}
        self.answer: Answer | None = None

    async def run(self, actions: list[BaseModel]) -> ScriptResult:
        """Run every action in order; raise AgentError naming the failing action."""
        for i, action in enumerate(actions):
            verb = verb_of(action)
            info = self.describe(action)
            ctx = self.hook.action({**info, "page": self.page}) if self.hook else nullcontext()
            try:
                async with ctx:
                    if verb in _OWN:
                        await getattr(self, f"_do_{verb}")(getattr(action, verb))
                    else:
                        await perform(self.page, info, base_url=self.base_url, timeout_ms=self.timeout_ms)
            except AgentError as exc:
                raise AgentError(f"action [{i}] {verb}: {exc}") from None
            except PlaywrightTimeout as exc:
                raise AgentError(f"action [{i}] {verb} timed out: {exc.message.splitlines()[0]}") from None
            except PlaywrightError as exc:
                msg = exc.message.splitlines()[0] if exc.message else str(exc)
                if "closed" in msg.lower() or "crash" in msg.lower():
                    raise BrowserCrashed(f"action [{i}] {verb}: {msg}") from None
                raise AgentError(f"action [{i}] {verb}: {msg}") from None
        return ScriptResult(self.answer, self.variables)

    def describe(self, action: BaseModel) -> dict[str, Any]:
        """The action as a trajectory records it: type, target and value (variables substituted)."""
        verb = verb_of(action)
        arg = getattr(action, verb)
        if isinstance(arg, str):
            target = self.sub(arg)
            return {"type": verb, "target": target, "value": None}
        target = getattr(arg, "selector", None)
        value = getattr(arg, "value", None) or getattr(arg, "key", None) or getattr(arg, "state", None)
        if isinstance(value, list):
            value = [self.sub(v) for v in value]
        elif isinstance(value, str):
            value = self.sub(value)
        return {"type": verb, "target": target, "value": value}

    def sub(self, text: str) -> str:
        """Substitute `${name}` and `${table[i].Column}` references."""

        def repl(m: re.Match[str]) -> str:
            name, idx, col = m.group(1), m.group(2), m.group(3)
            if name not in self.variables:
                raise AgentError(f"${{{name}}} was never extracted")
            val = self.variables[name]
            if idx is None:
                return str(val)
            if not isinstance(val, Table):
                raise AgentError(f"${{{name}[..]}} indexes a text variable")
            i = int(idx)
            if i >= len(val.rows):
                raise AgentError(f"${{{name}[{i}]}}: the table has only {len(val.rows)} rows")
            return val.rows[i][val.column(col)]

        return VARIABLE.sub(repl, text)

    async def _do_extract_table(self, a: Any) -> None:
        loc = self.page.locator(a.selector)
        await loc.wait_for(state="attached", timeout=self.timeout_ms)
        got = await loc.evaluate(_TABLE_JS)
        added = {name: self.sub(value) for name, value in a.add.items()}
        columns = [*got["columns"], *added]
        table = self.variables.get(a.as_) if a.append else None
        if not isinstance(table, Table):
            table = Table(columns=columns)
        elif table.columns != columns:
            raise AgentError(f"cannot append to {a.as_!r}: columns {columns} differ from {table.columns}")
        table.rows += [[*row, *added.values()] for row in got["rows"]]
        table.urls += [self.page.url] * len(got["rows"])
        table.texts += [" ".join(row) for row in got["rows"]]
        self.variables[a.as_] = table

    async def _do_extract_text(self, a: Any) -> None:
        text = (await self.page.locator(a.selector).first.inner_text(timeout=self.timeout_ms)).strip()
        if a.regex:
            m = re.search(a.regex, text)
            if not m:
                raise AgentError(f"text {text[:80]!r} does not match {a.regex!r}")
            text = m.group(1) if m.groups() else m.group(0)
        self.variables[a.as_] = text

    async def _do_answer(self, a: Any) -> None:
        self.answer = compose_answer(self.variables, a, self.sub)


@dataclass
class _Picked:
    row: list[str]
    url: str
    text: str
    table: Table
    projected: list[str] = field(default_factory=list)

    def cell(self, column: str) -> str:
        return self.row[self.table.column(column)]


def compose_answer(variables: dict[str, Any], a: Any, sub: Any = str) -> Answer:
    """Build an answer from extracted tables: concatenate, filter, project, deduplicate, sort, limit; then the
    answer table (`columns`) and/or one evidence record per picked row (`records`)."""
    names = [a.from_] if isinstance(a.from_, str) else a.from_
    picked: list[_Picked] = []
    for name in names:
        table = variables.get(name)
        if not isinstance(table, Table):
            raise AgentError(f"answer reads {name!r}, which is not an extracted table")
        texts = table.texts or [" ".join(r) for r in table.rows]
        picked += [_Picked(row, url, text, table) for row, url, text in zip(table.rows, table.urls, texts)]
    for col, want in a.where.items():
        want = sub(want)
        picked = [p for p in picked if p.cell(col) == want]
    mapping = a.columns if isinstance(a.columns, dict) else {c: c for c in a.columns or []}
    out: list[_Picked] = []
    seen: set[tuple[str, ...]] = set()
    for p in picked:
        p.projected = [p.cell(src) for src in mapping.values()] if mapping else list(p.row)
        if a.distinct and tuple(p.projected) in seen:
            continue
        seen.add(tuple(p.projected))
        out.append(p)
    cols = list(mapping)
    for key in reversed(a.sort_by):
        if key.column in cols:
            get = lambda p, i=cols.index(key.column): p.projected[i]  # noqa: E731
        elif not cols:  # a records-only answer sorts on source columns
            get = lambda p, c=key.column: p.cell(c)  # noqa: E731
        else:
            raise AgentError(f"sort_by column {key.column!r} is not an answer column {cols}")
        out.sort(key=lambda p, g=get, n=key.numeric: _num(g(p)) if n else g(p), reverse=key.desc)
    if a.limit is not None:
        out = out[: a.limit]
    answer = Answer(
        columns=cols,
        rows=[p.projected for p in out] if cols else [],
        citations=[Citation(row=i, url=p.url, excerpt=p.text) for i, p in enumerate(out)] if cols else [],
    )
    if a.records is not None:
        r = a.records
        answer.records = [SubmittedRecord(item={axis: p.cell(src) for axis, src in r.item.items()}, url=p.url,
                                          excerpts=[p.text], answer=p.cell(r.answer) if r.answer else "",
                                          subtask=r.subtask) for p in out]
    return answer


def _num(text: str) -> float:
    try:
        return float(re.sub(r"[^0-9.eE+-]", "", text))
    except ValueError:
        raise AgentError(f"{text!r} is not a number") from None
