"""One tool of the tool server, declared once: `@tool(...)` on its function makes a `Tool`.

The function's name is the tool's name, its docstring the description, its keyword parameters after the session
(with `Annotated[..., Field(description=...)]`) the argument schema; the decorator adds whether the tool only reads
(MCP's `readOnlyHint`) and the byte cap of its result. Everything that serves or checks tools (the MCP server, the
stdio relay, reference tool-call scripts) reads these declarations (`rig.tools.registry`).

    @tool(read_only=True, max_bytes=64 * 1024, cut_hint="narrow the query")
    async def run_sql(s: ToolSession, sql: Annotated[str, Field(description="...")], description: str = "") -> str:
        ...  # its docstring is the tool's description
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from rig.tools.errors import ToolError

ToolFunction = Callable[..., Awaitable[str]]


def cut_to_bytes(text: str, max_bytes: int, hint: str) -> str:
    """`text` if its UTF-8 is at most `max_bytes`, else its beginning and a note saying the cut (and `hint`: what to
    do), the whole at most `max_bytes`."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    note = f"\n[cut at {max_bytes} bytes of {len(data)}; {hint}]"
    keep = max(0, max_bytes - len(note.encode("utf-8")))
    return data[:keep].decode("utf-8", errors="ignore") + note


def describe_validation(error: ValidationError) -> str:
    """A validation error as `field: message; field: message`."""
    return "; ".join(f"{'.'.join(str(x) for x in e['loc']) or 'arguments'}: {e['msg']}" for e in error.errors())


@dataclass(frozen=True)
class Tool:
    """A tool's declaration: name, description, argument schema, whether it only reads, its result's byte cap (and
    what the note of a cut result tells the agent to do), and the function that runs it."""

    name: str
    description: str
    args: type[BaseModel]
    read_only: bool
    max_bytes: int
    cut_hint: str
    run: ToolFunction

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (MCP's `inputSchema`)."""
        return self.args.model_json_schema()

    def parse(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments validated against the schema (defaults filled in); ToolError naming each bad field."""
        try:
            model = self.args.model_validate(dict(arguments))
        except ValidationError as exc:
            raise ToolError(f"bad arguments for {self.name}: {describe_validation(exc)}") from None
        return {name: getattr(model, name) for name in type(model).model_fields}

    async def call(self, session: Any, arguments: Mapping[str, Any]) -> str:
        """Validate the arguments, run the tool on `session`, and cut its text to the cap."""
        text = await self.run(session, **self.parse(arguments))
        return cut_to_bytes(text, self.max_bytes, self.cut_hint)


def tool(*, read_only: bool, max_bytes: int, cut_hint: str = "ask for less") -> Callable[[ToolFunction], Tool]:
    """Declare the decorated async function (its first parameter the session) as a tool."""

    def declare(fn: ToolFunction) -> Tool:
        hints = get_type_hints(fn, include_extras=True)
        params = list(inspect.signature(fn).parameters.values())[1:]
        fields: dict[str, Any] = {p.name: (hints[p.name], ... if p.default is p.empty else p.default)
                                  for p in params}
        args = create_model(f"{fn.__name__}Arguments", __config__=ConfigDict(extra="ignore"), **fields)
        return Tool(fn.__name__, inspect.getdoc(fn) or "", args, read_only, max_bytes, cut_hint, fn)

    return declare
