"""Reading a file a user names, bounded: regular files only (never a FIFO, a device such as /dev/zero or a
directory), at most a limit of bytes, checked before reading; errors name the file and the reason."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from rig.errors import InputError

#: The largest file the rig reads whole: a task, script, answer or episode file (archives are read elsewhere).
MAX_BYTES = 64 * 1024 * 1024
#: What a file that is not a regular file is, for the message.
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_limited(path: str | Path, what: str = "the file", limit: int = MAX_BYTES,
                 error: type[InputError] = InputError) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; `error` (an InputError) naming the file otherwise."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)  # O_NONBLOCK: opening a FIFO does not wait for a writer
    except OSError as e:
        raise error(str(p), None, f"cannot read {what}: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
            raise error(str(p), None, f"cannot read {what}: {kind}, not a regular file")
        if st.st_size > limit:
            raise error(str(p), None, f"cannot read {what}: {st.st_size} bytes, more than the limit of {limit}")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as e:
        raise error(str(p), None, f"cannot read {what}: {e.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > limit:  # the file grew while it was read
        raise error(str(p), None, f"cannot read {what}: more than the limit of {limit} bytes")
    return data
