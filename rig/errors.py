"""The rig's exception tree, and the exit code each branch ends a `rig` command with.

    RigError                      anything the rig reports to a user                       exit 1
    ├── InputError                a file or argument the user gave is wrong (names file,   exit 2
    │   │                         field, reason)
    │   ├── TaskError             a task file failed validation
    │   └── ScriptError           an action script failed validation
    ├── ParseFailure              an answer holds no readable table (rig.formats.answer_text): a status, never a score
    ├── AgentError                the agent (or its script) failed: scored as the agent's failure
    └── InfraError                the rig, browser, a local server or an origin failed:     exit 3
        └── BrowserCrashed        the browser process went away mid-episode (retried)       never scored as a zero

    KeyboardInterrupt
    └── Interrupted               Ctrl-C, with what was left undone and how to go on        exit 130
"""

from __future__ import annotations

#: Exit codes of every `rig` command (README, "Exit codes").
OK, FOUND, BAD_INPUT, INFRA, INTERRUPTED = 0, 1, 2, 3, 130


class RigError(Exception):
    """Base of every error the rig raises on purpose."""


class InputError(RigError):
    """A user-supplied file or argument is invalid."""

    def __init__(self, source: str, field: str | None, reason: str) -> None:
        self.source, self.field, self.reason = source, field, reason
        where = f"{source}: {field}" if field else source
        super().__init__(f"{where}: {reason}")


class TaskError(InputError):
    """A task file failed validation."""


class ScriptError(InputError):
    """An action script failed validation."""


class AgentError(RigError):
    """The agent failed (bad selector, wrong action, exception in its code)."""


class InfraError(RigError):
    """The rig's own infrastructure failed; the episode is not the agent's fault."""


class BrowserCrashed(InfraError):
    """The browser process died or disconnected."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a command; the message says what was left undone and how to go on."""


def exit_code(exc: BaseException) -> int:
    """The exit code a command stopped by `exc` ends with: 2 bad input, 3 infrastructure, 130 interrupted, else 1."""
    if isinstance(exc, KeyboardInterrupt):
        return INTERRUPTED
    if isinstance(exc, InputError):
        return BAD_INPUT
    if isinstance(exc, InfraError):
        return INFRA
    return FOUND
