"""`rig qa SNAPSHOT|RUNS_DIR|EPISODE_DIR`: replay fidelity, every page rendered from the archive alone and scored
against what was recorded (`rig.qa`, kept as qa.json); exit 0 every page at or above the threshold, 1 some below,
2 bad input, 3 the browser or the rig failed."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rig.commands.console import emit
from rig.commands.options import AsJson, Headed, QaThreshold
from rig.errors import FOUND
from rig.formats.qa import DEFAULT_QA_THRESHOLD
from rig.qa.run import QaOptions, format_qa
from rig.qa.run import qa as score_qa


def qa(
    path: Path = typer.Argument(..., help="a snapshot directory (or a directory of them), a runs or an episode directory"),
    as_json: AsJson = False,
    threshold: QaThreshold = DEFAULT_QA_THRESHOLD,
    out_dir: Optional[Path] = typer.Option(None, "--out", help="write an HTML page per snapshot or episode here"),
    headed: Headed = False,
) -> None:
    """Score replay fidelity: every page rendered from the archive alone, against what was recorded (qa.json).

    Exit 0 when every page is at or above the threshold, 1 when some are below, 2 on bad input, 3 when the rig failed.
    """
    report, reports = score_qa(path, QaOptions(threshold=threshold, out=out_dir, headless=not headed))
    emit(report, format_qa(report, reports), as_json)
    if not report.passed:
        raise typer.Exit(FOUND)
