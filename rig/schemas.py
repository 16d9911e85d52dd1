"""JSON Schemas of every file format, generated from the pydantic models (never written by hand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from rig.actions import ActionScript
from rig.answer import Answer
from rig.episode import Episode
from rig.tasks.models import Task

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "docs" / "schemas"


def schemas() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema, for every format the rig reads or writes."""
    out: dict[str, dict[str, Any]] = {
        "task.schema.json": Task.model_json_schema(),
        "answer.schema.json": Answer.model_json_schema(),
        "action-script.schema.json": ActionScript.json_schema(by_alias=True),
        "episode.schema.json": Episode.model_json_schema(),
    }
    for extra in _extra_models():
        out.update(extra)
    for name, schema in out.items():
        schema.setdefault("$schema", "https://json-schema.org/draft/2020-12/schema")
        schema.setdefault("title", name.removesuffix(".schema.json"))
    return out


def _extra_models() -> list[dict[str, dict[str, Any]]]:
    """Schemas of formats owned by the recorder library and the runner, where those are installed."""
    found: list[dict[str, dict[str, Any]]] = []
    try:
        from recorders.adapter import SiteAdapter

        found.append({"site-adapter.schema.json": SiteAdapter.model_json_schema()})
    except ImportError:  # pragma: no cover - recorders ships with the rig
        pass
    try:
        from recorders.models import Step

        found.append({"trajectory-step.schema.json": TypeAdapter(Step).json_schema()})
    except ImportError:
        pass
    from rig.grading.grade import schemas as grading_schemas
    from rig.report import Audit

    found.append(grading_schemas())
    found.append({"audit.schema.json": Audit.model_json_schema()})
    try:
        from replay import Manifest

        from rig.replay_cmd import ReplayReport

        found.append({"snapshot-manifest.schema.json": TypeAdapter(Manifest).json_schema(),
                      "replay-report.schema.json": TypeAdapter(ReplayReport).json_schema()})
    except ImportError:  # pragma: no cover
        pass
    return found


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
