"""Shared fixtures: the bundled sites and the test pages on real local servers, and real headless Chromium."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest
from liveweb import LiveWeb
from playwright.async_api import async_playwright
from real_runs import record_real_runs
from server import PAGES, TestServer, hostile_site, load_module, pages_site

from rig.browser import close_context, launch
from rig.sites import SitesServer

# Chromium, Playwright's driver and the rig write into $HOME and $TMPDIR (profiles, the built sites' databases, about
# 50 MB a worker): the session gets temporary ones, removed when it ends (`pytest_unconfigure`). This process keeps
# its own temporary directory, so pytest's tmp_path directories stay where pytest keeps them.
_HOME = tempfile.mkdtemp(prefix="rig-test-home-")
tempfile.tempdir = tempfile.gettempdir()
os.environ["HOME"] = _HOME
os.environ["TMPDIR"] = os.path.join(_HOME, "tmp")
os.mkdir(os.environ["TMPDIR"])
for _var in ("ANONYMIZED_TELEMETRY", "BROWSER_USE_CLOUD_SYNC", "BROWSER_USE_VERSION_CHECK", "BROWSER_USE_CLOUD_HINTS"):
    os.environ[_var] = "false"
os.environ["BROWSER_USE_DISABLE_EXTENSIONS"] = "1"

#: The hostile test site (tests/pages/hostile/routes.py): its pages and the bodies it sends.
HOSTILE = load_module(PAGES / "hostile" / "routes.py", "hostile_pages")

#: The test servers running for the session: each is reset after every test.
_SERVERS: list[TestServer] = []


@pytest.fixture(autouse=True)
def _reset_test_servers():
    """After each test: fail it if a route handler raised, then reset every test server (tests/server.py)."""
    yield
    errors = [e for srv in _SERVERS for e in srv.errors]
    for srv in _SERVERS:
        srv.errors.clear()
        srv.reset()
    assert not errors, "a test server's route handler raised:\n" + "\n".join(errors)


@pytest.fixture(autouse=True)
def _no_process_left_running():
    """After each test: fail it if it (or the rig) left a multiprocessing child running, and kill that child. A forked
    child holds copies of the worker's pipes, Playwright's driver's stdin among them: the driver would never see it
    close, and the session would hang on exit."""
    before = set(multiprocessing.active_children())
    yield
    left = set(multiprocessing.active_children()) - before
    names = sorted(str(p) for p in left)
    for process in left:
        process.kill()
        process.join(5)
    assert not left, f"processes left running: {names}"


@pytest.fixture(autouse=True)
async def _no_context_left_open(request):
    """After each test that used the session browser: fail it if it (or the rig) left a context open there, which
    would go on loading its pages for the rest of the session, and close those contexts."""
    if "browser" not in request.fixturenames:
        yield
        return
    browser = request.getfixturevalue("browser")
    before = set(browser.contexts)
    yield
    left = [c for c in browser.contexts if c not in before]
    urls = [[page.url for page in c.pages] for c in left]
    for c in left:
        await close_context(c)
    assert not left, f"contexts left open in the session browser, with their pages: {urls}"


@contextlib.contextmanager
def serving(srv: TestServer) -> Iterator[TestServer]:
    """Run `srv` for a fixture's lifetime (`with serving(TestServer(...)) as srv: yield srv`), reset after each
    test; a route handler that raised fails the test."""
    with srv:
        _SERVERS.append(srv)
        try:
            yield srv
        finally:
            _SERVERS.remove(srv)


@pytest.fixture(scope="session")
def sites_url():
    """Base URL of the bundled sites, served on 127.0.0.1 for the whole session."""
    with SitesServer() as srv:
        yield srv.url


@pytest.fixture(scope="session")
def pages_server():
    """tests/pages and the endpoints its pages call (`server.pages_site`) on 127.0.0.1, reset after each test."""
    with serving(pages_site()) as srv:
        yield srv


@pytest.fixture(scope="session")
def pages_url(pages_server):
    """Base URL of `pages_server`."""
    return pages_server.url


@pytest.fixture(scope="session")
def hostile():
    """The hostile test site (`server.hostile_site`) on 127.0.0.1, reset after each test."""
    with serving(hostile_site()) as srv:
        yield srv


@pytest.fixture(scope="session")
def liveweb():
    """The offline web (tests/liveweb.py): HTTPS hosts portal.example.org, product.example.com and
    archive.example.net on 127.0.0.1, reached with `liveweb.resolve_args()` and `--ignore-https-errors`; reset
    (requests, misbehaviour, the portal's data) after each test."""
    with serving(LiveWeb()) as web:
        yield web


@pytest.fixture(scope="session")
async def real_runs(sites_url, tmp_path_factory, browser):
    """One runs directory of real episodes (tests/real_runs.py: bundled agents, several trials, step images off),
    recorded once per session in the session's browser and graded; tests copy what they change."""
    return await record_real_runs(tmp_path_factory.mktemp("real-runs") / "runs", sites_url, browser)


@pytest.fixture(scope="session")
async def playwright():
    async with async_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
async def browser(playwright):
    """One headless Chromium for the session (offline flags)."""
    b = await launch(playwright)
    yield b
    await b.close()


@pytest.fixture
async def context(browser):
    ctx = await browser.new_context()
    yield ctx
    await close_context(ctx)


@pytest.fixture
async def page(context):
    return await context.new_page()


#: Fixtures so costly to build that every test using them runs in one pytest-xdist worker (`--dist loadgroup`),
#: which builds them once: the recorded runs of tests/real_runs.py.
_SHARED_ONCE = ("real_runs",)


def _xdist_group(item: pytest.Item) -> str | None:
    """The worker group of a test: the costly session fixture it uses, else its module when it uses a module-scoped
    fixture (each worker running some of the module's tests would build that fixture again: a site's recorded
    episodes, twice), one group per parameter of a parametrized one; None for a test free to run anywhere."""
    names = getattr(item, "fixturenames", ())
    for name in _SHARED_ONCE:
        if name in names:
            return name
    info = getattr(item, "_fixtureinfo", None)
    module_scoped = sorted(name for name, defs in (info.name2fixturedefs.items() if info else ())
                           if defs and defs[-1].scope == "module")
    if not module_scoped:
        return None
    params = getattr(getattr(item, "callspec", None), "params", {})
    return "::".join([item.nodeid.split("::")[0], *(str(params[n]) for n in module_scoped if n in params)])


def pytest_itemcollected(item: pytest.Item) -> None:
    """Group the tests of each costly fixture onto one worker (a no-op without pytest-xdist). Marked as each test is
    collected: pytest-xdist's worker reads the groups in its own `pytest_collection_modifyitems`, before a conftest's."""
    group = _xdist_group(item)
    if group is not None:
        item.add_marker(pytest.mark.xdist_group(group))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the session's $HOME and $TMPDIR (profiles a killed browser left behind among them)."""
    shutil.rmtree(_HOME, ignore_errors=True)
