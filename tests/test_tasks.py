"""Task files: valid ones load, broken ones fail naming the file, the field and the reason."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rig.cli import app
from rig.errors import TaskError
from rig.tasks import load_task, resolve_task
from rig.tasks.loader import bundled_task_paths

DATA = Path(__file__).parent / "data" / "tasks"
VALID = yaml.safe_load((DATA / "valid.yaml").read_text())
runner = CliRunner()


def _write(tmp_path: Path, data: dict, name: str = "task.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def test_valid_task_loads():
    task = load_task(DATA / "valid.yaml")
    assert task.id == "valid"
    assert task.output.key == ["Destination"]
    assert task.gold_states[0].constraints[0].key == "dim.origin"
    assert "Answer as a table with columns: Destination, Flights" in task.prompt("goal")


def _mutated(path: str, value):
    data = copy.deepcopy(VALID)
    node = data
    parts = path.split(".")
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node[p]
    last = parts[-1]
    if value is KeyError:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return data


@pytest.mark.parametrize(
    "path,value,field,reason",
    [
        ("prompts.goal", KeyError, "prompts.goal", "Field required"),
        ("output.key", ["Carrier"], "output.key", "key columns ['Carrier'] are not among columns"),
        ("gold.rows", [["LAX", "1", "extra"], ["SFO", "2"]], "gold.rows[0]", "has 3 cells"),
        ("site", KeyError, "site", "a task starts at `start_url`, or at `site` + `start_path`"),
        ("start_url", "https://example.org/", "start_url", "either `start_url` or `site` + `start_path`, not both"),
        ("gold_states.0.constraints.0.tag", "filter", "gold_states.0.constraints.0.tag", "'scope', 'criterion' or 'view'"),
        ("id", "../escape", "id", "String should match pattern"),
        ("start_path", "/stats/", "start_path", "must lie under the site's root /flights/"),
        ("reference_solution", [{"goto": "/x"}, {"teleport": "/y"}], "reference_solution[1]", "unknown verb 'teleport'"),
        ("reference_solution", [{"select": {"selector": "#a"}}], "reference_solution[0].select.value", "Field required"),
        ("evidence", [{"state": "nowhere", "description": "x"}], "evidence[0].state", "names state 'nowhere'"),
        ("surprise", 1, "surprise", "Extra inputs are not permitted"),
    ],
)
def test_broken_task_names_field_and_reason(tmp_path, path, value, field, reason):
    bad = _write(tmp_path, _mutated(path, value))
    with pytest.raises(TaskError) as info:
        load_task(bad)
    err = info.value
    assert err.source == str(bad)
    if field is not None:
        assert err.field == field
    assert reason in err.reason


def test_truncated_yaml_names_line():
    with pytest.raises(TaskError) as info:
        load_task(DATA / "truncated.yaml")
    assert info.value.field and info.value.field.startswith("line ")
    assert "not valid YAML" in info.value.reason


def test_validate_cli_exit_codes(tmp_path):
    ok = runner.invoke(app, ["tasks", "validate", str(DATA / "valid.yaml")])
    assert ok.exit_code == 0, ok.output
    bad = _write(tmp_path, _mutated("output.key", ["Nope"]), "bad.yaml")
    res = runner.invoke(app, ["tasks", "validate", str(DATA / "valid.yaml"), str(bad)])
    assert res.exit_code == 1
    assert "bad.yaml: output.key:" in res.output and "key columns ['Nope']" in res.output


def test_task_ids_cannot_escape():
    with pytest.raises(Exception, match="path separators"):
        resolve_task("../../etc/passwd")


def test_bundled_suite_shape():
    paths = bundled_task_paths()
    tasks = [load_task(p) for p in paths]
    assert len(tasks) >= 12, "SGR-mini needs at least 12 pairs (24 prompt variants)"
    assert len({t.site for t in tasks}) >= 3
    assert len({t.family for t in tasks}) >= 3
    for path, task in zip(paths, tasks):
        assert path.stem == task.id, f"{path.name}: file name must be the task id"
        assert 2 <= len(task.gold.rows) <= 20
        assert "${" in yaml.safe_dump(task.reference_solution), f"{task.id}: no logical dependency in its script"


def test_tasks_list_json():
    import json

    res = runner.invoke(app, ["tasks", "list", "--json"])
    assert res.exit_code == 0
    rows = json.loads(res.stdout)
    assert {"id", "site", "family"} <= set(rows[0])


# --- a "valid" task must be gradable (issue 17, item 6) ---

@pytest.mark.parametrize("canonicalize,field,reason", [
    ({"default": ["nfkc", "casefodl"]}, "canonicalize.default[1]", "unknown rule 'casefodl' (did you mean 'casefold'?)"),
    ({"colums": {"Flights": ["number"]}}, "canonicalize.colums", "unknown key (did you mean 'columns'?)"),
    ({"columns": {"Flights": ["numbr"]}}, "canonicalize.columns.Flights[0]", "unknown rule 'numbr'"),
    ({"columns": {"Flight": ["number"]}}, "canonicalize.columns.Flight", "not an answer column (did you mean 'Flights'?)"),
    ({"columns": {"Flights": [{"regex_sub": {"pattern": "("}}]}}, "canonicalize.columns.Flights[0]",
     "regex_sub pattern '(': missing )"),
    ({"columns": {"Flights": [{"number": {"digits": 2}}]}}, "canonicalize.columns.Flights[0]", "number takes"),
])
def test_unknown_canonicalisation_rules_and_keys_are_rejected(tmp_path, canonicalize, field, reason):
    path = _write(tmp_path, {**VALID, "canonicalize": canonicalize})
    with pytest.raises(TaskError) as exc:
        load_task(path)
    assert exc.value.field == field and exc.value.reason.startswith(reason), (exc.value.field, exc.value.reason)
    res = runner.invoke(app, ["tasks", "validate", str(path)])
    assert res.exit_code == 1 and field in " ".join(res.output.split())


def test_every_documented_rule_is_accepted(tmp_path):
    rules = ["nfkc", "trim", "collapse_ws", "casefold", "strip_punct", "strip_markdown", "number", "date",
             {"regex_sub": {"pattern": "v\\d+$", "repl": ""}}, {"aliases": {"usa": "united states"}},
             {"number": {"decimals": 1}}]
    load_task(_write(tmp_path, {**VALID, "canonicalize": {"default": rules, "columns": {"Flights": ["number"]}}}))


def test_deep_and_unreadable_task_files_are_clear_errors(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(TaskError, match="deep.yaml: not a task file: nested too deeply"):
        load_task(deep)
    with pytest.raises(TaskError, match="/dev/zero: cannot read the task file: a character device, not a regular file"):
        load_task("/dev/zero")
    fifo = tmp_path / "task.yaml"
    os.mkfifo(fifo)  # nobody writes to it: a read would block for ever
    with pytest.raises(TaskError, match="task.yaml: cannot read the task file: a FIFO, not a regular file"):
        load_task(fifo)
    with pytest.raises(TaskError, match="cannot read the task file: a directory"):
        load_task(tmp_path)


def _open_world(data: dict, start_url: str) -> dict:
    data = dict(data)
    del data["site"], data["start_path"]
    return {**data, "start_url": start_url, "origins": ["portal.example.org"]}


def test_a_task_may_start_on_any_origin_and_leave_its_states_unannotated(tmp_path):
    data = {k: v for k, v in _open_world(_mutated("id", "open-1"), "https://portal.example.org/search?q=1").items()
            if k not in ("gold_states", "evidence", "dependency", "reference_solution", "data_version", "perturbations")}
    data["gold"] = {"rows": []}
    task = load_task(_write(tmp_path, data))
    assert task.start_at("http://127.0.0.1:1") == "https://portal.example.org/search?q=1"
    assert task.site is None and not task.annotated and task.gold is not None and task.gold.rows == []


@pytest.mark.parametrize("url", ["ftp://example.org/", "/relative/path", "https:///no-host"])
def test_a_start_url_must_be_absolute_http(tmp_path, url):
    with pytest.raises(TaskError) as info:
        load_task(_write(tmp_path, _open_world(_mutated("id", "open-2"), url)))
    assert info.value.field == "start_url" and "not an absolute http(s) URL" in info.value.reason


# --- `rig tasks validate` checks what `rig run` checks (issue 23, item 6) ---

SOLUTION = VALID["reference_solution"]  # goto, extract_table results, answer from results


def _hybrid(db: str) -> dict:
    """The valid task as a search_to_sql hybrid task on `db`."""
    return {**VALID, "hybrid_type": "search_to_sql", "db": db, "gold_sql": "SELECT 1"}


def _runnable_cases(tmp_path: Path) -> list[tuple[str, dict, str, str]]:
    """(file name, task data, field, reason) of files the format accepts and no episode can run; planted here."""
    (tmp_path.parent / "adapter.yaml").write_text("site: x\npath_prefix: /\n", encoding="utf-8")
    (tmp_path / "escape.yaml").symlink_to(tmp_path.parent / "adapter.yaml")
    (tmp_path / "notes.db").write_text("SELECT nothing", encoding="utf-8")
    (tmp_path / "bad-adapter.yaml").write_text("site: x\ndimensions: 3\n", encoding="utf-8")
    start = {k: v for k, v in VALID.items() if k not in ("site", "start_path")}
    return [
        ("adapter-up.yaml", {**VALID, "adapter": "../adapter.yaml"}, "adapter", "lies outside the task's folder"),
        ("adapter-abs.yaml", {**VALID, "adapter": str(tmp_path.parent / "adapter.yaml")}, "adapter", "absolute path"),
        ("adapter-link.yaml", {**VALID, "adapter": "escape.yaml"}, "adapter", "lies outside the task's folder"),
        ("adapter-gone.yaml", {**VALID, "adapter": "adapters/gone.yaml"}, "adapter", "no such file"),
        ("adapter-bad.yaml", {**VALID, "adapter": "bad-adapter.yaml"}, "adapter", "is not a site adapter"),
        ("port.yaml", {**start, "start_url": "http://127.0.0.1:99999/search"}, "start_url",
         "the port is not a number from 1 to 65535"),
        ("port-text.yaml", {**start, "start_url": "https://portal.example.org:https/"}, "start_url",
         "the port is not a number"),
        ("space.yaml", {**start, "start_url": "https://portal.example.org/a b"}, "start_url", "white space"),
        ("other-name.yaml", VALID, "id", "'valid' is not the file's name 'other-name.yaml'"),
        ("no-table.yaml", {**VALID, "reference_solution": [SOLUTION[0], {"answer": {"from": "results", "columns": ["Destination"]}}]},
         "reference_solution[1].answer.from", "'results' is not a table extracted before it"),
        ("text-table.yaml", {**VALID, "reference_solution": [SOLUTION[0], {"extract_text": {"selector": "h1", "as": "results"}},
                                                              SOLUTION[2]]},
         "reference_solution[2].answer.from", "'results' is not a table extracted before it"),
        ("js.yaml", {**VALID, "reference_solution": [{"goto": "javascript:alert(1)"}, *SOLUTION]},
         "reference_solution[0].goto", "is a javascript: URL"),
        ("js-hidden.yaml", {**VALID, "reference_solution": [*SOLUTION[:2], {"goto": " JavaScript\t:fetch(1)"}, SOLUTION[2]]},
         "reference_solution[2].goto", "is a javascript: URL"),
        ("data.yaml", {**VALID, "reference_solution": [{"goto": "data:text/html,<p>x"}, *SOLUTION]},
         "reference_solution[0].goto", "is a data: URL"),
        ("ref.yaml", {**VALID, "reference_solution": [{"goto": "/flights/airport/${top[0].Destination}"}, *SOLUTION]},
         "reference_solution[0].goto", "${top[0].Destination} refers to nothing extracted before it"),
        ("no-answer.yaml", {**VALID, "reference_solution": SOLUTION[:2]}, "reference_solution",
         "it has no `answer` action"),
        ("perturbed.yaml", {**VALID, "perturbations": {"scope_drift": [{"at": 1, "set": {"selectr": "#x"}}]}},
         "perturbations.scope_drift", "[1].extract_table.selectr: Extra inputs are not permitted"),
        ("tools.yaml", {**VALID, "reference_tools": [{"tool": "web_fetch", "args": {"url": "javascript:alert(1)"}},
                                                     {"tool": "final_answer", "args": {"answer": "x"}}]},
         "reference_tools[0].args.url", "is a javascript: URL"),
        ("db-name.yaml", _hybrid("cyber_1"), "db", "'cyber_1' is not a bundled database"),
        ("db-up.yaml", _hybrid("../outside.sqlite"), "db", "lies outside the task's folder"),
        ("db-abs.yaml", _hybrid("/etc/passwd.db"), "db", "absolute path"),
        ("db-text.yaml", _hybrid("notes.db"), "db", "is not a SQLite database"),
        ("db-gone.yaml", _hybrid("gone.sqlite"), "db", "no such file"),
    ]


def test_validate_rejects_what_run_rejects_and_run_says_the_same(tmp_path):
    """Each file passed `rig tasks validate` and failed `rig run` (or its first episode); now both refuse it, with the
    same line naming the file, the field and the reason, and no episode starts."""
    folder = tmp_path / "tasks"
    folder.mkdir()
    cases = _runnable_cases(folder)
    for name, data, field, reason in cases:
        path = folder / name
        path.write_text(yaml.safe_dump({**data, "id": data["id"] if name == "other-name.yaml" else path.stem},
                                       sort_keys=False), encoding="utf-8")
        res = runner.invoke(app, ["tasks", "validate", str(path)])
        said = " ".join(res.stderr.split())
        assert res.exit_code == 1 and f"{path}: {field}: " in said and reason in said, (name, res.output)
        runs = tmp_path / f"runs-{path.stem}"
        ran = runner.invoke(app, ["run", "--task", str(path), "--agent", "reference", "--out", str(runs)])
        assert ran.exit_code == 2 and said.split("invalid ", 1)[1] in " ".join(ran.stderr.split()), (name, ran.output)
        assert not runs.exists(), f"{name}: an episode started"
    res = runner.invoke(app, ["tasks", "validate", *(str(folder / n) for n, *_ in cases)])
    assert res.exit_code == 1 and sum(line.startswith("invalid ") for line in res.stderr.splitlines()) == len(cases)


def test_every_bundled_task_validates():
    from rig.tasks.loader import all_bundled_task_paths

    paths = all_bundled_task_paths()
    res = runner.invoke(app, ["tasks", "validate", *map(str, paths)])
    assert res.exit_code == 0, res.output
    assert res.stdout.count("valid ") == len(paths) >= 30


@pytest.mark.parametrize("task_id,reason", [
    ("a" * 129, "at most 128 characters"), ("con", "device name Windows reserves"),
    ("lpt1.draft", "device name Windows reserves"), ("trailing.", "ends with '.'"),
])
def test_a_task_id_names_a_portable_file(tmp_path, task_id, reason):
    with pytest.raises(TaskError) as info:
        load_task(_write(tmp_path, {**VALID, "id": task_id}))
    assert info.value.field == "id" and reason in info.value.reason
