"""read_pdf on real PDFs made with fpdf2: page ranges, clear errors for non-PDFs and pages out of range."""

from __future__ import annotations

import pytest
from fpdf import FPDF

from rig.tools.errors import ToolError
from rig.tools.pdf import parse_pages, read_pdf


def _pdf(pages: list[str]) -> bytes:
    doc = FPDF()
    doc.set_font("helvetica", size=12)
    for text in pages:
        doc.add_page()
        doc.multi_cell(0, 8, text)
    return bytes(doc.output())


PAGES = ["Annual report 2013: ExpressJet carried the most passengers.", "Table 2: delays by carrier.",
         "Appendix A: methods.", "Appendix B: glossary of terms.", "Back cover."]


def test_every_page_by_default():
    text = read_pdf(_pdf(PAGES))
    for n, body in enumerate(PAGES, start=1):
        assert f"--- page {n} of 5 ---" in text
        assert body in text
    assert text.index("Annual report") < text.index("Back cover")


def test_page_ranges():
    text = read_pdf(_pdf(PAGES), "1-2,5")
    assert "ExpressJet" in text and "delays by carrier" in text and "Back cover" in text
    assert "Appendix" not in text
    assert read_pdf(_pdf(PAGES), " 4 ").count("--- page") == 1
    assert parse_pages("3,1-2,2", 5) == [3, 1, 2]


@pytest.mark.parametrize("pages,reason", [
    ("6", "page 6 is out of range; the PDF has 5 pages"),
    ("2-9", "page 9 is out of range"),
    ("0", "not a range of pages from 1 up"),
    ("3-1", "not a range of pages from 1 up"),
    ("one", "'one' is not a page or a range"),
])
def test_bad_page_selections(pages, reason):
    with pytest.raises(ToolError, match="pdf_read: pages") as err:
        read_pdf(_pdf(PAGES), pages)
    assert reason in str(err.value)


@pytest.mark.parametrize("data", [b"<html><body>not a pdf</body></html>", b"", b"PK\x03\x04zip"])
def test_not_a_pdf(data):
    with pytest.raises(ToolError, match="not a PDF"):
        read_pdf(data)


def test_a_broken_pdf_is_a_clear_error():
    with pytest.raises(ToolError, match="pdf_read: "):
        read_pdf(b"%PDF-1.4\n garbage with no objects and no trailer")


def test_long_text_is_truncated():
    text = read_pdf(_pdf(["word " * 400] * 3), max_chars=1000)
    assert len(text) < 1100 and text.endswith("ask for fewer pages]")
