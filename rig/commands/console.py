"""Where commands print: stdout (`out`, results) and stderr (`err`, errors, notes, progress), with rich markup off
for every text that comes from a file, a path or an error (a message quoting `[a-z0-9]` or `[1]` keeps its
brackets): only the labels the rig writes itself are styled."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

from pydantic import BaseModel
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

# When output goes to a file or pipe, do not squeeze tables into 80 columns.
out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)


def say(text: str, console: Console = out) -> None:
    """Print a line as it is: no markup, no emoji codes, no highlighting, no wrapping."""
    console.print(text, markup=False, emoji=False, highlight=False, soft_wrap=True)


def emit(document: BaseModel, text: str, as_json: bool) -> None:
    """`--json`: the document on stdout, alone; else the human text."""
    if as_json:
        sys.stdout.write(document.model_dump_json() + "\n")
    else:
        say(text)


def labelled(label: str, style: str, text: str, console: Console = err) -> None:
    """Print `label text`, the label styled, the text as it is (never read as markup)."""
    console.print(Text.assemble((label, style), " ", text), highlight=False, soft_wrap=True)


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[object]], console: Console = out) -> None:
    """Print a table whose title, headers and cells are plain text (a task id, a URL, a reason: never markup)."""
    shown = Table(title=Text(title))
    for column in columns:
        shown.add_column(Text(column))
    for row in rows:
        shown.add_row(*(Text(str(value)) for value in row))
    console.print(shown)


def progress() -> Progress:
    """A progress bar on stderr (stdout stays for results, and `--json`)."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err, redirect_stdout=False)
