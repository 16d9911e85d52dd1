"""The offline web (tests/liveweb.py) and the browser's host mapping (`rig.network.parse_resolve`)."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from rig.browser import launch
from rig.network import launch_args, parse_resolve, resolver_rules
from rig.errors import InputError


def test_resolve_values_are_checked():
    maps = parse_resolve(["Portal.example.org=127.0.0.1:8443", "x.test=[::1]:80"])
    assert [(m.host, m.address, m.port, m.loopback) for m in maps] == [
        ("portal.example.org", "127.0.0.1", 8443, True), ("x.test", "[::1]", 80, True)]
    for bad in ("portal.example.org", "https://a.org=127.0.0.1:1", "a.org=127.0.0.1", "a.org=127.0.0.1:0",
                "a.org=127.0.0.1:70000", "a.org/x=127.0.0.1:1"):
        with pytest.raises(InputError) as err:
            parse_resolve([bad])
        assert err.value.source == "--resolve" and repr(bad) in str(err.value)
    with pytest.raises(InputError, match="mapped twice"):
        parse_resolve(["a.org=127.0.0.1:1", "a.org=127.0.0.1:2"])


def test_a_mapping_off_loopback_needs_live():
    from rig.network import Network

    with pytest.raises(InputError) as err:
        Network.of(False, ["staging.example.org=10.0.0.5:8443"])
    assert err.value.source == "--resolve" and "--live" in str(err.value)
    assert Network.of(True, ["staging.example.org=10.0.0.5:8443"]).resolve[0].address == "10.0.0.5"
    assert Network.of(False, ["portal.example.org=127.0.0.1:8443"]).politeness is None
    assert Network.of(False, ["staging.example.org=10.0.0.5:8443"], frozen=True).resolve, "frozen: it does not matter"


def test_one_host_resolver_rule_combines_mappings_with_loopback_only():
    maps = parse_resolve(["a.org=127.0.0.1:1"])
    assert resolver_rules(True, maps) == "MAP a.org 127.0.0.1:1 , MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost"
    assert resolver_rules(False, maps) == "MAP a.org 127.0.0.1:1"
    assert resolver_rules(False) is None
    assert sum(a.startswith("--host-resolver-rules=") for a in launch_args(True, resolve=maps)) == 1
    assert not any(a.startswith("--host-resolver-rules=") for a in launch_args(False))


@pytest.mark.parametrize("local_only", [True, False])
async def test_browser_reaches_the_offline_web_by_name(playwright, liveweb, local_only):
    maps = parse_resolve(liveweb.resolve_args()[1::2])
    browser = await launch(playwright, local_only=local_only, resolve=maps)
    try:
        ctx = await browser.new_context(ignore_https_errors=True)
        page = await ctx.new_page()
        await page.goto("https://portal.example.org/search")
        await page.select_option("#kind", "dataset")
        await page.fill("#year_from", "2020")
        await page.click("text=Search")
        expected = liveweb.data.matching(kind="dataset", year_from=2020)
        await expect(page.locator("#count")).to_have_text(f"{len(expected)} results")
        await expect(page.locator("#summary")).to_have_text(f"{len(expected)} matching records")
        await expect(page.locator("#results tbody tr")).to_have_count(min(len(expected), 10))
        assert liveweb.portal.requests_to("/api/results"), "the results page fetched its data"
        await page.goto("https://archive.example.net/moved/3")
        assert page.url == "https://portal.example.org/record/3"
        await expect(page.locator("h1")).to_have_text(liveweb.data.records[2]["title"])
        if local_only:  # an unmapped name resolves to nothing
            with pytest.raises(Exception, match="ERR_NAME_NOT_RESOLVED"):
                await page.goto("https://unmapped.example.org/")
        await ctx.close()
    finally:
        await browser.close()


async def test_misbehaving_hosts_and_data_changes(playwright, liveweb, browser):
    maps = parse_resolve(liveweb.resolve_args()[1::2])
    b = await launch(playwright, resolve=maps)
    try:
        ctx = await b.new_context(ignore_https_errors=True)
        page = await ctx.new_page()
        liveweb.portal.fail_next("/search", 429, times=1, retry_after=1)
        assert (await page.goto("https://portal.example.org/search")).status == 429
        assert (await page.goto("https://portal.example.org/search")).status == 200
        liveweb.data.edit(1, title="Changed title")
        await page.goto("https://portal.example.org/record/1")
        await expect(page.locator("h1")).to_have_text("Changed title")
        liveweb.archive.poison()
        resp = await page.goto("https://archive.example.net/doc/1")
        assert resp.status == 500 and await page.locator("body").inner_text() == "poison"
        assert len(liveweb.archive.requests_to("/doc/1")) == 1 and liveweb.archive.hits >= 1  # and /favicon.ico
        assert liveweb.portal.requests_to("/search")[0].headers["user-agent"]
        without = await b.new_context()  # the throw-away CA is not trusted
        with pytest.raises(Exception, match="ERR_CERT"):
            await (await without.new_page()).goto("https://portal.example.org/search")
        await without.close()
        await ctx.close()
    finally:
        await b.close()
    liveweb.reset()
    assert liveweb.data.records[0]["title"] != "Changed title" and liveweb.archive.hits == 0


def test_one_host_parser_and_the_loopback_rule():
    from rig.network import Policy, Target, is_loopback, parse_host, parse_hosts, url_target
    from rig.network.policy import LOOPBACK_CLOSED, NOT_ALLOWED, OFF_LOOPBACK

    assert parse_hosts(["Data.Example.org", "127.0.0.1:8765", "[::1]:443"]) == \
        ["data.example.org", "127.0.0.1:8765", "[::1]:443"]
    for bad in ("http://example.org/x", "a.org:0", "a.org:70000", "[nothex]:1", ""):
        with pytest.raises(InputError, match="not a host"):
            parse_host(bad, "--allow-host")
    assert url_target("wss://[::1]/x") == Target("[::1]", 443) and url_target("data:text/plain,x") is None
    assert all(is_loopback(h) for h in ("localhost", "127.8.9.1", "[::1]", "::ffff:127.0.0.1", "0.0.0.0", "[::]"))
    assert not any(is_loopback(h) for h in ("10.0.0.1", "example.org", "::ffff:10.0.0.1"))

    live = Policy(live=True, mappings=tuple(parse_resolve(["portal.example.org=127.0.0.1:8443"])),
                  loopback_open=frozenset({"127.0.0.1:9000"}))
    assert live.by_name(Target("127.0.0.1", 9001)) == LOOPBACK_CLOSED
    assert live.by_name(Target("127.0.0.1", 9000)) is None and live.by_name(Target("portal.example.org", 443)) is None
    public = Target("rebound.example.org", 443)
    assert live.by_name(public) is None and live.by_address(public, "127.0.0.1") == LOOPBACK_CLOSED, \
        "a public name resolving to loopback is loopback"
    assert live.by_address(public, "93.184.216.34") is None
    listed = Policy(live=True, allowed=frozenset({"data.example.org"}))
    assert listed.url_refused("https://other.example.org/") == NOT_ALLOWED
    assert listed.url_refused("https://data.example.org:8443/") is None and listed.url_refused("about:blank") is None
    local = Policy(live=False, allowed=frozenset({"10.0.0.5", "127.0.0.1"}))
    assert local.by_name(Target("10.0.0.5", 80)) == OFF_LOOPBACK and local.by_name(Target("127.0.0.1", 80)) is None
