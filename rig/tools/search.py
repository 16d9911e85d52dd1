"""`web_search`'s backends: a local BM25 index (the default, offline) and live services chosen by configuration.

The local index holds every page of the bundled sites' snapshots (`site_snapshots/*/snapshot.warc.gz`: each
HTML page fetched by GET without a query string, i.e. the portals' own pages, not their result states) and the
look-alike pages of `rig.sites.web`; hits point at the running sites server (`sites_url`). The extracted pages
are cached on disk under a digest of the snapshots and pages, so a second index is built in milliseconds.

Configuration (environment, or `SearchConfig`): `RIG_SEARCH` = `local` (default), `searxng` (`RIG_SEARXNG_URL`,
its JSON API, `format=json`) or `serper` (`SERPER_API_KEY`; `RIG_SERPER_URL` overrides the endpoint).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Protocol

import bm25s
from bm25s.stopwords import STOPWORDS_EN

from rig.cache import cache_dir
from rig.errors import InfraError, InputError
from rig.sites.web import page_paths
from rig.tools.errors import ToolError
from rigwarc.atomic import atomic_write

#: HybridDeepResearch's limits: a query of at most 400 characters and 50 words, at most 50 hits.
MAX_QUERY_CHARS, MAX_QUERY_WORDS, MAX_COUNT = 400, 50, 50
SNIPPET_CHARS = 200
SNAPSHOTS_DIR = Path(__file__).resolve().parents[2] / "site_snapshots"
#: Bump when page extraction changes (part of the cache key).
_EXTRACT_VERSION = 1
_WORD = re.compile(r"\w\w+", re.UNICODE)
_STOP = frozenset(STOPWORDS_EN)


@dataclass(frozen=True)
class SearchHit:
    """One search result: where it is, its title, and a passage of it that matches the query."""

    url: str
    title: str
    snippet: str


class SearchBackend(Protocol):
    """Anything that answers `search(query, count)` with hits, best first."""

    label: str

    def search(self, query: str, count: int = 10) -> list[SearchHit]:
        """The best `count` hits for `query`."""
        ...


@dataclass(frozen=True)
class Document:
    """One indexed page: its path (and query) on the sites server, title and visible text."""

    path: str
    title: str
    text: str


class _PageParser(HTMLParser):
    _BLOCK = frozenset({"p", "div", "tr", "li", "br", "h1", "h2", "h3", "h4", "h5", "h6", "table", "section", "dt",
                        "dd", "caption", "header", "footer", "main", "nav", "ul", "ol"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: list[str] = []
        self.parts: list[str] = []
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "template", "select"):
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag in self._BLOCK:
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "template", "select"):
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._skip:
            self.parts.append(data)


def page_document(path: str, html: str) -> Document | None:
    """A page's title and visible text (form option lists left out); None for a fragment without a <title>."""
    parser = _PageParser()
    parser.feed(html)
    title = " ".join("".join(parser.title).split())
    if not title:
        return None
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    return Document(path=path, title=title, text="\n".join(line for line in lines if line))


def _snapshot_warcs(snapshots: Path) -> list[Path]:
    return sorted(snapshots.glob("*/snapshot.warc.gz")) if snapshots.is_dir() else []


def _lookalike_pages() -> list[Path]:
    return page_paths()


def corpus_digest(snapshots: Path = SNAPSHOTS_DIR) -> str:
    """A digest of everything the index is built from (the cache key)."""
    h = hashlib.sha256(f"v{_EXTRACT_VERSION}".encode())
    for path in _snapshot_warcs(snapshots) + _lookalike_pages():
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def extract_documents(snapshots: Path = SNAPSHOTS_DIR) -> list[Document]:
    """Every page of the snapshots (GET, status 200, HTML with a title, no query string), then the look-alike pages."""
    from replay.index import load_index

    warcs = _snapshot_warcs(snapshots)
    if not warcs:
        raise InfraError(f"{snapshots}: no site snapshots (<site>/snapshot.warc.gz) to build the search index from")
    docs: dict[str, Document] = {}
    for x in load_index(warcs, dedupe=True).all():
        parts = urllib.parse.urlsplit(x.url)
        if x.method != "GET" or parts.query or x.response is None or x.response.status != 200:
            continue
        if "html" not in x.response.content_type or parts.path in docs:
            continue
        doc = page_document(parts.path, x.response.body.decode("utf-8", "replace"))
        if doc is not None:
            docs[parts.path] = doc
    for page in _lookalike_pages():
        doc = page_document(f"/web/{page.name}", page.read_text(encoding="utf-8"))
        if doc is not None:
            docs[doc.path] = doc
    return list(docs.values())


