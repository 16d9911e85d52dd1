"""Shared fixtures: the bundled sites and the test pages on real local servers, and real headless Chromium."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path
from types import ModuleType

import pytest
from playwright.async_api import async_playwright

from rig.browser import launch
from rig.sites import SitesServer

# Chromium writes into $HOME and $TMPDIR: give the whole test session temporary ones.
_HOME = tempfile.mkdtemp(prefix="rig-test-home-")
os.environ["HOME"] = _HOME
for _var in ("ANONYMIZED_TELEMETRY", "BROWSER_USE_CLOUD_SYNC", "BROWSER_USE_VERSION_CHECK", "BROWSER_USE_CLOUD_HINTS"):
    os.environ[_var] = "false"
os.environ["BROWSER_USE_DISABLE_EXTENSIONS"] = "1"

#: Test pages (tests/pages) and their servers.
PAGES = Path(__file__).parent / "pages"


def load_module(path: Path, name: str) -> ModuleType:
    """Import a helper module of the tests (not a package) from its path."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: The hostile test site (tests/pages/hostile/server.py): its server and the bodies it sends.
HOSTILE = load_module(PAGES / "hostile" / "server.py", "hostile_pages")


@pytest.fixture(scope="session")
def sites_url():
    """Base URL of the bundled sites, served on 127.0.0.1 for the whole session."""
    with SitesServer() as srv:
        yield srv.url


@pytest.fixture(scope="module")
def pages_url():
    """tests/pages served on 127.0.0.1 for one test module."""
    with load_module(PAGES / "serve.py", "test_pages_serve").PageServer() as srv:
        yield srv.url


@pytest.fixture(scope="module")
def hostile():
    """The hostile test site on 127.0.0.1 for one test module."""
    with HOSTILE.HostileServer() as srv:
        yield srv


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
    await ctx.close()


@pytest.fixture
async def page(context):
    return await context.new_page()
