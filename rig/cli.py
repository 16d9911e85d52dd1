"""The `rig` command: parsing, progress bars and exit codes only; the work lives in modules."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from rig.errors import InputError, RigError
from rig.formats.imports import ImportReport
from rig.log import setup_logging

if TYPE_CHECKING:
    from rig.network.politeness import Politeness

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Drive, record, grade and replay web research agents.")
sites_app = typer.Typer(no_args_is_help=True, help="The bundled replica sites.")
tasks_app = typer.Typer(no_args_is_help=True, help="Task files and the bundled SGR-mini suite.")
app.add_typer(sites_app, name="sites")
app.add_typer(tasks_app, name="tasks")

# When output goes to a file or pipe, do not squeeze tables into 80 columns.
out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)

STEP_IMAGES_HELP = ("where step images come from: live (a screenshot of each step while it is the page's state), "
                    "dom (none while recording: `rig render` draws them later from the archived DOM snapshots) or off")


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="debug logs on stderr")) -> None:
    setup_logging(verbose=verbose)


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err,
                    redirect_stdout=False)


def _politeness(rate_limit: float, max_per_host: int) -> Politeness:
    """A live run's politeness from `--rate-limit` and `--max-per-host`."""
    from rig.network.politeness import Politeness

    return Politeness(rate_per_host=rate_limit, max_per_host=max_per_host)


def _fail(exc: RigError, code: int = 1) -> None:
    err.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@app.command()
def demo(
    out_dir: Path = typer.Option(Path("rig-demo"), "--out", help="where the demo writes its runs and report"),
    all_tasks: bool = typer.Option(False, "--all", help="every bundled task and both prompt variants"),
    concurrency: int = typer.Option(2, "--concurrency", help="episodes at once"),
) -> None:
    """Serve the bundled sites; run the reference and fault-injected agents; record, grade and report (offline)."""
    from rig.demo import run_demo

    try:
        with _progress() as progress:
            summary, report = run_demo(out_dir, all_tasks=all_tasks, concurrency=concurrency, progress=progress)
    except RigError as exc:
        _fail(exc)
    table = Table(title=f"sgr-rig demo: {summary.episodes} episodes on the bundled sites")
    records = any(g.record_episodes for g in summary.groups)  # evidence-records tasks ran: show their F1s
    for col in ("agent", "variant", "Item-F1", "Row-F1", "P.O.A.", *(("record F1 soft/hard",) if records else ()),
                "gold-state reach", "state-anchored rows", "failure labels"):
        table.add_column(col)
    pct = lambda x: "–" if x is None else f"{100 * x:.1f}"  # noqa: E731
    for g in summary.groups:
        labels = ", ".join(f"{k} {n}" for k, n in g.failures.items() if n) or "–"
        rec = (f"{pct(g.record_soft_f1)} / {pct(g.record_hard_f1)}",) if records else ()
        table.add_row(g.agent, g.variant or "", pct(g.item_f1), pct(g.row_f1), pct(g.poa), *rec,
                      pct(g.gold_state_reach), pct(g.state_anchored_rows), labels)
    out.print(table)
    if summary.label_agreement:
        detail = ", ".join(f"{k} {pct(v)}" for k, v in summary.label_agreement.items() if k != "overall")
        out.print(f"automatic failure labels agree with the injected faults: {pct(summary.label_agreement['overall'])} % "
                  f"({detail})", highlight=False, soft_wrap=True)
    if summary.infra:
        out.print(f"[yellow]{summary.infra} episodes hit infrastructure failures and were not scored[/yellow]")
    out.print(f"summary: {out_dir / 'runs' / 'summary.md'}", highlight=False, soft_wrap=True)
    if report is not None:
        out.print(f"report: {report}", highlight=False, soft_wrap=True)


