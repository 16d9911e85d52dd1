"""Golden files: a trajectory recorded with a fixed clock and fixed ids, the WARC records the recorder and the snapshot
writer make of fixed input, and the grade and summary of a fixed runs directory, byte for byte (after the test's own
temporary paths and ports are replaced by placeholders).

A change to any of these formats shows up here as a diff against `tests/data/golden/`. When the change is
meant, regenerate them with `RIG_UPDATE_GOLDEN=1 pytest tests/test_golden.py` and review the diff.
"""

from __future__ import annotations

import asyncio
import gzip
import itertools
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from test_grade_run import runs  # noqa: F401  (the fixture: a synthetic runs directory)

from recorders import Action, Recorder, RecorderOptions
from recorders.warc import Capture, Exchange, Resource, WarcArchive
from replay.index import load_index
from replay.snapshot import write_archive
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


def _check_bytes(name: str, data: bytes) -> None:
    """Like `_check`, for files whose line ends (a WARC's CRLFs) must not be translated."""
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    assert path.exists(), f"{path} missing: run RIG_UPDATE_GOLDEN=1 pytest tests/test_golden.py"
    assert data == path.read_bytes(), f"{name} differs from its golden file"


async def _archive(path: Path) -> None:
    """An evidence archive of fixed records: a whole exchange, a cut body, a missing body, a failed request, a step's
    text and DOM snapshot, a tool result."""
    n = itertools.count()
    a = WarcArchive(path, clock=lambda: 1_700_000_000.5, ids=lambda: f"<urn:uuid:00000000-0000-4000-8000-{next(n):012d}>",
                    software="sgr-rig test")
    page = Exchange(url="http://pages.test/a?b=1", method="POST", request_body=b"x=1", request_date=1_700_000_001.0,
                    request_headers=[("Host", "pages.test"), ("Content-Type", "application/x-www-form-urlencoded")],
                    request_id=a.new_id(), response_id=a.new_id(), status=200, reason="OK",
                    response_headers=[("Content-Type", "text/html"), ("Content-Length", "9")], response_body=b"<p>hi</p>",
                    response_date=1_700_000_001.25)
    a.put(page)
    a.put(Exchange(url="http://pages.test/big.bin", method="GET", request_headers=[("Host", "pages.test")],
                   request_body=b"", request_date=1_700_000_002.0, request_id=a.new_id(), response_id=a.new_id(),
                   status=200, reason="OK", response_date=1_700_000_002.5, truncated="length",
                   response_headers=[("Content-Type", "application/octet-stream"), ("Content-Length", "4")],
                   response_body=b"\x00\x01\x02\x03"))
    a.put(Exchange(url="http://pages.test/api/stream", method="GET", request_headers=[("Host", "pages.test")],
                   request_body=b"", request_date=1_700_000_003.0, request_id=a.new_id(), response_id=a.new_id(),
                   status=200, reason="OK", response_headers=[("Content-Type", "application/json")],
                   response_date=1_700_000_004.5, truncated="time",
                   missing="body not readable: not finished: nothing arrived for 1.5 s"))
    a.put(Exchange(url="http://pages.test/gone", method="GET", request_headers=[("Host", "pages.test")], request_body=b"",
                   request_date=1_700_000_005.0, request_id=a.new_id()))
    a.put(Capture(a.new_id(), "text", "http://pages.test/a?b=1", 1, 1_700_000_006.0, "text/plain; charset=utf-8", b"hi",
                  refers_to=page.response_id))
    a.put(Capture(a.new_id(), "dom", "http://pages.test/a?b=1", 1, 1_700_000_006.0, "text/html; charset=utf-8",
                  lambda: b"<html><p>hi</p></html>", refers_to=page.response_id, view=(1280, 720, 0, 40)))
    a.put(Resource(a.new_id(), "urn:sgr-rig:tool/2/web_search", 2, 1_700_000_007.0, "text/plain; charset=utf-8",
                   b"1. result"))
    await a.close()


def test_warc_records_with_a_fixed_clock_and_ids(tmp_path):
    """The recorder's records and the snapshot writer's (of the same archive), byte for byte; both `warcio check`-clean."""
    warc = tmp_path / "evidence.warc.gz"
    asyncio.run(_archive(warc))
    _check_bytes("evidence.warc", gzip.decompress(warc.read_bytes()))
    index = load_index(warc)
    write_archive(index.all(), tmp_path / "snap", site="test", built_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                  rig_version="0.1.0", missing=index.unanswered())
    snapshot = tmp_path / "snap" / "snapshot.warc.gz"
    _check_bytes("snapshot.warc", gzip.decompress(snapshot.read_bytes()))
    for path in (warc, snapshot):
        check = subprocess.run([str(Path(sys.executable).with_name("warcio")), "check", "-v", str(path)],
                               capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr


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
