"""The bundled replica data-retrieval sites."""

from rig.sites.registry import Site, bundled_adapters, bundled_sites, create_app
from rig.sites.server import SitesServer, serve

__all__ = ["Site", "SitesServer", "bundled_adapters", "bundled_sites", "create_app", "serve"]
