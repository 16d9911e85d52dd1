"""`rig qa SNAPSHOT_DIR|RUNS_DIR|EPISODE_DIR`: every page rendered from its archive alone and scored against what was
recorded (`replay.qa`); `qa.json` written beside each snapshot's manifest and in each episode directory.

A snapshot's pages are the steps of the episodes frozen into it (`rig freeze` names them in the manifest's
`sources.episode_dirs`; for a bundled site's snapshot, reference episodes recorded for the QA, `rig.qa.live`),
re-driven against the snapshot, and every HTML document it holds, opened on its own. An episode's pages are its
steps, re-driven against its own archive.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import Browser, async_playwright
from playwright.async_api import Error as PlaywrightError

from replay import ReplayError, open_snapshot
from replay.snapshot import MANIFEST, snapshot_dirs
from rig.browser import launch
from rig.episode_dir import EpisodeDir, RunsDir
from rig.errors import InfraError, InputError
from rig.formats.qa import DEFAULT_QA_THRESHOLD, QA_FILE, QaReport
from rig.qa.documents import reference_pages, score_documents
from rig.qa.episodes import EpisodeUnderQa, score_episode
from rig.qa.html import write_page
from rig.qa.live import live_references
from rig.qa.pages import Scored, Scoring
from rigwarc.atomic import atomic_write

#: The manifest's `sources` key naming the episodes frozen into a snapshot (and the origins each was moved by).
EPISODE_DIRS = "episode_dirs"


@dataclass(frozen=True)
class QaOptions:
    """How `rig qa` scores: the threshold, where the HTML pages go (`out`), the browser, one action's time limit,
    whether `qa.json` files are written, and whether a bundled site's snapshot is compared with reference episodes
    recorded for the purpose."""

    threshold: float = DEFAULT_QA_THRESHOLD
    out: Path | None = None
    headless: bool = True
    timeout_s: float = 10.0
    write: bool = True
    #: A bundled site's snapshot with no frozen episode at hand: record the site's reference episodes to compare with.
    live_reference: bool = True


def episode_sources(episodes: list[tuple[EpisodeDir, dict[str, str]]], snapshot: Path) -> list[dict[str, Any]]:
    """What a snapshot's manifest keeps of the episodes frozen into it (`sources.episode_dirs`): each directory,
    relative to the snapshot's where it can be, and the origins it was moved by."""
    out = []
    for ed, moves in episodes:
        try:
            path = os.path.relpath(ed.path.resolve(), snapshot.resolve())
        except ValueError:  # another drive
            path = str(ed.path.resolve())
        out.append({"path": path, "moves": dict(moves)})
    return out


