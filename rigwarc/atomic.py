"""Writing a file so that a reader never sees half of it: a temporary file beside it, renamed into place.

    atomic_write(path, "text")                  # str: UTF-8 text
    atomic_write(path, b"bytes")                # bytes
    atomic_write(path, lambda tmp: make(tmp))   # a writer that fills the temporary file itself (a database, a zip)

A failure (of the writer too: a validation it runs on the file) leaves `path` as it was and no temporary file behind.
The file gets the permissions an ordinary new file gets (0666 less the umask).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

#: What `atomic_write` writes: text (UTF-8), bytes, or a function writing the temporary file at the path it is given.
Content = str | bytes | Callable[[Path], object]


def atomic_write(path: Path, data: Content, *, suffix: str = "") -> Path:
    """Put `data` at `path` whole or not at all (its directory made if need be); return `path`.

    `suffix` ends the temporary file's name, for a writer that goes by the name (a loader checking `.yaml`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp{suffix}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as fh:
            if isinstance(data, str):
                fh.write(data.encode("utf-8"))
            elif isinstance(data, bytes):
                fh.write(data)
        if callable(data):
            data(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