@app.command()
def record(
    script: Path = typer.Option(..., "--script", help="action script (YAML or JSON)"),
    out_dir: Path = typer.Option(..., "--out", help="episode directory to write"),
    start_url: Optional[str] = typer.Option(None, "--start-url", help="open this first; relative gotos resolve against it"),
    headed: bool = typer.Option(False, "--headed", help="show the browser window (needs a display)"),
    live: bool = typer.Option(False, "--live", help="the browser may reach the network (default: loopback only)"),
    resolve: Optional[list[str]] = typer.Option(None, "--resolve", help="HOST=ADDR:PORT: requests for HOST go there "
                                                                        "(repeatable)"),
    ignore_https_errors: bool = typer.Option(False, "--ignore-https-errors", help="accept self-signed certificates"),
    rate_limit: float = typer.Option(4.0, "--rate-limit", help="live: requests a second per host at most (0: none)"),
    max_per_host: int = typer.Option(4, "--max-per-host", help="live: requests in flight per host at most (0: none)"),
    step_images: str = typer.Option("live", "--step-images", help=STEP_IMAGES_HELP),
) -> None:
    """Run one action script in a recorded browser; write an episode directory."""
    import asyncio

    from rig.network.settings import Network
    from rig.runner.record import record_script
    from rig.step_images import recorder_options

    try:
        options = recorder_options(step_images)  # type: ignore[arg-type]
        network = Network.of(live, resolve or [], ignore_https_errors, _politeness(rate_limit, max_per_host))
        episode = asyncio.run(record_script(script, out_dir, start_url, headless=not headed, network=network,
                                            options=options))
    except RigError as exc:
        _fail(exc)
    out.print(f"{out_dir}: {episode.status}, {episode.steps} steps" + (f" ({episode.error})" if episode.error else ""),
              highlight=False, soft_wrap=True)
    if episode.status != "ok":
        raise typer.Exit(1)


@app.command()
def run(
    task: list[str] = typer.Option(..., "--task", help="task id, task file, or `all` (repeatable)"),
    agent: list[str] = typer.Option(..., "--agent", help="reference, scripted:FILE, perturbed:KIND, browser-use, cdp, "
                                                         "operator, mcp, cli (repeatable: several agents in one run)"),
    variant: Optional[list[str]] = typer.Option(None, "--variant", help="constraint or goal (default: both)"),
    trials: int = typer.Option(1, "--trials", help="episodes per (task, variant)"),
    out_dir: Path = typer.Option(Path("runs"), "--out", help="runs directory"),
    concurrency: int = typer.Option(1, "--concurrency", help="episodes at once, each in its own browser context"),
    resume: bool = typer.Option(False, "--resume", help="skip episodes already complete"),
    model: Optional[str] = typer.Option(None, "--model", help="LLM for browser-use, e.g. openai:gpt-4.1-mini"),
    answer_file: Optional[Path] = typer.Option(None, "--answer-file", help="operator: the product's answer (markdown)"),
    command: Optional[str] = typer.Option(None, "--command", help="cli: the CLI agent's shell command, run against the "
                                                                  "episode's MCP tool server (docs/cli-agents.md)"),
    max_steps: int = typer.Option(60, "--max-steps", help="step budget per episode"),
    timeout: float = typer.Option(300.0, "--timeout", help="wall-clock budget per episode, seconds"),
    stall: float = typer.Option(120.0, "--stall", help="end an episode with no new step for this long, seconds"),
    retry_infra: Optional[int] = typer.Option(None, "--retry-infra", help="retry an episode the infrastructure failed "
                                              "up to N times (default 2); with --resume: run only those again"),
    stall_timeout: Optional[float] = typer.Option(None, "--stall-timeout", help="kill an episode with no step and no "
                                                  "output for this long, seconds, as an infrastructure failure"),
    sites_url: Optional[str] = typer.Option(None, "--sites-url", help="use running sites instead of serving them"),
    executor: str = typer.Option("local", "--executor", help="local (asyncio) or ray (RAY_ADDRESS selects a cluster)"),
    frozen: Optional[Path] = typer.Option(None, "--frozen", help="answer every request from a snapshot, e.g. site_snapshots/ or site_snapshots/eco"),
    headed: bool = typer.Option(False, "--headed", help="show the browser (needs a display)"),
    allow_host: Optional[list[str]] = typer.Option(
        None, "--allow-host", help="live runs reach only the sites server and these hosts (HOST or HOST:PORT, repeatable)"),
    live: bool = typer.Option(False, "--live", help="the browser may reach the network (default: loopback only; a task "
                                                    "off loopback needs --live or --frozen)"),
    resolve: Optional[list[str]] = typer.Option(None, "--resolve", help="HOST=ADDR:PORT: requests for HOST go there "
                                                                        "(repeatable)"),
    ignore_https_errors: bool = typer.Option(False, "--ignore-https-errors", help="accept self-signed certificates"),
    rate_limit: float = typer.Option(4.0, "--rate-limit", help="live: requests a second per host at most (0: none)"),
    max_per_host: int = typer.Option(4, "--max-per-host", help="live: requests in flight per host at most (0: none)"),
    step_images: str = typer.Option("live", "--step-images", help=STEP_IMAGES_HELP),
) -> None:
    """Run episodes of tasks: one episode directory per (task, variant, agent, trial)."""
    from rig.agents.base import Budget
    from rig.runner.config import RunConfig
    from rig.runner.run import run as run_episodes

    config = RunConfig(
        tasks=task, agent=agent, runs_dir=out_dir, variants=variant, trials=trials, concurrency=concurrency,
        resume=resume, model=model, answer_file=answer_file, budget=Budget(max_steps, timeout, stall, stall_timeout),
        sites_url=sites_url, executor=executor, frozen=frozen, headless=not headed, allow_hosts=allow_host,  # type: ignore[arg-type]
        retry_infra=retry_infra,
        command=command, live=live, resolve=resolve or [], ignore_https_errors=ignore_https_errors,
        politeness=_politeness(rate_limit, max_per_host), step_images=step_images,  # type: ignore[arg-type]
    )
    try:
        with _progress() as progress:
            episodes = run_episodes(config, progress)
    except RigError as exc:
        _fail(exc)
    table = Table(title=f"{len(episodes)} episodes in {out_dir}")
    for col in ("task", "variant", "agent", "trial", "status", "steps", "seconds"):
        table.add_column(col)
    for e in episodes:
        table.add_row(e.task_id or "", e.variant or "", e.agent, str(e.trial), e.status, str(e.steps), f"{e.seconds or 0:.1f}")
    out.print(table)
    if any(e.status == "infra_error" for e in episodes):
        raise typer.Exit(3)


