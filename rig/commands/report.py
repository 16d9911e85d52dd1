"""`rig report RUNS_DIR` (the static HTML report) and `rig view RUNS_DIR` (the same served on 127.0.0.1, with the
audit workflow) (`rig.report`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rig.commands.console import say
from rig.report import serve_view, write_report
from rig.runner.step_images import draw_missing_images


def report(
    runs_dir: Path = typer.Argument(..., help="a graded runs directory"),
    out_dir: Optional[Path] = typer.Option(None, "--out", help="report folder (default RUNS_DIR/report)"),
    compare_with: Optional[Path] = typer.Option(None, "--compare", help="another graded runs directory: adds a "
                                                "comparison page (compare.html), this run as A and that one as B"),
    metric: str = typer.Option("item_f1", "--metric", help="the metric the comparison page compares"),
) -> None:
    """Write the static HTML report of a run (works offline, no external request); step images recorded as DOM
    snapshots are drawn first, once."""
    draw_missing_images(runs_dir)
    say(f"report: {write_report(runs_dir, out_dir, compare_with=compare_with, metric=metric)}")


def view(
    runs_dir: Path = typer.Argument(..., help="a graded runs directory"),
    port: int = typer.Option(8766, "--port", help="port on 127.0.0.1"),
) -> None:
    """Serve the report on 127.0.0.1, with audit labels saved to each episode's audit.json; step images recorded as
    DOM snapshots are drawn first, once."""
    draw_missing_images(runs_dir)
    serve_view(runs_dir, port)