def load_documents(snapshots: Path = SNAPSHOTS_DIR, cache: Path | None = None) -> list[Document]:
    """The index's pages, from the on-disk cache when the snapshots and pages are unchanged."""
    path = (cache or cache_dir()) / "search" / f"pages-{corpus_digest(snapshots)}.json"
    if path.is_file():
        try:
            return [Document(**d) for d in json.loads(path.read_text(encoding="utf-8"))]
        except (ValueError, TypeError):
            path.unlink(missing_ok=True)  # a torn cache file is rebuilt
    docs = extract_documents(snapshots)
    atomic_write(path, json.dumps([asdict(d) for d in docs], ensure_ascii=False))
    return docs


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")):
        return word[:-1]
    return word


def tokens(text: str) -> list[str]:
    """Lower-case word tokens of at least two characters, English stop words left out, plurals folded."""
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


def check_query(query: str, count: int) -> None:
    """ToolError for an empty or too long query or a count out of range (HybridDeepResearch's limits)."""
    if not isinstance(query, str) or not query.strip():
        raise ToolError("web_search: `query` is empty")
    if len(query) > MAX_QUERY_CHARS or len(query.split()) > MAX_QUERY_WORDS:
        raise ToolError(f"web_search: the query is too long (at most {MAX_QUERY_CHARS} characters and "
                        f"{MAX_QUERY_WORDS} words)")
    if not 1 <= count <= MAX_COUNT:
        raise ToolError(f"web_search: count must be between 1 and {MAX_COUNT}, got {count}")


def snippet(text: str, query_tokens: set[str], limit: int = SNIPPET_CHARS) -> str:
    """The line of `text` holding most query words (ties: the longer, then the earlier), cut to `limit` characters."""
    lines = [line for line in text.split("\n") if line.strip()] or [""]
    best = max(lines, key=lambda line: (len(query_tokens & set(tokens(line))), min(len(line), limit)))
    return best if len(best) <= limit else best[: limit - 1].rstrip() + "…"


class LocalSearch:
    """BM25 (bm25s) over the indexed pages; a page's title counts twice."""

    label = "local index"

    def __init__(self, sites_url: str, documents: list[Document]) -> None:
        if not documents:
            raise InfraError("the local search index has no pages")
        self.sites_url = sites_url.rstrip("/")
        self.documents = documents
        self._bm25 = bm25s.BM25()
        self._bm25.index([tokens(f"{d.title}\n{d.title}\n{d.text}") or ["\0"] for d in documents],
                         show_progress=False)

    @classmethod
    def bundled(cls, sites_url: str, snapshots: Path = SNAPSHOTS_DIR, cache: Path | None = None) -> LocalSearch:
        """The index of the bundled sites' snapshots and look-alike pages, hits on `sites_url`."""
        return cls(sites_url, load_documents(snapshots, cache))

    def search(self, query: str, count: int = 10) -> list[SearchHit]:
        """The best `count` pages for `query` (pages sharing no word with it are left out)."""
        check_query(query, count)
        q = tokens(query)
        if not q:
            return []
        k = min(count, len(self.documents))
        ids, scores = self._bm25.retrieve([q], k=k, show_progress=False)
        wanted = set(q)
        return [SearchHit(url=self.sites_url + self.documents[i].path, title=self.documents[i].title,
                          snippet=snippet(self.documents[i].text, wanted))
                for i, s in zip(ids[0].tolist(), scores[0].tolist()) if s > 0]


