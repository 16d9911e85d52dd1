"""`rig submit EPISODE_DIR --answer FILE`: hand in the answer of an episode driven from outside (`--agent cdp`,
`operator`) (`rig.agents.cdp.submit_text`)."""

from __future__ import annotations

from pathlib import Path

import typer

from rig.agents.cdp import submit_text
from rig.commands.console import say
from rig.errors import InputError, RigError
from rig.formats.answer_text import ParseFailure
from rig.formats.files import read_limited


def submit_file(episode_dir: Path, answer: Path) -> Path:
    """Hand in the answer file `answer`; the `answer.json` written. A text with no readable table is handed in
    too, and a RigError says so (the episode ends with status parse_failure)."""
    try:
        text = read_limited(answer, "the answer").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(str(answer), f"byte {exc.start}", "not UTF-8 text") from None
    try:
        return submit_text(episode_dir, text, str(answer))
    except RecursionError:
        raise InputError(str(answer), None, "nested too deeply to be an answer") from None
    except ParseFailure as exc:
        raise RigError(f"{exc}; handed in as unparseable: the episode ends with status parse_failure") from None


def submit(
    episode_dir: Path = typer.Argument(..., help="the episode directory `rig run --agent cdp` printed"),
    answer: Path = typer.Option(..., "--answer", help="answer.json, or a Markdown/TSV/CSV table with links"),
) -> None:
    """Hand in the answer of an episode driven from outside (`--agent cdp`, `operator`).

    An answer with no readable table is handed in too: the episode ends with status parse_failure (exit 1).
    """
    say(f"answer handed in: {submit_file(episode_dir, answer)}")
