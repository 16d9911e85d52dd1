"""Replay fidelity in the report, read from the QA's files and never computed here: an episode's `qa.json` (`rig qa`
on it) and, in a frozen run, `snapshot-qa.json` (the QA of the snapshot the run was served from)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from rig.formats.qa import QA_FILE, SNAPSHOT_QA_FILE, QaReport


def _read(path: Path) -> QaReport | None:
    try:
        return QaReport.read(path) if path.is_file() else None
    except (OSError, ValueError, ValidationError):
        return None  # the report shows no fidelity rather than failing on a bad file


def episode_fidelity(episode_dir: Path) -> QaReport | None:
    """The episode's replay QA (`EPISODE_DIR/qa.json`), when one has been run."""
    return _read(Path(episode_dir) / QA_FILE)


def snapshot_fidelity(runs_dir: Path) -> QaReport | None:
    """A frozen run's copy of its snapshot's QA (`RUNS_DIR/snapshot-qa.json`), when the snapshot had one."""
    return _read(Path(runs_dir) / SNAPSHOT_QA_FILE)
