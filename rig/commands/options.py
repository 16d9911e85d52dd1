"""Options several commands share, declared once: `--json`, `--headed`, `--step-images`, and the network options of
live commands (`--live`, `--resolve`, `--ignore-https-errors`, `--rate-limit`, `--max-per-host`)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from rig.network.politeness import Politeness

AsJson = Annotated[bool, typer.Option("--json", help="print JSON on stdout")]
Headed = Annotated[bool, typer.Option("--headed", help="show the browser (needs a display)")]
StepImagesOption = Annotated[str, typer.Option(
    "--step-images", help="where step images come from: dom (the default: none while recording, drawn later from the "
                          "archived DOM snapshots by rig report, rig view or rig render), live (a screenshot of each "
                          "step while it is the page's state: canvas, video) or off")]
Live = Annotated[bool, typer.Option("--live", help="the browser may reach the network (default: loopback only; a task "
                                                   "off loopback needs --live or --frozen)")]
Resolve = Annotated[Optional[list[str]], typer.Option(
    "--resolve", help="HOST=ADDR:PORT: requests for HOST go there (repeatable)")]
IgnoreHttpsErrors = Annotated[bool, typer.Option("--ignore-https-errors", help="accept self-signed certificates")]
RateLimit = Annotated[float, typer.Option("--rate-limit", help="live: requests a second per host at most (0: none)")]
MaxPerHost = Annotated[int, typer.Option("--max-per-host", help="live: requests in flight per host at most (0: none)")]


def politeness(rate_limit: float, max_per_host: int) -> Politeness:
    """A live command's politeness from `--rate-limit` and `--max-per-host`."""
    return Politeness(rate_per_host=rate_limit, max_per_host=max_per_host)


QaThreshold = Annotated[float, typer.Option("--threshold", min=0, max=1,
                                            help="the replay QA's threshold: pages below it are reported")]
