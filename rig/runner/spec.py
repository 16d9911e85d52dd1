"""What one episode is: (task, variant, agent, trial), or a task-less recording (`rig record`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from rig.agents.base import Agent
from rig.episode_dir import EpisodeDir, RunsDir
from rig.formats.files import read_limited
from rig.formats.task import Task


@dataclass(frozen=True)
class EpisodeSpec:
    """One unit of work for an executor. A task-less spec (`rig record`) starts at `start_url`, if any."""

    task: Task | None
    variant: str | None
    agent: str
    trial: int = 0
    start_url: str | None = None
    identity: str = ""

    def directory(self, runs: RunsDir | Path) -> EpisodeDir:
        """`RUNS_DIR/<task>/<variant>/<agent>[-<identity>]/trial-<n>`, always inside the runs directory."""
        assert self.task is not None and self.variant is not None, "a task-less episode is given its directory"
        runs = runs if isinstance(runs, RunsDir) else RunsDir(runs)
        return runs.episode(self.task.id, self.variant, self.agent, self.trial, self.identity)

    def start(self, sites_url: str) -> str | None:
        """Where the episode starts: the task's start page (on the sites server or any origin), else `start_url`."""
        return self.task.start_at(sites_url) if self.task is not None else self.start_url

    @property
    def label(self) -> str:
        """A short human-readable name."""
        return f"{self.task.id}/{self.variant}/{self.agent}#{self.trial}" if self.task else f"{self.agent}#{self.trial}"


def agent_identity(agent: Agent) -> str:
    """What tells this agent from others of the same name in a runs directory: the model it drives, a script's
    content digest (two scripts called `x.yaml` are two agents; an edited script is a new one), a command's digest."""
    parts = [agent.model] if agent.model else []
    path = getattr(agent, "path", None)
    if path is not None:
        parts.append(hashlib.sha256(read_limited(path, "the script")).hexdigest()[:10])
    command = getattr(agent, "command", None)
    if isinstance(command, str):  # a `cli` agent: two commands are two agents
        parts.append(hashlib.sha256(command.encode("utf-8")).hexdigest()[:10])
    return "-".join(parts)
