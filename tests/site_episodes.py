"""A bundled site's SGR-mini tasks recorded once per test module, through the real runner (constraint variant, no
step images), then graded: the reference agent on every task, each state fault (scope drift, criterion mismatch,
retrieval dependency: the task's own edits of the site's controls) on every task, and each answer-level fault on
the one task named for it; then the reference agent again in frozen mode, from the shipped snapshot, with a trap
listening where a frozen run must never connect. (`scripts/build_snapshots.py` records every fault on every task.)

    episodes = record_site("complaints", {"intent_rewriting": "complaints-04", ...}, directory, sites_url)
    episodes.grade("complaints-01", "perturbed:scope_drift").label
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from server import TestServer

from replay import FROZEN_ORIGIN
from rig.agents.perturbed import KINDS
from rig.formats.grade import Grade
from rig.formats.summary import Summary
from rig.grading.runs import grade_runs
from rig.runner.config import RunConfig
from rig.runner.run import run
from rig.tasks import bundled_tasks

SNAPSHOTS = Path(__file__).resolve().parents[1] / "site_snapshots"
STATE_FAULTS = ("scope_drift", "criterion_mismatch", "retrieval_dependency")
ANSWER_FAULTS = tuple(k for k in KINDS if k not in STATE_FAULTS)


@dataclass
class SiteEpisodes:
    """The graded episodes of one site: live (every agent) and frozen (the reference)."""

    live: dict[tuple[str, str], Grade]
    summary: Summary
    frozen: dict[str, Grade]
    #: What reached the frozen origin's port during the frozen run (None: the port was taken, not trapped).
    trapped: list[str] | None

    def grade(self, task_id: str, agent: str) -> Grade:
        """The live grade of one task's episode by one agent."""
        return self.live[task_id, agent]


def _grades(runs: Path) -> dict[tuple[str, str], Grade]:
    grades = [Grade.model_validate_json(p.read_text()) for p in runs.rglob("grade.json")]
    return {(g.task_id, g.agent): g for g in grades}


def site_task_ids(site: str) -> list[str]:
    """The ids of a site's bundled tasks."""
    return [t.id for t in bundled_tasks() if t.site == site]


def planned(site: str, answer_faults: dict[str, str]) -> list[tuple[str, str]]:
    """The (task id, agent) pairs `record_site` runs."""
    ids = site_task_ids(site)
    assert set(answer_faults) == set(ANSWER_FAULTS) and set(answer_faults.values()) <= set(ids)
    agents = ["reference", *(f"perturbed:{k}" for k in STATE_FAULTS)]
    return [(t, a) for t in ids for a in agents] + [(t, f"perturbed:{k}") for k, t in answer_faults.items()]


def record_site(site: str, answer_faults: dict[str, str], directory: Path, sites_url: str) -> SiteEpisodes:
    """Run, grade and freeze-run the tasks of `site` (see the module docstring); `answer_faults` names the task
    each answer-level fault runs on."""
    ids = site_task_ids(site)
    live = directory / "live"
    common = {"variants": ["constraint"], "sites_url": sites_url, "step_images": "off", "concurrency": 2}
    episodes = run(RunConfig(ids, ["reference", *(f"perturbed:{k}" for k in STATE_FAULTS)], live, **common))
    for kind, task in answer_faults.items():
        episodes += run(RunConfig([task], f"perturbed:{kind}", live, **common))
    assert [e.status for e in episodes] == ["ok"] * len(planned(site, answer_faults)), [
        (e.task_id, e.agent, e.error) for e in episodes if e.status != "ok"]
    summary = grade_runs(live)
    try:
        trap: TestServer | None = TestServer(port=urlsplit(FROZEN_ORIGIN).port, fallback=lambda ex: ex.send(500))
        trap.start()
    except OSError:
        trap = None  # another run holds the port: isolation then rests on the route handler (test_replay_route)
    frozen = directory / "frozen"
    try:
        episodes = run(RunConfig(ids, "reference", frozen, variants=["constraint"], frozen=SNAPSHOTS / site,
                                 step_images="off"))
    finally:
        if trap is not None:
            trap.stop()
    assert [(e.status, e.replay_misses) for e in episodes] == [("ok", 0)] * len(ids), episodes
    grade_runs(frozen)
    return SiteEpisodes(_grades(live), summary, {t: g for (t, _), g in _grades(frozen).items()},
                        None if trap is None else [r.target for r in trap.requests])
