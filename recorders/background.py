"""Fire-and-forget work of the recorder: a CDP message or page call whose answer nobody waits for."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from functools import partial
from typing import Any


def spawn(tasks: set[asyncio.Task[Any]], work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """Run `work` in the background, referenced from `tasks` until it is done; its error, if any, is dropped
    (the page it was for went away: there is nothing left to tell). Returns its task."""
    task = asyncio.get_running_loop().create_task(work)
    tasks.add(task)
    task.add_done_callback(partial(_forget, tasks))
    return task


def _forget(tasks: set[asyncio.Task[Any]], task: asyncio.Task[Any]) -> None:
    tasks.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved, so asyncio does not log it as never retrieved