@app.command("mcp-stdio")
def mcp_stdio(
    url: Optional[str] = typer.Option(None, "--url", envvar="RIG_MCP_URL",
                                      help="the episode's MCP endpoint (default: $RIG_MCP_URL)"),
) -> None:
    """Relay an episode's MCP tool server over stdio, for clients that only start stdio servers (docs/cli-agents.md)."""
    from rig.agents.mcp_stdio import run_relay

    try:
        run_relay(url)
    except RigError as exc:
        _fail(exc)


@app.command()
def submit(
    episode_dir: Path = typer.Argument(..., help="the episode directory `rig run --agent cdp` printed"),
    answer: Path = typer.Option(..., "--answer", help="answer.json, or a Markdown/TSV/CSV table with links"),
) -> None:
    """Hand in the answer of an episode driven from outside (`--agent cdp`, `operator`).

    An answer with no readable table is handed in too: the episode ends with status parse_failure (exit 1).
    """
    from rig.agents.cdp import submit_text
    from rig.formats.answer_text import ParseFailure

    from rig.formats.files import read_limited

    try:
        text = read_limited(answer, "the answer").decode("utf-8")
    except InputError as exc:
        _fail(exc)
    except UnicodeDecodeError as exc:
        _fail(InputError(str(answer), f"byte {exc.start}", "not UTF-8 text"))
    try:
        path = submit_text(episode_dir, text, str(answer))
    except RecursionError:
        _fail(InputError(str(answer), None, "nested too deeply to be an answer"))
    except ParseFailure as exc:
        _fail(RigError(f"{exc}; handed in as unparseable: the episode ends with status parse_failure"))
    except RigError as exc:
        _fail(exc)
    out.print(f"answer handed in: {path}", highlight=False, soft_wrap=True)


