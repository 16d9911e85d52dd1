"""Replaying recorded episodes: every request of a browser context answered from WARC archives, never the network.

    index = load_index("episode/evidence.warc.gz")
    context = await browser.new_context(**REPLAY_CONTEXT_OPTIONS)
    session = await attach_replay(context, index)

This package reads what `recorders` writes (the WARC format is the contract) and never imports it.
"""

from typing import TYPE_CHECKING

from replay.errors import ReplayError
from replay.index import ArchiveIndex, Exchange, Response, load_index
from replay.keys import REDACTED, KeyMaker, MatchRules, ParamRule
from replay.snapshot import (
    FROZEN_ORIGIN,
    FrozenSite,
    Manifest,
    open_snapshot,
    write_snapshot,
)

if TYPE_CHECKING:
    from replay.route import (
        NO_UNROUTED_CHANNELS,
        REPLAY_CONTEXT_OPTIONS,
        Miss,
        ReplaySession,
        attach_replay,
        miss_body,
    )

#: Names whose module imports playwright: loaded on first use, so reading archives needs no browser library.
_LAZY = dict.fromkeys(("NO_UNROUTED_CHANNELS", "REPLAY_CONTEXT_OPTIONS", "Miss", "ReplaySession", "attach_replay", "miss_body"), "replay.route")


def __getattr__(name: str) -> object:
    """Load a playwright-backed name on first use."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'replay' has no attribute {name!r}")


__all__ = [
    "FROZEN_ORIGIN",
    "NO_UNROUTED_CHANNELS",
    "REDACTED",
    "REPLAY_CONTEXT_OPTIONS",
    "ArchiveIndex",
    "Exchange",
    "FrozenSite",
    "KeyMaker",
    "Manifest",
    "MatchRules",
    "Miss",
    "ParamRule",
    "ReplayError",
    "ReplaySession",
    "Response",
    "attach_replay",
    "load_index",
    "miss_body",
    "open_snapshot",
    "write_snapshot",
]
