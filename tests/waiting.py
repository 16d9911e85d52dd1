"""Waiting in tests for something that happens in another task, thread or process: poll its condition.

    await wait_until(lambda: rec.steps >= 3, message=lambda: f"{rec.steps} steps")
    wait_until_sync(lambda: proc.poll() is not None, timeout=5)

The predicate's first truthy value is returned; when `timeout` seconds pass first, AssertionError says what was
awaited (`message`, a text or a function giving one, so it can show the state reached). `wait_until` accepts a
predicate returning an awaitable too (`lambda: page.is_visible("#x")`).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

#: Default time limit, in seconds: generous, for a busy machine.
TIMEOUT = 10.0


def _text(message: str | Callable[[], str] | None, timeout: float) -> str:
    said = message() if callable(message) else message
    return f"not true within {timeout} s" + (f": {said}" if said else "")


async def wait_until(predicate: Callable[[], Any], timeout: float = TIMEOUT, interval: float = 0.05,
                     message: str | Callable[[], str] | None = None) -> Any:
    """Poll `predicate` (sync or async) every `interval` seconds until it is truthy; return its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(_text(message, timeout))
        await asyncio.sleep(interval)


def wait_until_sync(predicate: Callable[[], Any], timeout: float = TIMEOUT, interval: float = 0.05,
                    message: str | Callable[[], str] | None = None) -> Any:
    """`wait_until` for code outside an event loop: the predicate must be sync."""
    deadline = time.monotonic() + timeout
    while True:
        if value := predicate():
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(_text(message, timeout))
        time.sleep(interval)