@app.command()
def score(
    gold: Path = typer.Option(..., "--gold", help="gold table: Markdown/pipe, TSV, CSV or answer.json"),
    pred: Path = typer.Option(..., "--pred", help="predicted table, same formats"),
    key: list[str] = typer.Option(..., "--key", help="row-key column (repeatable)"),
    rules: Optional[Path] = typer.Option(None, "--rules", help="canonicalisation rules (JSON)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON on stdout"),
) -> None:
    """Score one answer table against a gold table: Item-F1, Row-F1, pairwise order accuracy."""
    from rig.grading.score import load_rules, score_files

    try:
        result = score_files(gold, pred, key, load_rules(rules) if rules else None)
    except RigError as exc:
        _fail(exc)
    except RecursionError:
        _fail(RigError("--gold/--pred/--rules: a file is nested too deeply to be a table or a rule set"))
    if as_json:
        sys.stdout.write(json.dumps(result) + "\n")
        return
    if result["status"] != "ok":
        out.print(f"parse_failure: {result.get('error', '')}", highlight=False, soft_wrap=True)
        return
    out.print(f"Item-F1 {result['item_f1']:.3f}  Row-F1 {result['row_f1']:.3f}  P.O.A. {result['poa']:.3f}")


@app.command()
def replay(
    episode_dir: Path = typer.Argument(..., help="an episode directory"),
    as_json: bool = typer.Option(False, "--json", help="print JSON on stdout"),
    headed: bool = typer.Option(False, "--headed", help="show the browser (needs a display)"),
) -> None:
    """Re-drive the recorded actions against the episode's own archive (no network); exit 0 when every step matched."""
    from rig.replay_cmd import format_report
    from rig.replay_cmd import replay as replay_episode

    try:
        report = replay_episode(episode_dir, headless=not headed)
    except RigError as exc:
        _fail(exc)
    if as_json:
        sys.stdout.write(json.dumps(report.to_json()) + "\n")
    else:
        out.print(format_report(report), highlight=False, soft_wrap=True)
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def verify(
    episode_dir: Path = typer.Argument(..., help="an episode directory"),
    answer: Path = typer.Option(..., "--answer", help="answer.json (or any table format `rig score` reads)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON on stdout"),
) -> None:
    """Check every citation of an answer against the episode's own snapshots (and the task's gold states)."""
    from rig.grading.citations import verify_episode

    try:
        result = verify_episode(episode_dir, answer)
    except RigError as exc:
        _fail(exc)
    if as_json:
        sys.stdout.write(json.dumps(result) + "\n")
        return
    table = Table(title=f"citations of {answer}")
    for col in ("#", "url", "verified", "step", "state-anchored", "reason"):
        table.add_column(col)
    for c in result["citations"]:
        table.add_row(str(c["index"]), c["url"], "yes" if c["verified"] else "no", str(c["step"]),
                      str(c.get("state_anchored", "")), c["reason"])
    out.print(table)


@app.command()
def grade(
    path: Path = typer.Argument(..., help="a runs directory or one episode directory"),
    as_json: bool = typer.Option(False, "--json", help="print the run summary as JSON on stdout"),
    jobs: Optional[int] = typer.Option(None, "--jobs", help="grading processes (default: one per CPU for runs of "
                                       "20 episodes or more, else 1)"),
    force: bool = typer.Option(False, "--force", help="regrade every episode, also those whose grade.json is current"),
    judge: Optional[str] = typer.Option(None, "--judge", help="provider:model of an LLM judge deciding the free-text "
                                        "hybrid tasks (sql_to_search, parallel), as browser-use's --model"),
    mix_revisions: bool = typer.Option(False, "--mix-revisions", help="summarise episodes of two revisions of a task "
                                       "in one row (refused otherwise, exit 2)"),
) -> None:
    """Grade episodes: grade.json per episode, summary.json and summary.md for a run (with 95 % intervals over tasks).

    An episode whose grade.json is newer than its files, with the same task file and grader, keeps it (--force
    regrades). Exit 1 when an episode (or a trial directory) could not be graded: it is counted and listed, never
    dropped. Exit 2 when a summary row would mix two revisions of a task (without --mix-revisions).
    """
    from rig.grading.runs import grade_run
    from rig.grading.summary import MixedRevisions, markdown, summary_json

    try:
        if judge is not None:
            from rig.judge_llm import judge_factory
        result = grade_run(path, jobs=jobs, force=force, judge=judge_factory(judge) if judge is not None else None,
                           mix_revisions=mix_revisions)
    except MixedRevisions as exc:
        _fail(exc, 2)
    except RigError as exc:
        _fail(exc)
    summary = result.summary
    err.print(f"graded {result.graded} episodes, kept {result.kept} unchanged (grade.json current; --force regrades "
              f"them), {result.jobs} process{'es' if result.jobs > 1 else ''}", highlight=False, soft_wrap=True)
    if as_json:
        sys.stdout.write(summary_json(summary) + "\n")
    else:
        out.print(markdown(summary), highlight=False, soft_wrap=True)
    if summary.ungraded:
        err.print(f"[red]{summary.ungraded} of {summary.episodes} episodes could not be graded[/red] (listed in the "
                  "summary with the reason)", highlight=False, soft_wrap=True)
        raise typer.Exit(1)


