"""Real runs for the report, interval, revision, compare and leaderboard tests: episodes of the bundled agents recorded
once per test session by the real runner in the session's browser (`rig.runner.run.run_async`, step images off),
graded by `rig grade`'s code.

The session fixture `real_runs` (tests/conftest.py) records them into one runs directory; `copy_run` makes a runs
directory of some of its episodes (A and B of a comparison), graded on its own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from playwright.async_api import Browser

from rig.agents.base import Budget
from rig.episode_dir import RunsDir
from rig.grading.runs import grade_runs

#: Two environmental-monitoring tasks (a family with two tasks) and an evidence-records task (transport).
TASKS = ("eco-01", "eco-02", "flights-06")
AGENTS = ("reference", "perturbed:scope_drift", "perturbed:page_misreading")
TRIALS = 2
VARIANT = "constraint"


async def record_real_runs(root: Path, sites_url: str, browser: Browser) -> Path:
    """Record every (task, agent, trial) of TASKS x AGENTS x TRIALS on the constraint variant into `root` in
    `browser`, grade it."""
    from rig.runner.config import RunConfig
    from rig.runner.run import run_async

    episodes = await run_async(RunConfig(list(TASKS), list(AGENTS), root, variants=[VARIANT], trials=TRIALS,
                                         concurrency=2, sites_url=sites_url, step_images="off",
                                         budget=Budget(timeout_s=180)), browser=browser)
    assert len(episodes) == len(TASKS) * len(AGENTS) * TRIALS
    assert [e.status for e in episodes if e.status != "ok"] == [], [(e.task_id, e.agent, e.error) for e in episodes]
    grade_runs(root)
    return root


def episode_path(root: Path, task: str, agent: str, trial: int = 0) -> Path:
    """The directory of one episode of a runs directory laid out by the runner."""
    return RunsDir(root).episode(task, VARIANT, agent, trial).path


def copy_run(source: Path, dest: Path, agents: tuple[str, ...], tasks: tuple[str, ...] = TASKS) -> Path:
    """A runs directory holding the episodes of `agents` on `tasks` copied from `source`, graded there."""
    for task in tasks:
        for agent in agents:
            from_dir = episode_path(source, task, agent).parent
            shutil.copytree(from_dir, episode_path(dest, task, agent).parent)
    grade_runs(dest)
    return dest
