"""Retrying what the infrastructure broke (`rig run --retry-infra N`, `--stall-timeout S`): a crashed tab or browser
and a hung episode are retried with every failed attempt kept under attempts/<n>/; an agent's own failure never is;
`--resume --retry-infra` runs only the earlier run's infrastructure failures again, and goes on counting attempts."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from rig.agents.base import Budget, EpisodeEnv
from rig.agents.scripts import ReferenceAgent
from rig.episode_dir import EpisodeDir
from rig.formats.answer import Answer
from rig.formats.episode import Episode
from rig.runner.config import RunConfig
from rig.runner.local import claim, plan, run_local
from rig.runner.retry import RetryPolicy
from rig.runner.run import run
from rig.runner.spec import EpisodeSpec
from rig.tasks import resolve_task

TASK = resolve_task("eco-02")
QUICK = RetryPolicy(retries=1, backoff_s=0.05, backoff_max_s=0.1)


def _spec(agent) -> EpisodeSpec:
    return EpisodeSpec(TASK, "constraint", agent.name, 0)


class TabCrasher:
    """Crashes its tab's renderer (CDP `Page.crash`) on the first `times` attempts, then acts on the dead tab (which
    fails); later attempts behave like the reference agent."""

    name, model, needs_cdp = "test:tab-crasher", None, False

    def __init__(self, times: int) -> None:
        self.times, self.crashes = times, 0

    async def run(self, env: EpisodeEnv) -> Answer | None:
        if self.crashes < self.times:
            self.crashes += 1
            cdp = await env.context.new_cdp_session(env.page)
            crashed = asyncio.get_running_loop().create_future()
            env.page.once("crash", lambda _: crashed.set_result(True))
            # the renderer dies before it answers: the command's answer is never awaited (it would wait out CDP's
            # own timeout), only the page's crash event
            send = asyncio.ensure_future(cdp.send("Page.crash"))
            send.add_done_callback(lambda f: f.cancelled() or f.exception())
            await crashed  # Playwright saw the renderer die
            send.cancel()
            await env.page.goto(env.start_url)  # fails: the tab is dead
        return await ReferenceAgent().run(env)


class HangOnce:
    """Does nothing at all on its first attempt (no step, no output: hung); then behaves like the reference agent."""

    name, model, needs_cdp = "test:hang-once", None, False

    def __init__(self) -> None:
        self.hung = False

    async def run(self, env: EpisodeEnv) -> Answer | None:
        if not self.hung:
            self.hung = True
            await asyncio.Event().wait()
        return await ReferenceAgent().run(env)


class Thinker:
    """Takes no step for a while but keeps showing it is alive (as a model streaming output would), then answers."""

    name, model, needs_cdp = "test:thinker", None, False

    async def run(self, env: EpisodeEnv) -> Answer | None:
        for _ in range(20):  # 4 s of output and no step: longer than the stall timeout, never silent for it
            env.usage.tick()
            await asyncio.sleep(0.2)
        return Answer(columns=TASK.output.columns, rows=TASK.gold.rows)  # no step after it: no step's time counts


class Raiser:
    """Fails on its own, every time."""

    name, model, needs_cdp = "test:raiser", None, False

    def __init__(self) -> None:
        self.runs = 0

    async def run(self, env: EpisodeEnv) -> Answer | None:
        self.runs += 1
        raise KeyError("the agent's own bug")


async def test_a_crashed_tab_is_retried_and_recovers_with_the_failed_attempt_kept(tmp_path, sites_url):
    agent = TabCrasher(times=1)
    [ep] = await run_local([_spec(agent)], agent, tmp_path, sites_url=sites_url, budget=Budget(timeout_s=90),
                           retry=QUICK)
    assert ep.status == "ok" and ep.attempts == 2, ep.error
    d = _spec(agent).directory(tmp_path)
    [first] = d.attempts()
    failed = first.read_episode()
    assert failed.status == "infra_error" and "a tab crashed during the episode (tab 0" in failed.error, failed.error
    assert failed.usage is not None and failed.usage.steps == 1, "the failed attempt keeps its own record"
    assert [s.action.type for s in first.steps()] == ["goto"], "and its recording"
    assert d.read_answer().rows == TASK.gold.rows


async def test_retries_stop_at_retry_infra_and_an_agent_error_is_never_retried(tmp_path, sites_url):
    crasher, raiser = TabCrasher(times=99), Raiser()
    episodes = await run_local([_spec(crasher), _spec(raiser)], {(a.name, ""): a for a in (crasher, raiser)},
                               tmp_path, sites_url=sites_url, budget=Budget(timeout_s=90),
                               retry=RetryPolicy(retries=2, backoff_s=0.05, backoff_max_s=0.1), concurrency=2)
    crashed, raised = episodes
    assert crashed.status == "infra_error" and crashed.attempts == 3 and crasher.crashes == 3
    d = _spec(crasher).directory(tmp_path)
    assert [a.path.name for a in d.attempts()] == ["1", "2"], "the last attempt stays in the episode directory"
    assert all(a.read_episode().status == "infra_error" for a in d.attempts())
    assert raised.status == "agent_error" and "KeyError" in raised.error
    assert raised.attempts == 1 and raiser.runs == 1 and _spec(raiser).directory(tmp_path).attempts() == []


async def test_a_hung_episode_is_killed_at_the_stall_timeout_and_retried(tmp_path, sites_url):
    hang, thinker = HangOnce(), Thinker()
    budget = Budget(timeout_s=120, stall_s=60, stall_timeout_s=3.0)
    episodes = await run_local([_spec(hang), _spec(thinker)], {(a.name, ""): a for a in (hang, thinker)}, tmp_path,
                               sites_url=sites_url, budget=budget, retry=QUICK, concurrency=2)
    hung, thought = episodes
    assert hung.status == "ok" and hung.attempts == 2, hung.error
    [first] = _spec(hang).directory(tmp_path).attempts()
    killed = first.read_episode()
    assert killed.status == "infra_error"
    assert killed.error == "hung: no step and no output for 3 s (--stall-timeout); killed"
    assert [s.action.type for s in first.steps()] == ["goto"]
    assert thought.status == "ok" and thought.attempts == 1, "output without steps is not a hang"


async def test_a_hung_episode_without_retries_ends_as_infrastructure(tmp_path, sites_url):
    agent = HangOnce()
    [ep] = await run_local([_spec(agent)], agent, tmp_path, sites_url=sites_url,
                           budget=Budget(timeout_s=120, stall_s=60, stall_timeout_s=1.0), retry=RetryPolicy(retries=0))
    assert ep.status == "infra_error" and ep.attempts == 1 and "hung" in ep.error
    assert _spec(agent).directory(tmp_path).read_episode().status == "infra_error"


def _episode(d: EpisodeDir, status: str, attempts: int = 1) -> None:
    ep = Episode(task_id=TASK.id, variant="constraint", agent="reference", trial=int(d.path.name[6:]))
    ep.finish(status)  # type: ignore[arg-type]
    ep.attempts = attempts
    d.path.mkdir(parents=True, exist_ok=True)
    d.write_episode(ep)
    (d / "trajectory.jsonl").write_text('{"step": 0}\n')


def test_resume_with_retry_infra_plans_only_the_infrastructure_failures(tmp_path):
    runs = tmp_path / "runs"
    dirs = [EpisodeSpec(TASK, "constraint", "reference", t).directory(runs) for t in range(5)]
    for d, status in zip(dirs, ("ok", "agent_error", "infra_error", "incomplete")):
        _episode(d, status)
    # trial-4 never ran
    assert [s.trial for s in plan([TASK], ["constraint"], "reference", 5, runs, resume=True)] == [2, 3, 4]
    assert [s.trial for s in plan([TASK], ["constraint"], "reference", 5, runs, resume=True, only_infra=True)] == [2, 3]


def test_rig_run_resume_retry_infra_reruns_only_infra_failures_and_goes_on_counting(tmp_path, sites_url):
    runs = tmp_path / "runs"
    dirs = [EpisodeSpec(TASK, "constraint", "reference", t).directory(runs) for t in range(3)]
    _episode(dirs[0], "ok")
    _episode(dirs[1], "timeout")
    _episode(dirs[2], "infra_error", attempts=2)  # an earlier run's infra failure, its first attempt kept
    (dirs[2].path / "attempts" / "1").mkdir(parents=True)
    (dirs[2].path / "attempts" / "1" / "trajectory.jsonl").write_text('{"step": 0}\n')
    before = {p: p.read_bytes() for d in dirs[:2] for p in d.path.rglob("*") if p.is_file()}
    episodes = run(RunConfig([TASK.id], "reference", runs, variants=["constraint"], trials=4, resume=True,
                             retry_infra=1, sites_url=sites_url, step_images="off", budget=Budget(timeout_s=90)))
    assert [(e.trial, e.status) for e in episodes] == [(2, "ok")], "trial-3 never ran, and is not run"
    assert not EpisodeSpec(TASK, "constraint", "reference", 3).directory(runs).path.exists()
    assert before == {p: p.read_bytes() for d in dirs[:2] for p in d.path.rglob("*") if p.is_file()}
    rerun = dirs[2]
    assert episodes[0].attempts == 3, "two earlier attempts and this one"
    assert [a.path.name for a in rerun.attempts()] == ["1", "2"]
    assert rerun.attempts()[1].read_episode().status == "infra_error", "the earlier run's last attempt, kept as 2"
    assert json.loads(rerun.answer_file.read_text())["rows"] == TASK.gold.rows


@pytest.mark.parametrize("flags,message", [
    (["--retry-infra", "-1"], "--retry-infra: must be 0 (no retry) or more"),
    (["--stall-timeout", "0"], "--stall-timeout: must be more than 0 seconds"),
])
def test_bad_retry_flags_are_input_errors(tmp_path, flags, message):
    from typer.testing import CliRunner

    from rig.cli import app

    res = CliRunner().invoke(app, ["run", "--task", TASK.id, "--agent", "reference", "--out", str(tmp_path / "r"),
                                   *flags])
    assert res.exit_code == 2 and message in " ".join(res.stderr.split()), res.output
    assert not Path(tmp_path / "r").exists()
