"""VulnDB: a vulnerability database (NVD pattern): a CVE catalogue with CVSS versions and affected version ranges."""

from pathlib import Path

from rig.sites.registry import Site
from rig.sites.vuln.app import build_app
from rig.sites.vuln.data import _connection

SITE = Site(
    name="vuln",
    title="VulnDB",
    family="vulnerability databases",
    portal_pattern="search by XHR POST with vendor/product cascading pickers, CVSS version and score range, "
                   "published or last-modified date windows, results in batches (Load more), CVE records with "
                   "affected version ranges",
    build_app=build_app,
    adapter=Path(__file__).parent / "adapter.yaml",
    warm=_connection,
)
