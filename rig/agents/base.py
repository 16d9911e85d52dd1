"""The one agent interface: an agent gets an `EpisodeEnv` and returns an answer (or None)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

from playwright.async_api import BrowserContext, Page

from rig.formats.answer import Answer
from rig.formats.task import Task

from rig.agents.usage import UsageMeter

if TYPE_CHECKING:
    from recorders import Recorder
    from rig.formats.episode import PolitenessRecord
    from rig.network.guard import NetworkGuard
    from rig.network.politeness import Politeness


@dataclass
class Budget:
    """Limits of one episode."""

    max_steps: int = 60
    timeout_s: float = 300.0
    #: No new step for this long ends the episode as `timeout` (the agent's failure); the time the recorder spends
    #: capturing a step is not counted.
    stall_s: float = 120.0
    #: No step and no output (`EpisodeEnv.usage`'s activity) for this long: the episode is hung, killed and counted
    #: as an infrastructure failure (retried); None: never (`rig run --stall-timeout`).
    stall_timeout_s: float | None = None


@dataclass
class EpisodeEnv:
    """Everything an agent may use during one episode. The page is already at `start_url` (about:blank for a task
    with `start_hidden`: the agent must find the site). Relative URLs of scripts resolve against `base_url`."""

    task: Task | None
    variant: str | None
    prompt: str
    start_url: str
    sites_url: str
    context: BrowserContext
    page: Page
    recorder: "Recorder"
    out_dir: Path
    budget: Budget
    cdp_url: str | None = None
    console: TextIO | None = None
    notes: dict[str, object] = field(default_factory=dict)
    #: Where relative URLs of action scripts resolve: a start_url task's start page, else the sites server.
    base_url: str = ""
    #: A live run's politeness, for the rig's own navigations (`rig.network.politeness.polite_goto`); None: not live.
    politeness: Politeness | None = None
    politeness_record: PolitenessRecord | None = None
    #: The context's network guard in live and allow-listed runs (`rig.network.guard`: what its proxy refused and
    #: why a connection failed); None: unguarded.
    network_guard: NetworkGuard | None = None
    #: What the agent spends and shows it is alive by (LLM calls, tool calls, observations, output): agents that
    #: know report it here; the runner writes it to episode.json's `usage`.
    usage: UsageMeter = field(default_factory=UsageMeter)

    @property
    def script_base(self) -> str:
        """The URL relative script URLs resolve against."""
        return self.base_url or self.sites_url


class Agent(Protocol):
    """An agent kind. `needs_cdp` asks the runner for a browser reachable over CDP."""

    name: str
    model: str | None
    needs_cdp: bool

    async def run(self, env: EpisodeEnv) -> Answer | None:
        """Solve the episode's task in `env`; raise AgentError on the agent's own failure."""
        ...


def read_answer_text(path: Path) -> str:
    """Read an answer file handed in from outside (operator, submit)."""
    return Path(path).read_text(encoding="utf-8")
