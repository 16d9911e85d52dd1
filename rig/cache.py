"""The rig's cache directory, and building a derived file into it once however many processes ask at the same time.

Built things that take seconds and depend only on what is installed (a bundled database, a site's query database,
the search index's pages) are kept under `cache_dir()`, each under a name carrying a digest of everything that
decides its content: a changed recipe gets a new file, and an old one is never reused.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable
from pathlib import Path

_LOCK = threading.Lock()


def cache_dir() -> Path:
    """Where built files live: `RIG_CACHE_DIR`, else `$XDG_CACHE_HOME/sgr-rig`, else `~/.cache/sgr-rig`."""
    if os.environ.get("RIG_CACHE_DIR"):
        return Path(os.environ["RIG_CACHE_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "sgr-rig"


def build_once(path: Path, build: Callable[[Path], object]) -> Path:
    """`path`, made by `build(path)` unless it exists; a second thread or process asking meanwhile waits for the
    first build instead of building again (`build` must write `path` whole or not at all)."""
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with _LOCK, open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.is_file():
            build(path)
    return path
