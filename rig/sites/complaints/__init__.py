"""Consumer Complaint Register: a regulatory complaint database (consumer-complaint search API pattern)."""

from pathlib import Path

from rig.sites.complaints.app import build_app
from rig.sites.complaints.data import connection
from rig.sites.registry import Site

SITE = Site(
    name="complaints",
    title="Consumer Complaint Register",
    family="regulatory resources",
    portal_pattern="search API driven by its page: boolean search term, product/sub-product hierarchy, date range; "
                   "URL pushed per query; list, trends by period, facet counts, CSV export of the view",
    build_app=build_app,
    adapter=Path(__file__).parent / "adapter.yaml",
    warm=connection,
)
