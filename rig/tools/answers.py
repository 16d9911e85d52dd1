"""How big a handed-in answer may be (`final_answer`, `rig submit`): bytes, rows and cells, checked before anything
is kept, with a message saying the limits and what to do."""

from __future__ import annotations

from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure, parse_table
from rig.tools.errors import ToolError

#: The largest answer text taken, in UTF-8 bytes.
MAX_ANSWER_BYTES = 1024 * 1024
#: The most rows, and cells (rows times columns), an answer may hold.
MAX_ANSWER_ROWS = 10_000
MAX_ANSWER_CELLS = 100_000


class AnswerTooLarge(ToolError):
    """An answer over a limit: nothing of it was kept; the message says the limits and what to do."""


def _too_large(source: str, what: str) -> AnswerTooLarge:
    return AnswerTooLarge(f"{source}: the answer {what}; an answer may hold at most {MAX_ANSWER_ROWS} rows, "
                          f"{MAX_ANSWER_CELLS} cells and {MAX_ANSWER_BYTES} bytes. Nothing was handed in: hand in only "
                          "the rows the task asks for (filter or aggregate them first, e.g. with run_sql)")


def read_answer(text: str, source: str) -> Answer | ParseFailure:
    """The answer table of a handed-in text, or the ParseFailure saying why it holds none; AnswerTooLarge (before
    anything is parsed when the text itself is too long) for an answer over a limit."""
    size = len(text.encode("utf-8"))
    if size > MAX_ANSWER_BYTES:
        raise _too_large(source, f"is {size} bytes")
    try:
        answer = parse_table(text, source)
    except ParseFailure as failure:
        return failure
    cells = len(answer.rows) * max(1, len(answer.columns))
    if len(answer.rows) > MAX_ANSWER_ROWS:
        raise _too_large(source, f"has {len(answer.rows)} rows")
    if cells > MAX_ANSWER_CELLS:
        raise _too_large(source, f"has {cells} cells")
    return answer
