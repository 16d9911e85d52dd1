"""The static HTML report of a runs directory (`rig report`) and its local view server with audits (`rig view`)."""

from rig.formats.audit import Audit
from rig.report.audit import cohen_kappa
from rig.report.build import write_report
from rig.report.view import ViewServer, serve_view

__all__ = ["Audit", "ViewServer", "cohen_kappa", "read_audit", "serve_view", "write_audit", "write_report"]
