"""`rig demo`: the main job on the bundled sites, offline, with no API key.

Serves the bundled sites; runs the reference agent and the six fault-injected agents on a
representative subset of SGR-mini (one task per site plus a record-taking task, constraint prompts; `--all`: every task, both
prompts), all in one run, and the reference agent on one hybrid web+SQL task through the recorded MCP tool server;
records every episode; grades the run; writes the report.
"""

from __future__ import annotations

from pathlib import Path

import typer
from loguru import logger
from rich.progress import Progress

from rig.agents.perturbed import KINDS
from rig.commands.console import labelled, progress, say, table
from rig.formats.summary import Summary
from rig.grading.runs import grade_runs
from rig.report.build import write_report
from rig.runner.config import RunConfig
from rig.runner.run import run
from rig.sites import SitesServer
from rig.tasks import bundled_tasks

#: The representative subset: one task per site, each exercising a different state mechanism, and one task that
#: takes evidence records (so the report shows record metrics).
SUBSET = ("flights-03", "stats-02", "eco-02", "flights-06")
AGENTS = ("reference", *(f"perturbed:{k}" for k in KINDS))
#: A hybrid web+SQL task from SGR-tools, solved by the reference agent's tool-call script through the episode's
#: recorded MCP tool server (web_search finds the portal, web_fetch reads it, run_sql computes the answer).
HYBRID = "hybrid-s2sql-03"


def run_demo(out_dir: Path, *, all_tasks: bool = False, concurrency: int = 2,
             progress: Progress | None = None) -> tuple[Summary, Path]:
    """Run, grade and report the demo; return the run summary and the report's index page."""
    runs_dir = out_dir / "runs"
    tasks = [t.id for t in bundled_tasks()] if all_tasks else list(SUBSET)
    variants = ["constraint", "goal"] if all_tasks else ["constraint"]
    with SitesServer() as srv:
        logger.info("bundled sites at {}", srv.url)
        run(RunConfig(tasks=tasks, agent=list(AGENTS), runs_dir=runs_dir, variants=variants, concurrency=concurrency,
                      resume=True, sites_url=srv.url), progress)
        run(RunConfig(tasks=[HYBRID], agent="reference", runs_dir=runs_dir, variants=variants, resume=True,
                      sites_url=srv.url), progress)
    summary = grade_runs(runs_dir)
    return summary, write_report(runs_dir, out_dir / "report")


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def show_summary(summary: Summary) -> None:
    """The demo's results table, then how far the automatic failure labels agree with the injected faults."""
    records = any(g.record_episodes for g in summary.groups)  # evidence-records tasks ran: show their F1s
    columns = ("agent", "variant", "Item-F1", "Row-F1", "P.O.A.", *(("record F1 soft/hard",) if records else ()),
               "gold-state reach", "state-anchored rows", "failure labels")
    rows = []
    for g in summary.groups:
        labels = ", ".join(f"{k} {n}" for k, n in g.failures.items() if n) or "–"
        rec = (f"{_pct(g.record_soft_f1)} / {_pct(g.record_hard_f1)}",) if records else ()
        rows.append((g.agent, g.variant or "", _pct(g.item_f1), _pct(g.row_f1), _pct(g.poa), *rec,
                     _pct(g.gold_state_reach), _pct(g.state_anchored_rows), labels))
    table(f"sgr-rig demo: {summary.episodes} episodes on the bundled sites", columns, rows)
    if summary.label_agreement:
        detail = ", ".join(f"{k} {_pct(v)}" for k, v in summary.label_agreement.items() if k != "overall")
        say(f"automatic failure labels agree with the injected faults: {_pct(summary.label_agreement['overall'])} % "
            f"({detail})")
    if summary.infra:
        labelled("note:", "yellow", f"{summary.infra} episodes hit infrastructure failures and were not scored")


def demo(
    out_dir: Path = typer.Option(Path("rig-demo"), "--out", help="where the demo writes its runs and report"),
    all_tasks: bool = typer.Option(False, "--all", help="every bundled task and both prompt variants"),
    concurrency: int = typer.Option(2, "--concurrency", help="episodes at once"),
) -> None:
    """Serve the bundled sites; run the reference and fault-injected agents; record, grade and report (offline)."""
    with progress() as bar:
        summary, report = run_demo(out_dir, all_tasks=all_tasks, concurrency=concurrency, progress=bar)
    show_summary(summary)
    say(f"summary: {out_dir / 'runs' / 'summary.md'}")
    say(f"report: {report}")
