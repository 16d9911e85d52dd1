"""Retrying what the infrastructure broke: an episode's attempts, each failed one kept under `attempts/<n>/`.

`attempts` runs one attempt after another (tenacity, exponential backoff) while each fails with `AttemptFailed`
(an `InfraError`: a browser or tab crash, the rig's own server or proxy failing, the recorder failing, a hung
episode), at most `1 + policy.retries` times; an agent's own failure ends an attempt normally and is never retried.
It is part of the episode lifecycle (`rig.runner.episode.run_episode`), so every executor that runs episodes through
`run_episode` (the local one, the Ray workers) retries the same way: it only needs `EpisodeContext.retry`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from loguru import logger
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from rig.episode_dir import EpisodeDir
from rig.errors import InfraError

#: Retries of an infrastructure failure by default (`rig run --retry-infra`): three attempts in all.
DEFAULT_RETRIES = 2


@dataclass(frozen=True)
class RetryPolicy:
    """How often an infrastructure failure is retried, and the backoff between attempts (seconds: `backoff_s`, then
    doubling, at most `backoff_max_s`)."""

    retries: int = DEFAULT_RETRIES
    backoff_s: float = 0.5
    backoff_max_s: float = 30.0


class AttemptFailed(Exception):
    """One attempt failed for infrastructure reasons (its episode.json was written as `infra_error`); retried."""

    def __init__(self, error: InfraError) -> None:
        super().__init__(str(error))
        self.error = error


async def attempts(attempt: Callable[[], Awaitable[None]], directory: EpisodeDir, policy: RetryPolicy,
                   label: str) -> tuple[int, InfraError | None]:
    """Run `attempt` until one does not fail for infrastructure reasons or `policy` allows no more; before each
    retry the failed attempt's files move to `attempts/<n>/` (numbered after the attempts already kept there, so an
    episode resumed with `--retry-infra` goes on counting). The number of the last attempt, and the infrastructure
    failure it ended with (None: it did not)."""
    first = len(directory.attempts())
    tries = 0
    try:
        async for retry in AsyncRetrying(retry=retry_if_exception_type(AttemptFailed),
                                         stop=stop_after_attempt(1 + max(0, policy.retries)),
                                         wait=wait_exponential(multiplier=policy.backoff_s, min=policy.backoff_s,
                                                               max=policy.backoff_max_s),
                                         reraise=True):
            with retry:
                if tries:
                    kept = directory.keep_failed_attempt(first + tries)
                    logger.warning("{}: retrying after an infrastructure failure (attempt {}; the failed one is kept "
                                   "in {})", label, first + tries + 1, kept.path)
                tries += 1
                await attempt()
    except AttemptFailed as exc:
        return first + tries, exc.error
    return first + tries, None
