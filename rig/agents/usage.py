"""An episode's usage meter: what an agent spent (LLM calls and their tokens, tool calls, bytes of observations it
was shown) as the agent or the rig counts it, and the activity the runner watches for a hung episode.

Agents find the meter on `EpisodeEnv.usage`; the runner turns it into `episode.json`'s `usage` when the attempt
ends (`UsageMeter.usage`, priced by the price table, rig.pricing). Anything nobody counted stays null, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import fsum
from pathlib import Path

from rig.formats.usage import AgentUsageReport, PriceTable, Usage, UsageSource
from rig.pricing import price_of, token_cost


@dataclass
class Spend:
    """LLM calls of one model as one report gave them: their tokens, and their cost if the reporter knew it."""

    model: str | None
    tokens_in: int | None
    tokens_out: int | None
    tokens_cached: int | None = None
    calls: int | None = 1
    cost_usd: float | None = None


def _total(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


class UsageMeter:
    """Counts one attempt's usage as the agent goes, and its activity (for `--stall-timeout`)."""

    def __init__(self) -> None:
        self.spends: list[Spend] = []
        self.source: UsageSource | None = None
        self.tool_calls: int | None = None
        self.observation_bytes: int | None = None
        self._events = 0
        self._watched: list[Path] = []

    # what the agent spent
    def llm_call(self, spend: Spend, source: UsageSource) -> None:
        """Add LLM calls (tokens, and a cost if the caller knows it)."""
        self.spends.append(spend)
        self.source = self.source or source
        self.tick()

    def report(self, report: AgentUsageReport, source: UsageSource, *, replace: bool = False) -> None:
        """Add an agent's own report of its LLM use (`replace`: it is the total, dropping what was added before)."""
        if replace:
            self.spends, self.source = [], None
        self.llm_call(Spend(report.model, report.tokens_in, report.tokens_out, report.tokens_cached,
                            report.llm_calls, report.cost_usd), source)

    def tool_call(self, result: str) -> None:
        """One call of the episode's tool server, whose result (what the agent is shown) was `result`."""
        self.tool_calls = (self.tool_calls or 0) + 1
        self.observed(len(result.encode("utf-8")))

    def observed(self, nbytes: int) -> None:
        """The agent was shown `nbytes` more bytes."""
        self.observation_bytes = (self.observation_bytes or 0) + nbytes
        self.tick()

    def actions(self, count: int) -> None:
        """The agent ran `count` more tool actions (browser-use's)."""
        self.tool_calls = (self.tool_calls or 0) + count
        self.tick()

    # activity
    def tick(self) -> None:
        """Something happened: the agent produced output or got an answer back."""
        self._events += 1

    def watch(self, path: Path) -> None:
        """Count a file the agent writes (its output log) as activity while it grows."""
        self._watched.append(path)

    def activity(self) -> int:
        """A number that grows whenever the agent does anything the meter sees (events, bytes of watched files)."""
        size = 0
        for path in self._watched:
            try:
                size += path.stat().st_size
            except OSError:
                continue
        return self._events + size

    # the record
    def usage(self, prices: PriceTable, *, steps: int | None, wall_s: float | None) -> Usage:
        """The attempt's `Usage`: tokens summed over the calls; the cost as reported, else priced call by call from
        `prices` (null if a call's model is not in it, or its tokens are unknown)."""
        s = self.spends
        cost, priced, unpriced = self._cost(prices)
        return Usage(
            tokens_in=_total([x.tokens_in for x in s]), tokens_cached=_total([x.tokens_cached for x in s]),
            tokens_out=_total([x.tokens_out for x in s]), cost_usd=cost, priced_as=priced, unpriced=unpriced,
            llm_calls=_total([x.calls for x in s]), wall_s=round(wall_s, 3) if wall_s is not None else None,
            steps=steps, tool_calls=self.tool_calls, observation_bytes=self.observation_bytes, source=self.source,
        )

    def _cost(self, prices: PriceTable) -> tuple[float | None, list[str] | None, list[str] | None]:
        if not self.spends:
            return None, None, None
        costs: list[float] = []
        priced: set[str] = set()
        unpriced: set[str] = set()
        unknown = False
        for x in self.spends:
            if x.cost_usd is not None:
                costs.append(x.cost_usd)
                continue
            entry = price_of(prices, x.model) if x.model else None
            if entry is None:
                unpriced.add(x.model or "(no model named)")
            elif x.tokens_in is None or x.tokens_out is None:
                unknown = True
            else:
                priced.add(entry[0])
                costs.append(token_cost(entry[1], x.tokens_in, x.tokens_out, x.tokens_cached))
        if unpriced or unknown:
            return None, sorted(priced) or None, sorted(unpriced) or None
        return round(fsum(costs), 8), sorted(priced) or None, None
