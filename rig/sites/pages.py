"""Rendering a site's Jinja2 templates under the path the site is mounted at (used by `bio`, `vuln`, `complaints`,
`papers`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates


def mount_base(request: Request) -> str:
    """The path the site is mounted at (`/bio`), to prefix its own links with."""
    return request.scope.get("root_path", "").rstrip("/")


class Pages:
    """A site's templates; every page gets `base` (the mount point) and `link(kind, id)` (`/<base>/<kind>/<id>`)."""

    def __init__(self, directory: Path) -> None:
        self.templates = Jinja2Templates(directory=str(directory))

    def render(self, request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        """The template `name` as the response to `request`."""
        base = mount_base(request)
        context.update(base=base, link=lambda kind, ident: f"{base}/{kind}/{quote(str(ident), safe='')}")
        return self.templates.TemplateResponse(request, name, context, status_code=status_code)

    def not_found(self, request: Request, what: str) -> HTMLResponse:
        """A 404 page (`not_found.html`) naming what is not there."""
        return self.render(request, "not_found.html", status_code=404, what=what)

    async def _any_other_path(self, request: Request, exc: Exception) -> HTMLResponse:
        return self.not_found(request, f"page {request.url.path}")

    def app(self, routes: list[BaseRoute], static: Path) -> Starlette:
        """The site's app: its routes, its `static` folder at `/static`, a 404 page in its layout for any other path."""
        mount = Mount("/static", StaticFiles(directory=str(static)), name="static")
        return Starlette(routes=[*routes, mount], exception_handlers={404: self._any_other_path})
