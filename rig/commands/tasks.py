"""`rig tasks list|validate|import|annotate`: task files and the bundled suites (`rig.tasks`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import typer

from rig.commands.console import labelled, out, say, table
from rig.commands.options import AsJson
from rig.errors import FOUND, InputError
from rig.formats.imports import ImportReport
from rig.formats.task import Task
from rig.tasks import bundled_tasks, load_task, tool_tasks
from rig.tasks.annotate import annotate_task, parse_state
from rig.tasks.import_hdr import import_hybrid_deep_research
from rig.tasks.import_sgr import import_sgr_bench

app = typer.Typer(no_args_is_help=True, help="Task files and the bundled SGR-mini suite.")
import_app = typer.Typer(no_args_is_help=True, help="Task files from a published benchmark's records.")
app.add_typer(import_app, name="import")


def listed_tasks(paths: list[Path] | None = None) -> list[tuple[str, Task]]:
    """(suite, task) of the task files under `paths`, or of the bundled suites: SGR-mini, then SGR-tools."""
    if paths:
        files = [f for p in paths for f in (sorted(x for x in p.rglob("*") if x.suffix in (".yaml", ".yml"))
                                            if p.is_dir() else [p])]
        return [("files", load_task(f)) for f in files]
    return [("sgr-mini", t) for t in bundled_tasks()] + [("sgr-tools", t) for t in tool_tasks()]


def task_json(suite: str, t: Task) -> dict[str, Any]:
    """One task as `rig tasks list --json` lists it."""
    return {"id": t.id, "site": t.site, "family": t.family, "suite": suite,
            "columns": t.output.columns if t.output else None,
            "gold_rows": len(t.gold.rows) if t.gold else None,
            "records": len(t.records.gold or []) if t.records else None,
            "gold_states": [s.name for s in t.gold_states], "start_hidden": t.start_hidden,
            "start_url": t.start_url, "origins": t.origins,
            "hybrid_type": t.hybrid_type, "db": t.db}


@app.command("list")
def tasks_list(
    paths: Optional[list[Path]] = typer.Argument(None, help="task files, or folders of them (default: the bundled "
                                                            "suites)"),
    as_json: AsJson = False,
) -> None:
    """List the bundled tasks: SGR-mini, then SGR-tools (discovery and hybrid tasks for the tool server); or the
    task files given (e.g. imported ones, on any origin)."""
    suites = listed_tasks(paths)
    if as_json:
        sys.stdout.write(json.dumps([task_json(suite, t) for suite, t in suites], indent=2) + "\n")
        return
    tasks = [t for _, t in suites]
    rows = []
    for t in tasks:
        hybrid = f"{t.hybrid_type} ({t.db})" if t.hybrid_type else "discovery" if t.start_hidden else "-"
        rows.append((t.id, t.site or t.start_url or "-", t.family,  # a task on any origin shows its start page
                     len(t.gold.rows) if t.gold else "-", len(t.records.gold or []) if t.records else "-",
                     " -> ".join(s.name for s in t.gold_states), hybrid))
    what = "task files" if paths else "bundled tasks"
    table(f"{len(tasks)} {what} ({2 * len(tasks)} with both prompt variants)",
          ("id", "site", "family", "rows", "records", "gold states", "hybrid (db)"), rows)


@app.command("validate")
def tasks_validate(paths: list[Path] = typer.Argument(..., help="task files")) -> None:
    """Validate task files with the checks `rig run` makes; exit 1 naming the file, field and reason of each error."""
    from rig.tasks.checks import validate_task_file
    from rig.tools.registry import check_reference_tools

    bad = 0
    for path in paths:
        try:
            task = validate_task_file(path)  # the checks `rig run` makes before its first episode
            check_reference_tools(task)  # a tool-call script's tools and arguments, against the tool registry
        except InputError as exc:  # an invalid file is what this command finds: exit 1, not 2
            bad += 1
            labelled("invalid", "red", str(exc))
            continue
        labelled("valid", "green", f"{path} ({task.id})", out)
    if bad:
        raise typer.Exit(FOUND)


def show_import(report: ImportReport, as_json: bool) -> None:
    """Print an import's report; exit 1 when a record could not be imported."""
    if as_json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    else:
        for t in report.imported:
            rows = "" if t.rows is None else f" ({t.rows} gold rows)"
            labelled("imported", "green", f"{', '.join(t.source_ids)} -> {t.file}{rows}", out)
        for s in report.skipped:
            labelled("kept", "yellow", f"{s.file} (exists; --force overwrites)", out)
        for p in report.failed:
            where = f"{p.file}:{p.line}" if p.line else p.file
            what = ": ".join(x for x in (p.task_id and f"task {p.task_id}", p.field) if x)
            labelled("not imported", "red", f"{where}{f' ({what})' if what else ''}: {p.reason}")
        say(f"{len(report.imported)} imported, {len(report.skipped)} kept, {len(report.failed)} not imported "
            f"into {report.out}")
    if report.failed:
        raise typer.Exit(FOUND)


