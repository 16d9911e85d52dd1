"""The episode runner: statuses, budgets, retries of infrastructure failures, concurrency and resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from rig.agents.base import Budget, EpisodeEnv
from rig.agents.scripts import ReferenceAgent
from rig.episode_dir import EpisodeDir, slug
from rig.formats.answer import Answer
from rig.runner.local import plan, run_local
from rig.runner.spec import EpisodeSpec
from rig.tasks import bundled_tasks, resolve_task

TASK = resolve_task("eco-02")


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def _run(agent, tmp_path, budget=Budget(max_steps=60, timeout_s=60, stall_s=30), specs=None, concurrency=1,
               sites_url="", browser=None):
    specs = specs or [EpisodeSpec(TASK, "constraint", agent.name, 0)]
    return await run_local(specs, agent, tmp_path, sites_url=sites_url, budget=budget, concurrency=concurrency,
                           browser=browser)


class Sleeper:
    """Never acts: hangs until cancelled."""

    name, model, needs_cdp = "test:sleeper", None, False

    async def run(self, env: EpisodeEnv) -> Answer | None:
        await asyncio.sleep(3600)


class Looper:
    """Clicks the same thing forever (one step per click)."""

    name, model, needs_cdp = "test:looper", None, False

    async def run(self, env: EpisodeEnv) -> Answer | None:
        while True:
            async with env.recorder.action({"type": "click", "target": "body", "value": None}):
                await env.page.locator("body").click()


class Raiser:
    """Fails on its own."""

    name, model, needs_cdp = "test:raiser", None, False

    async def run(self, env: EpisodeEnv) -> Answer | None:
        raise KeyError("the agent's own bug")


class CrashOnce:
    """Crashes the browser on its first episode attempt, then behaves like the reference agent."""

    name, model, needs_cdp = "test:crash-once", None, False

    def __init__(self) -> None:
        self.crashed = False

    async def run(self, env: EpisodeEnv) -> Answer | None:
        if not self.crashed:
            self.crashed = True
            cdp = await env.context.browser.new_browser_cdp_session()
            try:
                await cdp.send("Browser.crash")
            except Exception:
                pass
            await env.page.goto(env.start_url)  # the dead browser makes this fail
        return await ReferenceAgent().run(env)


async def test_reference_episode_writes_everything(tmp_path, sites_url, browser):
    [ep] = await _run(ReferenceAgent(), tmp_path, sites_url=sites_url, browser=browser)
    d = EpisodeSpec(TASK, "constraint", "reference", 0).directory(tmp_path)
    assert ep.status == "ok" and EpisodeDir(d).read_episode().status == "ok"
    saved = EpisodeDir(d).read_episode()
    assert saved.versions.playwright and saved.versions.chromium and saved.prompt.startswith(TASK.prompts.constraint)
    steps = _lines(d / "trajectory.jsonl")
    assert len(steps) == 1 + len(TASK.reference_solution) == saved.steps
    # each step waited for its page and read its state; the episode says how long that held the agent up
    assert 0 < saved.recording.settle_s < saved.seconds and 0 <= saved.recording.image_wait_s < saved.seconds
    assert steps[0]["action"]["type"] == "goto" and steps[0]["url"].endswith(TASK.start_path)
    answer = json.loads((d / "answer.json").read_text())
    assert answer["rows"] == TASK.gold.rows
    assert (d / "evidence.warc.gz").stat().st_size > 0


@pytest.mark.parametrize(
    "agent,budget,status,message",
    [
        (Sleeper(), Budget(timeout_s=2, stall_s=60), "timeout", "wall-clock budget of 2 s exceeded"),
        (Sleeper(), Budget(timeout_s=60, stall_s=1.5), "timeout", "stalled: no new step for 1.5 s"),
        (Looper(), Budget(max_steps=5, timeout_s=60, stall_s=30), "agent_error", "step budget of 5 exceeded"),
        (Raiser(), Budget(), "agent_error", "KeyError"),
    ],
    ids=["timeout", "stall", "max-steps", "raises"],
)
async def test_budgets_and_agent_failures(tmp_path, sites_url, agent, budget, status, message, browser):
    [ep] = await _run(agent, tmp_path, budget=budget, sites_url=sites_url, browser=browser)
    assert ep.status == status
    assert message in ep.error
    assert ep.attempts == 1, "agent failures are not retried"
    d = EpisodeSpec(TASK, "constraint", agent.name, 0).directory(tmp_path)
    assert EpisodeDir(d).read_episode().status == status
    assert _lines(d / "trajectory.jsonl"), "steps recorded before the failure are kept"


async def test_killed_browser_is_retried_as_infrastructure(tmp_path, sites_url):
    agent = CrashOnce()
    [ep] = await _run(agent, tmp_path, sites_url=sites_url)
    assert ep.status == "ok" and ep.attempts == 2
    d = EpisodeSpec(TASK, "constraint", agent.name, 0).directory(tmp_path)
    first = d / "attempts" / "1"
    assert (first / "trajectory.jsonl").exists(), "the failed attempt's recording is kept"
    assert _lines(first / "trajectory.jsonl")[0]["action"]["type"] == "goto"
    assert json.loads((d / "answer.json").read_text())["rows"] == TASK.gold.rows


async def test_concurrency_loses_no_step_and_resume_does_no_work_twice(tmp_path, sites_url, browser):
    """Two tasks of every bundled site (sites differ in how they load: the recorder must lose no step of any), four
    episodes at once."""
    by_site: dict[str, list] = {}
    for task in bundled_tasks():
        by_site.setdefault(task.site or "", []).append(task)
    tasks = [task for group in by_site.values() for task in group[:2]]
    agent = ReferenceAgent()
    specs = plan(tasks, ["constraint"], agent.name, 1, tmp_path, resume=False)
    # a budget far beyond any episode's length: this test is about lost steps, not budgets, and a busy machine
    # running four episodes at once must not turn into timeouts
    roomy = Budget(max_steps=60, timeout_s=1800, stall_s=900)
    episodes = await _run(agent, tmp_path, budget=roomy, specs=specs, concurrency=4, sites_url=sites_url, browser=browser)
    assert [e.status for e in episodes] == ["ok"] * len(tasks)
    for task, ep in zip(tasks, episodes):
        d = EpisodeSpec(task, "constraint", agent.name, 0).directory(tmp_path)
        steps = _lines(d / "trajectory.jsonl")
        assert [s["step"] for s in steps] == list(range(1 + len(task.reference_solution))), task.id
        assert ep.steps == len(steps)
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    assert plan(tasks, ["constraint"], agent.name, 1, tmp_path, resume=True) == []
    assert len(plan(tasks, ["constraint"], agent.name, 2, tmp_path, resume=True)) == len(tasks)
    again = plan(tasks[:1], ["constraint"], agent.name, 1, tmp_path, resume=False)
    assert [s.trial for s in again] == [1], "running again without --resume adds a trial"
    assert before == {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}


def test_agent_names_make_safe_directories(tmp_path):
    assert slug("scripted:../../etc/x.yaml") == "scripted_x"
    assert slug("perturbed:scope_drift") == "perturbed_scope_drift"
    spec = EpisodeSpec(TASK, "goal", "scripted:/abs/path/s.yaml", 3)
    assert spec.directory(tmp_path).path == tmp_path / TASK.id / "goal" / "scripted_s" / "trial-3"


def test_unknown_agent_is_an_input_error():
    from rig.agents.registry import make_agent
    from rig.errors import InputError

    with pytest.raises(InputError, match="unknown agent 'robot'"):
        make_agent("robot")
    with pytest.raises(InputError, match="unknown perturbation 'typo'"):
        make_agent("perturbed:typo")


# --- a runs directory never gets silently mixed (issue 17, item 2) ---

def _finished(d: EpisodeDir, agent: str, status: str = "ok") -> EpisodeDir:
    from rig.formats.episode import Episode

    ep = Episode(task_id=TASK.id, variant="constraint", agent=agent)
    ep.finish(status)  # type: ignore[arg-type]
    d.write_episode(ep)
    (d / "trajectory.jsonl").write_text('{"step": 0}\n')
    return d


def test_agents_of_one_name_are_told_apart(tmp_path):
    from rig.agents.scripts import ScriptedAgent
    from rig.runner.spec import agent_identity

    scripts = []
    for folder, url in (("a", "http://127.0.0.1:9/one"), ("b", "http://127.0.0.1:9/two")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.yaml").write_text(f"- goto: {url}\n")
        scripts.append(ScriptedAgent(str(tmp_path / folder / "x.yaml")))
    first, second = (agent_identity(a) for a in scripts)
    assert first != second and len(first) == 10
    runs = tmp_path / "runs"
    [one] = plan([TASK], ["constraint"], scripts[0].name, 1, runs, resume=True, identity=first)
    _finished(one.directory(runs), scripts[0].name)
    assert plan([TASK], ["constraint"], scripts[0].name, 1, runs, resume=True, identity=first) == []
    [two] = plan([TASK], ["constraint"], scripts[1].name, 1, runs, resume=True, identity=second)
    assert two.directory(runs).path != one.directory(runs).path, "--resume must not take the second script as done"
    assert one.directory(runs).path.parent.name == f"scripted_x-{first}"

    class ModelAgent:
        name, model, path = "browser-use", "openai:gpt-4.1-mini", None

    assert agent_identity(ModelAgent()) == "openai:gpt-4.1-mini"
    assert slug("browser-use", "openai:gpt-4.1-mini") == "browser-use-openai_gpt-4.1-mini"


def test_a_new_trial_never_reuses_a_directory(tmp_path):
    from rig.errors import InputError
    from rig.runner.local import claim

    runs = tmp_path / "runs"
    for t in (0, 1, 2):
        _finished(EpisodeSpec(TASK, "constraint", "reference", t).directory(runs), "reference")
    import shutil

    shutil.rmtree(EpisodeSpec(TASK, "constraint", "reference", 1).directory(runs).path)  # a removed trial
    [new] = plan([TASK], ["constraint"], "reference", 1, runs, resume=False)
    assert new.trial == 3, "after trial-1 is removed, a new run must not write into trial-2"
    # two runs into one runs directory at the same moment plan the same trial: the first to create it has it
    assert [s.trial for s in claim([new], runs, resume=False)] == [3]
    assert [s.trial for s in claim([new], runs, resume=False)] == [4]

    done = EpisodeSpec(TASK, "constraint", "reference", 2)
    with pytest.raises(InputError, match="trial-2: holds a finished episode; a finished episode is never written"):
        claim([done], runs, resume=True)
    before = done.directory(runs).trajectory_file.read_text()
    stray = EpisodeSpec(TASK, "constraint", "reference", 6)
    stray.directory(runs).path.mkdir(parents=True)
    (stray.directory(runs) / "trajectory.jsonl").write_text('{"step": 0}\n')
    assert [s.trial for s in claim([stray, stray], runs, resume=False)] == [7, 8], "files of an earlier run are left"
    assert (stray.directory(runs) / "trajectory.jsonl").read_text() == '{"step": 0}\n'
    assert done.directory(runs).trajectory_file.read_text() == before


def test_resume_keeps_an_unfinished_run_aside(tmp_path):
    from rig.runner.local import claim

    runs = tmp_path / "runs"
    spec = EpisodeSpec(TASK, "constraint", "reference", 0)
    d = _finished(spec.directory(runs), "reference", status="infra_error")
    (d.path / "attempts" / "1").mkdir(parents=True)
    (d.path / "attempts" / "1" / "trajectory.jsonl").write_text('{"step": 0}\n')
    assert plan([TASK], ["constraint"], "reference", 1, runs, resume=True) == [spec]
    claim([spec], runs, resume=True)
    assert d.is_empty() or sorted(p.name for p in d.path.iterdir()) == ["attempts"]
    kept = d.path / "attempts" / "unfinished-1"
    assert (kept / "episode.json").exists() and (kept / "trajectory.jsonl").exists()
    assert (kept / "attempts" / "1" / "trajectory.jsonl").exists(), "its failed attempts are kept with it"
    assert d.attempts() == [], "the new run's own retries start at attempts/1 again"


def test_rig_record_never_writes_into_an_existing_episode(tmp_path):
    from typer.testing import CliRunner

    from rig.cli import app

    script = tmp_path / "s.yaml"
    script.write_text("- goto: http://127.0.0.1:9/\n")
    out = _finished(EpisodeDir(tmp_path / "episode"), "scripted")
    before = out.trajectory_file.read_text()
    res = CliRunner().invoke(app, ["record", "--script", str(script), "--out", str(out.path)])
    assert res.exit_code == 2  # bad input
    assert "episode: already holds a recorded episode; a recording is never written into an existing episode" in \
        " ".join(res.stderr.split())
    assert out.trajectory_file.read_text() == before


def test_several_agents_share_one_run(tmp_path, sites_url):
    from typer.testing import CliRunner

    from rig.cli import app

    runs = tmp_path / "runs"
    res = CliRunner().invoke(app, ["run", "--task", "eco-02", "--variant", "constraint", "--agent", "reference",
                                   "--agent", "perturbed:scope_drift", "--agent", "reference", "--out", str(runs),
                                   "--sites-url", sites_url, "--concurrency", "2"])
    assert res.exit_code == 0, res.output
    eps = {d.parent.name: EpisodeDir(d).read_episode() for d in runs.glob("eco-02/constraint/*/trial-0")}
    assert sorted(eps) == ["perturbed_scope_drift", "reference"], "an agent named twice runs once"
    assert {e.agent for e in eps.values()} == {"reference", "perturbed:scope_drift"}
    assert all(e.status == "ok" for e in eps.values())
    assert not list(runs.glob("eco-02/constraint/*/trial-1"))
