"""`pdf_read`'s extraction: the text of a PDF's pages with pypdf, selected by ranges such as "1-3,5"."""

from __future__ import annotations

import io
import logging
import re

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from rig.tools.errors import ToolError

#: Longest text handed back (HybridDeepResearch truncates at about 32k characters).
MAX_CHARS = 32_000
_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


def parse_pages(pages: str | None, count: int) -> list[int]:
    """1-based page numbers selected by `pages` ("1-3,5"; None or "" for every page), in the order given, each once."""
    if pages is None or not pages.strip():
        return list(range(1, count + 1))
    out: list[int] = []
    for part in pages.split(","):
        m = _RANGE.match(part)
        if not m:
            raise ToolError(f"pdf_read: pages {pages!r}: {part.strip()!r} is not a page or a range like 2-4")
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        if first < 1 or last < first:
            raise ToolError(f"pdf_read: pages {pages!r}: {part.strip()!r} is not a range of pages from 1 up")
        if last > count:
            raise ToolError(f"pdf_read: pages {pages!r}: page {last} is out of range; the PDF has {count} "
                            f"page{'s' if count != 1 else ''}")
        out += [n for n in range(first, last + 1) if n not in out]
    return out


def read_pdf(data: bytes, pages: str | None = None, max_chars: int = MAX_CHARS) -> str:
    """The text of the selected pages, each under a `--- page N of M ---` line; ToolError for bytes that are not a
    PDF, an encrypted PDF, or pages out of range."""
    if not data.lstrip()[:5].startswith(b"%PDF-"):
        raise ToolError("pdf_read: the source is not a PDF (it does not start with %PDF-)")
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ToolError("pdf_read: the PDF is encrypted; its text cannot be read")
        count = len(reader.pages)
        chosen = parse_pages(pages, count)
        parts = [f"--- page {n} of {count} ---\n{(reader.pages[n - 1].extract_text() or '').strip()}" for n in chosen]
    except (PdfReadError, ValueError, KeyError) as exc:
        raise ToolError(f"pdf_read: the PDF cannot be read: {exc}") from None
    text = "\n\n".join(parts)
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n[truncated at {max_chars} characters; ask for fewer pages]"
    return text