def _http_json(req: urllib.request.Request, what: str, timeout_s: float) -> Any:
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            return json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        raise InfraError(f"{what} answered HTTP {exc.code} for {req.full_url}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise InfraError(f"{what} at {req.full_url} cannot be reached: {exc}") from None
    except ValueError:
        raise InfraError(f"{what} at {req.full_url} did not answer JSON") from None


class SearxngSearch:
    """A SearXNG instance's JSON API (`/search?q=...&format=json`; the instance must enable the json format)."""

    label = "searxng"

    def __init__(self, base_url: str, timeout_s: float = 20.0) -> None:
        self.base_url, self.timeout_s = base_url.rstrip("/"), timeout_s

    def search(self, query: str, count: int = 10) -> list[SearchHit]:
        """The first `count` results of the instance."""
        check_query(query, count)
        url = f"{self.base_url}/search?" + urllib.parse.urlencode({"q": query, "format": "json"})
        data = _http_json(urllib.request.Request(url, headers={"Accept": "application/json"}), "SearXNG",
                          self.timeout_s)
        results = data.get("results", []) if isinstance(data, dict) else []
        return [SearchHit(url=str(r.get("url", "")), title=str(r.get("title", "")), snippet=str(r.get("content", "")))
                for r in results if isinstance(r, dict) and r.get("url")][:count]


class SerperSearch:
    """Serper's Google Search API (an API-key service; HybridDeepResearch's live backend)."""

    label = "serper"
    ENDPOINT = "https://google.serper.dev/search"

    def __init__(self, api_key: str, endpoint: str | None = None, timeout_s: float = 20.0) -> None:
        self.api_key, self.endpoint, self.timeout_s = api_key, endpoint or self.ENDPOINT, timeout_s

    def search(self, query: str, count: int = 10) -> list[SearchHit]:
        """The first `count` organic results."""
        check_query(query, count)
        body = json.dumps({"q": query, "num": count}).encode()
        req = urllib.request.Request(self.endpoint, data=body, method="POST",
                                     headers={"X-API-KEY": self.api_key, "Content-Type": "application/json"})
        data = _http_json(req, "Serper", self.timeout_s)
        organic = data.get("organic", []) if isinstance(data, dict) else []
        return [SearchHit(url=str(r.get("link", "")), title=str(r.get("title", "")), snippet=str(r.get("snippet", "")))
                for r in organic if isinstance(r, dict) and r.get("link")][:count]


@dataclass(frozen=True)
class SearchConfig:
    """Which backend `web_search` uses, and its settings (`from_env` reads them from the environment)."""

    backend: str = "local"
    searxng_url: str | None = None
    serper_api_key: str | None = None
    serper_url: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SearchConfig:
        """`RIG_SEARCH`, `RIG_SEARXNG_URL`, `SERPER_API_KEY`, `RIG_SERPER_URL`."""
        env = os.environ if env is None else env
        return cls(backend=(env.get("RIG_SEARCH") or "local").strip().lower(), searxng_url=env.get("RIG_SEARXNG_URL"),
                   serper_api_key=env.get("SERPER_API_KEY"), serper_url=env.get("RIG_SERPER_URL"))


BACKENDS = ("local", "searxng", "serper")


def search_backend(sites_url: str, config: SearchConfig | None = None, snapshots: Path = SNAPSHOTS_DIR,
                   cache: Path | None = None) -> SearchBackend:
    """The configured backend; InputError naming the missing setting when a live one is asked for but not configured."""
    config = config or SearchConfig.from_env()
    if config.backend == "local":
        return LocalSearch.bundled(sites_url, snapshots, cache)
    if config.backend == "searxng":
        if not config.searxng_url:
            raise InputError("RIG_SEARCH", None, "searxng is asked for but RIG_SEARXNG_URL is not set; set it to the "
                                                 "instance's base URL (with the json format enabled in its settings)")
        return SearxngSearch(config.searxng_url)
    if config.backend == "serper":
        if not config.serper_api_key:
            raise InputError("RIG_SEARCH", None, "serper is asked for but SERPER_API_KEY is not set; set it to your "
                                                 "serper.dev API key")
        return SerperSearch(config.serper_api_key, config.serper_url)
    raise InputError("RIG_SEARCH", None, f"{config.backend!r} is not a search backend; use one of {', '.join(BACKENDS)}")


def format_hits(backend: SearchBackend, hits: list[SearchHit]) -> str:
    """Hits as the numbered list the agent sees, prefixed by the backend's label."""
    if not hits:
        return f"[{backend.label}] no results"
    lines = [f"[{backend.label}] {len(hits)} results"]
    for n, h in enumerate(hits, start=1):
        lines += [f"{n}. {h.title}", f"   {h.url}", f"   {h.snippet}"]
    return "\n".join(lines)
