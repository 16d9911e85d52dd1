"""Site snapshots: a directory holding a compact WARC of every distinct recorded answer, plus `manifest.json`.

A snapshot is matched on path and query only (`MatchRules(ignore_origin=True)`): it was crawled on one
port and replays under `FROZEN_ORIGIN`, where nothing listens; every request is answered by the route
handler before it could reach the network.

    frozen = open_snapshot("site_snapshots/eco")          # or "site_snapshots" for every site in it
    context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
    session = await frozen.attach(context)
    await page.goto(frozen.start_url_base + "/eco/")
    session.miss_count                                      # states the snapshot does not hold (answered 404)
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from warcio.recordloader import ArcWarcRecord

from replay.errors import ReplayError
from replay.index import ArchiveIndex, Exchange, load_index
from replay.keys import MatchRules
from rigwarc import build
from rigwarc.atomic import atomic_write
from rigwarc.dialect import content_record_id, warc_second
from rigwarc.members import WARCIO_LEVEL, RecordEncoder

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext

    from replay.route import ReplaySession

MANIFEST = "manifest.json"
SNAPSHOT_WARC = "snapshot.warc.gz"
FORMAT = "sgr-rig/snapshot/1"
#: Where frozen runs put the sites: a loopback origin nothing needs to listen on.
FROZEN_ORIGIN = "http://127.0.0.1:8799"
_NS = uuid.UUID("7b0b6f4e-3c55-4d47-9a43-5a4e1f0c2d11")


@dataclass
class Manifest:
    """`manifest.json` of one site's snapshot."""

    site: str
    built_at: str
    rig_version: str
    data_version: list[str]
    start_path: str
    exchanges: int
    records: int
    bytes: int
    warcs: list[str] = field(default_factory=lambda: [SNAPSHOT_WARC])
    rules: dict[str, Any] = field(default_factory=lambda: MatchRules(ignore_origin=True).to_json())
    sources: dict[str, Any] = field(default_factory=dict)
    format: str = FORMAT
    #: Origins (`scheme://host[:port]`) a snapshot frozen from episodes answers for; its rules then match origins.
    #: Empty for a bundled site's snapshot, which answers under any origin (`FROZEN_ORIGIN` in frozen runs).
    origins: list[str] = field(default_factory=list)
    #: Where the frozen episodes started (so frozen runs of their tasks can be checked before they start).
    start_urls: list[str] = field(default_factory=list)
    #: Bundled sites held by a snapshot frozen from episodes, answered under `FROZEN_ORIGIN`.
    sites: list[str] = field(default_factory=list)
    #: Answers held with their body cut (`WARC-Truncated`), and requests held without any body (`WARC-Rig-Missing`):
    #: replay answers both with a 502 page saying so, never as complete answers.
    truncated_bodies: int = 0
    missing_bodies: int = 0

    def write(self, directory: Path) -> Path:
        """Write `directory/manifest.json` (whole or not at all)."""
        return atomic_write(directory / MANIFEST, json.dumps(asdict(self), indent=2) + "\n")

    @property
    def bundled_sites(self) -> list[str]:
        """The bundled sites this snapshot answers for: its own site, or the sites frozen into it with others."""
        return list(self.sites) if self.origins or self.sites else [self.site]

    @classmethod
    def read(cls, directory: Path) -> Manifest:
        """Read `directory/manifest.json`."""
        path = directory / MANIFEST
        if not path.is_file():
            raise ReplayError(f"{directory}: no {MANIFEST}; build snapshots with `python scripts/build_snapshots.py`")
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ReplayError(f"{path}: format {data.get('format')!r} is not {FORMAT!r}; rebuild the snapshot")
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def write_snapshot(
    index: ArchiveIndex,
    out_dir: str | Path,
    *,
    site: str,
    path_prefix: str,
    built_at: datetime,
    rig_version: str,
    data_version: list[str],
    start_path: str,
    sources: dict[str, Any] | None = None,
) -> Manifest:
    """Write the index's exchanges under `path_prefix` as a snapshot directory (deterministic bytes for equal input).

    Build the index with `dedupe=True` so that each distinct answer is stored once; the order of answers
    to one key (a sequence) is kept. Record ids and dates derive from the content and `built_at`. Requests recorded
    without their body (and no answer) are kept as such, after the answers.
    """
    out = Path(out_dir)
    chosen = [x for x in index.all() if _path(x.url).startswith(path_prefix)]
    missing = [x for x in index.unanswered() if _path(x.url).startswith(path_prefix)]
    written = write_archive(chosen, out, site=site, built_at=built_at, rig_version=rig_version, missing=missing)
    manifest = Manifest(site=site, built_at=written.date, rig_version=rig_version, data_version=data_version,
                        start_path=start_path, exchanges=written.exchanges, records=written.records,
                        bytes=(out / SNAPSHOT_WARC).stat().st_size, sources=sources or {},
                        truncated_bodies=written.truncated, missing_bodies=written.missing)
    manifest.write(out)
    return manifest


