"""Site adapters: a small declarative file per site mapping raw state keys to semantic dimensions."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Dimension(_Model):
    """One semantic dimension (`dim.<name>`) read from raw state keys."""

    tag: Literal["scope", "criterion", "view"]
    keys: list[str] = Field(
        min_length=1,
        description="raw state keys, e.g. url.query.origin, form.origin, or page.<fact>.<field> for a field of a "
                    "page fact parsed as a query string (see PageFact.parse): what the shown results were computed "
                    "under, where the page says so and the URL does not",
    )
    join: str | None = Field(
        default=None,
        description="join every key's value with this separator (a range); else the first present key wins",
    )
    map: dict[str, str] = Field(default_factory=dict, description="raw value -> semantic value")
    as_list: bool = Field(
        default=False,
        description="always give a list, as form.* does for a checkbox group, radio group or multi-select, even "
                    "when the key holds a single value (a url.query.* or page.<fact>.<field> name given once is a string)",
    )


class PageFact(_Model):
    """A page fact (`page.<name>`) read from the DOM: the text (or attribute) of the first match (of every match with
    `all`)."""

    selector: str
    attribute: str | None = None
    regex: str | None = Field(default=None, description="keep group 1 of this pattern")
    all: bool = Field(
        default=False,
        description="read every match, not the first: the fact is the list of their texts (or attributes) in page "
                    "order, e.g. a results table's visible column headers (`table#results thead th`); with `regex`, "
                    "the items it does not match are left out",
    )
    parse: Literal["query"] | None = Field(
        default=None,
        description="`query`: the value is a URL query string (`name=value&...`, e.g. the filters a results table "
                    "says it was computed under); besides `page.<fact>`, each name gives the key "
                    "`page.<fact>.<name>`, read like `url.query.<name>` (repeated names: a sorted list)",
    )

    @model_validator(mode="after")
    def _one_value_to_parse(self) -> PageFact:
        if self.all and self.parse is not None:
            raise ValueError("`parse` reads one value: it cannot be combined with `all`")
        return self


class SiteAdapter(_Model):
    """How to read one site's retrieval state semantically."""

    site: str
    path_prefix: str = Field(description="the adapter applies to URLs whose path starts with this")
    dimensions: dict[str, Dimension] = Field(default_factory=dict)
    page: dict[str, PageFact] = Field(default_factory=dict)

    def dims(self, state: dict[str, Any]) -> dict[str, Any]:
        """The `dim.*` keys for a raw state."""
        out: dict[str, Any] = {}
        for name, dim in self.dimensions.items():
            if dim.join is not None:
                parts = [state.get(k) for k in dim.keys]
                if all(p in (None, "", []) for p in parts):
                    continue
                value: Any = dim.join.join("" if p is None else _scalar(p) for p in parts)
            else:
                value = next((state[k] for k in dim.keys if state.get(k) not in (None, "", [])), None)
                if value is None:
                    continue
            if dim.as_list and not isinstance(value, list):
                value = [value]
            if dim.map:
                value = [dim.map.get(v, v) for v in value] if isinstance(value, list) else dim.map.get(value, value)
            out[f"dim.{name}"] = value
        return out


def _scalar(v: Any) -> str:
    return ",".join(v) if isinstance(v, list) else str(v)


def load_adapter(path: str | Path) -> SiteAdapter:
    """Read and validate an adapter file (YAML)."""
    p = Path(path)
    try:
        return SiteAdapter.model_validate(yaml.safe_load(p.read_text(encoding="utf-8")))
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ValueError(f"{p}: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
