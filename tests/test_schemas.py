"""JSON Schemas in docs/schemas are generated from the models and must not drift."""

from rig.schemas import SCHEMA_DIR, render, schemas


def test_checked_in_schemas_match_models():
    generated = schemas()
    assert {"task.schema.json", "answer.schema.json", "action-script.schema.json"} <= set(generated)
    for name, schema in generated.items():
        path = SCHEMA_DIR / name
        assert path.exists(), f"{path} missing: run `python scripts/gen_schemas.py`"
        assert path.read_text() == render(schema), f"{path} is stale: run `python scripts/gen_schemas.py`"
