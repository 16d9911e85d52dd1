"""Look-alike web pages for offline search: pages that resemble the bundled portals (a travel blog about 2013
delays, an unofficial airport list, a discontinued indicators mirror, a weather blog, an energy newsletter) but hold
none of their data. The sites server serves them under `/web/`; the local search index holds them beside the
portals' pages, so a search has wrong turns to take."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Route

#: The directory of the pages (`<name>.html`), served at `/web/<name>.html`.
PAGES_DIR = Path(__file__).parent


def page_paths() -> list[Path]:
    """Every look-alike page, sorted by name."""
    return sorted(PAGES_DIR.glob("*.html"))


async def _page(request: Request) -> Response:
    name = request.path_params["name"]
    if name in {p.name for p in page_paths()}:
        return FileResponse(PAGES_DIR / name, media_type="text/html; charset=utf-8")
    return HTMLResponse("<!doctype html><title>Not found</title><h1>Not found</h1>", status_code=404)


def routes() -> list[Route]:
    """The routes serving the pages at `/web/<name>.html` (any other name answers 404)."""
    return [Route("/web/{name}", _page)]
