"""Rendering a site's Jinja2 templates under the path the site is mounted at (used by `bio` and `vuln`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse
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