@app.command()
def report(
    runs_dir: Path = typer.Argument(..., help="a graded runs directory"),
    out_dir: Optional[Path] = typer.Option(None, "--out", help="report folder (default RUNS_DIR/report)"),
    compare_with: Optional[Path] = typer.Option(None, "--compare", help="another graded runs directory: adds a "
                                                "comparison page (compare.html), this run as A and that one as B"),
    metric: str = typer.Option("item_f1", "--metric", help="the metric the comparison page compares"),
) -> None:
    """Write the static HTML report of a run (works offline, no external request)."""
    from rig.report import write_report

    try:
        index = write_report(runs_dir, out_dir, compare_with=compare_with, metric=metric)
    except RigError as exc:
        _fail(exc)
    out.print(f"report: {index}", highlight=False, soft_wrap=True)


@app.command()
def compare(
    runs_a: Path = typer.Argument(..., help="graded runs directory A"),
    runs_b: Path = typer.Argument(..., help="graded runs directory B (deltas are B minus A)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON on stdout"),
    metric: str = typer.Option("item_f1", "--metric", help="item_f1, row_f1, poa, passed (pass@1), record_*_f1, "
                               "gold_state_reach, state_anchored_rows, ..."),
) -> None:
    """Compare two graded runs on one metric: per task and per row, B minus A, and a sign test over tasks."""
    from rig.compare import compare_runs, format_comparison

    try:
        result = compare_runs(runs_a, runs_b, metric)
    except InputError as exc:
        _fail(exc, 2)
    if as_json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        out.print(format_comparison(result), markup=False, highlight=False, soft_wrap=True)


@app.command()
def view(
    runs_dir: Path = typer.Argument(..., help="a graded runs directory"),
    port: int = typer.Option(8766, "--port", help="port on 127.0.0.1"),
) -> None:
    """Serve the report on 127.0.0.1, with audit labels saved to each episode's audit.json."""
    from rig.report import serve_view

    try:
        serve_view(runs_dir, port)
    except RigError as exc:
        _fail(exc)


@app.command()
def render(
    paths: list[Path] = typer.Argument(..., help="runs directories or episode directories"),
    force: bool = typer.Option(False, "--force", help="draw every DOM-snapshot step image again, even those present"),
) -> None:
    """Draw the step images of episodes recorded with `--step-images dom` from their archived DOM snapshots (no
    network); images already present are kept."""
    import asyncio

    from rig.step_images import render_episodes

    try:
        results = asyncio.run(render_episodes(paths, force=force))
    except RigError as exc:
        _fail(exc)
    failed = 0
    for r in results:
        line = f"{r.episode.path}: {r.rendered} drawn, {r.present} present"
        if r.failed:
            failed += len(r.failed)
            line += f", {len(r.failed)} not drawn ({'; '.join(sorted(set(r.failed.values()))[:3])})"
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    if failed:
        raise typer.Exit(1)


