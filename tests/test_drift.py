"""`rig drift`: a live portal episode (the offline web of tests/liveweb.py) and the snapshot frozen from it, checked
against the portal before it changes (exit 0, every item unchanged), after it changes its data (exit 1, the changed
step or URL with the new text), after a page is removed (gone), when the portal cannot be reached (a closed port, an
untrusted certificate: exit 3, no drift), and bad input (exit 2, named)."""

from __future__ import annotations

import json
import socket
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


@pytest.fixture
def closed_port():
    """A loopback port bound and never listened on: a connection to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def _unreachable(liveweb, path: Path, *args: str) -> tuple[dict, str]:
    res = CliRunner().invoke(app, ["drift", str(path), *args, "--json"])
    assert res.exit_code == 3, res.output
    report = json.loads(res.stdout)
    assert report["changed"] == report["gone"] == report["unchanged"] == 0, report  # nothing counts as drift
    assert report["unreachable"] == len(report["items"]) > 0
    assert {i["status"] for i in report["items"]} == {"unreachable"}
    assert [o["origin"] for o in report["unreachable_origins"]] == [liveweb.portal.origin]
    return report, " ".join(res.stderr.split())


def test_a_refused_connection_is_no_drift_but_an_unreachable_origin(liveweb, recorded, closed_port):
    """Issue 23, item 5: every request of an origin failing at connect is infrastructure (exit 3), not drift."""
    ep, snap, _ = recorded
    before = liveweb.portal.hits  # the recording of the fixture's set-up, when this test is the first to use it
    mapped = ["--resolve", f"{liveweb.portal.name}=127.0.0.1:{closed_port}", "--ignore-https-errors"]
    for path in (ep.path, snap):
        report, said = _unreachable(liveweb, path, *mapped)
        assert f"cannot reach {liveweb.portal.origin}: the server refused the connection (ERR_CONNECTION_REFUSED)" \
               in said, said
        assert "--resolve HOST=ADDR:PORT" in said and "that is no drift" in said
    assert liveweb.portal.hits == before
    code, out = rig("drift", ep.path, *mapped)  # the human summary says it too
    assert code == 3 and "unreachable: step 0 " in out and f"unreachable: {liveweb.portal.origin}: " in out


def test_an_untrusted_certificate_is_no_drift_and_names_ignore_https_errors(liveweb, recorded):
    ep, snap, _ = recorded
    for path in (ep.path, snap):
        report, said = _unreachable(liveweb, path, *liveweb.resolve_args())
        assert f"cannot reach {liveweb.portal.origin}: TLS: ERR_CERT_" in said, said
        assert "--ignore-https-errors accepts self-signed ones" in said
        assert all("ERR_CERT_" in i["reason"] for i in report["items"])


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
