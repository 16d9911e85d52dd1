"""The recorder's one exception class."""

from __future__ import annotations


class RecorderError(Exception):
    """The recorder cannot do what was asked; the message says how to fix it."""
