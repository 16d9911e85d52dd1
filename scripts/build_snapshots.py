"""Build `site_snapshots/<site>/` for every bundled site by crawling the live sites with the recorders.

    .venv/bin/python scripts/build_snapshots.py [--out site_snapshots] [--site eco ...] [--work DIR] [--concurrency 2]

What each snapshot holds (every answer the site gave, deduplicated, in recorded order):
1. every state the SGR-mini reference solutions and the perturbed agents (all six kinds, where a task takes
   the kind) visit: real `rig run` episodes of the `reference` and `perturbed:KIND` agents;
2. the site's default page (the task's `start_path`), and every single-filter state: from the site's query
   page (after its base actions, e.g. choosing a dataset), each select option, checkbox, radio button,
   tree item and tab set alone, then the query submitted. Controls are discovered on the page itself.
Prints one line per site and the total size. A site answering one request differently over time is
reported (the answers are kept, as a sequence), and so are bodies the crawl recorded cut or missing (kept marked
so: frozen runs answer them with a 502 page).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loguru import logger
from playwright.async_api import async_playwright

from recorders import RecorderOptions
from replay import MatchRules, load_index, write_snapshot
from rig import __version__
from rig.agents.base import Budget
from rig.agents.perturbed import KINDS, check_supported
from rig.agents.registry import make_agent
from rig.browser import launch
from rig.errors import InputError
from rig.formats.actions import parse_actions
from rig.formats.task import Task
from rig.runner.local import plan, run_local
from rig.runner.record import record_actions
from rig.sites import SitesServer, bundled_adapters, bundled_sites
from rig.tasks import bundled_tasks

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = RecorderOptions(screenshots="off", dom_snapshot=False, record_text=False, fsync=False)


@dataclass
class CrawlSpec:
    """Where a site's single-filter states live: its query page, the base states, how a query is submitted."""

    page: str
    bases: list[list[dict[str, Any]]] = field(default_factory=lambda: [[]])
    submit: list[dict[str, Any]] = field(default_factory=list)
    exclude: tuple[str, ...] = ()  # selectors of controls set by the bases
    skip: tuple[str, ...] = ()  # selectors of controls not set alone (hidden until another view is chosen)


#: The bundled sites' query pages. eco's browser needs a dataset, vuln's product picker a vendor: each is a base state.
CRAWL: dict[str, CrawlSpec] = {
    "flights": CrawlSpec(page="/flights/search", submit=[{"click": 'role=button[name="Apply"]'}]),
    "stats": CrawlSpec(page="/stats/explore", bases=[[{"click": 'role=treeitem[name="World"s]'}]]),
    "eco": CrawlSpec(page="/eco/browse", submit=[{"click": "#run"}], exclude=("#dataset",)),
    # bio: the trial registry's filters (the protein search is a query text, the taxonomy tree the agents walk)
    "bio": CrawlSpec(page="/bio/trials", submit=[{"click": "#apply"}]),
    # vuln: a product picker loads for the chosen vendor, so each vendor is a base state
    "vuln": CrawlSpec(page="/vuln/search", submit=[{"click": "#search"}], exclude=("#vendor",)),
    "complaints": CrawlSpec(page="/complaints/search", submit=[{"click": "#search"}],
                            skip=("#interval", "#trend_order")),
    "papers": CrawlSpec(page="/papers/advanced", submit=[{"click": "#adv-search"}]),
}

#: Every single-filter change available on a page: select options, checkboxes, radios, tree items and tabs.
_DISCOVER = """() => {
  const out = [];
  const q = s => '"' + s.replace(/"/g, '\\\\"') + '"';
  const sel = el => el.id ? '#' + CSS.escape(el.id) : el.tagName.toLowerCase() + '[name=' + q(el.name) + ']';
  for (const el of document.querySelectorAll('select')) {
    const cur = Array.from(el.selectedOptions).map(o => o.value);
    for (const o of el.options) {
      if (!el.multiple && cur.includes(o.value)) continue;
      out.push({key: sel(el), action: {select: {selector: sel(el), value: el.multiple ? [o.value] : o.value}}});
    }
  }
  for (const el of document.querySelectorAll('input[type=checkbox], input[type=radio]')) {
    const s = 'input[name=' + q(el.name) + '][value=' + q(el.value) + ']';
    if (!el.checked) out.push({key: s, action: {check: s}});
    else if (el.type === 'checkbox') out.push({key: s, action: {uncheck: s}});
  }
  for (const el of document.querySelectorAll('[role=treeitem], [role=tab]')) {
    if (el.getAttribute('aria-selected') === 'true') continue;
    const role = el.getAttribute('role');
    out.push({key: role, action: {click: 'role=' + role + '[name=' + q(el.textContent.trim()) + 's]'}});
  }
  return out;
}"""


