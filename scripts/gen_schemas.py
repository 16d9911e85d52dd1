"""Regenerate docs/schemas/*.schema.json from the pydantic models: `python scripts/gen_schemas.py`."""

from rig.formats.schemas import write_schemas

if __name__ == "__main__":
    for path in write_schemas():
        print(path)
