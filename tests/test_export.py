"""`rig export --wacz`: an episode, a runs directory and a snapshot as a WACZ, opened back: its zip contents,
datapackage.json (every file listed with its hash), the archive's WARC records read with warcio (the per-step text
records included), the pages list, and the wacz package's own validation."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from rig.cli import app
from rig.episode_dir import EpisodeDir
from rig.commands.export import validate_wacz
from rig.formats.actions import parse_actions
from rig.runner.record import record_actions

SNAPSHOTS = Path(__file__).resolve().parents[1] / "site_snapshots"
SCRIPT = [
    {"goto": "/flights/search"},
    {"select": {"selector": "#origin", "value": "JFK"}},
    {"click": 'role=button[name="Apply"]'},
    {"wait_for": "table#results tbody tr"},
]


def rig(*args: object) -> tuple[int, str]:
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, res.output


async def record(browser, sites_url: str, out: Path) -> EpisodeDir:
    episode = await record_actions(browser, parse_actions(SCRIPT, "export test"), out, base_url=sites_url)
    assert episode.status == "ok", episode.error
    return EpisodeDir(out)


def records(data: bytes) -> list:
    """(type, headers, content) of every record of a WARC, read with warcio."""
    out = []
    for rec in ArchiveIterator(io.BytesIO(data)):
        out.append((rec.rec_type, rec.rec_headers, rec.content_stream().read()))
    return out


def opened(wacz: Path) -> tuple[zipfile.ZipFile, dict, list[dict]]:
    z = zipfile.ZipFile(wacz)
    package = json.loads(z.read("datapackage.json"))
    pages = [json.loads(line) for line in z.read("pages/pages.jsonl").decode().splitlines()]
    return z, package, pages


async def test_an_episode_exports_with_its_records_pages_and_step_texts(browser, sites_url, tmp_path):
    ep = await record(browser, sites_url, tmp_path / "ep")
    code, out = rig("export", ep.path, "--wacz", tmp_path / "ep.wacz")
    assert code == 0, out
    z, package, pages = opened(tmp_path / "ep.wacz")
    names = set(z.namelist())
    assert {"datapackage.json", "datapackage-digest.json", "pages/pages.jsonl", "indexes/index.cdx.gz",
            "archive/ep.warc.gz"} <= names
    listed = {r["path"]: r for r in package["resources"]}
    assert set(listed) == names - {"datapackage.json", "datapackage-digest.json"}
    for path, res in listed.items():
        assert res["hash"] == "sha256:" + hashlib.sha256(z.read(path)).hexdigest(), path
    assert package["wacz_version"] and package["title"] == "sgr-rig export of ep"

    archived = records(z.read("archive/ep.warc.gz"))
    original = records(ep.warc_file.read_bytes())
    assert [(t, h.get_header("WARC-Record-ID")) for t, h, _ in archived] == \
           [(t, h.get_header("WARC-Record-ID")) for t, h, _ in original]
    texts = {h.get_header("WARC-Record-ID"): c.decode() for t, h, c in archived
             if h.get_header("WARC-Rig-Capture") == "text"}
    steps = ep.steps()
    assert {s.snapshot.warc_record_id for s in steps} <= set(texts)  # every step's text record is there
    assert any(t == "response" for t, _, _ in archived) and any(t == "request" for t, _, _ in archived)

    assert pages[0]["format"] == "json-pages-1.0" and pages[0]["hasText"] is True
    by_url = {p["url"]: p for p in pages[1:]}
    results = next(s for s in steps if "JFK" in texts[s.snapshot.warc_record_id] and s.action.type == "click")
    assert by_url[results.url]["text"] == texts[results.snapshot.warc_record_id]
    assert all(p["ts"].endswith("Z") and p["title"].startswith("ep step ") for p in pages[1:])
    assert validate_wacz(tmp_path / "ep.wacz")


async def test_a_runs_directory_exports_every_episode_under_its_own_name(browser, sites_url, tmp_path):
    runs = tmp_path / "runs"
    for trial in (0, 1):
        await record(browser, sites_url, runs / "t" / "constraint" / "scripted" / f"trial-{trial}")
    code, out = rig("export", runs, "--wacz", tmp_path / "runs.wacz")
    assert code == 0, out
    z, _, pages = opened(tmp_path / "runs.wacz")
    warcs = sorted(n for n in z.namelist() if n.startswith("archive/"))
    assert warcs == ["archive/t-constraint-scripted-trial-0.warc.gz", "archive/t-constraint-scripted-trial-1.warc.gz"]
    assert len({p["id"] for p in pages[1:]}) == len(pages) - 1


async def test_a_torn_archive_exports_its_complete_records(browser, sites_url, tmp_path):
    ep = await record(browser, sites_url, tmp_path / "ep")
    whole = ep.warc_file.read_bytes()
    complete = records(whole)
    ep.warc_file.write_bytes(whole[:-20])  # a killed recording: the last record is cut short
    code, out = rig("export", ep.path, "--wacz", tmp_path / "ep.wacz")
    assert code == 0, out
    z, _, _ = opened(tmp_path / "ep.wacz")
    kept = records(z.read("archive/ep.warc.gz"))
    assert [h.get_header("WARC-Record-ID") for _, h, _ in kept] == \
           [h.get_header("WARC-Record-ID") for _, h, _ in complete[:-1]]
    assert validate_wacz(tmp_path / "ep.wacz")


def test_a_snapshot_exports_with_a_page_per_html_document(tmp_path):
    code, out = rig("export", SNAPSHOTS / "eco", "--wacz", tmp_path / "eco.wacz")
    assert code == 0, out
    z, _, pages = opened(tmp_path / "eco.wacz")
    assert "archive/snapshot-eco.warc.gz" in z.namelist()
    assert z.read("archive/snapshot-eco.warc.gz") == (SNAPSHOTS / "eco" / "snapshot.warc.gz").read_bytes()
    assert pages[1:] and all("/eco/" in p["url"] for p in pages[1:])
    assert validate_wacz(tmp_path / "eco.wacz")


@pytest.mark.parametrize("what", ["missing", "not-a-run", "bad-name"])
def test_bad_input_is_named_and_writes_nothing(tmp_path, what):
    src, out = tmp_path / "nowhere", tmp_path / "out.wacz"
    if what == "not-a-run":
        src.mkdir()
        (src / "notes.txt").write_text("not an episode")
    if what == "bad-name":
        src, out = SNAPSHOTS / "eco", tmp_path / "out.zip"
    code, text = rig("export", src, "--wacz", out)
    assert code == 2  # bad input
    expected = {"missing": "no such episode, runs or snapshot directory", "not-a-run": "nothing to export",
                "bad-name": "must end in .wacz"}[what]
    assert expected in text
    assert not out.exists()


def test_an_existing_wacz_is_kept_unless_forced(tmp_path):
    """Issue 23, item 8: `--wacz OUT` never overwrites OUT without `--force` (exit 2, naming the file)."""
    out = tmp_path / "eco.wacz"
    out.write_bytes(b"someone's earlier export")
    code, text = rig("export", SNAPSHOTS / "eco", "--wacz", out)
    assert code == 2
    assert f"--wacz: {out} exists; --force overwrites it" in " ".join(text.split())
    assert out.read_bytes() == b"someone's earlier export"
    assert [p.name for p in tmp_path.iterdir()] == ["eco.wacz"]  # nothing half-written beside it

    code, text = rig("export", SNAPSHOTS / "eco", "--wacz", out, "--force")
    assert code == 0, text
    assert validate_wacz(out)
    z, _, pages = opened(out)
    assert "archive/snapshot-eco.warc.gz" in z.namelist() and pages[1:]

    (tmp_path / "dir.wacz").mkdir()
    code, text = rig("export", SNAPSHOTS / "eco", "--wacz", tmp_path / "dir.wacz", "--force")
    assert code == 2 and "exists and is not a file" in text
