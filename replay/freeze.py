"""Freezing what episodes archived into a site snapshot of any origin (`rig freeze`).

    sources = [FreezeSource(Path("runs/t/constraint/reference/trial-0/evidence.warc.gz"))]
    manifest = freeze(sources, "snapshots/portal", name="portal", built_at=now, rig_version="0.3")
    frozen = open_snapshot("snapshots/portal")          # answers https://portal.example.org/... with no network

Every exchange with a response, on any http(s) origin, goes into one compact WARC; each distinct answer is kept
once per request, in the order the episodes (in the order given) received them, so a request answered differently
over time replays as that sequence. The snapshot's rules match origins (`MatchRules(ignore_origin=False)`): a
request for `https://portal.example.org/x` is answered by what that origin sent, never by another host's `/x`.
A source may move a recorded origin (a bundled sites server on a random port) onto another (`FROZEN_ORIGIN`, where
frozen runs put the bundled sites).

A body the episodes recorded cut (`WARC-Truncated`) or not at all (`WARC-Rig-Missing`, where no episode got an
answer to that request) stays marked so in the snapshot: the manifest counts them (`truncated_bodies`,
`missing_bodies`), `FreezeResult.incomplete` names their URLs, and frozen runs answer them with a 502 page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from replay.errors import ReplayError
from replay.index import ArchiveIndex, Exchange, add_exchanges, load_index
from replay.keys import KeyMaker, MatchRules
from replay.snapshot import SNAPSHOT_WARC, Manifest, write_archive

#: The rules of a snapshot frozen from episodes: origins count, jQuery's `_` cache-buster does not.
FROZEN_RULES = MatchRules(ignore_origin=False)


@dataclass(frozen=True)
class FreezeSource:
    """One archive to freeze: its WARC, recorded origins to move (`http://127.0.0.1:54321` -> another origin), and
    where its episode started (after moving)."""

    warc: Path
    origin_map: Mapping[str, str] = field(default_factory=dict)
    start_url: str | None = None


@dataclass
class FreezeResult:
    """The snapshot's manifest, problems met reading the sources (a torn last record: the rest was used), and the
    URLs whose body the snapshot holds cut or not at all."""

    manifest: Manifest
    problems: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)

    def incomplete_warning(self, out: Path, shown: int = 3) -> str | None:
        """One line naming how many bodies are not whole and where (None when all are)."""
        m, urls = self.manifest, self.incomplete
        if not urls:
            return None
        more = f" and {len(urls) - shown} more" if len(urls) > shown else ""
        return (f"{out}: {len(urls)} archived bodies are not whole ({m.truncated_bodies} cut, {m.missing_bodies} missing): "
                f"{', '.join(urls[:shown])}{more}; frozen runs answer them with a 502 page, not as complete answers")


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL (lower-case, default ports left out)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    port = f":{parts.port}" if parts.port and parts.port != default else ""
    return f"{parts.scheme.lower()}://{host}{port}"


def move_origin(url: str, origin_map: Mapping[str, str]) -> str:
    """The URL on its mapped origin (unchanged when its origin is not mapped)."""
    target = origin_map.get(origin_of(url))
    if target is None:
        return url
    parts, to = urlsplit(url), urlsplit(target)
    return urlunsplit((to.scheme, to.netloc, parts.path, parts.query, parts.fragment))


def freeze(sources: Iterable[FreezeSource], out_dir: str | Path, *, name: str, built_at: datetime, rig_version: str,
           sites: Iterable[str] = (), data_version: Iterable[str] = (), info: dict[str, Any] | None = None,
           rules: MatchRules = FROZEN_RULES) -> FreezeResult:
    """Write the sources' exchanges as one snapshot directory (`manifest.json`, `snapshot.warc.gz`).

    `sites` names bundled sites whose episodes were moved onto `FROZEN_ORIGIN`, `data_version` their data versions;
    `info` goes into the manifest's `sources`; `rules` are the snapshot's match rules (`FROZEN_RULES` with per-snapshot
    fuzzy rules: query parameters ignored on some paths, `MatchRules.site_params`). ReplayError when a source is not a
    readable WARC or nothing in the sources has a response.
    """
    chosen = list(sources)
    problems: list[str] = []
    exchanges: list[Exchange] = []
    for n, src in enumerate(chosen):
        index = load_index(src.warc, rules)
        problems += index.errors
        for x in [*index.all(), *(x for xs in index.missing.values() for x in xs)]:
            if x.response is None or not x.url.startswith(("http://", "https://")):
                continue
            exchanges.append(_moved(x, n, src.origin_map))
    combined = ArchiveIndex(KeyMaker(rules))
    add_exchanges(combined, exchanges, dedupe=True)
    kept, missing = list(combined.all()), combined.unanswered()
    if not kept:
        raise ReplayError(f"{out_dir}: the episodes archived no response to freeze")
    out = Path(out_dir)
    written = write_archive(kept, out, site=name, built_at=built_at, rig_version=rig_version, missing=missing)
    varying = sum(len(v) > 1 for v in combined.exchanges.values())
    starts = sorted({s.start_url for s in chosen if s.start_url and s.start_url.startswith(("http://", "https://"))})
    manifest = Manifest(
        site=name, built_at=written.date, rig_version=rig_version, data_version=sorted(set(data_version)),
        start_path=urlsplit(starts[0]).path if starts else "/", exchanges=written.exchanges, records=written.records,
        bytes=(out / SNAPSHOT_WARC).stat().st_size, rules=rules.to_json(),
        sources={"archives": len(chosen), "keys_with_sequences": varying, **(info or {})},
        origins=sorted({origin_of(x.url) for x in kept + missing}), start_urls=starts, sites=sorted(set(sites)),
        truncated_bodies=written.truncated, missing_bodies=written.missing,
    )
    manifest.write(out)
    return FreezeResult(manifest, problems, list(written.incomplete_urls))


def _moved(x: Exchange, source_no: int, origin_map: Mapping[str, str]) -> Exchange:
    """The exchange on its mapped origin (Host header too), ordered after every exchange of earlier sources."""
    url = move_origin(x.url, origin_map)
    headers, response = x.request_headers, x.response
    if url != x.url:
        netloc = urlsplit(url).netloc
        headers = tuple((k, netloc) if k.lower() == "host" else (k, v) for k, v in headers)
    if response is not None and origin_map:  # an absolute redirect to a moved origin moves with it
        moved = tuple((k, move_origin(v, origin_map)) if k.lower() == "location" else (k, v) for k, v in response.headers)
        response = replace(response, headers=moved)
    return replace(x, url=url, request_headers=headers, response=response, order=(source_no, *x.order[1:]))
