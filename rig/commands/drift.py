"""`rig drift RUNS_DIR|EPISODE_DIR|SNAPSHOT_DIR`: re-check what was archived against the live origin (`rig.drift`);
exit 0 nothing changed, 1 something changed or is gone, 2 bad input, 3 an origin could not be reached."""

from __future__ import annotations

from pathlib import Path

import typer

from rig.commands.console import emit
from rig.commands.options import AsJson, Headed, IgnoreHttpsErrors, Resolve
from rig.drift import DriftOptions, check_drift
from rig.errors import FOUND, InfraError
from rig.formats.drift import DriftReport
from rig.network.resolve import parse_resolve


def format_drift(report: DriftReport) -> str:
    """A human summary: the counts, then each item changed, gone or not reached (with its diff)."""
    counts = f"{report.unchanged} unchanged, {report.changed} changed, {report.gone} gone"
    lines = [counts + (f", {report.unreachable} not reached" if report.unreachable else "")]
    for item in report.items:
        if item.status == "unchanged":
            continue
        where = f"step {item.step} " if item.step is not None else ""
        lines.append(f"{item.status}: {where}{item.method + ' ' if item.kind == 'data' else ''}{item.url}"
                     + (f" ({item.reason})" if item.reason and item.status != "unreachable" else "")
                     + f"  [{item.source}]")
        if item.diff:
            lines += ["    " + ln for ln in item.diff.splitlines()]
    lines += [f"unreachable: {o.origin}: {o.reason}" for o in report.unreachable_origins]
    lines += [f"skipped: {s}" for s in report.skipped]
    return "\n".join(lines)


def unreachable_error(report: DriftReport) -> InfraError:
    """The infrastructure failure of a check that could not reach an origin."""
    origins = "; ".join(f"cannot reach {o.origin}: {o.reason}" for o in report.unreachable_origins)
    return InfraError(f"{origins} (nothing of it was compared: that is no drift)")


def drift(
    paths: list[Path] = typer.Argument(..., help="a runs directory, an episode directory or a snapshot directory"),
    resolve: Resolve = None,
    ignore_https_errors: IgnoreHttpsErrors = False,
    as_json: AsJson = False,
    headed: Headed = False,
) -> None:
    """Re-check episodes (re-driven live) or a snapshot (every request re-sent) against the live origin.

    Exit 0 when nothing changed, 1 when something changed or is gone, 2 on bad input, 3 when an origin could not be
    reached at all (DNS, TLS or connect: the report lists it; --resolve or --ignore-https-errors may reach it).
    """
    options = DriftOptions(resolve=parse_resolve(resolve or []), ignore_https_errors=ignore_https_errors,
                           headless=not headed)
    report = check_drift(paths, options)
    emit(report, format_drift(report), as_json)
    if report.unreachable_origins:
        raise unreachable_error(report)
    if report.drifted:
        raise typer.Exit(FOUND)
