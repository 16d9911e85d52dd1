"""`rig tasks annotate`: a demonstration recorded on a bundled site becomes a task's gold states, evidence
requirements and reference solution; the annotated task then grades its own reference run at 100 %."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner
from waiting import wait_until_sync

from rig.cli import app
from rig.episode_dir import EpisodeDir
from rig.formats.grade import Grade
from rig.tasks import load_task
from rig.tasks.loader import BUNDLED_DIR

RIG = Path(sys.executable).parent / "rig"

#: The unannotated task: flights-03 without its gold states, evidence, dependency, solution and perturbations.
ANNOTATED_FIELDS = ("gold_states", "evidence", "dependency", "reference_solution", "perturbations")


def _cli(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture(scope="module")
def demo(sites_url, tmp_path_factory):
    """A demonstration recorded with `rig run --agent scripted:FILE` (flights-03's own steps, literal values), and
    the unannotated task file it is for."""
    root = tmp_path_factory.mktemp("annotate")
    bundled = yaml.safe_load((BUNDLED_DIR / "flights-03.yaml").read_text(encoding="utf-8"))
    script = bundled["reference_solution"]
    (root / "demo.yaml").write_text(yaml.safe_dump(script, sort_keys=False), encoding="utf-8")
    task = {k: v for k, v in bundled.items() if k not in ANNOTATED_FIELDS} | {"id": "flights-03-demo"}
    (root / "flights-03-demo.yaml").write_text(yaml.safe_dump(task, sort_keys=False), encoding="utf-8")
    code, out, err = _cli("run", "--task", str(root / "flights-03-demo.yaml"), "--agent",
                          f"scripted:{root / 'demo.yaml'}", "--variant", "constraint", "--sites-url", sites_url,
                          "--out", str(root / "demo-runs"))
    assert code == 0, out + err
    [episode] = [p.parent for p in (root / "demo-runs").rglob("episode.json")]
    assert EpisodeDir(episode).read_episode().status == "ok"
    return root, episode


@pytest.fixture(scope="module")
def interrupted(demo, sites_url):
    """A demonstration killed mid-run: `rig run` (its own process, with its browser) SIGKILLed while its scripted
    agent waits, after the first four of flights-03's actions; its episode.json still says `incomplete`."""
    root, _ = demo
    script = yaml.safe_load((root / "demo.yaml").read_text(encoding="utf-8"))[:4] + [{"wait_for": "#never-there"}]
    (root / "killed.yaml").write_text(yaml.safe_dump(script, sort_keys=False), encoding="utf-8")
    runs = root / "killed-runs"
    child = subprocess.Popen([str(RIG), "run", "--task", str(root / "flights-03-demo.yaml"), "--agent",
                              f"scripted:{root / 'killed.yaml'}", "--variant", "constraint", "--sites-url", sites_url,
                              "--out", str(runs)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        def recorded() -> Path | None:  # the start page and the four actions, each a step
            return next((t.parent for t in runs.rglob("trajectory.jsonl") if len(EpisodeDir(t.parent).steps()) >= 5),
                        None)

        episode = wait_until_sync(recorded, timeout=120, message="the killed run's five steps")
        os.killpg(child.pid, signal.SIGKILL)  # the rig, its Playwright driver and Chromium: one session
        child.wait(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
    assert EpisodeDir(episode).read_episode().status == "incomplete"
    return episode


def _task_copy(demo, name: str) -> Path:
    root, _ = demo
    path = root / name / "flights-03-demo.yaml"
    path.parent.mkdir()
    path.write_text((root / "flights-03-demo.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    return path


def _reads(episode: Path) -> list[int]:
    """The steps at which the demonstration read a table (the two gold states of flights-03)."""
    return [s.step for s in EpisodeDir(episode).steps() if s.action.type == "extract_table"]


@pytest.mark.slow
def test_annotated_task_grades_its_reference_run_at_100(demo, sites_url, tmp_path):
    _, episode = demo
    task_file = _task_copy(demo, "roundtrip")
    before = load_task(task_file)
    first, last = _reads(episode)
    code, out, err = _cli("tasks", "annotate", str(task_file), "--from-episode", str(episode),
                          "--state", f"months={last}", "--state", f"cancellations={first}")
    assert code == 0, out + err

    task = load_task(task_file)
    steps = {s.step: s for s in EpisodeDir(episode).steps()}
    assert [s.name for s in task.gold_states] == ["cancellations", "months"]  # in step order
    for gs, n in zip(task.gold_states, (first, last)):
        dims = {k: v for k, v in steps[n].state.items() if k.startswith("dim.")}
        assert {c.key: c.value for c in gs.constraints} == dims
        assert {(c.op, c.tag) for c in gs.constraints} == {("eq", "scope")}
    assert steps[first].state["dim.group"] == "dest" and steps[last].state["dim.group"] == "month"
    assert [(e.state, e.url_contains) for e in task.evidence] == [("cancellations", "/flights/search"),
                                                                  ("months", "/flights/search")]
    solution = task.reference_solution
    assert solution[0] == {"goto": "/flights/search"}  # the runner's opening of the start page is not in it
    assert {"fill": {"selector": "#dest_q", "value": "BOS"}} in solution  # the value the demonstration read
    assert solution[-1] == {"answer": {"from": "table2", "columns": ["Month", "Flights", "Avg dep. delay (min)"]}}
    for field in ("prompts", "output", "gold", "canonicalize", "family", "site", "start_path", "data_version"):
        assert getattr(task, field) == getattr(before, field)  # the rest of the file is kept

    runs = tmp_path / "runs"
    code, out, err = _cli("run", "--task", str(task_file), "--agent", "reference", "--variant", "constraint",
                          "--sites-url", sites_url, "--out", str(runs))
    assert code == 0, out + err
    code, out, err = _cli("grade", str(runs), "--json")
    assert code == 0, out + err
    [group] = json.loads(out)["groups"]
    assert (group["item_f1"], group["row_f1"], group["poa"], group["gold_state_reach"]) == (1.0, 1.0, 1.0, 1.0)
    [grade_file] = runs.rglob("grade.json")
    grade = Grade.model_validate_json(grade_file.read_text(encoding="utf-8"))
    assert grade.passed and all(r.reached for r in grade.gold_states) and len(grade.gold_states) == 2
    assert all(e.met for e in grade.evidence) and grade.state_anchored_rows == 1.0


def test_named_keys_globs_and_the_address_fallback(demo):
    _, episode = demo
    task_file = _task_copy(demo, "keys")
    first = _reads(episode)[0]
    steps = {s.step: s for s in EpisodeDir(episode).steps()}
    code, out, err = _cli("tasks", "annotate", str(task_file), "--from-episode", str(episode),
                          "--state", f"routes={first}", "--keys", "url.query.month_*,dim.origin", "--keep-solution")
    assert code == 0, out + err
    [gs] = load_task(task_file).gold_states
    assert {c.key: c.value for c in gs.constraints} == {
        "url.query.month_from": "1", "url.query.month_to": "3", "dim.origin": steps[first].state["dim.origin"]}
    assert load_task(task_file).reference_solution == []  # --keep-solution

    opening = next(s.step for s in steps.values() if s.url.endswith("/flights/search") and not any(
        k.startswith("dim.") for k in s.state))
    code, out, err = _cli("tasks", "annotate", str(task_file), "--from-episode", str(episode),
                          "--state", f"search_page={opening}")
    assert code == 0, out + err
    assert "no dim.* keys" in err
    task = load_task(task_file)
    assert [s.name for s in task.gold_states] == ["routes", "search_page"]  # the earlier state is kept
    assert {c.key for c in task.gold_states[1].constraints} == {"url.path"}
    assert task.gold_states[1].constraints[0].value == "/flights/search"


def test_bad_annotations_name_the_problem_and_leave_the_file_alone(demo):
    _, episode = demo
    task_file = _task_copy(demo, "bad")
    original = task_file.read_bytes()
    last = _reads(episode)[-1]
    cases = [
        (["--state", "months=9999"], "no step 9999"),
        (["--state", "months"], "expected NAME=STEP"),
        (["--state", f"a={last}", "--state", f"a={last}"], "given twice"),
        (["--state", f"months={last}", "--keys", "dim.no_such_key"], "dim.no_such_key: not in step"),
    ]
    for args, message in cases:
        code, out, err = _cli("tasks", "annotate", str(task_file), "--from-episode", str(episode), *args)
        assert code == 2 and message in err, (args, out, err)  # bad input
        assert task_file.read_bytes() == original
    code, out, err = _cli("tasks", "annotate", str(task_file), "--from-episode", str(task_file.parent),
                          "--state", "months=1")
    assert code == 2 and "episode.json" in err
    assert task_file.read_bytes() == original


@pytest.mark.slow
def test_imported_sgr_bench_record_annotated_on_a_live_portal_grades_100(liveweb, tmp_path):
    """An SGR-Bench-format record for a portal that is no bundled site (tests/liveweb.py, reached with --live and
    --resolve), a demonstration recorded there, annotated over raw keys (no adapter), graded 100 % live."""
    rows = [[r[0], r[1], r[4]] for r in liveweb.data.matching(kind="dataset", region=["north"])]
    assert len(rows) >= 2
    record = {"task_id": "portal_001", "domain": "ENVIRONMENTAL PORTAL", "oracle_output_cardinality": len(rows),
              "instruction": "On the survey portal, search datasets of the north region; list each with its year.",
              "start_url": liveweb.portal.url("/search"),
              "output_format": "Output a table sorted by ID in ascending order, with columns: ID, Title, Year.",
              "oracle_answer": "ID|Title|Year\n" + "\n".join("|".join(r) for r in rows),
              "metadata": json.dumps({"State-Gated Retrieval": ["kind = dataset", "region = north"]}), "rubric": "{}",
              "all_involved_urls": json.dumps([liveweb.portal.url("/results", kind="dataset", region="north")])}
    goal = dict(record, task_id="portal_001-g", instruction="Which northern surveys of the portal are datasets?")
    (tmp_path / "c.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    (tmp_path / "g.jsonl").write_text(json.dumps(goal) + "\n", encoding="utf-8")
    code, out, err = _cli("tasks", "import", "sgr-bench", str(tmp_path / "c.jsonl"), str(tmp_path / "g.jsonl"),
                          "--out", str(tmp_path / "tasks"))
    assert code == 0, out + err
    task_file = tmp_path / "tasks" / "portal_001.yaml"
    assert load_task(task_file).start_hidden and not load_task(task_file).annotated

    net = [*liveweb.resolve_args(["portal.example.org"]), "--ignore-https-errors"]
    script = [{"goto": liveweb.portal.url("/search")}, {"select": {"selector": "#kind", "value": "dataset"}},
              {"check": "input[name=region][value=north]"}, {"click": 'role=button[name="Search"]'},
              {"wait_for": "table#results tbody tr"}, {"extract_table": {"selector": "#results", "as": "results"}},
              {"answer": {"from": "results", "columns": ["ID", "Title", "Year"]}}]
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(script, sort_keys=False), encoding="utf-8")
    code, out, err = _cli("record", "--live", *net, "--script", str(tmp_path / "demo.yaml"), "--out",
                          str(tmp_path / "demo"))
    assert code == 0, out + err
    [read] = _reads(tmp_path / "demo")
    code, out, err = _cli("tasks", "annotate", str(task_file), "--from-episode", str(tmp_path / "demo"),
                          "--state", f"results={read}")
    assert code == 0, out + err
    task = load_task(task_file)
    [gs] = task.gold_states
    assert {c.key: c.value for c in gs.constraints if c.value} == {
        "url.path": "/results", "url.query.kind": "dataset", "url.query.region": "north"}
    assert [e.url_contains for e in task.evidence] == ["portal.example.org/results"]
    assert task.reference_solution[0] == {"goto": liveweb.portal.url("/search")}  # absolute: not a bundled site

    runs = tmp_path / "runs"
    code, out, err = _cli("run", "--live", *net, "--task", str(task_file), "--agent", "reference", "--out", str(runs))
    assert code == 0, out + err
    code, out, err = _cli("grade", str(runs), "--json")
    assert code == 0, out + err
    groups = json.loads(out)["groups"]
    assert sorted(g["variant"] for g in groups) == ["constraint", "goal"]
    for g in groups:
        assert (g["item_f1"], g["row_f1"], g["gold_state_reach"], g["state_anchored_rows"]) == (1.0, 1.0, 1.0, 1.0)


def _annotate(task_file: Path, episode: Path, *args: str) -> tuple[int, str, str]:
    return _cli("tasks", "annotate", str(task_file), "--from-episode", str(episode), *args)


def test_an_interrupted_episode_is_refused_and_never_replaces_a_working_solution(demo, interrupted):
    """The adversarial case: annotating from a killed run used to replace the task's reference solution with the
    truncated one (no `answer`), and `rig tasks validate` passed the result."""
    _, episode = demo
    task_file = _task_copy(demo, "interrupted")
    first = _reads(episode)[0]
    code, out, err = _annotate(task_file, episode, "--state", f"cancellations={first}")
    assert code == 0, out + err
    working = task_file.read_bytes()
    solution = load_task(task_file).reference_solution
    assert solution[-1]["answer"]

    code, out, err = _annotate(task_file, interrupted, "--state", "late=3")
    assert code == 2 and "ended 'incomplete', not 'ok'" in err and "--allow-unfinished" in err, out + err
    assert task_file.read_bytes() == working
    for extra in ([], ["--force"]):  # allowed, its truncated actions are still no reference solution
        code, out, err = _annotate(task_file, interrupted, "--state", "late=3", "--allow-unfinished", *extra)
        assert code == 2 and "hold no `answer` action" in err and "--keep-solution" in err, out + err
        assert task_file.read_bytes() == working

    code, out, err = _annotate(task_file, interrupted, "--state", "late=3", "--allow-unfinished", "--keep-solution")
    assert code == 0, out + err
    assert "warning: the episode ended 'incomplete'" in err
    task = load_task(task_file)
    assert [s.name for s in task.gold_states] == ["cancellations", "late"] and task.reference_solution == solution
    assert Path(f"{task_file}.bak").read_bytes() == working  # the file as it was
    code, out, err = _cli("tasks", "validate", str(task_file))
    assert code == 0, out + err


def test_annotation_replaces_a_state_or_a_solution_only_with_force_and_keeps_a_backup(demo):
    _, episode = demo
    task_file = _task_copy(demo, "force")
    first, last = _reads(episode)
    code, out, err = _annotate(task_file, episode, "--state", f"results={first}")
    assert code == 0, out + err
    assert not Path(f"{task_file}.bak").read_text(encoding="utf-8").count("gold_states")  # the unannotated file
    annotated = task_file.read_bytes()
    code, out, err = _annotate(task_file, episode, "--state", f"results={last}", "--keep-solution")
    assert code == 2 and "already has gold state(s) results" in err and "--force" in err, out + err
    assert task_file.read_bytes() == annotated

    edited = yaml.safe_load(annotated)
    edited["reference_solution"] = edited["reference_solution"][1:]  # an author's own solution, unlike the episode's
    task_file.write_text(yaml.safe_dump(edited, sort_keys=False), encoding="utf-8")
    mine = task_file.read_bytes()
    code, out, err = _annotate(task_file, episode, "--state", f"months={last}")
    assert code == 2 and "already has a reference solution" in err and "--keep-solution keeps it" in err, out + err
    assert task_file.read_bytes() == mine

    code, out, err = _annotate(task_file, episode, "--state", f"results={last}", "--force")
    assert code == 0, out + err
    task = load_task(task_file)
    assert len(task.gold_states) == 1 and task.gold_states[0].description.startswith(f"as demonstrated at step {last}")
    assert task.reference_solution == yaml.safe_load(annotated)["reference_solution"]  # the episode's again
    assert Path(f"{task_file}.bak").read_bytes() == mine


def test_validate_rejects_a_reference_solution_without_an_answer(demo, tmp_path):
    data = yaml.safe_load(_task_copy(demo, "validate").read_text(encoding="utf-8"))
    data["reference_solution"] = yaml.safe_load((BUNDLED_DIR / "flights-03.yaml").read_text())["reference_solution"][:-1]
    path = tmp_path / "flights-03-demo.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    code, out, err = _cli("tasks", "validate", str(path))
    assert code == 1 and f"{path}: reference_solution: it has no `answer` action" in err, out + err
