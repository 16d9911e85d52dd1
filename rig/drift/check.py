"""The whole `rig drift` check: the plan, one live browser, every episode re-driven and every snapshot re-sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rig.drift.episodes import episode_drift
from rig.drift.live import DriftOptions, LiveSide
from rig.drift.plan import plan_drift
from rig.drift.snapshots import snapshot_drift
from rig.formats.drift import DriftReport, UnreachableOrigin
from rig.runner.redrive import chromium


def check_drift(paths: list[Path], options: DriftOptions | None = None) -> DriftReport:
    """Re-check every episode and snapshot under `paths` against the live origins (InputError for bad input, before
    any browser starts); the origins that could not be reached are listed in the report, their items `unreachable`."""
    opts = options or DriftOptions()
    plan = plan_drift(paths)

    async def main() -> DriftReport:
        report = DriftReport(skipped=plan.skipped)
        async with chromium(headless=opts.headless, local_only=False, resolve=opts.resolve) as browser:
            live = await LiveSide.start(browser, opts)
            for episode in plan.episodes:
                for item in await episode_drift(browser, live, episode):
                    report.add(item)
            for snapshot in plan.snapshots:
                for item in await snapshot_drift(browser, live, snapshot, report.skipped):
                    report.add(item)
        report.unreachable_origins = [UnreachableOrigin(origin=o, reason=why) for o, why in live.unreachable.items()]
        return report

    return asyncio.run(main())
