"""Faults: the browser process killed mid-episode, misbehaving agents among well-behaved ones, eight episodes
recording at once. Nothing recorded before a fault is lost."""

from __future__ import annotations

import io
import json
import os
import signal
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from rigwarc.members import whole_gzip_members
from rig.agents.base import Budget, EpisodeEnv
from rig.agents.scripted import ScriptRunner
from rig.agents.scripts import ReferenceAgent
from rig.episode_dir import EpisodeDir
from rig.formats.actions import parse_actions
from rig.formats.answer import Answer
from rig.runner.local import run_local
from rig.runner.spec import EpisodeSpec
from rig.tasks import resolve_task

TASK = resolve_task("eco-02")


async def browser_pid(env: EpisodeEnv) -> int:
    """The PID of the Chromium browser process the episode runs in (from Chromium itself, over CDP)."""
    cdp = await env.context.browser.new_browser_cdp_session()
    info = await cdp.send("SystemInfo.getProcessInfo")
    await cdp.detach()
    return next(p["id"] for p in info["processInfo"] if p["type"] == "browser")


class Killer:
    """Runs the reference solution, SIGKILLing the real Chromium process after `after` actions (the first `times`
    attempts); then carries on as if nothing happened, so the next action meets the dead browser."""

    name, model, needs_cdp = "test:killer", None, False

    def __init__(self, after: int, times: int) -> None:
        self.after, self.times = after, times
        self.killed: list[int] = []

    async def run(self, env: EpisodeEnv) -> Answer | None:
        actions = parse_actions(env.task.reference_solution, env.task.id)
        runner = ScriptRunner(env.page, env.sites_url, hook=env.recorder)
        if len(self.killed) < self.times:
            await runner.run(actions[: self.after])
            pid = await browser_pid(env)
            assert "chromium" in Path(f"/proc/{pid}/cmdline").read_text()
            os.kill(pid, signal.SIGKILL)
            self.killed.append(pid)
            actions = actions[self.after:]
        return (await runner.run(actions)).answer


def lines(path: Path) -> list[dict]:
    """Every line of a JSONL file, each required to be a whole JSON object ending in a newline."""
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n"), f"{path}: torn last line"
    return [json.loads(x) for x in text.splitlines()]


def warc_records(path: Path) -> list:
    """(type, headers) of every record; the archive must be whole gzip members that warcio reads to the end."""
    data = path.read_bytes()
    assert whole_gzip_members(data) == len(data), f"{path}: torn record"
    out = []
    for rec in ArchiveIterator(io.BytesIO(data)):
        rec.content_stream().read()
        out.append((rec.rec_type, rec.rec_headers))
    return out


def assert_intact(directory: Path, at_least: int) -> list[dict]:
    """The recording in `directory` is whole up to the kill: steps numbered from 0, each with its text record."""
    steps = lines(directory / "trajectory.jsonl")
    assert [s["step"] for s in steps] == list(range(len(steps))) and len(steps) >= at_least, directory
    ids = {h.get_header("WARC-Record-ID") for _, h in warc_records(directory / "evidence.warc.gz")}
    assert all(s["snapshot"]["warc_record_id"] in ids for s in steps if s.get("snapshot")), directory
    return steps


async def test_browser_killed_on_every_attempt_ends_infra_error_with_every_attempt_intact(tmp_path, sites_url):
    agent = Killer(after=3, times=99)
    [ep] = await run_local([EpisodeSpec(TASK, "constraint", agent.name, 0)], agent, tmp_path, sites_url=sites_url,
                           budget=Budget(timeout_s=90))
    assert ep.status == "infra_error" and ep.attempts == 3, ep.error
    assert len(set(agent.killed)) == 3 and not any(Path(f"/proc/{p}").exists() for p in agent.killed)
    d = EpisodeSpec(TASK, "constraint", agent.name, 0).directory(tmp_path)
    assert EpisodeDir(d).read_episode().status == "infra_error"
    for attempt in (d / "attempts" / "1", d / "attempts" / "2", d):  # the last attempt stays in the episode directory
        steps = assert_intact(attempt, at_least=4)  # the start page and the three actions before the kill
        assert [s["action"]["type"] for s in steps[:4]] == ["goto", *[next(iter(a)) for a in TASK.reference_solution[:3]]]
        assert not (attempt / "answer.json").exists()


async def test_browser_killed_once_is_retried_to_ok(tmp_path, sites_url):
    agent = Killer(after=5, times=1)
    [ep] = await run_local([EpisodeSpec(TASK, "constraint", agent.name, 0)], agent, tmp_path, sites_url=sites_url,
                           budget=Budget(timeout_s=90))
    assert ep.status == "ok" and ep.attempts == 2, ep.error
    d = EpisodeSpec(TASK, "constraint", agent.name, 0).directory(tmp_path)
    assert_intact(d / "attempts" / "1", at_least=6)
    assert len(assert_intact(d, at_least=1)) == 1 + len(TASK.reference_solution)
    assert json.loads((d / "answer.json").read_text())["rows"] == TASK.gold.rows


