"""Bad input: broken task, answer, trajectory and WARC files (tests/data/broken/) each give a clear error naming the
file and the position; a truncated WARC still yields its complete records."""

from __future__ import annotations

import io
import os
import json
import shutil
from pathlib import Path

import pytest
from loguru import logger
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from recorders.errors import TrajectoryError
from recorders.trajectory import read_trajectory
from replay import ReplayError, load_index
from replay.index import whole_gzip_members
from rig.cli import app
from rig.episode_dir import EpisodeDir, read_answer_file
from rig.errors import InputError, TaskError
from rig.formats.answer_text import ParseFailure
from rig.grading.evidence import Evidence
from rig.grading.runs import grade_runs
from rig.tasks import load_task

BROKEN = Path(__file__).parent / "data" / "broken"


@pytest.mark.parametrize("name,message", [
    ("task-truncated.yaml", "line 19, column 35: not valid YAML: expected the node content, but found '<stream end>'"),
    ("task-tab-indent.yaml", "line 9, column 1: not valid YAML: found character '\\t' that cannot start any token"),
    ("task-not-utf8.yaml", "line 7, byte 204: not UTF-8 text"),
    ("task-list.yaml", "a task file is a YAML mapping"),
    ("task-missing-gold.yaml", "gold: an answer table needs both `output` and `gold`"),
])
def test_broken_task_files(name, message):
    with pytest.raises(TaskError) as exc:
        load_task(BROKEN / name)
    assert str(exc.value) == f"{BROKEN / name}: {message}"


def test_tasks_validate_names_file_and_position():
    res = CliRunner().invoke(app, ["tasks", "validate", str(BROKEN / "task-truncated.yaml")])
    assert res.exit_code == 1
    assert "task-truncated.yaml: line 19, column 35: not valid YAML" in " ".join(res.output.split())


@pytest.mark.parametrize("name,message", [
    ("answer-truncated.json", "invalid JSON at line 3 column 37: Unterminated string starting at"),
    ("answer-bad-cell.json", "rows[1][1]: a cell must be a string, number, boolean or null, got dict"),
    ("answer-not-utf8.csv", "not UTF-8 text (byte 64)"),
    ("answer-unterminated.csv", "CSV line 4: unexpected end of data"),
    ("answer-prose.md", "no table found: expected a pipe or Markdown table with a header row, TSV or CSV with a "
                        "header, or answer.json"),
])
def test_broken_answer_files(name, message):
    with pytest.raises(ParseFailure) as exc:
        read_answer_file(BROKEN / name)
    assert str(exc.value) == f"{BROKEN / name}: {message}"


@pytest.mark.parametrize("name,message", [
    ("trajectory-bad-json.jsonl", "line 2, column 30: not JSON: Unterminated string starting at"),
    ("trajectory-bad-step.jsonl", "line 3, field step: not a trajectory step: Input should be greater than or equal to 0"),
    ("trajectory-not-utf8.jsonl", "line 2, byte 513: not UTF-8 text"),
])
def test_broken_trajectory_lines(name, message):
    with pytest.raises(TrajectoryError) as exc:
        read_trajectory(BROKEN / name)
    assert str(exc.value) == f"{BROKEN / name}: {message}"


def test_torn_last_trajectory_line_is_skipped():
    steps = read_trajectory(BROKEN / "trajectory-torn-tail.jsonl")
    assert [s.step for s in steps] == [0, 1]


def _episode(tmp_path: Path, trajectory: str, warc: str = "evidence-truncated.warc.gz") -> Path:
    d = tmp_path / "runs" / "eco-01" / "constraint" / "reference" / "trial-0"
    d.mkdir(parents=True)
    (d / "episode.json").write_text(json.dumps({"task_id": "eco-01", "variant": "constraint", "agent": "reference",
                                                "status": "ok"}))
    (d / "answer.json").write_text(json.dumps({"columns": ["A"], "rows": []}))
    shutil.copy(BROKEN / trajectory, d / "trajectory.jsonl")
    shutil.copy(BROKEN / warc, d / "evidence.warc.gz")
    return d


def test_grading_names_the_bad_trajectory_line(tmp_path):
    d = _episode(tmp_path, "trajectory-bad-json.jsonl")
    summary = grade_runs(tmp_path / "runs")
    grade = json.loads((d / "grade.json").read_text())
    assert summary.episodes == 1 and not grade["scored"]
    assert f"{d / 'trajectory.jsonl'}: line 2, column 30: not JSON" in grade["error"]


@pytest.fixture
def warnings():
    seen: list[str] = []
    sink = logger.add(lambda m: seen.append(str(m)), level="WARNING")
    yield seen
    logger.remove(sink)


