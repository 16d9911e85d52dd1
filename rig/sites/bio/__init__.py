"""BioKB: a life-science resource (protein knowledgebase with a trial registry, UniProt / ClinicalTrials.gov pattern)."""

from pathlib import Path

from rig.sites.bio.app import build_app
from rig.sites.bio.data import _connection
from rig.sites.registry import Site

SITE = Site(
    name="bio",
    title="BioKB",
    family="life-science resources",
    portal_pattern="query language with database fields, column chooser, lazily loaded taxonomy tree, entry pages "
                   "cross-linked to organisms and a trial registry",
    build_app=build_app,
    adapter=Path(__file__).parent / "adapter.yaml",
    warm=_connection,
)
