"""`rig demo`: the main job on the bundled sites, offline, with no API key.

Serves the bundled sites and runs a small designed run (constraint prompts): the reference agent on one task of
every source family (SGR-Bench's six and the transport site) and on a task that takes evidence records, each of the
six fault-injected agents on one family's task (the faults taken in turn over the families), and the reference agent
on one hybrid web+SQL task through the recorded MCP tool server; records every episode; grades the run; writes the
report. `--all`: every agent on every task, both prompts.
"""

from __future__ import annotations

from pathlib import Path

import typer
from loguru import logger
from rich.progress import Progress

from rig.agents.perturbed import KINDS, check_supported
from rig.commands.console import labelled, progress, say, table
from rig.errors import InputError
from rig.formats.summary import Summary
from rig.formats.task import Task
from rig.grading.runs import grade_runs
from rig.report.build import write_report
from rig.runner.config import RunConfig
from rig.runner.run import run
from rig.sites import SitesServer
from rig.tasks import bundled_tasks

#: The task that stands for its family where a family has several (else the family's first task by id): each
#: exercises a different state mechanism.
PREFERRED = ("flights-03", "stats-02", "eco-02")
#: A task that takes evidence records (so the report shows record metrics), run by the reference agent.
RECORDS = "flights-06"
AGENTS = ("reference", *(f"perturbed:{k}" for k in KINDS))
#: A hybrid web+SQL task from SGR-tools, solved by the reference agent's tool-call script through the episode's
#: recorded MCP tool server (web_search finds the portal, web_fetch reads it, run_sql computes the answer).
HYBRID = "hybrid-s2sql-03"
#: The family that is none of SGR-Bench's six: it takes no fault in the demo's design.
TRANSPORT = "transport"


def family_tasks(tasks: list[Task]) -> list[Task]:
    """One bundled web task per source family (SGR-Bench's families first, transport last): the preferred one, else
    the family's first by id."""
    by_family: dict[str, list[Task]] = {}
    for task in sorted(tasks, key=lambda t: t.id):
        if task.site is not None and not task.id.startswith("hybrid-"):
            by_family.setdefault(task.family, []).append(task)
    chosen = [next((t for t in group if t.id in PREFERRED), group[0]) for group in by_family.values()]
    return sorted(chosen, key=lambda t: (t.family == TRANSPORT, t.family))


def design(tasks: list[Task]) -> dict[str, list[str]]:
    """Which tasks each agent runs: the reference agent every family's task and the records task; fault `i` the `i`-th
    family's task, or the next family's that can take it."""
    families = family_tasks(tasks)
    sgr = [t for t in families if t.family != TRANSPORT] or families
    plan = {"reference": [t.id for t in families] + [RECORDS]}
    for i, kind in enumerate(KINDS):
        for task in sgr[i % len(sgr):] + sgr[:i % len(sgr)]:
            try:
                check_supported(task, kind)
            except InputError:
                continue
            plan[f"perturbed:{kind}"] = [task.id]
            break
        else:
            raise InputError("rig demo", None, f"no family's task can take the fault {kind}")
    return plan


def run_demo(out_dir: Path, *, all_tasks: bool = False, concurrency: int = 2,
             progress: Progress | None = None) -> tuple[Summary, Path]:
    """Run, grade and report the demo; return the run summary and the report's index page."""
    runs_dir = out_dir / "runs"
    bundled = bundled_tasks()
    by_agent = None if all_tasks else design(bundled)
    tasks = [t.id for t in bundled] if by_agent is None else sorted({i for ids in by_agent.values() for i in ids})
    variants = ["constraint", "goal"] if all_tasks else ["constraint"]
    with SitesServer() as srv:
        logger.info("bundled sites at {}", srv.url)
        run(RunConfig(tasks=tasks, agent=list(AGENTS), runs_dir=runs_dir, variants=variants, concurrency=concurrency,
                      resume=True, sites_url=srv.url, tasks_by_agent=by_agent), progress)
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