def _count(path: Path, end: int | None = None) -> int:
    with path.open("rb") as fh:
        data = fh.read(end)
    return sum(1 for _ in ArchiveIterator(io.BytesIO(data)))


def test_truncated_warc_yields_its_complete_records(tmp_path, warnings):
    path = BROKEN / "evidence-truncated.warc.gz"
    end = whole_gzip_members(path.read_bytes())
    assert end == 2983 < path.stat().st_size and _count(path, end) == 9  # the 10th record (step 2's text) is torn

    index = load_index(path)
    assert index.records == 9 and sorted(index.step_text) == [0, 1] and len(index) == 3
    assert index.errors == [f"{path}: the archive ends with a torn or corrupt record at byte 2983 of 3135; "
                            "the complete records before it are used"]

    d = _episode(tmp_path, "trajectory-torn-tail.jsonl")
    steps = read_trajectory(d / "trajectory.jsonl")
    texts = Evidence.from_archive(EpisodeDir(d).archive(), steps).texts
    assert sorted(texts.by_step) == [0, 1] and texts.at(1).raw.startswith("Results")
    assert len(Evidence.from_archive(EpisodeDir(d).archive(), []).loaded) == 3
    assert [w for w in warnings if f"{d / 'evidence.warc.gz'}: the archive ends with a torn or corrupt record at "
                                   "byte 2983 of 3135" in w], warnings


def test_replay_command_warns_about_a_truncated_archive(tmp_path, warnings):
    from rig.commands.replay import replay

    d = _episode(tmp_path, "trajectory-torn-tail.jsonl")
    report = replay(d, timeout_s=2)
    assert report.steps == 2
    assert any(f"{d / 'evidence.warc.gz'}: the archive ends with a torn or corrupt record at byte 2983" in w
               for w in warnings), warnings


def test_garbage_and_corrupt_warcs_name_the_file(tmp_path):
    garbage = BROKEN / "evidence-garbage.warc.gz"
    with pytest.raises(ReplayError, match=f"{garbage}: not a WARC file .*warcio check"):
        load_index(garbage)
    d = _episode(tmp_path, "trajectory-torn-tail.jsonl", "evidence-garbage.warc.gz")
    with pytest.raises(InputError) as exc:
        Evidence.from_archive(EpisodeDir(d).archive(), []).loaded
    assert str(exc.value).startswith(f"{d / 'evidence.warc.gz'}: byte 0: not a WARC file")

    bad = BROKEN / "evidence-bad-member.warc.gz"  # a gzip member holding no WARC record after 5 records
    index = load_index(bad)
    assert index.records == 5 and index.errors[0].startswith(f"{bad}: reading stopped at byte 1646, after 5 records")
    d2 = _episode(tmp_path / "2", "trajectory-torn-tail.jsonl", "evidence-bad-member.warc.gz")
    with pytest.raises(InputError) as exc:
        Evidence.from_archive(EpisodeDir(d2).archive(), []).loaded
    assert str(exc.value).startswith(f"{d2 / 'evidence.warc.gz'}: byte 1646: not a WARC record")


# --- one bad file does not sink a run (issue 17, item 5) ---

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def mixed_run(tmp_path):
    """A runs directory of the synthetic task: one good episode and one of each kind of broken one."""
    import yaml
    from test_grading_states import (
        GOLD,
        answer,
        reference_steps,
        synthetic_task,
        write_episode,
    )

    task_file = tmp_path / "syn-01.yaml"
    task_file.write_text(yaml.safe_dump(synthetic_task().model_dump(mode="json"), allow_unicode=True))
    root = tmp_path / "runs"

    def ep(agent: str) -> Path:
        return write_episode(root / "syn-01" / "constraint" / agent / "trial-0", reference_steps(), answer(GOLD),
                             agent=agent, task_path=str(task_file))

    ep("good")
    (ep("deep-answer") / "answer.json").write_text('{"columns": ["A"], "rows": ' + DEEP + "}")
    traj = ep("deep-step") / "trajectory.jsonl"
    traj.write_text(traj.read_text() + '{"step": 9, "state": ' + DEEP + "}\n" + traj.read_text().splitlines()[0] + "\n")
    (ep("bad-line") / "trajectory.jsonl").write_text('{"step": 0,\n{"step": 1}\n')
    (ep("not-gzip") / "evidence.warc.gz").write_bytes(b"this is not an archive\n" * 20)
    (ep("no-trajectory") / "trajectory.jsonl").unlink()
    (ep("empty-archive") / "evidence.warc.gz").write_bytes(b"")
    stray = root / "syn-01" / "constraint" / "good" / "trial-1"
    stray.mkdir()
    (stray / "trajectory.jsonl").write_text("")
    return root


