"""A scripted MCP client, run as its own process: the `mcp` SDK's own client calls the rig's tool server.

    python tests/mcp_client_script.py CALLS.json [--url URL | --stdio COMMAND...] [--out RESULTS.json]

The URL defaults to `$RIG_MCP_URL` (as `rig run --agent cli` sets it); `--stdio` starts COMMAND as a stdio MCP server
instead (e.g. `rig mcp-stdio --url URL`). CALLS.json is a list of calls, each
`{"tool": NAME, "args": {...}}`, run one after the other, as a model would, from what the earlier results showed:

- an argument `{"ref_of": TEXT}` is the element ref (`e12`) of the line holding TEXT in the latest
  result that had refs (a `browser_snapshot`, or any browser tool: they all return one);
- `{"save": NAME, "regex": RE}` on a call keeps the first group RE matches in its result as NAME (with
  `"line": "| {0} | {1} |"` and `"limit": N`: every match, one formatted line each), and a string argument may
  use `{NAME}` (the text of `$RIG_PROMPT_FILE` is `{prompt}`);
- `{"stop": "hang"}` sleeps until killed (a client that never finishes); `{"stop": "exit", "code": N}` exits;
- `{"spawn": FILE}` starts a child process that sleeps forever, and writes its pid to FILE (the rig must stop
  the whole process group).

Each result (`tool`, `is_error`, `text`) is appended to RESULTS.json (rewritten after every call).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

_REF = re.compile(r"\[ref=([^\]]+)\]")


def ref_of(text: str, snapshot: str) -> str:
    """The ref on the first snapshot line containing `text`."""
    for line in snapshot.splitlines():
        if text in line and (m := _REF.search(line)):
            return m.group(1)
    raise SystemExit(f"no element {text!r} with a ref in the latest snapshot:\n{snapshot}")


def resolve(value: Any, snapshot: str, saved: dict[str, str]) -> Any:
    """An argument with its `ref_of` and `{NAME}` placeholders filled in."""
    if isinstance(value, dict) and set(value) == {"ref_of"}:
        return ref_of(value["ref_of"], snapshot)
    if isinstance(value, dict):
        return {k: resolve(v, snapshot, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, snapshot, saved) for v in value]
    if isinstance(value, str):
        return re.sub(r"\{(\w+)\}", lambda m: saved.get(m.group(1), m.group(0)), value)
    return value


async def main(calls: list[dict[str, Any]], server: str | StdioServerParameters, out: Path | None) -> None:
    saved: dict[str, str] = {}
    if os.environ.get("RIG_PROMPT_FILE"):
        saved["prompt"] = Path(os.environ["RIG_PROMPT_FILE"]).read_text(encoding="utf-8")
    results: list[dict[str, Any]] = []
    snapshot = ""
    exit_code = 0
    async with Client(server) as client:
        for call in calls:
            if "spawn" in call:
                child = await asyncio.create_subprocess_exec(sys.executable, "-c", "import time\nwhile True: time.sleep(1)")
                Path(call["spawn"]).write_text(str(child.pid))
                continue
            if call.get("stop") == "hang":
                await asyncio.Event().wait()
            if call.get("stop") == "exit":
                exit_code = int(call.get("code", 0))
                break
            args = resolve(call.get("args", {}), snapshot, saved)
            result = await client.call_tool(call["tool"], args)
            text = "\n".join(getattr(c, "text", "") for c in result.content)
            if "[ref=" in text:
                snapshot = text
            if "save" in call:
                found = re.findall(call["regex"], text, re.MULTILINE)
                if not found:
                    raise SystemExit(f"{call['tool']}: {call['regex']!r} not found in:\n{text}")
                if "line" in call:  # every match (at most `limit`), each formatted as `line` with its groups
                    rows = [m if isinstance(m, tuple) else (m,) for m in found[: call.get("limit")]]
                    saved[call["save"]] = "\n".join(call["line"].format(*row) for row in rows)
                else:
                    saved[call["save"]] = found[0] if isinstance(found[0], str) else found[0][0]
            results.append({"tool": call["tool"], "args": args, "is_error": bool(result.is_error), "text": text})
            if out is not None:
                out.write_text(json.dumps(results, indent=1))
    raise SystemExit(exit_code)  # outside the client: inside it, anyio would wrap the exit in an exception group


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("calls", type=Path)
    parser.add_argument("--url", default=os.environ.get("RIG_MCP_URL"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--stdio", nargs=argparse.REMAINDER, help="a stdio MCP server's command line (last option)")
    ns = parser.parse_args()
    if ns.stdio:
        server: str | StdioServerParameters = StdioServerParameters(command=ns.stdio[0], args=ns.stdio[1:])
    elif ns.url:
        server = ns.url
    else:
        raise SystemExit("no MCP URL: pass --url or set RIG_MCP_URL")
    asyncio.run(main(json.loads(ns.calls.read_text()), server, ns.out))
