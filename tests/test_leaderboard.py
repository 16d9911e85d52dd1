"""`rig export RUNS_DIR --leaderboard OUT.json|OUT.csv` on real runs: the file read back and validated against
docs/schemas/leaderboard.schema.json, its numbers those of summary.json, versions from episode.json, cost unknown
(null, never 0)."""

from __future__ import annotations

import csv
import json

import jsonschema
import pytest
from real_runs import AGENTS, TASKS, TRIALS
from typer.testing import CliRunner

from rig.cli import app
from rig.episode_dir import RunsDir
from rig.formats.schemas import SCHEMA_DIR
from rig.leaderboard import csv_columns

SCHEMA = json.loads((SCHEMA_DIR / "leaderboard.schema.json").read_text())


def _export(runs, out) -> None:
    res = CliRunner().invoke(app, ["export", str(runs), "--leaderboard", str(out)])
    assert res.exit_code == 0, res.output
    assert f"{len(AGENTS)} rows" in res.stdout


def _check_rows(rows: list[dict], runs) -> None:
    summary = json.loads(RunsDir(runs).summary_file.read_text())
    episode = RunsDir(runs).episodes()[0].read_episode()
    assert [(r["agent"], r["variant"]) for r in rows] == [(g["agent"], g["variant"]) for g in summary["groups"]]
    for row, g in zip(rows, summary["groups"]):
        assert (row["tasks"], row["episodes"], row["k"]) == (len(TASKS), len(TASKS) * TRIALS, TRIALS)
        for m in ("item_f1", "row_f1", "poa", "gold_state_reach", "state_anchored_rows", "pass_hat_k"):
            assert row[m] == pytest.approx(g[m]) and row[f"{m}_ci95"] == pytest.approx(g[f"{m}_ci95"])
        assert row["pass_at_1"] == pytest.approx(g["passk"]["pass@1"])
        assert row["pass_at_k"] == pytest.approx(g["passk"][f"pass@{TRIALS}"])
        assert row["pass_at_k_ci95"] == pytest.approx(g["passk_ci95"][f"pass@{TRIALS}"])
        assert row["record_hard_f1"] == pytest.approx(g["record_hard_f1"]) and row["record_hard_f1_ci95"] is None
        assert (row["cost_usd"], row["cost_usd_per_episode"], row["tokens_in"], row["tokens_out"]) == (None,) * 4
        assert row["playwright_version"] == episode.versions.playwright and row["chromium_version"]
        assert row["rig_version"] == episode.versions.rig and row["browser_use_version"] is None
        assert row["grader_version"] == summary["grader_version"]


def test_json_leaderboard_validates_against_its_schema(real_runs, tmp_path):
    out = tmp_path / "board.json"
    _export(real_runs, out)
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["format"] == "sgr-rig/leaderboard/1" and doc["intervals"]["resamples"] == 2000
    _check_rows(doc["rows"], real_runs)


def test_csv_leaderboard_reads_back_into_the_schema(real_runs, tmp_path):
    out = tmp_path / "board.csv"
    _export(real_runs, out)
    with out.open(newline="") as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == csv_columns()
        lines = list(reader)
    props = SCHEMA["$defs"]["LeaderboardRow"]["properties"]

    def typed(name: str, cell: str):
        if cell == "":
            return None
        kinds = {t.get("type") for t in props[name].get("anyOf", [props[name]])}
        return int(cell) if "integer" in kinds else float(cell) if "number" in kinds else cell

    rows = []
    for line in lines:
        row = {}
        for name in props:
            if name.endswith("_ci95"):
                lo, hi = line[f"{name}_lo"], line[f"{name}_hi"]
                row[name] = None if lo == "" else [float(lo), float(hi)]
            else:
                row[name] = typed(name, line[name])
        jsonschema.validate(row, {**SCHEMA["$defs"]["LeaderboardRow"], "$defs": SCHEMA["$defs"]})
        rows.append(row)
    _check_rows(rows, real_runs)


def test_bad_leaderboard_requests_are_exit_2(real_runs, tmp_path):
    res = CliRunner().invoke(app, ["export", str(real_runs), "--leaderboard", str(tmp_path / "board.txt")])
    assert res.exit_code == 2 and "a leaderboard is written as .json or .csv" in res.stderr
    res = CliRunner().invoke(app, ["export", str(real_runs)])
    assert res.exit_code == 2 and "give one of --wacz OUT.wacz or --leaderboard" in res.stderr
    (tmp_path / "ungraded").mkdir()
    res = CliRunner().invoke(app, ["export", str(tmp_path / "ungraded"), "--leaderboard", str(tmp_path / "b.csv")])
    assert res.exit_code == 2 and "no summary.json" in res.stderr