def test_each_episode_is_graded_on_its_own(mixed_run):
    summary = grade_runs(mixed_run)
    by_agent = {json.loads(p.read_text())["agent"]: json.loads(p.read_text()) for p in mixed_run.rglob("grade.json")}
    assert set(by_agent) == {"good", "deep-answer", "deep-step", "bad-line", "not-gzip", "no-trajectory", "empty-archive"}
    assert by_agent["good"]["passed"] and not by_agent["good"]["incomplete_evidence"]
    assert by_agent["deep-answer"]["status"] == "parse_failure" and "nested too deeply" in by_agent["deep-answer"]["error"]
    assert "trajectory.jsonl: line 7: not a trajectory step: nested too deeply" in by_agent["deep-step"]["grading_error"]
    assert "line 1, column" in by_agent["bad-line"]["grading_error"]
    assert "not a WARC file" in by_agent["not-gzip"]["grading_error"]
    for agent, gap in (("no-trajectory", "no trajectory.jsonl"), ("empty-archive", "evidence.warc.gz is empty")):
        assert by_agent[agent]["scored"] and by_agent[agent]["passed"] is False, agent
        assert gap in by_agent[agent]["incomplete_evidence"], agent
    assert (summary.episodes, summary.ungraded, summary.incomplete_evidence) == (8, 4, 2)
    kinds = {(Path(p.episode).parent.name, Path(p.episode).name): p.kind for p in summary.problems}
    assert kinds == {("deep-step", "trial-0"): "ungraded", ("bad-line", "trial-0"): "ungraded",
                     ("not-gzip", "trial-0"): "ungraded", ("no-trajectory", "trial-0"): "incomplete_evidence",
                     ("empty-archive", "trial-0"): "incomplete_evidence", ("good", "trial-1"): "not_an_episode"}
    assert not (mixed_run / "syn-01" / "constraint" / "good" / "trial-1" / "grade.json").exists()
    md = (mixed_run / "summary.md").read_text()
    assert "4 could not be graded" in md and "## Episodes whose numbers are missing or incomplete (6)" in md


def test_report_is_written_around_broken_episodes(mixed_run):
    from rig.report import write_report

    grade_runs(mixed_run)
    (mixed_run / "syn-01" / "constraint" / "deep-step" / "trial-0" / "episode.json").write_text("{" * 50)
    index = write_report(mixed_run)
    html = index.read_text()
    assert 'id="problems"' in html
    assert html.count('class="problem-') >= 6
    assert "not shown" in html and "deep-step" in html  # its episode.json is unreadable now: listed, not dropped
    pages = {p.name for p in (index.parent / "episodes").glob("*.html")}
    assert len(pages) == 6
    bad_line = next(p for p in (index.parent / "episodes").glob("*bad-line*.html"))
    assert 'id="page-error"' in bad_line.read_text() and "not JSON" in bad_line.read_text()


# --- clear errors instead of tracebacks, bounded reads (issue 17, item 8) ---

def test_answer_files_are_read_bounded(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"columns": ["A"], "rows": ' + DEEP + "}")
    with pytest.raises(ParseFailure, match="deep.json: nested too deeply to be an answer"):
        read_answer_file(deep)
    with pytest.raises(InputError, match="/dev/zero: cannot read the answer: a character device, not a regular file"):
        read_answer_file(Path("/dev/zero"))
    fifo = tmp_path / "answer.md"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="answer.md: cannot read the answer: a FIFO, not a regular file"):
        read_answer_file(fifo)
    res = CliRunner().invoke(app, ["submit", str(tmp_path), "--answer", str(fifo)])
    assert res.exit_code == 2 and "a FIFO, not a regular file" in res.stderr  # bad input


def test_file_size_is_checked_before_reading(tmp_path):
    from rig.formats.files import read_limited

    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(600 * 1024 * 1024)  # sparse: 600 MB that cost no disk
    with pytest.raises(InputError, match=r"big.json: cannot read the answer: 629145600 bytes, more than the limit"):
        read_limited(big, "the answer")


def test_deep_action_scripts_are_clear_errors(tmp_path):
    from rig.errors import ScriptError
    from rig.formats.actions import load_script

    for name, text in (("s.json", DEEP), ("s.yaml", "- goto: " + DEEP)):
        (tmp_path / name).write_text(text)
        with pytest.raises(ScriptError, match=f"{name}: not an action script: nested too deeply"):
            load_script(tmp_path / name)
    with pytest.raises(ScriptError, match="cannot read the script: a character device"):
        load_script("/dev/zero")


def test_view_rejects_a_port_that_is_not_one(tmp_path):
    res = CliRunner().invoke(app, ["view", str(tmp_path), "--port", "80000"])
    assert res.exit_code == 2 and "--port: 80000 is not a TCP port (0 to 65535)" in res.stderr
    res = CliRunner().invoke(app, ["report", str(tmp_path / "nowhere")])
    assert res.exit_code == 2 and "nowhere: no such runs directory" in res.stderr


