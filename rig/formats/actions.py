"""Action scripts: a YAML or JSON list of actions, each keyed by its verb (docs/tasks.md, "Action scripts").

Strings may refer to values extracted earlier: ``${name}`` is a text variable (``extract_text``),
``${name[0].Column}`` a cell of an extracted table. That is how a script expresses a logical
dependency: a value read in one state decides the next filter.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from rig.errors import ScriptError
from rig.formats.files import read_limited

#: A reference to an extracted value in a string: `${name}` (text) or `${name[i].Column}` (a table's cell); groups:
#: the name, the row index and the column (None for text).
VARIABLE = re.compile(r"\$\{(\w+)(?:\[(\d+)\]\.([^}]+))?\}")


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SelectArgs(_Args):
    selector: str
    value: str | list[str]


class FillArgs(_Args):
    selector: str
    value: str


class PressArgs(_Args):
    selector: str
    key: str


class WaitForArgs(_Args):
    selector: str
    state: Literal["attached", "detached", "visible", "hidden"] = "visible"


class ExtractTableArgs(_Args):
    selector: str
    as_: str = Field(alias="as")
    append: bool = False
    add: dict[str, str] = Field(default_factory=dict, description="extra columns with the same value on every row "
                                "(`${...}` allowed), e.g. the carrier whose page the rows came from; not page text")


class ExtractTextArgs(_Args):
    selector: str
    as_: str = Field(alias="as")
    regex: str | None = None


class SortKey(_Args):
    column: str
    desc: bool = False
    numeric: bool = False


class RecordArgs(_Args):
    """Evidence records from the picked rows: one per row, its URL the page the row was read from, its excerpt the row's text."""

    item: dict[str, str] = Field(min_length=1, description="key axis -> source column")
    answer: str | None = Field(default=None, description="source column holding the record's answer")
    subtask: str | None = None


class AnswerArgs(_Args):
    from_: str | list[str] = Field(alias="from")
    columns: list[str] | dict[str, str] | None = None
    records: RecordArgs | None = None
    where: dict[str, str] = {}
    sort_by: list[SortKey] = []
    limit: int | None = None
    distinct: bool = False

    @field_validator("columns")
    @classmethod
    def _nonempty(cls, v: list[str] | dict[str, str] | None) -> list[str] | dict[str, str] | None:
        if v is not None and not v:
            raise ValueError("answer needs at least one column")
        return v

    @model_validator(mode="after")
    def _something(self) -> "AnswerArgs":
        if self.columns is None and self.records is None:
            raise ValueError("answer needs `columns` (a table), `records`, or both")
        return self


class Goto(_Args):
    goto: str


class Select(_Args):
    select: SelectArgs


class Check(_Args):
    check: str


class Uncheck(_Args):
    uncheck: str


class Fill(_Args):
    fill: FillArgs


class Press(_Args):
    press: PressArgs


class Click(_Args):
    click: str


class WaitFor(_Args):
    wait_for: str | WaitForArgs


class ExtractTable(_Args):
    extract_table: ExtractTableArgs


class ExtractText(_Args):
    extract_text: ExtractTextArgs


class Answer(_Args):
    answer: AnswerArgs


Action = Annotated[
    Union[Goto, Select, Check, Uncheck, Fill, Press, Click, WaitFor, ExtractTable, ExtractText, Answer],
    Field(union_mode="left_to_right"),
]
ActionScript = TypeAdapter(list[Action])

VERBS = ("goto", "select", "check", "uncheck", "fill", "press", "click", "wait_for",
         "extract_table", "extract_text", "answer")


def verb_of(action: BaseModel) -> str:
    """The verb an action model is keyed by."""
    return next(iter(type(action).model_fields))


def parse_actions(data: Any, source: str = "<script>") -> list[BaseModel]:
    """Validate a list of raw actions; errors name the source, the action index and the reason."""
    if not isinstance(data, list):
        raise ScriptError(source, None, f"an action script is a list of actions, got {type(data).__name__}")
    actions: list[BaseModel] = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or len(item) != 1:
            raise ScriptError(source, f"[{i}]", "each action is a mapping with exactly one verb key")
        verb = next(iter(item))
        if verb not in VERBS:
            raise ScriptError(source, f"[{i}]", f"unknown verb {verb!r}; expected one of {', '.join(VERBS)}")
        model = _MODELS[verb]
        try:
            actions.append(model.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise ScriptError(source, f"[{i}].{loc}", err["msg"]) from None
    return actions


#: An action script is text a person writes: far below this.
MAX_SCRIPT_BYTES = 8 * 1024 * 1024


def load_script(path: str | Path) -> list[BaseModel]:
    """Read and validate an action script file (YAML or JSON)."""
    p = Path(path)
    raw = read_limited(p, "the script", MAX_SCRIPT_BYTES, ScriptError)
    try:
        text = raw.decode("utf-8")
        data = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
        return parse_actions(data, str(p))
    except UnicodeDecodeError as exc:
        raise ScriptError(str(p), f"byte {exc.start}", "not UTF-8 text") from None
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ScriptError(str(p), None, f"not valid {'JSON' if p.suffix == '.json' else 'YAML'}: {exc}") from None
    except RecursionError:
        raise ScriptError(str(p), None, "not an action script: nested too deeply") from None


def dump_actions(actions: list[BaseModel]) -> list[dict[str, Any]]:
    """Actions back to their plain (YAML/JSON) form."""
    return [a.model_dump(by_alias=True, exclude_defaults=True) for a in actions]


_MODELS: dict[str, type[BaseModel]] = {
    verb_of_cls: cls
    for cls in (Goto, Select, Check, Uncheck, Fill, Press, Click, WaitFor, ExtractTable, ExtractText, Answer)
    for verb_of_cls in cls.model_fields
}