@dataclass(frozen=True)
class Written:
    """What `write_archive` wrote: the build date as written, the answers (and records) it holds, the answers among
    them whose body is cut, the requests held without a body, and the URLs of those two kinds."""

    date: str
    exchanges: int
    records: int
    truncated: int = 0
    missing: int = 0
    incomplete_urls: tuple[str, ...] = ()


def write_archive(exchanges: Iterable[Exchange], out: Path, *, site: str, built_at: datetime, rig_version: str,
                  missing: Iterable[Exchange] = ()) -> Written:
    """Write the exchanges that have a response, in the order given, as `out/snapshot.warc.gz` (deterministic bytes
    for equal input), then the `missing` ones (recorded without their body: kept so, with their marker)."""
    out.mkdir(parents=True, exist_ok=True)
    date = warc_second(built_at)
    answers = [x for x in exchanges if x.response is not None]
    gone = [x for x in missing if x.response is not None and x.response.missing is not None]

    def write(tmp: Path) -> None:
        encoder = RecordEncoder()
        info = build.warcinfo(SNAPSHOT_WARC, {"software": f"sgr-rig {rig_version} replay.snapshot", "site": site,
                                              "format": "WARC File Format 1.1"}, record_id=_id("warcinfo", site), date=date)
        with tmp.open("wb") as fh:
            for rec in [info, *(r for n, x in enumerate(answers + gone) for r in _exchange_records(x, n, date))]:
                fh.write(encoder.member(rec, WARCIO_LEVEL))

    atomic_write(out / SNAPSHOT_WARC, write)
    cut = [x.url for x in answers if x.response is not None and x.response.truncated]
    return Written(date, len(answers), 1 + 2 * (len(answers) + len(gone)), len(cut), len(gone),
                   tuple(cut + [x.url for x in gone]))


def _path(url: str) -> str:
    rest = url.split("://", 1)[-1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else "/"


def _id(*parts: object) -> str:
    return content_record_id(_NS, *parts)


def _exchange_records(x: Exchange, n: int, date: str) -> list[ArcWarcRecord]:
    """The response and request records of the n-th exchange (ids from its place and request, the build date); a cut
    or missing body keeps its `WARC-Truncated` and `WARC-Rig-Missing`."""
    assert x.response is not None
    r = x.response
    resp_id, req_id = _id("response", n, x.method, x.url), _id("request", n, x.method, x.url)
    headers = [(k, v) for k, v in r.headers if k.lower() not in ("date", "server")]
    resp = build.response(x.url, r.status, r.reason, headers, r.body, record_id=resp_id, date=date,
                          truncated=r.truncated, missing=r.missing)
    kept = [(k, v) for k, v in x.request_headers if k.lower() in ("host", "content-type")]  # what matching reads
    req = build.request(x.url, x.method, kept, x.body, record_id=req_id, date=date, concurrent_to=resp_id)
    return [resp, req]


@dataclass
class FrozenSite:
    """One or more site snapshots ready to answer a context's requests (see the module docstring)."""

    index: ArchiveIndex
    manifests: list[Manifest]
    start_url_base: str = FROZEN_ORIGIN

    @property
    def sites(self) -> list[str]:
        """The sites this snapshot holds."""
        return [m.site for m in self.manifests]

    async def attach(self, context: BrowserContext, on_miss: Any = None) -> ReplaySession:
        """Answer every request of `context` from the snapshot (clock frozen at build time); return the session.

        Create the context with `**REPLAY_CONTEXT_OPTIONS`. `session.miss_count` counts the requests the
        snapshot could not answer; each got a 404 page naming the missing state.
        """
        from replay.route import attach_replay

        return await attach_replay(context, self.index, on_miss=on_miss)


def snapshot_dirs(path: str | Path) -> list[Path]:
    """The snapshot directories at `path`: itself when it holds a manifest, else its subdirectories that do."""
    p = Path(path)
    if (p / MANIFEST).is_file():
        return [p]
    dirs = sorted(d for d in p.iterdir() if (d / MANIFEST).is_file()) if p.is_dir() else []
    if not dirs:
        raise ReplayError(f"{p}: not a snapshot (no {MANIFEST} in it or in its subdirectories); "
                          "build snapshots with `python scripts/build_snapshots.py`")
    return dirs


def open_snapshot(path: str | Path) -> FrozenSite:
    """Load a site snapshot directory (or a directory of them) for frozen runs."""
    dirs = snapshot_dirs(path)
    manifests = [Manifest.read(d) for d in dirs]
    rules = {json.dumps(m.rules, sort_keys=True) for m in manifests}
    if len(rules) != 1:
        raise ReplayError(f"{path}: snapshots with different match rules cannot be merged; open them one by one")
    warcs = [d / w for d, m in zip(dirs, manifests, strict=True) for w in m.warcs]
    index = load_index(warcs, MatchRules.from_json(manifests[0].rules))
    return FrozenSite(index, manifests)
