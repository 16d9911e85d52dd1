"""`rig export PATH --wacz OUT.wacz [--force]`: episodes, a runs directory or site snapshots as one WACZ (replayweb.page
opens it); `rig export RUNS_DIR --leaderboard OUT.csv|OUT.json`: a graded run's leaderboard (`rig.leaderboard`).

The WACZ is built by the `wacz` package (its `create`, then its own validation). Each source WARC goes in whole
under `archive/` (requests, responses and the recorder's per-step text and DOM records, which the CDX index leaves
out but the archive keeps), renamed after its episode or snapshot so that names never collide. `pages/pages.jsonl`
lists one page per step whose URL or text changed (title `<episode> step N`, the step's visible text as the page's
text, so replayweb.page's search finds it); for a snapshot, every HTML page it answers.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Optional

import typer
from loguru import logger

from replay.errors import ReplayError
from replay.index import ArchiveIndex, load_index
from replay.snapshot import Manifest, snapshot_dirs
from rig.commands.console import say
from rig.episode_dir import EpisodeDir, RunsDir
from rig.errors import InfraError, InputError
from rigwarc.atomic import atomic_write
from rigwarc.members import whole_gzip_members

PAGES_HEADER = {"format": "json-pages-1.0", "id": "pages", "title": "Pages", "hasText": True}
_HTML = ("text/html", "application/xhtml+xml")


@dataclass
class Source:
    """One WARC to put in the WACZ, under the name `name`, with the pages it shows."""

    name: str
    warc: Path
    pages: list[dict[str, str]] = field(default_factory=list)
    #: A torn archive (a killed recording): only its first `whole` bytes, its complete records, are exported.
    whole: int | None = None


@dataclass
class ExportResult:
    """What one export wrote."""

    wacz: Path
    warcs: list[str]
    pages: int
    validated: bool


def export_wacz(path: Path, out: Path, *, force: bool = False) -> ExportResult:
    """Write the episode directory, runs directory or snapshot directory at `path` as the WACZ `out`, and validate it;
    an `out` that exists is replaced only with `force` (InputError otherwise, before anything is read)."""
    if out.suffix.lower() != ".wacz":
        raise InputError("--wacz", None, f"{out} must end in .wacz")
    if out.is_dir() or (out.exists() and not out.is_file()):
        raise InputError("--wacz", None, f"{out} exists and is not a file; name the WACZ file to write")
    if out.exists() and not force:
        raise InputError("--wacz", None, f"{out} exists; --force overwrites it")
    sources = collect_sources(path)
    if not sources:
        raise InputError(str(path), None, "holds no episode archive and no snapshot: nothing to export")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rig-export-") as tmp:
        work = Path(tmp)
        warcs = []
        for src in sources:
            link = work / f"{src.name}.warc.gz"
            if src.whole is None:
                os.symlink(src.warc.resolve(), link)
            else:
                link.write_bytes(src.warc.read_bytes()[:src.whole])
            warcs.append(link)
        pages_file = work / "pages.jsonl"
        pages = [p for s in sources for p in s.pages]
        pages_file.write_text("".join(json.dumps(line) + "\n" for line in [PAGES_HEADER, *pages]), encoding="utf-8")
        partial = out.with_name(out.name + ".partial")

        def build(tmp: Path) -> None:
            _wacz(["create", *map(str, warcs), "-o", str(tmp), "--pages", str(pages_file), "--copy-pages",
                   "--title", f"sgr-rig export of {path.name}", "--desc", f"{len(sources)} archives from {path}"],
                  f"building {out}")
            if not validate_wacz(tmp):
                os.replace(tmp, partial)
                raise InfraError(f"{partial}: the wacz package's validation failed on the WACZ it built (kept for a look)")

        atomic_write(out, build)
    return ExportResult(out, [w.name for w in warcs], len(pages), True)


def validate_wacz(path: Path) -> bool:
    """Whether the `wacz` package's own validation passes on `path`."""
    return _wacz(["validate", "-f", str(path)], f"validating {path}", check=False) == 0


def _wacz(argv: list[str], what: str, check: bool = True) -> int:
    """Run the wacz package's command line in-process, its chatter sent to the debug log."""
    from wacz.main import main

    chatter = io.StringIO()
    try:
        with contextlib.redirect_stdout(chatter):
            code = main(argv)
    except (OSError, ValueError, LookupError, TypeError, AttributeError, EOFError) as exc:  # a broken WARC, a full disk
        raise InfraError(f"{what}: the wacz package failed ({type(exc).__name__}: {exc})") from None
    finally:
        logger.debug("wacz {}: {}", argv[0], chatter.getvalue().strip())
    if check and code:
        raise InfraError(f"{what}: the wacz package gave exit status {code}: {chatter.getvalue().strip()[-300:]}")
    return int(code or 0)


