"""The `stats` site: an official-statistics portal (DataBank / OECD.Stat pattern) over gapminder."""

from pathlib import Path

from rig.sites.registry import Site
from rig.sites.stats.app import build_app
from rig.sites.stats.data import _connection
from rig.sites.stats.db import DATABASE

SITE = Site(
    name="stats",
    title="Country Indicators Portal",
    family="official statistics",
    portal_pattern="data explorer with a geography tree, indicator and year window, table/summary/aggregate tabs",
    build_app=build_app,
    adapter=Path(__file__).parent / "adapter.yaml",
    warm=_connection,
    databases=(DATABASE,),
)
