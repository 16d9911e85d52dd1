"""`rig record`: one action script in a recorded browser, no task needed; one use of the runner's episode."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, async_playwright
from pydantic import BaseModel

from recorders import RecorderOptions, SiteAdapter
from rig.agents.base import Budget
from rig.agents.scripts import ScriptedAgent
from rig.episode_dir import EpisodeDir
from rig.errors import InputError
from rig.formats.actions import load_script
from rig.formats.episode import Episode
from rig.network.settings import Network, check_record_reachable
from rig.runner.browsers import BrowserPool
from rig.runner.episode import EpisodeContext, run_episode
from rig.runner.retry import RetryPolicy
from rig.runner.local import context_options
from rig.runner.spec import EpisodeSpec
from rig.sites import bundled_adapters

#: A recording is limited only by the script; these budgets stop a page that hangs it.
RECORD_BUDGET = Budget(max_steps=100_000, timeout_s=3600.0, stall_s=600.0)


async def record_actions(browser: Browser, actions: list[BaseModel], out_dir: Path, *, base_url: str,
                         start_url: str | None = None, agent: str = "scripted", options: RecorderOptions | None = None,
                         adapters: list[SiteAdapter] | None = None, network: Network | None = None) -> Episode:
    """Run actions in a new recorded context of `browser` (relative URLs against `base_url`; `start_url`, if
    given, is opened first) and write the episode directory. Dialogs, new tabs and downloads are answered and
    listed in episode.json as in `rig run`. `network` is how `browser` was launched (live, host mappings): its
    contexts get the matching options and, live, politeness."""
    pool = BrowserPool.around(browser, network)
    pool.context_options.update(context_options(False, None, network) or {})
    ctx = EpisodeContext(pool=pool, sites_url=base_url, budget=RECORD_BUDGET,
                         adapters=bundled_adapters() if adapters is None else adapters, options=options,
                         retry=RetryPolicy(retries=0))
    spec = EpisodeSpec(task=None, variant=None, agent=agent, start_url=start_url)
    return await run_episode(spec, ScriptedAgent.of(actions, agent), EpisodeDir(out_dir), ctx)


async def record_script(script: Path, out_dir: Path, start_url: str | None = None, headless: bool = True,
                        network: Network | None = None, options: RecorderOptions | None = None) -> Episode:
    """`rig record`: run one action script in a recorded browser, no task needed, into a new or empty directory
    (`network`: `--live`, `--resolve`, `--ignore-https-errors`; loopback only by default)."""
    network = network or Network()
    out = EpisodeDir(out_dir)
    if out.path.exists() and not out.path.is_dir():
        raise InputError(str(out_dir), None, "--out must be a directory to create, not a file")
    if not out.is_empty():
        what = "a recorded episode" if out.exists() else "files"
        raise InputError(str(out_dir), None, f"already holds {what}; a recording is never written into an existing "
                                             "episode: choose a new --out, or remove this one first")
    actions = load_script(script)
    first = actions[0] if actions else None
    if start_url is None and not (first is not None and getattr(first, "goto", "").startswith(("http://", "https://"))):
        raise InputError(str(script), "[0]", "without --start-url the script must begin with an absolute `goto`")
    base = start_url or first.goto
    check_record_reachable(base, network, "--start-url" if start_url else f"{script}: [0].goto")
    async with async_playwright() as pw:
        pool = BrowserPool(pw, headless=headless, network=network, sealed=network.guarded(None))
        try:
            return await record_actions(await pool.get(), actions, out_dir, base_url=base,
                                        start_url=start_url, agent=f"scripted:{script}", network=network,
                                        options=options)
        finally:
            await pool.close()
