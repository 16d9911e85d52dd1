"""`rig drift`: a live portal episode (the offline web of tests/liveweb.py) and the snapshot frozen from it, checked
against the portal before it changes (exit 0, every item unchanged), after it changes its data (exit 1, the changed
step or URL with the new text), after a page is removed (gone), and bad input (exit 2, named)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rig.cli import app
from rig.episode_dir import EpisodeDir

SNAPSHOTS = Path(__file__).resolve().parents[1] / "site_snapshots"


def rig(*args: object) -> tuple[int, str]:
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout if "--json" in args else res.output


def drift(liveweb, path: Path) -> tuple[int, dict]:
    code, out = rig("drift", path, *liveweb.resolve_args(), "--ignore-https-errors", "--json")
    assert code in (0, 1), out
    return code, json.loads(out)


@pytest.fixture(scope="module")
def recorded(liveweb, tmp_path_factory):
    """A live recording on the portal (a filtered search, then one record's page) and the snapshot frozen from it;
    the id of the record it opened."""
    root = tmp_path_factory.mktemp("drift")
    first = liveweb.data.matching(kind="dataset", year_from=2020)[0]
    script = root / "visit.yaml"
    script.write_text(yaml.safe_dump([
        {"goto": liveweb.portal.url("/search")},
        {"select": {"selector": "#kind", "value": "dataset"}},
        {"fill": {"selector": "#year_from", "value": "2020"}},
        {"click": 'role=button[name="Search"]'},
        {"wait_for": "#summary:has-text('matching records')"},
        {"goto": liveweb.portal.url(f"/record/{first[0]}")},
    ]), encoding="utf-8")
    episode = root / "episode"
    code, out = rig("record", "--script", script, "--out", episode, "--live", *liveweb.resolve_args(),
                    "--ignore-https-errors")
    assert code == 0, out
    code, out = rig("freeze", episode, "--no-qa", "--out", root / "snap")
    assert code == 0, out
    return EpisodeDir(episode), root / "snap", int(first[0])


def test_nothing_changed_exits_0_with_every_step_unchanged(liveweb, recorded):
    ep, snap, _ = recorded
    code, report = drift(liveweb, ep.path)
    assert code == 0, report
    assert [(i["step"], i["status"]) for i in report["items"]] == [(s.step, "unchanged") for s in ep.steps()], report
    assert report["changed"] == report["gone"] == 0 and report["unchanged"] == len(ep.steps())
    code, report = drift(liveweb, snap)
    assert code == 0, report
    kinds = {(i["kind"], i["url"].split("?")[0]) for i in report["items"]}
    assert {("page", liveweb.portal.url("/search")), ("page", liveweb.portal.url("/results")),
            ("data", liveweb.portal.url("/api/results"))} <= kinds
    assert all(i["status"] == "unchanged" and i["step"] is None for i in report["items"]), report


def test_changed_data_exits_1_naming_the_step_and_the_new_text(liveweb, recorded):
    ep, snap, rid = recorded
    liveweb.data.edit(rid, title="Renamed survey")
    code, report = drift(liveweb, ep.path)
    assert code == 1 and report["gone"] == 0
    changed = {i["step"]: i for i in report["items"] if i["status"] == "changed"}
    record_step = ep.steps()[-1]
    item = changed[record_step.step]
    assert item["url"] == liveweb.portal.url(f"/record/{rid}") and item["kind"] == "step"
    assert "+Renamed survey" in item["diff"].splitlines() and item["diff"].startswith("--- archived\n+++ live")
    assert any(i["url"].startswith(liveweb.portal.url("/results")) for i in changed.values())  # the table shows it
    assert all(i["status"] == "unchanged" for i in report["items"] if i["step"] < 3)  # the search form is as it was

    code, report = drift(liveweb, snap)
    assert code == 1
    pages = {i["url"]: i for i in report["items"] if i["status"] == "changed"}
    assert "+Renamed survey" in pages[liveweb.portal.url(f"/record/{rid}")]["diff"]
    assert report["changed"] == len(pages)


def test_a_removed_page_is_gone(liveweb, recorded):
    ep, snap, rid = recorded
    liveweb.data.set_records(r for r in liveweb.data.records if r["id"] != rid)
    code, report = drift(liveweb, ep.path)
    assert code == 1
    last = report["items"][-1]
    assert (last["status"], last["http_status"], last["url"]) == ("gone", 404, liveweb.portal.url(f"/record/{rid}"))
    assert last["reason"] == "HTTP 404 (archived: HTTP 200)"
    code, report = drift(liveweb, snap)
    assert code == 1
    by_url = {i["url"]: i for i in report["items"]}
    assert by_url[liveweb.portal.url(f"/record/{rid}")]["status"] == "gone"
    api = [i for i in report["items"] if i["url"].startswith(liveweb.portal.url("/api/results"))]
    assert api and all(i["kind"] == "data" and i["status"] == "changed" for i in api)
    assert all(any(ln.startswith("-") and ln.strip(" -,") == str(rid) for ln in i["diff"].splitlines()) for i in api)


def test_the_human_summary_lists_what_drifted(liveweb, recorded):
    ep, _, rid = recorded
    liveweb.data.edit(rid, title="Renamed survey")
    code, out = rig("drift", ep.path, *liveweb.resolve_args(), "--ignore-https-errors")
    assert code == 1
    assert "changed, 0 gone" in out.splitlines()[0]
    assert f"changed: step {ep.steps()[-1].step} {liveweb.portal.url(f'/record/{rid}')}" in out
    assert "+Renamed survey" in out


@pytest.mark.parametrize("what", ["missing", "junk", "resolve", "bundled-snapshot"])
def test_bad_input_exits_2_naming_it(tmp_path, what):
    path, extra = tmp_path / "nowhere", []
    if what == "junk":
        path.mkdir()
        (path / "notes.txt").write_text("not an episode")
    if what == "resolve":
        path, extra = SNAPSHOTS, ["--resolve", "portal.example.org"]
    if what == "bundled-snapshot":
        path = SNAPSHOTS / "eco"
    code, out = rig("drift", path, *extra)
    assert code == 2, out
    expected = {"missing": "no such runs, episode or snapshot directory",
                "junk": "neither an episode, a runs directory nor a snapshot",
                "resolve": "is not HOST=ADDR:PORT",
                "bundled-snapshot": "answers under any origin"}[what]
    assert expected in out
