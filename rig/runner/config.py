"""`RunConfig`: everything one `rig run` is asked to do (the CLI, the demo and tests build one)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rig.agents.base import Agent, Budget
from rig.errors import InputError
from rig.network.politeness import Politeness
from rig.network.settings import Network
from rig.runner.retry import DEFAULT_RETRIES, RetryPolicy
from rig.runner.step_images import StepImages, recorder_options

VARIANTS = ("constraint", "goal")


def resource_amounts(values: list[str]) -> dict[str, float]:
    """`--ray-resource NAME[=AMOUNT]` values as a mapping (AMOUNT 1 when left out); InputError naming a bad one."""
    out: dict[str, float] = {}
    for value in values:
        name, _, amount = value.partition("=")
        try:
            out[name.strip()] = float(amount) if amount else 1.0
        except ValueError:
            raise InputError("--ray-resource", None, f"{value!r}: give NAME or NAME=AMOUNT (a number)") from None
    return out


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
    #: A live run's politeness (None: the defaults of `rig.network.politeness.Politeness`).
    politeness: Politeness | None = None

    def network(self) -> Network:
        """The run's network settings (InputError naming a bad `--resolve`)."""
        return Network.of(self.live, self.resolve, self.ignore_https_errors, self.politeness,
                          frozen=self.frozen is not None)
    #: Where step images come from (`rig.runner.step_images`): live screenshots, DOM snapshots drawn later by
    #: `rig render`, or none.
    step_images: StepImages = "live"
    #: The `cli` agent's command (a shell command line run against the episode's MCP tool server).
    command: str | None = None
    #: `--executor ray`: the cluster to join (`HOST:PORT` of its head; None: `RAY_ADDRESS`, else a local instance).
    ray_address: str | None = None
    #: `--executor ray`: custom resources each worker (one browser) takes, e.g. `{"rig": 1}`: workers run only on
    #: nodes that offer them, and as many per node as they offer.
    ray_resources: dict[str, float] = field(default_factory=dict)
    #: Retries of an episode the infrastructure failed (`--retry-infra N`); None: the default (two). Given with
    #: `resume`, only the earlier run's infrastructure failures are run again.
    retry_infra: int | None = None

    @property
    def retry(self) -> RetryPolicy:
        """How the run retries infrastructure failures (rig.runner.retry)."""
        return RetryPolicy(retries=DEFAULT_RETRIES if self.retry_infra is None else self.retry_infra)

    #: Per agent name, the ids of the tasks it runs (an agent not named runs every task): a run designed pair by pair,
    #: e.g. the demo's, where each fault is injected into one task.
    tasks_by_agent: dict[str, list[str]] | None = None

    def runs_task(self, agent: str, task_id: str) -> bool:
        """Whether the agent named `agent` runs the task `task_id` in this run (`tasks_by_agent`)."""
        return self.tasks_by_agent is None or agent not in self.tasks_by_agent or task_id in self.tasks_by_agent[agent]

    @property
    def agents(self) -> list[str]:
        """The agent names, in the order given, each once."""
        names = [self.agent] if isinstance(self.agent, str) else list(self.agent)
        return list(dict.fromkeys(names))

    def make_agents(self) -> dict[tuple[str, str], Agent]:
        """The run's agents by (name, identity), as the specs name them (each executor makes its own from here)."""
        from rig.agents.registry import make_agent
        from rig.runner.spec import agent_identity

        made = [make_agent(name, model=self.model, answer_file=self.answer_file, command=self.command)
                for name in self.agents]
        return {(agent.name, agent_identity(agent)): agent for agent in made}

    def check(self) -> None:
        """InputError naming the option that is wrong."""
        if not self.agents:
            raise InputError("--agent", None, "give at least one agent")
        recorder_options(self.step_images)  # InputError for a mode that is not one
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
        if (self.ray_address or self.ray_resources) and self.executor != "ray":
            raise InputError("--ray-address/--ray-resource", None, "these place episodes on a Ray cluster: add "
                                                                   "--executor ray")
        for name, amount in self.ray_resources.items():
            if not name or amount <= 0:
                raise InputError("--ray-resource", None, f"{name}={amount}: give NAME=AMOUNT with an amount above 0")
        if self.frozen is not None and self.live:
            raise InputError("--live", None, "a run is either live or --frozen (answered from a snapshot with no "
                                             "network), not both")
        p = self.politeness
        if p is not None and (p.rate_per_host < 0 or p.max_per_host < 0):
            raise InputError("--rate-limit/--max-per-host", None, "must be 0 (no limit) or more")
