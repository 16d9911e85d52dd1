"""`rig report`: the static HTML report of a runs directory (overview, one page per episode, one page per
captured step text), self-contained: templates render with autoescape, assets and screenshots are copied in."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from loguru import logger
from PIL import Image

from rig.compare import DEFAULT_METRIC, metric_name
from rig.episode_dir import write_atomic
from rig.errors import RigError
from rig.formats.audit import NO_FAILURE
from rig.formats.summary import infra_warnings
from rig.formats.vocabulary import CATEGORIES
from rig.report.compare_view import COMPARE_PAGE, comparison_pages, dims, task_page
from rig.report.episode_view import (
    answer_table,
    citations,
    record_anchor,
    screen_paths,
    screenshot_file,
    text_marks,
    text_page,
    timeline,
)
from rig.report.highlight import segments
from rig.report.load import REGRADE, EpisodeData, RunData, load_episode, load_run
from rig.report.overview import audit_agreement, family_rows, figures, type_rows
from rig.report.qa_view import episode_fidelity, snapshot_fidelity
from rigwarc.atomic import atomic_write

ASSETS = Path(__file__).parent / "static"
THUMB_WIDTH = 240
#: Every page carries this policy, so injected markup could neither run script nor load anything from elsewhere.
CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _ci(ci: tuple[float, float] | None) -> str:
    """An interval as percentages with one decimal, `[48.2, 74.0]` (empty: none)."""
    return "" if ci is None else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _value(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(map(str, v)) + "]"
    return "(unset)" if v is None else str(v)


def _env() -> Environment:
    env = Environment(loader=PackageLoader("rig.report", "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters.update(pct=_pct, ci=_ci, value=_value)
    env.globals.update(CSP=CSP, CATEGORIES=CATEGORIES, NO_FAILURE=NO_FAILURE, REGRADE=REGRADE,
                       record_anchor=record_anchor, episode_fidelity=episode_fidelity,
                       snapshot_fidelity=snapshot_fidelity)
    return env


def _write(path: Path, text: str) -> None:
    write_atomic(path, text)


def _fresh(target: Path, source: Path) -> bool:
    """Whether a copied or derived file is there, whole (never empty) and newer than its source."""
    if not target.is_file():
        return False
    st = target.stat()
    return st.st_size > 0 and st.st_mtime >= source.stat().st_mtime


def _thumbnail(src: Path, dst: Path) -> None:
    try:
        with Image.open(src) as im:
            im.draft("RGB", (THUMB_WIDTH, THUMB_WIDTH))
            small = im.convert("RGB")
            small.thumbnail((THUMB_WIDTH, THUMB_WIDTH * 4))
            small.save(dst, "JPEG", quality=70)
    except OSError:  # not an image Pillow reads: the thumbnail is the image itself
        shutil.copyfile(src, dst)


class Report:
    """The report of one runs directory written to `out_dir`; pages can be rewritten one by one (`rig view`)."""

    def __init__(self, runs_dir: Path, out_dir: Path) -> None:
        self.runs_dir, self.out = Path(runs_dir), Path(out_dir)
        self.env = _env()
        self.run: RunData = load_run(self.runs_dir)
        self.comparison: Path | None = None  # the comparison page, once written (`write_comparison`)

    def write(self) -> Path:
        """Write every page, the assets and the screenshots; return index.html's path."""
        self.out.mkdir(parents=True, exist_ok=True)
        shutil.copytree(ASSETS, self.out / "assets", dirs_exist_ok=True)
        for e in self.run.episodes:
            try:
                self.write_episode(e, texts=True)
            except Exception as exc:  # noqa: BLE001 - one episode's bad file must not cost the run its report
                e.page_error = str(exc) if isinstance(exc, (OSError, ValueError, RigError)) else f"{type(exc).__name__}: {exc}"
                logger.warning("{}: episode page not written: {}", e.dir, e.page_error)
                self._write_broken(e)
            e.forget()
        return self.write_index()

    def _write_broken(self, e: EpisodeData) -> None:
        """The page of an episode whose files could not be shown: what episode.json says, and why."""
        _write(self.out / "episodes" / f"{e.id}.html", self.env.get_template("broken.html").render(root="../", e=e))

    def write_index(self) -> Path:
        """Write the run overview."""
        run, summary = self.run, self.run.summary
        path = self.out / "index.html"
        _write(path, self.env.get_template("index.html").render(
            root="", run=run, summary=summary, figures=figures(summary) if summary else None,
            families=family_rows(summary) if summary else [], types=type_rows(summary) if summary else [],
            records=bool(summary) and any(g.record_episodes for g in summary.groups),
            agreement=audit_agreement(run.episodes), audited=[e for e in run.episodes if e.audit is not None],
            infra_warnings=infra_warnings(summary) if summary else [], comparison=COMPARE_PAGE if self.comparison else None,
            episodes=run.episodes))
        return path

    def reload_episode(self, eid: str) -> EpisodeData | None:
        """Re-read one episode's files (after its audit changed); None for an unknown id."""
        old = self.run.by_id(eid)
        if old is None:
            return None
        new = load_episode(self.runs_dir, old.dir)
        self.run.episodes[self.run.episodes.index(old)] = new
        return new

    def write_episode(self, e: EpisodeData, texts: bool = False) -> Path:
        """Write one episode's page (and, with `texts`, its screenshots and captured-text pages)."""
        if texts:
            self._screens(e)
            self._texts(e)
        columns, rows = answer_table(e)
        path = self.out / "episodes" / f"{e.id}.html"
        _write(path, self.env.get_template("episode.html").render(
            root="../", e=e, ep=e.episode, g=e.grade, timeline=timeline(e), columns=columns, rows=rows,
            answer_error=e.answer[1], citations=citations(e), text_page=text_page,
            gold_states={s.name: s for s in e.grade.gold_states} if e.grade else {}))
        return path

    def write_comparison(self, other: Path, metric: str) -> Path:
        """Write the comparison of this run (A) with `other` (B) on `metric`: compare.html, with the per-task deltas
        sorted by delta, and one side-by-side page per task; the overview links to it."""
        pages = comparison_pages(self.runs_dir, Path(other), metric)
        ids = {e.dir.resolve(): e.id for e in self.run.episodes}
        for path, (a, b) in pages.sides.items():
            delta = next(t for t in pages.comparison.tasks if task_page(t) == path)
            _write(self.out / path, self.env.get_template("compare_task.html").render(
                root="../", c=pages.comparison, t=delta, sides=(a, b), pages_a=ids, dims=dims))
        index = self.out / COMPARE_PAGE
        _write(index, self.env.get_template("compare.html").render(
            root="", c=pages.comparison, task_page=task_page,
            tasks=sorted(pages.comparison.tasks, key=lambda t: (t.delta is None, t.delta or 0.0, t.group, t.task))))
        self.comparison = index
        return index

    def _texts(self, e: EpisodeData) -> None:
        marks = text_marks(e)
        for s in e.steps:
            raw = e.texts.get(s.step, "")
            here = marks.get(s.step, [])
            _write(self.out / text_page(e.id, s.step), self.env.get_template("text.html").render(
                root="../../", e=e, step=s, captured=s.step in e.texts, marks=here,
                segments=segments(raw, {m.id: m.spans for m in here})))

    def _screens(self, e: EpisodeData) -> None:
        for s in e.steps:
            src = screenshot_file(e, s)
            if src is None:
                continue
            thumb, full = (self.out / p for p in screen_paths(e.id, s))
            if not _fresh(full, src):
                atomic_write(full, lambda tmp, src=src: shutil.copyfile(src, tmp))  # type: ignore[misc]
            if not _fresh(thumb, src):
                atomic_write(thumb, lambda tmp, src=src: _thumbnail(src, tmp))  # type: ignore[misc]


def write_report(runs_dir: str | Path, out_dir: str | Path | None = None, *, compare_with: str | Path | None = None,
                 metric: str = DEFAULT_METRIC) -> Path:
    """Write the static report of a runs directory (default `RUNS_DIR/report`); return index.html's path. With
    `compare_with` (another graded runs directory), add the comparison pages of this run (A) with that one (B)."""
    runs_dir = Path(runs_dir)
    report = Report(runs_dir, Path(out_dir) if out_dir is not None else runs_dir / "report")
    if compare_with is not None:
        metric_name(metric)  # a bad --metric fails before anything is written
        report.out.mkdir(parents=True, exist_ok=True)
        report.write_comparison(Path(compare_with), metric)
    return report.write()