@app.command()
def freeze(
    paths: list[Path] = typer.Argument(..., help="runs directories or episode directories"),
    out_dir: Path = typer.Option(..., "--out", help="the snapshot directory to write (new, empty, or a snapshot)"),
) -> None:
    """Freeze what episodes archived into a site snapshot of any origin (serve it with `rig run --frozen`)."""
    from rig.freeze_cmd import freeze_episodes

    try:
        result = freeze_episodes(paths, out_dir)
    except RigError as exc:
        _fail(exc)
    m = result.manifest
    out.print(f"{out_dir}: {m.exchanges} answers from {m.sources.get('episodes', 0)} episodes, {m.bytes / 1e6:.2f} MB "
              f"({', '.join(m.origins)})", markup=False, highlight=False, soft_wrap=True)


@app.command()
def drift(
    paths: list[Path] = typer.Argument(..., help="a runs directory, an episode directory or a snapshot directory"),
    resolve: Optional[list[str]] = typer.Option(None, "--resolve", help="HOST=ADDR:PORT: requests for HOST go there "
                                                                        "(repeatable)"),
    ignore_https_errors: bool = typer.Option(False, "--ignore-https-errors", help="accept self-signed certificates"),
    as_json: bool = typer.Option(False, "--json", help="print JSON on stdout"),
    headed: bool = typer.Option(False, "--headed", help="show the browser (needs a display)"),
) -> None:
    """Re-check episodes (re-driven live) or a snapshot (every request re-sent) against the live origin.

    Exit 0 when nothing changed, 1 when something changed or is gone, 2 on bad input.
    """
    from rig.network.resolve import parse_resolve
    from rig.drift import DriftOptions, format_drift
    from rig.drift import drift as check_drift

    try:
        options = DriftOptions(resolve=parse_resolve(resolve or []), ignore_https_errors=ignore_https_errors,
                               headless=not headed)
        report = check_drift(paths, options)
    except InputError as exc:
        _fail(exc, 2)
    except RigError as exc:
        _fail(exc, 3)
    if as_json:
        sys.stdout.write(report.model_dump_json() + "\n")
    else:
        out.print(format_drift(report), markup=False, highlight=False, soft_wrap=True)
    if report.drifted:
        raise typer.Exit(1)


@app.command()
def export(
    path: Path = typer.Argument(..., help="an episode directory, a runs directory or a snapshot directory"),
    wacz: Optional[Path] = typer.Option(None, "--wacz", help="the WACZ file to write (OUT.wacz)"),
    leaderboard: Optional[Path] = typer.Option(None, "--leaderboard", help="a graded runs directory's leaderboard: "
                                               "OUT.csv or OUT.json, one row per agent, model and variant"),
) -> None:
    """Export episodes or snapshots as a WACZ (with each step's text) that replayweb.page opens, or a graded run's
    leaderboard (metrics, 95 % intervals, cost, versions)."""
    if (wacz is None) == (leaderboard is None):
        _fail(InputError("--wacz/--leaderboard", None, "give one of --wacz OUT.wacz or --leaderboard OUT.csv|OUT.json"), 2)
    if leaderboard is not None:
        from rig.leaderboard import write_leaderboard

        try:
            board = write_leaderboard(path, leaderboard)
        except InputError as exc:
            _fail(exc, 2)
        out.print(f"{leaderboard}: {len(board.rows)} rows", markup=False, highlight=False, soft_wrap=True)
        return
    from rig.export import export_wacz

    try:
        result = export_wacz(path, wacz)
    except RigError as exc:
        _fail(exc)
    out.print(f"{result.wacz}: {len(result.warcs)} archives, {result.pages} pages (validated)", markup=False,
              highlight=False, soft_wrap=True)


@sites_app.command("serve")
def sites_serve(port: int = typer.Option(8765, help="port on 127.0.0.1")) -> None:
    """Serve the bundled replica sites on 127.0.0.1 until interrupted."""
    from rig.sites import serve

    if not 0 <= port <= 65535:
        _fail(InputError("--port", None, f"{port} is not a TCP port (0 to 65535)"))

    err.print(f"serving the bundled sites at http://127.0.0.1:{port}/ (Ctrl-C to stop)")
    serve(port)


