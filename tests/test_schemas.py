"""JSON Schemas in docs/schemas are generated from the models and must not drift; every schema file has a model."""

import json

from rig.formats.schemas import SCHEMA_DIR, render, schemas


def test_checked_in_schemas_match_models():
    generated = schemas()
    assert {"task.schema.json", "answer.schema.json", "action-script.schema.json", "episode.schema.json",
            "grade.schema.json", "summary.schema.json", "trajectory-step.schema.json"} <= set(generated)
    for name, schema in generated.items():
        path = SCHEMA_DIR / name
        assert path.exists(), f"{path} missing: run `python scripts/gen_schemas.py`"
        assert path.read_text() == render(schema), f"{path} is stale: run `python scripts/gen_schemas.py`"


def test_no_schema_file_without_a_model():
    orphans = sorted(p.name for p in SCHEMA_DIR.glob("*.json") if p.name not in schemas())
    assert orphans == [], f"schema files with no model behind them: {orphans}; delete them or add the model"


def test_every_versioned_format_names_its_version():
    for name, schema in schemas().items():
        props = schema.get("properties", {})
        if "format" in props:
            assert props["format"].get("const", props["format"].get("default", "")).startswith("sgr-rig/"), name
    assert json.loads(render(schemas()["trajectory-step.schema.json"]))["properties"]["format"]["default"] == "sgr-rig/step/1"
