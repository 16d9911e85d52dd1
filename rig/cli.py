"""The `rig` command: a thin typer app assembled from the command modules (`rig.commands.<name>`, each holding its
options, its output and its work, callable from Python). A command's module is imported only when that command runs
(or `--help` lists them all); every command's errors become exit codes here, in one place (`rig.errors.exit_code`:
0 ok, 1 ran and found something, 2 bad input, 3 infrastructure, 130 interrupted), printed with markup off. SIGTERM
(`kill`, `timeout`, a CI job or container being stopped) stops a command as Ctrl-C does."""

from __future__ import annotations

import functools
import importlib
import signal
import threading
from types import FrameType
from typing import Any

import click
import typer
from rich.text import Text
from typer.core import TyperGroup

from rig.errors import Interrupted, RigError, exit_code
from rig.log import setup_logging

#: Every command: its name, and the module and function (or typer sub-app) that implement it, in help order.
COMMANDS = {
    "demo": "demo:demo",
    "record": "record:record",
    "run": "run:run",
    "mcp-stdio": "mcp_stdio:mcp_stdio",
    "submit": "submit:submit",
    "score": "score:score",
    "replay": "replay:replay_command",
    "verify": "verify:verify",
    "grade": "grade:grade",
    "compare": "compare:compare",
    "report": "report:report",
    "view": "report:view",
    "render": "render:render",
    "freeze": "freeze:freeze_command",
    "drift": "drift:drift",
    "qa": "qa:qa",
    "export": "export:export",
    "sites": "sites:app",
    "tasks": "tasks:app",
}


@functools.cache
def _command(name: str) -> click.Command:
    """The click command of `name`, built from its module's typer function or sub-app."""
    module, attr = COMMANDS[name].split(":")
    target = getattr(importlib.import_module(f"rig.commands.{module}"), attr)
    if isinstance(target, typer.Typer):
        command: click.Command = typer.main.get_group(target)
    else:
        single = typer.Typer(add_completion=False)
        single.command(name=name)(target)
        command = typer.main.get_command(single)
    command.name = name
    return command


def _as_ctrl_c(signum: int, frame: FrameType | None) -> None:
    """SIGTERM's handler: whatever Ctrl-C does now (in `asyncio.run`, cancelling the command's task: episodes close
    their recordings and stay `incomplete`), or a KeyboardInterrupt where SIGINT is ignored (a background job)."""
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler):
        handler = signal.default_int_handler
    handler(signal.SIGINT, frame)


def _report(exc: BaseException) -> None:
    """Print why a command stopped, to stderr, its text never read as markup."""
    from rig.commands.console import err

    if isinstance(exc, KeyboardInterrupt):
        line = Text(str(exc) if isinstance(exc, Interrupted) and str(exc) else "interrupted")
    else:
        line = Text.assemble(("error:", "red"), " ", str(exc))
    err.print(line, highlight=False, soft_wrap=True)


class RigGroup(TyperGroup):
    """The `rig` group: commands loaded from `COMMANDS` when needed; a RigError or Ctrl-C ends any of them with its
    exit code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*super().list_commands(ctx), *COMMANDS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return _command(cmd_name) if cmd_name in COMMANDS else super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        # Only the main thread may set a handler (a command called in a worker thread keeps the process's own);
        # the previous one comes back afterwards, so an in-process caller's SIGTERM is its own again.
        in_main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _as_ctrl_c) if in_main else None
        try:
            return super().invoke(ctx)
        except (RigError, KeyboardInterrupt) as exc:
            _report(exc)
            raise typer.Exit(exit_code(exc)) from None
        finally:
            if in_main:
                signal.signal(signal.SIGTERM, previous)


app = typer.Typer(cls=RigGroup, add_completion=False, no_args_is_help=True,
                  help="Drive, record, grade and replay web research agents.")


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="debug logs on stderr")) -> None:
    setup_logging(verbose=verbose)


if __name__ == "__main__":  # pragma: no cover
    app()
