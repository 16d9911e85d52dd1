"""The page side of a bundled site: its Jinja templates, rendered with `root` (where the site is mounted), and its
Starlette app with the site's static files and a 404 page in its own layout (`templates/404.html`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates


class SitePages:
    """The templates and static files of one site's folder (`templates/`, `static/`)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._templates = Jinja2Templates(
            env=jinja2.Environment(loader=jinja2.FileSystemLoader(folder / "templates"), autoescape=True))

    def render(self, request: Request, name: str, status: int = 200, **context: Any) -> Response:
        """A template rendered for a request, with `root` in its context."""
        ctx = {"root": request.scope.get("root_path", ""), **context}
        return self._templates.TemplateResponse(request, name, ctx, status_code=status)

    async def not_found(self, request: Request, exc: Exception) -> Response:
        """A plain 404 page inside the site's layout."""
        return self.render(request, "404.html", status=404, message=getattr(exc, "detail", "Not found"))

    def app(self, routes: list[BaseRoute]) -> Starlette:
        """The site's app: its routes, `/static`, and the 404 page."""
        static = Mount("/static", StaticFiles(directory=self.folder / "static"), name="static")
        return Starlette(routes=[*routes, static], exception_handlers={404: self.not_found})