def test_replaying_an_empty_archive_fails_before_a_browser_starts(tmp_path, monkeypatch):
    from rig.commands.replay import replay
    from rig.runner import redrive

    d = _episode(tmp_path, "trajectory-torn-tail.jsonl")
    (d / "evidence.warc.gz").write_bytes(b"")
    monkeypatch.setattr(redrive, "async_playwright", lambda: pytest.fail("a browser was started"))
    with pytest.raises(InputError, match="evidence.warc.gz: holds no WARC record: there is nothing to replay against"):
        replay(d)
    res = CliRunner().invoke(app, ["replay", str(d)])
    assert res.exit_code == 2 and "holds no WARC record" in res.stderr


def test_atomic_writes_never_share_a_temporary_name(tmp_path, monkeypatch):
    """Two `rig grade` runs at once write grade.json through temporary files of their own."""
    from rig import episode_dir

    seen: list[str] = []
    real = os.replace
    monkeypatch.setattr(episode_dir.os, "replace", lambda src, dst: (seen.append(str(src)), real(src, dst)))
    target = tmp_path / "grade.json"
    episode_dir.write_atomic(target, "one")
    episode_dir.write_atomic(target, "two")
    assert len(set(seen)) == 2 and all(Path(s).parent == tmp_path for s in seen)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grade.json"] and target.read_text() == "two"


def test_a_zero_byte_thumbnail_left_by_a_killed_report_is_rewritten(mixed_run):
    from PIL import Image

    from rig.report import write_report
    from rig.report.load import episode_id

    d = mixed_run / "syn-01" / "constraint" / "good" / "trial-0"
    (d / "screens").mkdir()
    Image.new("RGB", (400, 300), "red").save(d / "screens" / "0000.jpg")
    lines = (d / "trajectory.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    (d / "trajectory.jsonl").write_text("\n".join([json.dumps({**first, "screenshot": "screens/0000.jpg"}), *lines[1:]]) + "\n")
    thumb = mixed_run / "report" / "screens" / episode_id(mixed_run, d) / "thumb" / "0000.jpg"
    thumb.parent.mkdir(parents=True)
    thumb.write_bytes(b"")  # what a report killed while writing it left, newer than the screenshot
    os.utime(thumb, (os.stat(d / "screens" / "0000.jpg").st_mtime + 60,) * 2)
    write_report(mixed_run)
    assert thumb.stat().st_size > 0
    with Image.open(thumb) as im:
        assert im.width <= 240
    assert not [p for p in thumb.parent.iterdir() if p.name != "0000.jpg"], "no temporary file is left"


def test_view_refuses_a_huge_body_before_reading_it(mixed_run):
    import http.client

    from rig.grading.runs import grade_runs
    from rig.report import ViewServer
    from rig.report.load import episode_id

    grade_runs(mixed_run)
    eid = episode_id(mixed_run, mixed_run / "syn-01" / "constraint" / "good" / "trial-0")
    with ViewServer(mixed_run) as view:
        host, port = view.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.putrequest("POST", f"/api/audit/{eid}")
        conn.putheader("Content-Type", "application/x-www-form-urlencoded")
        conn.putheader("Content-Length", str(600 * 1024 * 1024))
        conn.endheaders(b"label=")  # a few bytes of the announced 600 MB
        res = conn.getresponse()
        assert res.status == 413 and b"too large" in res.read()
        conn.close()
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("POST", f"/api/audit/{eid}", body=iter([b"note=" + b"x" * 70_000]),
                     headers={"Content-Type": "application/x-www-form-urlencoded", "Transfer-Encoding": "chunked"},
                     encode_chunked=True)
        res = conn.getresponse()
        assert res.status == 413
        conn.close()
    assert not (mixed_run / "syn-01" / "constraint" / "good" / "trial-0" / "audit.json").exists()


def test_view_removes_its_temporary_folder_on_sigterm(mixed_run, tmp_path):
    import signal
    import socket
    import subprocess
    import sys

    from waiting import wait_until_sync

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rig = Path(sys.executable).parent / "rig"
    proc = subprocess.Popen([str(rig), "view", str(mixed_run), "--port", str(port)], env={**os.environ, "TMPDIR": str(tmp)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        def listening() -> bool:
            with socket.socket() as c:
                return c.connect_ex(("127.0.0.1", port)) == 0

        wait_until_sync(lambda: listening() or proc.poll() is not None, timeout=60, message="rig view listening")
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert [p.name for p in tmp.iterdir() if p.name.startswith("rig-view-")], "the view writes to a temporary folder"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert [p.name for p in tmp.iterdir() if p.name.startswith("rig-view-")] == []