def collect_sources(path: Path) -> list[Source]:
    """The WARCs under `path` (one episode, every episode of a runs directory, or snapshots), each with its pages."""
    if not path.exists():
        raise InputError(str(path), None, "no such episode, runs or snapshot directory")
    if EpisodeDir(path).episode_file.is_file() or EpisodeDir(path).warc_file.is_file():
        return [_episode_source(EpisodeDir(path), path.name or "episode")]
    if path.is_dir() and any(True for _ in snapshot_candidates(path)):
        return [_snapshot_source(d) for d in snapshot_dirs(path)]
    runs = RunsDir(path)
    found = []
    for ep in runs.episodes():
        if ep.warc_file.is_file():
            found.append(_episode_source(ep, "-".join(ep.path.relative_to(path).parts)))
    return found


def snapshot_candidates(path: Path) -> list[Path]:
    """`path` itself or its subdirectories, where they hold a snapshot manifest."""
    try:
        return snapshot_dirs(path)
    except ReplayError:
        return []


def _episode_source(ep: EpisodeDir, name: str) -> Source:
    """An episode's archive, and a page per step whose URL or visible text differs from the one before it."""
    index = ep.archive(strict=False)
    if index.records == 0:
        raise InputError(str(ep.warc_file), None, "holds no WARC record: there is nothing to export")
    whole = None
    if index.errors:  # a torn last record, or a record in the middle that is not WARC: export what comes before it
        for problem in index.errors:
            logger.warning(problem)
        data = ep.warc_file.read_bytes()
        whole = index.stopped[0] if index.stopped is not None else whole_gzip_members(data)
    start = index.recorded_at or datetime.now(UTC)
    pages, seen = [], set()
    for step in ep.steps():
        rid = step.snapshot.warc_record_id if step.snapshot else None
        if not step.url.startswith(("http://", "https://")) or (step.url, step.text_hash) in seen:
            continue
        seen.add((step.url, step.text_hash))
        page = {"id": f"{name}-{step.step}", "url": step.url, "ts": _iso(start + timedelta(seconds=step.t)),
                "title": f"{name} step {step.step}"}
        if rid and rid in index.texts:
            page["text"] = index.texts[rid]
        pages.append(page)
    return Source(_safe(name), ep.warc_file, pages, whole)


def _snapshot_source(directory: Path) -> Source:
    """A snapshot's archive, and a page for every HTML document it answers."""
    try:
        manifest = Manifest.read(directory)
        index = load_index([directory / w for w in manifest.warcs])
    except (ReplayError, ValueError, TypeError) as exc:
        raise InputError(str(directory), None, f"not a readable snapshot ({exc})") from None
    if len(manifest.warcs) != 1:
        raise InputError(str(directory), "warcs", "a snapshot of several WARC files cannot be exported yet")
    return Source(_safe(f"snapshot-{manifest.site}"), directory / manifest.warcs[0], _snapshot_pages(index, manifest.site))


def _snapshot_pages(index: ArchiveIndex, name: str) -> list[dict[str, str]]:
    pages, seen = [], set()
    for x in index.all():
        r = x.response
        if x.method != "GET" or r is None or r.status != 200 or r.content_type.split(";")[0].strip() not in _HTML:
            continue
        if x.url in seen:
            continue
        seen.add(x.url)
        pages.append({"id": f"{name}-{len(pages)}", "url": x.url, "ts": x.date or _iso(datetime.now(UTC)),
                      "title": f"{name}: {x.url}"})
    return pages


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in name) or "archive"


def export(
    path: Path = typer.Argument(..., help="an episode directory, a runs directory or a snapshot directory"),
    wacz: Optional[Path] = typer.Option(None, "--wacz", help="the WACZ file to write (OUT.wacz)"),
    leaderboard: Optional[Path] = typer.Option(None, "--leaderboard", help="a graded runs directory's leaderboard: "
                                               "OUT.csv or OUT.json, one row per agent, model and variant"),
    force: bool = typer.Option(False, "--force", help="overwrite OUT.wacz if it exists"),
) -> None:
    """Export episodes or snapshots as a WACZ (with each step's text) that replayweb.page opens, or a graded run's
    leaderboard (metrics, 95 % intervals, cost, versions).

    An OUT.wacz that exists is kept (exit 2) unless --force."""
    if (wacz is None) == (leaderboard is None):
        raise InputError("--wacz/--leaderboard", None, "give one of --wacz OUT.wacz or --leaderboard OUT.csv|OUT.json")
    if leaderboard is not None:
        from rig.leaderboard import write_leaderboard

        board = write_leaderboard(path, leaderboard)
        say(f"{leaderboard}: {len(board.rows)} rows")
        return
    result = export_wacz(path, wacz, force=force)
    say(f"{result.wacz}: {len(result.warcs)} archives, {result.pages} pages (validated)")
