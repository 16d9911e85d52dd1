"""Golden files: a trajectory recorded with a fixed clock and fixed ids, and the grade and summary of a fixed
runs directory, byte for byte (after the test's own temporary paths and ports are replaced by placeholders).

A change to any of these formats shows up here as a diff against `tests/data/golden/`. When the change is
meant, regenerate them with `RIG_UPDATE_GOLDEN=1 pytest tests/test_golden.py` and review the diff.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

from test_grade_run import runs  # noqa: F401  (the fixture: a synthetic runs directory)

from recorders import Action, Recorder, RecorderOptions
from rig.episode_dir import EpisodeDir, RunsDir
from rig.grading.runs import grade_runs

GOLDEN = Path(__file__).parent / "data" / "golden"
UPDATE = os.environ.get("RIG_UPDATE_GOLDEN") == "1"


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} missing: run RIG_UPDATE_GOLDEN=1 pytest tests/test_golden.py"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


async def test_trajectory_with_a_fixed_clock_and_ids(context, page, pages_url, tmp_path):
    ids = (f"<urn:uuid:00000000-0000-4000-8000-{n:012d}>" for n in itertools.count())
    rec = await Recorder.attach(context, tmp_path / "ep", options=RecorderOptions(screenshots="off", fsync=False),
                                clock=lambda: 1_000.0, ids=lambda: next(ids))
    for action, act in [
        (Action(type="goto", value=f"{pages_url}/index.html"), lambda: page.goto(f"{pages_url}/index.html")),
        (Action(type="select", target="#year", value="1890"), lambda: page.select_option("#year", "1890")),
        (Action(type="check", target="#unnamed-check"), lambda: page.check("#unnamed-check")),
        (Action(type="click", target="#tab-chart"), lambda: page.click("#tab-chart")),
    ]:
        async with rec.action(action, page=page):  # the typed form
            await act()
    async with rec.action({"type": "fill", "target": "#q", "value": "Boiga", "page": page}):  # the dict form
        await page.fill("#q", "Boiga")
    await rec.close()
    text = EpisodeDir(tmp_path / "ep").trajectory_file.read_text(encoding="utf-8")
    text = text.replace(pages_url, "http://pages.test")
    # which WARC record holds a step's text depends on how many exchanges came before it (a favicon, say)
    text = re.sub(r'"(warc|dom)_record_id":"<urn:uuid:[0-9a-f-]+>"', r'"\1_record_id":"<id>"', text)
    _check("trajectory.jsonl", text)


def test_grade_and_summary_of_a_fixed_runs_directory(runs):  # noqa: F811
    root, task_file = runs
    grade_runs(root)
    tmp = str(root.parent)

    def fixed(text: str) -> str:
        text = text.replace(tmp, "<tmp>")
        # the sizes of the files a grade was computed from include the temporary paths episode.json holds
        text = re.sub(r'"inputs": \{[^}]*\}', lambda m: re.sub(r": \d+", ": <size>", m.group(0)), text)
        return re.sub(r'"python": "[^"]*"', '"python": "<python>"', text)  # the interpreter the test runs on

    _check("grade-reference.json", fixed(EpisodeDir(root / "syn-01/constraint/reference/trial-1").grade_file.read_text()))
    _check("grade-scope-drift.json",
           fixed(EpisodeDir(root / "syn-01/constraint/perturbed_scope_drift/trial-0").grade_file.read_text()))
    _check("summary.json", fixed(RunsDir(root).summary_file.read_text()))
    _check("summary.md", fixed(RunsDir(root).summary_md.read_text()))