@tasks_app.command("list")
def tasks_list(
    paths: Optional[list[Path]] = typer.Argument(None, help="task files, or folders of them (default: the bundled "
                                                            "suites)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON on stdout"),
) -> None:
    """List the bundled tasks: SGR-mini, then SGR-tools (discovery and hybrid tasks for the tool server); or the
    task files given (e.g. imported ones, on any origin)."""
    from rig.tasks import bundled_tasks, load_task, tool_tasks

    try:
        if paths:
            files = [f for p in paths for f in (sorted(x for x in p.rglob("*") if x.suffix in (".yaml", ".yml"))
                                                if p.is_dir() else [p])]
            suites = [("files", load_task(f)) for f in files]
        else:
            suites = [("sgr-mini", t) for t in bundled_tasks()] + [("sgr-tools", t) for t in tool_tasks()]
    except RigError as exc:
        _fail(exc)
    tasks = [t for _, t in suites]
    if as_json:
        rows = [{"id": t.id, "site": t.site, "family": t.family, "suite": suite,
                 "columns": t.output.columns if t.output else None,
                 "gold_rows": len(t.gold.rows) if t.gold else None,
                 "records": len(t.records.gold or []) if t.records else None,
                 "gold_states": [s.name for s in t.gold_states], "start_hidden": t.start_hidden,
                 "start_url": t.start_url, "origins": t.origins,
                 "hybrid_type": t.hybrid_type, "db": t.db} for suite, t in suites]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    what = "task files" if paths else "bundled tasks"
    table = Table(title=f"{len(tasks)} {what} ({2 * len(tasks)} with both prompt variants)")
    for col in ("id", "site", "family", "rows", "records", "gold states", "hybrid (db)"):
        table.add_column(col)
    for t in tasks:
        rows = str(len(t.gold.rows)) if t.gold else "-"
        records = str(len(t.records.gold or [])) if t.records else "-"
        hybrid = f"{t.hybrid_type} ({t.db})" if t.hybrid_type else "discovery" if t.start_hidden else "-"
        site = t.site or t.start_url or "-"  # a task on any origin shows its start page
        table.add_row(t.id, site, t.family, rows, records, " -> ".join(s.name for s in t.gold_states), hybrid)
    out.print(table)


@tasks_app.command("validate")
def tasks_validate(paths: list[Path] = typer.Argument(..., help="task files")) -> None:
    """Validate task files; exit 1 naming the file, field and reason of each error."""
    from rig.tasks.checks import validate_task_file
    from rig.tools.registry import check_reference_tools

    bad = 0
    for path in paths:
        try:
            task = validate_task_file(path)
            check_reference_tools(task)  # a tool-call script's tools and arguments, against the tool registry
        except InputError as exc:
            bad += 1
            err.print(f"[red]invalid[/red] {exc}", highlight=False, soft_wrap=True)
            continue
        out.print(f"[green]valid[/green] {path} ({task.id})", highlight=False, soft_wrap=True)
    if bad:
        raise typer.Exit(1)


tasks_import_app = typer.Typer(no_args_is_help=True, help="Task files from a published benchmark's records.")
tasks_app.add_typer(tasks_import_app, name="import")


def _imported(report: ImportReport, as_json: bool) -> None:
    """Print an import's report; exit 1 when a record could not be imported."""
    if as_json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    else:
        for t in report.imported:
            rows = "" if t.rows is None else f" ({t.rows} gold rows)"
            out.print(f"[green]imported[/green] {', '.join(t.source_ids)} -> {t.file}{rows}", highlight=False,
                      soft_wrap=True)
        for s in report.skipped:
            out.print(f"[yellow]kept[/yellow] {s.file} (exists; --force overwrites)", highlight=False, soft_wrap=True)
        for p in report.failed:
            where = f"{p.file}:{p.line}" if p.line else p.file
            what = ": ".join(x for x in (p.task_id and f"task {p.task_id}", p.field) if x)
            err.print(f"[red]not imported[/red] {where}{f' ({what})' if what else ''}: {p.reason}", highlight=False,
                      soft_wrap=True)
        out.print(f"{len(report.imported)} imported, {len(report.skipped)} kept, {len(report.failed)} not imported "
                  f"into {report.out}", highlight=False, soft_wrap=True)
    if report.failed:
        raise typer.Exit(1)


