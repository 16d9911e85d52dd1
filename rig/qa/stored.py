"""QA results kept with what they scored: a snapshot's `qa.json`, read back when a frozen run serves the snapshot
(a warning when pages fell under the threshold) and copied into the run (`snapshot-qa.json`) for its report."""

from __future__ import annotations

from pathlib import Path

from loguru import logger
from pydantic import ValidationError

from replay import ReplayError
from replay.snapshot import snapshot_dirs
from rig.formats.qa import QA_FILE, SNAPSHOT_QA_FILE, QaReport
from rigwarc.atomic import atomic_write


def snapshot_qa(path: Path) -> QaReport | None:
    """The QA of the snapshot(s) at `path` (a snapshot directory or a directory of them), merged; None when none
    was scored. A `qa.json` that does not read is warned about and left out."""
    reports = []
    try:
        dirs = snapshot_dirs(path)
    except ReplayError:
        return None
    for d in dirs:
        if not (d / QA_FILE).is_file():
            continue
        try:
            reports.append(QaReport.read(d / QA_FILE))
        except (OSError, ValueError, ValidationError) as exc:
            logger.warning("{}: not a QA report ({}); run `rig qa {}` again", d / QA_FILE, str(exc).splitlines()[0], d)
    if not reports:
        return None
    if len(reports) == 1:
        return reports[0]
    return QaReport.of([p for r in reports for p in r.pages], reports[0].summary.threshold, str(path),
                       notes=[n for r in reports for n in r.notes])


def frozen_warning(path: Path, report: QaReport | None) -> str | None:
    """What `rig run --frozen` warns of a snapshot whose QA found pages under the threshold (None: nothing)."""
    if report is None or not report.summary.below:
        return None
    s = report.summary
    shown = ", ".join(f"{b.url}{f' (step {b.step})' if b.step is not None else ''}: {b.score:.2f} {b.worst}"
                      for b in s.below[:3])
    more = f" and {len(s.below) - 3} more" if len(s.below) > 3 else ""
    return (f"{path}: its replay QA found {len(s.below)} of {s.pages} pages below {s.threshold:g} ({shown}{more}): "
            f"frozen runs serve those pages unlike the recording; see `rig qa {path} --out DIR`")


def warn_if_low(path: Path) -> None:
    """`rig run --frozen`: warn when the snapshot's QA found pages under its threshold."""
    if (warning := frozen_warning(path, snapshot_qa(path))) is not None:
        logger.warning(warning)


def keep_in_run(path: Path, runs_dir: Path) -> Path | None:
    """Copy the QA of the snapshot a frozen run is served from into the runs directory (`snapshot-qa.json`, for its
    report); None when the snapshot has no QA."""
    report = snapshot_qa(path)
    if report is None:
        return None
    return atomic_write(Path(runs_dir) / SNAPSHOT_QA_FILE, report.model_dump_json(indent=1) + "\n")
