"""Shared fixtures: the bundled sites on a real local server, and real headless Chromium."""

from __future__ import annotations

import os
import tempfile

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


@pytest.fixture(scope="session")
def sites_url():
    """Base URL of the bundled sites, served on 127.0.0.1 for the whole session."""
    with SitesServer() as srv:
        yield srv.url


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
