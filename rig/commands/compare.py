"""`rig compare RUNS_A RUNS_B [--json] [--metric M]`: one metric of two graded runs, per task and per row, B minus A,
with a sign test over tasks (`rig.compare`)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from rig.commands.console import say
from rig.commands.options import AsJson
from rig.compare import compare_runs, format_comparison


def compare(
    runs_a: Path = typer.Argument(..., help="graded runs directory A"),
    runs_b: Path = typer.Argument(..., help="graded runs directory B (deltas are B minus A)"),
    as_json: AsJson = False,
    metric: str = typer.Option("item_f1", "--metric", help="item_f1, row_f1, poa, passed (pass@1), record_*_f1, "
                               "gold_state_reach, state_anchored_rows, ..."),
) -> None:
    """Compare two graded runs on one metric: per task and per row, B minus A, and a sign test over tasks."""
    result = compare_runs(runs_a, runs_b, metric)
    if as_json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        say(format_comparison(result))
