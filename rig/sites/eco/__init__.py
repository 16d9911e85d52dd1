"""EcoData Online: an environmental monitoring data browser (NOAA Climate Data Online / EPA AirData pattern)."""

from pathlib import Path

from rig.sites.eco.app import build_app
from rig.sites.eco.data import _connection
from rig.sites.eco.db import DATABASE
from rig.sites.registry import Site

SITE = Site(
    name="eco",
    title="EcoData Online",
    family="environmental monitoring",
    portal_pattern="query browser: form POSTed as JSON, results in batches (Load more), sortable columns, CSV export",
    build_app=build_app,
    adapter=Path(__file__).parent / "adapter.yaml",
    warm=_connection,
    databases=(DATABASE,),
)
