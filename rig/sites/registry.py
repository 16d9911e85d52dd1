"""The bundled replica sites and the one ASGI app that serves them all."""

from __future__ import annotations

import html
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Mount, Route
from starlette.types import ASGIApp

from recorders.adapter import SiteAdapter, load_adapter
from rig.sites.database import Database
from rig.sites.web import routes as web_routes

#: Module names under rig.sites; each exposes `SITE: Site`.
SITE_MODULES = ("flights", "stats", "eco", "bio", "vuln", "complaints", "papers")


@dataclass(frozen=True)
class Site:
    """One bundled replica site, mounted at `/<name>/` on the sites server."""

    name: str
    title: str
    family: str
    portal_pattern: str
    build_app: Callable[[], ASGIApp]
    adapter: Path
    #: Loads the site's data ahead of the first request (so no episode pays for it).
    warm: Callable[[], object] | None = None
    #: The SQLite databases of hybrid tasks built from the site's data (`rig/sites/<site>/db.py`).
    databases: tuple[Database, ...] = ()


def bundled_sites() -> list[Site]:
    """Every bundled site, in a stable order."""
    return [importlib.import_module(f"rig.sites.{m}").SITE for m in SITE_MODULES]


def bundled_databases() -> dict[str, Database]:
    """Every bundled site's databases, by name."""
    return {db.name: db for site in bundled_sites() for db in site.databases}


def bundled_adapters() -> list[SiteAdapter]:
    """The adapters of every bundled site, read from their files (without loading the sites or their data)."""
    root = Path(__file__).parent
    return [load_adapter(root / m / "adapter.yaml") for m in SITE_MODULES]


def create_app(sites: list[Site] | None = None) -> Starlette:
    """One ASGI app serving every bundled site under its own path prefix, plus an index page."""
    sites = sites if sites is not None else bundled_sites()

    async def index(request: Request) -> HTMLResponse:
        items = "".join(
            f'<li><a href="/{s.name}/">{html.escape(s.title)}</a> — {html.escape(s.portal_pattern)}</li>' for s in sites
        )
        return HTMLResponse(f"<!doctype html><title>sgr-rig sites</title><h1>Bundled sites</h1><ul>{items}</ul>")

    routes = [Route("/", index)] + [Mount(f"/{s.name}", app=s.build_app(), name=s.name) for s in sites]
    return Starlette(routes=routes + web_routes())  # plus the look-alike pages of the search index, at /web/