@import_app.command("sgr-bench")
def tasks_import_sgr_bench(
    constraint: Path = typer.Argument(..., help="the constraint-guided records (JSONL)"),
    goal: Path = typer.Argument(..., help="the goal-oriented records (JSONL; ids are the constraint ids plus -g)"),
    out_dir: Path = typer.Option(..., "--out", help="directory for the task files"),
    force: bool = typer.Option(False, "--force", help="overwrite task files that exist"),
    as_json: bool = typer.Option(False, "--json", help="print the import report as JSON on stdout"),
) -> None:
    """One task file per SGR-Bench constraint/goal pair; exit 1 when a record could not be imported, 2 when a
    file could not be read."""
    show_import(import_sgr_bench(constraint, goal, out_dir, force=force), as_json)


@import_app.command("hybrid-deep-research")
def tasks_import_hybrid_deep_research(
    records: Path = typer.Argument(..., help="HybridDeepResearch's records (JSONL)"),
    out_dir: Path = typer.Option(..., "--out", help="directory for the task files"),
    force: bool = typer.Option(False, "--force", help="overwrite task files that exist"),
    as_json: bool = typer.Option(False, "--json", help="print the import report as JSON on stdout"),
) -> None:
    """One task file per HybridDeepResearch record; exit 1 when a record could not be imported, 2 when the file
    could not be read."""
    show_import(import_hybrid_deep_research(records, out_dir, force=force), as_json)


@app.command("annotate")
def tasks_annotate(
    task_file: Path = typer.Argument(..., help="the task file to write gold states into"),
    from_episode: Path = typer.Option(..., "--from-episode", help="a recorded episode directory (the demonstration)"),
    state: list[str] = typer.Option(..., "--state", help="NAME=STEP: a gold state read from that step (repeatable)"),
    keys: Optional[str] = typer.Option(None, "--keys", help="state keys to constrain, comma-separated, globs allowed "
                                                            "(default: the step's dim.* keys)"),
    keep_solution: bool = typer.Option(False, "--keep-solution", help="leave the task's reference solution alone"),
    allow_unfinished: bool = typer.Option(False, "--allow-unfinished", help="annotate from an episode that did not "
                                                                            "end ok (with a warning)"),
    force: bool = typer.Option(False, "--force", help="replace gold states of the same name and the task's reference "
                                                      "solution (the old file is kept as TASK_FILE.bak)"),
) -> None:
    """Gold states by demonstration: write recorded steps' states as gold states (with evidence requirements) and
    the episode's actions as the reference solution; the rest of the task file is kept (comments are not)."""
    specs = [parse_state(s) for s in state]
    names = [k.strip() for k in keys.split(",") if k.strip()] if keys else None
    done = annotate_task(task_file, from_episode, specs, names, keep_solution=keep_solution,
                         allow_unfinished=allow_unfinished, force=force)
    for warning in done.warnings:
        labelled("warning:", "yellow", warning)
    for name, step, n in done.states:
        say(f"gold state {name}: step {step}, {n} constraints (tag scope: edit tags and dependencies)")
    if done.solution_actions is not None:
        say(f"reference solution: {done.solution_actions} actions")
    for note in done.notes:
        labelled("note:", "yellow", note)
    say(f"annotated {task_file} ({done.task.id})")