async def discover(browser: Any, base_url: str, spec: CrawlSpec) -> list[list[dict[str, Any]]]:
    """The crawl's states as action lists: each base, then each base with one control changed and submitted."""
    from rig.agents.scripted import ScriptRunner

    states: list[list[dict[str, Any]]] = []
    bases = spec.bases
    context = await browser.new_context()
    try:
        page = await context.new_page()
        if spec.exclude:  # one base per option of the excluded control (eco: one per dataset)
            await page.goto(base_url + spec.page)
            found = await page.evaluate(_DISCOVER)
            bases = [[c["action"]] for c in found if c["key"] in spec.exclude and c["action"].get("select", {}).get("value")]
        for base in bases:
            await page.goto(base_url + spec.page)
            await ScriptRunner(page, base_url).run(parse_actions(base, "crawl base"))
            await page.wait_for_load_state("networkidle")
            found = await page.evaluate(_DISCOVER)
            states.append(base + spec.submit)
            states += [[*base, c["action"], *spec.submit] for c in found
                       if c["key"] not in spec.exclude and c["key"] not in spec.skip]
    finally:
        await context.close()
    return states


async def crawl(site: str, base_url: str, start_path: str, work: Path) -> tuple[Path, int]:
    """Record the default page and every single-filter state of a site as one episode; return its WARC."""
    spec = CRAWL[site]
    async with async_playwright() as pw:
        browser = await launch(pw)
        try:
            states = await discover(browser, base_url, spec)
            script: list[dict[str, Any]] = [{"goto": start_path}]
            for state in states:
                script += [{"goto": spec.page}, *state]
            out = work / "crawl" / site
            shutil.rmtree(out, ignore_errors=True)
            episode = await record_actions(browser, parse_actions(script, f"{site} crawl"), out, agent="crawl",
                                           base_url=base_url, options=OPTIONS, adapters=bundled_adapters())
        finally:
            await browser.close()
    if episode.status != "ok":
        raise SystemExit(f"{site}: the crawl failed: {episode.error}")
    return out / "evidence.warc.gz", len(states)


def agent_runs(tasks: list[Task], base_url: str, work: Path, concurrency: int) -> dict[str, list[Path]]:
    """Run the reference and every perturbed agent on the tasks (where the task takes the kind); WARCs per site."""
    runs = work / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    warcs: dict[str, list[Path]] = {}
    for name in ["reference", *(f"perturbed:{k}" for k in KINDS)]:
        agent = make_agent(name)
        chosen = []
        for task in tasks:
            try:
                if name != "reference":
                    check_supported(task, name.split(":", 1)[1])
                chosen.append(task)
            except InputError:
                logger.info("{}: {} cannot be injected, skipped", task.id, name)
        specs = plan(chosen, ["constraint"], agent.name, 1, runs, resume=False)
        episodes = asyncio.run(run_local(specs, agent, runs, sites_url=base_url, budget=Budget(timeout_s=120),
                                         concurrency=concurrency, options=OPTIONS))
        for spec, ep in zip(specs, episodes, strict=True):
            if ep.status == "infra_error":
                raise SystemExit(f"{spec.label}: infrastructure failure: {ep.error}")
            warcs.setdefault(spec.task.site, []).append(spec.directory(runs) / "evidence.warc.gz")
    return warcs


def main(argv: list[str] | None = None) -> int:
    """Build the snapshots; print one line per site."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "site_snapshots")
    ap.add_argument("--site", action="append", help="only these sites (default: every bundled site)")
    ap.add_argument("--work", type=Path, help="keep the crawl's episodes here (default: a temporary directory)")
    ap.add_argument("--concurrency", type=int, default=2)
    args = ap.parse_args(argv)
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    sites = [s for s in bundled_sites() if not args.site or s.name in args.site]
    tasks = [t for t in bundled_tasks() if t.site in {s.name for s in sites}]
    work = args.work or Path(tempfile.mkdtemp(prefix="rig-snapshots-"))
    built_at = datetime.now(UTC).replace(microsecond=0)
    start = time.perf_counter()
    total = 0
    with SitesServer() as srv:
        warcs = agent_runs(tasks, srv.url, work, args.concurrency)
        for site in sites:
            site_tasks = [t for t in tasks if t.site == site.name]
            start_path = site_tasks[0].start_path if site_tasks else f"/{site.name}/"
            crawl_warc, n_states = asyncio.run(crawl(site.name, srv.url, start_path, work))
            index = load_index([*warcs.get(site.name, []), crawl_warc], MatchRules(ignore_origin=True), dedupe=True)
            varying = [k for k, v in index.exchanges.items() if len(v) > 1]
            manifest = write_snapshot(
                index, args.out / site.name, site=site.name, path_prefix=f"/{site.name}/", built_at=built_at,
                rig_version=__version__, data_version=sorted({t.data_version for t in site_tasks}), start_path=start_path,
                sources={"episodes": len(warcs.get(site.name, [])), "single_filter_states": n_states,
                         "agents": ["reference", *(f"perturbed:{k}" for k in KINDS)], "tasks": [t.id for t in site_tasks],
                         "keys_with_sequences": len(varying)},
            )
            total += manifest.bytes
            print(f"{site.name}: {manifest.exchanges} answers, {manifest.bytes / 1e6:.2f} MB "
                  f"({len(warcs.get(site.name, []))} agent episodes, {n_states} single-filter states"
                  f"{f', {len(varying)} keys answered differently over time' if varying else ''}"
                  f"{f', {manifest.truncated_bodies} bodies cut' if manifest.truncated_bodies else ''}"
                  f"{f', {manifest.missing_bodies} missing' if manifest.missing_bodies else ''})")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    print(f"total {total / 1e6:.2f} MB in {args.out} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
