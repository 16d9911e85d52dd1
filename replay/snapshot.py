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
import os
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, Any

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from replay.errors import ReplayError
from replay.index import ArchiveIndex, Exchange, load_index
from replay.keys import MatchRules

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

    def write(self, directory: Path) -> Path:
        """Write `directory/manifest.json`."""
        path = directory / MANIFEST
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        return path

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
    to one key (a sequence) is kept. Record ids and dates derive from the content and `built_at`.
    """
    out = Path(out_dir)
    chosen = [x for x in index.all() if _path(x.url).startswith(path_prefix)]
    date, n, records = write_archive(chosen, out, site=site, built_at=built_at, rig_version=rig_version)
    manifest = Manifest(site=site, built_at=date, rig_version=rig_version, data_version=data_version, start_path=start_path,
                        exchanges=n, records=records, bytes=(out / SNAPSHOT_WARC).stat().st_size, sources=sources or {})
    manifest.write(out)
    return manifest


def write_archive(exchanges: Iterable[Exchange], out: Path, *, site: str, built_at: datetime,
                  rig_version: str) -> tuple[str, int, int]:
    """Write the exchanges that have a response, in the order given, as `out/snapshot.warc.gz` (deterministic bytes
    for equal input); return the build date as written, the exchanges and the records written."""
    out.mkdir(parents=True, exist_ok=True)
    warc = out / SNAPSHOT_WARC
    date = built_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    tmp = warc.with_suffix(".tmp")
    n = records = 0
    with tmp.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="1.1")
        info = writer.create_warcinfo_record(SNAPSHOT_WARC, {"software": f"sgr-rig {rig_version} replay.snapshot", "site": site,
                                                             "format": "WARC File Format 1.1"})
        _fix(info, _id("warcinfo", site), date)
        writer.write_record(info)
        records += 1
        for x in exchanges:
            if x.response is None:
                continue
            for rec in _exchange_records(writer, x, n, date):
                writer.write_record(rec)
                records += 1
            n += 1
    os.replace(tmp, warc)
    return date, n, records


def _path(url: str) -> str:
    rest = url.split("://", 1)[-1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else "/"


def _id(*parts: object) -> str:
    return f"<urn:uuid:{uuid.uuid5(_NS, '|'.join(map(str, parts)))}>"


def _fix(rec: Any, record_id: str, date: str) -> None:
    rec.rec_headers.replace_header("WARC-Record-ID", record_id)
    rec.rec_headers.replace_header("WARC-Date", date)


def _exchange_records(writer: WARCWriter, x: Exchange, n: int, date: str) -> list[Any]:
    assert x.response is not None
    r = x.response
    resp_id, req_id = _id("response", n, x.method, x.url), _id("request", n, x.method, x.url)
    headers = [(k, v) for k, v in r.headers if k.lower() not in ("date", "server")]
    http = StatusAndHeaders(f"{r.status} {r.reason}".strip(), headers, protocol="HTTP/1.1")
    resp = writer.create_warc_record(x.url, "response", payload=BytesIO(r.body), length=len(r.body), http_headers=http)
    _fix(resp, resp_id, date)
    target = _path(x.url)
    kept = [(k, v) for k, v in x.request_headers if k.lower() in ("host", "content-type")]  # what matching reads
    req_http = StatusAndHeaders(f"{x.method} {target} HTTP/1.1", kept, is_http_request=True)
    req = writer.create_warc_record(x.url, "request", payload=BytesIO(x.body), length=len(x.body), http_headers=req_http,
                                    warc_headers_dict={"WARC-Concurrent-To": resp_id})
    _fix(req, req_id, date)
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
