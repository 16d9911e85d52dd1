"""Logging: loguru to stderr (human-readable) and, per run, to a file."""

from __future__ import annotations

import sys
from pathlib import Path

from loguru import logger


def setup_logging(verbose: bool = False, quiet: bool = False) -> None:
    """Send rig logs to stderr at INFO (DEBUG when verbose, WARNING when quiet)."""
    logger.remove()
    logger.enable("recorders")
    level = "DEBUG" if verbose else "WARNING" if quiet else "INFO"
    # Resolve sys.stderr at each write: a caller may swap it (tests, CliRunner) and close the old one.
    logger.add(lambda message: sys.stderr.write(message), level=level, format="{time:HH:mm:ss} {level: <7} {message}")


def add_run_log(path: Path) -> int:
    """Also log everything (DEBUG) to a file; returns the handler id to remove later."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return logger.add(path, level="DEBUG", enqueue=True, encoding="utf-8")
