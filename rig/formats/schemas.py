"""JSON Schemas of every file format, generated from the pydantic models (never written by hand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from recorders.adapter import SiteAdapter
from recorders.models import Step
from replay.report import ReplayReport
from replay.snapshot import Manifest
from rig.formats.actions import ActionScript
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailureRecord
from rig.formats.audit import Audit
from rig.formats.compare import Comparison
from rig.formats.drift import DriftReport
from rig.formats.episode import Episode
from rig.formats.grade import Grade
from rig.formats.knowledge import KnowledgeEntry
from rig.formats.imports import ImportReport
from rig.formats.leaderboard import Leaderboard
from rig.formats.qa import QaReport
from rig.formats.summary import Summary
from rig.formats.task import Task

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def schemas() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema, for every format the rig reads or writes (the recorder's and replay's included)."""
    out: dict[str, dict[str, Any]] = {
        "task.schema.json": Task.model_json_schema(),
        "answer.schema.json": Answer.model_json_schema(),
        "answer-parse-failure.schema.json": ParseFailureRecord.model_json_schema(),
        "action-script.schema.json": ActionScript.json_schema(by_alias=True),
        "episode.schema.json": Episode.model_json_schema(),
        "grade.schema.json": Grade.model_json_schema(),
        "import-report.schema.json": ImportReport.model_json_schema(),
        "summary.schema.json": Summary.model_json_schema(),
        "audit.schema.json": Audit.model_json_schema(),
        "knowledge-entry.schema.json": KnowledgeEntry.model_json_schema(),
        "site-adapter.schema.json": SiteAdapter.model_json_schema(),
        "trajectory-step.schema.json": TypeAdapter(Step).json_schema(),
        "snapshot-manifest.schema.json": TypeAdapter(Manifest).json_schema(),
        "replay-report.schema.json": TypeAdapter(ReplayReport).json_schema(),
        "drift-report.schema.json": DriftReport.model_json_schema(),
        "compare.schema.json": Comparison.model_json_schema(),
        "leaderboard.schema.json": Leaderboard.model_json_schema(),
        "qa-report.schema.json": QaReport.model_json_schema(),
    }
    for name, schema in out.items():
        schema.setdefault("$schema", "https://json-schema.org/draft/2020-12/schema")
        schema.setdefault("title", name.removesuffix(".schema.json"))
    return out


def render(schema: dict[str, Any]) -> str:
    """A schema as the stable text written to docs/schemas/."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_schemas(directory: Path = SCHEMA_DIR) -> list[Path]:
    """Write every schema file; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, schema in schemas().items():
        path = directory / name
        path.write_text(render(schema), encoding="utf-8")
        paths.append(path)
    return paths
