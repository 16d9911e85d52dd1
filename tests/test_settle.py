"""An action after a navigation meets the new document parsed, its blocking scripts run: through the action-script
executor (`replay.perform`, what scripted agents and re-driving use) and through the tool server's browser tools.

Playwright's click returns once the navigation it caused commits. On a busy machine the next action then ran while
the page's parser-blocking `<script src>` was still on its way: choosing a product fired `change` with no listener
attached, and the sub-product list stayed disabled until the select timed out.
"""

from __future__ import annotations

import pytest
from mcp_client_script import ref_of

from rig.agents.browser_tools import BrowserTools
from rig.agents.scripted import ScriptRunner
from rig.formats.actions import parse_actions

#: A form whose listeners come from a parser-blocking script at the end of its body.
_FORM = b"""<!doctype html><title>form</title>
<select id="product" aria-label="Product"><option value="">-</option><option value="card">Card</option></select>
<select id="sub" aria-label="Sub-product" disabled><option value="">-</option><option value="gold">Gold</option></select>
<script src="/late/listeners.js"></script>"""
_LISTENERS = b"""document.getElementById('product').addEventListener('change', () => {
  document.getElementById('sub').disabled = false; });"""


@pytest.fixture
def late_form(pages_server):
    """A start page linking to `_FORM`, whose listener script the server sends 1.5 s late."""
    pages_server.set_route("/late/start", lambda ex: ex.send(200, b'<a id="go" href="/late/form">form</a>'))
    pages_server.set_route("/late/form", lambda ex: ex.send(200, _FORM))

    def listeners(ex):
        ex.wait(1.5)  # the click's navigation commits long before the script arrives
        ex.send(200, _LISTENERS, "text/javascript")

    pages_server.set_route("/late/listeners.js", listeners)
    return pages_server.url


async def test_a_scripts_select_after_a_click_waits_for_the_new_documents_blocking_scripts(page, late_form):
    runner = ScriptRunner(page, late_form, timeout_s=10)
    await runner.run(parse_actions([
        {"goto": "/late/start"}, {"click": "#go"},
        {"select": {"selector": "#product", "value": "card"}}, {"select": {"selector": "#sub", "value": "gold"}},
    ]))
    assert await page.locator("#sub").input_value() == "gold"


async def test_a_tool_call_after_a_click_meets_the_new_documents_blocking_scripts_run(context, page, late_form):
    tools = BrowserTools(context, page, late_form, timeout_s=10)
    snapshot = await tools.navigate(f"{late_form}/late/start")
    snapshot = await tools.click(ref_of('"form"', snapshot))
    assert page.url.endswith("/late/form")
    snapshot = await tools.select_option(ref_of('"Product"', snapshot), ["card"])
    await tools.select_option(ref_of('"Sub-product"', snapshot), ["gold"])
    assert await page.locator("#sub").input_value() == "gold"
