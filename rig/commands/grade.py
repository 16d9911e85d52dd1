"""`rig grade RUNS_DIR|EPISODE_DIR`: `grade.json` per episode, `summary.json` and `summary.md` per run
(`rig.grading.runs`); `--judge provider:model` decides free-text hybrid tasks with an LLM (`rig.grading.judge`)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Optional

import typer

from rig.agents.completion import text_completion
from rig.commands.console import err, labelled, say
from rig.commands.options import AsJson
from rig.errors import FOUND, InputError
from rig.grading.judge import Judge, LLMJudge
from rig.grading.runs import GradingResult, grade_run
from rig.grading.summary import markdown, summary_json


def make_judge(model: str) -> Judge:
    """An LLM judge on `provider:model`; InputError for a bad or unconfigured model."""
    return LLMJudge(text_completion(model), model)


def judge_factory(model: str) -> Callable[[], Judge]:
    """A picklable function building the judge (once per grading process); checks the model string now."""
    try:
        make_judge(model)  # a bad provider, a missing API key or browser-use not installed fails before any grading
    except InputError as exc:
        raise InputError("--judge", None, exc.reason) from None
    return functools.partial(make_judge, model)


def grade_path(path: Path, *, jobs: int | None = None, force: bool = False, judge: str | None = None,
               mix_revisions: bool = False) -> GradingResult:
    """Grade the runs or episode directory at `path`."""
    return grade_run(path, jobs=jobs, force=force, judge=judge_factory(judge) if judge is not None else None,
                     mix_revisions=mix_revisions)


def grade(
    path: Path = typer.Argument(..., help="a runs directory or one episode directory"),
    as_json: AsJson = False,
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
    dropped; 2 when the path holds no episode (nothing is written) or a summary row would mix two revisions of a
    task (without --mix-revisions).
    """
    result = grade_path(path, jobs=jobs, force=force, judge=judge, mix_revisions=mix_revisions)
    summary = result.summary
    say(f"graded {result.graded} episodes, kept {result.kept} unchanged (grade.json current; --force regrades "
        f"them), {result.jobs} process{'es' if result.jobs > 1 else ''}", err)
    if as_json:
        sys.stdout.write(summary_json(summary) + "\n")
    else:
        say(markdown(summary))
    if summary.ungraded:
        labelled(f"{summary.ungraded} of {summary.episodes} episodes could not be graded", "red",
                 "(listed in the summary with the reason)")
        raise typer.Exit(FOUND)
