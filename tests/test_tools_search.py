"""web_search's backends: the local BM25 index over the real site snapshots and look-alike pages (cached on disk),
and the live backends against real HTTP servers on 127.0.0.1 speaking SearXNG's and Serper's JSON."""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from server import TestServer

from rig.errors import InfraError, InputError
from rig.sites.web import page_paths
from rig.tools.errors import ToolError
from rig.tools.search import (
    SNAPSHOTS_DIR,
    LocalSearch,
    SearchConfig,
    SearxngSearch,
    SerperSearch,
    corpus_digest,
    extract_documents,
    format_hits,
    load_documents,
    search_backend,
)

SITES = "http://127.0.0.1:8765"


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> LocalSearch:
    return LocalSearch.bundled(SITES, cache=tmp_path_factory.mktemp("search-cache"))


def _snapshot_pages() -> set[str]:
    """Every page the snapshots hold (GET 200 HTML documents without a query string), read with warcio directly."""
    from warcio.archiveiterator import ArchiveIterator

    paths = set()
    for warc in SNAPSHOTS_DIR.glob("*/snapshot.warc.gz"):
        with warc.open("rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type != "response" or rec.http_headers is None:
                    continue
                url = urlsplit(rec.rec_headers.get_header("WARC-Target-URI"))
                html = rec.content_stream().read()
                if (not url.query and rec.http_headers.get_statuscode() == "200"
                        and "html" in (rec.http_headers.get_header("Content-Type") or "") and b"<title>" in html):
                    paths.add(url.path)
    return paths


def test_index_holds_every_snapshot_page_and_the_lookalikes(index):
    paths = {d.path for d in index.documents}
    assert _snapshot_pages() == {p for p in paths if not p.startswith("/web/")}
    assert {f"/web/{p.name}" for p in page_paths()} <= paths
    assert len(page_paths()) >= 4
    assert not any("?" in p for p in paths)


def test_hits_are_absolute_on_the_sites_server(index):
    hits = index.search("country indicators life expectancy", 5)
    assert hits and all(h.url.startswith(SITES + "/") for h in hits)
    assert all(h.title and h.snippet for h in hits)
    assert any("life expectancy" in h.snippet.lower() for h in hits)


@pytest.mark.parametrize("query,site", [
    ("New York City 2013 airline on-time performance", "/flights/"),
    ("Gapminder country indicators portal life expectancy", "/stats/"),
    ("environmental monitoring datasets Seattle daily weather", "/eco/"),
    ("Honolulu Intl airport New York flights", "/flights/airport/HNL"),
])
def test_the_right_portal_ranks_first(index, query, site):
    assert urlsplit(index.search(query, 5)[0].url).path.startswith(site)


@pytest.mark.parametrize("query,page", [
    ("why were New York flights so late in 2013 blog", "flight-delays-blog.html"),
    ("does it rain every day in Seattle", "seattle-rain-notes.html"),
    ("wind power Iowa renewables newsletter", "iowa-energy-newsletter.html"),
    ("world indicators archive discontinued mirror", "world-indicators-archive.html"),
    ("airport codes directory time zones", "airport-codes-directory.html"),
])
def test_lookalike_queries_return_distractors(index, query, page):
    assert f"/web/{page}" in [urlsplit(h.url).path for h in index.search(query, 3)]


def test_no_hits_and_bad_queries(index):
    assert index.search("zzzxqj", 10) == []
    assert format_hits(index, []) == "[local index] no results"
    for query, count, reason in [("", 10, "`query` is empty"), ("x " * 60, 10, "too long"), ("a" * 401, 10, "too long"),
                                 ("flights", 0, "count must be between 1 and 50"),
                                 ("flights", 51, "count must be between 1 and 50")]:
        with pytest.raises(ToolError, match=reason):
            index.search(query, count)
    assert len(index.search("flights", 50)) <= 50


def test_format_hits_numbers_them_under_the_label(index):
    hits = index.search("Zimbabwe life expectancy", 2)
    text = format_hits(index, hits)
    assert text.splitlines()[0] == "[local index] 2 results"
    assert f"1. {hits[0].title}" in text and hits[0].url in text


def test_the_page_cache_is_keyed_by_the_snapshots(tmp_path):
    snaps = tmp_path / "snaps"
    shutil.copytree(SNAPSHOTS_DIR, snaps)
    cache = tmp_path / "cache"
    first = load_documents(snaps, cache)
    files = list((cache / "search").glob("pages-*.json"))
    assert len(files) == 1 and files[0].name == f"pages-{corpus_digest(snaps)}.json"
    assert load_documents(snaps, cache) == first == extract_documents(snaps)
    files[0].write_text("{torn")
    assert load_documents(snaps, cache) == first, "a torn cache file is rebuilt"
    warc = next(snaps.glob("eco/snapshot.warc.gz"))
    before = corpus_digest(snaps)
    warc.write_bytes(warc.read_bytes())
    assert corpus_digest(snaps) == before
    shutil.rmtree(snaps / "eco")
    assert corpus_digest(snaps) != before
    assert not any(d.path.startswith("/eco/") for d in load_documents(snaps, cache))


def test_no_snapshots_is_an_infrastructure_error(tmp_path):
    with pytest.raises(InfraError, match="no site snapshots"):
        extract_documents(tmp_path)


def test_lookalike_pages_are_served_by_the_sites_server(index, sites_url):
    for page in page_paths():
        with urllib.request.urlopen(f"{sites_url}/web/{page.name}", timeout=60) as resp:
            assert resp.status == 200 and b"<title>" in resp.read()
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(f"{sites_url}/web/__init__.py", timeout=60)
    assert err.value.code == 404


@pytest.fixture()
def live_search():
    with TestServer() as srv:
        yield srv


def test_searxng_backend(live_search):
    def answer(ex):
        ex.send_json({"results": [{"url": "https://example.org/a", "title": "A", "content": "first"},
                                  {"url": "https://example.org/b", "title": "B", "content": "second"},
                                  {"title": "no url"}]})
    live_search.set_route("/search", answer)
    backend = search_backend(SITES, SearchConfig(backend="searxng", searxng_url=live_search.url + "/"))
    assert isinstance(backend, SearxngSearch)
    hits = backend.search("nyc flights 2013", 1)
    assert [(h.url, h.title, h.snippet) for h in hits] == [("https://example.org/a", "A", "first")]
    req = live_search.requests_to("/search")[0]
    assert req.query == {"q": ["nyc flights 2013"], "format": ["json"]}
    assert format_hits(backend, hits).startswith("[searxng] 1 results")


def test_serper_backend(live_search):
    live_search.set_route("/search", lambda ex: ex.send_json(
        {"organic": [{"link": "https://example.org/c", "title": "C", "snippet": "third"}]}))
    backend = search_backend(SITES, SearchConfig(backend="serper", serper_api_key="k-123",
                                                 serper_url=live_search.url + "/search"))
    assert isinstance(backend, SerperSearch)
    assert [h.url for h in backend.search("gapminder", 5)] == ["https://example.org/c"]
    req = live_search.requests_to("/search")[0]
    assert req.method == "POST" and req.headers["x-api-key"] == "k-123"
    assert json.loads(req.body) == {"q": "gapminder", "num": 5}


def test_live_backend_failures_are_infrastructure_errors(live_search):
    live_search.set_route("/search", lambda ex: ex.send(500, "boom"))
    with pytest.raises(InfraError, match="SearXNG answered HTTP 500"):
        SearxngSearch(live_search.url).search("x")
    live_search.set_route("/search", lambda ex: ex.send(200, "not json"))
    with pytest.raises(InfraError, match="did not answer JSON"):
        SearxngSearch(live_search.url).search("x")


@pytest.mark.parametrize("env,reason", [
    ({"RIG_SEARCH": "searxng"}, "searxng is asked for but RIG_SEARXNG_URL is not set"),
    ({"RIG_SEARCH": "serper"}, "serper is asked for but SERPER_API_KEY is not set"),
    ({"RIG_SEARCH": "bing"}, "'bing' is not a search backend; use one of local, searxng, serper"),
])
def test_a_backend_asked_for_but_not_configured(env, reason):
    with pytest.raises(InputError, match=reason):
        search_backend(SITES, SearchConfig.from_env(env))


def test_local_is_the_default(tmp_path):
    assert SearchConfig.from_env({}).backend == "local"
    backend = search_backend(SITES, SearchConfig.from_env({"RIG_SEARCH": "LOCAL"}), cache=tmp_path)
    assert isinstance(backend, LocalSearch) and backend.label == "local index"


def test_the_cache_directory_is_used_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("RIG_CACHE_DIR", str(tmp_path))
    LocalSearch.bundled(SITES)
    assert [p.name for p in Path(tmp_path, "search").iterdir()] == [f"pages-{corpus_digest()}.json"]
