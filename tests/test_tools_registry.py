"""The tool registry: one declaration gives a tool's name, description, schema, read-only flag and byte cap; the
declared names are the public contract; reference tool-call scripts are checked against the declarations; answers
are taken only within their limits (`final_answer` and `rig submit` alike)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import pytest
import yaml
from pydantic import Field
from typer.testing import CliRunner

from rig.cli import app
from rig.errors import InputError
from rig.formats.answer import Answer
from rig.formats.answer_text import ParseFailure
from rig.tasks import load_task, resolve_task
from rig.tasks.loader import tool_tasks
from rig.tools.answers import MAX_ANSWER_BYTES, MAX_ANSWER_CELLS, MAX_ANSWER_ROWS, AnswerTooLarge, read_answer
from rig.tools.errors import ToolError
from rig.tools.registry import TOOL_NAMES, TOOLS, check_reference_tools, tool_named
from rig.tools.tool import cut_to_bytes, tool

#: The tool names of the public contract (docs/cli-agents.md).
CONTRACT = ("web_search", "web_fetch", "pdf_read", "run_sql", "get_all_external_knowledge_names",
            "get_knowledge_definition", "get_all_knowledge_definitions", "final_answer", "browser_navigate",
            "browser_snapshot", "browser_click", "browser_type", "browser_select_option", "browser_navigate_back",
            "browser_tabs")
#: The tools the rig adds to the contract's (extensions, documented in docs/cli-agents.md).
EXTENSIONS = ("report_usage",)
ARGUMENTS = {"web_search": ["query", "count"], "web_fetch": ["url"], "pdf_read": ["source", "pages"],
             "run_sql": ["sql", "description"], "get_knowledge_definition": ["knowledge_name"],
             "final_answer": ["answer"], "browser_navigate": ["url"], "browser_click": ["element", "ref"],
             "browser_type": ["element", "ref", "text", "submit"],
             "browser_select_option": ["element", "ref", "values"], "browser_tabs": ["action", "index"],
             "report_usage": ["tokens_in", "tokens_out", "tokens_cached", "llm_calls", "cost_usd", "model"]}


def test_the_declared_tools_are_the_contracts_names_and_arguments():
    assert TOOL_NAMES == CONTRACT + EXTENSIONS
    for t in TOOLS:
        assert list(t.input_schema()["properties"]) == ARGUMENTS.get(t.name, []), t.name
        assert t.description and t.max_bytes > 0


def test_one_declaration_gives_schema_parsing_and_the_cap():
    @tool(read_only=True, max_bytes=100, cut_hint="ask for less")
    async def echo(s: object, word: Annotated[str, Field(description="what to say")], times: int = 1) -> str:
        """Say a word again and again."""
        return word * times

    assert (echo.name, echo.description, echo.read_only, echo.max_bytes) == ("echo", "Say a word again and again.",
                                                                             True, 100)
    schema = echo.input_schema()
    assert schema["required"] == ["word"] and schema["properties"]["word"]["description"] == "what to say"
    assert schema["properties"]["times"]["default"] == 1
    assert asyncio.run(echo.call(None, {"word": "ab", "times": 2})) == "abab"
    long = asyncio.run(echo.call(None, {"word": "é", "times": 500}))
    assert len(long.encode()) <= 100 and long.endswith("[cut at 100 bytes of 1000; ask for less]")
    with pytest.raises(ToolError, match="bad arguments for echo: word: Field required"):
        asyncio.run(echo.call(None, {"times": 2}))


def test_cut_to_bytes_never_splits_a_character():
    text = "ü" * 1000
    cut = cut_to_bytes(text, 101, "x")
    assert len(cut.encode()) <= 101 and cut.startswith("ü") and "\ufffd" not in cut
    assert cut_to_bytes("short", 101, "x") == "short"


def test_an_unknown_tool_lists_the_tools():
    with pytest.raises(ToolError, match="unknown tool 'nope'; the tools are web_search, web_fetch"):
        tool_named("nope")


def test_every_bundled_reference_tool_script_fits_the_registry():
    scripts = [t for t in tool_tasks() if t.reference_tools]
    assert len(scripts) >= 12
    for task in scripts:
        check_reference_tools(task)


def _with_calls(tmp_path: Path, calls: list[dict]) -> Path:
    data = yaml.safe_load(Path(resolve_task("hybrid-s2sql-01").source).read_text())
    data["reference_tools"] = calls
    path = tmp_path / f"{data['id']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_reference_script_with_an_undeclared_tool_or_argument_is_refused_naming_the_call(tmp_path):
    final = {"tool": "final_answer", "args": {"answer": "| a |\n|---|\n| 1 |"}}
    path = _with_calls(tmp_path, [{"tool": "run_sql", "args": {"query": "SELECT 1"}}, final])
    with pytest.raises(InputError, match=r"reference_tools\[0\]: bad arguments for run_sql: sql: Field required"):
        check_reference_tools(load_task(path))
    path = _with_calls(tmp_path, [{"tool": "web_serch", "args": {"query": "x"}}, final])
    with pytest.raises(InputError, match=r"reference_tools\[0\]: unknown tool 'web_serch'"):
        check_reference_tools(load_task(path))
    res = CliRunner().invoke(app, ["tasks", "validate", str(path)])
    assert res.exit_code == 1 and "unknown tool 'web_serch'" in res.output


def test_answers_within_the_limits_are_read():
    answer = read_answer("| a | b |\n|---|---|\n| 1 | 2 |\n", "final_answer")
    assert isinstance(answer, Answer) and answer.rows == [["1", "2"]]
    assert isinstance(read_answer("no table here", "final_answer"), ParseFailure)


@pytest.mark.parametrize("text,said", [
    ("| n |\n|---|\n" + "| 1 |\n" * 200_000, "is 1200012 bytes"),
    ("| n |\n|---|\n" + "| 1 |\n" * (MAX_ANSWER_ROWS + 1), f"has {MAX_ANSWER_ROWS + 1} rows"),
    ("|" + "c|" * 20 + "\n|" + "-|" * 20 + "\n" + ("|" + "1|" * 20 + "\n") * 5001, "has 100020 cells"),
])
def test_answers_over_a_limit_are_refused_saying_the_limits(text, said):
    with pytest.raises(AnswerTooLarge) as err:
        read_answer(text, "final_answer")
    msg = str(err.value)
    assert msg.startswith(f"final_answer: the answer {said}; an answer may hold at most {MAX_ANSWER_ROWS} rows, "
                          f"{MAX_ANSWER_CELLS} cells and {MAX_ANSWER_BYTES} bytes. Nothing was handed in")


def test_rig_submit_refuses_an_answer_file_over_the_limits_and_keeps_nothing(tmp_path):
    from rig.agents.cdp import submit_text
    from rig.episode_dir import EpisodeDir

    episode = tmp_path / "episode"
    episode.mkdir()
    with pytest.raises(InputError, match=f"answer.md: the answer has {MAX_ANSWER_ROWS + 1} rows"):
        submit_text(episode, "| n |\n|---|\n" + "| 1 |\n" * (MAX_ANSWER_ROWS + 1), "answer.md")
    ed = EpisodeDir(episode)
    assert not ed.submitted_file.exists() and not ed.has_answer()
    answer = tmp_path / "answer.md"
    answer.write_text("| n |\n|---|\n" + "| 1 |\n" * 200_000)
    res = CliRunner().invoke(app, ["submit", str(episode), "--answer", str(answer)])
    assert res.exit_code == 2 and f"at most {MAX_ANSWER_ROWS} rows" in res.output  # bad input: exit 2
    assert not ed.submitted_file.exists()
