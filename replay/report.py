"""What re-driving an episode reports (`rig replay --json`), and the recorded steps it compares with: read
here as plain JSON lines (the trajectory format is the contract), so neither needs a browser or the recorder."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, Protocol

from typing_extensions import TypedDict  # pydantic's schemas need it on Python 3.11

from replay.errors import ReplayError
from replay.perform import local_part

#: State keys never compared. Empty: every key the recorder writes is reproducible offline for the bundled sites.
VOLATILE_KEYS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RecordedStep:
    """What re-driving needs of one trajectory line."""

    step: int
    url: str
    action: dict[str, Any]
    state: dict[str, Any]
    text_hash: str
    tab: int = 0


class Captured(Protocol):
    """A captured step (the recorder's `Step`): what is compared."""

    url: str
    state: dict[str, Any]
    text_hash: str


class Mismatch(TypedDict):
    """A step that did not match: its number and what differed (see `step_diff`)."""

    step: int
    diff: dict[str, Any]


class MissRecord(TypedDict):
    """A request the archive could not answer, the step being re-driven then, and (for an archived answer whose body is
    not whole, served as a 502) why."""

    method: str
    url: str
    step: NotRequired[int]
    reason: NotRequired[str]


@dataclass
class ReplayReport:
    """Per-step fidelity of one replay: the `rig replay --json` document."""

    steps: int
    matched: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    misses: list[MissRecord] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every step matched (the command's exit status is 0 only then)."""
        return self.matched == self.steps

    def to_json(self) -> dict[str, Any]:
        """`{"steps": N, "matched": M, "mismatches": [{"step": i, "diff": {...}}], "misses": [...]}`."""
        return {"steps": self.steps, "matched": self.matched, "mismatches": self.mismatches, "misses": self.misses}


def read_recorded_steps(path: str | Path) -> list[RecordedStep]:
    """The steps of a trajectory file (a torn last line is skipped); ReplayError naming a line that is not a step."""
    lines = Path(path).read_text(encoding="utf-8", errors="replace").split("\n")
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            out.append(RecordedStep(step=int(d["step"]), url=str(d["url"]), action=dict(d["action"]),
                                    state=dict(d["state"]), text_hash=str(d["text_hash"]), tab=int(d.get("tab", 0))))
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            if n == len(lines):  # no newline after it: written partially
                break
            raise ReplayError(f"{path}: line {n}: not a trajectory step ({type(exc).__name__}: {exc})") from None
    return out


def step_diff(recorded: RecordedStep, replayed: Captured | None, archive_text: str | None,
              ignore: frozenset[str] = VOLATILE_KEYS) -> dict[str, Any]:
    """What differs between a recorded and a replayed step ({} when they match).

    `state`: key -> [recorded, replayed] (None for a missing key); `url`: [recorded, replayed] (origin ignored);
    `text_hash`: [recorded, replayed]; `archive_text_hash`: [the archive's text record digest, replayed].
    """
    if replayed is None:
        return {"error": "no step was captured after the action"}
    out: dict[str, Any] = {}
    keys = (set(recorded.state) | set(replayed.state)) - ignore
    state = {k: [recorded.state.get(k), replayed.state.get(k)] for k in sorted(keys)
             if recorded.state.get(k) != replayed.state.get(k)}
    if state:
        out["state"] = state
    if local_part(recorded.url) != local_part(replayed.url):
        out["url"] = [recorded.url, replayed.url]
    if recorded.text_hash != replayed.text_hash:
        out["text_hash"] = [recorded.text_hash, replayed.text_hash]
    if archive_text is not None and archive_text != replayed.text_hash:
        out["archive_text_hash"] = [archive_text, replayed.text_hash]
    return out
