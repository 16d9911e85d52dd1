"""Writing a benchmark's section into docs/benchmarks.md (shared by the scripts/bench_*.py scripts)."""

from __future__ import annotations

from pathlib import Path


def write_section(path: Path, heading: str, section: str) -> None:
    """Replace the section that starts with `heading` in a Markdown file (or append it)."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    start = text.find(heading)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    else:
        end = text.find("\n## ", start + len(heading))
        text = text[:start] + section.rstrip("\n") + "\n" + (text[end:] if end >= 0 else "")
    path.write_text(text, encoding="utf-8")
