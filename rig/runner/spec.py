"""What one episode is: (task, variant, agent, trial), and where its directory lives."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rig.errors import InputError
from rig.tasks.models import Task

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def slug(text: str) -> str:
    """A file-name-safe form of an agent name (`scripted:runs/x.yaml` -> `scripted_x`)."""
    kind, _, arg = text.partition(":")
    if arg and kind == "scripted":
        arg = Path(arg).stem
    out = _UNSAFE.sub("_", f"{kind}_{arg}" if arg else kind).strip("._")
    if not out:
        raise InputError(text, None, "cannot make a directory name of this agent name")
    return out


@dataclass(frozen=True)
class EpisodeSpec:
    """One unit of work for an executor."""

    task: Task
    variant: str
    agent: str
    trial: int

    def directory(self, runs_dir: Path) -> Path:
        """`RUNS_DIR/<task>/<variant>/<agent>/trial-<n>`, always inside RUNS_DIR."""
        path = runs_dir / self.task.id / self.variant / slug(self.agent) / f"trial-{self.trial}"
        if runs_dir.resolve() not in path.resolve().parents:
            raise InputError(str(path), None, "an episode directory must stay inside the runs directory")
        return path

    @property
    def label(self) -> str:
        """A short human-readable name."""
        return f"{self.task.id}/{self.variant}/{self.agent}#{self.trial}"