def _frozen_episodes(directory: Path, sources: dict[str, Any]) -> tuple[list[EpisodeUnderQa], list[str]]:
    """The episodes frozen into a snapshot that are still there, and notes on those that are not."""
    found, notes = [], []
    items = sources.get(EPISODE_DIRS) if isinstance(sources, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            continue
        path = directory / item["path"]
        ed = EpisodeDir(path)
        if not (ed.trajectory_file.is_file() and ed.warc_file.is_file()):
            notes.append(f"{path}: frozen into the snapshot, no longer there: its steps are not scored")
            continue
        moves = item.get("moves") if isinstance(item.get("moves"), dict) else {}
        found.append(EpisodeUnderQa(ed, moves={str(k): str(v) for k, v in moves.items()}))
    return found, notes


async def score_snapshot(browser: Browser, directory: Path, options: QaOptions) -> Scoring:
    """Score one snapshot directory: its frozen episodes' steps re-driven against it, then its documents."""
    began = time.perf_counter()
    try:
        frozen = open_snapshot(directory)
    except (ReplayError, ValueError, TypeError, KeyError) as exc:
        raise InputError(str(directory / MANIFEST), None, f"not a snapshot ({exc})") from None
    manifest = frozen.manifests[0]
    episodes, notes = _frozen_episodes(directory, manifest.sources)
    scored: list[Scored] = []
    recorded = []
    with tempfile.TemporaryDirectory(prefix="rig-qa-live-") as work:
        if not episodes and options.live_reference:
            episodes = await live_references(manifest, Path(work))
            if episodes:
                notes.append(f"compared with {len(episodes)} reference episodes of {manifest.site} recorded now on the "
                             "bundled sites served here")
        for e in episodes:
            target = EpisodeUnderQa(e.episode, frozen.index, e.moves)
            done = await score_episode(browser, target, threshold=options.threshold, timeout_s=options.timeout_s)
            scored += done.pages
            recorded += done.recorded
            notes += done.notes
    if not episodes:
        notes.append("no episode frozen into this snapshot is at hand: its documents are scored on their requests "
                     "alone")
    scored += await score_documents(browser, frozen, str(directory), reference_pages(recorded),
                                    threshold=options.threshold, timeout_s=options.timeout_s)
    report = QaReport.of([s.page for s in scored], options.threshold, str(directory), time.perf_counter() - began,
                         notes=notes)
    return Scoring(report, scored)


async def score_one_episode(browser: Browser, ed: EpisodeDir, options: QaOptions) -> Scoring:
    """Score one episode: its steps re-driven against its own archive."""
    began = time.perf_counter()
    done = await score_episode(browser, EpisodeUnderQa(ed), threshold=options.threshold, timeout_s=options.timeout_s)
    report = QaReport.of([s.page for s in done.pages], options.threshold, str(ed.path), time.perf_counter() - began,
                         notes=done.notes)
    return Scoring(report, done.pages)


def targets(path: Path) -> tuple[str, list[Path]]:
    """What `path` names: ("snapshot", its snapshot directories) or ("episode", episode directories); InputError
    when it is neither."""
    if not path.exists():
        raise InputError(str(path), None, "no such snapshot, runs or episode directory")
    if not path.is_dir():
        raise InputError(str(path), None, "not a directory: name a snapshot, runs or episode directory")
    if EpisodeDir(path).episode_file.is_file():
        return "episode", [path]
    episodes = RunsDir(path).episodes()
    if episodes:
        return "episode", [e.path for e in episodes]
    try:
        return "snapshot", snapshot_dirs(path)
    except ReplayError:
        raise InputError(str(path), None, f"holds no snapshot ({MANIFEST}) and no episode (see `rig freeze`, "
                                          "`rig run`)") from None


async def score_targets(browser: Browser, kind: str, paths: list[Path], options: QaOptions) -> list[Scoring]:
    """Score each target in turn, writing its `qa.json` (and, with `options.out`, its HTML page)."""
    out = []
    for n, path in enumerate(paths, start=1):
        if len(paths) > 1:
            logger.info("rig qa: scoring {} ({}/{})", path, n, len(paths))
        scoring = (await score_snapshot(browser, path, options) if kind == "snapshot"
                   else await score_one_episode(browser, EpisodeDir(path), options))
        if options.write:
            atomic_write(path / QA_FILE, scoring.report.model_dump_json(indent=1) + "\n")
        if options.out is not None:
            write_page(options.out, scoring)
        logger.debug(scoring.report.line())
        out.append(scoring)
    return out


def qa(path: Path, options: QaOptions | None = None) -> tuple[QaReport, list[QaReport]]:
    """`rig qa`: score every page under `path`; the combined report and one per snapshot or episode."""
    options = options or QaOptions()
    kind, paths = targets(path)
    skipped: list[str] = []
    if kind == "episode":  # fail fast, before a browser starts; a runs directory's episode with no steps is skipped
        paths, skipped = _scorable(paths)
        if not paths:
            raise InputError(str(path), None, "no episode there has recorded steps to score: " + "; ".join(skipped))
    began = time.perf_counter()

    async def main() -> list[Scoring]:
        async with async_playwright() as pw:
            browser = await launch(pw, headless=options.headless, archive_only=True)
            try:
                return await score_targets(browser, kind, paths, options)
            finally:
                await browser.close()

    try:
        scorings = asyncio.run(main())
    except (OSError, PlaywrightError) as exc:  # the browser or the file system failed, not the input
        raise InfraError(f"rig qa: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    reports = [s.report for s in scorings]
    if len(reports) == 1 and not skipped:
        return reports[0], reports  # what its qa.json holds
    combined = QaReport.of([p for r in reports for p in r.pages], options.threshold, str(path),
                           time.perf_counter() - began, notes=skipped + [n for r in reports for n in r.notes])
    return combined, reports


def _scorable(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The episodes that have recorded steps and an archive; and why each other one is skipped. A single episode
    that has none is bad input (InputError)."""
    ok, skipped = [], []
    for p in paths:
        ed = EpisodeDir(p)
        missing = [f.name for f in (ed.trajectory_file, ed.warc_file) if not f.is_file()]
        reason = f"no {' or '.join(missing)}" if missing else ("no recorded step" if not ed.steps() else None)
        if reason is None:
            ok.append(p)
        elif len(paths) == 1:
            raise InputError(str(p), None, f"{reason}: there is nothing to score (see `rig record`)")
        else:
            skipped.append(f"{p}: not scored ({reason})")
    return ok, skipped


def format_qa(report: QaReport, reports: list[QaReport]) -> str:
    """A human summary: one line per snapshot or episode, then each page below the threshold with its worst part and
    the requests the archive failed, then the notes."""
    lines = [r.line() for r in reports] if len(reports) > 1 else []
    lines.append(report.line())
    for p in report.pages:
        if p.score >= report.summary.threshold:
            continue
        where = f"step {p.step}" if p.step is not None else "document"
        lines.append(f"  {where} {p.url}: {p.score:.3f} ({p.worst}) [{p.source}]")
        for f in p.failed:
            hint = f"; `rig freeze --fuzzy {' --fuzzy '.join(f.fuzzy)}` would answer it" if f.fuzzy else ""
            lines.append(f"    {f.outcome}: {f.method} {f.url} ({f.kind}){hint}")
        lines += [f"    state {k}: {v[0]!r} -> {v[1]!r}" for k, v in list(p.state_diff.items())[:4]]
        lines += [f"    {n}" for n in p.notes]
    lines += [f"note: {n}" for n in report.notes]
    return "\n".join(lines)
