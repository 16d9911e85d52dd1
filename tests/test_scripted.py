"""The action-script executor on a real page: extraction, substitution, answer composition, errors."""

from __future__ import annotations

import pytest

from rig.agents.scripted import ScriptRunner
from rig.errors import AgentError, ScriptError
from rig.formats.actions import parse_actions

PAGE = """<!doctype html><title>t</title>
<label>Year <select id="year"><option>1890</option><option>1891</option></select></label>
<p id="best">Top genus: Boiga (12 species)</p>
<table id="results"><thead><tr><th>Species</th><th>Year</th><th>Count</th></tr></thead>
<tbody><tr><td>Boiga ceylonensis</td><td>1890</td><td>3</td></tr>
<tr><td>Lycodon travancoricus</td><td>1891</td><td>12</td></tr>
<tr><td>Boiga ceylonensis</td><td>1890</td><td>3</td></tr></tbody></table>"""


async def _run(page, script):
    await page.set_content(PAGE)
    runner = ScriptRunner(page, "http://127.0.0.1/", timeout_s=2)
    return await runner.run(parse_actions(script))


async def test_extract_substitute_and_answer(page):
    result = await _run(page, [
        {"extract_text": {"selector": "#best", "as": "genus", "regex": r"genus: (\w+)"}},
        {"extract_table": {"selector": "table#results", "as": "t"}},
        {"select": {"selector": "#year", "value": "${t[1].Year}"}},
        {"answer": {"from": "t", "columns": {"Name": "Species", "N": "Count"}, "distinct": True,
                    "sort_by": [{"column": "N", "desc": True, "numeric": True}]}},
    ])
    assert result.variables["genus"] == "Boiga"
    assert await page.locator("#year").input_value() == "1891"
    assert result.answer.columns == ["Name", "N"]
    assert result.answer.rows == [["Lycodon travancoricus", "12"], ["Boiga ceylonensis", "3"]]
    assert result.answer.citations[0].excerpt == "Lycodon travancoricus 1891 12"


async def test_where_filters_with_a_variable(page):
    result = await _run(page, [
        {"extract_text": {"selector": "#best", "as": "genus", "regex": r"(\d{2}) species"}},
        {"extract_table": {"selector": "table#results", "as": "t"}},
        {"answer": {"from": "t", "columns": ["Species"], "where": {"Count": "${genus}"}}},
    ])
    assert result.answer.rows == [["Lycodon travancoricus"]]


@pytest.mark.parametrize(
    "script,message",
    [
        ([{"click": "#missing"}], "action [0] click timed out"),
        ([{"select": {"selector": "#year", "value": "${nope}"}}], "${nope} was never extracted"),
        ([{"extract_table": {"selector": "table#results", "as": "t"}},
          {"answer": {"from": "t", "columns": ["Genus"]}}], "table has no column 'Genus'"),
    ],
)
async def test_agent_errors_name_the_action(page, script, message):
    with pytest.raises(AgentError, match=None) as info:
        await _run(page, script)
    assert message in str(info.value)


def test_script_errors_name_index_and_field():
    with pytest.raises(ScriptError) as info:
        parse_actions([{"goto": "/"}, {"fill": {"selector": "#q"}}], "s.yaml")
    assert str(info.value) == "s.yaml: [1].fill.value: Field required"
