"""The rig's WARC dialect as a library: what `recorders` writes and `replay` reads, below both (as warcio is below
pywb's recorder and server). It imports nothing of the rig, `recorders` or `replay`.

    rigwarc.dialect    the header names (`WARC-Rig-Step`, `-Capture`, `-View`, `-Missing`, `WARC-Truncated`), ids, dates
    rigwarc.build      record builders: warcinfo, request, response (truncated, missing), per-step captures, resources
    rigwarc.members    gzip per record: `RecordEncoder`, `whole_gzip_members`, `gunzip_members`
    rigwarc.read       `ArchiveReader`: records with the rig's headers decoded, torn tails and stray bytes stopped at
    rigwarc.atomic     `atomic_write`: a file whole or not at all (the rig's one atomic writer)
"""

from rigwarc.atomic import atomic_write
from rigwarc.dialect import CAPTURE_HEADER, DOM, MISSING_HEADER, STEP_HEADER, TEXT, TOOL, TRUNCATED_HEADER, VIEW_HEADER
from rigwarc.members import RecordEncoder, whole_gzip_members
from rigwarc.read import ArchiveReader, Record, WarcError

__all__ = [
    "CAPTURE_HEADER",
    "DOM",
    "MISSING_HEADER",
    "STEP_HEADER",
    "TEXT",
    "TOOL",
    "TRUNCATED_HEADER",
    "VIEW_HEADER",
    "ArchiveReader",
    "RecordEncoder",
    "Record",
    "WarcError",
    "atomic_write",
    "whole_gzip_members",
]