class Moody:
    """Misbehaves by task: raises, hangs inside a browser call, or clicks the same thing forever; else the reference."""

    name, model, needs_cdp = "test:moody", None, False

    def __init__(self, raises: str, hangs: str, loops: str) -> None:
        self.raises, self.hangs, self.loops = raises, hangs, loops

    async def run(self, env: EpisodeEnv) -> Answer | None:
        if env.task.id == self.raises:
            raise RuntimeError("the agent's own bug")
        if env.task.id == self.hangs:
            await env.page.wait_for_selector("#never-there", timeout=0)  # no timeout: waits forever
        if env.task.id == self.loops:
            while True:
                async with env.recorder.action({"type": "click", "target": "h1", "value": None}):
                    await env.page.locator("h1").first.click()
        return await ReferenceAgent().run(env)


@pytest.mark.slow
async def test_misbehaving_agents_end_within_budget_and_the_others_carry_on(tmp_path, sites_url):
    ids = ["eco-01", "flights-01", "stats-01", "eco-03", "stats-02"]
    tasks = [resolve_task(i) for i in ids]
    agent = Moody(raises="eco-01", hangs="flights-01", loops="stats-01")
    budget = Budget(max_steps=25, timeout_s=60, stall_s=5)
    specs = [EpisodeSpec(t, "constraint", agent.name, 0) for t in tasks]
    episodes = await run_local(specs, agent, tmp_path, sites_url=sites_url, budget=budget, concurrency=3)
    got = {e.task_id: e for e in episodes}
    assert got["eco-01"].status == "agent_error" and "RuntimeError: the agent's own bug" in got["eco-01"].error
    assert got["flights-01"].status == "timeout" and "stalled: no new step for 5 s" in got["flights-01"].error
    assert got["stats-01"].status == "agent_error" and "step budget of 25 exceeded" in got["stats-01"].error
    # the budgets ended them (their messages above), and the recorder closed: no attempt was retried
    assert [got[i].attempts for i in ids] == [1] * len(ids)
    for t in tasks[3:]:
        ep = got[t.id]
        assert ep.status == "ok", (t.id, ep.error)
        d = EpisodeSpec(t, "constraint", agent.name, 0).directory(tmp_path)
        assert json.loads((d / "answer.json").read_text())["rows"] == t.gold.rows
    assert all(e.attempts == 1 for e in episodes), "agent failures are not retried"
    for t in tasks[:3]:  # what the misbehaving agents did before they were stopped is kept
        assert_intact(EpisodeSpec(t, "constraint", agent.name, 0).directory(tmp_path), at_least=1)


@pytest.mark.slow
async def test_eight_episodes_recording_at_once_lose_no_step_and_no_record(tmp_path, sites_url):
    ids = ["eco-01", "eco-02", "eco-03", "flights-01", "flights-02", "stats-01", "stats-02", "stats-03"]
    tasks = [resolve_task(i) for i in ids]
    agent = ReferenceAgent()
    specs = [EpisodeSpec(t, "constraint", agent.name, 0) for t in tasks]
    episodes = await run_local(specs, agent, tmp_path, sites_url=sites_url, budget=Budget(timeout_s=240, stall_s=120),
                               concurrency=8)
    assert [e.status for e in episodes] == ["ok"] * 8, [e.error for e in episodes]
    assert max(e.started_at for e in episodes) < min(e.ended_at for e in episodes), "all eight were recording at once"
    for t, ep in zip(tasks, episodes):
        d = EpisodeSpec(t, "constraint", agent.name, 0).directory(tmp_path)
        steps = assert_intact(d, at_least=1)
        assert len(steps) == 1 + len(t.reference_solution) == ep.steps, t.id
        records = warc_records(d / "evidence.warc.gz")
        texts = [h for kind, h in records if kind == "conversion" and h.get_header("WARC-Rig-Capture") == "text"]
        assert sorted(int(h.get_header("WARC-Rig-Step")) for h in texts) == list(range(len(steps))), t.id
        responses = {h.get_header("WARC-Record-ID") for kind, h in records if kind == "response"}
        requests = [h for kind, h in records if kind == "request"]
        answered = [h for h in requests if h.get_header("WARC-Concurrent-To")]
        assert len(answered) == len(responses) and all(h.get_header("WARC-Concurrent-To") in responses for h in answered)
        fetched = {h.get_header("WARC-Target-URI") for kind, h in records if kind == "response"}
        assert all(s["url"].split("#")[0] in fetched for s in steps if s["action"]["type"] in ("goto", "load")), t.id
        assert json.loads((d / "answer.json").read_text())["rows"] == t.gold.rows
