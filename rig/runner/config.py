"""`RunConfig`: everything one `rig run` is asked to do (the CLI, the demo and tests build one)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rig.agents.base import Budget
from rig.errors import InputError
from rig.network.politeness import Politeness
from rig.network.settings import Network
from rig.runner.retry import DEFAULT_RETRIES, RetryPolicy
from rig.step_images import StepImages, recorder_options

VARIANTS = ("constraint", "goal")


@dataclass
class RunConfig:
    """What `rig run` is asked to do: which episodes, with which agents, where, and under which rules."""

    tasks: list[str]
    #: One agent name, or several: every agent runs every (task, variant, trial), sharing one browser and sites server.
    agent: str | list[str]
    runs_dir: Path
    variants: list[str] | None = None
    trials: int = 1
    concurrency: int = 1
    resume: bool = False
    model: str | None = None
    answer_file: Path | None = None
    budget: Budget = field(default_factory=Budget)
    #: Use sites already running there instead of serving the bundled ones.
    sites_url: str | None = None
    executor: Literal["local", "ray"] = "local"
    #: Answer every request from these site snapshots (no network).
    frozen: Path | None = None
    headless: bool = True
    #: A live run reaches only the sites server and these hosts (HOST or HOST:PORT).
    allow_hosts: list[str] | None = None
    #: The browser may reach the network (`--live`); else loopback only.
    live: bool = False
    #: Host mappings, `HOST=ADDR:PORT` (`--resolve`).
    resolve: list[str] = field(default_factory=list)
    #: Accept certificate errors (`--ignore-https-errors`).
    ignore_https_errors: bool = False
    #: A live run's politeness (None: the defaults of `rig.politeness.Politeness`).
    politeness: Politeness | None = None

    def network(self) -> Network:
        """The run's network settings (InputError naming a bad `--resolve`)."""
        return Network.of(self.live, self.resolve, self.ignore_https_errors, self.politeness,
                          frozen=self.frozen is not None)
    #: Where step images come from (`rig.step_images`): live screenshots, DOM snapshots drawn later by
    #: `rig render`, or none.
    step_images: StepImages = "live"
    #: The `cli` agent's command (a shell command line run against the episode's MCP tool server).
    command: str | None = None
    #: Retries of an episode the infrastructure failed (`--retry-infra N`); None: the default (two). Given with
    #: `resume`, only the earlier run's infrastructure failures are run again.
    retry_infra: int | None = None

    @property
    def retry(self) -> RetryPolicy:
        """How the run retries infrastructure failures (rig.runner.retry)."""
        return RetryPolicy(retries=DEFAULT_RETRIES if self.retry_infra is None else self.retry_infra)

    @property
    def agents(self) -> list[str]:
        """The agent names, in the order given, each once."""
        names = [self.agent] if isinstance(self.agent, str) else list(self.agent)
        return list(dict.fromkeys(names))

    def check(self) -> None:
        """InputError naming the option that is wrong."""
        if not self.agents:
            raise InputError("--agent", None, "give at least one agent")
        recorder_options(self.step_images)  # InputError for a mode that is not one
        if self.step_images != "live" and self.executor == "ray":
            raise InputError("--step-images", None, "the ray executor records with the recorder's defaults: drop "
                                                    "--step-images or run with --executor local")
        if self.executor not in ("local", "ray"):
            raise InputError("--executor", None, f"{self.executor!r} is not an executor; use local or ray")
        for v in self.variants or []:
            if v not in VARIANTS:
                raise InputError("--variant", None, f"{v!r} is not one of {', '.join(VARIANTS)}")
        if self.trials < 1 or self.concurrency < 1:
            raise InputError("--trials/--concurrency", None, "must be at least 1")
        if self.retry_infra is not None and self.retry_infra < 0:
            raise InputError("--retry-infra", None, "must be 0 (no retry) or more")
        hang = self.budget.stall_timeout_s
        if hang is not None and hang <= 0:
            raise InputError("--stall-timeout", None, "must be more than 0 seconds")
        if self.frozen is not None and self.executor != "local":
            raise InputError("--frozen", None, "frozen runs use the local executor")
        if self.frozen is not None and self.live:
            raise InputError("--live", None, "a run is either live or --frozen (answered from a snapshot with no "
                                             "network), not both")
        p = self.politeness
        if p is not None and (p.rate_per_host < 0 or p.max_per_host < 0):
            raise InputError("--rate-limit/--max-per-host", None, "must be 0 (no limit) or more")
