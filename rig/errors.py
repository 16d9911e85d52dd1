"""The rig's exception tree.

    RigError                      anything the rig reports to a user
    ├── InputError                a file or argument the user gave is wrong (names file, field, reason)
    │   ├── TaskError             a task file failed validation
    │   └── ScriptError           an action script failed validation
    ├── ParseFailure              an answer holds no readable table (rig.formats.answer_text): a status, never a score
    ├── AgentError                the agent (or its script) failed: scored as the agent's failure
    └── InfraError                the rig, browser or local server failed: never scored as a zero
        └── BrowserCrashed        the browser process went away mid-episode (retried)
"""

from __future__ import annotations


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