@tasks_import_app.command("sgr-bench")
def tasks_import_sgr_bench(
    constraint: Path = typer.Argument(..., help="the constraint-guided records (JSONL)"),
    goal: Path = typer.Argument(..., help="the goal-oriented records (JSONL; ids are the constraint ids plus -g)"),
    out_dir: Path = typer.Option(..., "--out", help="directory for the task files"),
    force: bool = typer.Option(False, "--force", help="overwrite task files that exist"),
    as_json: bool = typer.Option(False, "--json", help="print the import report as JSON on stdout"),
) -> None:
    """One task file per SGR-Bench constraint/goal pair; exit 1 when a record could not be imported, 2 when a
    file could not be read."""
    from rig.tasks.import_sgr import import_sgr_bench

    try:
        report = import_sgr_bench(constraint, goal, out_dir, force=force)
    except RigError as exc:
        _fail(exc, 2)
    _imported(report, as_json)


@tasks_import_app.command("hybrid-deep-research")
def tasks_import_hybrid_deep_research(
    records: Path = typer.Argument(..., help="HybridDeepResearch's records (JSONL)"),
    out_dir: Path = typer.Option(..., "--out", help="directory for the task files"),
    force: bool = typer.Option(False, "--force", help="overwrite task files that exist"),
    as_json: bool = typer.Option(False, "--json", help="print the import report as JSON on stdout"),
) -> None:
    """One task file per HybridDeepResearch record; exit 1 when a record could not be imported, 2 when the file
    could not be read."""
    from rig.tasks.import_hdr import import_hybrid_deep_research

    try:
        report = import_hybrid_deep_research(records, out_dir, force=force)
    except RigError as exc:
        _fail(exc, 2)
    _imported(report, as_json)


@tasks_app.command("annotate")
def tasks_annotate(
    task_file: Path = typer.Argument(..., help="the task file to write gold states into"),
    from_episode: Path = typer.Option(..., "--from-episode", help="a recorded episode directory (the demonstration)"),
    state: list[str] = typer.Option(..., "--state", help="NAME=STEP: a gold state read from that step (repeatable)"),
    keys: str | None = typer.Option(None, "--keys", help="state keys to constrain, comma-separated, globs allowed "
                                                            "(default: the step's dim.* keys)"),
    keep_solution: bool = typer.Option(False, "--keep-solution", help="leave the task's reference solution alone"),
    allow_unfinished: bool = typer.Option(False, "--allow-unfinished", help="annotate from an episode that did not "
                                                                            "end ok (with a warning)"),
    force: bool = typer.Option(False, "--force", help="replace gold states of the same name and the task's reference "
                                                      "solution (the old file is kept as TASK_FILE.bak)"),
) -> None:
    """Gold states by demonstration: write recorded steps' states as gold states (with evidence requirements) and
    the episode's actions as the reference solution; the rest of the task file is kept (comments are not)."""
    from rig.tasks.annotate import annotate_task, parse_state

    try:
        specs = [parse_state(s) for s in state]
        names = [k.strip() for k in keys.split(",") if k.strip()] if keys else None
        done = annotate_task(task_file, from_episode, specs, names, keep_solution=keep_solution,
                             allow_unfinished=allow_unfinished, force=force)
    except RigError as exc:
        _fail(exc)
    for warning in done.warnings:
        err.print(f"warning: {warning}", highlight=False, soft_wrap=True, markup=False)
    for name, step, n in done.states:
        out.print(f"gold state {name}: step {step}, {n} constraints (tag scope: edit tags and dependencies)",
                  highlight=False, soft_wrap=True)
    if done.solution_actions is not None:
        out.print(f"reference solution: {done.solution_actions} actions", highlight=False, soft_wrap=True)
    for note in done.notes:
        err.print(f"[yellow]note:[/yellow] {note}", highlight=False, soft_wrap=True)
    out.print(f"annotated {task_file} ({done.task.id})", highlight=False, soft_wrap=True)


if __name__ == "__main__":  # pragma: no cover
    app()
