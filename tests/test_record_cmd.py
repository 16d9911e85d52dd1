"""`rig record` run as its own process: what pages do besides showing content (dialogs, downloads) is answered
and listed in episode.json, as in `rig run` (rig.runner.pageevents)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from pathlib import Path

import yaml
from conftest import HOSTILE as SITE
from test_faults import assert_intact

from rig.episode_dir import EpisodeDir

RIG = Path(sys.executable).parent / "rig"
#: Opens an alert while loading, an alert on click, and a download (relative gotos resolve against --start-url).
SCRIPT = [
    {"goto": "/alert-load"}, {"extract_text": {"selector": "#ok", "as": "loaded"}},
    {"goto": "/dialogs"}, {"click": "#alert"}, {"extract_text": {"selector": "#out", "as": "alerted"}},
    {"goto": "/download"}, {"click": "#file"}, {"extract_text": {"selector": "h1", "as": "title"}},
]


async def test_rig_record_answers_and_lists_dialogs_and_downloads(hostile, tmp_path):
    script, out = tmp_path / "script.yaml", tmp_path / "episode"
    script.write_text(yaml.safe_dump(SCRIPT), encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        str(RIG), "record", "--script", str(script), "--out", str(out), "--start-url", f"{hostile.url}/",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 90)
    assert proc.returncode == 0, (stdout + stderr).decode()[-2000:]

    ep = EpisodeDir(out).read_episode()
    assert (ep.status, ep.error) == ("ok", None)
    steps = assert_intact(out, at_least=1 + len(SCRIPT))  # the start page, then one step per action
    acted = {s["action"].get("target") or s["action"].get("value"): s["step"] for s in steps
             if s["action"]["source"] == "agent"}

    assert ep.dialog_count == 2
    assert ep.dialogs == [
        {"type": "alert", "message": "hello from load", "default_value": None, "url": f"{hostile.url}/alert-load",
         "tab": 0, "after_step": acted["/alert-load"] - 1, "response": "dismissed"},
        {"type": "alert", "message": "plain alert", "default_value": None, "url": f"{hostile.url}/dialogs",
         "tab": 0, "after_step": acted["#alert"] - 1, "response": "dismissed"},
    ]

    assert ep.download_count == 1
    [d] = ep.downloads
    assert d == {"url": f"{hostile.url}/file.csv", "suggested_filename": "hostile.csv", "tab": 0,
                 "after_step": acted["#file"] - 1, "status": "saved", "file": "downloads/0-hostile.csv",
                 "bytes": len(SITE.CSV), "sha256": hashlib.sha256(SITE.CSV).hexdigest()}
    assert (out / d["file"]).read_bytes() == SITE.CSV
    assert ep.tabs == [] and ep.tab_count == 0

    saved = json.loads((out / "episode.json").read_text(encoding="utf-8"))  # the lists are in the file itself
    assert [x["message"] for x in saved["dialogs"]] == ["hello from load", "plain alert"]
    assert [x["file"] for x in saved["downloads"]] == ["downloads/0-hostile.csv"]
