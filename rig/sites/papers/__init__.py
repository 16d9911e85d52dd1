"""OpenLit Archive: a scholarly literature archive (advanced query syntax, article pages with tables)."""

from pathlib import Path

from rig.sites.papers.app import build_app
from rig.sites.papers.data import connection
from rig.sites.registry import Site

SITE = Site(
    name="papers",
    title="OpenLit Archive",
    family="scholarly archives",
    portal_pattern="literature search: advanced query syntax built by a form, sort by relevance/date/citations, "
                   "paginated results with type facets, article pages whose tables are the evidence",
    build_app=build_app,
    adapter=Path(__file__).parent / "adapter.yaml",
    warm=connection,
)
